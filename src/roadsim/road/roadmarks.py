"""Road marks (OpenDRIVE 1.8, 9.6): their lines, dash pieces and thin lifted strips.

A ``<roadMark>`` record becomes one or more `MarkLine` (lateral offset from the lane
border, width, dash pattern): a ``<type>`` with ``<line>`` children is used as given;
otherwise the ``type`` keyword picks a pattern:

- ``broken``: `BROKEN_LINE_M` visible, `BROKEN_SPACE_M` gap (10 ft / 30 ft, the US MUTCD
  lane line; the file's ``<line>`` wins where it has one);
- double lines (``solid solid``, ``solid broken``, ``broken solid``, ``broken broken``): two
  lines of the mark's width with a gap equal to that width, the first named line inside
  (toward the center lane), for the center lane on the left;
- ``botts dots``: squares of the mark's width every `BOTTS_DOT_SPACING_M`;
- ``solid``, ``curb``, ``grass``, ``custom`` and unknown types: one continuous line;
- ``none`` and ``edge`` (an invisible limit), and marks of zero width: nothing.

Dash patterns run along s and restart at each road-mark record; one that repeats more often
than every `MIN_DASH_PERIOD_M` is drawn continuous. `sample_marks` cuts the
lines into pieces (one per dash) sampled on the lane grid; `mark_triangles` turns each
piece into a strip lifted `MARK_LIFT_M` along the surface normal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from roadsim._types import FloatArray, IntArray

if TYPE_CHECKING:
    from roadsim.road.mesh import LaneSamples
    from roadsim.road.model import RoadMark
    from roadsim.road.network import RoadNetwork


MARK_LIFT_M = 0.01
BROKEN_LINE_M = 3.0
BROKEN_SPACE_M = 9.0
BOTTS_DOT_SPACING_M = 1.2
_MIN_PIECE_M = 1e-3  # shorter dash pieces are dropped
#: A dash pattern repeating more often than this (m) is drawn as a continuous line: finer
#: dashes cannot be seen, and a file's 1e-9 m pattern would be billions of pieces.
MIN_DASH_PERIOD_M = 0.1


class MarkLine(NamedTuple):
    """One line of a road mark: lateral offset from the border, width, dash pattern."""

    offset: float
    width: float
    length: float  # visible part (m); 0: continuous
    space: float  # gap (m); 0: continuous
    s_offset: float


class MarkLines(NamedTuple):
    """Every line of every road-mark record of a network, as a table.

    ``uid`` is the lane, ``surface`` the road-mark record's surface id, ``a`` .. ``b`` the
    s range of the record (m), ``line`` the line itself.
    """

    uid: IntArray
    surface: IntArray
    a: FloatArray
    b: FloatArray
    line: list[MarkLine]


@dataclass(frozen=True, slots=True, eq=False)
class MarkSamples:
    """Road-mark lines as polylines: one piece per solid line or dash.

    Attributes:
        piece_start: (K + 1,) piece k is ``points[piece_start[k]:piece_start[k+1]]``.
        surface: (K,) surface id of each piece.
        width: (K,) line width (m).
        points: (Q, 3) line centre on the road surface (not lifted), world frame (m).
        s: (Q,) position along the road (m).
        e_t, e_h: (Q, 3) lateral and normal axes of the road frame at each point.
    """

    piece_start: IntArray
    surface: IntArray
    width: FloatArray
    points: FloatArray
    s: FloatArray
    e_t: FloatArray
    e_h: FloatArray


def road_mark_lines(mark: RoadMark, lane_id: int) -> list[MarkLine]:
    """The lines a road mark draws (empty for ``none``, ``edge`` and zero width).

    Args:
        mark: The road-mark record.
        lane_id: The lane it belongs to: double lines run from inside to outside, the
            center lane's from left to right (OpenDRIVE 1.8, 9.6, road-mark types).
    """
    kind = mark.type.strip().lower()
    if kind in ("none", "edge"):
        return []
    if mark.lines:
        out = []
        for ln in mark.lines:
            width = ln.width if ln.width > 0 else mark.width
            if width <= 0:
                continue
            dashed = ln.length > 0 and ln.space > 0 and ln.length + ln.space >= MIN_DASH_PERIOD_M
            length, space = (ln.length, ln.space) if dashed else (0.0, 0.0)
            out.append(MarkLine(ln.t_offset, width, length, space, ln.s_offset))
        return out
    w = mark.width
    if w <= 0:
        return []
    outward = 1.0 if lane_id > 0 else -1.0
    solid = (0.0, 0.0)
    broken = (BROKEN_LINE_M, BROKEN_SPACE_M)
    parts = kind.split()
    if kind == "botts dots":
        return [MarkLine(0.0, w, w, max(BOTTS_DOT_SPACING_M - w, w), 0.0)]
    if len(parts) == 2 and set(parts) <= {"solid", "broken"}:
        inner = solid if parts[0] == "solid" else broken
        outer = solid if parts[1] == "solid" else broken
        return [MarkLine(-outward * w, w, *inner, 0.0), MarkLine(outward * w, w, *outer, 0.0)]
    if kind == "broken":
        return [MarkLine(0.0, w, *broken, 0.0)]
    return [MarkLine(0.0, w, *solid, 0.0)]  # solid, curb, grass, custom and unknown types


def sample_marks(net: RoadNetwork, lanes: LaneSamples, lines: MarkLines) -> MarkSamples:
    """Cuts road-mark lines into pieces (dashes) and samples them on the lane grid."""
    lt = net.lanes
    if not lines.line:
        z3 = np.zeros((0, 3))
        return MarkSamples(
            np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0), z3, np.zeros(0), z3, z3
        )
    offset, width, length, space, s_off = (
        np.array(c, dtype=np.float64) for c in zip(*lines.line, strict=True)
    )
    start = lines.a + s_off
    dashed = length > 0
    period = np.where(dashed, length + space, 1.0)
    n_dash = np.where(dashed, np.ceil(np.maximum(lines.b - start, 0.0) / period), 1).astype(
        np.int64
    )
    li = np.repeat(np.arange(len(start)), n_dash)
    k = ragged_arange(n_dash)
    ps = np.where(dashed[li], start[li] + k * period[li], start[li])
    pe = np.where(dashed[li], ps + length[li], lines.b[li])
    ps, pe = np.maximum(ps, lines.a[li]), np.minimum(pe, lines.b[li])
    keep = pe - ps > _MIN_PIECE_M
    li, ps, pe = li[keep], ps[keep], pe[keep]
    uid = lines.uid[li]
    sec = lt.section[uid]

    # Grid points strictly inside each piece, found on one key sorted over all sections.
    base = np.concatenate(([0.0], np.cumsum(lt.sec_s1 - lt.sec_s0 + 1.0)[:-1]))
    grid_sec = np.repeat(np.arange(lt.sections), np.diff(lanes.grid_start))
    key = base[grid_sec] + (lanes.s - lt.sec_s0[grid_sec])
    k0 = base[sec] - lt.sec_s0[sec]
    lo = np.searchsorted(key, k0 + ps + 1e-4, side="right")
    hi = np.searchsorted(key, k0 + pe - 1e-4, side="left")
    count = 2 + np.maximum(hi - lo, 0)
    piece = np.repeat(np.arange(len(ps)), count)
    j = ragged_arange(count)
    inside = np.clip(lo[piece] + j - 1, 0, max(len(key) - 1, 0))
    s = np.where(
        j == 0,
        ps[piece],
        np.where(j == count[piece] - 1, pe[piece], lanes.s[inside] if len(key) else 0.0),
    )

    road = lt.sec_road[sec[piece]]
    origin, _, e_t, e_h = net.frame(road, s)
    t = lt.t_outer(uid[piece], s, net.lane_offset.evaluate(road, s)) + offset[li][piece]
    points = origin + t[:, None] * e_t
    piece_start = np.concatenate(([0], np.cumsum(count))).astype(np.int64)
    return MarkSamples(piece_start, lines.surface[li], width[li], points, s, e_t, e_h)


def mark_triangles(marks: MarkSamples) -> tuple[FloatArray, IntArray, IntArray]:
    """A strip of each piece's width around its centre, lifted along the surface normal."""
    count = np.diff(marks.piece_start)
    piece = np.repeat(np.arange(len(count)), count)
    half = 0.5 * marks.width[piece][:, None] * marks.e_t
    lifted = marks.points + MARK_LIFT_M * marks.e_h
    vertices = np.stack((lifted + half, lifted - half), axis=1).reshape(-1, 3)
    quads = np.maximum(count - 1, 0)
    q = marks.piece_start[:-1].repeat(quads) + ragged_arange(quads)
    tri = strip(2 * q, 2 * q + 1, 2)
    return vertices, tri, np.repeat(marks.surface.repeat(quads), 2)


def strip(left: IntArray, right: IntArray, step: IntArray | int) -> IntArray:
    """Two CCW triangles per quad ``right, right+step, left+step, left`` (s forward, t left)."""
    r0, r1, l0, l1 = right, right + step, left, left + step
    return np.stack(
        (np.stack((r0, r1, l1), axis=1), np.stack((r0, l1, l0), axis=1)), axis=1
    ).reshape(-1, 3)


def ragged_arange(counts: IntArray) -> IntArray:
    """``concatenate([arange(c) for c in counts])`` without the loop."""
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    return np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) - np.repeat(
        ends - counts, counts
    )
