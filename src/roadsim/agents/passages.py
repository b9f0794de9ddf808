"""Narrow passages: bends where two long vehicles coming opposite ways do not fit side by side.

On a bend of radius R, a vehicle of length L and wheelbase b whose centre follows its
lane swings its front toward the road's middle by about (L/2)(L/2 + b)/2R. Two 12 m
trucks or buses in 3.2 m lanes touch on bends of 20 m radius and less, however much room
each makes (`roadsim.agents.traffic_kernels._track`). There drivers of long vehicles do
what a single-lane road asks of them: one waits before the bend until the other is out.

A passage is a stretch of a road where one of its drivable lanes outside junctions bends
more tightly than `PASSAGE_RADIUS`, widened by `PASSAGE_MARGIN` at both ends (a long
vehicle still swings over for about its length after a bend, and its front swings before
its centre reaches one). Every drivable lane of that road along the stretch belongs to it,
each in its own direction of travel.

The rule, for long vehicles only (`roadsim.world.codes.LONG_VEHICLE` and longer): one
that comes within `ASK_RANGE` of a passage (or its braking distance and a margin) asks to
enter it. It is let in when no long vehicle coming the other way is in the passage, has
been let in, or asked before it (the nearer one asks first, then the lower slot); else it
waits `WAIT_BEFORE` metres before the passage. Once let in, it keeps its place until it
has left the passage. A long vehicle never waits in a junction's box
(`roadsim.agents.junctions`): one whose place to wait falls in it waits before the box,
and one already in the box goes on. Cars are not held: the room a car makes on a bend is enough beside
a long vehicle (`tests/agents/test_bend_meetings.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from roadsim._jit import njit, njit_leaf
from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.agents.junctions import SWEEP_LENGTH
from roadsim.world.codes import LONG_VEHICLE

if TYPE_CHECKING:  # (annotations only: kernels are cached by what their module imports)
    from roadsim.world.lane_info import LaneInfo

PASSAGE_RADIUS = 25.0  # m: lanes bending tighter than this make a passage
PASSAGE_MARGIN = SWEEP_LENGTH  # m added to a passage at both ends
ASK_RANGE = 40.0  # m before a passage where a long vehicle asks to enter it, at least
ASK_DECEL = 2.0  # m/s^2: ... or from its braking distance at this deceleration, and
ASK_MARGIN = 15.0  # m more
WAIT_BEFORE = 3.0  # m before the passage where a long vehicle told to wait stops
_FORWARD, _BACKWARD = 1, 2  # directions along a road, as bits


class Passages(NamedTuple):
    """The passages of a map, as records of the lanes they cover, by lane (CSR form):
    lane u has the records ``ptr[u]:ptr[u + 1]``.

    Attributes:
        number: How many passages there are.
        ptr: Shape (n + 1,), n the lanes.
        passage: The passage of each record.
        lo, hi: Where the passage begins and ends on the record's lane (progress, m).
        direction: Along its road's s (`_FORWARD`) or against it (`_BACKWARD`), by lane.
    """

    number: int
    ptr: IntArray
    passage: IntArray
    lo: FloatArray
    hi: FloatArray
    direction: IntArray


def find_passages(info: LaneInfo) -> Passages:
    """The passages of the lanes of ``info`` (see the module's docstring)."""
    table = info.table
    direction = np.where(info.sign >= 0, _FORWARD, _BACKWARD).astype(np.int64)
    lanes = np.flatnonzero(info.drivable.astype(bool) & (info.junction < 0))
    # Where each lane bends tightly, as intervals of its road's s.
    tight: dict[int, list[tuple[float, float]]] = {}
    for u in lanes.tolist():
        first, last = int(table.ptr[u]), int(table.ptr[u + 1])
        bend = np.abs(table.curvature[first:last]) * PASSAGE_RADIUS > 1.0
        if not bend.any():
            continue
        spacing = float(table.spacing[u])
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
    # The records: each lane of those roads, for each passage it overlaps.
    rows: list[tuple[int, int, float, float]] = []
    for u in lanes.tolist():
        s0, s1 = float(info.s0[u]), float(info.s1[u])
        for passage, begin, end in on_road.get(int(info.road[u]), ()):
            if begin >= s1 or end <= s0:
                continue
            lo, hi = max(begin, s0) - s0, min(end, s1) - s0
            if direction[u] == _BACKWARD:
                lo, hi = s1 - s0 - hi, s1 - s0 - lo
            rows.append((u, passage, lo, hi))
    rows.sort()
    uid = np.array([r[0] for r in rows], dtype=np.int64)
    ptr = np.zeros(info.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(uid, minlength=info.n), out=ptr[1:])
    return Passages(
        number=count,
        ptr=ptr,
        passage=np.array([r[1] for r in rows], dtype=np.int64),
        lo=np.array([r[2] for r in rows], dtype=float),
        hi=np.array([r[3] for r in rows], dtype=float),
        direction=direction,
    )


class PassageGate:
    """Lets long vehicles into the passages of a map one way at a time; keeps who has been
    let in between ticks (``let_in``: the passage, by slot; -1: none)."""

    def __init__(self, info: LaneInfo) -> None:
        self.passages = find_passages(info)
        self.let_in: IntArray = np.zeros(0, dtype=np.int64)

    def resize(self, capacity: int) -> None:
        grown = np.full(capacity, -1, dtype=np.int64)
        grown[: self.let_in.size] = self.let_in
        self.let_in = grown

    def gaps(
        self,
        me: IntArray,
        lanes: IntArray,
        start: FloatArray,
        boxed: BoolArray,
        half_length: FloatArray,
        speed: FloatArray,
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
        """
        if self.passages.number == 0:
            return None
        out = np.full(me.size, np.inf)
        _gaps(self.passages, self.let_in, me, lanes, start, boxed, half_length, speed, out)
        return out


@njit
def _gaps(
    passages: Passages,
    let_in: IntArray,
    me: IntArray,
    lanes: IntArray,
    start: FloatArray,
    boxed: BoolArray,
    half_length: FloatArray,
    speed: FloatArray,
    out: FloatArray,
) -> None:
    """`PassageGate.gaps` in one compiled call: ``out`` (inf on entry) and ``let_in``
    (by slot) in place."""
    ptr, passage, lo, hi, direction = (
        passages.ptr, passages.passage, passages.lo, passages.hi, passages.direction
    )  # fmt: skip
    held = np.zeros(passages.number, dtype=np.int64)  # directions in or let in, as bits
    asked = np.zeros(passages.number, dtype=np.int64)  # directions refused this tick
    # Each long vehicle's nearest passage ahead that it is not in (-1: none), how far
    # ahead it begins, and in which direction the vehicle drives through it.
    wants = np.full(me.size, -1, dtype=np.int64)
    distance = np.full(me.size, np.inf)
    way = np.zeros(me.size, dtype=np.int64)
    inside = np.full(lanes.shape[1] * 4, -1, dtype=np.int64)  # scratch: passages it is in
    for i in range(me.size):
        k = me[i]
        length = 2.0 * half_length[k]
        if length < LONG_VEHICLE:
            continue
        ask = max(ASK_RANGE, speed[k] * speed[k] / (2.0 * ASK_DECEL) + ASK_MARGIN)
        n_in = 0
        for h in range(lanes.shape[1]):
            u = lanes[i, h]
            if u < 0:
                break
            for r in range(ptr[u], ptr[u + 1]):
                near, far = start[i, h] + lo[r], start[i, h] + hi[r]
                q = passage[r]
                if near < 0.0 < far + length:  # its body overlaps the passage
                    held[q] |= direction[u]
                    if n_in < inside.size:
                        inside[n_in] = q
                        n_in += 1
                elif near >= 0.0 and near < min(ask, distance[i]):
                    # (a passage it is in may go on over later lanes)
                    mine = False
                    for j in range(n_in):
                        mine = mine or inside[j] == q
                    if not mine:
                        wants[i], distance[i], way[i] = q, near, direction[u]
        if let_in[k] >= 0 and let_in[k] != wants[i]:
            # Out of the passage it was let in to (or it turned away from it).
            mine = False
            for j in range(n_in):
                mine = mine or inside[j] == let_in[k]
            if not mine:
                let_in[k] = -1
    # Those let in hold their passage; the others ask, nearest first.
    asking = np.flatnonzero(wants >= 0)
    for a in asking:
        if let_in[me[a]] == wants[a]:
            held[wants[a]] |= way[a]
    order = asking[np.argsort(distance[asking], kind="mergesort")]  # (me is in slot order)
    for i in order:
        q, going = wants[i], way[i]
        if let_in[me[i]] == q:
            continue
        other = _FORWARD + _BACKWARD - going
        wait = _before_boxes(lanes, start, boxed, i, distance[i] - WAIT_BEFORE)
        if (held[q] | asked[q]) & other and wait >= 0.0:
            asked[q] |= going
            out[i] = wait
        else:
            held[q] |= going
            let_in[me[i]] = q


@njit_leaf
def _before_boxes(
    lanes: IntArray, start: FloatArray, boxed: BoolArray, i: int, wait: float
) -> float:
    """Where row i waits (m ahead of its front) to wait ``wait`` metres ahead but not in a
    junction's box: before the box where that falls in one (negative: the vehicle is in
    the box already)."""
    for h in range(lanes.shape[1] - 1, -1, -1):
        u = lanes[i, h]
        if u < 0 or not boxed[u] or start[i, h] >= wait:
            continue
        if h + 1 == lanes.shape[1] or lanes[i, h + 1] < 0 or start[i, h + 1] > wait:
            wait = start[i, h] - WAIT_BEFORE
    return wait
