"""Incremental lane localisation: keep each vehicle on its lane, move it along.

A full `RoadNetwork.localize` searches the whole map; a vehicle that was on a lane a tick
ago is almost always on the same lane, the next lane of its route, or a neighbour. So each
tick projects the new position onto the vehicle's current road (two Newton steps on the
exact reference line), moves on to the route's next lane when it passes the end of its
lane record, checks the lateral position against the lane's exact boundaries and its two
neighbours, and only for what is left runs a full `localize` (with the heading as hint).
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


def project(
    info: LaneInfo, road: IntArray, s: FloatArray, t: FloatArray, x: FloatArray, y: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(s, t) of points (x, y) on the given roads, from a nearby guess (s, t)."""
    ref = info.net.reference
    length = info.net.road_length[road]
    for _ in range(2):
        xr, yr, hr, k = ref.evaluate(road, s)
        c, sn = np.cos(hr), np.sin(hr)
        along = (x - xr) * c + (y - yr) * sn
        s = np.clip(s + along / np.maximum(1.0 - k * t, 0.2), -1.0, length + 1.0)
        t = -(x - xr) * sn + (y - yr) * c
    xr, yr, hr, _ = ref.evaluate(road, s)
    t = -(x - xr) * np.sin(hr) + (y - yr) * np.cos(hr)
    return s, t


def relocalize(
    info: LaneInfo,
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    salt: UIntArray,
) -> tuple[IntArray, FloatArray, FloatArray]:
    """New (uid, s, t) of vehicles that were on lanes ``uid`` at (s, t) and moved to (x, y).

    Args:
        info: The lane tables.
        uid, s, t: Previous lane and road coordinates, shape (N,); uid >= 0.
        x, y, heading: New pose, shape (N,).
        salt: Route salts (see `roadsim.world.routing.LaneInfo.choose_next`).

    Returns:
        ``(uid, s, t)``; uid is -1 where the vehicle is on no lane any more.
    """
    net = info.net
    uid = uid.copy()
    road = info.road[uid]
    s, t = project(info, road, s, t, x, y)
    lost = np.zeros(uid.shape, dtype=bool)
    for _ in range(3):
        p = info.progress(uid, s)
        ahead = p > info.length[uid]
        behind = p < 0.0
        if not (ahead.any() or behind.any()):
            break
        lost |= behind  # moving backwards out of a lane: rare, search for it below
        i = np.flatnonzero(ahead & ~lost)
        if i.size == 0:
            break
        nxt = info.choose_next(salt[i], uid[i])
        dead = nxt < 0
        lost[i[dead]] = True
        i, nxt = i[~dead], nxt[~dead]
        overshoot = p[i] - info.length[uid[i]]
        same_road = info.road[nxt] == road[i]
        new_s = np.where(same_road, s[i], info.road_s(nxt, overshoot))
        uid[i], road[i] = nxt, info.road[nxt]
        if (~same_road).any():
            j = i[~same_road]
            s[j], t[j] = project(info, road[j], new_s[~same_road], t[j] * 0.0, x[j], y[j])

    # Lateral: still inside the lane, or in a neighbour of the same section?
    ok = ~lost
    k = np.flatnonzero(ok)
    if k.size:
        lo, hi = _bounds(info, uid[k], s[k])
        # Connecting lanes in junctions overlap each other: a vehicle keeps its own one
        # while it is roughly on it.
        slack = np.where(info.junction[uid[k]] >= 0, JUNCTION_SLACK, 0.0)
        inside = (t[k] >= lo - slack) & (t[k] <= hi + slack)
        out = k[~inside]
        if out.size:
            lanes = net.lanes
            to_left = t[out] > hi[~inside]
            cand = uid[out] + np.where(to_left, -1, 1)
            sec = lanes.section[uid[out]]
            first = lanes.sec_first_uid[sec]
            last = first + lanes.sec_count[sec] - 1
            cand_c = np.clip(cand, first, last)
            # Step over the center lane.
            center = lanes.lane_id[cand_c] == 0
            cand = np.where(center, cand + np.where(to_left, -1, 1), cand)
            valid = (cand >= first) & (cand <= last)
            cand_c = np.clip(cand, first, last)
            lo2, hi2 = _bounds(info, cand_c, s[out])
            fits = valid & (t[out] >= lo2) & (t[out] <= hi2)
            uid[out[fits]] = cand_c[fits]
            lost[out[~fits]] = True

    if lost.any():
        m = np.flatnonzero(lost)
        pos = net.localize(x[m], y[m], heading=heading[m])
        uid[m] = pos.uid
        s[m] = pos.s
        t[m] = pos.t
    return uid, s, t


def _bounds(info: LaneInfo, uid: IntArray, s: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Lower and upper t of each lane at s."""
    return info.table.bounds(uid, info.progress(uid, s))
