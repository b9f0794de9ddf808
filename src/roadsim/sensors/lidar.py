"""The lidar: a ray tracer with a spinning lidar's ray pattern, read as a point cloud.

Rays: one per (channel, azimuth step), ``channels x azimuth_count`` of them, channel c at
elevation ``elevations[c]`` (lowest first), azimuth measured counter-clockwise from the
sensor's x axis. A sweep turns clockwise seen from above, as spinning lidars do, starting
at azimuth ``+horizontal_fov / 2`` (behind the sensor for 360 degrees); each point's
``time_offset`` is when its azimuth comes round, ``step / azimuth_count / rate`` for a
full turn. The whole sweep is cast in the world of the sampled frame (no motion during the
sweep): de-skew with ``time_offset`` where it matters.

Each valid segment of a ray gives a point (``bounce`` 0 for the direct return, k after k
reflections); ``range`` is the length of the ray's path to it. ``intensity`` is the
product, over the path's hits, of the surface class's reflectivity (`REFLECTIVITY`) and
the cosine of the angle of incidence.

Noise, where asked: each point's range gets Gaussian noise of ``range_noise_std`` (along
its last segment), and each point is dropped with probability ``dropout``. Both are drawn
from a generator seeded by the simulation's seed, the sensor id and the frame, so that a
run gives the same points bit for bit, whichever frames were sampled before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim._jit import njit
from roadsim._types import BoolArray, Float32Array, FloatArray, IntArray
from roadsim.road.surface_classes import SURFACE_CLASSES, SURFACE_IDS
from roadsim.scenario.sensors import LidarSpec
from roadsim.sensors.mount import Mount, Pose
from roadsim.sensors.raytracer import BOUNCE_OFFSET_M, RaySensor, Segment, trace_segments
from roadsim.sensors.scene import Scene
from roadsim.world.state import STATIC_OBJECT, WorldState

__all__ = ["NOISE_STREAM", "REFLECTIVITY", "Lidar", "PointCloud"]


#: The first entry of the spawn key of the lidar's noise generator (see the module
#: docstring): ``SeedSequence(seed, spawn_key=(NOISE_STREAM, sensor_id, frame))``.
NOISE_STREAM = 24

#: Metres added to an actor's bounding sphere when finding the rays near it (`Lidar`),
#: against rounding: a ray outside it cannot hit the actor's box.
_SPHERE_MARGIN = 0.05

_REFLECTIVITY_BY_NAME = {
    "unknown": 0.2,
    "road": 0.12,
    "lane_marking": 0.6,
    "sidewalk": 0.2,
    "shoulder": 0.15,
    "curb": 0.25,
    "grass": 0.35,
    "building": 0.3,
    "pole": 0.4,
    "sign": 0.9,
    "vegetation": 0.4,
    "barrier": 0.3,
    "car": 0.5,
    "truck": 0.5,
    "bus": 0.5,
    "pedestrian": 0.3,
    "cyclist": 0.35,
    "traffic_light": 0.5,
    "obstacle": 0.4,
    "cone": 0.8,
    "parking": 0.12,
    "bike_lane": 0.15,
    "median": 0.2,
    "rail_track": 0.2,
    "rail_vehicle": 0.5,
}
#: Lidar reflectivity in [0, 1] of each surface class (by id): a diffuse reflectance at
#: near-infrared wavelengths, rough values (asphalt dark, paint and signs bright).
REFLECTIVITY: FloatArray = np.array([_REFLECTIVITY_BY_NAME[n] for n in SURFACE_CLASSES])
assert len(_REFLECTIVITY_BY_NAME) == len(SURFACE_IDS)


@dataclass(frozen=True, slots=True, eq=False)
class PointCloud:
    """One sweep of a lidar: M points, by ray (channel-major) and then by bounce.

    Attributes:
        name, sensor_id: The sensor's name and id.
        frame, time: The frame it sampled and its simulation time (s).
        pose: The sensor's pose in the world at that frame.
        xyz: (M, 3) float32 points in the sensor frame (m).
        range: (M,) float32 path length from the sensor to the point (m).
        intensity: (M,) float32 in [0, 1].
        surface_ids: (M,) uint8 surface class (`roadsim.road.surface_classes`).
        actor_ids: (M,) int64 actor hit (-1: none).
        lane_uids: (M,) int64 lane uid of a road surface or mark hit (-1: none).
        channel: (M,) uint16 channel (0: lowest elevation).
        azimuth: (M,) float32 azimuth of the ray (rad, counter-clockwise from x).
        time_offset: (M,) float32 time within the sweep (s).
        bounce: (M,) uint8 reflections before the point (0: direct).
        rays: Rays cast in the sweep (``channels x azimuth_count``).
    """

    name: str
    sensor_id: int
    frame: int
    time: float
    pose: Pose
    xyz: Float32Array
    range: Float32Array
    intensity: Float32Array
    surface_ids: npt.NDArray[np.uint8]
    actor_ids: IntArray
    lane_uids: IntArray
    channel: npt.NDArray[np.uint16]
    azimuth: Float32Array
    time_offset: Float32Array
    bounce: npt.NDArray[np.uint8]
    rays: int

    def __len__(self) -> int:
        return len(self.range)

    def world_xyz(self) -> FloatArray:
        """(M, 3) float64 points in the world frame (m)."""
        return self.pose.to_world(self.xyz.astype(np.float64))


class Lidar(RaySensor):
    """A lidar sensor (`LidarSpec`) mounted on ``actor`` (-1: the scene origin).

    Args:
        spec: Its options.
        sensor_id: Its id.
        actor: The actor it rides on, -1 for the scene.
        seed: The simulation's seed (for its noise).

    Attributes:
        directions: (C * A, 3) unit ray directions in the sensor frame, channel-major.
        channel, azimuth, time_offset: (C * A,) of each ray.
    """

    def __init__(self, spec: LidarSpec, sensor_id: int, actor: int, seed: int = 0) -> None:
        super().__init__(
            spec.name,
            sensor_id,
            Mount(actor, spec.location, spec.offset.translation, spec.offset.rotation_deg),  # type: ignore[arg-type]
            spec.sample_every,
            spec.active,
        )
        self.spec = spec
        self.seed = seed
        elevation = np.radians(np.array(spec.elevations(), dtype=np.float64))
        count = spec.azimuth_count
        fov = math.radians(spec.horizontal_fov_deg)
        step = fov / count
        # Clockwise from +fov/2; 360 degrees: from behind, round once.
        az = 0.5 * fov - step * np.arange(count)
        az = (az + np.pi) % (2.0 * np.pi) - np.pi
        el, azg = np.meshgrid(elevation, az, indexing="ij")
        ce = np.cos(el)
        self.directions: FloatArray = np.stack(
            (ce * np.cos(azg), ce * np.sin(azg), np.sin(el)), axis=-1
        ).reshape(-1, 3)
        self.channel = np.repeat(np.arange(len(elevation), dtype=np.uint16), count)
        self.azimuth = np.tile(az, len(elevation)).astype(np.float32)
        period = (spec.horizontal_fov_deg / 360.0) / spec.rotation_rate_hz
        self.time_offset = np.tile(np.arange(count) * (period / count), len(elevation)).astype(
            np.float32
        )
        self.range = float(spec.range)
        self.bounces = spec.bounces
        # Each ray's elevation, and the rays by azimuth, to find those near an actor.
        self._elevation = np.repeat(elevation, count)
        self._by_azimuth = np.argsort(self.azimuth, kind="stable")
        self._azimuth_sorted = self.azimuth[self._by_azimuth].astype(np.float64)

    @property
    def rays(self) -> int:
        return len(self.directions)

    def _near_actors(self, state: WorldState, pose: Pose) -> tuple[IntArray | None, IntArray]:
        """The moving actors (ids) other than the one the lidar rides on that its rays may
        reach, and the rays that may hit one of them: those whose azimuth and elevation
        fall within a bounding sphere of an actor's box as seen from the sensor (None
        where every ray may: the sensor within a sphere). `Scene.cast` casts only these
        rays, and only against these actors."""
        slots = np.flatnonzero(
            state.active & (state.kind != STATIC_OBJECT) & (state.id != self.mount.actor)
        )
        # Each box cut along its length in pieces about as long as it is wide (a long
        # truck's one sphere would hold a sensor in the lane beside it), a sphere each.
        pieces = np.clip(np.ceil(state.length[slots] / np.maximum(state.width[slots], 0.5)), 1, 8)
        pieces = pieces.astype(np.int64)
        slots = np.repeat(slots, pieces)
        m = np.repeat(pieces, pieces)
        j = np.arange(len(slots)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
        length, width, height = state.length[slots] / m, state.width[slots], state.height[slots]
        along = (j + 0.5) * length - 0.5 * state.length[slots]
        heading = state.heading[slots]
        centre = np.stack(
            (
                state.x[slots] + along * np.cos(heading),
                state.y[slots] + along * np.sin(heading),
                state.z[slots] + 0.5 * height,
            ),
            axis=1,
        )
        radius = 0.5 * np.sqrt(length**2 + width**2 + height**2) + _SPHERE_MARGIN
        p = (centre - pose.position) @ pose.rotation  # (the sensor frame)
        dist = np.linalg.norm(p, axis=1)
        # (Every point of a path lies within its length of the sensor, a reflected
        # segment's start BOUNCE_OFFSET_M off its surface aside.)
        seen = dist - radius <= self.range + self.bounces * BOUNCE_OFFSET_M
        p, dist, radius = p[seen], dist[seen], radius[seen]
        actors = np.unique(state.id[slots[seen]]).astype(np.int64)
        if np.any(dist <= radius):
            return None, actors
        # An actor right below or above the sensor spans every azimuth.
        level = np.hypot(p[:, 0], p[:, 1])
        every = level <= radius
        half_az = np.arcsin(np.minimum(radius / np.maximum(level, radius), 1.0))
        mid_az = np.arctan2(p[:, 1], p[:, 0])
        mid_el, half_el = np.arcsin(p[:, 2] / dist), np.arcsin(radius / dist)
        # Azimuth intervals, those across +-pi cut in two, as runs of the sorted rays.
        lo, hi = mid_az - half_az, mid_az + half_az
        k = np.arange(len(lo))
        wrap_lo, wrap_hi = (lo < -np.pi) & ~every, (hi > np.pi) & ~every
        lo, hi = np.where(wrap_lo, lo + 2 * np.pi, lo), np.where(wrap_hi, hi - 2 * np.pi, hi)
        lo, hi = np.where(every, -np.inf, lo), np.where(every, np.inf, hi)
        cut = wrap_lo | wrap_hi
        lo = np.concatenate((np.where(cut, -np.inf, lo), lo[cut]))
        hi = np.concatenate((hi, np.full(int(cut.sum()), np.inf)))
        k = np.concatenate((k, k[cut]))
        first = np.searchsorted(self._azimuth_sorted, lo, side="left")
        stop = np.searchsorted(self._azimuth_sorted, hi, side="right")
        mask = np.zeros(len(self.directions), dtype=bool)
        _mark_near(first, stop, k, self._by_azimuth, self._elevation, mid_el, half_el, mask)
        return np.flatnonzero(mask), actors

    def sample(self, scene: Scene, state: WorldState, frame: int, time: float) -> PointCloud | None:
        """One sweep in ``state`` (the scene updated to it); None while the actor it
        rides on is not active."""
        pose = self.pose(state)
        if pose is None:
            return None
        n = self.rays
        d_world = self.directions @ pose.rotation.T
        origins = np.broadcast_to(pose.position, (n, 3))
        near, actors = self._near_actors(state, pose)
        # (float32 made straight for direct returns, float64 then cast after bounces)
        points: npt.NDArray[np.floating[Any]]
        path: npt.NDArray[np.floating[Any]]
        if self.bounces == 0:  # direct returns only: no trace, points along the rays
            hits = scene.cast(
                origins, d_world, self.range, ignore_actor=self.mount.actor,
                near_actors=near, actors=actors,
            )  # fmt: skip
            hit = np.flatnonzero(hits.valid)
            noise, keep = self._noise(frame, len(hit))
            none = np.zeros(0)
            # (Over every ray, then picked: rows of 3 are several times faster so.)
            cos = np.abs(np.einsum("ij,ij->i", d_world, hits.normal))
            ray, points, path, intensity, surface, actor, lane = _direct_points(
                hit, hits.distance, cos, hits.surface, hits.actor, hits.lane, self.directions,
                REFLECTIVITY, none if noise is None else noise,
                none.astype(bool) if keep is None else keep,
            )  # fmt: skip
            seg = np.zeros(len(ray), dtype=np.int64)
        else:
            parts = trace_segments(
                scene, origins, d_world, np.full(n, self.range), self.bounces,
                ignore_actor=self.mount.actor, near_actors=near, actors=actors,
            )  # fmt: skip
            ray, seg, location, normal, distance, surface, actor, lane = _by_ray(parts, n)
            noise, keep = self._noise(frame, len(ray))
            none = np.zeros(0)
            points, path, intensity = _reflected_points(
                seg, location, normal, distance, surface, pose.position, pose.rotation,
                REFLECTIVITY, none if noise is None else noise,
                none.astype(bool) if keep is None else keep,
            )  # fmt: skip
            if keep is not None:
                ray, seg = ray[keep], seg[keep]
                surface, actor, lane = surface[keep], actor[keep], lane[keep]
        return PointCloud(
            name=self.name,
            sensor_id=self.id,
            frame=frame,
            time=time,
            pose=pose,
            xyz=points.astype(np.float32, copy=False),
            range=path.astype(np.float32, copy=False),
            intensity=intensity.astype(np.float32, copy=False),
            surface_ids=surface,
            actor_ids=actor,
            lane_uids=lane,
            channel=self.channel[ray],
            azimuth=self.azimuth[ray],
            time_offset=self.time_offset[ray],
            bounce=seg.astype(np.uint8),
            rays=n,
        )

    def _noise(self, frame: int, m: int) -> tuple[FloatArray | None, BoolArray | None]:
        """The range noise of m points (m) and which of them dropout keeps; None for
        either where the lidar has none."""
        spec = self.spec
        if spec.range_noise_std <= 0.0 and spec.dropout <= 0.0:
            return None, None
        rng = np.random.default_rng(
            np.random.SeedSequence(self.seed, spawn_key=(NOISE_STREAM, self.id, frame))
        )
        noise = rng.standard_normal(m) * spec.range_noise_std
        drop = rng.random(m)
        return (
            noise if spec.range_noise_std > 0.0 else None,
            drop >= spec.dropout if spec.dropout > 0.0 else None,
        )


@njit
def _mark_near(
    first: IntArray,
    stop: IntArray,
    owner: IntArray,
    by_azimuth: IntArray,
    elevation: FloatArray,
    mid_el: FloatArray,
    half_el: FloatArray,
    mask: BoolArray,
) -> None:
    """Marks in ``mask`` the rays of each run [first, stop) of the rays by azimuth whose
    elevation lies within ``half_el`` of the ``mid_el`` of the run's sphere (``owner``)."""
    for k in range(first.shape[0]):
        mid, half = mid_el[owner[k]], half_el[owner[k]]
        for at in range(first[k], stop[k]):
            ray = by_azimuth[at]
            if abs(elevation[ray] - mid) <= half:
                mask[ray] = True


@njit
def _reflected_points(
    seg: IntArray,
    location: FloatArray,
    normal: FloatArray,
    distance: FloatArray,
    surface: npt.NDArray[np.uint8],
    position: FloatArray,
    rotation: FloatArray,
    reflectivity: FloatArray,
    noise: FloatArray,
    keep: BoolArray,
) -> tuple[Float32Array, Float32Array, Float32Array]:
    """The xyz (sensor frame), range and intensity of the points ``keep`` keeps (all
    where empty) of a list of segments by ray and then by segment (`_by_ray`): their
    world ``location``, ``normal`` and ``distance``, and the ``surface`` hit; with
    ``noise`` added to each range, along the point's last segment (none where empty).

    Each point's last segment runs from the point before it on its ray (the one before
    it in the list), or from the sensor (the origin) for a first segment; its cosine of
    incidence with the normal gives the intensity, dimmed by the reflectance of each
    surface the path reflected from before; the path adds up the segments' lengths in
    order. Rotations to the sensor frame (``v @ rotation``) and dot products sum their
    three products in the order x, y, z; a norm sums its squares so; the float32 values
    are the float64 ones rounded. The values are so those of numpy's elementwise
    formulas in that order (``tests/sensors/test_ray_sensors.py`` checks it).
    """
    noisy, dropping = noise.shape[0] > 0, keep.shape[0] > 0
    m = np.count_nonzero(keep) if dropping else seg.shape[0]
    xyz = np.empty((m, 3), dtype=np.float32)
    range_ = np.empty(m, dtype=np.float32)
    intensity = np.empty(m, dtype=np.float32)
    p, prev, u = np.empty(3), np.zeros(3), np.empty(3)
    path = before = 0.0
    j = 0
    for i in range(seg.shape[0]):
        x = location[i, 0] - position[0]
        y = location[i, 1] - position[1]
        z = location[i, 2] - position[2]
        for c in range(3):
            p[c] = (x * rotation[0, c] + y * rotation[1, c]) + z * rotation[2, c]
        if seg[i] == 0:
            prev[0] = prev[1] = prev[2] = 0.0
            path, before = distance[i], 1.0
        else:
            path = path + distance[i]
            before = before * reflectivity[surface[i - 1]]
        for c in range(3):
            u[c] = p[c] - prev[c]
        size = np.sqrt((u[0] * u[0] + u[1] * u[1]) + u[2] * u[2])
        if size < 1e-12:  # (as numpy's clip: NaN stays)
            size = 1e-12
        cos = 0.0
        for c in range(3):
            u[c] = u[c] / size
            n_c = (normal[i, 0] * rotation[0, c] + normal[i, 1] * rotation[1, c]) + (
                normal[i, 2] * rotation[2, c]
            )
            cos = cos + u[c] * n_c if c > 0 else u[c] * n_c
        for c in range(3):
            prev[c] = p[c]
        if dropping and not keep[i]:
            continue
        for c in range(3):
            xyz[j, c] = p[c] + noise[i] * u[c] if noisy else p[c]
        range_[j] = path + noise[i] if noisy else path
        intensity[j] = (reflectivity[surface[i]] * abs(cos)) * before
        j += 1
    return xyz, range_, intensity


@njit
def _direct_points(
    hit: IntArray,
    distance: FloatArray,
    cos: FloatArray,
    surface: npt.NDArray[np.uint8],
    actor: IntArray,
    lane: IntArray,
    directions: FloatArray,
    reflectivity: FloatArray,
    noise: FloatArray,
    keep: BoolArray,
) -> tuple[
    IntArray, Float32Array, Float32Array, Float32Array, npt.NDArray[np.uint8], IntArray, IntArray
]:
    """The points of the rays ``hit`` that hit something: each one's ray, xyz (sensor
    frame), range, intensity, surface, actor and lane, from the hits of every ray, the
    cosine of its incidence and its sensor-frame direction; with ``noise`` added to
    each range (none where empty), and only the points ``keep`` keeps (all where
    empty). The same values as numpy's float64 products and float32 casts."""
    noisy, dropping = noise.shape[0] > 0, keep.shape[0] > 0
    m = np.count_nonzero(keep) if dropping else hit.shape[0]
    ray_of = np.empty(m, dtype=np.int64)
    xyz = np.empty((m, 3), dtype=np.float32)
    range_ = np.empty(m, dtype=np.float32)
    intensity = np.empty(m, dtype=np.float32)
    surface_of = np.empty(m, dtype=np.uint8)
    actor_of, lane_of = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    j = 0
    for i in range(hit.shape[0]):
        if dropping and not keep[i]:
            continue
        r = hit[i]
        path = distance[r]
        for c in range(3):
            x = directions[r, c] * path
            xyz[j, c] = x + noise[i] * directions[r, c] if noisy else x
        range_[j] = path + noise[i] if noisy else path
        intensity[j] = reflectivity[surface[r]] * cos[r]
        ray_of[j] = r
        surface_of[j], actor_of[j], lane_of[j] = surface[r], actor[r], lane[r]
        j += 1
    return ray_of, xyz, range_, intensity, surface_of, actor_of, lane_of


def _by_ray(parts: list[Segment], n: int) -> tuple[npt.NDArray[Any], ...]:
    """The valid segments of N traced rays (`trace_segments`) as one list, by ray and then
    by segment (``np.nonzero`` of the (N, B+1) ``valid``): each one's ray and segment,
    and its location, normal, distance, surface, actor and lane, in that order."""
    every = np.zeros(0, dtype=np.int64)  # (a block of rays from its start on)
    count = np.zeros(n, dtype=np.int64)
    for part in parts:
        rays = every if part.rays is None else part.rays
        _count_valid(part.hits.valid, part.start, rays, count)
    first = np.cumsum(count) - count
    m = int(count.sum())
    h = parts[0].hits
    out = (
        np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64), np.empty((m, 3)),
        np.empty((m, 3)), np.empty(m), np.empty(m, dtype=h.surface.dtype),
        np.empty(m, dtype=h.actor.dtype), np.empty(m, dtype=h.lane.dtype),
    )  # fmt: skip
    for part in parts:
        h = part.hits
        _gather_valid(
            part.bounce, h.valid, part.start, every if part.rays is None else part.rays, first,
            part.locations, h.normal, h.distance, h.surface, h.actor, h.lane, *out,
        )  # fmt: skip
    return out


@njit
def _count_valid(valid: BoolArray, start: int, rays: IntArray, count: IntArray) -> None:
    """Adds one to ``count`` of each ray (``rays``, or ``start`` plus the row where empty)
    of a valid row."""
    every = rays.shape[0] == 0
    for i in range(valid.shape[0]):
        if valid[i]:
            count[start + i if every else rays[i]] += 1


@njit
def _gather_valid(
    k: int,
    valid: BoolArray,
    start: int,
    rays: IntArray,
    first: IntArray,
    location: FloatArray,
    normal: FloatArray,
    distance: FloatArray,
    surface: npt.NDArray[np.uint8],
    actor: IntArray,
    lane: IntArray,
    ray_of: IntArray,
    seg_of: IntArray,
    location_of: FloatArray,
    normal_of: FloatArray,
    distance_of: FloatArray,
    surface_of: npt.NDArray[np.uint8],
    actor_of: IntArray,
    lane_of: IntArray,
) -> None:
    """Copies the valid rows of segment k (rays ``rays``, or ``start`` plus the row
    where empty) to their places in the list: the ray's ``first`` place plus k."""
    every = rays.shape[0] == 0
    for i in range(valid.shape[0]):
        if valid[i]:
            r = start + i if every else rays[i]
            at = first[r] + k
            ray_of[at], seg_of[at] = r, k
            for j in range(3):
                location_of[at, j] = location[i, j]
                normal_of[at, j] = normal[i, j]
            distance_of[at] = distance[i]
            surface_of[at], actor_of[at], lane_of[at] = surface[i], actor[i], lane[i]
