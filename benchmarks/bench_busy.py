"""Small scenes with the other core busy: the common case of users who train a policy with
one simulation per core.

Run as ``.venv/bin/python benchmarks/bench_busy.py`` (``--help`` for the options). For
each built-in scenario named (by default ``crossing``, 13 vehicles, and ``highway``, about
300), it starts a process that spins on one core, then times blocks of ticks of one
simulation, alternating two ways of running the passes in the same process, so that
both see the same spells of the shared machine:

- ``roadsim``: as shipped: a pass splits its rows over numba's threads only from
  `roadsim._jit.MIN_PARALLEL_ROWS` rows on (these scenes stay on one thread);
- ``every pass split``: `roadsim._jit.always_split`, every pass on both threads
  however few its rows, which is how roadsim ran before the threshold.

It prints the median ms/tick of each way, their ratio, and, to show the work was real,
the vehicles, their mean speed and the collisions at the end.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import argparse
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import numpy as np

from roadsim._jit import always_split
from roadsim.sim import Simulation
from roadsim.world.state import VEHICLE

SCENARIOS = ("crossing", "highway")
BLOCKS = 7
TICKS = 100


def spin(seconds: float) -> None:
    """Keeps one core busy for ``seconds``."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1


def time_block(
    sim: Simulation, ticks: int, way: Callable[[], AbstractContextManager[object]]
) -> float:
    """ms per tick over ``ticks`` ticks of ``sim``, run the ``way`` given."""
    with way():
        start = time.perf_counter()
        for _ in range(ticks):
            sim.step()
        return (time.perf_counter() - start) / ticks * 1e3


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="built-in scenarios")
    parser.add_argument("--blocks", type=int, default=BLOCKS, help="blocks of each way")
    parser.add_argument("--ticks", type=int, default=TICKS, help="ticks a block")
    args = parser.parse_args(argv)
    ways: dict[str, Callable[[], AbstractContextManager[object]]] = {
        "roadsim": nullcontext,
        "every pass split": always_split,
    }
    print(f"{'scenario':<10} {'vehicles':>8} {'way':<17} {'ms/tick':>8} {'ratio':>7}")
    for name in args.scenarios.split(","):
        sim = Simulation(name)
        for way in ways.values():  # compile both ways before timing
            time_block(sim, 5, way)
        busy = multiprocessing.get_context("spawn").Process(target=spin, args=(3600.0,))
        busy.start()
        try:
            times: dict[str, list[float]] = {label: [] for label in ways}
            for _ in range(args.blocks):
                for label, way in ways.items():
                    times[label].append(time_block(sim, args.ticks, way))
        finally:
            busy.terminate()
            busy.join()
        st = sim.state
        vehicles = st.active & (st.kind == VEHICLE)
        base = statistics.median(times["roadsim"])
        for label in ways:
            ms = statistics.median(times[label])
            print(f"{name:<10} {int(vehicles.sum()):>8} {label:<17} {ms:>8.3f} {ms / base:>6.1f}x")
        speed = float(np.mean(st.speed[vehicles])) if vehicles.any() else 0.0
        print(
            f"{'':<10} mean speed {speed:.1f} m/s, collisions {len(sim.events)}, frame {sim.frame}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
