"""How a `roadsim.capture.Recorder` hands a snapshot to its writer process
(`roadsim.capture.writer_process`): one frame of bytes that the simulation's process
only copies into, and from which the writer makes the `Packet` that `packet_of` would
have made, byte for byte.

The simulation's thread thus hands over the actors' columns as `ActorStates.of`
gathered them (its block, laid out as the frame's columns) and leaves the
``roadsim.ActorStates`` message, the ``roadsim.Snapshot`` index and the boxes to the
writer. A driver view goes as the nested tuples of its fields' values, pickled
(`HANDOVERS`), from which the writer makes the view again and encodes its JSON message:
half the time of encoding that message on the simulation's side, a tenth of pickling the
view.

Layout (little-endian)::

    head      frame i8, time f8, ego_id i8, actors u4 (N), samples u4 (S), meta u4 (bytes),
              4 bytes of padding
    columns   each `ActorStates` field in `ACTOR_FIELDS` order: N values of its dtype
              (`COLUMN_DTYPES`)
    poses     S x 12 f8: each sample's position, then its rotation row by row
    meta      JSON, one list per sample: [name, type, sensor_id, frame, time, extra,
              payload form, payload bytes]; the form is "bytes", "pickle", "handover"
              or null (none)
    payloads  each sample's payload, in order: bytes as they are; a `HANDOVERS` type's
              as its handover makes it; anything else (a scene sensor's `Sample`, whose
              arrays are most of it) pickled, between two processes of the same Python
              and roadsim (never in a recording)
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import orjson

from roadsim.capture.recorder import (
    SAMPLE_WRITERS,
    Packet,
    index_message,
    sample_entry,
    sample_extra,
    sample_payload,
)
from roadsim.capture.schemas import (
    actor_wire_dtypes,
    driver_view_fields,
    driver_view_from_fields,
    encode_actor_states,
    encode_driver_view,
)
from roadsim.capture.snapshot import ACTOR_FIELDS, ActorStates, Sample, Snapshot
from roadsim.capture.snapshot import COLUMN_DTYPES as BLOCK_DTYPES
from roadsim.sensors.mount import Pose

__all__ = ["COLUMN_DTYPES", "HANDOVERS", "WireError", "decode", "encode"]

# Four bytes of padding: the columns start 8-byte aligned (a bytes object's data is),
# and numpy works slower on misaligned arrays.
_HEAD = struct.Struct("<qdqIII4x")
_POSE = struct.Struct("<12d")

#: The dtype of each `ActorStates` column on the wire: the wire dtype of its
#: ``roadsim.ActorStates`` field, with ``collided`` as numpy's bool (the same bytes).
COLUMN_DTYPES: Mapping[str, np.dtype[Any]] = MappingProxyType(
    {
        name: np.dtype(np.bool_) if wire == "u1" else np.dtype(wire)
        for name, wire in zip(ACTOR_FIELDS, actor_wire_dtypes(), strict=True)
    }
)

#: `ActorStates.block` is the wire's columns as they are (on a little-endian machine).
_BLOCK_IS_WIRE = dict(COLUMN_DTYPES) == dict(BLOCK_DTYPES)


def _driver_to_wire(sample: Sample) -> bytes:
    return pickle.dumps(driver_view_fields(sample.reading), protocol=pickle.HIGHEST_PROTOCOL)


def _driver_from_wire(payload: bytes) -> bytes:
    return encode_driver_view(driver_view_from_fields(pickle.loads(payload)))


#: Sample types handed over in a form of their own: (what the simulation's side sends of
#: a sample, what the writer makes of it: the sample's `sample_payload`).
HANDOVERS: Mapping[str, tuple[Callable[[Sample], bytes], Callable[[bytes], Any]]] = (
    MappingProxyType({"driver": (_driver_to_wire, _driver_from_wire)})
)


class WireError(ValueError):
    """A frame that is not one `encode` made."""


def encode(snapshot: Snapshot) -> list[bytes | memoryview]:
    """A snapshot as a frame, in parts to be sent one after the other (see the module
    docstring); ``b"".join`` of them is the frame.

    The columns go as they are where the actors' states are one block laid out as the
    wire's (`ActorStates.of` makes them so): a view of it, no copy; else each column is
    copied (``tobytes``)."""
    actors = snapshot.actors
    parts: list[bytes | memoryview] = [b""]  # the head, once the meta's length is known
    if actors.block is not None and _BLOCK_IS_WIRE:
        parts.append(actors.block.data)
    else:
        for name, dtype in COLUMN_DTYPES.items():
            column = getattr(actors, name)
            if column.dtype != dtype:
                column = column.astype(dtype)
            parts.append(column.tobytes())
    meta: list[list[Any]] = []
    payloads: list[bytes] = []
    for s in snapshot.samples.values():
        parts.append(_POSE.pack(*s.pose.position.tolist(), *s.pose.rotation.ravel().tolist()))
        form = None
        if s.type in HANDOVERS:
            payloads.append(HANDOVERS[s.type][0](s))
            form = "handover"
        elif s.type in SAMPLE_WRITERS:
            payload = sample_payload(s)
            form = "bytes"
            if not isinstance(payload, bytes):
                payload, form = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL), "pickle"
            payloads.append(payload)
        meta.append([s.name, s.type, s.sensor_id, s.frame, s.time, sample_extra(s), form,
                     len(payloads[-1]) if form else 0])  # fmt: skip
    meta_bytes = orjson.dumps(meta)
    parts[0] = _HEAD.pack(
        snapshot.frame, snapshot.time, snapshot.ego_id, len(actors), len(meta), len(meta_bytes)
    )
    parts.append(meta_bytes)
    parts.extend(payloads)
    return parts


def decode(frame: bytes) -> tuple[Packet, ActorStates]:
    """The `Packet` of a frame `encode` made (what `packet_of` makes of the snapshot) and
    its actors' states (views of ``frame``).

    Raises:
        WireError: For bytes that are not such a frame.
    """
    try:
        return _decode(frame)
    except (struct.error, ValueError, TypeError, IndexError, EOFError, pickle.UnpicklingError) as exc:
        if isinstance(exc, WireError):
            raise
        raise WireError(f"a snapshot frame of {len(frame)} bytes that cannot be read: {exc}") from None


def _decode(frame: bytes) -> tuple[Packet, ActorStates]:
    number, time, ego_id, n, count, meta_size = _HEAD.unpack_from(frame, 0)
    offset = _HEAD.size
    as_bytes = np.frombuffer(frame, dtype=np.uint8)
    columns: dict[str, Any] = {}
    for name, dtype in COLUMN_DTYPES.items():
        end = offset + n * dtype.itemsize
        columns[name] = as_bytes[offset:end].view(dtype)
        offset = end
    if offset > len(frame):
        raise WireError(f"a snapshot frame of {len(frame)} bytes ends in its columns")
    actors = ActorStates(**columns)
    poses = []
    for _ in range(count):
        values = _POSE.unpack_from(frame, offset)
        offset += _POSE.size
        poses.append(Pose(np.array(values[:3]), np.array(values[3:]).reshape(3, 3)))
    meta = orjson.loads(frame[offset : offset + meta_size])
    offset += meta_size
    if len(meta) != count:
        raise WireError(f"a snapshot frame with {count} samples lists {len(meta)}")
    entries, sensors, samples = [], [], []
    for (name, kind, sensor_id, sample_frame, sample_time, extra, form, size), pose in zip(
        meta, poses, strict=True
    ):
        entries.append(sample_entry(name, kind, sensor_id, sample_frame, sample_time, pose, extra))
        sensors.append((name, kind, pose))
        if form is not None:
            raw = frame[offset : offset + size]
            offset += size
            if form == "bytes":
                samples.append((name, kind, raw))
            elif form == "handover":
                samples.append((name, kind, HANDOVERS[kind][1](raw)))
            else:
                samples.append((name, kind, pickle.loads(raw)))
    if offset != len(frame):
        raise WireError(f"a snapshot frame of {len(frame)} bytes holds {offset}")
    packet = Packet(
        number,
        time,
        ego_id,
        index_message(number, time, ego_id, n, entries),
        encode_actor_states(actors, number, time, ego_id),
        sensors,
        samples,
    )
    return packet, actors
