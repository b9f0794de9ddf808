"""Traffic flows: towns at half their capacity keep moving for ten minutes."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from roadsim import Simulation
from roadsim.errors import TrafficWarning
from roadsim.scenario import Scenario
from roadsim.sim.traffic_stats import STUCK_AFTER, watch

#: CARLA's Town07 (from the test corpus): short streets between many junctions.
TOWN07 = Path(__file__).parents[1] / "data" / "opendrive" / "maps" / "libOpenDRIVE" / "test.xodr"


def _town(count: int, seed: int = 0, map_name: str = "town", cars_only: bool = True) -> Scenario:
    traffic: dict[str, object] = {"count": count, "min_gap": 10}
    if cars_only:
        traffic["mix"] = {"car": 1.0}
    return Scenario.model_validate({"map": map_name, "seed": seed, "traffic": traffic})


@pytest.mark.slow
def test_the_town_at_half_capacity_flows_for_ten_minutes() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrafficWarning)
        holds = Simulation(_town(1_000_000)).traffic_placed
    summary = watch(Simulation(_town(holds // 2)), 600.0)
    # (Waiting 12 m back at every T junction once starved one arm: 37 of 100 stuck.)
    # No stand over a minute without a red light ahead at all: stricter than the issue,
    # which excuses a vehicle in a queue that moves.
    assert summary.long_stands == summary.stuck == 0, summary.to_text()
    assert summary.longest_stand < 2 * STUCK_AFTER, summary.to_text()
    assert summary.collisions == 0, summary.to_text()
    assert summary.mean_speed > 1.5 and summary.junction_entries_per_min > 30, summary.to_text()


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_the_town_with_trucks_and_buses_flows_without_collisions(seed: int) -> None:
    """The default mix (15% trucks and buses). Each of these seeds gave two collisions
    (seed 1 before long vehicles kept out of the turns they cannot make, seed 2 after):
    a truck that had been let in into a junction crept up behind others for 8 s, lost
    its promise as it rolled in at 5 m/s, could not stop, and met the car let in
    instead (`roadsim.agents.junctions`, ``_WITHDRAW_DECEL``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrafficWarning)
        holds = Simulation(_town(1_000_000)).traffic_placed
    summary = watch(Simulation(_town(holds // 2, seed, cars_only=False)), 600.0)
    assert summary.long_stands == summary.stuck == 0, summary.to_text()
    assert summary.collisions == 0, summary.to_text()
    assert summary.mean_speed > 1.5 and summary.junction_entries_per_min > 30, summary.to_text()


@pytest.mark.slow
def test_town07_at_half_capacity_flows_for_ten_minutes() -> None:
    """Town07's short links between junctions locked its traffic within four minutes:
    vehicles let in behind others stood inside junctions, a promise given for one
    junction held for the next, and queues waited for each other's room in rings (153
    stuck, 66% standing, a stand of 462 s). Then half the traffic never rerouted (its
    route salts carried the ego's route mark): heads of queues at entries that lead
    through three joined junctions into a one-car street stood up to 104 s with nothing
    ahead of them moving (7 stuck by the issue's measure, 30 stands over a minute)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrafficWarning)
        holds = Simulation(_town(1_000_000, map_name=str(TOWN07))).traffic_placed
    summary = watch(Simulation(_town(holds // 2, map_name=str(TOWN07))), 600.0)
    assert summary.stuck == 0, summary.to_text()
    assert summary.mean_speed > 2.0 and summary.standing < 0.45, summary.to_text()
    assert summary.longest_stand < 1.5 * STUCK_AFTER, summary.to_text()
    assert summary.collisions == 0, summary.to_text()


def test_cars_on_town07_do_not_take_a_turn_behind_short_pieces_too_fast() -> None:
    """60 cars, five minutes (seed 2): a car read the envelope of the three lane records
    ahead only, three pieces of a connecting road under 20 cm, and entered the 7 m
    turn after them at 11 m/s, into a car in the next turn (`LaneInfo` passes the
    envelope after a piece on to it)."""
    summary = watch(Simulation(_town(60, seed=2, map_name=str(TOWN07))), 300.0)
    assert summary.collisions == 0, summary.to_text()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_town07_with_trucks_and_buses_flows_for_ten_minutes(seed: int) -> None:
    """The default mix at half capacity for ten minutes. Before long vehicles kept off
    the turns and links they cannot use, these six runs gave 51 collisions; then 9 (seven
    of them a truck leaving a tight turn still turned, into a car waiting beside it),
    and 1 (seed 1: two cars standing 2 m apart by progress on the inside of a 5 m corner
    touched, `roadsim.world.lane_kernels.progress_per_metre`). Then trucks trapped in a
    circuit, and cars starved at entries that convoys of trucks crossed, stood for
    minutes: 193 stuck over seeds 0 to 99 (docs/simulation.md)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrafficWarning)
        holds = Simulation(_town(1_000_000, map_name=str(TOWN07))).traffic_placed
    sim = Simulation(_town(holds // 2, seed, map_name=str(TOWN07), cars_only=False))
    summary = watch(sim, 600.0)
    assert summary.stuck == 0, summary.to_text()
    assert summary.collisions == 0, summary.to_text()
    assert summary.mean_speed > 1.5, summary.to_text()
