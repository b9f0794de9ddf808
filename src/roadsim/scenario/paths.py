"""The paths of scripted objects: a spline through the control points, and the speed on it.

**Geometry.** Between control points i and i+1 the path is the cubic Hermite curve

    P(u) = h00(u) p_i + h10(u) m0 + h01(u) p_{i+1} + h11(u) m1,   u in [0, 1],

so it passes through every control point. The tangents come from the neighbours, Catmull-Rom
style but scaled by chord length: at an inner point the direction is
``(p_{i+1} - p_{i-1}) / (c_{i-1} + c_i)`` (``c`` the chord lengths of the two segments
that meet there), at the ends the direction of the end chord; a segment scales the
directions at its two ends by its own chord. Uneven spacing then neither overshoots nor
loops, and evenly spaced points on a line give that line. A point's own ``tangent`` gives
the direction there (its length is ignored). The object's heading is the tangent's.

Distance along the path is tabulated per segment every `SAMPLE_SPACING` m or closer
(Gauss-Legendre arc length between samples); a distance maps to u by interpolating the
table, and the point is then evaluated on the curve itself, so the object is always on the
spline. The same `hermite` evaluates the path for the simulation and for
``roadsim scenario plot``.

**Speed.** At a control point the speed is the point's; in between it is linear in the
distance travelled, ``v(x) = v0 + (v1 - v0) x / L``, which in time is exponential. Such a
profile never leaves or reaches a standstill (its time to do so is infinite), so a segment
with speed 0 at either end is driven at constant acceleration instead, with the speed's
square linear in distance: it starts from and stops at the points exactly.

**Elevation and lanes.** The table also holds the road surface's height under each sample
(where there is none, the last height before it, as the path is driven) and the lane and
road s there (-1 and NaN: none), from which the simulation localises the object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

import numpy as np
import numpy.typing as npt

from roadsim._jit import njit_leaf, njit_loop
from roadsim._types import FloatArray, IntArray
from roadsim.scenario.schema import PathObject, RoadPathPoint, WorldPathPoint
from roadsim.scenario.validate import resolve_road_positions

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork

__all__ = [
    "SAMPLE_SPACING",
    "PathGeometry",
    "advance",
    "build_path",
    "hermite",
    "on_roads",
    "resolve_path",
    "resolve_paths",
    "segment_speed",
    "time_to_end",
]


#: Largest distance between two samples of the arc-length table (m).
SAMPLE_SPACING = 0.5

# Gauss-Legendre nodes and weights on [0, 1], 4 points (exact for polynomials of degree 7).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(4)
_GL_X, _GL_W = 0.5 * (_GL_X + 1.0), 0.5 * _GL_W


@dataclass(frozen=True)
class PathGeometry:
    """One object's path: control points, spline segments and the arc-length table.

    Attributes:
        points: Control points, shape (n, 2) (m).
        speeds: Speed at each control point (m/s).
        waits: Time to stand at each control point (s).
        knots: Distance along the path of each control point (m); ``knots[-1]`` is the
            path's length.
        segments: One row per segment, shape (n - 1, 8): p0x, p0y, p1x, p1y, m0x, m0y,
            m1x, m1y (the Hermite end points and tangents).
        sample_first: Index of each segment's first sample, shape (n,) (the last entry is
            the total); a segment's samples run from u = 0 to u = 1 inclusive.
        sample_dist: Distance along the path of each sample (m).
        sample_u: The spline parameter of each sample within its segment.
        sample_z: Road surface height under each sample, held over gaps (m).
        sample_uid: Lane under each sample (-1: none).
        sample_s: Road s of each sample on that lane (NaN: none).
    """

    points: FloatArray
    speeds: FloatArray
    waits: FloatArray
    knots: FloatArray
    segments: FloatArray
    sample_first: IntArray
    sample_dist: FloatArray
    sample_u: FloatArray
    sample_z: FloatArray
    sample_uid: IntArray
    sample_s: FloatArray

    @property
    def length(self) -> float:
        return float(self.knots[-1])

    def pose_at(self, distance: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(x, y, heading)`` at distances along the path (clipped to the path)."""
        d = np.clip(np.atleast_1d(np.asarray(distance, dtype=np.float64)), 0.0, self.length)
        x, y, h = np.empty(d.size), np.empty(d.size), np.empty(d.size)
        _poses(
            self.knots,
            self.segments,
            self.sample_first,
            self.sample_dist,
            self.sample_u,
            d,
            x,
            y,
            h,
        )
        return x, y, h

    def speed_at(self, distance: npt.ArrayLike) -> FloatArray:
        """The speed profile of the control points' speeds at distances along the path."""
        d = np.clip(np.atleast_1d(np.asarray(distance, dtype=np.float64)), 0.0, self.length)
        k = np.clip(np.searchsorted(self.knots, d, side="right") - 1, 0, self.knots.size - 2)
        out = np.empty(d.size)
        for i in range(d.size):
            j = int(k[i])
            out[i] = segment_speed(
                self.speeds[j],
                self.speeds[j + 1],
                self.knots[j + 1] - self.knots[j],
                d[i] - self.knots[j],
            )
        return out

    def curve(self, step: float = 0.25) -> FloatArray:
        """Points of the spline at most ``step`` m apart along it, shape (m, 2), for drawing."""
        count = max(2, math.ceil(self.length / step) + 1)
        d = np.union1d(np.linspace(0.0, self.length, count), self.knots)  # with the points
        x, y, _ = self.pose_at(d)
        return np.column_stack((x, y))


# -- the spline ------------------------------------------------------------------------------------


@njit_leaf
def hermite(seg: FloatArray, u: float) -> tuple[float, float, float, float]:
    """Point and derivative ``(x, y, dx/du, dy/du)`` of a segment row at ``u``."""
    u2 = u * u
    u3 = u2 * u
    h00 = 2.0 * u3 - 3.0 * u2 + 1.0
    h10 = u3 - 2.0 * u2 + u
    h01 = -2.0 * u3 + 3.0 * u2
    h11 = u3 - u2
    d00 = 6.0 * u2 - 6.0 * u
    d10 = 3.0 * u2 - 4.0 * u + 1.0
    d11 = 3.0 * u2 - 2.0 * u
    x = h00 * seg[0] + h10 * seg[4] + h01 * seg[2] + h11 * seg[6]
    y = h00 * seg[1] + h10 * seg[5] + h01 * seg[3] + h11 * seg[7]
    dx = d00 * seg[0] + d10 * seg[4] - d00 * seg[2] + d11 * seg[6]
    dy = d00 * seg[1] + d10 * seg[5] - d00 * seg[3] + d11 * seg[7]
    return x, y, dx, dy


@njit_leaf
def locate(
    sample_dist: FloatArray, sample_u: FloatArray, first: int, last: int, cursor: int, d: float
) -> tuple[int, float]:
    """The sample interval of distance ``d`` within one segment's samples
    ``[first, last]``, searched forward from ``cursor``, and the u there."""
    j = max(cursor, first)
    while j < last - 1 and sample_dist[j + 1] <= d:
        j += 1
    while j > first and sample_dist[j] > d:
        j -= 1
    span = sample_dist[j + 1] - sample_dist[j]
    f = (d - sample_dist[j]) / span if span > 0.0 else 0.0
    f = min(max(f, 0.0), 1.0)
    return j, sample_u[j] + f * (sample_u[j + 1] - sample_u[j])


@njit_loop
def _poses(
    knots: FloatArray,
    segments: FloatArray,
    sample_first: IntArray,
    sample_dist: FloatArray,
    sample_u: FloatArray,
    d: FloatArray,
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
) -> None:
    last_seg = segments.shape[0] - 1
    for i in range(d.shape[0]):
        k = 0
        while k < last_seg and knots[k + 1] <= d[i]:
            k += 1
        _, u = locate(sample_dist, sample_u, sample_first[k], sample_first[k + 1] - 1, 0, d[i])
        px, py, dx, dy = hermite(segments[k], u)
        x[i], y[i], heading[i] = px, py, math.atan2(dy, dx)


# -- the speed profile --------------------------------------------------------------------------------


@njit_leaf
def segment_speed(v0: float, v1: float, length: float, x: float) -> float:
    """Speed at ``x`` m into a segment from speed ``v0`` to ``v1`` over ``length`` m."""
    f = min(max(x / length, 0.0), 1.0) if length > 0.0 else 1.0
    if v0 == 0.0 or v1 == 0.0:  # at rest at one end: constant acceleration
        return math.sqrt(max(v0 * v0 + (v1 * v1 - v0 * v0) * f, 0.0))
    return v0 + (v1 - v0) * f


@njit_leaf
def time_to_end(v0: float, v1: float, length: float, x: float) -> float:
    """Time to drive from ``x`` m into the segment to its end (inf if never)."""
    rest = length - x
    if rest <= 0.0:
        return 0.0
    v = segment_speed(v0, v1, length, x)
    if v0 == 0.0 or v1 == 0.0:
        accel = (v1 * v1 - v0 * v0) / (2.0 * length)
        if accel == 0.0:
            return math.inf
        return (v1 - v) / accel
    if v0 == v1:
        return rest / v0
    k = (v1 - v0) / length
    return math.log(v1 / v) / k


@njit_leaf
def advance(v0: float, v1: float, length: float, x: float, tau: float) -> float:
    """Where the object is ``tau`` s after being ``x`` m into the segment (within it)."""
    v = segment_speed(v0, v1, length, x)
    if v0 == 0.0 or v1 == 0.0:
        accel = (v1 * v1 - v0 * v0) / (2.0 * length)
        out = x + v * tau + 0.5 * accel * tau * tau
    elif v0 == v1:
        out = x + v * tau
    else:
        k = (v1 - v0) / length
        out = x + v / k * math.expm1(k * tau)
    return min(max(out, x), length)


# -- building paths -----------------------------------------------------------------------------------


def build_path(
    points: npt.ArrayLike,
    speeds: npt.ArrayLike,
    *,
    tangents: npt.ArrayLike | None = None,
    waits: npt.ArrayLike | None = None,
    net: RoadNetwork | None = None,
) -> PathGeometry:
    """The path through ``points`` (n, 2) with ``speeds`` (n,).

    Args:
        points: Control points (m); consecutive points must differ.
        speeds: Speed at each point (m/s).
        tangents: Direction at each point, shape (n, 2), NaN rows for "from the neighbours".
        waits: Time to stand at each point (s), default 0.
        net: The road network under the path, for the surface height and lane of each
            sample (without one: height 0, no lanes).
    """
    p = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    n = p.shape[0]
    chord_vec = p[1:] - p[:-1]
    chord = np.hypot(chord_vec[:, 0], chord_vec[:, 1])
    if n < 2 or np.any(chord <= 0.0):
        raise ValueError("a path needs at least two points, each apart from the one before")
    direction = np.empty((n, 2))
    direction[0] = chord_vec[0] / chord[0]
    direction[-1] = chord_vec[-1] / chord[-1]
    if n > 2:
        direction[1:-1] = (p[2:] - p[:-2]) / (chord[:-1] + chord[1:])[:, None]
    if tangents is not None:
        given = np.asarray(tangents, dtype=np.float64).reshape(n, 2)
        norm = np.hypot(given[:, 0], given[:, 1])
        ok = np.isfinite(norm) & (norm > 0.0)
        direction[ok] = given[ok] / norm[ok, None]
    segments = np.column_stack(
        (p[:-1], p[1:], direction[:-1] * chord[:, None], direction[1:] * chord[:, None])
    )

    # Arc-length table: per segment, samples evenly spaced in u, at most SAMPLE_SPACING m
    # of arc apart.
    counts = np.empty(n - 1, dtype=np.int64)
    dist_parts, u_parts = [], []
    start = 0.0
    knots = np.zeros(n)
    for k in range(n - 1):
        m = max(4, math.ceil(chord[k] / SAMPLE_SPACING))
        u = np.linspace(0.0, 1.0, m + 1)
        arc = _arc_lengths(segments[k], u)
        while arc.max() > SAMPLE_SPACING:  # the curve is longer than the chord: finer
            m = math.ceil(m * arc.max() / SAMPLE_SPACING * 1.01)
            u = np.linspace(0.0, 1.0, m + 1)
            arc = _arc_lengths(segments[k], u)
        d = start + np.concatenate(([0.0], np.cumsum(arc)))
        dist_parts.append(d)
        u_parts.append(u)
        counts[k] = m + 1
        start = float(d[-1])
        knots[k + 1] = start
    sample_first = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    sample_dist = np.concatenate(dist_parts)
    sample_u = np.concatenate(u_parts)

    path = PathGeometry(
        points=p,
        speeds=np.asarray(speeds, dtype=np.float64).reshape(n),
        waits=np.zeros(n) if waits is None else np.asarray(waits, dtype=np.float64).reshape(n),
        knots=knots,
        segments=np.ascontiguousarray(segments),
        sample_first=sample_first,
        sample_dist=sample_dist,
        sample_u=sample_u,
        sample_z=np.zeros(sample_dist.size),
        sample_uid=np.full(sample_dist.size, -1, dtype=np.int64),
        sample_s=np.full(sample_dist.size, np.nan),
    )
    return path if net is None else on_roads([path], net)[0]


def on_roads(paths: list[PathGeometry], net: RoadNetwork) -> list[PathGeometry]:
    """The paths with the road surface height, lane and road s of every sample (one
    localisation for all of them)."""
    if not paths:
        return []
    xs, ys = [], []
    for path in paths:
        seg_of = np.repeat(np.arange(path.segments.shape[0]), np.diff(path.sample_first))
        x, y = _evaluate(path.segments, seg_of, path.sample_u)
        xs.append(x)
        ys.append(y)
    where = net.localize(np.concatenate(xs), np.concatenate(ys))
    out, start = [], 0
    for path in paths:
        part = slice(start, start + path.sample_dist.size)
        start = part.stop
        uid = np.asarray(where.uid[part], dtype=np.int64)
        out.append(
            replace(
                path,
                sample_uid=uid,
                sample_s=np.where(uid >= 0, where.s[part], np.nan),
                sample_z=_hold(np.where(uid >= 0, where.surface_z[part], np.nan)),
            )
        )
    return out


def resolve_paths(objects: list[PathObject], net: RoadNetwork) -> list[PathGeometry]:
    """The paths of validated scripted objects on their map (map queries in one batch)."""
    on_lanes = [
        (i, k)
        for i, obj in enumerate(objects)
        for k, point in enumerate(obj.path)
        if isinstance(point, RoadPathPoint)
    ]
    if on_lanes:
        road_points = [cast(RoadPathPoint, objects[i].path[k]) for i, k in on_lanes]
        x, y, *_ = resolve_road_positions(road_points, net)
    resolved = {ik: (float(x[j]), float(y[j])) for j, ik in enumerate(on_lanes)}
    paths = []
    for i, obj in enumerate(objects):
        points = np.empty((len(obj.path), 2))
        tangents = np.full((len(obj.path), 2), np.nan)
        for k, point in enumerate(obj.path):
            points[k] = (point.x, point.y) if isinstance(point, WorldPathPoint) else resolved[i, k]
            if point.tangent is not None:
                tangents[k] = point.tangent
        paths.append(
            build_path(
                points,
                [point.speed for point in obj.path],
                tangents=tangents,
                waits=[point.wait for point in obj.path],
            )
        )
    return on_roads(paths, net)


def resolve_path(obj: PathObject, net: RoadNetwork) -> PathGeometry:
    """The path of a validated scripted object on its map."""
    return resolve_paths([obj], net)[0]


def _arc_lengths(seg: FloatArray, u: FloatArray) -> FloatArray:
    """Arc length of the segment between consecutive ``u`` (Gauss-Legendre)."""
    a, b = u[:-1], u[1:]
    nodes = a[:, None] + (b - a)[:, None] * _GL_X[None, :]
    _, _, dx, dy = _hermite_array(seg, nodes)
    return (b - a) * (np.hypot(dx, dy) @ _GL_W)


def _hermite_array(
    seg: FloatArray, u: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """`hermite` over an array of u (for tables built once)."""
    flat = np.ascontiguousarray(u, dtype=np.float64).ravel()
    out = np.empty((4, flat.size))
    _hermite_many(np.ascontiguousarray(seg), flat, out)
    x, y, dx, dy = (row.reshape(np.shape(u)) for row in out)
    return x, y, dx, dy


@njit_loop
def _hermite_many(seg: FloatArray, u: FloatArray, out: FloatArray) -> None:
    for i in range(u.shape[0]):
        out[0, i], out[1, i], out[2, i], out[3, i] = hermite(seg, u[i])


def _evaluate(
    segments: FloatArray, seg_of: IntArray, u: FloatArray
) -> tuple[FloatArray, FloatArray]:
    x, y = np.empty(u.size), np.empty(u.size)
    for k in range(segments.shape[0]):
        sel = seg_of == k
        px, py, _, _ = _hermite_array(segments[k], u[sel])
        x[sel], y[sel] = px, py
    return x, y


def _hold(z: FloatArray) -> FloatArray:
    """NaN entries replaced by the last finite value before them (0 before any)."""
    finite = np.isfinite(z)
    last = np.maximum.accumulate(np.where(finite, np.arange(z.size), -1))
    return np.where(last >= 0, z[np.maximum(last, 0)], 0.0)
