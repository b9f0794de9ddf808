"""Roads drawn over each other with no junction or link between them: found, warned of,
and kept out of traffic's starts and dead ends."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from roadsim import Simulation
from roadsim.errors import MapWarning
from roadsim.road.builder import (
    CubicSpec,
    Document,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadSpec,
    link_roads,
)
from roadsim.road.load import load_map
from roadsim.scenario import Scenario
from roadsim.sim.traffic_stats import watch
from roadsim.world.lane_info import LaneInfo
from roadsim.world.overlaps import edge_stretches, unjoined_overlaps


def _two_way(road_id: str, pose: Pose, length: float, slope: float = 0.0) -> RoadSpec:
    lanes = (LaneSpec(1, width=3.5), LaneSpec(-1, width=3.5))
    elevation = [CubicSpec(0.0, 0.0, slope)] if slope else []
    return RoadSpec(
        road_id, PlanView(pose, (Line(length),)), [LaneSectionSpec(0.0, lanes)],
        elevation=elevation,
    )  # fmt: skip


def _info(tmp_path: Path, roads: list[RoadSpec]) -> tuple[Path, LaneInfo]:
    path = tmp_path / "roads.xodr"
    Document("roads", roads).write(path)
    return path, LaneInfo(load_map(str(path)).prepare())


def _road_of(info: LaneInfo, lanes: np.ndarray) -> set[str]:
    return {info.net.road_ids[r] for r in info.road[lanes].tolist()}


def test_a_crossing_with_no_junction_is_an_overlap_and_a_bridge_or_a_link_is_not(
    tmp_path: Path,
) -> None:
    along = _two_way("1", Pose(0.0, 0.0, 0.0), 100.0)
    across = _two_way("2", Pose(50.0, -50.0, 0.5 * math.pi), 100.0)
    _, info = _info(tmp_path, [along, across])
    found = unjoined_overlaps(info)
    assert found.size == 4 * 2  # each of the four lanes lies over the two of the other road
    assert _road_of(info, found.lane) == {"1", "2"}
    assert np.all(info.road[found.lane] != info.road[found.other])
    # Around the crossing, at s = 50 of both roads, the width of a road and a bit.
    s = np.sort(
        np.column_stack([info.road_s(found.lane, found.start), info.road_s(found.lane, found.end)]),
        axis=1,
    )
    assert np.all(s[:, 0] > 44.0) and np.all(s[:, 1] < 56.0)
    assert np.all(s[:, 0] < 50.0) and np.all(s[:, 1] > 50.0)

    # A bridge: the second road 6 m up where it crosses.
    over = _two_way("2", Pose(50.0, -50.0, 0.5 * math.pi), 100.0)
    over = RoadSpec(over.id, over.plan, over.sections, elevation=[CubicSpec(0.0, 6.0)])
    _, bridged = _info(tmp_path, [along, over])
    assert unjoined_overlaps(bridged).size == 0

    # Two roads linked end to end: their ends' samples lie within a metre of each other,
    # but the link joins them (traffic sees across it).
    first = _two_way("1", Pose(0.0, 0.0, 0.0), 50.0)
    second = _two_way("3", Pose(50.0, 0.0, 0.0), 50.0)
    link_roads(first.end("end"), second.end("start"), [(1, 1), (-1, -1)])
    _, linked = _info(tmp_path, [first, second])
    assert unjoined_overlaps(linked).size == 0


def _star(tmp_path: Path) -> tuple[Path, LaneInfo]:
    """Three dead-end roads from one point, one flat, one up and one down (as esmini's
    star.xodr draws eight such triples): they lie over each other for their first
    metres, until their heights part."""
    start = Pose(0.0, 0.0, 0.0)
    roads = [_two_way(str(k), start, 80.0, slope) for k, slope in enumerate((0.0, 0.3, -0.3))]
    return _info(tmp_path, roads)


def test_traffic_leaves_and_enters_dead_ends_outside_the_roads_they_lie_over(
    tmp_path: Path,
) -> None:
    path, info = _star(tmp_path)
    found = unjoined_overlaps(info)
    assert _road_of(info, found.lane) == {"0", "1", "2"}
    leave, enter = edge_stretches(info, found)
    ends = np.flatnonzero(info.drivable.astype(bool))
    # Lanes toward s = 0 end there (a dead end) and leave before the overlap; lanes
    # from s = 0 start there and come back after it.
    toward = ends[info.sign[ends] < 0]
    away = ends[info.sign[ends] > 0]
    assert np.all(leave[toward] < info.length[toward] - 8.0) and np.all(enter[toward] == 0.0)
    assert np.all(enter[away] > 8.0) and np.all(leave[away] == info.length[away])

    scenario = Scenario.model_validate(
        {"map": str(path), "seed": 0, "traffic": {"count": 9, "min_gap": 8}}
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim = Simulation(scenario)
    said = [w for w in caught if issubclass(w.category, MapWarning)]
    assert len(said) == 1 and said[0].filename == __file__
    text = str(said[0].message)
    assert text.startswith(f"{path}:") and "no junction or link between them" in text
    assert sim.traffic_placed == 9
    # Nobody starts on a stretch over another road.
    st = sim.state
    cars = np.flatnonzero(st.active)
    p = info.progress(st.uid[cars], st.s[cars])
    half = 0.5 * st.length[cars]
    for lane, a, b in zip(found.lane, found.start, found.end, strict=True):
        on = st.uid[cars] == lane
        assert not np.any(on & (p + half > a) & (p - half < b))
    summary = watch(sim, 120.0)
    assert summary.vehicle_collisions == 0, summary.to_text()
    assert sim.left_map > 10  # (traffic went round: out at the dead ends, back at the entries)


def test_a_map_without_overlaps_says_nothing(tmp_path: Path) -> None:
    along = _two_way("1", Pose(0.0, 0.0, 0.0), 100.0)
    beside = _two_way("2", Pose(0.0, 7.0, 0.0), 100.0)  # (abutting, not over it)
    path, info = _info(tmp_path, [along, beside])
    assert unjoined_overlaps(info).size == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", MapWarning)
        Simulation(Scenario.model_validate({"map": str(path), "seed": 0, "traffic": {"count": 4}}))
