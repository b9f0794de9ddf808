"""Who is on which lane: every actor sorted by (lane, progress), once per tick.

`footprints` enters each active actor on a lane in every lane of its road its footprint
overlaps: its own lane, at the progress of its centre; the lanes beside it that it
reaches into, however many (an actor changing lanes, a truck wider than its lane, a box
across three lanes); and the lanes of the lane sections before and after its own that
its footprint reaches into along the road (a long truck, a car with its rear on the end
of a lane and its centre on the lane that follows), at the progress of its centre
counted along those lanes, so beyond their ends. `LaneOccupancy` is the sorted result,
with the longest reach of any actor (which bounds the searches); the compiled look-ups
below find where a progress falls among a lane's entries with a binary search inside
the lane's window. The driver sensor (`roadsim.sensors.driver`) walks lanes with them,
and so, through it, does traffic.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from roadsim._jit import chunk, chunks_for, njit, njit_leaf, njit_loop, njit_rows, njit_split
from roadsim._trig import sin_cos
from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.world.lane_kernels import (
    LaneArrays,
    bounds,
    direction,
    prefetch_ahead,
    progress,
    progress_per_metre,
    signed_curvature,
)

#: How far (m) a footprint may reach over the edge of a lane of the other direction (or
#: none) beside its own and not be in it: a truck standing in a bend in a queue, its
#: corners a few centimetres over the middle of the road, stopped each car coming the
#: other way for as long as it stood (CARLA's Town07), where a car passes with half a
#: metre to spare, keeping away from the middle. (Not beside a lane of its own
#: direction: a truck that kept to the edge of its lane drove into the corner of a car
#: still leaving it.)
SIDE_SLACK = 0.2


class LaneOccupancy(NamedTuple):
    """Actors on lanes, sorted by (uid, progress), ties in the order they were entered.

    Attributes:
        slot: Actor slot of each entry.
        uid: Lane uid of each entry.
        p: Progress of the actor's centre along that lane record (m).
        signalling: Whether the entry is a vehicle signalling a change into the lane
            rather than one whose footprint is in it (`footprints`' ``extra``).
        ptr: CSR pointers by lane uid: lane ``u``'s entries are ``ptr[u]:ptr[u + 1]``.
        reach: Per actor slot, half its extent along its own lane (m): half its length
            for an actor aligned with the lane, half its width for one standing across.
        far: The largest ``reach`` (m, 0 for none): no actor's footprint reaches
            further from its centre along the lanes, so a search for the nearest
            footprint within a distance looks this much further for centres.
    """

    slot: IntArray
    uid: IntArray
    p: FloatArray
    signalling: BoolArray
    ptr: IntArray
    reach: FloatArray
    far: float


def footprints(
    la: LaneArrays,
    active: BoolArray,
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
    heading: FloatArray,
    length: FloatArray,
    width: FloatArray,
    extra: tuple[IntArray, IntArray, FloatArray] | None = None,
) -> LaneOccupancy:
    """The occupancy of this tick: every active actor on a lane, in every lane of its
    road that its footprint overlaps.

    An actor of length L and width W at angle ``d`` to its lane reaches
    ``0.5 (L |sin d| + W |cos d|)`` to each side of its centre and
    ``0.5 (L |cos d| + W |sin d|)`` along the road (its ``reach``). Where that passes
    the edge of its lane (by more than `SIDE_SLACK` where the lane beside is not of its
    direction), the actor is in the lane beside it on that side too (any lane type,
    either driving direction), at the same place along the road, and so on while it
    passes the edge of that one so. Where it passes the start or the end of its lane
    section, it is in each lane of the sections it reaches into (of its road) whose
    width at the section's border nearest the actor overlaps its footprint's, at its
    centre's progress along that lane (below 0 or beyond the lane's length).

    ``extra`` entries (slot, lane, progress) are added as they are, but for those of lane
    -1, which enter nothing: the traffic model enters vehicles that signal a lane change
    in the lane they are moving into.
    """
    if extra is None:
        extra = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    chunks = chunks_for(uid.shape[0])
    return LaneOccupancy(
        *_footprints(la, active, uid, s, t, heading, length, width, *extra, chunks)
    )


class Placed(NamedTuple):
    """`_place`'s entries before the sort, and how the sort shares the lanes out.

    Slot k's entry in its own lane is ``lane[k]`` at ``p[k]`` (lane -1: none); the
    entries of the slots that reach into other lanes (a few hundred of 10,000) are
    listed apart, as ``side_slot``, ``side_lane``, ``side_p``: chunk c of the slots
    (`roadsim._jit.chunk`) lists its own from index ``room a`` on, a its first slot and
    ``room`` the side arrays' length over the slots', ``side_count[c]`` of them, by slot
    (the lanes beside it toward larger t, then toward smaller t, then those of the
    sections after and before its own). A chunk whose entries do not fit in its
    ``room (b - a)`` places (b its stop) counts them all, and the pass runs again with
    more room. (Three entries a slot, most of them empty, made the sort read three
    times as much.) ``far[c]`` is the largest reach among chunk c's slots.

    The sort is split over the threads by lanes: chunk c sorts the lanes
    ``edge[c]:edge[c + 1]``, which start at the lane of its first slot, so that with the
    slots in lane order (as the simulation keeps them) nearly every entry of a chunk's
    slots falls in its own lanes. ``ptr[u]`` counts lane u's entries from the slots of
    the chunk that owns u (``own_count[c]`` of them in chunk c's lanes); the entries
    of a chunk's slots that fall in another chunk's lanes, strays (vehicles that moved
    on to another lane since the slots were sorted), are listed apart, in slot order,
    as ``stray_slot``, ``stray_lane``, ``stray_p``: chunk c's from index
    ``(room + 1) a`` on, ``stray_count[c]`` of them."""

    lane: IntArray
    p: FloatArray
    side_slot: IntArray
    side_lane: IntArray
    side_p: FloatArray
    side_count: IntArray
    edge: IntArray
    ptr: IntArray
    own_count: IntArray
    stray_slot: IntArray
    stray_lane: IntArray
    stray_p: FloatArray
    stray_count: IntArray
    far: FloatArray


#: Entries in other lanes than its own that `_place` makes room for per slot at first.
ROOM = 2


@njit_split
def _footprints(
    la: LaneArrays,
    active: BoolArray,
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
    heading: FloatArray,
    length: FloatArray,
    width: FloatArray,
    extra_slot: IntArray,
    extra_lane: IntArray,
    extra_p: FloatArray,
    chunks: int,
) -> tuple[IntArray, IntArray, FloatArray, BoolArray, IntArray, FloatArray, float]:
    """`footprints` in one compiled call: ``(slot, uid, p, signalling, ptr, reach,
    far)``. Two passes over the threads: `_place` (entries, counted by lane; again with
    more room where a chunk's did not fit), then `_sort_lanes`; between them only the
    size of the result is found."""
    n = uid.size
    lanes = la.length.shape[0]
    reach = np.empty(n)
    room = ROOM
    while True:
        placed = Placed(
            np.empty(n, dtype=np.int64),
            np.empty(n),
            np.empty(room * n, dtype=np.int64),
            np.empty(room * n, dtype=np.int64),
            np.empty(room * n),
            np.zeros(chunks, dtype=np.int64),
            _edges(active, uid, lanes, chunks),
            np.empty(lanes + 1, dtype=np.int64),
            np.zeros(chunks, dtype=np.int64),
            np.empty((room + 1) * n, dtype=np.int64),
            np.empty((room + 1) * n, dtype=np.int64),
            np.empty((room + 1) * n),
            np.zeros(chunks, dtype=np.int64),
            np.zeros(chunks),
        )
        _place(chunks, la, active, uid, s, t, heading, length, width, placed, reach, np.arange(n))
        need = room
        for c in range(chunks):
            size = (c + 1) * n // chunks - c * n // chunks
            while placed.side_count[c] > need * size:
                need += 1
        if need == room:
            break
        room = need
    total = 0
    far = 0.0
    for c in range(chunks):
        total += placed.own_count[c] + placed.stray_count[c]
        far = max(far, placed.far[c])
    for e in range(extra_lane.shape[0]):
        if extra_lane[e] >= 0:
            total += 1
    placed.ptr[lanes] = total
    out_slot = np.empty(total, dtype=np.int64)
    out_uid = np.empty(total, dtype=np.int64)
    out_p = np.empty(total)
    out_signalling = np.empty(total, dtype=np.bool_)
    _sort_lanes(
        chunks, placed, extra_slot, extra_lane, extra_p, np.empty(lanes, dtype=np.int64),
        out_slot, out_uid, out_p, out_signalling,
    )  # fmt: skip
    return out_slot, out_uid, out_p, out_signalling, placed.ptr, reach, far


@njit
def _edges(active: BoolArray, uid: IntArray, lanes: int, chunks: int) -> IntArray:
    """The first lane of each chunk's share of the sort (see `Placed`), and ``lanes``
    after the last: the lane of the chunk's first slot on a lane, never below the edge
    before it."""
    n = uid.shape[0]
    edge = np.zeros(chunks + 1, dtype=np.int64)
    edge[chunks] = lanes
    for c in range(1, chunks):
        edge[c] = edge[c - 1]
        for k in range(c * n // chunks, (c + 1) * n // chunks):
            if active[k] and 0 <= uid[k] < lanes:
                edge[c] = max(edge[c - 1], uid[k])
                break
    return edge


class Room(NamedTuple):
    """Where chunk c of `_place` lists its entries in other lanes than their actors' own
    (``side``, up to ``side_end``) and its strays (``stray``, up to ``stray_end``), and
    the lanes it counts (``lo_lane`` to ``hi_lane``)."""

    side: int
    side_end: int
    stray: int
    stray_end: int
    lo_lane: int
    hi_lane: int


@njit_loop
def _place_rows(
    la: LaneArrays,
    active: BoolArray,
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
    heading: FloatArray,
    length: FloatArray,
    width: FloatArray,
    placed: Placed,
    reach: FloatArray,
    slots: IntArray,
    c: int,
    chunks: int,
) -> None:
    """The entries of the slots k of chunk c of ``chunks`` of ``slots`` (0, 1, 2, ...):
    the actor's own lane (lane -1 for a slot with no active actor on a lane), and every
    other lane its footprint overlaps (see `footprints`); and its ``reach``, by slot.
    Counts the entries in the chunk's own lanes, and lists those in others (see
    `Placed`)."""
    lanes = la.length.shape[0]
    lo_lane, hi_lane = placed.edge[c], placed.edge[c + 1]
    for u in range(lo_lane, hi_lane):
        placed.ptr[u] = 0
    order = chunk(slots, c, chunks)
    n = slots.shape[0]
    room = placed.side_slot.shape[0] // max(n, 1)
    a, b = c * n // chunks, (c + 1) * n // chunks
    at = Room(room * a, room * b, (room + 1) * a, (room + 1) * b, lo_lane, hi_lane)
    side, stray, own = at.side, at.stray, 0
    far = 0.0
    for j in range(order.shape[0]):
        prefetch_ahead(la, uid, s, slots, order, j, 2)
        k = order[j]
        u = uid[k]
        if not (active[k] and 0 <= u < lanes):
            placed.lane[k], placed.p[k] = -1, 0.0
            reach[k] = 0.0
            continue
        q = progress(la, u, s[k])
        placed.lane[k], placed.p[k] = u, q
        if lo_lane <= u < hi_lane:
            placed.ptr[u] += 1
            own += 1
        else:
            stray = _stray(placed, at, stray, k, u, q)
        lo, hi = bounds(la, u, q)
        # |cos| and |sin| of the angle d between the actor and the lane.
        dx, dy = direction(la, u, q)
        sh, ch = sin_cos(heading[k])
        cos_rel, sin_rel = ch * dx + sh * dy, sh * dx - ch * dy  # (left positive)
        cos_d, sin_d = math.fabs(cos_rel), math.fabs(sin_rel)
        along = 0.5 * (length[k] * cos_d + width[k] * sin_d)
        along *= progress_per_metre(la, u, q)  # as progress, as the gaps are measured
        reach[k] = along
        far = max(far, along)
        # The footprint's extent across the lane, on the road (t), measured from the
        # lane as it bends under the body: a truck following a bend points its ends
        # outward and its middle inward, within its lane, where a rectangle set on the
        # lane's tangent at its centre reached over into the oncoming lane.
        y_lo, y_hi = across_bend(
            length[k], width[k], cos_rel, sin_rel, signed_curvature(la, u, q),
        )  # fmt: skip
        if la.sign[u] >= 0.0:  # (the lane's left is toward larger t)
            t_lo, t_hi = t[k] + y_lo, t[k] + y_hi
        else:
            t_lo, t_hi = t[k] - y_hi, t[k] - y_lo
        if t_hi > hi or t_lo < lo:
            for up in (True, False):  # toward larger t, then smaller
                x, edge = u, hi if up else lo
                while (t_hi > edge) if up else (t_lo < edge):
                    x = _beside(la, x, up)
                    if x < 0:
                        break
                    slack = SIDE_SLACK if la.sign[x] != la.sign[u] else 0.0
                    if (t_hi <= edge + slack) if up else (t_lo >= edge - slack):
                        break
                    qx = q if la.sign[x] == la.sign[u] else la.length[x] - q
                    side, stray, own = _enter(placed, at, side, stray, own, k, x, qx)
                    xlo, xhi = bounds(la, x, qx)
                    edge = xhi if up else xlo
        sk = s[k]
        if sk + along > la.s1[u] or sk - along < la.s0[u]:
            side, stray, own = _other_sections(
                la, placed, at, side, stray, own, k, u, sk, along, t_lo, t_hi
            )
    placed.side_count[c] = side - at.side
    placed.stray_count[c] = stray - at.stray
    placed.own_count[c] = own
    placed.far[c] = far


_place = njit_rows(_place_rows)


_ACROSS_POINTS = 5  # points along each side of a footprint at which `across_bend` looks


@njit_leaf
def across_bend(
    length: float, width: float, cos_d: float, sin_d: float, curvature: float
) -> tuple[float, float]:
    """How far a footprint reaches to the right and to the left of its lane (m, ``(lo,
    hi)``, left positive), for a footprint whose centre is on the lane's centre line, at
    angle d to the lane (``cos_d``, ``sin_d``, left positive) where the lane bends by
    ``curvature`` (1/m, positive to the left).

    Each of `_ACROSS_POINTS` points along either side is measured from the lane's centre
    line as it bends at that point's distance along the lane (a circle), not from its
    tangent at the footprint's centre: on a straight lane, the rectangle's extent
    ``0.5 (L |sin d| + W |cos d|)`` both ways."""
    lo, hi = np.inf, -np.inf
    for j in range(_ACROSS_POINTS):
        a = length * (j / (_ACROSS_POINTS - 1) - 0.5)
        for b in (-0.5 * width, 0.5 * width):
            x = a * cos_d - b * sin_d
            y = a * sin_d + b * cos_d
            if curvature != 0.0:
                bend = min(abs(curvature * x), 1.0)
                y -= (1.0 - math.sqrt(1.0 - bend * bend)) / curvature
            lo, hi = min(lo, y), max(hi, y)
    return lo, hi


@njit_leaf
def _beside(la: LaneArrays, x: int, up: bool) -> int:
    """The lane beside lane x toward larger t (``up``) or smaller t, in its section (-1:
    none); the center lane has none, and is passed over."""
    if (la.sign[x] > 0.0) == up:
        return int(la.left_uid[x])
    return int(la.right_uid[x])


@njit_leaf
def _enter(
    placed: Placed, at: Room, side: int, stray: int, own: int, k: int, x: int, q: float
) -> tuple[int, int, int]:
    """Lists slot k's entry in lane x (not its own), at q, where there is room (see
    `Placed`); returns the next places and the count of the chunk's own lanes' entries."""
    if side < at.side_end:
        placed.side_slot[side] = k
        placed.side_lane[side] = x
        placed.side_p[side] = q
    if at.lo_lane <= x < at.hi_lane:
        placed.ptr[x] += 1
        own += 1
    else:
        stray = _stray(placed, at, stray, k, x, q)
    return side + 1, stray, own


@njit_leaf
def _other_sections(
    la: LaneArrays,
    placed: Placed,
    at: Room,
    side: int,
    stray: int,
    own: int,
    k: int,
    u: int,
    sk: float,
    along: float,
    t_lo: float,
    t_hi: float,
) -> tuple[int, int, int]:
    """Lists slot k's entries in the lanes of the sections of its road after and before
    lane u's (its own) that its footprint reaches into: from road s ``sk - along`` to
    ``sk + along``, from t ``t_lo`` to ``t_hi``. A road's lane uids run by section in
    order of s (`roadsim.road.lanes`)."""
    lanes = la.length.shape[0]
    road, section = la.road[u], la.section[u]
    for later in (True, False):
        step = 1 if later else -1
        x = u + step
        while 0 <= x < lanes and la.section[x] == section:
            x += step
        while 0 <= x < lanes and la.road[x] == road:
            if (la.s0[x] >= sk + along) if later else (la.s1[x] <= sk - along):
                break
            sec = la.section[x]
            while 0 <= x < lanes and la.section[x] == sec:
                if la.sign[x] != 0.0 and la.s1[x] > la.s0[x]:
                    # The lane's width where the section meets the actor's.
                    near = min(max(sk, la.s0[x]), la.s1[x])
                    xlo, xhi = bounds(la, x, progress(la, x, near))
                    if xlo < t_hi and xhi > t_lo:
                        q = progress(la, x, sk)
                        side, stray, own = _enter(placed, at, side, stray, own, k, x, q)
                x += step
    return side, stray, own


@njit_leaf
def _stray(placed: Placed, at: Room, i: int, k: int, u: int, q: float) -> int:
    """Lists slot k's entry in lane u, at q, as a stray at ``i`` where there is room;
    returns the next place."""
    if i < at.stray_end:
        placed.stray_slot[i] = k
        placed.stray_lane[i] = u
        placed.stray_p[i] = q
    return i + 1


@njit_loop
def _sort_lane_rows(
    placed: Placed,
    extra_slot: IntArray,
    extra_lane: IntArray,
    extra_p: FloatArray,
    fill: IntArray,
    out_slot: IntArray,
    out_uid: IntArray,
    out_p: FloatArray,
    out_signalling: BoolArray,
    c: int,
    chunks: int,
) -> None:
    """`sort_entries` of the entries in chunk c's lanes (see `Placed`): those of `_place`
    in slot order, each slot's own lane before its neighbours, then the extra ones.
    Writes the lanes' run starts into ``placed.ptr`` (their counts until then) and
    their entries into ``out_*``, where the entries of the chunks' lanes before follow
    each other."""
    n = placed.lane.shape[0]
    room = placed.side_slot.shape[0] // max(n, 1)
    lo_lane, hi_lane = placed.edge[c], placed.edge[c + 1]
    # The entries of the lanes before this chunk's, and this chunk's counts.
    start = 0
    for r in range(c):
        start += placed.own_count[r]
    for r in range(chunks):
        at = (room + 1) * (r * n // chunks)
        for e in range(at, at + placed.stray_count[r]):
            lane = placed.stray_lane[e]
            if lane < lo_lane:
                start += 1
            elif lane < hi_lane:
                placed.ptr[lane] += 1
    for e in range(extra_lane.shape[0]):
        lane = extra_lane[e]
        if 0 <= lane < lo_lane:
            start += 1
        elif lo_lane <= lane < hi_lane:
            placed.ptr[lane] += 1
    for u in range(lo_lane, hi_lane):
        count = placed.ptr[u]
        placed.ptr[u] = fill[u] = start
        start += count
    ptr = placed.ptr
    for r in range(chunks):
        if r != c:
            at = (room + 1) * (r * n // chunks)
            for e in range(at, at + placed.stray_count[r]):
                lane = placed.stray_lane[e]
                if lo_lane <= lane < hi_lane:
                    k, q = placed.stray_slot[e], placed.stray_p[e]
                    _insert(ptr, fill, out_slot, out_uid, out_p, out_signalling, k, lane, q, False)
            continue
        e = room * (c * n // chunks)
        end = e + placed.side_count[c]
        for k in range(c * n // chunks, (c + 1) * n // chunks):
            lane = placed.lane[k]
            if lo_lane <= lane < hi_lane:
                _insert(
                    ptr, fill, out_slot, out_uid, out_p, out_signalling, k, lane, placed.p[k], False
                )
            while e < end and placed.side_slot[e] == k:
                lane = placed.side_lane[e]
                if lo_lane <= lane < hi_lane:
                    _insert(
                        ptr, fill, out_slot, out_uid, out_p, out_signalling, k, lane,
                        placed.side_p[e], False,
                    )  # fmt: skip
                e += 1
    for e in range(extra_lane.shape[0]):
        lane = extra_lane[e]
        if lo_lane <= lane < hi_lane:
            _insert(
                ptr, fill, out_slot, out_uid, out_p, out_signalling, extra_slot[e], lane,
                extra_p[e], True,
            )  # fmt: skip


_sort_lanes = njit_rows(_sort_lane_rows)


@njit
def _runs(ptr: IntArray) -> tuple[IntArray, IntArray, IntArray, FloatArray, BoolArray]:
    """Turns the counts by lane in ``ptr[1:]`` into the lanes' run starts, in place, and
    returns the first free place of each run and the sorted entries' arrays (slot, uid,
    progress, signalling), not yet filled."""
    lanes = ptr.shape[0] - 1
    for u in range(lanes):
        ptr[u + 1] += ptr[u]
    total = ptr[lanes]
    return (
        ptr[:-1].copy(),
        np.empty(total, dtype=np.int64),
        np.empty(total, dtype=np.int64),
        np.empty(total, dtype=np.float64),
        np.empty(total, dtype=np.bool_),
    )


@njit_leaf
def _insert(
    ptr: IntArray,
    fill: IntArray,
    out_slot: IntArray,
    out_uid: IntArray,
    out_p: FloatArray,
    out_signalling: BoolArray,
    k: int,
    u: int,
    q: float,
    signalling: bool,
) -> None:
    """Enters slot k at progress q into lane u's run of the sorted entries (after the
    entries of the same progress entered before it)."""
    j = fill[u]
    fill[u] += 1
    while j > ptr[u] and out_p[j - 1] > q:
        out_p[j] = out_p[j - 1]
        out_slot[j] = out_slot[j - 1]
        out_signalling[j] = out_signalling[j - 1]
        j -= 1
    out_p[j] = q
    out_slot[j] = k
    out_signalling[j] = signalling
    out_uid[fill[u] - 1] = u


def occupancy(
    lanes: int, slot: IntArray, uid: IntArray, p: FloatArray, reach: FloatArray
) -> LaneOccupancy:
    """The occupancy of ``lanes`` lane uids by entries (slot, uid, p), with the actors'
    ``reach`` by slot; entries of uid -1 are left out."""
    reach = np.ascontiguousarray(reach, dtype=np.float64)
    return LaneOccupancy(
        *sort_entries(
            lanes,
            np.ascontiguousarray(slot, dtype=np.int64),
            np.ascontiguousarray(uid, dtype=np.int64),
            np.ascontiguousarray(p, dtype=np.float64),
        ),
        reach,
        float(reach.max(initial=0.0)),
    )


@njit
def sort_entries(
    lanes: int, slot: IntArray, uid: IntArray, p: FloatArray
) -> tuple[IntArray, IntArray, FloatArray, BoolArray, IntArray]:
    """Entries sorted by lane (a counting sort), then by progress within each lane (an
    insertion sort: a lane holds a few dozen actors at most); stable, so equal progress
    keeps the input order. Entries of lane -1 are left out; none is signalling. Returns
    ``(slot, uid, p, signalling, ptr)``."""
    ptr = np.zeros(lanes + 1, dtype=np.int64)
    for k in range(uid.size):
        if uid[k] >= 0:
            ptr[uid[k] + 1] += 1
    fill, out_slot, out_uid, out_p, out_signalling = _runs(ptr)
    for k in range(uid.size):
        if uid[k] >= 0:
            _insert(
                ptr, fill, out_slot, out_uid, out_p, out_signalling, slot[k], uid[k], p[k], False
            )
    return out_slot, out_uid, out_p, out_signalling, ptr


@njit_leaf
def lower(occ: LaneOccupancy, lane: int, p: float) -> int:
    """First index of ``lane``'s entries with progress >= p (the window's end if none)."""
    lo, hi = occ.ptr[lane], occ.ptr[lane + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if occ.p[mid] < p:
            lo = mid + 1
        else:
            hi = mid
    return int(lo)


@njit_leaf
def upper(occ: LaneOccupancy, lane: int, p: float) -> int:
    """First index of ``lane``'s entries with progress > p (the window's end if none)."""
    lo, hi = occ.ptr[lane], occ.ptr[lane + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if occ.p[mid] <= p:
            lo = mid + 1
        else:
            hi = mid
    return int(lo)


@njit_leaf
def rearmost(occ: LaneOccupancy, lane: int) -> int:
    """Index of the rearmost entry of ``lane`` (-1: empty lane, or lane -1)."""
    if lane < 0 or occ.ptr[lane + 1] <= occ.ptr[lane]:
        return -1
    return int(occ.ptr[lane])
