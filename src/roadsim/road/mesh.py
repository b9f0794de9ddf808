"""The road surface as a triangle mesh: lanes and road marks, for ray tracing and rendering.

Two steps, both vectorised over the whole network:

1. `sample_road_surface` samples every lane section on one s grid (shared by all its lanes,
   so neighbouring lanes share vertices) and every road-mark line on its own pieces
   (each dash is a piece). The grid holds the section ends, every geometry, elevation,
   superelevation, laneOffset and lane width/border record start, at most ``max_step``
   apart, and is refined until no lane boundary deviates from its chord by more than
   ``max_chord_error`` (measured at each interval's quarter points and midpoint).
2. `triangulate` turns the samples into a `SurfaceMesh`: one strip per lane between its
   inner and outer boundary, and one thin strip per road-mark piece, lifted 1 cm
   (`roadsim.road.roadmarks.MARK_LIFT_M`) along the surface normal so that it never
   z-fights with the lane below. Triangles thinner than 0.1 mm (zero-width lanes) are left
   out.

Surface ids (``SurfaceMesh.surface_id``, what a ray tracer returns for a hit):

- ``0 .. n_lanes - 1`` are the lanes, and the surface id *is* the lane uid of
  `roadsim.road.lanes.LaneRecords` (center lanes have an id but own no triangles);
- ``n_lanes ..`` are road-mark records, one per (lane, ``<roadMark>`` record); all the
  lines of a double line share it.

Each id has a `Surface` record (road, lane, section, type, colour ...), and a `Material`
(kind, type, colour) shared by all surfaces that look alike: ``surface_material`` maps one
to the other, so a lidar can ask "lane marking, white" vs "driving lane" vs "sidewalk"
with one array lookup.

Road marks lie centred on the lane's outer border (the center lane's on the laneOffset
line); `roadsim.road.roadmarks` says which lines each road-mark type draws. Lane height and
``level`` are not modelled (nor by `RoadNetwork.to_world`). Where the file itself jumps
inside a lane section (an elevation or width record that does not continue the previous
one, a gap between geometries), the mesh stays connected and spreads the jump over one
sample interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from roadsim._types import FloatArray, Int32Array, IntArray
from roadsim.road.budget import Budget, check_budget
from roadsim.road.roadmarks import (
    MarkLine,
    MarkLines,
    MarkSamples,
    mark_triangles,
    ragged_arange,
    road_mark_lines,
    sample_marks,
    strip,
)

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork

SurfaceKind = Literal["lane", "road_mark"]

MAX_CHORD_ERROR_M = 0.02
MAX_STEP_M = 5.0
#: Border points a road may need (real maps need a few per metre; see `check_budget`).
_BUDGET = Budget("lane border samples", 1e5, 20.0)
_TOL_M = 1e-3  # breakpoints closer than this are merged; shorter pieces are dropped
_MIN_ALTITUDE_M = 1e-4  # thinner triangles are dropped (zero-width lanes)
_REFINE_PASSES = 3


@dataclass(frozen=True, slots=True)
class Material:
    """What a surface looks like: ``("lane", "sidewalk", "")``, ``("road_mark", "broken", "white")``."""

    kind: SurfaceKind
    type: str
    color: str = ""


@dataclass(frozen=True, slots=True)
class Surface:
    """One surface id of a `SurfaceMesh`.

    Attributes:
        kind: ``"lane"`` or ``"road_mark"``.
        type: The lane type (``driving``, ``sidewalk`` ...) or the road-mark type
            (``solid``, ``broken``, ``solid solid``, ``curb`` ...), as in the file.
        road_id: OpenDRIVE id of the road.
        lane_id: OpenDRIVE lane id (a mark belongs to the lane whose outer border it marks).
        section: Global lane-section index (`LaneRecords.sec_road` etc.).
        uid: Lane uid.
        material: Index into `SurfaceMesh.materials`.
        s_start, s_end: Where the lane section or road-mark record applies, along s (m).
        color: Road-mark colour (``standard`` is written ``white``); empty for lanes.
        weight: Road-mark weight; empty for lanes.
        width: Road-mark width (m); 0 for lanes.
    """

    kind: SurfaceKind
    type: str
    road_id: str
    lane_id: int
    section: int
    uid: int
    material: int
    s_start: float
    s_end: float
    color: str = ""
    weight: str = ""
    width: float = 0.0


@dataclass(frozen=True, slots=True, eq=False)
class SurfaceMesh:
    """A triangle mesh of the road surface, in the world frame.

    Attributes:
        vertices: (V, 3) float64 world positions (m).
        triangles: (T, 3) int32 vertex indices, counter-clockwise seen from above
            (normals point up).
        surface_id: (T,) int32 surface id of each triangle (see the module docstring).
        surfaces: The `Surface` record of each surface id.
        materials: The distinct materials.
        surface_material: (S,) int32 material index of each surface id.
    """

    vertices: FloatArray
    triangles: Int32Array
    surface_id: Int32Array
    surfaces: tuple[Surface, ...]
    materials: tuple[Material, ...]
    surface_material: Int32Array

    @property
    def triangle_material(self) -> Int32Array:
        """(T,) material index of each triangle."""
        return self.surface_material[self.surface_id]

    def normals(self) -> FloatArray:
        """(T, 3) unit normals of the triangles."""
        n = self._cross()
        out: FloatArray = n / np.linalg.norm(n, axis=1, keepdims=True)
        return out

    def areas(self) -> FloatArray:
        """(T,) triangle areas (m^2)."""
        out: FloatArray = 0.5 * np.linalg.norm(self._cross(), axis=1)
        return out

    def to_obj(self, path: str | Path) -> Path:
        """Writes a Wavefront OBJ file, one group per material (z up, as the world frame)."""
        path = Path(path)
        mat = self.triangle_material
        with path.open("w") as f:
            f.write("# roadsim road surface mesh; world frame x east, y north, z up (m)\n")
            np.savetxt(f, self.vertices, fmt="v %.4f %.4f %.4f")
            for k, m in enumerate(self.materials):
                name = "_".join(x for x in (m.kind, m.type, m.color) if x).replace(" ", "_")
                f.write(f"g {name}\n")
                np.savetxt(f, self.triangles[mat == k] + 1, fmt="f %d %d %d")
        return path

    def _cross(self) -> FloatArray:
        v = self.vertices[self.triangles]
        return np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])


@dataclass(frozen=True, slots=True, eq=False)
class LaneSamples:
    """Every lane boundary of every lane section, sampled on one s grid per section.

    Attributes:
        grid_start: (n_sections + 1,) section k has samples ``s[grid_start[k]:grid_start[k+1]]``
            (none for sections shorter than 1 mm).
        s: (G,) positions along the road (m), increasing within a section.
        point_start: (n_sections + 1,) section k's boundary points are
            ``points[point_start[k]:point_start[k+1]]``, which reshape to (m_k, n_k, 3): sample
            by lane column, column j being the outer border of lane uid
            ``sec_first_uid[k] + j`` (the center lane's column is the laneOffset line).
        points: (P, 3) world positions (m).
        t: (P,) lateral positions (m).
        sec_first_uid, sec_count: Copies of the `LaneRecords` section arrays.
        lane_section, lane_id: `LaneRecords.section` and ``lane_id`` (by uid).
    """

    grid_start: IntArray
    s: FloatArray
    point_start: IntArray
    points: FloatArray
    t: FloatArray
    sec_first_uid: IntArray
    sec_count: IntArray
    lane_section: IntArray
    lane_id: IntArray

    def section_points(self, section: int) -> FloatArray:
        """(m_k, n_k, 3) boundary points of one section."""
        block = self.points[self.point_start[section] : self.point_start[section + 1]]
        m = int(self.grid_start[section + 1] - self.grid_start[section])
        return block.reshape(m, -1, 3) if m else block.reshape(0, 0, 3)


@dataclass(frozen=True, slots=True, eq=False)
class RoadSampling:
    """Everything `triangulate` needs, also used by the map plot."""

    lanes: LaneSamples
    marks: MarkSamples
    surfaces: tuple[Surface, ...]
    materials: tuple[Material, ...]


def build_surface_mesh(
    net: RoadNetwork,
    *,
    max_chord_error: float = MAX_CHORD_ERROR_M,
    max_step: float = MAX_STEP_M,
) -> SurfaceMesh:
    """The road surface mesh of a network (lanes and road marks).

    Args:
        net: The road network.
        max_chord_error: Largest distance of a lane border from its polyline (m).
        max_step: Largest sample spacing along s (m).
    """
    return triangulate(sample_road_surface(net, max_chord_error=max_chord_error, max_step=max_step))


def sample_road_surface(
    net: RoadNetwork,
    *,
    max_chord_error: float = MAX_CHORD_ERROR_M,
    max_step: float = MAX_STEP_M,
) -> RoadSampling:
    """Samples lane borders and road-mark lines; see the module docstring."""
    lanes = sample_lanes(net, max_chord_error=max_chord_error, max_step=max_step)
    surfaces, materials, lines = _surfaces(net)
    marks = sample_marks(net, lanes, lines)
    return RoadSampling(lanes, marks, surfaces, materials)


def triangulate(sampling: RoadSampling) -> SurfaceMesh:
    """The mesh of sampled lanes and road marks."""
    lane_v, lane_tri, lane_sid = _lane_triangles(sampling)
    mark_v, mark_tri, mark_sid = mark_triangles(sampling.marks)
    vertices = np.concatenate((lane_v, mark_v))
    tri = np.concatenate((lane_tri, mark_tri + len(lane_v)))
    sid = np.concatenate((lane_sid, mark_sid))
    # Winding from above and degenerate (zero-width) triangles, decided on the geometry.
    v = vertices[tri]
    cross = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    longest = np.max(np.linalg.norm(v - np.roll(v, 1, axis=1), axis=2), axis=1)
    keep = np.linalg.norm(cross, axis=1) > _MIN_ALTITUDE_M * np.maximum(longest, 1e-12)
    tri, sid, flip = tri[keep], sid[keep], cross[keep, 2] < 0.0
    tri[flip] = tri[flip][:, [0, 2, 1]]
    used, tri = np.unique(tri, return_inverse=True)
    surface_material = np.array([s.material for s in sampling.surfaces], dtype=np.int32)
    return SurfaceMesh(
        vertices=vertices[used],
        triangles=tri.reshape(-1, 3).astype(np.int32),
        surface_id=sid.astype(np.int32),
        surfaces=sampling.surfaces,
        materials=sampling.materials,
        surface_material=surface_material,
    )


# -- lanes --------------------------------------------------------------------------------------


def sample_lanes(
    net: RoadNetwork,
    *,
    max_chord_error: float = MAX_CHORD_ERROR_M,
    max_step: float = MAX_STEP_M,
) -> LaneSamples:
    """All lane borders of every section on an adaptive s grid (see the module docstring)."""
    lt = net.lanes
    sec, s = _breakpoints(net)
    # Intervals between consecutive breakpoints of one section, cut to at most max_step.
    a, b, same = s[:-1], s[1:], sec[1:] == sec[:-1]
    sec, s = _subdivide(sec, s, same, np.ceil((b - a) / max_step))
    # Refine where a border strays from its chord; a second pass catches borders whose
    # curvature is far from uniform over an interval (S-shaped width cubics).
    for _ in range(_REFINE_PASSES):
        parts = _parts_needed(net, sec, s, max_chord_error)
        if not np.any(parts > 1):
            break
        check_budget(net, lt.sec_road[sec[:-1]], parts * lt.sec_count[sec[:-1]], _BUDGET)
        sec, s = _subdivide(sec, s, sec[1:] == sec[:-1], parts)

    counts = np.bincount(sec, minlength=lt.sections)
    grid_start = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    points, t = _borders(net, sec, s)
    per_section = counts * lt.sec_count
    point_start = np.concatenate(([0], np.cumsum(per_section))).astype(np.int64)
    return LaneSamples(
        grid_start,
        s,
        point_start,
        points,
        t,
        lt.sec_first_uid,
        lt.sec_count,
        lt.section,
        lt.lane_id,
    )


def _breakpoints(net: RoadNetwork) -> tuple[IntArray, FloatArray]:
    """Section ends and every record start inside a section, sorted by (section, s)."""
    lt = net.lanes
    s0, s1 = lt.sec_s0, lt.sec_s1
    live = np.flatnonzero(s1 - s0 > _TOL_M)
    secs, ss = [live, live], [s0[live], s1[live]]
    has_sections = lt.road_section_count > 0
    for count, rec_s in (
        (net.reference.count, net.reference.s0),
        (net.elevation.count, net.elevation.s0),
        (net.superelevation.count, net.superelevation.s0),
        (net.lane_offset.count, net.lane_offset.s0),
    ):
        road = np.repeat(np.arange(len(count)), count)
        ok = has_sections[road]
        road, rs = road[ok], rec_s[ok]
        secs.append(lt.section_at(road, rs))
        ss.append(rs)
    for poly in (lt.widths, lt.borders):
        uid = np.repeat(np.arange(len(poly.count)), poly.count)
        secs.append(lt.section[uid])
        ss.append(lt.sec_s0[lt.section[uid]] + poly.s0)
    sec = np.concatenate(secs)
    s = np.concatenate(ss)
    # Interior record starts only, away from the section ends.
    n_ends = 2 * len(live)
    interior = np.ones(len(s), dtype=bool)
    interior[n_ends:] = (s[n_ends:] > s0[sec[n_ends:]] + _TOL_M) & (
        s[n_ends:] < s1[sec[n_ends:]] - _TOL_M
    )
    sec, s = sec[interior], s[interior]
    order = np.lexsort((s, sec))
    sec, s = sec[order], s[order]
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = (sec[1:] != sec[:-1]) | (s[1:] - s[:-1] > _TOL_M)
    return sec[keep], s[keep]


def _parts_needed(net: RoadNetwork, sec: IntArray, s: FloatArray, tol: float) -> FloatArray:
    """How many equal parts each interval ``s[i], s[i+1]`` needs to keep its borders within tol.

    The deviation of every border of the section from the chord is measured at the quarter
    points and the midpoint (an S-shaped width cubic has no sagitta at its inflection; a
    parabola's deviation at a quarter point is 3/4 of its sagitta); it falls with the square
    of the interval length.
    """
    lt = net.lanes
    a, b = s[:-1], s[1:]
    iv = np.flatnonzero(sec[1:] == sec[:-1])
    parts = np.ones(len(a))
    if not len(iv):
        return parts
    isec, ia, ib = sec[iv], a[iv], b[iv]
    p0, _ = _borders(net, isec, ia)
    p1, _ = _borders(net, isec, ib)
    dev = np.zeros(len(p0))
    for f, scale in ((0.25, 4.0 / 3.0), (0.5, 1.0), (0.75, 4.0 / 3.0)):
        pf, _ = _borders(net, isec, ia + f * (ib - ia))
        dev = np.maximum(dev, scale * np.linalg.norm(pf - ((1.0 - f) * p0 + f * p1), axis=1))
    starts = np.concatenate(([0], np.cumsum(lt.sec_count[isec])[:-1]))
    sag = np.maximum.reduceat(dev, starts)
    parts[iv] = np.clip(np.ceil(np.sqrt(sag / tol)), 1, 1024)
    return parts


def _subdivide(
    sec: IntArray, s: FloatArray, same: npt.NDArray[np.bool_], n: FloatArray
) -> tuple[IntArray, FloatArray]:
    """Splits each interval ``s[i], s[i+1]`` of one section (``same[i]``) into ``n[i]`` parts."""
    parts = np.where(same, np.maximum(n, 1), 1).astype(np.int64)
    counts = np.append(parts, 1)  # the last point of all stands alone
    k = ragged_arange(counts)
    i = np.repeat(np.arange(len(s)), counts)
    nxt = s[np.minimum(i + 1, len(s) - 1)]
    frac = k / np.repeat(counts, counts)
    return sec[i], s[i] + (nxt - s[i]) * frac


def _borders(net: RoadNetwork, sec: IntArray, s: FloatArray) -> tuple[FloatArray, FloatArray]:
    """World points and t of every lane border of section ``sec[i]`` at ``s[i]``.

    Returns:
        ``(points, t)``, shapes (P, 3) and (P,), P the sum of the sections' lane counts,
        ordered by sample, then by lane from the leftmost.
    """
    lt = net.lanes
    n = lt.sec_count[sec]
    idx = np.repeat(np.arange(len(s)), n)
    uid = lt.sec_first_uid[sec][idx] + ragged_arange(n)
    road = lt.sec_road[sec]
    origin, _, e_t, _ = net.frame(road, s)
    offset = net.lane_offset.evaluate(road, s)
    t = lt.t_outer(uid, s[idx], offset[idx])
    return origin[idx] + t[:, None] * e_t[idx], t


def _lane_triangles(sampling: RoadSampling) -> tuple[FloatArray, IntArray, IntArray]:
    """Two triangles per lane and sample interval: (vertices, triangles, surface ids)."""
    lanes = sampling.lanes
    m = np.diff(lanes.grid_start)
    uid = np.flatnonzero((lanes.lane_id != 0) & (m[lanes.lane_section] >= 2))
    quads = m[lanes.lane_section[uid]] - 1
    q_uid = np.repeat(uid, quads)
    q_sec = lanes.lane_section[q_uid]
    n = lanes.sec_count[q_sec]
    first = lanes.sec_first_uid[q_sec]
    row = lanes.point_start[q_sec] + ragged_arange(quads) * n
    left_side = lanes.lane_id[q_uid] > 0
    outer = row + (q_uid - first)
    inner = row + np.where(left_side, q_uid + 1, q_uid - 1) - first
    tri = strip(np.where(left_side, outer, inner), np.where(left_side, inner, outer), n)
    return lanes.points, tri, np.repeat(q_uid, 2)


# -- road marks ---------------------------------------------------------------------------------


def _surfaces(net: RoadNetwork) -> tuple[tuple[Surface, ...], tuple[Material, ...], MarkLines]:
    """Surface records (lanes by uid, then road-mark records) and the road-mark lines."""
    lt = net.lanes
    materials: dict[Material, int] = {}

    def material(m: Material) -> int:
        return materials.setdefault(m, len(materials))

    surfaces: list[Surface] = []
    for uid, lane in enumerate(lt.lanes):
        sec = int(lt.section[uid])
        surfaces.append(
            Surface(
                kind="lane",
                type=lane.type,
                road_id=net.road_ids[int(lt.road[uid])],
                lane_id=lane.id,
                section=sec,
                uid=uid,
                material=material(Material("lane", lane.type)),
                s_start=float(lt.sec_s0[sec]),
                s_end=float(lt.sec_s1[sec]),
            )
        )
    m_uid: list[int] = []
    m_surface: list[int] = []
    m_a: list[float] = []
    m_b: list[float] = []
    m_line: list[MarkLine] = []
    for uid, lane in enumerate(lt.lanes):
        if not lane.road_marks:
            continue
        sec = int(lt.section[uid])
        s0, s1 = float(lt.sec_s0[sec]), float(lt.sec_s1[sec])
        marks = lane.road_marks
        for k, mark in enumerate(marks):
            a = s0 + mark.s_offset
            b = min(s1, s0 + marks[k + 1].s_offset) if k + 1 < len(marks) else s1
            lines = road_mark_lines(mark, lane.id)
            if b - a <= _TOL_M or not lines:
                continue
            color = "white" if mark.color.lower() == "standard" else mark.color
            sid = len(surfaces)
            surfaces.append(
                Surface(
                    kind="road_mark",
                    type=mark.type,
                    road_id=net.road_ids[int(lt.road[uid])],
                    lane_id=lane.id,
                    section=sec,
                    uid=uid,
                    material=material(Material("road_mark", mark.type, color)),
                    s_start=a,
                    s_end=b,
                    color=color,
                    weight=mark.weight,
                    width=mark.width,
                )
            )
            for line in lines:
                m_uid.append(uid)
                m_surface.append(sid)
                m_a.append(a)
                m_b.append(b)
                m_line.append(line)
    lines_out = MarkLines(
        np.array(m_uid, dtype=np.int64),
        np.array(m_surface, dtype=np.int64),
        np.array(m_a, dtype=np.float64),
        np.array(m_b, dtype=np.float64),
        m_line,
    )
    return tuple(surfaces), tuple(materials), lines_out
