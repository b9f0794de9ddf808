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
from scipy.spatial import cKDTree

from roadsim.agents.perception import LaneOccupancy
from roadsim.world.routing import LaneInfo

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
UIntArray = npt.NDArray[np.uint64]

YIELD_RANGE = 40.0  # m before a junction entry where a vehicle asks to enter, at least
_CONTACT = 3.0  # m: centre lines closer than this conflict
_CONTACT_ANGLED = 4.5  # m: ... or closer than this at an angle
_ANGLE_DEG = 20.0
SHORT_LINK = 10.0  # m: a road this short between two junctions joins them into one box
GRANT_TIMEOUT = 8.0  # s a vehicle may hold a promised path without entering
SETBACK = 3.0  # m: a vehicle told to wait stops this far before the entry (and IDM's gap)
LONG_VEHICLE = 8.0  # m: vehicles at least this long use the wider conflicts
LONG_SWEEP = 2.0  # m added to the contact distances for long vehicles
_MAX_PIECES = 40  # lanes one path through a junction may have, at most
_EXIT_MARGIN = 2.0
_MOVING = 2.0  # m/s: traffic after the junction at this speed will make room  # m of room beyond its length a vehicle needs after a junction
_SHARED_START = 4.0  # m: lanes leaving the same lane may touch over their first metres


class JunctionGate:
    """Grants entry to junction lanes; keeps who has been let in between ticks."""

    def __init__(self, info: LaneInfo) -> None:
        self.info = info
        self.boxed = _boxed(info)
        self.conflicts = junction_conflicts(info, 0.0)
        self.conflicts_long = junction_conflicts(info, LONG_SWEEP)
        self.granted: BoolArray = np.zeros(0, dtype=bool)
        self.grant_age: FloatArray = np.zeros(0)
        self._position: IntArray = np.full(info.n, -1, dtype=np.int64)

    def resize(self, capacity: int) -> None:
        grown = np.zeros(capacity, dtype=bool)
        grown[: self.granted.size] = self.granted
        self.granted = grown
        age = np.zeros(capacity)
        age[: self.grant_age.size] = self.grant_age
        self.grant_age = age

    def gaps(
        self,
        me: IntArray,
        lanes: IntArray,
        start: FloatArray,
        stop_distance: FloatArray,
        leader_gap: FloatArray,
        ahead_goes: BoolArray,
        stop_before: FloatArray,
        occ: LaneOccupancy,
        half_length: FloatArray,
        salt: UIntArray,
        speed_all: FloatArray,
        dt: float,
    ) -> FloatArray:
        """Gap to the entry of a junction lane each vehicle may not enter yet (inf: free).

        Args:
            me: Vehicle slots, shape (N,).
            lanes: The vehicle's lane and the next lanes of its route, shape (N, H).
            start: Distance from the vehicle's front bumper to the start of each of
                ``lanes`` (m), shape (N, H).
            stop_distance: Distance each vehicle needs to stop comfortably (m); a vehicle
                asks to enter from a little further than that.
            leader_gap: Gap to the vehicle ahead (m).
            ahead_goes: The vehicle ahead has been let in or is in a junction. A vehicle
                asks only if it is the first before the entry, or the one ahead of it
                goes: one behind a vehicle that waits holds nothing (no deadlock), and
                one that follows a vehicle in asks early enough to stop if refused.
            stop_before: Distance to where the vehicle must stop anyway (a red light);
                a vehicle that must stop before the entry does not ask either.
            occ: This tick's lane occupancy: every actor on a connecting lane holds it.
            half_length: Half the length of every actor, by slot. A vehicle is let in
                only if the lane after the junction has room for it (or its traffic
                moves), so that a queue does not block the junction; long vehicles
                sweep wider in turns and use the wider conflicts.
            salt: Route salts of the vehicles, shape (N,).
            speed_all: Speed of every actor, by slot: a vehicle may also go when the
                traffic in the lane after the junction moves.
            dt: The time step (s).
        """
        info = self.info
        n = me.size
        out = np.full(n, np.inf)
        if self.conflicts is None:
            return out
        junction = np.where((lanes >= 0) & self.boxed[np.maximum(lanes, 0)], 0, -1)
        now_in = junction[:, 0] >= 0
        # The next entry: a connecting lane after an ordinary one (a vehicle in a junction
        # asks for the next junction too, when a short road leads to it).
        ahead = (junction[:, 1:] >= 0) & (junction[:, :-1] < 0)
        has = ahead.any(axis=1)
        h = np.where(has, np.argmax(ahead, axis=1) + 1, 0)
        entry = start[np.arange(n), h]
        ask_range = np.maximum(YIELD_RANGE, stop_distance + 15.0)
        first_or_follows = (leader_gap > entry) | ahead_goes
        asking = has & (entry < ask_range) & first_or_follows & (stop_before > entry)
        self.granted[me[~asking]] = False
        # A promise not used for `GRANT_TIMEOUT` seconds (the vehicle is stuck behind
        # others) is withdrawn, so that it cannot hold crossing traffic forever.
        self.grant_age[me] = np.where(self.granted[me] & asking, self.grant_age[me] + dt, 0.0)
        stale = asking & (self.grant_age[me] > GRANT_TIMEOUT)
        self.granted[me[stale]] = False
        self.grant_age[me[stale]] = 0.0
        out[stale] = entry[stale] - SETBACK  # it waits, and asks again next tick
        asking &= ~stale
        length = 2.0 * half_length[me]
        is_long = length >= LONG_VEHICLE
        # Held: every connecting lane with an actor on it, the paths of vehicles inside,
        # and the paths of vehicles let in; separately for long vehicles.
        on_junction = self.boxed[occ.uid]
        held = np.zeros(info.n, dtype=bool)
        held[occ.uid[on_junction]] = True
        held_long = np.zeros(info.n, dtype=bool)
        held_long[occ.uid[on_junction & (2.0 * half_length[occ.slot] >= LONG_VEHICLE)]] = True
        inside = np.flatnonzero(now_in)
        let_in = np.flatnonzero(asking & self.granted[me])
        holding = np.concatenate((inside, let_in))
        first = np.concatenate((lanes[inside, 0], lanes[let_in, h[let_in]]))
        row, path_lane, _ = self._paths(first, salt[holding])
        held[path_lane] = True
        held_long[path_lane[is_long[holding[row]]]] = True

        cand = np.flatnonzero(asking & ~self.granted[me])
        if cand.size == 0:
            return out
        k, need, after = self._paths(lanes[cand, h[cand]], salt[cand])
        # Room after the junction, in the lane its path leads into.
        first = occ.first(after)
        rear = occ.p[np.maximum(first, 0)] - half_length[occ.slot[np.maximum(first, 0)]]
        moving = speed_all[occ.slot[np.maximum(first, 0)]] > _MOVING
        fits = (first < 0) | (rear > length[cand] + _EXIT_MARGIN) | moving
        grant = self._serve(
            k,
            need,
            cand.size,
            is_long[cand],
            fits,
            held,
            held_long,
            np.lexsort((me[cand], entry[cand])),
        )
        refused = cand[~grant]
        out[refused] = entry[refused] - SETBACK
        self.granted[me[cand[grant]]] = True
        return out

    def _paths(self, first: IntArray, salt: UIntArray) -> tuple[IntArray, IntArray, IntArray]:
        """The path of each vehicle through a junction, from its connecting lane ``first``
        on along its route while the lanes are connecting lanes (connecting roads may come
        in pieces, and some maps join one junction straight to the next).

        Returns:
            ``(row, lane, after)``: the path as (vehicle row, lane) pairs, and for each
            vehicle the lane the path leads into (-1: none).
        """
        info = self.info
        rows = [np.arange(first.size)]
        lanes = [first]
        cur = first
        live = np.ones(first.size, dtype=bool)
        after = np.full(first.size, -1, dtype=np.int64)
        for _ in range(_MAX_PIECES):
            nxt = info.choose_next(salt, cur)
            inside = live & (nxt >= 0) & self.boxed[np.maximum(nxt, 0)]
            leaving = live & ~inside
            after[leaving] = nxt[leaving]
            live = inside
            if not live.any():
                break
            rows.append(np.flatnonzero(live))
            lanes.append(nxt[live])
            cur = np.where(live, nxt, cur)
        return np.concatenate(rows), np.concatenate(lanes), after

    def _serve(
        self,
        request: IntArray,
        lane: IntArray,
        m: int,
        is_long: BoolArray,
        fits: BoolArray,
        held: BoolArray,
        held_long: BoolArray,
        order: IntArray,
    ) -> BoolArray:
        """Which of ``m`` requests are granted this tick, first come (``order``) first.

        Request ``request[j]`` needs ``lane[j]`` (a request may need several lanes). It is
        refused when a lane conflicting with one it needs is held, when the lane after
        the junction is full, or when an earlier request of this tick conflicts with it
        (that one may itself be refused: it is then served next tick, a 50 ms delay).
        """
        conf, conf_long = self.conflicts, self.conflicts_long
        assert conf is not None and conf_long is not None
        rank = np.empty(m, dtype=np.int64)
        rank[order] = np.arange(m)
        near_pair, near_lane = conf.rows(lane)
        wide_pair, wide_lane = conf_long.rows(lane)
        near_req, wide_req = request[near_pair], request[wide_pair]
        blocked = np.zeros(m, dtype=bool)
        blocked[near_req[held[near_lane] & ~is_long[near_req]]] = True
        blocked[wide_req[held_long[wide_lane] | (held[wide_lane] & is_long[wide_req])]] = True
        # Conflicts among this tick's requests (wide ones where either vehicle is long),
        # and two requests that need the same lane.
        position = self._position  # lane -> the earliest request needing it (reset below)
        by_rank = np.argsort(-rank[request], kind="stable")  # latest first: earliest wins
        position[lane[by_rank]] = request[by_rank]
        beaten = np.zeros(m, dtype=bool)
        beaten[request[position[lane] != request]] = True
        for req, other_lane, wide in ((near_req, near_lane, False), (wide_req, wide_lane, True)):
            other = position[other_lane]
            hit = (other >= 0) & (other != req)
            if wide:
                hit &= is_long[req] | is_long[np.maximum(other, 0)]
            beaten[req[hit & (rank[req] > rank[np.maximum(other, 0)])]] = True
        position[lane] = -1
        return ~blocked & fits & ~beaten


def _boxed(info: LaneInfo) -> BoolArray:
    """Lanes that belong to a junction's box: connecting lanes, and ordinary lanes shorter
    than `SHORT_LINK` that lead from one junction straight into another (two junctions so
    close together work as one: nobody may stop in between)."""
    inside = info.junction >= 0
    boxed = inside.copy()
    before, after = info.first_prev, info.first_next
    link = ~inside & (info.length < SHORT_LINK) & (before >= 0) & (after >= 0)
    link &= inside[np.maximum(before, 0)] & inside[np.maximum(after, 0)]
    boxed[link] = True
    return boxed


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
    """Which connecting lanes conflict (symmetric, by lane uid), in any junction.

    Two lanes conflict when they lead into the same lane (a merge), or when their centre
    lines come closer than `_CONTACT` metres, or closer than `_CONTACT_ANGLED` metres at
    an angle of more than `_ANGLE_DEG` degrees; ``sweep`` metres are added to both
    distances for vehicles that sweep wider. Lanes that leave the same lane share their
    first metres, and consecutive pieces of one connecting road touch end to start:
    neither counts. Lanes of different junctions conflict too where junctions overlap.
    """
    table = info.table
    lanes = np.flatnonzero((info.junction >= 0) & info.drivable)
    if lanes.size == 0:
        return None
    first, count = table.ptr[lanes], table.ptr[lanes + 1] - table.ptr[lanes]
    sample = np.arange(first.size).repeat(count)
    offset = np.arange(sample.size) - np.repeat(np.cumsum(count) - count, count)
    index = first[sample] + offset
    owner = lanes[sample]
    along = offset * table.spacing[owner]
    x, y = table.x[index], table.y[index]
    reach = _CONTACT_ANGLED + sweep
    pairs = cKDTree(np.column_stack((x, y))).query_pairs(reach, output_type="ndarray")
    i, j = pairs[:, 0], pairs[:, 1]
    la, lb = owner[i], owner[j]
    dist = np.hypot(x[i] - x[j], y[i] - y[j])
    cos = (
        table.dir_x[index[i]] * table.dir_x[index[j]]
        + table.dir_y[index[i]] * table.dir_y[index[j]]
    )
    touch = (la != lb) & (
        (dist < _CONTACT + sweep) | (np.abs(cos) < np.cos(np.radians(_ANGLE_DEG)))
    )
    before, after = info.first_prev, info.first_next
    shared_start = (before[la] >= 0) & (before[la] == before[lb])
    shared_start &= (along[i] < _SHARED_START) & (along[j] < _SHARED_START)
    consecutive = (after[la] == lb) | (after[lb] == la)
    touch &= ~shared_start & ~consecutive
    # Merges: connecting lanes that lead into the same lane.
    into = after[lanes]
    order = np.argsort(into, kind="stable")
    ends, ordered = into[order], lanes[order]
    ma, mb = [], []
    for k in range(1, lanes.size):
        same = (ends[k:] == ends[:-k]) & (ends[k:] >= 0)
        if not same.any():
            break
        ma.append(ordered[:-k][same])
        mb.append(ordered[k:][same])
    row = np.concatenate([la[touch], lb[touch], *ma, *mb])
    col = np.concatenate([lb[touch], la[touch], *mb, *ma])
    key = np.unique(row * info.n + col)
    return Conflicts(info.n, key // info.n, key % info.n)
