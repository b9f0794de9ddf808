"""What recording costs a run: the built-in highway, ticked with and without a 20 Hz MCAP
recording (every actor's state and the ego's driver view, no cameras).

Run as ``.venv/bin/python benchmarks/bench_record.py`` (``--help`` for the options).

Three simulations of the highway with a driver sensor on the ego (so that the recording
holds driver views; all three sample it) tick in turns, a block of ticks each, so that all
see the same spells of the shared machine:

- ``plain``: no capture (what ``roadsim run`` does);
- ``recorded``: a capture at 20 Hz into a `roadsim.capture.Recorder`, everything in the
  simulation's process (``roadsim run --record --no-writer-process``, and the default
  on one CPU);
- ``writer process``: the same with ``Recorder(background=True)``, what ``roadsim run
  --record`` makes where it may use two CPUs or more: the simulation's thread copies each
  snapshot into one frame (`roadsim.capture.wire`) and a process of its own encodes the
  messages, compresses and writes.

It prints the median ms/tick of each, the ratios to ``plain`` (the target: at most 1.20
for the recording ``roadsim run --record`` makes), the load average (other work on the
shared machine), and, to show the work was real, the snapshots, bytes, actors per
snapshot and driver views each recording holds. With
``--command``, it also times ``roadsim run`` itself with and without ``--record``
(medians of whole runs; noisier).
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from roadsim.capture import Capture, Recorder
from roadsim.capture.reader import read_recording
from roadsim.scenario import load_scenario
from roadsim.scenario.schema import Scenario, validate_data
from roadsim.sim import Simulation

#: The most a 20 Hz recording may slow the run (issue 25).
TARGET_RATIO = 1.20


def scenario() -> Scenario:
    """The built-in highway with a driver sensor on the ego."""
    data = load_scenario("highway").model_dump(mode="json", exclude_unset=True)
    data["sensors"] = [{"type": "driver", "name": "driver"}]
    return validate_data(data, "highway-driver")


def time_block(sim: Simulation, ticks: int) -> tuple[float, float]:
    """ms per tick over ``ticks`` ticks: wall time, and this thread's CPU time."""
    start, cpu = time.perf_counter(), time.thread_time()
    for _ in range(ticks):
        sim.step()
    return (time.perf_counter() - start) / ticks * 1e3, (time.thread_time() - cpu) / ticks * 1e3


def in_process(args: argparse.Namespace, folder: Path) -> None:
    sc = scenario()
    kinds = {"plain": None, "recorded": False, "writer process": True}
    sims = {k: Simulation(sc) for k in kinds}
    captures = {}
    for kind, background in kinds.items():
        if background is not None:
            recorder = Recorder(folder / f"{kind}.mcap", background=background)
            captures[kind] = Capture(sims[kind], [recorder], rate=20).start()
    for sim in sims.values():  # past the first ticks' compiling and caching
        time_block(sim, 20)
    times: dict[str, list[float]] = {k: [] for k in kinds}
    cpu: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(args.blocks):
        for kind, sim in sims.items():
            wall, thread = time_block(sim, args.ticks)
            times[kind].append(wall)
            cpu[kind].append(thread)
    closing = {}
    for kind, capture in captures.items():
        start = time.perf_counter()
        capture.close()
        closing[kind] = time.perf_counter() - start
    ticks = args.blocks * args.ticks + 20
    # What `roadsim run --record` makes here, which the target is for.
    default = "writer process" if len(os.sched_getaffinity(0)) > 1 else "recorded"
    median = {k: statistics.median(v) for k, v in times.items()}
    median_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"highway + a driver sensor on the ego, {len(sims['plain'].state.id)} slots, "
          f"{args.blocks} blocks of {args.ticks} ticks each, in turns; medians")  # fmt: skip
    for kind in kinds:
        ratio = median[kind] / median["plain"]
        extra = "" if kind == "plain" else f"   ratio {ratio:5.3f}"
        if kind == default:
            extra += f"  ({'within' if ratio <= TARGET_RATIO else 'ABOVE'} the {TARGET_RATIO:.2f} target)"
        print(f"  {kind:14s} {median[kind]:6.3f} ms/tick{extra}")
    # The simulation thread's CPU time: what a busy machine's time slicing leaves out of
    # the figures (not the writer process's nor the compressor's threads).
    print("  the simulation thread's CPU time: " + ", ".join(
        f"{kind} {median_cpu[kind]:.3f} ms/tick" + ("" if kind == "plain" else f" ({median_cpu[kind] / median_cpu['plain']:.3f})")
        for kind in kinds
    ))  # fmt: skip
    load = os.getloadavg()[0]
    print(f"  load average {load:.2f} on {os.cpu_count()} cores (this run's simulation: 1)")
    print("What each recording holds:")
    for kind in captures:
        summary = read_recording(folder / f"{kind}.mcap").summary()
        size = summary.size_bytes
        print(f"  {kind:14s} {summary.snapshots} snapshots of {ticks + 1} frames, "
              f"{size / 1e6:.1f} MB ({size / summary.snapshots / 1e3:.1f} kB each), up to "
              f"{summary.actors_max} actors each, {summary.sensors['driver'][1]} driver views; "
              f"closed in {closing[kind]:.2f} s")  # fmt: skip


def roadsim_run(path: Path, duration: float, record: Path | None) -> dict[str, Any]:
    """``roadsim run`` as the command; its JSON summary."""
    command = [sys.executable, "-m", "roadsim", "run", str(path), "--duration", str(duration),
               "--no-progress", "--json"]  # fmt: skip
    if record is not None:
        record.unlink(missing_ok=True)
        command += ["--record", str(record), "--capture-rate", "20"]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"roadsim run failed:\n{proc.stderr}")
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def command(args: argparse.Namespace, folder: Path) -> None:
    path = folder / "highway-driver.yaml"
    path.write_text(yaml.safe_dump(scenario().model_dump(mode="json", exclude_unset=True)))
    record = folder / "run.mcap"
    roadsim_run(path, 1.0, None)  # warm the kernel cache and the page cache
    plain, recorded = [], []
    last: dict[str, Any] = {}
    for _ in range(args.repeats):
        plain.append(roadsim_run(path, args.duration, None)["run_s"])
        last = roadsim_run(path, args.duration, record)
        recorded.append(last["run_s"])
    base, rec = statistics.median(plain), statistics.median(recorded)
    print(f"roadsim run (the command), {args.duration:g} s simulated, medians of "
          f"{args.repeats} runs each, alternated; run time of the ticks")  # fmt: skip
    print(f"  without --record   {base:6.3f} s")
    print(f"  with --record      {rec:6.3f} s   ratio {rec / base:5.3f}   "
          f"({last['snapshots']} snapshots, {last['recorded_bytes'] / 1e6:.1f} MB)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=15, help="blocks per simulation (15)")
    parser.add_argument("--ticks", type=int, default=40, help="ticks per block (40)")
    parser.add_argument("--command", action="store_true", help="also time roadsim run")
    parser.add_argument("--duration", type=float, default=30.0, help="with --command: s (30)")
    parser.add_argument("--repeats", type=int, default=5, help="with --command: runs (5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        in_process(args, Path(tmp))
        if args.command:
            command(args, Path(tmp))


if __name__ == "__main__":
    main()
