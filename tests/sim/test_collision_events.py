"""Collision events: boxes meet in height too, and static objects never collide."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roadsim import EgoCommand, Simulation
from roadsim.road.builder import (
    CubicSpec,
    Document,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadSpec,
)
from roadsim.scenario.schema import validate_data
from roadsim.world.state import STATIC_OBJECT


def _crossing(folder: Path, climb: float) -> str:
    """Road "1" runs 300 m east along y = 0 on the ground; road "2" runs 300 m north
    along x = 150 and climbs ``climb`` m a metre (a bridge 6 m over road 1 at 0.04)."""
    lanes = [LaneSectionSpec(0.0, (LaneSpec(1), LaneSpec(-1)))]
    ground = RoadSpec("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(300.0),)), lanes)
    bridge = RoadSpec("2", PlanView(Pose(150.0, -150.0, np.pi / 2), (Line(300.0),)), list(lanes))
    bridge.elevation = [CubicSpec(0.0, 0.0, climb)]
    path = folder / f"crossing_{climb:g}.xodr"
    Document("crossing", [ground, bridge]).write(path)
    return str(path)


def _drive_over_a_box(folder: Path, climb: float) -> Simulation:
    """The ego drives north on road 2 across road 1, where a box stands in lane -1."""
    sim = Simulation(
        validate_data(
            {
                "map": _crossing(folder, climb),
                "ego": {"spawn": {"road": "2", "lane": -1, "s": 110.0}, "speed": 10.0},
                "objects": [{"type": "box", "position": {"road": "1", "lane": -1, "s": 151.75}}],
            },
            "test",
        )
    )
    sim.drive_ego(EgoCommand(throttle=0.1))
    sim.run(8.0)
    return sim


def test_traffic_on_a_bridge_does_not_meet_the_traffic_under_it(tmp_path: Path) -> None:
    # Before: the collision test ignored height, and this was a collision event.
    sim = _drive_over_a_box(tmp_path, climb=0.04)
    ego = sim.ego_slot
    assert ego is not None
    assert float(sim.state.s[ego]) > 160.0, "the ego should have crossed road 1"
    assert sim.events == []
    # The ego follows the road up: its height is the road's at its s.
    assert float(sim.state.z[ego]) == pytest.approx(0.04 * float(sim.state.s[ego]), abs=1e-6)


def test_the_same_crossing_on_the_level_is_a_collision(tmp_path: Path) -> None:
    sim = _drive_over_a_box(tmp_path, climb=0.0)
    assert len(sim.events) == 1


_GUARD_RAILS = b"""<objects>
  <object id="g1" type="barrier" name="guardRail" s="50" t="-4.2" zOffset="0" hdg="0"
          length="20" width="0.4" height="0.8"/>
  <object id="g2" type="barrier" name="guardRail" s="69.9" t="-4.2" zOffset="0" hdg="0"
          length="20" width="0.4" height="0.8"/>
  <object id="g3" type="barrier" name="guardRail" s="60" t="-4.2" zOffset="0" hdg="0"
          length="20" width="0.4" height="0.8"/>
</objects>
</road>"""


def test_static_objects_touching_each_other_are_no_collision(tmp_path: Path) -> None:
    # Before: every pair of touching guard rails was a collision event at frame 1.
    road = RoadSpec(
        "1",
        PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),)),
        [LaneSectionSpec(0.0, (LaneSpec(1), LaneSpec(-1)))],
    )
    xml = Document("rails", [road]).to_xml().replace(b"</road>", _GUARD_RAILS, 1)
    path = tmp_path / "rails.xodr"
    path.write_bytes(xml)
    sim = Simulation(
        validate_data(
            {
                "map": str(path),
                "ego": {"spawn": {"road": "1", "lane": -1, "s": 20.0}, "speed": 5.0},
            },
            "test",
        )
    )
    assert int(np.sum(sim.state.active & (sim.state.kind == STATIC_OBJECT))) == 3
    sim.run(1.0)
    assert sim.events == []
    assert not sim.state.collided.any()
