"""Scripted objects: actors that follow their paths, created and deleted around the ego.

A scripted object (``type: path`` in a scenario, `roadsim.scenario.schema.PathObject`) has
no behaviour of its own: it drives its path (`roadsim.scenario.paths`) at the speeds of its
control points. Each tick, a compiled pass over all of them in the simulation's lifecycle
phase, and another in its controller phase:

1. **Lifecycle**, judged on the frame the tick starts from. A pending object is created at
   the start of its path once the ego has been within its ``creation_radius`` of the first
   point (0: always) for ``activation_delay`` without a break: it stands there at the time
   of that frame, and moves in the same tick (objects created with the simulation show at
   their first point in frame 0). A live object is deleted when the ego is farther than
   the radius from it (it is pending again: the ego coming back creates it anew, at the
   start of its path), ``lifetime`` after its creation, or at the end of its path with
   ``at_end: delete``; the last two are final.
2. **Motion.** A regular object covers the tick's time along the speed profile exactly
   (segment by segment, standing out ``wait`` at points of speed 0). A dependent object,
   until it reaches its ``target_point``, moves at the speed that brings it there when its
   controller reaches ``controller_target``: the path length left divided by the
   controller's time to go, that is its distance to go over its speed, the distance
   measured the way the controller will drive (`roadsim.agents.arrival`). A controller
   that stands, moves away, has passed its target or is gone gives speed 0: the object
   stops and waits, and never moves backwards. ``max_speed`` caps that speed (the object
   then arrives late); ``max_accel`` and ``max_decel`` bound its change. From the target
   point on it drives the control points' speeds; with ``keep_timed_speed`` the segment
   after the target point starts from the speed it arrived with instead of the point's.
3. **Pose**: the point and heading of the spline at the distance driven; the height of the
   road surface under it (held over gaps); and, as the starting guess of the simulation's
   lane localisation, the lane under the path there.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from roadsim._jit import njit_leaf, njit_loop
from roadsim._types import BoolArray, FloatArray, IntArray, UIntArray
from roadsim.agents.arrival import RouteCache, lane_arcs, route_left, straight_ahead
from roadsim.scenario.paths import (
    PathGeometry,
    advance,
    hermite,
    locate,
    segment_speed,
    time_to_end,
)
from roadsim.scenario.schema import PathObject
from roadsim.world.lane_kernels import LaneArrays
from roadsim.world.state import WorldState

# Lifecycle states (`ScriptedObjects.status`).
PENDING, ALIVE, DONE = 0, 1, 2

_EPS = 1e-9  # s, slack on timer comparisons


class PathTables(NamedTuple):
    """The paths of all scripted objects, concatenated.

    Per object (m): ``point_first`` (first control point in the per-point arrays),
    ``n_points``, ``seg_first`` (first row of ``segments``). Per control point: ``knots``
    (distance along its path), ``speeds``, ``waits``. Per segment: ``segments`` rows and
    ``sample_first`` (its first sample; one more entry than segments). Per sample:
    ``sample_dist`` (along its path), ``sample_u``, ``sample_z``, ``sample_uid``,
    ``sample_s`` (the lane and road s there).
    """

    point_first: IntArray
    n_points: IntArray
    seg_first: IntArray
    knots: FloatArray
    speeds: FloatArray
    waits: FloatArray
    segments: FloatArray
    sample_first: IntArray
    sample_dist: FloatArray
    sample_u: FloatArray
    sample_z: FloatArray
    sample_uid: IntArray
    sample_s: FloatArray


class Controls(NamedTuple):
    """Per object, who controls it and where that one arrives (-1 and NaN for regular
    objects and where there is no such thing).

    Attributes:
        slot, id: The controller's actor slot and id (the slot of a vehicle that left the
            map may hold another vehicle later: the id tells).
        object: The controller's index among the scripted objects, if it is one.
        target_x, target_y: The controller's target (m).
        target_section: The lane section of the target (`RoadNetwork.lanes`).
        target_s: The target's road s (m).
    """

    slot: IntArray
    id: IntArray
    object: IntArray
    target_x: FloatArray
    target_y: FloatArray
    target_section: IntArray
    target_s: FloatArray

    @classmethod
    def none(cls, m: int) -> Controls:
        """No controller for any of ``m`` objects."""
        minus = np.full(m, -1, dtype=np.int64)
        return cls(minus, minus.copy(), minus.copy(), np.full(m, np.nan),
                   np.full(m, np.nan), minus.copy(), np.full(m, np.nan))  # fmt: skip


class Scripts(NamedTuple):
    """Per object: its actor slot and what the scenario says of it (inf: no limit)."""

    slot: IntArray
    radius: FloatArray
    delay: FloatArray
    lifetime: FloatArray
    delete_at_end: BoolArray
    target_point: IntArray  # -1: a regular object
    controller: IntArray  # actor slot, -1: none
    controller_id: IntArray
    controller_object: IntArray  # index of the scripted object that controls it, -1: none
    target_x: FloatArray
    target_y: FloatArray
    target_section: IntArray  # -1: the target is on no lane
    target_s: FloatArray
    target_along: FloatArray  # along the controlling object's path (m); NaN: none
    max_speed: FloatArray
    max_accel: FloatArray
    max_decel: FloatArray
    keep_speed: BoolArray


class Progress(NamedTuple):
    """Per object, what changes: lifecycle state and where it is on its path."""

    status: IntArray
    inside_since: IntArray  # frame since which the ego is within the radius, -1: it is not
    created: IntArray  # frame of creation
    distance: FloatArray  # along the path (m)
    segment: IntArray  # index of the segment it is on, within its path
    cursor: IntArray  # its sample interval (an index into the samples)
    wait_left: FloatArray  # s still to stand at a point
    synced: BoolArray  # a dependent object before its target point
    exit_speed: FloatArray  # the speed it kept through its target point (NaN: none)

    @classmethod
    def start(cls, m: int, first_sample: IntArray, dependent: BoolArray) -> Progress:
        return cls(
            status=np.full(m, PENDING, dtype=np.int64),
            inside_since=np.full(m, -1, dtype=np.int64),
            created=np.full(m, -1, dtype=np.int64),
            distance=np.zeros(m),
            segment=np.zeros(m, dtype=np.int64),
            cursor=first_sample.copy(),
            wait_left=np.zeros(m),
            synced=dependent.copy(),
            exit_speed=np.full(m, np.nan),
        )


class ScriptedObjects:
    """Runs the scripted objects of a simulation (see the module docstring).

    Args:
        objects: The scenario's path objects.
        slots: Their actor slots.
        controls: Their controllers and the controllers' targets.
        geometries: Their paths, built on the simulation's road network.
        lanes: The simulation's lane tables, along which vehicles that control objects
            drive to their targets.
    """

    def __init__(
        self,
        objects: list[PathObject],
        slots: IntArray,
        controls: Controls,
        geometries: list[PathGeometry],
        lanes: LaneArrays,
    ) -> None:
        self.objects = objects
        self.paths = geometries
        self.lanes = lanes
        m = len(objects)
        self.tables = _concatenate(geometries)
        on_lanes = (controls.slot >= 0) & (controls.object < 0) & (controls.target_section >= 0)
        # (the lanes' arc lengths only where a vehicle's route is measured along them)
        self._arc = lane_arcs(lanes) if on_lanes.any() else np.zeros(1)
        self._route = RouteCache.empty(m)
        self.scripts = Scripts(
            slot=np.asarray(slots, dtype=np.int64),
            radius=np.array([o.creation_radius for o in objects], dtype=np.float64),
            delay=np.array([o.activation_delay for o in objects], dtype=np.float64),
            lifetime=np.array([o.lifetime for o in objects], dtype=np.float64),
            delete_at_end=np.array([o.at_end == "delete" for o in objects], dtype=bool),
            target_point=np.array(
                [-1 if o.target_point is None else o.target_point for o in objects], dtype=np.int64
            ),
            controller=np.asarray(controls.slot, dtype=np.int64),
            controller_id=np.asarray(controls.id, dtype=np.int64),
            controller_object=np.asarray(controls.object, dtype=np.int64),
            target_x=np.asarray(controls.target_x, dtype=np.float64),
            target_y=np.asarray(controls.target_y, dtype=np.float64),
            target_section=np.asarray(controls.target_section, dtype=np.int64),
            target_s=np.asarray(controls.target_s, dtype=np.float64),
            target_along=_along_controllers(controls, geometries),
            max_speed=np.array([o.max_speed or np.inf for o in objects], dtype=np.float64),
            max_accel=np.array([o.max_accel or np.inf for o in objects], dtype=np.float64),
            max_decel=np.array([o.max_decel or np.inf for o in objects], dtype=np.float64),
            keep_speed=np.array([o.keep_timed_speed for o in objects], dtype=bool),
        )
        first_sample = self.tables.sample_first[self.tables.seg_first]
        self.progress = Progress.start(m, first_sample, self.scripts.target_point >= 0)
        self._want = np.zeros(m)
        self._fresh = np.zeros(m, dtype=bool)

    def lifecycle(
        self, frame: int, dt: float, ego_slot: int, st: WorldState, salt: UIntArray
    ) -> IntArray:
        """Creates and deletes objects as the ego stands at ``frame``; writes their slots
        of ``st`` (a created object stands at the start of its path, on the lane under it
        as the guess for localisation).

        Returns:
            The slots of the objects created.
        """
        if not self.objects:
            return np.zeros(0, dtype=np.int64)
        self._run(frame, dt, ego_slot, st, salt, lifecycle=True)
        return self.scripts.slot[self._fresh]

    def move(
        self, frame: int, dt: float, ego_slot: int, st: WorldState, salt: UIntArray
    ) -> IntArray:
        """Moves the live objects over one tick of ``dt`` from ``frame``; writes their pose,
        speed, acceleration and yaw rate, and the lane under the path as the guess for
        localisation (uid -1, road -1, s and t NaN where the path is on no lane).

        Returns:
            The slots of the objects alive after the move.
        """
        if not self.objects:
            return np.zeros(0, dtype=np.int64)
        self._run(frame, dt, ego_slot, st, salt, lifecycle=False)
        alive: IntArray = self.scripts.slot[self.progress.status == ALIVE]
        return alive

    def _run(
        self, frame: int, dt: float, ego: int, st: WorldState, salt: UIntArray, *, lifecycle: bool
    ) -> None:
        _tick(
            self.tables, self.scripts, self.progress, self._want, self._fresh, frame, dt,
            ego, lifecycle, self.lanes, self._arc, self._route, salt, st.id, st.active,
            st.x, st.y, st.z, st.heading, st.speed, st.accel, st.yaw_rate, st.road, st.uid,
            st.s, st.t,
        )  # fmt: skip


def _along_controllers(controls: Controls, paths: list[PathGeometry]) -> FloatArray:
    """Per object controlled by another scripted object: the distance along the
    controller's path of the path's point nearest the controller's target (NaN else)."""
    out = np.full(controls.object.size, np.nan)
    for i in np.flatnonzero(controls.object >= 0):
        path = paths[int(controls.object[i])]
        d = np.linspace(0.0, path.length, max(2, int(np.ceil(path.length / 0.05)) + 1))
        x, y, _ = path.pose_at(d)
        gap = np.hypot(x - controls.target_x[i], y - controls.target_y[i])
        out[i] = d[int(np.argmin(gap))]
    return out


def _concatenate(paths: list[PathGeometry]) -> PathTables:
    """One set of flat arrays for all paths."""
    if not paths:
        none_i, none_f = np.zeros(0, dtype=np.int64), np.zeros(0)
        return PathTables(
            none_i, none_i, none_i, none_f, none_f, none_f, np.zeros((0, 8)),
            np.zeros(1, dtype=np.int64), none_f, none_f, none_f, none_i, none_f,
        )  # fmt: skip
    n_points = np.array([p.points.shape[0] for p in paths], dtype=np.int64)
    n_samples = np.array([p.sample_dist.size for p in paths], dtype=np.int64)
    point_first = np.concatenate(([0], np.cumsum(n_points)[:-1])).astype(np.int64)
    seg_first = np.concatenate(([0], np.cumsum(n_points - 1)[:-1])).astype(np.int64)
    sample_offset = np.concatenate(([0], np.cumsum(n_samples)[:-1])).astype(np.int64)
    sample_first = np.concatenate(
        [p.sample_first[:-1] + off for p, off in zip(paths, sample_offset, strict=True)]
        + [np.array([int(n_samples.sum())])]
    ).astype(np.int64)
    return PathTables(
        point_first=point_first,
        n_points=n_points,
        seg_first=seg_first,
        knots=np.concatenate([p.knots for p in paths]),
        speeds=np.concatenate([p.speeds for p in paths]),
        waits=np.concatenate([p.waits for p in paths]),
        segments=np.ascontiguousarray(np.concatenate([p.segments for p in paths])),
        sample_first=sample_first,
        sample_dist=np.concatenate([p.sample_dist for p in paths]),
        sample_u=np.concatenate([p.sample_u for p in paths]),
        sample_z=np.concatenate([p.sample_z for p in paths]),
        sample_uid=np.concatenate([p.sample_uid for p in paths]),
        sample_s=np.concatenate([p.sample_s for p in paths]),
    )


# -- the compiled tick -------------------------------------------------------------------------------


@njit_leaf
def _sync_speed(
    tb: PathTables, sc: Scripts, pr: Progress, i: int, la: LaneArrays, arc: FloatArray,
    route: RouteCache, salt: UIntArray, ident: IntArray, active: BoolArray, x: FloatArray,
    y: FloatArray, heading: FloatArray, speed: FloatArray, uid: IntArray, s: FloatArray,
) -> float:  # fmt: skip
    """The speed that brings dependent object ``i`` to its target point when its
    controller reaches its target (0 if the controller is not getting there), at most
    its ``max_speed``."""
    c = sc.controller[i]
    if c < 0 or not active[c] or ident[c] != sc.controller_id[i] or speed[c] <= 0.0:
        return 0.0
    o = sc.controller_object[i]
    to_go = math.nan
    if o >= 0:  # a scripted object: along its own path
        to_go = sc.target_along[i] - pr.distance[o]
    elif uid[c] >= 0 and sc.target_section[i] >= 0:  # a vehicle on a lane: along its route
        to_go = route_left(
            la, arc, route, i, salt[c], uid[c], s[c], heading[c], sc.target_section[i],
            sc.target_s[i],
        )  # fmt: skip
    if math.isnan(to_go):
        to_go = straight_ahead(x[c], y[c], heading[c], sc.target_x[i], sc.target_y[i])
    if to_go <= 0.0:
        return 0.0
    left = tb.knots[tb.point_first[i] + sc.target_point[i]] - pr.distance[i]
    return float(min(max(left, 0.0) * speed[c] / to_go, sc.max_speed[i]))


@njit_leaf
def _point_speed(tb: PathTables, sc: Scripts, pr: Progress, i: int, j: int) -> float:
    """The speed of object ``i`` at its control point ``j``: the point's, or at its target
    point the speed it kept through it (``keep_timed_speed``)."""
    if j == sc.target_point[i] and not math.isnan(pr.exit_speed[i]):
        return float(pr.exit_speed[i])
    return float(tb.speeds[tb.point_first[i] + j])


@njit_loop
def _tick(
    tb: PathTables,
    sc: Scripts,
    pr: Progress,
    want: FloatArray,
    fresh: BoolArray,
    frame: int,
    dt: float,
    ego: int,
    lifecycle: bool,
    la: LaneArrays,
    arc: FloatArray,
    route: RouteCache,
    salt: UIntArray,
    ident: IntArray,
    active: BoolArray,
    x: FloatArray,
    y: FloatArray,
    z: FloatArray,
    heading: FloatArray,
    speed: FloatArray,
    accel: FloatArray,
    yaw_rate: FloatArray,
    road: IntArray,
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
) -> None:
    if lifecycle:
        for i in range(sc.slot.shape[0]):
            fresh[i] = _lifecycle(tb, sc, pr, i, frame, dt, ego, la, arc, route, salt, ident,
                                  active, x, y, z, heading, speed, accel, yaw_rate, road, uid,
                                  s, t)  # fmt: skip
        return
    # The speeds dependent objects want, from their controllers as the tick starts (a
    # controller may itself be a scripted object that moves below).
    for i in range(sc.slot.shape[0]):
        if pr.status[i] == ALIVE and pr.synced[i]:
            want[i] = _sync_speed(tb, sc, pr, i, la, arc, route, salt, ident, active, x, y,
                                  heading, speed, uid, s)  # fmt: skip
    for i in range(sc.slot.shape[0]):
        if pr.status[i] != ALIVE:
            continue
        k = sc.slot[i]
        first = tb.point_first[i]
        # -- motion ---------------------------------------------------------------------------------
        before = speed[k]
        last = tb.n_points[i] - 1
        length = tb.knots[first + last]
        tau = dt
        v = before
        if pr.synced[i]:
            target = sc.target_point[i]
            v = min(max(want[i], before - sc.max_decel[i] * dt), before + sc.max_accel[i] * dt)
            v = max(v, 0.0)
            left = tb.knots[first + target] - pr.distance[i]
            if v * tau >= left:  # reaches the target point within this tick
                tau -= left / v if v > 0.0 else tau
                pr.distance[i] = tb.knots[first + target]
                pr.segment[i] = min(target, last - 1)
                pr.synced[i] = False
                pr.wait_left[i] = tb.waits[first + target] if target < last else 0.0
                if sc.keep_speed[i]:
                    pr.exit_speed[i] = v
            else:
                pr.distance[i] += v * tau
                tau = 0.0
                while (
                    pr.segment[i] < last - 1
                    and pr.distance[i] >= tb.knots[first + pr.segment[i] + 1]
                ):
                    pr.segment[i] += 1
        if not pr.synced[i]:
            while tau > 0.0:
                if pr.wait_left[i] > 0.0:
                    w = min(pr.wait_left[i], tau)
                    pr.wait_left[i] -= w
                    tau -= w
                    continue
                j = pr.segment[i]
                if pr.distance[i] >= length:
                    break
                v0, v1 = _point_speed(tb, sc, pr, i, j), tb.speeds[first + j + 1]
                start = tb.knots[first + j]
                seg_len = tb.knots[first + j + 1] - start
                into = pr.distance[i] - start
                t_end = time_to_end(v0, v1, seg_len, into)
                if t_end <= tau:  # on to the next control point
                    tau -= t_end
                    pr.distance[i] = tb.knots[first + j + 1]
                    if j + 1 < last:
                        pr.segment[i] = j + 1
                        pr.wait_left[i] = tb.waits[first + j + 1]
                else:
                    pr.distance[i] = start + advance(v0, v1, seg_len, into, tau)
                    tau = 0.0
            j = pr.segment[i]
            start = tb.knots[first + j]
            v = segment_speed(
                _point_speed(tb, sc, pr, i, j),
                tb.speeds[first + j + 1],
                tb.knots[first + j + 1] - start,
                pr.distance[i] - start,
            )
            if pr.wait_left[i] > 0.0:
                v = 0.0
        if pr.distance[i] >= length and not pr.synced[i]:
            v = 0.0
            if sc.delete_at_end[i]:
                pr.status[i] = DONE
                active[k] = False
                _off_lanes(k, road, uid, s, t)
                continue
        old_heading = heading[k]
        speed[k] = v
        accel[k] = (v - before) / dt
        _place(tb, pr, i, k, x, y, z, heading, road, uid, s, t)
        turn = heading[k] - old_heading
        turn = (turn + math.pi) % (2.0 * math.pi) - math.pi
        yaw_rate[k] = turn / dt


@njit_leaf
def _lifecycle(
    tb: PathTables, sc: Scripts, pr: Progress, i: int, frame: int, dt: float, ego: int,
    la: LaneArrays, arc: FloatArray, route: RouteCache, salt: UIntArray, ident: IntArray,
    active: BoolArray, x: FloatArray, y: FloatArray, z: FloatArray, heading: FloatArray,
    speed: FloatArray, accel: FloatArray, yaw_rate: FloatArray, road: IntArray,
    uid: IntArray, s: FloatArray, t: FloatArray,
) -> bool:  # fmt: skip
    """Creates or deletes object ``i`` as the ego stands at ``frame``; true if created."""
    k = sc.slot[i]
    first = tb.point_first[i]
    if pr.status[i] == ALIVE:
        gone = False
        if sc.lifetime[i] > 0.0 and (frame - pr.created[i]) * dt >= sc.lifetime[i] - _EPS:
            pr.status[i] = DONE
            gone = True
        elif sc.radius[i] > 0.0 and (
            ego < 0 or math.hypot(x[k] - x[ego], y[k] - y[ego]) > sc.radius[i]
        ):
            pr.status[i] = PENDING
            pr.inside_since[i] = -1
            gone = True
        if gone:
            active[k] = False
            _off_lanes(k, road, uid, s, t)
            return False
    if pr.status[i] == DONE:
        return False
    if pr.status[i] == PENDING:
        inside = sc.radius[i] == 0.0 or (
            ego >= 0
            and math.hypot(
                tb.segments[tb.seg_first[i], 0] - x[ego], tb.segments[tb.seg_first[i], 1] - y[ego]
            )
            <= sc.radius[i]
        )
        if not inside:
            pr.inside_since[i] = -1
            return False
        if pr.inside_since[i] < 0:
            pr.inside_since[i] = frame
        if (frame - pr.inside_since[i]) * dt < sc.delay[i] - _EPS:
            return False
        # Created: at the start of its path, at the time of `frame`.
        pr.status[i] = ALIVE
        pr.created[i] = frame
        pr.distance[i] = 0.0
        pr.segment[i] = 0
        pr.cursor[i] = tb.sample_first[tb.seg_first[i]]
        pr.wait_left[i] = tb.waits[first]
        pr.synced[i] = sc.target_point[i] >= 0
        pr.exit_speed[i] = np.nan
        active[k] = True
        v = tb.speeds[first]
        if pr.synced[i]:
            v = _sync_speed(tb, sc, pr, i, la, arc, route, salt, ident, active, x, y, heading,
                            speed, uid, s)  # fmt: skip
        speed[k] = v
        accel[k] = 0.0
        yaw_rate[k] = 0.0
        _place(tb, pr, i, k, x, y, z, heading, road, uid, s, t)
        return True
    return False


@njit_leaf
def _place(
    tb: PathTables, pr: Progress, i: int, k: int, x: FloatArray, y: FloatArray,
    z: FloatArray, heading: FloatArray, road: IntArray, uid: IntArray, s: FloatArray,
    t: FloatArray,
) -> None:  # fmt: skip
    """Puts object ``i`` (slot ``k``) at its distance along its path, with the lane under
    the path there as the guess for localisation."""
    g = tb.seg_first[i] + pr.segment[i]
    lo, hi = tb.sample_first[g], tb.sample_first[g + 1] - 1
    d = pr.distance[i]
    j, u = locate(tb.sample_dist, tb.sample_u, lo, hi, pr.cursor[i], d)
    pr.cursor[i] = j
    px, py, dx, dy = hermite(tb.segments[g], u)
    x[k], y[k] = px, py
    if dx != 0.0 or dy != 0.0:
        heading[k] = math.atan2(dy, dx)
    span = tb.sample_dist[j + 1] - tb.sample_dist[j]
    f = (d - tb.sample_dist[j]) / span if span > 0.0 else 0.0
    f = min(max(f, 0.0), 1.0)
    near = j if f < 0.5 else j + 1
    if (tb.sample_uid[j] < 0) == (tb.sample_uid[j + 1] < 0):
        z[k] = tb.sample_z[j] + f * (tb.sample_z[j + 1] - tb.sample_z[j])
    else:  # at the edge of a gap: the surface steps, it does not slope
        z[k] = tb.sample_z[near]
    if tb.sample_uid[near] < 0:  # near the edge of a road the other sample may have it
        near = j + 1 if near == j else j
    if tb.sample_uid[near] < 0:
        _off_lanes(k, road, uid, s, t)
    else:
        uid[k] = tb.sample_uid[near]
        s[k] = tb.sample_s[near]


@njit_leaf
def _off_lanes(k: int, road: IntArray, uid: IntArray, s: FloatArray, t: FloatArray) -> None:
    road[k] = -1
    uid[k] = -1
    s[k] = np.nan
    t[k] = np.nan
