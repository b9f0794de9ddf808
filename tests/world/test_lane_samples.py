"""The sampled lane tables: straight lane records keep only their end samples, and answer
as the fully sampled tables do."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from roadsim._types import IntArray
from roadsim.road.builder import (
    CubicSpec,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadSpec,
    link_sections,
)
from roadsim.road.load import load_map
from roadsim.road.network import RoadNetwork
from roadsim.world.lane_info import LaneInfo
from roadsim.world.lane_kernels import DIR_X, DIR_Y, centre, straight_headings
from roadsim.world.lane_samples import STEP, LaneSamples
from tests.conftest import CORPUS
from tests.sensors import roads


def _network(doc: roads.Document, folder: Path) -> RoadNetwork:
    return load_map(roads.write(doc, folder)).prepare()


def _sampled(info: LaneInfo) -> IntArray:
    return np.flatnonzero(info.sign != 0)


def _dense(net: RoadNetwork, info: LaneInfo) -> LaneSamples:
    """The tables with every lane record sampled at most `STEP` apart."""
    lanes = _sampled(info)
    return LaneSamples(net, lanes, info.s0, info.s1, info.sign, dense=lanes)


def _agree(thin: LaneSamples, dense: LaneSamples, uid: IntArray, rng: np.random.Generator) -> None:
    """Both tables give the same pose and boundaries at random progress on ``uid``."""
    length = dense.spacing[uid] * (dense.count[uid] - 1)
    p = rng.uniform(-1.0, 1.0, uid.size) + rng.uniform(0.0, 1.0, uid.size) * length
    for a, b in zip(thin.pose(uid, p), dense.pose(uid, p), strict=True):
        np.testing.assert_allclose(a, b, rtol=0.0, atol=1e-9)
    for a, b in zip(thin.bounds(uid, p), dense.bounds(uid, p), strict=True):
        np.testing.assert_allclose(a, b, rtol=0.0, atol=1e-9)


def test_straight_lanes_keep_their_two_end_samples(tmp_path: Path) -> None:
    net = _network(roads.straight(), tmp_path)
    info = LaneInfo(net)
    lanes = _sampled(info)
    assert lanes.size >= 8
    np.testing.assert_array_equal(info.table.count[lanes], 2)
    length = info.s1[lanes] - info.s0[lanes]
    np.testing.assert_allclose(info.table.spacing[lanes], length)
    dense = _dense(net, info)
    assert (dense.count[lanes] > 2).all()
    _agree(info.table, dense, np.repeat(lanes, 50), np.random.default_rng(1))


def test_curved_lanes_keep_every_sample(tmp_path: Path) -> None:
    net = _network(roads.curve(), tmp_path)
    info = LaneInfo(net)
    lanes = _sampled(info)
    on_arc = lanes[info.s0[lanes] >= 20.0 - 1e-9]
    on_line = lanes[info.s1[lanes] <= 20.0 + 1e-9]
    assert on_arc.size == 4 and on_line.size == 4
    # 150 m of arc, samples at most STEP apart
    assert (info.table.count[on_arc] >= 150.0 / STEP + 1).all()
    assert (info.table.spacing[on_arc] <= STEP).all()
    _agree(info.table, _dense(net, info), np.repeat(lanes, 50), np.random.default_rng(2))


def test_junction_lanes_keep_every_sample_even_straight(tmp_path: Path) -> None:
    # The junction conflict search reads a connecting lane's samples as points on it.
    net = _network(roads.junction(), tmp_path)
    info = LaneInfo(net)
    lanes = _sampled(info)
    inside = lanes[info.junction[lanes] >= 0]
    outside = lanes[info.junction[lanes] < 0]
    assert inside.size == 2 and outside.size == 4
    np.testing.assert_array_equal(info.table.count[outside], 2)
    # 10 m of straight connecting road: six samples 2 m apart
    np.testing.assert_array_equal(info.table.count[inside], 6)


def test_a_lane_of_curved_width_is_not_straight(tmp_path: Path) -> None:
    # On a straight road: lane -1 widens linearly (its boundaries stay straight lines),
    # lane -2 widens along a cubic (its outer boundary bends), lane -3 is 3.5 m wide.
    lanes = (
        LaneSpec(-1, "driving", (CubicSpec(0.0, 3.0, 0.01),)),
        LaneSpec(-2, "driving", (CubicSpec(0.0, 3.0, 0.0, 1e-4, -5e-7),)),
        LaneSpec(-3, "driving", 3.5),
    )
    sections = link_sections([LaneSectionSpec(0.0, lanes), LaneSectionSpec(100.0, lanes)])
    road = RoadSpec("r", PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),)), sections)
    net = _network(roads.Document("widths", [road]), tmp_path)
    info = LaneInfo(net)
    count = info.table.count[net.lane_uid("r", [-1, -2, -3], 50.0)]
    # 100 m, samples 2 m apart; lane -3's boundaries lie outside -2's, so they bend too
    np.testing.assert_array_equal(count, [2, 51, 51])
    _agree(info.table, _dense(net, info), np.repeat(_sampled(info), 50), np.random.default_rng(3))


@pytest.mark.parametrize(
    "name",
    ["libOpenDRIVE/test.xodr", "esmini/multi_intersections.xodr", "esmini/fabriksgatan.xodr"],
)
def test_real_maps_answer_as_the_fully_sampled_tables(name: str) -> None:
    net = load_map(CORPUS / "maps" / name).prepare()
    info = LaneInfo(net)
    dense = _dense(net, info)
    lanes = _sampled(info)
    thin = info.table
    assert thin.count.sum() <= dense.count.sum()
    straight = lanes[(thin.count[lanes] == 2) & (dense.count[lanes] > 2)]
    # Every lane whose records are not straight kept its samples, bit for bit.
    kept = lanes[thin.count[lanes] == dense.count[lanes]]
    for column in ("x", "y", "t_lo", "t_hi", "dir_x", "dir_y", "curvature", "envelope_sq"):
        a, b = getattr(thin, column), getattr(dense, column)
        for u in kept[:200]:
            np.testing.assert_array_equal(
                a[thin.ptr[u] : thin.ptr[u + 1]], b[dense.ptr[u] : dense.ptr[u + 1]]
            )
    assert straight.size > 0
    _agree(thin, dense, np.repeat(straight, 20), np.random.default_rng(4))
    np.testing.assert_allclose(
        thin.envelope_sq[thin.ptr[straight]], dense.envelope_sq[dense.ptr[straight]], atol=1e-3
    )


@pytest.mark.parametrize("name", ["libOpenDRIVE/test.xodr", "esmini/multi_intersections.xodr"])
def test_straight_headings_are_the_angle_of_the_lane_direction_to_the_bit(name: str) -> None:
    """Where a record's samples all point one way, `straight_headings` is what `centre`
    and ``math.atan2`` give anywhere along it (the lane keeping reads it instead)."""
    info = LaneInfo(load_map(CORPUS / "maps" / name).prepare())
    la = info.arrays
    heading = straight_headings(la)
    lanes = _sampled(info)
    straight = lanes[np.isfinite(heading[lanes])]
    curved = lanes[~np.isfinite(heading[lanes])]
    assert straight.size > 0 and curved.size > 0
    rng = np.random.default_rng(5)
    for u in straight:
        for p in rng.uniform(-1.0, info.length[u] + 1.0, 4):
            _, _, cos_h, sin_h = centre(la, int(u), float(p))
            assert math.atan2(sin_h, cos_h) == heading[u]
    for u in curved:  # their samples do not all share one direction
        rows = la.sample[la.ptr[u] : la.ptr[u + 1]]
        assert rows.shape[0] > 1
        assert (
            not (rows[:, DIR_X] == rows[0, DIR_X]).all()
            or not (rows[:, DIR_Y] == rows[0, DIR_Y]).all()
        )


def test_a_centimetre_of_absurd_curvature_is_read_as_the_turn_it_makes(tmp_path: Path) -> None:
    # Converted maps join lines with pieces like this (Town07: -630 1/m at a lane's end).
    # Read at one sample, the spike set the speed envelope to 6 cm/s and stopped traffic.
    from roadsim.errors import MapWarning
    from roadsim.road.builder import Arc, Document

    plan = PlanView(Pose(0.0, 0.0, 0.0), (Line(50.0), Arc(0.01, 5.0)))  # at the lanes' ends
    road = RoadSpec("1", plan, [LaneSectionSpec(0.0, (LaneSpec(1), LaneSpec(-1)))])
    path = tmp_path / "kink.xodr"
    Document("kink", [road]).write(path)
    with pytest.warns(MapWarning, match="a radius of 0.2 m"):
        info = LaneInfo(load_map(path).prepare())
    table = info.table
    # The piece turns the road by 0.05 rad: a few hundredths per metre, not 5.
    assert np.abs(table.curvature).max() < 0.1
    assert np.sqrt(table.envelope_sq).min() > 5.0
