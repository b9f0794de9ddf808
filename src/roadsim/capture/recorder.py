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
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from roadsim.capture import messages as msg
from roadsim.capture.boxes import ActorBoxes
from roadsim.capture.errors import RecordingError
from roadsim.capture.schemas import (
    ACTOR_STATES_SCHEMA,
    DRIVER_VIEW_SCHEMA,
    SNAPSHOT_SCHEMA,
    decode_actor_states,
    encode_actor_states,
    encode_driver_view,
    pose_to_json,
)
from roadsim.capture.snapshot import ActorStates, CaptureInfo, Sample, Snapshot, vehicle_pose
from roadsim.sensors.mount import Pose

if TYPE_CHECKING:
    from roadsim.capture.writer_process import WriterProcess

__all__ = [
    "COMPRESSIONS",
    "FORMAT_VERSION",
    "SAMPLE_PAYLOADS",
    "SAMPLE_WRITERS",
    "McapWriter",
    "Packet",
    "Recorder",
    "index_message",
    "metadata_of",
    "packet_of",
    "sample_entry",
    "sample_extra",
    "sample_payload",
]

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


@dataclass(frozen=True, slots=True, eq=False)
class Packet:
    """One snapshot, ready for the writer: what is cheap to encode already encoded, the
    rest (scene sensors' readings) as they are.

    Attributes:
        frame, time, ego_id: The snapshot's.
        index: The ``roadsim.Snapshot`` message.
        states: The ``roadsim.ActorStates`` message.
        sensors: (name, type, pose) of every sample, for the frame transforms.
        samples: (name, type, payload) of every sample: `SAMPLE_PAYLOADS` of it.
    """

    frame: int
    time: float
    ego_id: int
    index: bytes
    states: bytes
    sensors: list[tuple[str, str, Pose]]
    samples: list[tuple[str, str, Any]]


def packet_of(snapshot: Snapshot) -> Packet:
    """A snapshot as the writer takes it (`Packet`)."""
    entries = [
        sample_entry(s.name, s.type, s.sensor_id, s.frame, s.time, s.pose, sample_extra(s))
        for s in snapshot.samples.values()
    ]
    return Packet(
        snapshot.frame,
        snapshot.time,
        snapshot.ego_id,
        index_message(snapshot.frame, snapshot.time, snapshot.ego_id, len(snapshot.actors), entries),
        encode_actor_states(snapshot.actors, snapshot.frame, snapshot.time, snapshot.ego_id),
        [(s.name, s.type, s.pose) for s in snapshot.samples.values()],
        [
            (s.name, s.type, sample_payload(s))
            for s in snapshot.samples.values()
            if s.type in SAMPLE_WRITERS
        ],
    )


def sample_extra(sample: Sample) -> dict[str, Any] | None:
    """What a sample's index entry adds for its type (None: nothing)."""
    extra = _EXTRAS.get(sample.type)
    return None if extra is None else extra(sample.reading)


def sample_payload(sample: Sample) -> Any:
    """What the writer takes of a sample: `SAMPLE_PAYLOADS` of it (default: the sample)."""
    return SAMPLE_PAYLOADS.get(sample.type, _as_is)(sample)


def sample_entry(
    name: str,
    kind: str,
    sensor_id: int,
    frame: int,
    time: float,
    pose: Pose,
    extra: dict[str, Any] | None,
) -> dict[str, Any]:
    """A sample's entry in the ``roadsim.Snapshot`` message."""
    entry: dict[str, Any] = {
        "name": name,
        "type": kind,
        "sensor_id": sensor_id,
        "frame": frame,
        "time": time,
        "pose": pose_to_json(pose),
    }
    if extra is not None:
        entry["extra"] = extra
    return entry


def index_message(
    frame: int, time: float, ego_id: int, actors: int, entries: list[dict[str, Any]]
) -> bytes:
    """The ``roadsim.Snapshot`` message (JSON): the frame, its time, the ego, the number
    of actors and each sample's `sample_entry`."""
    index = {"frame": frame, "time": time, "ego_id": ego_id, "actors": actors, "samples": entries}
    out: bytes = orjson.dumps(index)
    return out


def _as_is(sample: Sample) -> Any:
    return sample


class McapWriter:
    """Writes packets into an MCAP file with the Foxglove SDK (in this process or in the
    recorder's writer process)."""

    def __init__(self, path: Path, overwrite: bool, compression: str, chunk_size: int) -> None:
        self.path = path
        self.overwrite = overwrite
        self.compression = compression
        self.chunk_size = chunk_size
        self.snapshots = 0
        self._writer: Any = None
        self._context: Any = None
        self._channels: dict[str, Any] = {}
        self._boxes: ActorBoxes | None = None
        self._lanes: bytes | None = None

    def open(self, info: CaptureInfo, lanes: bytes | None) -> None:
        import foxglove
        from foxglove.mcap import MCAPCompression, MCAPWriteOptions

        _check_path(self.path, self.overwrite)
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
        self._boxes = ActorBoxes(info.model_names)
        self._lanes = lanes
        self.snapshots = 0

    def write(self, packet: Packet, actors: ActorStates | None = None) -> None:
        """Writes a packet; ``actors`` are its states where they are at hand (else they
        are decoded from the packet)."""
        ns = msg.time_ns(packet.time)
        if self._lanes is not None:
            self.log("/scene/lanes", "SceneUpdate", self._lanes, ns)
            self._lanes = None
        self.log("/roadsim/snapshot", SNAPSHOT_SCHEMA, packet.index, ns)
        self.log("/roadsim/actors", ACTOR_STATES_SCHEMA, packet.states, ns)
        if actors is None:
            _, _, _, actors = decode_actor_states(packet.states)
        assert self._boxes is not None
        boxes = self._boxes.encode(actors, packet.ego_id, ns)
        self.log("/scene/actors", "SceneUpdate", boxes, ns)
        ego_pose = None
        hits = np.flatnonzero(actors.id == packet.ego_id)
        if hits.size:
            k = int(hits[0])
            ego_pose = vehicle_pose(
                float(actors.x[k]), float(actors.y[k]), float(actors.z[k]), float(actors.heading[k])
            )
        if ego_pose is not None or any(kind != "driver" for _, kind, _ in packet.sensors):
            tf = msg.transforms(packet.time, packet.sensors, ego_pose)
            self.log("/tf", "FrameTransforms", tf, ns)
        for name, kind, payload in packet.samples:
            SAMPLE_WRITERS[kind](self, name, kind, payload, ns)
        self.snapshots += 1

    def close(self) -> None:
        if self._writer is None:
            return
        writer, self._writer = self._writer, None
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()
        writer.close()
        self._context = None

    def log(self, topic: str, schema: Any, data: bytes, ns: int, **metadata: str) -> None:
        """Logs a message on a topic, made on first use with ``schema``: a JSON Schema
        (dict), (name, encoding, data), or the name of a Foxglove schema."""
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._channels[topic] = self._make_channel(topic, schema, metadata)
        channel.log(data, log_time=ns)

    def _make_channel(self, topic: str, schema: Any, metadata: dict[str, str]) -> Any:
        import foxglove

        if isinstance(schema, str):
            schema = _fox_schema(schema)
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


def _check_path(path: Path, overwrite: bool) -> None:
    if path.exists() and not overwrite:
        raise RecordingError(f"{path}: the file exists (overwrite it with --force)")
    if not path.parent.is_dir():
        raise RecordingError(f"{path}: no folder {path.parent}")


class Recorder:
    """Writes snapshots to an MCAP file (a capture sink; see the module docstring).

    Args:
        path: The file to write.
        overwrite: Replace a file that exists (else that is an error).
        compression: ``zstd`` (the default: the smallest files), ``lz4`` or ``none``.
        chunk_size: Bytes of messages per chunk before compression: what a run killed
            outright may lose at most.
        lanes: Write the lane borders (``/scene/lanes``) when the capture has the road
            network.
        background: Write in a process of its own. The simulation then only takes the
            snapshot (the actors' states gathered into one block) and hands it over as
            one frame (`roadsim.capture.wire`); the writer process encodes every message
            (actor states, index, boxes, driver views), compresses and writes, on another
            core. That pays where a core is free; on a machine whose cores are all busy
            (the shared 2-core machine of benchmarks/bench_record.py) passing every
            snapshot to another process costs more than writing it here, which is the
            default. ``write`` blocks when the writer falls behind, so that nothing is
            dropped; if this process dies, the writer still finishes the file.

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
        background: bool = False,
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
        self.background = background
        self.snapshots = 0
        self._local: McapWriter | None = None
        self._worker: WriterProcess | None = None

    @property
    def bytes_written(self) -> int:
        """The size of the file so far (chunks written out)."""
        return self.path.stat().st_size if self.path.exists() else 0

    def open(self, info: CaptureInfo) -> None:
        """Creates the file and writes the metadata record (starting the writer process).

        Raises:
            RecordingError: If the file exists (without ``overwrite``) or cannot be made.
        """
        _check_path(self.path, self.overwrite)
        lanes = None
        if self.lanes and info.net is not None:
            lanes = msg.lanes_update(info.net, 0)
        info = replace(info, net=None)
        self.snapshots = 0
        if self.background:
            from roadsim.capture.writer_process import WriterProcess

            self._worker = WriterProcess(self.path, self.overwrite, self.compression, self.chunk_size)
            self._worker.open(info, lanes)
        else:
            self._local = McapWriter(self.path, self.overwrite, self.compression, self.chunk_size)
            self._local.open(info, lanes)

    def write(self, snapshot: Snapshot) -> None:
        """Writes one snapshot's messages.

        Raises:
            RecordingError: If the recorder is not open, or the writer failed.
        """
        if self._worker is not None:
            self._worker.write(snapshot)
        elif self._local is not None:
            self._local.write(packet_of(snapshot), snapshot.actors)
        else:
            raise RecordingError(f"{self.path}: the recorder is not open")
        self.snapshots += 1

    def close(self) -> None:
        """Writes the last chunk and the summary, and closes the file (again: nothing).

        Raises:
            RecordingError: If the writer failed.
        """
        worker, self._worker = self._worker, None
        local, self._local = self._local, None
        if worker is not None:
            worker.close()
        if local is not None:
            local.close()


def _fox_schema(name: str) -> tuple[str, str, bytes]:
    """(name, encoding, data) of a Foxglove schema, e.g. ``SceneUpdate``."""
    import foxglove.messages as fm

    schema = getattr(fm, name).get_schema()
    return schema.name, schema.encoding, bytes(schema.data)


# -- per type of sample ---------------------------------------------------------------------------


def _driver_payload(sample: Sample) -> bytes:
    return encode_driver_view(sample.reading)


def _write_driver(w: McapWriter, name: str, kind: str, payload: Any, ns: int) -> None:
    w.log(f"/driver/{name}", DRIVER_VIEW_SCHEMA, payload, ns)


def _write_cloud(w: McapWriter, name: str, kind: str, payload: Any, ns: int) -> None:
    topic = f"/{'lidar' if kind == 'lidar' else 'rays'}/{name}"
    w.log(topic, "PointCloud", msg.point_cloud(payload), ns, sensor_type=kind)


def _write_camera(w: McapWriter, name: str, kind: str, payload: Any, ns: int) -> None:
    image = payload.reading
    frame = f"sensor/{name}/optical"
    raw = "RawImage"
    layers = {
        "color": image.preview(),
        "hdr": image.color,
        "depth": image.depth,
        "surface": image.surface_ids,
        "instance": image.actor_ids,
    }
    for layer, array in layers.items():
        w.log(f"/camera/{name}/{layer}", raw, msg.raw_image(array, layer, frame, ns), ns)
    w.log(
        f"/camera/{name}/calibration",
        "CameraCalibration",
        msg.camera_calibration(image.model, frame, ns),
        ns,
    )


#: What the simulation's process hands the writer for each type of sample (default: the
#: sample itself): a driver view is encoded at once (pickling the view would cost more).
SAMPLE_PAYLOADS: Mapping[str, Callable[[Sample], Any]] = MappingProxyType(
    {"driver": _driver_payload}
)

#: How the writer writes each type of sample (`roadsim.capture.snapshot.READING_TYPES`),
#: from its payload: a new kind of sensor adds its function.
SAMPLE_WRITERS: Mapping[str, Callable[[McapWriter, str, str, Any, int], None]] = (
    MappingProxyType(
        {
            "driver": _write_driver,
            "lidar": _write_cloud,
            "raytracer": _write_cloud,
            "camera": _write_camera,
        }
    )
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
