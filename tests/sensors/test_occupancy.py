"""The lane occupancy and the driver sensor's searches, against plain-Python references."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

import roadsim
from roadsim._trig import sin_cos
from roadsim.sensors.driver import DriverSensor
from roadsim.sensors.driver_kernels import Out, _pick, search_ahead, search_behind, step_lane
from roadsim.sensors.occupancy import (
    SIDE_SLACK,
    LaneOccupancy,
    across_bend,
    footprints,
    occupancy,
    sort_entries,
)
from roadsim.sim.build import MODEL_NAMES
from roadsim.world.lane_info import LaneInfo
from roadsim.world.lane_kernels import (
    bounds,
    by_lane,
    direction,
    progress,
    progress_per_metre,
    signed_curvature,
)
from roadsim.world.traffic_lights import TrafficLightPlan

MAP = "tests/data/opendrive/maps/libOpenDRIVE/test.xodr"


@pytest.fixture(scope="module")
def info() -> LaneInfo:
    return LaneInfo(roadsim.load_map(MAP).prepare())


def test_occupancy_sorts_by_lane_then_progress_keeping_the_order_of_ties() -> None:
    rng = np.random.default_rng(0)
    uid = rng.integers(0, 50, 3000)
    p = rng.integers(0, 40, 3000).astype(float)  # many equal progresses
    slot = np.arange(3000)
    occ = occupancy(60, slot, uid, p, np.zeros(3000))
    order = np.lexsort((p, uid))  # lexsort is stable: ties keep the input order
    assert np.array_equal(occ.slot, slot[order])
    assert np.array_equal(occ.uid, uid[order])
    assert np.array_equal(occ.p, p[order])
    assert np.array_equal(occ.ptr, np.concatenate(([0], np.cumsum(np.bincount(uid, minlength=60)))))


def _footprint_entries(
    info: LaneInfo, active: np.ndarray, uid: np.ndarray, s: np.ndarray, t: np.ndarray,
    heading: np.ndarray, length: np.ndarray, width: np.ndarray,
) -> list[tuple[int, int, float]]:  # fmt: skip
    """`footprints`' entries (slot, lane, progress) one by one, by slot: each slot's own
    lane, then every other lane of its road that its footprint's extent across and along
    the lane overlaps, at the same s (the lanes of its own section from the lane beside
    it on, while the footprint passes the edge of the lane before, by more than
    `SIDE_SLACK` into a lane not of its direction; in the sections
    before and after its own, the lanes whose width where their section is nearest the
    actor overlaps the footprint's)."""
    la, lanes = info.arrays, info.net.lanes
    entries = []
    for k in range(uid.size):
        u = int(uid[k])
        if not active[k] or not 0 <= u < info.n:
            continue
        q = progress(la, u, s[k])
        entries.append((k, u, q))
        dx, dy = direction(la, u, q)
        sh, ch = sin_cos(heading[k])
        cos_d, sin_d = abs(ch * dx + sh * dy), abs(sh * dx - ch * dy)
        along = 0.5 * (length[k] * cos_d + width[k] * sin_d) * progress_per_metre(la, u, q)
        y_lo, y_hi = across_bend(
            length[k], width[k], ch * dx + sh * dy, sh * dx - ch * dy, signed_curvature(la, u, q)
        )
        t_lo, t_hi = (t[k] + y_lo, t[k] + y_hi) if la.sign[u] >= 0 else (t[k] - y_hi, t[k] - y_lo)
        sec = int(lanes.section[u])
        first, count = int(lanes.sec_first_uid[sec]), int(lanes.sec_count[sec])
        centre = int(lanes.sec_center_uid[sec])
        for step in (-1, 1):  # uids run from larger t to smaller
            x = u
            while True:
                lo, hi = bounds(la, x, progress(la, x, s[k]))
                if not (t_hi > hi if step < 0 else t_lo < lo):
                    break
                x += step
                x += step if x == centre else 0
                if not first <= x < first + count:
                    break
                slack = SIDE_SLACK if la.sign[x] != la.sign[u] else 0.0
                if not (t_hi > hi + slack if step < 0 else t_lo < lo - slack):
                    break
                entries.append((k, x, progress(la, x, s[k])))
        road = int(lanes.road[u])
        for other in np.flatnonzero(lanes.sec_road == road):
            s0, s1 = float(lanes.sec_s0[other]), float(lanes.sec_s1[other])
            if other == sec or s1 <= s0 or s0 >= s[k] + along or s1 <= s[k] - along:
                continue
            start = int(lanes.sec_first_uid[other])
            for x in range(start, start + int(lanes.sec_count[other])):
                if la.sign[x] == 0.0:
                    continue
                lo, hi = bounds(la, x, progress(la, x, min(max(s[k], s0), s1)))
                if lo < t_hi and hi > t_lo:
                    entries.append((k, x, progress(la, x, s[k])))
    return entries


@pytest.mark.parametrize("lane_order", [True, False])
def test_footprints_match_a_stable_sort_of_every_entry(info: LaneInfo, lane_order: bool) -> None:
    """Slots in lane order (as the simulation keeps them, the threads' shares of the sort
    barely mix) or in none (half the entries are sorted by another thread than the one
    that placed them), with wide actors over lane edges, slots off every lane, and extra
    entries."""
    rng = np.random.default_rng(3)
    la = info.arrays
    n = 3000
    uid = rng.choice(np.flatnonzero(info.drivable), n)
    if lane_order:
        uid.sort()
    uid[rng.choice(n, 40, replace=False)] = -1
    active = rng.random(n) > 0.05
    s = np.empty(n)
    t = np.empty(n)
    for k in range(n):
        u = max(int(uid[k]), 0)
        q = rng.uniform(0.0, 1.0) * la.length[u]
        s[k] = la.s0[u] + q if la.sign[u] >= 0.0 else la.s1[u] - q
        lo, hi = bounds(la, u, q)
        t[k] = rng.uniform(lo, hi)
    heading = rng.uniform(-np.pi, np.pi, n)
    length = rng.uniform(3.0, 12.0, n)
    width = np.where(rng.random(n) < 0.2, 5.0, 1.8)
    extra_slot = rng.integers(0, n, 50)
    extra_lane = np.where(rng.random(50) < 0.2, -1, rng.choice(np.flatnonzero(info.drivable), 50))
    extra_p = rng.uniform(0.0, 50.0, 50)
    occ = footprints(
        la, active, uid, s, t, heading, length, width, (extra_slot, extra_lane, extra_p)
    )
    entries = _footprint_entries(info, active, uid, s, t, heading, length, width)
    # Some two lanes away from the actor's own, some in the sections before and after.
    slot, lane = (np.array(column) for column in list(zip(*entries, strict=True))[:2])
    sec, own = info.net.lanes.section, uid[slot]
    beside = (sec[lane] == sec[own]) & (lane != own)
    assert beside.sum() > 200 and (np.abs(lane - own)[beside] >= 2).sum() > 10
    assert (sec[lane] < sec[own]).sum() > 10 and (sec[lane] > sec[own]).sum() > 10
    entries += [
        (int(k), int(u), float(q))
        for k, u, q in zip(extra_slot, extra_lane, extra_p, strict=True)
        if u >= 0
    ]
    slot, lane, p = (np.array(column) for column in zip(*entries, strict=True))
    assert (lane != uid[slot]).sum() > 200  # many entries in neighbour lanes, or extra
    order = np.lexsort((p, lane))  # stable: ties keep the order they were entered in
    assert np.array_equal(occ.slot, slot[order])
    assert np.array_equal(occ.uid, lane[order])
    assert np.allclose(occ.p, p[order], rtol=0.0, atol=1e-9)
    assert np.array_equal(
        occ.ptr, np.concatenate(([0], np.cumsum(np.bincount(lane, minlength=info.n))))
    )
    assert occ.far == occ.reach.max() > 6.0  # the longest, up to 6 m


def test_by_lane_is_a_stable_sort_by_lane_with_unknown_lanes_first() -> None:
    uid = np.random.default_rng(1).integers(-1, 32, 500)  # -1, 30 and 31: not lanes
    key = np.where((uid >= 0) & (uid < 30), uid, -1)
    assert np.array_equal(by_lane(uid, 30), np.argsort(key, kind="stable"))


def _ahead_reference(
    occ: LaneOccupancy, sensor: DriverSensor, me: int, lane: int, q: float, salt: np.uint64,
    limit: float,
) -> tuple[int, float]:  # fmt: skip
    """Of the entries ahead of q in the lane and along the next lanes of the route (along
    the lane's driving direction; where a drivable lane has no drivable successor, the
    route goes on into one of the map's) whose centres lie within the limit, not the
    vehicle itself, the one whose footprint comes nearest (the first of equals)."""
    la, tab = sensor.info.arrays, sensor.tables
    found = [
        (occ.p[e] - q, e)
        for e in range(occ.ptr[lane], occ.ptr[lane + 1])
        if occ.slot[e] != me and occ.p[e] > q
    ]
    offset, cur = la.length[lane] - q, lane
    while offset <= limit:
        nxt = step_lane(la, tab, salt, cur, True)
        if nxt < 0 and la.drivable[cur]:
            nxt = _pick(tab.succ_idx, tab.succ_ptr[cur], tab.succ_ptr[cur + 1], salt, cur)
        cur = nxt
        if cur < 0:
            break
        found += [
            (offset + occ.p[e], e)
            for e in range(occ.ptr[cur], occ.ptr[cur + 1])
            if occ.slot[e] != me
        ]
        offset += la.length[cur]
    return _nearest_footprint(occ, found, limit)


def _nearest_footprint(
    occ: LaneOccupancy, found: list[tuple[float, int]], limit: float
) -> tuple[int, float]:
    """``(slot, centre distance)`` of the entry of ``found`` (centre distance, entry)
    within the limit whose footprint comes nearest; (-1, inf) for none."""
    best, best_d, best_near = -1, np.inf, np.inf
    for d, e in found:
        near = d - occ.reach[occ.slot[e]]
        if d <= limit and near < best_near:
            best, best_d, best_near = int(occ.slot[e]), float(d), near
    return best, best_d


def _behind_reference(
    occ: LaneOccupancy, sensor: DriverSensor, me: int, lane: int, q: float, limit: float
) -> tuple[int, float]:
    """Of the entries at or behind q, over every chain of predecessors (a drivable lane's
    drivable ones, or the map's where it has none) at their nearest, whose centres lie
    within the limit, the one whose footprint comes nearest."""
    la, graph = sensor.info.arrays, sensor.info.net.graph

    def preds(u: int) -> list[int]:
        if la.drivable[u] and la.prev_ptr[u + 1] > la.prev_ptr[u]:
            return la.prev_idx[la.prev_ptr[u] : la.prev_ptr[u + 1]].tolist()  # type: ignore[no-any-return]
        return graph.pred_idx[graph.pred_ptr[u] : graph.pred_ptr[u + 1]].tolist()  # type: ignore[no-any-return]

    nearest: dict[int, float] = {}  # entry: its centre distance by the shortest way
    for e in range(occ.ptr[lane], occ.ptr[lane + 1]):
        if occ.slot[e] != me and occ.p[e] <= q:
            nearest[e] = q - occ.p[e]
    heap = [(q, v) for v in preds(lane)]
    heapq.heapify(heap)
    done: set[int] = set()
    while heap:
        off, v = heapq.heappop(heap)
        if off > limit or v in done:
            continue
        done.add(v)
        for e in range(occ.ptr[v], occ.ptr[v + 1]):
            if occ.slot[e] != me:
                nearest[e] = min(nearest.get(e, np.inf), off + la.length[v] - occ.p[e])
        for w in preds(v):
            heapq.heappush(heap, (off + la.length[v], w))
    return _nearest_footprint(occ, [(d, e) for e, d in nearest.items()], limit)


@pytest.mark.parametrize("longest", [0.0, 8.0], ids=["centres", "footprints"])
def test_searches_ahead_and_behind_match_the_references(info: LaneInfo, longest: float) -> None:
    sensor = DriverSensor(info, TrafficLightPlan.from_network(info.net), MODEL_NAMES)
    la, tab = info.arrays, sensor.tables
    rng = np.random.default_rng(2)
    lanes = np.flatnonzero(info.drivable)
    n = 400
    uid = rng.choice(lanes, n)
    p = rng.uniform(0.0, 1.0, n) * info.length[uid]
    salt = rng.integers(0, 2**63 - 1, n).astype(np.uint64)
    # With reaches of up to 8 m, the nearest footprint is often not the nearest centre.
    occ = occupancy(info.n, np.arange(n), uid, p, rng.uniform(0.0, longest, n))
    scratch = Out.empty(1, 1, 1, 1)
    limit = 150.0
    found_ahead = found_behind = 0
    for i in range(n):
        lane, q = int(uid[i]), float(p[i])
        slot, d, _, _ = search_ahead(la, tab, occ, i, salt[i], lane, True, q, 0.0, limit)
        want_slot, want_d = _ahead_reference(occ, sensor, i, lane, q, salt[i], limit)
        assert (slot, d) == (want_slot, pytest.approx(want_d, abs=1e-9))
        found_ahead += slot >= 0
        slot, d, _, _ = search_behind(la, tab, occ, i, lane, True, q, 0.0, limit, scratch, 0)
        want_slot, want_d = _behind_reference(occ, sensor, i, lane, q, limit)
        assert (slot, d) == (want_slot, pytest.approx(want_d, abs=1e-9))
        found_behind += slot >= 0
    # The test sees objects in the lane and along the lanes ahead and behind.
    assert found_ahead > n // 4 and found_behind > n // 4


def test_a_vehicle_on_the_inside_of_a_tight_bend_reaches_over_more_progress(
    info: LaneInfo,
) -> None:
    """Gaps are measured in progress (road s). On the inside of Town07's 5 m corners a
    metre driven spans up to 1.35 m of s, so a car counted with half its length in
    metres stood in the queue closer than it looked: two cars standing 2 m apart by
    progress touched (Town07 with the default mix, seed 1, 546 s). A vehicle's reach is
    now its extent in progress."""
    la = info.arrays
    drivable = np.flatnonzero(info.drivable & (info.junction < 0))
    best, at, factor = -1, 0.0, 1.0
    for u in drivable.tolist():
        for q in np.arange(0.0, float(la.length[u]), 0.5):
            f = progress_per_metre(la, u, float(q))
            assert f >= 1.0
            if f > factor:
                best, at, factor = u, float(q), f
    assert factor > 1.25
    # On a straight lane a metre is a metre.
    assert progress_per_metre(la, int(np.argmax(la.length)), 1.0) == pytest.approx(1.0, abs=1e-3)
    # A car aligned with the lane at the tightest point.
    s = la.s0[best] + at if la.sign[best] >= 0.0 else la.s1[best] - at
    dx, dy = direction(la, best, at)
    lo, hi = bounds(la, best, at)
    occ = footprints(
        la, np.array([True]), np.array([best]), np.array([s]), np.array([0.5 * (lo + hi)]),
        np.array([np.arctan2(dy, dx)]), np.array([4.6]), np.array([1.8]),
        (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)),
    )  # fmt: skip
    assert occ.reach[0] == pytest.approx(2.3 * factor, rel=1e-6)


def test_a_truck_following_a_bend_stays_within_its_lane() -> None:
    """A 12 m truck on a bend of 33 m radius, its body 7.8 degrees off the lane's tangent
    at its centre (its ends point outward): the rectangle set on that tangent reaches
    2.05 m either way, over the centre line from a lane 3.2 m wide. Measured from the
    lane as it bends under the body, it reaches less far inward. On Town07 two trucks
    meeting on such a bend each saw the other in its lane, and both stood for ten
    minutes with 37 vehicles behind them."""
    cos_d, sin_d = np.cos(np.radians(-7.8)), np.sin(np.radians(-7.8))
    rectangle = 0.5 * (12.0 * abs(sin_d) + 2.5 * cos_d)
    assert rectangle == pytest.approx(2.05, abs=0.01)
    lo, hi = across_bend(12.0, 2.5, cos_d, sin_d, 1.0 / 33.0)  # bending left
    assert hi < 1.6 < rectangle  # inward (left): within its half of a 3.2 m lane
    assert lo < -rectangle  # its front corner swings further out
    # On a straight lane it is the rectangle, both ways.
    lo, hi = across_bend(12.0, 2.5, cos_d, sin_d, 0.0)
    assert (lo, hi) == pytest.approx((-rectangle, rectangle))
    # An aligned car on a bend: its corners lie outward of the lane, its middle not.
    lo, hi = across_bend(4.6, 1.8, 1.0, 0.0, 1.0 / 20.0)
    assert hi == pytest.approx(0.9) and lo < -0.9


@pytest.mark.parametrize(
    ("at", "signalling", "seen"),
    [
        (53.0, True, False),  # level with the truck (its rear at 50.7, the truck's front 56)
        (53.0, False, True),  # in the lane: seen however near
        (60.0, True, True),  # ahead of the truck (its rear at 57.7): seen
        (47.0, True, False),  # level, its centre behind the truck's
    ],
    ids=["level", "in-lane", "ahead", "level-behind"],
)
def test_a_car_signalling_into_the_lane_is_passed_over_while_level_with_the_driver(
    info: LaneInfo, at: float, signalling: bool, seen: bool
) -> None:
    """A car signalling a change into the lane beside it is entered in that lane too, so
    that the vehicles behind it there make room; a 12 m truck it is level with took it
    for its leader at a gap of 0 and stood until it had gone, and on a lane drop the
    next one came level: the truck stood for minutes (esmini's multi_lanesections)."""
    sensor = DriverSensor(info, TrafficLightPlan.from_network(info.net), MODEL_NAMES)
    la, tab = info.arrays, sensor.tables
    lane = int(np.flatnonzero(info.drivable & (info.length > 150.0))[0])
    truck, car, other_ahead, other_behind = 0, 1, 2, 3
    slot, uid, p, signal, ptr = sort_entries(
        info.n,
        np.array([truck, car, other_ahead, other_behind]),
        np.full(4, lane),
        np.array([50.0, at, 90.0, 10.0]),
    )
    signal[slot == car] = signalling
    reach = np.array([6.0, 2.3, 2.3, 2.3])
    occ = LaneOccupancy(slot, uid, p, signal, ptr, reach, 6.0)
    salt, limit = np.uint64(1), 150.0
    found, *_ = search_ahead(la, tab, occ, truck, salt, lane, True, 50.0, 6.0, limit)
    found_behind, *_ = search_behind(
        la, tab, occ, truck, lane, True, 50.0, 6.0, limit, Out.empty(1, 1, 1, 1), 0
    )
    car_ahead = at > 50.0
    assert found == (car if seen and car_ahead else other_ahead)
    assert found_behind == (car if seen and not car_ahead else other_behind)
