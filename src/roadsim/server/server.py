"""`Server`: one simulation served to clients over ZeroMQ (docs/protocol.md).

Two TCP sockets, both ROUTER:

- the **control** socket (``port``) takes requests (`roadsim.server.protocol.REQUESTS`)
  and answers each with one reply; a client holds one session on it, opened by ``hello``;
- the **stream** socket (``port + 1``) sends each subscribed client its snapshots. The
  client connects, tells which session it belongs to (``attach``), and then only reads.

One thread runs the loop (`serve`): it waits on both sockets and, in real-time mode, for
the next tick's wall-clock time. Nothing a client does blocks it: replies and stream
messages are sent without waiting (``NOBLOCK`` with ``ROUTER_MANDATORY``); how streams
queue, drop and wait is `roadsim.server.streams`' business.

Modes. In **sync** mode the world advances only on ``tick`` requests of one client, the
ticker (the one that set the mode, or the first to tick): it waits for it, and a ticker
silent for ``timeout_s`` loses the role (a ``sync_timeout`` notice on every stream; the
world goes on in real time) so that the others are served. In **realtime** mode the server
ticks every ``dt / speed`` seconds of wall-clock time. The server starts in sync mode with
no ticker: the world stands until a client ticks or asks for real time.

A viewer or any other consumer in the same process attaches through `sinks`
(`roadsim.capture.Sink`s added to every capture the server makes, also after ``load``
and ``reset``) and reads `sim` and `capture`.
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import zmq

from roadsim.capture import Capture, CaptureInfo, Sink, Snapshot
from roadsim.capture.snapshot import Sample, reading_type, vehicle_pose
from roadsim.errors import ArgumentError, MapError, QueryError, RoadsimError, ScenarioError
from roadsim.road.load import builtin_maps
from roadsim.scenario import Scenario, builtin_scenarios
from roadsim.server import protocol as p
from roadsim.server.samples import ARRAY_FIELDS, Rings, encode_actors, encode_sample
from roadsim.server.streams import Session, Streams, Subscription, send_now
from roadsim.sim import EgoCommand, Simulation

__all__ = ["Server"]

log = logging.getLogger("roadsim.server")


class _Forbidden(RoadsimError):
    """A client named a file outside the folders the server may read for it."""



class _StreamSink:
    """The capture sink that hands each snapshot to the server's subscribers."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def open(self, info: CaptureInfo) -> None:
        pass

    def write(self, snapshot: Snapshot) -> None:
        # Never raises: the sinks after this one (a recording) must get every snapshot.
        try:
            self.server._publish(snapshot)
        except Exception:
            self.server.stats["stream_faults"] += 1
            log.exception("publishing frame %d failed", snapshot.frame)

    def close(self) -> None:
        pass


class Server:
    """A simulation served over TCP.

    Args:
        scenario: What to simulate first: a `Scenario`, a built-in name or a file.
        host: The address to bind (default loopback). Any other needs ``token``.
        port: The control port (0: any free one); the stream port is the next one
            (or any free one where ``port`` is 0).
        token: The secret clients present in ``hello``; required off loopback.
        seed: Overrides the scenario's seed.
        limits: Size limits (`roadsim.server.protocol.Limits`).
        realtime: Start in real-time mode (else sync mode, waiting for a ticker).
        shm_slots: Slots of each shared-memory ring.
        files: The folders whose files (scenarios, maps, in them or below) clients may
            load by path; default: the working folder. Built-in scenarios and maps are
            always allowed. A client that may connect may thus read, through ``load``,
            only what lies there.

    Raises:
        ArgumentError: For a non-loopback ``host`` without a token.
    """

    def __init__(
        self,
        scenario: Scenario | str | Path = "highway",
        *,
        host: str = "127.0.0.1",
        port: int = 2000,
        token: str | None = None,
        seed: int | None = None,
        limits: p.Limits | None = None,
        realtime: bool = False,
        shm_slots: int = 8,
        files: Sequence[str | Path] | None = None,
    ) -> None:
        if not _is_loopback(host) and not token:
            raise ArgumentError(
                f"host: binding {host} (not loopback) needs a token that clients present "
                "(--token or ROADSIM_TOKEN); refusing to serve without one"
            )
        self.host, self.port, self.token = host, port, token
        self.files = tuple(Path(d).expanduser().resolve() for d in (files or [Path.cwd()]))
        self.limits = limits or p.Limits()
        self.sinks: list[Sink] = []  # the viewer's hook: sinks attached to every capture
        self.on_load: list[Callable[[Server], None]] = []
        self._scenario_source: Scenario | str | Path = scenario
        self.mode = "realtime" if realtime else "sync"
        self.speed = 1.0
        self.sync_timeout = 10.0
        self._ticker: bytes | None = None
        self._last_tick_request = time.monotonic()
        self._next_tick = 0.0
        self._sessions: dict[bytes, Session] = {}  # by control routing id
        self._by_id: dict[str, Session] = {}
        self._rings = Rings(shm_slots)
        self._streams = Streams(self.limits, self._rings)
        self._ctx: zmq.Context[Any] | None = None
        self._control: zmq.Socket[Any] | None = None
        self._stream: zmq.Socket[Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.stats = {"requests": 0, "errors": 0, "ticks": 0, "late_ticks": 0, "stream_faults": 0}
        self.endpoint = ""
        self.stream_endpoint = ""
        self.sim = Simulation(scenario, seed=seed)
        self.capture = self._make_capture(None)

    # -- sockets ------------------------------------------------------------------------------

    def bind(self) -> Server:
        """Binds both sockets (ports are known from here on: `endpoint`)."""
        if self._ctx is not None:
            return self
        ctx = self._ctx = zmq.Context()
        host = f"[{self.host}]" if ":" in self.host else self.host
        control = self._control = ctx.socket(zmq.ROUTER)
        stream = self._stream = self._streams.sock = ctx.socket(zmq.ROUTER)
        for sock, most in ((control, self.limits.max_request_bytes), (stream, 4096)):
            sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
            sock.setsockopt(zmq.MAXMSGSIZE, most)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDHWM, 1000 if sock is control else self.limits.stream_queue)
            if ":" in self.host:
                sock.setsockopt(zmq.IPV6, 1)
        try:
            if self.port == 0:
                port = control.bind_to_random_port(f"tcp://{host}")
                stream_port = stream.bind_to_random_port(f"tcp://{host}")
            else:
                port, stream_port = self.port, self.port + 1
                control.bind(f"tcp://{host}:{port}")
                stream.bind(f"tcp://{host}:{stream_port}")
        except zmq.ZMQError as exc:
            self.close()
            raise ArgumentError(f"cannot bind {self.host}:{self.port}: {exc}") from None
        self.endpoint = f"tcp://{host}:{port}"
        self.stream_endpoint = f"tcp://{host}:{stream_port}"
        return self

    def start(self) -> Server:
        """Binds and serves in a background thread (`close` stops it)."""
        self.bind()
        self._thread = threading.Thread(target=self.serve, name="roadsim-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Asks `serve` to return (from any thread)."""
        self._stop.set()

    def close(self) -> None:
        """Stops serving, closes the sockets, the capture, the simulation and the rings."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10.0)
            self._thread = None
        for sock in (self._control, self._stream):
            if sock is not None:
                sock.close(linger=0)
        if self._ctx is not None:
            self._ctx.term()
        self._ctx = self._control = self._stream = self._streams.sock = None
        self.capture.close()
        self.sim.close()
        self._rings.close()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the loop --------------------------------------------------------------------------------

    def serve(self) -> None:
        """Serves until `stop` (or Ctrl-C in the caller's thread)."""
        self.bind()
        control, stream = self._control, self._stream
        assert control is not None and stream is not None
        poller = zmq.Poller()
        poller.register(control, zmq.POLLIN)
        poller.register(stream, zmq.POLLIN)
        self._next_tick = time.monotonic()
        backlogged = False
        while not self._stop.is_set():
            now = time.monotonic()
            wait = 0.001 if backlogged else 0.1
            if self.mode == "realtime":
                wait = min(wait, max(self._next_tick - now, 0.0))
            events = dict(poller.poll(round(wait * 1000.0)))
            if control in events:
                self._drain_control(control)
            if stream in events:
                self._streams.drain(stream, self._by_id)
            backlogged = self._streams.flush_all()
            now = time.monotonic()
            if self.mode == "realtime" and now >= self._next_tick:
                self._tick_realtime(now)
            elif (
                self.mode == "sync"
                and self._ticker is not None
                and now - self._last_tick_request > self.sync_timeout
            ):
                self._sync_timed_out()

    def _tick_realtime(self, now: float) -> None:
        try:
            self._step()
        except Exception as exc:  # the world cannot go on: stop it, keep serving
            log.exception("a tick failed; the world stops (sync mode)")
            self.mode, self._ticker = "sync", None
            self._notify("internal", f"a tick failed ({type(exc).__name__}: {exc}); the world "
                         "stands in sync mode")  # fmt: skip
            return
        period = self.sim.dt / self.speed
        self._next_tick += period
        if self._next_tick < now - period:  # more than a tick behind: do not race to catch up
            self.stats["late_ticks"] += 1
            self._next_tick = now + period

    def _step(self) -> None:
        self.sim.step()
        self.stats["ticks"] += 1

    def _drain_control(self, sock: zmq.Socket[Any]) -> None:
        for _ in range(1000):  # bounded, so ticks and streams keep their turn
            # Asking for the socket's events costs less than the exception of an empty
            # non-blocking receive.
            if not int(sock.getsockopt(zmq.EVENTS)) & zmq.POLLIN:
                return
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK, copy=True)
            except zmq.Again:
                return
            if len(frames) < 2:
                continue  # no routing id: cannot be
            self._handle(frames[0], frames[1:])

    def _send(self, sock: zmq.Socket[Any], ident: bytes, frames: list[Any]) -> bool:
        return send_now(sock, ident, frames)

    # -- requests ----------------------------------------------------------------------------

    def _handle(self, ident: bytes, frames: list[bytes]) -> None:
        self.stats["requests"] += 1
        control = self._control
        assert control is not None
        request_id: int | None = None
        try:
            request = p.decode_request(frames, self.limits)
            request_id = request.id
            reply = self._dispatch(ident, request)
        except p.ProtocolError as exc:
            self.stats["errors"] += 1
            reply = p.error_reply(exc.request_id if request_id is None else request_id,
                                  exc.code, exc.message)  # fmt: skip
        except Exception as exc:  # whatever a request raises, the server goes on
            self.stats["errors"] += 1
            reply = p.error_reply(request_id, *_error_code(exc))
        self._send(control, ident, reply)

    def _dispatch(self, ident: bytes, request: p.Request) -> list[Any]:
        session = self._sessions.get(ident)
        if request.type == "hello":
            return self._hello(ident, request)
        if session is None:
            raise p.ProtocolError("unauthorized", "send hello first", request.id)
        session.last_seen = time.monotonic()
        if ident == self._ticker:
            self._last_tick_request = session.last_seen
        handler = getattr(self, f"_r_{request.type}")
        enc = p.Encoder()
        result = handler(session, request.args, enc)
        return p.ok_reply(request.id, result, enc)

    def _hello(self, ident: bytes, request: p.Request) -> list[Any]:
        args = request.args
        assert isinstance(args, p.Hello)
        if args.version != p.PROTOCOL_VERSION:
            raise p.ProtocolError(
                "version",
                f"version: this server speaks protocol {p.PROTOCOL_VERSION}, got {args.version}",
                request.id,
            )
        if self.token is not None and not (
            args.token is not None and secrets.compare_digest(args.token, self.token)
        ):
            raise p.ProtocolError("unauthorized", "token: missing or wrong", request.id)
        old = self._sessions.get(ident)
        if old is not None:
            self._forget(old)
        while len(self._sessions) >= self.limits.max_sessions:
            # A client that went away without bye leaves its session: the longest silent
            # one goes (never the one holding the tick).
            idle = min((s for s in self._sessions.values() if s.control != self._ticker),
                       key=lambda s: s.last_seen, default=None)  # fmt: skip
            if idle is None:
                break
            self._forget(idle)
        session = Session(id=secrets.token_hex(16), control=ident, client=args.client or "")
        self._sessions[ident] = session
        self._by_id[session.id] = session
        result = {
            "version": p.PROTOCOL_VERSION,
            "session": session.id,
            "stream_endpoint": self.stream_endpoint,
            "limits": {
                "max_request_bytes": self.limits.max_request_bytes,
                "stream_queue": self.limits.stream_queue,
            },
            "world": self._world(),
        }
        return p.ok_reply(request.id, result)

    def _forget(self, session: Session) -> None:
        self._sessions.pop(session.control, None)
        self._by_id.pop(session.id, None)
        self._streams.detach(session)
        if self._ticker == session.control:
            self._ticker = None

    def _world(self) -> dict[str, Any]:
        sim = self.sim
        sc = sim.scenario
        return {
            "scenario": sc.name or "",
            "map": sc.map,
            "seed": sc.seed,
            "dt": sim.dt,
            "frame": sim.frame,
            "time": sim.time,
            "mode": self.mode,
            "speed": self.speed,
            "ego_id": -1 if sim.ego_slot is None else int(sim.state.id[sim.ego_slot]),
            "capture_every": self.capture.every,
            "sensors": self._sensor_list(),
        }

    def _sensor_list(self) -> list[dict[str, Any]]:
        out = []
        for name in self.sim.scene_sensors:
            s = self.sim.sensor(name)
            out.append({"name": name, "id": s.id, "type": type(s).__name__.lower(),
                        "active": bool(s.active), "sample_every": int(s.sample_every)})  # fmt: skip
        return out

    # One method per request type: (session, args, encoder) -> result.

    def _r_world(self, session: Session, args: p.Empty, enc: p.Encoder) -> Any:
        return self._world()

    def _r_bye(self, session: Session, args: p.Empty, enc: p.Encoder) -> Any:
        self._forget(session)
        return {}

    def _r_load(self, session: Session, args: p.Load, enc: p.Encoder) -> Any:
        from roadsim.scenario.load import parse_scenario

        source: Scenario | str
        if args.scenario_yaml is not None:
            # The map is checked before it is read: parsed first without loading it.
            unchecked = parse_scenario(args.scenario_yaml, name="<load request>", check_map=False)
            self._may_read(unchecked.map, "map", builtin_maps())
            source = parse_scenario(args.scenario_yaml, name="<load request>")
        elif args.map is not None:
            self._may_read(args.map, "map", builtin_maps())
            source = Scenario.model_validate({"map": args.map, "name": f"map {args.map}"})
        else:
            assert args.scenario is not None
            self._may_read(args.scenario, "scenario", builtin_scenarios())
            source = args.scenario
        self._replace(Simulation(source, seed=args.seed), source)
        return self._world()

    def _may_read(self, value: str, key: str, builtin: list[str]) -> None:
        """Refuses a path outside `files` (a built-in name, as the loaders take it, passes)."""
        given = Path(value).expanduser()
        if given.suffix == "" and not given.exists() and value in builtin:
            return
        path = given.resolve()
        if not any(path.is_relative_to(folder) for folder in self.files):
            allowed = ", ".join(str(folder) for folder in self.files)
            raise _Forbidden(
                f"{key}: {value!r} lies outside the folders this server reads for clients "
                f"({allowed}; `roadsim serve --files DIR` adds one)"
            )

    def _r_reset(self, session: Session, args: p.Reset, enc: p.Encoder) -> Any:
        self._replace(Simulation(self._scenario_source, seed=args.seed), self._scenario_source)
        return self._world()

    def _replace(self, sim: Simulation, source: Scenario | str | Path) -> None:
        """A new simulation in place of the old one, with a new capture at the same rate."""
        every = self.capture.every
        self.capture.close()
        self.sim.close()
        self.sim, self._scenario_source = sim, source
        self.capture = self._make_capture(every)
        self._next_tick = time.monotonic()
        for hook in self.on_load:
            hook(self)

    def _make_capture(self, every: int | None) -> Capture:
        sinks: list[Sink] = [_StreamSink(self), *self.sinks]
        if every is None:
            return Capture(self.sim, sinks).start()
        return Capture(self.sim, sinks, every=every).start()

    def add_sink(self, sink: Sink) -> None:
        """Attaches a sink to this capture and every later one (after load, reset)."""
        self.sinks.append(sink)
        self.capture.add_sink(sink)

    def _r_tick(self, session: Session, args: p.Tick, enc: p.Encoder) -> Any:
        if session.sync_timed_out:
            session.sync_timed_out = False
            raise p.ProtocolError(
                "sync_timeout",
                f"the server stopped waiting after {self.sync_timeout:g} s without a request "
                "from this client and went on in real time; set_mode sync to tick again",
            )
        if self.mode != "sync":
            raise p.ProtocolError("wrong_mode", "tick: the server runs in real time; set_mode sync first")
        if self._ticker is None:
            self._ticker = session.control
            self._last_tick_request = time.monotonic()
        elif self._ticker != session.control:
            raise p.ProtocolError("wrong_mode", "tick: another client holds the tick in sync mode")
        done = 0
        while done < args.count and session.backlog_bytes <= self.limits.sync_backlog_bytes:
            self._step()
            done += 1
        return {"frame": self.sim.frame, "time": self.sim.time, "ticks": done}

    def _r_set_mode(self, session: Session, args: p.SetMode, enc: p.Encoder) -> Any:
        self.mode, self.speed = args.mode, args.speed
        session.sync_timed_out = False
        if args.mode == "sync":
            self._ticker = session.control
            self.sync_timeout = args.timeout_s
            self._last_tick_request = time.monotonic()
        else:
            self._ticker = None
            self._next_tick = time.monotonic()
        return {"mode": self.mode, "speed": self.speed, "frame": self.sim.frame}

    def _sync_timed_out(self) -> None:
        ticker = self._sessions.get(self._ticker or b"")
        if ticker is not None:
            ticker.sync_timed_out = True
        self._ticker = None
        self.mode = "realtime"
        self._next_tick = time.monotonic()
        log.warning("sync mode: no request from the ticking client for %g s; running in real time",
                    self.sync_timeout)  # fmt: skip
        self._notify("sync_timeout", f"the ticking client was silent for {self.sync_timeout:g} s; "
                     "the world runs in real time")  # fmt: skip

    def _notify(self, code: str, message: str) -> None:
        self._streams.notify(code, message, self.sim.frame)

    def _r_control(self, session: Session, args: p.Control, enc: p.Encoder) -> Any:
        key = args.actor
        command = None
        if not args.release:
            command = EgoCommand(throttle=args.throttle, brake=args.brake, steering=args.steering,
                                 accel=args.accel, curvature=args.curvature)  # fmt: skip
        return {"actor": self.sim.drive(key, command), "external": command is not None}

    def _r_spawn(self, session: Session, args: p.Spawn, enc: p.Encoder) -> Any:
        model, speed, external = args.model, args.speed, args.external
        if args.road is not None and args.lane is not None and args.s is not None:
            actor = self.sim.spawn_vehicle_on_lane(args.road, args.lane, args.s, t=args.t,
                                                   model=model, speed=speed, external=external)  # fmt: skip
        else:
            assert args.x is not None and args.y is not None  # (Spawn checks one place is given)
            actor = self.sim.spawn_vehicle(args.x, args.y, args.heading, model=model,
                                           speed=speed, external=external)  # fmt: skip
        return {"actor": actor}

    def _r_remove(self, session: Session, args: p.Remove, enc: p.Encoder) -> Any:
        self.sim.remove_actor(args.actor)
        return {}

    def _r_add_sensor(self, session: Session, args: p.AddSensor, enc: p.Encoder) -> Any:
        sensor = self.sim.add_sensor(args.spec)
        return {"name": sensor.name, "id": sensor.id, "type": type(sensor).__name__.lower()}

    def _r_configure_sensor(self, session: Session, args: p.ConfigureSensor, enc: p.Encoder) -> Any:
        sensor = self.sim.sensor(args.name)
        if args.active is not None:
            sensor.active = args.active
        if args.sample_every is not None:
            sensor.sample_every = args.sample_every
        return next(s for s in self._sensor_list() if s["name"] == args.name)

    def _r_sensors(self, session: Session, args: p.Empty, enc: p.Encoder) -> Any:
        return self._sensor_list()

    def _r_set_capture_rate(self, session: Session, args: p.SetCaptureRate, enc: p.Encoder) -> Any:
        self.capture.set_rate(args.rate, every=args.every)
        return {"every": self.capture.every, "rate": self.capture.rate}

    def _r_subscribe(self, session: Session, args: p.Subscribe, enc: p.Encoder) -> Any:
        if args.sensors is not None:
            known = set(self.sim.readings)
            unknown = [n for n in args.sensors if n not in known]
            if unknown:
                raise QueryError(f"sensors: no sensor named {unknown[0]!r} (names: "
                                 f"{', '.join(sorted(known)) or 'none'})")  # fmt: skip
        if args.shm and not _is_loopback(self.host):
            raise ArgumentError("shm: shared memory is for clients on the server's machine; "
                                "this server is bound to another address")  # fmt: skip
        session.subscription = Subscription(
            sensors=None if args.sensors is None else frozenset(args.sensors),
            actors=args.actors,
            shm=args.shm,
            fields=self._picked_fields(args.fields or {}),
        )
        return {"stream_endpoint": self.stream_endpoint, "attached": session.stream is not None}

    def _picked_fields(self, fields: dict[str, list[str]]) -> tuple[tuple[str, frozenset[str]], ...]:
        """A subscription's choice of array fields, checked against each sensor's type."""
        out = []
        for name, picked in sorted(fields.items()):
            if name not in self.sim.scene_sensors:
                raise QueryError(f"fields: no camera, lidar or ray tracer named {name!r} "
                                 f"(names: {', '.join(self.sim.scene_sensors) or 'none'})")  # fmt: skip
            kind = type(self.sim.sensor(name)).__name__.lower()
            known = ARRAY_FIELDS.get(kind, ())
            unknown = sorted(set(picked) - set(known))
            if unknown:
                raise ArgumentError(f"fields: {name} ({kind}) has no array {unknown[0]!r} "
                                    f"(arrays: {', '.join(known)})")  # fmt: skip
            out.append((name, frozenset(picked)))
        return tuple(out)

    def _r_unsubscribe(self, session: Session, args: p.Empty, enc: p.Encoder) -> Any:
        session.subscription = None
        return {"sent": session.sent, "dropped": session.dropped}

    def _r_state(self, session: Session, args: p.State, enc: p.Encoder) -> Any:
        snap = self.capture.take()
        return {"frame": snap.frame, "time": snap.time, "ego_id": snap.ego_id,
                "actors": encode_actors(snap.actors, enc)}  # fmt: skip

    def _r_actor(self, session: Session, args: p.ActorQuery, enc: p.Encoder) -> Any:
        a = self.sim.actor(args.actor)
        return {k: getattr(a, k) for k in a.__dataclass_fields__}

    def _r_driver_views(self, session: Session, args: p.DriverViewsQuery, enc: p.Encoder) -> Any:
        kwargs = {} if args.visibility is None else {"visibility": args.visibility}
        views = self.sim.driver_views(args.ids, **kwargs)
        return {"frame": self.sim.frame, "views": [views[k].to_dict() for k in range(len(views))]}

    def _r_reading(self, session: Session, args: p.Reading, enc: p.Encoder) -> Any:
        readings = self.sim.readings
        if args.name not in readings:
            raise QueryError(f"no sensor named {args.name!r} (names: {', '.join(readings) or 'none'})")
        reading = readings[args.name]
        kind = reading_type(reading) if reading is not None else None
        if reading is None or kind is None:
            return None
        pose = getattr(reading, "pose", None)
        if pose is None:  # a driver view: the vehicle's frame, as a capture gives it
            a = self.sim.actor(int(getattr(reading, "id", -1)))
            pose = vehicle_pose(a.x, a.y, a.z, a.heading)
        sample = Sample(args.name, kind, int(getattr(reading, "sensor_id", -1)), reading.frame,
                        reading.time, pose, reading)  # fmt: skip
        rings = self._rings if args.shm and _is_loopback(self.host) else None
        return {"name": args.name, **encode_sample(sample, enc, rings)}

    # -- streams ------------------------------------------------------------------------------

    def _publish(self, snap: Snapshot) -> None:
        self._streams.publish(snap, self._ticker if self.mode == "sync" else None)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _error_code(exc: BaseException) -> tuple[str, str]:
    """An exception raised by a request as an error code and message."""
    if isinstance(exc, _Forbidden):
        return "forbidden", str(exc)
    if isinstance(exc, QueryError):
        return "not_found", str(exc)
    if isinstance(exc, ScenarioError | MapError):
        return "scenario", str(exc)
    if isinstance(exc, RoadsimError | ValueError | TypeError):
        return "bad_value", str(exc)
    log.exception("a request failed")
    return "internal", f"{type(exc).__name__}: {exc}"

