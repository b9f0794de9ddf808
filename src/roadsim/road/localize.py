"""Localisation: world points to (road, lane, s, t), and the road surface height under them.

How the index works (built once per network, queried vectorised over points):

1. **Segments.** Every road's reference line is cut wherever something changes definition
   (planView geometry records, lane sections, lane width/border records, laneOffset,
   elevation and superelevation records), and further until each piece turns little. Per
   segment we keep cubic Hermite polynomials in ``u = (s - s_a) / h`` of x, y, heading,
   elevation and superelevation, matching value and derivative at both ends (end values
   taken as left limits, so a jump at the next record does not leak in). Each segment is
   checked against the exact line at its midpoint and halved until it is within ~1e-5 m.
2. **Fences.** The points of constant s, ``r(s) + t e_t(s)`` (``e_t`` tilted by the
   superelevation, OpenDRIVE 1.8, 8.4.2), project onto the ground as a straight line: the
   *fence* at s, through ``r(s)`` along the horizontal part ``w(s)`` of ``e_t``. A point
   lies within a segment's s-range exactly when it is past the segment's start fence and
   before its end fence; this test needs no approximation.
3. **Grid.** Each segment's region (its s-range times the road's lateral extent there, as an
   oriented box with a margin for curvature) is entered into the cells of a uniform grid it
   overlaps (2 m cells; larger on maps over ~2.8 km square, at most 2 M cells). A query
   takes the segments of its cell, keeps those whose fences bracket it, and solves the
   segment's polynomials for the s whose fence passes through it (regula falsi on the two
   fence distances, then Newton), reading t along ``w(s)``.
4. **Lanes.** Between consecutive break points every lane's outer boundary (laneOffset plus
   widths, or a border) is one cubic in s, stored per (piece, lane) in the lane-uid order
   of `roadsim.road.lanes.LaneRecords`, where boundaries decrease from the leftmost lane to
   the rightmost. A per-segment table over t (0.1 m bins) guesses how many boundaries lie
   above t; the two boundaries around t are then evaluated and checked, with a bisection
   where the guess fails, so a returned lane always contains the point.
5. **Choice.** Where lanes of several roads contain a point (junctions, bridges), the one
   chosen is: the nearest surface in height when z is given (surfaces within `Z_TOLERANCE`
   of the nearest compete on the next rules, with a small preference for the nearer),
   then a drivable lane (`roadsim.road.lanes.DRIVABLE_TYPES`) over any other, then the lane
   whose driving direction best matches the heading hint, then the lane whose centre is
   nearest.

Limits: lane height records (``<height>``) are ignored (the surface is the lane section's
plane). Where a lane reaches past its reference line's centre of curvature the road folds
over itself: a point there has several (s, t), and one that maps back to it is returned,
or none. Points beyond a road's ends are not on it.

Speed: queries run in blocks of `_BLOCK` points so temporaries stay in cache, and gather
with `numpy.take` (faster than fancy indexing); about 2.5 M points/s on one core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt

from roadsim._types import BoolArray, FloatArray, IntArray, ObjectArray
from roadsim.road.budget import Budget, check_budget
from roadsim.road.geometry import PARAM, ReferenceLines
from roadsim.road.lanes import DRIVABLE_TYPES, lane_type_code

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork


#: Surfaces within this height (m) of the one nearest to a query's z count as equally near.
Z_TOLERANCE = 1.0
#: Longest segment (m); shorter where the reference line curves.
_MAX_SEGMENT = 20.0
#: A heading error counts as a position error at this distance from the line (m).
_HEADING_LEVER = 4.0
#: Segments are not split below this length (m), nor more than this many times.
_MIN_SEGMENT = 0.01
_SPLIT_ROUNDS = 8
#: Largest heading change within a segment (rad); keeps its cos/sin series exact.
_MAX_TURN = 0.15
#: Hermite position error target (m): a segment of length h turning by theta errs by about
#: h * theta**3 / 384, so h is chosen with h**4 * kappa**3 <= 384 * this.
_HERMITE_TOL = 5e-6
#: End values of a segment are evaluated this far (m) before a break, as left limits.
_LEFT_LIMIT = 1e-7
#: Fence test slack (m): a point this close to a fence belongs to both neighbours.
_FENCE_SLACK = 1e-6
#: A Newton correction larger than this (m) is followed by another full evaluation; below
#: it, the second-order correction of t is far under a micrometre.
_REFINE = 2e-3
#: Points are processed in blocks of this many, so temporaries stay in cache.
_BLOCK = 16384
#: Width (m) of the bins of t in which each segment keeps a first guess of the lane, and
#: the most bins a segment keeps (wider bins where its lanes span more than 100 m).
_HINT_BIN = 0.1
_MAX_HINT_BINS = 1024
#: Segments a road may need (real maps need under one per metre; see `check_budget`).
_SEGMENT_BUDGET = Budget("localisation segments", 1e4, 5.0)
#: Grid cells: at least this size (m), and at most this many cells in all.
_CELL_SIZE = 2.0
_MAX_CELLS = 2_000_000
#: Weights of the rules that choose between overlapping lanes (see the module docstring).
_W_Z_BEYOND, _W_NOT_DRIVABLE, _W_Z, _W_CENTRE = 100.0, 10.0, 1.0, 0.05
# Interior Chebyshev nodes on [0, 1]: a cubic through them is exact, and no node sits on a
# piece end, where the next record would be picked.
_NODES = 0.5 - 0.5 * np.cos((2 * np.arange(4) + 1) * np.pi / 8)
_FROM_NODES = np.linalg.inv(_NODES[:, None] ** np.arange(4)[None, :])

# Rows of the per-segment table: start point, cos/sin of the start heading, position
# polynomials in the start frame (along, normal), heading change, length scale, s range,
# u range within the lane piece, start heading, elevation and superelevation.
_X0, _Y0, _COS, _SIN = 0, 1, 2, 3
_LX, _LY, _DH = 4, 7, 10  # three coefficients each (u, u^2, u^3)
_HS, _SA, _H, _UA, _DU, _H0 = 13, 14, 15, 16, 17, 18
_Z, _ROLL = 19, 23  # value then three coefficients each
_ROWS = 27


@dataclass(frozen=True)
class LanePosition:
    """Where world points lie on the road network; every field has the points' shape.

    Attributes:
        on_lane: Whether the point lies on a lane. Off-lane points carry the markers below.
        road_index: Road index (-1 off lane).
        road_id: OpenDRIVE road id (``None`` off lane).
        lane_id: OpenDRIVE lane id (0 off lane; ``on_lane`` is the marker).
        uid: Lane uid (see `roadsim.road.lanes.LaneRecords`; -1 off lane).
        s: Position along the road's reference line (m; NaN off lane).
        t: Lateral position from the reference line, along the superelevated lateral
            axis (m; NaN off lane).
        heading: Reference-line heading at s, turned by pi for lanes driven against s: the
            direction a vehicle in the lane drives (rad, in [-pi, pi); NaN off lane).
        surface_z: Height of the road surface at (s, t) (m; NaN off lane).
    """

    on_lane: BoolArray
    road_index: IntArray
    road_id: ObjectArray
    lane_id: IntArray
    uid: IntArray
    s: FloatArray
    t: FloatArray
    heading: FloatArray
    surface_z: FloatArray

    def __len__(self) -> int:
        return int(self.on_lane.size)


@dataclass(frozen=True)
class _Hits:
    """Lanes containing query points: one row per (point, segment) hit, sorted by point."""

    point: IntArray
    segment: IntArray
    u: FloatArray  # segment parameter
    t: FloatArray
    uid: IntArray
    lower: FloatArray  # t of the lane's right boundary
    upper: FloatArray  # t of the lane's left boundary


class Localizer:
    """Spatial index of a road network's lanes, answering `localize` and `surface_height`.

    Build cost is linear in the network size (CARLA Town07: ~12 ms). A query costs about
    0.4 microseconds per point plus ~0.3 ms per call, on one core.

    Args:
        net: The road network; only read.
        cell_size: Smallest grid cell edge (m).
    """

    def __init__(self, net: RoadNetwork, *, cell_size: float = _CELL_SIZE) -> None:
        self.net = net
        lanes = net.lanes
        drivable = np.array([lane_type_code(n) for n in DRIVABLE_TYPES], dtype=np.int64)
        self._drivable: BoolArray = np.isin(lanes.type_code, drivable)
        self._bidirectional: BoolArray = lanes.type_code == lane_type_code("bidirectional")
        self._reverse: BoolArray = net.driving_sign(np.arange(len(lanes.lanes))) < 0
        self._tilted = bool(np.any(net.superelevation.coef != 0.0))
        self._road_id: ObjectArray = np.array(net.road_ids, dtype=object)
        road, a, b = _break_intervals(net)
        self._build_pieces(road, a, b)
        self._build_segments(road, a, b)
        self._build_grid(cell_size)

    # -- construction -------------------------------------------------------------------------

    def _build_pieces(self, road: IntArray, a: FloatArray, b: FloatArray) -> None:
        """Per break interval (piece), the cubic in its u of every lane's outer boundary."""
        net, lanes = self.net, self.net.lanes
        # The midpoint decides the section: a piece never straddles a section start.
        sec = lanes.section_at(road, 0.5 * (a + b))
        count = lanes.sec_count[sec]
        first = np.cumsum(count) - count
        piece = np.repeat(np.arange(road.size), count)
        uid = lanes.sec_first_uid[sec][piece] + np.arange(piece.size) - first[piece]
        s = a[piece, None] + (b - a)[piece, None] * _NODES[None, :]
        values = net.uid_t_outer(np.repeat(uid, 4), s.ravel()).reshape(-1, 4)
        self._piece_first: IntArray = first
        self._piece_count: IntArray = count
        self._piece_uid: IntArray = lanes.sec_first_uid[sec]
        self._bound: FloatArray = np.ascontiguousarray((values @ _FROM_NODES.T).T)
        max_count = int(count.max()) if count.size else 1
        self._bisect_steps = int(np.ceil(np.log2(max_count + 1)))

    def _build_segments(self, road: IntArray, a: FloatArray, b: FloatArray) -> None:
        """Cuts the pieces into segments and fits their polynomials and fences."""
        net, ref = self.net, self.net.reference
        length = b - a
        # Curvature bound per piece from five samples (a piece lies in one planView record).
        frac = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
        ss = a[:, None] + length[:, None] * frac[None, :]
        ss[:, -1] -= _LEFT_LIMIT
        _, _, _, k = ref.evaluate(np.repeat(road, 5), ss.ravel())
        kmax = np.max(np.abs(k).reshape(-1, 5), axis=1) * 1.25
        with np.errstate(over="ignore", invalid="ignore"):
            need = np.maximum.reduce(
                [
                    np.ceil(length / _MAX_SEGMENT),
                    np.ceil(length * kmax / _MAX_TURN),
                    np.ceil(length * kmax**0.75 / (384 * _HERMITE_TOL) ** 0.25),
                    np.ones_like(length),
                ]
            )
        # Before the cast: an absurd curvature can ask for more than int64 holds.
        check_budget(net, road, np.where(np.isnan(need), np.inf, need), _SEGMENT_BUDGET)
        n_sub = need.astype(np.int64)
        piece = np.repeat(np.arange(road.size), n_sub)
        j = np.arange(piece.size) - np.repeat(np.cumsum(n_sub) - n_sub, n_sub)
        ua, ub = j / n_sub[piece], (j + 1) / n_sub[piece]
        ub[j == n_sub[piece] - 1] = 1.0
        # Check the Hermite polynomials against the exact line at each segment's midpoint
        # and halve the segments that miss (strongly varying paramPoly3 curvature, or a
        # record evaluated beyond its length).
        kept: list[tuple[IntArray, FloatArray, FloatArray]] = []
        half = np.array([0.5, 0.25, 0.125])
        for attempt in range(_SPLIT_ROUNDS):
            fit = _fit_line(ref, road[piece], a[piece], b[piece], ua, ub)
            n = piece.size
            x, y, hdg, _ = ref.evaluate(road[piece], a[piece] + (b - a)[piece] * 0.5 * (ua + ub))
            miss = np.hypot(fit.x[:n] + half @ fit.cx - x, fit.y[:n] + half @ fit.cy - y)
            miss += np.abs(_wrap(fit.h0 + half @ fit.ck - hdg)) * _HEADING_LEVER
            bad = (miss > 4 * _HERMITE_TOL) & (fit.h > _MIN_SEGMENT)
            if attempt == _SPLIT_ROUNDS - 1 or not bad.any():
                kept.append((piece, ua, ub))
                break
            good = ~bad
            kept.append((piece[good], ua[good], ub[good]))
            mid = 0.5 * (ua[bad] + ub[bad])
            piece = np.concatenate((piece[bad], piece[bad]))
            every = np.concatenate([p for p, _, _ in kept] + [piece])
            check_budget(net, road[every], np.ones(every.size), _SEGMENT_BUDGET)
            ua, ub = np.concatenate((ua[bad], mid)), np.concatenate((mid, ub[bad]))
        if len(kept) > 1:
            piece, ua, ub = (np.concatenate(parts) for parts in zip(*kept, strict=True))
            order = np.lexsort((ua, piece))
            piece, ua, ub = piece[order], ua[order], ub[order]
            fit = _fit_line(ref, road[piece], a[piece], b[piece], ua, ub)
        n = piece.size
        r2, s2, x, y, ch, sh, h = fit.road2, fit.s2, fit.x, fit.y, fit.ch, fit.sh, fit.h
        seg_road = road[piece]
        z = net.elevation.evaluate(r2, s2)
        slope = net.elevation.evaluate(r2, s2, derivative=1)
        roll = net.superelevation.evaluate(r2, s2)
        droll = net.superelevation.evaluate(r2, s2, derivative=1)
        c0, s0 = ch[:n], sh[:n]
        tab = np.empty((_ROWS, n))
        tab[_X0], tab[_Y0], tab[_COS], tab[_SIN] = x[:n], y[:n], c0, s0
        tab[_LX : _LX + 3] = fit.cx * c0 + fit.cy * s0
        tab[_LY : _LY + 3] = fit.cy * c0 - fit.cx * s0
        tab[_DH : _DH + 3] = fit.ck
        tab[_HS] = 0.5 * (fit.m0 + fit.m1)
        tab[_SA], tab[_H], tab[_UA], tab[_DU], tab[_H0] = s2[:n], h, ua, ub - ua, fit.h0
        tab[_Z], tab[_Z + 1 : _Z + 4] = z[:n], _hermite(z[:n], z[n:], h * slope[:n], h * slope[n:])
        tab[_ROLL] = roll[:n]
        tab[_ROLL + 1 : _ROLL + 4] = _hermite(roll[:n], roll[n:], h * droll[:n], h * droll[n:])
        self._tab: FloatArray = tab
        self._seg_road: IntArray = seg_road
        self._seg_bfirst: IntArray = self._piece_first[piece]
        self._seg_bcount: IntArray = self._piece_count[piece]
        self._seg_uid0: IntArray = self._piece_uid[piece]
        # Fences: the horizontal part of e_t is cos(roll) n + c T, with
        # c = -sin(roll) slope / sqrt(1 + slope^2) (n, T: horizontal normal and tangent).
        ta = np.cos(roll)
        tc = -np.sin(roll) * slope / np.sqrt(1.0 + slope * slope)
        wx, wy = -ta * sh + tc * ch, ta * ch + tc * sh
        self._fence: FloatArray = np.stack(
            (x[:n], y[:n], wx[:n], wy[:n], x[n:], y[n:], wx[n:], wy[n:])
        )
        self._seg_tmin, self._seg_tmax = self._build_lane_hints(piece, ua, ub)
        self._seg_turn: FloatArray = np.abs(fit.h1 - fit.h0) + np.abs(roll[n:] - roll[:n])

    def _build_lane_hints(
        self, piece: IntArray, ua: FloatArray, ub: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """The lane hint table; returns the exact range of t of all lane boundaries of each
        segment's piece over the segment's u-range."""
        count = self._piece_count[piece]
        rep = np.repeat(np.arange(piece.size), count)
        starts = np.cumsum(count) - count
        entry = self._piece_first[piece][rep] + np.arange(rep.size) - starts[rep]
        c0, c1, c2, c3 = self._bound[:, entry]
        lo, hi = ua[rep], ub[rep]
        qa, qb = 3.0 * c3, 2.0 * c2
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.sqrt(qb * qb - 4.0 * qa * c1)
            r1 = np.where(qa != 0, (-qb + root) / (2 * qa), -c1 / qb)
            r2 = np.where(qa != 0, (-qb - root) / (2 * qa), lo)
        cand = np.stack((lo, hi, r1, r2))
        cand = np.clip(np.where(np.isfinite(cand), cand, lo), lo, hi)
        vals = c0 + cand * (c1 + cand * (c2 + cand * c3))
        if piece.size:
            tmin = np.minimum.reduceat(vals.min(axis=0), starts)
            tmax = np.maximum.reduceat(vals.max(axis=0), starts)
        else:
            tmin = tmax = np.zeros(0)
        # Lane hints: per segment, bins of t of width _HINT_BIN from tmin; a bin holds the
        # number of boundaries above its centre at the segment's middle (the bisection's
        # answer for most points; `_lane_at` checks it).
        width = np.maximum(_HINT_BIN, (tmax - tmin) / _MAX_HINT_BINS)
        bins = np.ceil((tmax - tmin) / width).astype(np.int64) + 1
        bin0 = np.cumsum(bins) - bins
        mid = 0.5 * (lo + hi)
        at_mid = c0 + mid * (c1 + mid * (c2 + mid * c3))
        below = np.clip(np.ceil((at_mid - tmin[rep]) / width[rep] - 0.5), 0, bins[rep]).astype(
            np.int64
        )
        size = int(bins.sum()) + 1
        steps = np.bincount(bin0[rep], minlength=size) - np.bincount(
            bin0[rep] + below, minlength=size
        )
        self._hint: IntArray = np.cumsum(steps[:-1])
        self._seg_bin0: IntArray = bin0
        self._seg_bins: IntArray = bins
        self._seg_bin_scale: FloatArray = 1.0 / width
        return tmin, tmax

    def _build_grid(self, cell_size: float) -> None:
        keep = np.flatnonzero(self._seg_tmax - self._seg_tmin > 1e-9)
        tmin, tmax = self._seg_tmin[keep], self._seg_tmax[keep]
        x0, y0, wx0, wy0, x1, y1, wx1, wy1 = self._fence[:, keep]
        cx = np.stack((x0 + tmin * wx0, x0 + tmax * wx0, x1 + tmin * wx1, x1 + tmax * wx1))
        cy = np.stack((y0 + tmin * wy0, y0 + tmax * wy0, y1 + tmin * wy1, y1 + tmax * wy1))
        # An oriented box along the chord; the margin covers the bulge of curved edges.
        ax, ay = x1 - x0, y1 - y0
        norm = np.hypot(ax, ay)
        ok = norm > 1e-12
        ax = np.where(ok, ax / np.where(ok, norm, 1.0), -wy0)
        ay = np.where(ok, ay / np.where(ok, norm, 1.0), wx0)
        turn = self._seg_turn[keep]
        tabs = np.maximum(np.abs(tmin), np.abs(tmax))
        margin = 0.05 + (self._tab[_H, keep] + tabs * turn) * turn / 4.0
        px, py = cx - x0, cy - y0
        pa, pb = px * ax + py * ay, py * ax - px * ay
        amin, amax = pa.min(axis=0) - margin, pa.max(axis=0) + margin
        bmin, bmax = pb.min(axis=0) - margin, pb.max(axis=0) + margin
        bx0, bx1 = cx.min(axis=0) - margin, cx.max(axis=0) + margin
        by0, by1 = cy.min(axis=0) - margin, cy.max(axis=0) + margin
        if keep.size:
            gx, gy = float(bx0.min()), float(by0.min())
            span_x, span_y = float(bx1.max()) - gx, float(by1.max()) - gy
        else:
            gx = gy = span_x = span_y = 0.0
        cs = max(cell_size, float(np.sqrt(span_x * span_y / _MAX_CELLS)))
        nx, ny = int(span_x / cs) + 1, int(span_y / cs) + 1
        ix0 = ((bx0 - gx) / cs).astype(np.int64)
        ix1 = np.minimum(((bx1 - gx) / cs).astype(np.int64), nx - 1)
        iy0 = ((by0 - gy) / cs).astype(np.int64)
        iy1 = np.minimum(((by1 - gy) / cs).astype(np.int64), ny - 1)
        wide = iy1 - iy0 + 1
        cnt = (ix1 - ix0 + 1) * wide
        rep = np.repeat(np.arange(keep.size), cnt)
        local = np.arange(rep.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        ix = ix0[rep] + local // wide[rep]
        iy = iy0[rep] + local % wide[rep]
        # Separating-axis test of each cell against the oriented box (axes a and b).
        ccx = gx + (ix + 0.5) * cs - x0[rep]
        ccy = gy + (iy + 0.5) * cs - y0[rep]
        arx, ary = ax[rep], ay[rep]
        radius = 0.5 * cs * (np.abs(arx) + np.abs(ary))
        qa, qb = ccx * arx + ccy * ary, ccy * arx - ccx * ary
        hit = (qa + radius >= amin[rep]) & (qa - radius <= amax[rep])
        hit &= (qb + radius >= bmin[rep]) & (qb - radius <= bmax[rep])
        cell = (ix * ny + iy)[hit]
        item = keep[rep[hit]][np.argsort(cell, kind="stable")]
        # One extra empty cell at the end answers points outside the grid.
        self._cell_start: IntArray = np.zeros(nx * ny + 2, dtype=np.int64)
        np.cumsum(np.bincount(cell, minlength=nx * ny + 1), out=self._cell_start[1:])
        self._cell_segment: IntArray = item
        # Fences as linear forms of the point relative to the grid origin: the distance
        # past the fence through (fx, fy) along (wx, wy) is wy x - wx y + (wx fy - wy fx).
        fx0, fy0, wx0, wy0, fx1, fy1, wx1, wy1 = np.take(self._fence, item, axis=1)
        fx0, fx1, fy0, fy1 = fx0 - gx, fx1 - gx, fy0 - gy, fy1 - gy
        self._cell_fence: FloatArray = np.stack(
            (wy0, -wx0, wx0 * fy0 - wy0 * fx0, wy1, -wx1, wx1 * fy1 - wy1 * fx1)
        )
        self._grid = (gx, gy, 1.0 / cs, nx, ny)

    # -- queries ----------------------------------------------------------------------------------

    def localize(
        self,
        x: npt.ArrayLike,
        y: npt.ArrayLike,
        z: npt.ArrayLike | None = None,
        heading: npt.ArrayLike | None = None,
    ) -> LanePosition:
        """The lane containing each world point.

        Args:
            x, y: World position (m), broadcast together; any shape.
            z: Optional height (m) of each point (e.g. a vehicle's contact point); where
                surfaces overlap (bridges) the one nearest in height wins. NaN: no hint.
            heading: Optional heading hint (rad); where lanes overlap (junctions) the lane
                whose driving direction is closest wins. NaN: no hint.

        Returns:
            A `LanePosition` whose fields have the broadcast shape of x and y. Points on no
            lane are marked ``on_lane = False``; a lane is never reported for a point
            outside it (a point exactly on a lane boundary may go to either side).
        """
        px, py, zq, hq, shape = _points(x, y, z, heading)
        n = px.size
        road = np.full(n, -1, dtype=np.int64)
        uid = np.full(n, -1, dtype=np.int64)
        lane_id = np.zeros(n, dtype=np.int64)
        s, t, hdg, sz = (np.full(n, np.nan) for _ in range(4))
        # Blocks of points keep the temporaries in cache (about twice as fast).
        for lo in range(0, n, _BLOCK):
            blk = slice(lo, lo + _BLOCK)
            hits = self._hits(px[blk], py[blk])
            pick = self._choose(
                hits, None if zq is None else zq[blk], None if hq is None else hq[blk]
            )
            pt, seg, u = lo + hits.point[pick], hits.segment[pick], hits.u[pick]
            road[pt] = self._seg_road[seg]
            uid[pt] = hits.uid[pick]
            lane_id[pt] = self.net.lanes.lane_id[hits.uid[pick]]
            s[pt] = self._tab[_SA][seg] + u * self._tab[_H][seg]
            t[pt] = hits.t[pick]
            hdg[pt] = self._heading(seg, u, hits.uid[pick])
            sz[pt] = self._surface_z(seg, u, hits.t[pick])
        return LanePosition(
            on_lane=(road >= 0).reshape(shape),
            road_index=road.reshape(shape),
            road_id=self._road_ids(road).reshape(shape),
            lane_id=lane_id.reshape(shape),
            uid=uid.reshape(shape),
            s=s.reshape(shape),
            t=t.reshape(shape),
            heading=hdg.reshape(shape),
            surface_z=sz.reshape(shape),
        )

    def _road_ids(self, road: IntArray) -> ObjectArray:
        ids = np.full(road.size, None, dtype=object)
        on = np.flatnonzero(road >= 0)
        ids[on] = np.take(self._road_id, np.take(road, on))
        return ids

    def _choose(self, hits: _Hits, zq: FloatArray | None, hq: FloatArray | None) -> IntArray:
        """The hit chosen for each point that has any (see the module docstring)."""
        first = _group_starts(hits.point)
        if first.size == hits.point.size:
            return np.arange(first.size)  # no point lies on two lanes
        seg, uid = hits.segment, hits.uid
        score = np.where(self._drivable[uid], 0.0, _W_NOT_DRIVABLE)
        width = np.maximum(hits.upper - hits.lower, 1e-9)
        score += _W_CENTRE * np.abs(hits.t - 0.5 * (hits.upper + hits.lower)) / width
        if zq is not None:
            dz = np.abs(self._surface_z(seg, hits.u, hits.t) - zq[hits.point])
            dz = np.where(np.isnan(dz), 0.0, dz)
            dz -= _group_min(dz, first)
            score += _W_Z * dz + _W_Z_BEYOND * np.maximum(dz - Z_TOLERANCE, 0.0)
        if hq is not None:
            diff = np.abs(_wrap(self._heading(seg, hits.u, uid) - hq[hits.point]))
            diff = np.where(self._bidirectional[uid], np.minimum(diff, np.pi - diff), diff)
            score += np.where(np.isnan(diff), 0.0, diff)
        return _group_argmin(score, first)

    def surface_height(
        self, x: npt.ArrayLike, y: npt.ArrayLike, z_hint: npt.ArrayLike | None = None
    ) -> FloatArray:
        """Height of the road surface (any lane type) under each point; NaN off the road.

        Where surfaces overlap (bridges, overpasses), without ``z_hint`` the highest one is
        returned (what a ray cast down from above meets first); with it, the surface
        nearest to ``z_hint`` (what an object following the terrain at that height wants).

        Args:
            x, y: World position (m), broadcast together; any shape.
            z_hint: Optional current height (m) per point; NaN entries mean no hint.

        Returns:
            Surface z (m), in the broadcast shape of x and y.
        """
        px, py, zq, _, shape = _points(x, y, z_hint, None)
        out = np.full(px.size, np.nan)
        for lo in range(0, px.size, _BLOCK):
            blk = slice(lo, lo + _BLOCK)
            hits = self._hits(px[blk], py[blk])
            zs = self._surface_z(hits.segment, hits.u, hits.t)
            score = -zs
            if zq is not None:
                near = np.abs(zs - zq[blk][hits.point])
                score = np.where(np.isnan(near), score, near)
            pick = _group_argmin(score, _group_starts(hits.point))
            out[lo + hits.point[pick]] = zs[pick]
        return out.reshape(shape)

    # -- internals --------------------------------------------------------------------------------

    def _hits(self, px: FloatArray, py: FloatArray) -> _Hits:
        """Every (point, segment) whose segment lies in a lane that contains the point."""
        gx, gy, inv, nx, ny = self._grid
        fx = (px - gx) * inv
        fy = (py - gy) * inv
        inside = (fx >= 0) & (fx < nx) & (fy >= 0) & (fy < ny)
        cell = np.full(px.size, nx * ny, dtype=np.int64)
        idx = np.flatnonzero(inside)
        cell[idx] = fx[idx].astype(np.int64) * ny + fy[idx].astype(np.int64)
        start = self._cell_start[cell]
        count = self._cell_start[cell + 1] - start
        point = np.repeat(np.arange(px.size), count)
        entry = np.repeat(start - (np.cumsum(count) - count), count) + np.arange(point.size)
        f = self._cell_fence
        qx, qy = np.take(px - gx, point), np.take(py - gy, point)
        g0 = qx * np.take(f[0], entry) + qy * np.take(f[1], entry) + np.take(f[2], entry)
        g1 = qx * np.take(f[3], entry) + qy * np.take(f[4], entry) + np.take(f[5], entry)
        keep = np.flatnonzero((g0 >= -_FENCE_SLACK) & (g1 < _FENCE_SLACK))
        point, g0, g1 = np.take(point, keep), np.take(g0, keep), np.take(g1, keep)
        seg = np.take(self._cell_segment, np.take(entry, keep))
        # Regula falsi start: the fence distances are nearly linear in u.
        u = np.clip(g0 / np.maximum(g0 - g1, 1e-300), 0.0, 1.0)
        u, t, solved = self._solve(seg, np.take(px, point), np.take(py, point), u)
        ok, uid, lower, upper = self._lane_at(seg, u, t)
        ok &= solved
        k = np.flatnonzero(ok)
        return _Hits(point[k], seg[k], u[k], t[k], uid[k], lower[k], upper[k])

    def _solve(
        self, seg: IntArray, px: FloatArray, py: FloatArray, u: FloatArray, depth: int = 0
    ) -> tuple[FloatArray, FloatArray, BoolArray]:
        """The segment parameter u whose fence passes through (px, py), t there, and
        whether that was found (not where the road folds over itself: t beyond the
        reference line's centre of curvature)."""
        tab = self._tab
        dx, dy = px - np.take(tab[_X0], seg), py - np.take(tab[_Y0], seg)
        c, s = np.take(tab[_COS], seg), np.take(tab[_SIN], seg)
        lx, ly = dx * c + dy * s, dy * c - dx * s  # the point in the segment's start frame
        a1, a2, a3 = np.take(tab[_LX], seg), np.take(tab[_LX + 1], seg), np.take(tab[_LX + 2], seg)
        b1, b2, b3 = np.take(tab[_LY], seg), np.take(tab[_LY + 1], seg), np.take(tab[_LY + 2], seg)
        d1, d2, d3 = np.take(tab[_DH], seg), np.take(tab[_DH + 1], seg), np.take(tab[_DH + 2], seg)
        hs = np.take(tab[_HS], seg)
        ex = lx - u * (a1 + u * (a2 + u * a3))
        ey = ly - u * (b1 + u * (b2 + u * b3))
        turn = u * (d1 + u * (d2 + u * d3))
        # cos and sin of the small heading change by their series (|turn| <= ~0.2).
        q = turn * turn
        ct = 1.0 + q * (-0.5 + q * (1.0 / 24.0 + q * (-1.0 / 720.0 + q / 40320.0)))
        st = turn * (1.0 + q * (-1.0 / 6.0 + q * (1.0 / 120.0 + q * (-1.0 / 5040.0))))
        along = ex * ct + ey * st
        normal = ey * ct - ex * st
        dturn = d1 + u * (2.0 * d2 + 3.0 * u * d3)
        if self._tilted:
            # Distance to the fence w = a n + c T (horizontal part of the tilted e_t), and
            # its derivative in u with the change of a and c along the segment.
            h = np.take(tab[_H], seg)
            roll, droll = self._poly(_ROLL, seg, u), self._poly_slope(_ROLL, seg, u)
            slope = self._poly_slope(_Z, seg, u) / h
            dslope = self._poly_curvature(_Z, seg, u) / h
            root = np.sqrt(1.0 + slope * slope)
            sig, dsig = slope / root, dslope / (root * root * root)
            cr, sr = np.cos(roll), np.sin(roll)
            ta, tc = cr, -sr * sig
            dta, dtc = -sr * droll, -cr * droll * sig - sr * dsig
            gap = ta * along - tc * normal
            t = (ta * normal + tc * along) / (ta * ta + tc * tc)
            slope_g = dta * along - ta * (hs - normal * dturn) - dtc * normal + tc * along * dturn
            du = -gap / slope_g
            ok = slope_g < 0.0
            redo = np.abs(du) * hs > 1e-9  # t is read before the step: iterate to the end
        else:
            denom = hs - normal * dturn  # h (1 - kappa t): <= 0 beyond the centre of curvature
            du = along / denom
            # Moving the fence by ds changes the distance along it by ds^2 * kappa / 2.
            t = normal - 0.5 * du * du * hs * dturn
            ok = denom > 0.0
            # Near the centre of curvature the correction is not small: iterate to the end.
            redo = np.abs(du) * hs > np.where(denom > 0.5 * hs, _REFINE, 1e-9)
        u_new = u + du
        ok &= (u_new > -1e-9) & (u_new < 1.0 + 1e-9)
        u = np.clip(u_new, 0.0, 1.0)
        again = np.flatnonzero(redo & ok)
        if again.size:
            if depth < 6:
                u[again], t[again], ok[again] = self._solve(
                    seg[again], px[again], py[again], u[again], depth + 1
                )
            else:
                ok[again] = False
        return u, t, ok

    def _lane_at(
        self, seg: IntArray, u: FloatArray, t: FloatArray
    ) -> tuple[BoolArray, IntArray, FloatArray, FloatArray]:
        """The lane holding t in each segment's piece: (found, uid, lower t, upper t).

        Boundaries ``B_j`` (j in uid order) decrease; the lane holding t lies between
        ``B_c`` and ``B_(c-1)``, c the number of boundaries above t. The segment's lane
        hints give c for most points; where the bracket check fails (t near a boundary),
        a bisection finds it. Both boundaries are always checked against t.
        """
        up = np.take(self._tab[_UA], seg) + u * np.take(self._tab[_DU], seg)
        first = np.take(self._seg_bfirst, seg)
        count = np.take(self._seg_bcount, seg)
        tmin = np.take(self._seg_tmin, seg)
        scale = np.take(self._seg_bin_scale, seg)
        slot = np.clip((t - tmin) * scale, 0.0, np.take(self._seg_bins, seg) - 1)
        pos = np.take(self._hint, np.take(self._seg_bin0, seg) + slot.astype(np.int64))
        upper, lower = self._bracket(first, count, pos, up)
        miss = np.flatnonzero((lower > t) | (upper <= t))
        if miss.size:
            sub = self._bisect(first[miss], count[miss], np.take(up, miss), np.take(t, miss))
            pos[miss] = sub
            upper[miss], lower[miss] = self._bracket(first[miss], count[miss], sub, up[miss])
        found = (pos > 0) & (pos < count) & (lower <= t) & (upper > t)
        below = np.take(self._seg_uid0, seg) + np.minimum(pos, count - 1)
        uid = below - (np.take(self.net.lanes.lane_id, below) >= 0)
        return found, uid, lower, upper

    def _boundary(self, i: IntArray, up: FloatArray) -> FloatArray:
        b0, b1, b2, b3 = self._bound
        c0, c1, c2, c3 = np.take(b0, i), np.take(b1, i), np.take(b2, i), np.take(b3, i)
        return np.asarray(c0 + up * (c1 + up * (c2 + up * c3)))

    def _bracket(
        self, first: IntArray, count: IntArray, pos: IntArray, up: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """``B_(pos-1)`` and ``B_pos`` (+inf / -inf past the ends)."""
        upper = self._boundary(first + np.maximum(pos - 1, 0), up)
        lower = self._boundary(first + np.minimum(pos, count - 1), up)
        upper[pos <= 0] = np.inf
        lower[pos >= count] = -np.inf
        return upper, lower

    def _bisect(self, first: IntArray, count: IntArray, up: FloatArray, t: FloatArray) -> IntArray:
        """The number of boundaries above t, by a branch-free binary search."""
        last = first + count - 1
        pos = np.zeros(first.size, dtype=np.int64)
        for k in reversed(range(self._bisect_steps)):
            cand = pos + (1 << k)
            val = self._boundary(np.minimum(first + cand - 1, last), up)
            pos += ((val > t) & (cand <= count)) * (1 << k)
        return pos

    def _poly(self, row: int, seg: IntArray, u: FloatArray) -> FloatArray:
        tab = self._tab
        c0, c1, c2, c3 = tab[row][seg], tab[row + 1][seg], tab[row + 2][seg], tab[row + 3][seg]
        return np.asarray(c0 + u * (c1 + u * (c2 + u * c3)))

    def _poly_slope(self, row: int, seg: IntArray, u: FloatArray) -> FloatArray:
        tab = self._tab
        c1, c2, c3 = tab[row + 1][seg], tab[row + 2][seg], tab[row + 3][seg]
        return np.asarray(c1 + u * (2.0 * c2 + 3.0 * u * c3))

    def _poly_curvature(self, row: int, seg: IntArray, u: FloatArray) -> FloatArray:
        tab = self._tab
        return np.asarray(2.0 * tab[row + 2][seg] + 6.0 * u * tab[row + 3][seg])

    def _heading(self, seg: IntArray, u: FloatArray, uid: IntArray) -> FloatArray:
        tab = self._tab
        turn = u * (
            np.take(tab[_DH], seg)
            + u * (np.take(tab[_DH + 1], seg) + u * np.take(tab[_DH + 2], seg))
        )
        return _wrap(np.take(tab[_H0], seg) + turn + np.pi * self._reverse[uid])

    def _surface_z(self, seg: IntArray, u: FloatArray, t: FloatArray) -> FloatArray:
        z = self._poly(_Z, seg, u)
        if not self._tilted:
            return z
        roll = self._poly(_ROLL, seg, u)
        slope = self._poly_slope(_Z, seg, u) / np.take(self._tab[_H], seg)
        return np.asarray(z + t * np.sin(roll) / np.sqrt(1.0 + slope * slope))


class _LineFit(NamedTuple):
    """The reference line at both ends of segments (2N samples: starts, then ends), and
    cubic Hermite coefficients (3, N) of x, y and heading in u."""

    road2: IntArray
    s2: FloatArray
    x: FloatArray
    y: FloatArray
    ch: FloatArray
    sh: FloatArray
    h0: FloatArray
    h1: FloatArray
    h: FloatArray
    m0: FloatArray
    m1: FloatArray
    cx: FloatArray
    cy: FloatArray
    ck: FloatArray


def _fit_line(
    ref: ReferenceLines,
    road: IntArray,
    a: FloatArray,
    b: FloatArray,
    ua: FloatArray,
    ub: FloatArray,
) -> _LineFit:
    """Fits segments ``[a + (b - a) ua, a + (b - a) ub]`` of pieces ``[a, b]``.

    A segment ending at its piece's end is evaluated just before it (left limit).
    """
    last = ub >= 1.0
    s_a = a + (b - a) * ua
    s_b = np.where(last, b, a + (b - a) * ub)
    h = s_b - s_a
    n = road.size
    r2 = np.concatenate((road, road))
    s2 = np.concatenate((s_a, np.where(last, s_b - _LEFT_LIMIT, s_b)))
    x, y, hdg, curv = ref.evaluate(r2, s2)
    geom = ref.geometry_at(r2, s2)
    speed = np.ones(r2.size)  # ds_arc / ds: 1 except on scaled paramPoly3 records
    is_param = ref.kind[geom] == PARAM
    if is_param.any():
        speed[is_param] = ref.params.scale[ref.param_index[geom[is_param]]]
    h0 = hdg[:n]
    h1 = h0 + _wrap(hdg[n:] - h0)
    ch = np.cos(np.concatenate((h0, h1)))
    sh = np.sin(np.concatenate((h0, h1)))
    m0, m1 = h * speed[:n], h * speed[n:]
    cx = _hermite(x[:n], x[n:], m0 * ch[:n], m1 * ch[n:])
    cy = _hermite(y[:n], y[n:], m0 * sh[:n], m1 * sh[n:])
    ck = _hermite(h0, h1, m0 * curv[:n], m1 * curv[n:])
    return _LineFit(r2, s2, x, y, ch, sh, h0, h1, h, m0, m1, cx, cy, ck)


def _break_intervals(net: RoadNetwork) -> tuple[IntArray, FloatArray, FloatArray]:
    """Intervals (road, a, b) between consecutive break points of every road.

    Break points: road ends, geometry record starts and ends, lane sections, lane width and border
    records, laneOffset, elevation and superelevation records. Between two of them every
    quantity the localiser interpolates is one polynomial (or one planView record).
    """
    n = len(net.roads)
    lanes, ref = net.lanes, net.reference
    roads = np.arange(n, dtype=np.int64)
    parts_r = [roads, roads, np.repeat(roads, ref.count), lanes.sec_road]
    parts_s = [np.zeros(n), net.road_length, ref.s0, lanes.sec_s0]
    for pc in (lanes.widths, lanes.borders):
        owner = np.repeat(np.arange(pc.count.size), pc.count)
        parts_r.append(lanes.road[owner])
        parts_s.append(lanes.sec_s0[lanes.section[owner]] + pc.s0)
    for pc in (net.lane_offset, net.elevation, net.superelevation):
        parts_r.append(np.repeat(roads, pc.count))
        parts_s.append(pc.s0)
    # Geometry ends too: where a road declares more length than its records cover, the
    # line continues straight from the last record's end (a kink in curvature).
    parts_r.append(np.repeat(roads, ref.count))
    parts_s.append(ref.s0 + ref.glen)
    road = np.concatenate(parts_r)
    if road.size == 0:
        return road, np.zeros(0), np.zeros(0)
    s = np.clip(np.concatenate(parts_s), 0.0, net.road_length[road])
    # Breaks closer than 1e-6 m are merged. A planView record start wins (the last of
    # them, the record in force after it), so no segment straddles a geometry jump.
    geometric = np.zeros(road.size, dtype=bool)
    geometric[: 2 * n + ref.s0.size] = True
    # Sorted by road, then s (not on one axis base[road] + s: far into a big map that sum
    # rounds s, and would merge or split breaks wrongly).
    order = np.lexsort((s, road))
    new = np.diff(s[order]) > 1e-6
    new |= road[order][1:] != road[order][:-1]
    group = np.cumsum(np.concatenate(([False], new)))
    order = order[np.lexsort((-s[order], ~geometric[order], group))]
    group = np.sort(group)
    keep = order[np.concatenate(([True], group[1:] != group[:-1]))]
    road, s = road[keep], s[keep]
    pair = np.flatnonzero(road[1:] == road[:-1])
    return road[pair], s[pair], s[pair + 1]


def _hermite(f0: FloatArray, f1: FloatArray, m0: FloatArray, m1: FloatArray) -> FloatArray:
    """Coefficients (c1, c2, c3), stacked, of ``f(u) - f0`` for the cubic Hermite on [0, 1]."""
    d = f1 - f0
    return np.stack((m0, 3.0 * d - 2.0 * m0 - m1, -2.0 * d + m0 + m1))


def _wrap(angle: FloatArray) -> FloatArray:
    """Angles wrapped to [-pi, pi)."""
    return np.asarray(angle - 2.0 * np.pi * np.floor((angle + np.pi) * (0.5 / np.pi)))


def _points(
    x: npt.ArrayLike, y: npt.ArrayLike, z: npt.ArrayLike | None, heading: npt.ArrayLike | None
) -> tuple[FloatArray, FloatArray, FloatArray | None, FloatArray | None, tuple[int, ...]]:
    """Query arguments as flat float arrays, and the shape of the answer."""
    xv, yv = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    shape = xv.shape

    def flat(v: npt.ArrayLike | None) -> FloatArray | None:
        if v is None:
            return None
        return np.ascontiguousarray(np.broadcast_to(np.asarray(v, dtype=np.float64), shape)).ravel()

    return np.ravel(xv), np.ravel(yv), flat(z), flat(heading), shape


def _group_starts(group: IntArray) -> IntArray:
    """Start index of each run of equal values in ``group`` (sorted)."""
    if group.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))


def _group_min(values: FloatArray, starts: IntArray) -> FloatArray:
    """Per element, the minimum of ``values`` over its group (groups start at ``starts``)."""
    if values.size == 0:
        return values
    sizes = np.diff(np.append(starts, values.size))
    return np.repeat(np.minimum.reduceat(values, starts), sizes)


def _group_argmin(values: FloatArray, starts: IntArray) -> IntArray:
    """Index of the first minimum of ``values`` in each group (groups start at ``starts``)."""
    if values.size == 0 or starts.size == values.size:
        return np.arange(values.size)
    best = np.flatnonzero(values <= _group_min(values, starts))
    new = np.zeros(values.size, dtype=bool)
    new[starts] = True
    group = np.cumsum(new)[best]
    return best[np.concatenate(([True], group[1:] != group[:-1]))]
