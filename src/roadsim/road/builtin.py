"""The maps shipped with roadsim, built with `roadsim.road.builder`.

One function per map returns its `Document`; ``roadsim.load_map(name)`` loads the file
``roadsim/road/maps/<name>.xodr`` written from it. After changing a map here, regenerate
the files with::

    python -m roadsim.road.builtin

(a test checks that the shipped files equal what these functions write, byte for byte).
Traffic drives on the right; signs follow the German catalogue (StVO), traffic lights
the OpenDRIVE one.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from roadsim.road.builder import (
    Arc,
    ControllerSpec,
    CubicSpec,
    Document,
    JunctionSpec,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadEnd,
    RoadMarkSpec,
    RoadSpec,
    Spiral,
    connect,
    link_roads,
    link_sections,
    smoothstep,
    speed_limit,
    stop_sign,
    traffic_light,
    turn,
    yield_sign,
)

__all__ = ["MAPS", "build", "highway", "main", "ring", "town"]

# -- highway ------------------------------------------------------------------------------------

MEDIAN = 2.0  # m, each carriageway's half of the central reservation
LANE = 3.75  # m, motorway lane
SHOULDER = 2.5  # m, hard shoulder
TAPER = 90.0  # m, length over which an added lane opens or closes

EDGE = RoadMarkSpec("solid", width=0.25, weight="bold")
DASH = RoadMarkSpec("broken", width=0.15)
BOLD_DASH = RoadMarkSpec("broken", width=0.25, weight="bold")  # beside entry and exit lanes

Width = float | tuple[CubicSpec, ...]


def _carriageway(
    side: int, *, added: tuple[str, Width] | None = None, shoulder: Width = SHOULDER
) -> list[LaneSpec]:
    """One carriageway's lanes from the median out; ``side`` +1 left, -1 right.

    ``added`` is an extra lane (type, width) outside the three through lanes: an
    acceleration (``entry``) or deceleration (``exit``) lane.
    """
    lanes = [LaneSpec(side * 1, "median", MEDIAN, (EDGE,))]
    for k in (2, 3, 4):
        mark = DASH if k < 4 else (BOLD_DASH if added else EDGE)
        lanes.append(LaneSpec(side * k, "driving", LANE, (mark,)))
    if added is not None:
        lanes.append(LaneSpec(side * 5, added[0], added[1], (EDGE,)))
    lanes.append(LaneSpec(side * (len(lanes) + 1), "shoulder", shoulder))
    return lanes


def _section(
    s: float, shoulder: Width = SHOULDER, added: tuple[str, Width] | None = None
) -> LaneSectionSpec:
    """A motorway lane section: the westbound carriageway as usual, the eastbound one
    with the given right shoulder and added lane."""
    return LaneSectionSpec(
        s, (*_carriageway(+1), *_carriageway(-1, added=added, shoulder=shoulder))
    )


def _ramp_section(lane_type: str) -> LaneSectionSpec:
    """A one-lane ramp with a hard shoulder, its reference line on the left edge."""
    lanes = (LaneSpec(-1, lane_type, LANE, (EDGE,)), LaneSpec(-2, "shoulder", SHOULDER))
    return LaneSectionSpec(0.0, lanes, (EDGE,))


def _motorway(
    road_id: str, name: str, plan: PlanView, sections: list[LaneSectionSpec], speed_kmh: int = 120
) -> RoadSpec:
    return RoadSpec(road_id, plan, sections, name=name, kind="motorway", speed_kmh=speed_kmh)


def highway() -> Document:
    """A 2.3 km motorway, three lanes each way, with an on-ramp and an off-ramp.

    The mainline runs east with two gentle curves (spiral, arc, spiral; 1500 m and
    1200 m radius) and a 6 m crest, banked by 0.03 rad in the curves. It is cut into
    three roads at two direct junctions (OpenDRIVE 1.8, 10.5): at s = 300 m an on-ramp
    joins the eastbound carriageway as a 250 m acceleration lane that then closes over
    90 m (a lane drop); from s = 1800 m an exit lane opens over 80 m and leaves as the
    off-ramp at s = 2050 m. Speed limit 120 km/h on the motorway, 80 km/h on the ramps.
    """
    k1, k2 = 1.0 / 1500.0, -1.0 / 1200.0
    main = PlanView(
        Pose(0.0, 0.0, 0.0),
        (
            Line(400.0),
            Spiral(120.0, 0.0, k1),
            Arc(280.0, k1),
            Spiral(120.0, k1, 0.0),
            Line(300.0),
            Spiral(120.0, 0.0, k2),
            Arc(280.0, k2),
            Spiral(120.0, k2, 0.0),
            Line(560.0),
        ),
    )
    merge_s, diverge_s = 300.0, 2050.0

    # Before the on-ramp the hard shoulder narrows to nothing, making room for the ramp;
    # after the off-ramp it opens again.
    closing = (CubicSpec(0.0, SHOULDER), smoothstep(merge_s - 120.0, 120.0, SHOULDER, 0.0))
    opening = (smoothstep(0.0, 120.0, 0.0, SHOULDER), CubicSpec(120.0, SHOULDER))
    h1 = _motorway("1", "A1 west", main.slice(0.0, merge_s), [_section(0.0, closing)])
    h3 = _motorway("3", "A1 east", main.slice(diverge_s, main.length), [_section(0.0, opening)])

    entry_closing = (smoothstep(0.0, TAPER, LANE, 0.0),)
    exit_opening = (smoothstep(0.0, 80.0, 0.0, LANE),)
    sections = [
        _section(0.0, added=("entry", LANE)),
        _section(250.0, added=("entry", entry_closing)),
        _section(250.0 + TAPER),
        _section(1500.0, added=("exit", exit_opening)),
        _section(1580.0, added=("exit", LANE)),
    ]
    # The entry lane (-5) ends after its taper; the shoulder moves out and back in by one.
    linked = link_sections(sections, {1: {-5: None, -6: -5}, 2: {-5: -6}})
    h2 = _motorway("2", "A1 middle", main.slice(merge_s, diverge_s), linked)
    # A crest between the curves, and the carriageway banked toward the inside of each curve.
    h2.elevation = [
        CubicSpec(0.0, 0.0),
        smoothstep(500.0, 400.0, 0.0, 6.0),
        smoothstep(900.0, 400.0, 6.0, 0.0),
        CubicSpec(1300.0, 0.0),
    ]
    h2.superelevation = _banking([(100.0, 120.0, 280.0, -0.03), (920.0, 120.0, 280.0, 0.03)])

    # The ramps' reference lines run along the inner border of the lane they become.
    ramp_t = -(MEDIAN + 3 * LANE)
    on_plan = PlanView.ending_at(
        h2.plan.start.shifted(ramp_t), (Line(150.0), *turn(-0.25, 400.0, 0.5))
    )
    off_plan = PlanView(h3.plan.start.shifted(ramp_t), (*turn(-0.25, 400.0, 0.5), Line(150.0)))
    on_ramp = _motorway("4", "on-ramp", on_plan, [_ramp_section("onRamp")], speed_kmh=80)
    off_ramp = _motorway("5", "off-ramp", off_plan, [_ramp_section("offRamp")], speed_kmh=80)

    through = [(-k, -k) for k in (1, 2, 3, 4)]
    back = [(k, k) for k in (1, 2, 3, 4, 5)]
    merge = JunctionSpec("1001", "on-ramp", "direct")
    merge.link_direct(h1.end("end"), h2.end("start"), through)
    merge.link_direct(on_ramp.end("end"), h2.end("start"), [(-1, -5), (-2, -6)])
    merge.link_direct(h2.end("start"), h1.end("end"), back)
    diverge = JunctionSpec("1002", "off-ramp", "direct")
    diverge.link_direct(h2.end("end"), h3.end("start"), through)
    diverge.link_direct(h2.end("end"), off_ramp.end("start"), [(-5, -1), (-6, -2)])
    diverge.link_direct(h3.end("start"), h2.end("end"), back)

    sign_t = MEDIAN + 3 * LANE + SHOULDER + 0.75  # beside the hard shoulder
    east, west = (-4, -2), (2, 4)
    h1.signals.append(speed_limit("2001", 50.0, -sign_t, 120, orientation="+", lanes=east))
    h2.signals.append(speed_limit("2002", 420.0, -sign_t, 120, orientation="+", lanes=east))
    h2.signals.append(speed_limit("2003", 1400.0, sign_t, 120, orientation="-", lanes=west))
    h3.signals.append(speed_limit("2004", 200.0, sign_t, 120, orientation="-", lanes=west))
    off_ramp.signals.append(
        speed_limit("2005", 60.0, -(LANE + SHOULDER + 0.75), 80, orientation="+", lanes=(-1, -1))
    )
    return Document("highway", [h1, h2, h3, on_ramp, off_ramp], [merge, diverge])


def _banking(curves: Sequence[tuple[float, float, float, float]]) -> list[CubicSpec]:
    """Superelevation records: for each (start, spiral length, arc length, roll), a
    linear run-in over the entry spiral, the roll over the arc, a run-out (8.4.2)."""
    out = [CubicSpec(0.0, 0.0)]
    for s, spiral, arc, roll in curves:
        out += [
            CubicSpec(s, 0.0, roll / spiral),
            CubicSpec(s + spiral, roll),
            CubicSpec(s + spiral + arc, roll, -roll / spiral),
            CubicSpec(s + 2 * spiral + arc, 0.0),
        ]
    return out


# -- town ---------------------------------------------------------------------------------------

BLOCK = 150.0  # m between junction centres
ARM = 12.0  # m from a junction's centre to where its roads end
STREET_LANE = 3.5
SIDEWALK = 2.0
CORNER_RADIUS = 40.0

CURB = RoadMarkSpec("solid", width=0.12)
CENTER_DASH = RoadMarkSpec("broken", width=0.12)
CENTER_SOLID = RoadMarkSpec("solid", width=0.12)


def _street(road_id: str, plan: PlanView, name: str) -> RoadSpec:
    """A two-lane street with sidewalks; the center line is solid near both ends."""
    lanes = (
        LaneSpec(2, "sidewalk", SIDEWALK),
        LaneSpec(1, "driving", STREET_LANE, (CURB,)),
        LaneSpec(-1, "driving", STREET_LANE, (CURB,)),
        LaneSpec(-2, "sidewalk", SIDEWALK),
    )
    solid = 15.0
    center = (
        CENTER_SOLID,
        dataclasses.replace(CENTER_DASH, s_offset=solid),
        dataclasses.replace(CENTER_SOLID, s_offset=plan.length - solid),
    )
    return RoadSpec(
        road_id, plan, [LaneSectionSpec(0.0, lanes, center)], name=name, kind="town", speed_kmh=50
    )


def _lane_in(end: RoadEnd) -> int:
    """The lane that drives toward ``end`` (right-hand traffic)."""
    return -1 if end.contact == "end" else 1


def _lane_out(end: RoadEnd) -> int:
    """The lane that drives away from ``end``."""
    return -1 if end.contact == "start" else 1


def town() -> Document:
    """A town of four blocks: a 300 m x 300 m grid of two-lane streets with sidewalks.

    Four straight streets meet at a signalised crossroads in the middle (traffic lights
    on every approach, switched north-south then east-west by two controllers); their
    far ends meet the ring of four corner streets at T junctions, where the side street
    stops (north, south) or yields (east, west). Every junction connects every arm to
    every other (straight, left and right; no U-turns) with spiral-arc-spiral turns,
    so traffic can circulate forever. Speed limit 50 km/h.
    """
    half = math.pi / 2
    inner = BLOCK - 2 * ARM
    spokes = [
        _street("1", PlanView(Pose(0.0, ARM, half), (Line(inner),)), "North Street"),
        _street("2", PlanView(Pose(ARM, 0.0, 0.0), (Line(inner),)), "East Street"),
        _street("3", PlanView(Pose(0.0, -ARM, -half), (Line(inner),)), "South Street"),
        _street("4", PlanView(Pose(-ARM, 0.0, math.pi), (Line(inner),)), "West Street"),
    ]
    corner_ends = [  # clockwise around the ring
        (Pose(ARM, BLOCK, 0.0), Pose(BLOCK, ARM, -half), "Ring North-East"),
        (Pose(BLOCK, -ARM, -half), Pose(ARM, -BLOCK, math.pi), "Ring South-East"),
        (Pose(-ARM, -BLOCK, math.pi), Pose(-BLOCK, -ARM, half), "Ring South-West"),
        (Pose(-BLOCK, ARM, half), Pose(-ARM, BLOCK, 0.0), "Ring North-West"),
    ]
    corners = [
        _street(
            str(5 + i), PlanView(a, connect(a, b, radius=CORNER_RADIUS, spiral_fraction=0.5)), name
        )
        for i, (a, b, name) in enumerate(corner_ends)
    ]
    n, e, s, w = spokes
    ne, se, sw, nw = corners
    arms = {
        "1001": (
            "Central Crossroads",
            [n.end("start"), e.end("start"), s.end("start"), w.end("start")],
        ),
        "1002": ("North T", [n.end("end"), ne.end("start"), nw.end("end")]),
        "1003": ("East T", [e.end("end"), se.end("start"), ne.end("end")]),
        "1004": ("South T", [s.end("end"), sw.end("start"), se.end("end")]),
        "1005": ("West T", [w.end("end"), nw.end("start"), sw.end("end")]),
    }
    junctions: list[JunctionSpec] = []
    connecting: list[RoadSpec] = []
    for jid, (name, ends) in arms.items():
        junction = JunctionSpec(jid, name)
        for a in ends:
            for b in ends:
                if a is not b:
                    connecting.append(
                        junction.connect(
                            str(100 + len(connecting)),
                            a,
                            b,
                            [(_lane_in(a), _lane_out(b))],
                            spiral_fraction=0.5,
                            kind="town",
                            speed_kmh=50,
                            name=f"{a.road.name} to {b.road.name}",
                        )
                    )
        junctions.append(junction)

    # Traffic lights 2 m before the crossroads; approaching traffic drives lane 1 toward s=0.
    light_t = STREET_LANE + SIDEWALK / 2
    for k, road in enumerate(spokes):
        road.signals.append(
            traffic_light(
                str(2001 + k),
                2.0,
                light_t,
                orientation="-",
                lanes=(1, 1),
                name=f"{road.name} light",
            )
        )
    controllers = [
        ControllerSpec("3001", "north-south", ("2001", "2003"), 1),
        ControllerSpec("3002", "east-west", ("2002", "2004"), 2),
    ]
    junctions[0].controllers = [("3001", 1), ("3002", 2)]
    # The spokes end at the T junctions as side streets: stop at north and south, yield
    # at east and west.
    for k, (road, make) in enumerate(
        zip(spokes, (stop_sign, yield_sign, stop_sign, yield_sign), strict=True)
    ):
        road.signals.append(
            make(str(2005 + k), road.length - 2.0, -light_t, orientation="+", lanes=(-1, -1))
        )
    for k, road in enumerate(corners):
        road.signals.append(
            speed_limit(str(2009 + 2 * k), 20.0, -light_t, 50, orientation="+", lanes=(-1, -1))
        )
        road.signals.append(
            speed_limit(
                str(2010 + 2 * k), road.length - 20.0, light_t, 50, orientation="-", lanes=(1, 1)
            )
        )
    return Document("town", [*spokes, *corners, *connecting], junctions, controllers)


# -- ring ---------------------------------------------------------------------------------------

RING_RADIUS = 80.0  # m, of the reference line (the carriageway's inner edge)


def ring() -> Document:
    """A one-way ring road: two lanes driven counter-clockwise around a circle.

    Traffic on it never leaves, which suits studies of traffic flow (stop-and-go waves
    on a ring, as in Sugiyama et al. 2008). The circle (80 m radius at the inner edge,
    a 514 m lap in the inner lane) is two half-circle roads linked to each other end to
    start, without junctions. Speed limit 50 km/h.
    """
    r = RING_RADIUS
    lanes = (
        LaneSpec(1, "shoulder", 1.0),
        LaneSpec(-1, "driving", STREET_LANE, (CENTER_DASH,)),
        LaneSpec(-2, "driving", STREET_LANE, (CURB,)),
        LaneSpec(-3, "shoulder", 2.0),
    )
    halves = [
        RoadSpec(
            road_id,
            PlanView(start, (Arc(math.pi * r, 1.0 / r),)),
            [LaneSectionSpec(0.0, lanes, (CURB,))],
            name=name,
            kind="town",
            speed_kmh=50,
        )
        for road_id, start, name in (
            ("1", Pose(0.0, -r, 0.0), "Ring East"),
            ("2", Pose(0.0, r, math.pi), "Ring West"),
        )
    ]
    east, west = halves
    through = [(lane.id, lane.id) for lane in lanes]
    link_roads(east.end("end"), west.end("start"), through)
    link_roads(west.end("end"), east.end("start"), through)
    t_sign = -(2 * STREET_LANE + 2.0 + 0.5)
    for road, sid in ((east, "2001"), (west, "2002")):
        road.signals.append(speed_limit(sid, 20.0, t_sign, 50, orientation="+", lanes=(-2, -1)))
    return Document("ring", halves)


# -- regeneration -------------------------------------------------------------------------------

MAPS: dict[str, Callable[[], Document]] = {"highway": highway, "ring": ring, "town": town}

MAPS_DIR = Path(__file__).resolve().parent / "maps"


def build(name: str) -> bytes:
    """The XML of built-in map ``name``, as shipped in ``roadsim/road/maps``."""
    return MAPS[name]().to_xml()


def main(argv: Sequence[str] | None = None) -> int:
    """Writes every built-in map (or those named) into the package's maps folder."""
    names = list(argv if argv is not None else sys.argv[1:]) or sorted(MAPS)
    for name in names:
        path = MAPS_DIR / f"{name}.xodr"
        path.write_bytes(build(name))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
