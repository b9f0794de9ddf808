"""`Capture`: takes snapshots of one simulation at a rate and hands each to every sink.

Each `roadsim.Simulation` gets its own captures (there is no process-wide one, unlike the
seed's DeepDriveCapture singleton and its proxy actor): a capture listens to its
simulation's ticks (`roadsim.Simulation.add_tick_listener`) and, at every k-th frame,
takes a `Snapshot` of the frame the tick just made and writes it to its sinks.

What a snapshot holds: every active actor's state, and the reading of each sensor that
read this very frame (a driver sensor reads every frame; a ray tracer, lidar or camera
at the frames its ``sample_every`` gives, so it shows in the snapshots that fall on
those). A sensor switched off (``sim.sensor(name).active = False``) reads None: it
contributes nothing to a snapshot and costs nothing.

The rate: ``rate`` (Hz) becomes every k = round(1 / (rate * dt)) ticks; a scenario's
``capture:`` gives it (`roadsim.scenario.capture.CaptureSpec`), or the caller, or
`set_rate` at run time. Without one the capture takes every tick. Frames divisible by k
are captured, frame 0 included.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from types import TracebackType
from typing import Any

import numpy as np
import yaml

from roadsim.capture.sinks import Sink
from roadsim.capture.snapshot import (
    ActorStates,
    CaptureInfo,
    Sample,
    Snapshot,
    reading_type,
    vehicle_pose,
)
from roadsim.errors import ArgumentError, ArgumentTypeError
from roadsim.sim import Simulation
from roadsim.sim.build import MODEL_NAMES
from roadsim.world.state import KIND_NAMES

__all__ = ["CONTROL_NAMES", "Capture", "every_ticks"]

#: The names of `roadsim.world.state`'s control codes (NO_CONTROL, AUTOPILOT, EXTERNAL).
CONTROL_NAMES = ("none", "autopilot", "external")


def every_ticks(dt: float, rate: float | None = None, every: int | None = None) -> int:
    """Ticks between two snapshots for a rate (Hz) or a tick count (neither: 1).

    Raises:
        ArgumentError: For both, a rate that is not positive and finite or above the tick
            rate, or a count below 1.
        ArgumentTypeError: For values that are not numbers.
    """
    if rate is not None and every is not None:
        raise ArgumentError("capture: give a rate (Hz) or every (ticks), not both")
    if every is not None:
        if isinstance(every, bool) or not isinstance(every, int | np.integer):
            raise ArgumentTypeError(f"every: expected a whole number of ticks, got {every!r}")
        if every < 1:
            raise ArgumentError(f"every: expected at least 1 tick, got {every}")
        return int(every)
    if rate is None:
        return 1
    if isinstance(rate, bool) or not isinstance(rate, int | float | np.number):
        raise ArgumentTypeError(f"rate: expected a number (Hz), got {rate!r}")
    if not (math.isfinite(rate) and rate > 0):
        raise ArgumentError(f"rate: expected a positive number (Hz), got {rate!r}")
    tick_rate = 1.0 / dt
    if rate > tick_rate * (1 + 1e-9):
        raise ArgumentError(
            f"rate: {rate:g} Hz is above the simulation's {tick_rate:g} ticks per second "
            f"(dt {dt:g} s); a snapshot is taken after a tick"
        )
    return max(1, round(tick_rate / rate))


class Capture:
    """Snapshots of one simulation into sinks.

    Args:
        sim: The simulation.
        sinks: Where snapshots go (`roadsim.capture.Sink`); more with `add_sink`.
        rate: Snapshots per simulated second (Hz).
        every: Ticks between two snapshots (instead of a rate).

    Without ``rate`` and ``every`` the scenario's ``capture:`` decides, else every tick.
    Use it as a context manager, or call `start` and `close`::

        with Capture(sim, [Recorder("run.mcap")], rate=10):
            sim.run(60.0)

    Raises:
        ArgumentError: For a rate above the tick rate, both a rate and ``every``.
        ScenarioError: For a scenario's ``capture.rate`` above its tick rate.
    """

    def __init__(
        self,
        sim: Simulation,
        sinks: Iterable[Sink] = (),
        *,
        rate: float | None = None,
        every: int | None = None,
    ) -> None:
        self.sim = sim
        self.sinks: list[Sink] = []
        self.snapshots = 0
        self._started = False
        spec = sim.scenario.capture
        if rate is None and every is None and spec is not None:
            try:
                self.every = every_ticks(sim.dt, spec.rate, spec.every)
            except ArgumentError as exc:
                raise sim.scenario.source.error(
                    [(("capture", "rate"), str(exc).removeprefix("rate: "))]
                ) from None
        else:
            self.every = every_ticks(sim.dt, rate, every)
        for sink in sinks:
            self.add_sink(sink)

    @property
    def rate(self) -> float:
        """Snapshots per simulated second, as kept (Hz)."""
        return 1.0 / (self.every * self.sim.dt)

    def set_rate(self, rate: float | None = None, *, every: int | None = None) -> None:
        """Changes the rate from the next tick on (see `every_ticks`)."""
        self.every = every_ticks(self.sim.dt, rate, every)

    def info(self) -> CaptureInfo:
        """What the sinks are told when they open."""
        sc = self.sim.scenario
        data = sc.model_dump(mode="json", exclude_unset=True)
        data["seed"] = sc.seed
        return CaptureInfo(
            scenario_name=sc.name or "",
            scenario_yaml=yaml.safe_dump(data, sort_keys=False),
            seed=sc.seed,
            map=sc.map,
            dt=self.sim.dt,
            every=self.every,
            model_names=MODEL_NAMES,
            kind_names=KIND_NAMES,
            control_names=CONTROL_NAMES,
            net=self.sim.net,
        )

    # -- sinks -----------------------------------------------------------------------------------

    def add_sink(self, sink: Sink) -> Sink:
        """Adds a sink; it opens at once if the capture has started."""
        if not all(callable(getattr(sink, m, None)) for m in ("open", "write", "close")):
            raise ArgumentTypeError(
                f"sink: expected an object with open, write and close, got {type(sink).__name__}"
            )
        if self._started:
            sink.open(self.info())
        self.sinks.append(sink)
        return sink

    def remove_sink(self, sink: Sink) -> None:
        """Closes a sink and stops writing to it."""
        if sink in self.sinks:
            self.sinks.remove(sink)
            if self._started:
                sink.close()

    # -- running ------------------------------------------------------------------------------

    def start(self) -> Capture:
        """Opens the sinks and listens to the simulation's ticks; captures the current
        frame if it is due."""
        if self._started:
            return self
        info = self.info()
        opened: list[Sink] = []
        try:
            for sink in self.sinks:
                sink.open(info)
                opened.append(sink)
        except BaseException:
            for sink in opened:
                sink.close()
            raise
        self._started = True
        self.sim.add_tick_listener(self._on_tick)
        self._on_tick(self.sim)
        return self

    def _on_tick(self, sim: Simulation) -> None:
        if sim.frame % self.every == 0:
            self.write(self.take())

    def take(self) -> Snapshot:
        """A snapshot of the current frame, now, whatever the rate (not written)."""
        sim = self.sim
        st = sim.state
        actors = ActorStates.of(st)
        ego_id = -1 if sim.ego_slot is None else int(st.id[sim.ego_slot])
        samples: dict[str, Sample] = {}
        for name, reading in sim.readings.items():
            if reading is None or reading.frame != sim.frame:
                continue  # off, its vehicle gone, or not due at this frame
            kind = reading_type(reading)
            if kind is None:
                continue
            pose = getattr(reading, "pose", None)
            if pose is None:  # a driver view: the vehicle's frame
                pose = _vehicle_pose(sim, int(getattr(reading, "id", -1)), ego_id)
            sensor_id = int(getattr(reading, "sensor_id", -1))
            samples[name] = Sample(name, kind, sensor_id, reading.frame, reading.time, pose, reading)
        return Snapshot(sim.frame, sim.time, ego_id, actors, samples)

    def write(self, snapshot: Snapshot) -> None:
        """Hands a snapshot to every sink."""
        for sink in self.sinks:
            sink.write(snapshot)
        self.snapshots += 1

    def close(self) -> None:
        """Stops listening and closes every sink (each, even if one fails)."""
        self.sim.remove_tick_listener(self._on_tick)
        if not self._started:
            return
        self._started = False
        error: BaseException | None = None
        for sink in self.sinks:
            try:
                sink.close()
            except BaseException as exc:  # close the others all the same
                error = error or exc
        if error is not None:
            raise error

    def __enter__(self) -> Capture:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _vehicle_pose(sim: Simulation, actor_id: int, ego_id: int) -> Any:
    """The pose of an active actor's vehicle frame, read from the state (not from the
    snapshot's `ActorStates`, whose columns are made on first use)."""
    st = sim.state
    if actor_id == ego_id and sim.ego_slot is not None:
        k = sim.ego_slot  # where a driver sensor rides, most often
    else:
        k = int(np.flatnonzero(st.active & (st.id == actor_id))[0])
    return vehicle_pose(float(st.x[k]), float(st.y[k]), float(st.z[k]), float(st.heading[k]))
