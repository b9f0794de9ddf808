"""The driver sensor's pass over vehicles, compiled (see `roadsim.sensors.driver`).

For each vehicle, `observe` finds its main lane (the lane under the centre of its front
edge), reads its own state against that lane, the geometry of the main lane and its two
neighbours, walks each of the three lane streams ahead for the end of the lane, signs,
lights and lane markings, and searches the lane occupancy
(`roadsim.sensors.occupancy`) for the nearest object ahead and behind in each of them.

Lane streams. Ahead, a stream follows the lane's successors, taking at a fork the one the
vehicle's route takes (`roadsim.world.lane_kernels.choose_next`: a hash of the vehicle's
route salt and the lane); a neighbour lane driven the other way is followed the way the
driver is headed, through its predecessors. Behind, the search for the nearest object
explores every branch (a car may come from any of the roads that join), nearest first
wins, with at most `STACK` lanes pending. Where a drivable lane leads into no drivable
lane (it ends in a sidewalk, a shoulder), the searches go on into the lanes the map
links it to: an actor standing there may reach back into the lane.

The searches look for centres as far as the visibility distance, plus half the
vehicle's length, plus the longest reach of any actor this tick (`LaneOccupancy.far`):
the footprint of an actor whose centre lies further is out of sight.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from roadsim._jit import PREFETCH_AHEAD, chunk, njit_leaf, njit_loop, njit_rows, prefetch
from roadsim._types import BoolArray, FloatArray, IntArray, UIntArray
from roadsim.sensors.occupancy import LaneOccupancy, lower, upper
from roadsim.world.lane_kernels import (
    LaneArrays,
    bounds,
    choose_next,
    mix_hash,
    over_edge,
    pose,
    prefetch_ahead,
    prefetch_lane,
    progress,
    project,
    signed_curvature,
    wrap,
)
from roadsim.world.state import STATIC_OBJECT

# What a row of `observe` asks for (bit flags; geometry of the main lane is always read).
WANT_FRONT = 1  # the object ahead in the main lane
WANT_REAR = 2  # the object behind in the main lane
WANT_SIDES = 4  # the objects ahead and behind in the neighbour lanes
WANT_LIGHTS = 8  # the traffic lights of the main lane
WANT_END = 16  # the distance to the end of the main lane
WANT_ALL = 255  # everything: the whole view

MISSING = -999.0
STACK = 64  # lanes pending at most in a search behind
MAX_HOPS = 4  # lane records the front of a vehicle may be past its centre's
LEFT, EGO, RIGHT = 0, 1, 2
FRONT, REAR, FRONT_LEFT, REAR_LEFT, FRONT_RIGHT, REAR_RIGHT = range(6)
SIGNS, LIGHTS, MARKS = 0, 1, 2  # columns of `Out.cursor`
END = 3  # `Out.cursor`'s column END + kind: the end of the chunk's part for that kind

END_OK, SIG_PTR, MARK_HI, MARK_LO = range(4)  # columns of `Tables.lane_row`
MARK_S0, MARK_S1, MARK_TYPE, MARK_COLOR, MARK_WIDTH = range(5)  # columns of `Tables.mark`
_MIX_BACK = np.uint64(0xD6E8FEB86659FD93)
_INF = np.inf


class Tables(NamedTuple):
    """What the sensor knows of the map beyond the lane arrays (`roadsim.sensors.driver`).

    Attributes:
        succ_ptr, succ_idx, pred_ptr, pred_idx: The lane graph over lanes of every type
            (CSR by uid; the lane arrays keep only drivable lanes).
        lane_row: Per uid, one row of (``END_OK``: 1 for the lane types a lane stream
            goes on along, for the distance to the end of the lane; ``SIG_PTR``: the
            lane's first entry of the signal lists below; ``MARK_HI``, ``MARK_LO``: its
            first entries of the marking segments of its border at larger and at smaller
            t), shape (lanes + 1, 4): a stream's walk reads one row per lane, and the
            next row ends the lane's ranges.
        sig_idx, sig_pos: Per lane, the signals valid for it (indices into the signal
            table) and their position from the lane's entry in its driving direction (m),
            in that order.
        sig_light: 1 for a traffic light (a dynamic signal), per signal.
        sig_plan: Index of each signal in the light plan's states (-1: none).
        mark: The marking segments by lane and border, in increasing s, one row each of
            (``MARK_S0``, ``MARK_S1``: its s range, m; ``MARK_TYPE``, ``MARK_COLOR``: the
            type and colour codes; ``MARK_WIDTH``: m), shape (K, 5).
    """

    succ_ptr: IntArray
    succ_idx: IntArray
    pred_ptr: IntArray
    pred_idx: IntArray
    lane_row: IntArray
    sig_idx: IntArray
    sig_pos: FloatArray
    sig_light: IntArray
    sig_plan: IntArray
    mark: FloatArray


class Actors(NamedTuple):
    """What the sensor reads of every actor, by slot (`roadsim.world.state.WorldState`),
    and the steering ratio of each vehicle model (``model_ratio``, by model index)."""

    id: IntArray
    kind: IntArray
    uid: IntArray
    road: IntArray
    s: FloatArray
    t: FloatArray
    x: FloatArray
    y: FloatArray
    heading: FloatArray
    speed: FloatArray
    accel: FloatArray
    steer: FloatArray
    length: FloatArray
    width: FloatArray
    height: FloatArray
    collided: BoolArray
    model: IntArray
    model_ratio: FloatArray
    salt: UIntArray


class Out(NamedTuple):
    """`observe`'s results by row (allocate with `Out.empty`); see
    `roadsim.sensors.view.DriverViews` for the meanings.

    Beyond the view: ``main_uid`` and ``main_p`` (the main lane and the reference point's
    progress on it), ``main_side`` (0: the main lane is the lane of the vehicle's centre
    or its continuation; +1 / -1: the lane to its left / right), ``lane_end_uid`` (the
    last lane of each stream, -1 where it goes on beyond the visibility distance),
    ``object_slot`` (the object's actor slot, -1: none). A row's list is entries
    ``start[i, j]:start[i, j] + count[i, j]`` of the flat arrays. The rows are visited in
    chunks, one thread's share each (``cursor.shape[0]`` of them, a contiguous run of
    the visiting order each): chunk c writes its lists into its own equal part of each
    flat array, in the order it visits its rows, and ``cursor[c]`` counts on from the
    start of that part (column `SIGNS`, `LIGHTS` or `MARKS`; column `END` + kind holds
    where the part ends; the rows are padded to a cache line). A cursor may pass the
    end of its part, in which case the caller enlarges the flat arrays and runs again.
    ``stack_lane`` and ``stack_off`` are each chunk's scratch for the searches behind.

    A row that asks for less than everything (``want`` below `WANT_ALL`) gets its main
    lane (``main_uid``, ``main_p``, ``main_side``), the end and the lights of the main
    lane (column `EGO`; empty where not asked for), and the slot and the gap
    (``object_slot``, ``object_lon``) of the objects it asked for (and of the side
    lanes' whenever its front is over in a neighbour lane). Its other fields are not
    written and mean nothing: traffic reads no more, and at 10,000 vehicles writing the
    whole rows costs more than the searches.
    """

    visibility: FloatArray
    speed: FloatArray
    accel: FloatArray
    lateral: FloatArray
    heading: FloatArray
    steering: FloatArray
    boundary_left: FloatArray
    boundary_right: FloatArray
    collision: BoolArray
    main_uid: IntArray
    main_p: FloatArray
    main_side: IntArray
    lane_uid: IntArray
    lane_exists: BoolArray
    lane_curvature: FloatArray
    lane_width: FloatArray
    lane_end: FloatArray
    lane_end_uid: IntArray
    object_slot: IntArray
    object_id: IntArray
    object_static: BoolArray
    object_speed: FloatArray
    object_accel: FloatArray
    object_heading: FloatArray
    object_length: FloatArray
    object_width: FloatArray
    object_height: FloatArray
    object_lon: FloatArray
    object_lat: FloatArray
    sign_start: IntArray
    sign_count: IntArray
    sign_signal: IntArray
    sign_distance: FloatArray
    light_start: IntArray
    light_count: IntArray
    light_signal: IntArray
    light_distance: FloatArray
    light_state: IntArray
    mark_start: IntArray
    mark_count: IntArray
    mark_type: IntArray
    mark_color: IntArray
    mark_width: FloatArray
    mark_distance: FloatArray
    cursor: IntArray
    stack_lane: IntArray
    stack_off: FloatArray

    @classmethod
    def empty(cls, n: int, signs: int, lights: int, marks: int, chunks: int = 1) -> Out:
        def f(*shape: int) -> FloatArray:
            return np.full(shape, MISSING)

        def i(*shape: int) -> IntArray:
            return np.full(shape, -1, dtype=np.int64)

        def b(*shape: int) -> BoolArray:
            return np.zeros(shape, dtype=np.bool_)

        return cls(
            f(n), f(n), f(n), f(n), f(n), f(n), f(n), f(n), b(n), i(n), f(n), i(n),
            i(n, 3), b(n, 3), f(n, 3), f(n, 3), f(n, 3), i(n, 3),
            i(n, 6), i(n, 6), b(n, 6), f(n, 6), f(n, 6), f(n, 6), f(n, 6), f(n, 6), f(n, 6),
            f(n, 6), f(n, 6),
            i(n, 3), i(n, 3), i(signs), f(signs),
            i(n, 3), i(n, 3), i(lights), f(lights), i(lights),
            i(n, 4), i(n, 4), i(marks), i(marks), f(marks), f(marks),
            np.zeros((chunks, 8), dtype=np.int64), i(chunks, STACK), f(chunks, STACK),
        )  # fmt: skip


# -- lane streams ---------------------------------------------------------------------------------


@njit_leaf
def _pick(idx: IntArray, a: int, b: int, salt: np.uint64, u: int) -> int:
    count = b - a
    if count <= 0:
        return -1
    if count == 1:
        return int(idx[a])
    h = mix_hash(salt ^ (np.uint64(u) * _MIX_BACK))
    return int(idx[a + np.int64(h % np.uint64(count))])


@njit_leaf
def step_lane(
    la: LaneArrays, tab: Tables, salt: np.uint64, u: int, forward: bool | np.bool_
) -> int:
    """The next lane of a stream through ``u``: its successor on the route (``forward``)
    or a predecessor picked by the same salt (-1: none). Drivable lanes link to drivable
    lanes only, as traffic drives; other lanes follow the map's links."""
    if u < 0:
        return -1
    if la.drivable[u] != 0:
        if forward:
            return choose_next(la, salt, u)
        return _pick(la.prev_idx, la.prev_ptr[u], la.prev_ptr[u + 1], salt, u)
    if forward:
        return _pick(tab.succ_idx, tab.succ_ptr[u], tab.succ_ptr[u + 1], salt, u)
    return _pick(tab.pred_idx, tab.pred_ptr[u], tab.pred_ptr[u + 1], salt, u)


@njit_leaf
def _side(la: LaneArrays, u: int, left: bool) -> int:
    if u < 0:
        return -1
    return int(la.left_uid[u] if left else la.right_uid[u])


@njit_leaf
def main_lane(
    la: LaneArrays,
    tab: Tables,
    salt: np.uint64,
    u: int,
    pc: float,
    half: float,
    xf: float,
    yf: float,
) -> tuple[int, float, float, int]:
    """The lane containing the reference point (xf, yf) of a vehicle whose centre is at
    progress ``pc`` on lane ``u``: ``(lane, progress, lateral offset + left, side)``,
    side 0 for ``u``'s continuation along the route, +1 / -1 for its left / right
    neighbour. Where no lane contains the point, the continuation; so too where only a
    lane of the other direction does: the front of a truck turning tightly swings over
    the lane beside its exit, and that lane's red light (at the front, for traffic
    coming the other way) stopped it inside the junction."""
    x, p, hops = u, pc + half, 0
    while p > la.length[x] and hops < MAX_HOPS:
        nxt = step_lane(la, tab, salt, x, np.bool_(True))  # (np.bool_: see _objects)
        if nxt < 0:
            break
        p -= la.length[x]
        x = nxt
        hops += 1
    p, lat = project(la, x, p, xf, yf)
    lo, hi = bounds(la, x, p)
    if math.fabs(lat) > 0.5 * (hi - lo):
        cand, q2, lat2, lo2, hi2 = over_edge(la, x, p, lat, xf, yf)
        if cand >= 0 and math.fabs(lat2) <= 0.5 * (hi2 - lo2) and la.sign[cand] != -la.sign[x]:
            return cand, q2, lat2, 1 if lat > 0.0 else -1
    return int(x), p, lat, 0


# -- the occupancy --------------------------------------------------------------------------------


@njit_leaf
def _from(occ: LaneOccupancy, lane: int, k: int, up: bool, me: int) -> int:
    """The first entry of ``lane`` from index k on in the direction ``up`` (increasing
    progress) or down that is not actor ``me`` (-1: none)."""
    a, b = occ.ptr[lane], occ.ptr[lane + 1]
    while a <= k < b:
        if occ.slot[k] != me:
            return k
        k = k + 1 if up else k - 1
    return -1


@njit_leaf
def _onward(la: LaneArrays, tab: Tables, salt: np.uint64, u: int, forward: bool) -> int:
    """The next lane of a search's stream through ``u``: `step_lane`'s, or where a
    drivable lane leads into no drivable lane, one the map links it to (-1: none)."""
    nxt = step_lane(la, tab, salt, u, forward)
    if nxt >= 0 or u < 0 or la.drivable[u] == 0:
        return nxt
    if forward:
        return _pick(tab.succ_idx, tab.succ_ptr[u], tab.succ_ptr[u + 1], salt, u)
    return _pick(tab.pred_idx, tab.pred_ptr[u], tab.pred_ptr[u + 1], salt, u)


@njit_leaf
def _nearer(
    occ: LaneOccupancy, k: int, d: float, best: tuple[int, float, float, int, float], rec: int
) -> tuple[int, float, float, int, float]:
    """``best`` or entry k at centre distance d on lane ``rec``, whichever footprint
    comes nearer: ``(slot, centre distance, near end's distance, lane, progress)``."""
    o = int(occ.slot[k])
    near = d - occ.reach[o]
    if near < best[2]:
        return o, d, near, rec, float(occ.p[k])
    return best


@njit_leaf
def _scan(
    occ: LaneOccupancy,
    rec: int,
    k: int,
    up: bool,
    me: int,
    off: float,
    length: float,
    half: float,
    limit: float,
    best: tuple[int, float, float, int, float],
) -> tuple[int, float, float, int, float]:
    """`_nearer` over the entries of lane ``rec`` from index k on in the direction ``up``
    (increasing progress) or down, their centre distances ``off`` plus their progress
    (up) or the lane's ``length`` less it (down), as long as a footprint may still come
    nearer: no actor reaches further than ``occ.far`` from its centre.

    A vehicle signalling a change into the lane is passed over while it is level with
    the driver (their extents along the lane overlap; ``half``: the driver's half
    length): it is not in the lane yet, and it is for it to fall in ahead or behind."""
    k = _from(occ, rec, k, up, me)
    while k >= 0:
        p = occ.p[k]
        d = off + (p if up else length - p)
        if d > limit or d - occ.far >= best[2]:
            break
        if not (occ.signalling[k] and d - occ.reach[occ.slot[k]] < half):
            best = _nearer(occ, k, d, best, rec)
        k = _from(occ, rec, k + 1 if up else k - 1, up, me)
    return best


@njit_leaf
def search_ahead(
    la: LaneArrays,
    tab: Tables,
    occ: LaneOccupancy,
    me: int,
    salt: np.uint64,
    x: int,
    aligned: bool,
    q: float,
    half: float,
    limit: float,
) -> tuple[int, float, int, float]:
    """The entry ahead of progress q on lane ``x`` and its stream (``aligned``: the
    driver heads along ``x``'s driving direction) whose footprint comes nearest:
    ``(slot, centre distance, lane, progress)``; slot -1 where no centre lies within
    ``limit`` metres. The nearest centre need not be that entry: a car beside a truck
    (one changing lanes, one straddling two) may have its centre ahead of the truck's
    and its rear behind the truck's."""
    rec, first = x, True
    best = (-1, _INF, _INF, -1, 0.0)
    # Distance from the driver's centre to the record's end where the search enters it.
    off = -q if aligned else q - la.length[x]
    while rec >= 0 and off <= limit and off - occ.far < best[2]:
        if first:
            k = upper(occ, rec, q) if aligned else lower(occ, rec, q) - 1
        else:
            k = occ.ptr[rec] if aligned else occ.ptr[rec + 1] - 1
        best = _scan(occ, rec, k, aligned, me, off, la.length[rec], half, limit, best)
        off += la.length[rec]
        rec = _onward(la, tab, salt, rec, aligned)
        first = False
    return best[0], best[1], best[3], best[4]


@njit_leaf
def _push_row(
    ptr: IntArray, idx: IntArray, rec: int, off: float, top: int | np.int64, out: Out, c: int
) -> int:
    for e in range(ptr[rec], ptr[rec + 1]):
        if top < STACK:
            out.stack_lane[c, top] = idx[e]
            out.stack_off[c, top] = off
            top += 1
    return int(top)


@njit_leaf
def _push(
    la: LaneArrays,
    tab: Tables,
    rec: int,
    forward: bool,
    off: float,
    top: int | np.int64,
    out: Out,
    c: int,
) -> int:
    """Pushes every next lane of ``rec`` (successors or predecessors) at ``off`` on chunk
    c's stack, as far as it has room: for a drivable lane its drivable ones, or where it
    has none, the map's."""
    if la.drivable[rec] != 0:
        if forward and la.next_ptr[rec + 1] > la.next_ptr[rec]:
            return _push_row(la.next_ptr, la.next_idx, rec, off, top, out, c)
        if not forward and la.prev_ptr[rec + 1] > la.prev_ptr[rec]:
            return _push_row(la.prev_ptr, la.prev_idx, rec, off, top, out, c)
    if forward:
        return _push_row(tab.succ_ptr, tab.succ_idx, rec, off, top, out, c)
    return _push_row(tab.pred_ptr, tab.pred_idx, rec, off, top, out, c)


@njit_leaf
def search_behind(
    la: LaneArrays,
    tab: Tables,
    occ: LaneOccupancy,
    me: int,
    x: int,
    aligned: bool,
    q: float,
    half: float,
    limit: float,
    out: Out,
    c: int,
) -> tuple[int, float, int, float]:
    """The entry behind progress q on lane ``x`` (at q or behind it), over every branch
    of the lanes behind, whose footprint comes nearest (as `search_ahead`): ``(slot,
    centre distance >= 0, lane, progress)``; slot -1 where no centre lies within
    ``limit`` metres. Uses chunk c's stack."""
    up = not aligned  # the search runs toward increasing progress on x
    k = upper(occ, x, q) - 1 if aligned else lower(occ, x, q)
    # Centre distances on x are q - p (aligned: down from q) or p - q (up from q).
    length = la.length[x]
    best = _scan(occ, x, k, up, me, -q if up else q - length, length, half, limit,
                 (-1, _INF, _INF, -1, 0.0))  # fmt: skip
    # The lanes behind, while a footprint there may come nearer than the nearest yet.
    # (np.int64: a literal 0 would compile _push twice; see _objects.)
    beyond, top = length - q if up else q, 0
    if beyond <= limit and beyond - occ.far < best[2]:
        top = _push(la, tab, x, up, beyond, np.int64(0), out, c)
    while top > 0:
        top -= 1
        rec, off = out.stack_lane[c, top], out.stack_off[c, top]
        if off > limit or off - occ.far >= best[2]:
            continue
        k = occ.ptr[rec] if up else occ.ptr[rec + 1] - 1
        best = _scan(occ, rec, k, up, me, off, la.length[rec], half, limit, best)
        beyond = off + la.length[rec]
        if beyond <= limit and beyond - occ.far < best[2]:
            top = _push(la, tab, rec, up, beyond, top, out, c)
    return best[0], best[1], best[3], best[4]


# -- one row ----------------------------------------------------------------------------------------


@njit_leaf
def _object(
    la: LaneArrays,
    occ: LaneOccupancy,
    actors: Actors,
    out: Out,
    i: int,
    j: int,
    me: int,
    found: tuple[int, float, int, float],
    ahead: bool | np.bool_,
    aligned: bool,
    visibility: float,
    sign: float,
    e0: int,
    q0: float,
    x: int,
    q: float,
    full: bool,
) -> None:
    """Writes object ``j`` of row i from a search result, if it lies within sight: all
    its fields for a whole view (``full``), else its slot and gap.

    ``sign`` is the driving sign of the main lane; (e0, q0) the lane of the main lane's
    stream at the vehicle's centre and the centre's progress on it, (x, q) the same for
    the stream the object was found in."""
    o, d, rec, p = found
    if o < 0:
        return
    half = 0.5 * actors.length[me]
    clear = d - half - occ.reach[o]  # bumper to bumper, > 0 where they do not overlap
    gap = max(clear, 0.0)
    if gap > visibility:
        return
    out.object_slot[i, j] = o
    out.object_lon[i, j] = gap if ahead or gap == 0.0 else -gap
    if not full:
        return
    out.object_id[i, j] = actors.id[o]
    static = actors.kind[o] == STATIC_OBJECT
    out.object_static[i, j] = static
    if not static:
        out.object_speed[i, j] = actors.speed[o]
        out.object_accel[i, j] = actors.accel[o]
    _, _, along = pose(la, rec, p)
    turn = 0.0 if aligned else math.pi
    out.object_heading[i, j] = wrap(actors.heading[o] - along - turn)
    out.object_length[i, j] = actors.length[o]
    out.object_width[i, j] = actors.width[o]
    out.object_height[i, j] = actors.height[o]
    if actors.road[o] == actors.road[me]:
        out.object_lat[i, j] = sign * (actors.t[o] - actors.t[me])
    else:  # on another road: through the lane it was found in, and that lane's stream
        lo, hi = bounds(la, rec, p)
        way = la.sign[rec] if aligned else -la.sign[rec]
        lo0, hi0 = bounds(la, e0, q0)
        centre0 = 0.5 * (lo0 + hi0)
        shift = 0.0
        if x != e0:
            xlo, xhi = bounds(la, x, q)
            shift = sign * (0.5 * (xlo + xhi) - centre0)
        own = sign * (actors.t[me] - centre0)
        out.object_lat[i, j] = way * (actors.t[o] - 0.5 * (lo + hi)) + shift - own


@njit_leaf
def _emit(
    out: Out,
    chunk: int,
    kind: int,
    index: int,
    distance: float,
    extra: int,
    width: float,
    merge: bool,
) -> bool:
    """Appends one list entry (a sign, light or marking) to chunk's part of the flat
    arrays; a marking equal to the one before it in its list (``merge``) is not
    repeated. Returns whether it was appended."""
    c, end = out.cursor[chunk, kind], out.cursor[chunk, END + kind]
    if kind == MARKS and merge and c - 1 < end:
        same = (
            out.mark_type[c - 1] == index
            and out.mark_color[c - 1] == extra
            and out.mark_width[c - 1] == width
        )
        if same:
            return False
    if c < end:
        if kind == SIGNS:
            out.sign_signal[c], out.sign_distance[c] = index, distance
        elif kind == LIGHTS:
            out.light_signal[c], out.light_distance[c] = index, distance
            out.light_state[c] = extra
        else:
            out.mark_type[c], out.mark_color[c] = index, extra
            out.mark_width[c], out.mark_distance[c] = width, distance
    out.cursor[chunk, kind] = c + 1
    return True


@njit_leaf
def walk_stream(
    la: LaneArrays,
    tab: Tables,
    salt: np.uint64,
    y: int,
    aligned: bool,
    q: float,
    visibility: float,
    shown: IntArray,
    out: Out,
    i: int,
    j: int,
    signals: int,
    mark_row: int,
    mark_left: bool,
    c: int,
) -> None:
    """Walks lane ``y``'s stream from progress q up to the visibility distance: the
    distance to the end of the lane (always), its signals (``signals``: 0 none, 1 lights,
    2 signs and lights) and the markings of one side (row ``mark_row`` of row i, -1:
    none; ``mark_left``: the left side in the driver's direction), into chunk c's
    part of the lists."""
    off = -q if aligned else q - la.length[y]  # from the reference point to the record
    end, end_uid, ended = 0.0, int(y), tab.lane_row[y, END_OK] == 0
    if signals > 0:
        out.light_start[i, j] = out.cursor[c, LIGHTS]
        out.light_count[i, j] = 0
    if signals > 1:
        out.sign_start[i, j] = out.cursor[c, SIGNS]
        out.sign_count[i, j] = 0
    if mark_row >= 0:
        out.mark_start[i, mark_row] = out.cursor[c, MARKS]
        out.mark_count[i, mark_row] = 0
    rec = y
    while rec >= 0 and off <= visibility:
        length = la.length[rec]
        if signals > 0:
            a, b = tab.lane_row[rec, SIG_PTR], tab.lane_row[rec + 1, SIG_PTR]
            for n in range(b - a):
                e = a + n if aligned else b - 1 - n
                sig = tab.sig_idx[e]
                dist = off + (tab.sig_pos[e] if aligned else length - tab.sig_pos[e])
                if dist < 0.0 or dist > visibility:
                    continue
                if tab.sig_light[sig] != 0:
                    plan = tab.sig_plan[sig]
                    state = shown[plan] if 0 <= plan < shown.size else 0
                    _emit(out, c, LIGHTS, sig, dist, state, 0.0, False)
                    out.light_count[i, j] += 1
                elif signals > 1:
                    _emit(out, c, SIGNS, sig, dist, 0, 0.0, False)
                    out.sign_count[i, j] += 1
        if mark_row >= 0:
            plus = (la.sign[rec] > 0.0) == aligned  # the driver heads along +s here
            if plus == mark_left:  # the border at larger t
                a, b = tab.lane_row[rec, MARK_HI], tab.lane_row[rec, MARK_LO]
            else:
                a, b = tab.lane_row[rec, MARK_LO], tab.lane_row[rec + 1, MARK_HI]
            s0 = la.s0[rec]
            s1 = la.s1[rec]
            for n in range(b - a):
                e = a + n if plus else b - 1 - n
                seg = tab.mark[e]
                lo = seg[MARK_S0] - s0 if plus else s1 - seg[MARK_S1]
                hi = seg[MARK_S1] - s0 if plus else s1 - seg[MARK_S0]
                if off + hi <= 0.0 or off + lo > visibility:
                    continue
                merge = out.mark_count[i, mark_row] > 0
                width = seg[MARK_WIDTH]
                kind, colour = int(seg[MARK_TYPE]), int(seg[MARK_COLOR])
                start = max(off + lo, 0.0)
                if _emit(out, c, MARKS, kind, start, colour, width, merge):
                    out.mark_count[i, mark_row] += 1
        nxt = step_lane(la, tab, salt, rec, aligned)
        if not ended and (nxt < 0 or tab.lane_row[nxt, END_OK] == 0):
            end, end_uid, ended = off + length, int(rec), True
        off += length
        rec = nxt
    if not ended or end > visibility:
        end, end_uid = _INF, -1
    out.lane_end[i, j] = max(end, 0.0)
    out.lane_end_uid[i, j] = end_uid


@njit_leaf
def _reset(out: Out, i: int, w: int, c: int) -> None:
    """Sets row i (of chunk c) to the defaults: all of it for a whole view, else what a
    row that asks for less gets (see `Out`)."""
    out.main_uid[i], out.main_p[i], out.main_side[i] = -1, MISSING, 0
    if w != WANT_ALL:
        out.lane_end[i, EGO] = MISSING
        out.lane_end_uid[i, EGO] = -1
        out.light_start[i, EGO] = out.cursor[c, LIGHTS]
        out.light_count[i, EGO] = 0
        for j in range(6):
            wanted = (
                (j == FRONT and w & WANT_FRONT)
                or (j == REAR and w & WANT_REAR)
                or (j > REAR and w & WANT_SIDES)
            )
            if wanted:
                out.object_slot[i, j] = -1
                out.object_lon[i, j] = MISSING
        return
    for j in range(3):
        out.lane_uid[i, j] = -1
        out.lane_exists[i, j] = False
        out.lane_end[i, j] = MISSING
        out.lane_end_uid[i, j] = -1
        out.light_start[i, j] = out.cursor[c, LIGHTS]
        out.light_count[i, j] = 0
    for j in range(6):
        out.object_slot[i, j] = out.object_id[i, j] = -1
        out.object_static[i, j] = False
        out.object_speed[i, j] = out.object_accel[i, j] = out.object_heading[i, j] = MISSING
        out.object_length[i, j] = out.object_width[i, j] = out.object_height[i, j] = MISSING
        out.object_lon[i, j] = out.object_lat[i, j] = MISSING
    out.visibility[i] = out.speed[i] = out.accel[i] = out.steering[i] = MISSING
    out.collision[i] = False
    out.lateral[i] = out.heading[i] = MISSING
    out.boundary_left[i] = out.boundary_right[i] = MISSING
    for j in range(3):
        out.lane_curvature[i, j] = out.lane_width[i, j] = MISSING
        out.sign_start[i, j] = out.cursor[c, SIGNS]
        out.sign_count[i, j] = 0
    for j in range(4):
        out.mark_start[i, j] = out.cursor[c, MARKS]
        out.mark_count[i, j] = 0


@njit_leaf
def start_chunk(out: Out, c: int) -> None:
    """Points chunk c's cursors at the start of its part of each flat array."""
    chunks = out.cursor.shape[0]
    for kind, size in enumerate((out.sign_signal.size, out.light_signal.size, out.mark_type.size)):
        out.cursor[c, kind] = c * (size // chunks)
        out.cursor[c, END + kind] = (c + 1) * (size // chunks)


@njit_leaf
def lights_fit(out: Out, c: int) -> bool:
    """Whether chunk c's light lists still fit in its part of the flat arrays: its
    rows' lights so far are whole (lean rows list no signs or marks)."""
    return bool(out.cursor[c, LIGHTS] <= out.cursor[c, END + LIGHTS])


@njit_leaf
def partial_row(
    la: LaneArrays,
    tab: Tables,
    occ: LaneOccupancy,
    actors: Actors,
    rows: IntArray,
    want: IntArray,
    visibility: FloatArray,
    shown: IntArray,
    out: Out,
    i: int,
    c: int,
) -> None:
    """Row i, in chunk c, of a row that asks for less than everything (see `Out`). A
    pass that visits its rows itself (the traffic model's, which reads each row's
    results while they are at hand) calls `start_chunk` first, `prefetch_row` before
    each row, and `roadsim.sensors.driver.out_fits` after."""
    w = want[i]
    k = rows[i]
    _reset(out, i, w, c)
    u = actors.uid[k]
    if u < 0 or u >= la.length.shape[0]:
        return
    vis = visibility[i]
    salt = actors.salt[k]
    half, pc, m, pf, _, side = _own_lane(la, tab, actors, out, i, k, u)
    if side != 0 and w & WANT_FRONT and not w & WANT_SIDES:
        w = _sides_too(out, i, w)
    if w & (WANT_LIGHTS | WANT_END) and la.sign[m] != 0.0:
        signals = 1 if w & WANT_LIGHTS else 0
        walk_stream(la, tab, salt, m, True, pf, vis, shown, out, i, EGO, signals, -1, True, c)
    _objects(la, tab, occ, actors, out, i, k, w, u, side, pc, half, vis, la.sign[m], c)


@njit_leaf
def prefetch_row(
    la: LaneArrays,
    occ: LaneOccupancy,
    actors: Actors,
    rows: IntArray,
    want: IntArray,
    order: IntArray,
    j: int,
) -> None:
    """For the row at position j of ``order``: `prefetch_ahead` (three samples: the
    vehicle's front lies ahead of its centre), with the start of the occupancy window of
    the vehicle ``2 PREFETCH_AHEAD`` rows on, and for the one `PREFETCH_AHEAD` rows on
    its window's first entries and the rows and windows of the lanes its searches may go
    on to: the next lane (an empty lane passes the search on) and, for a row that asks
    for them, the neighbours (see `roadsim._jit.prefetch`)."""
    prefetch_ahead(la, actors.uid, actors.s, rows, order, j, 3)
    n = order.shape[0]
    lanes = la.length.shape[0]
    if j + 2 * PREFETCH_AHEAD < n:
        u = actors.uid[rows[order[j + 2 * PREFETCH_AHEAD]]]
        if 0 <= u < lanes:
            prefetch(occ.ptr, u)
    if j + PREFETCH_AHEAD < n:
        i = order[j + PREFETCH_AHEAD]
        u = actors.uid[rows[i]]
        if 0 <= u < lanes:
            prefetch(occ.p, occ.ptr[u])
            prefetch(occ.slot, occ.ptr[u])
            _prefetch_lane_window(la, occ, la.first_next[u])
            if want[i] & WANT_SIDES:
                _prefetch_lane_window(la, occ, la.left_uid[u])
                _prefetch_lane_window(la, occ, la.right_uid[u])


@njit_leaf
def _prefetch_lane_window(la: LaneArrays, occ: LaneOccupancy, lane: int) -> None:
    """Starts loading lane's rows and the start of its occupancy window (-1: nothing)."""
    if lane >= 0:
        prefetch_lane(la, lane)
        prefetch(occ.ptr, lane)


@njit_leaf
def _own_lane(
    la: LaneArrays, tab: Tables, actors: Actors, out: Out, i: int, k: int, u: int
) -> tuple[float, float, int, float, float, int]:
    """The main lane of row i (vehicle k, its centre on lane u), written to the row:
    ``(half length, centre's progress on u, main lane, progress, lateral offset, side)``
    (see `main_lane`)."""
    half = 0.5 * actors.length[k]
    h = actors.heading[k]
    xf = actors.x[k] + half * math.cos(h)
    yf = actors.y[k] + half * math.sin(h)
    pc = progress(la, u, actors.s[k])
    m, pf, lat, side = main_lane(la, tab, actors.salt[k], u, pc, half, xf, yf)
    out.main_uid[i], out.main_p[i], out.main_side[i] = m, pf, side
    return half, pc, m, pf, lat, side


@njit_leaf
def _sides_too(out: Out, i: int, w: int) -> int:
    """The front is over in a neighbour lane: the lane of the vehicle's centre is a side
    lane of the view, and traffic reads its leader there. Returns the row's new flags."""
    for j in range(2, 6):
        out.object_slot[i, j] = -1
        out.object_lon[i, j] = MISSING
    return w | WANT_SIDES


@njit_leaf
def _objects(
    la: LaneArrays,
    tab: Tables,
    occ: LaneOccupancy,
    actors: Actors,
    out: Out,
    i: int,
    k: int,
    w: int,
    u: int,
    side: int,
    pc: float,
    half: float,
    vis: float,
    sign: float,
    c: int,
) -> None:
    """The objects row i (vehicle k, its centre at progress ``pc`` on lane u) asks for
    (``w``), ahead and behind in the lane of its centre and its neighbours; ``side`` is
    the main lane's side and ``sign`` its driving sign."""
    if w & (WANT_FRONT | WANT_REAR | WANT_SIDES) == 0:
        return
    full = w == WANT_ALL
    salt = actors.salt[k]
    e0 = u if side == 0 else _side(la, u, side > 0)
    if e0 < 0:
        e0 = u
    q0 = pc if la.sign[e0] == la.sign[u] else la.length[e0] - pc
    limit = vis + half + occ.far  # no footprint reaches further from its centre
    for j in range(3):
        if j == EGO and w & (WANT_FRONT | WANT_REAR) == 0:
            continue
        if j != EGO and w & WANT_SIDES == 0:
            continue
        x = e0 if j == EGO else _side(la, e0, j == LEFT)
        if x < 0 or la.sign[x] == 0.0:
            continue
        aligned = la.sign[x] == la.sign[e0]
        q = q0 if aligned else la.length[x] - q0
        front, rear = FRONT, REAR
        if j == LEFT:
            front, rear = FRONT_LEFT, REAR_LEFT
        elif j == RIGHT:
            front, rear = FRONT_RIGHT, REAR_RIGHT
        if j != EGO or w & WANT_FRONT:
            found = search_ahead(la, tab, occ, k, salt, x, aligned, q, half, limit)
            # (np.bool_: a literal True and False would compile _object twice.)
            _object(la, occ, actors, out, i, front, k, found, np.bool_(True), aligned, vis,
                    sign, e0, q0, x, q, full)  # fmt: skip
        if j != EGO or w & WANT_REAR:
            found = search_behind(la, tab, occ, k, x, aligned, q, half, limit, out, c)
            _object(la, occ, actors, out, i, rear, k, found, np.bool_(False), aligned, vis,
                    sign, e0, q0, x, q, full)  # fmt: skip


@njit_loop
def _full_rows(
    la: LaneArrays,
    tab: Tables,
    occ: LaneOccupancy,
    actors: Actors,
    rows: IntArray,
    visibility: FloatArray,
    shown: IntArray,
    out: Out,
    order: IntArray,
    c: int,
    chunks: int,
) -> None:
    """Whole driver views (see the module docstring) of the vehicles in slots ``rows``,
    written to ``out`` by row, for chunk c of ``chunks`` of ``order`` (the order to
    visit the rows in); ``shown`` says what each light of the plan shows. Each chunk's
    lists start at the start of its part of the flat arrays (see `Out`)."""
    start_chunk(out, c)
    for i in chunk(order, c, chunks):
        k = rows[i]
        vis = visibility[i]
        salt = actors.salt[k]
        _reset(out, i, WANT_ALL, c)
        out.visibility[i] = vis
        out.speed[i] = actors.speed[k]
        out.accel[i] = actors.accel[k]
        out.steering[i] = actors.steer[k] * actors.model_ratio[actors.model[k]]
        out.collision[i] = actors.collided[k]
        u = actors.uid[k]
        if u < 0 or u >= la.length.shape[0]:
            continue

        # -- the main lane and the own vehicle ---------------------------------------------
        half, pc, m, pf, lat, side = _own_lane(la, tab, actors, out, i, k, u)
        h = actors.heading[k]
        lo, hi = bounds(la, m, pf)
        width = hi - lo
        _, _, along = pose(la, m, pf)
        rel = wrap(h - along)
        out.lateral[i] = lat
        out.heading[i] = rel
        corner = 0.5 * actors.width[k] * math.cos(rel)
        out.boundary_left[i] = 0.5 * width - (lat + corner)
        out.boundary_right[i] = 0.5 * width + (lat - corner)

        # -- the three lanes at the reference point ------------------------------------------
        sign = la.sign[m]
        for j in range(3):
            y = m if j == EGO else _side(la, m, j == LEFT)
            if y < 0 or la.sign[y] == 0.0:
                continue
            aligned = la.sign[y] == sign
            q = pf if aligned else la.length[y] - pf
            out.lane_uid[i, j] = y
            out.lane_exists[i, j] = True
            ylo, yhi = bounds(la, y, q)
            out.lane_width[i, j] = yhi - ylo
            bend = signed_curvature(la, y, q)
            out.lane_curvature[i, j] = bend if aligned else -bend
            # Markings: the main lane's left side (row 0) and right side (row 1), the left
            # lane's left side (row 2), the right lane's right side (row 3).
            mark_row = 2 if j == LEFT else (0 if j == EGO else 3)
            walk_stream(
                la, tab, salt, y, aligned, q, vis, shown, out, i, j, 2, mark_row, j != RIGHT, c
            )  # fmt: skip
            if j == EGO:
                walk_stream(la, tab, salt, y, aligned, q, vis, shown, out, i, j, 0, 1, False, c)

        # -- the objects around ------------------------------------------------------------------
        _objects(la, tab, occ, actors, out, i, k, WANT_ALL, u, side, pc, half, vis, sign, c)


observe = njit_rows(_full_rows)
