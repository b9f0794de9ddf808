"""How snapshots, actor states and sensor readings go on the wire (docs/protocol.md,
"Snapshots"), and the shared-memory rings the bulky arrays can take instead.

One table, `SAMPLE_ENCODERS`, says per sample type (`roadsim.capture.READING_TYPES`) which
fields are arrays and which are plain values; a new kind of sensor adds one entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from roadsim.capture import ActorStates, Sample, Snapshot
from roadsim.capture.snapshot import ACTOR_FIELDS
from roadsim.sensors.mount import Pose
from roadsim.server.protocol import Encoder
from roadsim.server.shm import ShmRing

__all__ = ["ARRAY_FIELDS", "SAMPLE_ENCODERS", "SHM_TYPES", "Rings", "encode_actors", "encode_sample", "encode_snapshot"]

#: Sample types whose arrays may go through shared memory (the bulky ones).
SHM_TYPES = frozenset({"camera", "lidar", "raytracer"})

Fields = tuple[dict[str, np.ndarray[Any, Any]], dict[str, Any]]


def _driver(reading: Any) -> Fields:
    return {}, {"view": reading.to_dict()}


#: The array fields of each sample type that has them (a subscription may pick some).
ARRAY_FIELDS: Mapping[str, tuple[str, ...]] = {
    "lidar": ("xyz", "range", "intensity", "surface_ids", "actor_ids", "lane_uids", "channel",
              "azimuth", "time_offset", "bounce"),
    "raytracer": ("hit_locations", "hit_normals", "hit_distances", "surface_ids", "actor_ids",
                  "lane_uids", "valid"),
    "camera": ("color", "depth", "surface_ids", "actor_ids"),
}  # fmt: skip


def _lidar(r: Any) -> Fields:
    return {n: getattr(r, n) for n in ARRAY_FIELDS["lidar"]}, {"rays": int(r.rays)}


def _raytracer(r: Any) -> Fields:
    arrays = {n: getattr(r, n) for n in ARRAY_FIELDS["raytracer"]}
    return arrays, {"coordinates": r.coordinates}


def _camera(r: Any) -> Fields:
    m = r.model
    arrays = {"color": r.color, "depth": r.depth, "surface_ids": r.surface_ids,
              "actor_ids": r.actor_ids}  # fmt: skip
    values = {
        "width": int(m.width),
        "height": int(m.height),
        "horizontal_fov_deg": float(m.horizontal_fov_deg),
        "near": float(m.near),
        "far": float(m.far),
        "renderer": r.renderer,
    }
    return arrays, values


#: Arrays and plain values of a reading, by sample type.
SAMPLE_ENCODERS: Mapping[str, Callable[[Any], Fields]] = {
    "driver": _driver,
    "lidar": _lidar,
    "raytracer": _raytracer,
    "camera": _camera,
}


class Rings:
    """One shared-memory ring per sensor, made at its first frame and made again, larger,
    when a frame outgrows it (a lidar's point count changes; the old ring stays until
    `close`, as clients may still map it)."""

    def __init__(self, slots: int = 8) -> None:
        self.slots = slots
        self.rings: dict[str, ShmRing] = {}
        self._retired: list[ShmRing] = []

    def write(self, sensor: str, arrays: Mapping[str, np.ndarray[Any, Any]]) -> dict[str, Any]:
        """Writes a frame's arrays into the sensor's ring; returns the message's ``shm``."""
        nbytes = sum(int(a.nbytes) + 64 for a in arrays.values())
        ring = self.rings.get(sensor)
        if ring is None or not ring.fits(nbytes):
            if ring is not None:
                self._retired.append(ring)
            ring = self.rings[sensor] = ShmRing(self.slots, max(nbytes * 5 // 4, 4096))
        slot, seq, layout = ring.write(arrays)
        return {
            "ring": ring.name,
            "slot": slot,
            "seq": seq,
            "arrays": {name: where.to_wire() for name, where in layout.items()},
        }

    def close(self) -> None:
        for ring in [*self.rings.values(), *self._retired]:
            ring.close()
        self.rings.clear()
        self._retired.clear()


def pose_to_wire(pose: Pose) -> dict[str, Any]:
    return {
        "position": [float(v) for v in pose.position],
        "rotation": [[float(v) for v in row] for row in pose.rotation],
    }


def encode_sample(
    sample: Sample,
    enc: Encoder,
    rings: Rings | None = None,
    shm_cache: dict[Any, Any] | None = None,
    fields: frozenset[str] | None = None,
) -> dict[str, Any]:
    """A sample as a header map, its arrays (those in ``fields``, default all) as frames
    of ``enc`` or, with ``rings``, in the sensor's ring (``shm_cache`` keeps one write per
    sample and choice of fields for every subscriber)."""
    arrays, values = SAMPLE_ENCODERS[sample.type](sample.reading)
    if fields is not None:
        arrays = {name: a for name, a in arrays.items() if name in fields}
    out: dict[str, Any] = {
        "type": sample.type,
        "sensor_id": sample.sensor_id,
        "frame": sample.frame,
        "time": sample.time,
        "pose": pose_to_wire(sample.pose),
        "data": dict(values),
    }
    if rings is not None and sample.type in SHM_TYPES:
        cache = {} if shm_cache is None else shm_cache
        key = (sample.name, fields)
        if key not in cache:
            cache[key] = rings.write(sample.name, arrays)
        out["shm"] = cache[key]
    else:
        out["data"].update({name: enc.array(a) for name, a in arrays.items()})
    return out


def encode_actors(actors: ActorStates, enc: Encoder) -> dict[str, Any]:
    return {name: enc.array(getattr(actors, name)) for name in ACTOR_FIELDS}


def encode_snapshot(
    snap: Snapshot,
    enc: Encoder,
    *,
    sensors: frozenset[str] | None,
    actors: bool,
    rings: Rings | None,
    shm_cache: dict[Any, Any],
    fields: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, Any]:
    """A snapshot's header (without the per-client ``seq`` and ``dropped``)."""
    picked = fields or {}
    samples = {
        name: encode_sample(s, enc, rings, shm_cache, picked.get(name))
        for name, s in snap.samples.items()
        if (sensors is None or name in sensors) and s.type in SAMPLE_ENCODERS
    }
    header: dict[str, Any] = {
        "type": "snapshot",
        "frame": snap.frame,
        "time": snap.time,
        "ego_id": snap.ego_id,
        "samples": samples,
    }
    if actors:
        header["actors"] = encode_actors(snap.actors, enc)
    return header
