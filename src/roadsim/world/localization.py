"""Incremental lane localisation: keep each vehicle on its lane, move it along.

A full `RoadNetwork.localize` searches the whole map; a vehicle that was on a lane a tick
ago is almost always on the same lane, the next lane of its route, or a neighbour. So each
tick projects the new position onto the sampled centre line of the vehicle's lane
(`roadsim.world.lane_samples.LaneSamples`: samples at most 2 m apart, or the two ends of a
straight lane record), moves on to the route's next lane when it passes the end of its
lane record (at most three lanes a tick), checks the lateral offset against the lane's
width and tries the neighbour on that side, and only for what is left runs a full
`localize` (with the heading as hint).

Where two records meet at an angle (a turn's connecting lane and the road after it, whose
sampled centre lines leave a thin wedge between them on the outside of the turn), a
vehicle off the centre line may be past the end of its record and yet before the start of
the next one. Up to `SEAM` metres before that start, it stays at the end of its record, as
the full search would place it, instead of costing a full search (about 0.6 ms, for one
vehicle).

The per-vehicle part is one compiled loop over the lane tables'
`roadsim.world.lane_kernels.LaneArrays` (its rows split over the threads, `njit_rows`), with the same arithmetic as the tables' array
methods. It visits the vehicles in lane order, so that vehicles on one lane share the rows
of the tables they read, and reads and writes the vehicles' arrays by slot, so a tick
gathers nothing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from roadsim._jit import chunk, chunks_for, njit_loop, njit_rows
from roadsim._types import BoolArray, FloatArray, IntArray, UIntArray
from roadsim.world.lane_kernels import (
    LaneArrays,
    bounds,
    choose_next,
    over_edge,
    prefetch_ahead,
    progress,
    project,
    road_s,
)

if TYPE_CHECKING:  # (annotations only: kernels are cached by what their module imports)
    from roadsim.world.lane_info import LaneInfo


#: How far (m) a vehicle may stray from a junction's connecting lane and still be on it.
JUNCTION_SLACK = 1.5

#: Lane records a vehicle may pass the end of in one tick.
_MAX_HOPS = 3

#: How far (m) before the start of the next lane record a vehicle past the end of its
#: own may be and still count as at that end (see the module docstring).
SEAM = 0.5


def relocalize(
    info: LaneInfo,
    uid: IntArray,
    s: FloatArray,
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    salt: UIntArray,
) -> tuple[IntArray, FloatArray, FloatArray]:
    """New (uid, s, t) of vehicles that were on lanes ``uid`` at s and moved to (x, y).

    Args:
        info: The lane tables.
        uid, s: Previous lane (>= 0) and road s, shape (N,).
        x, y, heading: New pose, shape (N,).
        salt: Route salts (see `roadsim.world.lane_kernels.choose_next`).

    Returns:
        ``(uid, s, t)``; uid is -1 where the vehicle is on no lane any more.
    """
    n = uid.shape[0]
    uid_new = np.array(uid, dtype=np.int64)
    s_new = np.array(s, dtype=np.float64)
    t_new = np.full(n, np.nan)
    road = np.full(n, -1, dtype=np.int64)
    relocalize_slots(
        info,
        np.arange(n, dtype=np.int64),
        uid_new,
        s_new,
        t_new,
        road,
        np.ascontiguousarray(x, dtype=np.float64),
        np.ascontiguousarray(y, dtype=np.float64),
        np.ascontiguousarray(heading, dtype=np.float64),
        np.ascontiguousarray(salt, dtype=np.uint64),
    )
    return uid_new, s_new, t_new


def relocalize_slots(
    info: LaneInfo,
    slots: IntArray,
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
    road: IntArray,
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    salt: UIntArray,
) -> IntArray:
    """`relocalize` in place: updates the lane position of the vehicles in ``slots``.

    Args:
        info: The lane tables.
        slots: The vehicles to relocalise, int64 indices into the arrays below, each on a
            lane (a uid outside the lane tables counts as lost).
        uid, s, t, road: Lane uid, road coordinates (m) and road index by slot, int64 and
            float64; read (uid, s) and written (all four) at ``slots``.
        x, y, heading: New pose by slot (m, rad), float64.
        salt: Route salts by slot, uint64.

    Returns:
        The slots, in the order of ``slots``, of the vehicles now on no lane at all
        (uid -1, s and t NaN, road -1), after the full search.
    """
    lost = np.zeros(slots.shape[0], dtype=bool)
    # In the order given: the simulation keeps its vehicles' slots in lane order.
    order = np.arange(slots.shape[0])
    _relocalize_threaded(
        chunks_for(slots.shape[0]), info.arrays, slots, uid, s, t, road, x, y, salt, order, lost
    )
    m = slots[lost]
    if m.size == 0:
        return m
    pos = info.net.localize(x[m], y[m], heading=heading[m])
    uid[m], s[m], t[m] = pos.uid, pos.s, pos.t
    road[m] = np.where(pos.uid >= 0, info.road[np.maximum(pos.uid, 0)], -1)
    return m[pos.uid < 0]


@njit_loop
def _relocalize_rows(
    la: LaneArrays,
    slots: IntArray,
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
    road: IntArray,
    x: FloatArray,
    y: FloatArray,
    salt: UIntArray,
    order: IntArray,
    lost_at: BoolArray,
    c: int,
    chunks: int,
) -> None:
    """The incremental pass of `relocalize_slots`, visiting chunk c of ``chunks`` of
    ``slots`` in ``order``; marks the positions in ``slots`` of the vehicles it lost in
    ``lost_at`` (their uid and road set to -1, s and t to NaN)."""
    lanes = la.length.shape[0]
    rows = chunk(order, c, chunks)
    for j in range(rows.shape[0]):
        prefetch_ahead(la, uid, s, slots, rows, j, 3)  # it moved up to 2 m on
        i = rows[j]
        k = slots[i]
        u = uid[k]
        lost = not 0 <= u < lanes
        p = lateral = lo = hi = 0.0
        if not lost:
            p, lateral = project(la, u, progress(la, u, s[k]), x[k], y[k])
            # Along the route: past the end of the record, on to the next one.
            last, last_lateral = u, lateral
            for hop in range(_MAX_HOPS):
                if p < 0.0:
                    # Before the start of the record: moving backwards out of it (rare),
                    # or, just past a hop, in the wedge at the seam (module docstring).
                    if hop == 0 or p < -SEAM:
                        lost = True
                        break
                    u, p, lateral = last, la.length[last], last_lateral
                    break
                if not p > la.length[u]:
                    break
                nxt = choose_next(la, salt[k], u)
                if nxt < 0:
                    lost = True
                    break
                overshoot = p - la.length[u]
                last, last_lateral = u, lateral
                u = nxt
                p, lateral = project(la, u, overshoot, x[k], y[k])
        if not lost:
            # Lateral: still on the lane, or on its left or right neighbour?
            lo, hi = bounds(la, u, p)
            # Connecting lanes in junctions overlap each other: a vehicle keeps its own
            # one while it is roughly on it.
            slack = JUNCTION_SLACK if la.junction[u] >= 0 else 0.0
            if math.fabs(lateral) > 0.5 * (hi - lo) + slack:
                cand, q2, lat2, lo2, hi2 = over_edge(la, u, p, lateral, x[k], y[k])
                lost = True
                if (
                    cand >= 0
                    and math.fabs(lat2) <= 0.5 * (hi2 - lo2)
                    and 0.0 <= q2 <= la.length[cand]
                ):
                    u, p, lateral, lost, lo, hi = cand, q2, lat2, False, lo2, hi2
        if lost:
            uid[k] = -1
            road[k] = -1
            s[k] = np.nan
            t[k] = np.nan
            lost_at[i] = True
        else:  # (lo, hi) are the bounds of lane u at p from the lateral check
            uid[k] = u
            road[k] = la.road[u]
            s[k] = road_s(la, u, p)
            t[k] = 0.5 * (lo + hi) + la.sign[u] * lateral


_relocalize_threaded = njit_rows(_relocalize_rows)
