"""The Foxglove messages of a recording (https://docs.foxglove.dev/docs/sdk/schemas), as bytes.

- actors: one ``foxglove.SceneUpdate`` per snapshot, a box per active actor
  (`roadsim.capture.boxes`);
- lanes: one ``foxglove.SceneUpdate`` at the start, a line strip per lane border;
- lidar sweeps and ray-tracer hits: ``foxglove.PointCloud`` with every field of the
  reading (`POINT_FIELDS`);
- camera images: ``foxglove.RawImage`` (and ``foxglove.CameraCalibration``);
- sensor and ego frames: ``foxglove.FrameTransforms``.

The Foxglove SDK's message classes encode the messages made once per sensor and
snapshot; the decoders below read them back for replay.

Frames: ``world`` is the OpenDRIVE inertial frame (x east, y north, z up); ``ego`` the
ego's vehicle frame (ISO 8855, at its box centre on the ground); ``sensor/NAME`` a
sensor's frame (ISO 8855); ``sensor/NAME/optical`` a camera's optical frame as Foxglove
draws images (x right, y down, z forward).
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim.capture import protobuf as pb
from roadsim.capture.snapshot import Sample
from roadsim.sensors.mount import Pose

__all__ = [
    "IMAGE_ENCODINGS",
    "OPTICAL_FROM_SENSOR",
    "POINT_FIELDS",
    "decode_point_cloud",
    "decode_raw_image",
    "lanes_update",
    "point_cloud",
    "quaternion",
    "raw_image",
    "rotation_of",
    "transforms",
]

WORLD = "world"


def time_ns(time_s: float) -> int:
    """Simulation time (s) as integer nanoseconds, the log time of a message."""
    return round(time_s * 1e9)


def timestamp_bytes(ns: int) -> bytes:
    """A ``google.protobuf.Timestamp`` (seconds, nanos)."""
    sec, nsec = divmod(ns, 1_000_000_000)
    return pb.varint_field(1, sec) + pb.varint_field(2, nsec)


def quaternion(rotation: npt.NDArray[np.float64]) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a (3, 3) rotation matrix (Shepperd's method), w >= 0."""
    m = rotation.tolist()  # Python floats: the same arithmetic, without numpy's per-scalar cost
    trace = m[0][0] + m[1][1] + m[2][2]
    if trace > 0:
        s = 2.0 * math.sqrt(1.0 + trace)
        w, x = 0.25 * s, (m[2][1] - m[1][2]) / s
        y, z = (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s
    elif m[0][0] > m[1][1] and m[0][0] > m[2][2]:
        s = 2.0 * math.sqrt(1.0 + m[0][0] - m[1][1] - m[2][2])
        w, x = (m[2][1] - m[1][2]) / s, 0.25 * s
        y, z = (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s
    elif m[1][1] > m[2][2]:
        s = 2.0 * math.sqrt(1.0 + m[1][1] - m[0][0] - m[2][2])
        w, x = (m[0][2] - m[2][0]) / s, (m[0][1] + m[1][0]) / s
        y, z = 0.25 * s, (m[1][2] + m[2][1]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + m[2][2] - m[0][0] - m[1][1])
        w, x = (m[1][0] - m[0][1]) / s, (m[0][2] + m[2][0]) / s
        y, z = (m[1][2] + m[2][1]) / s, 0.25 * s
    sign = -1.0 if w < 0 else 1.0
    return float(sign * x), float(sign * y), float(sign * z), float(sign * w)


def rotation_of(x: float, y: float, z: float, w: float) -> npt.NDArray[np.float64]:
    """The (3, 3) rotation matrix of a unit quaternion."""
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


#: The optical frame (x right, y down, z forward) in a camera's sensor frame (x forward,
#: y left, z up): its columns are the optical axes.
OPTICAL_FROM_SENSOR = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def _fox() -> Any:
    import foxglove.messages as fm

    return fm


def _pose_msg(pose: Pose) -> Any:
    fm = _fox()
    x, y, z = (float(v) for v in pose.position)
    qx, qy, qz, qw = quaternion(pose.rotation)
    return fm.Pose(
        position=fm.Vector3(x=x, y=y, z=z), orientation=fm.Quaternion(x=qx, y=qy, z=qz, w=qw)
    )


# -- lanes --------------------------------------------------------------------------------------

#: RGBA of lane borders: those of lanes traffic drives on, and the others.
DRIVING_BORDER_RGBA = (0.85, 0.85, 0.85, 1.0)
OTHER_BORDER_RGBA = (0.45, 0.45, 0.45, 1.0)


def lanes_update(net: Any, ns: int) -> bytes:
    """A ``foxglove.SceneUpdate`` with one entity per lane section: a line strip along
    each lane border (the outer border of each lane and the reference lane's line)."""
    from roadsim.road.mesh import sample_lanes

    fm = _fox()
    lanes = sample_lanes(net)
    stamp = fm.Timestamp(*divmod(ns, 1_000_000_000))
    driving = getattr(net.lanes, "type", None)
    entities = []
    for sec in range(len(lanes.grid_start) - 1):
        block = lanes.section_points(sec)
        if block.shape[0] < 2:
            continue
        first = int(lanes.sec_first_uid[sec])
        lines = []
        for col in range(block.shape[1]):
            uid = first + col
            is_driving = driving is None or str(driving[uid]) == "driving"
            r, g, b, a = DRIVING_BORDER_RGBA if is_driving else OTHER_BORDER_RGBA
            points = [fm.Point3(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in block[:, col]]
            lines.append(
                fm.LinePrimitive(
                    type=fm.LinePrimitiveLineType.LineStrip,
                    thickness=0.12,
                    points=points,
                    color=fm.Color(r=r, g=g, b=b, a=a),
                )
            )
        entities.append(
            fm.SceneEntity(timestamp=stamp, frame_id=WORLD, id=f"section/{sec}", lines=lines)
        )
    out: bytes = fm.SceneUpdate(entities=entities).encode()
    return out


# -- point clouds -------------------------------------------------------------------------------

#: The fields of each kind of point cloud: (name, numpy dtype), packed in this order.
POINT_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "lidar": (
        ("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("range", "<f4"), ("intensity", "<f4"),
        ("azimuth", "<f4"), ("time_offset", "<f4"), ("actor_id", "<i4"), ("lane_uid", "<i4"),
        ("channel", "<u2"), ("surface_id", "u1"), ("bounce", "u1"),
    ),
    "raytracer": (
        ("x", "<f8"), ("y", "<f8"), ("z", "<f8"), ("nx", "<f8"), ("ny", "<f8"), ("nz", "<f8"),
        ("distance", "<f8"), ("actor_id", "<i4"), ("lane_uid", "<i4"), ("surface_id", "u1"),
        ("valid", "u1"),
    ),
}  # fmt: skip

# PackedElementField numeric types (foxglove.PackedElementFieldNumericType).
_NUMERIC = {"u1": 1, "i1": 2, "<u2": 3, "<i2": 4, "<u4": 5, "<i4": 6, "<f4": 7, "<f8": 8}
_NUMERIC_NAMES = {1: "Uint8", 2: "Int8", 3: "Uint16", 4: "Int16", 5: "Uint32", 6: "Int32", 7: "Float32", 8: "Float64"}
_DTYPE_OF = {v: k for k, v in _NUMERIC.items()}


def _lidar_columns(reading: Any) -> dict[str, npt.NDArray[Any]]:
    xyz = reading.xyz
    return {
        "x": xyz[:, 0], "y": xyz[:, 1], "z": xyz[:, 2], "range": reading.range,
        "intensity": reading.intensity, "azimuth": reading.azimuth,
        "time_offset": reading.time_offset, "actor_id": reading.actor_ids,
        "lane_uid": reading.lane_uids, "channel": reading.channel,
        "surface_id": reading.surface_ids, "bounce": reading.bounce,
    }  # fmt: skip


def _ray_columns(reading: Any) -> dict[str, npt.NDArray[Any]]:
    loc = reading.hit_locations.reshape(-1, 3)
    nrm = reading.hit_normals.reshape(-1, 3)
    return {
        "x": loc[:, 0], "y": loc[:, 1], "z": loc[:, 2],
        "nx": nrm[:, 0], "ny": nrm[:, 1], "nz": nrm[:, 2],
        "distance": reading.hit_distances.ravel(), "actor_id": reading.actor_ids.ravel(),
        "lane_uid": reading.lane_uids.ravel(), "surface_id": reading.surface_ids.ravel(),
        "valid": reading.valid.ravel(),
    }  # fmt: skip


_COLUMNS_OF: dict[str, Callable[[Any], dict[str, npt.NDArray[Any]]]] = {
    "lidar": _lidar_columns,
    "raytracer": _ray_columns,
}


def point_cloud(sample: Sample) -> bytes:
    """A ``foxglove.PointCloud`` of a lidar sweep (points in the sensor frame, the cloud's
    pose the sensor's) or of a ray tracer's segments (world frame, every segment of every
    ray in order, NaN where invalid)."""
    fm = _fox()
    spec = POINT_FIELDS[sample.type]
    dtype = np.dtype(list(spec))
    cols = _COLUMNS_OF[sample.type](sample.reading)
    n = len(next(iter(cols.values())))
    rows = np.empty(n, dtype=dtype)
    for name, _ in spec:
        rows[name] = cols[name]
    fields = [
        fm.PackedElementField(
            name=name,
            offset=dtype.fields[name][1],  # type: ignore[index]
            type=getattr(fm.PackedElementFieldNumericType, _NUMERIC_NAMES[_NUMERIC[code]]),
        )
        for name, code in spec
    ]
    in_world = sample.type == "raytracer"
    pose = Pose(np.zeros(3), np.eye(3)) if in_world else sample.pose
    msg = fm.PointCloud(
        timestamp=fm.Timestamp(*divmod(time_ns(sample.time), 1_000_000_000)),
        frame_id=WORLD,
        pose=_pose_msg(pose),
        point_stride=dtype.itemsize,
        fields=fields,
        data=rows.tobytes(),
    )
    out: bytes = msg.encode()
    return out


@dataclass(frozen=True, slots=True)
class DecodedCloud:
    """A point cloud read back: its frame, the pose (position, quaternion) and columns."""

    frame_id: str
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]
    columns: dict[str, npt.NDArray[Any]]


def _vector(raw: int | bytes, names: str) -> tuple[float, ...]:
    f = pb.decode(raw) if isinstance(raw, bytes) else {}
    return tuple(pb.as_double(pb.first(f, k + 1)) for k in range(len(names)))


def decode_point_cloud(data: bytes) -> DecodedCloud:
    """Reads a ``foxglove.PointCloud`` (fields 2 frame_id, 3 pose, 4 point_stride,
    5 fields, 6 data).

    Raises:
        protobuf.DecodeError: For bytes that are not one.
    """
    f = pb.decode(data)
    raw_pose = pb.first(f, 3)
    pose = pb.decode(raw_pose) if isinstance(raw_pose, bytes) else {}
    position = _vector(pb.first(pose, 1), "xyz")
    orientation = _vector(pb.first(pose, 2), "xyzw")
    stride_raw = pb.first(f, 4)
    stride = int.from_bytes(stride_raw, "little") if isinstance(stride_raw, bytes) else 0
    layout = []
    for raw in f.get(5, []):
        pf = pb.decode(raw) if isinstance(raw, bytes) else {}
        offset_raw = pb.first(pf, 2)
        offset = int.from_bytes(offset_raw, "little") if isinstance(offset_raw, bytes) else 0
        layout.append((pb.as_text(pb.first(pf, 1)), offset, _DTYPE_OF[pb.as_int(pb.first(pf, 3))]))
    blob = pb.first(f, 6)
    blob = blob if isinstance(blob, bytes) else b""
    dtype = np.dtype(
        {
            "names": [n for n, _, _ in layout],
            "formats": [c for _, _, c in layout],
            "offsets": [o for _, o, _ in layout],
            "itemsize": stride,
        }
    )
    rows = np.frombuffer(blob, dtype=dtype) if stride else np.zeros(0, dtype=dtype)
    columns = {name: np.ascontiguousarray(rows[name]) for name, _, _ in layout}
    return DecodedCloud(pb.as_text(pb.first(f, 2)), position, orientation, columns)  # type: ignore[arg-type]


# -- images -------------------------------------------------------------------------------------

#: Each camera image: its attribute on the reading, RawImage encoding, numpy dtype and
#: channels. ``color`` is the tone-mapped preview (rgb8) Foxglove shows; ``hdr`` the
#: linear radiance as recorded (32FC3, kept for replay: Foxglove does not draw it);
#: ``instance`` holds actor ids (32SC1, likewise).
IMAGE_ENCODINGS: dict[str, tuple[str, str, int]] = {
    "color": ("rgb8", "u1", 3),
    "hdr": ("32FC3", "<f4", 3),
    "depth": ("32FC1", "<f4", 1),
    "surface": ("mono8", "u1", 1),
    "instance": ("32SC1", "<i4", 1),
}


def raw_image(image: npt.NDArray[Any], kind: str, frame_id: str, ns: int) -> bytes:
    """A ``foxglove.RawImage`` of an (H, W) or (H, W, C) array."""
    fm = _fox()
    encoding, dtype, channels = IMAGE_ENCODINGS[kind]
    data = np.ascontiguousarray(image, dtype=dtype)
    h, w = data.shape[:2]
    msg = fm.RawImage(
        timestamp=fm.Timestamp(*divmod(ns, 1_000_000_000)),
        frame_id=frame_id,
        width=w,
        height=h,
        encoding=encoding,
        step=w * channels * data.dtype.itemsize,
        data=data.tobytes(),
    )
    out: bytes = msg.encode()
    return out


def decode_raw_image(data: bytes) -> tuple[str, npt.NDArray[Any]]:
    """(encoding, image) of a ``foxglove.RawImage`` written by `raw_image`.

    Raises:
        protobuf.DecodeError: For bytes that are not one.
        KeyError: For an encoding `raw_image` does not write.
        ValueError: For data of another size than the image's.
    """
    f = pb.decode(data)

    def fixed(n: int) -> int:
        raw = pb.first(f, n)
        return int.from_bytes(raw, "little") if isinstance(raw, bytes) else 0

    # foxglove.RawImage: 1 timestamp, 2 width, 3 height, 4 encoding, 5 step, 6 data, 7 frame_id.
    w, h = fixed(2), fixed(3)
    encoding = pb.as_text(pb.first(f, 4))
    kinds = [k for k, v in IMAGE_ENCODINGS.items() if v[0] == encoding]
    if not kinds:
        raise KeyError(f"image encoding {encoding!r}")
    kind = kinds[0]
    _, dtype, channels = IMAGE_ENCODINGS[kind]
    blob = pb.first(f, 6)
    image = np.frombuffer(blob if isinstance(blob, bytes) else b"", dtype=dtype)
    shape = (h, w, channels) if channels > 1 else (h, w)
    return encoding, image.reshape(shape).copy()


def camera_calibration(model: Any, frame_id: str, ns: int) -> bytes:
    """A ``foxglove.CameraCalibration`` of a pinhole model (no distortion)."""
    fm = _fox()
    k = [float(v) for v in np.asarray(model.matrix()).ravel()]
    p = [k[0], k[1], k[2], 0.0, k[3], k[4], k[5], 0.0, k[6], k[7], k[8], 0.0]
    msg = fm.CameraCalibration(
        timestamp=fm.Timestamp(*divmod(ns, 1_000_000_000)),
        frame_id=frame_id,
        width=int(model.width),
        height=int(model.height),
        distortion_model="plumb_bob",
        D=[0.0] * 5,
        K=k,
        R=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        P=p,
    )
    out: bytes = msg.encode()
    return out


# -- frames -------------------------------------------------------------------------------------


# A Vector3 (fields 1 to 3) and a Quaternion (1 to 4) of doubles: each field its tag byte
# (number << 3 | 1) and 8 little-endian bytes.
_VECTOR3 = struct.Struct("<BdBdBd")
_QUATERNION = struct.Struct("<BdBdBdBd")
_TRANSLATION = pb.tag(4, pb.LEN) + pb.uvarint(_VECTOR3.size)
_ROTATION = pb.tag(5, pb.LEN) + pb.uvarint(_QUATERNION.size)


@functools.lru_cache(maxsize=64)
def _frames(parent: str, child: str) -> bytes:
    """FrameTransform's parent and child frame ids (fields 2 and 3)."""
    return pb.string(2, parent) + pb.string(3, child)


def transforms(
    time: float, sensors: Sequence[tuple[str, str, Pose]], ego_pose: Pose | None
) -> bytes:
    """A ``foxglove.FrameTransforms`` at ``time`` (s): world to ``ego``, world to each
    scene sensor's ``sensor/NAME`` (``sensors``: name, type, pose; driver sensors are
    left out), and for a camera ``sensor/NAME`` to ``sensor/NAME/optical``.

    Written with `roadsim.capture.protobuf` (FrameTransform: 1 timestamp, 2 parent, 3 child,
    4 translation, 5 rotation): the SDK's objects cost 40 microseconds for the ego's
    transform alone, every tick."""
    stamp = pb.field_bytes(1, timestamp_bytes(time_ns(time)))

    def transform(parent: str, child: str, pose: Pose) -> bytes:
        x, y, z = pose.position.tolist()
        qx, qy, qz, qw = quaternion(pose.rotation)
        translation = _VECTOR3.pack(0x09, x, 0x11, y, 0x19, z)
        rotation = _QUATERNION.pack(0x09, qx, 0x11, qy, 0x19, qz, 0x21, qw)
        body = stamp + _frames(parent, child) + _TRANSLATION + translation + _ROTATION + rotation
        return pb.field_bytes(1, body)

    out = []
    if ego_pose is not None:
        out.append(transform(WORLD, "ego", ego_pose))
    for name, kind, pose in sensors:
        if kind == "driver":
            continue
        frame = f"sensor/{name}"
        out.append(transform(WORLD, frame, pose))
        if kind == "camera":
            optical = Pose(np.zeros(3), OPTICAL_FROM_SENSOR)
            out.append(transform(frame, f"{frame}/optical", optical))
    return b"".join(out)
