"""`plot_scenario`: a scenario drawn over its map (matplotlib, Agg, imported lazily).

The map comes from `roadsim.road.plot.plot_map`; on top of it go, per scripted object, its
path (sampled with `PathGeometry.curve`, the evaluation the simulation drives, so the line
is the path the object will follow), its control points numbered by index, the creation
radius around its first point and, for a dependent object, its target point joined to the
controller's target; then the ego's spawn and the static objects as footprints. By default
the view closes in on the objects and the ego, so that a path of a few metres is readable
on a map of kilometres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from roadsim._types import FloatArray
from roadsim.road.mesh import RoadSampling, sample_road_surface
from roadsim.road.plot import map_name, plot_map
from roadsim.road.plot_layout import (
    AROUND,
    Label,
    check_resolution,
    map_figure,
    panel_views,
    place_labels,
)
from roadsim.scenario.paths import resolve_path
from roadsim.scenario.schema import VEHICLE_MODELS, PathObject
from roadsim.scenario.validate import resolve_spawn

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork
    from roadsim.scenario.schema import Scenario

__all__ = ["ZOOM_MARGIN", "plot_scenario"]


#: Margin around the scenario's paths, targets, ego and objects in the default view (m).
ZOOM_MARGIN = 30.0

#: Path colours, one per scripted object in turn; none is the ego's or a static object's.
PATH_COLORS = (
    "#1f77b4",
    "#9467bd",
    "#2ca02c",
    "#e377c2",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#bcbd22",
)
_EGO_FILL, _EGO_EDGE = "#ffffff", "#000000"
_STATIC_FILL, _STATIC_EDGE = (0.85, 0.2, 0.15, 0.6), "#7b1e14"
_KEY_COLOR = "#444444"  # legend entries that stand for every object's colour
# Label ranks: the earlier ones are placed first and keep their best positions.
_EGO, _NAME, _STATIC, _TARGET, _INDEX = range(5)
#: An object's name goes under its first point, else around it.
_BELOW = ((0.0, -12.0), (0.0, 12.0), *((2 * dx, 2 * dy) for dx, dy in AROUND))


@dataclass(frozen=True)
class _Scripted:
    """A scripted object as drawn, in world coordinates (m).

    Attributes:
        name: The object's id, or ``objects[i]`` without one.
        kind: What it is (``pedestrian``, ``car``...).
        curve: Points of the path's spline, shape (m, 2).
        points: Control points, shape (n, 2).
        creation_radius: Around ``points[0]``; 0: always exists.
        target_point: Index of a dependent object's target point, else ``None``.
        controller: Whose arrival a dependent object syncs with.
        controller_target: Where the controller arrives, shape (2,), else ``None``.
    """

    name: str
    kind: str
    curve: FloatArray
    points: FloatArray
    creation_radius: float
    target_point: int | None
    controller: str
    controller_target: FloatArray | None

    @property
    def label(self) -> str:
        return f"{self.name} ({self.kind})"


@dataclass(frozen=True)
class _Layout:
    """Everything of the scenario that is drawn, resolved on the map.

    Attributes:
        scripted: The scripted objects, in file order.
        ego: The ego's footprint at its spawn, shape (5, 2), pointed toward its heading.
        statics: Name (id, or ``objects[i]``) and footprint, shape (4, 2), of each static
            object.
    """

    scripted: list[_Scripted]
    ego: FloatArray | None
    statics: list[tuple[str, FloatArray]]

    def markers(self) -> FloatArray:
        """Where markers are drawn that labels must not cover, shape (k, 2)."""
        parts = [np.zeros((0, 2))]
        for obj in self.scripted:
            parts.append(obj.points)
            if obj.controller_target is not None:
                parts.append(obj.controller_target[None, :])
        if self.ego is not None:
            parts.append(self.ego.mean(axis=0)[None, :])
        parts += [outline.mean(axis=0)[None, :] for _, outline in self.statics]
        return np.concatenate(parts)

    def extent_points(self) -> FloatArray:
        """Points whose bounding box holds everything drawn, shape (k, 2)."""
        parts = [np.zeros((0, 2))]
        for obj in self.scripted:
            parts += [obj.curve, obj.points]
            if obj.creation_radius > 0:
                parts.append(obj.points[0] + obj.creation_radius * np.array([[-1, -1], [1, 1]]))
            if obj.controller_target is not None:
                parts.append(obj.controller_target[None, :])
        if self.ego is not None:
            parts.append(self.ego)
        parts += [outline for _, outline in self.statics]
        return np.concatenate(parts)


def plot_scenario(
    scenario: Scenario,
    net: RoadNetwork,
    target: str | Path | Any,
    *,
    title: str | None = None,
    whole_map: bool = False,
    legend: bool = True,
    size_in: float = 10.0,
    dpi: int = 150,
) -> Any:
    """Draws a scenario over its map, from above.

    Each path is a ``Line2D`` with the gid ``path:<id>`` (``path:objects[i]`` for an object
    without an id), for callers that restyle or inspect it.

    Args:
        scenario: A scenario validated against ``net`` (e.g. from
            `roadsim.scenario.load.load_scenario_with_map`).
        net: Its road network.
        target: A file name (the format follows the suffix, e.g. ``scenario.png``), or a
            matplotlib ``Axes`` to draw into (whose view is kept if the caller set one).
        title: The title; by default the scenario's name and the map's.
        whole_map: Show the whole map. By default, for a scenario with scripted or static
            objects, the view is the box around them (creation radii and controller targets
            included) and the ego, widened by `ZOOM_MARGIN`; a scenario with neither is
            about the map's traffic and shows the whole map.
        legend: Whether to add a legend (outside the map, on the right).
        size_in: The longer side of the map area, when a file is written (inches).
        dpi: Resolution of a written raster file.

    Returns:
        The written `Path` for a file name, else the ``Axes``.
    """
    from matplotlib.axes import Axes

    sampling = sample_road_surface(net)
    layout = _layout(scenario, net)
    view = _view(layout, sampling.lanes.points[:, :2], whole_map)
    if title is None:
        title = f"{scenario.name or 'scenario'} on {map_name(net)}"
    if isinstance(target, Axes):
        if target.get_autoscalex_on() and target.get_autoscaley_on():
            # Set before the map is drawn: plot_map keeps a set view and sizes road marks by it.
            target.set_xlim(view[0], view[2])
            target.set_ylim(view[1], view[3])
        _draw(target, scenario, net, sampling, layout, title, legend)
        return target
    check_resolution(size_in, dpi)
    panels = panel_views(sampling.lanes.points[:, :2], view)
    fig, axes = map_figure(panels, size_in=size_in, dpi=dpi, legend=legend)
    if len(axes) > 1:
        order = "top to bottom" if panels.along == 0 else "left to right"
        title = f"{title}\n(in {len(axes)} strips, {order})"
    for k, ax in enumerate(axes):
        _draw(ax, scenario, net, sampling, layout, title if k == 0 else "", legend and k == 0)
        if panels.along == 0 and k < len(axes) - 1:
            ax.set_xlabel("")
    path = Path(target)
    fig.savefig(path, dpi=dpi, bbox_inches="tight", facecolor="white")
    return path


def _draw(
    ax: Any,
    scenario: Scenario,
    net: RoadNetwork,
    sampling: RoadSampling,
    layout: _Layout,
    title: str,
    legend: bool,
) -> None:
    """The map, then the scenario over it, then every label, placed apart."""
    plot_map(net, ax, title=title, legend=legend, sampling=sampling)
    labels: list[tuple[int, Label]] = []
    handles = _draw_scripted(ax, layout.scripted, labels) + _draw_actors(ax, layout, labels)
    place_labels(ax, _by_priority(labels), layout.markers(), obstacle_pt=4.5)
    if legend:
        _merge_legend(ax, handles)


def _layout(scenario: Scenario, net: RoadNetwork) -> _Layout:
    scripted: list[_Scripted] = []
    statics: list[tuple[str, FloatArray]] = []
    for i, obj in enumerate(scenario.objects):
        name = obj.name if obj.name is not None else f"objects[{i}]"
        if isinstance(obj, PathObject):
            geometry = resolve_path(obj, net)
            target = None
            if obj.controller_target is not None:
                pose = resolve_spawn(obj.controller_target, net)
                target = np.array([pose.x, pose.y])
            scripted.append(
                _Scripted(
                    name=name,
                    kind=obj.kind,
                    curve=geometry.curve(),
                    points=geometry.points,
                    creation_radius=obj.creation_radius,
                    target_point=obj.target_point,
                    controller=str(obj.controller_name),
                    controller_target=target,
                )
            )
        else:
            pose = resolve_spawn(obj.position, net)
            length, width, _ = obj.size
            hl, hw = 0.5 * length, 0.5 * width
            box = np.array([[-hl, -hw], [hl, -hw], [hl, hw], [-hl, hw]])
            statics.append((name, _place(box, pose.x, pose.y, pose.heading)))
    ego = None
    if scenario.ego is not None:
        pose = resolve_spawn(scenario.ego.spawn, net)
        model = VEHICLE_MODELS[scenario.ego.model]
        hl, hw = 0.5 * model.length, 0.5 * model.width
        nose = min(hw, hl)
        shape = np.array([[-hl, -hw], [hl - nose, -hw], [hl, 0.0], [hl - nose, hw], [-hl, hw]])
        ego = _place(shape, pose.x, pose.y, pose.heading)
    return _Layout(scripted, ego, statics)


def _place(local: FloatArray, x: float, y: float, heading: float) -> FloatArray:
    """A footprint given in the actor's frame (x forward), turned and moved to its pose."""
    c, s = math.cos(heading), math.sin(heading)
    placed: FloatArray = local @ np.array([[c, s], [-s, c]]) + np.array([x, y])
    return placed


def _view(
    layout: _Layout, map_points: FloatArray, whole_map: bool
) -> tuple[float, float, float, float]:
    """``(x0, y0, x1, y1)`` of the view: the scenario's box widened by `ZOOM_MARGIN`, or
    the map's (and the scenario's, if it reaches off the map) padded as `plot_map` pads it."""
    points = layout.extent_points()
    if whole_map or not (layout.scripted or layout.statics):
        points = np.concatenate((map_points, points))
        if not len(points):
            return (0.0, 0.0, 1.0, 1.0)
        lo, hi = points.min(axis=0), points.max(axis=0)
        pad = 0.03 * max(float(np.max(hi - lo)), 10.0)
    else:
        lo, hi = points.min(axis=0), points.max(axis=0)
        pad = ZOOM_MARGIN
    return (float(lo[0] - pad), float(lo[1] - pad), float(hi[0] + pad), float(hi[1] + pad))


def _draw_scripted(
    ax: Any, scripted: list[_Scripted], labels: list[tuple[int, Label]]
) -> list[Any]:
    """Paths, control points, creation radii and targets; their labels go to ``labels``."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle

    if not scripted:
        return []
    halo = _halo()
    for k, obj in enumerate(scripted):
        color = PATH_COLORS[k % len(PATH_COLORS)]
        ax.plot(
            obj.curve[:, 0],
            obj.curve[:, 1],
            color=color,
            lw=1.8,
            zorder=7,
            label=obj.label,
            gid=f"path:{obj.name}",
        )
        ax.scatter(
            obj.points[:, 0],
            obj.points[:, 1],
            s=22,
            marker="o",
            facecolors="white",
            edgecolors=color,
            linewidths=1.2,
            zorder=8,
        )
        style = {"fontweight": "bold", "color": color, "path_effects": halo, "zorder": 9}
        labels.append(
            (
                _NAME,
                Label(obj.label, obj.points[:1], offsets=_BELOW, style={**style, "fontsize": 7}),
            )
        )
        for i, point in enumerate(obj.points):
            labels.append(
                (_INDEX, Label(str(i), point[None, :], AROUND, style={**style, "fontsize": 6.5}))
            )
        if obj.creation_radius > 0:
            ax.add_patch(
                Circle(
                    tuple(obj.points[0]),
                    obj.creation_radius,
                    fill=False,
                    edgecolor=color,
                    linestyle=":",
                    linewidth=1.0,
                    zorder=5,
                )
            )
        if obj.target_point is not None and obj.controller_target is not None:
            tx, ty = obj.points[obj.target_point]
            cx, cy = obj.controller_target
            ax.plot([tx, cx], [ty, cy], color=color, ls="--", lw=0.8, zorder=7)
            ax.scatter([tx], [ty], s=130, marker="*", c=color, edgecolors="black", lw=0.6, zorder=9)
            ax.scatter([cx], [cy], s=40, marker="D", c=color, edgecolors="black", lw=0.6, zorder=9)
            style = {"fontsize": 6.5, "color": color, "path_effects": halo, "zorder": 9}
            labels.append(
                (
                    _TARGET,
                    Label(
                        f"{obj.controller} arrives",
                        obj.controller_target[None, :],
                        AROUND,
                        style=style,
                    ),
                )
            )

    handles: list[Any] = [
        Line2D([], [], color=_KEY_COLOR, lw=1.8, label="scripted path (colour per object)"),
        Line2D(
            [], [], ls="", marker="o", mfc="white", mec=_KEY_COLOR, label="control point (index)"
        ),
    ]
    if any(obj.creation_radius > 0 for obj in scripted):
        handles.append(Line2D([], [], color=_KEY_COLOR, ls=":", lw=1.0, label="creation radius"))
    if any(obj.target_point is not None for obj in scripted):
        handles += [
            Line2D(
                [],
                [],
                ls="",
                marker="*",
                ms=11,
                color=_KEY_COLOR,
                mec="black",
                label="target point",
            ),
            Line2D(
                [],
                [],
                ls="--",
                lw=0.8,
                marker="D",
                ms=5,
                color=_KEY_COLOR,
                mec="black",
                label="controller target",
            ),
        ]
    return handles


def _draw_actors(ax: Any, layout: _Layout, labels: list[tuple[int, Label]]) -> list[Any]:
    """The ego's spawn and the static objects, as footprints; their labels go to ``labels``."""
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    halo = _halo()
    handles: list[Any] = []
    if layout.statics:
        ax.add_collection(
            PolyCollection(
                [outline for _, outline in layout.statics],
                facecolors=[_STATIC_FILL],
                edgecolors=_STATIC_EDGE,
                linewidths=0.8,
                zorder=6,
            )
        )
        style = {"fontsize": 6.5, "color": _STATIC_EDGE, "path_effects": halo, "zorder": 9}
        for name, outline in layout.statics:
            centre = outline.mean(axis=0)[None, :]
            labels.append((_STATIC, Label(name, centre, AROUND, style=style)))
        handles.append(
            Patch(facecolor=_STATIC_FILL, edgecolor=_STATIC_EDGE, label="scenario object")
        )
    if layout.ego is not None:
        ax.add_collection(
            PolyCollection(
                [layout.ego], facecolors=_EGO_FILL, edgecolors=_EGO_EDGE, linewidths=1.0, zorder=8
            )
        )
        style = {
            "fontsize": 7,
            "fontweight": "bold",
            "color": _EGO_EDGE,
            "path_effects": halo,
            "zorder": 9,
        }
        labels.append((_EGO, Label("ego", layout.ego.mean(axis=0)[None, :], AROUND, style=style)))
        handles.append(Patch(facecolor=_EGO_FILL, edgecolor=_EGO_EDGE, label="ego spawn"))
    return handles


def _by_priority(labels: list[tuple[int, Label]]) -> list[Label]:
    """The labels, most important first (file order within a rank)."""
    return [label for _, label in sorted(labels, key=lambda pair: pair[0])]


def _halo() -> list[Any]:
    """A white rim that keeps text readable on asphalt."""
    from matplotlib import patheffects

    return [patheffects.withStroke(linewidth=2.0, foreground="white")]


def _merge_legend(ax: Any, handles: list[Any]) -> None:
    """One legend: the scenario's entries, then the map's (plot_map's legend, replaced)."""
    if not handles:
        return
    old = ax.get_legend()
    map_handles = list(old.legend_handles) if old is not None else []
    map_labels = [t.get_text() for t in old.get_texts()] if old is not None else []
    ax.legend(
        handles=handles + map_handles,
        labels=[h.get_label() for h in handles] + map_labels,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
        frameon=False,
    )
