"""The recorder's writer process: ``python -m roadsim.capture.writer_process FD PATH
OVERWRITE COMPRESSION CHUNK_SIZE``, started by `roadsim.capture.Recorder` with
``background=True`` (`WriterProcess`), which talks to it over the socket FD.

Messages, both ways, are a head (kind u8, payload bytes u32, little-endian) and the
payload, sent with one system call each:

| kind | from | payload |
|---|---|---|
| `OPEN` | the simulation | (`CaptureInfo`, lane borders or None), pickled |
| `WRITE` | the simulation | a snapshot frame (`roadsim.capture.wire`) |
| `CLOSE` | the simulation | nothing |
| `OK` | the writer | nothing: the file is open |
| `ERROR` | the writer | what failed (UTF-8); it then stops |
| `CLOSED` | the writer | the snapshots written (u64) |

Only `OK`, `ERROR` and `CLOSED` come back, so the simulation reads nothing while it
writes: a writer that failed has said why and exited, and the next send finds its end of
the socket closed.

The writer never waits in the socket: it reads what has come without blocking
(`inbox`) and, when nothing has, sleeps a few milliseconds (`NAP_S`). A send to a
process waiting in the socket would wake it, which costs the sender tens of microseconds
when the writer's core is idle (more than the rest of handing a snapshot over); a send
to a sleeping one only queues the bytes, and the writer takes them in bulk when it wakes.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import struct
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from roadsim.capture import wire
from roadsim.capture.errors import RecordingError
from roadsim.capture.recorder import McapWriter
from roadsim.capture.snapshot import CaptureInfo, Snapshot

__all__ = ["NAP_S", "WriterProcess", "inbox", "serve"]

#: The socket buffer asked for on each side (bytes).
_BUFFER_BYTES = 4 << 20
#: How long the writer sleeps when nothing has come (s): what it adds at most to the
#: time a snapshot waits in the socket (a few dozen fit in its buffer).
NAP_S = 0.005

OPEN, WRITE, CLOSE, OK, ERROR, CLOSED = range(1, 7)
_HEAD = struct.Struct("<BI")


def send_message(sock: socket.socket, kind: int, parts: Sequence[bytes | memoryview] = ()) -> None:
    """Sends one message (head and parts: bytes, or byte views) with one system call
    where the socket takes it whole."""
    size = sum(len(p) for p in parts)
    buffers = [_HEAD.pack(kind, size), *parts]
    sent = sock.sendmsg(buffers)
    if sent < _HEAD.size + size:  # the rest, once the reader makes room
        sock.sendall(memoryview(b"".join(buffers))[sent:])


def read_message(stream: BinaryIO) -> tuple[int, bytes] | None:
    """The next message (kind, payload) from a buffered reader of the socket; None when
    the other side has closed it (or closes it halfway through a message)."""
    head = stream.read(_HEAD.size)
    if len(head) < _HEAD.size:
        return None
    kind, size = _HEAD.unpack(head)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return kind, payload


def inbox(sock: socket.socket, nap_s: float = NAP_S) -> Iterator[tuple[int, bytes]]:
    """The messages (kind, payload) that come in on ``sock``, read without waiting in the
    socket: all that has come at once, and a sleep of ``nap_s`` when nothing has; ends
    when the other side closes the socket (or the socket fails)."""
    pending = bytearray()
    room = memoryview(bytearray(_BUFFER_BYTES))
    while True:
        try:
            size = sock.recv_into(room, 0, socket.MSG_DONTWAIT)
        except BlockingIOError:
            time.sleep(nap_s)
            continue
        except OSError:
            return
        if size == 0:
            return
        pending += room[:size]
        start = 0
        with memoryview(pending) as view:
            while len(view) - start >= _HEAD.size:
                kind, length = _HEAD.unpack_from(view, start)
                end = start + _HEAD.size + length
                if end > len(view):
                    break
                yield kind, bytes(view[start + _HEAD.size : end])
                start = end
        del pending[:start]


class WriterProcess:
    """The recorder's writer process and the socket to it (`Recorder` with
    ``background=True``).

    It is a plain subprocess (``python -m roadsim.capture.writer_process``) rather than a
    `multiprocessing` one: spawning runs the caller's main script again in the child, which
    a script without an ``if __name__ == "__main__"`` guard does not survive, and forking
    a process that runs numba's threads is unsafe.
    """

    def __init__(self, path: Path, overwrite: bool, compression: str, chunk_size: int) -> None:
        import subprocess

        self.path = path
        ours, theirs = socket.socketpair()
        # Room for a few dozen snapshots in flight, so that the simulation goes on while
        # the writer waits for a core (the kernel caps it at net.core.wmem_max).
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _BUFFER_BYTES)
        theirs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _BUFFER_BYTES)
        # The child imports what this process imports (pytest's root, a script's folder).
        paths = [p for p in sys.path if p and Path(p).is_dir()]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "roadsim.capture.writer_process", str(theirs.fileno()),
             str(path), "1" if overwrite else "0", compression, str(chunk_size)],
            pass_fds=(theirs.fileno(),),
            env=env,
        )  # fmt: skip
        theirs.close()
        self._sock = ours
        self._replies = ours.makefile("rb")
        self._failed: RecordingError | None = None

    def _ended(self) -> RecordingError:
        """The error for a writer that is gone: its own message if it sent one (the same
        error again on each later call, so that closing repeats why)."""
        if self._failed is not None:
            return self._failed
        with contextlib.suppress(Exception):
            self._process.wait(timeout=10)
        reply = None
        with contextlib.suppress(OSError, ValueError):
            self._sock.settimeout(1.0)
            reply = read_message(self._replies)
        if reply is not None and reply[0] == ERROR:
            self._failed = RecordingError(reply[1].decode("utf-8", "replace"))
        else:
            self._failed = RecordingError(
                f"{self.path}: the writer process ended (exit code {self._process.poll()}); "
                "the recording holds what it wrote before"
            )
        return self._failed

    def _reply(self, timeout: float) -> tuple[int, bytes]:
        self._sock.settimeout(timeout)
        try:
            reply = read_message(self._replies)
        except TimeoutError:
            raise RecordingError(f"{self.path}: the writer did not answer within {timeout:g} s") from None
        except OSError:
            reply = None
        finally:
            with contextlib.suppress(OSError):
                self._sock.settimeout(None)
        if reply is None:
            raise self._ended()
        if reply[0] == ERROR:
            self._failed = RecordingError(reply[1].decode("utf-8", "replace"))
            raise self._failed
        return reply

    def _send(self, kind: int, parts: Sequence[bytes | memoryview] = ()) -> None:
        if self._failed is not None:
            raise self._failed
        try:
            send_message(self._sock, kind, parts)
        except OSError:  # its end is closed: it failed, or was killed
            raise self._ended() from None

    def open(self, info: CaptureInfo, lanes: bytes | None) -> None:
        self._send(OPEN, [pickle.dumps((info, lanes), protocol=pickle.HIGHEST_PROTOCOL)])
        self._reply(timeout=120.0)  # its start: importing roadsim

    def write(self, snapshot: Snapshot) -> None:
        """Hands a snapshot over (blocks while the socket's buffers are full).

        Raises:
            RecordingError: If the writer process has failed or ended.
        """
        self._send(WRITE, wire.encode(snapshot))

    def close(self) -> None:
        try:
            self._send(CLOSE)
            self._reply(timeout=600.0)
        finally:
            self._replies.close()
            self._sock.close()
            with contextlib.suppress(Exception):
                self._process.wait(timeout=10)


def serve(sock: socket.socket, path: str, overwrite: bool, compression: str, chunk_size: int) -> None:
    """The writer process's work (`WriterProcess`): writes what the socket brings until told to
    close, or until the simulation's process is gone (then it finishes the file all the
    same)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the run, which closes us
    writer = McapWriter(Path(path), overwrite, compression, chunk_size)
    try:
        for kind, payload in inbox(sock):
            if kind == WRITE:
                packet, actors = wire.decode(payload)
                writer.write(packet, actors)
            elif kind == OPEN:
                info, lanes = pickle.loads(payload)
                writer.open(info, lanes)
                send_message(sock, OK)
            elif kind == CLOSE:
                break
            else:
                raise RecordingError(f"{path}: the writer process got a message of kind {kind}")
        writer.close()
        _answer(sock, CLOSED, struct.pack("<Q", writer.snapshots))
    except BaseException as exc:
        text = str(exc) if isinstance(exc, RecordingError) else f"{path}: writing failed: {exc!r}"
        _answer(sock, ERROR, text.encode())
        writer.close()


def _answer(sock: socket.socket, kind: int, payload: bytes) -> None:
    with contextlib.suppress(OSError):  # the simulation's process is gone
        send_message(sock, kind, [payload])


def main(argv: list[str]) -> None:
    fd, path, overwrite, compression, chunk_size = argv
    sock = socket.socket(fileno=int(fd))
    serve(sock, path, overwrite == "1", compression, int(chunk_size))


if __name__ == "__main__":
    main(sys.argv[1:])
