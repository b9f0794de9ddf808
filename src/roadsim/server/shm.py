"""A ring of shared-memory slots for bulk frames (camera images, point clouds), written by
the server and read, without copying, by clients on the same machine.

Layout of the segment (little-endian), which docs/protocol.md documents for clients in
other languages::

    0   magic  b"RSIMRING"           8 bytes
    8   version                      u32 (1)
    12  slots                        u32
    16  slot_bytes                   u64: the data bytes of one slot
    24  (zeros up to 64)
    64  slot 0: begin u64, end u64, nbytes u64, (zeros up to 64), data (slot_bytes)
        slot 1: ...                  every slot starts on a 64-byte boundary

The writer never waits for a reader (real-time mode must not stall). Each write takes the
next sequence number ``seq`` (1, 2, ...) and the next slot (``seq % slots``): it stores
``begin = seq``, then the data, then ``end = seq``, a seqlock with the number written
before and after. A reader told (by a stream message) that ``seq`` sits in ``slot`` reads
``end == seq`` before and ``begin == seq`` after taking the data: a write that began in
between (the writer lapped the ring) changes ``begin`` first, so a torn read is detected
(`TornRead`) and never returned. A zero-copy view stays good until the writer comes back
to its slot, ``slots`` writes later; `ShmReader.still_valid` says whether it has.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import Any

import numpy as np

__all__ = ["ArrayLayout", "ShmReader", "ShmRing", "TornRead"]

MAGIC = b"RSIMRING"
VERSION = 1
HEADER_BYTES = 64
SLOT_HEADER_BYTES = 64
_ALIGN = 64


class TornRead(Exception):
    """The slot no longer holds the frame asked for: the writer wrote over it."""


@dataclass(frozen=True)
class ArrayLayout:
    """Where one array lies in a slot's data: byte offset, dtype string, shape."""

    offset: int
    dtype: str
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    def to_wire(self) -> dict[str, Any]:
        return {"offset": self.offset, "dtype": self.dtype, "shape": list(self.shape)}


def _aligned(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def layout_of(arrays: Mapping[str, np.ndarray[Any, Any]]) -> tuple[dict[str, ArrayLayout], int]:
    """Each array's place in a slot (64-byte aligned, in order), and the bytes they take."""
    out: dict[str, ArrayLayout] = {}
    offset = 0
    for name, arr in arrays.items():
        out[name] = ArrayLayout(offset, arr.dtype.str, tuple(arr.shape))
        offset = _aligned(offset + arr.nbytes)
    return out, offset


class ShmRing:
    """The writer's side: a new shared-memory segment of ``slots`` slots.

    Args:
        slots: Frames kept at once (at least 2).
        slot_bytes: Data bytes of one slot (rounded up to 64).
    """

    def __init__(self, slots: int, slot_bytes: int) -> None:
        if slots < 2 or slot_bytes < 1:
            raise ValueError(f"a ring needs 2 slots or more of 1 byte or more, got {slots}, {slot_bytes}")
        self.slots = int(slots)
        self.slot_bytes = _aligned(int(slot_bytes))
        self.stride = SLOT_HEADER_BYTES + self.slot_bytes
        self._shm = shared_memory.SharedMemory(create=True, size=HEADER_BYTES + self.slots * self.stride)
        self.name: str = self._shm.name
        buf = self._shm.buf
        assert buf is not None
        struct.pack_into("<8sIIQ", buf, 0, MAGIC, VERSION, self.slots, self.slot_bytes)
        self._bytes = np.frombuffer(buf, dtype=np.uint8)
        self._seq = 0
        self.writes = 0

    @property
    def size(self) -> int:
        return HEADER_BYTES + self.slots * self.stride

    def fits(self, nbytes: int) -> bool:
        return nbytes <= self.slot_bytes

    def write(self, arrays: Mapping[str, np.ndarray[Any, Any]]) -> tuple[int, int, dict[str, ArrayLayout]]:
        """Writes arrays into the next slot; returns (slot, seq, layout).

        Raises:
            ValueError: If they do not fit a slot (`fits`).
        """
        layout, nbytes = layout_of(arrays)
        if nbytes > self.slot_bytes:
            raise ValueError(f"{nbytes} bytes do not fit a slot of {self.slot_bytes}")
        self._seq += 1
        seq = self._seq
        slot = seq % self.slots
        base = HEADER_BYTES + slot * self.stride
        words = self._bytes[base : base + 24].view(np.uint64)
        words[0] = seq  # begin: readers of the frame this slot held see it is going
        data = base + SLOT_HEADER_BYTES
        for name, arr in arrays.items():
            where = layout[name]
            dst = self._bytes[data + where.offset : data + where.offset + where.nbytes]
            np.copyto(dst, np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
        words[2] = nbytes
        words[1] = seq  # end: the frame is whole
        self.writes += 1
        return slot, seq, layout

    def close(self) -> None:
        """Unmaps and removes the segment (readers that mapped it keep their mapping)."""
        del self._bytes
        self._shm.close()
        with contextlib.suppress(FileNotFoundError):
            self._shm.unlink()


class ShmReader:
    """A client's side: maps a ring read-only by name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._map = _map_read_only(name)
        magic, version, slots, slot_bytes = struct.unpack_from("<8sIIQ", self._map, 0)
        if magic != MAGIC or version != VERSION:
            raise ValueError(f"shared memory {name!r} is no roadsim ring of version {VERSION}")
        self.slots, self.slot_bytes = int(slots), int(slot_bytes)
        self.stride = SLOT_HEADER_BYTES + self.slot_bytes
        self._bytes = np.frombuffer(self._map, dtype=np.uint8)

    def _words(self, slot: int) -> np.ndarray[Any, Any]:
        base = HEADER_BYTES + slot * self.stride
        return self._bytes[base : base + 24].view(np.uint64)

    def view(
        self, slot: int, seq: int, layout: Mapping[str, ArrayLayout]
    ) -> dict[str, np.ndarray[Any, Any]]:
        """The arrays of frame ``seq`` in ``slot``, as read-only views of the segment (no
        copy). Check `still_valid` after using them: the writer may come back to the slot.

        Raises:
            TornRead: If the slot no longer holds ``seq``.
            ValueError: For a slot or layout outside the ring.
        """
        if not 0 <= slot < self.slots:
            raise ValueError(f"slot: expected 0 to {self.slots - 1}, got {slot}")
        words = self._words(slot)
        if int(words[1]) != seq or int(words[0]) != seq:
            raise TornRead(f"slot {slot} no longer holds frame {seq}")
        data = HEADER_BYTES + slot * self.stride + SLOT_HEADER_BYTES
        out = {}
        for name, where in layout.items():
            if where.offset < 0 or where.offset + where.nbytes > self.slot_bytes:
                raise ValueError(f"{name}: {where} lies outside a slot of {self.slot_bytes} bytes")
            raw = self._bytes[data + where.offset : data + where.offset + where.nbytes]
            out[name] = raw.view(np.dtype(where.dtype)).reshape(where.shape)
        return out

    def still_valid(self, slot: int, seq: int) -> bool:
        """Whether views of frame ``seq`` taken from ``slot`` still hold it (no write has
        begun there since)."""
        return int(self._words(slot)[0]) == seq

    def read(
        self, slot: int, seq: int, layout: Mapping[str, ArrayLayout]
    ) -> dict[str, np.ndarray[Any, Any]]:
        """Copies of the arrays of frame ``seq``, checked whole after the copy.

        Raises:
            TornRead: If the slot no longer holds ``seq``, before or during the copy.
        """
        views = self.view(slot, seq, layout)
        copies = {name: v.copy() for name, v in views.items()}
        if not self.still_valid(slot, seq):
            raise TornRead(f"slot {slot} was written over while frame {seq} was read")
        return copies

    def close(self) -> None:
        """Unmaps the ring, unless views of it are still alive (then it is unmapped
        when the last goes)."""
        del self._bytes
        with contextlib.suppress(BufferError):
            self._map.close()


def _map_read_only(name: str) -> mmap.mmap:
    """Maps a POSIX shared-memory segment read-only, without Python's resource tracker
    (which, before 3.13, would remove the server's segment when the client exits)."""
    path = os.path.join("/dev/shm", name.lstrip("/"))
    if sys.platform.startswith("linux") and os.path.exists(path):
        fd = os.open(path, os.O_RDONLY)
        try:
            return mmap.mmap(fd, 0, prot=mmap.PROT_READ)
        finally:
            os.close(fd)
    extra: dict[str, Any] = {"track": False} if sys.version_info >= (3, 13) else {}
    shm = shared_memory.SharedMemory(name=name, **extra)
    if sys.version_info < (3, 13):
        from multiprocessing import resource_tracker

        resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]
    fd = os.dup(shm._fd)  # type: ignore[attr-defined]
    shm.close()
    try:
        return mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    finally:
        os.close(fd)
