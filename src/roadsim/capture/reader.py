"""Recordings read back: `read_recording` gives a `Recording`, whose `Recording.snapshots`
are the `Snapshot`s that were recorded (actor states exactly, sensor readings as the
recorder wrote them), without simulating anything.

The file is read sequentially (the ``mcap`` package's stream reader), so a recording
that a killed run left without its summary reads as far as its last complete chunk. Such
a truncated recording is an error unless ``partial=True`` is given; then the snapshots
before the cut are read, and a snapshot the cut split is left out.
"""

from __future__ import annotations

import importlib
import json
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim.capture import messages as msg
from roadsim.capture.errors import RecordingError
from roadsim.capture.protobuf import DecodeError
from roadsim.capture.recorder import FORMAT_VERSION, METADATA_NAME
from roadsim.capture.schemas import decode_actor_states, decode_driver_view, pose_from_json
from roadsim.capture.snapshot import CaptureInfo, Sample, Snapshot
from roadsim.sensors.lidar import PointCloud
from roadsim.sensors.mount import Pose
from roadsim.sensors.raytracer import RayTracerReading

__all__ = [
    "SAMPLE_READERS",
    "ChannelSummary",
    "RecordedImage",
    "Recording",
    "RecordingSummary",
    "read_recording",
]

_MAGIC = b"\x89MCAP0\r\n"


@dataclass(frozen=True, slots=True)
class ChannelSummary:
    """One channel of a recording: its topic, schema and message count."""

    topic: str
    schema: str
    schema_encoding: str
    message_encoding: str
    messages: int


@dataclass(frozen=True, slots=True)
class RecordingSummary:
    """What `roadsim info` prints.

    Attributes:
        path: The file.
        size_bytes: Its size.
        complete: Whether the writer closed it (else it was cut short: a killed run).
        snapshots: Snapshots that can be read.
        first_frame, last_frame: Frames of the first and last snapshot (-1: none).
        start_s, end_s: Their simulation times (s).
        actors_max: The most active actors in one snapshot.
        sensors: Each sensor's type and its samples, by name.
        channels: Every channel.
        metadata: The ``roadsim`` metadata record.
    """

    path: str
    size_bytes: int
    complete: bool
    snapshots: int
    first_frame: int
    last_frame: int
    start_s: float
    end_s: float
    actors_max: int
    sensors: dict[str, tuple[str, int]]
    channels: list[ChannelSummary]
    metadata: dict[str, str]

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s if self.snapshots else 0.0

    def to_dict(self) -> dict[str, Any]:
        meta = {k: v for k, v in self.metadata.items() if k != "scenario"}
        return {
            "path": self.path,
            "size_bytes": self.size_bytes,
            "complete": self.complete,
            "snapshots": self.snapshots,
            "first_frame": self.first_frame,
            "last_frame": self.last_frame,
            "start_s": self.start_s,
            "end_s": self.end_s,
            "duration_s": self.duration_s,
            "actors_max": self.actors_max,
            "sensors": {k: {"type": t, "samples": n} for k, (t, n) in self.sensors.items()},
            "channels": [
                {
                    "topic": c.topic,
                    "schema": c.schema,
                    "schema_encoding": c.schema_encoding,
                    "message_encoding": c.message_encoding,
                    "messages": c.messages,
                }
                for c in self.channels
            ],
            "metadata": meta,
        }

    def to_text(self) -> str:
        m = self.metadata
        rate = float(m.get("capture_rate_hz", "nan"))
        every = m.get("capture_every", "?")
        ticks = "every tick" if every == "1" else f"every {every} ticks"
        lines = [
            f"Recording         {self.path} ({self.size_bytes / 1e6:.2f} MB)",
            "Complete          "
            + ("yes" if self.complete else "no: cut short (the run was killed); read as far as it goes"),
            f"Scenario          {m.get('scenario_name') or '?'} (seed {m.get('seed', '?')}, map {m.get('map', '?')})",
            f"roadsim           {m.get('roadsim_version', '?')} (recording format {m.get('format_version', '?')})",
            f"Snapshots         {self.snapshots} at {rate:g} Hz ({ticks} of {m.get('dt', '?')} s)",
            f"Frames            {self.first_frame} to {self.last_frame}",
            f"Simulated time    {self.start_s:.2f} to {self.end_s:.2f} s ({self.duration_s:.2f} s)",
            f"Actors            up to {self.actors_max} per snapshot",
        ]
        if self.sensors:
            lines.append("Sensors")
            lines += [f"  {name:16s}{kind}, {n} samples" for name, (kind, n) in self.sensors.items()]
        lines.append("Channels")
        width = max((len(c.topic) for c in self.channels), default=0)
        lines += [
            f"  {c.topic:{width}s}  {c.schema} ({c.schema_encoding or c.message_encoding}), {c.messages} messages"
            for c in self.channels
        ]
        return "\n".join(lines)


@dataclass
class _Pending:
    """The messages of one snapshot as they are read."""

    index: dict[str, Any]
    messages: dict[str, bytes] = field(default_factory=dict)


class Recording:
    """A recording made by `roadsim.capture.Recorder` (`read_recording`)."""

    def __init__(self, path: Path, metadata: dict[str, str], complete: bool, partial: bool) -> None:
        self.path = path
        self.metadata = metadata
        self.complete = complete
        self._partial = partial

    @property
    def info(self) -> CaptureInfo:
        """The run it recorded (``net`` None)."""
        m = self.metadata
        return CaptureInfo(
            scenario_name=m.get("scenario_name", ""),
            scenario_yaml=m.get("scenario", ""),
            seed=int(m.get("seed", "0")),
            map=m.get("map", ""),
            dt=float(m.get("dt", "0.05")),
            every=int(m.get("capture_every", "1")),
            model_names=tuple(json.loads(m.get("model_names", "[]"))),
            kind_names=tuple(json.loads(m.get("kind_names", "[]"))),
            control_names=tuple(json.loads(m.get("control_names", "[]"))),
        )

    def snapshots(self) -> Iterator[Snapshot]:
        """The snapshots in order.

        Raises:
            RecordingError: For a message that does not decode (a damaged file).
        """
        for pending in _pending_snapshots(self.path):
            yield _snapshot(self.path, pending)

    def summary(self) -> RecordingSummary:
        """Counts what the recording holds (reads it through)."""
        topics: dict[int, tuple[str, str, str, str]] = {}
        schemas: dict[int, tuple[str, str]] = {}
        counts: dict[int, int] = {}
        snaps = 0
        first = last = -1
        start = end = 0.0
        actors_max = 0
        sensors: dict[str, tuple[str, int]] = {}
        for record in _records(self.path, self._partial):
            kind = type(record).__name__
            if kind == "Schema":
                schemas[record.id] = (record.name, record.encoding)
            elif kind == "Channel":
                name, enc = schemas.get(record.schema_id, ("", ""))
                topics[record.id] = (record.topic, name, enc, record.message_encoding)
            elif kind == "Message":
                counts[record.channel_id] = counts.get(record.channel_id, 0) + 1
                if topics.get(record.channel_id, ("",))[0] == "/roadsim/snapshot":
                    index = json.loads(record.data)
                    snaps += 1
                    first = index["frame"] if first < 0 else first
                    last, end = index["frame"], index["time"]
                    start = index["time"] if snaps == 1 else start
                    actors_max = max(actors_max, int(index.get("actors", 0)))
                    for s in index["samples"]:
                        kind_name, n = sensors.get(s["name"], (s["type"], 0))
                        sensors[s["name"]] = (kind_name, n + 1)
        channels = [
            ChannelSummary(topic, name, enc, menc, counts.get(cid, 0))
            for cid, (topic, name, enc, menc) in sorted(topics.items(), key=lambda kv: kv[1][0])
        ]
        return RecordingSummary(
            str(self.path), self.path.stat().st_size, self.complete, snaps, first, last,
            start, end, actors_max, sensors, channels, dict(self.metadata),
        )  # fmt: skip


def read_recording(path: str | Path, *, partial: bool = False) -> Recording:
    """Opens a recording.

    Args:
        path: An MCAP file written by `roadsim.capture.Recorder`.
        partial: Read a recording that was cut short (a killed run) as far as it goes.

    Raises:
        RecordingError: For a missing file, a file that is no MCAP recording or not
            roadsim's, or a truncated one without ``partial`` (the message says how many
            snapshots it holds).
    """
    p = Path(path)
    if not p.exists():
        raise RecordingError(f"{p}: no such file")
    if p.is_dir():
        raise RecordingError(f"{p}: a folder, not a recording")
    with p.open("rb") as f:
        head = f.read(len(_MAGIC))
        size = f.seek(0, 2)
        f.seek(max(size - len(_MAGIC), 0))
        tail = f.read(len(_MAGIC))
    if head != _MAGIC:
        raise RecordingError(f"{p}: not an MCAP file (it does not start with MCAP's magic bytes)")
    metadata: dict[str, str] | None = None
    try:
        for record in _records(p, partial=True):
            if type(record).__name__ == "Metadata" and record.name == METADATA_NAME:
                metadata = dict(record.metadata)
                break
            if type(record).__name__ == "Message":
                break  # the recorder writes its metadata before any message
    except RecordingError:
        metadata = None
    if metadata is None:
        raise RecordingError(
            f"{p}: an MCAP file, but no roadsim recording (no '{METADATA_NAME}' metadata record)"
        )
    if metadata.get("format_version") != FORMAT_VERSION:
        raise RecordingError(
            f"{p}: recording format {metadata.get('format_version')!r}; this roadsim reads "
            f"format {FORMAT_VERSION!r}"
        )
    complete = tail == _MAGIC and size > 2 * len(_MAGIC)
    recording = Recording(p, metadata, complete, partial)
    if not complete and not partial:
        count = sum(1 for _ in _pending_snapshots(p))
        raise RecordingError(
            f"{p}: the recording is cut short (its writer did not close it: the run was "
            f"killed?); its first {count} snapshots can be read with --partial"
        )
    return recording


# -- reading records --------------------------------------------------------------------------------


def _records(path: Path, partial: bool) -> Iterator[Any]:
    """The file's records in order; at a cut (a truncated file), stop if ``partial``,
    else raise."""
    from mcap.exceptions import McapError
    from mcap.stream_reader import StreamReader

    with path.open("rb") as f:
        reader = StreamReader(f, record_size_limit=1 << 32)
        it = reader.records
        while True:
            try:
                record = next(it)
            except StopIteration:
                return
            except (McapError, struct.error, EOFError, ValueError) as exc:
                if partial:
                    return
                raise RecordingError(f"{path}: the recording is cut short or damaged ({exc!r})") from None
            yield record


def _pending_snapshots(path: Path) -> Iterator[_Pending]:
    """Each snapshot's index and messages; a snapshot whose messages are not all there
    (the last one of a truncated file) is left out."""
    topics: dict[int, str] = {}
    current: _Pending | None = None
    for record in _records(path, partial=True):
        kind = type(record).__name__
        if kind == "Channel":
            topics[record.id] = record.topic
        elif kind == "Message":
            topic = topics.get(record.channel_id, "")
            if topic == "/roadsim/snapshot":
                if current is not None and _whole(current):
                    yield current
                current = _Pending(json.loads(record.data))
            elif current is not None:
                current.messages[topic] = record.data
    if current is not None and _whole(current):
        yield current


def _whole(pending: _Pending) -> bool:
    if "/roadsim/actors" not in pending.messages or "/scene/actors" not in pending.messages:
        return False
    return all(
        all(t in pending.messages for t in _TOPICS[s["type"]](s["name"]))
        for s in pending.index["samples"]
        if s["type"] in _TOPICS
    )


def _snapshot(path: Path, pending: _Pending) -> Snapshot:
    index = pending.index
    try:
        _, _, _, actors = decode_actor_states(pending.messages["/roadsim/actors"])
        samples = {}
        for entry in index["samples"]:
            reader = SAMPLE_READERS.get(entry["type"])
            if reader is None:
                continue
            pose = pose_from_json(entry["pose"])
            reading = reader(entry, pose, pending.messages)
            samples[entry["name"]] = Sample(
                entry["name"], entry["type"], int(entry["sensor_id"]), int(entry["frame"]),
                float(entry["time"]), pose, reading,
            )  # fmt: skip
    except (DecodeError, KeyError, ValueError) as exc:
        raise RecordingError(
            f"{path}: snapshot of frame {index.get('frame')}: a message does not decode ({exc!r})"
        ) from None
    return Snapshot(int(index["frame"]), float(index["time"]), int(index["ego_id"]), actors, samples)


# -- per type of sample ----------------------------------------------------------------------------

_IMAGE_KINDS = ("color", "hdr", "depth", "surface", "instance")

#: The topics each type of sample is written to, by sensor name.
_TOPICS: Mapping[str, Callable[[str], tuple[str, ...]]] = MappingProxyType(
    {
        "driver": lambda name: (f"/driver/{name}",),
        "lidar": lambda name: (f"/lidar/{name}",),
        "raytracer": lambda name: (f"/rays/{name}",),
        "camera": lambda name: tuple(f"/camera/{name}/{k}" for k in _IMAGE_KINDS),
    }
)


def _read_driver(entry: dict[str, Any], pose: Pose, messages: Mapping[str, bytes]) -> Any:
    return decode_driver_view(messages[f"/driver/{entry['name']}"])


def _read_lidar(entry: dict[str, Any], pose: Pose, messages: Mapping[str, bytes]) -> PointCloud:
    c = msg.decode_point_cloud(messages[f"/lidar/{entry['name']}"]).columns
    xyz = np.stack([c["x"], c["y"], c["z"]], axis=1).astype(np.float32)
    return PointCloud(
        entry["name"], int(entry["sensor_id"]), int(entry["frame"]), float(entry["time"]), pose,
        xyz, c["range"], c["intensity"], c["surface_id"].astype(np.uint8),
        c["actor_id"].astype(np.int64), c["lane_uid"].astype(np.int64),
        c["channel"].astype(np.uint16), c["azimuth"], c["time_offset"],
        c["bounce"].astype(np.uint8), int(entry.get("extra", {}).get("rays", 0)),
    )  # fmt: skip


def _read_rays(entry: dict[str, Any], pose: Pose, messages: Mapping[str, bytes]) -> RayTracerReading:
    c = msg.decode_point_cloud(messages[f"/rays/{entry['name']}"]).columns
    extra = entry.get("extra", {})
    rays, segments = int(extra["rays"]), int(extra["bounces"]) + 1

    def grid(*names: str) -> npt.NDArray[Any]:
        out = np.stack([c[n] for n in names], axis=1) if len(names) > 1 else c[names[0]]
        return out.reshape(rays, segments, *out.shape[1:])

    return RayTracerReading(
        entry["name"], int(entry["sensor_id"]), int(entry["frame"]), float(entry["time"]), pose,
        extra.get("coordinates", "world"), grid("x", "y", "z"), grid("nx", "ny", "nz"),
        grid("distance"), grid("surface_id").astype(np.uint8), grid("actor_id").astype(np.int64),
        grid("lane_uid").astype(np.int64), grid("valid").astype(bool),
    )  # fmt: skip


@dataclass(frozen=True, slots=True, eq=False)
class RecordedImage:
    """A camera shot read back where roadsim has no camera class (the attributes of
    ``roadsim.sensors.camera.CameraImage``; ``model`` a namespace of its numbers).

    ``preview`` returns the recorded tone-mapped colour image (at the exposure it was
    recorded with)."""

    name: str
    sensor_id: int
    frame: int
    time: float
    pose: Pose
    model: Any
    renderer: str
    color: npt.NDArray[np.float32]
    depth: npt.NDArray[np.float32]
    surface_ids: npt.NDArray[np.uint8]
    actor_ids: npt.NDArray[np.int32]
    preview_image: npt.NDArray[np.uint8]

    def preview(self, exposure: float = 1.0) -> npt.NDArray[np.uint8]:
        return self.preview_image


@dataclass(frozen=True, slots=True)
class _Model:
    width: int
    height: int
    horizontal_fov_deg: float
    near: float
    far: float


def _read_camera(entry: dict[str, Any], pose: Pose, messages: Mapping[str, bytes]) -> Any:
    name = entry["name"]
    images = {k: msg.decode_raw_image(messages[f"/camera/{name}/{k}"])[1] for k in _IMAGE_KINDS}
    extra = entry.get("extra", {})
    numbers = (
        int(extra["width"]), int(extra["height"]), float(extra["horizontal_fov_deg"]),
        float(extra["near"]), float(extra["far"]),
    )  # fmt: skip
    head = (name, int(entry["sensor_id"]), int(entry["frame"]), float(entry["time"]), pose)
    layers = (images["hdr"], images["depth"], images["surface"], images["instance"])
    try:
        camera = importlib.import_module("roadsim.sensors.camera")
        model_module = importlib.import_module("roadsim.sensors.camera_model")
    except ImportError:
        return RecordedImage(*head, _Model(*numbers), str(extra.get("renderer", "")), *layers, images["color"])
    return camera.CameraImage(
        *head, model_module.CameraModel(*numbers), str(extra.get("renderer", "")), *layers
    )


#: How replay rebuilds each type of sample from its messages: a new kind of sensor adds
#: its function (and its topics to ``_TOPICS``).
SAMPLE_READERS: Mapping[str, Callable[[dict[str, Any], Pose, Mapping[str, bytes]], Any]] = (
    MappingProxyType(
        {"driver": _read_driver, "lidar": _read_lidar, "raytracer": _read_rays, "camera": _read_camera}
    )
)
