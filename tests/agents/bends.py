"""A two-lane road with one half turn, built with `roadsim.road.builder`, for the tests of
vehicles meeting on bends."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from roadsim.road.builder import (
    Arc,
    Document,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadSpec,
)

LANE, SHOULDER = 3.2, 0.5  # m: Town07's


def bend_road(
    folder: Path, radius: float, straight: float, lane: float = LANE
) -> tuple[str, float, float]:
    """Road "1": ``straight`` m, a half turn to the left of ``radius`` (m, on the reference
    line between the two directions), ``straight`` m again; a ``lane`` m lane (3.2 m)
    and a 0.5 m shoulder each side. Returns the file and the s where the bend begins and
    ends."""
    arc = np.pi * radius
    lanes = [
        LaneSectionSpec(
            0.0,
            (
                LaneSpec(2, "shoulder", SHOULDER),
                LaneSpec(1, width=lane),
                LaneSpec(-1, width=lane),
                LaneSpec(-2, "shoulder", SHOULDER),
            ),
        )
    ]
    segments = (Line(straight), Arc(arc, 1.0 / radius), Line(straight))
    road = RoadSpec("1", PlanView(Pose(0.0, 0.0, 0.0), segments), lanes)
    path = folder / f"bend_{radius:g}_{lane:g}.xodr"
    Document("bend", [road]).write(path)
    return str(path), straight, straight + arc
