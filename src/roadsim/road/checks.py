"""Plausibility checks of a loaded map: what a broken file gets wrong, said once per kind.

Maps converted from other sources carry mistakes that OpenDRIVE's schema allows, and
roadsim would draw and localise on them without a word. Each kind of oddity below gives one
`MapWarning` per file, ``path:line: road R: what is odd``, for its first place in the file,
with the number of further places and roads; the map still loads as the file says:

- geometries that do not join: where one record hands over to the next (at the next one's
  s) they lie more than `GAP_M` apart or differ in heading by more than `KINK_RAD`, a
  record starts more than `GAP_M` after the one before ends, or the records leave more than
  `GAP_M` of the road's length uncovered at its start or end;
- geometries that overlap: a record starts more than `GAP_M` before the one before ends;
- arcs and spirals of absurd curvature: a radius under `MIN_RADIUS_M`;
- negative lane widths: a ``<width>`` record below ``-NEGATIVE_WIDTH_M`` within its range;
- lanes before the first lane section: it starts after s = 0 (by more than `GAP_M`).

What no map can mean is a located `MapError` instead (`roadsim.road.xodr` refuses single
numbers beyond `MAX_LENGTH_M` and `MAX_NUMBER`): a geometry that reaches farther than
`MAX_NUMBER` metres from the origin, a lane width, border or laneOffset record that grows
beyond `MAX_LATERAL_M` within its range, an elevation record beyond `MAX_NUMBER`, a
superelevation beyond `MAX_ROLL_RAD`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from roadsim._types import FloatArray
from roadsim.errors import MapError, MapWarning
from roadsim.road.geometry import ReferenceLines
from roadsim.road.model import Cubic, OpenDrive, Road
from roadsim.road.xodr import MAX_NUMBER

#: Largest gap or overlap between geometry records that is rounding, not a mistake (m).
GAP_M = 0.01
#: Largest heading kink between geometry records that is rounding, not a mistake (rad).
KINK_RAD = 0.01
#: Smallest radius of an arc or spiral a road can mean (m): no vehicle turns tighter, and
#: a lane a few metres wide folds over itself inside a tighter curve.
MIN_RADIUS_M = 1.0
#: How far below zero a lane width may dip by rounding (m), as tapers to zero do.
NEGATIVE_WIDTH_M = 1e-3
#: The widest lane, border or laneOffset a map can mean (m): beyond, a record is corrupt or
#: mis-scaled (and the localiser's lane index would grow with it).
MAX_LATERAL_M = 1e3
#: The most a road can be tilted about its reference line (rad): past vertical.
MAX_ROLL_RAD = 0.5 * math.pi


@dataclass(frozen=True, slots=True)
class _Place:
    line: int | None
    road: str
    text: str


def check_network(doc: OpenDrive, reference: ReferenceLines) -> None:
    """Warns once per kind of oddity in ``doc`` (see the module docstring).

    Args:
        doc: The parsed file.
        reference: Its roads' reference lines (`roadsim.road.network.RoadNetwork.reference`).

    Raises:
        MapError: For a geometry or polynomial record that reaches magnitudes no map can
            mean.
    """
    path = doc.path or "<string>"
    joins, overlaps = _geometry_joins(doc, reference)
    kinds = [
        ("geometries do not join", joins),
        ("geometries overlap", overlaps),
        ("absurd curvature", _curvatures(doc.roads)),
        ("negative lane width", _lane_polynomials(doc)),
        ("lanes before the first lane section", _late_sections(doc.roads)),
    ]
    for _, places in kinds:
        if places:
            _warn(path, places)


def _warn(path: str, places: Sequence[_Place]) -> None:
    first = places[0]
    where = path if first.line is None else f"{path}:{first.line}"
    message = f"{where}: road {first.road}: {first.text}"
    if len(places) > 1:
        roads = len({p.road for p in places})
        message += f" (and {len(places) - 1} more such places, on {roads} roads in all)"
    warnings.warn(message, MapWarning, stacklevel=4)


def _error(doc: OpenDrive, road: Road, line: int | None, element: str, reason: str) -> MapError:
    return MapError(reason, path=doc.path, line=line, element=element, road_id=road.id)


# -- planView ----------------------------------------------------------------------------------


def _geometry_joins(doc: OpenDrive, ref: ReferenceLines) -> tuple[list[_Place], list[_Place]]:
    roads = doc.roads
    geoms = [g for road in roads for g in road.geometries]
    if not geoms:
        return [], []
    road_of = np.repeat(np.arange(len(roads)), ref.count)
    # Where each record ends, by its own formula.
    ex, ey, _, _ = ref.record_pose(np.arange(len(geoms)), ref.glen.copy())
    far = ~((np.abs(ex) <= MAX_NUMBER) & (np.abs(ey) <= MAX_NUMBER))
    if far.any():
        k = int(np.flatnonzero(far)[0])
        raise _error(
            doc,
            roads[road_of[k]],
            geoms[k].line,
            "geometry",
            f"the geometry ends at x={ex[k]:.3g}, y={ey[k]:.3g}: farther than {MAX_NUMBER:.0e} m "
            "from the origin, which no map can mean",
        )
    # Each record against the one before, where the next one takes over.
    i = np.flatnonzero(road_of[1:] == road_of[:-1])
    j = i + 1
    hx, hy, hh, _ = ref.record_pose(i, ref.s0[j] - ref.s0[i])
    jump = np.hypot(hx - ref.x0[j], hy - ref.y0[j])
    kink = np.abs(np.angle(np.exp(1j * (hh - ref.h0[j]))))
    s_gap = ref.s0[j] - (ref.s0[i] + ref.glen[i])
    off = (jump > GAP_M) | (kink > KINK_RAD) | (s_gap > GAP_M)
    joins: list[tuple[int, _Place]] = []
    for k in np.flatnonzero(off).tolist():
        n = int(j[k])
        g, road = geoms[n], roads[road_of[n]]
        parts = []
        if s_gap[k] > GAP_M:
            parts.append(f"starts {s_gap[k]:.3g} m after it ends")
        if jump[k] > GAP_M:
            parts.append(f"{jump[k]:.3g} m apart")
        if kink[k] > KINK_RAD:
            parts.append(f"a {kink[k]:.3g} rad kink")
        text = f"<geometry> s={g.s:g} does not join the one before: {', '.join(parts)}"
        joins.append((n, _Place(g.line, road.id, text)))
    overlaps = [
        _Place(
            geoms[j[k]].line,
            roads[road_of[j[k]]].id,
            f"<geometry> s={geoms[j[k]].s:g} starts {-s_gap[k]:.3g} m before the previous one "
            f"ends (s={ref.s0[i[k]] + ref.glen[i[k]]:g})",
        )
        for k in np.flatnonzero(s_gap < -GAP_M).tolist()
    ]
    # The road's length uncovered at either end.
    for r, road in enumerate(roads):
        first, last = int(ref.first[r]), int(ref.first[r] + ref.count[r] - 1)
        g0, g1 = road.geometries[0], road.geometries[-1]
        if g0.s > GAP_M:
            joins.append(
                (
                    first,
                    _Place(g0.line, road.id, f"the first <geometry> starts at s={g0.s:g}, not 0"),
                )
            )
        end = g1.s + g1.length
        if end < road.length - GAP_M:
            joins.append(
                (
                    last,
                    _Place(
                        g1.line,
                        road.id,
                        f"the <geometry> records end at s={end:g}, {road.length - end:.3g} m "
                        f"short of the road's length {road.length:g}",
                    ),
                )
            )
    joins.sort(key=lambda item: item[0])
    return [place for _, place in joins], overlaps


def _curvatures(roads: Sequence[Road]) -> list[_Place]:
    out = []
    for road in roads:
        for g in road.geometries:
            if g.kind == "arc":
                k = g.params["curvature"]
                what = f"<arc> curvature={k:g}"
            elif g.kind == "spiral":
                k0, k1 = g.params["curvStart"], g.params["curvEnd"]
                k = k0 if abs(k0) >= abs(k1) else k1
                what = f"<spiral> curvature reaches {k:g}"
            else:
                continue
            if abs(k) * MIN_RADIUS_M > 1.0:
                out.append(_Place(g.line, road.id, f"{what} 1/m, a radius of {1.0 / abs(k):.3g} m"))
    return out


# -- lanes and profiles ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Owner:
    """A sequence of cubic records: a road's laneOffset, elevation or superelevation, or a
    lane's widths or borders (``section_s``: the lane section's start)."""

    road: Road
    line: int | None
    element: str
    limit: float
    unit: str = "m"
    section_s: float = 0.0
    lane_id: int = 0

    @property
    def what(self) -> str:
        return f"lane {self.lane_id} <{self.element}>" if self.lane_id else self.element


def _lane_polynomials(doc: OpenDrive) -> list[_Place]:
    """Negative lane widths; raises for laneOffset, elevation, superelevation, width and
    border records that grow beyond their limit within their range."""
    owners: list[_Owner] = []
    rows: list[tuple[float, float, float, float, float, float, int]] = []  # a b c d s end owner

    def add(records: Sequence[Cubic], span: float, owner: _Owner) -> None:
        if not records:
            return
        k = len(owners)
        owners.append(owner)
        for n, r in enumerate(records):
            end = records[n + 1].s if n + 1 < len(records) else span
            rows.append((r.a, r.b, r.c, r.d, r.s, end, k))

    for road in doc.roads:
        # laneOffset and the profiles hold along the road, lane records along their section.
        line = road.line
        add(road.lane_offset, road.length, _Owner(road, line, "laneOffset", MAX_LATERAL_M))
        add(road.elevation, road.length, _Owner(road, line, "elevation", MAX_NUMBER))
        sup = _Owner(road, line, "superelevation", MAX_ROLL_RAD, "rad")
        add(road.superelevation, road.length, sup)
        for k, sec in enumerate(road.sections):
            span = (road.sections[k + 1].s if k + 1 < len(road.sections) else road.length) - sec.s
            for lane in sec.lanes:
                if lane.borders:
                    border = _Owner(road, lane.line, "border", MAX_LATERAL_M, "m", sec.s, lane.id)
                    add(lane.borders, span, border)
                if lane.widths and lane.id != 0:
                    width = _Owner(road, lane.line, "width", MAX_LATERAL_M, "m", sec.s, lane.id)
                    add(lane.widths, span, width)
    if not rows:
        return []
    table = np.array(rows)
    s0, owner = table[:, 4], table[:, 6].astype(np.int64)
    lo = np.maximum(s0, 0.0)
    hi = np.maximum(table[:, 5], lo)
    low, at, high = _extremes(table[:, :4], lo - s0, hi - s0)
    limit = np.array([o.limit for o in owners])[owner]
    reach = np.where(np.abs(low) > np.abs(high), low, high)
    bad = np.flatnonzero(~(np.abs(reach) <= limit))
    if bad.size:
        k = int(bad[0])
        o = owners[owner[k]]
        raise _error(
            doc,
            o.road,
            o.line,
            o.element,
            f"the {o.what} record at s={s0[k]:g} reaches {reach[k]:.3g} {o.unit} "
            f"within its range: more than {o.limit:.3g} {o.unit}, which no map can mean",
        )
    is_width = np.array([o.element == "width" for o in owners])[owner]
    negative = np.flatnonzero(is_width & (low < -NEGATIVE_WIDTH_M))
    # Per lane, its least width; lanes in file order.
    negative = negative[np.lexsort((low[negative], owner[negative]))]
    first = (
        negative[np.concatenate(([True], np.diff(owner[negative]) != 0))]
        if negative.size
        else negative
    )
    out = []
    for k in first.tolist():
        o = owners[owner[k]]
        out.append(
            _Place(
                o.line,
                o.road.id,
                f"lane {o.lane_id} of the <laneSection> s={o.section_s:g} has a negative width "
                f"({low[k]:.3g} m at s={o.section_s + at[k] + s0[k]:g})",
            )
        )
    return out


def _extremes(
    coef: FloatArray, x0: FloatArray, x1: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Least value (and where) and greatest value of each cubic ``a + b x + c x^2 + d x^3``
    over ``[x0, x1]``: at an end or where the derivative vanishes."""
    a, b, c, d = coef.T
    # Roots of b + 2c x + 3d x^2 (a linear one where d = 0).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        disc = 4.0 * c * c - 12.0 * b * d
        root = np.sqrt(np.maximum(disc, 0.0))
        quad = np.abs(d) > 1e-300
        r1 = np.where(quad, (-2.0 * c + root) / (6.0 * d), -b / (2.0 * c))
        r2 = np.where(quad, (-2.0 * c - root) / (6.0 * d), np.nan)
        r1 = np.where(quad & (disc < 0), np.nan, r1)
        r2 = np.where(quad & (disc < 0), np.nan, r2)
    xs = np.stack((x0, x1, r1, r2), axis=1)
    inside = np.isfinite(xs) & (xs >= x0[:, None]) & (xs <= x1[:, None])
    xs = np.where(inside, xs, x0[:, None])
    v = a[:, None] + xs * (b[:, None] + xs * (c[:, None] + xs * d[:, None]))
    k = np.argmin(v, axis=1)
    rows = np.arange(len(a))
    return v[rows, k], xs[rows, k], v.max(axis=1)


def _late_sections(roads: Sequence[Road]) -> list[_Place]:
    return [
        _Place(
            road.sections[0].line,
            road.id,
            f"the first <laneSection> starts at s={road.sections[0].s:g}, not 0: the lanes "
            "before it are those of the first section, extrapolated",
        )
        for road in roads
        if road.sections[0].s > GAP_M
    ]
