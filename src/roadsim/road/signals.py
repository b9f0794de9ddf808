"""Which signals apply to which lane, and the signals ahead of a vehicle on the lane graph.

A signal applies to a lane (OpenDRIVE 1.8, 14.2 and 13.2 for ``<validity>``) when

- the lane lies in the lane section at the signal's s on the signal's road,
- the lane id is within one of the signal's validity ranges (a signal without validity
  applies to every lane of the road; so does one whose only validity is ``0:0``, see
  below), and
- the signal's orientation matches the lane's driving direction: ``+`` is valid for
  traffic along +s, ``-`` for traffic against s, ``none`` for both.

A validity of only ``fromLane="0" toLane="0"`` would restrict a signal to the center lane,
which no vehicle drives in; exporters write it for traffic lights and signs meant for the
whole road (VIRES ROD in esmini's ``multi_intersections.xodr``, ``positive18.xodr`` of
qc-opendrive), so it is read as no restriction.

A ``<signalReference>`` (14.4) places an existing signal again: it is resolved to the
referenced signal's content (type, value, country, ...) at the reference's own road, s, t,
orientation and validity.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from roadsim._types import FloatArray, IntArray
from roadsim.road.model import Signal

if TYPE_CHECKING:
    from roadsim.road.graph import LaneGraph
    from roadsim.road.network import RoadNetwork

__all__ = ["SignalAhead", "SignalIndex", "resolve_signal_references"]


@dataclass(frozen=True, slots=True)
class SignalAhead:
    """A signal ahead of a vehicle.

    Attributes:
        signal: The signal, references resolved (`resolve_signal_references`).
        distance: Distance along the lanes driven from the query position to the signal's
            s (m, >= 0), measured along s of each road.
        lane: The uid of the lane on which the signal applies at that distance.
        road_id: The id of the road the signal (or the reference) is placed on.
    """

    signal: Signal
    distance: float
    lane: int
    road_id: str


def resolve_signal_references(signals: Sequence[Signal]) -> tuple[Signal, ...]:
    """Signals with every ``signalReference`` replaced by the signal it names.

    The result keeps the reference's road, s, t, orientation and validities, and takes
    everything else from the referenced signal (the first with that id, if the file
    repeats an id). A reference to an id that no signal has is dropped.
    """
    by_id: dict[str, Signal] = {}
    for sig in signals:
        if sig.reference_of is None:
            by_id.setdefault(sig.id, sig)
    out = []
    for sig in signals:
        if sig.reference_of is None:
            out.append(sig)
            continue
        target = by_id.get(sig.reference_of)
        if target is None:
            continue
        out.append(
            dataclasses.replace(
                target,
                road_id=sig.road_id,
                s=sig.s,
                t=sig.t,
                orientation=sig.orientation,
                validities=sig.validities,
                reference_of=sig.reference_of,
                line=sig.line,
            )
        )
    return tuple(out)


class SignalIndex:
    """The signals of a network indexed by the lanes they apply to.

    Args:
        net: The road network.
        graph: Its lane graph (for driving directions, lengths and successors).

    Attributes:
        signals: Every signal, references resolved, in file order.
        lane_ptr, lane_signal, lane_pos: CSR lists per lane uid: the signals applying to
            lane ``u`` are ``signals[lane_signal[lane_ptr[u]:lane_ptr[u + 1]]]``, each at
            ``lane_pos`` metres from the lane's entry in its driving direction.
    """

    def __init__(self, net: RoadNetwork, graph: LaneGraph) -> None:
        self._graph = graph
        self.signals: tuple[Signal, ...] = resolve_signal_references(net.signals)
        lanes = net.lanes
        n = graph.n_lanes
        pairs: list[tuple[int, int, float]] = []
        if self.signals:
            road = net.road_index([sig.road_id for sig in self.signals])
            s = np.array([sig.s for sig in self.signals], dtype=np.float64)
            sections = lanes.section_at(road, s)
        for i, sig in enumerate(self.signals):
            sec = int(sections[i])
            s0, s1 = float(lanes.sec_s0[sec]), float(lanes.sec_s1[sec])
            first = int(lanes.sec_first_uid[sec])
            restricted = any(v.from_lane != 0 or v.to_lane != 0 for v in sig.validities)
            for u in range(first, first + int(lanes.sec_count[sec])):
                sign = int(graph.driving_sign[u])
                if sign == 0 or not _orientation_matches(sig.orientation, sign):
                    continue
                lane_id = int(lanes.lane_id[u])
                if restricted and not any(
                    v.from_lane <= lane_id <= v.to_lane for v in sig.validities
                ):
                    continue
                pos = sig.s - s0 if sign > 0 else s1 - sig.s
                pairs.append((u, i, min(max(pos, 0.0), s1 - s0)))
        pairs.sort()
        self.lane_signal: IntArray = np.array([p[1] for p in pairs], dtype=np.int64)
        self.lane_pos: FloatArray = np.array([p[2] for p in pairs], dtype=np.float64)
        lane_of = np.array([p[0] for p in pairs], dtype=np.int64)
        self.lane_ptr: IntArray = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(lane_of, minlength=n), out=self.lane_ptr[1:])
        self._s0 = lanes.sec_s0[lanes.section]
        self._s1 = lanes.sec_s1[lanes.section]

    def on_lane(self, uid: int) -> list[tuple[Signal, float]]:
        """The signals applying to a lane with their distance from its entry (m)."""
        a, b = int(self.lane_ptr[uid]), int(self.lane_ptr[uid + 1])
        return [
            (self.signals[int(i)], float(p))
            for i, p in zip(self.lane_signal[a:b], self.lane_pos[a:b], strict=True)
        ]

    def ahead(
        self, lane: int, s: float, horizon: float, route: Sequence[int] | None = None
    ) -> list[SignalAhead]:
        """Signals that apply to the lanes ahead of (lane, s), nearest first.

        Follows successors in driving direction up to ``horizon`` metres. With ``route``
        (lane uids the vehicle will follow, in order; ``lane`` looked up at its first
        occurrence, or just before the route if it is not in it) it takes the successor
        the route names; where the route names none
        (past its end, or where its next lane is no successor) and without a route, it
        explores every branch and reports each signal once, at its smallest distance.

        Args:
            lane: The vehicle's lane uid.
            s: Its position along the lane's road (m), clipped to the lane's section.
            horizon: How far ahead to look (m); signals at distances in [0, horizon].
            route: Optional lane uids the vehicle will follow.

        Returns:
            `SignalAhead` records sorted by distance (ties in file order).
        """
        graph = self._graph
        lane = int(lane)
        sign = int(graph.driving_sign[lane])
        if sign == 0 or not horizon >= 0.0:
            return []
        s0, s1 = float(self._s0[lane]), float(self._s1[lane])
        sc = min(max(float(s), s0), s1)
        done = sc - s0 if sign > 0 else s1 - sc
        best: dict[int, tuple[float, int]] = {}
        self._collect(lane, -done, done, horizon, best)
        cur, offset = lane, float(graph.length[lane]) - done
        if route is not None:
            r = [int(u) for u in route]
            k = r.index(lane) if lane in r else -1  # -1: the route starts after it
            while k + 1 < len(r) and offset <= horizon and r[k + 1] in _succ(graph, cur):
                cur = r[k + 1]
                self._collect(cur, offset, 0.0, horizon, best)
                offset += float(graph.length[cur])
                k += 1
        self._explore(cur, offset, horizon, best)
        order = sorted(best.items(), key=lambda item: (item[1][0], item[0]))
        return [
            SignalAhead(self.signals[i], dist, uid, self.signals[i].road_id)
            for i, (dist, uid) in order
        ]

    def _explore(
        self, start: int, offset: float, horizon: float, best: dict[int, tuple[float, int]]
    ) -> None:
        """Dijkstra over the successors of ``start``, entered ``offset`` m ahead."""
        graph = self._graph
        if offset > horizon:
            return
        seen: dict[int, float] = {}
        heap: list[tuple[float, int]] = []
        for v in _succ(graph, start):
            if offset < seen.get(v, np.inf):
                seen[v] = offset
                heapq.heappush(heap, (offset, v))
        while heap:
            off, v = heapq.heappop(heap)
            if off > seen[v]:
                continue
            self._collect(v, off, 0.0, horizon, best)
            nxt = off + float(graph.length[v])
            if nxt > horizon:
                continue
            for w in _succ(graph, v):
                if nxt < seen.get(w, np.inf):
                    seen[w] = nxt
                    heapq.heappush(heap, (nxt, w))

    def _collect(
        self,
        uid: int,
        offset: float,
        min_pos: float,
        horizon: float,
        best: dict[int, tuple[float, int]],
    ) -> None:
        """Records the signals of lane ``uid`` at ``offset + pos`` for pos >= min_pos."""
        a, b = int(self.lane_ptr[uid]), int(self.lane_ptr[uid + 1])
        for i, pos in zip(self.lane_signal[a:b].tolist(), self.lane_pos[a:b].tolist(), strict=True):
            if pos < min_pos:
                continue
            dist = max(offset + pos, 0.0)
            if dist <= horizon and (i not in best or dist < best[i][0]):
                best[i] = (dist, uid)


def _succ(graph: LaneGraph, uid: int) -> list[int]:
    return graph.succ_idx[graph.succ_ptr[uid] : graph.succ_ptr[uid + 1]].tolist()  # type: ignore[no-any-return]


def _orientation_matches(orientation: str, sign: int) -> bool:
    if orientation == "+":
        return sign > 0
    if orientation == "-":
        return sign < 0
    return True
