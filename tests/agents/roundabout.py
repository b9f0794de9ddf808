"""A small roundabout built with `roadsim.road.builder`, for the dependent objects' tests.

A one-lane ring driven counter-clockwise (right-hand traffic) around the origin, in four
arcs "r0" to "r3" joined at four junctions "j0" to "j3" at 0, 90, 180 and 270 degrees.
Straight two-way arms "a0" to "a3" point out from the junctions (east, north, west,
south); arms a0, a1 and a2 only enter the ring, arm a3 only leaves it, so a vehicle that
enters from a0 drives r0, r1 and r2 before its first choice (on along r3 or out along a3).
Each arm runs inward (s from its far end to the ring), with driving lanes 1 (out) and -1
(in) and sidewalks 2 and -2.
"""

from __future__ import annotations

import math

from roadsim.road.builder import (
    Arc,
    Document,
    JunctionSpec,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadSpec,
)

__all__ = ["ARM_LENGTH", "GAP", "RADIUS", "RING_LANE", "arc_length", "roundabout"]

RADIUS = 25.0  # m, of the ring's reference line (its inner edge)
GAP = math.radians(20.0)  # half the angle each junction takes of the ring
RING_LANE = 4.0  # m
ARM_LANE = 3.5  # m
SIDEWALK = 2.0  # m
ARM_NEAR = 40.0  # m from the centre, where an arm meets its junction
ARM_LENGTH = 55.0  # m


def arc_length() -> float:
    """Length of each ring arc's reference line (m)."""
    return RADIUS * (math.pi / 2 - 2 * GAP)


def roundabout() -> Document:
    """The roundabout of the module docstring."""
    ring_lanes = (LaneSpec(-1, "driving", RING_LANE),)
    ring = []
    for k in range(4):
        a = k * math.pi / 2 + GAP
        start = Pose(RADIUS * math.cos(a), RADIUS * math.sin(a), a + math.pi / 2)
        plan = PlanView(start, (Arc(arc_length(), 1.0 / RADIUS),))
        ring.append(
            RoadSpec(f"r{k}", plan, [LaneSectionSpec(0.0, ring_lanes)], kind="town", speed_kmh=50)
        )
    arm_lanes = (
        LaneSpec(2, "sidewalk", SIDEWALK),
        LaneSpec(1, "driving", ARM_LANE),
        LaneSpec(-1, "driving", ARM_LANE),
        LaneSpec(-2, "sidewalk", SIDEWALK),
    )
    arms = []
    for k in range(4):
        a = k * math.pi / 2
        far = ARM_NEAR + ARM_LENGTH
        start = Pose(far * math.cos(a), far * math.sin(a), a + math.pi)
        arms.append(
            RoadSpec(
                f"a{k}",
                PlanView(start, (Line(ARM_LENGTH),)),
                [LaneSectionSpec(0.0, arm_lanes)],
                kind="town",
                speed_kmh=50,
            )
        )
    junctions, connecting = [], []
    for k in range(4):
        junction = JunctionSpec(f"j{k}", f"junction {k}")
        into, out_of, arm = ring[k].end("start"), ring[k - 1].end("end"), arms[k].end("end")
        pairs = [(out_of, into, [(-1, -1)], RADIUS)]
        pairs.append((out_of, arm, [(-1, 1)], None) if k == 3 else (arm, into, [(-1, -1)], None))
        for src, dst, lanes, radius in pairs:
            connecting.append(
                junction.connect(
                    f"c{k}{len(junction.connections)}",
                    src,
                    dst,
                    lanes,
                    radius=radius,
                    kind="town",
                    speed_kmh=50,
                )
            )
        junctions.append(junction)
    return Document("roundabout", [*ring, *arms, *connecting], junctions)
