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
import numpy.typing as npt
from numba import prange

from roadsim._jit import CHUNKS, chunk, njit, njit_leaf, njit_loop, njit_rows
from roadsim._trig import sin_cos
from roadsim.world.lane_kernels import LaneArrays, bounds, direction, prefetch_ahead, progress

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


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
    return LaneOccupancy(*_footprints(la, active, uid, s, t, heading, length, width, *extra))


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
) -> tuple[IntArray, IntArray, FloatArray, IntArray, FloatArray]:
    """`footprints` in one compiled call: ``(slot, uid, p, ptr, reach)``."""
    lanes = la.length.shape[0]
    n = uid.size
    # Three entries a slot (its lane, and the neighbours on either side; lane -1 where it
    # does not reach into one, and for a slot with no actor on a lane), then the extra
    # entries.
    m = 3 * n + extra_slot.size
    slot = np.empty(m, dtype=np.int64)
    lane = np.empty(m, dtype=np.int64)
    p = np.empty(m)
    reach = np.empty(n)
    _place(la, active, uid, s, t, heading, length, width, slot, lane, p, reach, np.arange(n))
    slot[3 * n :], lane[3 * n :], p[3 * n :] = extra_slot, extra_lane, extra_p
    out_slot, out_uid, out_p, ptr = sort_entries(lanes, slot, lane, p)
    return out_slot, out_uid, out_p, ptr, reach


@njit_rows
def _place(
    la: LaneArrays,
    active: BoolArray,
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
    heading: FloatArray,
    length: FloatArray,
    width: FloatArray,
    slot: IntArray,
    lane: IntArray,
    p: FloatArray,
    reach: FloatArray,
    order: IntArray,
) -> None:
    """`_place_rows`, the slots (``order``: all of them, in order) split over the
    threads (`roadsim._jit.njit_rows`)."""
    for c in prange(CHUNKS):
        _place_rows(
            la, active, uid, s, t, heading, length, width, slot, lane, p, reach, order,
            chunk(order, c, CHUNKS),
        )  # fmt: skip


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
    slot: IntArray,
    lane: IntArray,
    p: FloatArray,
    reach: FloatArray,
    slots: IntArray,
    order: IntArray,
) -> None:
    """The entries ``3 k``, ``3 k + 1`` and ``3 k + 2`` of the slots k in ``order``, a
    run of ``slots`` (0, 1, 2, ..., for the prefetching): the actor's own lane, and its
    left and right neighbours where it reaches into them (lane -1 where not, and all
    three for a slot with no active actor on a lane); and its ``reach``, by slot."""
    lanes = la.length.shape[0]
    for j in range(order.shape[0]):
        prefetch_ahead(la, uid, s, slots, order, j, 2)
        k = order[j]
        u = uid[k]
        if not (active[k] and 0 <= u < lanes):
            for e in range(3 * k, 3 * k + 3):
                slot[e], lane[e], p[e] = k, -1, 0.0
            reach[k] = 0.0
            continue
        q = progress(la, u, s[k])
        slot[3 * k], lane[3 * k], p[3 * k] = k, u, q
        lo, hi = bounds(la, u, q)
        # |cos| and |sin| of the angle d between the actor and the lane.
        dx, dy = direction(la, u, q)
        sh, ch = sin_cos(heading[k])
        c, sn = math.fabs(ch * dx + sh * dy), math.fabs(sh * dx - ch * dy)
        reach[k] = 0.5 * (length[k] * c + width[k] * sn)
        side = 0.5 * (length[k] * sn + width[k] * c)
        offset = la.sign[u] * (t[k] - 0.5 * (lo + hi))  # + left of the lane's direction
        half = 0.5 * (hi - lo)
        for e, left in ((3 * k + 1, True), (3 * k + 2, False)):
            over = offset + side > half if left else offset - side < -half
            other = la.left_uid[u] if left else la.right_uid[u]
            slot[e], lane[e], p[e] = k, -1, 0.0
            if over and other >= 0 and la.sign[other] != 0.0:
                lane[e] = other
                p[e] = q if la.sign[other] == la.sign[u] else la.length[other] - q


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
    for u in range(lanes):
        ptr[u + 1] += ptr[u]
    fill = ptr[:-1].copy()
    n = ptr[lanes]
    out_slot = np.empty(n, dtype=np.int64)
    out_uid = np.empty(n, dtype=np.int64)
    out_p = np.empty(n, dtype=np.float64)
    for k in range(uid.size):
        u = uid[k]
        if u < 0:
            continue
        j = fill[u]
        fill[u] += 1
        # Insert into the lane's sorted run so far.
        q = p[k]
        while j > ptr[u] and out_p[j - 1] > q:
            out_p[j] = out_p[j - 1]
            out_slot[j] = out_slot[j - 1]
            j -= 1
        out_p[j] = q
        out_slot[j] = slot[k]
        out_uid[fill[u] - 1] = u
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
