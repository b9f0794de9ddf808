"""The lane graph: which lane follows which in its driving direction, lane neighbours, how
far a lane goes on, and the signals ahead on it.

Nodes are lane uids (`roadsim.road.lanes.LaneRecords`). An edge ``a -> b`` means a vehicle
driving along lane ``a`` in ``a``'s driving direction continues on lane ``b`` in ``b``'s
driving direction. Edges come from three places (OpenDRIVE 1.8):

- within a road, a lane's ``<link>`` successor / predecessor ids name lanes in the next /
  previous lane section (9.5.1);
- across a road link to a road (8.1), the first section's predecessor ids and the last
  section's successor ids name lanes in the linked road's section at ``contactPoint``
  (``start``: its first section, ``end``: its last);
- a road linked to a junction takes the junction's connections whose ``incomingRoad`` is
  that road: each ``laneLink`` joins the lane ``from`` at the incoming road's end at the
  junction to the lane ``to`` at the connecting (or, in a direct junction, linked) road's
  ``contactPoint`` (10.3, 10.4). Connecting roads link out by their own road links.

All of these only say which lane *ends* touch; they are collected as undirected contacts
``(lane a, its start or end) ~ (lane b, its start or end)``, from whichever side gives them
(a link named by only one of the two lanes counts). The direction of travel then comes
from each lane's driving sign (`RoadNetwork.driving_sign`: right-hand traffic drives lanes
with id < 0 along +s, left-hand traffic lanes with id > 0): the edge runs from the lane
that leaves through its touching end to the lane that is entered through its touching end.
A contact where both lanes would leave (or both enter) through the touching ends joins
lanes of opposite directions; it gives no edge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from roadsim._checks import as_id, as_ids
from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.errors import QueryError
from roadsim.road.lanes import LANE_TYPES, lane_type_code
from roadsim.road.signals import SignalAhead, SignalIndex

if TYPE_CHECKING:
    from roadsim.road.model import Road
    from roadsim.road.network import RoadNetwork

__all__ = ["END_OF_LANE_TYPES", "LaneGraph", "SignalAhead"]


#: Lane types along which a lane stream continues for `LaneGraph.distance_to_end` by
#: default (openPASS' distance to the end of lane counts driving lanes and the ramps).
#: ``entry`` is OpenDRIVE 1.8's name for an acceleration lane (an on-ramp's lane that
#: ends in a merge), so it counts like ``onRamp``.
END_OF_LANE_TYPES: frozenset[str] = frozenset(
    {"driving", "entry", "exit", "onRamp", "offRamp", "stop"}
)

_START, _END = 0, 1


class LaneGraph:
    """Successors, predecessors and neighbours of every lane uid, in driving direction.

    Args:
        net: The road network.

    Attributes:
        succ_ptr, succ_idx: CSR successor lists: the successors of uid ``u`` are
            ``succ_idx[succ_ptr[u]:succ_ptr[u + 1]]``, sorted; shapes (n_lanes + 1,) and
            (n_edges,).
        pred_ptr, pred_idx: The same for predecessors.
        left_uid, right_uid: The adjacent lane to the left / right of each lane *in its
            driving direction* within the same lane section, -1 where there is none;
            shape (n_lanes,). The lane across the center lane is returned even though it
            is driven the other way (a driver still sees that a lane is there); compare
            `driving_sign` to tell. Center lanes have no neighbours.
        driving_sign: +1 for lanes driven along +s, -1 against s, 0 for center lanes,
            int64, shape (n_lanes,).
        length: Length along s of each lane record (its lane section), metres.
    """

    def __init__(self, net: RoadNetwork) -> None:
        self._net = net
        lanes = net.lanes
        self.n_lanes = n = len(lanes.lanes)
        uids = np.arange(n, dtype=np.int64)
        self.driving_sign: IntArray = net.driving_sign(uids).astype(np.int64)
        self.length: FloatArray = lanes.sec_s1[lanes.section] - lanes.sec_s0[lanes.section]

        a, end_a, b, end_b = _contacts(net)
        # A lane leaves through its end when driven along +s, through its start otherwise.
        leaves_a = (end_a == _END) == (self.driving_sign[a] > 0)
        leaves_b = (end_b == _END) == (self.driving_sign[b] > 0)
        forward = leaves_a & ~leaves_b
        backward = leaves_b & ~leaves_a
        src = np.concatenate((a[forward], b[backward]))
        dst = np.concatenate((b[forward], a[backward]))
        key = np.unique(src * n + dst)
        src, dst = key // n, key % n
        self.succ_ptr, self.succ_idx = _csr(src, dst, n)
        order = np.lexsort((src, dst))
        self.pred_ptr, self.pred_idx = _csr(dst[order], src[order], n)
        self._edge_src, self._edge_dst = src, dst

        self.left_uid, self.right_uid = self._neighbours()
        self._downstream: dict[frozenset[int], FloatArray] = {}
        self._signals: SignalIndex | None = None

    # -- edges and neighbours -------------------------------------------------------------------

    def successors(self, uid: int) -> list[int]:
        """Lane uids that follow lane ``uid`` in its driving direction (sorted)."""
        u = self._check_uid(uid)
        return [int(v) for v in self.succ_idx[self.succ_ptr[u] : self.succ_ptr[u + 1]]]

    def predecessors(self, uid: int) -> list[int]:
        """Lane uids that lead into lane ``uid`` in its driving direction (sorted)."""
        u = self._check_uid(uid)
        return [int(v) for v in self.pred_idx[self.pred_ptr[u] : self.pred_ptr[u + 1]]]

    def left(self, uid: int) -> int:
        """The adjacent lane to the left of ``uid`` in its driving direction (-1: none)."""
        return int(self.left_uid[self._check_uid(uid)])

    def right(self, uid: int) -> int:
        """The adjacent lane to the right of ``uid`` in its driving direction (-1: none)."""
        return int(self.right_uid[self._check_uid(uid)])

    def edges(self) -> tuple[IntArray, IntArray]:
        """All successor edges as ``(from_uid, to_uid)`` arrays, sorted by (from, to)."""
        return self._edge_src.copy(), self._edge_dst.copy()

    def _neighbours(self) -> tuple[IntArray, IntArray]:
        lanes = self._net.lanes
        n = self.n_lanes
        uid = np.arange(n, dtype=np.int64)
        first = lanes.sec_first_uid[lanes.section]
        last = first + lanes.sec_count[lanes.section] - 1
        center = lanes.sec_center_uid[lanes.section]
        # Uids run from the leftmost lane (largest t) to the rightmost, so the lane at
        # larger t is uid - 1; the center lane in between is skipped.
        up = uid - 1 - (uid - 1 == center)
        down = uid + 1 + (uid + 1 == center)
        up = np.where(up >= first, up, -1)
        down = np.where(down <= last, down, -1)
        sign = self.driving_sign
        left = np.where(sign > 0, up, np.where(sign < 0, down, -1))
        right = np.where(sign > 0, down, np.where(sign < 0, up, -1))
        return left.astype(np.int64), right.astype(np.int64)

    # -- distance to the end of the lane ----------------------------------------------------------

    def distance_to_end(
        self,
        uid: npt.ArrayLike,
        s: npt.ArrayLike,
        horizon: float = float("inf"),
        lane_types: Iterable[str] | None = None,
        route: Sequence[int] | None = None,
    ) -> FloatArray:
        """Distance from (lane ``uid``, s) to where the lane stream ends, in driving direction.

        The stream follows successors while their type is in ``lane_types`` and ends at a
        lane with no such successor. At a fork it continues on the successor whose stream
        goes on longest (a stream that reaches a loop never ends); with ``route`` it
        takes the successor the route names instead, and falls back to the longest where
        the route names none (past the route's end, or where the route's next lane is no
        successor, e.g. a lane change). Lengths are measured along s: the rest of the
        current lane section in driving direction plus the section lengths after it.
        This is openPASS' distance to the end of lane.

        Args:
            uid: Lane uids, any shape.
            s: Positions along each lane's road (m), broadcast with ``uid``; clipped to
                the lane's section.
            horizon: Distances beyond this many metres are returned as +inf
                (the visibility distance).
            lane_types: OpenDRIVE lane types the stream may continue on (default
                `END_OF_LANE_TYPES`). A lane not of these types, and a center lane, is
                at distance 0.
            route: Lane uids the vehicle will follow, in order. A lane of the query is
                looked up at its first occurrence in the route; a lane not in the route
                whose successor is the route's first lane continues onto the route.

        Returns:
            Distances (m), float64 in the broadcast shape of ``uid`` and ``s``.

        Raises:
            QueryError: For a uid that is not a lane of the network.
            ArgumentTypeError: For a uid that is not an integer.
        """
        uid_arr, s_arr = np.broadcast_arrays(as_ids(uid, "uid"), np.asarray(s, dtype=np.float64))
        u = uid_arr.ravel()
        sv = s_arr.ravel()
        self._check_uids(u)
        codes = self._type_codes(lane_types)
        allowed = self._allowed(codes)
        down = self._downstream_for(codes)
        if route is not None:
            down = self._route_downstream(route, codes, down)
        lanes = self._net.lanes
        sec = lanes.section[u]
        s0, s1 = lanes.sec_s0[sec], lanes.sec_s1[sec]
        sc = np.clip(sv, s0, s1)
        sign = self.driving_sign[u]
        rest = np.where(sign > 0, s1 - sc, sc - s0)
        dist = np.where(allowed[u], rest + down[u], 0.0)
        dist = np.where(dist > horizon, np.inf, dist)
        return dist.reshape(uid_arr.shape)

    def downstream(self, lane_types: Iterable[str] | None = None) -> FloatArray:
        """Per uid, how far its lane stream goes on after the lane's own exit (m).

        0 for a lane whose stream ends with it (or that is not of ``lane_types``), +inf
        for one that reaches a loop. Cached per set of lane types.
        """
        return self._downstream_for(self._type_codes(lane_types)).copy()

    def _type_codes(self, lane_types: Iterable[str] | None) -> frozenset[int]:
        names = END_OF_LANE_TYPES if lane_types is None else lane_types
        if isinstance(names, str):
            names = (names,)
        known = {t.lower() for t in LANE_TYPES}
        codes = set()
        for name in names:
            if name.lower() not in known:
                raise QueryError(f"unknown lane type {name!r}; known: {', '.join(LANE_TYPES)}")
            codes.add(lane_type_code(name))
        return frozenset(codes)

    def _allowed(self, codes: frozenset[int]) -> BoolArray:
        type_ok: BoolArray = np.isin(
            self._net.lanes.type_code, np.fromiter(codes, np.int64, len(codes))
        )
        driven: BoolArray = self.driving_sign != 0
        return type_ok & driven

    def _downstream_for(self, codes: frozenset[int]) -> FloatArray:
        cached = self._downstream.get(codes)
        if cached is None:
            cached = self._longest_paths(self._allowed(codes))
            self._downstream[codes] = cached
        return cached

    def _longest_paths(self, allowed: BoolArray) -> FloatArray:
        """Longest continuation after each lane over edges between allowed lanes.

        Peels the graph from its sinks (Kahn's algorithm in vectorised rounds): a lane is
        final once all its successors are; lanes never final reach a cycle (+inf).
        """
        n = self.n_lanes
        keep = allowed[self._edge_src] & allowed[self._edge_dst]
        src, dst = self._edge_src[keep], self._edge_dst[keep]
        out_deg = np.bincount(src, minlength=n)
        best = np.zeros(n)
        done = out_deg == 0
        frontier = np.flatnonzero(done)
        # Edges grouped by destination, to find those entering the frontier quickly.
        order = np.argsort(dst, kind="stable")
        d_src, d_dst = src[order], dst[order]
        d_ptr = np.concatenate(([0], np.cumsum(np.bincount(d_dst, minlength=n))))
        while frontier.size:
            counts = d_ptr[frontier + 1] - d_ptr[frontier]
            if not counts.any():
                break
            idx = np.repeat(d_ptr[frontier], counts) + _ramp(counts)
            e_src, e_dst = d_src[idx], d_dst[idx]
            np.maximum.at(best, e_src, self.length[e_dst] + best[e_dst])
            np.subtract.at(out_deg, e_src, 1)
            touched = np.unique(e_src)
            frontier = touched[out_deg[touched] == 0]
            done[frontier] = True
        best[~done] = np.inf
        best[~allowed] = 0.0
        return best

    def _route_downstream(
        self, route: Sequence[int], codes: frozenset[int], default: FloatArray
    ) -> FloatArray:
        r = as_ids(route, "route").ravel()
        self._check_uids(r)
        allowed = self._allowed(codes)
        down = default.copy()
        if r.size == 0:
            return down
        # Walk the route backwards: where the route's next lane is a successor, the stream
        # goes on along it (or ends, if that lane is of another type); elsewhere the
        # default (longest) continuation applies.
        after = np.empty(r.size)
        after[-1] = default[r[-1]]
        for k in range(r.size - 2, -1, -1):
            cur, nxt = int(r[k]), int(r[k + 1])
            succ = self.succ_idx[self.succ_ptr[cur] : self.succ_ptr[cur + 1]]
            if nxt in succ:
                after[k] = self.length[nxt] + after[k + 1] if allowed[nxt] else 0.0
            else:
                after[k] = default[cur]
        # A lane just before the route (not on it) continues onto the route's first lane.
        r0 = int(r[0])
        before = self.pred_idx[self.pred_ptr[r0] : self.pred_ptr[r0 + 1]]
        down[before] = np.where(
            allowed[before], self.length[r0] + after[0] if allowed[r0] else 0.0, 0.0
        )
        first = np.unique(r, return_index=True)
        down[first[0]] = np.where(allowed[first[0]], after[first[1]], 0.0)
        return down

    # -- signals ----------------------------------------------------------------------------------

    def signals_ahead(
        self, uid: int, s: float, horizon: float, route: Sequence[int] | None = None
    ) -> list[SignalAhead]:
        """Signals valid for a vehicle on lane ``uid`` at ``s``, within ``horizon`` ahead.

        Nearest first; without ``route`` every branch is explored and each signal is
        reported once, at its smallest distance. See
        `roadsim.road.signals.SignalIndex.ahead` for the details.

        Raises:
            QueryError: For a uid (``uid`` or in ``route``) that is not a lane.
            ArgumentTypeError: For a uid that is not an integer.
        """
        if self._signals is None:
            self._signals = SignalIndex(self._net, self)
        self._check_uid(uid)
        if route is not None:
            self._check_uids(as_ids(route, "route").ravel())
        return self._signals.ahead(uid, s, horizon, route)

    # -- helpers ----------------------------------------------------------------------------------

    def _check_uid(self, uid: int) -> int:
        u = as_id(uid, "uid")  # int(7.9) would be lane 7, silently
        if not 0 <= u < self.n_lanes:
            raise QueryError(f"no lane with uid {u} (the network has {self.n_lanes} lanes)")
        return u

    def _check_uids(self, uid: IntArray) -> None:
        bad = (uid < 0) | (uid >= self.n_lanes)
        if bad.any():
            self._check_uid(int(uid[np.flatnonzero(bad)[0]]))


def _ramp(counts: IntArray) -> IntArray:
    """``[0..c0-1, 0..c1-1, ...]`` for a vector of counts."""
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    return np.arange(total, dtype=np.int64) - np.repeat(starts, counts)


def _csr(src: IntArray, dst: IntArray, n: int) -> tuple[IntArray, IntArray]:
    """CSR arrays for edges already sorted by ``src``."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, dst.astype(np.int64)


def _contacts(net: RoadNetwork) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Every lane-end contact the file declares, as ``(a, end_a, b, end_b)`` arrays.

    ``end`` is 0 for a lane's start (its section's s0) and 1 for its end (s1).
    """
    lanes = net.lanes
    roads = net.roads
    road_index = {rid: i for i, rid in enumerate(net.road_ids)}
    first_sec = lanes.road_first_section
    n_sec = lanes.road_section_count
    center = lanes.sec_center_uid
    sec_first = lanes.sec_first_uid
    sec_count = lanes.sec_count
    lane_ids = lanes.lane_id
    out: list[tuple[int, int, int, int]] = []

    def uid(sec: int, lane_id: int) -> int:
        u = int(center[sec]) - lane_id
        if lane_id == 0 or not sec_first[sec] <= u < sec_first[sec] + sec_count[sec]:
            return -1
        return u if lane_ids[u] == lane_id else -1

    def contact_section(road: int, contact: str) -> tuple[int, int]:
        if contact == "start":
            return int(first_sec[road]), _START
        return int(first_sec[road] + n_sec[road] - 1), _END

    for r, road in enumerate(roads):
        count = int(n_sec[r])
        if count == 0:
            continue
        base = int(first_sec[r])
        # Where the first section's predecessors / last section's successors live.
        before = after = None
        if road.predecessor is not None and road.predecessor.element_type == "road":
            p = road_index.get(road.predecessor.element_id)
            if p is not None and n_sec[p] > 0:
                before = contact_section(p, road.predecessor.contact_point or "end")
        if road.successor is not None and road.successor.element_type == "road":
            q = road_index.get(road.successor.element_id)
            if q is not None and n_sec[q] > 0:
                after = contact_section(q, road.successor.contact_point or "start")
        for k, section in enumerate(road.sections):
            sec = base + k
            prev = (sec - 1, _END) if k > 0 else before
            nxt = (sec + 1, _START) if k + 1 < count else after
            for ln in section.lanes:
                if ln.id == 0:
                    continue
                u = uid(sec, ln.id)
                if prev is not None:
                    for j in ln.predecessors:
                        v = uid(prev[0], j)
                        if v >= 0:
                            out.append((u, _START, v, prev[1]))
                if nxt is not None:
                    for j in ln.successors:
                        v = uid(nxt[0], j)
                        if v >= 0:
                            out.append((u, _END, v, nxt[1]))

    for junction in net.junctions:
        for conn in junction.connections:
            inc = road_index.get(conn.incoming_road)
            con = road_index.get(conn.connecting_road)
            if inc is None or con is None or n_sec[inc] == 0 or n_sec[con] == 0:
                continue
            con_sec, con_end = contact_section(con, conn.contact_point)
            for inc_end in _incoming_ends(roads[inc], roads[con], junction.id, conn.contact_point):
                inc_sec, _ = contact_section(inc, "start" if inc_end == _START else "end")
                for link in conn.lane_links:
                    u, v = uid(inc_sec, link.from_lane), uid(con_sec, link.to_lane)
                    if u >= 0 and v >= 0:
                        out.append((u, inc_end, v, con_end))

    if not out:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    arr = np.array(out, dtype=np.int64)
    return arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]


def _incoming_ends(incoming: Road, connecting: Road, junction_id: str, contact: str) -> list[int]:
    """The end(s) of a connection's incoming road at the junction (0: start, 1: end)."""
    ends = [
        end
        for link, end in ((incoming.predecessor, _START), (incoming.successor, _END))
        if link is not None and link.element_type == "junction" and link.element_id == junction_id
    ]
    if ends:
        return ends
    # The incoming road does not name the junction: trust the connecting road's own link
    # back to the incoming road at the connection's contact point.
    link = connecting.predecessor if contact == "start" else connecting.successor
    if link is not None and link.element_type == "road" and link.element_id == incoming.id:
        return [_START if link.contact_point == "start" else _END]
    return []
