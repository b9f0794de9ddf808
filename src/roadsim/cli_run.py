"""``roadsim run`` and ``roadsim scenario``: the main job and scenario tools."""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SubParsers = Any

DEFAULT_SCENARIO = "highway"


def register_run(groups: SubParsers) -> None:
    """``roadsim run [SCENARIO] [--duration S] [--seed N] [--realtime] [--record FILE]``."""
    run = groups.add_parser(
        "run",
        help="run a scenario headless",
        description="Run a scenario headless, as fast as possible or paced to real time, "
        "and print a summary.",
    )
    run.add_argument(
        "scenario",
        nargs="?",
        default=DEFAULT_SCENARIO,
        help=f"a scenario file or the name of a built-in scenario (default: {DEFAULT_SCENARIO})",
    )
    run.add_argument("--duration", type=float, help="simulated seconds (default: the scenario's)")
    run.add_argument("--seed", type=int, help="random seed (default: the scenario's)")
    run.add_argument("--realtime", action="store_true", help="pace the run to the wall clock")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    record = run.add_argument_group(
        "recording",
        "Capture snapshots of the run (every actor's state, every sensor that read) into "
        "an MCAP recording (Foxglove opens it; roadsim replay, export and info read it) "
        "and/or camera images as files.",
    )
    record.add_argument("--record", type=Path, metavar="FILE", help="write a recording (.mcap)")
    record.add_argument(
        "--images", type=Path, metavar="DIR", help="write each camera shot as files into DIR"
    )
    record.add_argument(
        "--capture-rate",
        type=float,
        metavar="HZ",
        help="snapshots per simulated second (default: the scenario's capture: section, "
        "else every tick)",
    )
    record.add_argument("--force", action="store_true", help="overwrite --record's file")
    record.add_argument(
        "--writer-process",
        action=argparse.BooleanOptionalAction,
        help="write the recording from a process of its own, on another core (default: "
        "where this process may use more than one CPU)",
    )
    run.set_defaults(handler=_run)


def register_scenario(groups: SubParsers) -> None:
    """``roadsim scenario schema|list|check|plot``."""
    group = groups.add_parser(
        "scenario", help="scenario files", description="Tools for scenario files."
    )
    cmds = group.add_subparsers(dest="scenario_command", metavar="SUBCOMMAND", required=True)
    schema = cmds.add_parser(
        "schema",
        help="print the JSON Schema of scenario files",
        description=(
            "Print the JSON Schema of scenario files, for editors to complete and check them."
        ),
    )
    schema.set_defaults(handler=_schema)
    lst = cmds.add_parser("list", help="list the built-in scenarios")
    lst.set_defaults(handler=_list)
    check = cmds.add_parser("check", help="validate a scenario file against its map")
    check.add_argument("scenario", help="a scenario file or built-in scenario name")
    check.set_defaults(handler=_check)
    plot = cmds.add_parser(
        "plot",
        help="draw a scenario over its map",
        description="Draw a scenario over its map, from above: the scripted objects' paths "
        "(the splines the simulation drives), their numbered control points, creation radii "
        "and targets, the ego's spawn and the static objects. The view closes in on them "
        "unless --whole-map is given.",
    )
    plot.add_argument("scenario", help="a scenario file or built-in scenario name")
    plot.add_argument(
        "-o",
        "--output",
        type=Path,
        help="image file to write (default: SCENARIO's name + .png, in the working directory)",
    )
    plot.add_argument("--whole-map", action="store_true", help="show the whole map")
    plot.set_defaults(handler=_plot)


#: The exit code of a run ended by Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class RunSummary:
    """What `roadsim run` reports.

    Times are wall-clock seconds: ``setup_s`` loads and checks the scenario and its map
    and builds the simulation, ``compile_s`` compiles the kernels (0 once they are
    cached), ``run_s`` runs the ticks. The rates are of the ticks alone.
    """

    scenario: str
    seed: int
    frames: int
    simulated_s: float
    setup_s: float
    compile_s: float
    run_s: float
    vehicles: int
    traffic_asked: int
    traffic_placed: int
    agent_steps: int
    collisions: int
    left_map: int
    interrupted: bool
    recording: str | None = None
    snapshots: int = 0
    recorded_bytes: int = 0

    @property
    def wall_s(self) -> float:
        """Wall time of the whole command, set-up and compiling included (s)."""
        return self.setup_s + self.compile_s + self.run_s

    @property
    def real_time_factor(self) -> float:
        return self.simulated_s / self.run_s if self.run_s > 0 else float("inf")

    @property
    def agent_steps_per_s(self) -> float:
        return self.agent_steps / self.run_s if self.run_s > 0 else float("inf")

    def to_text(self) -> str:
        lines = [
            f"Scenario          {self.scenario} (seed {self.seed})",
            f"Frames            {self.frames}" + ("  (interrupted)" if self.interrupted else ""),
            f"Simulated time    {self.simulated_s:.2f} s",
            f"Wall time         {self.wall_s:.2f} s in all",
            f"  load and build  {self.setup_s:.2f} s",
            *([f"  compiling       {self.compile_s:.2f} s"] if self.compile_s > 0 else []),
            f"  run             {self.run_s:.2f} s",
            f"Real-time factor  {self.real_time_factor:,.1f}x (of the run)",
            f"Traffic           {self.traffic_placed} placed of {self.traffic_asked} asked",
            f"Vehicles          {self.vehicles} at the end",
            f"Agent-steps/s     {self.agent_steps_per_s:,.0f}",
            f"Collisions        {self.collisions}",
            f"Left the map      {self.left_map}",
        ]
        if self.recording is not None:
            lines.append(
                f"Recorded          {self.snapshots} snapshots to {self.recording} "
                f"({self.recorded_bytes / 1e6:.2f} MB)"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "scenario": self.scenario,
            "seed": self.seed,
            "frames": self.frames,
            "simulated_s": self.simulated_s,
            "wall_s": self.wall_s,
            "setup_s": self.setup_s,
            "compile_s": self.compile_s,
            "run_s": self.run_s,
            "real_time_factor": self.real_time_factor,
            "traffic_asked": self.traffic_asked,
            "traffic_placed": self.traffic_placed,
            "vehicles": self.vehicles,
            "agent_steps_per_s": self.agent_steps_per_s,
            "collisions": self.collisions,
            "left_map": self.left_map,
            "interrupted": self.interrupted,
            "recording": self.recording,
            "snapshots": self.snapshots,
            "recorded_bytes": self.recorded_bytes,
        }


def _run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from roadsim._compile_report import compile_seconds
    from roadsim.scenario import load_scenario
    from roadsim.sim import Simulation

    begin = time.perf_counter()
    if args.duration is not None and not args.duration > 0:
        from roadsim.cli import _UsageError

        raise _UsageError("--duration must be positive")
    recording = args.record is not None or args.images is not None
    if args.capture_rate is not None and not recording:
        from roadsim.cli import _UsageError

        raise _UsageError("--capture-rate needs --record or --images")
    scenario = load_scenario(args.scenario)
    scenario = scenario.with_overrides(seed=args.seed, duration=args.duration)
    # The first run on a machine compiles the kernels (roadsim.compiling reports each on
    # stderr as it starts); their time is counted apart from set-up and run.
    compiled_at_start = compile_seconds()
    sim = Simulation(scenario)
    capture = _capture(sim, args) if recording else None
    steps = round(scenario.duration / sim.dt)
    interrupted = False
    agent_steps = 0
    # Ctrl-C ends the run cleanly with its summary: the handler only sets a flag that the
    # loop checks between ticks, so a tick is never cut in half.
    stop = {"now": False}
    previous = signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))
    if capture is not None:
        # Set-up: a recorder starts its writer process here; frame 0 is captured.
        capture.start()
    bar = tqdm(total=steps, unit="frame", disable=args.no_progress, leave=False, mininterval=0.5)
    start = time.perf_counter()
    compiled_in_setup = compile_seconds() - compiled_at_start
    setup_s = start - begin - compiled_in_setup
    try:
        for k in range(steps):
            if stop["now"]:
                interrupted = True
                break
            agent_steps += sim.vehicle_count
            sim.step()
            bar.update(1)
            if args.realtime:
                ahead = (k + 1) * sim.dt - (time.perf_counter() - start)
                if ahead > 0:
                    time.sleep(ahead)
    finally:
        # Also after Ctrl-C or an error: the recording is finished and readable.
        if capture is not None:
            capture.close()
        compile_s = compile_seconds() - compiled_at_start
        wall = time.perf_counter() - start - (compile_s - compiled_in_setup)
        bar.close()
        signal.signal(signal.SIGINT, previous)
    summary = RunSummary(
        scenario=scenario.name or args.scenario,
        seed=scenario.seed,
        frames=sim.frame,
        simulated_s=sim.time,
        setup_s=setup_s,
        compile_s=compile_s,
        run_s=wall,
        vehicles=sim.vehicle_count,
        traffic_asked=sim.traffic_asked,
        traffic_placed=sim.traffic_placed,
        agent_steps=agent_steps,
        collisions=len(sim.events),
        left_map=sim.left_map,
        interrupted=interrupted,
        recording=None if args.record is None else str(args.record),
        snapshots=0 if capture is None else capture.snapshots,
        recorded_bytes=args.record.stat().st_size if args.record is not None else 0,
    )
    print(json.dumps(summary.to_dict(), indent=2) if args.json else summary.to_text())
    # Interrupted, the summary is still printed, but the exit code says the run did not
    # finish (a script running `roadsim run && next` must not go on).
    return EXIT_INTERRUPTED if interrupted else 0


def _capture(sim: Any, args: argparse.Namespace) -> Any:
    """The run's capture with its sinks (`roadsim.capture`), not started.

    Raises:
        RecordingError: For a recording file that exists without --force.
        ArgumentError: For a --capture-rate above the tick rate.
    """
    from roadsim.capture import Capture, Recorder, RecordingError
    from roadsim.capture.images import ImageFiles
    from roadsim.errors import ArgumentError

    if args.record is not None and args.record.exists() and not args.force:
        raise RecordingError(f"{args.record}: the file exists (overwrite it with --force)")
    try:
        capture = Capture(sim, rate=args.capture_rate)
    except ArgumentError as exc:
        raise ArgumentError(f"--capture-rate: {str(exc).removeprefix('rate: ')}") from None
    if args.record is not None:
        background = args.writer_process
        if background is None:
            # Encoding and compressing a snapshot costs about as much as the highway's
            # tick; a second core takes it off the simulation's (docs/capture.md).
            background = _usable_cpus() > 1
        capture.add_sink(Recorder(args.record, overwrite=args.force, background=background))
    if args.images is not None:
        capture.add_sink(ImageFiles(args.images))
    return capture


def _schema(args: argparse.Namespace) -> int:
    from roadsim.scenario import scenario_json_schema

    print(json.dumps(scenario_json_schema(), indent=2))
    return 0


def _list(args: argparse.Namespace) -> int:
    from roadsim.scenario import builtin_scenarios

    for name in builtin_scenarios():
        print(name)
    return 0


def _check(args: argparse.Namespace) -> int:
    from roadsim.scenario import load_scenario

    scenario = load_scenario(args.scenario)
    print(f"{args.scenario}: ok (map {scenario.map})")
    return 0


def _plot(args: argparse.Namespace) -> int:
    from roadsim.cli import image_output
    from roadsim.scenario.load import load_scenario_with_map
    from roadsim.scenario.plot import plot_scenario

    output = image_output(args.output, args.scenario)
    scenario, net = load_scenario_with_map(args.scenario)
    written = plot_scenario(scenario, net, output, whole_map=args.whole_map)
    print(f"wrote {written}")
    return 0


def _usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (a platform without it: macOS, Windows)
        return os.cpu_count() or 1
