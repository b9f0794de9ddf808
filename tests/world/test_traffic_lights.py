"""Traffic light plans: controller phases, default plans, cycles and stop lines."""

from __future__ import annotations

import dataclasses
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import roadsim
from roadsim.errors import MapWarning
from roadsim.road import builtin
from roadsim.road.builder import traffic_light
from roadsim.road.network import RoadNetwork
from roadsim.world.traffic_lights import (
    GREEN,
    NON_VEHICLE_LIGHT_TYPES,
    RED,
    YELLOW,
    TrafficLightPlan,
)
from tests.conftest import CORPUS

ESMINI = CORPUS / "maps" / "esmini"


@cache
def load(name: str) -> RoadNetwork:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MapWarning)
        return roadsim.load_map(name if "/" not in name else ESMINI / name.split("/")[1])


def states_over(plan: TrafficLightPlan, duration: float, dt: float = 0.05) -> np.ndarray:
    """States at every frame of ``duration`` seconds: shape (frames, n_signals)."""
    frames = round(duration / dt)
    return np.array([plan.state(k * dt) for k in range(frames)])


# -- town: two controllers at the central crossroads -------------------------------------------


def test_town_uses_its_controllers() -> None:
    plan = TrafficLightPlan.from_network(load("town"))
    ids = [sig.id for sig in plan.signals]
    assert ids == ["2001", "2002", "2003", "2004"]
    (group,) = plan.groups
    assert group.junction_id == "1001"
    assert group.controllers == ("3001", "3002")  # by sequence 1, 2
    assert [[ids[i] for i in phase] for phase in group.phases] == [
        ["2001", "2003"],
        ["2002", "2004"],
    ]
    assert group.cycle == pytest.approx(2 * (20.0 + 3.0 + 2.0))
    assert group.offset == 0.0  # the first junction starts the cycle at t = 0


def test_town_cycle_sequence() -> None:
    plan = TrafficLightPlan.from_network(load("town"))
    ns, ew = [0, 2], [1, 3]  # north-south and east-west lights

    def at(t: float) -> list[int]:
        return [int(v) for v in plan.state(t)]

    assert at(0.0) == [GREEN, RED, GREEN, RED]
    assert at(19.95) == [GREEN, RED, GREEN, RED]
    assert at(20.0) == [YELLOW, RED, YELLOW, RED]
    assert at(23.0) == [RED] * 4  # all red
    assert at(25.0) == [RED, GREEN, RED, GREEN]
    assert at(45.0) == [RED, YELLOW, RED, YELLOW]
    assert at(48.0) == [RED] * 4
    assert at(50.0) == at(0.0)
    states = states_over(plan, 100.0)
    assert (states[:, ns] == states[:, [0]]).all() and (states[:, ew] == states[:, [1]]).all()


def test_town_never_two_phases_at_once() -> None:
    plan = TrafficLightPlan.from_network(load("town"))
    states = states_over(plan, 200.0)
    moving = states != RED  # green or yellow: traffic may enter
    assert not (moving[:, 0] & moving[:, 1]).any()
    assert (states == GREEN).any(axis=0).all()  # every light is green some time
    assert (states == YELLOW).any(axis=0).all()


def test_yellow_between_green_and_red() -> None:
    plan = TrafficLightPlan.from_network(load("town"))
    states = states_over(plan, 200.0)
    for col in states.T:
        change = np.flatnonzero(col[1:] != col[:-1])
        for k in change:
            before, after = col[k], col[k + 1]
            assert (before, after) in {(GREEN, YELLOW), (YELLOW, RED), (RED, GREEN)}


def test_timings_are_parameters() -> None:
    plan = TrafficLightPlan.from_network(load("town"), green=10.0, yellow=2.0, all_red=1.0)
    assert plan.groups[0].cycle == pytest.approx(26.0)
    assert plan.state(9.9).tolist() == [GREEN, RED, GREEN, RED]
    assert plan.state(10.0).tolist() == [YELLOW, RED, YELLOW, RED]
    assert plan.state(12.0).tolist() == [RED] * 4
    assert plan.state(13.0).tolist() == [RED, GREEN, RED, GREEN]


@pytest.mark.parametrize("kwargs", [{"green": 0.0}, {"yellow": -1.0}, {"all_red": float("nan")}])
def test_bad_timings(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="traffic light timings"):
        TrafficLightPlan.from_network(load("town"), **kwargs)


def test_deterministic() -> None:
    a = TrafficLightPlan.from_network(load("town"))
    b = TrafficLightPlan.from_network(load("town"))
    times = np.arange(4000) * 0.05
    sa = np.array([a.state(t) for t in times])
    sb = np.array([b.state(t) for t in times])
    np.testing.assert_array_equal(sa, sb)
    assert sa.dtype == np.int8


def test_town_stop_lines_on_the_approach_lanes() -> None:
    net = load("town")
    plan = TrafficLightPlan.from_network(net)
    lines = plan.stop_lines
    # Every spoke's lane 1 drives toward the crossroads (s decreasing) and stops at s=2.
    expected = {int(net.lane_uid(road, 1, 2.0)): str(2000 + int(road)) for road in "1234"}
    got = {
        int(u): plan.signals[int(i)].id for u, i in zip(lines.uid, lines.signal_index, strict=True)
    }
    assert got == expected
    np.testing.assert_array_equal(lines.s, 2.0)
    for uid in expected:
        a, b = int(lines.ptr[uid]), int(lines.ptr[uid + 1])
        assert b - a == 1 and lines.uid[a] == uid
    assert lines.ptr[-1] == len(lines.uid) and len(lines.ptr) == net.graph.n_lanes + 1
    # The state seen at a stop line is its light's.
    np.testing.assert_array_equal(plan.stop_line_state(30.0), plan.state(30.0)[lines.signal_index])


def test_stop_lines_agree_with_signals_ahead() -> None:
    net = load("town")
    plan = TrafficLightPlan.from_network(net)
    for uid, i in zip(plan.stop_lines.uid, plan.stop_lines.signal_index, strict=True):
        ahead = net.signals_ahead(int(uid), 100.0, 200.0)
        assert plan.signals[int(i)].id in [a.signal.id for a in ahead]


# -- esmini maps ------------------------------------------------------------------------------


def test_multi_intersections_controllers_take_turns() -> None:
    net = load("esmini/multi_intersections")
    plan = TrafficLightPlan.from_network(net)
    assert len(plan.signals) == 68
    assert [g.junction_id for g in plan.groups] == ["146", "148", "150", "152", "154"]
    first = plan.groups[0]
    assert first.controllers == ("1", "2", "3", "4")  # no sequence: by id
    # The groups are offset from each other.
    assert len({round(g.offset, 6) for g in plan.groups}) == len(plan.groups)
    states = states_over(plan, 300.0, dt=0.25)
    for g, group in enumerate(plan.groups):
        moving = np.stack(
            [(states[:, list(phase)] != RED).any(axis=1) for phase in group.phases], axis=1
        )
        assert (moving.sum(axis=1) <= 1).all(), f"group {g}: two phases at once"
    assert (states == GREEN).any(axis=0).all()
    # Each signal is in exactly one phase.
    members = sorted(i for g in plan.groups for phase in g.phases for i in phase)
    assert members == list(range(len(plan.signals)))


def test_multi_intersections_stop_lines() -> None:
    net = load("esmini/multi_intersections")
    plan = TrafficLightPlan.from_network(net)
    lines = plan.stop_lines
    assert len(lines.uid) > 0
    lights = [plan.signals[int(i)] for i in lines.signal_index]
    assert all(sig.type not in NON_VEHICLE_LIGHT_TYPES for sig in lights)
    # Every vehicle light governs a lane, driven toward the junction at the road's start.
    vehicle = {sig.id for sig in plan.signals if sig.type not in NON_VEHICLE_LIGHT_TYPES}
    assert {sig.id for sig in lights} == vehicle
    assert all(net.lanes.type_name[int(u)] == "driving" for u in lines.uid)
    assert (net.graph.driving_sign[lines.uid] < 0).all()
    assert np.all(np.diff(lines.uid) >= 0)


def test_fabriksgatan_gets_a_default_plan() -> None:
    net = load("esmini/fabriksgatan_traffic_lights")
    assert not net.controllers
    plan = TrafficLightPlan.from_network(net)
    ids = [sig.id for sig in plan.signals]
    (group,) = plan.groups
    assert group.junction_id == "4"
    assert group.controllers == (None, None)
    # The car light, then the pedestrian lights that cross its road.
    assert [[ids[i] for i in phase] for phase in group.phases] == [["1"], ["2", "3"]]
    states = states_over(plan, 100.0)
    car, walk = states[:, 0], states[:, 1:]
    assert not ((car != RED)[:, None] & (walk != RED)).any()
    assert (walk != YELLOW).all()  # pedestrian lights have no yellow
    assert (car == YELLOW).any() and (walk == GREEN).any()
    # Only the car light has a stop line: lane -1 of road 3 at s=109.
    lines = plan.stop_lines
    assert [ids[int(i)] for i in lines.signal_index] == ["1"]
    assert lines.uid.tolist() == [int(net.lane_uid("3", -1, 109.0))]
    assert lines.s.tolist() == [109.0]


def test_town_without_controllers_gets_a_default_plan(tmp_path: Path) -> None:
    """Without controllers, the crossroads' lights are grouped north-south / east-west."""
    doc = builtin.town()
    doc.controllers = []
    for junction in doc.junctions:
        junction.controllers = []
    doc.write(tmp_path / "town.xodr")
    net = roadsim.load_map(tmp_path / "town.xodr")
    assert not net.controllers
    plan = TrafficLightPlan.from_network(net)
    ids = [sig.id for sig in plan.signals]
    (group,) = plan.groups
    assert group.junction_id == "1001" and group.controllers == (None, None)
    assert [[ids[i] for i in phase] for phase in group.phases] == [
        ["2001", "2003"],  # north and south streets
        ["2002", "2004"],  # east and west
    ]
    np.testing.assert_array_equal(
        states_over(plan, 100.0), states_over(TrafficLightPlan.from_network(load("town")), 100.0)
    )


def test_pedestrian_crossing_away_from_junctions(tmp_path: Path) -> None:
    """Car lights both ways and a pedestrian light mid-block switch as one group."""
    doc = builtin.town()
    road = doc.roads[4]  # a ring street, 257 m long
    assert road.length > 200.0
    road.signals += [
        traffic_light("9001", 128.0, -3.0, orientation="+", lanes=(-1, -1)),
        traffic_light("9002", 130.0, 3.0, orientation="-", lanes=(1, 1)),
        dataclasses.replace(
            traffic_light("9003", 129.0, -5.0, orientation="+", lanes=(-1, -1)),
            type="1000002",
        ),
        traffic_light("9004", 200.0, -3.0, orientation="+", lanes=(-1, -1)),  # on its own
    ]
    doc.write(tmp_path / "crossing.xodr")
    net = roadsim.load_map(tmp_path / "crossing.xodr")
    plan = TrafficLightPlan.from_network(net)
    ids = [sig.id for sig in plan.signals]
    crossing = next(g for g in plan.groups if g.junction_id is None and len(g.phases) == 2)
    assert [[ids[i] for i in phase] for phase in crossing.phases] == [["9001", "9002"], ["9003"]]
    alone = next(g for g in plan.groups if g.junction_id is None and len(g.phases) == 1)
    assert [[ids[i] for i in phase] for phase in alone.phases] == [["9004"]]
    assert crossing.offset != alone.offset
    # Both car directions stop on their own lane; the pedestrian light has no stop line.
    lines = {
        ids[int(i)]: int(u)
        for i, u in zip(plan.stop_lines.signal_index, plan.stop_lines.uid, strict=True)
    }
    assert lines["9001"] == int(net.lane_uid(road.id, -1, 128.0))
    assert lines["9002"] == int(net.lane_uid(road.id, 1, 130.0))
    assert "9003" not in lines


def test_map_without_lights() -> None:
    plan = TrafficLightPlan.from_network(load("highway"))
    assert plan.signals == () and plan.groups == ()
    assert plan.state(12.0).shape == (0,)
    assert plan.stop_lines.uid.shape == (0,)
