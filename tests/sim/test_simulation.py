"""The simulation: time, determinism, external control, collisions, lights, junctions."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest

from roadsim import EgoCommand, Simulation
from roadsim._jit import always_split
from roadsim.errors import (
    ArgumentError,
    ArgumentTypeError,
    QueryError,
    ScenarioError,
    TrafficWarning,
)
from roadsim.scenario.load import builtin_scenarios, load_scenario
from roadsim.scenario.schema import validate_data
from roadsim.sim.lifecycle import Respawner
from roadsim.world.codes import MAP_EDGE
from roadsim.world.state import VEHICLE, WorldState
from roadsim.world.traffic_lights import GREEN, RED
from tests.conftest import CORPUS

MAPS = CORPUS / "maps"


def scenario(**fields: Any) -> Simulation:
    return Simulation(validate_data(fields, "test"))


def run_arrays(sim: Simulation, frames: int) -> list[dict[str, np.ndarray]]:
    out = []
    for _ in range(frames):
        sim.step()
        out.append({k: v.copy() for k, v in sim.state.arrays().items()})
    return out


# -- time ---------------------------------------------------------------------------------------


def test_time_is_frame_times_dt() -> None:
    sim = scenario(map="ring", dt=0.1, traffic={"count": 3})
    assert (sim.frame, sim.time) == (0, 0.0)
    assert sim.run(1.0) == 10
    assert sim.frame == 10
    assert sim.time == 10 * 0.1


def test_state_is_columnar_with_stable_ids() -> None:
    sim = Simulation("town")
    st = sim.state
    n = int(st.active.sum())
    assert n == sim.vehicle_count  # the town has no static objects
    assert all(a.shape == (st.capacity,) for a in st.arrays().values())
    assert len(set(st.id[st.active].tolist())) == n
    before = {int(i): float(x) for i, x in zip(st.id[st.active], st.x[st.active], strict=True)}
    sim.run(2.0)  # sorts the traffic's slots at frames 0 and 20
    st = sim.state
    after = {int(i): float(x) for i, x in zip(st.id[st.active], st.x[st.active], strict=True)}
    assert after.keys() == before.keys()  # the same vehicles, each id once
    assert all(abs(after[i] - before[i]) < 2.0 * 20.0 for i in before)  # each kept its own x


def test_sorting_slots_moves_whole_vehicles_into_lane_order() -> None:
    sim = Simulation("town")
    sim.run(1.0)  # past the sort at frame 0: traffic has moved since
    st = sim.state

    def by_id() -> dict[int, tuple[object, ...]]:
        per_slot = [*st.arrays().values(), sim._salt, sim._speed_factor, sim._limits.wheelbase]
        per_slot += [sim._traffic.change_timer, sim._traffic.target_uid, sim._traffic.gate.granted]
        return {
            int(st.id[k]): tuple(a[k].item() for a in per_slot) for k in np.flatnonzero(st.active)
        }

    before = by_id()
    assert sim.ego_slot is not None
    ego = int(st.id[sim.ego_slot])
    sim._sort_slots()
    assert by_id() == before
    assert int(st.id[sim.ego_slot]) == ego  # the ego keeps its slot
    traffic = st.active & (st.kind == VEHICLE) & (st.uid >= 0)
    traffic[sim.ego_slot] = False
    assert np.all(np.diff(st.uid[traffic]) >= 0)  # the others sit in lane order


# -- determinism ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["highway", "town", "crossing"])
def test_same_seed_gives_bit_identical_frames(name: str) -> None:
    first = run_arrays(Simulation(name), 200)
    second = run_arrays(Simulation(name), 200)
    for frame, (a, b) in enumerate(zip(first, second, strict=True)):
        for key in a:
            assert a[key].tobytes() == b[key].tobytes(), (frame, key)


def test_frames_do_not_depend_on_the_thread_count() -> None:
    # The heavy passes split their rows over numba's threads (roadsim._jit.njit_rows),
    # here even where they are few.
    default = numba.get_num_threads()
    assert default > 1
    with always_split():
        parallel = run_arrays(Simulation("highway"), 100)
    numba.set_num_threads(1)
    try:
        serial = run_arrays(Simulation("highway"), 100)
    finally:
        numba.set_num_threads(default)
    for frame, (a, b) in enumerate(zip(parallel, serial, strict=True)):
        for key in a:
            assert a[key].tobytes() == b[key].tobytes(), (frame, key)


def test_another_seed_gives_other_traffic() -> None:
    a = Simulation("town", seed=1)
    b = Simulation("town", seed=2)
    assert not np.array_equal(a.state.x, b.state.x)
    a.run(5.0)
    b.run(5.0)
    assert not np.array_equal(a.state.s, b.state.s)


# -- the ego --------------------------------------------------------------------------------------


def ego_on_highway() -> Simulation:
    return scenario(map="highway", ego={"spawn": {"road": 1, "lane": -3, "s": 60}, "speed": 20})


def test_ego_follows_pedal_commands() -> None:
    sim = ego_on_highway()
    ego = sim.ego_slot
    assert ego is not None
    sim.drive_ego(EgoCommand(throttle=1.0))
    sim.run(1.0)
    assert sim.state.speed[ego] == pytest.approx(20.0 + 3.5, abs=0.05)  # car: 3.5 m/s^2
    sim.drive_ego(EgoCommand(brake=1.0))
    sim.run(4.0)
    assert sim.state.speed[ego] == 0.0


def test_ego_follows_acceleration_and_curvature_targets() -> None:
    sim = ego_on_highway()
    ego = sim.ego_slot
    assert ego is not None
    sim.drive_ego(EgoCommand(accel=-2.0, curvature=0.0))
    sim.run(2.0)
    assert sim.state.speed[ego] == pytest.approx(16.0, abs=1e-9)
    heading = sim.state.heading[ego]
    sim.drive_ego(EgoCommand(accel=0.0, curvature=0.01))
    sim.run(5.0)  # steering ramps up at its rate limit, then holds the curvature
    assert sim.state.yaw_rate[ego] == pytest.approx(16.0 * 0.01, rel=1e-6)
    assert sim.state.heading[ego] > heading + 0.5


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"throttle": math.nan}, ArgumentError, "EgoCommand.throttle: expected a finite number"),
        ({"steering": 1.5}, ArgumentError, r"EgoCommand.steering: .* in \[-1, 1\], got 1.5"),
        ({"brake": -0.1}, ArgumentError, r"EgoCommand.brake: .* in \[0, 1\], got -0.1"),
        ({"accel": math.inf}, ArgumentError, "EgoCommand.accel: expected a finite number"),
        ({"curvature": math.nan}, ArgumentError, "EgoCommand.curvature: expected a finite"),
        ({"throttle": "0.4"}, ArgumentTypeError, "EgoCommand.throttle: expected a number"),
        ({"accel": {"x": 1}}, ArgumentTypeError, "EgoCommand.accel: expected a number"),
        ({"brake": True}, ArgumentTypeError, "EgoCommand.brake: expected a number, got True"),
    ],
)
def test_ego_commands_are_checked_when_made(
    fields: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        EgoCommand(**fields)


def test_ego_command_values_become_floats() -> None:
    cmd = EgoCommand(throttle=np.float32(0.5), steering=-1, accel=np.int64(-20))
    assert (cmd.throttle, cmd.steering, cmd.accel, cmd.curvature) == (0.5, -1.0, -20.0, None)
    assert all(type(v) is float for v in (cmd.throttle, cmd.brake, cmd.steering, cmd.accel))


def test_bad_durations_ids_and_commands_are_refused() -> None:
    sim = scenario(
        map="ring", dt=0.1, ego={"spawn": {"road": 1, "lane": -1, "s": 10}}, traffic={"count": 3}
    )
    for duration in (-1.0, math.nan, math.inf):
        with pytest.raises(ArgumentError, match="duration: expected a"):
            sim.run(duration)
    with pytest.raises(ArgumentTypeError, match="duration: expected a number"):
        sim.run("1")  # type: ignore[arg-type]
    assert sim.run(0.0) == 0 and sim.frame == 0
    actor = int(sim.state.id[sim.state.active][0])
    for bad in (actor + 0.5, True):
        with pytest.raises(ArgumentTypeError, match="actor_id: expected an integer id"):
            sim.driver_view(bad)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match=r"ids: expected integer ids, got 0\.5"):
        sim.driver_views([actor, 0.5])
    assert sim.driver_view(np.int64(actor)).id == actor
    with pytest.raises(ArgumentTypeError, match="expected an EgoCommand or None, got dict"):
        sim.drive_ego({"throttle": 1.0})  # type: ignore[arg-type]
    assert sim.frame == 0


def test_ego_without_commands_drives_on_autopilot() -> None:
    sim = ego_on_highway()
    ego = sim.ego_slot
    assert ego is not None
    slowest = np.inf

    def watch(s: Simulation) -> None:
        nonlocal slowest
        assert s.state.uid[ego] >= 0
        slowest = min(slowest, float(s.state.speed[ego]))

    sim.run(20.0, on_step=watch)
    assert slowest > 19.0  # on an empty motorway it only speeds up


# -- collisions -----------------------------------------------------------------------------------


def test_driving_into_an_obstacle_is_a_collision_event() -> None:
    sim = scenario(
        map="highway",
        ego={"spawn": {"road": 1, "lane": -3, "s": 60}, "speed": 10},
        objects=[{"type": "box", "position": {"road": 1, "lane": -3, "s": 100}}],
    )
    ego = sim.ego_slot
    assert ego is not None
    box = int(np.flatnonzero(sim.state.kind == 1)[0])
    sim.drive_ego(EgoCommand(throttle=0.2))
    frames = sim.run(10.0, on_step=lambda s: bool(s.events))
    assert sim.events, "the ego should hit the box"
    event = sim.events[0]
    assert {event.id_a, event.id_b} == {int(sim.state.id[ego]), int(sim.state.id[box])}
    assert event.frame == frames and event.time == frames * sim.dt
    assert sim.state.collided[ego] and sim.state.collided[box]
    # Still touching: no new event for the same pair.
    sim.drive_ego(EgoCommand(brake=1.0))
    sim.run(0.5)
    assert len(sim.events) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", builtin_scenarios())
def test_no_traffic_collisions_in_builtin_scenarios_over_five_minutes(name: str) -> None:
    sim = Simulation(name)
    sim.run(300.0)
    assert sim.events == []
    assert sim.vehicle_count > 0


# -- lights and junctions -----------------------------------------------------------------------------


def test_traffic_stops_at_red_and_goes_at_green() -> None:
    # The four streets of the town meet at a signalised crossroads at their s = 0; lane 1
    # drives toward it and the light stands at s = 2. Start the ego (on autopilot) 60 m
    # before the light on a street whose light shows red at first.
    red_street = None
    for road in ("1", "2", "3", "4"):
        sim = scenario(
            map="town",
            ego={"spawn": {"road": road, "lane": 1, "s": 60}, "speed": 10, "control": "autopilot"},
        )
        ego = sim.ego_slot
        assert ego is not None
        lane = int(sim.state.uid[ego])
        signal = int(sim._info.stop_signal[lane])
        assert signal >= 0, f"road {road}: no light governs lane 1"
        if sim._lights.state(0.0)[signal] == RED and sim._lights.state(8.0)[signal] == RED:
            red_street = road
            break
    assert red_street is not None
    stop_s = 2.0
    stopped_at_red = crossed_at_green = False
    for _ in range(round(60.0 / sim.dt)):
        sim.step()
        shown = sim._lights.state(sim.time)[signal]
        front = sim.state.s[ego] - 0.5 * sim.state.length[ego]
        on_approach = sim.state.uid[ego] == lane
        if shown == RED and on_approach:
            assert front > stop_s - 0.01, "ran the red light"
            stopped_at_red |= bool(sim.state.speed[ego] < 0.05) and front < stop_s + 8.0
        if shown == GREEN and not on_approach:
            crossed_at_green = True
            break
    assert stopped_at_red and crossed_at_green


@pytest.mark.slow
@pytest.mark.parametrize("name", ["esmini/multi_intersections", "libOpenDRIVE/test"])
def test_traffic_drives_through_junctions_on_corpus_maps(name: str) -> None:
    sim = scenario(
        map=str(MAPS / f"{name}.xodr"), seed=4, traffic={"count": 40, "mix": {"car": 1.0}}
    )
    info, st = sim._info, sim.state
    junction_lanes: set[int] = set()
    off_lane = 0

    def watch(s: Simulation) -> None:
        nonlocal off_lane
        vehicles = st.active & (st.kind == VEHICLE)
        off_lane += int(np.sum(vehicles & (st.uid < 0)))
        uid = st.uid[vehicles & (st.uid >= 0)]
        junction_lanes.update(uid[info.junction[uid] >= 0].tolist())

    sim.run(180.0, on_step=watch)
    assert off_lane == 0
    drivable_junction_lanes = int(np.sum((info.junction >= 0) & info.drivable))
    assert len(junction_lanes) > 0.5 * drivable_junction_lanes
    assert sim.vehicle_count == 40


# -- lifecycle ------------------------------------------------------------------------------------


def test_vehicles_that_leave_come_back_as_new_vehicles() -> None:
    traffic = {"density": 10, "mix": {"car": 1.0}}
    kept = scenario(map="highway", traffic=traffic)
    gone = scenario(map="highway", traffic={**traffic, "respawn": False})
    start = kept.vehicle_count
    assert gone.vehicle_count == start
    seen = set(kept.state.id[kept.state.active].tolist())
    kept.run(120.0)
    gone.run(120.0)
    assert gone.left_map > 0 and gone.vehicle_count == start - gone.left_map
    assert kept.left_map > 0 and kept.vehicle_count > 0.8 * start
    ids = kept.state.id[kept.state.active].tolist()
    assert len(set(ids)) == len(ids)
    assert set(ids) - seen, "new vehicles get new ids"
    assert max(ids) >= start


def test_traffic_leaves_at_a_dead_end_as_its_front_reaches_it() -> None:
    """Before, a vehicle left the map once its centre passed the end of its lane: on
    esmini's mixed_roads.xodr a truck leaving a road that ends in a bend ran its front
    6 m on, over the next road and into a bus driving there."""
    sim = scenario(map="highway", traffic={"density": 10, "mix": {"truck": 1.0}, "respawn": False})
    info, st = sim._info, sim.state
    furthest = -np.inf

    def watch(s: Simulation) -> None:
        nonlocal furthest
        on = np.flatnonzero(st.active & (st.uid >= 0))
        on = on[info.end_kind[st.uid[on]] == MAP_EDGE]
        front = info.progress(st.uid[on], st.s[on]) + 0.5 * st.length[on]
        over = front - info.length[st.uid[on]] - st.speed[on] * s.dt
        furthest = max(furthest, float(over.max(initial=-np.inf)))

    sim.run(120.0, on_step=watch)
    assert sim.left_map > 10
    assert furthest <= 1e-9  # (no front further past the end than one tick's driving)


def test_a_new_vehicle_keeps_out_of_the_way_of_the_others() -> None:
    """`Respawner._swept`: a truck driving toward the place, or one standing on it, keeps
    a new car out; one driving away, or passing in a lane beside, does not."""
    state = WorldState.empty(2)
    state.active[0] = True
    for name, value in (("x", 0.0), ("y", 0.0), ("heading", 0.0), ("length", 12.0),
                        ("width", 2.5), ("speed", 8.0)):  # fmt: skip
        getattr(state, name)[0] = value
    state.length[1], state.width[1] = 4.6, 1.9
    swept = Respawner._swept
    assert swept(state, 20.0, 0.0, np.pi, 1)  # 8 m of gap, closing at 8 m/s
    assert not swept(state, -20.0, 0.0, np.pi, 1)  # behind it
    assert not swept(state, 20.0, 3.4, np.pi, 1)  # in the lane beside
    state.speed[0] = 0.0
    assert not swept(state, 20.0, 0.0, np.pi, 1)
    assert swept(state, 8.0, 0.0, np.pi, 1)


def test_a_scenario_built_in_code_is_checked_against_its_map() -> None:
    with pytest.raises(ScenarioError, match=r"ego.spawn.lane: lane -4 does not exist on road 1"):
        scenario(map="town", ego={"spawn": {"road": 1, "lane": -4, "s": 30}})


def test_a_map_without_lane_links_simulates(tmp_path: Path) -> None:
    """One road of one lane section: no lane has a successor (the lane tables once failed
    on the empty link list)."""
    from roadsim.road.builder import (
        Document,
        LaneSectionSpec,
        LaneSpec,
        Line,
        PlanView,
        Pose,
        RoadSpec,
    )

    road = RoadSpec(
        "1",
        PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),)),
        [LaneSectionSpec(0.0, (LaneSpec(1), LaneSpec(-1)))],
    )
    path = tmp_path / "one.xodr"
    Document("one", [road]).write(path)
    scenario = validate_data(
        {"map": str(path), "ego": {"spawn": {"road": "1", "lane": -1, "s": 20.0}, "speed": 10.0}},
        tmp_path,
    )
    sim = Simulation(scenario)
    sim.run(2.0)
    view = sim.driver_view(int(sim.state.id[sim.ego_slot]))
    assert view.geometry_information.lane_ego.distance_to_end_of_lane == pytest.approx(
        200.0 - float(sim.state.s[sim.ego_slot]) - 2.3, abs=0.05
    )


# -- actors by name or id ------------------------------------------------------------------------


def test_actors_are_found_by_name_or_id() -> None:
    walker = {
        "type": "path",
        "name": "walker",
        "kind": "pedestrian",
        "path": [{"road": 1, "lane": -4, "s": 100, "speed": 1}, {"x": 110, "y": -30, "speed": 1}],
        "creation_radius": 30,
    }
    sim = scenario(
        map="highway",
        ego={"spawn": {"road": 1, "lane": -3, "s": 20}, "speed": 10},
        objects=[{"type": "cone", "name": "c1", "position": {"x": 60, "y": -11.375}}, walker],
        traffic={"count": 3},
    )
    ego = sim.actor("ego")
    assert (ego.id, ego.name, ego.kind, ego.model) == (0, "ego", "vehicle", "car")
    assert (ego.road, ego.lane, ego.active, ego.frame) == ("1", -3, True, 0)
    assert ego.speed == 10.0 and ego == sim.actor(0)
    cone = sim.actor("c1")
    assert (cone.id, cone.kind, cone.model, cone.x) == (1, "static_object", "cone", 60.0)
    # The pedestrian exists once the ego is within 30 m of its first point.
    assert sim.actor("walker") == sim.actor(2) and not sim.actor("walker").active
    assert sim.actor("walker").model == "pedestrian"
    while not sim.actor("walker").active:
        sim.step()
    assert sim.actor("walker").frame == sim.frame and sim.actor("walker").speed == 1.0
    traffic = sim.actor(3)
    assert traffic.name is None and traffic.kind == "vehicle"
    with pytest.raises(
        QueryError, match=r"no actor named 'walkr' \(names: 'ego', 'c1', 'walker'\)"
    ):
        sim.actor("walkr")
    with pytest.raises(QueryError, match="no actor has the id 99"):
        sim.actor(99)
    for bad in (True, 1.5):
        with pytest.raises(ArgumentTypeError, match=r"key: expected a name \(a string\) or an"):
            sim.actor(bad)  # type: ignore[arg-type]


def test_a_controller_is_named_or_given_by_id() -> None:
    def dependent(**extra: Any) -> dict[str, Any]:
        return {
            "type": "path",
            "path": [
                {"road": 1, "lane": -4, "s": 10, "speed": 5},
                {"x": 150, "y": -11.375, "speed": 5},
            ],
            "target_point": 1,
            "controller_target": {"road": 1, "lane": -2, "s": 200},
            **extra,
        }

    lead = {
        "type": "path",
        "name": "lead",
        "path": [
            {"road": 1, "lane": -2, "s": 40, "speed": 15},
            {"x": 290, "y": -3.875, "speed": 15},
        ],
    }
    for ref in ("lead", 2):
        sim = scenario(
            map="highway",
            ego={"spawn": {"road": 1, "lane": -3, "s": 20}},
            objects=[dependent(controller=ref), lead],
        )
        assert sim._scripted.scripts.controller[0] == sim._scripted.scripts.slot[1]
        assert sim.actor("lead").id == 2


def test_a_traffic_vehicle_that_found_no_room_is_a_located_error(tmp_path: Path) -> None:
    # Loading checks every id that the scenario and the map decide; whether traffic
    # vehicle 250 of 300 asked for finds room on the ring (it holds about 60) is known
    # once it is placed.
    path = tmp_path / "crowded.yaml"
    path.write_text(
        "map: ring\nego: {spawn: {road: 1, lane: -1, s: 10}}\ntraffic: {count: 300}\n"
        "sensors:\n  - {type: driver, vehicle: 250}\n"
    )
    located = rf"^{path}:5: sensors\[0\]\.vehicle: no vehicle has "
    with pytest.warns(TrafficWarning), pytest.raises(ScenarioError, match=located):
        Simulation(path)
    scenario_ = load_scenario(path).with_overrides(seed=3)  # as `roadsim run --seed 3` does
    with pytest.warns(TrafficWarning), pytest.raises(ScenarioError, match=located):
        Simulation(scenario_)
