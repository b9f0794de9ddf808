"""The ray tracer: rays from a mounted sensor, reflected specularly from surface to surface.

Semantics follow the seed document (Simulation 3D Ray Tracer). Each of the N rays starts
at its origin in its direction (both in the sensor frame), is cast against the scene
(`roadsim.sensors.scene.Scene`), and at each hit is reflected about the surface normal
(``r = d - 2 (d . n) n``) and cast again, B times at most, until the ray's total path
length (``max_lengths``) is used up: a segment may reach only as far as the length left
after the segments before it. A reading has B + 1 segments per ray; the segments after a
miss, or after the length ran out, are invalid and hold NaN (locations, normals,
distances), 0 (surface ids) and -1 (actor ids, lane uids), never an earlier value.

A sensor never sees the actor it is mounted on: its rays pass through that actor's box.
A reflected ray starts `BOUNCE_OFFSET_M` off the surface it leaves (along the normal),
so that it does not hit that surface again where it starts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from roadsim._jit import njit
from roadsim._types import BoolArray, FloatArray, IntArray, UInt8Array
from roadsim.scenario.sensors import RayTracerSpec
from roadsim.sensors.mount import Mount, Pose
from roadsim.sensors.raycast import Hits
from roadsim.sensors.scene import Scene
from roadsim.world.state import WorldState

__all__ = [
    "BOUNCE_OFFSET_M",
    "MatlabLayout",
    "RaySensor",
    "RayTracer",
    "RayTracerReading",
    "Segment",
    "Trace",
    "trace",
    "trace_segments",
]

#: How far off a surface a reflected ray starts (m).
BOUNCE_OFFSET_M = 1e-3



@dataclass(frozen=True, slots=True, eq=False)
class Trace:
    """N rays of B + 1 segments each (segment 0 from the origin, k after k reflections).

    Attributes:
        locations: (N, B+1, 3) where each segment ended on a surface (m).
        normals: (N, B+1, 3) unit normals there, facing the incoming segment.
        distances: (N, B+1) length of each segment (m).
        surface_ids: (N, B+1) uint8 surface class hit.
        actor_ids: (N, B+1) int64 actor hit (-1: none).
        lane_uids: (N, B+1) int64 lane whose surface or mark was hit (-1: none).
        valid: (N, B+1) the segment hit a surface.
    """

    locations: FloatArray
    normals: FloatArray
    distances: FloatArray
    surface_ids: UInt8Array
    actor_ids: IntArray
    lane_uids: IntArray
    valid: BoolArray


@dataclass(frozen=True, slots=True, eq=False)
class Segment:
    """Segment ``bounce`` (after that many reflections) of some of N rays, those of one
    block of rays that were still going (`trace_segments`).

    Attributes:
        bounce: Reflections before it (0: the segment from the origin).
        start: The block's first ray.
        rays: (R,) which of the N rays were cast (ascending); None: the R rays from
            ``start`` on, in order.
        hits: Their R hits.
        locations: (R, 3) where each hit a surface (world, m); NaN for misses.
    """

    bounce: int
    start: int
    rays: IntArray | None
    hits: Hits
    locations: FloatArray

    @property
    def at(self) -> slice | IntArray:
        """Its rows' places among the N rays."""
        if self.rays is None:
            return slice(self.start, self.start + len(self.locations))
        return self.rays


def trace_segments(
    scene: Scene,
    origins: FloatArray,
    directions: FloatArray,
    max_lengths: FloatArray,
    bounces: int,
    *,
    ignore_actor: int = -1,
    near_actors: IntArray | None = None,
    actors: IntArray | None = None,
) -> list[Segment]:
    """The segments of `trace`, as `Segment`s, for a sensor that needs only the valid
    ones (a lidar's points) and not the (N, B+1) arrays. Arguments as in `trace`.

    The rays are traced in blocks over the scene's pool (`RayPool.map`), each block from
    its first segment to its last on one thread: its reflections and their casts
    included, which a block's rays need from no other block. The list holds the blocks
    in the order of their rays, and each block's segments in order; a segment that no
    ray of its block reached is left out. Each ray's values are the same whatever the
    blocks (every step works ray by ray).
    """
    n = len(origins)
    o, d = np.asarray(origins, dtype=np.float64), np.asarray(directions, dtype=np.float64)
    left = np.broadcast_to(np.asarray(max_lengths, dtype=np.float64), (n,))
    blocks: dict[int, list[Segment]] = {}

    def work(a: int, b: int) -> None:
        near = None
        if near_actors is not None:
            lo, hi = np.searchsorted(near_actors, (a, b))
            near = near_actors[lo:hi] - a
        blocks[a] = _trace_block(
            scene, o[a:b], d[a:b], left[a:b], a, bounces, ignore_actor, near, actors
        )

    scene.pool.map(work, n)
    return [part for a in sorted(blocks) for part in blocks[a]]


def _trace_block(
    scene: Scene,
    o: FloatArray,
    d: FloatArray,
    max_lengths: FloatArray,
    start: int,
    bounces: int,
    ignore_actor: int,
    near_actors: IntArray | None,
    actors: IntArray | None,
) -> list[Segment]:
    """The segments of the rays ``start, start + 1, ...`` (``near_actors`` counted from
    ``start``), cast on the calling thread."""
    left = max_lengths.copy()
    rows: IntArray | None = None  # the block's rays still going (None: all of them)
    parts: list[Segment] = []
    for k in range(bounces + 1):
        hits = scene.cast(
            o, d, left if rows is None else left[rows], ignore_actor=ignore_actor,
            near_actors=near_actors if k == 0 else None, actors=actors, split=False,
        )  # fmt: skip
        p = np.empty((len(d), 3))
        _ends(o, d, hits.distance, p)  # NaN for misses
        parts.append(Segment(k, start, None if rows is None else rows + start, hits, p))
        if k == bounces:
            break
        remaining = (left if rows is None else left[rows]) - np.nan_to_num(hits.distance)
        go = np.flatnonzero(hits.valid & (remaining > 0.0))
        rows = go if rows is None else rows[go]
        if not rows.size:
            break
        left[rows] = remaining[go]
        # r = d - 2 (d . n) n, made unit; the next start off the surface. (The dot
        # products by numpy, row by row, the rest compiled: numpy's values throughout.)
        d, o = _reflect(go, d, hits.normal, np.einsum("ij,ij->i", d, hits.normal), p)
        d /= np.sqrt(np.einsum("ij,ij->i", d, d))[:, None]
    return parts


@njit
def _ends(o: FloatArray, d: FloatArray, t: FloatArray, p: FloatArray) -> None:
    """p = o + t d, row by row (p written)."""
    for i in range(d.shape[0]):
        for j in range(3):
            p[i, j] = o[i, j] + t[i] * d[i, j]


@njit
def _reflect(
    rows: IntArray, d: FloatArray, normal: FloatArray, dot: FloatArray, p: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """For the ``rows`` that go on: ``d - 2 (d . n) n`` (not made unit) given each row's
    ``dot`` = d . n, and the start ``p + BOUNCE_OFFSET_M n`` off the surface."""
    out_d, out_o = np.empty((rows.shape[0], 3)), np.empty((rows.shape[0], 3))
    for i in range(rows.shape[0]):
        r = rows[i]
        twice = 2.0 * dot[r]
        for j in range(3):
            out_d[i, j] = d[r, j] - twice * normal[r, j]
            out_o[i, j] = p[r, j] + BOUNCE_OFFSET_M * normal[r, j]
    return out_d, out_o


def trace(
    scene: Scene,
    origins: FloatArray,
    directions: FloatArray,
    max_lengths: FloatArray,
    bounces: int,
    *,
    ignore_actor: int = -1,
    near_actors: IntArray | None = None,
    actors: IntArray | None = None,
) -> Trace:
    """Traces N rays with up to ``bounces`` specular reflections (see the module docstring).

    Args:
        scene: What the rays hit.
        origins: (N, 3) world points (m).
        directions: (N, 3) world unit directions.
        max_lengths: (N,) total path length of each ray (m).
        bounces: Most reflections of a ray.
        ignore_actor: The actor the rays pass through (-1: none).
        near_actors: The rays (ascending) whose first segment may hit a moving actor,
            where the caller knows (`Scene.cast`); None: every ray.
        actors: The moving actors any segment may hit, where the caller knows
            (`Scene.cast`); None: every one.
    """
    n, segments = len(origins), bounces + 1
    parts = trace_segments(
        scene, origins, directions, max_lengths, bounces, ignore_actor=ignore_actor,
        near_actors=near_actors, actors=actors,
    )  # fmt: skip
    if segments == 1 and len(parts) == 1:  # one segment: the hits as they are, no copies
        h, p = parts[0].hits, parts[0].locations
        return Trace(
            p[:, None], h.normal[:, None], h.distance[:, None], h.surface[:, None],
            h.actor[:, None], h.lane[:, None], h.valid[:, None],
        )  # fmt: skip
    out = Trace(
        np.full((n, segments, 3), np.nan),
        np.full((n, segments, 3), np.nan),
        np.full((n, segments), np.nan),
        np.zeros((n, segments), dtype=np.uint8),
        np.full((n, segments), -1, dtype=np.int64),
        np.full((n, segments), -1, dtype=np.int64),
        np.zeros((n, segments), dtype=bool),
    )
    for part in parts:
        at, k, h = part.at, part.bounce, part.hits
        out.locations[at, k] = part.locations
        out.normals[at, k] = h.normal
        out.distances[at, k] = h.distance
        out.surface_ids[at, k] = h.surface
        out.actor_ids[at, k] = h.actor
        out.lane_uids[at, k] = h.lane
        out.valid[at, k] = h.valid
    return out


@dataclass(frozen=True, slots=True, eq=False)
class MatlabLayout:
    """A ray tracer's reading as the seed document's block gives it.

    Rows are stacked segment by segment, as MATLAB's column-major ``reshape`` of an
    N x (B+1) array stacks them: row ``k N + i`` is segment k of ray i. Locations and
    normals are in the sensor frame with y to the right (the engine frame of the
    document): ``[x, -y, z]`` of ours. Invalid rows hold NaN, surface id 0.

    Attributes:
        hit_locations: (N(B+1), 3) ``HitLocations`` (m).
        hit_normals: (N(B+1), 3) ``HitNormals``.
        hit_distances: (N(B+1), 1) ``HitDistances`` (m).
        surface_ids: (N(B+1), 1) uint8 ``SurfaceIds``.
        is_valid_hit: (N, 1) ``IsValidHit``.
    """

    hit_locations: FloatArray
    hit_normals: FloatArray
    hit_distances: FloatArray
    surface_ids: UInt8Array
    is_valid_hit: BoolArray

    @property
    def bounces(self) -> int:
        return len(self.hit_distances) // max(len(self.is_valid_hit), 1) - 1

    def unstack(self) -> tuple[FloatArray, FloatArray, FloatArray, UInt8Array]:
        """Back to (N, B+1, ...) in our sensor frame (y left): locations, normals,
        distances, surface ids."""
        n, segments = len(self.is_valid_hit), self.bounces + 1
        flip = np.array([1.0, -1.0, 1.0])

        def back(a: npt.NDArray[np.generic], width: int) -> npt.NDArray[np.generic]:
            return np.swapaxes(a.reshape(segments, n, width), 0, 1)

        return (
            back(self.hit_locations, 3) * flip,
            back(self.hit_normals, 3) * flip,
            back(self.hit_distances, 1)[:, :, 0],
            back(self.surface_ids, 1)[:, :, 0],  # type: ignore[return-value]
        )


@dataclass(frozen=True, slots=True, eq=False)
class RayTracerReading:
    """One sample of a ray tracer: N rays of B + 1 segments (see `Trace`).

    Attributes:
        name, sensor_id: The sensor's name and id.
        frame, time: The frame it sampled and its simulation time (s).
        pose: The sensor's pose in the world at that frame.
        coordinates: ``"world"`` (locations and normals in the world frame, the default)
            or ``"sensor"`` (`in_sensor_frame`).
        hit_locations: (N, B+1, 3) (m); NaN for invalid segments.
        hit_normals: (N, B+1, 3) unit, facing the incoming segment; NaN for invalid ones.
        hit_distances: (N, B+1) length of each segment (m); NaN for invalid ones.
        surface_ids: (N, B+1) uint8 surface class (`roadsim.road.surface_classes`); 0.
        actor_ids: (N, B+1) int64 actor hit; -1.
        lane_uids: (N, B+1) int64 lane uid of a road surface or mark hit; -1.
        valid: (N, B+1) whether each segment hit a surface.
    """

    name: str
    sensor_id: int
    frame: int
    time: float
    pose: Pose
    coordinates: Literal["world", "sensor"]
    hit_locations: FloatArray
    hit_normals: FloatArray
    hit_distances: FloatArray
    surface_ids: UInt8Array
    actor_ids: IntArray
    lane_uids: IntArray
    valid: BoolArray

    @property
    def is_valid_hit(self) -> BoolArray:
        """(N,) whether each ray hit a surface (its first segment; the seed's IsValidHit)."""
        return self.valid[:, 0]

    @property
    def bounces(self) -> int:
        return int(self.valid.shape[1]) - 1

    def in_sensor_frame(self) -> RayTracerReading:
        """The same reading with locations and normals in the sensor frame."""
        if self.coordinates == "sensor":
            return self
        return replace(
            self,
            coordinates="sensor",
            hit_locations=self.pose.to_sensor(self.hit_locations),
            hit_normals=self.hit_normals @ self.pose.rotation,
        )

    def to_matlab_layout(self) -> MatlabLayout:
        """The seed's N(B+1) x 3 stacking in its y-right sensor frame (`MatlabLayout`)."""
        local = self.in_sensor_frame()
        flip = np.array([1.0, -1.0, 1.0])

        def stack(a: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
            a = a.reshape(a.shape[0], a.shape[1], -1)
            return np.swapaxes(a, 0, 1).reshape(-1, a.shape[2])

        return MatlabLayout(
            stack(local.hit_locations) * flip,
            stack(local.hit_normals) * flip,
            self.hit_distances.T.reshape(-1, 1),
            stack(self.surface_ids),  # type: ignore[arg-type]
            self.is_valid_hit.reshape(-1, 1).copy(),
        )


class RaySensor:
    """What every ray-traced sensor has: a name, an id, a mount, a rate and a switch.

    Attributes:
        name: Key of its readings in `roadsim.Simulation.readings`.
        id: Its sensor id (unique positive integer).
        mount: What it rides on and where.
        sample_every: Ticks between two samples (it samples at frames divisible by it).
        active: Whether it samples; an inactive sensor costs nothing and reads None.
    """

    def __init__(self, name: str, sensor_id: int, mount: Mount, sample_every: int, active: bool):
        self.name = name
        self.id = sensor_id
        self.mount = mount
        self.sample_every = sample_every
        self.active = active

    def due(self, frame: int) -> bool:
        """Whether it samples ``frame``."""
        return self.active and frame % self.sample_every == 0

    def pose(self, state: WorldState) -> Pose | None:
        """Its pose in ``state`` (None while its actor is not active)."""
        return self.mount.pose(state)


class RayTracer(RaySensor):
    """A ray tracer sensor (`RayTracerSpec`) mounted on ``actor`` (-1: the scene origin).

    Attributes:
        origins: (N, 3) ray origins, sensor frame (m).
        directions: (N, 3) unit ray directions, sensor frame.
        max_lengths: (N,) total path length of each ray (m).
        bounces: Most reflections of a ray.
    """

    def __init__(self, spec: RayTracerSpec, sensor_id: int, actor: int) -> None:
        super().__init__(
            spec.name,
            sensor_id,
            Mount(actor, spec.location, spec.offset.translation, spec.offset.rotation_deg),  # type: ignore[arg-type]
            spec.sample_every,
            spec.active,
        )
        n = len(spec.directions)
        self.directions: FloatArray = np.array(spec.directions, dtype=np.float64).reshape(n, 3)
        self.origins: FloatArray = np.broadcast_to(
            np.array(spec.origins, dtype=np.float64).reshape(-1, 3), (n, 3)
        ).copy()
        self.max_lengths: FloatArray = np.broadcast_to(
            np.asarray(spec.max_lengths, dtype=np.float64), (n,)
        ).copy()
        self.bounces = spec.bounces

    def sample(self, scene: Scene, state: WorldState, frame: int, time: float) -> RayTracerReading | None:
        """Traces the rays in ``state`` (the scene updated to it); None while the actor
        it rides on is not active."""
        pose = self.pose(state)
        if pose is None:
            return None
        tr = trace(
            scene,
            pose.to_world(self.origins),
            self.directions @ pose.rotation.T,
            self.max_lengths,
            self.bounces,
            ignore_actor=self.mount.actor,
        )
        return RayTracerReading(
            self.name, self.id, frame, time, pose, "world",
            tr.locations, tr.normals, tr.distances, tr.surface_ids, tr.actor_ids,
            tr.lane_uids, tr.valid,
        )  # fmt: skip
