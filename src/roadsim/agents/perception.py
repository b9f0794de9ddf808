"""What a driver sees along its lane: who is ahead and behind, at which gap.

`LaneOccupancy` sorts every actor on a lane by (lane uid, progress) once per tick; a
vehicle in the middle of a lane change is entered in both its lane and its target lane, so
that followers in either lane keep their distance. The queries are compiled scalar
functions (`roadsim._jit.njit`) that the traffic kernels call per vehicle: a binary search
inside the lane's window of the sorted arrays, then the first actors of the next lanes of
the vehicle's route.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from roadsim._jit import njit, njit_leaf
from roadsim.world.lane_kernels import LaneArrays, choose_next

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]

_INF = np.inf


class LaneOccupancy(NamedTuple):
    """Actors on lanes, sorted by (uid, progress), ties in the order they were entered.

    Attributes:
        slot: Actor slot of each entry.
        uid: Lane uid of each entry.
        p: Progress of the actor's centre along that lane record (m).
        ptr: CSR pointers by lane uid: lane ``u``'s entries are ``ptr[u]:ptr[u + 1]``.
    """

    slot: IntArray
    uid: IntArray
    p: FloatArray
    ptr: IntArray


def occupancy(lanes: int, slot: IntArray, uid: IntArray, p: FloatArray) -> LaneOccupancy:
    """The occupancy of ``lanes`` lane uids by entries (slot, uid, p), uid >= 0."""
    return LaneOccupancy(
        *sort_entries(
            lanes,
            np.ascontiguousarray(slot, dtype=np.int64),
            np.ascontiguousarray(uid, dtype=np.int64),
            np.ascontiguousarray(p, dtype=np.float64),
        )
    )


@njit
def sort_entries(
    lanes: int, slot: IntArray, uid: IntArray, p: FloatArray
) -> tuple[IntArray, IntArray, FloatArray, IntArray]:
    """Entries sorted by lane (a counting sort), then by progress within each lane (an
    insertion sort: a lane holds a few dozen actors at most); stable, so equal progress
    keeps the input order. Returns ``(slot, uid, p, ptr)``."""
    n = uid.size
    ptr = np.zeros(lanes + 1, dtype=np.int64)
    for k in range(n):
        ptr[uid[k] + 1] += 1
    for u in range(lanes):
        ptr[u + 1] += ptr[u]
    fill = ptr[:-1].copy()
    out_slot = np.empty(n, dtype=np.int64)
    out_uid = np.empty(n, dtype=np.int64)
    out_p = np.empty(n, dtype=np.float64)
    for k in range(n):
        u = uid[k]
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
def first_ahead(occ: LaneOccupancy, lane: int, p: float) -> int:
    """Index of the first entry of ``lane`` with progress > p (-1: none)."""
    lo, hi = occ.ptr[lane], occ.ptr[lane + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if occ.p[mid] <= p:
            lo = mid + 1
        else:
            hi = mid
    return int(lo) if lo < occ.ptr[lane + 1] else -1


@njit_leaf
def last_behind(occ: LaneOccupancy, lane: int, p: float) -> int:
    """Index of the last entry of ``lane`` with progress < p (-1: none)."""
    lo, hi = occ.ptr[lane], occ.ptr[lane + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if occ.p[mid] < p:
            lo = mid + 1
        else:
            hi = mid
    return int(lo - 1) if lo > occ.ptr[lane] else -1


@njit_leaf
def rearmost(occ: LaneOccupancy, lane: int) -> int:
    """Index of the rearmost entry of ``lane`` (-1: empty lane, or lane -1)."""
    if lane < 0 or occ.ptr[lane + 1] <= occ.ptr[lane]:
        return -1
    return int(occ.ptr[lane])


@njit_leaf
def leader_of(
    occ: LaneOccupancy,
    la: LaneArrays,
    me: int,
    lane: int,
    p: float,
    salt: np.uint64,
    half_length: FloatArray,
    speed: FloatArray,
    route: IntArray,
) -> tuple[float, float, int]:
    """The nearest actor ahead of vehicle ``me`` along its route.

    Args:
        occ: This tick's occupancy.
        la: Lane arrays.
        me: The vehicle's slot (an actor never leads itself).
        lane, p: The lane searched first and the vehicle's progress on it.
        salt: The vehicle's route salt.
        half_length: Half the length of every actor, by slot.
        speed: Speed of every actor, by slot.
        route: Filled with the next ``route.size`` lanes of the route (-1 past its end);
            that many lane records are searched after ``lane``.

    Returns:
        ``(gap, leader_speed, leader_slot)``: bumper-to-bumper gap (inf: nobody), the
        leader's speed (0: nobody) and slot (-1: nobody).
    """
    own = half_length[me]
    gap, lead_v, who = _INF, 0.0, -1
    k = first_ahead(occ, lane, p)
    searching = k < 0
    if k >= 0:
        who = occ.slot[k]
        gap = occ.p[k] - p - own - half_length[who]
        lead_v = speed[who]
    offset = la.length[lane] - p  # from my centre to the start of the next lane record
    cur = lane
    for h in range(route.size):
        cur = choose_next(la, salt, cur)
        route[h] = cur
        if searching:
            k = rearmost(occ, cur)
            if k >= 0 and occ.slot[k] != me:
                who = occ.slot[k]
                gap = offset + occ.p[k] - own - half_length[who]
                lead_v = speed[who]
                searching = False
            elif cur < 0:
                searching = False
        if cur >= 0:
            offset += la.length[cur]
    return float(gap), float(lead_v), int(who)


@njit_leaf
def follower_of(
    occ: LaneOccupancy,
    la: LaneArrays,
    lane: int,
    p: float,
    half: float,
    half_length: FloatArray,
) -> tuple[float, int]:
    """The nearest actor behind progress p in ``lane`` or, if none, at the front of one
    of its predecessors (the nearest of them).

    Returns:
        ``(gap, slot)``: bumper-to-bumper gap (inf: nobody) and the follower's slot (-1).
    """
    k = last_behind(occ, lane, p)
    if k >= 0:
        other = occ.slot[k]
        return float(p - occ.p[k] - half - half_length[other]), int(other)
    gap, who = _INF, -1
    for j in range(la.prev_ptr[lane], la.prev_ptr[lane + 1]):
        pred = la.prev_idx[j]
        hi = occ.ptr[pred + 1]
        if hi > occ.ptr[pred]:
            other = occ.slot[hi - 1]
            g = p + la.length[pred] - occ.p[hi - 1] - half - half_length[other]
            if g < gap:
                gap, who = g, other
    return float(gap), int(who)


@njit
def leaders(
    occ: LaneOccupancy,
    la: LaneArrays,
    me: IntArray,
    lane: IntArray,
    p: FloatArray,
    salt: UIntArray,
    half_length: FloatArray,
    speed: FloatArray,
    hops: int,
) -> tuple[FloatArray, FloatArray, IntArray, IntArray]:
    """`leader_of` for many vehicles: ``(gap, leader_speed, route, leader_slot)``, the
    route of shape (N, hops)."""
    n = me.size
    gap = np.empty(n)
    lead_v = np.empty(n)
    who = np.empty(n, dtype=np.int64)
    route = np.full((n, hops), -1, dtype=np.int64)
    for i in range(n):
        gap[i], lead_v[i], who[i] = leader_of(
            occ, la, me[i], lane[i], p[i], salt[me[i]], half_length, speed, route[i]
        )
    return gap, lead_v, route, who
