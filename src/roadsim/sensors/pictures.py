"""Pictures of scene sensor readings for people (``roadsim sensors snapshot``).

- A camera (`CameraImage`): its tone-mapped preview, its depth colour-mapped (with a
  colour bar; the raw metres go to a ``.npy`` beside it), and its surface classes in the
  label colours of `roadsim.road.surface_classes` with a legend of the classes seen.
- A lidar (`PointCloud`) or a ray tracer (`RayTracerReading`): its points from above and
  in perspective (from behind and above the sensor), coloured by surface class, with the
  bounce segments (hit to hit after a reflection) drawn as lines.

matplotlib is imported when a picture is drawn (Agg, no display).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from roadsim._types import FloatArray
from roadsim.road.surface_classes import LABEL_COLORS, SURFACE_CLASSES
from roadsim.sensors.camera import CameraImage
from roadsim.sensors.camera_model import CameraModel
from roadsim.sensors.lidar import PointCloud
from roadsim.sensors.mount import rotation_rpy
from roadsim.sensors.raytracer import RayTracerReading

__all__ = ["save_camera", "save_rays"]

#: Most points drawn in a point picture (a sample of them beyond).
MAX_POINTS = 60_000
_DPI = 100


def _figure(width_px: int, height_px: int) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width_px / _DPI, height_px / _DPI), dpi=_DPI)


def _labels(surface_ids: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    ids = np.minimum(surface_ids, len(LABEL_COLORS) - 1)
    out: np.ndarray[Any, Any] = LABEL_COLORS[ids]
    return out


def _legend(ax: Any, surface_ids: np.ndarray[Any, Any]) -> None:
    from matplotlib.patches import Patch

    seen = np.unique(surface_ids)
    handles = [
        Patch(facecolor=LABEL_COLORS[i] / 255.0, edgecolor="0.3", label=f"{i} {SURFACE_CLASSES[i]}")
        for i in seen
        if i < len(SURFACE_CLASSES)
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)


def save_camera(image: CameraImage, folder: Path) -> list[Path]:
    """Writes ``<name>_preview.png``, ``<name>_depth.png``, ``<name>_depth.npy`` and
    ``<name>_segmentation.png`` into ``folder``; returns their paths."""
    import matplotlib.image

    name = image.name
    h, w = image.shape
    preview = folder / f"{name}_preview.png"
    matplotlib.image.imsave(preview, image.preview())
    raw = folder / f"{name}_depth.npy"
    np.save(raw, image.depth)

    fig = _figure(w + 260, h + 60)
    ax = fig.add_axes((0.02, 0.05, w / (w + 260), 0.9))
    finite = np.isfinite(image.depth)
    depth = np.where(finite, image.depth, np.nan)
    from matplotlib.colors import LogNorm

    low = max(float(np.nanmin(depth)), 0.1) if finite.any() else 0.1
    high = max(float(np.nanmax(depth)), 2.0 * low) if finite.any() else 1.0
    shown = ax.imshow(depth, cmap="turbo_r", norm=LogNorm(low, high))
    ax.set_facecolor("white")
    ax.set_axis_off()
    ax.set_title(
        f"{name}: depth along the optical axis (m, log scale); white: nothing hit", fontsize=9
    )
    fig.colorbar(shown, ax=ax, fraction=0.04, pad=0.02)
    depth_png = folder / f"{name}_depth.png"
    fig.savefig(depth_png)

    fig = _figure(w + 260, h + 60)
    ax = fig.add_axes((0.02, 0.05, w / (w + 260), 0.9))
    ax.imshow(_labels(image.surface_ids), interpolation="nearest")
    ax.set_axis_off()
    ax.set_title(f"{name}: surface classes", fontsize=9)
    _legend(ax, image.surface_ids)
    segmentation = folder / f"{name}_segmentation.png"
    fig.savefig(segmentation)
    return [preview, depth_png, raw, segmentation]


def _points_and_segments(
    reading: PointCloud | RayTracerReading,
) -> tuple[FloatArray, np.ndarray[Any, Any], FloatArray]:
    """Sensor-frame points (M, 3), their classes (M,) and bounce segments (K, 2, 3)."""
    if isinstance(reading, PointCloud):
        xyz = reading.xyz.astype(np.float64)
        same_ray = (
            (reading.bounce[1:] > 0)
            & (reading.channel[1:] == reading.channel[:-1])
            & (reading.azimuth[1:] == reading.azimuth[:-1])
        )
        k = np.flatnonzero(same_ray)
        segments = np.stack((xyz[k], xyz[k + 1]), axis=1)
        return xyz, reading.surface_ids, segments
    local = reading.in_sensor_frame()
    valid = local.valid
    xyz = local.hit_locations[valid]
    both = valid[:, 1:] & valid[:, :-1]
    segments = np.stack(
        (local.hit_locations[:, :-1][both], local.hit_locations[:, 1:][both]), axis=1
    )
    return xyz, local.surface_ids[valid], segments


def save_rays(reading: PointCloud | RayTracerReading, folder: Path) -> list[Path]:
    """Writes ``<name>_top.png`` and ``<name>_perspective.png`` into ``folder``."""
    from matplotlib.collections import LineCollection

    xyz, classes, segments = _points_and_segments(reading)
    if len(xyz) > MAX_POINTS:  # an even sample, the same every time
        keep = np.linspace(0, len(xyz) - 1, MAX_POINTS).astype(np.int64)
        xyz, classes = xyz[keep], classes[keep]
    colors = _labels(classes) / 255.0
    name = reading.name
    kind = "lidar" if isinstance(reading, PointCloud) else "ray tracer"

    fig = _figure(900, 760)
    ax = fig.add_axes((0.08, 0.07, 0.64, 0.85))
    ax.set_facecolor("0.12")
    ax.scatter(xyz[:, 1], xyz[:, 0], s=0.6, c=colors, linewidths=0)
    if len(segments):
        ax.add_collection(
            LineCollection(list(segments[:, :, [1, 0]]), colors="1.0", linewidths=0.4, alpha=0.6)
        )
    ax.plot([0.0], [0.0], marker="^", color="red", markersize=8)
    ax.invert_xaxis()  # y (left) to the left of the picture
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("y, left (m)")
    ax.set_ylabel("x, forward (m)")
    ax.set_title(f"{name} ({kind}), from above, sensor frame; {len(xyz):,} points", fontsize=9)
    _legend(ax, classes)
    top = folder / f"{name}_top.png"
    fig.savefig(top)

    # In perspective: a virtual camera 12 m behind and 6 m above the sensor, looking
    # 20 degrees down along its x.
    model = CameraModel(900, 600, 90.0)
    eye = np.array([-12.0, 0.0, 6.0])
    rotation = rotation_rpy(0.0, np.radians(20.0), 0.0)

    def view(p: FloatArray) -> FloatArray:
        out: FloatArray = (p - eye) @ rotation
        return out

    fig = _figure(1160, 640)
    ax = fig.add_axes((0.02, 0.03, 900 / 1160, 0.9))
    ax.set_facecolor("0.12")
    u, v, depth = model.project(view(xyz))
    ahead = np.flatnonzero(depth > 0.5)
    order = ahead[np.argsort(-depth[ahead], kind="stable")]  # far first
    ax.scatter(u[order], v[order], s=np.clip(40.0 / depth[order], 0.3, 6.0), c=colors[order],
               linewidths=0)  # fmt: skip
    if len(segments):
        su, sv, sd = model.project(view(segments))
        ok = np.all(sd > 0.5, axis=1)
        lines = np.stack((su[ok], sv[ok]), axis=-1)
        ax.add_collection(LineCollection(list(lines), colors="1.0", linewidths=0.4, alpha=0.6))
    ax.set_xlim(0, model.width)
    ax.set_ylim(model.height, 0)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(f"{name} ({kind}), from 12 m behind and 6 m above the sensor", fontsize=9)
    _legend(ax, classes)
    perspective = folder / f"{name}_perspective.png"
    fig.savefig(perspective)
    return [top, perspective]
