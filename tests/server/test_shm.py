"""The shared-memory ring: frames read back whole, torn reads detected."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from roadsim.server.shm import ShmReader, ShmRing, TornRead


def test_a_frame_reads_back_equal_without_a_copy() -> None:
    ring = ShmRing(4, 1 << 16)
    reader = ShmReader(ring.name)
    try:
        arrays = {"color": np.random.default_rng(0).random((8, 8, 3), dtype=np.float32),
                  "ids": np.arange(10, dtype=np.int32)}  # fmt: skip
        slot, seq, layout = ring.write(arrays)
        views = reader.view(slot, seq, layout)
        for k, v in arrays.items():
            assert np.array_equal(views[k], v)
        assert not views["color"].flags.writeable  # clients map the ring read-only
        assert np.shares_memory(views["color"], reader.view(slot, seq, layout)["color"])
        assert reader.still_valid(slot, seq)
    finally:
        reader.close()
        ring.close()


def test_a_slot_written_over_is_a_torn_read_never_data() -> None:
    ring = ShmRing(2, 1024)
    reader = ShmReader(ring.name)
    try:
        slot, seq, layout = ring.write({"a": np.zeros(16)})
        ring.write({"a": np.ones(16)})
        assert reader.still_valid(slot, seq)
        ring.write({"a": np.full(16, 2.0)})  # laps the ring: back to the first slot
        assert not reader.still_valid(slot, seq)
        with pytest.raises(TornRead):
            reader.read(slot, seq, layout)
        with pytest.raises(ValueError, match="do not fit"):
            ring.write({"a": np.zeros(1000)})
    finally:
        reader.close()
        ring.close()


def test_reads_racing_a_writer_are_whole_or_refused() -> None:
    """A writer laps a 2-slot ring while a reader copies: every frame the reader returns
    holds one value throughout (frame k is filled with k)."""
    ring = ShmRing(2, 1 << 20)
    reader = ShmReader(ring.name)
    written: list[tuple[int, int, dict]] = []
    stop = threading.Event()

    def write() -> None:
        k = 0
        while not stop.is_set():
            k += 1
            written.append(ring.write({"a": np.full(100_000, float(k))}))

    thread = threading.Thread(target=write)
    thread.start()
    whole = torn = 0
    try:
        while whole + torn < 300:
            if not written:
                continue
            slot, seq, layout = written[-1]
            try:
                got = reader.read(slot, seq, layout)["a"]
            except TornRead:
                torn += 1
                continue
            assert got.min() == got.max() == float(seq)
            whole += 1
    finally:
        stop.set()
        thread.join()
        reader.close()
        ring.close()
    assert whole > 0
