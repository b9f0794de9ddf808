"""The OpenDRIVE builder: its own geometry, and documents that our parser reads back."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from roadsim.road.builder import (
    Arc,
    ControllerSpec,
    CubicSpec,
    Document,
    JunctionSpec,
    LaneSectionSpec,
    LaneSpec,
    Line,
    Link,
    PlanView,
    Pose,
    RoadMarkSpec,
    RoadSpec,
    Segment,
    Spiral,
    connect,
    link_roads,
    link_sections,
    smoothstep,
    speed_limit,
    stop_sign,
    traffic_light,
    turn,
)
from roadsim.road.network import RoadNetwork
from roadsim.road.xodr import read_xodr

TWO_LANES = (LaneSpec(1, marks=(RoadMarkSpec(),)), LaneSpec(-1, marks=(RoadMarkSpec(),)))


def street(road_id: str, plan: PlanView) -> RoadSpec:
    return RoadSpec(road_id, plan, [LaneSectionSpec(0.0, TWO_LANES, (RoadMarkSpec("broken"),))])


def load(doc: Document) -> RoadNetwork:
    return RoadNetwork(read_xodr(doc.to_xml(), path=f"{doc.name}.xodr"))


def sample_plan(plan: PlanView, n: int = 97) -> tuple[np.ndarray, np.ndarray]:
    s = np.linspace(0.0, plan.length, n)
    poses = [plan.pose_at(float(v)) for v in s]
    return s, np.array([(p.x, p.y, p.hdg) for p in poses])


def angle_error(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(np.remainder(a - b + np.pi, 2 * np.pi) - np.pi)


# -- geometry of the plan view ------------------------------------------------------------------


def test_arc_and_line_end_where_geometry_says() -> None:
    plan = PlanView(Pose(1.0, 2.0, 0.5), (Line(10.0), Arc(math.pi * 20.0 / 2, 1 / 20.0)))
    end = plan.end
    # A quarter circle of radius 20 turning left after 10 m of line.
    corner = Pose(1.0, 2.0, 0.5).advanced(10.0)
    center = corner.shifted(20.0)
    assert end.x == pytest.approx(center.x + 20.0 * math.cos(0.5), abs=1e-9)
    assert end.y == pytest.approx(center.y + 20.0 * math.sin(0.5), abs=1e-9)
    assert end.hdg == pytest.approx(0.5 + math.pi / 2, abs=1e-12)


def test_spiral_matches_a_fine_numeric_integration() -> None:
    seg = Spiral(80.0, 0.01, -0.03)
    end = PlanView(Pose(0.0, 0.0, 0.0), (seg,)).end
    u = np.linspace(0.0, 80.0, 200_001)
    hdg = 0.01 * u + 0.5 * (-0.04 / 80.0) * u * u
    x = np.trapezoid(np.cos(hdg), u)
    y = np.trapezoid(np.sin(hdg), u)
    assert (end.x, end.y) == pytest.approx((x, y), abs=1e-7)
    assert end.hdg == pytest.approx(0.01 * 80 - 0.02 * 80, abs=1e-12)


@pytest.mark.parametrize(
    "segments",
    [
        (Line(120.0),),
        (Arc(90.0, -1 / 60.0),),
        (Spiral(70.0, 0.0, 1 / 40.0),),
        (Spiral(70.0, 1 / 50.0, -1 / 80.0),),
        (Line(30.0), *turn(1.2, 50.0, 0.4), Line(20.0), Spiral(40.0, 0.0, -0.01)),
    ],
    ids=["line", "arc", "spiral", "spiral-through-zero", "mixed"],
)
def test_geometry_round_trips_through_the_parser(segments: tuple[Segment, ...]) -> None:
    plan = PlanView(Pose(-35.0, 812.5, 2.9), segments)
    net = load(Document("geo", [street("7", plan)]))
    s, want = sample_plan(plan)
    x, y, hdg, curv = net.reference.evaluate(np.zeros(len(s), dtype=np.int64), s)
    assert np.max(np.hypot(x - want[:, 0], y - want[:, 1])) < 1e-6
    assert np.max(angle_error(hdg, want[:, 2])) < 1e-9
    assert curv == pytest.approx([plan.curvature_at(float(v)) for v in s], abs=1e-9)
    assert net.road_length[0] == pytest.approx(plan.length, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(cut0=st.floats(0.0, 1.0), cut1=st.floats(0.0, 1.0))
def test_slices_follow_the_original_plan(cut0: float, cut1: float) -> None:
    plan = PlanView(
        Pose(3.0, -4.0, 1.0),
        (Line(50.0), Spiral(60.0, 0.0, 0.02), Arc(40.0, 0.02), Spiral(60.0, 0.02, 0.0)),
    )
    s0, s1 = sorted((cut0 * plan.length, cut1 * plan.length))
    if s1 - s0 < 1e-3:
        return
    part = plan.slice(s0, s1)
    assert part.length == pytest.approx(s1 - s0, abs=1e-9)
    for u in np.linspace(0.0, s1 - s0, 11):
        a, b = part.pose_at(float(u)), plan.pose_at(s0 + float(u))
        assert math.hypot(a.x - b.x, a.y - b.y) < 1e-9
        assert abs(math.remainder(a.hdg - b.hdg, 2 * math.pi)) < 1e-10


def test_turn_has_continuous_curvature_and_the_asked_radius() -> None:
    segs = turn(-math.pi / 2, 25.0, 0.5)
    assert [type(s) for s in segs] == [Spiral, Arc, Spiral]
    plan = PlanView(Pose(0.0, 0.0, 0.0), segs)
    assert plan.end.hdg == pytest.approx(-math.pi / 2, abs=1e-12)
    assert min(plan.curvature_at(s) for s in np.linspace(0, plan.length, 50)) == pytest.approx(
        -1 / 25
    )
    for s in plan.starts[1:]:
        assert plan.curvature_at(s - 1e-9) == pytest.approx(plan.curvature_at(s + 1e-9), abs=1e-9)


poses = st.builds(Pose, st.floats(-500, 500), st.floats(-500, 500), st.floats(-math.pi, math.pi))


@settings(max_examples=60, deadline=None)
@given(
    start=poses,
    turn_angle=st.floats(-2.8, 2.8),
    d0=st.floats(1.0, 200.0),
    d1=st.floats(1.0, 200.0),
    fraction=st.sampled_from([0.0, 0.3, 1.0]),
)
@example(start=Pose(0.0, 0.0, 0.0), turn_angle=1e-09, d0=1.0, d1=1.0, fraction=0.0)
@example(start=Pose(0.0, 0.0, 0.5), turn_angle=1e-09, d0=1.0, d1=101.0, fraction=0.0)
@example(start=Pose(0.0, 0.0, 0.0), turn_angle=-2e-09, d0=1.0, d1=101.0, fraction=1.0)
def test_connect_reaches_the_end_pose(
    start: Pose, turn_angle: float, d0: float, d1: float, fraction: float
) -> None:
    corner = start.advanced(d0)
    end = Pose(corner.x, corner.y, start.hdg + turn_angle).advanced(d1)
    segs = connect(start, end, spiral_fraction=fraction)
    reached = PlanView(start, segs).end
    assert math.hypot(reached.x - end.x, reached.y - end.y) < 1e-6
    assert abs(math.remainder(reached.hdg - end.hdg, 2 * math.pi)) < 1e-9
    assert all(seg.length > 0 for seg in segs)


def test_connect_is_a_line_when_aligned_and_refuses_impossible_turns() -> None:
    a = Pose(0.0, 0.0, 0.3)
    (line,) = connect(a, a.advanced(42.0))
    assert isinstance(line, Line) and line.length == pytest.approx(42.0)
    with pytest.raises(ValueError, match="not on one line"):
        connect(a, a.advanced(42.0).shifted(1.0))
    with pytest.raises(ValueError, match="behind"):
        connect(a, Pose(-10.0, 5.0, 2.0))
    with pytest.raises(ValueError, match="does not fit"):
        connect(Pose(0, 0, 0), Pose(10.0, 10.0, math.pi / 2), radius=50.0)


def test_plan_ending_at_a_pose() -> None:
    end = Pose(100.0, -20.0, 0.7)
    plan = PlanView.ending_at(end, (Line(30.0), *turn(-0.4, 200.0, 0.5)))
    assert math.hypot(plan.end.x - end.x, plan.end.y - end.y) < 1e-9
    assert plan.end.hdg == pytest.approx(end.hdg, abs=1e-12)
    assert plan.start.hdg == pytest.approx(1.1, abs=1e-12)


# -- lanes, links, signals and the document -------------------------------------------------------


def test_lanes_sections_and_elevation_round_trip() -> None:
    sections = link_sections(
        [
            LaneSectionSpec(
                0.0,
                (
                    LaneSpec(1, "driving", 3.5),
                    LaneSpec(-1, "driving", 3.5),
                    LaneSpec(-2, "shoulder", 2.0),
                ),
            ),
            LaneSectionSpec(
                40.0,
                (
                    LaneSpec(1, "driving", 3.5),
                    LaneSpec(-1, "driving", 3.5),
                    LaneSpec(
                        -2,
                        "exit",
                        (smoothstep(0.0, 30.0, 0.0, 3.5), CubicSpec(30.0, 3.5)),
                        (RoadMarkSpec("solid", width=0.25, weight="bold"),),
                    ),
                    LaneSpec(-3, "shoulder", 2.0),
                ),
            ),
        ],
        {0: {-2: -3}},
    )
    road = street("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(100.0),)))
    road.sections = sections
    road.elevation = [CubicSpec(0.0, 1.0, 0.02), smoothstep(50.0, 50.0, 2.0, 5.0)]
    road.superelevation = [CubicSpec(0.0, 0.0, 0.001)]
    road.kind, road.speed_kmh = "rural", 80
    net = load(Document("lanes", [road]))
    parsed = net.roads[0]
    assert [sec.s for sec in parsed.sections] == [0.0, 40.0]
    first, second = parsed.sections
    assert [lane.id for lane in second.lanes] == [1, 0, -1, -2, -3]
    assert first.lane(-2).successors == (-3,)
    assert second.lane(-3).predecessors == (-2,)
    assert second.lane(-2).predecessors == ()
    assert second.lane(-2).type == "exit"
    assert second.lane(-2).road_marks[0].weight == "bold"
    assert parsed.speed_limits == ((0.0, pytest.approx(80 / 3.6)),)
    assert net.lane_width("1", -2, [40.0, 55.0, 70.0, 90.0]) == pytest.approx([0.0, 1.75, 3.5, 3.5])
    assert net.lane_t_outer("1", -3, 99.0) == pytest.approx(-9.0)
    _, _, z = net.to_world("1", [0.0, 50.0, 100.0], 0.0)
    assert z == pytest.approx([1.0, 2.0, 5.0])
    assert road.lane_t_center(-2, 99.0) == pytest.approx(-5.25)


def crossing() -> tuple[Document, list[RoadSpec]]:
    """Two streets meeting at a junction, with a right turn and a straight connection."""
    west = street("1", PlanView(Pose(-60.0, 0.0, 0.0), (Line(50.0),)))
    south = street("2", PlanView(Pose(0.0, -10.0, -math.pi / 2), (Line(50.0),)))
    east = street("3", PlanView(Pose(10.0, 0.0, 0.0), (Line(50.0),)))
    j = JunctionSpec("9", "crossing")
    right = j.connect("10", west.end("end"), south.end("start"), [(-1, -1)], spiral_fraction=0.5)
    straight = j.connect("11", west.end("end"), east.end("start"), [(-1, -1)])
    back = j.connect("12", east.end("start"), west.end("end"), [(1, 1)])
    west.signals.append(traffic_light("100", 48.0, -4.0, orientation="+", lanes=(-1, -1)))
    east.signals.append(traffic_light("101", 2.0, 4.0, orientation="-", lanes=(1, 1)))
    south.signals.append(speed_limit("102", 10.0, -4.0, 50, orientation="+", lanes=(-1, -1)))
    south.signals.append(stop_sign("103", 40.0, 4.0, orientation="-", lanes=(1, 1)))
    j.controllers.append(("200", 1))
    doc = Document(
        "crossing",
        [west, south, east, right, straight, back],
        [j],
        [ControllerSpec("200", "all", ("100", "101"), 1)],
    )
    return doc, [right, straight, back]


def test_junction_connections_signals_and_controllers_round_trip() -> None:
    doc, _ = crossing()
    net = load(doc)
    (j,) = net.junctions
    assert (j.id, j.type, j.controllers) == ("9", "default", ("200",))
    assert [(c.incoming_road, c.connecting_road, c.contact_point) for c in j.connections] == [
        ("1", "10", "start"),
        ("1", "11", "start"),
        ("3", "12", "start"),
    ]
    assert [(ll.from_lane, ll.to_lane) for ll in j.connections[2].lane_links] == [(1, -1)]
    right = net.roads[net.road_ids.index("10")]
    assert right.junction == "9"
    assert right.predecessor is not None and right.successor is not None
    assert (right.predecessor.element_id, right.predecessor.contact_point) == ("1", "end")
    assert (right.successor.element_id, right.successor.contact_point) == ("2", "start")
    assert right.sections[0].lane(-1).predecessors == (-1,)
    west = net.roads[0]
    assert west.successor is not None and west.successor.element_type == "junction"
    (ctl,) = net.controllers
    assert ctl.signal_ids == ("100", "101") and ctl.sequence == 1
    sigs = {s.id: s for s in net.signals}
    assert sigs["100"].dynamic and sigs["100"].type == "1000001"
    assert sigs["102"].value == 50 and sigs["102"].unit == "km/h" and sigs["102"].subtype == "55"
    assert sigs["103"].orientation == "-" and [
        (v.from_lane, v.to_lane) for v in sigs["103"].validities
    ] == [(1, 1)]


def lane_center(net: RoadNetwork, road_id: str, lane_id: int, s: float) -> np.ndarray:
    uid = np.atleast_1d(net.lane_uid(road_id, lane_id, s))
    t = net.uid_t_center(uid, np.atleast_1d(s))
    x, y, _ = net.to_world(road_id, s, t[0])
    return np.array([x, y])


def test_connecting_lanes_meet_their_roads() -> None:
    doc, connecting = crossing()
    net = load(doc)
    for road in connecting:
        lane = road.sections[0].lanes[0]
        for s, link, lane_id in (
            (0.0, road.predecessor, lane.predecessor),
            (road.length, road.successor, lane.successor),
        ):
            assert link is not None and lane_id is not None
            other = next(r for r in doc.roads if r.id == link.element_id)
            s_other = 0.0 if link.contact_point == "start" else other.length
            gap = lane_center(net, road.id, lane.id, s) - lane_center(
                net, other.id, lane_id, s_other
            )
            assert np.hypot(*gap) < 1e-6


def test_junction_connect_refuses_lanes_that_do_not_line_up() -> None:
    west = street("1", PlanView(Pose(-60.0, 0.0, 0.0), (Line(50.0),)))
    east = street("3", PlanView(Pose(10.0, 0.0, 0.0), (Line(50.0),)))
    with pytest.raises(ValueError, match="do not meet"):
        JunctionSpec("9").connect("11", west.end("end"), east.end("start"), [(1, -1)])
    with pytest.raises(ValueError, match="need a default junction"):
        JunctionSpec("9", type="direct").connect(
            "11", west.end("end"), east.end("start"), [(-1, -1)]
        )


def test_direct_junction_links_lanes_of_roads_that_meet() -> None:
    main = RoadSpec(
        "1",
        PlanView(Pose(0, 0, 0), (Line(100.0),)),
        [LaneSectionSpec(0.0, (LaneSpec(-1), LaneSpec(-2, "exit")))],
    )
    after = RoadSpec(
        "2", PlanView(main.plan.end, (Line(100.0),)), [LaneSectionSpec(0.0, (LaneSpec(-1),))]
    )
    ramp = RoadSpec(
        "3",
        PlanView(main.plan.end.shifted(-3.5), turn(-0.3, 200.0)),
        [LaneSectionSpec(0.0, (LaneSpec(-1, "offRamp"),))],
    )
    j = JunctionSpec("5", "exit", "direct")
    j.link_direct(main.end("end"), after.end("start"), [(-1, -1)])
    j.link_direct(main.end("end"), ramp.end("start"), [(-2, -1)])
    with pytest.raises(ValueError, match="do not meet"):
        j.link_direct(main.end("end"), ramp.end("start"), [(-1, -1)])
    net = load(Document("direct", [main, after, ramp], [j]))
    (junction,) = net.junctions
    assert junction.type == "direct"
    assert [(c.incoming_road, c.connecting_road) for c in junction.connections] == [
        ("1", "2"),
        ("1", "3"),
    ]
    assert b'linkedRoad="3"' in Document("direct", [main, after, ramp], [j]).to_xml()
    assert [
        net.road_ids[net.lanes.road[v]] for v in net.successors(int(net.lane_uid("1", -2, 50.0)))
    ] == ["3"]


def test_link_roads_sets_road_and_lane_links() -> None:
    a = street("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(10.0),)))
    b = street("2", PlanView(Pose(10.0, 0.0, 0.0), (Arc(10.0, 0.05),)))
    link_roads(a.end("end"), b.end("start"), [(1, 1), (-1, -1)])
    assert a.successor == Link("road", "2", "start")
    assert b.predecessor == Link("road", "1", "end")
    assert a.sections[0].lane(-1).successor == -1 and b.sections[0].lane(1).predecessor == 1
    net = load(Document("linked", [a, b]))

    def next_lane(road: str, lane: int) -> list[tuple[str, int]]:
        uid = int(net.lane_uid(road, lane, 5.0)[()])
        return [
            (net.road_ids[net.lanes.road[v]], int(net.lanes.lane_id[v]))
            for v in net.successors(uid)
        ]

    assert next_lane("1", -1) == [("2", -1)]
    assert next_lane("2", 1) == [("1", 1)]
    with pytest.raises(ValueError, match="do not meet"):
        link_roads(a.end("end"), b.end("start"), [(1, -1)])


def test_output_is_deterministic_and_checked() -> None:
    doc, _ = crossing()
    xml = doc.to_xml()
    assert xml == crossing()[0].to_xml()
    assert xml.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<OpenDRIVE>')
    assert b'date="2025-01-01T00:00:00"' in xml
    assert b'"-0"' not in xml
    header = read_xodr(xml).header
    assert (header.west, header.south, header.east, header.north) == (-60.0, -60.0, 60.0, 3.5)
    doc.roads.append(street("1", PlanView(Pose(0, 0, 0), (Line(1.0),))))
    with pytest.raises(ValueError, match="duplicate road id '1'"):
        doc.to_xml()
    doc.roads.pop()
    doc.roads[0].successor = Link("junction", "nope")
    with pytest.raises(ValueError, match="missing junction 'nope'"):
        doc.to_xml()
