"""roadsim's own messages in a recording, and their schemas (so that any MCAP reader can
decode them without roadsim).

- ``roadsim.ActorStates`` (protobuf, `ACTOR_STATES_SCHEMA`): every active actor's state
  at one snapshot, exactly: one packed array per `roadsim.capture.snapshot.ActorStates`
  field, plus the frame, the time and the ego's id.
- ``roadsim.Snapshot`` (JSON, `SNAPSHOT_SCHEMA`): the index of one snapshot: frame, time,
  ego id, and each sample's name, type, sensor id, frame, time and exact pose.
- ``roadsim.DriverView`` (JSON, `DRIVER_VIEW_SCHEMA`): a driver sensor's reading in
  openPASS' camelCase names (`roadsim.sensors.view.DriverView.to_dict`). JSON has no
  infinity: a non-finite number is written as the string ``"inf"``, ``"-inf"`` or
  ``"nan"`` (``distanceToEndOfLane`` is ``"inf"`` beyond the visibility distance).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from types import MappingProxyType
from typing import Any, get_args, get_origin, get_type_hints

import numpy as np
import orjson

from roadsim.capture import protobuf as pb
from roadsim.capture.snapshot import ACTOR_FIELDS, ActorStates
from roadsim.sensors import view as view_module
from roadsim.sensors.mount import Pose
from roadsim.sensors.view import DriverView

__all__ = [
    "ACTOR_STATES_SCHEMA",
    "DRIVER_VIEW_SCHEMA",
    "SNAPSHOT_SCHEMA",
    "actor_wire_dtypes",
    "decode_actor_states",
    "decode_driver_view",
    "driver_view_fields",
    "driver_view_from_fields",
    "driver_view_json",
    "encode_actor_states",
    "encode_driver_view",
    "pose_from_json",
    "pose_to_json",
]

# -- roadsim.ActorStates ------------------------------------------------------------------------

# FieldDescriptorProto types and labels (google/protobuf/descriptor.proto).
_DOUBLE, _UINT64, _BOOL, _SFIXED32, _SFIXED64 = 1, 4, 8, 15, 16
_OPTIONAL, _REPEATED = 1, 3

#: Each `ActorStates` field on the wire: (protobuf type, little-endian numpy dtype): the
#: arrays' own dtypes, so that a column goes out as its bytes, unconverted (the small
#: codes would fit 4 bytes, but converting them cost more than the bytes).
_WIRE: dict[str, tuple[int, str]] = {
    "id": (_SFIXED64, "<i8"),
    "kind": (_SFIXED64, "<i8"),
    "model": (_SFIXED64, "<i8"),
    "control": (_SFIXED64, "<i8"),
    "road": (_SFIXED64, "<i8"),
    "uid": (_SFIXED64, "<i8"),
    "collided": (_BOOL, "u1"),
}
#: The field numbers: frame 1, time 2, ego_id 3, then `ACTOR_FIELDS` from 4 in order.
_FIRST_ACTOR_FIELD = 4


def _field_descriptor(name: str, number: int, kind: int, label: int) -> bytes:
    json_name = name.split("_")[0] + "".join(p.capitalize() for p in name.split("_")[1:])
    return b"".join(
        (
            pb.string(1, name),
            pb.varint_field(3, number),
            pb.varint_field(4, label),
            pb.varint_field(5, kind),
            pb.string(10, json_name),
        )
    )


def _actor_states_descriptor() -> bytes:
    """The FileDescriptorSet of ``roadsim/actor_states.proto`` (proto3), written by hand
    so that roadsim needs no protobuf library: the MCAP schema of ``roadsim.ActorStates``."""
    parts = [
        _field_descriptor("frame", 1, _UINT64, _OPTIONAL),
        _field_descriptor("time", 2, _DOUBLE, _OPTIONAL),
        _field_descriptor("ego_id", 3, _SFIXED64, _OPTIONAL),
    ]
    for k, name in enumerate(ACTOR_FIELDS):
        kind = _WIRE.get(name, (_DOUBLE, "<f8"))[0]
        parts.append(_field_descriptor(name, _FIRST_ACTOR_FIELD + k, kind, _REPEATED))
    message = pb.string(1, "ActorStates") + b"".join(pb.field_bytes(2, p) for p in parts)
    file = b"".join(
        (
            pb.string(1, "roadsim/actor_states.proto"),
            pb.string(2, "roadsim"),
            pb.field_bytes(4, message),
            pb.string(12, "proto3"),
        )
    )
    return pb.field_bytes(1, file)


#: (name, encoding, data) of the ``roadsim.ActorStates`` schema.
ACTOR_STATES_SCHEMA = ("roadsim.ActorStates", "protobuf", _actor_states_descriptor())


#: (field number, wire dtype, tag) of each `ActorStates` field, in order.
_ACTOR_WIRE = tuple(
    (_FIRST_ACTOR_FIELD + k, _WIRE.get(name, (_DOUBLE, "<f8"))[1], pb.tag(_FIRST_ACTOR_FIELD + k, pb.LEN))
    for k, name in enumerate(ACTOR_FIELDS)
)


def actor_wire_dtypes() -> tuple[str, ...]:
    """The little-endian dtype of each `ActorStates` field in ``roadsim.ActorStates``, in
    `ACTOR_FIELDS` order."""
    return tuple(dtype for _, dtype, _ in _ACTOR_WIRE)


def encode_actor_states(actors: ActorStates, frame: int, time: float, ego_id: int) -> bytes:
    """A ``roadsim.ActorStates`` message."""
    parts = [
        pb.varint_field(1, frame),
        pb.double(2, time),
        pb.tag(3, pb.FIXED64),
        int(ego_id).to_bytes(8, "little", signed=True),
    ]
    n = len(actors)
    if n:
        for head, (_, dtype, _), name in zip(_heads(n), _ACTOR_WIRE, ACTOR_FIELDS, strict=True):
            column = getattr(actors, name)
            parts.append(head)
            parts.append(column.tobytes() if _LITTLE else column.astype(dtype).tobytes())
    return b"".join(parts)


_LITTLE = sys.byteorder == "little"


@functools.lru_cache(maxsize=8)
def _heads(n: int) -> tuple[bytes, ...]:
    """Tag and length of each packed column of ``n`` actors (kept: they are the same from
    one snapshot to the next while the number of actors is)."""
    return tuple(
        tag + pb.uvarint(n * np.dtype(dtype).itemsize) for _, dtype, tag in _ACTOR_WIRE
    )


def decode_actor_states(data: bytes) -> tuple[int, float, int, ActorStates]:
    """(frame, time, ego id, states) of a ``roadsim.ActorStates`` message.

    Raises:
        protobuf.DecodeError: For bytes that are not one.
    """
    f = pb.decode(data)
    frame = pb.as_int(pb.first(f, 1, 0))
    time = pb.as_double(pb.first(f, 2))
    raw_ego = pb.first(f, 3)
    ego = int.from_bytes(raw_ego, "little", signed=True) if isinstance(raw_ego, bytes) else 0
    columns: dict[str, Any] = {}
    for k, name in enumerate(ACTOR_FIELDS):
        dtype = _WIRE.get(name, (_DOUBLE, "<f8"))[1]
        blob = b"".join(v for v in f.get(_FIRST_ACTOR_FIELD + k, []) if isinstance(v, bytes))
        values = np.frombuffer(blob, dtype=dtype)
        target = np.bool_ if name == "collided" else (np.int64 if dtype[1] == "i" else np.float64)
        columns[name] = values.astype(target)
    return frame, time, ego, ActorStates(**columns)


# -- roadsim.Snapshot ---------------------------------------------------------------------------


def pose_to_json(pose: Pose) -> dict[str, Any]:
    """A pose as JSON: ``position`` [x, y, z] (m) and ``rotation`` (3 x 3, sensor to
    world, rows); Python's float repr makes it exact."""
    return {
        "position": [float(v) for v in pose.position],
        "rotation": [[float(v) for v in row] for row in pose.rotation],
    }


def pose_from_json(data: dict[str, Any]) -> Pose:
    return Pose(
        np.array(data["position"], dtype=np.float64), np.array(data["rotation"], dtype=np.float64)
    )


_NUMBER_ARRAY = {"type": "array", "items": {"type": "number"}}
#: The JSON Schema of ``roadsim.Snapshot``.
SNAPSHOT_SCHEMA: dict[str, Any] = {
    "title": "roadsim.Snapshot",
    "description": "One snapshot of a roadsim capture: when, and which sensors read it",
    "type": "object",
    "properties": {
        "frame": {"type": "integer"},
        "time": {"type": "number", "description": "simulation time (s)"},
        "ego_id": {"type": "integer", "description": "-1: no ego"},
        "actors": {"type": "integer", "description": "active actors"},
        "samples": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "sensor_id": {"type": "integer"},
                    "frame": {"type": "integer"},
                    "time": {"type": "number"},
                    "pose": {
                        "type": "object",
                        "properties": {
                            "position": _NUMBER_ARRAY,
                            "rotation": {"type": "array", "items": _NUMBER_ARRAY},
                        },
                    },
                    "extra": {"type": "object", "description": "per type (camera model, ray shape)"},
                },
            },
        },
    },
}

# -- roadsim.DriverView -------------------------------------------------------------------------


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _number(value: float) -> float | str:
    if value - value == 0.0:  # finite
        return value
    return "nan" if value != value else ("inf" if value > 0 else "-inf")


def _plan(cls: type) -> tuple[tuple[str, str, Any], ...]:
    """(attribute, camelCase key, what it holds) per field: a nested record class,
    ("list", item class), "float" or None (other plain values)."""
    hints = get_type_hints(cls, vars(view_module))
    out = []
    for f in fields(cls):
        hint = hints[f.name]
        nested: Any = None
        if is_dataclass(hint):
            nested = hint
        elif get_origin(hint) is tuple:
            nested = ("list", get_args(hint)[0])
        elif hint is float:
            nested = "float"
        out.append((f.name, _camel(f.name), nested))
    return tuple(out)


def _plans(root: type) -> dict[type, tuple[tuple[str, str, Any], ...]]:
    """`_plan` of ``root`` and of every record class below it."""
    out: dict[type, tuple[tuple[str, str, Any], ...]] = {}
    todo = [root]
    while todo:
        cls = todo.pop()
        if cls in out:
            continue
        out[cls] = _plan(cls)
        for _, _, nested in out[cls]:
            if isinstance(nested, tuple):
                todo.append(nested[1])
            elif isinstance(nested, type):
                todo.append(nested)
    return out


#: How each record class of a driver view maps to JSON.
_PLANS: Mapping[type, tuple[tuple[str, str, Any], ...]] = MappingProxyType(_plans(DriverView))


def _encoders() -> Mapping[type, Callable[[Any], dict[str, Any]]]:
    """One function per record class that turns a record into its JSON dict, written
    out field by field (as `dataclasses` writes ``__init__``): a generic walk over the
    fields took 140 microseconds a view, about the whole recording's budget for it."""
    names = {cls: f"_encode_{cls.__name__}" for cls in _PLANS}
    lines = []
    for cls, plan in _PLANS.items():
        items = []
        for attr, key, nested in plan:
            if nested is None:
                value = f"r.{attr}"
            elif nested == "float":
                value = f"_number(r.{attr})"
            elif isinstance(nested, tuple):
                value = f"[{names[nested[1]]}(v) for v in r.{attr}]"
            else:
                value = f"{names[nested]}(r.{attr})"
            items.append(f"{key!r}: {value}")
        lines.append(f"def {names[cls]}(r):\n    return {{{', '.join(items)}}}\n")
    namespace: dict[str, Any] = {"_number": _number}
    exec("\n".join(lines), namespace)
    return MappingProxyType({cls: namespace[names[cls]] for cls in _PLANS})


_ENCODERS = _encoders()


def driver_view_json(view: DriverView) -> dict[str, Any]:
    """A driver view as the JSON message's data (`DriverView.to_dict`'s keys, non-finite
    numbers as strings)."""
    return _ENCODERS[DriverView](view)


def encode_driver_view(view: DriverView) -> bytes:
    """A ``roadsim.DriverView`` JSON message (`DriverView.to_dict`'s keys and values).

    orjson writes it: the standard library's encoder took 80 microseconds a view (its
    float formatting), a third of what a whole snapshot may cost."""
    out: bytes = orjson.dumps(_ENCODERS[DriverView](view))
    return out


def _field_codecs() -> tuple[Callable[[DriverView], tuple[Any, ...]], Callable[[Any], DriverView]]:
    """Two functions, written out per record class as `_encoders` writes its: a driver
    view as nested tuples of its fields' values (lists for its tuples of records), and
    the view back from them."""
    lines = []
    for cls, plan in _PLANS.items():
        name = cls.__name__
        values, args = [], []
        for k, (attr, _, nested) in enumerate(plan):
            if nested is None or nested == "float":
                values.append(f"r.{attr}")
                args.append(f"t[{k}]")
            elif isinstance(nested, tuple):
                item = nested[1].__name__
                values.append(f"[_fields_{item}(v) for v in r.{attr}]")
                args.append(f"tuple([_make_{item}(v) for v in t[{k}]])")
            else:
                values.append(f"_fields_{nested.__name__}(r.{attr})")
                args.append(f"_make_{nested.__name__}(t[{k}])")
        lines.append(f"def _fields_{name}(r):\n    return ({', '.join(values)},)\n")
        lines.append(f"def _make_{name}(t):\n    return {name}({', '.join(args)})\n")
    namespace: dict[str, Any] = {cls.__name__: cls for cls in _PLANS}
    exec("\n".join(lines), namespace)
    return namespace["_fields_DriverView"], namespace["_make_DriverView"]


#: A driver view as nested tuples of its fields' values, and back (`_field_codecs`):
#: ``driver_view_from_fields(driver_view_fields(view)) == view``. The tuples pickle in a
#: few microseconds (the view itself in 60, its JSON message takes 15): how a recorder's
#: writer process is handed a view (`roadsim.capture.wire`).
driver_view_fields, driver_view_from_fields = _field_codecs()


def _from_json(cls: type, data: dict[str, Any]) -> Any:
    plan = _PLANS[cls]
    kwargs: dict[str, Any] = {}
    for attr, key, nested in plan:
        value = data[key]
        if nested is None:
            kwargs[attr] = value
        elif nested == "float":
            kwargs[attr] = float(value)
        elif isinstance(nested, tuple):
            kwargs[attr] = tuple(_from_json(nested[1], v) for v in value)
        else:
            kwargs[attr] = _from_json(nested, value)
    return cls(**kwargs)


def decode_driver_view(data: bytes) -> DriverView:
    """A `DriverView` from its ``roadsim.DriverView`` message.

    Raises:
        ValueError: For a message that is not one (bad JSON, a key missing).
    """
    try:
        view = _from_json(DriverView, json.loads(data))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a roadsim.DriverView message: {exc}") from None
    assert isinstance(view, DriverView)
    return view


def _json_schema(cls: type) -> dict[str, Any]:
    hints = get_type_hints(cls, vars(view_module))
    props: dict[str, Any] = {}
    for f in fields(cls):
        hint = hints[f.name]
        if is_dataclass(hint):
            props[_camel(f.name)] = _json_schema(hint)  # type: ignore[arg-type]
        elif get_origin(hint) is tuple:
            props[_camel(f.name)] = {"type": "array", "items": _json_schema(get_args(hint)[0])}
        elif hint is bool:
            props[_camel(f.name)] = {"type": "boolean"}
        elif hint is int:
            props[_camel(f.name)] = {"type": "integer"}
        elif hint is float:
            props[_camel(f.name)] = {"type": ["number", "string"]}
        else:
            props[_camel(f.name)] = {"type": "string"}
    return {"type": "object", "properties": props}


#: The JSON Schema of ``roadsim.DriverView``.
DRIVER_VIEW_SCHEMA: dict[str, Any] = {
    "title": "roadsim.DriverView",
    "description": "A driver sensor's view (openPASS Sensor_Driver): non-finite numbers "
    "as the strings 'inf', '-inf', 'nan'",
    **_json_schema(DriverView),
}
