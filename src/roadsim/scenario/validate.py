"""Checks of a scenario against its map, and where its explicit spawns lie on the map.

`validate_against_map` checks what the schema cannot: that roads and lanes exist, that
positions lie on lanes (the ego's on a drivable one), that explicit spawns (ego and
static objects) do not overlap, that a scripted object's path starts on a road and its
points lie where they say, and that actor ids given as controllers or sensor vehicles
are those of actors the scenario and the map may have (`roadsim.scenario.actors`).
`resolve_spawn` turns a position into a pose on the map.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from roadsim._types import FloatArray
from roadsim.road.lanes import DRIVABLE_TYPES
from roadsim.scenario.actors import ActorIds, reference_problems
from roadsim.scenario.problems import KeyPath, SourceMap
from roadsim.scenario.schema import (
    VEHICLE_MODELS,
    PathObject,
    Position,
    RoadPathPoint,
    RoadPosition,
    RoadsArea,
    Scenario,
    WorldPathPoint,
)

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork

__all__ = [
    "SpawnPose",
    "first_overlaps",
    "resolve_road_positions",
    "resolve_spawn",
    "validate_against_map",
]


#: Control points closer than this (m) are the same place.
_SAME_POINT = 0.01

#: How far two footprints must interpenetrate to count as overlapping (m).
_OVERLAP_TOLERANCE = 1e-6


class SpawnPose(NamedTuple):
    """Where a position lies: world pose and road coordinates.

    Attributes:
        x, y, z: World position on the road surface (m).
        heading: Counter-clockwise from east, in [-pi, pi) (rad).
        uid: Lane uid (-1 off the road).
        s, t: Road coordinates (m; NaN off the road).
    """

    x: float
    y: float
    z: float
    heading: float
    uid: int
    s: float
    t: float


class _Footprint(NamedTuple):
    """An oriented box: centre, heading, length, width, base height and height."""

    x: float
    y: float
    heading: float
    length: float
    width: float
    z: float
    height: float


def resolve_spawn(spec: Position, net: RoadNetwork) -> SpawnPose:
    """The pose of a validated position.

    A ``{road, lane, s, t}`` position takes the lane's driving direction as heading (the
    reference line's at s, turned by pi for lanes driven against s). A ``{x, y}`` position
    takes its own heading or, without one, that of the lane it lies on (0 off the road).
    """
    if isinstance(spec, RoadPosition):
        x, y, z, hdg, uid, t = (float(v[0]) for v in resolve_road_positions([spec], net))
        return SpawnPose(x, y, z, _wrap(hdg), int(uid), spec.s, t)
    heading = spec.heading_rad
    hint = None if heading is None else [heading]
    where = net.localize([spec.x], [spec.y], heading=hint)
    on = bool(where.on_lane[0])
    if heading is None:
        heading = float(where.heading[0]) if on else 0.0
    height = float(where.surface_z[0]) if on else 0.0
    return SpawnPose(
        spec.x,
        spec.y,
        height,
        _wrap(heading),
        int(where.uid[0]),
        float(where.s[0]),
        float(where.t[0]),
    )


def resolve_road_positions(
    specs: Sequence[RoadPosition], net: RoadNetwork
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """`resolve_spawn` of many validated ``{road, lane, s, t}`` positions at once:
    ``(x, y, z, heading, uid, t)`` arrays (heading not wrapped, uid as floats)."""
    s = np.array([spec.s for spec in specs], dtype=np.float64)
    roads = [spec.road for spec in specs]
    road = net.road_index(roads).reshape(-1)
    uid = net.lane_uid(roads, [spec.lane for spec in specs], s).reshape(-1)
    t = net.uid_t_center(uid, s) + np.array([spec.t for spec in specs])
    x, y, z = net.to_world_index(road, s, t)
    heading = net.reference_pose(road, s)[3] + np.where(net.driving_sign(uid) < 0, math.pi, 0.0)
    return x, y, z, heading, uid.astype(np.float64), t


def validate_against_map(
    scenario: Scenario, net: RoadNetwork, *, source: SourceMap | None = None
) -> None:
    """Checks the scenario's roads, lanes and explicit spawns against the map.

    Raises:
        ScenarioError: Listing every problem with its line and key path, e.g.
            ``ego.spawn.lane: lane -4 does not exist on road 12 at s=30; lanes there: -1, -2``.
    """
    problems: list[tuple[KeyPath, str]] = []
    placed: list[tuple[KeyPath, str, _Footprint]] = []
    roads = set(net.road_ids)
    if scenario.ego is not None:
        ego = scenario.ego
        path: KeyPath = ("ego", "spawn")
        pose = _place(ego.spawn, net, path, problems, drivable=True)
        if pose is not None:
            size = VEHICLE_MODELS[ego.model]
            box = _Footprint(
                pose.x, pose.y, pose.heading, size.length, size.width, pose.z, size.height
            )
            placed.append((path, "the ego vehicle", box))
        problems += _missing_roads(ego.route, ("ego", "route"), roads, net)
    static = []
    for i, obj in enumerate(scenario.objects):
        if isinstance(obj, PathObject):
            problems += _path_problems(obj, ("objects", i), net)
        else:
            static.append((i, obj))
    paths: list[KeyPath] = [("objects", i, "position") for i, _ in static]
    poses = _place_obstacles([obj.position for _, obj in static], net, paths, problems)
    for (i, obj), path, pose in zip(static, paths, poses, strict=True):
        if pose is not None:
            length, width, height = obj.size
            box = _Footprint(pose.x, pose.y, pose.heading, length, width, pose.z, height)
            placed.append((path, f"objects[{i}]", box))
    area = scenario.traffic.spawn_area if scenario.traffic is not None else None
    if isinstance(area, RoadsArea):
        problems += _missing_roads(area.roads, ("traffic", "spawn_area", "roads"), roads, net)
    first = first_overlaps([box for _, _, box in placed])
    for (path, _, _), k in zip(placed, first, strict=True):
        if k >= 0:
            problems.append((path, f"overlaps {placed[k][1]}"))
    problems += reference_problems(scenario, ActorIds.of(scenario, net))
    if problems:
        raise (source or scenario.source).error(problems)


def _place(
    spec: Position,
    net: RoadNetwork,
    path: KeyPath,
    problems: list[tuple[KeyPath, str]],
    *,
    drivable: bool,
) -> SpawnPose | None:
    """The pose of a position at ``path``, or ``None`` after adding what is wrong with it."""
    problem = _position_problem(spec, net, drivable=drivable)
    if problem is not None:
        problems.append(((*path, *problem[0]), problem[1]))
        return None
    return resolve_spawn(spec, net)


def _place_obstacles(
    specs: Sequence[Position],
    net: RoadNetwork,
    paths: Sequence[KeyPath],
    problems: list[tuple[KeyPath, str]],
) -> list[SpawnPose | None]:
    """`_place` of many static obstacles (on any lane type); the ``{road, lane, s, t}``
    positions all at once, as a scenario may hold thousands of cones."""
    poses: list[SpawnPose | None] = [None] * len(specs)
    on_road = [k for k, spec in enumerate(specs) if isinstance(spec, RoadPosition)]
    road_specs = [cast(RoadPosition, specs[k]) for k in on_road]
    fine = []
    for k, (problem, _) in zip(on_road, _road_problems(road_specs, net), strict=True):
        if problem is None:
            fine.append(k)
        else:
            problems.append(((*paths[k], *problem[0]), problem[1]))
    if fine:
        fine_specs = [cast(RoadPosition, specs[k]) for k in fine]
        x, y, z, heading, uid, t = resolve_road_positions(fine_specs, net)
        for n, (k, road_spec) in enumerate(zip(fine, fine_specs, strict=True)):
            pose = (float(x[n]), float(y[n]), float(z[n]), _wrap(float(heading[n])))
            poses[k] = SpawnPose(*pose, int(uid[n]), road_spec.s, float(t[n]))
    for k, spec in enumerate(specs):
        if not isinstance(spec, RoadPosition):
            poses[k] = _place(spec, net, paths[k], problems, drivable=False)
    return poses


def _position_problem(
    spec: Position, net: RoadNetwork, *, drivable: bool, on_road: bool = True
) -> tuple[KeyPath, str] | None:
    """What is wrong with a position (key path below the position, message), if anything;
    with ``on_road`` false, a world position may lie off every lane."""
    if isinstance(spec, RoadPosition):
        problem, uid = _road_problems([spec], net)[0]
        if problem is not None:
            return problem
        where = f"lane {spec.lane} of road {spec.road} at s={spec.s:g}"
        lane_key: KeyPath = ("lane",)
    else:
        if not on_road:
            return None
        uid = resolve_spawn(spec, net).uid
        if uid < 0:
            return (), f"off the road: no lane at x={spec.x:g}, y={spec.y:g}"
        road_id = net.road_ids[int(net.lanes.road[uid])]
        where = f"x={spec.x:g}, y={spec.y:g} (lane {int(net.lanes.lane_id[uid])} of road {road_id})"
        lane_key = ()
    kind = net.lanes.type_name[uid]
    if drivable and kind not in DRIVABLE_TYPES:
        allowed = ", ".join(sorted(DRIVABLE_TYPES))
        return lane_key, f"{where} is a {kind!r} lane; a vehicle needs a drivable lane ({allowed})"
    return None


def _road_problems(
    specs: Sequence[RoadPosition], net: RoadNetwork
) -> list[tuple[tuple[KeyPath, str] | None, int]]:
    """For each road position: what is wrong with it (key path below the position,
    message) or None, and its lane uid (-1 where wrong). Vectorised over ``specs``."""
    out: list[tuple[tuple[KeyPath, str] | None, int]] = [(None, -1)] * len(specs)
    known = [i for i, spec in enumerate(specs) if net.has_road(spec.road)]
    for i, spec in enumerate(specs):
        if not net.has_road(spec.road):
            out[i] = (("road",), f"road {spec.road} does not exist{_in(net)}"), -1
    road = net.road_index([specs[i].road for i in known]).reshape(-1)
    s = np.array([specs[i].s for i in known], dtype=np.float64)
    lanes = net.lanes
    section = lanes.section_at(road, s) if known else np.zeros(0, dtype=np.int64)
    found: list[int] = []
    for k, i in enumerate(known):
        spec = specs[i]
        length = float(net.road_length[road[k]])
        if spec.s > length:
            message = f"s={spec.s:g} is beyond the end of road {spec.road} (length {length:g} m)"
            out[i] = (("s",), message), -1
            continue
        first, count = int(lanes.sec_first_uid[section[k]]), int(lanes.sec_count[section[k]])
        here = {int(lanes.lane_id[u]): u for u in range(first, first + count)}
        if spec.lane not in here:
            listed = ", ".join(str(lane) for lane in here if lane != 0)
            message = (
                f"lane {spec.lane} does not exist on road {spec.road} at s={spec.s:g}; "
                f"lanes there: {listed}"
            )
            out[i] = (("lane",), message), -1
            continue
        out[i] = None, here[spec.lane]
        found.append(k)
    rows = np.array(found, dtype=np.int64)
    uids = np.array([out[known[k]][1] for k in found], dtype=np.int64)
    half = 0.5 * net.uid_width(uids, s[rows]) if found else np.zeros(0)
    for k, h in zip(found, half, strict=True):
        spec = specs[known[k]]
        if abs(spec.t) > h + 1e-9:
            message = (
                f"t={spec.t:g} puts the point outside lane {spec.lane} "
                f"(half its width there: {h:.2f} m)"
            )
            out[known[k]] = (("t",), message), -1
    return out


def _path_problems(obj: PathObject, where: KeyPath, net: RoadNetwork) -> list[tuple[KeyPath, str]]:
    """What is wrong with a scripted object's path and target on this map."""
    problems: list[tuple[KeyPath, str]] = []
    xy: list[tuple[float, float] | None] = [None] * len(obj.path)
    on_road = [k for k, point in enumerate(obj.path) if isinstance(point, RoadPathPoint)]
    road_points = [cast(RoadPathPoint, obj.path[k]) for k in on_road]
    fine = []
    for k, (problem, _) in zip(on_road, _road_problems(road_points, net), strict=True):
        if problem is None:
            fine.append(k)
        else:
            problems.append(((*where, "path", k, *problem[0]), problem[1]))
    if fine:
        x, y, *_ = resolve_road_positions([cast(RoadPathPoint, obj.path[k]) for k in fine], net)
        for k, px, py in zip(fine, x, y, strict=True):
            xy[k] = (float(px), float(py))
    for k, point in enumerate(obj.path):
        if isinstance(point, WorldPathPoint):
            xy[k] = (point.x, point.y)
            if k == 0 and net.localize([point.x], [point.y]).uid[0] < 0:
                problems.append(
                    (
                        (*where, "path", k),
                        f"a path must start on a road: no lane at x={point.x:g}, y={point.y:g}",
                    )
                )
        here, before = xy[k], xy[k - 1] if k else None
        if (
            here is not None
            and before is not None
            and math.hypot(here[0] - before[0], here[1] - before[1]) < _SAME_POINT
        ):
            problems.append(
                ((*where, "path", k), f"at the same place as path[{k - 1}]; points must differ")
            )
    if obj.controller_target is not None:
        problem = _position_problem(obj.controller_target, net, drivable=False, on_road=False)
        if problem is not None:
            problems.append(((*where, "controller_target", *problem[0]), problem[1]))
    return problems


def _missing_roads(
    ids: tuple[str, ...], path: KeyPath, roads: set[str], net: RoadNetwork
) -> list[tuple[KeyPath, str]]:
    return [
        ((*path, i), f"road {rid} does not exist{_in(net)}")
        for i, rid in enumerate(ids)
        if rid not in roads
    ]


def _in(net: RoadNetwork) -> str:
    """`` in town.xodr (roads: 1, 2, ...)`` for messages."""
    name = Path(net.path).name if net.path else "the map"
    ids = list(net.road_ids)
    shown = ", ".join(ids[:12]) + (f", ... ({len(ids)} roads)" if len(ids) > 12 else "")
    return f" in {name} (roads: {shown})"


def first_overlaps(boxes: Sequence[_Footprint]) -> list[int]:
    """For each box, the index of the first box before it that it overlaps (-1: none).

    Two boxes can only overlap if their centres are closer than the sum of their
    circumscribed radii, so only such pairs are tested, found with a k-d tree: each box
    looks for the boxes no larger than itself within twice its own radius, which finds
    every such pair from its larger box. Time grows with the number of boxes and their
    close neighbours, not with the square of the number of boxes (10,200 cones took 13 M
    tests, 54 s, before).
    """
    n = len(boxes)
    first = [-1] * n
    if n < 2:
        return first
    xy = np.array([(b.x, b.y) for b in boxes], dtype=np.float64)
    radius = np.array([0.5 * math.hypot(b.length, b.width) for b in boxes], dtype=np.float64)
    from scipy.spatial import cKDTree  # (0.1 s to import: only where objects are)

    tree = cKDTree(xy)
    near = tree.query_ball_point(xy, r=2.0 * radius + _OVERLAP_TOLERANCE)
    candidates: list[list[int]] = [[] for _ in range(n)]
    for i, js in enumerate(near):
        for j in js:
            if j != i and (radius[j] < radius[i] or (radius[j] == radius[i] and j < i)):
                later, earlier = (i, j) if j < i else (j, i)
                candidates[later].append(earlier)
    for k, earlier in enumerate(candidates):
        for j in sorted(earlier):
            if _overlap(boxes[k], boxes[j]):
                first[k] = j
                break
    return first


def _overlap(a: _Footprint, b: _Footprint) -> bool:
    """Whether two oriented boxes interpenetrate: separating axes in the plane, then height."""
    if a.z + a.height <= b.z + _OVERLAP_TOLERANCE or b.z + b.height <= a.z + _OVERLAP_TOLERANCE:
        return False
    dx, dy = b.x - a.x, b.y - a.y
    for axis_heading in (a.heading, a.heading + math.pi / 2, b.heading, b.heading + math.pi / 2):
        ux, uy = math.cos(axis_heading), math.sin(axis_heading)
        reach = sum(
            0.5 * abs(box.length * (ux * math.cos(box.heading) + uy * math.sin(box.heading)))
            + 0.5 * abs(box.width * (-ux * math.sin(box.heading) + uy * math.cos(box.heading)))
            for box in (a, b)
        )
        if abs(dx * ux + dy * uy) >= reach - _OVERLAP_TOLERANCE:
            return False
    return True


def _wrap(angle: float) -> float:
    """An angle in [-pi, pi)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi
