"""Incremental localisation: the compiled loop against a numpy reference on a corpus map."""

from __future__ import annotations

from functools import cache

import numpy as np

from roadsim._types import BoolArray, FloatArray, IntArray, UIntArray
from roadsim.road.load import load_map
from roadsim.world.lane_info import LaneInfo
from roadsim.world.lane_samples import LaneSamples
from roadsim.world.localization import JUNCTION_SLACK, SEAM, relocalize, relocalize_slots
from roadsim.world.routing import EMPTY_LENGTH
from tests.conftest import CORPUS

MAP = CORPUS / "maps" / "libOpenDRIVE" / "test.xodr"


@cache
def lane_info() -> LaneInfo:
    return LaneInfo(load_map(MAP).prepare())


def choose_next(info: LaneInfo, salt: UIntArray, uid: IntArray) -> IntArray:
    """Route choice as arrays: the successor picked by splitmix64's finaliser of
    (salt, uid), as `roadsim.world.lane_kernels.choose_next` does one vehicle at a time."""
    count = info.next_count[uid]
    x = salt ^ (uid.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x = x ^ (x >> np.uint64(31))
    pick = (x % np.maximum(count, 1).astype(np.uint64)).astype(np.int64)
    nxt = info.next_idx[np.minimum(info.next_ptr[uid] + pick, max(info.next_idx.size - 1, 0))]
    return np.where(count > 0, nxt, -1)


def project(
    table: LaneSamples, uid: IntArray, p: FloatArray, x: FloatArray, y: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Progress and lateral offset of (x, y) on the sampled centre line of ``uid``, from
    the segment of the guess p, walking at most three segments: the array version of
    `roadsim.world.lane_kernels.project`."""
    first = table.ptr[uid]
    last_seg = np.maximum(table.count[uid] - 2, 0)
    k = np.clip((np.maximum(p, 0.0) / table.spacing[uid]).astype(np.int64), 0, last_seg)
    for _ in range(3):
        a = first + k
        b = np.minimum(a + 1, table.ptr[uid + 1] - 1)
        ex, ey = table.x[b] - table.x[a], table.y[b] - table.y[a]
        w = ((x - table.x[a]) * ex + (y - table.y[a]) * ey) / np.maximum(ex * ex + ey * ey, 1e-12)
        step = np.where((w > 1.0) & (k < last_seg), 1, np.where((w < 0.0) & (k > 0), -1, 0))
        if not step.any():
            break
        k = k + step
    a = first + k
    b = np.minimum(a + 1, table.ptr[uid + 1] - 1)
    ex, ey = table.x[b] - table.x[a], table.y[b] - table.y[a]
    norm = np.maximum(np.hypot(ex, ey), 1e-9)
    dx, dy = x - table.x[a], y - table.y[a]
    w = (dx * ex + dy * ey) / (norm * norm)
    return (k + w) * table.spacing[uid], (ex * dy - ey * dx) / norm


def reference(
    info: LaneInfo,
    uid: IntArray,
    s: FloatArray,
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    salt: UIntArray,
) -> tuple[IntArray, FloatArray, FloatArray, dict[str, BoolArray]]:
    """The array implementation `relocalize` replaced, with which path each vehicle took."""
    table = info.table
    uid = uid.copy()
    p, lateral = project(table, uid, info.progress(uid, s), x, y)
    lost = np.zeros(uid.shape, dtype=bool)
    hops = np.zeros(uid.shape, dtype=np.int64)
    last_uid, last_lateral = uid.copy(), lateral.copy()  # before the latest hop
    seam = np.zeros(uid.shape, dtype=bool)
    for _ in range(3):
        back = (p < 0.0) & ~lost
        at_seam = back & (hops > 0) & (p >= -SEAM)
        uid[at_seam], lateral[at_seam] = last_uid[at_seam], last_lateral[at_seam]
        p[at_seam] = info.length[uid[at_seam]]
        seam |= at_seam
        lost |= back & ~at_seam
        ahead = p > info.length[uid]
        i = np.flatnonzero(ahead & ~lost)
        if i.size == 0:
            break
        nxt = choose_next(info, salt[i], uid[i])
        dead = nxt < 0
        lost[i[dead]] = True
        i, nxt = i[~dead], nxt[~dead]
        overshoot = p[i] - info.length[uid[i]]
        last_uid[i], last_lateral[i] = uid[i], lateral[i]
        uid[i] = nxt
        hops[i] += 1
        p[i], lateral[i] = project(table, nxt, overshoot, x[i], y[i])

    k = np.flatnonzero(~lost)
    lo, hi = table.bounds(uid[k], p[k])
    slack = np.where(info.junction[uid[k]] >= 0, JUNCTION_SLACK, 0.0)
    out = k[np.abs(lateral[k]) > 0.5 * (hi - lo) + slack]
    neighbour = np.zeros(uid.shape, dtype=bool)
    opposite = np.zeros(uid.shape, dtype=bool)
    if out.size:
        graph = info.net.graph
        cand = np.where(lateral[out] > 0.0, graph.left_uid[uid[out]], graph.right_uid[uid[out]])
        ok = cand >= 0
        cand_c = np.maximum(cand, 0)
        same = info.sign[cand_c] == info.sign[uid[out]]
        q = np.where(same, p[out], info.length[cand_c] - p[out])
        q2, lat2 = project(table, cand_c, q, x[out], y[out])
        lo2, hi2 = table.bounds(cand_c, q2)
        fits = ok & (info.sign[cand_c] != 0) & (np.abs(lat2) <= 0.5 * (hi2 - lo2))
        fits &= (q2 >= 0.0) & (q2 <= info.length[cand_c])
        uid[out[fits]], p[out[fits]], lateral[out[fits]] = cand_c[fits], q2[fits], lat2[fits]
        lost[out[~fits]] = True
        neighbour[out[fits]] = True
        opposite[out[fits & ~same]] = True

    s_new = info.road_s(uid, p)
    lo, hi = table.bounds(uid, p)
    t_new = 0.5 * (lo + hi) + info.sign[uid] * lateral
    searched = lost.copy()
    if lost.any():
        m = np.flatnonzero(lost)
        pos = info.net.localize(x[m], y[m], heading=heading[m])
        uid[m], s_new[m], t_new[m] = pos.uid, pos.s, pos.t
    paths = {
        "hop": hops > 0,
        "two hops": hops > 1,
        "seam": seam,
        "neighbour": neighbour,
        "opposite neighbour": opposite,
        "searched": searched,
        "found by search": searched & (uid >= 0),
        "off every lane": uid < 0,
    }
    return uid, s_new, t_new, paths


def perturbed_vehicles(
    info: LaneInfo, n: int, seed: int
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray, FloatArray, UIntArray]:
    """Vehicles on random drivable lanes, moved up to ~25 m along and ~6 m across."""
    rng = np.random.default_rng(seed)
    lanes = np.flatnonzero(info.drivable & (info.length >= EMPTY_LENGTH))
    uid = rng.choice(lanes, n)
    p0 = rng.uniform(0.0, 1.0, n) * info.length[uid]
    s = info.road_s(uid, p0)
    cx, cy, hdg = info.table.pose(uid, p0)
    # Mostly a tick's worth of driving, some far enough to cross several short lanes,
    # a few backwards.
    along = np.where(rng.random(n) < 0.7, rng.uniform(-0.5, 3.0, n), rng.uniform(-3.0, 25.0, n))
    across = np.where(rng.random(n) < 0.6, rng.normal(0.0, 0.5, n), rng.uniform(-6.0, 6.0, n))
    x = cx + along * np.cos(hdg) - across * np.sin(hdg)
    y = cy + along * np.sin(hdg) + across * np.cos(hdg)
    heading = hdg + rng.normal(0.0, 0.1, n)
    salt = rng.integers(0, 2**63 - 1, size=n, dtype=np.int64).astype(np.uint64)
    return uid.astype(np.int64), s, x, y, heading, salt


def test_compiled_relocalize_matches_the_array_reference() -> None:
    info = lane_info()
    uid, s, x, y, heading, salt = perturbed_vehicles(info, 4000, seed=7)
    got_uid, got_s, got_t = relocalize(info, uid, s, x, y, heading, salt)
    want_uid, want_s, want_t, paths = reference(info, uid, s, x, y, heading, salt)
    np.testing.assert_array_equal(got_uid, want_uid)
    np.testing.assert_allclose(got_s, want_s, rtol=0.0, atol=1e-9)
    np.testing.assert_allclose(got_t, want_t, rtol=0.0, atol=1e-9)
    # The corpus exercises every path of the algorithm.
    for name, mask in paths.items():
        assert mask.sum() >= 5, f"only {mask.sum()} vehicles took the path {name!r}"
    # Inputs are left alone.
    assert np.array_equal(uid, perturbed_vehicles(info, 4000, seed=7)[0])


def test_in_place_variant_writes_only_the_given_slots() -> None:
    info = lane_info()
    uid, s, x, y, heading, salt = perturbed_vehicles(info, 600, seed=3)
    want_uid, want_s, want_t = relocalize(info, uid, s, x, y, heading, salt)
    slots = np.arange(0, 600, 2, dtype=np.int64)
    st_uid, st_s = uid.copy(), s.copy()
    st_t = np.full(600, 123.0)
    st_road = np.full(600, -7, dtype=np.int64)
    lost = relocalize_slots(info, slots, st_uid, st_s, st_t, st_road, x, y, heading, salt)
    np.testing.assert_array_equal(st_uid[slots], want_uid[slots])
    np.testing.assert_array_equal(st_s[slots], want_s[slots])
    np.testing.assert_array_equal(st_t[slots], want_t[slots])
    want_road = np.where(want_uid >= 0, info.road[np.maximum(want_uid, 0)], -1)
    np.testing.assert_array_equal(st_road[slots], want_road[slots])
    np.testing.assert_array_equal(lost, slots[want_uid[slots] < 0])
    rest = np.arange(1, 600, 2)
    np.testing.assert_array_equal(st_uid[rest], uid[rest])
    np.testing.assert_array_equal(st_s[rest], s[rest])
    assert np.all(st_t[rest] == 123.0) and np.all(st_road[rest] == -7)
