"""Road reference lines: planView geometry evaluated for many (road, s) pairs at once.

Implements OpenDRIVE 1.8, 7.4-7.8: line, arc, spiral (clothoid, via Fresnel integrals),
poly3 and paramPoly3. All geometry records of a network are packed into flat arrays; one
call evaluates any mix of roads and positions.

Arc-length parameterised curves (poly3, paramPoly3) are mapped from s to their curve
parameter by true arc length: a table of cumulative lengths at ``_NODES`` parameter values
(Gauss-Legendre per interval) gives a cubic-Hermite first guess, and one Newton step on the
exact length integral refines it to about 1e-12 m. The true length is then scaled to the
declared ``length`` (OpenDRIVE 1.8, 7.8: pRange ``arcLength`` and ``normalized``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from roadsim._types import FloatArray, IntArray
from roadsim.road.model import Geometry
from roadsim.road.polynomials import RecordSearch

LINE, ARC, SPIRAL, PARAM = 0, 1, 2, 3
_KIND_CODES = {"line": LINE, "arc": ARC, "spiral": SPIRAL, "poly3": PARAM, "paramPoly3": PARAM}

# A spiral whose curvature changes by less than this over its length is drawn as an arc:
# the clothoid's deviation from the arc is below |dk| * L**2 / 6, far under a micrometre.
_SPIRAL_AS_ARC = 1e-12
_SPIRAL_MIN_M = 1e-6
_NODES = 64
_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
_GL_X = 0.5 * (_GL_X + 1.0)
_GL_W = 0.5 * _GL_W


def curve_pose(
    x0: npt.ArrayLike,
    y0: npt.ArrayLike,
    h0: npt.ArrayLike,
    k0: npt.ArrayLike,
    dk: npt.ArrayLike,
    ds: npt.ArrayLike,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Pose ``ds`` metres along a line, arc or spiral (OpenDRIVE 1.8, 7.4-7.6).

    Args:
        x0, y0, h0: The record's start position (m) and heading (rad).
        k0: Curvature at the start (1/m); 0 for a line.
        dk: Curvature rate (1/m^2); 0 for a line or an arc.
        ds: Distance along the record (m).

    Returns:
        ``(x, y, hdg, curvature)`` arrays in the broadcast shape of the arguments.
    """
    x0, y0, h0, k0, dk, ds = (
        np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(x0, y0, h0, k0, dk, ds)
    )
    hdg = h0 + k0 * ds + 0.5 * dk * ds * ds
    # Lines and arcs: the chord leaves at half the turning angle, 2 sin(k ds/2)/k long
    # (written with sinc so that k = 0 needs no special case).
    half = h0 + 0.5 * k0 * ds
    chord = ds * np.sinc(k0 * ds / (2.0 * np.pi))
    x = np.array(x0 + chord * np.cos(half))  # np.array: 0-d results stay assignable
    y = np.array(y0 + chord * np.sin(half))
    spiral = dk != 0.0
    if spiral.any():
        # The clothoid with curvature k(u) = c*u, started at u0 = k0/c, has heading
        # c*u**2/2 and position a * (C(u/a), sign(c) S(u/a)) with a = sqrt(pi/|c|)
        # (Fresnel integrals in scipy's normalisation).
        from scipy.special import fresnel  # (0.2 s to import: only where spirals are)

        c, k, d = dk[spiral], k0[spiral], ds[spiral]
        a = np.sqrt(np.pi / np.abs(c))
        u0 = k / c
        s0f, c0f = fresnel(u0 / a)
        s1f, c1f = fresnel((u0 + d) / a)
        dx = a * (c1f - c0f)
        dy = a * np.sign(c) * (s1f - s0f)
        rot = h0[spiral] - 0.5 * c * u0 * u0
        cr, sr = np.cos(rot), np.sin(rot)
        x[spiral] = x0[spiral] + cr * dx - sr * dy
        y[spiral] = y0[spiral] + sr * dx + cr * dy
    return x, y, hdg, k0 + dk * ds


class ReferenceLines:
    """The planView of every road of a network.

    Args:
        geometries: Per road, its geometry records sorted by s.
        lengths: Per road, its declared length (m).
    """

    def __init__(self, geometries: Sequence[Sequence[Geometry]], lengths: Sequence[float]) -> None:
        n_roads = len(geometries)
        self.length: FloatArray = np.asarray(lengths, dtype=np.float64)
        self.base: FloatArray = np.concatenate(([0.0], np.cumsum(self.length + 1.0)[:-1]))
        counts = np.array([len(g) for g in geometries], dtype=np.int64)
        self.first: IntArray = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        self.count: IntArray = counts
        flat = [g for road in geometries for g in road]
        road = np.repeat(np.arange(n_roads, dtype=np.int64), counts)
        self.s0: FloatArray = np.array([g.s for g in flat], dtype=np.float64)
        self.search = RecordSearch(
            np.minimum(self.s0, self.length[road]), self.base, self.first, self.count
        )
        self.x0: FloatArray = np.array([g.x for g in flat], dtype=np.float64)
        self.y0: FloatArray = np.array([g.y for g in flat], dtype=np.float64)
        self.h0: FloatArray = np.array([g.hdg for g in flat], dtype=np.float64)
        self.glen: FloatArray = np.array([g.length for g in flat], dtype=np.float64)
        kind = np.array([_KIND_CODES[g.kind] for g in flat], dtype=np.int64)
        k0 = np.zeros(len(flat))
        k1 = np.zeros(len(flat))
        for i, g in enumerate(flat):
            if g.kind == "arc":
                k0[i] = k1[i] = g.params["curvature"]
            elif g.kind == "spiral":
                k0[i], k1[i] = g.params["curvStart"], g.params["curvEnd"]
        # A spiral shorter than _SPIRAL_MIN_M departs from its start arc by under
        # |k1 - k0| * 1e-12 m, and its curvature rate could overflow.
        as_arc = (kind == SPIRAL) & (
            (np.abs(k1 - k0) < _SPIRAL_AS_ARC) | (self.glen < _SPIRAL_MIN_M)
        )
        kind[as_arc] = ARC
        k1[as_arc] = k0[as_arc]
        self.kind: IntArray = kind
        self.k0: FloatArray = k0
        # Curvature rate of spirals (1/m^2).
        with np.errstate(divide="ignore", invalid="ignore"):
            self.dk: FloatArray = np.where(
                self.glen > 0, (k1 - k0) / np.maximum(self.glen, 1e-300), 0.0
            )
        self.params = _ParamCurves([g for g in flat if _KIND_CODES[g.kind] == PARAM])
        self.param_index: IntArray = np.full(len(flat), -1, dtype=np.int64)
        self.param_index[kind == PARAM] = np.arange(int(np.sum(kind == PARAM)))

    def geometry_at(self, road: IntArray, s: FloatArray) -> IntArray:
        """Index of the geometry record holding each (road, s)."""
        return self.search.find(road, np.clip(s, 0.0, self.length[road]))

    def evaluate(
        self, road: npt.ArrayLike, s: npt.ArrayLike
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """Position, heading and curvature of the reference line.

        Args:
            road: Road indices, shape (N,).
            s: Positions along each road's reference line (m), shape (N,).

        Returns:
            ``(x, y, hdg, curvature)``, each shape (N,); heading in radians, curvature
            in 1/m, positive to the left.
        """
        r = np.asarray(road, dtype=np.int64).ravel()
        sv = np.asarray(s, dtype=np.float64).ravel()
        g = self.geometry_at(r, sv)
        return self.record_pose(g, sv - self.s0[g])

    def record_pose(
        self, g: IntArray, ds: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """`evaluate` with given records: record ``g[i]`` ``ds[i]`` metres from its start
        (beyond its ends too: a file's records need not join)."""
        kind = self.kind[g]
        x = np.empty(ds.shape)
        y = np.empty(ds.shape)
        hdg = np.empty(ds.shape)
        curv = np.zeros(ds.shape)

        m = kind != PARAM
        if m.any():
            gi = g[m]
            x[m], y[m], hdg[m], curv[m] = curve_pose(
                self.x0[gi], self.y0[gi], self.h0[gi], self.k0[gi], self.dk[gi], ds[m]
            )
        m = kind == PARAM
        if m.any():
            x[m], y[m], hdg[m], curv[m] = self._param(g[m], ds[m])
        return x, y, hdg, curv

    def _param(
        self, g: IntArray, ds: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        j = self.param_index[g]
        # Outside its own length a polynomial curve is not defined (a road may declare more
        # length than its geometries cover): continue straight along the end tangent.
        inside = np.clip(ds, 0.0, self.glen[g])
        beyond = ds - inside
        u, v, du, dv, ddu, ddv = self.params.evaluate(j, inside)
        speed = np.maximum(np.hypot(du, dv), 1e-300)
        u = u + beyond * du / speed
        v = v + beyond * dv / speed
        outside = beyond != 0.0
        ddu = np.where(outside, 0.0, ddu)
        ddv = np.where(outside, 0.0, ddv)
        h = self.h0[g]
        ch, sh = np.cos(h), np.sin(h)
        x = self.x0[g] + ch * u - sh * v
        y = self.y0[g] + sh * u + ch * v
        speed2 = du * du + dv * dv
        hdg = h + np.arctan2(dv, du)
        # Where the curve stops (a cusp: r'(p) = 0) its curvature is not defined: 0 there.
        cube = speed2 * np.sqrt(speed2)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            curv = np.where(cube > 0.0, (du * ddv - dv * ddu) / cube, 0.0)
        return x, y, hdg, curv


class _ParamCurves:
    """paramPoly3 and poly3 records with their arc-length tables."""

    def __init__(self, geoms: Sequence[Geometry]) -> None:
        n = len(geoms)
        self.cu = np.zeros((n, 4))
        self.cv = np.zeros((n, 4))
        p_end = np.zeros(n)
        self.length = np.array([g.length for g in geoms], dtype=np.float64)
        for i, g in enumerate(geoms):
            p = g.params
            if g.kind == "poly3":
                self.cu[i] = (0.0, 1.0, 0.0, 0.0)
                self.cv[i] = (p["a"], p["b"], p["c"], p["d"])
                p_end[i] = np.nan  # found below: u where the arc length equals `length`
            else:
                self.cu[i] = (p["aU"], p["bU"], p["cU"], p["dU"])
                self.cv[i] = (p["aV"], p["bV"], p["cV"], p["dV"])
                p_end[i] = 1.0 if g.p_range == "normalized" else g.length
        poly3 = np.isnan(p_end)
        if poly3.any():
            p_end[poly3] = self._solve_poly3_end(np.flatnonzero(poly3))
        self.p_end = p_end
        # Cumulative true arc length at _NODES + 1 evenly spaced parameter values.
        t = np.linspace(0.0, 1.0, _NODES + 1)
        self.p_nodes = p_end[:, None] * t[None, :]
        lo = self.p_nodes[:, :-1]
        h = np.diff(self.p_nodes, axis=1)
        pts = lo[:, :, None] + h[:, :, None] * _GL_X[None, None, :]
        speed = self._speed(np.arange(n)[:, None, None], pts)
        seg = np.sum(speed * _GL_W, axis=2) * h
        self.arc = np.concatenate((np.zeros((n, 1)), np.cumsum(seg, axis=1)), axis=1)
        self.node_speed = self._speed(np.arange(n)[:, None], self.p_nodes)
        total = self.arc[:, -1]
        # s along the road is the true arc length scaled to the declared length (not for
        # records shorter than a nanometre, where the ratio could overflow).
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            self.scale = np.where(self.length > 1e-9, total / self.length, 1.0)

    def _speed(self, j: npt.NDArray[np.int64], p: FloatArray) -> FloatArray:
        cu, cv = self.cu[j], self.cv[j]
        du = cu[..., 1] + p * (2.0 * cu[..., 2] + 3.0 * cu[..., 3] * p)
        dv = cv[..., 1] + p * (2.0 * cv[..., 2] + 3.0 * cv[..., 3] * p)
        return np.asarray(np.hypot(du, dv))

    def _arc_from(self, j: IntArray, p0: FloatArray, p1: FloatArray) -> FloatArray:
        pts = p0[:, None] + (p1 - p0)[:, None] * _GL_X[None, :]
        return np.asarray(np.sum(self._speed(j[:, None], pts) * _GL_W, axis=1) * (p1 - p0))

    def _solve_poly3_end(self, idx: IntArray) -> FloatArray:
        u = self.length[idx].copy()
        zeros = np.zeros_like(u)
        for _ in range(30):
            # Split [0, u] so the 8-point rule stays exact to rounding.
            steps = 16
            total = np.zeros_like(u)
            for k in range(steps):
                total += self._arc_from(idx, zeros + u * k / steps, zeros + u * (k + 1) / steps)
            u = u - (total - self.length[idx]) / self._speed(idx, u)
        return u

    def parameter(self, j: IntArray, ds: FloatArray) -> FloatArray:
        """Curve parameter p where the scaled arc length equals ``ds``."""
        target = ds * self.scale[j]
        arc = self.arc[j]
        i = np.empty(j.shape, dtype=np.int64)
        # Row-wise search; rows are short (_NODES + 1) so a vectorised count is cheap.
        i[:] = np.sum(arc[:, 1:-1] <= target[:, None], axis=1)
        rows = np.arange(j.size)
        l0, l1 = arc[rows, i], arc[rows, i + 1]
        p0, p1 = self.p_nodes[j, i], self.p_nodes[j, i + 1]
        hl = l1 - l0
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = np.where(hl > 0, (target - l0) / hl, 0.0)
        # Cubic Hermite of p(l) with dp/dl = 1/|r'(p)| at both nodes, then one Newton step
        # on the exact length from the node. Where the curve stops (r'(p) = 0, a cusp) the
        # slopes are infinite: the guess is kept within the nodes' bracket, where p lies.
        with np.errstate(over="ignore", invalid="ignore"):
            m0 = hl / np.maximum(self.node_speed[j, i], 1e-300)
            m1 = hl / np.maximum(self.node_speed[j, i + 1], 1e-300)
            t2, t3 = tau * tau, tau * tau * tau
            p = (
                (2 * t3 - 3 * t2 + 1) * p0
                + (t3 - 2 * t2 + tau) * m0
                + (-2 * t3 + 3 * t2) * p1
                + (t3 - t2) * m1
            )
            p = np.where(np.isfinite(p), np.clip(p, p0, p1), p0 + tau * (p1 - p0))
            err = l0 + self._arc_from(j, p0, p) - target
            p = np.clip(p - err / np.maximum(self._speed(j, p), 1e-300), p0, p1)
        return np.asarray(p, dtype=np.float64)

    def evaluate(self, j: IntArray, ds: FloatArray) -> tuple[FloatArray, ...]:
        p = self.parameter(j, ds)
        cu, cv = self.cu[j], self.cv[j]
        u = cu[:, 0] + p * (cu[:, 1] + p * (cu[:, 2] + p * cu[:, 3]))
        v = cv[:, 0] + p * (cv[:, 1] + p * (cv[:, 2] + p * cv[:, 3]))
        du = cu[:, 1] + p * (2.0 * cu[:, 2] + 3.0 * cu[:, 3] * p)
        dv = cv[:, 1] + p * (2.0 * cv[:, 2] + 3.0 * cv[:, 3] * p)
        ddu = 2.0 * cu[:, 2] + 6.0 * cu[:, 3] * p
        ddv = 2.0 * cv[:, 2] + 6.0 * cv[:, 3] * p
        return u, v, du, dv, ddu, ddv
