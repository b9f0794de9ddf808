"""Where lanes lead: the drivable links between lane records, and route choice.

A vehicle's *progress* ``p`` is its distance along its lane record in driving direction,
from where it entered the record: ``s - s0`` on lanes driven along +s, ``s1 - s`` on lanes
driven against s (`roadsim.world.lane_info.LaneInfo` holds the per-lane tables).

Route choice is a pure function of (vehicle salt, lane uid): at a fork a vehicle takes the
successor picked by a 64-bit hash of both (`roadsim.world.lane_kernels.choose_next`), so
its route is fixed by the simulation's seed and needs no state; the salt comes from the
simulation's `numpy.random.SeedSequence`.
"""

from __future__ import annotations

import numpy as np

from roadsim._types import BoolArray, FloatArray, IntArray

__all__ = ["EMPTY_LENGTH", "bypass_empty", "first_of_rows"]

EMPTY_LENGTH = 1e-6  # m: lane records shorter than this are passed through
_MAX_EMPTY_CHAIN = 32


def first_of_rows(ptr: IntArray, idx: IntArray) -> IntArray:
    """The first entry of each CSR row (-1 for empty rows)."""
    if idx.size == 0:  # a map without a single lane link
        return np.full(ptr.size - 1, -1, dtype=np.int64)
    has = ptr[1:] > ptr[:-1]
    return np.where(has, idx[np.minimum(ptr[:-1], idx.size - 1)], -1)


def bypass_empty(
    src: IntArray, dst: IntArray, length: FloatArray, drivable: BoolArray
) -> tuple[IntArray, IntArray]:
    """Links that skip lane records of zero length (some maps have chains of empty lane
    sections): a link into an empty record becomes links into what follows it, and empty
    records lead nowhere themselves, so no vehicle is ever placed on one."""
    empty = length < EMPTY_LENGTH
    if not empty[dst].any():
        return src, dst
    after: dict[int, list[int]] = {}
    for a, b in zip(src.tolist(), dst.tolist(), strict=True):
        after.setdefault(a, []).append(b)

    def through(lane: int, depth: int) -> list[int]:
        if not empty[lane]:
            return [lane]
        if depth > _MAX_EMPTY_CHAIN:
            return []
        return [t for b in after.get(lane, []) for t in through(b, depth + 1)]

    pairs = sorted(
        {
            (a, t)
            for a, b in zip(src.tolist(), dst.tolist(), strict=True)
            if not empty[a]
            for t in through(b, 0)
        }
    )
    if not pairs:
        return src[:0], dst[:0]
    out = np.array(pairs, dtype=np.int64)
    keep = drivable[out[:, 1]]
    return out[keep, 0], out[keep, 1]
