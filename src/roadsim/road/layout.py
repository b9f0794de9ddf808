"""Reference-line layout without a road network: poses, lines, arcs and spirals.

The geometry of `roadsim.road.builder`: a `PlanView` lays `Line`, `Arc` and `Spiral`
segments end to end from a start `Pose` and evaluates them itself (OpenDRIVE 1.8,
7.4-7.6), so a map can be designed before any file exists. `turn` makes a
spiral-arc-spiral curve and `connect` finds the segments between two poses, for
connecting roads in junctions and for ramps.

Poses come from `roadsim.road.geometry.curve_pose`, the evaluation the road network uses.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from roadsim.road.geometry import curve_pose

__all__ = ["Arc", "Line", "PlanView", "Pose", "Segment", "Spiral", "connect", "turn", "wrap_angle"]

_TAU = 2.0 * math.pi
EPS = 1e-9  # m or rad: below this a length or an angle counts as zero


def wrap_angle(angle: float) -> float:
    """An angle in [-pi, pi] (rad)."""
    return math.remainder(angle, _TAU)


@dataclass(frozen=True, slots=True)
class Pose:
    """A point and a heading in the world frame (m, rad counter-clockwise from x)."""

    x: float
    y: float
    hdg: float

    def advanced(self, ds: float) -> Pose:
        """This pose moved ``ds`` metres along its heading."""
        return Pose(self.x + ds * math.cos(self.hdg), self.y + ds * math.sin(self.hdg), self.hdg)

    def shifted(self, t: float) -> Pose:
        """This pose moved ``t`` metres to its left (negative: to its right)."""
        return Pose(self.x - t * math.sin(self.hdg), self.y + t * math.cos(self.hdg), self.hdg)

    def reversed(self) -> Pose:
        """The same point, facing the other way."""
        return Pose(self.x, self.y, wrap_angle(self.hdg + math.pi))

    def relative(self, other: Pose) -> tuple[float, float, float]:
        """``other`` in this pose's frame: (ahead, to the left, heading difference)."""
        dx, dy = other.x - self.x, other.y - self.y
        c, s = math.cos(self.hdg), math.sin(self.hdg)
        return c * dx + s * dy, -s * dx + c * dy, wrap_angle(other.hdg - self.hdg)

    def compose(self, local: Pose) -> Pose:
        """The pose ``local`` (given in this pose's frame) in the world frame."""
        c, s = math.cos(self.hdg), math.sin(self.hdg)
        return Pose(
            self.x + c * local.x - s * local.y,
            self.y + s * local.x + c * local.y,
            wrap_angle(self.hdg + local.hdg),
        )


@dataclass(frozen=True, slots=True)
class Line:
    """A straight line (OpenDRIVE 1.8, 7.4)."""

    length: float


@dataclass(frozen=True, slots=True)
class Arc:
    """An arc of constant curvature (1/m, positive turning left; 7.6)."""

    length: float
    curvature: float


@dataclass(frozen=True, slots=True)
class Spiral:
    """A clothoid whose curvature changes linearly from start to end (1/m; 7.5)."""

    length: float
    curv_start: float
    curv_end: float


Segment = Line | Arc | Spiral


def _advance(seg: Segment, start: Pose, ds: float) -> Pose:
    """The pose ``ds`` metres along a segment that begins at ``start``."""
    # The same evaluation the road network uses, so a map's joints are exact when read back.
    k0 = _curvature_at(seg, 0.0)
    dk = 0.0
    if isinstance(seg, Spiral) and seg.length > 0:
        dk = (seg.curv_end - seg.curv_start) / seg.length
    x, y, hdg, _ = curve_pose(start.x, start.y, start.hdg, k0, dk, ds)
    return Pose(float(x), float(y), wrap_angle(float(hdg)))


def _cut(seg: Segment, ds: float) -> tuple[Segment, Segment]:
    """A segment split ``ds`` metres from its start into two that join up exactly."""
    rest = seg.length - ds
    if isinstance(seg, Line):
        return Line(ds), Line(rest)
    if isinstance(seg, Arc):
        return Arc(ds, seg.curvature), Arc(rest, seg.curvature)
    k_mid = seg.curv_start + (seg.curv_end - seg.curv_start) * ds / seg.length
    return Spiral(ds, seg.curv_start, k_mid), Spiral(rest, k_mid, seg.curv_end)


def _curvature_at(seg: Segment, ds: float) -> float:
    if isinstance(seg, Line):
        return 0.0
    if isinstance(seg, Arc):
        return seg.curvature
    return seg.curv_start + (seg.curv_end - seg.curv_start) * ds / seg.length


@dataclass(frozen=True)
class PlanView:
    """A road's reference line: segments laid end to end from a start pose (7.2).

    Attributes:
        start: The pose at s = 0.
        segments: The geometry records in order of s.
    """

    start: Pose
    segments: tuple[Segment, ...]

    @classmethod
    def ending_at(cls, end: Pose, segments: Sequence[Segment]) -> PlanView:
        """The plan of ``segments`` placed so that it ends exactly at ``end``."""
        local_end = cls(Pose(0.0, 0.0, 0.0), tuple(segments)).end
        hdg = end.hdg - local_end.hdg
        c, s = math.cos(hdg), math.sin(hdg)
        start = Pose(
            end.x - (c * local_end.x - s * local_end.y),
            end.y - (s * local_end.x + c * local_end.y),
            wrap_angle(hdg),
        )
        return cls(start, tuple(segments))

    @cached_property
    def starts(self) -> tuple[float, ...]:
        """s where each segment begins (m)."""
        out, s = [], 0.0
        for seg in self.segments:
            out.append(s)
            s += seg.length
        return tuple(out)

    @cached_property
    def poses(self) -> tuple[Pose, ...]:
        """The pose where each segment begins, and last the end pose."""
        out = [self.start]
        for seg in self.segments:
            out.append(_advance(seg, out[-1], seg.length))
        return tuple(out)

    @property
    def length(self) -> float:
        return sum(seg.length for seg in self.segments)

    @property
    def end(self) -> Pose:
        return self.poses[-1]

    def _locate(self, s: float) -> tuple[int, float]:
        i = max(0, min(bisect.bisect_right(self.starts, s) - 1, len(self.segments) - 1))
        return i, min(max(s - self.starts[i], 0.0), self.segments[i].length)

    def pose_at(self, s: float) -> Pose:
        """The reference-line pose at ``s`` (clipped to the plan)."""
        i, ds = self._locate(s)
        return _advance(self.segments[i], self.poses[i], ds)

    def curvature_at(self, s: float) -> float:
        i, ds = self._locate(s)
        return _curvature_at(self.segments[i], ds)

    def slice(self, s0: float, s1: float) -> PlanView:
        """The part of this plan from ``s0`` to ``s1``, with segments cut where needed."""
        pieces: list[Segment] = []
        for seg, a in zip(self.segments, self.starts, strict=True):
            lo, hi = max(s0, a), min(s1, a + seg.length)
            if hi - lo <= EPS:
                continue
            part = seg
            if hi < a + seg.length - EPS:
                part = _cut(part, hi - a)[0]
            if lo > a + EPS:
                part = _cut(part, lo - a)[1]
            pieces.append(part)
        return PlanView(self.pose_at(s0), tuple(pieces))


def turn(angle: float, radius: float, spiral_fraction: float = 0.0) -> tuple[Segment, ...]:
    """A symmetric curve turning by ``angle``: spiral, arc, spiral.

    Args:
        angle: Heading change (rad, positive turning left), |angle| < pi.
        radius: The arc's radius, the tightest of the curve (m).
        spiral_fraction: The share of the turning done in the two spirals (0: a plain
            arc; 1: two spirals and no arc). Spirals make the curvature continuous, as on
            real roads (OpenDRIVE 1.8, 7.5).
    """
    if abs(angle) < EPS:
        return ()
    if not 0.0 <= spiral_fraction <= 1.0:
        raise ValueError(f"spiral_fraction={spiral_fraction} is not in [0, 1]")
    k = math.copysign(1.0 / radius, angle)
    spiral = spiral_fraction * abs(angle) * radius  # each spiral turns by fraction * angle / 2
    arc = (1.0 - spiral_fraction) * abs(angle) * radius
    out: list[Segment] = []
    if spiral > EPS:
        out.append(Spiral(spiral, 0.0, k))
    if arc > EPS:
        out.append(Arc(arc, k))
    if spiral > EPS:
        out.append(Spiral(spiral, k, 0.0))
    return tuple(out)


def connect(
    start: Pose, end: Pose, *, radius: float | None = None, spiral_fraction: float = 0.0
) -> tuple[Segment, ...]:
    """Segments that lead from ``start`` to ``end``, tangent at both.

    A line when the poses are aligned; otherwise a `turn` placed where the two tangent
    lines meet, with a line before or after it for the rest of the longer tangent.

    Args:
        start, end: The poses. Their tangent lines must meet ahead of ``start`` and
            behind ``end`` (no S-curves, no U-turns).
        radius: The turn's arc radius (m); by default the largest that fits.
        spiral_fraction: As in `turn`.

    Raises:
        ValueError: If no such line-turn-line path exists.
    """
    ahead, left, dh = start.relative(end)
    if abs(dh) < EPS:
        # A line: it may miss end by as much as a turn may (below).
        if abs(left) > 1e-6 or ahead <= 0:
            raise ValueError(f"parallel poses {start} and {end} are not on one line")
        return (Line(ahead),)
    if abs(abs(dh) - math.pi) < 1e-6:
        raise ValueError(f"poses {start} and {end} face opposite ways (a U-turn)")
    # Tangent lines meet d0 ahead of start and d1 behind end.
    d1 = left / math.sin(dh)
    d0 = ahead - d1 * math.cos(dh)
    if min(d0, d1) <= EPS:
        raise ValueError(f"no turn leads from {start} to {end} (tangents meet behind them)")
    # The turn's tangent length per metre of radius, from a turn of at least a metre of
    # arc: one of radius 1 would turn a tiny angle in segments shorter than EPS (none).
    scale = max(1.0, 1.0 / abs(dh))
    unit = PlanView(Pose(0.0, 0.0, 0.0), turn(dh, scale, spiral_fraction)).end
    tangent_unit = (unit.x - unit.y / math.tan(dh)) / scale
    if radius is None:
        radius = min(d0, d1) / tangent_unit
    tangent = tangent_unit * radius
    if tangent > min(d0, d1) + 1e-7:
        raise ValueError(f"a turn of radius {radius} m does not fit between {start} and {end}")
    out: list[Segment] = []
    if d0 - tangent > EPS:
        out.append(Line(d0 - tangent))
    out.extend(turn(dh, radius, spiral_fraction))
    if d1 - tangent > EPS:
        out.append(Line(d1 - tangent))
    reached = PlanView(start, tuple(out)).end
    miss = math.hypot(reached.x - end.x, reached.y - end.y)
    if miss > 1e-6 or abs(wrap_angle(reached.hdg - end.hdg)) > 1e-9:
        raise ValueError(f"connect: path from {start} misses {end} by {miss} m")
    return tuple(out)
