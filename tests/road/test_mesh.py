"""The road surface mesh: lane areas, surface fidelity, winding, road marks."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import matplotlib.tri as mtri
import numpy as np
import pytest
from scipy.spatial import cKDTree

from roadsim import load_map
from roadsim.road.mesh import (
    MAX_CHORD_ERROR_M,
    SurfaceMesh,
    sample_road_surface,
)
from roadsim.road.model import RoadMark, RoadMarkLine
from roadsim.road.network import RoadNetwork
from roadsim.road.roadmarks import (
    BROKEN_LINE_M,
    BROKEN_SPACE_M,
    MARK_LIFT_M,
    MarkLine,
    road_mark_lines,
)
from tests.conftest import CORPUS, CORPUS_MAPS, corpus_name
from tests.road.reference import read_reference

MAPS = CORPUS / "maps"
STRAIGHT = MAPS / "esmini" / "straight_500m.xodr"
TOWN07 = MAPS / "libOpenDRIVE" / "test.xodr"


def area_by_material(mesh: SurfaceMesh) -> dict[tuple[str, str, str], float]:
    out: dict[tuple[str, str, str], float] = defaultdict(float)
    for m, a in zip(mesh.triangle_material.tolist(), mesh.areas().tolist(), strict=True):
        mat = mesh.materials[m]
        out[(mat.kind, mat.type, mat.color)] += a
    return out


def mark_pieces(net: RoadNetwork, lane_id: int) -> list[np.ndarray]:
    """Centre polylines (Q, 3) of the road-mark pieces of one lane."""
    sampling = sample_road_surface(net)
    marks = sampling.marks
    out = []
    for k, sid in enumerate(marks.surface.tolist()):
        if sampling.surfaces[sid].lane_id == lane_id:
            out.append(marks.points[marks.piece_start[k] : marks.piece_start[k + 1]])
    return out


# -- a synthetic straight road with chosen road marks ------------------------------------------------


def straight_road(
    tmp_path: Path,
    marks: dict[int, str],
    length: float = 100.0,
    widths: dict[int, float] | None = None,
) -> RoadNetwork:
    """A straight road along +x with lanes 1, 0, -1 (3.5 m unless given) and roadMark XML."""

    def lane(lane_id: int) -> str:
        w = (widths or {}).get(lane_id, 3.5)
        width = "" if lane_id == 0 else f'<width sOffset="0" a="{w}" b="0" c="0" d="0"/>'
        return f'<lane id="{lane_id}" type="driving" level="false">{width}{marks.get(lane_id, "")}</lane>'

    text = f"""<?xml version="1.0"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="6" name="marks"/>
  <road name="" length="{length}" id="1" junction="-1">
    <planView><geometry s="0" x="0" y="0" hdg="0" length="{length}"><line/></geometry></planView>
    <lanes><laneSection s="0">
      <left>{lane(1)}</left><center>{lane(0)}</center><right>{lane(-1)}</right>
    </laneSection></lanes>
  </road>
</OpenDRIVE>
"""
    path = tmp_path / "marks.xodr"
    path.write_text(text)
    return load_map(path)


def mark(kind: str, width: float = 0.15, s_offset: float = 0.0, color: str = "standard") -> str:
    return f'<roadMark sOffset="{s_offset}" type="{kind}" weight="standard" color="{color}" width="{width}"/>'


# -- lanes ---------------------------------------------------------------------------------------


def test_straight_road_lane_areas_are_width_times_length() -> None:
    mesh = load_map(STRAIGHT).surface_mesh()
    area = area_by_material(mesh)
    # straight_500m.xodr: per side a 3.07 m driving lane, a 1.68 m shoulder, a 6 m border.
    assert area[("lane", "driving", "")] == pytest.approx(2 * 3.07 * 500, rel=1e-9)
    assert area[("lane", "shoulder", "")] == pytest.approx(2 * 1.68 * 500, rel=1e-9)
    assert area[("lane", "border", "")] == pytest.approx(2 * 6.0 * 500, rel=1e-9)


def test_straight_road_vertices_lie_on_the_flat_road() -> None:
    mesh = load_map(STRAIGHT).surface_mesh()
    is_mark = np.array([s.kind == "road_mark" for s in mesh.surfaces])[mesh.surface_id]
    lane_v = np.unique(mesh.triangles[~is_mark])
    mark_v = np.unique(mesh.triangles[is_mark])
    assert np.all(mesh.vertices[lane_v, 2] == 0.0)
    assert np.allclose(mesh.vertices[mark_v, 2], MARK_LIFT_M)
    half = 3.07 + 1.68 + 6.0
    assert np.abs(mesh.vertices[:, 1]).max() == pytest.approx(half)
    assert mesh.vertices[:, 0].min() == pytest.approx(0.0)
    assert mesh.vertices[:, 0].max() == pytest.approx(500.0)


def test_mesh_arrays_are_consistent() -> None:
    mesh = load_map(STRAIGHT).surface_mesh()
    assert mesh.vertices.dtype == np.float64 and mesh.vertices.shape[1] == 3
    assert mesh.triangles.dtype == np.int32 and mesh.triangles.shape[1] == 3
    assert mesh.surface_id.dtype == np.int32 and mesh.surface_id.shape == (len(mesh.triangles),)
    assert mesh.triangles.min() >= 0 and mesh.triangles.max() < len(mesh.vertices)
    assert mesh.surface_id.max() < len(mesh.surfaces)
    assert len(mesh.surface_material) == len(mesh.surfaces)
    # Lane surface ids are lane uids.
    net = load_map(STRAIGHT)
    for uid in range(len(net.lanes.lanes)):
        surf = mesh.surfaces[uid]
        assert (surf.kind, surf.uid, surf.lane_id) == ("lane", uid, int(net.lanes.lane_id[uid]))
        assert surf.type == net.lanes.type_name[uid]


@pytest.mark.parametrize(
    "name",
    [
        "esmini/straight_500_superelevation_elevation_curve",
        "esmini/tilted_crest",
        "qc-opendrive/Ex_Line-Spiral-Arc_elevation_and_superelevation",
        "esmini/curves_elevation",
    ],
)
def test_surface_passes_through_independent_reference_borders(name: str) -> None:
    """The reference's lane-border points (libOpenDRIVE, elevation and superelevation
    applied) lie on the mesh: its height under each point matches within the chord error."""
    net = load_map(MAPS / f"{name}.xodr")
    mesh = net.surface_mesh()
    is_lane = np.array([s.kind == "lane" for s in mesh.surfaces])[mesh.surface_id]
    used, inverse = np.unique(mesh.triangles[is_lane], return_inverse=True)
    v = mesh.vertices[used]
    interp = mtri.LinearTriInterpolator(
        mtri.Triangulation(v[:, 0], v[:, 1], inverse.reshape(-1, 3)), v[:, 2]
    )
    ref = read_reference(name)
    z = interp(ref["x"], ref["y"])
    found = ~np.ma.getmaskarray(z)
    # Points on the outermost borders may fall just outside the chords of a curve.
    assert found.mean() > 0.8
    dz = np.abs(np.asarray(z)[found] - ref["z"][found])
    assert dz.max() < 1.5 * MAX_CHORD_ERROR_M


def test_every_lane_vertex_is_on_the_road_surface() -> None:
    net = load_map(MAPS / "esmini" / "straight_500_superelevation_elevation_curve.xodr")
    lanes = sample_road_surface(net).lanes
    lt = net.lanes
    counts = np.diff(lanes.grid_start)
    sec = np.repeat(np.arange(lt.sections), counts * lt.sec_count)
    s = np.repeat(lanes.s, lt.sec_count[np.repeat(np.arange(lt.sections), counts)])
    x, y, z = net.to_world(net.road_id_of(lt.sec_road[sec]).astype(str), s, lanes.t)
    assert np.allclose(np.stack((x, y, z), axis=1), lanes.points, atol=1e-9)


@pytest.mark.parametrize("name", ["libOpenDRIVE/test", "esmini/curves", "qc-opendrive/positive18"])
def test_lane_borders_stay_within_the_chord_error(name: str) -> None:
    net = load_map(MAPS / f"{name}.xodr")
    lanes = sample_road_surface(net).lanes
    lt = net.lanes
    grid_sec = np.repeat(np.arange(lt.sections), np.diff(lanes.grid_start))
    i = np.flatnonzero(grid_sec[1:] == grid_sec[:-1])  # intervals i .. i+1 within a section
    n = lt.sec_count[grid_sec[i]]
    pair = np.repeat(i, n)  # every lane border of the section, for every interval
    uid = lt.sec_first_uid[grid_sec[pair]] + (np.arange(len(pair)) - np.repeat(np.cumsum(n) - n, n))
    road = lt.road[uid]

    def border(s: np.ndarray) -> np.ndarray:
        return np.stack(net.to_world_index(road, s, net.uid_t_outer(uid, s)), axis=1)

    a, b = lanes.s[pair], lanes.s[pair + 1]
    pa, pb = border(a), border(b)
    for f in (0.25, 0.5, 0.75):
        dev = np.linalg.norm(border(a + f * (b - a)) - ((1 - f) * pa + f * pb), axis=1)
        assert dev.max() <= MAX_CHORD_ERROR_M + 1e-9
    assert (b - a).max() <= 5.0 + 1e-9


def test_curves_are_sampled_more_finely_than_straights() -> None:
    net = load_map(TOWN07)
    lanes = sample_road_surface(net).lanes
    step = np.diff(lanes.s)
    grid_sec = np.repeat(np.arange(net.lanes.sections), np.diff(lanes.grid_start))
    same = grid_sec[1:] == grid_sec[:-1]
    road = net.lanes.sec_road[grid_sec[:-1]][same]
    mid = (lanes.s[:-1] + 0.5 * step)[same]
    _, _, _, k = net.reference.evaluate(road, mid)
    assert np.median(step[same][np.abs(k) < 1e-9]) > 2.0 * np.median(step[same][np.abs(k) > 0.05])


@pytest.mark.filterwarnings("ignore::roadsim.errors.MapWarning")
@pytest.mark.parametrize("path", CORPUS_MAPS, ids=corpus_name)
def test_every_corpus_map_meshes_with_normals_up(path: Path) -> None:
    net = load_map(path)
    mesh = net.surface_mesh()
    assert np.all(np.isfinite(mesh.vertices))
    if len(mesh.triangles):
        assert np.all(mesh.normals()[:, 2] > 0.0)
        assert np.all(mesh.areas() > 0.0)


def test_town07_builds() -> None:
    net = load_map(TOWN07)
    mesh = net.surface_mesh()
    assert len(mesh.triangles) > 10_000
    kinds = {(m.kind, m.type) for m in mesh.materials}
    assert {
        ("lane", "driving"),
        ("lane", "sidewalk"),
        ("road_mark", "solid"),
        ("road_mark", "broken"),
    } <= kinds
    # Town07's lanes cover each other only where junction roads overlap; the driving area is
    # about its road length times two 3.5 m lanes, and well under the double.
    driving = area_by_material(mesh)[("lane", "driving", "")]
    assert 0.5 * 5000 * 7 < driving < 2 * 5000 * 7


def test_to_obj_writes_every_vertex_and_triangle(tmp_path: Path) -> None:
    mesh = load_map(STRAIGHT).surface_mesh()
    path = mesh.to_obj(tmp_path / "road.obj")
    lines = path.read_text().splitlines()
    assert sum(1 for ln in lines if ln.startswith("v ")) == len(mesh.vertices)
    faces = [ln for ln in lines if ln.startswith("f ")]
    assert len(faces) == len(mesh.triangles)
    assert min(int(i) for ln in faces for i in ln.split()[1:]) == 1


# -- road marks ----------------------------------------------------------------------------------


def test_straight_road_marks_where_the_file_has_them() -> None:
    net = load_map(STRAIGHT)
    mesh = net.surface_mesh()
    marked = {s.lane_id: s for s in mesh.surfaces if s.kind == "road_mark"}
    # The file marks lanes 1, 0 and -1 only; 2, 3, -2, -3 have no <roadMark>.
    assert sorted(marked) == [-1, 0, 1]
    assert marked[0].type == "broken" and marked[1].type == "solid"
    assert marked[0].color == "white"  # "standard" is white (OpenDRIVE 1.8, 9.6)
    area = area_by_material(mesh)
    assert area[("road_mark", "solid", "white")] == pytest.approx(2 * 0.12 * 500, rel=1e-9)


def test_broken_center_line_follows_the_file_line_pattern() -> None:
    # <line length="4" space="8"> over 500 m: dashes start at 0, 12, ..., 492.
    pieces = mark_pieces(load_map(STRAIGHT), 0)
    assert len(pieces) == 42
    starts = np.array([p[0, 0] for p in pieces])
    lengths = np.array([p[-1, 0] - p[0, 0] for p in pieces])
    assert np.allclose(starts, 12.0 * np.arange(42))
    assert np.allclose(lengths, 4.0)
    assert np.allclose(np.concatenate(pieces)[:, 1], 0.0)


def test_solid_marks_run_on_the_outer_borders() -> None:
    net = load_map(STRAIGHT)
    for lane_id, y in ((1, 3.07), (-1, -3.07)):
        (piece,) = mark_pieces(net, lane_id)
        assert np.allclose(piece[:, 1], y)
        assert piece[0, 0] == pytest.approx(0.0) and piece[-1, 0] == pytest.approx(500.0)


def test_type_none_and_zero_width_draw_nothing(tmp_path: Path) -> None:
    net = straight_road(tmp_path, {1: mark("none"), 0: mark("solid", width=0.0), -1: mark("solid")})
    mesh = net.surface_mesh()
    marked = [s for s in mesh.surfaces if s.kind == "road_mark"]
    assert [s.lane_id for s in marked] == [-1]
    assert len(mark_pieces(net, 1)) == 0 and len(mark_pieces(net, 0)) == 0


def test_broken_default_pattern_is_3m_line_9m_gap(tmp_path: Path) -> None:
    pieces = mark_pieces(straight_road(tmp_path, {0: mark("broken")}), 0)
    assert len(pieces) == 9  # starts 0, 12, ..., 96 on a 100 m road
    assert np.allclose([p[-1, 0] - p[0, 0] for p in pieces], 3.0)


def test_double_lines_have_a_gap_equal_to_the_width(tmp_path: Path) -> None:
    w = 0.15
    net = straight_road(
        tmp_path,
        {0: mark("solid broken", w), -1: mark("solid broken", w), 1: mark("broken solid", w)},
    )
    # Center lane: first named line on the left (+t).
    solid, *broken = sorted(mark_pieces(net, 0), key=len, reverse=True)
    assert np.allclose(solid[:, 1], w) and all(np.allclose(p[:, 1], -w) for p in broken)
    # Right lane -1 (border at t = -3.5): first named (solid) inside, toward the center.
    solid, *broken = sorted(mark_pieces(net, -1), key=lambda p: p[-1, 0] - p[0, 0], reverse=True)
    assert np.allclose(solid[:, 1], -3.5 + w) and all(
        np.allclose(p[:, 1], -3.5 - w) for p in broken
    )
    # Left lane 1, "broken solid": broken inside (t = 3.5 - w), solid outside.
    solid, *broken = sorted(mark_pieces(net, 1), key=lambda p: p[-1, 0] - p[0, 0], reverse=True)
    assert np.allclose(solid[:, 1], 3.5 + w) and all(np.allclose(p[:, 1], 3.5 - w) for p in broken)
    mesh = net.surface_mesh()
    strip_area = area_by_material(mesh)[("road_mark", "solid broken", "white")]
    assert strip_area == pytest.approx(2 * (100 * w + 9 * 3 * w), rel=1e-9)


def test_botts_dots_are_many_small_squares(tmp_path: Path) -> None:
    pieces = mark_pieces(straight_road(tmp_path, {0: mark("botts dots", 0.1)}), 0)
    assert len(pieces) == pytest.approx(100 / 1.2, abs=1)
    assert np.allclose([p[-1, 0] - p[0, 0] for p in pieces], 0.1)


def test_mark_records_split_the_lane_at_their_s_offsets(tmp_path: Path) -> None:
    marks = mark("solid", color="yellow") + mark("broken", s_offset=40.0)
    net = straight_road(tmp_path, {0: marks})
    surfaces = [s for s in net.surface_mesh().surfaces if s.kind == "road_mark"]
    assert [(s.type, s.color, s.s_start, s.s_end) for s in surfaces] == [
        ("solid", "yellow", 0.0, 40.0),
        ("broken", "white", 40.0, 100.0),
    ]
    pieces = mark_pieces(net, 0)
    assert pieces[0][0, 0] == pytest.approx(0.0) and pieces[0][-1, 0] == pytest.approx(40.0)
    assert pieces[1][0, 0] == pytest.approx(40.0)


def test_marks_follow_curves_and_superelevation() -> None:
    """Mark vertices sit MARK_LIFT_M above the surface, along its normal, on a banked curve."""
    net = load_map(MAPS / "esmini" / "straight_500_superelevation_elevation_curve.xodr")
    sampling = sample_road_surface(net)
    marks = sampling.marks
    piece = np.repeat(np.arange(len(marks.surface)), np.diff(marks.piece_start))
    uid = np.array([sampling.surfaces[s].uid for s in marks.surface.tolist()])[piece]
    road = net.lanes.road[uid]
    centre = np.stack(net.to_world_index(road, marks.s, net.uid_t_outer(uid, marks.s)), axis=1)
    # Single lines here: the centre is on the lane border.
    assert np.allclose(marks.points, centre, atol=1e-9)
    _, _, e_t, e_h = net.frame(road, marks.s)
    half = 0.5 * marks.width[piece][:, None] * e_t
    expected = np.concatenate((centre + half, centre - half)) + MARK_LIFT_M * np.concatenate(
        (e_h, e_h)
    )
    mesh = net.surface_mesh()
    is_mark = np.array([s.kind == "road_mark" for s in mesh.surfaces])[mesh.surface_id]
    got = mesh.vertices[np.unique(mesh.triangles[is_mark])]
    distance, _ = cKDTree(got).query(expected)
    assert distance.max() < 1e-9 and len(got) == len(expected)
    # The road is banked: mark normals lean with it, as the lane normals do.
    normals = mesh.normals()
    assert normals[is_mark][:, 2].min() < 0.99


def test_zero_width_lanes_have_no_triangles(tmp_path: Path) -> None:
    net = straight_road(tmp_path, {1: mark("solid")}, widths={1: 0.0})
    mesh = net.surface_mesh()
    lane_ids = {mesh.surfaces[i].lane_id for i in np.unique(mesh.surface_id)}
    assert lane_ids == {-1, 1}  # lane 1 only through its road mark, drawn on the reference line
    assert {
        mesh.surfaces[i].kind for i in np.unique(mesh.surface_id) if mesh.surfaces[i].lane_id == 1
    } == {"road_mark"}


def test_road_mark_lines_from_keywords_and_explicit_lines() -> None:
    base = RoadMark(0.0, "broken", "standard", "standard", 0.12, "both", "standard")
    assert road_mark_lines(base._replace(type="edge"), -1) == []
    assert road_mark_lines(base._replace(type="none"), -1) == []
    assert road_mark_lines(base._replace(type="curb"), -1) == [MarkLine(0.0, 0.12, 0.0, 0.0, 0.0)]
    assert road_mark_lines(base, 1) == [MarkLine(0.0, 0.12, BROKEN_LINE_M, BROKEN_SPACE_M, 0.0)]
    explicit = base._replace(
        lines=(
            RoadMarkLine(3.0, 0.0, 0.2, 0.0, 0.0, "none", ""),  # space 0: continuous
            RoadMarkLine(4.0, 8.0, -0.2, 1.0, 0.1, "caution", ""),
            RoadMarkLine(4.0, 8.0, 0.5, 0.0, 0.0, "none", ""),
        )
    )
    # Width 0 falls back to the mark's width; the file's offsets and pattern are kept.
    assert road_mark_lines(explicit, -1) == [
        MarkLine(0.2, 0.12, 0.0, 0.0, 0.0),
        MarkLine(-0.2, 0.1, 4.0, 8.0, 1.0),
        MarkLine(0.5, 0.12, 4.0, 8.0, 0.0),
    ]
    assert road_mark_lines(explicit._replace(width=0.0, lines=explicit.lines[:1]), -1) == []
