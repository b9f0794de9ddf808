"""Incremental lane localisation: keep each vehicle on its lane, move it along.

A full `RoadNetwork.localize` searches the whole map; a vehicle that was on a lane a tick
ago is almost always on the same lane, the next lane of its route, or a neighbour. So each
tick projects the new position onto the sampled centre line of the vehicle's lane
(`roadsim.world.lane_table.LaneTable`, samples at most 2 m apart), moves on to the route's
next lane when it passes the end of its lane record, checks the lateral offset against the
lane's width and tries the neighbour on that side, and only for what is left runs a full
`localize` (with the heading as hint).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from roadsim.world.routing import LaneInfo

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]


#: How far (m) a vehicle may stray from a junction's connecting lane and still be on it.
JUNCTION_SLACK = 1.5


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
        salt: Route salts (see `roadsim.world.routing.LaneInfo.choose_next`).

    Returns:
        ``(uid, s, t)``; uid is -1 where the vehicle is on no lane any more.
    """
    table = info.table
    uid = uid.copy()
    p, lateral = table.project(uid, info.progress(uid, s), x, y)
    lost = np.zeros(uid.shape, dtype=bool)
    for _ in range(3):
        ahead = p > info.length[uid]
        lost |= p < 0.0  # moving backwards out of a lane: rare, searched for below
        i = np.flatnonzero(ahead & ~lost)
        if i.size == 0:
            break
        nxt = info.choose_next(salt[i], uid[i])
        dead = nxt < 0
        lost[i[dead]] = True
        i, nxt = i[~dead], nxt[~dead]
        overshoot = p[i] - info.length[uid[i]]
        uid[i] = nxt
        p[i], lateral[i] = table.project(nxt, overshoot, x[i], y[i])

    # Lateral: still on the lane, or on its left or right neighbour?
    k = np.flatnonzero(~lost)
    lo, hi = table.bounds(uid[k], p[k])
    # Connecting lanes in junctions overlap each other: a vehicle keeps its own one
    # while it is roughly on it.
    slack = np.where(info.junction[uid[k]] >= 0, JUNCTION_SLACK, 0.0)
    out = k[np.abs(lateral[k]) > 0.5 * (hi - lo) + slack]
    if out.size:
        graph = info.net.graph
        cand = np.where(lateral[out] > 0.0, graph.left_uid[uid[out]], graph.right_uid[uid[out]])
        ok = cand >= 0
        cand_c = np.maximum(cand, 0)
        # A neighbour of the other direction counts progress from the other end.
        q = np.where(info.sign[cand_c] == info.sign[uid[out]], p[out], info.length[cand_c] - p[out])
        q2, lat2 = table.project(cand_c, q, x[out], y[out])
        lo2, hi2 = table.bounds(cand_c, q2)
        fits = ok & (info.sign[cand_c] != 0) & (np.abs(lat2) <= 0.5 * (hi2 - lo2))
        fits &= (q2 >= 0.0) & (q2 <= info.length[cand_c])
        uid[out[fits]], p[out[fits]], lateral[out[fits]] = cand_c[fits], q2[fits], lat2[fits]
        lost[out[~fits]] = True

    s_new = info.road_s(uid, p)
    lo, hi = table.bounds(uid, p)
    t_new = 0.5 * (lo + hi) + info.sign[uid] * lateral
    if lost.any():
        m = np.flatnonzero(lost)
        pos = info.net.localize(x[m], y[m], heading=heading[m])
        uid[m], s_new[m], t_new[m] = pos.uid, pos.s, pos.t
    return uid, s_new, t_new
