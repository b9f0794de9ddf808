"""Road-network queries on maps whose answers can be worked out by hand."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np
import pytest

import roadsim
from roadsim.errors import ArgumentError, ArgumentTypeError, QueryError
from roadsim.road.network import RoadNetwork
from roadsim.road.xodr import read_xodr
from tests.conftest import CORPUS_MAPS


def corpus(stem: str) -> RoadNetwork:
    return roadsim.load_map(next(p for p in CORPUS_MAPS if p.stem == stem))


def network(xml: str) -> RoadNetwork:
    return RoadNetwork(read_xodr(xml.encode(), path="test.xodr"))


def single_road(planview: str, lanes: str, extra: str = "", length: float = 100.0) -> str:
    return f"""<?xml version="1.0"?>
<OpenDRIVE><header revMajor="1" revMinor="8"/>
<road id="r" length="{length}" junction="-1">
  <planView>{planview}</planView>
  {extra}
  <lanes>{lanes}</lanes>
</road></OpenDRIVE>"""


STRAIGHT = "<geometry s='0' x='10' y='20' hdg='0' length='100'><line/></geometry>"
TWO_LANES = """<laneSection s="0">
  <left><lane id="1" type="driving"><width sOffset="0" a="3" b="0" c="0" d="0"/></lane></left>
  <center><lane id="0" type="none"/></center>
  <right>
    <lane id="-1" type="driving"><width sOffset="0" a="3.5" b="0.01" c="0" d="0"/></lane>
    <lane id="-2" type="shoulder"><width sOffset="0" a="1" b="0" c="0" d="0"/></lane>
  </right>
</laneSection>"""


def test_to_world_on_a_straight_road_broadcasts() -> None:
    net = network(single_road(STRAIGHT, TWO_LANES))
    x, y, z = net.to_world("r", [0.0, 50.0], 2.0)
    assert np.allclose(x, [10.0, 60.0]) and np.allclose(y, [22.0, 22.0]) and np.allclose(z, 0.0)
    x, y, z = net.to_world("r", 5.0, -1.0, h=1.5)
    assert (float(x), float(y), float(z)) == pytest.approx((15.0, 19.0, 1.5))


def test_road_ids_of_one_index_or_many() -> None:
    net = network(single_road(STRAIGHT, TWO_LANES))
    assert net.road_id_of([0, -1]).tolist() == ["r", None]
    # One index gives a 0-d array, as NumPy's indexing does (before: a TypeError).
    assert net.road_id_of(0).item() == "r"
    assert net.road_id_of(np.int64(-1)).item() is None


def test_lane_boundaries_and_widths_follow_the_width_polynomials() -> None:
    net = network(single_road(STRAIGHT, TWO_LANES))
    s = np.array([0.0, 40.0])
    assert np.allclose(net.lane_t_outer("r", 1, s), [3.0, 3.0])
    assert np.allclose(net.lane_t_outer("r", -1, s), [-3.5, -3.9])
    assert np.allclose(net.lane_t_outer("r", -2, s), [-4.5, -4.9])
    assert np.allclose(net.lane_width("r", -1, s), [3.5, 3.9])
    assert np.allclose(net.lane_width("r", 0, s), 0.0)
    assert np.allclose(net.lane_curvature("r", -1, s), 0.0)


def test_lane_offset_shifts_every_lane() -> None:
    net = network(
        single_road(STRAIGHT, '<laneOffset s="0" a="0.5" b="0.01" c="0" d="0"/>' + TWO_LANES)
    )
    assert float(net.lane_t_outer("r", 1, 10.0)) == pytest.approx(0.6 + 3.0)
    assert float(net.lane_t_outer("r", -2, 10.0)) == pytest.approx(0.6 - 3.6 - 1.0)


def test_borders_give_the_outer_edge_directly() -> None:
    lanes = """<laneSection s="0">
      <left><lane id="1" type="driving"><border sOffset="0" a="4" b="0" c="0" d="0"/></lane></left>
      <center><lane id="0"/></center>
      <right>
        <lane id="-1" type="driving"><border sOffset="0" a="-4" b="-0.01" c="0" d="0"/></lane>
        <lane id="-2" type="shoulder"><width sOffset="0" a="1" b="0" c="0" d="0"/></lane>
      </right></laneSection>"""
    net = network(single_road(STRAIGHT, lanes))
    assert float(net.lane_t_outer("r", 1, 50.0)) == pytest.approx(4.0)
    assert float(net.lane_t_outer("r", -1, 50.0)) == pytest.approx(-4.5)
    assert float(net.lane_width("r", -1, 50.0)) == pytest.approx(4.5)
    assert float(net.lane_t_outer("r", -2, 50.0)) == pytest.approx(-5.5)


def test_section_boundary_belongs_to_the_later_section() -> None:
    lanes = TWO_LANES + TWO_LANES.replace('s="0"', 's="50"', 1).replace('a="3"', 'a="2"')
    net = network(single_road(STRAIGHT, lanes))
    assert float(net.lane_t_outer("r", 1, 49.999)) == pytest.approx(3.0)
    assert float(net.lane_t_outer("r", 1, 50.0)) == pytest.approx(2.0)
    first, second = net.lane_uid("r", [1, 1], [10.0, 50.0])
    assert first != second


def test_arc_lane_curvature_is_that_of_the_offset_circle() -> None:
    radius = 100.0
    arc = f"<geometry s='0' x='0' y='0' hdg='0' length='100'><arc curvature='{1 / radius}'/></geometry>"
    net = network(single_road(arc, TWO_LANES))
    # Lane 1 (left of the reference, driven against s in RHT): centre at t = 1.5 turns
    # with radius 98.5, to the right as driven.
    assert float(net.lane_curvature("r", 1, 30.0)) == pytest.approx(-1 / (radius - 1.5), rel=1e-6)
    # Lane -2's centre is at t = -4.0 - 0.5 - 0.01*s/... (width varies slowly): close to 1/(r+4.x)
    uid = np.atleast_1d(net.lane_uid("r", -2, 30.0))
    t_c = float(net.uid_t_center(uid, np.array([30.0]))[0])
    assert float(net.lane_curvature("r", -2, 30.0)) == pytest.approx(1 / (radius - t_c), rel=1e-3)
    # Points on the arc lie on the circle around (0, radius).
    x, y, _ = net.to_world("r", np.linspace(0, 100, 11), -2.0)
    assert np.allclose(np.hypot(x, y - radius), radius + 2.0)


def test_left_hand_traffic_reverses_driving_direction() -> None:
    rht = network(single_road(STRAIGHT, TWO_LANES))
    lht = network(
        single_road(STRAIGHT, TWO_LANES).replace('junction="-1"', 'junction="-1" rule="LHT"')
    )
    uid = rht.lane_uid("r", [1, -1], [5.0, 5.0])
    assert list(rht.driving_sign(uid)) == [-1.0, 1.0]
    assert list(lht.driving_sign(uid)) == [1.0, -1.0]


def test_superelevation_tilts_the_lateral_axis() -> None:
    roll = 0.1
    net = network(
        single_road(
            STRAIGHT,
            TWO_LANES,
            f'<lateralProfile><superelevation s="0" a="{roll}" b="0" c="0" d="0"/></lateralProfile>',
        )
    )
    _x, y, z = net.to_world("r", 10.0, 3.0)
    assert float(y) == pytest.approx(20.0 + 3.0 * math.cos(roll))
    assert float(z) == pytest.approx(3.0 * math.sin(roll))


def test_elevation_and_slope() -> None:
    elevation = '<elevationProfile><elevation s="0" a="1" b="0.05" c="0" d="0"/></elevationProfile>'
    net = network(single_road(STRAIGHT, TWO_LANES, elevation))
    _, _, z = net.to_world("r", 20.0, 0.0)
    assert float(z) == pytest.approx(2.0)
    # On a slope, a point 1 m above the surface leans back along the normal.
    x, _, z = net.to_world("r", 20.0, 0.0, h=1.0)
    k = 1 / math.sqrt(1 + 0.05**2)
    assert float(x) == pytest.approx(30.0 - 0.05 * k) and float(z) == pytest.approx(2.0 + k)


def test_spiral_curvature_grows_linearly() -> None:
    spiral = "<geometry s='0' x='0' y='0' hdg='0' length='100'><spiral curvStart='0' curvEnd='0.02'/></geometry>"
    net = network(single_road(spiral, TWO_LANES))
    _, _, hdg, curv = net.reference.evaluate(
        np.zeros(3, dtype=np.int64), np.array([0.0, 50.0, 100.0])
    )
    assert np.allclose(curv, [0.0, 0.01, 0.02])
    assert np.allclose(hdg, [0.0, 0.01 * 50 / 2, 0.02 * 100 / 2])


def test_param_poly3_without_prange_is_normalized() -> None:
    # u = 100 p, v = 10 p**2, so v = u**2 / 1000; with p in [0, 1] (the default range,
    # "normalized") the road ends at (100, 10). Read as arcLength, p would run to the
    # length and the road end 1e5 m away.
    length = 20.0 * (0.5 * math.sqrt(26.0) + 12.5 * math.log((1.0 + math.sqrt(26.0)) / 5.0))
    curve = (
        f"<geometry s='0' x='0' y='0' hdg='0' length='{length!r}'>"
        "<paramPoly3 aU='0' bU='100' cU='0' dU='0' aV='0' bV='0' cV='10' dV='0'/></geometry>"
    )
    net = network(single_road(curve, TWO_LANES, length=length))
    s = np.array([0.0, 0.5 * length, length])
    x, y, hdg, _ = net.reference.evaluate(np.zeros(3, dtype=np.int64), s)
    assert (x[-1], y[-1]) == pytest.approx((100.0, 10.0), abs=1e-9)
    assert np.allclose(y, x * x / 1000.0, atol=1e-9)
    assert hdg[-1] == pytest.approx(math.atan2(20.0, 100.0))
    # The right lane's outer edge at the end: 3.5 + 0.01 s to the right of (100, 10).
    t = -(3.5 + 0.01 * length)
    ex, ey, _ = net.to_world("r", length, t)
    assert (float(ex), float(ey)) == pytest.approx(
        (100.0 - t * math.sin(hdg[-1]), 10.0 + t * math.cos(hdg[-1])), abs=1e-9
    )


def test_unknown_road_or_lane_is_a_query_error() -> None:
    net = network(single_road(STRAIGHT, TWO_LANES))
    with pytest.raises(QueryError, match="no road with id 'nope'"):
        net.to_world("nope", 0.0, 0.0)
    with pytest.raises(
        QueryError, match="road r has no lane -4 at s=10; lanes there: -2, -1, 0, 1"
    ):
        net.lane_width("r", -4, 10.0)


def test_to_world_refuses_s_outside_the_road() -> None:
    net = network(single_road(STRAIGHT, TWO_LANES))
    x, _, _ = net.to_world("r", [0.0, 100.0, 100.0005, -0.0005], 0.0)  # ends, and rounding
    assert np.allclose(x, [10.0, 110.0, 110.0005, 9.9995])
    assert np.isnan(net.to_world("r", math.nan, 0.0)[0])  # localize's off-road answer
    for s in (100.01, -5.0, [50.0, 1e6]):
        with pytest.raises(ArgumentError, match=r"test\.xodr: s=\S+ is outside road r, "):
            net.to_world("r", s, 0.0)
    with pytest.raises(ValueError, match="which runs from s=0 to s=100 m"):
        net.to_world("r", 1e6, 0.0)


def test_lane_uids_must_be_integers() -> None:
    net = network(single_road(STRAIGHT, TWO_LANES))
    uid = int(net.lane_uid("r", -1, 10.0))
    assert net.successors(np.int64(uid)) == net.successors(uid)
    assert net.left_neighbour(np.int32(uid)) == net.left_neighbour(uid)
    for bad in (uid + 0.9, float(uid), True, "1", None):
        with pytest.raises(ArgumentTypeError, match="uid: expected an integer id"):
            net.successors(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        net.predecessors(0.5)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match=r"uid: expected integer ids, got 0\.5 \(float\)"):
        net.distance_to_end_of_lane([uid, 0.5], [0.0, 0.0])
    with pytest.raises(ArgumentTypeError, match="route: expected integer ids"):
        net.distance_to_end_of_lane([uid], [0.0], route=[uid, 1.5])  # type: ignore[list-item]
    assert net.distance_to_end_of_lane(np.array([uid], dtype=np.uint8), [0.0]).shape == (1,)


def test_lane_ids_must_be_integers() -> None:
    net = network(single_road(STRAIGHT, TWO_LANES))
    assert net.lane_width("r", np.int8(-1), 0.0) == pytest.approx(3.5)
    assert net.lane_width("r", -1.0, 0.0) == pytest.approx(3.5)  # a whole float is fine
    for bad in (-1.5, math.nan):
        with pytest.raises(ArgumentTypeError, match="lane_id: expected integer lane ids"):
            net.lane_width("r", bad, 0.0)
    with pytest.raises(ArgumentTypeError, match=r"got -0\.5"):
        net.lane_uid("r", [-1, -0.5], 10.0)


def test_builtin_name_and_path_load_the_same(tmp_path: Path) -> None:
    net = corpus("straight_500m")
    assert net.road_ids == ("0",) or len(net.road_ids) >= 1
    assert "RoadNetwork" in repr(net)


def test_one_meaning_per_parameter_name() -> None:
    """``lane_id`` is an OpenDRIVE lane id beside a ``road_id``; ``uid`` a lane uid; no
    parameter is called ``lane``, which meant either."""
    methods = {
        name: inspect.signature(member).parameters
        for name, member in inspect.getmembers(RoadNetwork, inspect.isfunction)
        if not name.startswith("_")
    }
    for name, params in methods.items():
        assert "lane" not in params, name
        if "lane_id" in params:
            assert "road_id" in params, name
    for name in ("distance_to_end_of_lane", "signals_ahead", "successors", "left_neighbour"):
        assert list(methods[name])[:2] == ["self", "uid"], name
