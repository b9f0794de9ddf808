"""The recorder's writer process: the same recording, message by message, as a recorder
in the simulation's process; a writer that fails or dies is a clear error, never a hang."""

from __future__ import annotations

import io
import signal
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcap.reader import make_reader

from roadsim.capture import Capture, Recorder, RecordingError
from roadsim.capture.writer_process import CLOSE, WRITE, inbox, read_message, send_message
from roadsim.sim import Simulation
from tests.capture.helpers import highway_with_driver


def _messages(path: Path) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    with path.open("rb") as f:
        reader = make_reader(f)
        metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
        messages = [
            (channel.topic, schema.name if schema else None, message.log_time,
             message.publish_time, message.sequence, bytes(message.data))
            for schema, channel, message in reader.iter_messages(log_time_order=False)
        ]  # fmt: skip
    return metadata, messages


def test_the_writer_process_writes_the_same_messages(tmp_path: Path) -> None:
    paths = [tmp_path / "here.mcap", tmp_path / "there.mcap"]
    captures = []
    for path, background in zip(paths, (False, True), strict=True):
        sim = Simulation(highway_with_driver())
        sim.add_sensor({"type": "lidar", "name": "roof", "channels": 16, "horizontal_resolution_deg": 4.0})
        sim.add_sensor({"type": "raytracer", "name": "rt", "directions": [[1, 0, 0]], "bounces": 1})
        capture = Capture(sim, [Recorder(path, background=background)], rate=10).start()
        sim.run(1.0)
        captures.append(capture)
    for capture in captures:
        capture.close()
    here, there = (_messages(p) for p in paths)
    assert here[0] == there[0]  # the metadata record
    topics = {m[0] for m in here[1]}
    assert {"/roadsim/snapshot", "/roadsim/actors", "/scene/actors", "/scene/lanes", "/tf",
            "/driver/driver", "/lidar/roof", "/rays/rt"} <= topics  # fmt: skip
    assert len(here[1]) == len(there[1])
    for a, b in zip(here[1], there[1], strict=True):
        assert a == b, a[:3]


def _blocked_recorder(tmp_path: Path) -> tuple[Simulation, Capture, Recorder]:
    sim = Simulation(highway_with_driver())
    recorder = Recorder(tmp_path / "x.mcap", background=True)
    capture = Capture(sim, [recorder]).start()
    return sim, capture, recorder


def _steps_until_error(sim: Simulation, seconds: float) -> tuple[RecordingError, float]:
    """The error a tick raised within ``seconds``, and how long that tick took (s)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        start = time.monotonic()
        try:
            sim.step()
        except RecordingError as exc:
            return exc, time.monotonic() - start
    raise AssertionError(f"no error within {seconds} s")


def test_a_writer_killed_while_the_simulation_waits_for_it_is_an_error(tmp_path: Path) -> None:
    sim, capture, recorder = _blocked_recorder(tmp_path)
    assert recorder._worker is not None
    process = recorder._worker._process
    process.send_signal(signal.SIGSTOP)  # the writer stops reading: the socket fills
    killer = threading.Timer(5.0, process.kill)
    killer.start()
    try:
        error, took = _steps_until_error(sim, 60.0)
    finally:
        killer.cancel()
        if process.poll() is None:
            process.kill()
    assert "the writer process ended (exit code -9)" in str(error)
    assert took > 0.5  # the tick waited in send, and the writer's death woke it
    with pytest.raises(RecordingError):
        capture.close()


def test_the_writers_own_error_reaches_the_simulation(tmp_path: Path) -> None:
    sim, capture, recorder = _blocked_recorder(tmp_path)
    assert recorder._worker is not None
    send_message(recorder._worker._sock, WRITE, [b"not a snapshot"])
    error, _ = _steps_until_error(sim, 60.0)
    assert "writing failed" in str(error) and "snapshot frame of 14 bytes" in str(error)
    with pytest.raises(RecordingError, match="snapshot frame of 14 bytes"):
        sim.step()  # again, and on closing: the writer's reason, not only that it is gone
    with pytest.raises(RecordingError, match="snapshot frame of 14 bytes"):
        capture.close()


class _ShortSocket:
    """Takes 3 bytes of a sendmsg (as after a signal), then the rest with sendall."""

    def __init__(self) -> None:
        self.sent = b""

    def sendmsg(self, buffers: list[bytes]) -> int:
        self.sent += b"".join(buffers)[:3]
        return 3

    def sendall(self, data: memoryview) -> None:
        self.sent += bytes(data)


def test_a_message_the_socket_takes_in_part_is_sent_whole() -> None:
    sock = _ShortSocket()
    send_message(sock, WRITE, [b"abc", b"defgh"])  # type: ignore[arg-type]
    stream = io.BytesIO(sock.sent)
    assert read_message(stream) == (WRITE, b"abcdefgh")
    assert read_message(stream) is None


def test_the_inbox_takes_what_has_come_and_waits_for_the_rest_of_a_message() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        send_message(ours, WRITE, [b"x" * 10])
        send_message(ours, CLOSE)
        ours.sendall(struct.pack("<BI", WRITE, 6) + b"abc")  # half a message
        messages = inbox(theirs, nap_s=0.001)
        assert next(messages) == (WRITE, b"x" * 10)
        assert next(messages) == (CLOSE, b"")
        rest = threading.Timer(0.05, ours.sendall, [b"def"])
        rest.start()
        assert next(messages) == (WRITE, b"abcdef")
        rest.join()
        ours.shutdown(socket.SHUT_WR)  # the simulation's process is gone
        assert list(messages) == []
