"""What the viewer shows of the sensors: lidar points, ray-tracer traces, the driver
sensor's front and rear objects, and camera streams.

Each snapshot's samples become one small dict per sensor type (`sensor_message`); a sensor
that did not read this frame, or is switched off, sends nothing. Points and segments are
in the world frame minus the viewer's origin (float32); camera images are JPEG files
(tone-mapped colour, depth on a log scale, surface classes in their label colours).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from roadsim._types import FloatArray
from roadsim.capture import Sample, Snapshot
from roadsim.road.surface_classes import LABEL_COLORS

__all__ = ["MAX_LIDAR_POINTS", "sensor_message"]

#: Lidar points sent per sweep, at most (an even subsample beyond).
MAX_LIDAR_POINTS = 30_000
#: Depth (m) that maps to white in the depth stream; log scale from 1 m.
_FAR_M = 200.0
_SURROUNDING = ("front", "rear", "front_left", "rear_left", "front_right", "rear_right")


def sensor_message(snap: Snapshot, origin: FloatArray) -> dict[str, Any]:
    """The sensors' part of a frame message (empty where no sensor read this frame)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for sample in snap.samples.values():
        make = _MAKERS.get(sample.type)
        if make is not None:
            out.setdefault(sample.type, []).append(make(sample, origin))
    return out


def _lidar(sample: Sample, origin: FloatArray) -> dict[str, Any]:
    cloud = sample.reading
    xyz = np.asarray(cloud.xyz, dtype=np.float64)
    step = max(1, -(-xyz.shape[0] // MAX_LIDAR_POINTS))
    world = sample.pose.to_world(xyz[::step]) - origin
    return {
        "name": sample.name,
        "points": world.astype("<f4").tobytes(),
        "classes": np.asarray(cloud.surface_ids[::step], dtype=np.uint8).tobytes(),
        "total": int(xyz.shape[0]),
    }


def _rays(sample: Sample, origin: FloatArray) -> dict[str, Any]:
    """Each ray as segments from the sensor through its valid hits."""
    r = sample.reading
    hits = np.asarray(r.hit_locations, dtype=np.float64)
    if r.coordinates == "sensor":
        hits = sample.pose.to_world(hits)
    n = r.valid.shape[0]
    start = np.concatenate(
        (np.broadcast_to(sample.pose.position, (n, 1, 3)), hits[:, :-1]), axis=1
    )
    ok = np.asarray(r.valid, dtype=bool)
    segments = np.stack((start[ok], hits[ok]), axis=1) - origin
    return {"name": sample.name, "segments": segments.astype("<f4").tobytes(), "rays": int(n)}


def _driver(sample: Sample, origin: FloatArray) -> dict[str, Any]:
    around = sample.reading.surrounding_objects
    out: dict[str, Any] = {"name": sample.name, "id": int(sample.reading.id)}
    for name in _SURROUNDING:
        obj = getattr(around, f"object_{name}")
        out[name] = int(obj.id) if obj.exist else -1
    return out


def _camera(sample: Sample, origin: FloatArray) -> dict[str, Any]:
    from PIL import Image

    image = sample.reading
    depth = np.asarray(image.depth, dtype=np.float32)
    finite = np.isfinite(depth)
    scaled = np.log(np.clip(np.where(finite, depth, _FAR_M), 1.0, _FAR_M)) / np.log(_FAR_M)
    depth8 = np.where(finite, 255.0 * (1.0 - scaled), 0.0).astype(np.uint8)
    labels = LABEL_COLORS[np.minimum(np.asarray(image.surface_ids), len(LABEL_COLORS) - 1)]

    def jpeg(pixels: np.ndarray[Any, Any]) -> bytes:
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="JPEG", quality=80)
        return buffer.getvalue()

    h, w = depth.shape[:2]
    return {
        "name": sample.name,
        "width": int(w),
        "height": int(h),
        "color": jpeg(image.preview()),
        "depth": jpeg(depth8),
        "segmentation": jpeg(np.ascontiguousarray(labels, dtype=np.uint8)),
    }


_MAKERS = {"lidar": _lidar, "raytracer": _rays, "driver": _driver, "camera": _camera}
