"""`ActorBoxes`: a snapshot's actors as one ``foxglove.SceneUpdate`` of boxes, on numpy.

One box (``CubePrimitive``) per active actor, entity id its actor id, in the world frame,
its pose the box's centre; the update deletes the previous boxes first, so that actors
gone vanish. Written with `roadsim.capture.protobuf` rather than the Foxglove SDK's
message objects (see that module for why).

Colours: the ego orange, cars, trucks and buses in blues, static objects grey, scripted
objects green, collided actors red.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim.capture import protobuf as pb
from roadsim.capture.messages import WORLD, timestamp_bytes
from roadsim.capture.snapshot import ActorStates
from roadsim.world.state import SCRIPTED_OBJECT, STATIC_OBJECT

__all__ = ["ActorBoxes"]

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
    the rows are copied out: a handful of numpy operations for all actors. The rows are
    kept from one update to the next: while the actors are the same (the same ids), only
    the stamp, the poses, the sizes and colours that changed are written again.

    Args:
        model_names: The name of each ``model`` code.
    """

    def __init__(self, model_names: Sequence[str]) -> None:
        models = [MODEL_RGBA.get(name, OTHER_RGBA) for name in model_names] or [OTHER_RGBA]
        self._models = len(models)
        self._rgba = np.array([*models, STATIC_RGBA, SCRIPTED_RGBA, EGO_RGBA, COLLIDED_RGBA])
        self._layouts: dict[tuple[int, int], tuple[np.dtype[Any], bytes, int]] = {}
        self._last: _Rows | None = None

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
        # Fields out of number order, as protobuf allows: what changes from one snapshot
        # to the next (the pose) between long runs of what does not (size and colour; the
        # stamp, frame and the next entity's start), which zstd then compresses in a third
        # less time, into a tenth fewer bytes, than in number order.
        cube: list[_Part] = [tag(2, 2), bytes([27]), *size, tag(3, 2), bytes([36]), *color, tag(1, 2), bytes([49]), *pose]
        body: list[_Part] = [
            tag(8, 2) + bytes([118]),  # cubes
            *cube,
            tag(1, 2) + pb.uvarint(stamp_len),  # timestamp
            "stamp",
            pb.string(2, WORLD),  # frame_id
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
        rows = self._rows_for(actors.id, len(stamp))
        rows.stamp[:] = stamp
        codes = self._color_codes(actors, ego_id)
        if rows.codes is None or not np.array_equal(codes, rows.codes):
            rgba = self._rgba[codes]
            for k, channel in enumerate("rgba"):
                rows.data[channel] = rgba[:, k]
            rows.codes = codes
        half = 0.5 * actors.heading
        rows.data["x"] = actors.x
        rows.data["y"] = actors.y
        rows.data["z"] = actors.z + 0.5 * actors.height  # the box's centre, not its base
        rows.data["qz"] = np.sin(half)
        rows.data["qw"] = np.cos(half)
        rows.data["l"] = actors.length
        rows.data["w"] = actors.width
        rows.data["h"] = actors.height
        data = rows.data.view(np.uint8).reshape(n, -1)
        if rows.runs is None:
            return deletion + data.tobytes()
        # Cut the bytes shorter ids leave over: ids are sorted, so those of one length are
        # one run of rows.
        parts = [deletion]
        for a, b, end in rows.runs:
            parts.append(data[a:b, :end].tobytes())
        return b"".join(parts)

    def _rows_for(self, ids: npt.NDArray[np.int64], stamp_len: int) -> _Rows:
        """Rows for the actors ``ids``, their constant bytes, lengths and ids filled in:
        those of the last update where it had the same actors; else the last update's
        rows of the actors it had (while the ids need no more digits), new ones for the
        others. Poses, the stamp and the colours are for the caller to write."""
        last = self._last
        if last is not None and last.stamp_len == stamp_len and np.array_equal(last.ids, ids):
            return last
        n = len(ids)
        width = len(str(int(ids.max())))
        digits, count = self._digits(ids, width)
        dtype, template, fixed = self._entity_layout(width, stamp_len)
        # Rows are copied as bytes: numpy copies structured rows field by field.
        fresh: npt.NDArray[np.intp] | slice
        if last is not None and last.data.dtype == dtype:
            k = np.minimum(np.searchsorted(last.ids, ids), len(last.ids) - 1)
            raw = last.data.view(np.uint8).reshape(len(last.ids), -1)[k]
            fresh = np.flatnonzero(last.ids[k] != ids)
        else:
            raw = np.empty((n, dtype.itemsize), dtype=np.uint8)
            fresh = slice(None)
        raw[fresh] = np.frombuffer(template, dtype=np.uint8)
        data = raw.reshape(-1).view(dtype)
        length = fixed + count[fresh].astype(np.int64)
        data["length"][fresh, 0] = (length & 0x7F) | 0x80
        data["length"][fresh, 1] = length >> 7
        data["id_len"][fresh] = count[fresh]
        data["id"][fresh] = digits[fresh]
        runs = None
        if count[0] != width:
            bounds = (np.flatnonzero(np.diff(count)) + 1).tolist()
            full = dtype.itemsize
            runs = [
                (a, b, full - width + int(count[a]))
                for a, b in zip([0, *bounds], [*bounds, n], strict=True)
            ]
        self._last = _Rows(ids.copy(), stamp_len, data, data["stamp"], runs)
        return self._last


@dataclass(slots=True, eq=False)
class _Rows:
    """The encoded entities of one set of actors, kept from one update to the next.

    Attributes:
        ids: The actors' ids, in order.
        stamp_len: The length of the timestamp the layout has room for.
        data: One row per entity (`ActorBoxes._entity_layout`).
        stamp: ``data["stamp"]``, a view.
        runs: (first row, end row, bytes per row) of each run of ids of one length where
            some are shorter than the longest (their rows' tails cut off), else None.
        codes: The colour codes ``data`` holds, None before the first.
    """

    ids: npt.NDArray[np.int64]
    stamp_len: int
    data: npt.NDArray[Any]
    stamp: npt.NDArray[Any]
    runs: list[tuple[int, int, int]] | None
    codes: npt.NDArray[np.intp] | None = None
