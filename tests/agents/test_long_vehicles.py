"""Long vehicles at junctions: they avoid turns too tight for them where they have a
choice, and traffic waiting at an entry keeps clear of the turns they must take."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roadsim import Simulation
from roadsim.agents.junctions import MAX_SETBACK, SETBACK, JunctionGate, entry_setbacks
from roadsim.road.builder import (
    Arc,
    Document,
    JunctionSpec,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadSpec,
)
from roadsim.road.load import load_map
from roadsim.scenario import Scenario
from roadsim.sim.lifecycle import long_route
from roadsim.sim.traffic_stats import watch
from roadsim.world.codes import LONG_MIN_RADIUS, LONG_TURN_RADIUS, LONG_VEHICLE
from roadsim.world.lane_info import LaneInfo
from roadsim.world.lane_kernels import choose_next
from roadsim.world.traffic_lights import RED

MAPS = Path(__file__).parents[1] / "data" / "opendrive" / "maps"
#: CARLA's Town07 (from the test corpus): short streets between many tight junctions.
TOWN07 = MAPS / "libOpenDRIVE" / "test.xodr"
#: esmini's multi_intersections.xodr: signalised crossroads whose right turns trucks take.
CROSSROADS = MAPS / "esmini" / "multi_intersections.xodr"


@pytest.fixture(scope="module")
def town() -> LaneInfo:
    return LaneInfo(load_map("town").prepare())


@pytest.fixture(scope="module")
def town07() -> LaneInfo:
    return LaneInfo(load_map(str(TOWN07)).prepare())


def _forks(info: LaneInfo) -> list[tuple[int, np.ndarray]]:
    out = []
    for u in np.flatnonzero(info.next_count > 1).tolist():
        out.append((u, info.next_idx[info.next_ptr[u] : info.next_ptr[u + 1]]))
    return out


def test_tight_marks_the_junction_turns_tighter_than_long_vehicles_take(town: LaneInfo) -> None:
    table = town.table
    opened = 0
    for u in range(town.n):
        bend = np.abs(table.curvature[table.ptr[u] : table.ptr[u + 1]]).max(initial=0.0)
        # (the town has no road that bends so tightly, which would count too, and its
        # closed turns all leave lanes that have other ways on)
        tight = int(town.junction[u] >= 0 and bend > 1.0 / LONG_MIN_RADIUS)
        closed = int(bool(town.drivable[u]) and bend > 1.0 / LONG_TURN_RADIUS)
        expected = max(tight, 2 * closed)
        # (or opened, where it is the only way out of a loop long vehicles would keep to)
        assert town.tight[u] == expected or (expected, town.tight[u]) == (1, 0)
        opened += int(expected == 1 and town.tight[u] == 0)
    assert np.count_nonzero(town.tight == 1) > 0  # the town's 10 m corners
    assert opened > 0  # (8 of 12)
    assert np.count_nonzero(town.tight == 2) > 0  # and its 6 m ones


def test_long_vehicles_pass_over_tight_turns_where_a_fork_offers_another_way(
    town: LaneInfo,
) -> None:
    la = town.arrays
    rng = np.random.default_rng(0)
    salts = rng.integers(0, 2**63 - 1, size=64, dtype=np.int64).astype(np.uint64)
    long_bit = long_route(np.array([12.0]))[0]
    assert long_route(np.array([LONG_VEHICLE - 0.1]))[0] == 0
    cars_turn = 0
    for u, after in _forks(town):
        tight = town.tight[after].astype(bool)
        for salt in salts:
            car = choose_next(la, salt, u)
            truck = choose_next(la, salt | long_bit, u)
            assert car in after and truck in after
            cars_turn += int(town.tight[car])
            if not tight.all():
                assert town.tight[truck] == town.tight[after].min()
            # (Where every way is tight, a long vehicle takes one all the same.)
    assert cars_turn > 0


def test_entries_keep_clear_of_the_turns_long_vehicles_must_take(
    town: LaneInfo, town07: LaneInfo
) -> None:
    # The town's T junctions have only turns, and long vehicles cannot make their 6 m
    # ones: they never take them (`LaneInfo.tight`). The 10 m corners they take where
    # avoiding them would trap them keep the arm beside a metre clear at most.
    town_setback = entry_setbacks(town)
    assert town_setback.min() == SETBACK and town_setback.max() < SETBACK + 1.5
    # Town07's junctions have turns they take with no other way: the arms beside wait
    # further back.
    setback = entry_setbacks(town07)
    assert setback.min() == SETBACK
    assert setback.max() <= MAX_SETBACK
    wider = np.flatnonzero(setback > SETBACK)
    assert wider.size > 0
    nxt = town07.first_next[wider]
    assert np.all(town07.junction[wider] < 0) and np.all(town07.junction[nxt] >= 0)


def test_only_a_simulation_with_long_vehicles_keeps_entries_clear(town07: LaneInfo) -> None:
    gate = JunctionGate(town07)
    assert np.all(gate.setback == SETBACK)
    gate.keep_clear_of_long_vehicles(np.zeros(town07.n, dtype=bool))
    assert np.array_equal(gate.setback, entry_setbacks(town07))
    assert np.any(gate.setback > SETBACK)


def test_traffic_starts_clear_of_the_turns_long_vehicles_sweep() -> None:
    """A car placed where the traffic waiting for a junction keeps clear of the trucks'
    turns stood in the way of the first truck that turned past it (Town07, seed 80: a
    collision 6 s in). With long vehicles in the mix, nobody starts there."""
    mix = {"car": 0.85, "truck": 0.1, "bus": 0.05}
    for seed in (0, 80):
        traffic = {"count": 200, "min_gap": 10, "mix": mix}
        sim = Simulation(
            Scenario.model_validate({"map": str(TOWN07), "seed": seed, "traffic": traffic})
        )
        info, state = sim.lane_info, sim.state
        setback = entry_setbacks(info)
        on_map = np.flatnonzero(state.active)
        assert on_map.size == 200
        uid = state.uid[on_map]
        front = info.progress(uid, state.s[on_map]) + 0.5 * state.length[on_map]
        swept = setback[uid] > SETBACK
        assert np.any(swept), "no vehicle starts on a lane where trucks sweep the entry"
        assert np.all(front[swept] <= info.length[uid[swept]] - setback[uid[swept]] + 1e-6)


def test_traffic_waits_for_a_red_light_clear_of_the_turns_long_vehicles_sweep() -> None:
    """Lane 1 of road 270 ends at a light, in the mouth of a street that trucks turning
    right sweep over (`entry_setbacks`: 11.8 m). A car stopped at red 2 m before the
    junction, and a truck turning past collided with it (the corpus smoke, seed 0).
    With long vehicles about, traffic waits for a red light where it would wait for the
    junction: at the setback."""
    sim = Simulation(
        Scenario.model_validate(
            {
                "map": str(CROSSROADS),
                "seed": 0,
                "ego": {"spawn": {"road": "270", "lane": 1, "s": 60}, "speed": 10,
                        "control": "autopilot"},
                "traffic": {"count": 1, "mix": {"truck": 1}},
            }
        )
    )  # fmt: skip
    ego, info = sim.ego_slot, sim.lane_info
    assert ego is not None
    lane = int(sim.state.uid[ego])
    signal = int(info.stop_signal[lane])
    setback = float(entry_setbacks(info)[lane])
    assert signal >= 0 and setback > SETBACK + 5.0
    standing = []
    for _ in range(round(30.0 / sim.dt)):
        sim.step()
        assert int(sim.state.uid[ego]) == lane  # (red for the first minute)
        front = info.progress(sim.state.uid[ego : ego + 1], sim.state.s[ego : ego + 1])[0]
        front += 0.5 * sim.state.length[ego]
        if sim.state.speed[ego] < 0.05:
            assert sim._lights.state(sim.time)[signal] == RED
            standing.append(info.length[lane] - front)
    assert len(standing) > 100
    assert min(standing) >= setback


@pytest.mark.slow
def test_trucks_and_buses_meet_on_the_towns_bends_without_touching() -> None:
    """A 12 m vehicle whose centre follows its lane's centre line on a 40 m bend swings
    its front 0.9 m outward (the chord and its slip angle): from the inner lane, into
    oncoming trucks. Such meetings gave 6, 7 and 10 collisions in these five minutes
    (seeds 0 to 2); a few remain at the T junctions' tight turns, where trucks have no
    other way (docs/simulation.md), so this allows one a run."""
    traffic = {"count": 60, "min_gap": 10, "mix": {"car": 0.7, "truck": 0.15, "bus": 0.15}}
    collisions = 0
    for seed in (0, 1, 2):
        scenario = Scenario.model_validate({"map": "town", "seed": seed, "traffic": traffic})
        summary = watch(Simulation(scenario), 300.0)
        assert summary.long_stands == summary.stuck == 0, summary.to_text()
        collisions += summary.vehicle_collisions
    assert collisions <= 3


def test_long_vehicles_pass_over_a_way_into_a_road_too_tight_for_them(tmp_path: Path) -> None:
    """Some maps draw a sharp corner as a road (CARLA's Town07 has roads of 4.5 m radius,
    where buses swept over the cars beside and ahead of them): a junction turn that leads
    into one is avoided like a tight turn where the fork offers another way. Before, only
    the turn's own bend counted, and long vehicles took either way."""
    r1 = RoadSpec("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(100.0),)), _one_lane())
    straight = RoadSpec("S", PlanView(Pose(130.0, 0.0, 0.0), (Line(100.0),)), _one_lane())
    corner = (Line(10.0), Arc(0.5 * np.pi * 4.5, 1.0 / 4.5), Line(50.0))  # (lane: 6.25 m)
    sharp = RoadSpec("T", PlanView(Pose(115.0, 15.0, 0.5 * np.pi), corner), _one_lane())
    junction = JunctionSpec("A", "a")
    ahead = junction.connect("ca", r1.end("end"), straight.end("start"), [(-1, -1)])
    left = junction.connect("cb", r1.end("end"), sharp.end("start"), [(-1, -1)])
    path = tmp_path / "fork.xodr"
    Document("fork", [r1, straight, sharp, ahead, left], [junction]).write(path)
    info = LaneInfo(load_map(str(path)).prepare())
    road = {name: int(info.net.road_index(name)) for name in ("ca", "cb")}
    drivable = info.drivable.astype(bool)
    turn = {name: int(np.flatnonzero((info.road == i) & drivable)[0]) for name, i in road.items()}
    assert info.tight[turn["cb"]] == 2 and info.tight[turn["ca"]] == 0  # (6 m: closed)
    fork = int(np.flatnonzero((info.road == int(info.net.road_index("1"))) & drivable)[0])
    long_bit = long_route(np.array([12.0]))[0]
    for salt in np.arange(32, dtype=np.uint64):
        assert choose_next(info.arrays, salt | long_bit, fork) == turn["ca"]


def _one_lane() -> list[LaneSectionSpec]:
    return [LaneSectionSpec(0.0, (LaneSpec(-1, width=3.5),))]


def test_long_vehicles_keep_out_of_a_road_that_leads_only_into_a_turn_they_cannot_make(
    tmp_path: Path,
) -> None:
    """A fork offers a way on and a way into a street that ends at a corner of 6.25 m
    radius (the lane's), through a second junction. Before, only the fork's own turns
    and the roads right after them counted: long vehicles took the street half the time,
    were placed on it, and swept over the cars at the corner. Now the street and the
    turn into it are closed to them (`LaneInfo.tight` 2): long vehicles pass over them
    at the fork and are placed outside them; cars go everywhere."""
    r1 = RoadSpec("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(100.0),)), _one_lane())
    straight = RoadSpec("S", PlanView(Pose(130.0, 0.0, 0.0), (Line(100.0),)), _one_lane())
    street = RoadSpec("M", PlanView(Pose(115.0, 15.0, 0.5 * np.pi), (Line(60.0),)), _one_lane())
    corner = (Line(10.0), Arc(0.5 * np.pi * 4.5, 1.0 / 4.5), Line(50.0))
    sharp = RoadSpec("T", PlanView(Pose(115.0, 90.0, 0.5 * np.pi), corner), _one_lane())
    a, b = JunctionSpec("A", "a"), JunctionSpec("B", "b")
    ahead = a.connect("ca", r1.end("end"), straight.end("start"), [(-1, -1)])
    left = a.connect("cb", r1.end("end"), street.end("start"), [(-1, -1)])
    on = b.connect("cc", street.end("end"), sharp.end("start"), [(-1, -1)])
    path = tmp_path / "street.xodr"
    Document("street", [r1, straight, street, sharp, ahead, left, on], [a, b]).write(path)
    info = LaneInfo(load_map(str(path)).prepare())
    drivable = info.drivable.astype(bool)

    def lane(road: str) -> int:
        return int(np.flatnonzero((info.road == int(info.net.road_index(road))) & drivable)[0])

    assert [int(info.tight[lane(r)]) for r in ("1", "ca", "S", "cb", "M", "cc", "T")] == [
        0, 0, 0, 2, 2, 2, 2,
    ]  # fmt: skip
    long_bit = long_route(np.array([12.0]))[0]
    cars = set()
    for salt in np.arange(32, dtype=np.uint64):
        assert choose_next(info.arrays, salt | long_bit, lane("1")) == lane("ca")
        cars.add(choose_next(info.arrays, salt, lane("1")))
    assert cars == {lane("ca"), lane("cb")}
    # Placed: long vehicles only where they can drive on from, cars around them.
    traffic = {"count": 12, "min_gap": 5, "mix": {"car": 0.5, "truck": 0.5}}
    for seed in range(4):
        sim = Simulation(
            Scenario.model_validate({"map": str(path), "seed": seed, "traffic": traffic})
        )
        state = sim.state
        on_map = np.flatnonzero(state.active)
        assert on_map.size == 12
        trucks = on_map[state.length[on_map] >= LONG_VEHICLE]
        assert trucks.size > 0 and np.all(info.tight[state.uid[trucks]] < 2), seed


def _ring() -> RoadSpec:
    """Road "L": a one-way loop of 430 m from the origin east, back west 60 m north of
    it, ending 30 m before its start."""
    loop = (Line(100.0), Arc(np.pi * 30.0, 1.0 / 30.0), Line(130.0), Arc(np.pi * 30.0, 1.0 / 30.0))
    return RoadSpec("L", PlanView(Pose(0.0, 0.0, 0.0), loop), _one_lane())


def _loop(tmp_path: Path, *, gentle_way_out: bool) -> tuple[LaneInfo, dict[str, int]]:
    """A one-way loop whose junction offers a right turn of 10 m radius off it (lane:
    8.25 m, tight for long vehicles), and where ``gentle_way_out``, a left turn of 20 m."""
    ring = _ring()
    right = RoadSpec("X", PlanView(Pose(-20.0, -10.0, -0.5 * np.pi), (Line(60.0),)), _one_lane())
    left = RoadSpec("G", PlanView(Pose(-10.0, 20.0, 0.5 * np.pi), (Line(20.0),)), _one_lane())
    junction = JunctionSpec("A", "a")
    roads = [
        ring,
        right,
        junction.connect("ca", ring.end("end"), ring.end("start"), [(-1, -1)]),
        junction.connect("cx", ring.end("end"), right.end("start"), [(-1, -1)], radius=10.0),
    ]
    if gentle_way_out:
        roads += [left, junction.connect("cg", ring.end("end"), left.end("start"), [(-1, -1)])]
    path = tmp_path / f"loop{int(gentle_way_out)}.xodr"
    Document("loop", roads, [junction]).write(path)
    info = LaneInfo(load_map(str(path)).prepare())
    drivable = info.drivable.astype(bool)
    lanes = {
        spec.id: int(np.flatnonzero((info.road == int(info.net.road_index(spec.id))) & drivable)[0])
        for spec in roads
    }
    return info, lanes


def test_long_vehicles_take_a_tight_turn_that_is_the_only_way_out_of_a_loop(
    tmp_path: Path,
) -> None:
    """Where the ways long vehicles keep to close into a circuit, the turns they avoid
    out of it are opened to them (`LaneInfo.tight` 0): else they gather in the circuit
    and fill it. On CARLA's Town07 that circuit was 517 m of road, into which 23 of 26
    trucks and buses had driven after ten minutes, and then stood. Before, the loop's
    right turn was avoided (1) with or without another way out, and long vehicles went
    round the loop for ever."""
    long_bit = long_route(np.array([12.0]))[0]
    info, lane = _loop(tmp_path, gentle_way_out=False)
    table = info.table
    cx = slice(table.ptr[lane["cx"]], table.ptr[lane["cx"] + 1])
    assert np.abs(table.curvature[cx]).max() > 1.0 / LONG_MIN_RADIUS  # (a tight turn)
    assert info.tight[lane["cx"]] == 0
    taken = {choose_next(info.arrays, salt | long_bit, lane["L"]) for salt in range(32)}
    assert taken == {lane["ca"], lane["cx"]}
    assert info.reach_of_long(np.array([lane["L"]]))[lane["X"]]
    # With a gentle way out, the tight turn stays avoided.
    info, lane = _loop(tmp_path, gentle_way_out=True)
    assert info.tight[lane["cx"]] == 1 and info.tight[lane["cg"]] == 0
    taken = {choose_next(info.arrays, salt | long_bit, lane["L"]) for salt in range(32)}
    assert taken == {lane["ca"], lane["cg"]}


def test_long_vehicles_on_town07_are_not_trapped_in_one_circuit(town07: LaneInfo) -> None:
    """From road 62, where the trucks of the 517 m circuit stood, the ways of long
    vehicles now lead over 1,178 m of the town's 3,216 m of road they may drive on."""
    road = (town07.junction < 0) & (town07.tight < 2) & town07.drivable.astype(bool)
    on_62 = np.flatnonzero((town07.road == int(town07.net.road_index("62"))) & road)
    reach = town07.reach_of_long(on_62[:1])
    assert float(town07.length[reach & road].sum()) > 1100.0


def test_long_vehicles_are_placed_on_the_circuit_they_keep_to(tmp_path: Path) -> None:
    """A 400 m road leads into a one-way loop with no way out. Long vehicles on the
    road only ever pass it once, into the loop, and then stay there: they are placed on
    the loop (`LaneInfo.circuits_of_long`), cars everywhere. Before, they were placed
    anywhere: on Town07 trucks on the way into its circuit, on roads they pass once,
    met traffic on narrow bends and junction mouths that those in the circuit never
    reach (seed 4 collided, seed 63 stood for minutes)."""
    ring = _ring()
    feeder = RoadSpec("F", PlanView(Pose(-40.0, -440.0, 0.5 * np.pi), (Line(400.0),)), _one_lane())
    junction = JunctionSpec("A", "a")
    roads = [
        ring,
        feeder,
        junction.connect("ca", ring.end("end"), ring.end("start"), [(-1, -1)]),
        junction.connect("cf", feeder.end("end"), ring.end("start"), [(-1, -1)], radius=20.0),
    ]
    path = tmp_path / "feeder.xodr"
    Document("feeder", roads, [junction]).write(path)
    traffic = {"count": 16, "min_gap": 5, "mix": {"car": 0.5, "truck": 0.5}}
    for seed in range(3):
        sim = Simulation(
            Scenario.model_validate({"map": str(path), "seed": seed, "traffic": traffic})
        )
        info, state = sim.lane_info, sim.state
        road = info.road[state.uid]
        on_loop = info.circuits_of_long[state.uid]
        assert np.array_equal(on_loop, road == int(info.net.road_index("L")))
        is_long = state.active & (state.length >= LONG_VEHICLE)
        assert is_long.sum() >= 4 and np.all(on_loop[is_long]), seed
        cars = state.active & (state.length < LONG_VEHICLE)
        assert np.any(cars & ~on_loop), seed  # (cars go everywhere)


def test_town07s_long_vehicles_start_on_their_circuit(town07: LaneInfo) -> None:
    """On Town07 the ways of long vehicles close into one circuit of 1,178 m of road
    (roads 0, 1, 11 to 15, 21, 23, 38, 39 and 55 to 62); the default mix at half the
    town's capacity places its trucks and buses there."""
    road = (town07.junction < 0) & town07.drivable.astype(bool)
    assert 1100.0 < float(town07.length[town07.circuits_of_long & road].sum()) < 1300.0
    scenario = {"map": str(TOWN07), "seed": 0, "traffic": {"count": 128, "min_gap": 10}}
    sim = Simulation(Scenario.model_validate(scenario))
    state = sim.state
    is_long = state.active & (state.length >= LONG_VEHICLE)
    assert is_long.sum() >= 10
    assert np.all(sim.lane_info.circuits_of_long[state.uid[is_long]])


def test_the_mouth_beside_a_tight_turns_exit_is_kept_clear_as_far_as_the_truck_sweeps() -> None:
    """A 12 m truck leaving Town07's right turn of 7.2 m radius from road 15 into road 55
    is still turned 6 degrees 8 m on: its body covers the lane of the other direction up
    to 18 m before that lane's junction. The setback of that lane took the body as
    straight 9 m after the turn: 11.7 m, and a bus stopped 13.8 m before the junction
    there was met (seed 4 of the Town07 flow). Now the body straightens over wheelbases
    (`entry_setbacks`), and traffic on that lane waits `MAX_SETBACK` back."""
    scenario = {
        "map": str(TOWN07),
        "seed": 0,
        "ego": {"model": "truck", "spawn": {"road": "15", "lane": -1, "s": 15}, "speed": 5,
                "control": "autopilot", "route": ["55"]},
    }  # fmt: skip
    sim = Simulation(Scenario.model_validate(scenario))
    ego, info, state = sim.ego_slot, sim.lane_info, sim.state
    assert ego is not None
    road_55 = (info.road == int(info.net.road_index("55"))) & info.drivable.astype(bool)
    (beside,) = np.flatnonzero(road_55 & (info.net.lanes.lane_id == -1))
    ahead = np.linspace(-0.5, 0.5, 13)[:, None] * state.length[ego]
    side = np.array([-0.5, 0.5])[None, :] * state.width[ego]
    reach, lanes = 0.0, set()
    for _ in range(round(12.0 / sim.dt)):
        sim.step()
        lanes.add(int(state.uid[ego]))
        c, s = np.cos(state.heading[ego]), np.sin(state.heading[ego])
        x = (state.x[ego] + ahead * c - side * s).ravel()
        y = (state.y[ego] + ahead * s + side * c).ravel()
        pos = info.net.localize(x, y)
        on = np.asarray(pos.uid) == beside
        if on.any():
            p = info.progress(np.asarray(pos.uid)[on], np.asarray(pos.s)[on])
            reach = max(reach, float(np.max(info.length[beside] - p)))
    assert lanes >= {int(i) for i in np.flatnonzero(road_55 & (info.net.lanes.lane_id == 1))}
    assert reach > MAX_SETBACK  # (the truck's body, on the lane beside its exit)
    assert entry_setbacks(info)[beside] == pytest.approx(MAX_SETBACK)
