"""`plot_map`: files are written, and what is drawn is where the map says."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.image import imread

from roadsim import load_map
from roadsim.errors import MapWarning
from roadsim.road.mesh import sample_road_surface
from roadsim.road.network import RoadNetwork
from roadsim.road.plot import LANE_COLORS, lane_polygons, object_outlines, plot_map
from tests.conftest import CORPUS

MAPS = CORPUS / "maps"


def load(name: str) -> RoadNetwork:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MapWarning)
        return load_map(MAPS / f"{name}.xodr")


def axes() -> tuple[Figure, object]:
    fig = Figure(figsize=(6, 6))
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def legend_labels(ax: object) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_writes_a_png_with_asphalt_in_it(tmp_path: Path) -> None:
    out = plot_map(load("esmini/straight_500m"), tmp_path / "straight.png", dpi=80)
    assert out == tmp_path / "straight.png"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = imread(out)[..., :3]
    assert image.shape[0] > 100 and image.shape[1] > 400
    asphalt = np.all(np.abs(image - np.array(to_rgb(LANE_COLORS["driving"]))) < 0.02, axis=-1)
    assert asphalt.mean() > 0.01


def test_other_formats_follow_the_suffix(tmp_path: Path) -> None:
    out = plot_map(load("esmini/curves"), tmp_path / "curves.svg", legend=False)
    assert out.read_text().lstrip().startswith("<?xml")


def test_lanes_marks_signals_and_legend_into_given_axes() -> None:
    net = load("esmini/fabriksgatan_traffic_lights")
    _, ax = axes()
    assert plot_map(net, ax) is ax
    labels = legend_labels(ax)
    assert {
        "driving lane",
        "sidewalk lane",
        "white road mark",
        "traffic light",
        "junction",
        "object",
    } <= set(labels)
    assert "sign" not in labels  # this map has traffic lights only
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(lines) == 1 and len(lines[0].get_segments()) > 10
    assert ax.get_aspect() == 1.0
    assert "fabriksgatan_traffic_lights.xodr" in ax.get_title()


def test_signals_are_drawn_where_they_stand() -> None:
    net = load("esmini/some_signs")
    _, ax = axes()
    plot_map(net, ax)
    points = np.concatenate(
        [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]
    )
    sig = [s for s in net.signals if s.reference_of is None]
    x, y, _ = net.to_world([s.road_id for s in sig], [s.s for s in sig], [s.t for s in sig])
    assert len(points) == len(sig)
    assert np.allclose(np.sort(points[:, 0]), np.sort(x)) and np.allclose(
        np.sort(points[:, 1]), np.sort(y)
    )
    assert "sign" in legend_labels(ax)


def test_lane_polygons_cover_the_lane_area() -> None:
    net = load("esmini/straight_500m")
    polygons, types = lane_polygons(sample_road_surface(net))
    assert sorted(types) == sorted(["border", "shoulder", "driving"] * 2)
    area = {}
    for p, t in zip(polygons, types, strict=True):
        x, y = p[:, 0], p[:, 1]
        area[t] = area.get(t, 0.0) + 0.5 * abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))
    assert area == pytest.approx(
        {"driving": 2 * 3.07 * 500, "shoulder": 2 * 1.68 * 500, "border": 2 * 6 * 500}
    )


def test_object_outlines_are_placed_and_turned() -> None:
    net = load("esmini/stationary_objects")
    outlines, points = object_outlines(net)
    assert len(outlines) + len(points) == len(net.objects)
    for o in net.objects:
        if o.outline or o.radius > 0 or not (o.length > 0 and o.width > 0):
            continue
        x, y, _ = net.to_world(o.road_id, o.s, o.t)
        box = min(outlines, key=lambda p: float(np.hypot(*(p.mean(axis=0) - [x, y]))))
        assert box.mean(axis=0) == pytest.approx([float(x), float(y)], abs=1e-9)
        sides = np.linalg.norm(np.diff(np.vstack((box, box[:1])), axis=0), axis=1)
        assert sorted(sides) == pytest.approx(sorted([o.length, o.length, o.width, o.width]))
    _, ax = axes()
    plot_map(net, ax)
    assert any(
        isinstance(c, PolyCollection) and c.get_edgecolor()[0][0] < 0.5 for c in ax.collections
    )


def test_a_large_map_plots(tmp_path: Path) -> None:
    out = plot_map(load("libOpenDRIVE/test"), tmp_path / "town07.png", junction_labels=True)
    assert out.stat().st_size > 50_000


def test_user_view_is_kept() -> None:
    _, ax = axes()
    ax.set_xlim(-120, -40)
    ax.set_ylim(60, 130)
    plot_map(load("libOpenDRIVE/test"), ax, legend=False)
    assert ax.get_xlim() == (-120, -40) and ax.get_ylim() == (60, 130)
