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


def _lane_polynomials(doc: OpenDrive) -> list[_Place]:
    """Negative lane widths; raises for laneOffset, elevation, width and border records
    that grow beyond `MAX_NUMBER`."""
    out: list[_Place] = []
    for road in doc.roads:
        # laneOffset and elevation hold along the road, lane records along their section.
        _least(doc, road, road.line, road.lane_offset, road.length, "laneOffset", MAX_LATERAL_M)
        _least(doc, road, road.line, road.elevation, road.length, "elevation", MAX_NUMBER)
        _least(
            doc,
            road,
            road.line,
            road.superelevation,
            road.length,
            "superelevation",
            MAX_ROLL_RAD,
            unit="rad",
        )
        for k, sec in enumerate(road.sections):
            span = (road.sections[k + 1].s if k + 1 < len(road.sections) else road.length) - sec.s
            for lane in sec.lanes:
                if lane.id == 0:
                    continue
                what = f"lane {lane.id} <border>"
                _least(doc, road, lane.line, lane.borders, span, "border", MAX_LATERAL_M, what)
                if not lane.widths:
                    continue
                what = f"lane {lane.id} <width>"
                low, at = _least(
                    doc, road, lane.line, lane.widths, span, "width", MAX_LATERAL_M, what
                )
                if low < -NEGATIVE_WIDTH_M:
                    out.append(
                        _Place(
                            lane.line,
                            road.id,
                            f"lane {lane.id} of the <laneSection> s={sec.s:g} has a negative "
                            f"width ({low:.3g} m at s={sec.s + at:g})",
                        )
                    )
    return out


def _least(
    doc: OpenDrive,
    road: Road,
    line: int | None,
    records: Sequence[Cubic],
    span: float,
    element: str,
    limit: float,
    what: str = "",
    unit: str = "m",
) -> tuple[float, float]:
    """The least value of piecewise cubic ``records`` over ``[0, span]`` and where it is;
    raises where they grow beyond ``limit`` (m)."""
    if not records:
        return 0.0, 0.0
    lo = np.array([max(r.s, 0.0) for r in records])
    hi = np.append(lo[1:], max(span, 0.0))
    hi = np.maximum(hi, lo)
    coef = np.array([(r.a, r.b, r.c, r.d) for r in records])
    s0 = np.array([r.s for r in records])
    low, at, high = _extremes(coef, lo - s0, hi - s0)
    k = int(np.argmax(np.maximum(np.abs(low), np.abs(high))))
    if not max(abs(low[k]), abs(high[k])) <= limit:
        raise _error(
            doc,
            road,
            line,
            element,
            f"the {what or element} record at s={records[k].s:g} reaches "
            f"{max(low[k], high[k], key=abs):.3g} {unit} within its range: more than "
            f"{limit:.3g} {unit}, which no map can mean",
        )
    m = int(np.argmin(low))
    return float(low[m]), float(at[m] + s0[m])


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
