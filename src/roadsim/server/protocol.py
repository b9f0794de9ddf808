"""The wire protocol of `roadsim serve`: envelopes, typed request schemas, limits, and the
encoding of numpy arrays beside msgpack.

Every message is a ZeroMQ multipart message whose first frame is a msgpack map (the
header) and whose further frames are the raw bytes of numpy arrays the header refers to.
An array in a header is the map ``{"$nd": k, "dtype": "<f4", "shape": [480, 640]}``:
frame ``k`` of the message (1 for the first after the header) holds its C-order bytes.
A client in another language needs msgpack and ZeroMQ, nothing of Python. docs/protocol.md
is the reference; this module is its one implementation (the schemas below are what it
documents, field by field).

A request: ``{"v": 1, "id": <int>, "type": "<name>", "args": {...}}``, one frame.
A reply: ``{"v": 1, "id": <same>, "ok": true, "result": ...}`` or ``{"v": 1, "id": ...,
"ok": false, "error": {"code": "<code>", "message": "<text>"}}``, then its array frames.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgpack
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = [
    "ERROR_CODES",
    "PROTOCOL_VERSION",
    "REQUESTS",
    "Limits",
    "ProtocolError",
    "decode_arrays",
    "decode_request",
    "encode",
    "error_reply",
    "ok_reply",
]

#: The protocol's version: a client says which it speaks in ``hello``; the server answers
#: only the version it speaks (an older or newer one gets the ``version`` error).
PROTOCOL_VERSION = 1

#: Error codes of a reply, and what each means (docs/protocol.md lists them too).
ERROR_CODES: Mapping[str, str] = {
    "bad_message": "not a msgpack map with v, id, type and args, or more than one frame",
    "too_large": "a request above the server's size limit",
    "version": "a protocol version the server does not speak",
    "unauthorized": "no hello yet, or a wrong token",
    "unknown_type": "a request type the protocol does not have",
    "bad_request": "arguments that do not fit the request's schema",
    "not_found": "an actor or sensor that does not exist",
    "bad_value": "a value out of range, or a request the world cannot take now",
    "scenario": "a scenario or map that does not load",
    "forbidden": "a scenario or map path outside the folders the server reads for clients",
    "wrong_mode": "a request the current mode does not allow (tick in real-time mode)",
    "sync_timeout": "the server stopped waiting for this client's tick",
    "internal": "a fault in the server (reported, the server goes on)",
}


class ProtocolError(Exception):
    """A message the protocol rejects: ``code`` (`ERROR_CODES`) and a message."""

    def __init__(self, code: str, message: str, request_id: int | None = None) -> None:
        assert code in ERROR_CODES, code
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


@dataclass(frozen=True)
class Limits:
    """Sizes the server accepts and keeps (bytes and counts).

    Attributes:
        max_request_bytes: A request above this is refused (ZeroMQ drops a connection
            that sends a message above it before it is read: ``MAXMSGSIZE``).
        max_items: The most elements of one msgpack string, list or map in a request.
        max_frame_bytes: The largest array frame a client accepts in a reply or stream
            message (a camera's HDR image at 4K is 100 MB).
        stream_queue: Stream messages queued per client before new ones are dropped
            (ZeroMQ's send high-water mark; the client's receive queue adds its own).
        sync_backlog_bytes: In sync mode, the ticking client's snapshots that its queue
            cannot take wait on the server, never dropped; above this many bytes waiting,
            a tick request does not tick (``ticks`` 0 in its reply) until it reads.
        max_sessions: Sessions kept at once; a ``hello`` beyond them ends the session
            silent the longest (clients that went away without ``bye``).
    """

    max_request_bytes: int = 1 << 20
    max_items: int = 1 << 16
    max_frame_bytes: int = 1 << 28
    stream_queue: int = 8
    sync_backlog_bytes: int = 1 << 28
    max_sessions: int = 256


# -- requests -----------------------------------------------------------------------------------


class _Args(BaseModel):
    """Base of every request's arguments: frozen, no unknown keys, no coercion, finite."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


ActorKey = Annotated[str, Field(min_length=1, max_length=256)] | int
Name = Annotated[str, Field(min_length=1, max_length=256)]


class Hello(_Args):
    version: int
    token: Annotated[str, Field(max_length=1024)] | None = None
    client: Annotated[str, Field(max_length=256)] | None = None


class Load(_Args):
    scenario: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    scenario_yaml: Annotated[str, Field(min_length=1, max_length=1 << 20)] | None = None
    map: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    seed: Annotated[int, Field(ge=0, lt=2**63)] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Load:
        given = [k for k in ("scenario", "scenario_yaml", "map") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of scenario (a name or a path), scenario_yaml (the text) "
                f"and map (a name or a path), got {', '.join(given) or 'none'}"
            )
        return self


class Reset(_Args):
    seed: Annotated[int, Field(ge=0, lt=2**63)] | None = None


class Tick(_Args):
    count: Annotated[int, Field(ge=1, le=100_000)] = 1


class SetMode(_Args):
    mode: Literal["sync", "realtime"]
    speed: Annotated[float, Field(gt=0.0, le=1000.0)] = 1.0
    timeout_s: Annotated[float, Field(gt=0.0, le=3600.0)] = 10.0


class Control(_Args):
    actor: ActorKey = "ego"
    throttle: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    brake: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    steering: Annotated[float, Field(ge=-1.0, le=1.0)] = 0.0
    accel: float | None = None
    curvature: float | None = None
    release: bool = False


class Spawn(_Args):
    x: float | None = None
    y: float | None = None
    heading: float = 0.0
    road: Annotated[str, Field(min_length=1, max_length=256)] | int | None = None
    lane: int | None = None
    s: float | None = None
    t: float = 0.0
    model: Literal["car", "truck", "bus"] = "car"
    speed: Annotated[float, Field(ge=0.0)] = 0.0
    external: bool = False

    @model_validator(mode="after")
    def _one_place(self) -> Spawn:
        world = (self.x, self.y)
        road = (self.road, self.lane, self.s)
        if all(v is not None for v in world) and all(v is None for v in road):
            return self
        if all(v is not None for v in road) and all(v is None for v in world):
            return self
        raise ValueError(
            "give the place as x and y (with heading), or as road, lane and s (with t), "
            "not both and not part of one"
        )


class Remove(_Args):
    actor: ActorKey


class AddSensor(_Args):
    spec: dict[str, Any]


class ConfigureSensor(_Args):
    name: Name
    active: bool | None = None
    sample_every: Annotated[int, Field(ge=1, le=100_000)] | None = None


class Empty(_Args):
    pass


class SetCaptureRate(_Args):
    rate: Annotated[float, Field(gt=0.0)] | None = None
    every: Annotated[int, Field(ge=1, le=100_000)] | None = None


class Subscribe(_Args):
    sensors: Annotated[list[Name], Field(max_length=256)] | None = None
    actors: bool = True
    shm: bool = False
    fields: Annotated[dict[Name, Annotated[list[Name], Field(max_length=64)]], Field(max_length=256)] | None = None


class State(_Args):
    pass


class ActorQuery(_Args):
    actor: ActorKey


class DriverViewsQuery(_Args):
    ids: Annotated[list[int], Field(max_length=100_000)] | None = None
    visibility: Annotated[float, Field(gt=0.0)] | None = None


class Reading(_Args):
    name: Name
    shm: bool = False


#: Request types and their argument schemas: the protocol's one table of requests.
REQUESTS: Mapping[str, type[_Args]] = {
    "hello": Hello,
    "load": Load,
    "reset": Reset,
    "tick": Tick,
    "set_mode": SetMode,
    "control": Control,
    "spawn": Spawn,
    "remove": Remove,
    "add_sensor": AddSensor,
    "configure_sensor": ConfigureSensor,
    "sensors": Empty,
    "set_capture_rate": SetCaptureRate,
    "subscribe": Subscribe,
    "unsubscribe": Empty,
    "state": State,
    "actor": ActorQuery,
    "driver_views": DriverViewsQuery,
    "reading": Reading,
    "world": Empty,
    "bye": Empty,
}


@dataclass(frozen=True)
class Request:
    """A request as the server reads it: its id, type and validated arguments."""

    id: int
    type: str
    args: _Args


def decode_request(frames: list[bytes], limits: Limits) -> Request:
    """Reads one request (its frames, the routing frames taken off).

    Raises:
        ProtocolError: For anything but a well-formed request of a known type whose
            arguments fit its schema (the code says which: `ERROR_CODES`).
    """
    if len(frames) != 1:
        raise ProtocolError("bad_message", f"a request is one frame, got {len(frames)}")
    raw = frames[0]
    if len(raw) > limits.max_request_bytes:
        raise ProtocolError(
            "too_large", f"a request is at most {limits.max_request_bytes} bytes, got {len(raw)}"
        )
    try:
        msg = msgpack.unpackb(
            raw,
            raw=False,
            strict_map_key=True,
            max_str_len=limits.max_request_bytes,
            max_bin_len=0,
            max_array_len=limits.max_items,
            max_map_len=limits.max_items,
            max_ext_len=0,
        )
    except Exception as exc:  # msgpack raises several types (ValueError, ExtraData, ...)
        raise ProtocolError("bad_message", f"not a msgpack message: {exc}") from None
    if not isinstance(msg, dict):
        raise ProtocolError("bad_message", f"expected a msgpack map, got {type(msg).__name__}")
    rid = msg.get("id")
    request_id = rid if isinstance(rid, int) and not isinstance(rid, bool) else None
    if request_id is None:
        raise ProtocolError("bad_message", "id: expected an integer")
    unknown = set(msg) - {"v", "id", "type", "args"}
    if unknown:
        raise ProtocolError(
            "bad_message", f"unknown envelope keys {sorted(map(str, unknown))}", request_id
        )
    if msg.get("v") != PROTOCOL_VERSION:
        raise ProtocolError(
            "version",
            f"v: this server speaks protocol version {PROTOCOL_VERSION}, got {msg.get('v')!r}",
            request_id,
        )
    kind = msg.get("type")
    schema = REQUESTS.get(kind) if isinstance(kind, str) else None
    if schema is None:
        raise ProtocolError(
            "unknown_type",
            f"type: expected one of {', '.join(REQUESTS)}, got {kind!r}",
            request_id,
        )
    args = msg.get("args", {})
    if not isinstance(args, dict):
        raise ProtocolError("bad_request", "args: expected a map", request_id)
    try:
        parsed = schema.model_validate(args)
    except ValidationError as exc:
        raise ProtocolError("bad_request", f"{kind}: {_problems(exc)}", request_id) from None
    assert isinstance(kind, str)
    return Request(request_id, kind, parsed)


def _problems(exc: ValidationError) -> str:
    """A validation error in one line: ``args.steering: Input should be ... (got 3.0)``."""
    out = []
    for err in exc.errors(include_url=False)[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "args"
        got = repr(err.get("input"))
        got = got if len(got) <= 60 else got[:57] + "..."
        out.append(f"args.{where}: {err['msg']} (got {got})" if where != "args" else err["msg"])
    return "; ".join(out)


# -- encoding -------------------------------------------------------------------------------------


class Encoder:
    """Builds one message: the header's objects with arrays set aside as frames."""

    def __init__(self) -> None:
        self.frames: list[Any] = []

    def array(self, values: np.ndarray[Any, Any]) -> dict[str, Any]:
        """The header's reference to ``values``, whose bytes become the next frame."""
        arr = np.ascontiguousarray(values)
        if arr.dtype.hasobject or arr.dtype.kind not in "biuf":
            raise TypeError(f"cannot send an array of dtype {arr.dtype}")
        self.frames.append(memoryview(arr.reshape(-1).view(np.uint8)) if arr.size else b"")  # type: ignore[arg-type]
        return {"$nd": len(self.frames), "dtype": arr.dtype.str, "shape": list(arr.shape)}

    def message(self, header: Mapping[str, Any]) -> list[Any]:
        """The frames: the packed header, then the arrays."""
        return [msgpack.packb(header, use_bin_type=True), *self.frames]


def encode(header: Mapping[str, Any], encoder: Encoder | None = None) -> list[Any]:
    """The frames of a message (`Encoder.message`)."""
    return (encoder or Encoder()).message(header)


def ok_reply(request_id: int, result: Any, encoder: Encoder | None = None) -> list[Any]:
    return encode({"v": PROTOCOL_VERSION, "id": request_id, "ok": True, "result": result}, encoder)


def error_reply(request_id: int | None, code: str, message: str) -> list[Any]:
    return encode(
        {
            "v": PROTOCOL_VERSION,
            "id": request_id,
            "ok": False,
            "error": {"code": code, "message": message},
        }
    )


#: dtypes an array frame may have (little-endian, C order): what roadsim sends.
ARRAY_DTYPES = frozenset(
    np.dtype(t).str
    for t in ("<f4", "<f8", "<i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "|b1")
)


def decode_arrays(obj: Any, frames: list[Any], max_frame_bytes: int = 1 << 28) -> Any:
    """Replaces every ``{"$nd": ...}`` in a decoded header by a numpy array over its frame
    (no copy where the frame is a buffer; read-only).

    Raises:
        ProtocolError: For a reference to a frame that is not there, a dtype not in
            `ARRAY_DTYPES`, or a shape that does not match the frame's size.
    """
    if isinstance(obj, dict):
        if "$nd" in obj:
            return _array(obj, frames, max_frame_bytes)
        return {k: decode_arrays(v, frames, max_frame_bytes) for k, v in obj.items()}
    if isinstance(obj, list):
        return [decode_arrays(v, frames, max_frame_bytes) for v in obj]
    return obj


def _array(ref: Mapping[str, Any], frames: list[Any], max_frame_bytes: int) -> np.ndarray[Any, Any]:
    k, dtype, shape = ref.get("$nd"), ref.get("dtype"), ref.get("shape")
    if not isinstance(k, int) or not 1 <= k < len(frames):
        raise ProtocolError("bad_message", f"$nd: no frame {k!r} in a message of {len(frames)}")
    if dtype not in ARRAY_DTYPES:
        raise ProtocolError("bad_message", f"dtype: expected one of {sorted(ARRAY_DTYPES)}, got {dtype!r}")
    if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ProtocolError("bad_message", f"shape: expected a list of sizes, got {shape!r}")
    buf = frames[k]
    buf = getattr(buf, "buffer", buf)  # a zmq.Frame
    dt = np.dtype(dtype)
    size = math.prod(shape) * dt.itemsize
    if size != memoryview(buf).nbytes or size > max_frame_bytes:
        raise ProtocolError(
            "bad_message", f"frame {k}: {memoryview(buf).nbytes} bytes for shape {shape} of {dtype}"
        )
    return np.frombuffer(buf, dtype=dt).reshape(shape)
