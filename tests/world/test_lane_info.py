"""The lane tables own the stop lines of the lights (traffic only reads them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import roadsim
from roadsim.agents.traffic import TrafficModel
from roadsim.road.load import load_map
from roadsim.sensors.driver import DriverSensor
from roadsim.sim.build import MODEL_NAMES
from roadsim.world.codes import ENVELOPE_DECEL
from roadsim.world.lane_info import LaneInfo
from roadsim.world.traffic_lights import TrafficLightPlan


def test_first_stop_line_of_each_lane_in_the_tables() -> None:
    net = roadsim.load_map("town").prepare()
    plan = TrafficLightPlan.from_network(net)
    info = LaneInfo(net, plan.stop_lines)
    lines = plan.stop_lines
    assert len(lines.uid) > 0
    want_p = np.full(info.n, np.inf)
    want_signal = np.full(info.n, -1)
    for u, s, i in zip(lines.uid, lines.s, lines.signal_index, strict=True):
        p = float(info.progress(np.array([u]), np.array([s]))[0])
        if p < want_p[u]:
            want_p[u], want_signal[u] = p, i
    np.testing.assert_array_equal(info.stop_p, want_p)
    np.testing.assert_array_equal(info.stop_signal, want_signal)
    # The compiled kernels read the same columns.
    np.testing.assert_array_equal(info.arrays.stop_p, want_p)
    np.testing.assert_array_equal(info.arrays.stop_signal, want_signal)


def test_no_stop_lines_by_default() -> None:
    info = LaneInfo(roadsim.load_map("town").prepare())
    assert np.all(np.isinf(info.stop_p)) and np.all(info.stop_signal == -1)
    assert np.all(np.isinf(info.arrays.stop_p)) and np.all(info.arrays.stop_signal == -1)


def test_traffic_refuses_lane_tables_without_the_lights_stop_lines() -> None:
    net = roadsim.load_map("town").prepare()
    plan = TrafficLightPlan.from_network(net)
    info = LaneInfo(net)
    sensor = DriverSensor(info, plan, MODEL_NAMES)
    with pytest.raises(ValueError, match="stop_lines"):
        TrafficModel(info, plan, sensor)


def test_a_piece_of_a_connecting_road_passes_on_the_envelope_after_it() -> None:
    """Town07 cuts connecting roads into pieces of centimetres: traffic reads the speed
    envelope of three lane records ahead, and a car behind three pieces read the 7 m turn
    after them too late (it entered at 11 m/s, swept into the next lane and hit a car)."""
    town07 = Path(__file__).parents[1] / "data" / "opendrive" / "maps" / "libOpenDRIVE"
    info = LaneInfo(load_map(str(town07 / "test.xodr")).prepare())
    env = info.arrays.envelope_start
    own = info.table.envelope_sq[info.table.ptr[:-1]]
    piece = np.flatnonzero((info.length < 2.0) & (info.next_count == 1) & info.drivable)
    after = info.first_next[piece]
    assert piece.size > 200
    np.testing.assert_array_less(
        env[piece], env[after] + 2.0 * ENVELOPE_DECEL * info.length[piece] + 1e-9
    )
    assert np.all(env <= own)
    assert np.count_nonzero(env[piece] < own[piece]) > 50  # (the pieces before turns)
