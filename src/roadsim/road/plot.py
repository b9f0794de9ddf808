"""`plot_map`: a top-down picture of a road network (matplotlib, Agg, imported lazily).

Lanes are filled by type, road marks drawn as lines (dashes as dashes, never thinner than
a hairline, true width when zoomed in), junctions tinted and outlined, signals drawn as
markers (traffic lights apart from signs) and objects as outlines. The lane and mark
geometry is the one the surface mesh uses (`roadsim.road.mesh.sample_road_surface`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from roadsim.road.mesh import RoadSampling, sample_road_surface

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork

FloatArray = npt.NDArray[np.float64]

#: Fill colour by lane type; types not listed are drawn in `_OTHER_LANE`.
LANE_COLORS: dict[str, str] = {
    "driving": "#5a5e66",
    "entry": "#646a75",
    "exit": "#646a75",
    "onramp": "#646a75",
    "offramp": "#646a75",
    "connectingramp": "#646a75",
    "mwyentry": "#646a75",
    "mwyexit": "#646a75",
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


def plot_map(
    net: RoadNetwork,
    target: str | Path | Any,
    *,
    title: str | None = None,
    signals: bool = True,
    objects: bool = True,
    junctions: bool = True,
    junction_labels: bool = False,
    legend: bool = True,
    size_in: float = 10.0,
    dpi: int = 150,
    sampling: RoadSampling | None = None,
) -> Any:
    """Draws a road network from above.

    Args:
        net: The road network.
        target: A file name (the format follows the suffix, e.g. ``map.png``), or a
            matplotlib ``Axes`` to draw into.
        title: The title; by default the map's name and its size.
        signals, objects, junctions: Whether to draw them.
        junction_labels: Write each junction's id at its centre.
        legend: Whether to add a legend (outside the map, on the right).
        size_in: The longer side of the map area, when a file is written (inches).
        dpi: Resolution of a written raster file.
        sampling: Lane and road-mark samples to reuse (computed when not given).

    Returns:
        The written `Path` for a file name, else the ``Axes``.
    """
    from matplotlib.axes import Axes

    sampling = sampling if sampling is not None else sample_road_surface(net)
    bbox = _extent(sampling)
    if isinstance(target, Axes):
        ax = target
        fig = None
    else:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        dx, dy = max(bbox[2] - bbox[0], 1.0), max(bbox[3] - bbox[1], 1.0)
        aspect = float(np.clip(dy / dx, 0.3, 1.6))
        w, h = (size_in, size_in * aspect) if aspect <= 1.0 else (size_in / aspect, size_in)
        fig = Figure(figsize=(w + (2.6 if legend else 0.4), h + 0.9), dpi=dpi)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
    _draw(ax, net, sampling, bbox, signals, objects, junctions, junction_labels, legend)
    ax.set_title(title if title is not None else _default_title(net), fontsize=11)
    if fig is None:
        return ax
    path = Path(target)
    fig.savefig(path, dpi=dpi, bbox_inches="tight", facecolor="white")
    return path


def _draw(
    ax: Any,
    net: RoadNetwork,
    sampling: RoadSampling,
    bbox: tuple[float, float, float, float],
    signals: bool,
    objects: bool,
    junctions: bool,
    junction_labels: bool,
    legend: bool,
) -> None:
    from matplotlib.patches import Patch

    ax.set_facecolor(_BACKGROUND)
    ax.set_aspect("equal")
    if ax.get_autoscalex_on() and ax.get_autoscaley_on():  # else keep the caller's view
        pad = 0.03 * max(bbox[2] - bbox[0], bbox[3] - bbox[1], 10.0)
        ax.set_xlim(bbox[0] - pad, bbox[2] + pad)
        ax.set_ylim(bbox[1] - pad, bbox[3] + pad)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.tick_params(labelsize=8)
    handles: list[Any] = []

    polygons, types = lane_polygons(sampling)
    handles += _draw_lanes(ax, polygons, types)
    if junctions:
        handles += _draw_junctions(ax, net, polygons, sampling, junction_labels)
    handles += _draw_marks(ax, sampling)
    if objects:
        handles += _draw_objects(ax, net)
    if signals:
        handles += _draw_signals(ax, net)
    if legend and handles:
        ax.legend(
            handles=[h for h in handles if isinstance(h, Patch)]
            + [h for h in handles if not isinstance(h, Patch)],
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize=8,
            frameon=False,
        )


def lane_polygons(sampling: RoadSampling) -> tuple[list[FloatArray], list[str]]:
    """One (k, 2) outline polygon and the lane type per lane record with an area."""
    lanes = sampling.lanes
    out: list[FloatArray] = []
    types: list[str] = []
    m = np.diff(lanes.grid_start)
    for uid in np.flatnonzero((lanes.lane_id != 0) & (m[lanes.lane_section] >= 2)):
        sec = int(lanes.lane_section[uid])
        block = lanes.section_points(sec)
        col = int(uid - lanes.sec_first_uid[sec])
        inner = col + 1 if lanes.lane_id[uid] > 0 else col - 1
        t = lanes.t[lanes.point_start[sec] : lanes.point_start[sec + 1]].reshape(block.shape[:2])
        if np.all(np.abs(t[:, col] - t[:, inner]) < 1e-3):
            continue  # a lane of zero width
        out.append(np.concatenate((block[:, col, :2], block[::-1, inner, :2])))
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


def _draw_junctions(
    ax: Any, net: RoadNetwork, polygons: list[FloatArray], sampling: RoadSampling, labels: bool
) -> list[Any]:
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch
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
    hulls, names = [], []
    for jid, pts in by_junction.items():
        p = np.concatenate(pts)
        try:
            hull = ConvexHull(p)
        except (QhullError, ValueError):
            continue
        hulls.append(p[hull.vertices])
        names.append(jid)
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
    if labels:
        for hull, jid in zip(hulls, names, strict=True):
            cx, cy = hull.mean(axis=0)
            ax.text(
                cx,
                cy,
                jid,
                fontsize=6,
                color="#e06a00",
                fontweight="bold",
                ha="center",
                va="center",
                zorder=6,
                clip_on=True,
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
