"""Localisation (world point -> road, lane, s, t) and the road surface height."""

from __future__ import annotations

import math
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roadsim
from roadsim.road.lanes import DRIVABLE_TYPES
from roadsim.road.localize import LanePosition, Localizer
from roadsim.road.network import RoadNetwork
from roadsim.road.xodr import read_xodr
from tests.conftest import CORPUS_MAPS, corpus_name

MM = 1e-3


@cache
def corpus(name: str) -> RoadNetwork:
    """A corpus map by ``<source>/<name>``, loaded once per test session."""
    path = next(p for p in CORPUS_MAPS if corpus_name(p) == name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dangling links in some published maps
        return roadsim.load_map(path)


def network(xml: str) -> RoadNetwork:
    return RoadNetwork(read_xodr(xml.encode(), path="test.xodr"))


class Samples:
    """Points inside lanes, generated through ``to_world``: the truth to round-trip."""

    def __init__(self, net: RoadNetwork, uid: np.ndarray, s: np.ndarray, t: np.ndarray) -> None:
        self.uid, self.s, self.t = uid, s, t
        self.road = net.lanes.road[uid]
        self.x, self.y, self.z = net.to_world_index(self.road, s, t)


def geometry_end(net: RoadNetwork) -> np.ndarray:
    """Per road, where its planView records end (some files declare a longer road)."""
    ref = net.reference
    last = ref.first + ref.count - 1
    return np.asarray(np.minimum(net.road_length, ref.s0[last] + ref.glen[last]))


def lane_samples(
    net: RoadNetwork, n: int, rng: np.random.Generator, margin: float = 0.01
) -> Samples:
    """Random points in lanes, at least ``margin`` from lane and section boundaries."""
    lanes = net.lanes
    sec_len = np.minimum(lanes.sec_s1, geometry_end(net)[lanes.sec_road]) - lanes.sec_s0
    cand = np.flatnonzero((lanes.lane_id != 0) & (sec_len[lanes.section] > 4 * margin))
    weight = sec_len[lanes.section[cand]]
    uid = rng.choice(cand, size=n, p=weight / weight.sum())
    sec = lanes.section[uid]
    s = lanes.sec_s0[sec] + margin + rng.random(n) * (sec_len[sec] - 2 * margin)
    outer = net.uid_t_outer(uid, s)
    inner = net.uid_t_outer(lanes.inner[uid], s)
    lo, hi = np.minimum(inner, outer), np.maximum(inner, outer)
    t = lo + margin + rng.random(n) * (hi - lo - 2 * margin)
    # Where a lane reaches past the reference line's centre of curvature the road folds
    # over itself and a point has no unique (s, t): leave such places out.
    ks = np.stack(
        [net.reference.evaluate(net.lanes.road[uid], s + d)[3] for d in (-1, -0.5, 0, 0.5, 1)]
    )
    folds = np.max(ks * t, axis=0) > 0.5
    keep = (hi - lo > 4 * margin) & ~folds
    return Samples(net, uid[keep], s[keep], t[keep])


def contains(net: RoadNetwork, pos: LanePosition) -> np.ndarray:
    """Whether each reported lane holds the reported (s, t) (True where off lane)."""
    on = pos.on_lane
    uid, s = np.where(on, pos.uid, 0), np.where(on, pos.s, 0.0)
    outer = net.uid_t_outer(uid, s)
    inner = net.uid_t_outer(net.lanes.inner_or_self(uid), s)
    t = np.where(on, pos.t, 0.0)
    inside = (np.minimum(inner, outer) - 1e-6 <= t) & (t <= np.maximum(inner, outer) + 1e-6)
    return np.asarray(~on | inside)


def maps_back(net: RoadNetwork, pos: LanePosition, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Horizontal distance from ``to_world`` of each reported (road, s, t) to the point."""
    on = pos.on_lane
    xb, yb, _ = net.to_world_index(
        np.where(on, pos.road_index, 0), np.where(on, pos.s, 0.0), np.where(on, pos.t, 0.0)
    )
    return np.asarray(np.where(on, np.hypot(xb - x, yb - y), 0.0))


def check_round_trip(net: RoadNetwork, smp: Samples, pos: LanePosition) -> None:
    """Same lane, s and t within 1 mm; where lanes overlap, any lane that holds the point."""
    assert pos.on_lane.all(), f"{np.sum(~pos.on_lane)} in-lane points reported off lane"
    same = (pos.uid == smp.uid) & (np.abs(pos.s - smp.s) < MM) & (np.abs(pos.t - smp.t) < MM)
    assert np.all(np.abs(pos.surface_z - smp.z)[same] < MM)
    other = ~same
    assert np.all(maps_back(net, pos, smp.x, smp.y)[other] < MM)
    assert contains(net, pos)[other].all()
    # The heading is the reference heading at the reported s, turned for lanes driven
    # against s (at the sampled s it differs by curvature x the s error).
    _, _, hdg, _ = net.reference.evaluate(smp.road[same], pos.s[same])
    want = hdg + np.where(net.driving_sign(smp.uid[same]) < 0, np.pi, 0.0)
    assert np.all(np.abs(np.angle(np.exp(1j * (pos.heading[same] - want)))) < 1e-5)


# -- round trips ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CORPUS_MAPS, ids=corpus_name)
def test_round_trip_on_every_corpus_map(path: Path) -> None:
    net = corpus(corpus_name(path))
    smp = lane_samples(net, 400, np.random.default_rng(7))
    check_round_trip(net, smp, net.localize(smp.x, smp.y, smp.z))


@pytest.mark.parametrize("name", roadsim.builtin_maps())
def test_round_trip_on_builtin_maps(name: str) -> None:
    net = roadsim.load_map(name)
    smp = lane_samples(net, 400, np.random.default_rng(7))
    check_round_trip(net, smp, net.localize(smp.x, smp.y, smp.z))


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS_MAPS, ids=corpus_name)
def test_round_trip_on_every_corpus_map_dense(path: Path) -> None:
    net = corpus(corpus_name(path))
    smp = lane_samples(net, 20000, np.random.default_rng(11), margin=0.002)
    check_round_trip(net, smp, net.localize(smp.x, smp.y, smp.z))


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(
        [
            "libOpenDRIVE/test",
            "esmini/straight_500_superelevation_elevation_curve",
            "qc-opendrive/Ex_Line-Spiral-Arc_elevation_and_superelevation",
            "esmini/tilted_crest",
            "qc-opendrive/road_geometry_param_poly3_length_match_valid",
        ]
    ),
    lane=st.floats(0.0, 1.0, exclude_max=True),
    fs=st.floats(0.0, 1.0),
    ft=st.floats(0.0, 1.0),
)
def test_round_trip_property(name: str, lane: float, fs: float, ft: float) -> None:
    net = corpus(name)
    lanes = net.lanes
    cand = np.flatnonzero(lanes.lane_id != 0)
    uid = cand[int(lane * cand.size)]
    sec = lanes.section[uid]
    s0, s1 = (
        lanes.sec_s0[sec] + 0.01,
        min(lanes.sec_s1[sec], geometry_end(net)[lanes.road[uid]]) - 0.01,
    )
    s = s0 + fs * (s1 - s0)
    inner = float(net.uid_t_outer(np.array([lanes.inner[uid]]), np.array([s]))[0])
    outer = float(net.uid_t_outer(np.array([uid]), np.array([s]))[0])
    lo, hi = min(inner, outer) + 0.01, max(inner, outer) - 0.01
    if s1 <= s0 or hi <= lo:
        return
    smp = Samples(net, np.array([uid]), np.array([s]), np.array([lo + ft * (hi - lo)]))
    check_round_trip(net, smp, net.localize(smp.x, smp.y, smp.z))


# -- off the road ---------------------------------------------------------------------------------

STRAIGHT = """<?xml version="1.0"?>
<OpenDRIVE><header revMajor="1" revMinor="8"/>
<road id="r" length="100" junction="-1">
  <planView><geometry s="0" x="0" y="0" hdg="0" length="100"><line/></geometry></planView>
  <lanes><laneSection s="0">
    <left><lane id="1" type="driving"><width sOffset="0" a="3" b="0" c="0" d="0"/></lane></left>
    <center><lane id="0" type="none"/></center>
    <right>
      <lane id="-1" type="driving"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane>
      <lane id="-2" type="sidewalk"><width sOffset="0" a="2" b="0" c="0" d="0"/></lane>
    </right>
  </laneSection></lanes>
</road></OpenDRIVE>"""


def assert_off(pos: LanePosition) -> None:
    assert not pos.on_lane.any()
    assert (pos.road_index == -1).all() and (pos.uid == -1).all() and (pos.lane_id == 0).all()
    assert all(r is None for r in pos.road_id.ravel())
    for field in (pos.s, pos.t, pos.heading, pos.surface_z):
        assert np.isnan(field).all()


def test_points_on_a_straight_road_get_their_lane() -> None:
    net = network(STRAIGHT)
    pos = net.localize([10.0, 50.0, 99.0, 20.0], [1.5, -1.0, -4.5, 0.001])
    assert pos.on_lane.all()
    assert pos.lane_id.tolist() == [1, -1, -2, 1]
    assert list(pos.road_id) == ["r"] * 4
    assert np.allclose(pos.s, [10.0, 50.0, 99.0, 20.0]) and np.allclose(
        pos.t, [1.5, -1.0, -4.5, 0.001]
    )
    assert np.allclose(pos.heading, [-np.pi, 0.0, 0.0, -np.pi])
    assert np.allclose(pos.surface_z, 0.0)


def test_points_off_every_lane_are_marked_off() -> None:
    net = network(STRAIGHT)
    x = np.array([50.0, 50.0, -0.01, 100.01, 1e6, np.nan, 50.0])
    y = np.array([3.01, -5.51, -1.0, -1.0, 1e6, 0.0, np.nan])
    assert_off(net.localize(x, y))
    assert np.isnan(net.surface_height(x, y)).all()


def test_points_off_the_road_on_corpus_maps_are_off_or_truly_inside() -> None:
    # Uniform points over whole maps: most are off every lane; every reported lane holds
    # its point (the point maps back to itself) and no point is given a lane it is not in.
    for name in ("libOpenDRIVE/test", "esmini/multi_intersections", "qc-opendrive/positive18"):
        net = corpus(name)
        loc = net.localizer
        gx, gy, inv, nx, ny = loc._grid
        rng = np.random.default_rng(3)
        x = gx - 20.0 + rng.random(20000) * (nx / inv + 40.0)
        y = gy - 20.0 + rng.random(20000) * (ny / inv + 40.0)
        pos = net.localize(x, y)
        assert 0.02 < pos.on_lane.mean() < 0.98
        assert contains(net, pos).all()
        assert (maps_back(net, pos, x, y) < MM).all()
        off = ~pos.on_lane
        assert (pos.road_index[off] == -1).all() and np.isnan(pos.s[off]).all()


def test_shapes_follow_the_arguments() -> None:
    net = network(STRAIGHT)
    pos = net.localize(10.0, -1.0)
    assert pos.on_lane.shape == () and bool(pos.on_lane) and int(pos.lane_id) == -1
    pos = net.localize(np.full((2, 3), 10.0), np.array([-1.0, 1.0, 9.0]))
    assert pos.lane_id.shape == (2, 3) and pos.lane_id[1].tolist() == [-1, 1, 0]
    assert len(pos) == 6
    assert net.surface_height(10.0, -1.0).shape == ()
    empty = net.localize(np.zeros(0), np.zeros(0))
    assert len(empty) == 0 and empty.road_id.shape == (0,)


# -- overlapping lanes: junctions and bridges ----------------------------------------------------------

CROSSING = """<?xml version="1.0"?>
<OpenDRIVE><header revMajor="1" revMinor="8"/>
<road id="ew" length="100" junction="j">
  <planView><geometry s="0" x="-50" y="0" hdg="0" length="100"><line/></geometry></planView>
  <lanes><laneSection s="0">
    <left><lane id="1" type="sidewalk"><width sOffset="0" a="4" b="0" c="0" d="0"/></lane></left>
    <center><lane id="0" type="none"/></center>
    <right><lane id="-1" type="driving"><width sOffset="0" a="4" b="0" c="0" d="0"/></lane></right>
  </laneSection></lanes>
</road>
<road id="ns" length="100" junction="j">
  <planView><geometry s="0" x="0" y="-50" hdg="1.5707963267948966" length="100"><line/></geometry></planView>
  <lanes><laneSection s="0">
    <left><lane id="1" type="driving"><width sOffset="0" a="4" b="0" c="0" d="0"/></lane></left>
    <center><lane id="0" type="none"/></center>
    <right><lane id="-1" type="driving"><width sOffset="0" a="4" b="0" c="0" d="0"/></lane></right>
  </laneSection></lanes>
</road>
<junction id="j" name="j"/>
</OpenDRIVE>"""


def test_heading_hint_chooses_between_crossing_lanes() -> None:
    net = network(CROSSING)
    x, y = np.full(4, 2.0), np.full(4, -2.0)  # in ew lane -1 and ns lane -1
    pos = net.localize(x, y, heading=[0.0, np.pi / 2, 0.1, np.nan])
    assert list(pos.road_id[:3]) == ["ew", "ns", "ew"]
    assert pos.lane_id[:3].tolist() == [-1, -1, -1]
    # At (-2, 2) ew's lane +1 is a sidewalk: the drivable ns lane +1 wins whatever the hint.
    pos = net.localize([-2.0, -2.0], [2.0, 2.0], heading=[0.0, np.pi])
    assert list(pos.road_id) == ["ns", "ns"] and pos.lane_id.tolist() == [1, 1]
    assert np.allclose(pos.heading, -np.pi / 2)


def test_heading_hints_in_corpus_junctions() -> None:
    # Points on junction roads, hinted with their own lane's driving direction: the lane
    # chosen (maybe of another road overlapping there) is drivable and points that way.
    drivable = {n.lower() for n in DRIVABLE_TYPES}
    for name in (
        "libOpenDRIVE/test",
        "esmini/multi_intersections",
        "esmini/simple_4way_intersection",
    ):
        net = corpus(name)
        smp = lane_samples(net, 3000, np.random.default_rng(5))
        in_junction = np.array([net.road_junction[r] is not None for r in smp.road])
        kind_ok = np.array([net.lanes.type_name[u].lower() in drivable for u in smp.uid])
        pick = np.flatnonzero(in_junction & kind_ok)
        x, y, uid = smp.x[pick], smp.y[pick], smp.uid[pick]
        _, _, hdg, _ = net.reference.evaluate(smp.road[pick], smp.s[pick])
        hint = hdg + np.where(net.driving_sign(uid) < 0, np.pi, 0.0)
        plain = net.localize(x, y)
        hinted = net.localize(x, y, heading=hint)
        assert hinted.on_lane.all()
        assert all(net.lanes.type_name[u].lower() in drivable for u in hinted.uid)
        assert np.all(np.abs(np.angle(np.exp(1j * (hinted.heading - hint)))) < 0.03)
        assert contains(net, hinted).all() and (maps_back(net, hinted, x, y) < MM).all()
        # Overlaps do occur here, so the hint did some work.
        assert np.any(np.abs(np.angle(np.exp(1j * (plain.heading - hint)))) > 0.5)


def test_z_chooses_the_nearest_surface_on_a_bridge() -> None:
    # Road 0 runs at z = 3 over road 1 (z = 0) for 7 < x < 10.
    net = corpus("esmini/two_roads_overhang")
    x, y = np.full(3, 8.5), np.full(3, -1.0)
    pos = net.localize(x, y, z=[0.1, 2.9, np.nan])
    assert list(pos.road_id[:2]) == ["1", "0"]
    assert np.allclose(pos.surface_z[:2], [0.0, 3.0])
    assert np.allclose(net.surface_height(x, y), 3.0)  # the highest surface without a hint
    assert np.allclose(net.surface_height(x, y, z_hint=[0.5, 2.0, np.nan]), [0.0, 3.0, 3.0])
    assert np.allclose(net.surface_height([1.0, 15.0], [-1.0, -1.0]), [3.0, 0.0])


# -- traffic rules and the surface ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["esmini/e6mini", "esmini/e6mini-lht", "esmini/simple_3way_intersection_lht"]
)
def test_heading_follows_the_driving_direction_in_rht_and_lht(name: str) -> None:
    net = corpus(name)
    smp = lane_samples(net, 500, np.random.default_rng(9))
    pos = net.localize(smp.x, smp.y)
    _, _, hdg, _ = net.reference.evaluate(pos.road_index, pos.s)
    lht = net.road_lht[pos.road_index]
    along_s = np.where(lht, pos.lane_id > 0, pos.lane_id < 0)
    want = np.where(along_s, hdg, hdg + np.pi)
    assert np.all(np.abs(np.angle(np.exp(1j * (pos.heading - want)))) < 1e-5)
    assert lht.all() == name.endswith("lht")


@pytest.mark.parametrize(
    "name",
    [
        "esmini/tilted_crest",
        "esmini/curves_elevation",
        "qc-opendrive/Ex_Line-Spiral-Arc_elevation_and_superelevation",
    ],
)
def test_surface_height_is_the_road_surface(name: str) -> None:
    net = corpus(name)
    smp = lane_samples(net, 500, np.random.default_rng(13))
    assert np.allclose(net.surface_height(smp.x, smp.y), smp.z, atol=MM, rtol=0.0)


def test_superelevation_tilts_the_lateral_axis() -> None:
    # 45 degrees of superelevation on a climbing road: a point's horizontal offset is not
    # t along the horizontal normal, and localize must still return t exactly.
    net = corpus("esmini/tilted_crest")
    s, t = np.array([5.0, 10.0, 15.0]), np.array([-1.5, -2.5, -3.9])
    x, y, _ = net.to_world("1", s, t)
    _, _, hdg, _ = net.reference.evaluate(np.zeros(3, dtype=np.int64), s)
    rx, ry, _ = net.to_world("1", s, 0.0)
    naive = -np.sin(hdg) * (x - rx) + np.cos(hdg) * (y - ry)
    assert np.all(np.abs(naive - t) > 0.3)
    pos = net.localize(x, y)
    assert np.allclose(pos.s, s, atol=1e-6) and np.allclose(pos.t, t, atol=1e-6)


def test_localizer_is_built_once_and_shared() -> None:
    net = network(STRAIGHT)
    assert isinstance(net.localizer, Localizer) and net.localizer is net.localizer
    assert math.isclose(float(net.localize(10.0, -1.0).s), 10.0)


def test_far_from_the_origin_and_on_spirals() -> None:
    # Projected coordinates (UTM-like) keep their precision: the index works relative to
    # each segment and to the grid origin.
    net = network(
        STRAIGHT.replace(
            '<geometry s="0" x="0" y="0" hdg="0" length="100"><line/></geometry>',
            '<geometry s="0" x="512345.6" y="5432109.8" hdg="0.3" length="40">'
            '<arc curvature="0.01"/></geometry>'
            '<geometry s="40" x="512380.4697480576" y="5432128.849430184" hdg="0.7" length="60">'
            '<spiral curvStart="0.01" curvEnd="-0.03"/></geometry>',
        )
    )
    rng = np.random.default_rng(17)
    s, t = rng.uniform(0.0, 99.99, 2000), rng.uniform(-5.49, 2.99, 2000)
    x, y, _ = net.to_world("r", s, t)
    pos = net.localize(x, y)
    assert pos.on_lane.all()
    assert np.abs(pos.s - s).max() < 1e-5 and np.abs(pos.t - t).max() < 1e-5


def test_a_network_without_roads_has_no_lanes() -> None:
    net = network('<?xml version="1.0"?><OpenDRIVE><header revMajor="1" revMinor="8"/></OpenDRIVE>')
    assert_off(net.localize([0.0, 1.0], [0.0, 2.0]))
    assert np.isnan(net.surface_height(0.0, 0.0))
