"""Where splitting a pass over both threads starts to pay: the measurement behind
`roadsim._jit.MIN_PARALLEL_ROWS`.

Run as ``.venv/bin/python benchmarks/split_threshold.py`` (``--help`` for the options),
on an otherwise idle machine. For each traffic count on the benchmark grid
(``benchmarks/grid_map.py``), it times blocks of ticks of one simulation, alternating in
the same process between every pass on one thread (``numba.set_num_threads(1)``) and every
pass split over all threads (`roadsim._jit.always_split`), and prints the median ms/tick
of each and their ratio, with the collisions and mean speed at the end as a check.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numba
import numpy as np

from grid_map import grid  # beside this file, on sys.path
from roadsim._jit import always_split
from roadsim.scenario.load import validate_data
from roadsim.sim import Simulation
from roadsim.world.state import VEHICLE

COUNTS = (100, 300, 600, 1_000, 2_000, 4_000)


@contextmanager
def one_thread() -> Iterator[None]:
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(threads)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default=",".join(map(str, COUNTS)), help="traffic counts")
    parser.add_argument("--grid", type=int, default=12, help="n of the n x n grid map")
    parser.add_argument("--blocks", type=int, default=7, help="blocks of each way")
    parser.add_argument("--ticks", type=int, default=40, help="ticks a block")
    args = parser.parse_args(argv)
    ways = {"one thread": one_thread, "split": always_split}
    print(f"{numba.get_num_threads()} threads; median ms/tick of {args.blocks} blocks")
    print(f"{'vehicles':>8} {'one thread':>11} {'split':>8} {'split/one':>10}  check")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "grid.xodr"
        grid(args.grid).write(path)
        for count in map(int, args.counts.split(",")):
            scenario = validate_data(
                {"map": str(path), "seed": 1, "traffic": {"count": count, "min_gap": 5.0}},
                "split_threshold",
            )
            sim = Simulation(scenario)
            times: dict[str, list[float]] = {label: [] for label in ways}
            for block in range(args.blocks + 1):
                for label, way in ways.items():
                    with way():
                        start = time.perf_counter()
                        for _ in range(args.ticks):
                            sim.step()
                        if block > 0:  # the first block warms up
                            times[label].append((time.perf_counter() - start) / args.ticks)
            one, split = (statistics.median(times[label]) * 1e3 for label in ways)
            st = sim.state
            vehicles = st.active & (st.kind == VEHICLE)
            print(
                f"{int(vehicles.sum()):>8} {one:>11.3f} {split:>8.3f} {split / one:>10.2f}  "
                f"mean speed {np.mean(st.speed[vehicles]):.1f} m/s, "
                f"collisions {len(sim.events)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
