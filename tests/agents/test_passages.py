"""Long vehicles meeting on bends too tight for two of them side by side take turns
(`roadsim.agents.passages`): one waits before the bend until the other is out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roadsim import Simulation
from roadsim.agents.passages import (
    PASSAGE_MARGIN,
    PASSAGE_RADIUS,
    WAIT_BEFORE,
    PassageGate,
    find_passages,
)
from roadsim.scenario.schema import validate_data
from roadsim.world.lane_info import LaneInfo
from tests.agents.bends import LANE, bend_road

STRAIGHT = 150.0  # m before and after the bend
TOWN07 = Path(__file__).parents[1] / "data/opendrive/maps/libOpenDRIVE/test.xodr"


def test_a_passage_covers_both_directions_of_a_tight_bend_and_its_ends(tmp_path: Path) -> None:
    path, begin, end = bend_road(tmp_path, 15.0, STRAIGHT)
    sim = Simulation(validate_data({"map": path}, "test"))
    info = LaneInfo(sim.net)
    passages = find_passages(info)
    assert passages.number == 1
    for lane in (-1, 1):
        u = int(sim.net.lane_uid("1", lane, begin))
        rows = slice(passages.ptr[u], passages.ptr[u + 1])
        assert passages.passage[rows].tolist() == [0]
        s = info.road_s(np.array([u, u]), np.array([passages.lo[rows][0], passages.hi[rows][0]]))
        lo, hi = sorted(s.tolist())
        assert lo == pytest.approx(begin - PASSAGE_MARGIN, abs=1.0)
        assert hi == pytest.approx(end + PASSAGE_MARGIN, abs=1.0)


def test_bends_wide_enough_for_two_long_vehicles_are_no_passage(tmp_path: Path) -> None:
    path, _, _ = bend_road(tmp_path, PASSAGE_RADIUS + 2.0 * LANE, STRAIGHT)
    sim = Simulation(validate_data({"map": path}, "test"))
    assert find_passages(LaneInfo(sim.net)).number == 0


def _both_pass_one_waiting(
    sim: Simulation, begin: float, end: float, ours: str, theirs: str, lead: float
) -> None:
    """``ours`` on lane -1 and ``theirs`` on lane 1 drive at each other through the bend
    between ``begin`` and ``end`` (s): both are past it within a minute, one of them
    waited before it, and they never touched."""
    a = sim.spawn_vehicle_on_lane("1", -1, begin - 55.0 + lead, model=ours, speed=8.0)
    b = sim.spawn_vehicle_on_lane("1", 1, end + 55.0, model=theirs, speed=8.0)
    slowest = {a: np.inf, b: np.inf}
    passed = {a: np.inf, b: np.inf}
    for tick in range(round(60.0 / sim.dt)):
        sim.step()
        st = sim.state
        for actor, beyond in ((a, end + 20.0), (b, begin - 20.0)):
            k = int(np.flatnonzero(st.id == actor)[0])
            slowest[actor] = min(slowest[actor], float(st.speed[k]))
            gone = st.s[k] > beyond if actor == a else st.s[k] < beyond
            if gone and passed[actor] == np.inf:
                passed[actor] = tick * sim.dt
    assert sim.events == []
    assert max(passed.values()) < 60.0
    assert min(slowest.values()) < 1.0  # one waited


@pytest.mark.parametrize(
    ("radius", "ours", "theirs", "lead"),
    [
        (15.0, "truck", "truck", 0.0),
        (15.0, "truck", "bus", 10.0),
        (20.0, "truck", "truck", -10.0),
        (20.0, "bus", "truck", 0.0),
    ],
)
def test_long_vehicles_meeting_on_a_tight_bend_take_turns(
    tmp_path: Path, radius: float, ours: str, theirs: str, lead: float
) -> None:
    """Two long vehicles drive at each other from either side of a bend, ``ours`` on the
    outside starting ``lead`` metres nearer to it: both drive round it within a minute,
    one of them waiting before it, and they never touch. Before: one collision event in
    each (they met side by side in the bend)."""
    path, begin, end = bend_road(tmp_path, radius, STRAIGHT)
    sim = Simulation(validate_data({"map": path}, "test"))
    _both_pass_one_waiting(sim, begin, end, ours, theirs, lead)


def test_a_wide_bend_on_narrow_lanes_is_a_passage(tmp_path: Path) -> None:
    """Esmini's mixed_roads.xodr bends 33 m round on 3 m lanes: two trucks meeting there
    do not fit side by side (their widths and the swing of one take 6.2 m). Before, only
    the radius counted, and trucks met there."""
    wide, _, _ = bend_road(tmp_path, 33.0, STRAIGHT)
    narrow, begin, end = bend_road(tmp_path, 33.0, STRAIGHT, lane=3.0)
    assert find_passages(LaneInfo(Simulation(validate_data({"map": wide}, "t")).net)).number == 0
    sim = Simulation(validate_data({"map": narrow}, "test"))
    assert find_passages(LaneInfo(sim.net)).exclusive.tolist() == [False]
    _both_pass_one_waiting(sim, begin, end, "truck", "truck", 0.0)


def test_nobody_comes_back_inside_a_passage_a_long_vehicle_holds_the_other_way(
    tmp_path: Path,
) -> None:
    """`PassageGate.opposed`, which `roadsim.sim.lifecycle` asks before it puts a vehicle
    back on the map: on mixed_roads.xodr a road that is all one passage and leads
    nowhere, trucks came back at both ends of it and met in the bend."""
    path, begin, _ = bend_road(tmp_path, 15.0, STRAIGHT)
    sim = Simulation(validate_data({"map": path}, "test"))
    gate = PassageGate(LaneInfo(sim.net))
    ahead, back = (int(sim.net.lane_uid("1", lane, begin)) for lane in (-1, 1))
    rows = slice(gate.passages.ptr[ahead], gate.passages.ptr[ahead + 1])
    inside = 0.5 * float(gate.passages.lo[rows][0] + gate.passages.hi[rows][0])
    assert not gate.opposed(ahead, inside - 6.0, inside + 6.0, long=True)  # counted from now
    assert gate.held.tolist() == [int(gate.passages.way[rows][0])]
    length = float(sim.lane_info.length[back])
    assert gate.opposed(back, length - inside - 2.3, length - inside + 2.3, long=False)
    assert not gate.opposed(back, 0.0, 4.6, long=False)  # before the passage
    assert not gate.opposed(ahead, inside - 2.3, inside + 2.3, long=False)  # the same way
    # Nor does a long vehicle come back inside it while anybody stands in it the other
    # way: on mixed_roads.xodr a truck came back into the bend where a car that had just
    # come back at its other end stood, on its lane's centre line.
    gate = PassageGate(LaneInfo(sim.net))
    car = (np.array([back]), np.array([length - inside - 2.3]), np.array([length - inside + 2.3]))
    assert not gate.opposed(ahead, inside - 6.0, inside + 6.0, long=False, bodies=car)
    assert gate.opposed(ahead, inside - 6.0, inside + 6.0, long=True, bodies=car)
    assert gate.held.tolist() == [0]
    before = (np.array([back]), np.array([0.0]), np.array([4.6]))
    assert not gate.opposed(ahead, inside - 6.0, inside + 6.0, long=True, bodies=before)


@pytest.mark.parametrize(("ours", "theirs", "lead"), [("car", "truck", 0.0), ("car", "bus", 10.0)])
def test_cars_and_long_vehicles_take_turns_on_a_corner_a_long_vehicle_takes_whole(
    tmp_path: Path, ours: str, theirs: str, lead: float
) -> None:
    """On a half turn of 8 m radius (its lanes 6.4 and 9.6 m: tighter than a long vehicle
    can keep to), a car on the outside and a long vehicle on the inside drive at each
    other from either side, ``ours`` starting ``lead`` metres nearer to it: both drive
    round it within a minute, one of them waiting before it, and they never touch.
    Before: the car was not held, and the long vehicle swung over it in the corner (one
    collision event in each)."""
    path, begin, end = bend_road(tmp_path, 8.0, STRAIGHT)
    sim = Simulation(validate_data({"map": path}, "test"))
    assert find_passages(LaneInfo(sim.net)).exclusive.tolist() == [True]
    _both_pass_one_waiting(sim, begin, end, ours, theirs, lead)


def test_a_bend_a_long_vehicle_keeps_its_lane_on_is_no_exclusive_passage(tmp_path: Path) -> None:
    path, _, _ = bend_road(tmp_path, 15.0, STRAIGHT)
    sim = Simulation(validate_data({"map": path}, "test"))
    assert find_passages(LaneInfo(sim.net)).exclusive.tolist() == [False]


def test_a_long_vehicle_would_stop_before_a_passage_one_holds_the_other_way(
    tmp_path: Path,
) -> None:
    """`PassageGate.stops`: where a long vehicle would wait before a passage now, which
    ends the room after a junction for the junction gate (a truck let in behind one
    that then stopped before the passage stood in the junction: CARLA's Town07)."""
    path, begin, end = bend_road(tmp_path, 15.0, STRAIGHT)
    sim = Simulation(validate_data({"map": path}, "test"))
    gate = sim._traffic.passages
    ours = int(sim.net.lane_uid("1", -1, begin))  # drives toward larger s
    theirs = int(sim.net.lane_uid("1", 1, begin))
    sim.step()
    assert np.isinf(gate.stops()).all()  # nobody about
    sim.spawn_vehicle_on_lane("1", 1, 0.5 * (begin + end), model="truck", speed=5.0)
    sim.step()
    stops = gate.stops()
    rows = slice(gate.passages.ptr[ours], gate.passages.ptr[ours + 1])
    assert stops[ours] == pytest.approx(gate.passages.lo[rows][0] - WAIT_BEFORE)
    assert np.isinf(stops[theirs])  # (its own way is open)


def test_a_car_held_before_a_passage_does_not_hold_the_junction_before_it() -> None:
    """On CARLA's Town07 road 60 is a corner a truck takes whole, a passage that runs up
    to junction 11 on both sides. A truck in it, bound through the junction, and a car
    waiting at the junction's other entry to drive into the corner: the car waits for
    the truck to leave the passage, and must not take the junction meanwhile. Before, it
    was let in to the junction first (it stood nearer) and held the lanes crossing the
    truck's way for the 8 s a promise lasts; the truck slowed to 0.5 m/s in the passage,
    and was out of the junction 6.6 s later. In traffic the car asked again, and won
    again: on seed 8 a car stood 317 s."""
    scenario = {"map": str(TOWN07), "seed": 0, "traffic": {"count": 0}}
    sim = Simulation(validate_data(scenario, "test"))
    truck = sim.spawn_vehicle_on_lane("60", -1, 35.0, model="truck", speed=3.0)
    car = sim.spawn_vehicle_on_lane("61", 1, 8.0, model="car")
    through = {truck: np.inf, car: np.inf}
    slowest = np.inf  # the truck's speed until it is through
    for tick in range(round(30.0 / sim.dt)):
        sim.step()
        st = sim.state
        for actor, road in ((truck, "61"), (car, "60")):
            k = int(np.flatnonzero(st.id == actor)[0])
            if sim.net.road_ids[int(st.road[k])] == road and through[actor] == np.inf:
                through[actor] = tick * sim.dt
        if through[truck] == np.inf:
            slowest = min(slowest, float(st.speed[np.flatnonzero(st.id == truck)[0]]))
    assert sim.events == []
    assert slowest > 2.5
    assert through[truck] < 11.0 and through[car] < 20.0


def test_long_vehicles_start_slow_enough_to_stop_before_a_passage(tmp_path: Path) -> None:
    """Trucks placed on a road with a tight bend start no faster than lets them stop,
    at 1.5 m/s^2, where they would wait for the passage ahead on their lane. Before:
    one placed at 10.7 m/s 9.5 m before a passage on Town07 (seed 26) could not stop,
    went in while one came the other way, and they met in the bend."""
    path, _, _ = bend_road(tmp_path, 15.0, STRAIGHT)
    traffic = {"count": 12, "min_gap": 3, "mix": {"truck": 1.0}}
    sim = Simulation(validate_data({"map": path, "seed": 0, "traffic": traffic}, "test"))
    lanes, start, _ = sim._traffic.passages.stretches()
    st, info = sim.state, sim.lane_info
    trucks = np.flatnonzero(st.active)
    front = info.progress(st.uid[trucks], st.s[trucks]) + 0.5 * st.length[trucks]
    near = 0
    for k, at in zip(trucks.tolist(), front.tolist(), strict=True):
        ahead = start[(lanes == st.uid[k]) & (start >= at)]
        if ahead.size:
            room = float(ahead.min() - at)
            assert st.speed[k] ** 2 <= 2.0 * 1.5 * room + 1e-9
            near += room < 40.0
    assert near > 0  # (some start near the passage)


def test_a_car_waiting_for_a_corner_beyond_a_junction_gets_its_turn() -> None:
    """On CARLA's Town07, road 60's corner is a passage that runs up to junction 11 on
    both sides. Trucks drive up to its far end one after another, every 7 s for a minute;
    a car comes to the junction 12 s in, bound into the corner. A vehicle waiting is
    nearer each second it waits (`WAITED_AHEAD`), so the car gets its turn: it is in the
    corner 25 s in. Before, askers were served nearest first, and the car, waiting
    before the junction, was always further from the passage than the next truck
    waiting right before it: it waited for the last truck (74.5 s). On Town07 with the
    default mix, lane 403 (the car's) held 99 of the 251 stuck stands over seeds 0-39."""
    scenario = {"map": str(TOWN07), "seed": 0, "traffic": {"count": 0}}
    sim = Simulation(validate_data(scenario, "test"))
    car, through = -1, np.inf
    trucks: list[int] = []
    for tick in range(round(90.0 / sim.dt)):
        st = sim.state
        last = int(np.flatnonzero(st.id == trucks[-1])[0]) if trucks else -1
        # (a truck comes every 7 s, where the one before has left room)
        room = last < 0 or sim.net.road_ids[int(st.road[last])] != "60" or st.s[last] > 25.0
        if tick % round(7.0 / sim.dt) == 0 and tick * sim.dt < 60.0 and room:
            trucks.append(sim.spawn_vehicle_on_lane("60", -1, 5.0, model="truck", speed=5.0))
        if tick == round(12.0 / sim.dt):
            car = sim.spawn_vehicle_on_lane("61", 1, 8.0, model="car")
        sim.step()
        if car >= 0 and through == np.inf:
            k = int(np.flatnonzero(sim.state.id == car)[0])
            if sim.net.road_ids[int(sim.state.road[k])] == "60":
                through = tick * sim.dt
    assert sim.events == []
    assert len(trucks) >= 5
    assert through < 40.0
