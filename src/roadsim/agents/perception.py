"""What a driver sees along its lane: who is ahead and behind, at which gap.

`LaneOccupancy` sorts every actor on a lane by (lane uid, progress) once per tick; a
vehicle in the middle of a lane change is entered in both its lane and its target lane, so
that followers in either lane keep their distance. Queries are vectorised binary searches
inside each lane's window of the sorted arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from roadsim.world.routing import LaneInfo

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]


@dataclass(frozen=True)
class LaneOccupancy:
    """Actors on lanes, sorted by (uid, progress).

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

    @classmethod
    def build(cls, lanes: int, slot: IntArray, uid: IntArray, p: FloatArray) -> LaneOccupancy:
        # By lane, then progress, then input order (two stable sorts beat a lexsort).
        order = np.argsort(p, kind="stable")
        order = order[np.argsort(uid[order], kind="stable")]
        counts = np.bincount(uid, minlength=lanes)
        ptr = np.zeros(lanes + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        return cls(slot[order], uid[order], p[order], ptr)

    def ahead(self, lane: IntArray, p: FloatArray) -> IntArray:
        """Index of the first entry of ``lane`` with progress > p (-1: none)."""
        lo, hi = self.ptr[lane], self.ptr[lane + 1]
        k = lo + _count_in_window(self.p, lo, hi, p, strict=False)
        return np.where(k < hi, k, -1)

    def behind(self, lane: IntArray, p: FloatArray) -> IntArray:
        """Index of the last entry of ``lane`` with progress < p (-1: none)."""
        lo, hi = self.ptr[lane], self.ptr[lane + 1]
        k = lo + _count_in_window(self.p, lo, hi, p, strict=True) - 1
        return np.where(k >= lo, k, -1)

    def first(self, lane: IntArray) -> IntArray:
        """Index of the rearmost entry of each lane (-1: empty lane or lane -1)."""
        lane_c = np.maximum(lane, 0)
        lo, hi = self.ptr[lane_c], self.ptr[lane_c + 1]
        return np.where((lane >= 0) & (hi > lo), lo, -1)


def leader(
    occ: LaneOccupancy,
    info: LaneInfo,
    me: IntArray,
    lane: IntArray,
    p: FloatArray,
    salt: UIntArray,
    half_length: FloatArray,
    speed_all: FloatArray,
    hops: int,
) -> tuple[FloatArray, FloatArray, IntArray, IntArray]:
    """The nearest actor ahead of each vehicle along its route.

    Args:
        occ: This tick's occupancy.
        info: Lane tables.
        me: The vehicles' slots (an actor never leads itself).
        lane, p: The lane searched first and the vehicle's progress on it.
        salt: Route salts.
        half_length: Half the length of every actor, by slot.
        speed_all: Speed of every actor, by slot.
        hops: How many further lane records of the route to search.

    Returns:
        ``(gap, leader_speed, route, leader_slot)``: bumper-to-bumper gap (inf: nobody),
        the leader's speed, the route's next ``hops`` lanes, shape (N, hops), -1 past its
        end, and the leader's slot (-1: nobody).
    """
    n = lane.size
    gap = np.full(n, np.inf)
    lead_v = np.zeros(n)
    who = np.full(n, -1, dtype=np.int64)
    own = half_length[me]

    k = occ.ahead(lane, p)
    found = k >= 0
    kc = np.maximum(k, 0)
    other = occ.slot[kc]
    gap = np.where(found, occ.p[kc] - p - own - half_length[other], gap)
    lead_v = np.where(found, speed_all[other], lead_v)
    who = np.where(found, other, who)

    route = np.full((n, hops), -1, dtype=np.int64)
    offset = info.length[lane] - p  # from my centre to the start of the next lane record
    cur = lane
    searching = ~found
    for h in range(hops):
        cur = info.choose_next(salt, cur)
        route[:, h] = cur
        valid = cur >= 0
        k = occ.first(cur)
        kc = np.maximum(k, 0)
        other = occ.slot[kc]
        hit = searching & (k >= 0) & (other != me)
        gap = np.where(hit, offset + occ.p[kc] - own - half_length[other], gap)
        lead_v = np.where(hit, speed_all[other], lead_v)
        who = np.where(hit, other, who)
        searching &= ~hit & valid
        offset = offset + np.where(valid, info.length[np.maximum(cur, 0)], 0.0)
    return gap, lead_v, route, who


def follower(
    occ: LaneOccupancy,
    info: LaneInfo,
    lane: IntArray,
    p: FloatArray,
    half: FloatArray,
    half_length: FloatArray,
) -> tuple[FloatArray, IntArray]:
    """The nearest actor behind progress p in ``lane`` or, if none, at the end of one of
    its predecessors (the nearest of them).

    Returns:
        ``(gap, slot)``: bumper-to-bumper gap (inf: nobody) and the follower's slot (-1).
    """
    gap = np.full(lane.size, np.inf)
    who = np.full(lane.size, -1, dtype=np.int64)
    k = occ.behind(lane, p)
    found = k >= 0
    kc = np.maximum(k, 0)
    other = occ.slot[kc]
    gap = np.where(found, p - occ.p[kc] - half - half_length[other], gap)
    who = np.where(found, other, who)
    count = info.prev_ptr[lane + 1] - info.prev_ptr[lane]
    for j in range(int(count[~found].max(initial=0))):
        ask = ~found & (count > j)
        pred = info.prev_idx[np.where(ask, info.prev_ptr[lane] + j, 0)]
        hi = occ.ptr[pred + 1]
        has = ask & (hi > occ.ptr[pred])
        kc = np.maximum(hi - 1, 0)
        other = occ.slot[kc]
        g = p + info.length[pred] - occ.p[kc] - half - half_length[other]
        better = has & (g < gap)
        gap = np.where(better, g, gap)
        who = np.where(better, other, who)
    return gap, who


def _count_in_window(
    values: FloatArray, lo: IntArray, hi: IntArray, x: FloatArray, *, strict: bool
) -> IntArray:
    """For each i, how many of the sorted values[lo[i]:hi[i]] are < x[i] (strict) or <= x[i]."""
    left = lo.copy()
    right = hi.copy()
    if left.size == 0:
        return left
    widest = int((hi - lo).max())
    last = values.size - 1
    for _ in range(max(widest, 1).bit_length()):
        mid = (left + right) >> 1
        v = values[np.clip(mid, 0, max(last, 0))] if values.size else np.zeros(mid.size)
        below = (v < x) if strict else (v <= x)
        go_right = (mid < right) & below
        left = np.where(go_right, mid + 1, left)
        right = np.where(go_right, right, mid)
    return left - lo
