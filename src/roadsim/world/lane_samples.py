"""Lanes sampled once, read every tick: centre points, boundaries and curvature.

The exact lane geometry (reference line plus width polynomials) costs dozens of array
operations per query. The traffic model asks the same questions every tick (where is the
centre of my lane 20 m ahead, how sharp is the curve there, is this t still inside the
lane), so `LaneSamples` samples every drivable lane record at uniform steps of at most
`STEP` metres along its driving direction, from its start to its end, and answers by
linear interpolation. Between samples the error is of the order ``STEP**2 / 8`` times the
second derivative: well under a millimetre for lane boundaries on real maps.

A straight lane record of constant or linearly changing width (every sample on the line
between its two end samples, within `LINEAR_TOL`) keeps only those two: interpolating
between them gives the same answers, and the tables of a map of long straight roads
shrink several times (27 MB to 7 MB on the benchmark's grid, `benchmarks/grid_map.py`),
so that more of them stays in the caches while thousands of vehicles read them every
tick.

The tick reads the samples through compiled look-ups (`roadsim.world.lane_kernels`);
`LaneSamples.pose` and `LaneSamples.bounds` answer set-up code (spawning) with arrays.
"""

from __future__ import annotations

import numpy as np

from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.road.network import RoadNetwork
from roadsim.world.codes import ENVELOPE_DECEL as ENVELOPE_DECEL

STEP = 2.0  # m, largest distance between two samples of a lane
LATERAL_ACCEL = 2.5  # m/s^2 that traffic accepts in curves
MAX_SPEED = 100.0  # m/s, the envelope's ceiling on straight lanes
_BIAS = 1e7  # > any v^2 + 2 b p of one lane (p < 3,000 km)
# How far a sample may lie off the line between its lane's end samples for the lane to
# count as straight: positions and boundaries (m), the direction vector's components and
# the curvature (1/m); the speed envelope (read at the sample below, not interpolated)
# must be the same at every sample, but for the rounding of its running minimum (m^2/s^2).
LINEAR_TOL = 1e-6
DIRECTION_TOL = 1e-9
CURVATURE_TOL = 1e-9
ENVELOPE_TOL = 1e-3


class LaneSamples:
    """Uniform samples of lane records, indexed by progress.

    Args:
        net: The road network.
        lanes: The lane uids to sample (others answer from a one-sample stub).
        s0, s1, sign: Each uid's section range and driving sign (see
            `roadsim.world.lane_info.LaneInfo`).
        dense: Lane uids that keep all their samples even where straight (the junction
            conflict search reads the samples as points along the lane).

    Attributes:
        ptr: First sample of each uid; uid ``u`` has samples ``ptr[u]:ptr[u + 1]``.
        count: Samples of each uid: two for a straight lane record, else enough for at
            most `STEP` between two.
        spacing: Distance between two samples of each uid (m).
        x, y: Lane centre (m).
        t_lo, t_hi: Lane boundaries as t on the road (m), ``t_lo <= t_hi``.
        dir_x, dir_y: Unit vector of the driving direction along the centre line.
        curvature: Centre-line curvature, signed in driving direction (1/m).
        envelope_sq: Square of the highest speed at each sample from which traffic can
            still slow down for the curves further along the lane record (m^2/s^2).
    """

    def __init__(
        self,
        net: RoadNetwork,
        lanes: IntArray,
        s0: FloatArray,
        s1: FloatArray,
        sign: FloatArray,
        dense: IntArray | None = None,
    ) -> None:
        n = s0.size
        length = s1 - s0
        count = np.ones(n, dtype=np.int64)
        count[lanes] = np.maximum(np.ceil(length[lanes] / STEP).astype(np.int64), 1) + 1
        self.ptr: IntArray = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(count, out=self.ptr[1:])
        self.spacing: FloatArray = np.where(count > 1, length / np.maximum(count - 1, 1), 1.0)
        self.count = count

        uid = np.repeat(np.arange(n, dtype=np.int64), count)
        k = np.arange(uid.size) - self.ptr[uid]
        p = k * self.spacing[uid]
        s = np.where(sign[uid] >= 0, s0[uid] + p, s1[uid] - p)
        s = np.clip(s, s0[uid], s1[uid])
        self.x, self.y, self.t_lo, self.t_hi, self.curvature = (
            np.zeros(uid.size) for _ in range(5)
        )
        live = np.isin(uid, lanes)
        u, sv = uid[live], s[live]
        road = net.lanes.road[u]
        offset = net.lane_offset.evaluate(road, sv)
        outer = net.lanes.t_outer(u, sv, offset)
        inner = net.lanes.t_outer(net.lanes.inner_or_self(u), sv, offset)
        t = 0.5 * (inner + outer)
        xr, yr, hr, kr = net.reference.evaluate(road, sv)
        self.x[live] = xr - t * np.sin(hr)
        self.y[live] = yr + t * np.cos(hr)
        # Direction of the centre line: the reference's, turned by atan(t' / (1 - k t)),
        # reversed for lanes driven against s.
        h = 1e-3
        slope = (net.uid_t_center(u, sv + h) - net.uid_t_center(u, sv - h)) / (2.0 * h)
        heading = hr + np.arctan2(slope, 1.0 - kr * t) + np.where(sign[u] < 0, np.pi, 0.0)
        self.dir_x, self.dir_y = np.zeros(uid.size), np.zeros(uid.size)
        self.dir_x[live], self.dir_y[live] = np.cos(heading), np.sin(heading)
        self.t_lo[live] = np.minimum(inner, outer)
        self.t_hi[live] = np.maximum(inner, outer)
        self.curvature[live] = net.uid_curvature(u, sv)
        self._turn_per_metre(uid, k, length)
        self.envelope_sq = self._envelope(uid, p)
        straight = self._straight(uid, k)
        if dense is not None:
            straight[dense] = False
        self._keep_ends(uid, k, straight, length)

    def _turn_per_metre(self, uid: IntArray, k: IntArray, length: FloatArray) -> None:
        """Replaces a sample's curvature by the turn of the centre line per metre around
        it where the point value is a spike.

        Converted maps join geometries with kinks and centimetre-long pieces of absurd
        curvature (Town07: -630 1/m at a lane's end); read at one sample, such a spike
        stops traffic (the speed envelope falls to 6 cm/s) and throws the steering. A
        vehicle follows the heading change over metres: the angle between the chords to
        the samples before and after, over their mean length (at least a metre; a lane's
        end samples take their neighbour's). On a smooth curve the two agree to the
        sampling error, and the point value stays."""
        n = uid.size
        if n < 3:
            return
        same_before = np.r_[False, uid[1:] == uid[:-1]]
        same_after = np.r_[uid[:-1] == uid[1:], False]
        inner = same_before & same_after
        j = np.flatnonzero(inner)
        ax, ay = self.x[j] - self.x[j - 1], self.y[j] - self.y[j - 1]
        bx, by = self.x[j + 1] - self.x[j], self.y[j + 1] - self.y[j]
        turn = np.arctan2(ax * by - ay * bx, ax * bx + ay * by)
        span = np.maximum(0.5 * (np.hypot(ax, ay) + np.hypot(bx, by)), 1.0)
        windowed = np.zeros(n)
        windowed[j] = turn / span
        # The ends of a lane: their neighbour's value (a lane of two samples: none).
        first = same_after & ~same_before
        last = same_before & ~same_after
        head, tail = np.flatnonzero(first), np.flatnonzero(last)
        windowed[head] = np.where(inner[head + 1], windowed[head + 1], 0.0)
        windowed[tail] = np.where(inner[tail - 1], windowed[tail - 1], 0.0)
        spike = np.abs(self.curvature) > 2.0 * np.abs(windowed) + 0.05
        self.curvature = np.where(spike, windowed, self.curvature)

    def _envelope(self, uid: IntArray, p: FloatArray) -> FloatArray:
        """Squared speed envelope of each sample: the highest speed from which a vehicle
        braking at `ENVELOPE_DECEL` keeps the lateral acceleration at the curves ahead in
        its lane record below `LATERAL_ACCEL`. A reverse running minimum per lane of
        ``v_curve(j)**2 + 2 b p_j``, minus ``2 b p``."""
        v_sq = np.minimum(LATERAL_ACCEL / np.maximum(np.abs(self.curvature), 1e-9), MAX_SPEED**2)
        key = v_sq + 2.0 * ENVELOPE_DECEL * p
        # Bias each lane so that a running minimum never crosses from one lane to the next.
        bias = (uid.astype(np.float64) + 1.0) * _BIAS
        reverse_min = np.minimum.accumulate((key + bias)[::-1])[::-1] - bias
        return np.maximum(reverse_min - 2.0 * ENVELOPE_DECEL * p, 0.0)

    def _straight(self, uid: IntArray, k: IntArray) -> BoolArray:
        """Which uids have more than two samples, all of them on the line between the
        first and the last (within the tolerances above), and one speed envelope."""
        first, last = self.ptr[uid], self.ptr[uid + 1] - 1
        w = k / np.maximum(self.count[uid] - 1, 1)
        straight = self.count > 2
        columns = (
            (self.x, LINEAR_TOL),
            (self.y, LINEAR_TOL),
            (self.t_lo, LINEAR_TOL),
            (self.t_hi, LINEAR_TOL),
            (self.dir_x, DIRECTION_TOL),
            (self.dir_y, DIRECTION_TOL),
            (self.curvature, CURVATURE_TOL),
        )
        for values, tol in columns:
            a, b = values[first], values[last]
            off = np.abs(values - (a + w * (b - a)))
            straight[uid[~(off <= tol)]] = False  # NaN counts as off the line
        off = np.abs(self.envelope_sq - self.envelope_sq[first])
        straight[uid[~(off <= ENVELOPE_TOL)]] = False
        return straight

    def _keep_ends(
        self, uid: IntArray, k: IntArray, straight: BoolArray, length: FloatArray
    ) -> None:
        """Drops all but the first and the last sample of the ``straight`` uids."""
        count = self.count
        keep = ~straight[uid] | (k == 0) | (k == count[uid] - 1)
        count = np.where(straight, 2, count)
        self.ptr = np.zeros(count.size + 1, dtype=np.int64)
        np.cumsum(count, out=self.ptr[1:])
        self.spacing = np.where(count > 1, length / np.maximum(count - 1, 1), 1.0)
        self.count = count
        self.x, self.y, self.t_lo, self.t_hi = (
            v[keep] for v in (self.x, self.y, self.t_lo, self.t_hi)
        )
        self.dir_x, self.dir_y = self.dir_x[keep], self.dir_y[keep]
        self.curvature, self.envelope_sq = self.curvature[keep], self.envelope_sq[keep]

    def _at(self, uid: IntArray, p: FloatArray) -> tuple[IntArray, FloatArray]:
        """Sample index below progress p and the weight of the next sample."""
        f = np.maximum(p, 0.0) / self.spacing[uid]
        i = np.minimum(f.astype(np.int64), self.count[uid] - 2)
        i = np.maximum(i, 0)
        w = np.clip(f - i, 0.0, 1.0)
        return self.ptr[uid] + i, w

    def _lerp(self, values: FloatArray, k: IntArray, w: FloatArray, uid: IntArray) -> FloatArray:
        nxt = np.minimum(k + 1, self.ptr[uid + 1] - 1)
        return values[k] + w * (values[nxt] - values[k])

    def pose(self, uid: IntArray, p: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """World (x, y, heading) of the lane centre at progress p, facing the driving direction."""
        k, w = self._at(uid, p)
        dx = self._lerp(self.dir_x, k, w, uid)
        dy = self._lerp(self.dir_y, k, w, uid)
        return self._lerp(self.x, k, w, uid), self._lerp(self.y, k, w, uid), np.arctan2(dy, dx)

    def bounds(self, uid: IntArray, p: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Lane boundaries (t_lo, t_hi) at progress p."""
        k, w = self._at(uid, p)
        return self._lerp(self.t_lo, k, w, uid), self._lerp(self.t_hi, k, w, uid)
