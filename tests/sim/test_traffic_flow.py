"""Traffic flows: a town at half its capacity keeps moving for ten minutes."""

from __future__ import annotations

import warnings

import pytest

from roadsim import Simulation
from roadsim.errors import TrafficWarning
from roadsim.scenario import Scenario
from roadsim.sim.traffic_stats import STUCK_AFTER, TrafficStats


def _town(count: int, seed: int = 0) -> Scenario:
    traffic = {"count": count, "min_gap": 10, "mix": {"car": 1.0}}
    return Scenario.model_validate({"map": "town", "seed": seed, "traffic": traffic})


@pytest.mark.slow
def test_the_town_at_half_capacity_flows_for_ten_minutes() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrafficWarning)
        holds = Simulation(_town(1_000_000)).traffic_placed
    sim = Simulation(_town(holds // 2))
    stats = TrafficStats(sim)
    for _ in range(round(600.0 / sim.dt)):
        sim.step()
        stats.observe()
    summary = stats.summary()
    # (Waiting 12 m back at every T junction once starved one arm: 37 of 100 stuck.)
    assert summary.stuck == 0, summary.to_text()
    assert summary.longest_stand < 2 * STUCK_AFTER, summary.to_text()
    assert summary.collisions == 0, summary.to_text()
    assert summary.mean_speed > 1.5 and summary.junction_entries_per_min > 30, summary.to_text()
