"""`plot_map`: a top-down picture of a road network (matplotlib, Agg, imported lazily).

Lanes are filled by type, road marks drawn as lines (dashes as dashes, never thinner than
a hairline, true width when zoomed in), junctions tinted and outlined, signals drawn as
markers (traffic lights apart from signs) and objects as outlines; road, lane and junction
ids are written on request. The lane and mark
geometry is the one the surface mesh uses (`roadsim.road.mesh.sample_road_surface`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from roadsim._types import FloatArray
from roadsim.road.mesh import RoadSampling, sample_road_surface
from roadsim.road.plot_layout import (
    Label,
    View,
    check_resolution,
    map_figure,
    pad_view,
    panel_views,
    place_labels,
)

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork


#: Fill colour by lane type; types not listed are drawn in `_OTHER_LANE`.
LANE_COLORS: dict[str, str] = {
    "driving": "#5a5e66",
    # Lanes onto a motorway in blue-greens, lanes off it in purples: told apart from each
    # other and from driving lanes, and still dark enough for white marks.
    "onramp": "#1f6f78",
    "entry": "#3b9aa0",
    "mwyentry": "#3b9aa0",
    "offramp": "#7a3b78",
    "exit": "#b0609e",
    "mwyexit": "#b0609e",
    "connectingramp": "#4a5a9a",
    "sliplane": "#646a75",
    "bidirectional": "#6a6680",
    "stop": "#7a5c5c",
    "bus": "#8a4f4f",
    "taxi": "#8f7d3a",
    "hov": "#4f6f8a",
    "shoulder": "#9d9d95",
    "border": "#b9b4a4",
    "curb": "#c2c2c2",
    "sidewalk": "#dcc9a3",
    "walking": "#dcc9a3",
    "biking": "#b0675c",
    "parking": "#7d90ab",
    "median": "#93b47e",
    "restricted": "#c9a2a2",
    "roadworks": "#dba544",
    "tram": "#9b7fb0",
    "rail": "#8c7b6b",
    "shared": "#8a8f70",
    "none": "#d6d6d0",
}
_OTHER_LANE = "#b3b3c9"
MARK_COLORS: dict[str, str] = {
    "white": "#ffffff",
    "yellow": "#f5c400",
    "orange": "#f08a24",
    "red": "#d63a2f",
    "blue": "#2f6fd6",
    "green": "#3a9a3a",
    "violet": "#8a4fc2",
    "black": "#202020",
}
_CURB_COLOR = "#3c3c3c"
_GRASS_COLOR = "#5f9a48"
_JUNCTION_COLOR = "#ff8c1a"
_JUNCTION_FILL = "#fbe3c8"
_BACKGROUND = "#f3f3ee"
_MIN_MARK_PT = 0.35  # thinnest road-mark line, in points


#: What ``labels`` may name: road ids, lane ids, junction ids.
LABEL_KINDS = ("roads", "lanes", "junctions")
_ROAD_LABEL_STEP_M = 40.0  # candidate positions of a road's label along it
_LANE_LABEL_STEP_M = 10.0


def plot_map(
    net: RoadNetwork,
    target: str | Path | Any,
    *,
    title: str | None = None,
    signals: bool = True,
    objects: bool = True,
    junctions: bool = True,
    labels: Collection[str] = (),
    legend: bool = True,
    view: View | None = None,
    strips: int | None = None,
    size_in: float = 10.0,
    dpi: int = 150,
    sampling: RoadSampling | None = None,
) -> Any:
    """Draws a road network from above.

    A long map (its short side under 30% of its long one, e.g. the built-in ``highway``)
    written to a file is cut into strips along its length, stacked on one scale and read
    top to bottom (`roadsim.road.plot_layout.panel_views`); the title says so.

    Args:
        net: The road network.
        target: A file name (the format follows the suffix, e.g. ``map.png``), or a
            matplotlib ``Axes`` to draw into.
        title: The title; by default the map's name and its size.
        signals, objects, junctions: Whether to draw them.
        labels: Which ids to write, any of `LABEL_KINDS`: ``roads`` (on the reference
            line), ``lanes`` (at the lane's centre; left out where they would overlap),
            ``junctions`` (at the junction's centre).
        legend: Whether to add a legend (outside the map, on the right).
        view: ``(x0, y0, x1, y1)`` to show (m); by default the whole map, padded (or, into
            an ``Axes``, the view its caller set).
        strips: Into how many strips a file's map is cut; by default as above, 1 for none.
        size_in: The longer side of the map area, when a file is written (inches).
        dpi: Resolution of a written raster file.
        sampling: Lane and road-mark samples to reuse (computed when not given).

    Returns:
        The written `Path` for a file name, else the ``Axes``.

    Raises:
        ValueError: For a label kind not in `LABEL_KINDS`, or an empty view.
        RoadsimError: If ``size_in * dpi`` exceeds `roadsim.road.plot_layout.MAX_PIXELS`.
    """
    from matplotlib.axes import Axes

    unknown = sorted(set(labels) - set(LABEL_KINDS))
    if unknown:
        raise ValueError(f"unknown label kind {unknown[0]!r} (known: {', '.join(LABEL_KINDS)})")
    if view is not None and not (view[0] < view[2] and view[1] < view[3]):
        raise ValueError(f"empty view {view}: need x0 < x1 and y0 < y1")
    sampling = sampling if sampling is not None else sample_road_surface(net)
    title = title if title is not None else _default_title(net)
    if isinstance(target, Axes):
        if view is not None:
            target.set_xlim(view[0], view[2])
            target.set_ylim(view[1], view[3])
        draw_map(target, net, sampling, signals, objects, junctions, labels, legend)
        target.set_title(title, fontsize=11)
        return target
    check_resolution(size_in, dpi)
    points = sampling.lanes.points[:, :2]
    if view is None:
        panels = panel_views(points, pad_view(_extent(sampling)), strips)
    else:
        panels = panel_views(points, view, strips if strips is not None else 1)
    fig, axes = map_figure(panels, size_in=size_in, dpi=dpi, legend=legend)
    for k, ax in enumerate(axes):
        draw_map(ax, net, sampling, signals, objects, junctions, labels, legend and k == 0)
        if panels.along == 0 and k < len(axes) - 1:
            ax.set_xlabel("")  # the strips share the bottom one's
    if len(axes) > 1:
        order = "top to bottom" if panels.along == 0 else "left to right"
        title = f"{title}\n(in {len(axes)} strips, {order})"
    axes[0].set_title(title, fontsize=11)
    path = Path(target)
    fig.savefig(path, dpi=dpi, bbox_inches="tight", facecolor="white")
    return path


def draw_map(
    ax: Any,
    net: RoadNetwork,
    sampling: RoadSampling,
    signals: bool = True,
    objects: bool = True,
    junctions: bool = True,
    labels: Collection[str] = (),
    legend: bool = True,
) -> None:
    """Draws the map into ``ax`` (see `plot_map`), keeping a view its caller set."""
    from matplotlib.patches import Patch

    ax.set_facecolor(_BACKGROUND)
    ax.set_aspect("equal")
    if ax.get_autoscalex_on() and ax.get_autoscaley_on():  # else keep the caller's view
        x0, y0, x1, y1 = pad_view(_extent(sampling))
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.tick_params(labelsize=8)
    handles: list[Any] = []

    polygons, types = lane_polygons(sampling)
    handles += _draw_lanes(ax, polygons, types)
    hulls: list[tuple[str, FloatArray]] = []
    if junctions or "junctions" in labels:
        hulls = junction_hulls(net, sampling)
    if junctions:
        handles += _draw_junctions(ax, hulls)
    handles += _draw_marks(ax, sampling)
    if objects:
        handles += _draw_objects(ax, net)
    if signals:
        handles += _draw_signals(ax, net)
    if labels:
        place_labels(ax, map_labels(net, sampling, labels, hulls))
    if legend and handles:
        ax.legend(
            handles=[h for h in handles if isinstance(h, Patch)]
            + [h for h in handles if not isinstance(h, Patch)],
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize=8,
            frameon=False,
        )


def map_labels(
    net: RoadNetwork,
    sampling: RoadSampling,
    kinds: Collection[str],
    hulls: Sequence[tuple[str, FloatArray]] = (),
) -> list[Label]:
    """The labels of ``kinds`` (see `plot_map`), most important first: junctions, roads
    (those inside junctions may be left out), lanes (left out where crowded)."""
    from matplotlib import patheffects

    halo = [patheffects.withStroke(linewidth=2.0, foreground="white")]
    out: list[Label] = []
    if "junctions" in kinds:
        for jid, hull in hulls:
            out.append(
                Label(
                    f"J{jid}",
                    hull.mean(axis=0)[None, :],
                    offsets=((0.0, 0.0), (0.0, 9.0), (0.0, -9.0)),
                    style={
                        "fontsize": 7,
                        "color": "#c25700",
                        "fontweight": "bold",
                        "path_effects": halo,
                        "zorder": 11,
                    },
                )
            )
    if "roads" in kinds:
        box = {"boxstyle": "round,pad=0.25", "fc": "white", "ec": "#333333", "lw": 0.6}
        for r, road in enumerate(net.roads):
            length = float(net.road_length[r])
            n = max(1, math.ceil(length / _ROAD_LABEL_STEP_M))
            s = (np.arange(n) + 0.5) * (length / n)
            x, y, _, _ = net.reference.evaluate(np.full(n, r), s)
            inside = net.road_junction[r] not in (None, "-1")
            out.append(
                Label(
                    road.id,
                    np.stack((x, y), axis=1),
                    optional=inside,
                    along_line=True,
                    margin_pt=3.0,
                    style={"fontsize": 7, "color": "#111111", "bbox": box, "zorder": 10},
                )
            )
    if "lanes" in kinds:
        thin = [patheffects.withStroke(linewidth=1.6, foreground="white")]
        style = {"fontsize": 6.5, "color": "#111111", "path_effects": thin, "zorder": 9}
        for uid, centre in _lane_centres(sampling):
            step = max(1, round(_LANE_LABEL_STEP_M / max(_spacing(centre), 1e-3)))
            text = str(int(sampling.lanes.lane_id[uid]))
            # Between the samples at the section's ends, where the lane meets the next one.
            anchors = centre[step // 2 :: step]
            out.append(Label(text, anchors, optional=True, along_line=True, style=style))
    return out


def _spacing(points: FloatArray) -> float:
    """Mean distance between consecutive points, shape (k, 2) (m)."""
    if len(points) < 2:
        return 0.0
    return float(np.linalg.norm(points[-1] - points[0])) / (len(points) - 1)


def _lane_blocks(sampling: RoadSampling) -> Iterator[tuple[int, FloatArray, FloatArray]]:
    """Per lane with an area: its uid, outer and inner boundary samples, each (m, 2)."""
    lanes = sampling.lanes
    m = np.diff(lanes.grid_start)
    for uid in np.flatnonzero((lanes.lane_id != 0) & (m[lanes.lane_section] >= 2)):
        sec = int(lanes.lane_section[uid])
        block = lanes.section_points(sec)
        col = int(uid - lanes.sec_first_uid[sec])
        inner = col + 1 if lanes.lane_id[uid] > 0 else col - 1
        t = lanes.t[lanes.point_start[sec] : lanes.point_start[sec + 1]].reshape(block.shape[:2])
        if np.all(np.abs(t[:, col] - t[:, inner]) < 1e-3):
            continue  # a lane of zero width
        yield int(uid), block[:, col, :2], block[:, inner, :2]


def _lane_centres(sampling: RoadSampling) -> Iterator[tuple[int, FloatArray]]:
    for uid, outer, inner in _lane_blocks(sampling):
        yield uid, 0.5 * (outer + inner)


def lane_polygons(sampling: RoadSampling) -> tuple[list[FloatArray], list[str]]:
    """One (k, 2) outline polygon and the lane type per lane record with an area."""
    out: list[FloatArray] = []
    types: list[str] = []
    for uid, outer, inner in _lane_blocks(sampling):
        out.append(np.concatenate((outer, inner[::-1])))
        types.append(sampling.surfaces[uid].type)
    return out, types


def _draw_lanes(ax: Any, polygons: list[FloatArray], types: list[str]) -> list[Any]:
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    colors = [LANE_COLORS.get(t.lower(), _OTHER_LANE) for t in types]
    # Edges in the fill colour close the hairline seams between neighbouring lanes.
    ax.add_collection(
        PolyCollection(polygons, facecolors=colors, edgecolors=colors, linewidths=0.3, zorder=1)
    )
    area: dict[str, float] = {}
    for poly, t in zip(polygons, types, strict=True):
        x, y = poly[:, 0], poly[:, 1]
        area[t] = area.get(t, 0.0) + 0.5 * abs(
            float(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))
        )
    ranked = sorted(area, key=lambda t: -area[t])
    return [
        Patch(facecolor=LANE_COLORS.get(t.lower(), _OTHER_LANE), label=f"{t} lane") for t in ranked
    ]


def _draw_marks(ax: Any, sampling: RoadSampling) -> list[Any]:
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    marks = sampling.marks
    if len(marks.surface) == 0:
        return []
    pieces = np.split(marks.points[:, :2], marks.piece_start[1:-1])
    fig = ax.figure
    ax.apply_aspect()  # the axes box shrinks to equal aspect; measure it afterwards
    x0, x1 = ax.get_xlim()
    width_pt = fig.get_figwidth() * 72.0 * ax.get_position().width
    pt_per_m = width_pt / max(x1 - x0, 1e-9)
    colors, widths = [], []
    seen: dict[str, str] = {}
    for sid, w in zip(marks.surface.tolist(), marks.width.tolist(), strict=True):
        surf = sampling.surfaces[sid]
        kind = surf.type.lower()
        if kind == "curb":
            color, label = _CURB_COLOR, "curb"
        elif kind == "grass":
            color, label = _GRASS_COLOR, "grass mark"
        else:
            color = MARK_COLORS.get(surf.color.lower(), "#ffffff")
            label = f"{surf.color.lower()} road mark"
        seen.setdefault(label, color)
        colors.append(color)
        widths.append(max(w * pt_per_m, _MIN_MARK_PT))
    ax.add_collection(
        LineCollection(pieces, colors=colors, linewidths=widths, capstyle="butt", zorder=3)
    )
    return [
        Line2D([], [], color=c, lw=2.0, label=label, path_effects=_outline(c))
        for label, c in seen.items()
    ]


def _outline(color: str) -> list[Any]:
    """A thin dark rim so that white lines show on the legend's white background."""
    from matplotlib import patheffects

    if color.lower() in ("#ffffff", "#f5c400"):
        return [patheffects.Stroke(linewidth=3.2, foreground="#777777"), patheffects.Normal()]
    return []


def junction_hulls(net: RoadNetwork, sampling: RoadSampling) -> list[tuple[str, FloatArray]]:
    """Each junction's id and the convex hull of its roads' lanes, shape (k, 2) (m)."""
    from scipy.spatial import ConvexHull, QhullError

    if not net.junctions:
        return []
    lanes = sampling.lanes
    by_junction: dict[str, list[FloatArray]] = {}
    for sec in range(net.lanes.sections):
        jid = net.road_junction[int(net.lanes.sec_road[sec])]
        if jid is None or jid == "-1":
            continue
        block = lanes.section_points(sec)
        if block.size:
            by_junction.setdefault(jid, []).append(block[:, :, :2].reshape(-1, 2))
    out = []
    for jid, pts in by_junction.items():
        p = np.concatenate(pts)
        try:
            hull = ConvexHull(p)
        except (QhullError, ValueError):
            continue
        out.append((jid, p[hull.vertices]))
    return out


def _draw_junctions(ax: Any, named_hulls: list[tuple[str, FloatArray]]) -> list[Any]:
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    hulls = [hull for _, hull in named_hulls]
    if not hulls:
        return []
    # The tint goes under the lanes (it shows between them), the outline over them.
    ax.add_collection(
        PolyCollection(hulls, facecolors=_JUNCTION_FILL, edgecolors="none", zorder=0.5)
    )
    ax.add_collection(
        PolyCollection(
            hulls,
            facecolors="none",
            edgecolors=_JUNCTION_COLOR,
            linewidths=0.8,
            linestyles="--",
            zorder=2,
        )
    )
    return [
        Patch(facecolor=_JUNCTION_FILL, edgecolor=_JUNCTION_COLOR, linestyle="--", label="junction")
    ]


def _draw_signals(ax: Any, net: RoadNetwork) -> list[Any]:
    from matplotlib.lines import Line2D

    sig = [s for s in net.signals if s.reference_of is None]
    if not sig:
        return []
    road = net.road_index([s.road_id for s in sig])
    s = np.array([x.s for x in sig])
    t = np.array([x.t for x in sig])
    x, y, _ = net.to_world_index(road, np.clip(s, 0.0, net.road_length[road]), t)
    light = np.array([is_traffic_light(x.dynamic, x.type) for x in sig], dtype=bool)
    out = []
    if light.any():
        ax.scatter(
            x[light],
            y[light],
            s=28,
            marker="o",
            c="#1f9e4a",
            edgecolors="#111111",
            linewidths=0.8,
            zorder=6,
        )
        out.append(
            Line2D([], [], ls="", marker="o", color="#1f9e4a", mec="#111111", label="traffic light")
        )
    if (~light).any():
        ax.scatter(
            x[~light],
            y[~light],
            s=24,
            marker="^",
            c="#2b6fd6",
            edgecolors="white",
            linewidths=0.6,
            zorder=6,
        )
        out.append(Line2D([], [], ls="", marker="^", color="#2b6fd6", mec="white", label="sign"))
    return out


def is_traffic_light(dynamic: bool, signal_type: str) -> bool:
    """Dynamic signals and the OpenDRIVE catalogue's light types (``1000001``...)."""
    return dynamic or signal_type.startswith("1000")


def _draw_objects(ax: Any, net: RoadNetwork) -> list[Any]:
    from matplotlib.collections import PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if not net.objects:
        return []
    outlines, points = object_outlines(net)
    out: list[Any] = []
    if outlines:
        ax.add_collection(
            PolyCollection(
                outlines,
                facecolors=(0.55, 0.35, 0.2, 0.35),
                edgecolors="#5a3418",
                linewidths=0.7,
                zorder=4,
            )
        )
        out.append(Patch(facecolor=(0.55, 0.35, 0.2, 0.35), edgecolor="#5a3418", label="object"))
    if len(points):
        ax.scatter(
            points[:, 0], points[:, 1], s=14, marker="x", c="#5a3418", linewidths=0.9, zorder=4
        )
        if not outlines:
            out.append(Line2D([], [], ls="", marker="x", color="#5a3418", label="object"))
    return out


def object_outlines(net: RoadNetwork) -> tuple[list[FloatArray], FloatArray]:
    """World (k, 2) outlines of objects, and (n, 2) positions of objects without extent.

    An outline given in road coordinates (``cornerRoad``) is mapped point by point; a local
    one (``cornerLocal``), a box (``length`` x ``width``) or a cylinder (``radius``) is placed
    at the object's position, turned by the road heading plus the object's ``hdg``
    (OpenDRIVE 1.8, 13.2 and 13.4).
    """
    objs = net.objects
    road = net.road_index([o.road_id for o in objs])
    s = np.clip(np.array([o.s for o in objs]), 0.0, net.road_length[road])
    t = np.array([o.t for o in objs])
    x, y, _ = net.to_world_index(road, s, t)
    _, _, hdg, _ = net.reference.evaluate(road, s)
    outlines: list[FloatArray] = []
    points: list[tuple[float, float]] = []
    for i, o in enumerate(objs):
        if o.outline and o.outline_frame == "road":
            cs = np.array([c[0] for c in o.outline])
            ct = np.array([c[1] for c in o.outline])
            r = np.full(len(cs), road[i])
            px, py, _ = net.to_world_index(r, np.clip(cs, 0.0, net.road_length[road[i]]), ct)
            outlines.append(np.stack((px, py), axis=1))
            continue
        if o.outline:
            local = np.array(o.outline, dtype=np.float64)
        elif o.length > 0 and o.width > 0:
            hl, hw = 0.5 * o.length, 0.5 * o.width
            local = np.array([[-hl, -hw], [hl, -hw], [hl, hw], [-hl, hw]])
        elif o.radius > 0:
            a = np.linspace(0.0, 2.0 * np.pi, 17)[:-1]
            local = o.radius * np.stack((np.cos(a), np.sin(a)), axis=1)
        else:
            points.append((float(x[i]), float(y[i])))
            continue
        yaw = float(hdg[i]) + o.hdg
        c, sn = np.cos(yaw), np.sin(yaw)
        rot = np.array([[c, -sn], [sn, c]])
        outlines.append(local @ rot.T + np.array([x[i], y[i]]))
    return outlines, np.array(points, dtype=np.float64).reshape(-1, 2)


def _extent(sampling: RoadSampling) -> tuple[float, float, float, float]:
    p = sampling.lanes.points
    if not len(p):
        return (0.0, 0.0, 1.0, 1.0)
    return float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()), float(p[:, 1].max())


def _default_title(net: RoadNetwork) -> str:
    name = map_name(net)
    total = float(net.road_length.sum())
    size = f"{total / 1000:.2f} km" if total >= 1000 else f"{total:.0f} m"
    return f"{name}: {len(net.roads)} roads, {len(net.junctions)} junctions, {size} of road"


def map_name(net: RoadNetwork) -> str:
    """The map's name: the header's, else the file name, else ``road network``."""
    name = net.header.name.strip() if net.header.name else ""
    file = Path(net.path).name if net.path else ""
    if name and file and name != Path(file).stem:
        return f"{name} ({file})"
    return name or file or "road network"
