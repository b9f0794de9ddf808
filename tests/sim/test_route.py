"""The ego's ``route``: the road ids it prefers at forks, honoured by its autopilot."""

from __future__ import annotations

import numpy as np
import pytest

from roadsim import Simulation
from roadsim.scenario import Scenario
from roadsim.world.codes import ROUTE_BIT


def _roads_driven(route: list[str], seconds: float = 20.0) -> list[str]:
    """The roads outside junctions the ego drives on, in order, from road 1 of the town
    toward its central crossroads."""
    scenario = Scenario.model_validate(
        {
            "map": "town",
            "ego": {"spawn": {"road": "1", "lane": 1, "s": 60}, "speed": 8, "route": route},
        }
    )
    sim = Simulation(scenario)
    assert sim.ego_slot is not None
    roads: list[str] = []
    for _ in range(round(seconds / sim.dt)):
        sim.step()
        road = int(sim.state.road[sim.ego_slot])
        if road < 0 or sim.net.road_junction[road] is not None:
            continue
        if not roads or roads[-1] != sim.net.road_ids[road]:
            roads.append(sim.net.road_ids[road])
    return roads


@pytest.mark.parametrize("target", ["2", "3", "4"])
def test_the_ego_takes_the_road_its_route_names_at_a_fork(target: str) -> None:
    # Before: the route was checked against the map and then ignored (the ego always
    # took the successor its route salt picked: road 4 here).
    assert _roads_driven([target]) == ["1", target]


def test_roads_of_a_route_are_preferred_in_order() -> None:
    # Both lie ahead at the same fork: the first named wins.
    assert _roads_driven(["3", "2"]) == ["1", "3"]
    assert _roads_driven(["2", "3"]) == ["1", "2"]


def test_only_the_ego_follows_the_route() -> None:
    """The mark of the route's follower is the ego's alone: traffic placed at the start
    or spawned later never carries it (respawns draw their salts the same way,
    `roadsim.sim.lifecycle.route_salts`). (Salts drawn at random carried it in
    half the traffic, which then took the ego's way at forks and never rerouted when
    refused at a junction for long: Town07's longest stands, 76 to 104 s.)"""
    scenario = Scenario.model_validate(
        {
            "map": "town",
            "seed": 1,
            "ego": {"spawn": {"road": "1", "lane": 1, "s": 60}, "route": ["2"]},
            "traffic": {"count": 60, "mix": {"car": 1.0}},
        }
    )
    sim = Simulation(scenario)
    st = sim.state
    other = next(k for k in np.flatnonzero(st.active) if k != sim.ego_slot)
    sim.spawn_vehicle(float(st.x[other]), float(st.y[other]) + 40.0, float(st.heading[other]))
    st = sim.state
    marked = (sim._salt >> np.uint64(ROUTE_BIT)) & np.uint64(1) == 1
    assert np.flatnonzero(marked & st.active).tolist() == [sim.ego_slot]


@pytest.mark.parametrize("target", ["2", "3", "4"])
def test_the_egos_driver_sensor_looks_ahead_along_its_route(target: str) -> None:
    """The driver sensor's stream ahead follows the route too: of three cars standing
    just past the crossroads, one on each road of the fork, the ego sees the one on the
    road its route names as the object in front."""
    scenario = Scenario.model_validate(
        {"map": "town", "ego": {"spawn": {"road": "1", "lane": 1, "s": 60}, "route": [target]}}
    )
    sim = Simulation(scenario)
    standing = {
        road: sim.spawn_vehicle_on_lane(road, -1, 10.0, external=True) for road in ("2", "3", "4")
    }
    sim.step()
    assert sim.ego_slot is not None
    front = sim.driver_view(int(sim.state.id[sim.ego_slot])).surrounding_objects.object_front
    assert front.id == standing[target]
