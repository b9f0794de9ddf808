"""Lanes of different roads that lie on top of each other with no junction or link between
them: what traffic cannot see across.

OpenDRIVE joins roads through links and junctions, and traffic sees only along them. Some
maps draw roads over each other without either: ramps that run into a highway's lane with
no link (esmini's Ex_Entry_Exit.xodr), streets whose corners cross (parking_demo.xodr),
test roads that all start from one point (star.xodr). Vehicles on such lanes do not see
each other where they overlap, and meet.

`unjoined_overlaps` finds the stretches where the centre line of a drivable lane outside
junctions passes inside another road's drivable lane, by more than `LATERAL_M`, at the
same height (within `CLEARANCE_M`), without a link between the two lanes. The simulation
warns of them (`roadsim.errors.MapWarning`), starts no traffic on them, and where such a
stretch reaches a dead end, traffic leaves the map and comes back outside it
(`edge_stretches`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial import cKDTree

from roadsim._types import FloatArray, IntArray
from roadsim.world.codes import MAP_EDGE

if TYPE_CHECKING:
    from roadsim.world.lane_info import LaneInfo

#: Spacing of the samples along each lane's centre line (m).
STEP_M = 1.0
#: How far a lane's centre line must reach into another lane to count (m): a vehicle on
#: it then stands well inside the other.
LATERAL_M = 1.0
#: Height between two lanes below which their traffic meets (m): a truck's height.
CLEARANCE_M = 4.0
#: Fewest samples an overlap takes (roads that only touch at their ends do not count).
MIN_SAMPLES = 2


@dataclass(frozen=True)
class Overlaps:
    """Stretches of lanes that overlap another road's lane with no link between them:
    ``lane[k]`` from progress ``start[k]`` to ``end[k]`` (m) lies over ``other[k]``
    (a lane uid). A pair of lanes gives a row for each of them."""

    lane: IntArray
    start: FloatArray
    end: FloatArray
    other: IntArray

    @property
    def size(self) -> int:
        return int(self.lane.size)


def unjoined_overlaps(info: LaneInfo) -> Overlaps:
    """The overlaps of ``info``'s lanes (see the module docstring)."""
    net = info.net
    lanes = np.flatnonzero(info.drivable.astype(bool) & (info.junction < 0))
    none = Overlaps(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0, np.int64))
    if lanes.size < 2:
        return none
    per_lane = np.maximum(np.ceil(info.length[lanes] / STEP_M).astype(np.int64), 1)
    uid = np.repeat(lanes, per_lane)
    k = np.arange(uid.size) - np.repeat(np.cumsum(per_lane) - per_lane, per_lane)
    p = (k + 0.5) * info.length[uid] / np.repeat(per_lane, per_lane)
    road = info.road[uid]
    s = info.road_s(uid, p)
    t = net.uid_t_center(uid, s)
    width = net.uid_width(uid, s)
    x, y, z = net.to_world_index(road, s, t)
    pairs = cKDTree(np.column_stack((x, y))).query_pairs(
        r=float(width.max()), output_type="ndarray"
    )
    a, b = pairs[:, 0], pairs[:, 1]
    apart = np.hypot(x[a] - x[b], y[a] - y[b])
    inside = (road[a] != road[b]) & (apart < 0.5 * (width[a] + width[b]) - LATERAL_M)
    inside &= np.abs(z[a] - z[b]) < CLEARANCE_M
    a, b = a[inside], b[inside]
    unjoined = ~info.linked(uid[a], uid[b])
    a, b = a[unjoined], b[unjoined]
    if a.size == 0:
        return none
    # Both ways round, then a stretch per pair of lanes.
    mine, theirs = np.concatenate((a, b)), np.concatenate((b, a))
    key = uid[mine] * info.n + uid[theirs]
    order = np.lexsort((p[mine], key))
    key, at = key[order], p[mine][order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    count = np.diff(np.r_[first, key.size])
    lo = at[first]
    hi = np.maximum.reduceat(at, first)
    keep = count >= MIN_SAMPLES
    half = 0.5 * STEP_M
    lane = key[first][keep] // info.n
    return Overlaps(
        lane,
        np.maximum(lo[keep] - half, 0.0),
        np.minimum(hi[keep] + half, info.length[lane]),
        key[first][keep] % info.n,
    )


def edge_stretches(info: LaneInfo, overlaps: Overlaps) -> tuple[FloatArray, FloatArray]:
    """Per lane uid, the progress from which traffic on it leaves the map and the one at
    which it comes back: the lane's length and 0, or where an overlap reaches the lane's
    dead end (`roadsim.world.codes.MAP_EDGE`) or its start where nothing leads in, that
    overlap's start and end (overlaps that join count as one)."""
    leave = info.length.copy()
    enter = np.zeros(info.n)
    if overlaps.size == 0:
        return leave, enter
    order = np.lexsort((overlaps.start, overlaps.lane))
    lane, start, end = overlaps.lane[order], overlaps.start[order], overlaps.end[order]
    no_way_in = info.prev_ptr[1:] == info.prev_ptr[:-1]
    dead_end = info.end_kind == MAP_EDGE
    # From each lane's start (ascending) and end (descending), while the stretches join.
    for k in range(lane.size):
        u = int(lane[k])
        if no_way_in[u] and start[k] <= enter[u] + STEP_M:
            enter[u] = max(enter[u], float(end[k]))
    for k in range(lane.size - 1, -1, -1):
        u = int(lane[k])
        if dead_end[u] and end[k] >= leave[u] - STEP_M:
            leave[u] = min(leave[u], float(start[k]))
    return leave, enter
