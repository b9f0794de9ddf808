"""Where traffic starts: the vehicles a scenario asks for, spread over its spawn lanes.

Each spawn lane offers the stretch ``[min_gap / 2, usable - min_gap / 2]`` of its progress
(so that vehicles in consecutive lanes keep ``min_gap`` too), less the stretches that must
stay free (around the ego and objects). A stretch of free length F holds vehicles of
lengths l_1..l_m when ``sum(l_i) + (m - 1) * min_gap <= F``. The vehicles are shared out
over the stretches in proportion to their length (largest remainders), those that do not
fit where they were sent go to the stretches with most room left, and within a stretch
the room left over is split at random among the gaps. So every request up to what the
lanes hold is met exactly, the vehicles are spread over the whole spawn area, and the same
seed gives the same places.

Long vehicles are placed first, on the lanes they can drive on from (`place_apart`), and
the others around them.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import overload

import numpy as np

from roadsim._types import BoolArray, FloatArray, IntArray

#: Stretches of lanes ``(lane, start, end)``: lane uids, and progress along each (m).
Intervals = tuple[IntArray, FloatArray, FloatArray]


@dataclass(frozen=True)
class Stretches:
    """Free stretches of lane progress: ``lane[k]`` from ``start[k]`` to ``end[k]`` (m)."""

    lane: IntArray
    start: FloatArray
    end: FloatArray

    @classmethod
    def of_lanes(
        cls,
        lanes: IntArray,
        usable: FloatArray,
        min_gap: float,
        blocked: tuple[IntArray, FloatArray, FloatArray] | None = None,
    ) -> Stretches:
        """The stretches of ``lanes`` (usable from 0 to ``usable``, per lane) that are
        at least ``min_gap / 2`` from the lanes' ends and outside the ``blocked``
        intervals ``(lane, start, end)``."""
        half = 0.5 * min_gap
        out_lane: list[int] = []
        out_start: list[float] = []
        out_end: list[float] = []
        cuts: dict[int, list[tuple[float, float]]] = {}
        if blocked is not None:
            for lane, a, b in zip(*(v.tolist() for v in blocked), strict=True):
                cuts.setdefault(lane, []).append((a, b))
        for lane, room in zip(lanes.tolist(), usable.tolist(), strict=True):
            at = half
            for a, b in sorted(cuts.get(lane, ())):
                if a > at:
                    out_lane.append(lane)
                    out_start.append(at)
                    out_end.append(min(a, room - half))
                at = max(at, b)
            out_lane.append(lane)
            out_start.append(at)
            out_end.append(room - half)
        start = np.array(out_start, dtype=np.float64)
        end = np.array(out_end, dtype=np.float64)
        keep = end > start
        return cls(np.array(out_lane, dtype=np.int64)[keep], start[keep], end[keep])


@dataclass(frozen=True)
class Placement:
    """Placed vehicles: ``vehicle`` indexes the asked vehicles, ``lane`` and ``progress``
    (m along the lane, its direction of travel) give where each one's centre is."""

    vehicle: IntArray
    lane: IntArray
    progress: FloatArray


def place(
    length: FloatArray, free: Stretches, min_gap: float, rng: np.random.Generator
) -> Placement:
    """Places as many of the vehicles (lengths ``length``, in the order given) as the
    stretches ``free`` hold, keeping ``min_gap`` between them; see the module docstring.

    Vehicles are dropped from the end of the order only when no stretch has room for
    them, so a request the stretches can hold is always met in full.
    """
    n, k = length.size, free.lane.size
    if n == 0 or k == 0:
        return Placement(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    # A stretch's budget: its free length plus one gap, which each vehicle's length plus
    # one gap is drawn from.
    budget = free.end - free.start + min_gap
    need = length + min_gap

    # Shares in proportion to budget, whole numbers by largest remainders.
    share = n * budget / budget.sum()
    count = np.floor(share).astype(np.int64)
    rest = n - int(count.sum())
    if rest > 0:
        count[np.argsort(-(share - count), kind="stable")[:rest]] += 1

    # Each stretch takes its share in order, as far as it fits; the rest wait.
    stretch = np.repeat(np.arange(k), count)
    upto = np.cumsum(need)  # what vehicles 0..v take, v's own need included
    group_first = np.repeat(np.concatenate(([0], np.cumsum(count)[:-1])), count)
    upto -= upto[group_first] - need[group_first]
    fits = upto <= budget[stretch] + 1e-9
    used = np.zeros(k)
    np.add.at(used, stretch[fits], need[fits])

    # Those that did not fit go where most room is left, in order, while any fits.
    waiting = np.flatnonzero(~fits)
    if waiting.size:
        heap = [(-(budget[j] - used[j]), j) for j in range(k)]
        heapq.heapify(heap)
        smallest = float(need.min())
        for v in waiting.tolist():
            room, j = heap[0]
            if -room < smallest - 1e-9:
                break
            if -room + 1e-9 >= need[v]:
                stretch[v] = j
                fits[v] = True
                heapq.heapreplace(heap, (room + need[v], j))

    placed = np.flatnonzero(fits)
    order = placed[np.argsort(stretch[placed], kind="stable")]  # by stretch, in order
    at = stretch[order]
    counts = np.bincount(at, minlength=k)
    gap_need = need[order]
    slack = np.maximum(budget - np.bincount(at, weights=gap_need, minlength=k), 0.0)
    # The slack of a stretch with m vehicles is cut at m uniform points, in ascending
    # order: the piece between two cuts widens the gap between two vehicles.
    cut = rng.random(order.size) * slack[at]
    cut = cut[np.lexsort((cut, at))]
    # What the vehicles before each one in its stretch take (lengths and gaps).
    taken = np.cumsum(gap_need) - gap_need
    group_first = np.repeat(np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    taken -= taken[group_first]
    tail = free.start[at] + cut + taken
    return Placement(order, free.lane[at], tail + 0.5 * length[order])


def place_apart(
    length: FloatArray,
    apart: BoolArray,
    lanes: IntArray,
    usable: FloatArray,
    allowed: BoolArray,
    min_gap: float,
    rng: np.random.Generator,
    blocked: tuple[IntArray, FloatArray, FloatArray] | None = None,
    apart_blocked: tuple[IntArray, FloatArray, FloatArray] | None = None,
) -> Placement:
    """`place` over the stretches of ``lanes`` (`Stretches.of_lanes`), with the vehicles
    marked ``apart`` placed first and on the ``allowed`` lanes alone, outside the
    ``apart_blocked`` intervals too; then the others, and those of the marked that found
    no room there, everywhere else.

    Where no lane is allowed, or every lane and no interval is kept from them, this is
    `place` itself. Only the marked vehicles among those that all the lanes could hold in
    the order given go first, so that a request beyond the lanes' room does not fill them
    with marked vehicles alone.
    """
    if apart_blocked is not None and apart_blocked[0].size == 0:
        apart_blocked = None
    if not apart.any() or not allowed.any() or (allowed.all() and apart_blocked is None):
        return place(length, Stretches.of_lanes(lanes, usable, min_gap, blocked), min_gap, rng)
    room = float(np.maximum(usable - min_gap, 0.0).sum()) + min_gap * lanes.size
    within = np.cumsum(length + min_gap) <= room
    first = np.flatnonzero(apart & within)
    there = Stretches.of_lanes(
        lanes[allowed], usable[allowed], min_gap, joined(blocked, apart_blocked)
    )
    a = place(length[first], there, min_gap, rng)
    placed = first[a.vehicle]
    half = 0.5 * length[placed] + min_gap  # kept free around each, its gaps included
    taken = joined(blocked, (a.lane, a.progress - half, a.progress + half))
    rest = np.setdiff1d(np.arange(length.size), placed)  # (in the order given)
    b = place(length[rest], Stretches.of_lanes(lanes, usable, min_gap, taken), min_gap, rng)
    return Placement(
        np.concatenate((placed, rest[b.vehicle])),
        np.concatenate((a.lane, b.lane)),
        np.concatenate((a.progress, b.progress)),
    )


@overload
def joined(a: Intervals | None, b: Intervals) -> Intervals: ...
@overload
def joined(a: Intervals | None, b: Intervals | None) -> Intervals | None: ...
def joined(a: Intervals | None, b: Intervals | None) -> Intervals | None:
    """Two sets of intervals ``(lane, start, end)`` as one (None: none)."""
    if a is None or b is None:
        return b if a is None else a
    return (
        np.concatenate((a[0], b[0])),
        np.concatenate((a[1], b[1])),
        np.concatenate((a[2], b[2])),
    )
