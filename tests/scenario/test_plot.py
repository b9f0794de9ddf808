"""`plot_scenario` and ``roadsim scenario plot``: the drawn path is the simulated spline."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.image import imread

from roadsim.cli import main
from roadsim.errors import RoadsimError
from roadsim.road.network import RoadNetwork
from roadsim.scenario.load import load_scenario, load_scenario_with_map
from roadsim.scenario.paths import resolve_path
from roadsim.scenario.plot import ZOOM_MARGIN, plot_scenario
from roadsim.scenario.schema import PathObject, Scenario
from roadsim.scenario.validate import resolve_spawn

# A pedestrian on the town map's North Street crosses it in front of the ego, timed to
# reach the kerb (control point 1) when the ego reaches s = 37.
CROSSING = """\
name: crossing
map: town
ego:
  spawn: {road: 1, lane: 1, s: 110}
objects:
  - type: path
    name: walker
    kind: pedestrian
    creation_radius: 80
    target_point: 1
    controller_target: {road: 1, lane: 1, s: 37}
    path:
      - {road: 1, lane: 2, s: 24, speed: 1.4}
      - {road: 1, lane: 2, s: 12, t: -0.6, speed: 1.4}
      - {road: 1, lane: -2, s: 12, t: 0.6, speed: 1.4}
  - type: cone
    position: {road: 1, lane: -1, s: 60}
"""


@pytest.fixture(scope="module")
def crossing_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "crossing.yaml"
    path.write_text(CROSSING)
    return path


@pytest.fixture(scope="module")
def crossing(crossing_file: Path) -> tuple[Scenario, RoadNetwork]:
    return load_scenario_with_map(crossing_file)


def axes() -> Any:
    fig = Figure(figsize=(6, 6))
    FigureCanvasAgg(fig)
    return fig.add_subplot()


def offsets(ax: Any, marker_size: float) -> np.ndarray:
    """The points of the scatter plots drawn with ``marker_size``."""
    hits = [
        c.get_offsets()
        for c in ax.collections
        if isinstance(c, PathCollection) and np.all(c.get_sizes() == marker_size)
    ]
    return np.concatenate(hits)


def test_writes_a_png(crossing: tuple[Scenario, RoadNetwork], tmp_path: Path) -> None:
    scenario, net = crossing
    out = plot_scenario(scenario, net, tmp_path / "crossing.png", dpi=60)
    assert out == tmp_path / "crossing.png"
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_path_line_is_the_simulated_spline(crossing: tuple[Scenario, RoadNetwork]) -> None:
    scenario, net = crossing
    obj = scenario.objects[0]
    assert isinstance(obj, PathObject)
    ax = plot_scenario(scenario, net, axes())
    lines = [line for line in ax.lines if line.get_gid() == "path:walker"]
    assert len(lines) == 1
    geometry = resolve_path(obj, net)
    np.testing.assert_array_equal(lines[0].get_xydata(), geometry.curve())
    # The target point is starred, the controller's target a diamond joined to it.
    assert obj.controller_target is not None
    goal = resolve_spawn(obj.controller_target, net)
    np.testing.assert_array_equal(offsets(ax, 130.0), geometry.points[[1]])
    np.testing.assert_array_equal(offsets(ax, 40.0), [[goal.x, goal.y]])
    dashed = [line for line in ax.lines if line.get_linestyle() == "--"]
    np.testing.assert_array_equal(dashed[0].get_xydata(), [geometry.points[1], [goal.x, goal.y]])


def test_legend_names_what_is_drawn(crossing: tuple[Scenario, RoadNetwork]) -> None:
    scenario, net = crossing
    ax = plot_scenario(scenario, net, axes())
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    for label in (
        "scripted path (colour per object)",
        "control point (index)",
        "creation radius",
        "target point",
        "controller target",
        "scenario object",
        "ego spawn",
        "driving lane",  # the map's own entries stay
    ):
        assert label in labels
    texts = {t.get_text() for t in ax.texts}
    assert {"walker (pedestrian)", "objects[1]", "ego", "0", "1", "2"} <= texts


def test_view_closes_in_on_the_objects(crossing: tuple[Scenario, RoadNetwork]) -> None:
    scenario, net = crossing
    obj = scenario.objects[0]
    first = resolve_path(obj, net).points[0]
    assert isinstance(obj, PathObject) and scenario.ego is not None
    ego_y = resolve_spawn(scenario.ego.spawn, net).y
    ax = plot_scenario(scenario, net, axes())
    # The creation circle spans x and reaches lowest in y; the ego's rear is the highest.
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    reach = obj.creation_radius + ZOOM_MARGIN
    assert (x0, x1) == pytest.approx((first[0] - reach, first[0] + reach))
    assert y0 == pytest.approx(first[1] - reach)
    assert ego_y + ZOOM_MARGIN < y1 < ego_y + ZOOM_MARGIN + 3.0
    whole = plot_scenario(scenario, net, axes(), whole_map=True)
    assert whole.get_xlim()[1] - whole.get_xlim()[0] > 300.0  # the town is 310 m across


def test_cli_writes_the_image(
    crossing_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.png"
    assert main(["scenario", "plot", str(crossing_file), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(out) in capsys.readouterr().out


def test_cli_default_output_is_named_for_the_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["scenario", "plot", "town", "--whole-map"]) == 0
    assert (tmp_path / "town.png").stat().st_size > 0


def test_cli_errors_are_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("map: town\nobjects:\n  - {type: path, path: [{x: 0, y: 0, speed: 1}]}\n")
    assert main(["scenario", "plot", str(bad), "-o", str(tmp_path / "bad.png")]) == 2
    err = capsys.readouterr().err
    assert err == f"roadsim: error: {bad}:3: objects[0].path: expected at least 2 items, got 1\n"
    assert not (tmp_path / "bad.png").exists()

    (tmp_path / "broken.xodr").write_text("<OpenDRIVE><road></OpenDRIVE>")
    bad.write_text("map: broken.xodr\n")
    assert main(["scenario", "plot", str(bad), "-o", str(tmp_path / "bad.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("roadsim: error: ") and "broken.xodr" in err
    assert "Traceback" not in err

    assert main(["scenario", "plot", "town", "-o", str(tmp_path / "town.xyz")]) == 2
    assert "cannot tell the image format" in capsys.readouterr().err


# Six control points a metre apart, a cone and the ego beside them: labels must make room.
CROWDED = """\
name: crowded
map: town
ego:
  spawn: {road: 1, lane: -1, s: 40}
objects:
  - type: path
    name: a-rather-long-name
    kind: pedestrian
    path:
      - {road: 1, lane: -1, s: 40, speed: 1.0}
      - {road: 1, lane: -1, s: 41, speed: 1.0}
      - {road: 1, lane: -1, s: 42, speed: 1.0}
      - {road: 1, lane: -1, s: 43, speed: 1.0}
      - {road: 1, lane: -1, s: 44, speed: 1.0}
      - {road: 1, lane: -1, s: 45, speed: 1.0}
  - type: cone
    name: cone
    position: {road: 1, lane: 1, s: 42}
"""


def test_labels_stay_apart_and_off_the_markers(tmp_path: Path) -> None:
    path = tmp_path / "crowded.yaml"
    path.write_text(CROWDED)
    scenario, net = load_scenario_with_map(path)
    ax = axes()
    ax.set_xlim(-15, 15)
    ax.set_ylim(40, 70)
    plot_scenario(scenario, net, ax)
    renderer = ax.figure.canvas.get_renderer()
    texts = {t.get_text(): t.get_window_extent(renderer) for t in ax.texts}
    assert {"0", "1", "2", "3", "4", "5", "ego", "cone", "a-rather-long-name (pedestrian)"} <= set(
        texts
    )
    for (a, p), (b, q) in itertools.combinations(texts.items(), 2):
        gap_x = min(p.x1, q.x1) - max(p.x0, q.x0)
        gap_y = min(p.y1, q.y1) - max(p.y0, q.y0)
        assert gap_x <= 0.5 or gap_y <= 0.5, f"{a!r} overlaps {b!r}"
    obj = scenario.objects[0]
    assert isinstance(obj, PathObject)
    for x, y in ax.transData.transform(resolve_path(obj, net).points):
        for name, box in texts.items():
            assert not (box.x0 < x < box.x1 and box.y0 < y < box.y1), f"{name!r} covers a point"


def test_long_scenario_is_cut_into_strips(tmp_path: Path) -> None:
    out = plot_scenario(*load_scenario_with_map("cut-in"), tmp_path / "cut-in.png", dpi=50)
    h, w = imread(out).shape[:2]
    assert h / w > 0.35  # in one panel the 1.5 km view was 0.2 as high as wide


def test_resolution_is_bounded(tmp_path: Path) -> None:
    scenario = load_scenario("crossing")
    _, net = load_scenario_with_map("crossing")
    with pytest.raises(RoadsimError, match="limit is 10000"):
        plot_scenario(scenario, net, tmp_path / "big.png", size_in=200.0)
