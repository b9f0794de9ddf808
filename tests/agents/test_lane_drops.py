"""Lanes that drop: traffic merges out in time and comes back behind the vehicles that did."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from roadsim import Simulation
from roadsim.road.builder import (
    CubicSpec,
    Document,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadSpec,
    link_sections,
)
from roadsim.scenario import Scenario
from roadsim.sim.traffic_stats import watch
from tests.conftest import CORPUS


def _closing(w0: float, over: float) -> CubicSpec:
    """A width that closes smoothly from w0 to nothing over ``over`` metres."""
    return CubicSpec(0.0, w0, 0.0, -3.0 * w0 / over**2, 2.0 * w0 / over**3)


def _drop_in_next_section(path: Path) -> Path:
    """600 m of road, two lanes one way for 200 m; the outer one closes over the next
    30 m, a lane section of its own, and ends there."""
    sections = [
        LaneSectionSpec(0.0, (LaneSpec(-1, width=3.5), LaneSpec(-2, width=3.5))),
        LaneSectionSpec(
            200.0, (LaneSpec(-1, width=3.5), LaneSpec(-2, width=(_closing(3.5, 30.0),)))
        ),
        LaneSectionSpec(230.0, (LaneSpec(-1, width=3.5),)),
    ]
    road = RoadSpec("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(600.0),)), link_sections(sections))
    Document("drop", [road], []).write(path)
    return path


def test_traffic_merges_before_a_lane_that_drops_in_its_next_section(tmp_path: Path) -> None:
    """A vehicle asked to merge only in the lane record that drops (its own 30 m section
    here, as on esmini's two_plus_one.xodr): by then the vehicle beside it in the lane it
    merges into had often come alongside, stopped for it, and each waited for the other.
    Before: 35 of 40 cars stuck in two minutes (seed 0), 60 of 60 on two_plus_one."""
    traffic = {"count": 40, "min_gap": 3, "mix": {"car": 1.0}}
    scenario = {"map": str(_drop_in_next_section(tmp_path / "drop.xodr")), "seed": 0}
    sim = Simulation(Scenario.model_validate({**scenario, "traffic": traffic}))
    summary = watch(sim, 120.0)
    assert summary.stuck == 0 and summary.collisions == 0, summary.to_text()
    assert summary.mean_speed > 4.0, summary.to_text()


def test_two_plus_one_flows_without_collisions() -> None:
    """esmini's 2+1 road, whose middle lane changes direction every few hundred metres:
    all 60 vehicles stood after five minutes; with the merge asked for earlier, trucks
    that came back at an entry drove into cars still leaving that lane (24 collisions)."""
    traffic = {"count": 60, "min_gap": 10}
    path = CORPUS / "maps" / "esmini" / "two_plus_one.xodr"
    sim = Simulation(Scenario.model_validate({"map": str(path), "seed": 0, "traffic": traffic}))
    summary = watch(sim, 300.0)
    assert summary.stuck == 0 and summary.collisions == 0, summary.to_text()


def test_a_vehicle_comes_back_only_behind_one_that_still_reaches_into_the_entry(
    tmp_path: Path,
) -> None:
    """A car that has just changed out of an entry lane stands partly in it still: a
    vehicle that comes back there must keep its distance from it too."""
    sections = [LaneSectionSpec(0.0, (LaneSpec(-1, width=3.5), LaneSpec(-2, width=3.5)))]
    road = RoadSpec("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(400.0),)), link_sections(sections))
    path = tmp_path / "entries.xodr"
    Document("entries", [road], []).write(path)
    traffic = {"count": 2, "min_gap": 10, "mix": {"car": 1.0}}
    sim = Simulation(Scenario.model_validate({"map": str(path), "seed": 0, "traffic": traffic}))
    st, info = sim.state, sim.lane_info
    inner, outer = (int(np.flatnonzero((info.road == 0) & info.drivable)[j]) for j in (0, 1))
    assert abs(info.net.uid_t_center(np.array([inner]), np.array([0.0]))[0]) < 2.0
    a, b = np.flatnonzero(st.active)[:2]
    # Car a stands 12 m into the outer lane, a metre over toward the inner one.
    st.uid[a], st.s[a], st.speed[a] = outer, 12.0, 0.0
    st.t[a] = info.net.uid_t_center(np.array([outer]), np.array([12.0]))[0] + 1.0
    st.s[b] = 300.0
    respawner = sim._respawner
    assert respawner is not None
    respawner.entries = respawner.long_entries = np.array([inner])
    st.active[b] = False
    respawner.release(np.array([b]))
    changing = np.full(st.active.size, -1)
    respawner.fill(st, sim._salt, sim._speed_factor, changing, 100)
    assert respawner.pending == [int(b)] and not st.active[b]
    st.s[a] = 40.0  # (far enough ahead now)
    respawner.fill(st, sim._salt, sim._speed_factor, changing, 100)
    assert respawner.pending == [] and st.active[b] and st.uid[b] == inner
