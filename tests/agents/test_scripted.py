"""Scripted objects in a running simulation: motion, lifecycle, dependent timing.

Most cases use the built-in highway: road 1 runs 300 m due east from the origin and road 2
carries on straight for another 100 m; the eastbound lanes -2, -3 and -4 have their
centres at y = -3.875, -7.625 and -11.375 m.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from roadsim import Simulation
from roadsim.agents.scripted import ALIVE, DONE, PENDING
from roadsim.scenario import load_scenario, resolve_spawn
from roadsim.scenario.paths import SAMPLE_SPACING
from roadsim.scenario.schema import validate_data
from roadsim.sim.simulation import EgoCommand
from roadsim.world.state import SCRIPTED_OBJECT
from tests.agents.roundabout import arc_length, roundabout

LANE_Y = {-2: -3.875, -3: -7.625, -4: -11.375}


def sim_of(**fields: Any) -> Simulation:
    return Simulation(validate_data({"map": "highway", **fields}, "test"))


def on_lane(lane: int, s: float, speed: float, **extra: Any) -> dict[str, Any]:
    """A control point on road 1 (s <= 300) or road 2 (s > 300, counted on from road 1)."""
    road, s_road = ("1", s) if s <= 300.0 else ("2", s - 300.0)
    return {"road": road, "lane": lane, "s": s_road, "speed": speed, **extra}


def ego_at(s: float, speed: float = 0.0) -> dict[str, Any]:
    spawn = {k: v for k, v in on_lane(-3, s, 0.0).items() if k != "speed"}
    return {"spawn": spawn, "speed": speed, "control": "external"}


def slot_of(sim: Simulation, index: int = 0) -> int:
    return int(sim._scripted.scripts.slot[index])


# -- regular objects -------------------------------------------------------------------------------


def test_a_regular_object_drives_its_speed_profile_exactly() -> None:
    points = [
        on_lane(-4, 20.0, 5.0),
        on_lane(-4, 60.0, 15.0),
        on_lane(-4, 120.0, 0.0, wait=2.0),
        on_lane(-4, 200.0, 10.0),
        on_lane(-4, 230.0, 10.0),
    ]
    sim = sim_of(objects=[{"type": "path", "kind": "car", "path": points}])
    k = slot_of(sim)
    path = sim._scripted.paths[0]
    st = sim.state
    assert st.active[k] and st.kind[k] == SCRIPTED_OBJECT
    assert (st.x[k], st.y[k], st.speed[k]) == pytest.approx((20.0, LANE_Y[-4], 5.0))
    distance, speed, arrival = [0.0], [5.0], {}
    for frame in range(1, 800):
        sim.step()
        d = float(sim._scripted.progress.distance[0])
        assert d >= distance[-1]  # never backwards
        x, y, heading = path.pose_at(d)
        assert (st.x[k], st.y[k], st.heading[k]) == (x[0], y[0], heading[0])
        standing = sim._scripted.progress.wait_left[0] > 0.0 or d == path.length
        expected = 0.0 if standing else float(path.speed_at(d)[0])
        assert st.speed[k] == pytest.approx(expected, abs=1e-9)
        for i, knot in enumerate(path.knots):
            if i not in arrival and d >= knot - 1e-9:
                arrival[i] = frame
        distance.append(d)
        speed.append(float(st.speed[k]))
    dt = sim.dt
    # Segment 0 is linear in distance: from 5 to 15 m/s over 40 m takes L ln(v1/v0) / dv.
    expected_0 = 40.0 * math.log(15.0 / 5.0) / 10.0
    assert abs(arrival[1] * dt - expected_0) <= dt
    # Segment 1 ends at rest (constant deceleration, 2 L / v0 = 8 s); the wait is 2 s and
    # segment 2 starts from rest (2 L / v1 = 16 s).
    assert abs((arrival[2] - arrival[1]) * dt - 8.0) <= dt
    assert abs((arrival[3] - arrival[2]) * dt - (2.0 + 16.0)) <= dt
    # At the end it stops there and stays.
    assert distance[-1] == pytest.approx(path.length)
    assert speed[-1] == 0.0 and st.active[k]
    assert (st.x[k], st.y[k]) == pytest.approx((230.0, LANE_Y[-4]))


def test_an_object_deleted_at_the_end_of_its_path_stays_gone() -> None:
    points = [on_lane(-4, 20.0, 10.0), on_lane(-4, 40.0, 10.0)]
    sim = sim_of(objects=[{"type": "path", "path": points, "at_end": "delete"}])
    k = slot_of(sim)
    frames = 0
    while sim.state.active[k]:
        sim.step()
        frames += 1
    assert frames == round(2.0 / sim.dt)
    assert sim._scripted.progress.status[0] == DONE and sim.state.uid[k] == -1
    sim.run(5.0)
    assert not sim.state.active[k]


def test_objects_are_localised_on_the_lanes_under_them() -> None:
    # Across the three eastbound lanes, then off the road to the south.
    points = [
        {"x": 20.0, "y": LANE_Y[-2], "speed": 2.0},
        {"x": 25.0, "y": LANE_Y[-3], "speed": 2.0},
        {"x": 30.0, "y": LANE_Y[-4], "speed": 2.0},
        {"x": 35.0, "y": -60.0, "speed": 2.0},
    ]
    sim = sim_of(objects=[{"type": "path", "kind": "pedestrian", "path": points}])
    k = slot_of(sim)
    net, st = sim.net, sim.state
    seen = set()
    for _ in range(400):
        sim.step()
        truth = net.localize(st.x[[k]], st.y[[k]])
        assert st.uid[k] == truth.uid[0]
        if truth.uid[0] >= 0:
            assert st.s[k] == pytest.approx(truth.s[0], abs=1e-6)
            assert st.t[k] == pytest.approx(truth.t[0], abs=1e-6)
            seen.add(int(net.lanes.lane_id[truth.uid[0]]))
        else:
            assert st.road[k] == -1 and math.isnan(st.s[k])
    assert {-2, -3, -4} <= seen


def test_height_follows_the_road_and_holds_over_a_gap() -> None:
    # Over the crest of road 2 (6 m high around s = 900), with a detour off the road.
    points = [
        {"road": 2, "lane": -3, "s": 700.0, "speed": 20.0},
        {"x": 1030.0, "y": -60.0, "speed": 20.0},
        {"road": 2, "lane": -3, "s": 1000.0, "speed": 20.0},
    ]
    sim = sim_of(objects=[{"type": "path", "path": points}])
    k = slot_of(sim)
    st = sim.state
    path = sim._scripted.paths[0]
    on = path.sample_uid >= 0
    edges = path.sample_dist[np.flatnonzero(on[1:] != on[:-1])]
    last_surface, held = None, 0
    for _ in range(round(40.0 / sim.dt)):
        sim.step()
        surface = sim.net.surface_height(st.x[[k]], st.y[[k]])[0]
        if np.min(np.abs(edges - sim._scripted.progress.distance[0])) < 2 * SAMPLE_SPACING:
            continue  # where the road begins or ends, to within the path's sampling
        if np.isfinite(surface):
            assert st.z[k] == pytest.approx(surface, abs=0.05)
            last_surface = float(st.z[k])
        else:
            assert last_surface is not None and abs(st.z[k] - last_surface) < 0.05
            held += 1
    assert held > 10 and last_surface is not None


# -- lifecycle ------------------------------------------------------------------------------------


def creation_scenario(**extra: Any) -> Simulation:
    points = [on_lane(-4, 150.0, 5.0), on_lane(-4, 250.0, 5.0)]
    sim = sim_of(
        ego=ego_at(20.0),
        objects=[{"type": "path", "path": points, "creation_radius": 50.0, **extra}],
    )
    sim.drive_ego(EgoCommand(brake=1.0))
    return sim


def teleport_ego(sim: Simulation, x: float) -> None:
    ego = sim.ego_slot
    assert ego is not None
    sim.state.x[ego], sim.state.y[ego], sim.state.speed[ego] = x, LANE_Y[-3], 0.0


def test_created_once_the_ego_was_in_range_for_the_delay() -> None:
    sim = creation_scenario(activation_delay=1.0)
    k = slot_of(sim)
    inside = [60.0] * 10 + [160.0] * 40  # first point at x = 150: out 90 m, then in 10 m
    created_at = None
    for f, x in enumerate(inside):
        teleport_ego(sim, x)
        sim.step()
        if sim.state.active[k] and created_at is None:
            created_at = f + 1
    # In range from frame 10; 1 s later (frame 30) the lifecycle creates it: it shows in
    # the next frame.
    assert created_at == 10 + 20 + 1


def test_leaving_the_range_early_restarts_the_delay() -> None:
    sim = creation_scenario(activation_delay=1.0)
    k = slot_of(sim)
    xs = [160.0] * 15 + [60.0] + [160.0] * 40
    created_at = None
    for f, x in enumerate(xs):
        teleport_ego(sim, x)
        sim.step()
        if sim.state.active[k] and created_at is None:
            created_at = f + 1
    assert created_at == 16 + 20 + 1


def test_deleted_on_leaving_the_range_and_created_anew_on_return() -> None:
    sim = creation_scenario()
    k = slot_of(sim)
    teleport_ego(sim, 160.0)
    sim.step()
    assert sim.state.active[k]
    sim.run(2.0)
    assert sim._scripted.progress.distance[0] > 5.0
    teleport_ego(sim, 250.0)  # 100 m past the object: out of range
    sim.step()
    assert not sim.state.active[k] and sim._scripted.progress.status[0] == PENDING
    teleport_ego(sim, 140.0)
    sim.step()
    assert sim.state.active[k] and sim._scripted.progress.status[0] == ALIVE
    # Created anew at the start of the path, having moved one tick.
    assert sim._scripted.progress.distance[0] == pytest.approx(5.0 * sim.dt)


def test_lifetime_deletes_for_good() -> None:
    points = [on_lane(-4, 20.0, 5.0), on_lane(-4, 200.0, 5.0)]
    sim = sim_of(objects=[{"type": "path", "path": points, "lifetime": 2.0}])
    k = slot_of(sim)
    alive = [bool(sim.state.active[k])]
    for _ in range(100):
        sim.step()
        alive.append(bool(sim.state.active[k]))
    # Created at frame 0; the lifecycle of frame 40 (2 s) deletes it.
    assert alive == [True] * 41 + [False] * 60


def test_creation_radius_zero_exists_from_the_start() -> None:
    points = [on_lane(-4, 20.0, 5.0), on_lane(-4, 200.0, 5.0)]
    sim = sim_of(ego=ego_at(250.0), objects=[{"type": "path", "path": points}])
    assert sim.state.active[slot_of(sim)]


# -- dependent objects ----------------------------------------------------------------------------

TARGET_X = 350.0  # the ego's target: road 2, lane -3, s = 50


def dependent_sim(ego_s: float, ego_speed: float, **extra: Any) -> Simulation:
    points = [
        on_lane(-4, 10.0, 10.0),
        on_lane(-4, 150.0, 10.0),
        on_lane(-4, 350.0, 12.0),
        on_lane(-4, 390.0, 12.0),
    ]
    obj = {
        "type": "path",
        "path": points,
        "target_point": 2,
        "controller_target": on_lane(-3, TARGET_X, 0.0) | {"speed": None},
        **extra,
    }
    del obj["controller_target"]["speed"]
    return sim_of(ego=ego_at(ego_s, ego_speed), objects=[obj])


@pytest.mark.parametrize(
    ("name", "speed", "accel"),
    [("constant", 20.0, 0.0), ("accelerating", 8.0, 1.5), ("braking", 25.0, -0.8)],
)
def test_a_dependent_object_arrives_when_its_controller_does(
    name: str, speed: float, accel: float
) -> None:
    sim = dependent_sim(20.0, speed)
    sim.drive_ego(EgoCommand(accel=accel))
    ego, k = sim.ego_slot, slot_of(sim)
    assert ego is not None
    ego_arrives = object_arrives = None
    last = 0.0
    for frame in range(1, round(60.0 / sim.dt)):
        sim.step()
        d = float(sim._scripted.progress.distance[0])
        assert d >= last
        last = d
        if ego_arrives is None and sim.state.x[ego] >= TARGET_X:
            ego_arrives = frame
        if object_arrives is None and not sim._scripted.progress.synced[0]:
            object_arrives = frame
        if ego_arrives is not None and object_arrives is not None:
            break
    assert ego_arrives is not None and object_arrives is not None, name
    assert abs(object_arrives - ego_arrives) <= 1, name
    # Then it drives the control points' speeds.
    sim.step()
    assert sim.state.speed[k] == pytest.approx(12.0)


def test_a_dependent_object_stops_when_its_controller_stops() -> None:
    sim = dependent_sim(20.0, 20.0)
    sim.drive_ego(EgoCommand(accel=-3.0))  # stands after about 67 m, far from its target
    ego, k = sim.ego_slot, slot_of(sim)
    assert ego is not None
    distance = []
    for _ in range(round(30.0 / sim.dt)):
        sim.step()
        distance.append(float(sim._scripted.progress.distance[0]))
    assert np.all(np.diff(distance) >= 0.0)
    assert sim.state.speed[ego] == 0.0 and sim.state.speed[k] == 0.0
    assert sim._scripted.progress.synced[0]  # waiting short of its target point
    assert distance[-1] == distance[len(distance) // 2]


def test_a_controller_moving_away_leaves_it_standing() -> None:
    # The ego starts past its target and drives on, away from it.
    sim = dependent_sim(360.0, 15.0)
    sim.drive_ego(EgoCommand(accel=0.0))
    k = slot_of(sim)
    for _ in range(100):
        sim.step()
        assert sim.state.speed[k] == 0.0
    assert sim._scripted.progress.distance[0] == 0.0


def test_a_controller_that_turns_back_toward_the_target_resumes_it() -> None:
    # Moving away, the object waits; once the controller heads for its target, it goes.
    sim = dependent_sim(200.0, 10.0)
    ego, k = sim.ego_slot, slot_of(sim)
    assert ego is not None
    sim.state.heading[ego] = math.pi  # driving west, away from x = 350
    sim.drive_ego(EgoCommand(accel=0.0, curvature=0.0))
    sim.run(1.0)
    assert sim.state.speed[k] == 0.0
    sim.state.heading[ego] = 0.0  # east again
    sim.run(0.5)
    assert sim.state.speed[k] > 0.0


def test_speed_limits_bound_the_change_of_a_dependent_speed() -> None:
    sim = dependent_sim(20.0, 30.0, max_accel=1.0, max_decel=2.0)
    sim.drive_ego(EgoCommand(accel=-2.5))
    k = slot_of(sim)
    speeds = [float(sim.state.speed[k])]
    while sim._scripted.progress.synced[0] and sim.frame < 600:
        sim.step()
        speeds.append(float(sim.state.speed[k]))
    change = np.diff(speeds[:-1]) / sim.dt
    assert change.max() <= 1.0 + 1e-9 and change.min() >= -2.0 - 1e-9


def test_scripted_objects_are_deterministic() -> None:
    def run() -> list[np.ndarray]:
        sim = dependent_sim(20.0, 18.0)
        sim.drive_ego(EgoCommand(accel=0.5))
        out = []
        for _ in range(200):
            sim.step()
            out.append(np.concatenate([v.astype(np.float64) for v in sim.state.arrays().values()]))
        return out

    a, b = run(), run()
    assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))


def test_traffic_brakes_for_scripted_objects() -> None:
    # Three slow scripted cars abreast ahead of the ego (on autopilot): it cannot pass
    # them, so it follows them.
    objects = [
        {"type": "path", "path": [on_lane(lane, 100.0, 8.0), on_lane(lane, 390.0, 8.0)]}
        for lane in (-2, -3, -4)
    ]
    sim = sim_of(
        ego={"spawn": {"road": 1, "lane": -3, "s": 20}, "speed": 25.0, "control": "autopilot"},
        objects=objects,
    )
    ego = sim.ego_slot
    assert ego is not None
    sim.run(20.0)
    assert sim.events == []
    assert sim.state.speed[ego] < 9.0
    assert sim.state.x[ego] < sim.state.x[slot_of(sim, 1)] - 5.0


# -- built-in scenarios -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "speeds"), [("crossing", (6.0, 10.0, 13.0)), ("cut-in", (20.0, 25.0, 30.0))]
)
def test_builtin_dependent_objects_arrive_with_the_ego_at_any_speed(
    name: str, speeds: tuple[float, ...]
) -> None:
    for speed in speeds:
        scenario = load_scenario(name)
        assert scenario.ego is not None
        ego_spec = scenario.ego.model_copy(update={"speed": speed, "desired_speed": speed})
        sim = Simulation(scenario.model_copy(update={"ego": ego_spec}))
        obj = sim._scripted.objects[0]
        assert obj.controller_target is not None
        target = resolve_spawn(obj.controller_target, sim.net)
        ego, k = sim.ego_slot, slot_of(sim)
        assert ego is not None
        ego_arrives = object_arrives = None
        # (until both arrived: the ego may come one frame after the object)
        while sim.frame < round(30.0 / sim.dt) and None in (object_arrives, ego_arrives):
            sim.step()
            st = sim.state
            ahead = (target.x - st.x[ego]) * math.cos(st.heading[ego]) + (
                target.y - st.y[ego]
            ) * math.sin(st.heading[ego])
            if ego_arrives is None and ahead <= 0.0:
                ego_arrives = sim.frame
            if object_arrives is None and st.active[k] and not sim._scripted.progress.synced[0]:
                object_arrives = sim.frame
        assert ego_arrives is not None and object_arrives is not None, (name, speed)
        assert abs(object_arrives - ego_arrives) <= 1, (name, speed)
        # The ego then gets past without touching it.
        sim.run(20.0)
        assert sim.events == [], (name, speed)


# -- dependent objects: where the controller drives -------------------------------------------------


@pytest.fixture(scope="module")
def roundabout_map(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("maps") / "roundabout.xodr"
    roundabout().write(path)
    return str(path)


def crossing_on_arm_a3(**extra: Any) -> dict[str, Any]:
    """A pedestrian that crosses the exit arm a3 of the roundabout 15 m from the ring,
    timed to reach the kerb (point 1) when its controller reaches 3/4 of ring arc r2."""
    return {
        "type": "path",
        "name": "walker",
        "kind": "pedestrian",
        "path": [
            {"road": "a3", "lane": 2, "s": 35, "speed": 1.4},
            {"road": "a3", "lane": 2, "s": 45, "t": 0.6, "speed": 1.4},
            {"road": "a3", "lane": -2, "s": 45, "t": -0.6, "speed": 1.4, "tangent": [1, 0]},
            {"road": "a3", "lane": -2, "s": 50, "speed": 1.4},
        ],
        "target_point": 1,
        "controller_target": {"road": "r2", "lane": -1, "s": 0.75 * arc_length()},
        **extra,
    }


def arrivals(sim: Simulation, controller: int, obj: int = 0) -> tuple[int, int, float]:
    """Runs until both the controller and the dependent object ``obj`` arrived; returns
    the frames they arrived at and the object's top speed on its way. The controller
    arrives where it passes its target: close to it, the target no longer ahead."""
    spec = sim._scripted.objects[obj]
    assert spec.controller_target is not None
    target = resolve_spawn(spec.controller_target, sim.net)
    k, st = slot_of(sim, obj), sim.state
    controller_at = object_at = None
    top = 0.0
    while sim.frame < round(60.0 / sim.dt) and (controller_at is None or object_at is None):
        sim.step()
        dx, dy = target.x - st.x[controller], target.y - st.y[controller]
        ahead = dx * math.cos(st.heading[controller]) + dy * math.sin(st.heading[controller])
        if controller_at is None and math.hypot(dx, dy) < 6.0 and ahead <= 0.0:
            controller_at = sim.frame
        if object_at is None:
            top = max(top, float(st.speed[k]))
            if not sim._scripted.progress.synced[obj]:
                object_at = sim.frame
    assert controller_at is not None and object_at is not None
    return controller_at, object_at, top


@pytest.mark.parametrize("speed", [6.0, 10.0])
def test_arrival_is_measured_along_the_route_round_a_roundabout(
    roundabout_map: str, speed: float
) -> None:
    # The ego enters from arm a0 and drives 3/4 of the way round before its target. Its
    # distance to the target along its heading went negative (the pedestrian stood) and
    # then far too small: the pedestrian ran at up to 10.7 m/s and arrived 10 to 14 s
    # early. Along the ego's route it walks and arrives in the same tick.
    sim = Simulation(
        validate_data(
            {
                "map": roundabout_map,
                "ego": {
                    "spawn": {"road": "a0", "lane": -1, "s": 5},
                    "speed": speed,
                    "desired_speed": speed,
                },
                "objects": [crossing_on_arm_a3()],
            },
            "test",
        )
    )
    assert sim.ego_slot is not None
    ego_at, walker_at, top = arrivals(sim, sim.ego_slot)
    assert abs(walker_at - ego_at) <= 1
    assert top <= 1.4 + 1e-9


def test_a_scripted_controller_is_measured_along_its_path(roundabout_map: str) -> None:
    # A scripted car drives round the ring from r0 to r3 at 8 m/s; the pedestrian is
    # timed to it: along the car's path it arrives with it.
    ring = [
        {"road": road, "lane": -1, "s": s * arc_length(), "speed": 8.0}
        for road in ("r0", "r1", "r2", "r3")
        for s in (0.1, 0.5, 0.9)
    ]
    car = {"type": "path", "name": "car", "kind": "car", "path": ring}
    sim = Simulation(
        validate_data(
            {
                "map": roundabout_map,
                "objects": [crossing_on_arm_a3(controller="car"), car],
            },
            "test",
        )
    )
    car_slot = slot_of(sim, 1)
    assert sim._scripted.scripts.controller[0] == car_slot
    car_at, walker_at, top = arrivals(sim, car_slot)
    assert abs(walker_at - car_at) <= 1
    assert top <= 1.4 + 1e-9


def test_a_controller_whose_slot_holds_another_actor_is_gone() -> None:
    # (a vehicle that left the map frees its slot for a new vehicle with a new id)
    sim = dependent_sim(20.0, 20.0)
    sim.drive_ego(EgoCommand(accel=0.0))
    sim.run(1.0)
    k, ego = slot_of(sim), sim.ego_slot
    assert ego is not None and sim.state.speed[k] > 0.0
    sim.state.id[ego] = 1000
    sim.run(3.0)
    assert sim.state.speed[k] == 0.0


def test_max_speed_caps_the_timed_speed() -> None:
    # 80 m of path to its target while the ego is 4 s from its own: timed to 20 m/s. A
    # pedestrian's max_speed keeps it walking; it then arrives late.
    walker = {
        "type": "path",
        "kind": "pedestrian",
        "path": [on_lane(-4, 150.0, 1.4), on_lane(-4, 230.0, 1.4), on_lane(-4, 240.0, 1.4)],
        "target_point": 1,
        "controller_target": {"road": "1", "lane": -3, "s": 120.0},
    }
    timed = []
    for extra in ({}, {"max_speed": 2.5}):
        sim = sim_of(ego=ego_at(20.0, 25.0), objects=[walker | extra])
        sim.drive_ego(EgoCommand(accel=0.0))
        k = slot_of(sim)
        top = 0.0
        for _ in range(round(4.0 / sim.dt)):
            sim.step()
            top = max(top, float(sim.state.speed[k]))
        timed.append(top)
    assert timed[0] == pytest.approx(20.0, abs=0.5)
    assert timed[1] == pytest.approx(2.5)


@pytest.mark.parametrize("ego_speed", [15.0, 20.0])
def test_keep_timed_speed_carries_the_speed_through_the_target_point(ego_speed: float) -> None:
    # The cut-in car is timed to 12 to 17 m/s; its target point says 22 m/s. It took
    # that speed in one tick (105 to 187 m/s^2); keeping its speed, it changes it
    # along the next segment, and still arrives with the ego.
    scenario = load_scenario("cut-in")
    assert scenario.ego is not None
    ego_spec = scenario.ego.model_copy(update={"speed": ego_speed, "desired_speed": ego_speed})
    steps = []
    for keep in (False, True):
        car = scenario.objects[0].model_copy(update={"keep_timed_speed": keep})
        sim = Simulation(scenario.model_copy(update={"ego": ego_spec, "objects": (car,)}))
        assert sim.ego_slot is not None
        ego_at, car_at, _ = arrivals(sim, sim.ego_slot)
        assert abs(car_at - ego_at) <= 1
        k = slot_of(sim)
        step = abs(float(sim.state.accel[k]))
        for _ in range(3):
            sim.step()
            step = max(step, abs(float(sim.state.accel[k])))
        steps.append(step)
        if keep:  # at the next control point it has that point's speed
            path = sim._scripted.paths[0]
            while sim._scripted.progress.distance[0] < path.knots[4]:
                sim.step()
            assert sim._scripted.progress.segment[0] == 4
            assert sim.state.speed[k] == pytest.approx(path.speeds[4], abs=0.5)
    assert steps[0] > 100.0
    assert steps[1] < 5.0
