"""The built-in maps: shipped as generated, loadable, and drivable."""

from __future__ import annotations

import math
import warnings
from collections import deque
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

import roadsim
from roadsim.road import builtin
from roadsim.road.network import RoadNetwork

NAMES = sorted(builtin.MAPS)


@cache
def network(name: str) -> RoadNetwork:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return roadsim.load_map(name)


def test_every_builder_map_is_shipped() -> None:
    assert set(NAMES) >= {"highway", "ring", "town"}
    assert set(roadsim.builtin_maps()) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_shipped_file_is_what_the_builder_writes(name: str) -> None:
    shipped = (resources.files("roadsim.road") / "maps" / f"{name}.xodr").read_bytes()
    assert builtin.build(name) == shipped, (
        f"maps/{name}.xodr is stale: run `python -m roadsim.road.builtin`"
    )


def test_main_writes_the_maps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtin, "MAPS_DIR", tmp_path)
    assert builtin.main(["town"]) == 0
    assert (tmp_path / "town.xodr").read_bytes() == builtin.build("town")


@pytest.mark.parametrize("name", NAMES)
def test_loads_by_name_without_warnings(name: str) -> None:
    net = network(name)
    assert net.header.name == name
    assert net.header.rev_major == 1 and net.header.rev_minor == 8


# -- lane continuity ----------------------------------------------------------------------------


class LaneEnd(NamedTuple):
    road: int  # road index
    section: int  # global lane section index
    lane_id: int
    at_end: bool  # the lane's end (largest s) touches, else its start


def _end_of(net: RoadNetwork, road: int, lane_id: int, at_end: bool) -> LaneEnd:
    first = int(net.lanes.road_first_section[road])
    section = first + int(net.lanes.road_section_count[road]) - 1 if at_end else first
    return LaneEnd(road, section, lane_id, at_end)


def lane_contacts(net: RoadNetwork) -> list[tuple[LaneEnd, LaneEnd]]:
    """Every pair of lane ends the file says touch: lane links between lane sections,
    across road links, and through junction connections."""
    out = []
    for r, road in enumerate(net.roads):
        first = int(net.lanes.road_first_section[r])
        for k, sec in enumerate(road.sections):
            for lane in sec.lanes:
                if k + 1 < len(road.sections):
                    out += [
                        (LaneEnd(r, first + k, lane.id, True), LaneEnd(r, first + k + 1, to, False))
                        for to in lane.successors
                    ]
                links = (
                    (k == 0, road.predecessor, lane.predecessors, False),
                    (k == len(road.sections) - 1, road.successor, lane.successors, True),
                )
                for applies, link, ids, at_end in links:
                    if applies and link is not None and link.element_type == "road":
                        other = int(net.road_index(link.element_id)[()])
                        out += [
                            (
                                _end_of(net, r, lane.id, at_end),
                                _end_of(net, other, to, link.contact_point == "end"),
                            )
                            for to in ids
                        ]
    for junction in net.junctions:
        for con in junction.connections:
            r = int(net.road_index(con.incoming_road)[()])
            road = net.roads[r]
            at_end = road.successor is not None and road.successor.element_id == junction.id
            c = int(net.road_index(con.connecting_road)[()])
            out += [
                (
                    _end_of(net, r, ll.from_lane, at_end),
                    _end_of(net, c, ll.to_lane, con.contact_point == "end"),
                )
                for ll in con.lane_links
            ]
    return out


def _centre(net: RoadNetwork, end: LaneEnd, s: float) -> np.ndarray:
    uid = net.lanes.uid(end.road, end.section, end.lane_id)
    assert uid >= 0, end
    t = net.uid_t_center(np.array([uid]), np.array([s]))
    x, y, z = net.to_world_index(np.array([end.road]), np.array([s]), t)
    return np.array([x[0], y[0], z[0]])


def lane_end_pose(net: RoadNetwork, end: LaneEnd, h: float = 0.01) -> tuple[np.ndarray, float]:
    """A lane end's centre point (x, y, z) and the heading of its centre line along +s."""
    s0 = float(net.lanes.sec_s0[end.section])
    s1 = float(net.lanes.sec_s1[end.section])
    s = s1 if end.at_end else s0
    inside = s - h if end.at_end else s + h
    p, q = _centre(net, end, s), _centre(net, end, inside)
    d = (p - q) if end.at_end else (q - p)
    return p, math.atan2(d[1], d[0])


@pytest.mark.parametrize("name", NAMES)
def test_linked_lane_ends_meet(name: str) -> None:
    net = network(name)
    contacts = lane_contacts(net)
    assert len(contacts) >= 16
    for a, b in contacts:
        pa, ha = lane_end_pose(net, a)
        pb, hb = lane_end_pose(net, b)
        where = f"road {net.road_ids[a.road]} lane {a.lane_id} -> road {net.road_ids[b.road]} lane {b.lane_id}"
        assert np.linalg.norm(pa - pb) < 0.01, where
        # Lanes joined end to start run the same way along s; end to end or start to start,
        # opposite ways.
        turn = 0.0 if a.at_end != b.at_end else math.pi
        assert abs(math.remainder(hb - ha - turn, 2 * math.pi)) < 0.01, where


@pytest.mark.parametrize("name", NAMES)
def test_header_bounds_hold_every_lane(name: str) -> None:
    net = network(name)
    lanes = net.lanes
    uid = np.repeat(np.arange(len(lanes.lanes)), 101)
    frac = np.tile(np.linspace(0.0, 1.0, 101), len(uid) // 101)
    s0, s1 = lanes.sec_s0[lanes.section[uid]], lanes.sec_s1[lanes.section[uid]]
    s = s0 + frac * (s1 - s0)
    x, y, _ = net.to_world_index(lanes.road[uid], s, net.uid_t_outer(uid, s))
    h = net.header
    tol = 1e-6  # the file's numbers carry ten significant digits
    assert h.west - tol <= x.min() and x.max() <= h.east + tol
    assert h.south - tol <= y.min() and y.max() <= h.north + tol
    assert max(x.min() - h.west, h.east - x.max(), y.min() - h.south, h.north - y.max()) < 0.5


# -- the lane graph -----------------------------------------------------------------------------


def _reachable_after(start: int, step: Callable[[int], list[int]], allowed: set[int]) -> set[int]:
    """The lanes reached from ``start`` in one or more steps."""
    seen: set[int] = set()
    todo = deque([start])
    while todo:
        for v in step(todo.popleft()):
            if v in allowed and v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


def _reachable(start: int, step: Callable[[int], list[int]], allowed: set[int]) -> set[int]:
    return _reachable_after(start, step, allowed) | {start}


@pytest.mark.parametrize(("name", "lanes"), [("town", 8 * 2 + 36), ("ring", 4)])
def test_can_be_driven_forever_from_every_lane(name: str, lanes: int) -> None:
    net = network(name)
    driving = {u for u in range(len(net.lanes.lanes)) if net.lanes.type_name[u] == "driving"}
    assert len(driving) == lanes
    for u in driving:
        assert any(v in driving for v in net.successors(u)), f"dead end at uid {u}"
    # Every lane comes round to itself again.
    for u in driving:
        assert u in _reachable_after(u, net.successors, driving)


def test_town_lanes_all_reach_each_other() -> None:
    net = network("town")
    driving = {u for u in range(len(net.lanes.lanes)) if net.lanes.type_name[u] == "driving"}
    start = min(driving)
    assert _reachable(start, net.successors, driving) == driving
    assert _reachable(start, net.predecessors, driving) == driving


def test_ring_is_two_half_circles_linked_end_to_start() -> None:
    net = network("ring")
    assert not net.junctions
    east, west = net.roads
    assert east.successor is not None and west.predecessor is not None
    assert (east.successor.element_id, east.successor.contact_point) == ("2", "start")
    assert (west.predecessor.element_id, west.predecessor.contact_point) == ("1", "end")
    lap = 2 * math.pi * (builtin.RING_RADIUS + 1.75)  # inner lane centre
    s = np.linspace(0.0, net.road_length[0], 50)
    curvature = net.lane_curvature("1", -1, s)
    assert curvature == pytest.approx(np.full(50, 2 * math.pi / lap), rel=1e-6)


def test_highway_ramps_merge_and_diverge() -> None:
    net = network("highway")

    def successors(road: str, lane: int, s: float) -> list[tuple[str, int]]:
        uid = int(net.lane_uid(road, lane, s)[()])
        return [
            (net.road_ids[net.lanes.road[v]], int(net.lanes.lane_id[v]))
            for v in net.successors(uid)
        ]

    assert successors("4", -1, 100.0) == [("2", -5)]  # on-ramp into the acceleration lane
    assert net.lanes.type_name[int(net.lane_uid("2", -5, 100.0)[()])] == "entry"
    assert successors("2", -5, 100.0) == [("2", -5)]  # ... which narrows,
    assert successors("2", -5, 300.0) == []  # ... and ends (a lane drop)
    assert net.lane_width("2", -5, [250.0, 295.0, 339.999]) == pytest.approx(
        [3.75, 1.875, 0.0], abs=1e-3
    )
    assert successors("2", -5, 1700.0) == [("5", -1)]  # the exit lane leaves as the off-ramp
    assert successors("1", -2, 10.0) == [("2", -2)]
    assert successors("2", 4, 10.0) == [("1", 4)]  # westbound, against s
    assert [j.type for j in net.junctions] == ["direct", "direct"]
    for road in ("1", "2", "3"):
        at = net.roads[int(net.road_index(road)[()])]
        assert at.speed_limits == ((0.0, pytest.approx(120 / 3.6)),)


def test_highway_signs_limit_the_speed_of_the_through_lanes() -> None:
    net = network("highway")
    limits = [s for s in net.signals if s.type == "274"]
    assert len(limits) == 5
    for sig in limits:
        (validity,) = sig.validities
        assert sig.unit == "km/h" and sig.value in (80.0, 120.0)
        if sig.value == 120.0:
            side = (validity.from_lane, validity.to_lane)
            assert side == ((-4, -2) if sig.orientation == "+" else (2, 4))
            lanes = range(validity.from_lane, validity.to_lane + 1)
            for lane in lanes:
                uid = int(net.lane_uid(sig.road_id, lane, sig.s)[()])
                assert net.lanes.type_name[uid] == "driving"


def test_town_signals_and_controllers() -> None:
    net = network("town")
    lights = [s for s in net.signals if s.type == "1000001"]
    assert len(lights) == 4 and all(s.dynamic and s.orientation == "-" for s in lights)
    (crossroads,) = [j for j in net.junctions if j.controllers]
    assert len(crossroads.connections) == 12
    controllers = {c.id: c for c in net.controllers}
    assert set(crossroads.controllers) == set(controllers)
    grouped = sorted(sid for c in controllers.values() for sid in c.signal_ids)
    assert grouped == sorted(s.id for s in lights)  # each light in exactly one phase
    assert sorted(c.sequence or 0 for c in controllers.values()) == [1, 2]
    for sig in lights:  # at the crossroads, for the lane that drives into it
        road = net.roads[int(net.road_index(sig.road_id)[()])]
        assert road.predecessor is not None and road.predecessor.element_id == crossroads.id
        assert [(v.from_lane, v.to_lane) for v in sig.validities] == [(1, 1)]
    assert sorted(s.type for s in net.signals if s.type in ("205", "206")) == [
        "205",
        "205",
        "206",
        "206",
    ]
    limits = [s for s in net.signals if s.type == "274"]
    assert len(limits) == 8 and {s.value for s in limits} == {50.0}
    assert all(r.speed_limits == ((0.0, pytest.approx(50 / 3.6)),) for r in net.roads)
    assert sum(len(j.connections) for j in net.junctions) == 12 + 4 * 6
