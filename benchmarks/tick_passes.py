"""Where a tick's time goes: wall time of each pass of `Simulation.step`, per tick.

Run as ``.venv/bin/python benchmarks/tick_passes.py [--count N] [--ticks T] [--warm]``.
It builds the traffic row of ``bench_sim.py`` (cars on the 26 x 26 grid of
``grid_map.py``, the same seed), runs 40 ticks, then times T more. Each pass the tick
calls from Python (relocalisation, the bicycle model, collisions, and the traffic model's
`prepare`, footprint occupancy, the driver sensor with `perceive` in its loop, junction
gate, and `decide` with the wheel angles) is wrapped in a timer; it prints the median of each over the timed ticks, and
the median tick.

With ``--warm``, every pass except the bicycle model runs a second time at once on the
same inputs, and that call is timed too: the first call reads what the tick before left
in the caches (cold), the second what the first call just read (warm), so the difference
is the cost of cache misses. The second call perturbs the traffic a little (lane-change
timers run down twice as fast, relocalisation projects twice); time with it, nothing more.
The timers cost a few microseconds a pass; the tick without them is ``bench_sim.py``'s.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba

import roadsim.agents.junctions as junctions
import roadsim.agents.traffic as traffic
import roadsim.sensors.driver as driver
import roadsim.sim.simulation as simulation
from grid_map import grid  # beside this file, on sys.path
from roadsim.scenario.load import validate_data
from roadsim.sim import Simulation

SEED = 1  # as bench_sim.py
WARM_UP = 40  # ticks before the timed ones

cold: dict[str, list[float]] = defaultdict(list)
warm: dict[str, list[float]] = defaultdict(list)


def timed(label: str, fn: Callable[..., Any], again: bool) -> Callable[..., Any]:
    """``fn`` with a timer; with ``again``, called a second time and timed as warm."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        cold[label].append(time.perf_counter() - start)
        if again:
            start = time.perf_counter()
            fn(*args, **kwargs)
            warm[label].append(time.perf_counter() - start)
        return result

    return wrapper


def gate_timed(again: bool) -> Callable[..., Any]:
    """`JunctionGate.gaps` with a timer; its second call starts from, and leaves, the
    promises the first call started from and made."""
    gaps = junctions.JunctionGate.gaps

    def wrapper(self: junctions.JunctionGate, *args: Any, **kwargs: Any) -> Any:
        before = self.granted.copy(), self.grant_age.copy()
        start = time.perf_counter()
        result = gaps(self, *args, **kwargs)
        cold["junction gate"].append(time.perf_counter() - start)
        if again:
            after = self.granted.copy(), self.grant_age.copy()
            self.granted[:], self.grant_age[:] = before
            start = time.perf_counter()
            gaps(self, *args, **kwargs)
            warm["junction gate"].append(time.perf_counter() - start)
            self.granted[:], self.grant_age[:] = after
        return result

    return wrapper


def instrument(again: bool) -> None:
    """Wraps every pass in the names the tick calls it by."""
    passes = (
        (simulation, "relocalize_slots", "relocalisation", again),
        (simulation, "find_overlaps", "collisions", again),
        (simulation, "step_bicycle_slots", "bicycle model", False),  # it moves the cars
        (traffic, "prepare", "prepare", again),
        (traffic, "observe_perceive", "driver sensor, perceive", again),
        (traffic, "decide", "decide", again),
        (driver, "footprints", "footprint occupancy", again),
    )
    for owner, name, label, twice in passes:
        setattr(owner, name, timed(label, getattr(owner, name), twice))
    junctions.JunctionGate.gaps = gate_timed(again)  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="cars asked for")
    parser.add_argument("--ticks", type=int, default=200, help="ticks timed")
    parser.add_argument("--grid", type=int, default=26, help="junctions a side")
    parser.add_argument("--warm", action="store_true", help="time each pass twice")
    args = parser.parse_args(argv)
    instrument(args.warm)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "grid.xodr"
        grid(args.grid).write(path)
        data = {
            "map": str(path),
            "seed": SEED,
            "traffic": {"count": args.count, "mix": {"car": 1.0}, "min_gap": 5.0},
        }
        sim = Simulation(validate_data(data, "bench"))
        for _ in range(WARM_UP):
            sim.step()
        cold.clear()
        warm.clear()
        ticks = []
        for _ in range(args.ticks):
            start = time.perf_counter()
            sim.step()
            ticks.append(time.perf_counter() - start)
    threads = numba.get_num_threads()
    print(
        f"{sim.vehicle_count:,} vehicles on a {args.grid} x {args.grid} grid, {threads} threads;"
        f" median over {args.ticks} ticks after {WARM_UP}"
    )
    print(f"{'pass':22s} {'ms':>7s}" + (f" {'warm ms':>8s}" if args.warm else ""))
    total = 0.0
    for label in sorted(cold, key=lambda k: -statistics.median(cold[k])):
        ms = statistics.median(cold[label]) * 1e3
        total += ms
        line = f"{label:22s} {ms:7.3f}"
        if args.warm:
            line += f" {statistics.median(warm[label]) * 1e3:8.3f}" if warm[label] else "        -"
        print(line)
    print(f"{'sum of the passes':22s} {total:7.3f}")
    print(f"{'tick':22s} {statistics.median(ticks) * 1e3:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
