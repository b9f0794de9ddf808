"""The traffic model's per-vehicle passes, compiled (see `roadsim.agents.traffic`).

A tick of the autopilot is `prepare` (lane-change targets, and what each vehicle needs to
see), the driver sensor (`roadsim.sensors.driver_kernels.observe`: leaders, neighbours,
lights and the end of the lane), `perceive` (the route ahead and the standing obstacles,
from the sensor's results), the junction gate (`roadsim.agents.junctions`, the only pass
where vehicles wait on each other) and `decide` (IDM, MOBIL and the wheel angle), then
`commit_changes`, which lets the lane changes chosen start. Each loops over the vehicles
once; the constants and the reasons for them are in
`roadsim.agents.traffic`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from roadsim._jit import (
    PREFETCH_AHEAD,
    chunk,
    njit,
    njit_leaf,
    njit_loop,
    njit_rows,
    prefetch,
)
from roadsim._types import BoolArray, FloatArray, IntArray, UIntArray
from roadsim.agents.idm import idm_accel_one
from roadsim.agents.junctions import SETBACK, SWEEP_LENGTH, SWEEP_WHEELBASE, next_entry
from roadsim.sensors.driver_kernels import (
    EGO,
    FRONT,
    FRONT_LEFT,
    FRONT_RIGHT,
    LEFT,
    REAR,
    REAR_LEFT,
    REAR_RIGHT,
    RIGHT,
    WANT_END,
    WANT_FRONT,
    WANT_LIGHTS,
    WANT_SIDES,
    Actors,
    Out,
    Tables,
    lights_fit,
    partial_row,
    prefetch_row,
    start_chunk,
)
from roadsim.sensors.occupancy import LaneOccupancy
from roadsim.world.codes import (
    ENVELOPE_DECEL,
    LANE_DROP,
    LONG_MIN_RADIUS,
    LONG_VEHICLE,
    RED,
    YELLOW,
)
from roadsim.world.lane_kernels import (
    LaneArrays,
    bounds,
    centre,
    choose_next,
    curve_speed_sq,
    prefetch_ahead,
    prefetch_lane,
    progress,
    signed_curvature,
    wrap,
)

HOPS = 3  # lane records of the route ahead the junction gate and the speed envelope read
TRACK_MIN = 4.0  # m, lane keeping: distance over which an error is corrected, at least
TRACK_TIME = 0.8  # s of driving over which an error is corrected
TRACK_PREVIEW = 0.15  # s ahead where the lane's curvature is read
TRACK_MAX_ERROR = 1.2  # m, the lateral error the lane keeping acts on, at most
TRACK_AWAY_MAX = 0.6  # m a vehicle keeps away in junction turns and tight bends, at most
#: m^2: on a bend of curvature k outside junctions, every vehicle keeps away from oncoming
#: traffic by k times this (as far as its lane and a shoulder beside it let it): the swing
#: toward the road's middle of the front of the longest vehicle (`SWEEP_LENGTH`,
#: `SWEEP_WHEELBASE`) whose centre follows an inner lane's centre line, so that it and
#: what meets it make room for each other.
LONG_SWING = 0.5 * SWEEP_LENGTH * (0.5 * SWEEP_LENGTH + SWEEP_WHEELBASE) * 0.5
EDGE_MARGIN = 0.1  # m a vehicle keeping away on a bend stays from the edge of its room
ENVELOPE_CATCH_UP = 1.0  # s in which a vehicle above the curves' braking curve gets back on it
SAFE_DECEL = 4.0  # m/s^2 MOBIL safety criterion
CHANGE_THRESHOLD = 0.2  # m/s^2 MOBIL incentive threshold
KEEP_RIGHT_BIAS = 0.3  # m/s^2
CHANGE_COOLDOWN = 4.0  # s between two lane changes of one vehicle
NO_CHANGE_BEFORE_END = 25.0  # m: no voluntary change this close to the end of a lane record
FORCED_RANGE = 200.0  # m before a lane drop where vehicles must change lanes
FORCED_BONUS = 10.0  # m/s^2 added to the incentive of a forced change
MERGE_RANGE = 60.0  # m before the end of a dropping lane where a vehicle asks to merge
DECIDE_EVERY = 4  # ticks between two lane-change decisions of one vehicle
WIDTH_MARGIN = 0.5  # m a lane must be wider than a vehicle changing into it
ABORT_GAP = 1.0  # m: a change is given up when the gap ahead in the target lane is smaller
#: s a vehicle that must merge, standing beside one in the lane it merges into, stops
#: asking to merge (`_prepare_rows`), so that the other, which stopped for it, drives on.
YIELD_TIME = 3.0

_INF = np.inf


class TrafficActors(NamedTuple):
    """What the traffic model reads of every actor, by slot (`roadsim.world.state`)."""

    id: IntArray
    active: BoolArray
    uid: IntArray
    s: FloatArray
    t: FloatArray
    x: FloatArray
    y: FloatArray
    heading: FloatArray
    speed: FloatArray
    slip: FloatArray
    half_length: FloatArray
    width: FloatArray


# The columns of `Drivers.idm`.
MAX_ACCEL, COMFORT_DECEL, TIME_HEADWAY, MIN_GAP = range(4)


class Drivers(NamedTuple):
    """Per-slot behaviour of the vehicles (IDM parameters, desired-speed factor, route
    salt, wheelbase, steering lag in seconds, steering rate in rad/s).

    ``idm`` is one C-contiguous table of shape (C, 4), a row per slot, its columns
    `MAX_ACCEL`, `COMFORT_DECEL`, `TIME_HEADWAY` and `MIN_GAP`: one vehicle's four
    numbers share a cache line, and the kernels see the same array type for every
    scenario, so they compile once (a column of a table is a strided array to numba,
    unless the table has one row, when it is a contiguous one)."""

    idm: FloatArray
    speed_factor: FloatArray
    salt: UIntArray
    wheelbase: FloatArray
    steer_lag: FloatArray
    steer_rate: FloatArray


class Perceived(NamedTuple):
    """What `perceive` finds for each vehicle, by row (allocate with `Perceived.empty`).

    Attributes:
        gap, lead_v: Gap to (m) and speed of the vehicle ahead (inf, 0: nobody).
        lanes: The vehicle's lane and the next `HOPS` lanes of its route, shape
            (N, 1 + HOPS), -1 past its end.
        start: Distance from the front bumper to the start of each of ``lanes`` (m).
        obstacle: Gap to the nearest red or yellow stop line or lane drop (inf: none).
        entry_hop, wants_in: The next junction entry (an index into ``lanes``, 0: none)
            and whether the vehicle asks to enter it
            (`roadsim.agents.junctions.next_entry`).
    """

    gap: FloatArray
    lead_v: FloatArray
    lanes: IntArray
    start: FloatArray
    obstacle: FloatArray
    entry_hop: IntArray
    wants_in: BoolArray

    @classmethod
    def empty(cls, n: int) -> Perceived:
        return cls(
            np.empty(n), np.empty(n), np.empty((n, 1 + HOPS), dtype=np.int64),
            np.empty((n, 1 + HOPS)), np.empty(n), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.bool_),
        )  # fmt: skip


class Routes(NamedTuple):
    """The next `HOPS` lanes of each vehicle's route, by slot, kept from tick to tick
    (allocate with `Routes.empty`). A route is a function of the lane it starts from and
    the vehicle's route salt alone, so an entry is used while both match and made anew
    otherwise: it changes when its vehicle moves on to another lane, and walking it every
    tick cost a cache miss or two a vehicle (the lanes after the next one lie anywhere in
    the tables).

    Attributes:
        lane: The lane the route starts from (-1: no entry).
        salt: The route salt it was made with.
        hop: The next `HOPS` lanes (-1 past the route's end), shape (C, HOPS).
        length: Their lengths (m; inf for -1), shape (C, HOPS).
    """

    lane: IntArray
    salt: UIntArray
    hop: IntArray
    length: FloatArray

    @classmethod
    def empty(cls, capacity: int) -> Routes:
        return cls(
            np.full(capacity, -1, dtype=np.int64), np.zeros(capacity, dtype=np.uint64),
            np.full((capacity, HOPS), -1, dtype=np.int64), np.full((capacity, HOPS), np.inf),
        )  # fmt: skip


@njit_leaf
def route_of(la: LaneArrays, routes: Routes, k: int, u: int, salt: np.uint64) -> None:
    """Makes sure ``routes`` holds the route of the vehicle in slot k from lane u."""
    if routes.lane[k] == u and routes.salt[k] == salt:
        return
    _fill_route(la, salt, u, routes.hop[k])
    for h in range(HOPS):
        x = routes.hop[k, h]
        routes.length[k, h] = la.length[x] if x >= 0 else _INF
    routes.lane[k], routes.salt[k] = u, salt


# -- prepare ---------------------------------------------------------------------------------------


@njit_leaf
def carry_target(la: LaneArrays, target: int, uid: int, salt: np.uint64) -> int:
    """The lane-change target in the vehicle's current lane section: a vehicle that passed
    into the next section mid-change goes on into the target's successor; a finished
    change, or a target that ends, becomes the vehicle's own lane."""
    if target >= 0 and la.section[target] != la.section[uid]:
        target = choose_next(la, salt, target)
    if target >= 0 and la.section[target] == la.section[uid] and target != uid:
        return target
    return uid


@njit_loop
def _prepare_rows(
    la: LaneArrays,
    heading: FloatArray,
    actors: TrafficActors,
    drivers: Drivers,
    me: IntArray,
    target_uid: IntArray,
    merge_into: IntArray,
    change_timer: FloatArray,
    tick: int,
    dt: float,
    p: FloatArray,
    target: IntArray,
    extra_lane: IntArray,
    may_change: BoolArray,
    want: IntArray,
    light_ahead: FloatArray,
    visibility: float,
    visit: IntArray,
    envelope_sq: FloatArray,
    curvature: FloatArray,
    c: int,
    chunks: int,
) -> None:
    """What each vehicle ``me`` is about to do, and so needs to see (outputs by row,
    written in place; rows visited in the order ``visit``, chunk c of ``chunks`` of it,
    see `roadsim._jit.njit_rows`).

    Progress ``p``, lane-change ``target``, and the lane the vehicle signals it moves into
    (``extra_lane``, -1: none): the target of a change, or, within `MERGE_RANGE` of a drop
    (``drop_at``), the lane it merges into (a zipper), unless it yields for now (its
    timer runs, see `_mobil`). Whether it may consider a lane change this
    tick (``may_change``; the lane-change timers, by slot, are counted down here) and so
    ``want`` (the driver sensor's flags): the vehicle ahead always; the lights where a
    stop line lies within ``visibility`` (``light_ahead``: per lane, the distance from its
    start to the nearest stop line on it or after it); the end of the lane where a lane
    drop does; the neighbour lanes when it changes or may change into one.

    While each vehicle's lane samples are at hand, it also reads the squared speed
    envelope of its lane at p (``envelope_sq``, for `decide`) and the lane-keeping
    curvature toward ``target`` (``curvature``, for `decide`'s wheel angle, `_steer`, which
    recomputes it only for vehicles whose target changes later in the tick).
    """
    order = chunk(visit, c, chunks)
    n = order.shape[0]
    for j in range(n):
        prefetch_ahead(la, actors.uid, actors.s, me, order, j, 4)  # `_track` looks ahead
        if j + 2 * PREFETCH_AHEAD < n:  # and what prepare reads beside the lane tables
            ahead = me[order[j + 2 * PREFETCH_AHEAD]]
            u = actors.uid[ahead]
            prefetch(light_ahead, u)
            prefetch(merge_into, u)
            prefetch(heading, u)
            if target_uid[ahead] != u:
                prefetch_lane(la, target_uid[ahead])
        if j + PREFETCH_AHEAD < n:  # the neighbours of one that may consider a change
            ahead = me[order[j + PREFETCH_AHEAD]]
            u = actors.uid[ahead]
            if u >= 0 and actors.id[ahead] % DECIDE_EVERY == tick % DECIDE_EVERY:
                prefetch_lane(la, la.left_uid[u])
                prefetch_lane(la, la.right_uid[u])
        i = order[j]
        k = me[i]
        u = actors.uid[k]
        p[i] = progress(la, u, actors.s[k])
        target[i] = carry_target(la, target_uid[k], u, drivers.salt[k])
        extra_lane[i] = -1
        if target[i] != u:
            extra_lane[i] = target[i]
        elif la.drop_at[u] - p[i] < MERGE_RANGE and merge_into[u] >= 0 and change_timer[k] <= 0.0:
            extra_lane[i] = merge_into[u]
        envelope_sq[i] = curve_speed_sq(la, u, p[i])
        curvature[i] = _track(la, heading, target[i], p[i], actors, drivers, k)
        change_timer[k] = max(change_timer[k] - dt, 0.0)
        may_change[i] = _may_change(la, k, actors.id[k], u, p[i], target[i], change_timer, tick)
        w = WANT_FRONT
        if light_ahead[u] - p[i] <= visibility:
            w |= WANT_LIGHTS
        if la.drop_at[u] - p[i] <= visibility:
            w |= WANT_END
        if target[i] != u or (may_change[i] and _has_neighbour(la, u)):
            w |= WANT_SIDES
        want[i] = w


prepare = njit_rows(_prepare_rows)


@njit_leaf
def _changeable(la: LaneArrays, u: int, other: int) -> bool:
    """Whether traffic on lane u may change into lane ``other`` at all (a drivable lane
    of the same direction)."""
    return other >= 0 and la.drivable[other] != 0 and la.sign[other] == la.sign[u]


@njit_leaf
def _has_neighbour(la: LaneArrays, u: int) -> bool:
    """Whether lane u has a neighbour traffic may change into."""
    return _changeable(la, u, la.left_uid[u]) or _changeable(la, u, la.right_uid[u])


@njit_leaf
def _fill_route(la: LaneArrays, salt: np.uint64, u: int, row: IntArray) -> None:
    """Writes the lanes of the route after lane u into ``row`` (-1 past its end)."""
    cur = u
    for h in range(row.size):
        cur = choose_next(la, salt, cur)
        row[h] = cur


@njit
def routes(la: LaneArrays, uid: IntArray, salt: UIntArray, hops: int) -> IntArray:
    """The next ``hops`` lanes of the route from each lane ``uid`` (-1 past its end),
    shape (N, hops); ``salt`` by row."""
    out = np.empty((uid.size, hops), dtype=np.int64)
    for i in range(uid.size):
        _fill_route(la, salt[i], uid[i], out[i])
    return out


# -- what the driver sensor saw ------------------------------------------------------------------


class Seen(NamedTuple):
    """What traffic reads of the driver sensor's results
    (`roadsim.sensors.driver_kernels.Out`, by row; the same arrays, fewer of them to
    hand to each kernel)."""

    main_side: IntArray
    object_slot: IntArray
    object_lon: FloatArray
    lane_end: FloatArray
    lane_end_uid: IntArray
    light_start: IntArray
    light_count: IntArray
    light_signal: IntArray
    light_distance: FloatArray
    light_state: IntArray

    @classmethod
    def of(cls, out: Out) -> Seen:
        return cls(*(getattr(out, name) for name in cls._fields))


@njit_leaf
def own_lane(seen: Seen, i: int) -> int:
    """The sensor's lane index (LEFT, EGO, RIGHT) of the lane the vehicle's centre is on:
    the main lane, unless the vehicle's front is already over in a neighbour lane."""
    side = seen.main_side[i]
    return EGO if side == 0 else (RIGHT if side > 0 else LEFT)


@njit_leaf
def front_in(seen: Seen, speed: FloatArray, i: int, j: int) -> tuple[float, float, int]:
    """``(gap, speed, slot)`` of the object ahead in sensor lane j (inf, 0, -1: none)."""
    if j < 0 or j > 2:
        return _INF, 0.0, -1
    column = FRONT if j == EGO else (FRONT_LEFT if j == LEFT else FRONT_RIGHT)
    o = seen.object_slot[i, column]
    if o < 0:
        return _INF, 0.0, -1
    return float(seen.object_lon[i, column]), float(speed[o]), int(o)


@njit_leaf
def rear_in(seen: Seen, i: int, j: int) -> tuple[float, int]:
    """``(gap >= 0, slot)`` of the object behind in sensor lane j (inf, -1: none)."""
    if j < 0 or j > 2:
        return _INF, -1
    column = REAR if j == EGO else (REAR_LEFT if j == LEFT else REAR_RIGHT)
    o = seen.object_slot[i, column]
    if o < 0:
        return _INF, -1
    return float(-seen.object_lon[i, column]), int(o)


# -- perceive ---------------------------------------------------------------------------------------


@njit_loop
def _observe_perceive_rows(
    la: LaneArrays,
    tab: Tables,
    occ: LaneOccupancy,
    sensed: Actors,
    want: IntArray,
    visibility: FloatArray,
    shown: IntArray,
    view: Out,
    seen: Seen,
    actors: TrafficActors,
    drivers: Drivers,
    me: IntArray,
    p: FloatArray,
    target: IntArray,
    granted: BoolArray,
    boxed: BoolArray,
    setback: FloatArray,
    stops: IntArray,
    routes: Routes,
    out: Perceived,
    visit: IntArray,
    perceive_too: bool,
    c: int,
    chunks: int,
) -> None:
    """The driver sensor's pass over the vehicles ``me`` (`roadsim.sensors.driver_kernels`,
    rows that ask for less than everything: ``want`` below ``WANT_ALL``) with `perceive`
    in the same loop, each row perceived while what its sensor saw is at hand (``seen``:
    the arrays of ``view``), for chunk c of ``chunks`` of the order ``visit`` (the
    sensor's chunk c). Once the chunk's light lists have run out of room, its rows are
    only seen: the caller checks `roadsim.sensors.driver.out_fits` after the pass, and where they did not fit
    enlarges them and runs the pass again, from ``target`` as it was before (a row may
    have given up its change in it). Without ``perceive_too``, the sensor's pass alone
    (which then compiles no second time for traffic's other use)."""
    start_chunk(view, c)
    order = chunk(visit, c, chunks)
    for j in range(order.shape[0]):
        prefetch_row(la, occ, sensed, me, want, order, j)
        i = order[j]
        partial_row(la, tab, occ, sensed, me, want, visibility, shown, view, i, c)
        if perceive_too and lights_fit(view, c):
            perceive(
                la, seen, actors, drivers, me, p, target, granted, boxed, setback, stops,
                routes, out, i,
            )  # fmt: skip


observe_perceive = njit_rows(_observe_perceive_rows)


@njit_leaf
def perceive(
    la: LaneArrays,
    seen: Seen,
    actors: TrafficActors,
    drivers: Drivers,
    me: IntArray,
    p: FloatArray,
    target: IntArray,
    granted: BoolArray,
    boxed: BoolArray,
    setback: FloatArray,
    stops: IntArray,
    routes: Routes,
    out: Perceived,
    i: int,
) -> None:
    """The leader, the route ahead and the standing obstacles of the vehicle of row i,
    from what its driver sensor saw (``seen``, by row; ``stops``: 1 for each signal of
    the sensor's table that is a light traffic stops at), and the junction entry it
    asks for (``boxed``: the junction gate's lanes, `roadsim.agents.junctions`). The
    routes come from ``routes``, which keeps them (`route_of`). A light's stop line
    within the ``setback`` of a junction entry (`roadsim.agents.junctions.entry_setbacks`,
    by lane uid) is kept at the setback (`_short_of_sweep`).

    A vehicle changing lanes keeps the nearer of its two leaders, and gives the change up
    (``target`` becomes its own lane, in place) when its target lane has no room left.

    The results go to ``out`` (see `Perceived`).
    """
    gap, lead_v, lanes, start = out.gap, out.lead_v, out.lanes, out.start
    half_all, speed = actors.half_length, actors.speed
    k = me[i]
    u = actors.uid[k]
    route_of(la, routes, k, u, drivers.salt[k])
    lanes[i, 0] = u
    for h in range(HOPS):
        lanes[i, 1 + h] = routes.hop[k, h]
    own = own_lane(seen, i)
    g, lv, ahead = front_in(seen, speed, i, own)
    changing = target[i] != u
    if changing:
        toward = own - 1 if target[i] == la.left_uid[u] else own + 1
        g2, v2, _ = front_in(seen, speed, i, toward)
        if g2 < ABORT_GAP:  # no room left in the target lane: stay in the lane
            target[i] = u
            changing = False
        elif g2 < g:
            g, lv = g2, v2
    gap[i], lead_v[i] = g, lv
    ahead_goes = ahead >= 0 and (granted[ahead] or la.junction[max(actors.uid[ahead], 0)] >= 0)

    start[i, 0] = -p[i] - half_all[k]
    start[i, 1] = start[i, 0] + la.length[u]
    for h in range(2, 1 + HOPS):
        start[i, h] = start[i, h - 1] + routes.length[k, h - 2]
    v = speed[k]
    stop = v * v / (2.0 * drivers.idm[k, COMFORT_DECEL])
    nearest = _INF
    # Red lights of the main lane, and yellow ones where there is room to stop.
    first = seen.light_start[i, EGO]
    for e in range(first, first + seen.light_count[i, EGO]):
        if stops[seen.light_signal[e]] == 0:
            continue
        d, colour = seen.light_distance[e], seen.light_state[e]
        if colour == RED or (colour == YELLOW and d > stop):
            nearest = min(nearest, _short_of_sweep(la, setback, lanes, start, i, d, stop))
    # The end of a lane that drops (not for a vehicle already moving over into the next
    # lane: one whose front is past its lane's end could no longer move over at all).
    last = seen.lane_end_uid[i, EGO]
    if last >= 0 and la.end_kind[last] == LANE_DROP and not (changing and last == u):
        end = seen.lane_end[i, EGO] - (la.length[last] - la.usable[last])
        nearest = min(nearest, end)
    out.obstacle[i] = nearest
    out.entry_hop[i], out.wants_in[i] = next_entry(
        boxed, lanes, start, i, stop, g, ahead_goes, nearest
    )


@njit_leaf
def _short_of_sweep(
    la: LaneArrays,
    setback: FloatArray,
    lanes: IntArray,
    start: FloatArray,
    i: int,
    d: float,
    stop: float,
) -> float:
    """Where the vehicle of row i stops for a light whose stop line lies ``d`` ahead
    of its front bumper: at the line, or where the line lies within the setback of a
    junction entry that long vehicles sweep (``setback`` above `SETBACK`), at the
    setback, as it would wait for the junction there; unless it cannot stop there in
    comfort (``stop``, m) any more."""
    for h in range(lanes.shape[1]):
        lane = lanes[i, h]
        if lane < 0:
            break
        end = start[i, h] + la.length[lane]
        if d <= end + 1e-6:
            back = float(end - setback[lane])
            if setback[lane] > SETBACK and stop < back < d:
                return back
            return d
    return d


# -- decide -----------------------------------------------------------------------------------------


@njit_loop
def _decide_rows(
    la: LaneArrays,
    seen: Seen,
    actors: TrafficActors,
    drivers: Drivers,
    me: IntArray,
    p: FloatArray,
    target: IntArray,
    lanes: IntArray,
    start: FloatArray,
    gap: FloatArray,
    lead_v: FloatArray,
    obstacle: FloatArray,
    waits: FloatArray,
    envelope_sq: FloatArray,
    may_change: BoolArray,
    change_timer: FloatArray,
    through_lane: BoolArray,
    politeness: float,
    keep_right: bool,
    delta: float,
    accel: FloatArray,
    best: IntArray,
    heading: FloatArray,
    planned: IntArray,
    curvature: FloatArray,
    steer: FloatArray,
    visit: IntArray,
    c: int,
    chunks: int,
) -> None:
    """IDM and MOBIL for each vehicle (chunk c of ``chunks`` of the order ``visit``): writes the acceleration and the lane chosen
    (``best``, its ``target`` where it stays) by row, and the wheel angle that keeps
    it on its ``target`` (`_steer`; `commit_changes` steers anew the vehicles whose
    change it lets start).

    IDM drives toward the nearest of the leader, the standing ``obstacle`` and the
    junction gate's stop (``waits``) at the desired speed: the limit times the driver's
    factor, lowered for the curves ahead (the own lane's ``envelope_sq`` here, the next
    lanes' at their start, reached braking). MOBIL weighs the rows that ``may_change``
    with the neighbours their driver sensor saw (``seen``).
    """
    order = chunk(visit, c, chunks)
    n = order.shape[0]
    for j in range(n):
        if j + PREFETCH_AHEAD < n:  # the lane rows of the route of a vehicle some rows on
            ahead = order[j + PREFETCH_AHEAD]
            prefetch_lane(la, lanes[ahead, 0])
            for h in range(1, lanes.shape[1]):
                if lanes[ahead, h] >= 0:
                    prefetch(la.envelope_start, lanes[ahead, h])
        i = order[j]
        k = me[i]
        u = lanes[i, 0]
        g, lv = gap[i], lead_v[i]
        stand = min(obstacle[i], waits[i])
        if stand < g:
            g, lv = stand, 0.0
        v_sq = envelope_sq[i]
        half = actors.half_length[k]
        for h in range(1, lanes.shape[1]):
            lane = lanes[i, h]
            if lane >= 0:
                ahead = la.envelope_start[lane] + 2.0 * ENVELOPE_DECEL * (start[i, h] + half)
                v_sq = min(v_sq, ahead)
        v0 = min(la.speed_limit[u] * drivers.speed_factor[k], math.sqrt(v_sq))
        v = actors.speed[k]
        accel[i] = _idm(drivers, k, v, v0, g, lv, delta)
        if v * v > v_sq:
            # Above the braking curve to the curves ahead (IDM slows a vehicle of low
            # acceleration too gently toward a lower desired speed): brake onto it.
            over = v - math.sqrt(v_sq)
            accel[i] = min(accel[i], -(ENVELOPE_DECEL + over / ENVELOPE_CATCH_UP))
        best[i] = target[i]
        if may_change[i] and target[i] == u:
            best[i] = _mobil(
                la, seen, actors, drivers, i, k, u, p[i], v0, accel[i], target[i],
                through_lane, politeness, keep_right, delta, change_timer,
            )  # fmt: skip
        steer[i] = _steer(
            la, heading, actors, drivers, k, p[i], target[i], planned[i], curvature[i]
        )


decide = njit_rows(_decide_rows)


@njit_leaf
def _steer(
    la: LaneArrays,
    heading: FloatArray,
    actors: TrafficActors,
    drivers: Drivers,
    k: int,
    p: float,
    target: int,
    planned: int,
    curvature: float,
) -> float:
    """The front-wheel angle that keeps the vehicle in slot k (at progress p) on its
    ``target`` lane, from the ``curvature`` `prepare` found toward the ``planned``
    target (found anew where the target changed since)."""
    if target != planned:
        curvature = _track(la, heading, target, p, actors, drivers, k)
    # The wheel angle of the bicycle model that drives this curvature: the slip angle is
    # beta = asin(curvature * lr), and tan(wheel) = 2 tan(beta).
    return _wheel(curvature, drivers.wheelbase[k])


@njit_leaf
def _idm(
    drivers: Drivers, k: int, v: float, v0: float, gap: float, lv: float, delta: float
) -> float:
    return idm_accel_one(
        v, v0, gap, lv, drivers.idm[k, MAX_ACCEL], drivers.idm[k, COMFORT_DECEL],
        drivers.idm[k, TIME_HEADWAY], drivers.idm[k, MIN_GAP], delta,
    )  # fmt: skip


@njit_leaf
def _may_change(
    la: LaneArrays,
    k: int,
    actor_id: int,
    u: int,
    p: float,
    target: int,
    change_timer: FloatArray,
    tick: int,
) -> bool:
    """Whether the vehicle in slot k considers a lane change this tick. Drivers think
    about it a few times a second, not every tick (each actor id on one tick in
    `DECIDE_EVERY`; ids stay, slots may not), except before a lane drop, where they must."""
    if target != u or change_timer[k] > 0.0 or la.junction[u] >= 0:
        return False
    if la.drop_at[u] - p < FORCED_RANGE:
        return True
    return (
        la.length[u] - p > NO_CHANGE_BEFORE_END and actor_id % DECIDE_EVERY == tick % DECIDE_EVERY
    )


@njit_leaf
def _mobil(
    la: LaneArrays,
    seen: Seen,
    actors: TrafficActors,
    drivers: Drivers,
    i: int,
    k: int,
    u: int,
    p: float,
    v0: float,
    a_now: float,
    target: int,
    through_lane: BoolArray,
    politeness: float,
    keep_right: bool,
    delta: float,
    change_timer: FloatArray,
) -> int:
    """MOBIL (Kesting, Treiber, Helbing 2007): the lane the vehicle in slot k (row i of
    ``seen``) changes to (``target`` to stay). A vehicle that must merge but stands beside
    one in the lane it merges into stops asking for `YIELD_TIME` (``change_timer``)."""
    forced = la.drop_at[u] - p < FORCED_RANGE
    half = actors.half_length[k]
    v = actors.speed[k]
    best, best_gain = target, -_INF
    own = own_lane(seen, i)
    for right in (False, True):
        cand = la.right_uid[u] if right else la.left_uid[u]
        if not _changeable(la, u, cand):
            continue
        # A long vehicle keeps out of lanes closed to it (`roadsim.world.lane_info`).
        if la.tight[cand] == 2 and la.tight[u] < 2 and 2.0 * half >= LONG_VEHICLE:
            continue
        # Wide enough for the vehicle here and a little further on (with a margin for a
        # change it may do without: a truck must still leave a lane that drops for a
        # 3 m lane).
        wide = True
        margin = 0.0 if forced else WIDTH_MARGIN
        for ahead in (0.0, 15.0):
            lo, hi = bounds(la, cand, min(p + ahead, la.length[cand]))
            wide = wide and hi - lo >= actors.width[k] + margin
        # Room in the new lane: a voluntary change never goes into a lane about to drop.
        # (a forced change may go on into the lane after the one it changes into, which
        # often ends where the lane that drops does)
        room = 2.0 * half if forced else FORCED_RANGE + NO_CHANGE_BEFORE_END
        end = la.drop_at[cand]
        if not (forced and la.next_count[cand] > 0):
            end = min(la.usable[cand], end)
        if not wide or end - p <= room:
            continue
        # Entry, exit and ramp lanes are for traffic that needs them, not for overtaking.
        if not (forced or through_lane[cand]):
            continue
        # The neighbours the driver sensor saw in that lane.
        side = own + 1 if right else own - 1
        g_lead, v_lead, _ = front_in(seen, actors.speed, i, side)
        g_follow, follow = rear_in(seen, i, side)
        if forced and v < 0.5 and min(g_lead, g_follow) <= 0.0:  # (bodies alongside)
            change_timer[k] = YIELD_TIME
            continue
        a_new = _idm(drivers, k, v, v0, g_lead, v_lead, delta)
        safe = g_lead > 1.0 and g_follow > 1.0
        gain = a_new - a_now
        if follow >= 0:
            follow_v0 = la.speed_limit[cand] * drivers.speed_factor[follow]
            a_follow = _idm(drivers, follow, actors.speed[follow], follow_v0, g_follow, v, delta)
            safe = safe and a_follow > -SAFE_DECEL
            gain += politeness * min(a_follow, 0.0)
        if keep_right:
            gain += KEEP_RIGHT_BIAS if right else -KEEP_RIGHT_BIAS
        if forced:
            gain += FORCED_BONUS
        if safe and gain > CHANGE_THRESHOLD and gain > best_gain:
            best, best_gain = cand, gain
    return int(best)


@njit
def commit_changes(
    la: LaneArrays,
    heading: FloatArray,
    actors: TrafficActors,
    drivers: Drivers,
    me: IntArray,
    p: FloatArray,
    target: IntArray,
    best: IntArray,
    planned: IntArray,
    curvature: FloatArray,
    steer: FloatArray,
    change_timer: FloatArray,
    target_uid: IntArray,
) -> None:
    """Makes the lane changes `decide` chose (``best`` where it differs from ``target``,
    by row) the vehicles' targets, in place, steers those vehicles toward them
    (``steer``, see `_steer`), and keeps every row's target by slot in ``target_uid``;
    a vehicle that starts a change waits `CHANGE_COOLDOWN` seconds before the next
    (``change_timer``, by slot).

    Of two vehicles that would end up too close in the same lane, the rear one waits: the
    changes sorted by lane, front first (stably, as ``numpy.lexsort((-p, lane))``), each
    against the one before it."""
    half_length = actors.half_length
    rows = np.flatnonzero(best != target)
    front_first = rows[np.argsort(-p[rows], kind="mergesort")]
    rows = front_first[np.argsort(best[front_first], kind="mergesort")]
    count = rows.shape[0]
    keep = np.ones(count, dtype=np.bool_)
    for a in range(1, count):
        f, r = rows[a - 1], rows[a]
        clear = p[f] - p[r] - half_length[me[f]] - half_length[me[r]]
        if best[f] == best[r] and clear < 2.0 * ABORT_GAP + 2.0:
            keep[a] = False
    for a in range(count):
        if keep[a]:
            i = rows[a]
            target[i] = best[i]
            change_timer[me[i]] = CHANGE_COOLDOWN
            steer[i] = _steer(
                la, heading, actors, drivers, me[i], p[i], target[i], planned[i], curvature[i]
            )
    for i in range(me.shape[0]):
        target_uid[me[i]] = target[i]


@njit_leaf
def _room(la: LaneArrays, lane: int, p: float, width: float, own: float, away: float) -> float:
    """How far a vehicle ``own`` metres wide may keep from the centre of ``lane`` (at
    progress p, ``width`` wide there) toward lateral ``away`` (+1: its driver's left): to
    `EDGE_MARGIN` from the lane's edge, and over a lane beside it traffic does not drive
    on (a shoulder, a border), but never with its centre off its own lane."""
    room = 0.5 * (width - own) - EDGE_MARGIN
    side = la.left_uid[lane] if away > 0.0 else la.right_uid[lane]
    if side >= 0 and la.drivable[side] == 0:
        s = la.s0[lane] + p if la.sign[lane] >= 0.0 else la.s1[lane] - p
        lo, hi = bounds(la, side, progress(la, side, s))
        room += hi - lo
    return max(min(room, 0.5 * width - EDGE_MARGIN), 0.0)


@njit_leaf
def _track(
    la: LaneArrays,
    heading: FloatArray,
    lane: int,
    p: float,
    actors: TrafficActors,
    drivers: Drivers,
    k: int,
) -> float:
    """Path curvature that brings the vehicle in slot k (at progress p) onto the centre
    line of ``lane`` (kept away from oncoming traffic on bends): the lane's own
    curvature, read `TRACK_PREVIEW` plus the vehicle's steering lag seconds ahead (in
    the next lane of its route past the lane's end; the lag of the turn of the wheels
    the curvature there asks for), so that the wheels turn as the curve comes and not
    after it; plus a critically damped correction of the lateral
    and heading errors over `TRACK_TIME` seconds of driving (at least `TRACK_MIN`
    metres). The lateral error is capped at `TRACK_MAX_ERROR`, which paces lane
    changes. ``heading``: the lanes' `roadsim.world.lane_kernels.straight_headings`."""
    x, y, v = actors.x[k], actors.y[k], actors.speed[k]
    # The box centre moves at the slip angle to the body's heading.
    course = actors.heading[k] + actors.slip[k]
    xc, yc, cos_h, sin_h = centre(la, lane, p)
    lateral = -(x - xc) * sin_h + (y - yc) * cos_h
    # On a bend of radius R, a box whose centre follows the centre line sticks out to
    # the outside at its front by (L/2)^2 / 2R, and by (L/2) wheelbase / 2R more as its
    # body turns from its course by the slip angle: a 12 m truck on a 40 m bend, 0.9 m.
    # In the inner lane that is into the oncoming lane; in the outer lane the oncoming
    # fronts come toward the middle of the box. So on bends outside junctions every
    # vehicle keeps away from the road's middle (its reference line) by the swing of the
    # longest vehicle (`LONG_SWING`; its own, if longer), as far as its lane and a
    # shoulder beside it let it (`_room`): a long vehicle and what meets it both make
    # room. (Half of the vehicle's own swing, `TRACK_AWAY_MAX` at most, only once gave
    # 10 collisions a seed on Town07 with 30% trucks and buses.) In junction turns and
    # on bends tighter than `LONG_MIN_RADIUS`, half its own swing, at most
    # `TRACK_AWAY_MAX`.
    t_lo, t_hi = bounds(la, lane, p)
    away = la.sign[lane] if t_lo + t_hi > 0.0 else -la.sign[lane]  # as a lateral
    half = actors.half_length[k]
    bend = abs(signed_curvature(la, lane, p))
    # The bend here or a long vehicle's length on (where one coming the other way still
    # swings over while it leaves the bend), whichever is tighter.
    ahead = abs(signed_curvature(la, lane, min(p + SWEEP_LENGTH, la.length[lane])))
    if la.junction[lane] >= 0 or max(bend, ahead) * LONG_MIN_RADIUS > 1.0:
        # Junction lanes (their conflicts are those of their centre lines) and bends too
        # tight for long vehicles (on whose inside gaps along s are much longer than
        # the way round: moving further in, queues touched): half the own swing.
        keep = min(bend * half * (half + drivers.wheelbase[k]) * 0.25, TRACK_AWAY_MAX)
    else:
        swing = max(bend, ahead) * max(0.5 * half * (half + drivers.wheelbase[k]), LONG_SWING)
        keep = min(swing, _room(la, lane, p, t_hi - t_lo, actors.width[k], away))
    lateral -= away * keep
    hc = heading[lane]  # the same as below, without the library call
    if hc != hc:
        hc = math.atan2(sin_h, cos_h)
    lateral = min(max(lateral, -TRACK_MAX_ERROR), TRACK_MAX_ERROR)
    heading_error = wrap(course - hc)
    reach = max(TRACK_MIN, TRACK_TIME * v)
    feedback = lateral / reach**2 + 2.0 * heading_error / reach
    # The wheels lag by the time they take to turn half of the change the road ahead
    # asks for (at most the vehicle's lag, half the time to full lock): the full lag
    # on a gentle bend turned the wheels metres early and cut it by over half a metre.
    lag = drivers.steer_lag[k]
    far = _curvature_ahead(la, drivers, k, lane, p + (TRACK_PREVIEW + lag) * v)
    wheelbase = drivers.wheelbase[k]
    turn = abs(_wheel(far, wheelbase) - _wheel(signed_curvature(la, lane, p), wheelbase))
    lag = min(lag, 0.5 * turn / max(drivers.steer_rate[k], 1e-3))
    here = _curvature_ahead(la, drivers, k, lane, p + (TRACK_PREVIEW + lag) * v)
    return float(here - feedback)


@njit_leaf
def _curvature_ahead(la: LaneArrays, drivers: Drivers, k: int, lane: int, ahead: float) -> float:
    """The curvature of ``lane`` at progress ``ahead``, or past its end, of the next lane
    of the route of the vehicle in slot k."""
    read = lane
    if ahead > la.length[lane]:
        after = choose_next(la, drivers.salt[k], lane)
        if after >= 0:
            ahead, read = min(ahead - la.length[lane], la.length[after]), after
        else:
            ahead = la.length[lane]
    return float(signed_curvature(la, read, ahead))


@njit_leaf
def _wheel(curvature: float, wheelbase: float) -> float:
    """The front-wheel angle of the kinematic bicycle whose centre drives ``curvature``
    (as `roadsim.agents.dynamics.wheel_angle`)."""
    sin_beta = min(max(curvature * 0.5 * wheelbase, -0.99), 0.99)
    return math.atan(2.0 * sin_beta / math.sqrt(1.0 - sin_beta * sin_beta))
