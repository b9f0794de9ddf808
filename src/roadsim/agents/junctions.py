"""Junctions: which connecting lanes conflict, and who may enter.

Two connecting lanes of a junction conflict when their centre lines cross or come within a
car's width of each other, or when they lead into the same lane (a merge). Lanes that leave
the same lane share their start, so only later contact counts for them.

Entry is first come, first served: a vehicle close to a connecting lane enters only if no
conflicting lane is held; a lane is held while a vehicle is on it or has been let in to it.
Candidates are served in order of their distance to the entry (then slot), so the outcome
is deterministic.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from roadsim.agents.perception import LaneOccupancy
from roadsim.world.routing import LaneInfo

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

YIELD_RANGE = 40.0  # m before a junction entry where a vehicle asks to enter, at least
_CONTACT = 3.0  # m: centre lines closer than this conflict
_CONTACT_ANGLED = 4.5  # m: ... or closer than this at an angle
_ANGLE_DEG = 20.0
SETBACK = 3.0  # m: a vehicle told to wait stops this far before the entry (and IDM's gap)
LONG_VEHICLE = 8.0  # m: vehicles at least this long use the wider conflicts
LONG_SWEEP = 2.0  # m added to the contact distances for long vehicles
_EXIT_MARGIN = 2.0  # m of room beyond its length a vehicle needs after a junction
_SHARED_START = 4.0  # m: lanes leaving the same lane may touch over their first metres


class JunctionGate:
    """Grants entry to junction lanes; keeps who has been let in between ticks."""

    def __init__(self, info: LaneInfo) -> None:
        self.info = info
        self.conflicts = junction_conflicts(info, 0.0)
        self.conflicts_long = junction_conflicts(info, LONG_SWEEP)
        self.granted: BoolArray = np.zeros(0, dtype=bool)
        self._position: IntArray = np.full(info.n, -1, dtype=np.int64)

    def resize(self, capacity: int) -> None:
        grown = np.zeros(capacity, dtype=bool)
        grown[: self.granted.size] = self.granted
        self.granted = grown

    def gaps(
        self,
        me: IntArray,
        lanes: IntArray,
        start: FloatArray,
        stop_distance: FloatArray,
        leader_gap: FloatArray,
        stop_before: FloatArray,
        occ: LaneOccupancy,
        half_length: FloatArray,
    ) -> FloatArray:
        """Gap to the entry of a junction lane each vehicle may not enter yet (inf: free).

        Args:
            me: Vehicle slots, shape (N,).
            lanes: The vehicle's lane and the next lanes of its route, shape (N, H).
            start: Distance from the vehicle's front bumper to the start of each of
                ``lanes`` (m), shape (N, H).
            stop_distance: Distance each vehicle needs to stop comfortably (m); a vehicle
                asks to enter from a little further than that.
            leader_gap: Gap to the vehicle ahead (m); only the first vehicle before an
                entry may ask (one further back waits behind it, holding nothing).
            stop_before: Distance to where the vehicle must stop anyway (a red light);
                a vehicle that must stop before the entry does not ask either.
            occ: This tick's lane occupancy: every actor on a connecting lane holds it.
            half_length: Half the length of every actor, by slot. A vehicle is let in
                only if the lane after the junction has room for it, so that a queue
                never blocks the junction; long vehicles sweep wider in turns and use
                the wider conflicts.
        """
        info = self.info
        n = me.size
        out = np.full(n, np.inf)
        if self.conflicts is None:
            return out
        in_junction = (lanes >= 0) & (info.junction[np.maximum(lanes, 0)] >= 0)
        now_in = in_junction[:, 0]
        # Held lanes: occupied now (by anyone), or granted; separately by long vehicles.
        on_junction = info.junction[occ.uid] >= 0
        held = np.zeros(info.n, dtype=bool)
        held[occ.uid[on_junction]] = True
        held_long = np.zeros(info.n, dtype=bool)
        long_entry = on_junction & (2.0 * half_length[occ.slot] >= LONG_VEHICLE)
        held_long[occ.uid[long_entry]] = True
        length = 2.0 * half_length[me]
        is_long = length >= LONG_VEHICLE
        ahead = in_junction[:, 1:] & ~now_in[:, None]
        has = ahead.any(axis=1)
        h = np.argmax(ahead, axis=1) + 1
        entry = start[np.arange(n), h]
        ask_range = np.maximum(YIELD_RANGE, stop_distance + 15.0)
        asking = has & (entry < ask_range) & (leader_gap > entry) & (stop_before > entry)
        cand = np.flatnonzero(asking)
        self.granted[me[~asking]] = False
        if cand.size == 0:
            return out
        lane = lanes[cand, h[cand]]
        already = self.granted[me[cand]]
        held[lane[already]] = True
        held_long[lane[already & is_long[cand]]] = True
        after = lanes[cand, np.minimum(h[cand] + 1, lanes.shape[1] - 1)]
        unknown = (h[cand] + 1 >= lanes.shape[1]) | (after < 0)
        first = occ.first(np.where(unknown, -1, after))
        rear = occ.p[np.maximum(first, 0)] - half_length[occ.slot[np.maximum(first, 0)]]
        fits = (first < 0) | (rear > length[cand] + _EXIT_MARGIN)
        conf, conf_long = self.conflicts, self.conflicts_long
        assert conf_long is not None
        ask = np.flatnonzero(~already)
        if ask.size:
            grant = self._serve(
                lane[ask],
                is_long[cand[ask]],
                fits[ask],
                held,
                held_long,
                conf,
                conf_long,
                np.lexsort((me[cand[ask]], entry[cand[ask]])),
            )
            refused = cand[ask[~grant]]
            out[refused] = entry[refused] - SETBACK
            self.granted[me[refused]] = False
            self.granted[me[cand[ask[grant]]]] = True
        return out

    def _serve(
        self,
        lane: IntArray,
        is_long: BoolArray,
        fits: BoolArray,
        held: BoolArray,
        held_long: BoolArray,
        conf: Conflicts,
        conf_long: Conflicts,
        order: IntArray,
    ) -> BoolArray:
        """Which requests for ``lane`` are granted this tick, first come (``order``) first.

        A request is refused when a conflicting lane is held, when the lane after the
        junction is full, or when an earlier request of this tick conflicts with it (that
        one may itself be refused: it is then served next tick, a 50 ms delay).
        """
        m = lane.size
        near_row, near_lane = conf.rows(lane)
        wide_row, wide_lane = conf_long.rows(lane)
        blocked = np.zeros(m, dtype=bool)
        blocked[near_row[held[near_lane] & ~is_long[near_row]]] = True
        blocked[wide_row[held_long[wide_lane] | (held[wide_lane] & is_long[wide_row])]] = True
        # Conflicts among this tick's requests (wide ones where either vehicle is long),
        # and two requests for the same lane.
        rank = np.empty(m, dtype=np.int64)
        rank[order] = np.arange(m)
        position = self._position  # lane -> request, -1 elsewhere (reset below)
        position[lane] = np.arange(m)
        beaten = np.zeros(m, dtype=bool)
        for rows, lanes, wide in ((near_row, near_lane, False), (wide_row, wide_lane, True)):
            other = position[lanes]
            hit = other >= 0
            if wide:
                hit &= is_long[rows] | is_long[np.maximum(other, 0)]
            later = hit & (rank[rows] > rank[np.maximum(other, 0)])
            beaten[rows[later]] = True
        position[lane] = -1
        first_of_lane = np.zeros(m, dtype=bool)
        by_lane = np.lexsort((rank, lane))
        first_of_lane[
            by_lane[np.concatenate(([True], lane[by_lane][1:] != lane[by_lane][:-1]))]
        ] = True
        return ~blocked & fits & ~beaten & first_of_lane


class Conflicts:
    """A symmetric lane-to-lane relation in CSR form, with vectorised row look-ups."""

    def __init__(self, n: int, row: IntArray, col: IntArray) -> None:
        order = np.lexsort((col, row))
        self.ptr: IntArray = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=n), out=self.ptr[1:])
        self.idx: IntArray = col[order].astype(np.int64)

    def rows(self, lanes: IntArray) -> tuple[IntArray, IntArray]:
        """All (k, lane) with ``lane`` conflicting with ``lanes[k]``."""
        start, stop = self.ptr[lanes], self.ptr[lanes + 1]
        count = stop - start
        k = np.repeat(np.arange(lanes.size), count)
        offset = np.arange(k.size) - np.repeat(np.cumsum(count) - count, count)
        return k, self.idx[np.repeat(start, count) + offset]

    def of(self, lane: int) -> IntArray:
        """The lanes that conflict with ``lane``."""
        return self.idx[self.ptr[lane] : self.ptr[lane + 1]]


def junction_conflicts(info: LaneInfo, sweep: float) -> Conflicts | None:
    """Which connecting lanes of each junction conflict (symmetric, by lane uid).

    Two lanes conflict when they lead into the same lane (a merge), or when their centre
    lines come closer than `_CONTACT` metres, or closer than `_CONTACT_ANGLED` metres at
    an angle of more than `_ANGLE_DEG` degrees; ``sweep`` metres are added to both
    distances for vehicles that sweep wider. Lanes that leave the same lane share their
    first metres; contact there does not count.
    """
    table = info.table
    j_lanes = np.flatnonzero((info.junction >= 0) & info.drivable)
    if j_lanes.size == 0:
        return None
    rows: list[IntArray] = []
    cols: list[IntArray] = []
    order = np.argsort(info.junction[j_lanes], kind="stable")
    groups = np.split(j_lanes[order], np.flatnonzero(np.diff(info.junction[j_lanes[order]])) + 1)
    cos_limit = np.cos(np.radians(_ANGLE_DEG))
    for lanes in groups:
        m = lanes.size
        if m < 2:
            continue
        first, count = table.ptr[lanes], table.ptr[lanes + 1] - table.ptr[lanes]
        sample = np.concatenate([np.arange(f, f + c) for f, c in zip(first, count, strict=True)])
        owner = np.repeat(np.arange(m), count)
        along = (sample - np.repeat(first, count)) * np.repeat(table.spacing[lanes], count)
        x, y = table.x[sample], table.y[sample]
        dx, dy = table.dir_x[sample], table.dir_y[sample]
        dist = np.hypot(x[:, None] - x[None, :], y[:, None] - y[None, :])
        angled = np.abs(dx[:, None] * dx[None, :] + dy[:, None] * dy[None, :]) < cos_limit
        touch = (dist < _CONTACT + sweep) | ((dist < _CONTACT_ANGLED + sweep) & angled)
        # Lanes from the same lane: not at their shared start.
        pred = [set(info.prev_idx[info.prev_ptr[u] : info.prev_ptr[u + 1]].tolist()) for u in lanes]
        succ = [set(info.next_idx[info.next_ptr[u] : info.next_ptr[u + 1]].tolist()) for u in lanes]
        near_start = along < _SHARED_START
        same_pred = np.array([[bool(pa & pb) for pb in pred] for pa in pred])
        touch &= ~(same_pred[owner][:, owner] & near_start[:, None] & near_start[None, :])
        starts = np.concatenate(([0], np.cumsum(count)[:-1]))
        hits = np.logical_or.reduceat(np.logical_or.reduceat(touch, starts, axis=0), starts, axis=1)
        merge = np.array([[bool(sa & sb) for sb in succ] for sa in succ])
        pairs = (hits | merge) & ~np.eye(m, dtype=bool)
        a, b = np.nonzero(pairs)
        rows.append(lanes[a])
        cols.append(lanes[b])
    row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    col = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    return Conflicts(info.n, row.astype(np.int64), col.astype(np.int64))
