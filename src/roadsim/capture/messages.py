"""The Foxglove messages of a recording (https://docs.foxglove.dev/docs/sdk/schemas), as bytes.

- actors: one ``foxglove.SceneUpdate`` per snapshot, a box (``CubePrimitive``) per active
  actor, entity id its actor id, in the world frame; it deletes the previous boxes first.
  Encoded here on numpy (`ActorBoxes`, see `roadsim.capture.protobuf` for why);
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

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim.capture import protobuf as pb
from roadsim.capture.snapshot import ActorStates, Sample
from roadsim.sensors.mount import Pose
from roadsim.world.state import SCRIPTED_OBJECT, STATIC_OBJECT

__all__ = [
    "IMAGE_ENCODINGS",
    "OPTICAL_FROM_SENSOR",
    "POINT_FIELDS",
    "ActorBoxes",
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
    m = rotation
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 2.0 * math.sqrt(1.0 + trace)
        w, x = 0.25 * s, (m[2, 1] - m[1, 2]) / s
        y, z = (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        w, x = (m[2, 1] - m[1, 2]) / s, 0.25 * s
        y, z = (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        w, x = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s
        y, z = 0.25 * s, (m[1, 2] + m[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        w, x = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s
        y, z = (m[1, 2] + m[2, 1]) / s, 0.25 * s
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


# -- actors -------------------------------------------------------------------------------------

#: RGBA of the ego's box, of collided actors, of static and of scripted objects.
EGO_RGBA = (1.0, 0.55, 0.0, 1.0)
COLLIDED_RGBA = (0.9, 0.1, 0.1, 1.0)
STATIC_RGBA = (0.6, 0.6, 0.6, 1.0)
SCRIPTED_RGBA = (0.3, 0.75, 0.3, 1.0)
#: RGBA of vehicles by model name (others: `OTHER_RGBA`).
MODEL_RGBA = {"car": (0.3, 0.5, 0.9, 1.0), "truck": (0.25, 0.3, 0.6, 1.0), "bus": (0.2, 0.6, 0.65, 1.0)}
OTHER_RGBA = (0.5, 0.5, 0.8, 1.0)

# One part of a message's layout: constant bytes, or the name of a float64 column.
_Part = bytes | str


def _layout(parts: Sequence[_Part], formats: dict[str, str]) -> tuple[np.dtype[Any], bytes]:
    """A packed structured dtype laying the parts out in order (a named column's format
    from ``formats``, float64 by default), and a row with its constants filled in."""
    merged: list[_Part] = []
    for part in parts:
        if isinstance(part, bytes) and merged and isinstance(merged[-1], bytes):
            merged[-1] += part
        else:
            merged.append(part)
    names: list[tuple[str, Any]] = []
    for k, part in enumerate(merged):
        if isinstance(part, bytes):
            names.append((f"_c{k}", ("u1", (len(part),))))
        else:
            names.append((part, formats.get(part, "<f8")))
    dtype = np.dtype(names)
    row = np.zeros(1, dtype=dtype)
    for k, part in enumerate(merged):
        if isinstance(part, bytes):
            row[f"_c{k}"] = np.frombuffer(part, dtype=np.uint8)
    return dtype, row.tobytes()


def _digit_table(width: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """The decimal digits of every id below 10 ** width as ASCII, left-aligned in
    ``width`` bytes (zeros after), and their counts."""
    ids = np.arange(10**width, dtype=np.int64)
    count = (1 + np.searchsorted(10 ** np.arange(1, width, dtype=np.int64), ids, side="right")).astype(np.uint8)
    slot = np.arange(width)
    power = count.astype(np.int64)[:, None] - 1 - slot  # the power of ten of each slot
    digits = ids[:, None] // 10 ** np.maximum(power, 0) % 10 + 48
    return np.where(power >= 0, digits, 0).astype(np.uint8), count


# Ids of up to 5 digits (100,000 actors over a run) are looked up: integer division per
# digit would cost more than the rest of the encoding.
_TABLE_WIDTH = 5
_DIGITS, _DIGIT_COUNT = _digit_table(_TABLE_WIDTH)
_MAX_ID_WIDTH = 19  # int64
_COLUMNS = ("x", "y", "z", "qz", "qw", "l", "w", "h", "r", "g", "b", "a")


class ActorBoxes:
    """Encodes `ActorStates` as a ``foxglove.SceneUpdate`` of boxes, on numpy.

    Every entity is laid out in one structured array, its id (with room for as many digits
    as the longest) last, and the bytes an id of fewer digits leaves over are cut off as
    the rows are copied out: a handful of numpy operations for all actors.

    Args:
        model_names: The name of each ``model`` code.
    """

    def __init__(self, model_names: Sequence[str]) -> None:
        models = [MODEL_RGBA.get(name, OTHER_RGBA) for name in model_names] or [OTHER_RGBA]
        self._models = len(models)
        self._rgba = np.array([*models, STATIC_RGBA, SCRIPTED_RGBA, EGO_RGBA, COLLIDED_RGBA])
        self._layouts: dict[tuple[int, int], tuple[np.dtype[Any], bytes, int]] = {}

    def colors(self, actors: ActorStates, ego_id: int) -> npt.NDArray[np.float64]:
        """(N, 4) RGBA of each actor's box."""
        return self._rgba[self._color_codes(actors, ego_id)]

    def _color_codes(self, actors: ActorStates, ego_id: int) -> npt.NDArray[np.intp]:
        """Each actor's row of ``_rgba``: its model's, or a static object's, a scripted
        object's, the ego's, a collided actor's."""
        nm = self._models
        code = np.minimum(actors.model, nm - 1)
        code[actors.kind == STATIC_OBJECT] = nm
        code[actors.kind == SCRIPTED_OBJECT] = nm + 1
        k = int(np.searchsorted(actors.id, ego_id))
        if k < len(actors) and actors.id[k] == ego_id:
            code[k] = nm + 2
        code[actors.collided] = nm + 3
        return code

    @staticmethod
    def _digits(ids: npt.NDArray[np.int64], width: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """(N, width) left-aligned ASCII digits of each id, and their counts."""
        if width <= _TABLE_WIDTH:
            return _DIGITS[ids, :width], _DIGIT_COUNT[ids]
        count = (1 + np.searchsorted(10 ** np.arange(1, _MAX_ID_WIDTH, dtype=np.int64), ids, side="right")).astype(np.uint8)
        power = count.astype(np.int64)[:, None] - 1 - np.arange(width)
        digits = ids[:, None] // 10 ** np.maximum(power, 0) % 10 + 48
        return np.where(power >= 0, digits, 0).astype(np.uint8), count

    def _entity_layout(self, width: int, stamp_len: int) -> tuple[np.dtype[Any], bytes, int]:
        """The layout of an entity whose id has room for ``width`` digits, with a
        timestamp of ``stamp_len`` bytes; the length of its body without the id's digits."""
        key = (width, stamp_len)
        found = self._layouts.get(key)
        if found is not None:
            return found
        tag = pb.tag
        vec: list[_Part] = [tag(1, 1), "x", tag(2, 1), "y", tag(3, 1), "z"]
        quat: list[_Part] = [tag(3, 1), "qz", tag(4, 1), "qw"]  # x and y are 0: a turn about z
        pose: list[_Part] = [tag(1, 2), bytes([27]), *vec, tag(2, 2), bytes([18]), *quat]
        size: list[_Part] = [tag(1, 1), "l", tag(2, 1), "w", tag(3, 1), "h"]
        color: list[_Part] = [tag(1, 1), "r", tag(2, 1), "g", tag(3, 1), "b", tag(4, 1), "a"]
        cube: list[_Part] = [tag(1, 2), bytes([49]), *pose, tag(2, 2), bytes([27]), *size, tag(3, 2), bytes([36]), *color]
        body: list[_Part] = [
            tag(1, 2) + pb.uvarint(stamp_len),  # timestamp
            "stamp",
            pb.string(2, WORLD),  # frame_id
            tag(8, 2) + bytes([118]),  # cubes
            *cube,
            tag(3, 2),  # id, last: its length and digits vary
            "id_len",
            "id",
        ]
        sizes = {"stamp": stamp_len, "id_len": 1, "id": 0}
        fixed = sum(len(p) if isinstance(p, bytes) else sizes.get(p, 8) for p in body)
        # Each entity is SceneUpdate's field 2: its tag, then its length as a 2-byte varint
        # (every entity is 128 bytes or more, and far below 16 KiB).
        dtype, template = _layout(
            [tag(2, 2), "length", *body],
            {"length": "2u1", "stamp": f"S{stamp_len}", "id_len": "u1", "id": f"{width}u1"},
        )
        out = (dtype, template, fixed)
        self._layouts[key] = out
        return out

    def encode(self, actors: ActorStates, ego_id: int, ns: int) -> bytes:
        """The SceneUpdate: delete every box, then one box per actor (ids in order)."""
        stamp = timestamp_bytes(ns)
        deletion = pb.field_bytes(1, pb.field_bytes(1, stamp) + pb.varint_field(2, 1))
        n = len(actors)
        if n == 0:
            return deletion
        ids = actors.id
        width = len(str(int(ids.max()))) if n else 1
        digits, count = self._digits(ids, width)
        dtype, template, fixed = self._entity_layout(width, len(stamp))
        rows = np.empty(n, dtype=dtype)
        rows.view(np.uint8).reshape(n, -1)[:] = np.frombuffer(template, dtype=np.uint8)
        length = fixed + count.astype(np.int64)
        rows["length"][:, 0] = (length & 0x7F) | 0x80
        rows["length"][:, 1] = length >> 7
        rows["stamp"] = stamp
        rows["id_len"] = count
        rows["id"] = digits
        rgba = self._rgba[self._color_codes(actors, ego_id)]
        half = 0.5 * actors.heading
        rows["x"] = actors.x
        rows["y"] = actors.y
        rows["z"] = actors.z + 0.5 * actors.height  # the box's centre, not its base
        rows["qz"] = np.sin(half)
        rows["qw"] = np.cos(half)
        rows["l"] = actors.length
        rows["w"] = actors.width
        rows["h"] = actors.height
        rows["r"] = rgba[:, 0]
        rows["g"] = rgba[:, 1]
        rows["b"] = rgba[:, 2]
        rows["a"] = rgba[:, 3]
        data = rows.view(np.uint8).reshape(n, -1)
        if count[0] == width:
            return deletion + data.tobytes()
        # Cut the bytes shorter ids leave over: ids are sorted, so those of one length are
        # one run of rows.
        parts = [deletion]
        bounds = (np.flatnonzero(np.diff(count)) + 1).tolist()
        for a, b in zip([0, *bounds], [*bounds, n], strict=True):
            parts.append(data[a:b, : data.shape[1] - width + int(count[a])].tobytes())
        return b"".join(parts)


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
        x, y, z = (float(v) for v in pose.position)
        qx, qy, qz, qw = quaternion(pose.rotation)
        translation = pb.double(1, x) + pb.double(2, y) + pb.double(3, z)
        rotation = pb.double(1, qx) + pb.double(2, qy) + pb.double(3, qz) + pb.double(4, qw)
        body = b"".join(
            (
                stamp,
                pb.string(2, parent),
                pb.string(3, child),
                pb.field_bytes(4, translation),
                pb.field_bytes(5, rotation),
            )
        )
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
