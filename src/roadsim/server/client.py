"""`Client`: the Python client of `roadsim serve` (docs/server.md).

    with roadsim.Client("tcp://127.0.0.1:2000") as client:
        client.set_mode("sync")                  # the world waits for this client's ticks
        client.subscribe(sensors=["camera"])
        client.control(throttle=0.3, steering=0.05)
        client.tick()
        image = client.sensor("camera").latest()["color"]    # (480, 640, 3) float32
        for snap in client.snapshots(limit=10):  # what the stream brings
            ...

Requests go out on a DEALER socket, one at a time, each waiting for its reply (a reply
that does not come within ``timeout`` seconds raises `TimeoutError`; a late one is told
apart by its id and dropped). Snapshots come on a second DEALER socket, which the client
reads when asked (`next_snapshot`, `snapshots`): ZeroMQ queues at most ``queue`` of them
on this side, and the server drops what finds the queue full and says how many in the
next message (`StreamSnapshot.dropped`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import msgpack
import numpy as np
import zmq

from roadsim.capture.snapshot import ACTOR_FIELDS, ActorStates
from roadsim.errors import RoadsimError
from roadsim.server.protocol import PROTOCOL_VERSION, ProtocolError, decode_arrays
from roadsim.server.shm import ArrayLayout, ShmReader, TornRead

__all__ = ["Client", "SensorHandle", "ServerError", "StreamSample", "StreamSnapshot"]


class ServerError(RoadsimError):
    """The server refused a request: ``code`` (`roadsim.server.protocol.ERROR_CODES`) and
    its message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True, eq=False)
class StreamSample:
    """One sensor's reading as the server sent it.

    Attributes:
        name, type, sensor_id, frame, time: As `roadsim.capture.Sample`.
        position, rotation: The sensor's pose in the world: (3,) and (3, 3).
        data: Its fields: numpy arrays (``color``, ``depth`` of a camera; ``xyz`` of a
            lidar ...) and plain values (``view`` of a driver sensor, a dict).
        shm: Where the arrays came from shared memory: the ring, slot and sequence.
    """

    name: str
    type: str
    sensor_id: int
    frame: int
    time: float
    position: np.ndarray[Any, Any]
    rotation: np.ndarray[Any, Any]
    data: Mapping[str, Any]
    shm: Mapping[str, Any] | None = None


@dataclass(frozen=True, eq=False)
class StreamSnapshot:
    """A snapshot as the stream brought it (`roadsim.capture.Snapshot`'s fields).

    Attributes:
        frame, time, ego_id: As in a snapshot.
        actors: Every active actor, sorted by id (None where the subscription left them out).
        samples: By sensor name (a shared-memory sample the server wrote over before it
            was read is left out and counted in `Client.torn_reads`).
        seq: This client's message count (0, 1, ...; a gap is a dropped message).
        dropped: Messages dropped for this client so far (its queue was full).
    """

    frame: int
    time: float
    ego_id: int
    actors: ActorStates | None
    samples: Mapping[str, StreamSample]
    seq: int
    dropped: int


@dataclass
class SensorHandle:
    """`Client.sensor`: one sensor of the server's world."""

    client: Client
    name: str

    def latest(self, *, shm: bool | None = None) -> dict[str, Any] | None:
        """The sensor's latest reading: its arrays and values by field name (a camera's
        ``color``, ``depth``, ``surface_ids``, ``actor_ids``; a lidar's ``xyz``...), with
        ``frame``, ``time``, ``position`` and ``rotation``; None while the sensor is off.

        ``shm`` (default: the client's) takes the arrays from shared memory, copied out
        and checked whole.
        """
        use_shm = self.client.shm if shm is None else shm
        result = self.client.request("reading", name=self.name, shm=use_shm)
        if result is None:
            return None
        sample = self.client._sample(self.name, result, copy=True)
        return {**sample.data, "frame": sample.frame, "time": sample.time,
                "position": sample.position, "rotation": sample.rotation}  # fmt: skip

    def configure(self, *, active: bool | None = None, sample_every: int | None = None) -> dict[str, Any]:
        args: dict[str, Any] = {"name": self.name}
        if active is not None:
            args["active"] = active
        if sample_every is not None:
            args["sample_every"] = sample_every
        out: dict[str, Any] = self.client.request("configure_sensor", **args)
        return out

    def activate(self) -> None:
        self.configure(active=True)

    def deactivate(self) -> None:
        self.configure(active=False)


@dataclass
class _Rings:
    readers: dict[str, ShmReader] = field(default_factory=dict)

    def get(self, name: str) -> ShmReader:
        if name not in self.readers:
            self.readers[name] = ShmReader(name)
        return self.readers[name]

    def close(self) -> None:
        for r in self.readers.values():
            r.close()
        self.readers.clear()


class Client:
    """A connection to a `roadsim serve` server.

    Args:
        endpoint: The server's control endpoint (``tcp://127.0.0.1:2000``).
        token: The server's token, where it has one.
        timeout: Seconds to wait for a reply.
        queue: Stream messages queued on this side (ZeroMQ's receive high-water mark).
        shm: Take camera, lidar and ray-tracer arrays from shared memory (the client must
            run on the server's machine).
        name: Shown in the server's log.

    Raises:
        ServerError: If the server refuses the hello (a version or a token).
        TimeoutError: If no server answers.
    """

    def __init__(
        self,
        endpoint: str = "tcp://127.0.0.1:2000",
        *,
        token: str | None = None,
        timeout: float = 30.0,
        queue: int = 8,
        shm: bool = False,
        name: str = "python",
    ) -> None:
        self.timeout = timeout
        self.shm = shm
        self._ctx: zmq.Context[Any] = zmq.Context()
        self._sock = self._ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.connect(endpoint)
        self._stream: zmq.Socket[Any] | None = None
        self._queue = queue
        self._ids = itertools.count(1)
        self._rings = _Rings()
        self.torn_reads = 0
        self.notices: list[dict[str, Any]] = []  # stream notices (a sync timeout)
        try:
            hello = self.request("hello", version=PROTOCOL_VERSION, token=token, client=name)
        except BaseException:
            self._close_sockets()
            raise
        self.session: str = hello["session"]
        self.stream_endpoint: str = hello["stream_endpoint"]
        self.world: dict[str, Any] = hello["world"]

    # -- requests --------------------------------------------------------------------------

    def request(self, type: str, **args: Any) -> Any:
        """Sends one request and returns its result (arrays as numpy arrays).

        Raises:
            ServerError: For an error reply.
            TimeoutError: If no reply comes within ``timeout``.
        """
        rid = next(self._ids)
        message = {"v": PROTOCOL_VERSION, "id": rid, "type": type, "args": args}
        self._sock.send(msgpack.packb(message, default=_plain))
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            # A receive timeout, not a poll: a poll builds a poller each call, a tenth of
            # a round trip.
            self._sock.setsockopt(zmq.RCVTIMEO, max(1, round(left * 1000.0)))
            try:
                if left <= 0:
                    raise zmq.Again
                frames = self._sock.recv_multipart()
            except zmq.Again:
                raise TimeoutError(f"{type}: no reply from the server within {self.timeout:g} s") from None
            header = msgpack.unpackb(frames[0], raw=False)
            if header.get("id") not in (rid, None):
                continue  # the late reply of a request that timed out
            if not header.get("ok"):
                err = header.get("error") or {}
                raise ServerError(str(err.get("code")), str(err.get("message")))
            return decode_arrays(header.get("result"), list(frames))

    def world_info(self) -> dict[str, Any]:
        """The world: scenario, map, seed, dt, frame, mode, ego id, sensors."""
        self.world = self.request("world")
        return self.world

    def load(self, scenario: str | None = None, *, scenario_yaml: str | None = None,
             map: str | None = None, seed: int | None = None) -> dict[str, Any]:  # fmt: skip
        """Loads a scenario (a built-in name or a path on the server), scenario text, or
        a bare map (no ego, no traffic); returns the world."""
        args = {k: v for k, v in (("scenario", scenario), ("scenario_yaml", scenario_yaml),
                                  ("map", map), ("seed", seed)) if v is not None}  # fmt: skip
        self.world = self.request("load", **args)
        return self.world

    def reset(self, seed: int | None = None) -> dict[str, Any]:
        """Builds the current scenario again from frame 0 (with another seed)."""
        self.world = self.request("reset", **({} if seed is None else {"seed": seed}))
        return self.world

    def tick(self, count: int = 1) -> int:
        """Advances the world ``count`` ticks (sync mode); returns the frame.

        Where this client subscribed and has not read its snapshots (above the server's
        ``sync_backlog_bytes`` of them), the server ticks less, or not at all, until it
        reads: the frame returned says how far the world went."""
        frame: int = self.request("tick", count=count)["frame"]
        return frame

    def set_mode(self, mode: str, *, speed: float = 1.0, timeout_s: float = 10.0) -> dict[str, Any]:
        """``"sync"`` (the world waits for this client's ticks, up to ``timeout_s`` between
        two requests) or ``"realtime"`` (``speed`` times wall-clock time)."""
        out: dict[str, Any] = self.request("set_mode", mode=mode, speed=speed, timeout_s=timeout_s)
        return out

    def control(self, actor: str | int = "ego", *, throttle: float = 0.0, brake: float = 0.0,
                steering: float = 0.0, accel: float | None = None,
                curvature: float | None = None) -> None:  # fmt: skip
        """Drives a vehicle from the next tick on (as `roadsim.EgoCommand`)."""
        args: dict[str, Any] = {"actor": actor, "throttle": throttle, "brake": brake, "steering": steering}
        if accel is not None:
            args["accel"] = accel
        if curvature is not None:
            args["curvature"] = curvature
        self.request("control", **args)

    def release(self, actor: str | int = "ego") -> None:
        """Hands a vehicle back to the autopilot."""
        self.request("control", actor=actor, release=True)

    def spawn(self, x: float, y: float, heading: float = 0.0, *, model: str = "car",
              speed: float = 0.0, external: bool = False) -> int:  # fmt: skip
        """A new vehicle; returns its actor id."""
        out: int = self.request("spawn", x=x, y=y, heading=heading, model=model, speed=speed,
                                external=external)["actor"]  # fmt: skip
        return out

    def spawn_on_lane(self, road: str | int, lane: int, s: float, *, t: float = 0.0,
                      model: str = "car", speed: float = 0.0, external: bool = False) -> int:  # fmt: skip
        """A new vehicle on lane ``lane`` of road ``road`` at ``s``, ``t`` m left of the
        lane's centre, facing the lane's driving direction; returns its actor id."""
        out: int = self.request("spawn", road=road, lane=lane, s=s, t=t, model=model,
                                speed=speed, external=external)["actor"]  # fmt: skip
        return out

    def remove(self, actor: str | int) -> None:
        self.request("remove", actor=actor)

    def add_sensor(self, **spec: Any) -> SensorHandle:
        """Adds a ray tracer, lidar or camera (a scenario's ``sensors:`` entry's keys)."""
        name = self.request("add_sensor", spec=spec)["name"]
        return SensorHandle(self, name)

    def sensor(self, name: str) -> SensorHandle:
        return SensorHandle(self, name)

    def sensors(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self.request("sensors")
        return out

    def set_capture_rate(self, rate: float | None = None, *, every: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = self.request("set_capture_rate", **(
            {"rate": rate} if rate is not None else {"every": every}))  # fmt: skip
        return out

    def state(self) -> tuple[int, ActorStates]:
        """The current frame and every active actor's state (sorted by id)."""
        out = self.request("state")
        return int(out["frame"]), _actors(out["actors"])

    def actor(self, key: str | int) -> dict[str, Any]:
        out: dict[str, Any] = self.request("actor", actor=key)
        return out

    def driver_views(self, ids: Sequence[int] | None = None, *, visibility: float | None = None) -> list[dict[str, Any]]:
        """The driver sensor's views (openPASS' names, as `DriverView.to_dict`)."""
        args: dict[str, Any] = {}
        if ids is not None:
            args["ids"] = [int(i) for i in ids]
        if visibility is not None:
            args["visibility"] = visibility
        out: list[dict[str, Any]] = self.request("driver_views", **args)["views"]
        return out

    # -- streams ----------------------------------------------------------------------------

    def subscribe(self, sensors: Sequence[str] | None = None, *, actors: bool = True,
                  shm: bool | None = None,
                  fields: Mapping[str, Sequence[str]] | None = None) -> None:  # fmt: skip
        """Asks for snapshots (of ``sensors``; default all) on this client's stream;
        ``fields`` picks the arrays of some sensors (``{"camera": ["color", "depth"]}``)."""
        use_shm = self.shm if shm is None else shm
        if self._stream is None:
            stream = self._ctx.socket(zmq.DEALER)
            stream.setsockopt(zmq.LINGER, 0)
            stream.setsockopt(zmq.RCVHWM, self._queue)
            stream.connect(self.stream_endpoint)
            stream.send(msgpack.packb({"v": PROTOCOL_VERSION, "session": self.session}))
            if not stream.poll(round(self.timeout * 1000.0)):
                stream.close()
                raise TimeoutError("subscribe: the stream socket got no answer")
            answer = msgpack.unpackb(stream.recv(), raw=False)
            if answer.get("type") != "attached":
                stream.close()
                raise ServerError(str(answer.get("code")), str(answer.get("message")))
            self._stream = stream
        args: dict[str, Any] = {"actors": actors, "shm": use_shm}
        if sensors is not None:
            args["sensors"] = list(sensors)
        if fields is not None:
            args["fields"] = {name: list(picked) for name, picked in fields.items()}
        self.request("subscribe", **args)

    def unsubscribe(self) -> dict[str, int]:
        out: dict[str, int] = self.request("unsubscribe")
        return out

    def next_snapshot(self, timeout: float | None = None) -> StreamSnapshot | None:
        """The next snapshot of the stream, or None if none comes within ``timeout`` s
        (default: the client's). Notices (a sync timeout) are kept in `notices`.

        Raises:
            ServerError: If the client has not subscribed.
        """
        if self._stream is None:
            raise ServerError("bad_value", "next_snapshot: subscribe first")
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left < 0 or not self._stream.poll(round(max(left, 0.0) * 1000.0)):
                return None
            frames = self._stream.recv_multipart(copy=False)
            header = msgpack.unpackb(frames[0].bytes, raw=False)
            if header.get("type") == "snapshot":
                return self._snapshot(header, list(frames))
            self.notices.append(header)

    def snapshots(self, limit: int | None = None, timeout: float | None = None) -> Iterator[StreamSnapshot]:
        """Snapshots as they come, until ``limit`` of them or none within ``timeout``."""
        count = 0
        while limit is None or count < limit:
            snap = self.next_snapshot(timeout)
            if snap is None:
                return
            count += 1
            yield snap

    def __iter__(self) -> Iterator[StreamSnapshot]:
        return self.snapshots()

    def _snapshot(self, header: Mapping[str, Any], frames: list[Any]) -> StreamSnapshot:
        body = decode_arrays(header, frames)
        actors = _actors(body["actors"]) if "actors" in body else None
        samples = {}
        for name, s in body["samples"].items():
            try:
                samples[name] = self._sample(name, s, copy=False)
            except TornRead:  # the server lapped the ring: left out, counted, never torn
                continue
        return StreamSnapshot(
            frame=int(body["frame"]), time=float(body["time"]), ego_id=int(body["ego_id"]),
            actors=actors, samples=samples, seq=int(body["seq"]), dropped=int(body["dropped"]),
        )  # fmt: skip

    def _sample(self, name: str, s: Mapping[str, Any], *, copy: bool) -> StreamSample:
        data = dict(s["data"])
        shm = s.get("shm")
        if shm is not None:
            layout = {k: ArrayLayout(int(v["offset"]), str(v["dtype"]), tuple(v["shape"]))
                      for k, v in shm["arrays"].items()}  # fmt: skip
            reader = self._rings.get(shm["ring"])
            try:
                if copy:
                    data.update(reader.read(int(shm["slot"]), int(shm["seq"]), layout))
                else:
                    data.update(reader.view(int(shm["slot"]), int(shm["seq"]), layout))
            except TornRead:
                self.torn_reads += 1
                raise
        pose = s["pose"]
        return StreamSample(
            name=name, type=s["type"], sensor_id=int(s["sensor_id"]), frame=int(s["frame"]),
            time=float(s["time"]), position=np.asarray(pose["position"], dtype=np.float64),
            rotation=np.asarray(pose["rotation"], dtype=np.float64), data=data, shm=shm,
        )  # fmt: skip

    def still_valid(self, sample: StreamSample) -> bool:
        """Whether a sample's shared-memory views still hold its frame (the server writes
        over a slot ``slots`` frames later); always true for arrays that came over TCP."""
        if sample.shm is None:
            return True
        return self._rings.get(sample.shm["ring"]).still_valid(int(sample.shm["slot"]), int(sample.shm["seq"]))

    # -- closing ----------------------------------------------------------------------------

    def close(self) -> None:
        """Says goodbye (if the server still answers) and closes the sockets."""
        try:
            old, self.timeout = self.timeout, min(self.timeout, 1.0)
            self.request("bye")
            self.timeout = old
        except (TimeoutError, ServerError, zmq.ZMQError, ProtocolError):
            pass
        self._close_sockets()

    def _close_sockets(self) -> None:
        if self._stream is not None:
            self._stream.close(linger=0)
            self._stream = None
        self._sock.close(linger=0)
        self._rings.close()
        self._ctx.term()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.close()


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as msgpack takes them (``x=np.float64(3.0)``)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot send a {type(value).__name__} in a request")


def _actors(arrays: Mapping[str, Any]) -> ActorStates:
    return ActorStates(**{name: arrays[name] for name in ACTOR_FIELDS})
