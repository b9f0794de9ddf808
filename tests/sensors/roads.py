"""Small hand-built maps for the driver sensor's tests, and how to write them.

Every map is built with `roadsim.road.builder`; `write` puts it in a folder as an .xodr file
(rewritten to left-hand traffic on request: the builder writes ``rule="RHT"``). Lanes are
`LANE` wide unless said otherwise; reference lines start at the origin heading east (+x),
so on a straight road x is s and y is t.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

from roadsim.road.builder import (
    Arc,
    Document,
    JunctionSpec,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadMarkSpec,
    RoadSpec,
    SignalSpec,
    link_roads,
    link_sections,
    speed_limit,
    stop_sign,
    traffic_light,
)

__all__ = [
    "CURVE_RADIUS",
    "LANE",
    "SHOULDER",
    "SIDEWALK",
    "curve",
    "dead_end",
    "junction",
    "lane_drop",
    "opening",
    "straight",
    "two_way",
    "write",
]

LANE = 3.5  # m
SHOULDER = 2.0  # m
SIDEWALK = 2.0  # m
CURVE_RADIUS = 100.0  # m, of the reference line of `curve`

# Road marks, as written in the maps.
YELLOW = RoadMarkSpec("solid", "yellow", 0.15)
DOUBLE_YELLOW = RoadMarkSpec("solid solid", "yellow", 0.15)
DASH = RoadMarkSpec("broken", "white", 0.12)
SOLID = RoadMarkSpec("solid", "white", 0.12)
EDGE = RoadMarkSpec("solid", "white", 0.2)
EDGE_YELLOW = RoadMarkSpec("solid", "yellow", 0.2)
CURB = RoadMarkSpec("curb", "standard", 0.15)


def write(doc: Document, folder: Path, *, lht: bool = False) -> str:
    """Writes ``doc`` to ``folder/<name>.xodr`` (every road in left-hand traffic with
    ``lht``) and returns the path, for a scenario's ``map``."""
    xml = doc.to_xml()
    if lht:
        assert xml.count(b'rule="RHT"') == len(doc.roads)
        xml = xml.replace(b'rule="RHT"', b'rule="LHT"')
    path = folder / f"{doc.name}{'_lht' if lht else ''}.xodr"
    path.write_bytes(xml)
    return str(path)


def _everywhere(sig: SignalSpec) -> SignalSpec:
    """``sig`` without a validity: valid for every lane of its road."""
    return dataclasses.replace(sig, lanes=None)


def straight() -> Document:
    """Road "1": 200 m due east, one way (right-hand traffic), in two lane sections.

    Lanes (both sections, s = 0-120 and 120-200): -1, -2, -3 driving (t = -1.75, -5.25,
    -8.75 at their centres), -4 a shoulder `SHOULDER` wide (centre t = -11.5). Lane 1 and
    above do not exist.

    Road marks, by border (s ranges along the road):

    - centre lane (left of -1): solid yellow 0.15 to 120, then "solid solid" yellow 0.15;
    - lane -1 (between -1 and -2): broken white 0.12 to 60, solid white 0.12 from 60 (and
      again in the second section: one marking), broken white 0.12 from 160;
    - lane -2 (between -2 and -3): broken white 0.12 in three records (0, 30, 120): one
      marking;
    - lane -3 (between -3 and the shoulder): no mark before 20, solid white 0.2 from 20,
      solid yellow 0.2 from 120;
    - lane -4 (the shoulder's outer edge): curb "standard" 0.15.

    Signals, all for traffic along +s unless said otherwise:

    - "s0" at s=5: 60 km/h for every lane;
    - "s1" at s=50: 80 km/h, lane -1 only;
    - "s3" at s=70: 30 km/h, orientation "-" (for traffic against s: none here);
    - "s2" at s=90: 100 km/h for every lane;
    - "s4" at s=140: a stop sign (no value, no unit), lanes -3 to -2;
    - "L1" at s=150: a traffic light, lanes -3 to -1.
    """
    first = LaneSectionSpec(
        0.0,
        (
            LaneSpec(-1, "driving", LANE, (DASH, dataclasses.replace(SOLID, s_offset=60.0))),
            LaneSpec(-2, "driving", LANE, (DASH, dataclasses.replace(DASH, s_offset=30.0))),
            LaneSpec(-3, "driving", LANE, (dataclasses.replace(EDGE, s_offset=20.0),)),
            LaneSpec(-4, "shoulder", SHOULDER, (CURB,)),
        ),
        (YELLOW,),
    )
    second = LaneSectionSpec(
        120.0,
        (
            LaneSpec(-1, "driving", LANE, (SOLID, dataclasses.replace(DASH, s_offset=40.0))),
            LaneSpec(-2, "driving", LANE, (DASH,)),
            LaneSpec(-3, "driving", LANE, (EDGE_YELLOW,)),
            LaneSpec(-4, "shoulder", SHOULDER, (CURB,)),
        ),
        (DOUBLE_YELLOW,),
    )
    road = RoadSpec(
        "1", PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),)), link_sections([first, second])
    )
    road.signals += [
        _everywhere(speed_limit("s0", 5.0, -12.0, 60, orientation="+", lanes=(-1, -1))),
        speed_limit("s1", 50.0, -12.0, 80, orientation="+", lanes=(-1, -1)),
        speed_limit("s3", 70.0, -12.0, 30, orientation="-", lanes=(-3, -1)),
        _everywhere(speed_limit("s2", 90.0, -12.0, 100, orientation="+", lanes=(-1, -1))),
        stop_sign("s4", 140.0, -12.0, orientation="+", lanes=(-3, -2)),
        traffic_light("L1", 150.0, -12.0, orientation="+", lanes=(-3, -1)),
    ]
    return Document("straight", [road])


def curve() -> Document:
    """Road "c": 20 m east from the origin, then a left-hand arc of radius
    `CURVE_RADIUS` (centre (20, 100)) for 150 m; lanes 2, 1, -1, -2 driving, in two lane sections (0-20, 20-170).

    Lane centre radii on the arc: lane 2 94.75 m, lane 1 98.25 m, lane -1 101.75 m,
    lane -2 105.25 m.
    """
    plan = PlanView(Pose(0.0, 0.0, 0.0), (Line(20.0), Arc(150.0, 1.0 / CURVE_RADIUS)))
    lanes = (
        LaneSpec(2, "driving", LANE, (EDGE,)),
        LaneSpec(1, "driving", LANE, (DASH,)),
        LaneSpec(-1, "driving", LANE, (DASH,)),
        LaneSpec(-2, "driving", LANE, (EDGE,)),
    )
    # Two sections (where the arc begins): a map without any lane link trips LaneInfo.
    sections = link_sections(
        [LaneSectionSpec(0.0, lanes, (YELLOW,)), LaneSectionSpec(20.0, lanes, (YELLOW,))]
    )
    return Document("curve", [RoadSpec("c", plan, sections)])


def lane_drop() -> Document:
    """Road "d": 200 m due east, one way, three lane sections.

    - s = 0-100: lanes -1, -2, -3 driving;
    - s = 100-150: lane -1 driving, lane -2 an exit lane (-3 has ended: a lane drop);
    - s = 150-200: lane -1 driving, lane -2 a shoulder (where lane -2's stream ends).
    """
    sections = [
        LaneSectionSpec(
            0.0,
            (
                LaneSpec(-1, "driving", LANE, (DASH,)),
                LaneSpec(-2, "driving", LANE, (DASH,)),
                LaneSpec(-3, "driving", LANE, (EDGE,)),
            ),
            (YELLOW,),
        ),
        LaneSectionSpec(
            100.0,
            (LaneSpec(-1, "driving", LANE, (DASH,)), LaneSpec(-2, "exit", LANE, (EDGE,))),
            (YELLOW,),
        ),
        LaneSectionSpec(
            150.0,
            (LaneSpec(-1, "driving", LANE, (EDGE,)), LaneSpec(-2, "shoulder", SHOULDER)),
            (YELLOW,),
        ),
    ]
    road = RoadSpec("d", PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),)), link_sections(sections))
    return Document("lane_drop", [road])


def junction() -> Document:
    """Road "1" (x = 0-100) and road "2" (x = 110-210) due east along y = 0, joined
    through junction "J" by connecting road "3" (x = 100-110, no road marks); lanes -1 and
    -2 driving on each.

    Roads 1 and 2 have a solid white centre mark, broken white 0.12 between -1 and -2 and
    a solid white 0.2 edge. Sign "j1" (50 km/h, lane -1) stands at s = 20 on road 2.
    """
    lanes = (LaneSpec(-1, "driving", LANE, (DASH,)), LaneSpec(-2, "driving", LANE, (EDGE,)))
    section = LaneSectionSpec(0.0, lanes, (SOLID,))
    r1 = RoadSpec("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(100.0),)), [section])
    r2 = RoadSpec("2", PlanView(Pose(110.0, 0.0, 0.0), (Line(100.0),)), [section])
    r2.signals.append(speed_limit("j1", 20.0, -8.0, 50, orientation="+", lanes=(-1, -1)))
    j = JunctionSpec("J", "junction")
    r3 = j.connect("3", r1.end("end"), r2.end("start"), [(-1, -1), (-2, -2)])
    return Document("junction", [r1, r2, r3], [j])


def two_way(*, lht: bool = False) -> Document:
    """Road "w": 200 m due east; lanes 3 (a sidewalk, `SIDEWALK` wide), 2, 1, -1, -2, the
    same in two lane sections (0-100, 100-200).

    Right-hand traffic drives lanes 1 and 2 against s (west), left-hand traffic along s
    (east); write it with ``write(..., lht=lht)``. Centres: t = 1.75 (lane 1), 5.25 (2),
    8.5 (3), -1.75 (-1), -5.25 (-2).

    Marks: centre solid yellow 0.15; lane 1 broken white 0.12; lane 2 solid white 0.2;
    lane 3 curb 0.15; lane -1 broken white 0.12; lane -2 solid white 0.2.

    Signals for the lanes 1 and 2 (their traffic's orientation): "w1" 70 km/h at s = 50.
    For lanes -2 and -1 (the other direction): "w2" 90 km/h at s = 60, "w3" 110 km/h at
    s = 120.
    """
    lanes = (
        LaneSpec(3, "sidewalk", SIDEWALK, (CURB,)),
        LaneSpec(2, "driving", LANE, (EDGE,)),
        LaneSpec(1, "driving", LANE, (DASH,)),
        LaneSpec(-1, "driving", LANE, (DASH,)),
        LaneSpec(-2, "driving", LANE, (EDGE,)),
    )
    sections = link_sections(
        [LaneSectionSpec(0.0, lanes, (YELLOW,)), LaneSectionSpec(100.0, lanes, (YELLOW,))]
    )
    road = RoadSpec("w", PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),)), sections)
    ours: Literal["+", "-"] = "+" if lht else "-"
    theirs: Literal["+", "-"] = "-" if lht else "+"
    road.signals += [
        speed_limit("w1", 50.0, 9.0, 70, orientation=ours, lanes=(1, 2)),
        speed_limit("w2", 60.0, -8.0, 90, orientation=theirs, lanes=(-2, -1)),
        speed_limit("w3", 120.0, -8.0, 110, orientation=theirs, lanes=(-2, -1)),
    ]
    return Document("two_way", [road])


def opening() -> Document:
    """Road "o": 200 m due east, right-hand traffic, two lane sections.

    Lanes 2 and 1 (driven west, against s) run the whole road; lane -1 (driven east) is a
    shoulder before s = 50 and a driving lane from 50 on: followed west, against its
    driving direction, its stream ends at s = 50.
    """
    west = (LaneSpec(2, "driving", LANE, (EDGE,)), LaneSpec(1, "driving", LANE, (DASH,)))
    sections = [
        LaneSectionSpec(0.0, (*west, LaneSpec(-1, "shoulder", SHOULDER)), (YELLOW,)),
        LaneSectionSpec(50.0, (*west, LaneSpec(-1, "driving", LANE, (EDGE,))), (YELLOW,)),
    ]
    road = RoadSpec("o", PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),)), link_sections(sections))
    return Document("opening", [road])


def dead_end() -> Document:
    """Roads "e" (x = 0-100) and "f" (x = 100-140) due east, one way, "f" linked to the
    end of "e".

    Road "e": lanes -1 and -2 driving from s = 0 to 50; from 50 on, lane -1 driving and
    lane -2 a sidewalk `SIDEWALK` wide (centre t = -4.5), which lane -2 leads into.
    Road "f": lane -1 a sidewalk as wide as a lane (a pedestrian zone), which lane -1 of
    "e" leads into. Both are where their driving lanes' streams end.
    """
    sections = [
        LaneSectionSpec(
            0.0,
            (LaneSpec(-1, "driving", LANE, (DASH,)), LaneSpec(-2, "driving", LANE, (EDGE,))),
            (YELLOW,),
        ),
        LaneSectionSpec(
            50.0,
            (LaneSpec(-1, "driving", LANE, (EDGE,)), LaneSpec(-2, "sidewalk", SIDEWALK, (CURB,))),
            (YELLOW,),
        ),
    ]
    e = RoadSpec("e", PlanView(Pose(0.0, 0.0, 0.0), (Line(100.0),)), link_sections(sections))
    zone = LaneSectionSpec(0.0, (LaneSpec(-1, "sidewalk", LANE, (CURB,)),), (YELLOW,))
    f = RoadSpec("f", PlanView(Pose(100.0, 0.0, 0.0), (Line(40.0),)), [zone])
    link_roads(e.end("end"), f.end("start"), [(-1, -1)])
    return Document("dead_end", [e, f])
