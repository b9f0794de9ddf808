"""`plot_map` and ``roadsim map plot``: files are written, what is drawn is where the map
says, labels are readable and a long map is cut into strips."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.image import imread

import roadsim.road.plot
from roadsim import load_map
from roadsim.cli import main
from roadsim.errors import MapWarning, RoadsimError
from roadsim.road.mesh import sample_road_surface
from roadsim.road.network import RoadNetwork
from roadsim.road.plot import (
    LANE_COLORS,
    junction_hulls,
    lane_polygons,
    object_outlines,
    plot_map,
)
from roadsim.road.plot_layout import MAX_PIXELS, Label, panel_views, place_labels
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
    out = plot_map(load("libOpenDRIVE/test"), tmp_path / "town07.png", labels=["junctions"])
    assert out.stat().st_size > 50_000


def test_user_view_is_kept() -> None:
    _, ax = axes()
    ax.set_xlim(-120, -40)
    ax.set_ylim(60, 130)
    plot_map(load("libOpenDRIVE/test"), ax, legend=False)
    assert ax.get_xlim() == (-120, -40) and ax.get_ylim() == (60, 130)


def text_boxes(ax: Any) -> dict[str, list[Any]]:
    """Display boxes of the texts drawn in ``ax``, by text."""
    renderer = ax.figure.canvas.get_renderer()
    boxes: dict[str, list[Any]] = {}
    for t in ax.texts:
        boxes.setdefault(t.get_text(), []).append(t.get_window_extent(renderer))
    return boxes


def overlapping(boxes: list[Any]) -> list[tuple[Any, Any]]:
    return [
        (a, b)
        for a, b in itertools.combinations(boxes, 2)
        if min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5
    ]


def test_road_labels_sit_on_their_roads() -> None:
    net = load_map("town")
    _, ax = axes()
    plot_map(net, ax, labels=["roads"], legend=False)
    boxes = text_boxes(ax)
    outside = [r.id for i, r in enumerate(net.roads) if net.road_junction[i] in (None, "-1")]
    assert set(outside) <= set(boxes)  # every road outside a junction is named
    for text in ax.texts:
        r = int(net.road_index([text.get_text()])[0])
        s = np.linspace(0.0, net.road_length[r], 200)
        x, y, _, _ = net.reference.evaluate(np.full(len(s), r), s)
        assert np.min(np.hypot(x - text.xy[0], y - text.xy[1])) < 1.0
        assert text.xyann == (0.0, 0.0)


def test_lane_and_junction_labels_are_ids_and_do_not_overlap() -> None:
    net = load_map("town")
    _, ax = axes()
    ax.set_xlim(-40, 40)
    ax.set_ylim(-40, 40)
    plot_map(net, ax, labels=["lanes", "junctions", "roads"], legend=False)
    boxes = text_boxes(ax)
    assert {"-2", "-1", "1", "2"} <= set(boxes)  # lane ids
    assert "J1001" in boxes  # the crossroads
    assert {f"J{jid}" for jid, _ in junction_hulls(net, sample_road_surface(net))} >= {
        t for t in boxes if t.startswith("J")
    }
    assert not overlapping([b for bs in boxes.values() for b in bs])
    # Lane labels (those without a box) lie between their lane's borders: on road 1 (x = 0,
    # running north from the crossroads), lane -1 is east of the reference line, 1 west.
    lanes = [t for t in ax.texts if t.get_bbox_patch() is None]
    on_road_1 = [t for t in lanes if 15 < t.xy[1] < 40 and abs(t.xy[0]) < 4]
    assert sorted(t.get_text() for t in on_road_1) == ["-1", "1"]
    for text in on_road_1:
        assert np.sign(text.xy[0]) == (1 if text.get_text() == "-1" else -1)


def test_unknown_label_kind_is_refused() -> None:
    _, ax = axes()
    with pytest.raises(ValueError, match="unknown label kind 'signals'"):
        plot_map(load_map("town"), ax, labels=["signals"])


def test_view_zooms_in() -> None:
    _, ax = axes()
    plot_map(load_map("town"), ax, view=(-20.0, -10.0, 20.0, 30.0), legend=False)
    assert ax.get_xlim() == (-20.0, 20.0) and ax.get_ylim() == (-10.0, 30.0)


def test_long_map_is_cut_into_strips_on_one_scale(tmp_path: Path) -> None:
    net = load_map("highway")
    points = sample_road_surface(net).lanes.points[:, :2]
    lo, hi = points.min(axis=0), points.max(axis=0)
    panels = panel_views(points, (lo[0], lo[1], hi[0], hi[1]))
    assert panels.along == 0 and 2 <= len(panels.views) <= 6
    widths = {round(v[2] - v[0], 6) for v in panels.views}
    assert len(widths) == 1  # one scale
    assert panels.views[0][0] <= lo[0] and panels.views[-1][2] >= hi[0]
    for a, b in itertools.pairwise(panels.views):
        assert a[2] > b[0]  # neighbours overlap a little: nothing falls between strips
    for v in panels.views:  # each strip holds the road inside it
        inside = points[(points[:, 0] >= v[0]) & (points[:, 0] <= v[2])]
        assert v[1] <= inside[:, 1].min() and inside[:, 1].max() <= v[3]
    # Taller than the one-panel picture, and the lanes are several pixels wide.
    one = plot_map(net, tmp_path / "one.png", strips=1, legend=False, dpi=60)
    cut = plot_map(net, tmp_path / "cut.png", legend=False, dpi=60)
    (h1, w1), (h2, w2) = imread(one).shape[:2], imread(cut).shape[:2]
    assert h1 / w1 < 0.35 < h2 / w2
    asphalt = np.array(to_rgb(LANE_COLORS["driving"]))
    share = [
        np.all(np.abs(imread(p)[..., :3] - asphalt) < 0.02, axis=-1).mean() for p in (one, cut)
    ]
    assert share[1] > 2 * share[0]
    # A map long in y is cut into columns; a square one is not cut.
    assert panel_views(points[:, ::-1], (lo[1], lo[0], hi[1], hi[0])).along == 1
    assert len(panel_views(points, (0.0, 0.0, 100.0, 100.0)).views) == 1


def lab(color: str) -> np.ndarray:
    """CIE L*a*b* (D65) of a colour, to compare colours as people see them."""
    rgb = np.array(to_rgb(color))
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = m @ lin / np.array([0.9505, 1.0, 1.089])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_ramp_lanes_have_colours_of_their_own() -> None:
    kinds = ["driving", "onramp", "offramp", "entry", "exit", "connectingramp"]
    for a, b in itertools.combinations(kinds, 2):
        assert np.linalg.norm(lab(LANE_COLORS[a]) - lab(LANE_COLORS[b])) > 15, (a, b)
    # ... and the highway's legend shows them so.
    _, ax = axes()
    plot_map(load_map("highway"), ax)
    legend = ax.get_legend()
    fills = {
        t.get_text(): to_rgb(h.get_facecolor())
        for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)
        if t.get_text().endswith(" lane")
    }
    ramps = [f"{k} lane" for k in ("driving", "onRamp", "offRamp", "entry", "exit")]
    assert set(ramps) <= set(fills)
    assert len({fills[r] for r in ramps}) == len(ramps)


def test_resolution_is_bounded(tmp_path: Path) -> None:
    with pytest.raises(RoadsimError, match=f"limit is {MAX_PIXELS}"):
        plot_map(load_map("town"), tmp_path / "big.png", size_in=1000.0)
    with pytest.raises(RoadsimError, match="positive"):
        plot_map(load_map("town"), tmp_path / "nan.png", size_in=float("nan"))
    assert not (tmp_path / "big.png").exists()


def test_labels_are_placed_apart_and_optional_ones_dropped() -> None:
    fig, ax = axes()
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    around = [(dx, dy) for dx in (-12.0, 0.0, 12.0) for dy in (-12.0, 0.0, 12.0)]
    same = np.array([[50.0, 50.0]])
    labels = [Label(f"L{i}", same, around) for i in range(5)]
    placed = place_labels(ax, labels)
    assert [t.get_text() for t in placed] == ["L0", "L1", "L2", "L3", "L4"]
    assert placed[0].xyann == (-12.0, -12.0)  # the first free position in order
    renderer = fig.canvas.get_renderer()
    assert not overlapping([t.get_window_extent(renderer) for t in placed])
    # Placing again gives the same positions.
    _, ax2 = axes()
    ax2.set_xlim(0, 100)
    ax2.set_ylim(0, 100)
    again = place_labels(ax2, labels)
    assert [t.xyann for t in again] == [t.xyann for t in placed]
    # An optional label with no free position is left out; one off the view is skipped.
    taken = [placed[0].xyann]
    crowded = place_labels(
        ax, [Label("late", same, taken, optional=True), Label("away", np.array([[500.0, 5.0]]))]
    )
    assert crowded == [] and len(ax.texts) == 5
    # A marker keeps labels off it.
    _, ax3 = axes()
    ax3.set_xlim(0, 100)
    ax3.set_ylim(0, 100)
    (text,) = place_labels(ax3, [Label("x", same, around[4:])], obstacles=same)
    assert text.xyann == (0.0, 12.0)  # (0, 0) would cover the marker


# -- the command line -----------------------------------------------------------------------------


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What ``roadsim map plot`` passes to `plot_map` (which then draws nothing)."""
    calls: dict[str, Any] = {}

    def fake(net: RoadNetwork, target: Path, **kwargs: Any) -> Path:
        calls.update(kwargs, target=target)
        return target

    monkeypatch.setattr(roadsim.road.plot, "plot_map", fake)
    return calls


@pytest.mark.parametrize(
    ("args", "labels", "view"),
    [
        (["--labels", "roads,lanes"], {"roads", "lanes"}, None),
        (["--labels", "roads", "--labels", "junctions"], {"roads", "junctions"}, None),
        (["--junction-labels"], {"junctions"}, None),  # the old option
        (["--center=-10,20", "--radius", "5"], set(), (-15.0, 15.0, -5.0, 25.0)),
        (["--center", "10,20"], set(), (-90.0, -80.0, 110.0, 120.0)),
        (["--bbox=-1,2,3,4.5"], set(), (-1.0, 2.0, 3.0, 4.5)),
    ],
)
def test_cli_labels_and_zoom(
    captured: dict[str, Any], args: list[str], labels: set[str], view: Any, tmp_path: Path
) -> None:
    assert main(["map", "plot", "town", "-o", str(tmp_path / "t.png"), *args]) == 0
    assert captured["labels"] == labels and captured["view"] == view


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--labels", "roads,signs"],
            "--labels: unknown kind 'signs' (use roads, lanes, junctions)",
        ),
        (["--center", "3"], "--center: expected X,Y in metres, got '3'"),
        (["--center", "a,b"], "--center: expected X,Y in metres, got 'a,b'"),
        (["--center", "1,2", "--radius", "-4"], "--radius: expected a positive distance, got '-4'"),
        (["--center", "1,2", "--radius", "nan"], "--radius: expected a distance in metres"),
        (["--radius", "4"], "--radius needs --center"),
        (["--bbox", "0,0,1,1", "--center", "1,2"], "--bbox cannot be combined with --center"),
        (["--bbox", "5,0,1,1"], "--bbox: expected XMIN,YMIN,XMAX,YMAX in metres with XMIN < XMAX"),
        (["--bbox", "0,0,1"], "--bbox: expected XMIN,YMIN,XMAX,YMAX"),
        (["--strips", "0"], "--strips: expected a whole number from 1 to 20, got '0'"),
        (
            ["--size", "1000"],
            f"is 150000 pixels across; the limit is {MAX_PIXELS} (--size x --dpi)",
        ),
        (["--size", "20", "--dpi", "600"], "--size 20 at --dpi 600 is 12000 pixels across"),
        (["--size", "nan"], "--dpi and --size must be positive"),
    ],
)
def test_cli_bad_values_are_one_line_errors(
    captured: dict[str, Any],
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["map", "plot", "town", "-o", str(tmp_path / "t.png"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("roadsim: error: ") and message in err
    assert err.count("\n") == 1
    assert not captured


def test_cli_zoom_and_labels_draw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "crossroads.png"
    args = ["--center=0,0", "--radius", "30", "--labels", "roads,lanes,junctions", "--dpi", "60"]
    assert main(["map", "plot", "town", "-o", str(out), *args]) == 0
    assert str(out) in capsys.readouterr().out
    h, w = imread(out).shape[:2]
    assert 0.7 < h / w < 1.3  # the square around the crossroads, not the town's shape


def test_cli_help_states_the_size_limit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["map", "plot", "--help"])
    assert f"at most {MAX_PIXELS}" in " ".join(capsys.readouterr().out.split())
