"""`Recorder`: a sink that writes snapshots to an MCAP file with the Foxglove SDK.

Channels (topic: schema; see docs/capture.md):

| topic | schema | what |
|---|---|---|
| ``/roadsim/snapshot`` | ``roadsim.Snapshot`` (JSON) | frame, time, ego, each sample's stamp and exact pose |
| ``/roadsim/actors`` | ``roadsim.ActorStates`` (protobuf) | every active actor's state, exactly |
| ``/scene/actors`` | ``foxglove.SceneUpdate`` | a box per actor |
| ``/scene/lanes`` | ``foxglove.SceneUpdate`` | lane borders, once, at the first snapshot |
| ``/tf`` | ``foxglove.FrameTransforms`` | world to ``ego``, world to each ``sensor/NAME`` |
| ``/driver/NAME`` | ``roadsim.DriverView`` (JSON) | a driver sensor's view |
| ``/lidar/NAME`` | ``foxglove.PointCloud`` | a lidar sweep, every point field |
| ``/rays/NAME`` | ``foxglove.PointCloud`` | a ray tracer's segments |
| ``/camera/NAME/KIND`` | ``foxglove.RawImage`` | ``color`` (preview), ``hdr``, ``depth``, ``surface``, ``instance`` |
| ``/camera/NAME/calibration`` | ``foxglove.CameraCalibration`` | the camera's pinhole model |

A metadata record named ``roadsim`` holds the roadsim version, the scenario (YAML), its
seed and map, dt, the capture rate, the names of the actor codes and the conventions.
Log times are simulation times (``frame * dt``) in nanoseconds, so a recording is the
same, byte for byte in its messages, whenever it is made.

Crash safety: the file is written in chunks (`chunk_size` bytes before compression); each
chunk is written out when it is complete, so a run killed with SIGKILL leaves a file
readable up to its last complete chunk (`roadsim.capture.reader.read_recording` with
``partial=True``). `close` (also on Ctrl-C, through `roadsim.capture.Capture.close`)
writes the last chunk and the summary.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from roadsim.capture import messages as msg
from roadsim.capture.errors import RecordingError
from roadsim.capture.schemas import (
    ACTOR_STATES_SCHEMA,
    DRIVER_VIEW_SCHEMA,
    SNAPSHOT_SCHEMA,
    encode_actor_states,
    encode_driver_view,
    pose_to_json,
)
from roadsim.capture.snapshot import CaptureInfo, Sample, Snapshot, vehicle_pose

__all__ = ["COMPRESSIONS", "FORMAT_VERSION", "SAMPLE_WRITERS", "Recorder", "metadata_of"]

#: The version of the recording layout (channels, schemas, metadata keys).
FORMAT_VERSION = "1"
#: The name of the metadata record.
METADATA_NAME = "roadsim"
#: Chunk compressions by name.
COMPRESSIONS = ("zstd", "lz4", "none")

CONVENTIONS = (
    "world frame: OpenDRIVE inertial, right-handed, x east, y north, z up, heading "
    "counter-clockwise from x (rad); vehicle and sensor frames: ISO 8855, x forward, "
    "y left, z up; camera optical frames: x right, y down, z forward; SI units (m, s, m/s, "
    "rad); time = frame * dt; log times = simulation time in ns"
)


def metadata_of(info: CaptureInfo) -> dict[str, str]:
    """The ``roadsim`` metadata record of a recording (string values, as MCAP wants)."""
    version = str(getattr(importlib.import_module("roadsim"), "__version__", "unknown"))
    return {
        "format": "roadsim recording",
        "format_version": FORMAT_VERSION,
        "roadsim_version": version,
        "scenario_name": info.scenario_name,
        "scenario": info.scenario_yaml,
        "seed": str(info.seed),
        "map": info.map,
        "dt": repr(info.dt),
        "capture_every": str(info.every),
        "capture_rate_hz": repr(info.rate_hz),
        "model_names": json.dumps(list(info.model_names)),
        "kind_names": json.dumps(list(info.kind_names)),
        "control_names": json.dumps(list(info.control_names)),
        "conventions": CONVENTIONS,
    }


class Recorder:
    """Writes snapshots to an MCAP file (a capture sink; see the module docstring).

    Args:
        path: The file to write.
        overwrite: Replace a file that exists (else that is an error).
        compression: ``zstd`` (the default: the smallest files), ``lz4`` (faster) or
            ``none``.
        chunk_size: Bytes of messages per chunk before compression: what a run killed
            outright may lose at most.
        lanes: Write the lane borders (``/scene/lanes``) when the capture has the road
            network.

    Each recorder has its own Foxglove SDK context: two recorders in one process (two
    simulations) never write into each other's files.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        overwrite: bool = False,
        compression: str = "zstd",
        chunk_size: int = 1 << 20,
        lanes: bool = True,
    ) -> None:
        if compression not in COMPRESSIONS:
            raise RecordingError(
                f"compression: expected {', '.join(COMPRESSIONS)}, got {compression!r}"
            )
        self.path = Path(path)
        self.overwrite = overwrite
        self.compression = compression
        self.chunk_size = int(chunk_size)
        self.lanes = lanes
        self.snapshots = 0
        self._writer: Any = None
        self._context: Any = None
        self._channels: dict[str, Any] = {}
        self._boxes: msg.ActorBoxes | None = None
        self._net: Any = None

    @property
    def bytes_written(self) -> int:
        """The size of the file so far (chunks written out)."""
        return self.path.stat().st_size if self.path.exists() else 0

    # -- the sink interface ----------------------------------------------------------------------

    def open(self, info: CaptureInfo) -> None:
        """Creates the file and writes the metadata record.

        Raises:
            RecordingError: If the file exists (without ``overwrite``) or cannot be made.
        """
        import foxglove
        from foxglove.mcap import MCAPCompression, MCAPWriteOptions

        if self.path.exists() and not self.overwrite:
            raise RecordingError(f"{self.path}: the file exists (overwrite it with --force)")
        if not self.path.parent.is_dir():
            raise RecordingError(f"{self.path}: no folder {self.path.parent}")
        compression = {"zstd": MCAPCompression.Zstd, "lz4": MCAPCompression.Lz4}.get(
            self.compression
        )
        # zstd at level 1: files within a few percent of the default level's, in about
        # half the time; one thread, as the simulation waits for the chunk either way.
        options = MCAPWriteOptions(
            compression=compression,
            compression_level=1 if self.compression == "zstd" else 0,
            chunk_size=self.chunk_size,
            compression_threads=0,
        )
        self._context = foxglove.Context()
        try:
            self._writer = foxglove.open_mcap(
                self.path,
                allow_overwrite=self.overwrite,
                context=self._context,
                writer_options=options,
            )
        except Exception as exc:  # the SDK raises its own error types
            raise RecordingError(f"{self.path}: cannot write the recording: {exc}") from None
        self._writer.write_metadata(METADATA_NAME, metadata_of(info))
        self._boxes = msg.ActorBoxes(info.model_names)
        self._net = info.net if self.lanes else None
        self.snapshots = 0

    def write(self, snapshot: Snapshot) -> None:
        """Writes one snapshot's messages."""
        if self._writer is None:
            raise RecordingError(f"{self.path}: the recorder is not open")
        ns = msg.time_ns(snapshot.time)
        if self._net is not None:
            self._log("/scene/lanes", _fox_schema("SceneUpdate"), msg.lanes_update(self._net, ns), ns)
            self._net = None
        samples = []
        for sample in snapshot.samples.values():
            entry: dict[str, Any] = {
                "name": sample.name,
                "type": sample.type,
                "sensor_id": sample.sensor_id,
                "frame": sample.frame,
                "time": sample.time,
                "pose": pose_to_json(sample.pose),
            }
            extra = _EXTRAS.get(sample.type)
            if extra is not None:
                entry["extra"] = extra(sample.reading)
            samples.append(entry)
        index = {
            "frame": snapshot.frame,
            "time": snapshot.time,
            "ego_id": snapshot.ego_id,
            "actors": len(snapshot.actors),
            "samples": samples,
        }
        self._log("/roadsim/snapshot", SNAPSHOT_SCHEMA, json.dumps(index).encode(), ns)
        actors = snapshot.actors
        self._log(
            "/roadsim/actors",
            ACTOR_STATES_SCHEMA,
            encode_actor_states(actors, snapshot.frame, snapshot.time, snapshot.ego_id),
            ns,
        )
        assert self._boxes is not None
        self._log(
            "/scene/actors",
            _fox_schema("SceneUpdate"),
            self._boxes.encode(actors, snapshot.ego_id, ns),
            ns,
        )
        ego_pose = None
        hits = np.flatnonzero(actors.id == snapshot.ego_id)
        if hits.size:
            k = int(hits[0])
            ego_pose = vehicle_pose(
                float(actors.x[k]), float(actors.y[k]), float(actors.z[k]), float(actors.heading[k])
            )
        if ego_pose is not None or any(s.type != "driver" for s in snapshot.samples.values()):
            self._log(
                "/tf", _fox_schema("FrameTransforms"), msg.transforms(snapshot, ego_pose), ns
            )
        for sample in snapshot.samples.values():
            writer = SAMPLE_WRITERS.get(sample.type)
            if writer is not None:
                writer(self, sample, ns)
        self.snapshots += 1

    def close(self) -> None:
        """Writes the last chunk and the summary, and closes the file (again: nothing)."""
        if self._writer is None:
            return
        writer, self._writer = self._writer, None
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()
        writer.close()
        self._context = None

    def flush(self) -> None:
        """Ends the current chunk and writes it out now."""
        if self._writer is not None:
            self._writer.flush()

    # -- channels ------------------------------------------------------------------------------------

    def _log(self, topic: str, schema: Any, data: bytes, ns: int, **metadata: str) -> None:
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._channels[topic] = self._make_channel(topic, schema, metadata)
        channel.log(data, log_time=ns)

    def _make_channel(self, topic: str, schema: Any, metadata: dict[str, str]) -> Any:
        import foxglove

        if isinstance(schema, dict):  # a JSON Schema: a JSON channel
            return foxglove.Channel(
                topic, schema=schema, context=self._context, metadata=metadata or None
            )
        name, encoding, data = schema
        return foxglove.Channel(
            topic,
            schema=foxglove.Schema(name=name, encoding=encoding, data=data),
            message_encoding=encoding,
            context=self._context,
            metadata=metadata or None,
        )


def _fox_schema(name: str) -> tuple[str, str, bytes]:
    """(name, encoding, data) of a Foxglove schema, e.g. ``SceneUpdate``."""
    import foxglove.messages as fm

    schema = getattr(fm, name).get_schema()
    return schema.name, schema.encoding, bytes(schema.data)


# -- per type of sample ---------------------------------------------------------------------------


def _write_driver(rec: Recorder, sample: Sample, ns: int) -> None:
    rec._log(f"/driver/{sample.name}", DRIVER_VIEW_SCHEMA, encode_driver_view(sample.reading), ns)


def _write_cloud(rec: Recorder, sample: Sample, ns: int) -> None:
    topic = f"/{'lidar' if sample.type == 'lidar' else 'rays'}/{sample.name}"
    rec._log(topic, _fox_schema("PointCloud"), msg.point_cloud(sample), ns, sensor_type=sample.type)


def _write_camera(rec: Recorder, sample: Sample, ns: int) -> None:
    image = sample.reading
    frame = f"sensor/{sample.name}/optical"
    raw = _fox_schema("RawImage")
    layers = {
        "color": image.preview(),
        "hdr": image.color,
        "depth": image.depth,
        "surface": image.surface_ids,
        "instance": image.actor_ids,
    }
    for kind, array in layers.items():
        rec._log(f"/camera/{sample.name}/{kind}", raw, msg.raw_image(array, kind, frame, ns), ns)
    rec._log(
        f"/camera/{sample.name}/calibration",
        _fox_schema("CameraCalibration"),
        msg.camera_calibration(image.model, frame, ns),
        ns,
    )


#: How the recorder writes each type of sample (`roadsim.capture.snapshot.READING_TYPES`):
#: a new kind of sensor adds its function.
SAMPLE_WRITERS: Mapping[str, Callable[[Recorder, Sample, int], None]] = MappingProxyType(
    {
        "driver": _write_driver,
        "lidar": _write_cloud,
        "raytracer": _write_cloud,
        "camera": _write_camera,
    }
)


def _ray_extra(reading: Any) -> dict[str, Any]:
    rays, segments = reading.valid.shape
    return {"rays": int(rays), "bounces": int(segments) - 1, "coordinates": reading.coordinates}


def _lidar_extra(reading: Any) -> dict[str, Any]:
    return {"rays": int(reading.rays)}


def _camera_extra(reading: Any) -> dict[str, Any]:
    m = reading.model
    return {
        "width": int(m.width),
        "height": int(m.height),
        "horizontal_fov_deg": float(m.horizontal_fov_deg),
        "near": float(m.near),
        "far": float(m.far),
        "renderer": str(reading.renderer),
    }


#: What a sample's index entry adds per type (``extra``): what replay needs to rebuild it.
_EXTRAS: Mapping[str, Callable[[Any], dict[str, Any]]] = MappingProxyType(
    {"raytracer": _ray_extra, "lidar": _lidar_extra, "camera": _camera_extra}
)
