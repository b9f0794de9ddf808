"""The stream side of the server: who is attached, what each subscribed to, and sending
them snapshots and notices without ever waiting (docs/protocol.md, "Streams").

What a client's ZeroMQ queue (``Limits.stream_queue`` messages) cannot take waits in that
client's backlog here; a client's backlog keeps its newest ``stream_queue`` messages and
drops the older ones, counted, the count in the next message the client gets. The ticking
client of sync mode is the exception: it loses nothing (the server's `tick` waits for it
instead). A client that went away is forgotten at the first message that cannot reach it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgpack
import zmq

from roadsim.capture import Snapshot
from roadsim.server import protocol as p
from roadsim.server.samples import Rings, encode_snapshot

__all__ = ["Session", "Streams", "Subscription", "send_now"]


@dataclass(frozen=True)
class Subscription:
    sensors: frozenset[str] | None
    actors: bool
    shm: bool
    fields: tuple[tuple[str, frozenset[str]], ...] = ()  # array fields picked, by sensor


@dataclass
class Session:
    """One client: its control routing id, its stream's, what it subscribed to."""

    id: str
    control: bytes
    client: str = ""
    stream: bytes | None = None
    subscription: Subscription | None = None
    seq: int = 0
    sent: int = 0
    dropped: int = 0
    backlog: deque[list[Any]] = field(default_factory=deque)
    backlog_bytes: int = 0
    sync_timed_out: bool = False
    last_seen: float = field(default_factory=time.monotonic)


class Streams:
    """The stream socket's clients (`Session`s by their stream routing id) and the
    shared-memory rings their snapshots may use."""

    def __init__(self, limits: p.Limits, rings: Rings) -> None:
        self.limits = limits
        self.rings = rings
        self.sock: zmq.Socket[Any] | None = None
        self.by_stream: dict[bytes, Session] = {}

    def detach(self, session: Session) -> None:
        if session.stream is not None:
            self.by_stream.pop(session.stream, None)
            session.stream = None

    def drain(self, sock: zmq.Socket[Any], sessions: Mapping[str, Session]) -> None:
        """Reads the clients' ``attach`` messages: each ties a stream to a session."""
        for _ in range(1000):
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK, copy=True)
            except zmq.Again:
                return
            if len(frames) != 2:
                continue
            ident, raw = frames
            try:
                msg = msgpack.unpackb(raw, raw=False, max_str_len=256, max_array_len=16,
                                      max_map_len=16, max_bin_len=0, max_ext_len=0)  # fmt: skip
                key = msg.get("session") if isinstance(msg, dict) else None
                session = sessions.get(key) if isinstance(key, str) else None
            except Exception:  # a malformed attach: ignored, as an unknown session is
                session = None
            if session is None:
                send_now(sock, ident, [msgpack.packb(
                    {"v": p.PROTOCOL_VERSION, "type": "notice", "code": "unauthorized",
                     "message": "attach: expected {session: <the id hello gave>}"}
                )])  # fmt: skip
                continue
            if session.stream is not None:
                self.by_stream.pop(session.stream, None)
            session.stream = ident
            self.by_stream[ident] = session
            send_now(sock, ident, [msgpack.packb(
                {"v": p.PROTOCOL_VERSION, "type": "attached", "session": session.id}
            )])  # fmt: skip

    def notify(self, code: str, message: str, frame: int) -> None:
        """A notice to every attached client (dropped where its queue is full)."""
        stream = self.sock
        if stream is None:
            return
        for session in list(self.by_stream.values()):
            header = {"v": p.PROTOCOL_VERSION, "type": "notice", "code": code, "message": message,
                      "frame": frame}  # fmt: skip
            assert session.stream is not None
            send_now(stream, session.stream, [msgpack.packb(header)])

    def publish(self, snap: Snapshot, ticker: bytes | None) -> None:
        """Sends a snapshot to every subscribed client, without waiting for any;
        ``ticker`` is the control id of the client holding the tick in sync mode."""
        if self.sock is None:
            return
        encoded: dict[tuple[Any, ...], tuple[dict[str, Any], list[Any]]] = {}
        shm_cache: dict[Any, Any] = {}
        for session in list(self.by_stream.values()):
            sub = session.subscription
            if sub is None or session.stream is None:
                continue
            key = (sub.sensors, sub.actors, sub.shm, sub.fields)
            if key not in encoded:
                enc = p.Encoder()
                header = encode_snapshot(snap, enc, sensors=sub.sensors, actors=sub.actors,
                                         rings=self.rings if sub.shm else None,
                                         shm_cache=shm_cache, fields=dict(sub.fields))  # fmt: skip
                header["v"] = p.PROTOCOL_VERSION
                encoded[key] = (header, enc.frames)
            header, frames = encoded[key]
            header["seq"], header["dropped"] = session.seq, session.dropped
            session.seq += 1
            message = [msgpack.packb(header, use_bin_type=True), *frames]
            # What the client's ZeroMQ queue cannot take waits here. The ticking client
            # in sync mode loses nothing (its next tick waits for it instead: `_r_tick`);
            # any other keeps its newest `stream_queue` messages and is told of the rest.
            session.backlog.append(message)
            session.backlog_bytes += _nbytes(message)
            self.flush(session)
            if session.control != ticker:
                while len(session.backlog) > self.limits.stream_queue:
                    session.backlog_bytes -= _nbytes(session.backlog.popleft())
                    session.dropped += 1

    def deliver(self, session: Session, message: list[Any]) -> bool:
        """Sends one stream message now; False where the client's queue is full (or it is
        gone: then it is forgotten)."""
        stream = self.sock
        assert stream is not None and session.stream is not None
        try:
            stream.send_multipart([session.stream, *message], flags=zmq.NOBLOCK, copy=False)
        except zmq.Again:
            return False
        except zmq.ZMQError as exc:
            if exc.errno != zmq.EHOSTUNREACH:
                raise
            self.by_stream.pop(session.stream, None)  # it went away
            session.stream = None
            session.backlog.clear()
            session.backlog_bytes = 0
            return False
        session.sent += 1
        return True

    def flush(self, session: Session) -> None:
        """Sends what waits for a client, as far as its queue takes it."""
        while session.backlog and session.stream is not None:
            if not self.deliver(session, session.backlog[0]):
                return
            session.backlog_bytes -= _nbytes(session.backlog.popleft())

    def flush_all(self) -> bool:
        """Flushes every backlog; True while some remain."""
        waiting = False
        for session in list(self.by_stream.values()):
            if session.backlog:
                self.flush(session)
                waiting = waiting or bool(session.backlog)
        return waiting


def _nbytes(message: list[Any]) -> int:
    return sum(memoryview(f).nbytes for f in message)


def send_now(sock: zmq.Socket[Any], ident: bytes, frames: list[Any]) -> bool:
    """Sends without waiting; False where the peer's queue is full or it is gone."""
    # Zero-copy pays for big frames only: pyzmq's tracked frames cost tens of
    # microseconds, a round trip's budget, where copying a small reply costs nothing.
    big = any(memoryview(f).nbytes > _ZERO_COPY_BYTES for f in frames)
    try:
        sock.send_multipart([ident, *frames], flags=zmq.NOBLOCK, copy=not big)
        return True
    except zmq.Again:
        return False
    except zmq.ZMQError as exc:
        if exc.errno == zmq.EHOSTUNREACH:
            return False
        raise


#: Frames above this many bytes are sent without a copy.
_ZERO_COPY_BYTES = 1 << 16
