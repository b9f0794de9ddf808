"""The protobuf wire format, as much of it as a recording needs, on numpy.

The recorder writes its protobuf messages itself instead of building the Foxglove SDK's
message objects: one Python object per actor and field costs about 7 microseconds an actor
(2.3 ms a snapshot of the highway's 345 vehicles, more than a tick), while fixed-width
fields laid out in a numpy structured array cost a few microseconds for all of them.

Two properties of the wire format make that possible (protobuf's "Encoding" guide):

- a ``double``, ``sfixed64``, ``fixed32`` field is its tag and then 8 (or 4) little-endian
  bytes, whatever its value; a decoder takes an explicit zero as well as an omitted one;
- a packed repeated field of fixed width (``repeated double``, ``repeated sfixed64``) is
  its tag, the byte length and the raw little-endian array: ``ndarray.tobytes()``. A
  packed ``repeated bool`` is one byte per value, 0 or 1: a ``uint8`` array's bytes.

`decode` reads any message into its fields by number, for the reader.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = [
    "FIXED32",
    "FIXED64",
    "LEN",
    "VARINT",
    "decode",
    "double",
    "field_bytes",
    "fixed32",
    "packed",
    "string",
    "tag",
    "uvarint",
    "varint_field",
]

# Wire types.
VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5

Fields = dict[int, list[int | bytes]]


def uvarint(value: int) -> bytes:
    """An unsigned integer (or a negative int64, as 10 bytes of two's complement) as a
    base-128 varint."""
    if 0 <= value < 0x80:  # most: tags, lengths of small fields
        return _ONE_BYTE[value]
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


_ONE_BYTE = tuple(bytes((v,)) for v in range(0x80))


@functools.lru_cache(maxsize=256)
def tag(number: int, wire_type: int) -> bytes:
    return uvarint((number << 3) | wire_type)


def field_bytes(number: int, payload: bytes) -> bytes:
    """A length-delimited field: a nested message, a string, bytes or a packed array."""
    return tag(number, LEN) + uvarint(len(payload)) + payload


def string(number: int, text: str) -> bytes:
    return field_bytes(number, text.encode("utf-8")) if text else b""


def varint_field(number: int, value: int) -> bytes:
    return tag(number, VARINT) + uvarint(int(value)) if value else b""


def double(number: int, value: float) -> bytes:
    return tag(number, FIXED64) + struct.pack("<d", value)


def fixed32(number: int, value: int) -> bytes:
    return tag(number, FIXED32) + struct.pack("<I", value)


def packed(number: int, values: npt.NDArray[np.generic], dtype: str) -> bytes:
    """A packed repeated field of fixed width: ``dtype`` is the wire's little-endian type
    (``<f8`` double, ``<i8`` sfixed64, ``<i4`` sfixed32, ``<f4`` float, ``u1`` bool)."""
    if values.size == 0:
        return b""
    return field_bytes(number, np.ascontiguousarray(values, dtype=dtype).tobytes())


def message(parts: Iterable[bytes]) -> bytes:
    return b"".join(parts)


class DecodeError(ValueError):
    """Bytes that are no protobuf message."""


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise DecodeError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def decode(data: bytes) -> Fields:
    """The fields of one message by number, each a list of its occurrences: an int for
    a varint, the raw bytes for the other wire types (8 or 4 for a fixed field).

    Raises:
        DecodeError: For bytes that are not a well-formed message.
    """
    out: Fields = {}
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == VARINT:
            value, pos = _read_varint(data, pos)
        elif wire == FIXED64:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == FIXED32:
            value, pos = data[pos : pos + 4], pos + 4
        elif wire == LEN:
            size, pos = _read_varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        else:
            raise DecodeError(f"unsupported wire type {wire} of field {number}")
        if pos > end:
            raise DecodeError(f"field {number} runs past the end of the message")
        out.setdefault(number, []).append(value)
    return out


def first(fields: Fields, number: int, default: int | bytes = b"") -> int | bytes:
    """The last occurrence of a singular field (protobuf's rule), or ``default``."""
    values = fields.get(number)
    return values[-1] if values else default


def as_double(raw: int | bytes) -> float:
    return float(struct.unpack("<d", raw)[0]) if isinstance(raw, bytes) and raw else 0.0


def as_int(raw: int | bytes) -> int:
    return raw if isinstance(raw, int) else 0


def as_text(raw: int | bytes) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else ""
