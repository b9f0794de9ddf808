"""Vehicles made, driven and removed at run time (what the server's clients ask for)."""

from __future__ import annotations

import numpy as np
import pytest

import roadsim
from roadsim import EgoCommand
from roadsim.errors import ArgumentError, QueryError
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
