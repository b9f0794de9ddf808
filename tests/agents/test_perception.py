"""Lane occupancy and the leader/follower searches against plain-Python references."""

from __future__ import annotations

import numpy as np
import pytest

import roadsim
from roadsim.agents.perception import (
    LaneOccupancy,
    follower_of,
    leaders,
    occupancy,
)
from roadsim.world.lane_kernels import by_lane, choose_next
from roadsim.world.routing import LaneInfo

MAP = "tests/data/opendrive/maps/libOpenDRIVE/test.xodr"


@pytest.fixture(scope="module")
def info() -> LaneInfo:
    return LaneInfo(roadsim.load_map(MAP).prepare())


def test_occupancy_sorts_by_lane_then_progress_keeping_the_order_of_ties() -> None:
    rng = np.random.default_rng(0)
    uid = rng.integers(0, 50, 3000)
    p = rng.integers(0, 40, 3000).astype(float)  # many equal progresses
    slot = np.arange(3000)
    occ = occupancy(60, slot, uid, p)
    order = np.lexsort((p, uid))  # lexsort is stable: ties keep the input order
    assert np.array_equal(occ.slot, slot[order])
    assert np.array_equal(occ.uid, uid[order])
    assert np.array_equal(occ.p, p[order])
    assert np.array_equal(occ.ptr, np.concatenate(([0], np.cumsum(np.bincount(uid, minlength=60)))))


def test_by_lane_is_a_stable_sort_by_lane_with_unknown_lanes_first() -> None:
    uid = np.random.default_rng(1).integers(-1, 32, 500)  # -1, 30 and 31: not lanes
    key = np.where((uid >= 0) & (uid < 30), uid, -1)
    assert np.array_equal(by_lane(uid, 30), np.argsort(key, kind="stable"))


def _leader_reference(
    occ: LaneOccupancy, info: LaneInfo, me: int, lane: int, p: float, salt: np.uint64,
    half: np.ndarray, speed: np.ndarray, hops: int,
) -> tuple[float, float, int]:  # fmt: skip
    """The first actor ahead in the lane, else the rearmost of the next lanes of the
    route that is not the vehicle itself."""
    lo, hi = occ.ptr[lane], occ.ptr[lane + 1]
    for e in range(lo, hi):
        if occ.p[e] > p:
            other = int(occ.slot[e])
            return float(occ.p[e] - p - half[me] - half[other]), float(speed[other]), other
    offset = info.length[lane] - p
    cur = lane
    for _ in range(hops):
        cur = choose_next(info.arrays, salt, cur)
        if cur < 0:
            break
        if occ.ptr[cur + 1] > occ.ptr[cur]:
            e = occ.ptr[cur]
            other = int(occ.slot[e])
            if other != me:
                gap = offset + occ.p[e] - half[me] - half[other]
                return float(gap), float(speed[other]), other
        offset += info.length[cur]
    return np.inf, 0.0, -1


def test_leaders_and_followers_match_the_reference(info: LaneInfo) -> None:
    rng = np.random.default_rng(2)
    lanes = np.flatnonzero(info.drivable)
    n = 600
    uid = rng.choice(lanes, n)
    p = rng.uniform(0.0, 1.0, n) * info.length[uid]
    half = rng.uniform(1.5, 6.0, n)
    speed = rng.uniform(0.0, 30.0, n)
    salt = rng.integers(0, 2**63 - 1, n).astype(np.uint64)
    slots = np.arange(n)
    occ = occupancy(info.n, slots, uid, p)
    gap, lead_v, route, who = leaders(occ, info.arrays, slots, uid, p, salt, half, speed, 3)
    found = 0
    for i in range(n):
        want = _leader_reference(occ, info, i, int(uid[i]), float(p[i]), salt[i], half, speed, 3)
        assert (gap[i], lead_v[i], who[i]) == pytest.approx(want, abs=1e-9)
        found += want[2] >= 0
        # The follower: the nearest actor behind in the lane, else at a predecessor's front.
        g, f = follower_of(occ, info.arrays, int(uid[i]), float(p[i]), float(half[i]), half)
        behind = [e for e in range(occ.ptr[uid[i]], occ.ptr[uid[i] + 1]) if occ.p[e] < p[i]]
        if behind:
            assert f == occ.slot[behind[-1]]
        elif f >= 0:
            assert occ.uid[np.flatnonzero(occ.slot == f)[0]] in info.prev_idx[
                info.prev_ptr[uid[i]] : info.prev_ptr[uid[i] + 1]
            ]
        assert (g < np.inf) == (f >= 0)
    assert found > n // 4  # the test sees leaders in the lane and along routes
    assert np.all((route >= -1) & (route < info.n))
