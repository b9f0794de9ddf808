"""`FeedSink`: the capture sink that turns snapshots into the viewer's binary frame messages
and hands them to every connected client.

A frame message is a msgpack map (`pack_frame`): ``frame``, ``time``, ``key`` (a key frame
draws from nothing; a delta applies to the previous frame), ``egoSensor``, ``worldSensor``,
``laneSensor`` (None in a delta where the lanes' version did not change), ``laneVersion``,
``sensors`` and ``status`` (the session's play state).

`write` runs inside the simulation's tick, so it never blocks on a client: each client has
a bounded queue of messages (`Subscriber`); one that falls `MAX_QUEUED` behind has its queue
dropped and is sent a key frame of the latest snapshot when it catches up. A client that
connects is sent a key frame first, made under the same lock as the deltas, so it misses
none and sees none twice.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import msgpack
import numpy as np

from roadsim.capture import CaptureInfo, Snapshot
from roadsim.errors import ArgumentError
from roadsim.viewer.feeds import EgoSensorFeed, LaneSensorFeed, WorldSensorFeed
from roadsim.viewer.lanes import DEFAULT_RADIUS_M, LaneTable
from roadsim.viewer.sensors import sensor_message

__all__ = ["MAX_QUEUED", "FeedSink", "Subscriber"]

#: Frame messages a client may fall behind before it is resynchronised with a key frame.
MAX_QUEUED = 8


class Subscriber:
    """One client's queue of frame messages.

    Args:
        wake: Called (from any thread) when a message was queued; the server's sender
            waits on it.
    """

    def __init__(self, wake: Callable[[], None]) -> None:
        self.pending: deque[bytes] = deque()
        self.resync = True  # the first message is a key frame
        self.dropped = 0
        self.wake = wake

    def push(self, data: bytes) -> None:
        if self.resync:  # a key frame replaces whatever would queue before it
            self.wake()
            return
        if len(self.pending) >= MAX_QUEUED:
            self.dropped += len(self.pending)
            self.pending.clear()
            self.resync = True
        else:
            self.pending.append(data)
        self.wake()


class FeedSink:
    """A capture sink (`roadsim.capture.Sink`) making the viewer's frame messages.

    Args:
        radius: The lane sensor's radius around the ego (m).
        status: Called for each message; its dict goes in as ``status`` (the session's
            play state, the real-time factor).

    Attributes:
        info: What the capture told the sink when it opened.
        frames: Frame messages made so far; ``bytes_sent`` their total size (bytes).
    """

    def __init__(
        self,
        *,
        radius: float = DEFAULT_RADIUS_M,
        status: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        if not radius > 0:
            raise ArgumentError(f"radius: expected a positive distance (m), got {radius!r}")
        self.radius = radius
        self.status = status or dict
        self.info: CaptureInfo | None = None
        self.frames = 0
        self.bytes_made = 0
        self.last_size = 0
        self._lock = threading.Lock()
        self._subscribers: list[Subscriber] = []
        self._latest: Snapshot | None = None
        self._tables: dict[int, LaneTable] = {}

    # -- the Sink interface ---------------------------------------------------------------

    def open(self, info: CaptureInfo) -> None:
        from roadsim.road.load import load_map

        net = info.net if info.net is not None else load_map(info.map)
        with self._lock:
            self.info = info
            self.table = LaneTable(net)
            self.origin = self.table.origin
            self.ego = EgoSensorFeed(info, self.origin)
            self.world = WorldSensorFeed(info, net, self.origin)
            self.lanes = LaneSensorFeed(self.table, self.radius)
            self._latest = None
            for sub in self._subscribers:
                sub.resync = True

    def write(self, snapshot: Snapshot) -> None:
        with self._lock:
            data = self._pack(snapshot, key=False)
            self._latest = snapshot
            for sub in self._subscribers:
                sub.push(data)

    def close(self) -> None:
        with self._lock:
            for sub in self._subscribers:
                sub.resync = True

    # -- clients ------------------------------------------------------------------------------

    def subscribe(self, wake: Callable[[], None]) -> Subscriber:
        sub = Subscriber(wake)
        with self._lock:
            self._subscribers.append(sub)
        wake()
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        with self._lock:
            if sub in self._subscribers:
                self._subscribers.remove(sub)

    def take(self, sub: Subscriber) -> list[bytes]:
        """The messages to send ``sub`` now: a key frame where it needs one, else its queue."""
        with self._lock:
            if sub.resync:
                if self._latest is None or self.info is None:
                    return []
                sub.resync = False
                sub.pending.clear()
                return [self._pack(self._latest, key=True)]
            out = list(sub.pending)
            sub.pending.clear()
            return out

    def restart(self) -> None:
        """The next snapshot goes to every client as a key frame (after a jump in time)."""
        with self._lock:
            self.world.reset()
            self.lanes.reset()
            for sub in self._subscribers:
                sub.resync = True

    def refresh(self) -> None:
        """Sends every client a key frame of the latest snapshot (e.g. its status changed
        while paused)."""
        with self._lock:
            for sub in self._subscribers:
                sub.resync = True
                sub.wake()

    # -- messages -----------------------------------------------------------------------------

    def _pack(self, snap: Snapshot, *, key: bool) -> bytes:
        lanes = self.lanes.key(snap) if key else self.lanes.delta(snap)
        msg = {
            "frame": int(snap.frame),
            "time": float(snap.time),
            "key": key,
            "egoSensor": self.ego.message(snap),
            "worldSensor": self.world.key(snap) if key else self.world.delta(snap),
            "laneSensor": lanes,
            "laneVersion": self.lanes.version,
            "sensors": sensor_message(snap, self.origin),
            "status": self.status(),
        }
        if key:
            assert self.info is not None
            msg["info"] = {
                "scenario": self.info.scenario_name,
                "map": self.info.map,
                "dt": self.info.dt,
                "every": self.info.every,
                "origin": [float(v) for v in np.asarray(self.origin)],
                "models": list(self.info.model_names),
                "kinds": list(self.info.kind_names),
            }
        data: bytes = msgpack.packb(msg, use_bin_type=True)
        self.frames += 1
        self.bytes_made += len(data)
        self.last_size = len(data)
        return data
