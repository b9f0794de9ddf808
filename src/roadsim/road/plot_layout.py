"""Where things go in a map picture: the panels of a figure, and the labels in them.

A long map (a motorway of kilometres, a few tens of metres wide) drawn in one panel is a
thin line. `panel_views` cuts such a view into strips along its long side, all drawn on one
scale and stacked (`map_figure`), so that lanes are wide enough to read. `place_labels`
writes text labels where they overlap neither each other nor given markers: each label
tries its candidate positions in a fixed order and takes the first free one, so the same
picture comes out every time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim._types import FloatArray
from roadsim.errors import RoadsimError

#: ``(x0, y0, x1, y1)``: a view of the map, world frame (m).
View = tuple[float, float, float, float]

#: Largest ``size_in * dpi``: the longer side of the map area, in pixels.
MAX_PIXELS = 10_000
#: Most strips a long map is cut into when the number is not given.
MAX_AUTO_STRIPS = 6
#: A view whose short side is under this fraction of its long side is a long map.
_LONG_MAP_RATIO = 0.3
#: Strips are added until their stacked heights reach this fraction of their length.
_STRIP_FILL = 0.5
_PT = 1.0 / 72.0  # inches per point


def check_resolution(size_in: float, dpi: float) -> None:
    """Refuses sizes that would not fit in memory (or are not sizes).

    Raises:
        RoadsimError: Unless ``size_in`` and ``dpi`` are positive, finite and
            ``size_in * dpi <= MAX_PIXELS``.
    """
    if not (math.isfinite(size_in) and size_in > 0 and math.isfinite(dpi) and dpi > 0):
        raise RoadsimError(f"size {size_in} in and dpi {dpi} must be positive numbers")
    if size_in * dpi > MAX_PIXELS:
        raise RoadsimError(
            f"a map {size_in:g} in at {dpi:g} dpi is {size_in * dpi:.0f} pixels across; "
            f"the limit is {MAX_PIXELS} (size x dpi)"
        )


def pad_view(view: View, fraction: float = 0.03, least: float = 10.0) -> View:
    """``view`` widened on every side by ``fraction`` of its longer side (at least of ``least``)."""
    x0, y0, x1, y1 = view
    pad = fraction * max(x1 - x0, y1 - y0, least)
    return (x0 - pad, y0 - pad, x1 + pad, y1 + pad)


@dataclass(frozen=True)
class Panels:
    """The views of a picture's panels.

    Attributes:
        views: One view per panel, in reading order.
        along: 0: the panels are rows stacked top to bottom (a map long in x); 1: columns
            left to right (a map long in y).
    """

    views: list[View]
    along: int = 0


def panel_views(points: FloatArray, view: View, strips: int | None = None) -> Panels:
    """Cuts ``view`` into strips along its longer side, where that makes lanes readable.

    Each strip covers an equal part of the long side (plus 2% overlap with its neighbours)
    and, across, just the ``points`` inside it, padded; strips with no points are left out.

    Args:
        points: What must be seen, shape (n, 2) (m): the lane boundary samples.
        view: The whole picture's view.
        strips: How many strips; ``None``: one panel unless the view's short side is under
            30% of its long side, then the fewest strips (at most `MAX_AUTO_STRIPS`) whose
            stacked heights reach half their length.

    Returns:
        The panels (one, ``view`` itself, when not cut).
    """
    x0, y0, x1, y1 = view
    along = 0 if x1 - x0 >= y1 - y0 else 1
    length = max(x1 - x0, y1 - y0)
    if strips is None:
        if min(x1 - x0, y1 - y0) >= _LONG_MAP_RATIO * length or not len(points):
            return Panels([view], along)
        for k in range(2, MAX_AUTO_STRIPS + 1):
            cut = _strips(points, view, along, k)
            if sum(_across(v, along) for v in cut) >= _STRIP_FILL * length / k:
                return Panels(cut, along)
        return Panels(cut, along)
    if strips <= 1 or not len(points):
        return Panels([view], along)
    return Panels(_strips(points, view, along, strips), along)


def _across(view: View, along: int) -> float:
    return view[3] - view[1] if along == 0 else view[2] - view[0]


def _strips(points: FloatArray, view: View, along: int, k: int) -> list[View]:
    lo, hi = (view[0], view[2]) if along == 0 else (view[1], view[3])
    c_lo, c_hi = (view[1], view[3]) if along == 0 else (view[0], view[2])
    # Along, the strips span what there is to see, not the view's padding.
    seen = points[(points[:, along] >= lo) & (points[:, along] <= hi), along]
    if len(seen):
        lo, hi = float(seen.min()), float(seen.max())
    step = max(hi - lo, 1.0) / k
    overlap = 0.02 * step
    least = 0.1 * step  # a strip no lower than this: room for its ticks
    out: list[View] = []
    for i in range(k):
        a, b = lo + i * step - overlap, lo + (i + 1) * step + overlap
        inside = points[(points[:, along] >= a) & (points[:, along] <= b), 1 - along]
        if not len(inside):
            continue
        pad = 0.04 * step
        p, q = float(inside.min()) - pad, float(inside.max()) + pad
        if q - p < least:
            mid = 0.5 * (p + q)
            p, q = mid - 0.5 * least, mid + 0.5 * least
        p, q = max(p, c_lo), min(q, c_hi)
        out.append((a, p, b, q) if along == 0 else (p, a, q, b))
    return out


def map_figure(
    panels: Panels, *, size_in: float, dpi: float, legend: bool
) -> tuple[Any, list[Any]]:
    """A figure with one axes per panel, every panel on the same scale (m per inch).

    The map area's longer side is ``size_in`` (a single panel's shape follows its view,
    its sides' ratio kept between 0.3 and 1.6); room for a legend on the right is added
    when ``legend``.

    Returns:
        ``(figure, axes)``, the axes in the order of ``panels.views`` with their views set.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    views = panels.views
    if len(views) == 1:
        x0, y0, x1, y1 = views[0]
        aspect = float(np.clip(max(y1 - y0, 1e-9) / max(x1 - x0, 1e-9), 0.3, 1.6))
        w, h = (size_in, size_in * aspect) if aspect <= 1.0 else (size_in / aspect, size_in)
        sizes = [(w, h)]
    elif panels.along == 0:
        scale = size_in / max(v[2] - v[0] for v in views)
        sizes = [((v[2] - v[0]) * scale, (v[3] - v[1]) * scale) for v in views]
    else:
        scale = size_in / max(v[3] - v[1] for v in views)
        sizes = [((v[2] - v[0]) * scale, (v[3] - v[1]) * scale) for v in views]
    left, right, top, bottom = 0.8, (2.6 if legend else 0.3), 0.45, 0.6
    gap = 0.5 if panels.along == 0 else 0.8  # tick labels between panels
    if panels.along == 0:
        fig_w = left + max(w for w, _ in sizes) + right
        fig_h = top + sum(h for _, h in sizes) + gap * (len(sizes) - 1) + bottom
    else:
        fig_w = left + sum(w for w, _ in sizes) + gap * (len(sizes) - 1) + right
        fig_h = top + max(h for _, h in sizes) + bottom
    fig = Figure(figsize=(fig_w, fig_h), dpi=dpi)
    FigureCanvasAgg(fig)
    axes = []
    x, y = left, fig_h - top
    for view, (w, h) in zip(views, sizes, strict=True):
        if panels.along == 0:
            box = (x / fig_w, (y - h) / fig_h, w / fig_w, h / fig_h)
            y -= h + gap
        else:
            box = (x / fig_w, (fig_h - top - h) / fig_h, w / fig_w, h / fig_h)
            x += w + gap
        ax = fig.add_axes(box)
        ax.set_xlim(view[0], view[2])
        ax.set_ylim(view[1], view[3])
        axes.append(ax)
    return fig, axes


def in_view(ax: Any, points: FloatArray) -> npt.NDArray[np.bool_]:
    """Which of ``points`` (n, 2) lie inside the axes' current view."""
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    x, y = points[:, 0], points[:, 1]
    inside: npt.NDArray[np.bool_] = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    return inside


#: Offsets (points) around a marker, nearest first: the four diagonals, then the sides.
AROUND: tuple[tuple[float, float], ...] = tuple(
    (r * dx, r * dy)
    for r in (9.0, 14.0, 20.0)
    for dx, dy in ((1, 1), (-1, 1), (1, -1), (-1, -1), (1.4, 0), (-1.4, 0), (0, 1.2), (0, -1.2))
)


@dataclass(frozen=True)
class Label:
    """A text label and where it may go.

    Attributes:
        text: What it says.
        anchors: Points it may label, shape (k, 2) (m), in order of preference; those
            outside the view are not tried.
        offsets: Where the text's centre may sit relative to an anchor (points), in order
            of preference.
        optional: Leave the label out when every position overlaps; else it takes the
            position with the least overlap.
        along_line: The anchors are samples along a line (a road): try the one in the
            middle of the run inside the view first, then outward.
        margin_pt: Room kept free around the text (points), e.g. for a box drawn around it.
        style: Keyword arguments for ``Axes.annotate`` (font, colour, path effects...).
    """

    text: str
    anchors: FloatArray
    offsets: Sequence[tuple[float, float]] = ((0.0, 0.0),)
    optional: bool = False
    along_line: bool = False
    margin_pt: float = 1.5
    style: Mapping[str, Any] = field(default_factory=dict)


def place_labels(
    ax: Any, labels: Sequence[Label], obstacles: FloatArray | None = None, obstacle_pt: float = 4.0
) -> list[Any]:
    """Writes ``labels`` into ``ax`` where they overlap neither each other, nor the texts
    already in ``ax``, nor ``obstacles``.

    The labels are placed in order, so earlier ones are the more important. Overlap is
    measured in display space with the axes' current view and size, so set both first.

    Args:
        ax: A matplotlib ``Axes``.
        labels: The labels, most important first.
        obstacles: Markers labels must not cover, shape (n, 2) (m).
        obstacle_pt: The markers' half size (points).

    Returns:
        The ``Annotation`` of each label written, in the order of ``labels``.
    """
    fig = ax.figure
    renderer = _renderer(fig)
    ax.apply_aspect()
    frame = ax.get_window_extent(renderer)
    px = fig.dpi * _PT  # pixels per point
    taken: list[FloatArray] = [
        np.array([[b.x0, b.y0, b.x1, b.y1]])
        for b in (t.get_window_extent(renderer) for t in ax.texts if t.get_visible())
    ]
    if obstacles is not None and len(obstacles):
        centres = ax.transData.transform(obstacles)
        r = obstacle_pt * px
        taken.append(np.hstack((centres - r, centres + r)))
    boxes = np.concatenate(taken) if taken else np.zeros((0, 4))
    out = []
    for label in labels:
        anchors = np.asarray(label.anchors, dtype=np.float64).reshape(-1, 2)
        anchors = anchors[in_view(ax, anchors)]
        if not len(anchors):
            continue
        if label.along_line:
            mid = 0.5 * (len(anchors) - 1)
            anchors = anchors[np.argsort(np.abs(np.arange(len(anchors)) - mid), kind="stable")]
        text = ax.annotate(
            label.text,
            tuple(anchors[0]),
            xytext=label.offsets[0],
            textcoords="offset points",
            ha="center",
            va="center",
            annotation_clip=True,
            **label.style,
        )
        extent = text.get_window_extent(renderer)
        half = np.array([extent.width, extent.height]) / 2 + label.margin_pt * px
        best: tuple[float, int, int] | None = None
        shown = ax.transData.transform(anchors)
        for i, anchor in enumerate(shown):
            for j, offset in enumerate(label.offsets):
                centre = anchor + np.asarray(offset) * px
                box = np.concatenate((centre - half, centre + half))
                cost = _overlap(box, boxes) + _outside(box, frame)
                if best is None or cost < best[0]:
                    best = (cost, i, j)
                if cost == 0.0:
                    break
            if best is not None and best[0] == 0.0:
                break
        assert best is not None
        cost, i, j = best
        if cost > 0.0 and label.optional:
            text.remove()
            continue
        text.xy = tuple(anchors[i])
        text.xyann = label.offsets[j]
        centre = shown[i] + np.asarray(label.offsets[j]) * px
        boxes = np.vstack((boxes, np.concatenate((centre - half, centre + half))))
        out.append(text)
    return out


def _overlap(box: FloatArray, boxes: FloatArray) -> float:
    if not len(boxes):
        return 0.0
    w = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    h = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    return float(np.sum(np.clip(w, 0.0, None) * np.clip(h, 0.0, None)))


def _outside(box: FloatArray, frame: Any) -> float:
    """The part of ``box`` off the axes, weighted so that a label keeps inside."""
    area = (box[2] - box[0]) * (box[3] - box[1])
    w = min(box[2], frame.x1) - max(box[0], frame.x0)
    h = min(box[3], frame.y1) - max(box[1], frame.y0)
    return float(area - max(w, 0.0) * max(h, 0.0))


def _renderer(fig: Any) -> Any:
    """The figure's renderer, to measure text; an Agg one at its dpi when it has none."""
    get = getattr(fig.canvas, "get_renderer", None)
    if get is not None:
        return get()
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(1, 1, fig.dpi)  # type: ignore[no-untyped-call]
