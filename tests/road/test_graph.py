"""The lane graph: edges against the independent reference, neighbours, distance to end."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import roadsim
from roadsim.errors import MapWarning, QueryError
from roadsim.road.graph import LaneGraph
from roadsim.road.network import RoadNetwork
from tests.conftest import CORPUS_MAPS, corpus_name
from tests.road.reference import read_reference, reference_file

LaneKey = tuple[str, str, int]  # (road id, section start "%.9f" as in the CSV, lane id)
Edge = tuple[LaneKey, LaneKey]


def corpus(stem: str) -> RoadNetwork:
    path = next(p for p in CORPUS_MAPS if p.stem == stem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MapWarning)
        return roadsim.load_map(path)


def uid(net: RoadNetwork, road: str, lane: int, s: float) -> int:
    return int(net.lane_uid(road, lane, s))


def key(net: RoadNetwork, u: int) -> tuple[str, int, int]:
    lanes = net.lanes
    road = int(lanes.road[u])
    return (
        net.road_ids[road],
        int(lanes.lane_id[u]),
        int(lanes.section[u] - lanes.road_first_section[road]),
    )


# -- edges against the reference ------------------------------------------------------------------
#
# The reference (libOpenDRIVE 0.6.0's routing graph) differs from OpenDRIVE 1.8 in four
# ways, each checked below on exactly the maps where it shows:
#
# "junction": libOpenDRIVE adds every junction laneLink as an edge incoming -> connecting,
#     also for incoming-road lanes that drive *away* from the junction. Its edge then
#     points against traffic; the true edge (connecting -> incoming) comes from the
#     connecting road's own lane links, and both we and the reference have it. Example:
#     connected_junctions_simple, road 2 lane -1 starts at junction 200 (road 2's
#     predecessor), so it is fed by connecting road 21; the reference also has 2/-1 -> 21/-1.
# "center": the reference links center lanes (lane 0) that carry <link> ids (circle_300m);
#     center lanes are not driven (OpenDRIVE 1.8, 9.5.1) and get no edges here.
# "direct": the reference ignores direct junctions (a connection's linkedRoad, 10.4), so
#     it lacks the edges between an incoming road and its linked road (direct_junction_simple,
#     soderleden, Ex_Entry_Exit).
# "bidirectional": Ex_Bidirectional_Junction's road 2 lane -1 has direction="both"
#     (OpenDRIVE 1.8, 9.5.2); the reference's incoming -> connecting edge 2/-1 -> 5/-1 is
#     physically right for such a lane driven towards the junction, but the lane graph
#     models one driving direction per lane (lanes with id < 0 along +s in right-hand
#     traffic), in which lane 2/-1 leaves the junction and 5/-1 enters it the same way.
#
# Left-hand traffic: the reference assumes right-hand traffic (lanes with id < 0 along +s),
# and LHT drives every lane the other way, so each of our edges a -> b is its b -> a.

KNOWN_DIFFERENCES: dict[str, set[str]] = {
    "esmini/circle_300m": {"center"},
    "esmini/connected_junctions_simple": {"junction"},
    "esmini/direct_junction_simple": {"direct"},
    "esmini/highway_example_with_merge_and_split": {"junction"},
    "esmini/highway_exit": {"junction"},
    "esmini/highway_split_lht": {"junction"},
    "esmini/multi_lane_3way_intersection": {"junction"},
    "esmini/parking_demo": {"junction"},
    "esmini/simple_3way_intersection_lht": {"junction"},
    "esmini/simple_4way_intersection": {"junction"},
    "esmini/soderleden": {"direct"},
    "qc-opendrive/Ex_Bidirectional_Junction": {"junction", "bidirectional"},
    "qc-opendrive/Ex_Entry_Exit": {"direct"},
    "qc-opendrive/lane_gap_example_issue_119": {"junction"},
}

LINK_MAPS = [p for p in CORPUS_MAPS if reference_file(corpus_name(p), "links").exists()]


def reference_edges(name: str) -> set[Edge]:
    ref = read_reference(name, "links")
    if not ref:
        return set()
    return {
        ((fr, f"{fs:.9f}", int(fl)), (tr, f"{ts:.9f}", int(tl)))
        for fr, fs, fl, tr, ts, tl in zip(
            ref["from_road"],
            ref["from_section_s0"],
            ref["from_lane"],
            ref["to_road"],
            ref["to_section_s0"],
            ref["to_lane"],
            strict=True,
        )
    }


def our_edges(net: RoadNetwork) -> set[Edge]:
    """Our edges keyed like the CSV: section starts as text with 9 decimals.

    Nearest-start matching is ambiguous where sections start less than 1e-9 m apart
    (Town07 road 641 has four sections within 6e-10 m of s = 13.415292679); the CSV
    cannot tell them apart either, so both sides are compared at its resolution.
    """
    lanes = net.lanes

    def k(u: int) -> LaneKey:
        road = int(lanes.road[u])
        return net.road_ids[road], f"{lanes.sec_s0[lanes.section[u]]:.9f}", int(lanes.lane_id[u])

    src, dst = net.graph.edges()
    return {(k(int(a)), k(int(b))) for a, b in zip(src, dst, strict=True)}


def classify(net: RoadNetwork, ours: set[Edge], ref: set[Edge]) -> dict[str, set[Edge]]:
    """Splits the differences between the edge sets into the known kinds (see above)."""
    incoming_connecting = set()
    direct_pairs = set()
    for junction in net.junctions:
        for c in junction.connections:
            incoming_connecting.add((c.incoming_road, c.connecting_road))
            if junction.type == "direct":
                direct_pairs |= {
                    (c.incoming_road, c.connecting_road),
                    (c.connecting_road, c.incoming_road),
                }
    kinds: dict[str, set[Edge]] = {
        "junction": set(),
        "center": set(),
        "direct": set(),
        "bidirectional": set(),
    }
    other: set[Edge] = set()
    for a, b in ref - ours:
        if a[2] == 0 or b[2] == 0:
            kinds["center"].add((a, b))
        elif (b, a) in ours and (a[0], b[0]) in incoming_connecting:
            kinds["junction"].add((a, b))
        elif (
            (a, b) == (("2", "0.000000000", -1), ("5", "0.000000000", -1))
            and net.path
            and "Bidirectional" in net.path
        ):
            kinds["bidirectional"].add((a, b))
        else:
            other.add((a, b))
    for a, b in ours - ref:
        if (a[0], b[0]) in direct_pairs:
            kinds["direct"].add((a, b))
        else:
            other.add((a, b))
    kinds["other"] = other
    return kinds


@pytest.mark.parametrize("path", LINK_MAPS, ids=[corpus_name(p) for p in LINK_MAPS])
def test_edges_match_the_reference(path: Path) -> None:
    name = corpus_name(path)
    net = corpus(path.stem)
    ours = our_edges(net)
    if net.road_lht.any():
        assert net.road_lht.all()
        ours = {(b, a) for a, b in ours}
    ref = reference_edges(name)
    kinds = classify(net, ours, ref)
    assert kinds.pop("other") == set()
    assert {k for k, edges in kinds.items() if edges} == KNOWN_DIFFERENCES.get(name, set())


# -- structure ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stem", ["test", "positive18", "multi_intersections", "e6mini-lht"])
def test_csr_arrays_are_consistent(stem: str) -> None:
    net = corpus(stem)
    g = net.graph
    n = len(net.lanes.lanes)
    assert g.succ_ptr.shape == g.pred_ptr.shape == (n + 1,)
    assert g.succ_ptr[-1] == g.pred_ptr[-1] == g.succ_idx.size == g.pred_idx.size
    succ = {(u, v) for u in range(n) for v in g.successors(u)}
    pred = {(u, v) for v in range(n) for u in g.predecessors(v)}
    assert succ == pred
    center = np.flatnonzero(net.lanes.lane_id == 0)
    assert all(not g.successors(int(c)) and not g.predecessors(int(c)) for c in center)


# Maps whose lane links join lanes whose centres are apart where they meet (by the file's
# own widths): multi_intersections (the outermost "none" lanes of roads 229/284, 7.65 m)
# and soderleden (road 0, lane -3 into the next section's -2, 1.75 m), so not here.
GEOMETRY_MAPS = [
    "test",
    "positive18",
    "highway_split_lht",
    "two_plus_one",
    "highway_example_with_merge_and_split",
    "simple_3way_intersection_lht",
    "Ex_Entry_Exit",
    "direct_junction_simple",
]


@pytest.mark.parametrize("stem", GEOMETRY_MAPS)
def test_edges_join_the_exit_of_a_lane_to_the_entry_of_the_next(stem: str) -> None:
    # The lane centres meet in the world (5 cm covers converters' gaps between roads).
    net = corpus(stem)
    src, dst = net.graph.edges()
    assert src.size > 0
    gap = np.linalg.norm(end_points(net, src, exit=True) - end_points(net, dst, exit=False), axis=1)
    assert gap.max() < 0.05, [
        (key(net, a), key(net, b)) for a, b in zip(src[gap >= 0.05], dst[gap >= 0.05], strict=True)
    ]


def end_points(net: RoadNetwork, uids: np.ndarray, *, exit: bool) -> np.ndarray:
    """World points of lane centres where lanes are left (``exit``) or entered, (N, 3)."""
    lanes = net.lanes
    sec = lanes.section[uids]
    at_s1 = (net.graph.driving_sign[uids] > 0) == exit
    s = np.where(at_s1, lanes.sec_s1[sec], lanes.sec_s0[sec])
    t = net.uid_t_center(uids, s)
    return np.stack(net.to_world_index(lanes.road[uids], s, t), axis=1)


def test_lht_reverses_the_driving_direction() -> None:
    net = corpus("highway_split_lht")
    # Road 1 leaves junction 1 at its start; in left-hand traffic its lane -1 is driven
    # against s, so it is fed *from* road 1 into connecting road 3, then into road 0.
    a, c, b = uid(net, "1", -1, 1.0), uid(net, "3", -1, 1.0), uid(net, "0", -1, 1.0)
    assert net.successors(a) == [c]
    assert net.successors(c) == [b]
    assert net.graph.driving_sign[a] == -1


def test_direct_junction_links_incoming_to_linked_roads() -> None:
    net = corpus("direct_junction_simple")
    assert net.successors(uid(net, "1", -3, 50.0)) == [uid(net, "3", -1, 50.0)]
    assert net.successors(uid(net, "1", -1, 50.0)) == [uid(net, "2", -1, 50.0)]
    # ... and a road link within a road chain goes on: road 2 -> road 5.
    assert net.successors(uid(net, "2", -1, 50.0)) == [uid(net, "5", -1, 25.0)]


def test_a_lane_link_named_on_one_side_only_still_links() -> None:
    net = corpus("connected_junctions_simple")
    # Road 11 (inside junction 100) names road 1 lane -1 as its predecessor; road 1 names
    # nothing (its successor is the junction) but the junction's laneLink does too.
    assert net.successors(uid(net, "1", -1, 50.0)) == [uid(net, "11", -1, 1.0)]
    assert net.predecessors(uid(net, "2", -2, 1.0)) == [uid(net, "22", -1, 1.0)]


def test_neighbours_in_driving_direction() -> None:
    net = corpus("two_plus_one")
    g = net.graph
    m1, m2 = uid(net, "1", -1, 150.0), uid(net, "1", -2, 150.0)
    p1, p2 = uid(net, "1", 1, 150.0), uid(net, "1", 2, 150.0)
    # Along +s, lane -1 has lane -2 to its right and (across the center) lane 1 to its left.
    assert (net.left_neighbour(m1), net.right_neighbour(m1)) == (p1, m2)
    assert (g.left(m2), g.right(m2)) == (m1, -1)
    # Lanes 1 and 2 are driven against s: lane 2 is to the right of lane 1.
    assert (g.left(p1), g.right(p1)) == (m1, p2)
    assert (g.left(p2), g.right(p2)) == (p1, -1)
    assert g.driving_sign[p1] == -g.driving_sign[m1] == -1
    center = uid(net, "1", 0, 150.0)
    assert g.left(center) == g.right(center) == -1
    assert g.left_uid.shape == g.right_uid.shape == (len(net.lanes.lanes),)


def test_neighbours_in_left_hand_traffic() -> None:
    net = corpus("e6mini-lht")
    p2, p3 = uid(net, "0", 2, 10.0), uid(net, "0", 3, 10.0)
    # In LHT lane 2 is driven along +s: the lane at larger t (lane 3) is on its left.
    assert net.graph.driving_sign[p2] == 1
    assert net.left_neighbour(p2) == p3
    assert net.right_neighbour(p3) == p2


def test_bad_uid_raises() -> None:
    net = corpus("two_plus_one")
    with pytest.raises(QueryError, match="no lane with uid"):
        net.successors(len(net.lanes.lanes))
    with pytest.raises(QueryError, match="no lane with uid"):
        net.distance_to_end_of_lane([0, -1], [0.0, 0.0])
    with pytest.raises(QueryError, match="unknown lane type"):
        net.distance_to_end_of_lane(0, 0.0, lane_types=["drivingg"])


def test_graph_is_cached_on_the_network() -> None:
    net = corpus("two_plus_one")
    assert net.graph is net.graph
    assert isinstance(net.graph, LaneGraph)


# -- distance to the end of the lane --------------------------------------------------------------


def test_distance_to_end_at_a_lane_drop_and_a_road_end() -> None:
    net = corpus("two_plus_one")
    # Sections of road 1 (500 m): [0,125) 2,1|-1; [125,175) 2,1|-1,-2; [175,325) 1|-1,-2;
    # [325,375) 2,1|-1,-2; [375,500] 2,1|-1. Along +s, lane -1 of [325,375) ends at 375
    # (it has no successor: the 2+1 road drops it), lane -2 there becomes -1 and goes to 500.
    lanes = np.array([uid(net, "1", -1, 330.0), uid(net, "1", -2, 330.0), uid(net, "1", -1, 10.0)])
    s = np.array([330.0, 330.0, 10.0])
    assert np.allclose(net.distance_to_end_of_lane(lanes, s), [45.0, 170.0, 490.0])
    # Against s, lane 1 of [375,500] comes from lane 1 of [325,375), which starts there.
    assert float(net.distance_to_end_of_lane(uid(net, "1", 1, 490.0), 490.0)) == pytest.approx(
        165.0
    )
    assert float(net.distance_to_end_of_lane(uid(net, "1", 2, 490.0), 490.0)) == pytest.approx(
        490.0
    )


def test_distance_beyond_the_horizon_is_inf_and_shapes_broadcast() -> None:
    net = corpus("two_plus_one")
    u = uid(net, "1", -1, 10.0)
    d = net.distance_to_end_of_lane(u, np.array([[10.0, 400.0], [450.0, 499.0]]), horizon=100.0)
    assert d.shape == (2, 2)
    # From s=10 and s=400 the drop at 500 is farther than 100 m (lane -1 of the first
    # section continues as lane -2, then -1 again, to the road end at 500); s is clipped
    # to the lane's own section [0, 125).
    assert np.isinf(d[0, 0]) and np.isinf(d[0, 1]) and np.isinf(d[1, 0])
    assert float(net.distance_to_end_of_lane(u, 10.0, horizon=490.0)) == pytest.approx(490.0)
    assert np.isinf(net.distance_to_end_of_lane(u, 10.0, horizon=489.9))


def test_a_loop_never_ends() -> None:
    net = corpus("circular_road")
    lanes = np.flatnonzero(net.lanes.lane_id != 0)
    assert np.all(np.isinf(net.distance_to_end_of_lane(lanes, np.zeros(lanes.size))))
    net = corpus("circle_300m")  # one road whose end links to its own start
    drive = uid(net, "1", -1, 10.0)
    assert np.isinf(net.distance_to_end_of_lane(drive, 10.0, horizon=1e6))


def test_at_a_fork_the_longest_branch_counts_unless_a_route_says() -> None:
    net = corpus("simple_4way_intersection")
    u = uid(net, "0", -1, 90.0)
    left, straight = uid(net, "101", -1, 1.0), uid(net, "100", -1, 1.0)
    assert set(net.successors(u)) >= {left, straight}
    len_left, len_straight = net.road_length[net.road_index(["101", "100"])]
    assert float(net.distance_to_end_of_lane(u, 90.0)) == pytest.approx(10.0 + len_left + 100.0)
    route = [u, straight, uid(net, "1", -1, 1.0)]
    assert float(net.distance_to_end_of_lane(u, 90.0, route=route)) == pytest.approx(
        10.0 + len_straight + 100.0
    )
    # The route need not hold the current lane: it may start with the next one.
    assert float(net.distance_to_end_of_lane(u, 90.0, route=route[1:])) == pytest.approx(
        10.0 + len_straight + 100.0
    )
    # A route that leaves the lane stream (here: a lane not following) falls back to the
    # longest continuation from there.
    assert float(net.distance_to_end_of_lane(u, 90.0, route=[u, u])) == pytest.approx(
        10.0 + len_left + 100.0
    )


def test_lane_types_end_the_stream() -> None:
    net = corpus("Ex_Entry_Exit")
    # Road 292: an onRamp lane -1 on [0, 100.58), then an "entry" lane that a direct
    # junction joins to road 313's lane -4. "entry" (OpenDRIVE 1.8's acceleration lane)
    # is among the default types, so the stream goes on to the end of road 313.
    ramp = uid(net, "292", -1, 50.0)
    end_of_ramp = float(net.lanes.sec_s1[net.lanes.section[ramp]])
    whole = float(net.road_length[net.road_index("292")] + net.road_length[net.road_index("313")])
    assert float(net.distance_to_end_of_lane(ramp, 50.0)) == pytest.approx(whole - 50.0)
    only_ramp = float(net.distance_to_end_of_lane(ramp, 50.0, lane_types=["onRamp"]))
    assert only_ramp == pytest.approx(end_of_ramp - 50.0)
    # A lane not of the given types is at distance 0 (also the default for shoulders).
    shoulder = uid(net, "292", -2, 50.0)
    assert float(net.distance_to_end_of_lane(shoulder, 50.0)) == 0.0
    assert float(net.distance_to_end_of_lane(shoulder, 50.0, lane_types=["shoulder"])) > 0.0


def test_shoulders_of_a_loop_are_loops_too() -> None:
    net = corpus("circle_300m")
    shoulder = uid(net, "1", -2, 10.0)
    assert float(net.distance_to_end_of_lane(shoulder, 10.0)) == 0.0
    downstream = net.graph.downstream(["shoulder"])
    assert np.isinf(downstream[shoulder]) == bool(net.successors(shoulder))


def test_distance_to_end_matches_a_plain_graph_search() -> None:
    """The vectorised longest-path table against a depth-first search, on Town07."""
    net = corpus("test")
    g = net.graph
    allowed = np.isin(np.array(net.lanes.type_name), ["driving"]) & (g.driving_sign != 0)
    table = g.downstream(["driving"])

    def longest(u: int, on_path: frozenset[int]) -> float:
        best = 0.0
        for v in g.successors(u):
            if not allowed[v]:
                continue
            if v in on_path:
                return np.inf
            best = max(best, g.length[v] + longest(v, on_path | {v}))
            if np.isinf(best):
                break
        return best

    rng = np.random.default_rng(7)
    for u in rng.choice(np.flatnonzero(allowed), 60, replace=False).tolist():
        assert table[u] == pytest.approx(longest(u, frozenset({u})))
