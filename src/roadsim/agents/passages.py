"""Narrow passages: bends where two long vehicles coming opposite ways do not fit side by side.

On a bend of radius R, a vehicle of length L and wheelbase b whose centre follows its
lane swings its front toward the road's middle by about (L/2)(L/2 + b)/2R. Two 12 m
trucks or buses in 3.2 m lanes touch on bends of 20 m radius and less, however much room
each makes (`roadsim.agents.traffic_kernels._track`). There drivers of long vehicles do
what a single-lane road asks of them: one waits before the bend until the other is out.

A passage is a stretch of a road where one of its drivable lanes outside junctions bends
so tightly that two long vehicles' widths and the swing of one take more than twice its
width (beside a lane of the other direction: 25 m on 3.2 m lanes, 17.9 m on 3.5 m
ones; elsewhere, more tightly than `PASSAGE_RADIUS`), widened by `PASSAGE_MARGIN` at
both ends (a long vehicle still swings over for about its length after a bend, and its
front swings before its centre reaches one). Every drivable lane of that road along the
stretch belongs to it, each in its own direction of travel.

The rule, for long vehicles only (`roadsim.world.codes.LONG_VEHICLE` and longer): one
that comes within `ASK_RANGE` of a passage (or its braking distance and a margin) asks to
enter it. It is let in when no long vehicle coming the other way is in the passage, has
been let in, or asked before it (the nearer one asks first, each second it has been told
to wait counting as `WAITED_AHEAD` metres nearer, then the lower slot); else it waits
`WAIT_BEFORE` metres before the passage. Once let in, it keeps its place until it has
left the passage. A long vehicle never waits in a junction's box
(`roadsim.agents.junctions`): one that would stand in it, even in part, waits before the
box, and one already in the box goes on. Cars are not held: the room a car makes on a
bend is enough beside a long vehicle (`tests/agents/test_bend_meetings.py`).

Where a passage bends tighter than `roadsim.world.codes.LONG_MIN_RADIUS` (a corner drawn
as a road), a long vehicle cannot keep to its lane at all: it takes the whole road, and
no car fits beside it either. Such a passage is ``exclusive``: once the simulation has
long vehicles (`PassageGate.hold_every_class`), cars ask to enter it too, and the rule
is the same with one change: a long vehicle waits for anything coming the other way, a
car for long vehicles only (two cars pass each other there as anywhere). And only the
first vehicle before an exclusive passage asks for it (nobody between it and the passage,
or it was let in already): one let in from behind a vehicle told to wait would hold the
passage for a long vehicle coming the other way that this one waits for, for ever.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from roadsim._jit import njit, njit_leaf
from roadsim._types import BoolArray, FloatArray, IntArray, UIntArray
from roadsim.agents.junctions import SWEEP_LENGTH
from roadsim.agents.traffic_kernels import LONG_SWING
from roadsim.world.codes import LONG_MIN_RADIUS, LONG_VEHICLE, LONG_WIDTH
from roadsim.world.lane_kernels import LaneArrays, choose_next

if TYPE_CHECKING:  # (annotations only: kernels are cached by what their module imports)
    from roadsim.world.lane_info import LaneInfo
    from roadsim.world.lane_samples import LaneSamples

PASSAGE_RADIUS = 25.0  # m: lanes bending tighter than this make a passage, where no
# lane of the other direction lies beside them
MEET_MARGIN = 0.1  # m: ... and narrower lanes where two trucks need it more (`_meeting_curvature`)
PASSAGE_MARGIN = SWEEP_LENGTH  # m added to a passage at both ends
ASK_RANGE = 40.0  # m before a passage where a long vehicle asks to enter it, at least
ASK_DECEL = 2.0  # m/s^2: ... or from its braking distance at this deceleration, and
ASK_MARGIN = 15.0  # m more
WAIT_BEFORE = 3.0  # m before the passage where a long vehicle told to wait stops
WAITED_AHEAD = 5.0  # m: each second a vehicle was told to wait counts as this much nearer
LINK_GAP = SWEEP_LENGTH + 2.0 * WAIT_BEFORE  # m: passages closer together are one
_LINK_HOPS = 4  # lanes between two passages looked across, at most
_ROUTE_HOPS = 48  # lanes of a route looked along for passages, at most
_EPS = 1e-6  # m
_FORWARD, _BACKWARD = 1, 2  # directions through a passage, as bits


class Passages(NamedTuple):
    """The passages of a map, as records of the lanes they cover, by lane (CSR form):
    lane u has the records ``ptr[u]:ptr[u + 1]``.

    Attributes:
        number: How many passages there are.
        ptr: Shape (n + 1,), n the lanes.
        passage: The passage of each record.
        lo, hi: Where the passage begins and ends on the record's lane (progress, m).
        way: The direction the lane's traffic drives through the passage in (`_FORWARD`
            or `_BACKWARD`, in a frame of the passage's own).
        exclusive: Whether a long vehicle takes the whole road in the passage (by
            passage: its lanes bend tighter than `LONG_MIN_RADIUS` in it).
    """

    number: int
    ptr: IntArray
    passage: IntArray
    lo: FloatArray
    hi: FloatArray
    way: IntArray
    exclusive: BoolArray


def record_lanes(passages: Passages) -> IntArray:
    """The lane of each of the records of ``passages`` (their CSR rows)."""
    lanes: IntArray = np.repeat(np.arange(passages.ptr.size - 1), np.diff(passages.ptr))
    return lanes


def find_passages(info: LaneInfo) -> Passages:
    """The passages of the lanes of ``info`` (see the module's docstring).

    A passage ends at no road's end: one that reaches the end of a lane goes on for
    `PASSAGE_MARGIN` over the ordinary lanes after it (and before it, at a lane's start).
    Two passages less than `LINK_GAP` apart along a lane, or across lane ends, are one:
    a long vehicle let in to the first must have room to wait for the second outside
    both, or it and one coming the other way could wait for each other for ever.
    """
    table = info.table
    sign = np.where(info.sign >= 0, _FORWARD, _BACKWARD).astype(np.int64)
    ordinary = info.drivable.astype(bool) & (info.junction < 0)
    lanes = np.flatnonzero(ordinary)
    # Where each lane bends tightly, as intervals of its road's s.
    tight: dict[int, list[tuple[float, float]]] = {}
    for u in lanes.tolist():
        first, last = int(table.ptr[u]), int(table.ptr[u + 1])
        spacing = float(table.spacing[u])
        # (only where vehicles drive on it: a lane whose width jumps, parking bays drawn
        # as a lane, bends its centre line sharply where nobody drives)
        at = np.arange(last - first) * spacing
        used = (at >= info.usable_from[u] - spacing) & (at <= info.usable[u] + spacing)
        graph = info.net.graph
        beside = [int(graph.left_uid[u]), int(graph.right_uid[u])]
        meets = any(x >= 0 and info.drivable[x] and info.sign[x] == -info.sign[u] for x in beside)
        limit = _meeting_curvature(table, first, last) if meets else 1.0 / PASSAGE_RADIUS
        bend = (np.abs(table.curvature[first:last]) > limit) & used
        if not bend.any():
            continue
        edges = np.diff(np.concatenate(([0], bend.astype(np.int8), [0])))
        starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
        road = int(info.road[u])
        for first_tight, last_tight in zip(starts.tolist(), stops.tolist(), strict=True):
            # (a sample stands for the half spacing either side of it)
            ends = [max(first_tight - 0.5, 0.0), min(last_tight + 0.5, last - first - 1.0)]
            p = np.array(ends) * spacing
            s = info.road_s(np.array([u, u]), p)
            tight.setdefault(road, []).append((float(s.min()), float(s.max())))
    # Each road's intervals, widened and merged into passages.
    on_road: dict[int, list[tuple[int, float, float]]] = {}
    count = 0
    for road, spans in sorted(tight.items()):
        merged: list[list[float]] = []
        for bend_start, bend_end in sorted(spans):
            a, b = bend_start - PASSAGE_MARGIN, bend_end + PASSAGE_MARGIN
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        on_road[road] = [(count + j, a, b) for j, (a, b) in enumerate(merged)]
        count += len(merged)
    # The records: each lane of those roads, for each passage it overlaps, and the
    # direction its traffic drives through the passage in (the lane's, at first).
    rows: list[tuple[int, int, float, float, int]] = []
    for u in lanes.tolist():
        s0, s1 = float(info.s0[u]), float(info.s1[u])
        for passage, begin, end in on_road.get(int(info.road[u]), ()):
            if begin >= s1 or end <= s0:
                continue
            lo, hi = max(begin, s0) - s0, min(end, s1) - s0
            if sign[u] == _BACKWARD:
                lo, hi = s1 - s0 - hi, s1 - s0 - lo
            rows.append((u, passage, lo, hi, int(sign[u])))
    rows += _margins_past_lane_ends(info, ordinary, rows)
    rows.sort()
    groups = _Groups(count)
    for a, b in _close_pairs(info, rows):
        groups.join(rows[a][1], rows[b][1], rows[a][4] != rows[b][4])
    # Number the passages anew, each way in its passage's frame.
    roots = sorted({groups.find(r[1])[0] for r in rows})
    number = {root: j for j, root in enumerate(roots)}
    group, way = [], []
    for r in rows:
        root, flipped = groups.find(r[1])
        group.append(number[root])
        way.append(_FORWARD + _BACKWARD - r[4] if flipped else r[4])
    uid = np.array([r[0] for r in rows], dtype=np.int64)
    ptr = np.zeros(info.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(uid, minlength=info.n), out=ptr[1:])
    exclusive = np.zeros(len(roots), dtype=bool)
    for (u, _, lo, hi, _), q in zip(rows, group, strict=True):
        first, spacing = int(table.ptr[u]), float(table.spacing[u])
        a = first + int(np.floor(lo / spacing))
        b = min(first + int(np.ceil(hi / spacing)) + 1, int(table.ptr[u + 1]))
        if a < b and np.abs(table.curvature[a:b]).max() * LONG_MIN_RADIUS > 1.0:
            exclusive[q] = True
    return Passages(
        number=len(roots),
        ptr=ptr,
        passage=np.array(group, dtype=np.int64),
        lo=np.array([r[2] for r in rows], dtype=float),
        hi=np.array([r[3] for r in rows], dtype=float),
        way=np.array(way, dtype=np.int64),
        exclusive=exclusive,
    )


def _meeting_curvature(table: LaneSamples, first: int, last: int) -> FloatArray:
    """The curvature above which two long vehicles coming opposite ways do not fit side
    by side, at the samples ``first:last`` of a lane beside the other direction: the one
    at which the swing of one (`LONG_SWING` times the curvature) and both their widths
    take more than twice its width and `MEET_MARGIN`. Esmini's mixed_roads.xodr has 3 m
    lanes on a 33 m bend, where two trucks met; two trucks meeting on bends of 3.5 m
    lanes touched with the inner lane's centre at 16.3 m radius, not at 18.3 m (the limit
    is 17.9 m), and CARLA's Town07 road 24 (24.1 m) was a passage that held trucks
    waiting for it right after junction 7 while `PASSAGE_RADIUS` capped the limit. Where
    the lane is narrower than a long vehicle (it opens or closes there),
    `PASSAGE_RADIUS`'s."""
    width = table.t_hi[first:last] - table.t_lo[first:last]
    spare = np.maximum(2.0 * width - 2.0 * LONG_WIDTH + MEET_MARGIN, 0.0)
    out: FloatArray = np.where(width >= LONG_WIDTH, spare / LONG_SWING, 1.0 / PASSAGE_RADIUS)
    return out


def _margins_past_lane_ends(
    info: LaneInfo, ordinary: BoolArray, rows: list[tuple[int, int, float, float, int]]
) -> list[tuple[int, int, float, float, int]]:
    """Records that carry each passage reaching the end (start) of its lane on over the
    first (last) `PASSAGE_MARGIN` metres of the ordinary lanes after (before) it."""
    have = {(r[0], r[1]) for r in rows}
    extra = []
    for u, passage, lo, hi, way in rows:
        ends = (
            (hi >= info.length[u] - _EPS, info.next_ptr, info.next_idx, True),
            (lo <= _EPS, info.prev_ptr, info.prev_idx, False),
        )
        for reaches, ptr, idx, after in ends:
            if not reaches:
                continue
            for v in idx[ptr[u] : ptr[u + 1]].tolist():
                if not ordinary[v] or (v, passage) in have:
                    continue
                length = float(info.length[v])
                span = (
                    (0.0, min(PASSAGE_MARGIN, length))
                    if after
                    else (max(length - PASSAGE_MARGIN, 0.0), length)
                )
                extra.append((v, passage, *span, way))
                have.add((v, passage))
    return extra


def _close_pairs(
    info: LaneInfo, rows: list[tuple[int, int, float, float, int]]
) -> list[tuple[int, int]]:
    """Pairs of records (indices into ``rows``, sorted by lane) of two passages that a
    vehicle drives through one after the other less than `LINK_GAP` apart: on one lane,
    or across lane ends (whatever lanes lie between)."""
    ptr = np.searchsorted([r[0] for r in rows], np.arange(info.n + 1))
    pairs = []
    for a, (u, passage, _, hi, _) in enumerate(rows):
        for b in range(ptr[u], ptr[u + 1]):
            if rows[b][1] != passage and rows[b][2] >= rows[a][2] and rows[b][2] - hi < LINK_GAP:
                pairs.append((a, b))
        # Over the lanes after this one, as long as they are less than LINK_GAP away.
        todo = [
            (v, float(info.length[u]) - hi)
            for v in info.next_idx[info.next_ptr[u] : info.next_ptr[u + 1]].tolist()
        ]
        for _ in range(_LINK_HOPS):
            later = []
            for v, gap in todo:
                for b in range(ptr[v], ptr[v + 1]):
                    if rows[b][1] != passage and gap + rows[b][2] < LINK_GAP:
                        pairs.append((a, b))
                further = gap + float(info.length[v])
                if further < LINK_GAP:
                    nxt = info.next_idx[info.next_ptr[v] : info.next_ptr[v + 1]].tolist()
                    later += [(w, further) for w in nxt]
            todo = later
    return pairs


class _Groups:
    """Passages joined into one (union-find), each with whether its directions are the
    reverse of its group's (roads may meet end to end: one's forward is the other's
    backward)."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.flip = [False] * n  # relative to the parent

    def find(self, q: int) -> tuple[int, bool]:
        flipped = False
        while self.parent[q] != q:
            flipped ^= self.flip[q]
            q = self.parent[q]
        return q, flipped

    def join(self, a: int, b: int, ways_differ: bool) -> None:
        """Joins the passages of two records a vehicle drives through in one direction,
        their directions differing (``ways_differ``) in their own passages' frames."""
        ra, fa = self.find(a)
        rb, fb = self.find(b)
        if ra != rb:
            self.parent[rb] = ra
            self.flip[rb] = fa ^ fb ^ ways_differ


class PassageGate:
    """Lets long vehicles (and cars, into exclusive passages) into the passages of a map
    one way at a time; keeps who has been let in between ticks (``let_in``: the passage,
    by slot; -1: none)."""

    def __init__(self, info: LaneInfo) -> None:
        self.info = info
        self.passages = find_passages(info)
        self.let_in: IntArray = np.zeros(0, dtype=np.int64)
        #: Where each vehicle waited for a passage last tick, by slot (m ahead of its
        #: front; inf: it went on).
        self.waits: FloatArray = np.zeros(0)
        #: How long each vehicle has been told to wait for the passage it asks for, by
        #: slot (s).
        self.waited: FloatArray = np.zeros(0)
        #: The directions long vehicles were in, let in to or asked for each passage
        #: last tick, as bits (`stops`).
        self.held: IntArray = np.zeros(self.passages.number, dtype=np.int64)
        # The records a long vehicle waits before on their own lane, for `stops`: their
        # rows, lanes and waiting points.
        wait = self.passages.lo - WAIT_BEFORE
        self._waits_on = np.flatnonzero(wait >= 0.0)
        self._lane_of = record_lanes(self.passages)
        self._wait_lane = self._lane_of[self._waits_on]
        self._wait_at = wait[self._waits_on]
        #: Whether cars ask for exclusive passages too (`hold_every_class`).
        self.every_class = False

    def hold_every_class(self) -> None:
        """Makes cars ask for the exclusive passages too: for a simulation that has long
        vehicles (elsewhere nothing would ever hold a car, and the asking costs time)."""
        self.every_class = True

    def stretches(self) -> tuple[IntArray, FloatArray, FloatArray]:
        """Where the passages lie, as intervals of lane progress ``(lane, start, end)``
        (m), one a record, widened by `WAIT_BEFORE` at both ends."""
        p = self.passages
        return record_lanes(p), p.lo - WAIT_BEFORE, p.hi + WAIT_BEFORE

    def stops(self) -> FloatArray:
        """Where a long vehicle on each lane would wait before a passage now (progress of
        its front, m; inf: nowhere): on the lanes into a passage held, or asked for, by a
        long vehicle coming the other way last tick (`roadsim.agents.junctions.room_after`
        ends the room after a junction there)."""
        p, rows = self.passages, self._waits_on
        out = np.full(self.info.n, np.inf)
        opposed = (self.held[p.passage[rows]] & (_FORWARD + _BACKWARD - p.way[rows])) != 0
        np.minimum.at(out, self._wait_lane[opposed], self._wait_at[opposed])
        return out

    def opposed(
        self,
        lane: int,
        lo: float,
        hi: float,
        long: bool,
        bodies: tuple[IntArray, FloatArray, FloatArray] | None = None,
    ) -> bool:
        """Whether a vehicle whose body spans progress ``lo`` to ``hi`` on ``lane`` would
        stand in a passage that a long vehicle coming the other way was in, let in to or
        asked for last tick; or, for a long vehicle, that any of the ``bodies`` (lanes,
        and where each body begins and ends on its lane, m) stands in the other way. If
        not, a long vehicle is counted in each passage it stands in from now on.
        `roadsim.sim.lifecycle` puts vehicles back on the map with it: on esmini's
        mixed_roads.xodr, a road that is all one passage and leads nowhere, trucks came
        back at both ends and met in the bend, cars came back at the start of the bend
        beside a truck sweeping out of it, and a truck came back into the bend while a
        car that had just come back at its other end stood in it (a car only just come
        back drives on its lane's centre line, not yet making room)."""
        p = self.passages
        rows = np.arange(p.ptr[lane], p.ptr[lane + 1])
        rows = rows[(p.lo[rows] < hi) & (p.hi[rows] > lo)]
        other = _FORWARD + _BACKWARD - p.way[rows]
        if (self.held[p.passage[rows]] & other).any():
            return True
        if long and bodies is not None and rows.size:
            # The records of the same passages the other way, and who stands on them.
            for q, way in zip(p.passage[rows].tolist(), other.tolist(), strict=True):
                for r in np.flatnonzero((p.passage == q) & (p.way == way)).tolist():
                    on = bodies[0] == self._lane_of[r]
                    if np.any(on & (bodies[1] < p.hi[r]) & (bodies[2] > p.lo[r])):
                        return True
        if long:
            np.bitwise_or.at(self.held, p.passage[rows], p.way[rows])
        return False

    def resize(self, capacity: int) -> None:
        grown = np.full(capacity, -1, dtype=np.int64)
        grown[: self.let_in.size] = self.let_in
        self.let_in = grown
        waits = np.full(capacity, np.inf)
        waits[: self.waits.size] = self.waits
        self.waits = waits
        waited = np.zeros(capacity)
        waited[: self.waited.size] = self.waited
        self.waited = waited

    def gaps(
        self,
        me: IntArray,
        lanes: IntArray,
        start: FloatArray,
        boxed: BoolArray,
        half_length: FloatArray,
        speed: FloatArray,
        salt: UIntArray,
        leader_gap: FloatArray,
        dt: float,
    ) -> FloatArray | None:
        """Gap (m) to where each vehicle waits for a passage (inf: it may go), or None
        where the map has no passages.

        Args:
            me: Vehicle slots, shape (N,), each once.
            lanes: The vehicle's lane and the next lanes of its route, shape (N, H), -1
                past its end.
            start: Distance from the vehicle's front bumper to the start of each of
                ``lanes`` (m), shape (N, H).
            boxed: The lanes of junction boxes (`roadsim.agents.junctions.JunctionGate`).
            half_length, speed: Half the length (m) and the speed (m/s) of every actor,
                by slot.
            salt: The route salts, by slot (`roadsim.world.lane_kernels.choose_next`):
                a long vehicle looks for passages along its route, past ``lanes``.
            leader_gap: The gap from each vehicle to the one ahead of it (m, inf: none),
                shape (N,).
            dt: The time step (s), for how long each has waited (``waited``).
        """
        if self.passages.number == 0:
            return None
        out = np.full(me.size, np.inf)
        _gaps(
            self.passages, self.let_in, self.info.arrays, salt, me, lanes, start, boxed,
            half_length, speed, self.every_class, leader_gap, dt, self.waited, out, self.held,
        )  # fmt: skip
        self.waits[me] = out
        return out


@njit
def _gaps(
    passages: Passages,
    let_in: IntArray,
    la: LaneArrays,
    salt: UIntArray,
    me: IntArray,
    lanes: IntArray,
    start: FloatArray,
    boxed: BoolArray,
    half_length: FloatArray,
    speed: FloatArray,
    every_class: bool,
    leader_gap: FloatArray,
    dt: float,
    waited: FloatArray,
    out: FloatArray,
    held_now: IntArray,
) -> None:
    """`PassageGate.gaps` in one compiled call: ``out`` (inf on entry), ``let_in`` and
    ``waited`` (by slot) in place, and the directions long vehicles hold or ask for by
    passage (``held_now``). Cars (with ``every_class``) take part in exclusive passages
    only."""
    ptr, passage, lo, hi, way_of, exclusive = (
        passages.ptr, passages.passage, passages.lo, passages.hi, passages.way,
        passages.exclusive,
    )  # fmt: skip
    # Directions in or let in, as bits, of long vehicles and of cars; and those refused
    # this tick.
    held = np.zeros(passages.number, dtype=np.int64)
    held_car = np.zeros(passages.number, dtype=np.int64)
    asked = np.zeros(passages.number, dtype=np.int64)
    asked_car = np.zeros(passages.number, dtype=np.int64)
    is_long = np.zeros(me.size, dtype=np.bool_)
    # Each long vehicle's nearest passage ahead that it is not in (-1: none), how far
    # ahead it begins, where it would wait for it, and in which direction the vehicle
    # drives through it.
    wants = np.full(me.size, -1, dtype=np.int64)
    distance = np.full(me.size, np.inf)
    wait = np.full(me.size, np.inf)
    way = np.zeros(me.size, dtype=np.int64)
    route = np.empty(_ROUTE_HOPS, dtype=np.int64)  # scratch: the lanes ahead
    at = np.empty(_ROUTE_HOPS)  # and how far ahead of the front each begins
    inside = np.empty(_ROUTE_HOPS, dtype=np.int64)  # and the passages it is in
    for i in range(me.size):
        k = me[i]
        length = 2.0 * half_length[k]
        is_long[i] = length >= LONG_VEHICLE
        if not (is_long[i] or every_class):
            continue
        ask = max(ASK_RANGE, speed[k] * speed[k] / (2.0 * ASK_DECEL) + ASK_MARGIN)
        count = _route_ahead(la, salt[k], lanes, start, i, ask, route, at)
        n_in = 0
        for h in range(count):
            u = route[h]
            for r in range(ptr[u], ptr[u + 1]):
                near, far = at[h] + lo[r], at[h] + hi[r]
                q = passage[r]
                if not (is_long[i] or exclusive[q]):
                    continue
                if near < 0.0 < far + length:  # its body overlaps the passage
                    if is_long[i]:
                        held[q] |= way_of[r]
                    else:
                        held_car[q] |= way_of[r]
                    inside[n_in] = q
                    n_in = min(n_in + 1, _ROUTE_HOPS - 1)
                elif 0.0 <= near < min(ask, distance[i]) and not _listed(inside, n_in, q):
                    # (a passage it is in may go on over later lanes)
                    distance[i] = near
                    if not exclusive[q] or leader_gap[i] >= near or let_in[k] == q:
                        wants[i], way[i] = q, way_of[r]
                    else:
                        wants[i] = -1  # behind another: that one asks
        if wants[i] >= 0:
            wait[i] = _before_boxes(route, at, count, boxed, distance[i] - WAIT_BEFORE, length)
        if let_in[k] >= 0 and let_in[k] != wants[i] and not _listed(inside, n_in, let_in[k]):
            let_in[k] = -1  # out of the passage it was let in to (or it turned away)
    # Those let in hold their passage; the others ask, nearest first.
    asking = np.flatnonzero(wants >= 0)
    for a in asking:
        if let_in[me[a]] == wants[a]:
            if is_long[a]:
                held[wants[a]] |= way[a]
            else:
                held_car[wants[a]] |= way[a]
    # Nearest first, counting each second waited as `WAITED_AHEAD` metres nearer: one
    # that waits where a junction comes before the passage is further from it than one
    # that waits right before it, and on CARLA's Town07 cars waiting at junction 11 for
    # road 60's corner lost to every truck that drove up to its other end, for minutes.
    rank = distance - WAITED_AHEAD * waited[me]
    order = asking[np.argsort(rank[asking], kind="mergesort")]  # (me is in slot order)
    for i in range(me.size):
        if wants[i] < 0 or let_in[me[i]] == wants[i]:
            waited[me[i]] = 0.0
    for i in order:
        q, going = wants[i], way[i]
        if let_in[me[i]] == q:
            continue
        other = _FORWARD + _BACKWARD - going
        coming = held[q] | asked[q]  # the long vehicles coming the other way
        if is_long[i] and exclusive[q]:
            coming |= held_car[q] | asked_car[q]  # and the cars
        if coming & other and wait[i] >= 0.0:
            if is_long[i]:
                asked[q] |= going
            else:
                asked_car[q] |= going
            out[i] = wait[i]
            waited[me[i]] += dt
        elif is_long[i]:
            held[q] |= going
            let_in[me[i]] = q
        else:
            held_car[q] |= going
            let_in[me[i]] = q
    held_now[:] = held | asked


@njit_leaf
def _listed(values: IntArray, count: int, value: int) -> bool:
    """Whether ``value`` is one of ``values[:count]``."""
    found = False
    for j in range(count):
        found = found or values[j] == value
    return found


@njit_leaf
def _route_ahead(
    la: LaneArrays,
    salt: np.uint64,
    lanes: IntArray,
    start: FloatArray,
    i: int,
    reach: float,
    route: IntArray,
    at: FloatArray,
) -> int:
    """Writes the lanes of row i's route that begin less than ``reach`` metres ahead of
    its front (``route``, from its own) and how far ahead each begins (``at``); returns
    how many. The first are those `perceive` found (``lanes``, ``start``), the others
    follow the route (junctions may come in dozens of short pieces)."""
    count = 0
    for h in range(lanes.shape[1]):
        if lanes[i, h] < 0 or start[i, h] >= reach:
            return count
        route[count], at[count] = lanes[i, h], start[i, h]
        count += 1
    while count < route.size:
        last = route[count - 1]
        nxt = choose_next(la, salt, last)
        begins = at[count - 1] + la.length[last]
        if nxt < 0 or begins >= reach:
            break
        route[count], at[count] = nxt, begins
        count += 1
    return count


@njit_leaf
def _before_boxes(
    route: IntArray, at: FloatArray, count: int, boxed: BoolArray, wait: float, length: float
) -> float:
    """Where a vehicle ``length`` metres long (its front) waits, ``wait`` metres ahead
    of it along ``route`` (``count`` lanes beginning ``at``) or further back, so that
    no part of it stands in a junction's box (negative: it is in the box already)."""
    for h in range(count - 1, -1, -1):
        if not boxed[route[h]]:
            continue
        end = at[h + 1] if h + 1 < count else np.inf
        if at[h] < wait and end > wait - length:
            wait = at[h] - WAIT_BEFORE
    return wait
