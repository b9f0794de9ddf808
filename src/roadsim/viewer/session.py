"""Sessions: what feeds a viewer and obeys its controls.

- `LiveSession` runs a simulation on its own thread, at ``speed`` times real time, and
  obeys play, pause, single step (synchronous mode), speed and sensor switches;
- `ReplaySession` plays a recording's snapshots at their pace, and can also jump to any
  of them (the timeline);
- `AttachedSession` only watches a simulation someone else drives (the TCP server): the
  controls are theirs.

Every session owns a `FeedSink`. Commands come from clients as dicts (`command`), from the
server's thread; a session checks them and applies them on its own thread, between ticks.
A bad command is answered with `roadsim.errors.ArgumentError`, which the server returns to
that client; it never stops the session.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Sequence
from typing import Any

from roadsim.capture import Capture, Snapshot
from roadsim.capture.reader import read_recording
from roadsim.errors import ArgumentError, RoadsimError
from roadsim.sim import Simulation
from roadsim.viewer.lanes import DEFAULT_RADIUS_M
from roadsim.viewer.sink import FeedSink

__all__ = ["AttachedSession", "LiveSession", "ReplaySession", "Session", "parse_command"]

#: Fastest play speed (times real time); "max" plays as fast as the machine goes.
MAX_SPEED = 64.0
_COMMANDS = ("play", "pause", "step", "speed", "seek", "sensor")


def parse_command(msg: Any) -> dict[str, Any]:
    """Checks a client's command: ``{"cmd": "play" | "pause" | "step" | "speed" | "seek" |
    "sensor", ...}``.

    Raises:
        ArgumentError: For anything else, saying what was expected.
    """
    if not isinstance(msg, dict) or msg.get("cmd") not in _COMMANDS:
        raise ArgumentError(f"expected a command {{'cmd': one of {', '.join(_COMMANDS)}}}, got {msg!r:.80}")
    cmd = msg["cmd"]
    if cmd == "speed":
        value = msg.get("value")
        if value == "max":
            return {"cmd": "speed", "value": math.inf}
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
            0 < value <= MAX_SPEED
        ):
            raise ArgumentError(f"speed: expected a number in (0, {MAX_SPEED:g}] or 'max', got {value!r}")
        return {"cmd": "speed", "value": float(value)}
    if cmd == "step":
        count = msg.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 1000:
            raise ArgumentError(f"step: expected a count from 1 to 1000, got {count!r}")
        return {"cmd": "step", "count": count}
    if cmd == "seek":
        frame = msg.get("frame")
        if isinstance(frame, bool) or not isinstance(frame, int):
            raise ArgumentError(f"seek: expected a whole frame number, got {frame!r}")
        return {"cmd": "seek", "frame": frame}
    if cmd == "sensor":
        name, active = msg.get("name"), msg.get("active")
        if not isinstance(name, str) or not isinstance(active, bool):
            raise ArgumentError("sensor: expected {'name': str, 'active': bool}")
        return {"cmd": "sensor", "name": name, "active": active}
    return {"cmd": cmd}


class _RealTime:
    """The real-time factor over the last two seconds of wall time."""

    def __init__(self) -> None:
        self._marks: deque[tuple[float, float]] = deque()

    def mark(self, sim_time: float) -> None:
        now = time.perf_counter()
        self._marks.append((now, sim_time))
        while self._marks and now - self._marks[0][0] > 2.0:
            self._marks.popleft()

    def reset(self) -> None:
        self._marks.clear()

    @property
    def factor(self) -> float:
        if len(self._marks) < 2:
            return 0.0
        (w0, s0), (w1, s1) = self._marks[0], self._marks[-1]
        return (s1 - s0) / (w1 - w0) if w1 > w0 else 0.0


class Session:
    """What the server needs of a session (see the module docstring)."""

    mode = "session"
    sink: FeedSink

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def command(self, msg: Any) -> None:
        raise ArgumentError(f"this viewer is {self.mode}: its controls are not the viewer's")

    def status(self) -> dict[str, Any]:
        return {"mode": self.mode}


class _Player(Session):
    """A session with its own thread that plays frames at ``speed`` times real time."""

    def __init__(self, *, speed: float, paused: bool, radius: float) -> None:
        if not (speed == math.inf or 0 < speed <= MAX_SPEED):
            raise ArgumentError(f"speed: expected a number in (0, {MAX_SPEED:g}], got {speed!r}")
        self.sink = FeedSink(radius=radius, status=self.status)
        self.speed = speed
        self.playing = not paused
        self.error: BaseException | None = None
        self._commands: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._rt = _RealTime()
        self._thread = threading.Thread(target=self._loop, name=f"roadsim-viewer-{self.mode}", daemon=True)

    def start(self) -> None:
        self._open()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10.0)
        self._close()

    def command(self, msg: Any) -> None:
        self._commands.put(parse_command(msg))
        self._wake.set()

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mode": self.mode,
            "playing": self.playing,
            "speed": "max" if self.speed == math.inf else self.speed,
            "rtf": self._rt.factor if self.playing else 0.0,
        }
        if self.error is not None:  # the page shows why the run stopped
            out["error"] = f"the simulation stopped: {type(self.error).__name__}: {self.error}"
        return out

    # -- the thread -------------------------------------------------------------------------

    def _loop(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # kept for the server to report; the page stays up
            self.error = exc
            self.playing = False
            self.sink.refresh()

    def _run(self) -> None:
        origin_wall, origin_time = time.perf_counter(), self._time()
        while not self._stop.is_set():
            steps, changed = 0, False
            while not self._commands.empty():
                cmd = self._commands.get()
                steps += self._apply(cmd)
                changed = True
                origin_wall, origin_time = time.perf_counter(), self._time()
            if changed and not self.playing and steps == 0:
                self.sink.refresh()
            for _ in range(steps):
                if not self._advance():
                    break
            if not self.playing:
                self._rt.reset()
                self._wake.wait()
                self._wake.clear()
                origin_wall, origin_time = time.perf_counter(), self._time()
                continue
            if self.speed != math.inf:
                due = origin_wall + (self._next_time() - origin_time) / self.speed
                delay = due - time.perf_counter()
                if delay > 0 and self._wake.wait(delay):
                    self._wake.clear()
                    continue  # a command came: apply it first
                if delay < -0.5:  # far behind (a slow tick): do not race to catch up
                    origin_wall, origin_time = time.perf_counter(), self._time()
            if not self._advance():
                self.playing = False
                self.sink.refresh()
            self._rt.mark(self._time())

    def _apply(self, cmd: dict[str, Any]) -> int:
        """Applies a command; returns the frames to step now."""
        name = cmd["cmd"]
        if name == "play":
            self.playing = True
        elif name == "pause":
            self.playing = False
        elif name == "speed":
            self.speed = cmd["value"]
        elif name == "step":
            self.playing = False
            return int(cmd["count"])
        else:
            self._apply_other(cmd)
        return 0

    # -- what a kind of session does ----------------------------------------------------------

    def _open(self) -> None: ...

    def _close(self) -> None: ...

    def _time(self) -> float:
        raise NotImplementedError

    def _next_time(self) -> float:
        raise NotImplementedError

    def _advance(self) -> bool:
        """Shows the next frame; False at the end."""
        raise NotImplementedError

    def _apply_other(self, cmd: dict[str, Any]) -> None:
        raise ArgumentError(f"{cmd['cmd']}: not available in a {self.mode} session")


class LiveSession(_Player):
    """Runs a simulation for the viewer (see the module docstring).

    Args:
        sim: The simulation.
        speed: Times real time (``math.inf``: as fast as it goes).
        paused: Start paused (synchronous mode: the viewer's step button ticks).
        radius: The lane sensor's radius (m).
        rate: Snapshots per simulated second (default: every tick).
        duration: Stop after this many simulated seconds (None: never).
    """

    mode = "live"

    def __init__(
        self,
        sim: Simulation,
        *,
        speed: float = 1.0,
        paused: bool = False,
        radius: float = DEFAULT_RADIUS_M,
        rate: float | None = None,
        duration: float | None = None,
    ) -> None:
        super().__init__(speed=speed, paused=paused, radius=radius)
        self.sim = sim
        self.capture = Capture(sim, [self.sink], rate=rate)
        self._end = None if duration is None else round(duration / sim.dt)

    def status(self) -> dict[str, Any]:
        out = super().status()
        out["sensors"] = {name: self.sim.sensor(name).active for name in self.sim.scene_sensors}
        return out

    def _open(self) -> None:
        self.capture.start()

    def _close(self) -> None:
        self.capture.close()

    def _time(self) -> float:
        return self.sim.time

    def _next_time(self) -> float:
        return self.sim.time + self.capture.every * self.sim.dt

    def _advance(self) -> bool:
        if self._end is not None and self.sim.frame >= self._end:
            return False
        for _ in range(self.capture.every):
            self.sim.step()
        return True

    def _apply_other(self, cmd: dict[str, Any]) -> None:
        if cmd["cmd"] == "sensor":
            if cmd["name"] not in self.sim.scene_sensors:
                return  # a stale page's switch; the status lists the sensors there are
            self.sim.sensor(cmd["name"]).active = cmd["active"]
            self.sink.refresh()
            return
        super()._apply_other(cmd)


class ReplaySession(_Player):
    """Plays a recording for the viewer, with a timeline (see the module docstring).

    Args:
        path: The recording (an MCAP file written by roadsim).
        partial: Read one a killed run cut short, as far as it goes.
        speed, paused, radius: As for `LiveSession`.

    Raises:
        RecordingError: For a file that is missing, not roadsim's, cut short, or empty.
    """

    mode = "replay"

    def __init__(
        self,
        path: str,
        *,
        partial: bool = False,
        speed: float = 1.0,
        paused: bool = False,
        radius: float = DEFAULT_RADIUS_M,
    ) -> None:
        super().__init__(speed=speed, paused=paused, radius=radius)
        self.recording = read_recording(path, partial=partial)
        # Every snapshot in memory, so that the timeline can jump anywhere at once.
        self.snapshots: Sequence[Snapshot] = list(self.recording.snapshots())
        if not self.snapshots:
            raise RoadsimError(f"{path}: the recording holds no snapshots")
        self._frames = [s.frame for s in self.snapshots]
        self.index = 0

    def status(self) -> dict[str, Any]:
        out = super().status()
        out["first"], out["last"] = self._frames[0], self._frames[-1]
        return out

    def _open(self) -> None:
        self.sink.open(self.recording.info)
        self.sink.write(self.snapshots[0])

    def _close(self) -> None:
        self.sink.close()

    def _time(self) -> float:
        return self.snapshots[self.index].time

    def _next_time(self) -> float:
        return self.snapshots[min(self.index + 1, len(self.snapshots) - 1)].time

    def _advance(self) -> bool:
        if self.index + 1 >= len(self.snapshots):
            return False
        self.index += 1
        self.sink.write(self.snapshots[self.index])
        return True

    def _apply_other(self, cmd: dict[str, Any]) -> None:
        if cmd["cmd"] == "seek":
            k = min(bisect_left(self._frames, cmd["frame"]), len(self._frames) - 1)
            self.index = k
            self.sink.restart()
            self.sink.write(self.snapshots[k])
            return
        super()._apply_other(cmd)


class AttachedSession(Session):
    """Watches a simulation that something else drives, through its capture.

    Args:
        capture: The simulation's capture (its rate is the viewer's frame rate).
        radius: The lane sensor's radius (m).
    """

    mode = "attached"

    def __init__(self, capture: Capture, *, radius: float = DEFAULT_RADIUS_M) -> None:
        self.capture = capture
        self._rt = _RealTime()
        self.sink = FeedSink(radius=radius, status=self.status)
        self._listen = lambda sim: self._rt.mark(sim.time)

    def start(self) -> None:
        self.capture.sim.add_tick_listener(self._listen)
        self.capture.add_sink(self.sink)
        if self.sink.info is None:  # the capture has not started: it opens the sink then
            self.capture.start()
        else:  # it had: the frame as it is now, for the pages that connect before a tick
            self.sink.write(self.capture.take())

    def stop(self) -> None:
        self.capture.sim.remove_tick_listener(self._listen)
        self.capture.remove_sink(self.sink)

    def follow(self, capture: Capture) -> None:
        """Watches ``capture`` instead: a server that loaded another scenario or reset
        its world made a new simulation and capture (pages get a key frame of it)."""
        self.stop()
        self.capture = capture
        self._rt = _RealTime()
        self.start()

    def status(self) -> dict[str, Any]:
        return {"mode": self.mode, "playing": True, "speed": 1.0, "rtf": self._rt.factor}
