"""The ray-casting scene: what rays of the ray tracer, the lidar and the cameras hit.

Two meshes, traced one after the other for each ray, which keeps the nearer hit:

- the **static** mesh, built once from the world: the road surface (lanes and road marks,
  `roadsim.road.mesh`), a ground plane around it, the map's objects that are no actors
  (buildings, walls ... given by a size, an outline or a radius: a box, a prism or a
  12-sided cylinder; an open outline, a wall without thickness along it), and the static
  actors of frame 0 (the scenario's boxes, cones and barriers, the map's obstacles), as
  the boxes `WorldState` gives them;
- the **moving** mesh of every other active actor as its box (`WorldState`'s x, y, z,
  heading, length, width, height), built again by `Scene.update` at every sample.

Every triangle carries a surface class (uint8, `roadsim.road.surface_classes`), the id of
the actor it belongs to (-1: none) and the uid of the lane whose surface or road mark it
is (-1: none), so that a hit says what it hit, and a look (uint8, the index of its albedo
in `roadsim.road.surface_classes.LOOK_ALBEDO`: its class's, or a road mark's paint).

The ground plane lies 5 cm under the lowest point of the road surface, and reaches
`GROUND_MARGIN_M` beyond the road's extent on every side. Lane heights and ``level``
are not modelled (as in `roadsim.road.mesh`); curbs are flat.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from roadsim._jit import njit
from roadsim._types import BoolArray, FloatArray, Int32Array, IntArray
from roadsim.errors import ArgumentError
from roadsim.road.model import ObjectRepeat, RoadObject
from roadsim.road.network import RoadNetwork
from roadsim.road.surface_classes import (
    ACTOR_MODEL_CLASSES,
    SURFACE_IDS,
    UNKNOWN,
    material_classes,
    material_looks,
    object_class,
)
from roadsim.scenario.actors import map_obstacles
from roadsim.sensors.heap import keep_freed_memory
from roadsim.sensors.raycast import BACKENDS, Hits, RayPool, TracedMesh
from roadsim.sensors.shapes import BOX_TRIANGLES, boxes, cylinder_outline, prism, sweep
from roadsim.world.state import STATIC_OBJECT, WorldState

__all__ = ["FLAT_OBJECT_TYPES", "GROUND_MARGIN_M", "Scene", "SceneMesh", "static_mesh"]

#: How far the ground plane reaches beyond the road surface's extent (m).
GROUND_MARGIN_M = 200.0
_GROUND_DROP_M = 0.05
#: Map object types that lie flat on the road (painted or paved): no solid in the scene.
FLAT_OBJECT_TYPES = frozenset(
    {"crosswalk", "parkingSpace", "roadMark", "patch", "roadSurface", "permanentDelineator"}
)
#: How far past its own actor a sensor's ray starts again (m); see `Scene.cast`.
_SKIP_M = 1e-3
_MAX_SKIPS = 4


@dataclass(frozen=True, slots=True, eq=False)
class SceneMesh:
    """Triangles in the world frame, with what each one is.

    Attributes:
        vertices: (V, 3) float64 world positions (m).
        triangles: (T, 3) int32 vertex indices.
        surface: (T,) uint8 surface class.
        actor: (T,) int64 actor id, -1 for none.
        lane: (T,) int64 lane uid, -1 for none.
        look: (T,) uint8 look (`roadsim.road.surface_classes.LOOK_ALBEDO`).
    """

    vertices: FloatArray
    triangles: npt.NDArray[np.int32]
    surface: npt.NDArray[np.uint8]
    actor: IntArray
    lane: IntArray
    look: npt.NDArray[np.uint8]

    @classmethod
    def empty(cls) -> SceneMesh:
        return cls(
            np.zeros((0, 3)),
            np.zeros((0, 3), dtype=np.int32),
            np.zeros(0, dtype=np.uint8),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.uint8),
        )

    @classmethod
    def of(
        cls,
        vertices: npt.ArrayLike,
        triangles: npt.ArrayLike,
        surface: int | npt.ArrayLike,
        actor: int | npt.ArrayLike = -1,
        lane: int | npt.ArrayLike = -1,
        look: int | npt.ArrayLike | None = None,
    ) -> SceneMesh:
        """A mesh whose triangles share (or each have) a class, an actor, a lane and a
        look (None: the class's own)."""
        tri = np.asarray(triangles, dtype=np.int32).reshape(-1, 3)
        n = len(tri)
        classes = np.broadcast_to(np.asarray(surface, dtype=np.uint8), (n,)).copy()
        return cls(
            np.asarray(vertices, dtype=np.float64).reshape(-1, 3),
            tri,
            classes,
            np.broadcast_to(np.asarray(actor, dtype=np.int64), (n,)).copy(),
            np.broadcast_to(np.asarray(lane, dtype=np.int64), (n,)).copy(),
            classes.copy()
            if look is None
            else np.broadcast_to(np.asarray(look, dtype=np.uint8), (n,)).copy(),
        )

    @staticmethod
    def concat(parts: Sequence[SceneMesh]) -> SceneMesh:
        """One mesh of several."""
        parts = [p for p in parts if len(p.triangles)]
        if not parts:
            return SceneMesh.empty()
        offsets = np.cumsum([0] + [len(p.vertices) for p in parts[:-1]])
        return SceneMesh(
            np.concatenate([p.vertices for p in parts]),
            np.concatenate([p.triangles + k for p, k in zip(parts, offsets, strict=True)]).astype(
                np.int32
            ),
            np.concatenate([p.surface for p in parts]),
            np.concatenate([p.actor for p in parts]),
            np.concatenate([p.lane for p in parts]),
            np.concatenate([p.look for p in parts]),
        )


def static_mesh(
    net: RoadNetwork,
    state: WorldState,
    model_names: Sequence[str],
    *,
    object_classes: Mapping[str, str] | None = None,
    ground: bool = True,
) -> SceneMesh:
    """The static part of the scene (see the module docstring).

    Args:
        net: The road network.
        state: The world at frame 0: its active static objects join the mesh.
        model_names: The actor model of each ``state.model`` code
            (`roadsim.sim.build.MODEL_NAMES`).
        object_classes: Surface class names of map object types, over the defaults
            (`roadsim.road.surface_classes.MAP_OBJECT_CLASSES`).
        ground: Add the ground plane.
    """
    road = _road_part(net)
    parts = [road, _map_objects_part(net, object_classes), _signals_part(net)]
    parts.append(_static_actors_part(net, state, model_names, object_classes))
    if ground:
        parts.append(_ground_part(road.vertices if len(road.vertices) else _object_points(parts)))
    return SceneMesh.concat(parts)


def _road_part(net: RoadNetwork) -> SceneMesh:
    mesh = net.surface_mesh()
    if not len(mesh.triangles):
        return SceneMesh.empty()
    surface_class = material_classes(mesh.materials)[mesh.surface_material]
    surface_look = material_looks(mesh.materials)[mesh.surface_material]
    lane_of_surface = np.array([s.uid for s in mesh.surfaces], dtype=np.int64)
    return SceneMesh.of(
        mesh.vertices,
        mesh.triangles,
        surface_class[mesh.surface_id],
        -1,
        lane_of_surface[mesh.surface_id],
        surface_look[mesh.surface_id],
    )


def _ground_part(points: FloatArray) -> SceneMesh:
    if not len(points):
        return SceneMesh.empty()
    lo = points.min(axis=0) - GROUND_MARGIN_M
    hi = points.max(axis=0) + GROUND_MARGIN_M
    z = float(points[:, 2].min()) - _GROUND_DROP_M
    v = np.array([[lo[0], lo[1], z], [hi[0], lo[1], z], [hi[0], hi[1], z], [lo[0], hi[1], z]])
    return SceneMesh.of(v, [[0, 1, 2], [0, 2, 3]], SURFACE_IDS["grass"])


def _object_points(parts: list[SceneMesh]) -> FloatArray:
    points = [p.vertices for p in parts if len(p.vertices)]
    return np.concatenate(points) if points else np.zeros((0, 3))


def _map_objects_part(net: RoadNetwork, overrides: Mapping[str, str] | None) -> SceneMesh:
    """The map's objects that are no actors, stand up and have an extent."""
    actors = {id(o) for o in map_obstacles(net)}
    parts = []
    for obj in net.objects:
        if id(obj) in actors or obj.type in FLAT_OBJECT_TYPES:
            continue
        solids = [_object_solid(net, obj)]
        for repeat in obj.repeats:
            solids += _repeated(net, obj, repeat)
        for solid in solids:
            if solid is not None:
                v, tri = solid
                parts.append(SceneMesh.of(v, tri, object_class(obj.type, overrides)))
    return SceneMesh.concat(parts)


#: Most copies or samples of one ``<repeat>`` (a rail pole every 4 m along 40 km).
MAX_REPEATS = 10_000
#: Metres between the cross-sections of an object stretched along the road.
SWEEP_STEP_M = 1.0


def _repeated(
    net: RoadNetwork, obj: RoadObject, repeat: ObjectRepeat
) -> list[tuple[FloatArray, Int32Array] | None]:
    """The solids of one ``<repeat>`` of ``obj`` (OpenDRIVE 1.8, 13.3): a copy every
    ``distance`` metres, or with distance 0 the object stretched along the road, its
    cross-section (``width`` x ``height``; no width: a wall) following the road."""
    road = int(net.road_index(obj.road_id))
    end = min(repeat.s + repeat.length, float(net.road_length[road]))
    if end < repeat.s:
        return []
    span = max(end - repeat.s, 0.0)
    if repeat.distance > 0.0:
        count = min(int(span // repeat.distance) + 1, MAX_REPEATS)
        s: FloatArray = repeat.s + repeat.distance * np.arange(count, dtype=np.float64)
    else:
        count = min(max(math.ceil(span / SWEEP_STEP_M), 1) + 1, MAX_REPEATS)
        s = np.linspace(repeat.s, end, count, dtype=np.float64)
    f: FloatArray = (s - repeat.s) / repeat.length if repeat.length > 0.0 else np.zeros_like(s)

    def along(start: float, stop: float, own: float) -> FloatArray:
        if math.isnan(start) or math.isnan(stop):
            return np.full(len(s), own)
        out: FloatArray = start + (stop - start) * f
        return out

    t = along(repeat.t_start, repeat.t_end, obj.t)
    z_offset = along(repeat.z_offset_start, repeat.z_offset_end, obj.z_offset)
    height = along(repeat.height_start, repeat.height_end, obj.height)
    width = along(repeat.width_start, repeat.width_end, obj.width)
    length = along(repeat.length_start, repeat.length_end, obj.length)
    radius = along(repeat.radius_start, repeat.radius_end, obj.radius)
    if repeat.distance > 0.0:  # copies
        # (An outline in road coordinates stays where it is: it cannot be copied.)
        outline = () if obj.outline_frame == "road" else obj.outline
        copies = []
        for k in np.flatnonzero(height > 0.0):
            copy = replace(
                obj, s=float(s[k]), t=float(t[k]), z_offset=float(z_offset[k]),
                height=float(height[k]), width=float(width[k]), length=float(length[k]),
                radius=float(radius[k]), outline=outline,
            )  # fmt: skip
            copies.append(_object_solid(net, copy))
        return copies
    if len(s) < 2 or not np.any(height > 0.0):
        return []
    thick = np.where(width > 0.0, width, 2.0 * radius)
    sides = (-0.5, 0.5) if np.all(thick > 0.0) else (0.0,)
    roads = np.full(len(s), road)
    corners = []
    for side in sides:
        x, y, z = net.to_world_index(roads, s, t + side * thick)
        corners.append((x, y, z + z_offset, z + z_offset + height))
    if len(sides) == 1:
        x, y, lo, hi = corners[0]
        rings = np.stack((np.stack((x, y, lo), -1), np.stack((x, y, hi), -1)), axis=1)
    else:
        (xr, yr, lor, hir), (xl, yl, lol, hil) = corners
        rings = np.stack(
            (
                np.stack((xr, yr, lor), -1), np.stack((xl, yl, lol), -1),
                np.stack((xl, yl, hil), -1), np.stack((xr, yr, hir), -1),
            ),
            axis=1,
        )  # fmt: skip
    return [sweep(rings)]


#: The size of a sign plate and of a traffic light's housing where the map gives none,
#: and of the posts they stand on (m).
SIGN_SIZE_M, LIGHT_SIZE_M = (0.6, 0.6), (0.35, 1.0)
PLATE_THICKNESS_M, POST_WIDTH_M = 0.05, 0.08
PLATE_AHEAD_M = 0.1  # how far a plate's centre stands before its post's, toward its traffic


def _signals_part(net: RoadNetwork) -> SceneMesh:
    """The map's signals (OpenDRIVE 1.8, 14): a plate (a light's housing) of the
    signal's width and height whose bottom is zOffset above the road, facing the
    traffic it is valid for, in front of a post from the road up to it. References to a
    signal on another road add nothing."""
    signals = [sig for sig in net.signals if sig.reference_of is None]
    if not signals:
        return SceneMesh.empty()
    road = np.array([net.road_index(sig.road_id) for sig in signals], dtype=np.int64)
    s = np.clip([sig.s for sig in signals], 0.0, net.road_length[road])
    t = np.array([sig.t for sig in signals], dtype=np.float64)
    x, y, z = net.to_world_index(road, s, t)
    _, _, hdg, _ = net.reference.evaluate(road, s)
    light = np.array([sig.dynamic for sig in signals])
    default = np.where(light[:, None], LIGHT_SIZE_M, SIGN_SIZE_M)
    width = np.array([sig.width for sig in signals])
    height = np.array([sig.height for sig in signals])
    width = np.where(width > 0.0, width, default[:, 0])
    height = np.where(height > 0.0, height, default[:, 1])
    above = np.maximum([sig.z_offset for sig in signals], 0.0)
    # A plate valid for traffic along +s faces it: its face looks along -s.
    yaw = hdg + np.array([sig.h_offset for sig in signals])
    yaw += np.where([sig.orientation == "-" for sig in signals], np.pi, 0.0)
    ones = np.ones(len(signals))
    # (The plate in front of its post, and of a pole the map may stand there.)
    fx, fy = x - PLATE_AHEAD_M * np.cos(yaw), y - PLATE_AHEAD_M * np.sin(yaw)
    plates = boxes(fx, fy, z + above, yaw, PLATE_THICKNESS_M * ones, width, height)
    posts = boxes(x, y, z, yaw, POST_WIDTH_M * ones, POST_WIDTH_M * ones, above)
    has_post = above > 0.0
    classes = np.where(light, SURFACE_IDS["traffic_light"], SURFACE_IDS["sign"]).astype(np.uint8)
    plate_mesh = SceneMesh.of(plates[0], plates[1], np.repeat(classes, BOX_TRIANGLES))
    keep = np.repeat(has_post, BOX_TRIANGLES)
    post_mesh = SceneMesh.of(posts[0], posts[1][keep], SURFACE_IDS["pole"])
    return SceneMesh.concat([plate_mesh, post_mesh])


def _object_solid(net: RoadNetwork, obj: RoadObject) -> tuple[FloatArray, Int32Array] | None:
    """A map object as a prism of its outline, its box or its cylinder (OpenDRIVE 1.8,
    13.2 and 13.4), or as a post where it has a height alone, standing on the road
    surface height at its position plus zOffset; an open outline as a wall (`_wall`).
    None where nothing stands."""
    if obj.outline and not obj.outline_closed:
        return _wall(net, obj)
    if obj.height <= 0.0:
        return None
    if obj.outline and obj.outline_frame == "road":
        outline, _ = _road_corners(net, obj)
        _, z = _placed(net, obj, np.zeros((0, 2)))  # (the height under the object's place)
    else:
        if obj.outline:
            local = np.array(obj.outline, dtype=np.float64)
        elif obj.length > 0.0 and obj.width > 0.0:
            hl, hw = 0.5 * obj.length, 0.5 * obj.width
            local = np.array([[-hl, -hw], [hl, -hw], [hl, hw], [-hl, hw]])
        elif obj.radius > 0.0:
            local = cylinder_outline(obj.radius)
        else:  # a point object with a height (a rail's pole): a post
            half = 0.5 * POST_WIDTH_M
            local = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        outline, z = _placed(net, obj, local)
    if len(outline) < 3:
        return None
    return prism(outline, z + obj.z_offset, obj.height)


def _placed(net: RoadNetwork, obj: RoadObject, local: FloatArray) -> tuple[FloatArray, float]:
    """(k, 2) world x, y of (k, 2) points of an object's local frame (u along its
    heading: the road's at its s plus its hdg), and the road surface height under it."""
    road = net.road_index(obj.road_id).reshape(1)
    s = np.clip(np.array([obj.s]), 0.0, net.road_length[road])
    x, y, z = net.to_world_index(road, s, np.array([obj.t]))
    _, _, hdg, _ = net.reference.evaluate(road, s)
    yaw = float(hdg[0]) + obj.hdg
    c, sn = np.cos(yaw), np.sin(yaw)
    out: FloatArray = local @ np.array([[c, sn], [-sn, c]]) + np.array([x[0], y[0]])
    return out, float(z[0])


def _road_corners(net: RoadNetwork, obj: RoadObject) -> tuple[FloatArray, FloatArray]:
    """(k, 2) world x, y and (k,) road surface height of an outline's ``cornerRoad``s."""
    road = int(net.road_index(obj.road_id))
    cs = np.clip(np.array([c[0] for c in obj.outline]), 0.0, net.road_length[road])
    ct = np.array([c[1] for c in obj.outline], dtype=np.float64)
    px, py, pz = net.to_world_index(np.full(len(cs), road), cs, ct)
    return np.stack((px, py), axis=1), pz


def _wall(net: RoadNetwork, obj: RoadObject) -> tuple[FloatArray, Int32Array] | None:
    """An open outline (``closed="false"``: a fence, a wall, a guard rail along a line;
    OpenDRIVE 1.8, 13.2) as a wall without thickness through its corners, in their order.
    At each corner it stands zOffset above the road surface (under the corner for road
    corners, under the object for local ones) and reaches up by the corner's height, or
    the object's where the corner gives none. None for fewer than two corners or no
    height."""
    k = len(obj.outline)
    own = np.array(obj.outline_heights, dtype=np.float64) if obj.outline_heights else np.full(k, np.nan)
    height = np.where(np.isnan(own), obj.height, own)
    if k < 2 or not np.any(height > 0.0):
        return None
    if obj.outline_frame == "road":
        xy, base = _road_corners(net, obj)
    else:
        xy, z = _placed(net, obj, np.array(obj.outline, dtype=np.float64))
        base = np.full(k, z)
    bottom = np.column_stack((xy, base + obj.z_offset))
    top = np.column_stack((xy, base + obj.z_offset + height))
    return sweep(np.stack((bottom, top), axis=1))


def _static_actors_part(
    net: RoadNetwork,
    state: WorldState,
    model_names: Sequence[str],
    overrides: Mapping[str, str] | None,
) -> SceneMesh:
    slots = np.flatnonzero(state.active & (state.kind == STATIC_OBJECT))
    if not slots.size:
        return SceneMesh.empty()
    surface = actor_classes(state.model[slots], model_names)
    # The map's obstacles are the static actors of model map_object, in the order of
    # their ids (`roadsim.scenario.actors`); they take their object type's class.
    names = np.array([model_names[int(m)] for m in state.model[slots]])
    from_map = np.flatnonzero(names == "map_object")
    if from_map.size:
        order = from_map[np.argsort(state.id[slots[from_map]], kind="stable")]
        types = [o.type for o in map_obstacles(net)]
        for k, row in enumerate(order[: len(types)]):
            surface[row] = object_class(types[k], overrides)
    v, tri = _actor_boxes(state, slots)
    return SceneMesh.of(
        v, tri, np.repeat(surface, BOX_TRIANGLES), np.repeat(state.id[slots], BOX_TRIANGLES)
    )


def actor_classes(models: IntArray, model_names: Sequence[str]) -> npt.NDArray[np.uint8]:
    """(K,) surface class of actors by their model codes."""
    table = np.array(
        [SURFACE_IDS[ACTOR_MODEL_CLASSES.get(name, "obstacle")] for name in model_names],
        dtype=np.uint8,
    )
    out: npt.NDArray[np.uint8] = table[models]
    return out


def _actor_boxes(state: WorldState, slots: IntArray) -> tuple[FloatArray, Int32Array]:
    return boxes(
        state.x[slots],
        state.y[slots],
        state.z[slots],
        state.heading[slots],
        state.length[slots],
        state.width[slots],
        state.height[slots],
    )


class Scene:
    """The static and the moving mesh, and `cast` over both.

    Args:
        static: The static mesh (`static_mesh`).
        model_names: The actor model of each ``state.model`` code, for the moving actors'
            classes.
        backend: A name in `roadsim.sensors.raycast.BACKENDS`.
        pool: Splits large batches of rays over threads (default: a `RayPool` of every
            CPU this process may use).

    Attributes:
        origin: (3,) the world point the backend's float32 frame is centred on (m).
        static: The static mesh.
        moving: The moving actors' mesh of the last `update`.
        frame: The frame of the last `update` (-1 before the first).
    """

    def __init__(
        self,
        static: SceneMesh,
        model_names: Sequence[str],
        *,
        backend: str = "embree",
        pool: RayPool | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ArgumentError(
                f"backend: unknown ray-casting backend {backend!r}, expected "
                f"{'|'.join(BACKENDS)}"
            )
        self._backend = BACKENDS[backend]()
        # Casts make tens of MB of temporaries a sample: keep their pages between samples.
        keep_freed_memory()
        self.static = static
        self._model_names = tuple(model_names)
        self._model_classes = actor_classes(np.arange(len(model_names)), model_names)
        pts = static.vertices
        self.origin: FloatArray = (
            np.round(0.5 * (pts.min(axis=0) + pts.max(axis=0))) if len(pts) else np.zeros(3)
        )
        self._static = self._build(static)
        self.moving = SceneMesh.empty()
        # The moving mesh (-1) and the moving mesh without one actor (the one a sensor
        # rides on), by actor id, built on first use (`_moving_mesh`); and meshes of a
        # few actors, with the row in `moving` of each of their triangles (`_some_actors`).
        self._moving: dict[int, TracedMesh] = {}
        self._some: dict[bytes, tuple[TracedMesh, IntArray]] = {}
        # (The pool's threads cast blocks of a sensor's rays at once: one builds a mesh.)
        self._building = threading.Lock()
        self._static_actors = frozenset(np.unique(static.actor[static.actor >= 0]).tolist())
        self._tables()
        self.pool = pool if pool is not None else RayPool()
        self.frame = -1

    @classmethod
    def from_world(
        cls,
        net: RoadNetwork,
        state: WorldState,
        model_names: Sequence[str],
        *,
        object_classes: Mapping[str, str] | None = None,
        ground: bool = True,
        backend: str = "embree",
        pool: RayPool | None = None,
    ) -> Scene:
        """The scene of a road network and the world at frame 0 (see `static_mesh`);
        call `update` before casting to add the moving actors."""
        static = static_mesh(net, state, model_names, object_classes=object_classes, ground=ground)
        return cls(static, model_names, backend=backend, pool=pool)

    def _build(self, mesh: SceneMesh) -> TracedMesh:
        local = (mesh.vertices - self.origin).astype(np.float32)
        return self._backend.build(local, mesh.triangles)

    def update(self, state: WorldState, frame: int = -1) -> None:
        """Rebuilds the moving mesh from ``state``: every active actor that is no static
        object, as its box."""
        slots = np.flatnonzero(state.active & (state.kind != STATIC_OBJECT))
        v, tri = _actor_boxes(state, slots)
        classes = np.repeat(self._model_classes[state.model[slots]], BOX_TRIANGLES)
        self.moving = SceneMesh(
            v,
            tri,
            classes,
            np.repeat(state.id[slots].astype(np.int64), BOX_TRIANGLES),
            np.full(len(tri), -1, dtype=np.int64),
            classes.copy(),
        )
        self._moving.clear()
        self._some.clear()
        self._tables()
        self.frame = frame

    def _tables(self) -> None:
        """Class, actor, lane and look of every triangle: the static ones, then the
        moving, then an entry for no triangle (index -1)."""
        st, mv = self.static, self.moving
        self._surface = np.concatenate((st.surface, mv.surface, [UNKNOWN])).astype(np.uint8)
        self._look = np.concatenate((st.look, mv.look, [UNKNOWN])).astype(np.uint8)
        self._actor = np.concatenate((st.actor, mv.actor, [-1]))
        self._lane = np.concatenate((st.lane, mv.lane, [-1]))

    def cast(
        self,
        origins: npt.ArrayLike,
        directions: npt.ArrayLike,
        max_t: npt.ArrayLike,
        *,
        ignore_actor: int = -1,
        near_actors: IntArray | None = None,
        actors: IntArray | None = None,
        split: bool = True,
    ) -> Hits:
        """The nearest hit of each ray, static or moving.

        Args:
            origins: (N, 3) world points (m).
            directions: (N, 3) unit directions (not checked: normalise them first).
            max_t: (N,) or scalar: the farthest a hit may lie (m); a ray with 0 hits
                nothing.
            ignore_actor: An actor the rays pass through (the vehicle a sensor is
                mounted on); -1 for none.
            near_actors: The rays (ascending) that may hit a moving actor, where the
                caller knows (the others are cast against the static mesh alone); None:
                every ray.
            actors: The moving actors (ids) the rays may hit, where the caller knows:
                the others are left out of the moving mesh, which is so built faster
                (at its first cast after `update`); None: every one.
            split: Split a large batch over `pool`'s threads; False: cast it on the
                calling thread (a caller that splits its own work over the pool).

        Returns:
            `Hits` (normals facing the rays).
        """
        o = np.asarray(origins, dtype=np.float64).reshape(-1, 3)
        d = np.asarray(directions, dtype=np.float64).reshape(-1, 3)
        n = len(d)
        o = np.broadcast_to(o, (n, 3))
        # One origin for all (a lidar): shifted once.
        one = (o[0] - self.origin).astype(np.float32) if n and o.strides[0] == 0 else None
        m = np.asarray(max_t, dtype=np.float64)
        m32 = np.broadcast_to(np.maximum(m, 0.0).astype(np.float32), (n,))
        hits = Hits(
            np.empty(n), np.empty((n, 3)), np.empty(n, dtype=np.uint8),
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=bool),
            np.empty(n, dtype=np.uint8),
        )  # fmt: skip
        static, first_moving = self._static, len(self.static.surface)
        if actors is None:
            moving, moving_rows = self._moving_mesh(ignore_actor), None
        else:
            moving, moving_rows = self._some_actors(actors[actors != ignore_actor])
        tables = (self._surface, self._actor, self._lane, self._look)

        def work(a: int, b: int) -> None:
            # Each part of the rays from end to end in its own thread, conversions and
            # look-ups included: they are most of the time beside the casts.
            if one is None:
                local = (o[a:b] - self.origin).astype(np.float32)
            else:  # (read in place, no copy: the backend reads any strides)
                local = np.broadcast_to(one, (b - a, 3))
            d32 = d[a:b].astype(np.float32)
            hs = static.intersect(local, d32, m32[a:b].copy())
            tri, t, ng = hs.triangle, hs.t, hs.normal
            if near_actors is None:
                rows = None
                hm = moving.intersect(local, d32, t.copy())
            else:
                lo, hi = np.searchsorted(near_actors, (a, b))
                rows = near_actors[lo:hi] - a
                hm = moving.intersect(local[rows], d32[rows], t[rows])
            # The static hits, the nearer moving ones written over them (moving triangles
            # follow the static ones in the attribute tables).
            hit = np.flatnonzero(hm.triangle >= 0)
            near = hit if rows is None else rows[hit]
            k = hm.triangle[hit]
            tri[near] = (k if moving_rows is None else moving_rows[k]) + first_moving
            t[near] = hm.t[hit]
            ng[near] = hm.normal[hit]
            _hits(
                tri, t, ng, d32, *tables, hits.distance[a:b], hits.normal[a:b],
                hits.surface[a:b], hits.actor[a:b], hits.lane[a:b], hits.valid[a:b],
                hits.look[a:b],
            )  # fmt: skip

        if split:
            self.pool.map(work, n)
        else:
            work(0, n)
        if ignore_actor in self._static_actors:
            hits = self._skip_actor(o, d, np.broadcast_to(m, (n,)), hits, ignore_actor, split)
        return hits

    def _moving_mesh(self, actor: int) -> TracedMesh:
        """The moving mesh, without ``actor``'s box if it has one (-1: whole): its
        triangles collapse to a point, which no ray hits, and keep their places in the
        attribute tables. Built on first use after each `update`."""
        with self._building:
            mesh = self._moving.get(actor)
            if mesh is None:
                rows = np.flatnonzero(self.moving.actor == actor) if actor >= 0 else np.zeros(0, np.int64)
                if rows.size:
                    vertices = self.moving.vertices.copy()
                    corners = np.unique(self.moving.triangles[rows])
                    vertices[corners] = vertices[corners[0]]
                    mesh = self._build(replace(self.moving, vertices=vertices))
                else:
                    mesh = self._moving.get(-1) or self._build(self.moving)
                    self._moving[-1] = mesh
                self._moving[actor] = mesh
            return mesh

    def _some_actors(self, actors: IntArray) -> tuple[TracedMesh, IntArray]:
        """A mesh of the moving boxes of ``actors`` alone, and the row in `moving` of each
        of its triangles. Built on first use after each `update`."""
        key = np.unique(actors).tobytes()
        with self._building:
            some = self._some.get(key)
            if some is None:
                rows = np.flatnonzero(np.isin(self.moving.actor, actors))
                used, corners = np.unique(self.moving.triangles[rows], return_inverse=True)
                local = (self.moving.vertices[used] - self.origin).astype(np.float32)
                mesh = self._backend.build(local, corners.reshape(-1, 3).astype(np.int32))
                some = self._some[key] = (mesh, rows)
            return some

    def _skip_actor(
        self, o: FloatArray, d: FloatArray, m: FloatArray, hits: Hits, actor: int, split: bool
    ) -> Hits:
        """Casts again, from just past it, the rays that hit ``actor`` (a ray leaving the
        box it starts in hits its inside first); distances stay those from the origin."""
        for _ in range(_MAX_SKIPS):
            again = np.flatnonzero(hits.actor == actor)
            if not again.size:
                break
            start = hits.distance[again] + _SKIP_M
            more = self.cast(
                o[again] + start[:, None] * d[again], d[again], m[again] - start, split=split
            )
            for name in ("surface", "actor", "lane", "valid", "look"):
                getattr(hits, name)[again] = getattr(more, name)
            hits.distance[again] = more.distance + start
            hits.normal[again] = more.normal
        return hits


@njit
def _hits(
    tri: npt.NDArray[np.int32],
    t: npt.NDArray[np.float32],
    ng: npt.NDArray[np.float32],
    d32: npt.NDArray[np.float32],
    surface_of: npt.NDArray[np.uint8],
    actor_of: IntArray,
    lane_of: IntArray,
    look_of: npt.NDArray[np.uint8],
    distance: FloatArray,
    normal: FloatArray,
    surface: npt.NDArray[np.uint8],
    actor: IntArray,
    lane: IntArray,
    valid: BoolArray,
    look: npt.NDArray[np.uint8],
) -> None:
    """The fields of `Hits` (the last seven arguments, written) from what the backend
    returned: the triangle hit (-1: none), the distance and the geometric normal of each
    ray, and the class, actor, lane and look of every triangle (tables that end with the
    entry for none). Normals are made unit and turned to face the ray (``d32``, its
    direction)."""
    for i in range(tri.shape[0]):
        k = tri[i]
        valid[i] = k >= 0
        if k < 0:
            distance[i] = np.nan
            normal[i, 0] = normal[i, 1] = normal[i, 2] = np.nan
        else:
            x, y, z = float(ng[i, 0]), float(ng[i, 1]), float(ng[i, 2])
            scale = 1.0 / np.sqrt(x * x + y * y + z * z)
            if x * d32[i, 0] + y * d32[i, 1] + z * d32[i, 2] > 0.0:
                scale = -scale
            distance[i] = t[i]
            normal[i, 0], normal[i, 1], normal[i, 2] = x * scale, y * scale, z * scale
        surface[i], actor[i], lane[i] = surface_of[k], actor_of[k], lane_of[k]
        look[i] = look_of[k]
