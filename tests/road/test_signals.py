"""Signals: world positions against the reference, validity, and the signals ahead."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import roadsim
from roadsim.errors import MapWarning
from roadsim.road.model import Signal
from roadsim.road.network import RoadNetwork
from roadsim.road.signals import SignalAhead, resolve_signal_references
from roadsim.road.xodr import read_xodr
from tests.conftest import CORPUS_MAPS, corpus_name
from tests.road.reference import read_reference


def corpus(stem: str) -> RoadNetwork:
    path = next(p for p in CORPUS_MAPS if p.stem == stem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MapWarning)
        return roadsim.load_map(path)


def uid(net: RoadNetwork, road: str, lane: int, s: float) -> int:
    return int(net.lane_uid(road, lane, s))


def names(found: list[SignalAhead]) -> list[tuple[str, float]]:
    return [(a.signal.name, round(a.distance, 6)) for a in found]


# -- the reference: positions and validities ------------------------------------------------------

SIGNAL_MAPS = [p for p in CORPUS_MAPS if read_reference(corpus_name(p), "signals")]


@pytest.mark.parametrize("path", SIGNAL_MAPS, ids=[corpus_name(p) for p in SIGNAL_MAPS])
def test_signals_match_the_reference(path: Path) -> None:
    """Every reference signal is ours, at the same world point and with the same validity.

    The reference's x, y, z is the road surface point at (s, t) -- elevation and
    superelevation applied, zOffset *not* added (straight_500m_signs: zOffset 1.7, z 0;
    positive18: z is the road elevation) -- so it is compared with ``to_world(s, t)``.
    It holds no signalReferences, and it keys signals by (road, id): where a road repeats
    an id, the first keeps it and the second becomes ``<id>_dup`` (with the *first*
    one's validity: multi_intersections road 202, whose second signal "0" has validity
    0:4, is listed with none), and any further repeats are lost (multi_intersections:
    road 202 has six signals "0", road 242 four, so the reference has 121 of 127).
    """
    net = corpus(path.stem)
    ref = read_reference(corpus_name(path), "signals")
    ours = [sig for sig in net.signals if sig.reference_of is None]
    x, y, z = net.to_world(
        [sig.road_id for sig in ours], [sig.s for sig in ours], [sig.t for sig in ours]
    )
    world = np.stack((x, y, z), axis=1)

    def validity(sig: Signal) -> str:
        return ";".join(f"{v.from_lane}:{v.to_lane}" for v in sig.validities)

    by_key: dict[tuple[str, str], list[int]] = {}
    for i, sig in enumerate(ours):
        by_key.setdefault((sig.road_id, sig.id), []).append(i)
    matched = set()
    for k in range(len(ref["road_id"])):
        road, sid = str(ref["road_id"][k]), str(ref["signal_id"][k])
        dup = sid.endswith("_dup")
        group = by_key[(road, sid.removesuffix("_dup"))]
        point = np.array([ref["x"][k], ref["y"][k], ref["z"][k]])
        hits = [i for i in group if np.linalg.norm(world[i] - point) < 1e-3]
        assert hits, (road, sid)
        if dup:
            i = next(i for i in hits if i != group[0])
            assert ref["validity"][k] == validity(ours[group[0]]), (road, sid)
        else:
            i = next((i for i in hits if validity(ours[i]) == ref["validity"][k]), -1)
            assert i >= 0, (road, sid, ref["validity"][k])
        assert ours[i].orientation == ref["orientation"][k]
        assert ours[i].s == pytest.approx(ref["s"][k], abs=1e-6)
        assert ours[i].z_offset == pytest.approx(ref["zOffset"][k], abs=1e-6)
        matched.add(i)
    unique = {g[0] for g in by_key.values() if len(g) == 1}
    assert unique <= matched
    assert len(matched) == len(ref["road_id"])


# -- hand-made maps -------------------------------------------------------------------------------


def _road(
    rid: str,
    length: float,
    x0: float,
    junction: str,
    link: str,
    signals: str = "",
    lane_link: str = "",
    rule: str = "RHT",
) -> str:
    return f"""
<road id="{rid}" length="{length}" junction="{junction}" rule="{rule}">
  <link>{link}</link>
  <planView><geometry s="0" x="{x0}" y="0" hdg="0" length="{length}"><line/></geometry></planView>
  <lanes><laneSection s="0">
    <left><lane id="1" type="driving"><link>{lane_link.replace("-1", "1")}</link>
      <width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></left>
    <center><lane id="0" type="none"/></center>
    <right><lane id="-1" type="driving"><link>{lane_link}</link>
      <width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right>
  </laneSection></lanes>
  <signals>{signals}</signals>
</road>"""


def _signal(sid: str, s: float, orientation: str, validity: str = "", t: float = -5.0) -> str:
    return (
        f'<signal id="{sid}" name="{sid}" s="{s}" t="{t}" zOffset="2" '
        f'orientation="{orientation}" dynamic="no" country="DE" type="274" subtype="53" '
        f'value="30" unit="km/h">{validity}</signal>'
    )


def fork_map(rule: str = "RHT") -> RoadNetwork:
    """Road A (100 m) into a junction with two connecting roads, C1 (10 m) and C2 (20 m),
    both on to road B (100 m). Signals: A at 80 (+) and 60 (-), C1 at 2, C2 at 5, B at 30."""
    to_j = '<successor elementType="junction" elementId="J"/>'
    conn = (
        '<predecessor elementType="road" elementId="A" contactPoint="end"/>'
        '<successor elementType="road" elementId="B" contactPoint="start"/>'
    )
    lanes = '<predecessor id="-1"/><successor id="-1"/>'
    xml = f"""<?xml version="1.0"?>
<OpenDRIVE><header revMajor="1" revMinor="8"/>
{
        _road(
            "A",
            100,
            0,
            "-1",
            to_j,
            _signal("a80", 80, "+") + _signal("a60", 60, "-", t=5.0),
            rule=rule,
        )
    }
{_road("C1", 10, 100, "J", conn, _signal("c1", 2, "+"), lanes, rule=rule)}
{_road("C2", 20, 100, "J", conn, _signal("c2", 5, "+"), lanes, rule=rule)}
{
        _road(
            "B",
            100,
            110,
            "-1",
            '<predecessor elementType="junction" elementId="J"/>',
            _signal("b30", 30, "+")
            + _signal("b40", 40, "none", '<validity fromLane="1" toLane="1"/>'),
            rule=rule,
        )
    }
<junction id="J" name="J">
  <connection id="0" incomingRoad="A" connectingRoad="C1" contactPoint="start">
    <laneLink from="-1" to="-1"/></connection>
  <connection id="1" incomingRoad="A" connectingRoad="C2" contactPoint="start">
    <laneLink from="-1" to="-1"/></connection>
</junction>
</OpenDRIVE>"""
    return RoadNetwork(read_xodr(xml.encode(), path="fork.xodr"))


def test_signals_ahead_explore_every_branch_and_keep_the_nearest() -> None:
    net = fork_map()
    a = uid(net, "A", -1, 50.0)
    found = net.signals_ahead(a, 50.0, 500.0)
    # a60 is for traffic against s; b40 only for lane 1. b30 is reached by both branches:
    # once, at its smaller distance (through the 10 m road C1).
    assert names(found) == [("a80", 30.0), ("c1", 52.0), ("c2", 55.0), ("b30", 90.0)]
    b30 = found[-1]
    assert b30.road_id == "B" and b30.lane == uid(net, "B", -1, 1.0)
    assert b30.signal.value == 30.0 and b30.signal.type == "274"
    # The horizon is inclusive, and cuts the rest.
    assert names(net.signals_ahead(a, 50.0, 52.0)) == [("a80", 30.0), ("c1", 52.0)]
    assert net.signals_ahead(a, 50.0, 29.0) == []


def test_signals_ahead_follow_a_route() -> None:
    net = fork_map()
    a, c2, b = uid(net, "A", -1, 50.0), uid(net, "C2", -1, 1.0), uid(net, "B", -1, 1.0)
    found = net.signals_ahead(a, 50.0, 500.0, route=[a, c2, b])
    assert names(found) == [("a80", 30.0), ("c2", 55.0), ("b30", 100.0)]
    # A route starting on the next lane works the same.
    assert names(net.signals_ahead(a, 50.0, 500.0, route=[c2, b])) == names(found)


def test_signals_behind_and_against_the_direction_are_not_ahead() -> None:
    net = fork_map()
    assert names(net.signals_ahead(uid(net, "A", -1, 85.0), 85.0, 19.0)) == [("c1", 17.0)]
    # Lane 1 is driven against s: it sees a60 (orientation -) 40 m ahead of s=100, and
    # nothing before it in the road (no predecessor: A starts nowhere).
    assert names(net.signals_ahead(uid(net, "A", 1, 100.0), 100.0, 500.0)) == [("a60", 40.0)]
    # On road B lane 1 (against s, from s=100 down to 0) b40 applies (validity 1:1), then
    # the connecting roads' lanes 1 lead back onto A's lane 1 (shortest: C1, 10 m).
    assert names(net.signals_ahead(uid(net, "B", 1, 100.0), 100.0, 500.0)) == [
        ("b40", 60.0),
        ("a60", 150.0),
    ]


def test_orientation_follows_left_hand_traffic() -> None:
    net = fork_map(rule="LHT")
    # In LHT lane 1 is driven along +s, so "+" signals apply to it, and "-" to lane -1.
    lane1 = uid(net, "A", 1, 50.0)
    assert names(net.signals_ahead(lane1, 50.0, 40.0)) == [("a80", 30.0)]
    assert names(net.signals_ahead(uid(net, "A", -1, 70.0), 70.0, 100.0)) == [("a60", 10.0)]


def test_signals_on_a_straight_road_by_validity_orientation_and_order() -> None:
    net = corpus("straight_500m_signs")
    # Right lanes are driven along +s: "+" signals, nearest first, ties in file order.
    found = net.signals_ahead(uid(net, "1", -1, 90.0), 90.0, 200.0)
    assert names(found) == [
        ("speed_30_0", 10.0),
        ("speed_30_1", 10.0),
        ("overtaking_ban_begin", 30.0),
        ("overtaking_ban_end", 70.0),
        ("speed_50_4", 110.0),
        ("speed_50_5", 110.0),
    ]
    # Left lanes are driven against s. speed_30_3 (validity -3:-2;1:2;3:3) holds for lane 1
    # and lane 2 alike; every "-" signal without validity too.
    left = names(net.signals_ahead(uid(net, "1", 1, 250.0), 250.0, 500.0))
    assert left == [
        ("speed_lowest_50", 20.0),
        ("speed_30_2", 50.0),
        ("speed_30_3", 50.0),
        ("speed_50_2", 150.0),
        ("speed_50_3", 150.0),
    ]
    # The first signal (validity -3:-1;1:3) applies to lane -3 too; at s=0, distance 0.
    assert names(net.signals_ahead(uid(net, "1", -3, 0.0), 0.0, 0.0)) == [
        ("speed_50_0_0", 0.0),
        ("speed_50_1", 0.0),
    ]


def test_signals_ahead_cross_a_junction_into_the_next_road() -> None:
    net = corpus("multi_intersections")
    # Road 202, lane 1 is driven against s towards the junction at s=0, then connecting
    # road 201 leads into road 196 lane -1, where a crosswalk stands at s=0.
    start = uid(net, "202", 1, 50.0)
    (nxt,) = net.successors(start)
    found = net.signals_ahead(start, 50.0, 200.0)
    crosswalk = found[-1]
    assert crosswalk.road_id == "196" and crosswalk.signal.name == "SgRMCrosswalk-2Lanes-4m.flt"
    length_201 = float(net.road_length[net.lanes.road[nxt]])
    assert crosswalk.distance == pytest.approx(50.0 + length_201)
    # The traffic lights at the stop line (validity 0:0, read as the whole road) come first.
    lights = {a.signal.name: a.distance for a in found if a.signal.dynamic}
    assert lights == {"_Sg302": 50.0, "_Sg294": 50.0, "_Sg295": 50.0, "_Sg303": 50.0}
    assert [a.distance for a in found] == sorted(a.distance for a in found)


def test_a_route_picks_the_branch_at_a_junction() -> None:
    net = corpus("multi_intersections")
    start = uid(net, "196", 1, 5.0)
    branches = net.successors(start)
    assert len(branches) == 3
    every = {(a.road_id, a.signal.name) for a in net.signals_ahead(start, 5.0, 80.0)}
    union = set()
    for branch in branches:
        on_route = {
            (a.road_id, a.signal.name)
            for a in net.signals_ahead(start, 5.0, 80.0, route=[start, branch])
        }
        assert on_route < every
        union |= on_route
    assert union == every


def test_signal_references_take_the_referenced_signal_at_their_own_place() -> None:
    net = corpus("positive18")
    refs = [sig for sig in net.signals if sig.reference_of is not None]
    assert len(refs) == 14
    resolved = resolve_signal_references(net.signals)
    assert len(resolved) == len(net.signals)
    ref = next(r for r in resolved if r.road_id == "24" and r.reference_of == "325")
    target = next(sig for sig in net.signals if sig.id == "325" and sig.reference_of is None)
    assert (ref.type, ref.name, ref.subtype, ref.z_offset) == (
        target.type,
        target.name,
        target.subtype,
        target.z_offset,
    )
    assert ref.s == pytest.approx(16.764759970524427)
    assert (ref.t, ref.orientation, ref.validities) == (8.47, "+", ())
    # On road 24 a vehicle driving along +s meets it as a "222" sign at its s.
    lane = next(
        u
        for u in range(len(net.lanes.lanes))
        if net.lanes.road[u] == int(net.road_index("24"))
        and net.graph.driving_sign[u] > 0
        and net.lanes.type_name[u] == "driving"
    )
    found = net.signals_ahead(lane, 0.0, 30.0)
    hit = [a for a in found if a.signal.reference_of == "325"]
    assert hit and hit[0].road_id == "24" and hit[0].signal.type == "222"
    assert hit[0].distance == pytest.approx(
        16.764759970524427 - float(net.lanes.sec_s0[net.lanes.section[lane]])
    )


def test_signals_ahead_on_a_center_lane_or_empty_horizon() -> None:
    net = fork_map()
    center = uid(net, "A", 0, 50.0)
    assert net.signals_ahead(center, 50.0, 100.0) == []
    assert net.signals_ahead(uid(net, "A", -1, 50.0), 50.0, -1.0) == []
    assert not math.isnan(net.graph.length[center])
