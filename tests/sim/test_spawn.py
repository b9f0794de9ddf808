"""Vehicles made, driven and removed at run time (what the server's clients ask for)."""

from __future__ import annotations

import numpy as np
import pytest

import roadsim
from roadsim import EgoCommand
from roadsim.errors import ArgumentError, ArgumentTypeError, QueryError
from roadsim.world.state import AUTOPILOT, EXTERNAL


def _town() -> roadsim.Simulation:
    return roadsim.Simulation("town", seed=1)


def test_spawned_vehicle_grows_the_state_and_drives() -> None:
    sim = _town()
    cap = sim.state.capacity
    ego = sim.actor("ego")
    x0 = ego.x + 3000.0  # far from everything: off every lane
    new = sim.spawn_vehicle(x0, ego.y, 0.0, speed=5.0, external=True)
    assert sim.state.capacity > cap
    assert new not in sim.state.id[:cap]
    actor = sim.actor(new)
    assert actor.active and actor.kind == "vehicle" and actor.lane is None
    sim.step()
    moved = sim.actor(new)
    # External, no command yet: it coasts straight on at its speed.
    assert moved.x == pytest.approx(x0 + 5.0 * sim.dt)
    sim.drive(new, EgoCommand(accel=2.0))
    sim.step()
    assert sim.actor(new).speed == pytest.approx(5.0 + 2.0 * sim.dt)
    assert sim.state.control[sim.state.id == new][0] == EXTERNAL
    sim.drive(new, None)
    assert sim.state.control[sim.state.id == new][0] == AUTOPILOT


def test_spawn_on_a_lane_then_autopilot_and_remove() -> None:
    sim = _town()
    ego = sim.actor("ego")
    # 30 m behind the ego in its lane: the autopilot takes it along the road.
    import math

    x = ego.x - 30.0 * math.cos(ego.heading)
    y = ego.y - 30.0 * math.sin(ego.heading)
    new = sim.spawn_vehicle(x, y, ego.heading, speed=5.0)
    assert sim.actor(new).lane is not None
    sim.run(1.0)
    assert sim.actor(new).active
    sim.remove_actor(new)
    assert not sim.actor(new).active
    sim.step()
    assert new not in sim.state.id[sim.state.active]
    again = sim.spawn_vehicle(x, y, ego.heading)
    assert again > new  # ids are never reused, slots are
    with pytest.raises(QueryError, match="not in the world"):
        sim.remove_actor(new)


def test_spawn_by_road_coordinates_faces_the_lanes_direction() -> None:
    sim = _town()
    net = sim.net
    spawned = []
    for lane, sign in ((-1, 0.0), (1, np.pi)):  # with the reference line, then against it
        new = sim.spawn_vehicle_on_lane("5", lane, 100.0, t=0.25, speed=4.0)
        actor = sim.actor(new)
        spawned.append(actor)
        uid = net.lane_uid("5", lane, 100.0).reshape(1)
        centre = net.uid_t_center(uid, np.array([100.0]))[0]
        x, y, _ = net.to_world("5", 100.0, centre + 0.25)
        assert (actor.x, actor.y) == pytest.approx((float(x), float(y)), abs=1e-9)
        road_heading = net.reference_pose(net.road_index("5").reshape(1), np.array([100.0]))[3][0]
        turn = np.remainder(actor.heading - road_heading - sign + np.pi, 2.0 * np.pi) - np.pi
        assert turn == pytest.approx(0.0, abs=1e-9)
        assert sim.state.uid[sim.state.id == new][0] == uid[0] and actor.speed == 4.0
    sim.run(1.0)  # the autopilot takes both on, the way they face
    for before in spawned:
        after = sim.actor(before.id)
        ahead = (after.x - before.x) * np.cos(before.heading) + (after.y - before.y) * np.sin(before.heading)
        assert ahead > 3.0


def test_bad_road_coordinates_say_what_the_map_has() -> None:
    sim = _town()
    with pytest.raises(QueryError, match="no road with id '999'"):
        sim.spawn_vehicle_on_lane("999", -1, 10.0)
    with pytest.raises(QueryError, match="road 100 has no lane 1 at s=5; lanes there: -1, 0"):
        sim.spawn_vehicle_on_lane(100, 1, 5.0)
    with pytest.raises(ArgumentError, match="s=300 is outside road 5, which runs from s=0"):
        sim.spawn_vehicle_on_lane("5", -1, 300.0)
    with pytest.raises(ArgumentTypeError, match=r"lane: expected an integer id, got -1\.5"):
        sim.spawn_vehicle_on_lane("5", -1.5, 10.0)  # type: ignore[arg-type]


def test_spawning_keeps_runs_deterministic() -> None:
    def run() -> np.ndarray:
        sim = _town()
        sim.run(0.5)
        a = sim.spawn_vehicle(sim.actor("ego").x + 40.0, sim.actor("ego").y, 0.0)
        sim.run(0.5)
        sim.remove_actor(a)
        sim.run(0.5)
        return np.stack([sim.state.x, sim.state.y, sim.state.speed])

    assert np.array_equal(run(), run())


def test_bad_spawns_and_removals_name_what_was_expected() -> None:
    sim = _town()
    with pytest.raises(ArgumentError, match="model: expected one of car, truck, bus"):
        sim.spawn_vehicle(0.0, 0.0, 0.0, model="tank")
    with pytest.raises(ArgumentError, match="speed"):
        sim.spawn_vehicle(0.0, 0.0, 0.0, speed=-1.0)
    with pytest.raises(ArgumentError, match="x"):
        sim.spawn_vehicle(float("nan"), 0.0, 0.0)
    with pytest.raises(ArgumentError, match="ego cannot be removed"):
        sim.remove_actor("ego")
    with pytest.raises(QueryError, match="no actor has the id"):
        sim.drive(10_000, EgoCommand())


def test_drive_ego_is_drive_of_the_ego() -> None:
    a, b = _town(), _town()
    a.drive_ego(EgoCommand(throttle=0.3, steering=0.1))
    b.drive("ego", EgoCommand(throttle=0.3, steering=0.1))
    a.run(1.0)
    b.run(1.0)
    assert np.array_equal(a.state.x, b.state.x)
