"""The recorder's writer process: ``python -m roadsim.capture.writer_process FD PATH
OVERWRITE COMPRESSION CHUNK_SIZE``, started by `roadsim.capture.Recorder` with
``background=True`` (`WriterProcess`), which talks to it over the socket FD."""

from __future__ import annotations

import contextlib
import signal
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from roadsim.capture.errors import RecordingError
from roadsim.capture.recorder import McapWriter, Packet
from roadsim.capture.snapshot import CaptureInfo

__all__ = ["WriterProcess", "serve"]

#: The socket buffer asked for on each side (bytes).
_BUFFER_BYTES = 4 << 20


class WriterProcess:
    """The recorder's writer process and the socket to it (`Recorder` with
    ``background=True``).

    Messages to it: ``("open", info, lanes)``, ``("write", packet)``, ``("close",)``; from
    it: ``("ok",)`` after opening, ``("error", text)`` when something failed (it then
    stops), ``("closed", snapshots)`` at the end.

    It is a plain subprocess (``python -m roadsim.capture.writer_process``) rather than a
    `multiprocessing` one: spawning runs the caller's main script again in the child, which
    a script without an ``if __name__ == "__main__"`` guard does not survive, and forking
    a process that runs numba's threads is unsafe.
    """

    def __init__(self, path: Path, overwrite: bool, compression: str, chunk_size: int) -> None:
        import os
        import socket
        import subprocess
        import sys
        from multiprocessing.connection import Connection

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
        self._conn = Connection(ours.detach())

    def _fail(self, what: str) -> RecordingError:
        with contextlib.suppress(Exception):
            self._process.wait(timeout=5)
        return RecordingError(f"{self.path}: the writer {what}")

    def _reply(self, timeout: float) -> tuple[Any, ...]:
        try:
            if not self._conn.poll(timeout):
                raise self._fail(f"did not answer within {timeout:g} s")
            reply: tuple[Any, ...] = self._conn.recv()
        except (EOFError, OSError):
            raise self._fail(f"process ended (exit code {self._process.poll()})") from None
        if reply[0] == "error":
            raise RecordingError(reply[1])
        return reply

    def _send(self, message: tuple[Any, ...]) -> None:
        try:
            self._conn.send(message)
        except OSError:
            raise self._fail(f"process ended (exit code {self._process.poll()})") from None

    def open(self, info: CaptureInfo, lanes: bytes | None) -> None:
        self._send(("open", info, lanes))
        self._reply(timeout=120.0)  # its start: importing roadsim

    def write(self, packet: Packet) -> None:
        if self._conn.poll():  # only an error comes back before the close
            self._reply(timeout=0.0)
        self._send(("write", packet))

    def close(self) -> None:
        try:
            self._send(("close",))
            self._reply(timeout=600.0)
        finally:
            self._conn.close()
            with contextlib.suppress(Exception):
                self._process.wait(timeout=10)


def serve(conn: Any, path: str, overwrite: bool, compression: str, chunk_size: int) -> None:
    """The writer process's work (`WriterProcess`): writes what the socket brings until told to
    close, or until the simulation's process is gone (then it finishes the file all the
    same)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the run, which closes us
    writer = McapWriter(Path(path), overwrite, compression, chunk_size)
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == "write":
                writer.write(message[1])
            elif message[0] == "open":
                writer.open(message[1], message[2])
                conn.send(("ok",))
            else:
                break
        writer.close()
        _answer(conn, ("closed", writer.snapshots))
    except BaseException as exc:
        text = str(exc) if isinstance(exc, RecordingError) else f"{path}: writing failed: {exc!r}"
        _answer(conn, ("error", text))
        writer.close()


def _answer(conn: Any, message: tuple[Any, ...]) -> None:
    with contextlib.suppress(OSError):  # the simulation's process is gone
        conn.send(message)


def main(argv: list[str]) -> None:
    fd, path, overwrite, compression, chunk_size = argv
    serve(Connection(int(fd)), path, overwrite == "1", compression, int(chunk_size))


if __name__ == "__main__":
    main(sys.argv[1:])
