"""Who is on which lane: every actor sorted by (lane, progress), once per tick.

`footprints` enters each active actor on a lane in its own lane, at the progress of its
centre, and in each neighbour lane its footprint reaches into (an actor changing lanes,
a truck wider than its lane, a box across two lanes). `LaneOccupancy` is the sorted
result; the compiled look-ups below find where a progress falls among a lane's entries with
a binary search inside the lane's window. The driver sensor
(`roadsim.sensors.driver`) walks lanes with them, and so, through it, does traffic.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from roadsim._jit import chunk, chunks_for, njit, njit_leaf, njit_loop, njit_rows
from roadsim._trig import sin_cos
from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.world.lane_kernels import LaneArrays, bounds, direction, prefetch_ahead, progress


class LaneOccupancy(NamedTuple):
    """Actors on lanes, sorted by (uid, progress), ties in the order they were entered.

    Attributes:
        slot: Actor slot of each entry.
        uid: Lane uid of each entry.
        p: Progress of the actor's centre along that lane record (m).
        ptr: CSR pointers by lane uid: lane ``u``'s entries are ``ptr[u]:ptr[u + 1]``.
        reach: Per actor slot, half its extent along its own lane (m): half its length
            for an actor aligned with the lane, half its width for one standing across.
    """

    slot: IntArray
    uid: IntArray
    p: FloatArray
    ptr: IntArray
    reach: FloatArray


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
    """The occupancy of this tick: every active actor on a lane, in its own lane and in
    the neighbour lanes its footprint overlaps.

    An actor at offset ``o`` from its lane's centre line, at angle ``d`` to the lane,
    reaches ``0.5 (L |sin d| + W |cos d|)`` to each side; where that passes the lane's
    edge, the actor is in the neighbour lane on that side too (any lane type, either
    driving direction), at the same place along the road.

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
    entries of the slots that reach into a neighbour lane (a few hundred of 10,000) are
    listed apart, as ``side_slot``, ``side_lane``, ``side_p``: chunk c of the slots
    (`roadsim._jit.chunk`) lists its own from index ``2 a`` on, a its first slot,
    ``side_count[c]`` of them, by slot, the left neighbour before the right. (Three
    entries a slot, most of them empty, made the sort read three times as much.)

    The sort is split over the threads by lanes: chunk c sorts the lanes
    ``edge[c]:edge[c + 1]``, which start at the lane of its first slot, so that with the
    slots in lane order (as the simulation keeps them) nearly every entry of a chunk's
    slots falls in its own lanes. ``ptr[u]`` counts lane u's entries from the slots of
    the chunk that owns u (``own_count[c]`` of them in chunk c's lanes); the entries
    of a chunk's slots that fall in another chunk's lanes, strays (vehicles that moved
    on to another lane since the slots were sorted), are listed apart, in slot order,
    as ``stray_slot``, ``stray_lane``, ``stray_p``: chunk c's from index ``3 a`` on,
    ``stray_count[c]`` of them."""

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


@njit
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
) -> tuple[IntArray, IntArray, FloatArray, IntArray, FloatArray]:
    """`footprints` in one compiled call: ``(slot, uid, p, ptr, reach)``. Two passes
    over the threads: `_place` (entries, counted by lane), then `_sort_lanes`; between
    them only the size of the result is found."""
    n = uid.size
    lanes = la.length.shape[0]
    placed = Placed(
        np.empty(n, dtype=np.int64),
        np.empty(n),
        np.empty(2 * n, dtype=np.int64),
        np.empty(2 * n, dtype=np.int64),
        np.empty(2 * n),
        np.zeros(chunks, dtype=np.int64),
        _edges(active, uid, lanes, chunks),
        np.empty(lanes + 1, dtype=np.int64),
        np.zeros(chunks, dtype=np.int64),
        np.empty(3 * n, dtype=np.int64),
        np.empty(3 * n, dtype=np.int64),
        np.empty(3 * n),
        np.zeros(chunks, dtype=np.int64),
    )
    reach = np.empty(n)
    _place(chunks, la, active, uid, s, t, heading, length, width, placed, reach, np.arange(n))
    total = 0
    for c in range(chunks):
        total += placed.own_count[c] + placed.stray_count[c]
    for e in range(extra_lane.shape[0]):
        if extra_lane[e] >= 0:
            total += 1
    placed.ptr[lanes] = total
    out_slot = np.empty(total, dtype=np.int64)
    out_uid = np.empty(total, dtype=np.int64)
    out_p = np.empty(total)
    _sort_lanes(
        chunks, placed, extra_slot, extra_lane, extra_p, np.empty(lanes, dtype=np.int64),
        out_slot, out_uid, out_p,
    )  # fmt: skip
    return out_slot, out_uid, out_p, placed.ptr, reach


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
    the actor's own lane (lane -1 for a slot with no active actor on a lane), and its
    left and right neighbours where it reaches into them; and its ``reach``, by slot.
    Counts the entries in the chunk's own lanes, and lists those in others (see
    `Placed`)."""
    lanes = la.length.shape[0]
    lo_lane, hi_lane = placed.edge[c], placed.edge[c + 1]
    for u in range(lo_lane, hi_lane):
        placed.ptr[u] = 0
    order = chunk(slots, c, chunks)
    side = 2 * (c * slots.shape[0] // chunks)
    stray = 3 * (c * slots.shape[0] // chunks)
    first, first_stray = side, stray
    own = 0
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
            stray = _stray(placed, stray, k, u, q)
        lo, hi = bounds(la, u, q)
        # |cos| and |sin| of the angle d between the actor and the lane.
        dx, dy = direction(la, u, q)
        sh, ch = sin_cos(heading[k])
        cos_d, sin_d = math.fabs(ch * dx + sh * dy), math.fabs(sh * dx - ch * dy)
        reach[k] = 0.5 * (length[k] * cos_d + width[k] * sin_d)
        across = 0.5 * (length[k] * sin_d + width[k] * cos_d)
        offset = la.sign[u] * (t[k] - 0.5 * (lo + hi))  # + left of the lane's direction
        half = 0.5 * (hi - lo)
        for left in (True, False):
            over = offset + across > half if left else offset - across < -half
            other = la.left_uid[u] if left else la.right_uid[u]
            if over and other >= 0 and la.sign[other] != 0.0:
                qo = q if la.sign[other] == la.sign[u] else la.length[other] - q
                placed.side_slot[side] = k
                placed.side_lane[side] = other
                placed.side_p[side] = qo
                side += 1
                if lo_lane <= other < hi_lane:
                    placed.ptr[other] += 1
                    own += 1
                else:
                    stray = _stray(placed, stray, k, other, qo)
    placed.side_count[c] = side - first
    placed.stray_count[c] = stray - first_stray
    placed.own_count[c] = own


_place = njit_rows(_place_rows)


@njit_leaf
def _stray(placed: Placed, at: int, k: int, u: int, q: float) -> int:
    """Lists slot k's entry in lane u, at q, as a stray at ``at``; returns the next place."""
    placed.stray_slot[at] = k
    placed.stray_lane[at] = u
    placed.stray_p[at] = q
    return at + 1


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
    c: int,
    chunks: int,
) -> None:
    """`sort_entries` of the entries in chunk c's lanes (see `Placed`): those of `_place`
    in slot order, each slot's own lane before its neighbours, then the extra ones.
    Writes the lanes' run starts into ``placed.ptr`` (their counts until then) and
    their entries into ``out_*``, where the entries of the chunks' lanes before follow
    each other."""
    n = placed.lane.shape[0]
    lo_lane, hi_lane = placed.edge[c], placed.edge[c + 1]
    # The entries of the lanes before this chunk's, and this chunk's counts.
    start = 0
    for r in range(c):
        start += placed.own_count[r]
    for r in range(chunks):
        at = 3 * (r * n // chunks)
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
            at = 3 * (r * n // chunks)
            for e in range(at, at + placed.stray_count[r]):
                lane = placed.stray_lane[e]
                if lo_lane <= lane < hi_lane:
                    k, q = placed.stray_slot[e], placed.stray_p[e]
                    _insert(ptr, fill, out_slot, out_uid, out_p, k, lane, q)
            continue
        e = 2 * (c * n // chunks)
        end = e + placed.side_count[c]
        for k in range(c * n // chunks, (c + 1) * n // chunks):
            lane = placed.lane[k]
            if lo_lane <= lane < hi_lane:
                _insert(ptr, fill, out_slot, out_uid, out_p, k, lane, placed.p[k])
            while e < end and placed.side_slot[e] == k:
                lane = placed.side_lane[e]
                if lo_lane <= lane < hi_lane:
                    _insert(ptr, fill, out_slot, out_uid, out_p, k, lane, placed.side_p[e])
                e += 1
    for e in range(extra_lane.shape[0]):
        lane = extra_lane[e]
        if lo_lane <= lane < hi_lane:
            _insert(ptr, fill, out_slot, out_uid, out_p, extra_slot[e], lane, extra_p[e])


_sort_lanes = njit_rows(_sort_lane_rows)


@njit
def _runs(ptr: IntArray) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
    """Turns the counts by lane in ``ptr[1:]`` into the lanes' run starts, in place, and
    returns the first free place of each run and the sorted entries' arrays (slot, uid,
    progress), not yet filled."""
    lanes = ptr.shape[0] - 1
    for u in range(lanes):
        ptr[u + 1] += ptr[u]
    total = ptr[lanes]
    return (
        ptr[:-1].copy(),
        np.empty(total, dtype=np.int64),
        np.empty(total, dtype=np.int64),
        np.empty(total, dtype=np.float64),
    )


@njit_leaf
def _insert(
    ptr: IntArray,
    fill: IntArray,
    out_slot: IntArray,
    out_uid: IntArray,
    out_p: FloatArray,
    k: int,
    u: int,
    q: float,
) -> None:
    """Enters slot k at progress q into lane u's run of the sorted entries (after the
    entries of the same progress entered before it)."""
    j = fill[u]
    fill[u] += 1
    while j > ptr[u] and out_p[j - 1] > q:
        out_p[j] = out_p[j - 1]
        out_slot[j] = out_slot[j - 1]
        j -= 1
    out_p[j] = q
    out_slot[j] = k
    out_uid[fill[u] - 1] = u


def occupancy(
    lanes: int, slot: IntArray, uid: IntArray, p: FloatArray, reach: FloatArray
) -> LaneOccupancy:
    """The occupancy of ``lanes`` lane uids by entries (slot, uid, p); entries of uid -1
    are left out."""
    return LaneOccupancy(
        *sort_entries(
            lanes,
            np.ascontiguousarray(slot, dtype=np.int64),
            np.ascontiguousarray(uid, dtype=np.int64),
            np.ascontiguousarray(p, dtype=np.float64),
        ),
        np.ascontiguousarray(reach, dtype=np.float64),
    )


@njit
def sort_entries(
    lanes: int, slot: IntArray, uid: IntArray, p: FloatArray
) -> tuple[IntArray, IntArray, FloatArray, IntArray]:
    """Entries sorted by lane (a counting sort), then by progress within each lane (an
    insertion sort: a lane holds a few dozen actors at most); stable, so equal progress
    keeps the input order. Entries of lane -1 are left out. Returns ``(slot, uid, p,
    ptr)``."""
    ptr = np.zeros(lanes + 1, dtype=np.int64)
    for k in range(uid.size):
        if uid[k] >= 0:
            ptr[uid[k] + 1] += 1
    fill, out_slot, out_uid, out_p = _runs(ptr)
    for k in range(uid.size):
        if uid[k] >= 0:
            _insert(ptr, fill, out_slot, out_uid, out_p, slot[k], uid[k], p[k])
    return out_slot, out_uid, out_p, ptr


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
