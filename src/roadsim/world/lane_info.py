"""Per-lane-uid tables of a simulation: where each lane record lies along its road, where
it leads (`roadsim.world.routing`), how fast and how far traffic may drive in it, where it
stops for a light, and its samples (`roadsim.world.lane_samples.LaneSamples`).

Everything here is precomputed per lane uid once per simulation (`LaneInfo`) so that the
per-tick work is array indexing; `LaneInfo.arrays` bundles the tables for compiled kernels
(`roadsim.world.lane_kernels.LaneArrays`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.sparse import csgraph

from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.road.lanes import DRIVABLE_TYPES
from roadsim.road.network import RoadNetwork
from roadsim.world.codes import (
    CONTINUES,
    ENVELOPE_DECEL,
    LANE_DROP,
    LONG_LINK,
    LONG_MIN_RADIUS,
    LONG_TURN_RADIUS,
    LONG_WIDTH,
    MAP_EDGE,
)
from roadsim.world.lane_kernels import SAMPLE_COLUMNS, LaneArrays
from roadsim.world.lane_samples import LaneSamples
from roadsim.world.overlaps import Overlaps, edge_stretches, unjoined_overlaps
from roadsim.world.routing import bypass_empty, first_of_rows

if TYPE_CHECKING:
    from roadsim.world.traffic_lights import StopLines

__all__ = ["DEFAULT_SPEED_LIMIT", "MIN_USABLE_WIDTH", "LaneInfo"]

DEFAULT_SPEED_LIMIT = 50 / 3.6  # m/s where a map says nothing
MIN_USABLE_WIDTH = 2.5  # m: a lane that drops ends for traffic where it gets narrower
_LINE = 64  # bytes in a cache line
_PIECE = 2.0  # m: a lane record shorter than this passes on the envelope after it


MIN_FIT_WIDTH = 2.0  # m: a lane narrower than this is too narrow for traffic (`LaneInfo._fits`)
_WIDTH_SAMPLES = 64  # points along a lane at which its width is looked at


class _Fits(NamedTuple):
    """Where vehicles fit in each lane, by uid (`LaneInfo._fits`)."""

    usable_from: FloatArray  # progress from which it is wide enough (0: from its start)
    narrows_mid: FloatArray  # where it gets too narrow and widens again later (inf: never)
    tail_from: FloatArray  # where the narrow stretch that reaches its end begins (length)
    drop_end: FloatArray  # the same where narrower than `MIN_USABLE_WIDTH` (length)
    widest: FloatArray  # its greatest width (m; inf for lanes not looked at)


_TIGHT_HOPS = 48  # pieces of a connecting road looked back through, at most


class LaneInfo:
    """Per-lane-uid tables for the traffic model; built once, read-only afterwards.

    Args:
        net: The road network, prepared or not.
        stop_lines: Where traffic stops for the lights (the traffic-light plan's
            ``stop_lines``); none by default.
        route: Road indices a route prefers at forks, in order (the ego's ``route``);
            none by default.

    Attributes:
        s0, s1: The lane record's section range along s (m).
        sign: +1 driven along +s, -1 against, 0 center lanes (float).
        length: ``s1 - s0`` (m).
        road: Road index.
        drivable: A car may drive on it (`roadsim.road.lanes.DRIVABLE_TYPES`).
        junction: Index into ``net.junctions`` of the lane's road, -1 outside junctions.
        speed_limit: m/s, from lane speed records, the road type's speed, or
            `DEFAULT_SPEED_LIMIT`.
        next_ptr, next_idx: CSR of the drivable successors in driving direction (none for
            a lane that gets too narrow on the way, see ``usable``).
        prev_ptr, prev_idx: CSR of the drivable predecessors.
        first_next, first_prev: The first drivable successor and predecessor (-1: none).
        beside: The drivable lanes of the same direction of travel to the left and to the
            right of each lane (columns 0 and 1; -1: none), shape (n, 2).
        end_kind: CONTINUES, LANE_DROP (no successor but its section's other drivable
            lanes go on, or a lane that gets too narrow on the way with a drivable lane of
            its direction beside it) or MAP_EDGE (the road network ends there).
        usable: Progress up to which a vehicle may drive in the lane: the lane's length,
            or where a lane that drops gets narrower than `MIN_USABLE_WIDTH`, or where a
            lane gets too narrow (`_fits`) and widens again further on (parking bays drawn
            as one lane), or where it narrows toward its end even though it has a
            successor (a ramp that tapers and links into the lane beside it).
        usable_from: Progress from which a vehicle fits in the lane: 0, or for a lane that
            opens (too narrow at its start, `_fits`), where it gets wide enough; its length
            for a lane too narrow all along. Traffic is placed and comes back only beyond it.
        widest: The lane's greatest width (m; inf for lanes that are not drivable).
        drop_at: Progress at which a lane, or the single chain of lanes it leads into,
            drops: where traffic must have left it (inf: no drop ahead).
        stop_lines: The stop lines given, or None.
        stop_p: Progress of the lane's first stop line (m; inf: none).
        stop_signal: The light that governs that stop line (index into the plan's
            ``signals``; -1: none).
        route_next: At a fork, the successor toward the earliest road of ``route`` it
            leads to (through a junction's connecting lanes), for the vehicle that follows
            the route (`roadsim.world.lane_kernels.choose_next`); -1 elsewhere.
        tight: How much long vehicles avoid a lane, where they can
            (`roadsim.world.lane_kernels.choose_next`): 1 for a connecting lane of a
            junction that turns tighter than `roadsim.world.codes.LONG_MIN_RADIUS`; 2 for
            a lane closed to them (`_closed_to_long`: a turn they cannot make, a link with
            no room to wait on, a lane narrower than they are); 0 elsewhere.
        table: Sampled centre lines, boundaries and curvature (`LaneSamples`).
        arrays: All of these as one bundle for compiled kernels (`LaneArrays`).
    """

    def __init__(
        self,
        net: RoadNetwork,
        stop_lines: StopLines | None = None,
        route: Sequence[int] = (),
    ) -> None:
        lanes = net.lanes
        n = len(lanes.lanes)
        self.net = net
        self.n = n
        self.s0: FloatArray = lanes.sec_s0[lanes.section]
        self.s1: FloatArray = lanes.sec_s1[lanes.section]
        self.length: FloatArray = self.s1 - self.s0
        self.sign: FloatArray = net.driving_sign(np.arange(n, dtype=np.int64))
        self.road: IntArray = lanes.road.copy()
        self.drivable: BoolArray = np.array(
            [t in DRIVABLE_TYPES for t in lanes.type_name], dtype=bool
        )
        self.drivable &= self.sign != 0
        junction_index = {j.id: k for k, j in enumerate(net.junctions)}
        road_junction = np.array(
            [junction_index.get(j, -1) if j is not None else -1 for j in net.road_junction],
            dtype=np.int64,
        )
        self.junction: IntArray = road_junction[lanes.road] if n else np.zeros(0, np.int64)
        self.speed_limit: FloatArray = self._speed_limits(net)

        graph = net.graph
        src = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.succ_ptr))
        dst = graph.succ_idx.astype(np.int64)
        keep = self.drivable[dst]
        src, dst = src[keep], dst[keep]
        side = np.stack([graph.left_uid, graph.right_uid], axis=1)
        at = np.maximum(side, 0)
        same_way = (side >= 0) & self.drivable[at] & (self.sign[at] == self.sign[:, None])
        self.beside: IntArray = np.where(same_way, side, -1).astype(np.int64)
        fits = self._fits(net)
        self.usable_from: FloatArray = fits.usable_from
        self.widest: FloatArray = fits.widest
        # A lane that gets too narrow and widens again (parking bays drawn as one driving
        # lane), or that ends narrow (a ramp that tapers and links into the lane beside it,
        # or into a lane as narrow), leads nowhere where a lane of its direction runs
        # beside it: its traffic merges out before it as before a lane drop.
        ends_narrow = fits.tail_from < self.length
        narrows_at = np.minimum(fits.narrows_mid, np.where(ends_narrow, fits.tail_from, np.inf))
        narrows_at[~(self.beside >= 0).any(axis=1) | (self.junction >= 0)] = np.inf
        keep = ~np.isfinite(narrows_at[src])
        src, dst = src[keep], dst[keep]
        src, dst = bypass_empty(src, dst, self.length, self.drivable)
        counts = np.bincount(src, minlength=n)
        self.next_ptr: IntArray = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.next_idx: IntArray = dst[np.argsort(src, kind="stable")]
        self.next_count: IntArray = counts.astype(np.int64)
        # The lane each entry of ``next_idx`` follows (by uid).
        self._next_from: IntArray = np.repeat(np.arange(n), self.next_count)
        back = np.argsort(dst, kind="stable")
        back_counts = np.bincount(dst, minlength=n)
        self.prev_ptr: IntArray = np.concatenate(([0], np.cumsum(back_counts))).astype(np.int64)
        self.prev_idx: IntArray = src[back]
        self.first_next: IntArray = first_of_rows(self.next_ptr, self.next_idx)
        self.first_prev: IntArray = first_of_rows(self.prev_ptr, self.prev_idx)

        # A lane with no drivable successor either drops (a neighbour of the same direction
        # in its section goes on: merge before its end) or is where the map ends.
        end = np.full(n, CONTINUES, dtype=np.int64)
        dead = (self.next_count == 0) & self.drivable
        # (per section and driving direction: 2 * section + (sign > 0))
        side = 2 * lanes.section + (self.sign > 0)
        side_goes_on = np.zeros(2 * lanes.sections, dtype=bool)
        np.logical_or.at(side_goes_on, side, (self.next_count > 0) & self.drivable)
        end[dead] = np.where(side_goes_on[side[dead]], LANE_DROP, MAP_EDGE)
        end[np.isfinite(narrows_at)] = LANE_DROP
        self.end_kind: IntArray = end
        # (a lane that drops ends where it gets narrower than `MIN_USABLE_WIDTH`)
        dropped = np.where(end == LANE_DROP, fits.drop_end, self.length)
        self.usable: FloatArray = np.minimum(dropped, narrows_at)
        self.drop_at: FloatArray = self._drop_distances()
        self.stop_lines = stop_lines
        self.stop_p, self.stop_signal = self._first_stops(stop_lines)
        self.table = LaneSamples(
            net,
            np.flatnonzero(self.sign != 0),
            self.s0,
            self.s1,
            self.sign,
            dense=np.flatnonzero(self.junction >= 0),
        )
        owner = np.repeat(np.arange(n), self.table.count)
        bend = np.zeros(n)
        np.maximum.at(bend, owner, np.abs(self.table.curvature))
        self.tight: IntArray = self._open_traps(
            np.maximum(
                self._tight_turns(bend > 1.0 / LONG_MIN_RADIUS),
                2
                * self._closed_to_long(
                    (bend > 1.0 / LONG_TURN_RADIUS)
                    | self.links_shorter(LONG_LINK)
                    | (self.widest < LONG_WIDTH)
                ),
            )
        )
        #: The lanes (by uid) of the circuits long vehicles keep to once there
        #: (`_closed_circuits`), where traffic places them: on the other lanes they only
        #: pass on their way into one.
        self._ways_long = self._ways_of_long(self.tight)
        self.circuits_of_long: BoolArray = self._closed_circuits(self._ways_long)[1]
        self.route_next: IntArray = self._route_next(route)
        self.arrays = self._bundle()

    def _first_stops(self, lines: StopLines | None) -> tuple[FloatArray, IntArray]:
        """Per lane, the progress of its first stop line in driving direction and the
        light that governs it (inf and -1 for lanes without one)."""
        stop_p = np.full(self.n, np.inf)
        stop_signal = np.full(self.n, -1, dtype=np.int64)
        if lines is not None and len(lines.uid):
            sp = self.progress(lines.uid, lines.s)
            order = np.lexsort((sp, lines.uid))
            su, sp, sig = lines.uid[order], sp[order], lines.signal_index[order]
            first = np.concatenate(([True], su[1:] != su[:-1]))
            stop_p[su[first]] = sp[first]
            stop_signal[su[first]] = sig[first]
        return stop_p, stop_signal

    def _route_next(self, route: Sequence[int]) -> IntArray:
        out = np.full(self.n, -1, dtype=np.int64)
        rank: dict[int, int] = {}
        for k, road in enumerate(route):
            rank.setdefault(int(road), k)
        if not rank:
            return out
        for u in np.flatnonzero(self.next_count > 1).tolist():
            best, best_rank = -1, len(rank)
            for c in self.next_idx[self.next_ptr[u] : self.next_ptr[u + 1]].tolist():
                # The road it leads to: its own, or past the junction's connecting lanes.
                v, hops = c, 0
                while v >= 0 and int(self.road[v]) not in rank and self.junction[v] >= 0:
                    v, hops = int(self.first_next[v]), hops + 1
                    if hops > 16:
                        break
                k = rank.get(int(self.road[v]), len(rank)) if v >= 0 else len(rank)
                if k < best_rank:
                    best, best_rank = c, k
            out[u] = best
        return out

    def _drop_distances(self, hops: int = 6) -> FloatArray:
        """Progress (from each lane's start) where the lane, or the one lane it leads into,
        and so on, drops (see ``usable``); inf where no drop lies within ``hops`` lanes."""
        out = np.where(self.end_kind == LANE_DROP, self.usable, np.inf)
        single = self.next_count == 1
        nxt = np.maximum(self.first_next, 0)
        for _ in range(hops):
            out = np.where(single, np.minimum(out, self.length + out[nxt]), out)
        return out

    def _widths(self, net: RoadNetwork, lanes: IntArray) -> tuple[FloatArray, FloatArray]:
        """The widths of ``lanes`` at `_WIDTH_SAMPLES` points from start to end: ``(frac,
        width)``, the points as fractions of each lane's length and the widths (m), shape
        (len(lanes), `_WIDTH_SAMPLES`)."""
        frac = np.linspace(0.0, 1.0, _WIDTH_SAMPLES)
        u = np.repeat(lanes, _WIDTH_SAMPLES)
        p = np.tile(frac, lanes.size) * self.length[u]
        width = np.abs(net.uid_width(u, self.road_s(u, p))).reshape(lanes.size, _WIDTH_SAMPLES)
        return frac, width

    def _fits(self, net: RoadNetwork) -> _Fits:
        """Where a vehicle fits in each drivable lane, from its widths (see `_Fits`).

        A lane is narrow where it is narrower than `MIN_USABLE_WIDTH` or, for a lane
        narrower than that all along, than 80% of its widest; and always where it is
        narrower than `MIN_FIT_WIDTH` (at the resolution of `_WIDTH_SAMPLES`)."""
        n = self.n
        out = _Fits(
            np.zeros(n), np.full(n, np.inf), self.length.copy(), self.length.copy(),
            np.full(n, np.inf),
        )  # fmt: skip
        lanes = np.flatnonzero(self.drivable & (self.length > 0.0))
        if lanes.size == 0:
            return out
        frac, width = self._widths(net, lanes)
        out.widest[lanes] = width.max(axis=1)
        enough = np.minimum(MIN_USABLE_WIDTH, np.maximum(0.8 * out.widest[lanes], MIN_FIT_WIDTH))
        narrow = width < enough[:, None]
        length = self.length[lanes]
        at = frac[None, :] * length[:, None]
        wide = ~narrow
        first_wide = np.where(wide.any(axis=1), frac[wide.argmax(axis=1)] * length, length)
        out.usable_from[lanes] = np.where(narrow[:, 0], first_wide, 0.0)
        # A narrow stretch past the start with a wide one after it, within the lane.
        wide_later = np.flip(np.logical_or.accumulate(np.flip(wide, axis=1), axis=1), axis=1)
        mid = narrow[:, :-1] & wide_later[:, 1:] & (at[:, :-1] > out.usable_from[lanes, None])
        hit = mid.any(axis=1)
        out.narrows_mid[lanes[hit]] = at[hit, mid[hit].argmax(axis=1)]
        # The narrow stretch that reaches the lane's end, and for a lane that drops, the
        # stretch narrower than `MIN_USABLE_WIDTH` that does.
        out.tail_from[lanes] = _end_stretch(narrow, at, length)
        out.drop_end[lanes] = _end_stretch(width < MIN_USABLE_WIDTH, at, length)
        return out

    def _speed_limits(self, net: RoadNetwork) -> FloatArray:
        lanes = net.lanes
        out = np.full(len(lanes.lanes), DEFAULT_SPEED_LIMIT)
        for uid, lane in enumerate(lanes.lanes):
            if lane.speeds:
                out[uid] = lane.speeds[0].max_speed
                continue
            road = net.roads[int(lanes.road[uid])]
            if road.speed_limits:
                s0 = float(lanes.sec_s0[lanes.section[uid]])
                limit = road.speed_limits[0][1]
                for s, value in road.speed_limits:
                    if s <= s0 + 1e-9:
                        limit = value
                out[uid] = limit
        return out

    def _bundle(self) -> LaneArrays:
        """Everything above as one bundle for compiled kernels (`roadsim.world.lane_kernels`).

        The per-lane arrays are columns of two row-major matrices, one of floats and one
        of integers, so that what a kernel reads of one lane sits in one or two cache
        lines instead of one line per array (a kernel looks up a dozen fields of a few
        lanes per vehicle, and on a large map the tables are far bigger than the caches).
        """
        t, graph, n = self.table, self.net.graph, self.n
        floats = {
            "length": self.length,
            "sign": self.sign,
            "s0": self.s0,
            "s1": self.s1,
            "spacing": t.spacing,
            "speed_limit": self.speed_limit,
            "usable": self.usable,
            "drop_at": self.drop_at,
            "envelope_start": self._envelope_through_pieces(t.envelope_sq[t.ptr[:-1]]),
            "stop_p": self.stop_p,
        }
        ints = {
            "ptr": t.ptr,
            "samples": t.count,
            "next_ptr": self.next_ptr,
            "next_count": self.next_count,
            "prev_ptr": self.prev_ptr,
            "junction": self.junction,
            "section": self.net.lanes.section,
            "end_kind": self.end_kind,
            "left_uid": graph.left_uid,
            "right_uid": graph.right_uid,
            "drivable": self.drivable,
            "first_next": self.first_next,
            "road": self.road,
            "stop_signal": self.stop_signal,
            "tight": self.tight,
            "route_next": self.route_next,
        }
        rows = n + 1  # CSR pointers have one entry more than there are lanes
        float_rows = _cache_aligned(np.zeros((rows, 16)))
        int_rows = _cache_aligned(np.zeros((rows, 16), dtype=np.int64))
        columns: dict[str, npt.NDArray[np.generic]] = {}
        for table, values in ((float_rows, floats), (int_rows, ints)):
            for c, (name, column) in enumerate(values.items()):
                table[: column.shape[0], c] = column
                columns[name] = table[: column.shape[0], c]
        return LaneArrays(
            next_idx=self.next_idx.astype(np.int64),
            prev_idx=self.prev_idx.astype(np.int64),
            sample=_cache_aligned(np.column_stack([getattr(t, name) for name in SAMPLE_COLUMNS])),
            **columns,  # type: ignore[arg-type]
        )

    def _tight_turns(self, curving: BoolArray) -> IntArray:
        """Junction lanes a long vehicle avoids where the fork before them offers another
        way (1, by uid): those that bend tighter than `LONG_MIN_RADIUS` (``curving``), and
        those that lead only into such a lane, or a road's lane that bends so tightly
        (some maps draw a sharp corner as a road): the fork before the junction is the
        last place to choose."""
        drivable = self.drivable.astype(bool)
        inside = self.junction >= 0
        tight = curving & drivable
        for _ in range(_TIGHT_HOPS):  # back through the pieces of connecting roads
            leads = np.zeros(self.n, dtype=bool)
            has = self.next_count > 0
            into = tight[self.next_idx]
            owner = self._next_from
            every = np.ones(self.n, dtype=bool)
            np.logical_and.at(every, owner, into)
            leads[has] = every[has]
            grown = tight | (leads & inside & drivable)
            if np.array_equal(grown, tight):
                break
            tight = grown
        out: IntArray = (tight & inside).astype(np.int64)
        return out

    def _envelope_through_pieces(self, start: FloatArray) -> FloatArray:
        """The squared speed envelope at the start of each lane record (``start``), and
        for a piece shorter than `_PIECE` with one successor, the envelope of what
        follows it too (braking along the piece): traffic reads the envelope of the
        next `roadsim.agents.traffic_kernels.HOPS` records of its route only, and
        converted maps cut a connecting road into pieces of centimetres (Town07 has 258
        drivable records under a metre), so a sharp turn behind three of them was read
        too late: a car entered a 7 m turn at 11 m/s and swept into the next lane."""
        out = start.copy()
        piece = np.flatnonzero((self.length < _PIECE) & (self.next_count == 1))
        if piece.size == 0:
            return out
        after = self.first_next[piece]
        brake = 2.0 * ENVELOPE_DECEL * self.length[piece]
        for _ in range(piece.size):  # along chains of pieces, a piece a round
            lowered = np.minimum(out[piece], out[after] + brake)
            if np.array_equal(lowered, out[piece]):
                break
            out[piece] = lowered
        return out

    def linked(self, a: IntArray, b: IntArray) -> BoolArray:
        """Whether lane ``b[k]`` follows lane ``a[k]`` or leads into it (pairwise, by uid)."""
        out = np.zeros(a.size, dtype=bool)
        for ptr, idx in ((self.prev_ptr, self.prev_idx), (self.next_ptr, self.next_idx)):
            count = ptr[a + 1] - ptr[a]
            for k in range(int(np.max(count, initial=0))):
                has = count > k
                out[has] |= idx[ptr[a[has]] + k] == b[has]
        return out

    def links_shorter(self, limit: float) -> BoolArray:
        """The ordinary lanes (by uid) of roads shorter than ``limit`` metres that lead
        from one junction straight into another. A link may come in several lane
        sections (converted maps have sections of a few metres)."""
        inside = self.junction >= 0
        out = np.zeros(self.n, dtype=bool)
        before, after = self.first_prev, self.first_next
        starts = np.flatnonzero(~inside & (before >= 0))
        starts = starts[inside[before[starts]]]
        for u in starts.tolist():
            chain, length = [u], float(self.length[u])
            nxt = int(after[u])
            while nxt >= 0 and not inside[nxt] and length < limit and len(chain) <= 8:
                chain.append(nxt)
                length += float(self.length[nxt])
                nxt = int(after[nxt])
            if nxt >= 0 and inside[nxt] and length < limit:
                out[chain] = True
        return out

    def reach_of_long(self, start: IntArray) -> BoolArray:
        """The lanes (by uid) a long vehicle on one of the lanes ``start`` may come to:
        along `_ways_of_long`, and at a fork following the scenario's route, to its
        `route_next`."""
        ways = self._ways_long
        seen = np.zeros(self.n, dtype=bool)
        todo = [int(u) for u in np.unique(start) if u >= 0]
        seen[todo] = True
        while todo:
            u = todo.pop()
            after = ways.indices[ways.indptr[u] : ways.indptr[u + 1]].tolist()
            if self.route_next[u] >= 0:
                after.append(int(self.route_next[u]))
            for w in after:
                if not seen[w]:
                    seen[w] = True
                    todo.append(w)
        return seen

    def _ways_of_long(self, tight: IntArray) -> sparse.csr_matrix:
        """Where a long vehicle may go from each lane (a graph over uids): at every fork,
        to the successors it avoids least (``tight``;
        `roadsim.world.lane_kernels.choose_next`), and by a lane change, into the lanes
        `beside` it not closed to it, or from a lane that drops into any of them (as
        traffic does, `roadsim.agents.traffic_kernels`)."""
        owner = self._next_from
        level = tight[self.next_idx]
        least = np.full(self.n, np.iinfo(np.int64).max)
        np.minimum.at(least, owner, level)
        ahead = level == least[owner]
        side = self.beside.ravel()
        side_owner = np.repeat(np.arange(self.n), self.beside.shape[1])
        drops = self.end_kind[side_owner] == LANE_DROP
        changes = (side >= 0) & (drops | (tight[np.maximum(side, 0)] < 2))
        src = np.concatenate((owner[ahead], side_owner[changes]))
        dst = np.concatenate((self.next_idx[ahead], side[changes]))
        return sparse.csr_matrix(
            (np.ones(src.size, dtype=np.int8), (src, dst)), shape=(self.n, self.n)
        )

    def _open_traps(self, tight: IntArray) -> IntArray:
        """``tight`` with the turns long vehicles avoid (1) opened (0) where avoiding
        them would trap them: where the lanes they keep to (`_ways_of_long`) close into
        a circuit with no way out, the avoided turns that leave it. Else long vehicles
        gather in the circuit over time and fill it: on Town07 their ways led from
        everywhere into one circuit of 517 m of road (of 3,216 m), which held 23 of 26
        trucks and buses after ten minutes, and then stood. Opening its one way out (a
        right turn of 7 m radius) makes their circuit 1,178 m. Once: the turns out of
        the circuits this makes are left avoided (opening those too took long vehicles
        onto Town07's narrow bends, where they stood more)."""
        label, closed = self._closed_circuits(self._ways_of_long(tight))
        trapped = closed & (self.next_count > 1)  # (forks, by uid)
        owner = self._next_from
        after = self.next_idx
        out_of = trapped[owner] & (tight[after] == 1) & (label[after] != label[owner])
        out = tight.copy()
        out[after[out_of]] = 0
        return out

    def _closed_circuits(self, ways: sparse.csr_matrix) -> tuple[IntArray, BoolArray]:
        """The strongly connected parts of ``ways`` (`_ways_of_long`; their label, by uid),
        and the lanes of those that are circuits with no way out (by uid): where a long
        vehicle, once there, keeps driving for ever. A circuit goes on along the lanes
        (lanes side by side that only change into each other, like the last lanes before
        a map's edge, where vehicles leave, are none)."""
        count, label = csgraph.connected_components(ways, connection="strong")
        src, dst = ways.nonzero()
        leaves = np.zeros(count, dtype=bool)
        leaves[label[src[label[src] != label[dst]]]] = True
        owner = self._next_from
        along = label[owner] == label[self.next_idx]
        circuit = np.zeros(count, dtype=bool)
        circuit[label[owner[along]]] = True
        return label, circuit[label] & ~leaves[label]

    def _closed_to_long(self, sharp: BoolArray) -> IntArray:
        """Lanes closed to long vehicles (1, by uid): those ``sharp`` (that turn tighter
        than they can, `LONG_TURN_RADIUS`, links between junctions shorter than
        `LONG_LINK`, with no room to wait on, or lanes narrower than they are,
        `LONG_WIDTH`), and those from which every way
        on leads into such a lane before the map ends (a lane that drops leads where the
        lanes beside it lead). A long vehicle that keeps out of them at every fork
        (`roadsim.world.lane_kernels.choose_next`) and never changes into one
        (`roadsim.agents.traffic_kernels`) meets no turn it cannot make; traffic places
        long vehicles outside them (`roadsim.sim.build`)."""
        drivable = self.drivable.astype(bool)
        closed = sharp & drivable
        owner = self._next_from
        leads_on = self.next_count > 0
        drops = np.flatnonzero(self.end_kind == LANE_DROP)
        beside = self.beside[drops]
        at = np.maximum(beside, 0)
        alongside = beside >= 0
        while True:  # back from the sharp turns, a lane a round
            every = np.ones(self.n, dtype=bool)
            np.logical_and.at(every, owner, closed[self.next_idx])
            doomed = leads_on & every
            doomed[drops] = ~(alongside & ~closed[at]).any(axis=1)
            grown = closed | (doomed & drivable)
            if np.array_equal(grown, closed):
                out: IntArray = closed.astype(np.int64)
                return out
            closed = grown

    # -- roads drawn over each other ---------------------------------------------------------------

    @cached_property
    def overlaps(self) -> Overlaps:
        """Stretches of lanes that lie over another road's lane with no junction or link
        between them, where traffic does not see across (`roadsim.world.overlaps`)."""
        return unjoined_overlaps(self)

    @cached_property
    def map_edges(self) -> tuple[FloatArray, FloatArray]:
        """Per lane uid, the progress at which traffic leaves the map on it and the one at
        which it comes back: its length and 0, but outside the `overlaps` that reach a
        dead end or an entry (`roadsim.world.overlaps.edge_stretches`)."""
        return edge_stretches(self, self.overlaps)

    # -- progress and road coordinates -------------------------------------------------------------

    def progress(self, uid: IntArray, s: FloatArray) -> FloatArray:
        """Distance along each lane record in driving direction (m)."""
        return np.where(self.sign[uid] >= 0, s - self.s0[uid], self.s1[uid] - s)

    def road_s(self, uid: IntArray, p: FloatArray) -> FloatArray:
        """The road s at progress ``p`` on each lane record."""
        return np.where(self.sign[uid] >= 0, self.s0[uid] + p, self.s1[uid] - p)


def _end_stretch(narrow: BoolArray, at: FloatArray, length: FloatArray) -> FloatArray:
    """Per row, where the run of ``narrow`` samples (at progress ``at``) that reaches the
    row's last sample begins; ``length`` where the last sample is not narrow."""
    last_wide = np.where(~narrow, np.arange(narrow.shape[1]), -1).max(axis=1)
    first = np.minimum(last_wide + 1, narrow.shape[1] - 1)
    out: FloatArray = np.where(narrow[:, -1], at[np.arange(at.shape[0]), first], length)
    return out


def _cache_aligned(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A C-contiguous copy of ``values`` that starts on a 64-byte boundary, a cache line:
    numpy aligns its arrays to 16 bytes only, and a table row of 64 bytes (a sample) or
    128 (a lane) that straddles a line costs one line more to read."""
    buffer = np.empty(values.nbytes + _LINE, dtype=np.uint8)
    skip = -buffer.ctypes.data % _LINE
    out = buffer[skip : skip + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    return out
