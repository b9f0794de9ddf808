"""Simulation benchmark: agent-steps per second, roadsim beside highway-env.

Run as ``.venv/bin/python benchmarks/bench_sim.py`` (``make bench`` installs the ``bench``
extra first; ``--quick`` for a short run, ``--help`` for the options). It prints one table:

- roadsim's `Simulation` with 10, 100, 1,000 and 10,000 cars of traffic on an n x n grid of
  junctions (``benchmarks/grid_map.py``, n = 26 by default: about 330 km of lane on the
  streets, 490 km with the junctions' connecting lanes), written once to a temporary
  directory. After 20 warm-up ticks, blocks of k ticks are timed, k chosen so that a block
  takes about a second (at least 20 ticks); the rate is active vehicles x ticks / wall
  second, median of 5 blocks;
- highway-env's ``highway-v0`` with 20, 50 and 100 other vehicles, its default kinematics
  observation, no rendering, and a fixed action (IDLE). One ``env.step()`` runs
  ``simulation_frequency / policy_frequency`` ticks (15 by default), so the rate is
  vehicles on the road (the ego included) x ticks / wall second, median of 5 blocks of
  about a second each. An episode that ends inside a block (the ego crashed) ends the
  block; the reset that follows is not timed.

The ratio column divides a roadsim rate by highway-env's fastest rate. The collisions
column is a sanity check: roadsim's collision events, highway-env's crashed vehicles.

Targets: 1,000 vehicles at >= 1,000,000 agent-steps/s; 10,000 vehicles at >= 2,500,000
agent-steps/s. Single-threaded (OPENBLAS_NUM_THREADS=1); both simulators run in the same
process, one after the other.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import argparse
import math
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

import roadsim
from grid_map import grid  # beside this file, which a script has on sys.path
from roadsim.road.summary import map_summary
from roadsim.scenario.load import validate_data
from roadsim.sim import Simulation

COUNTS = (10, 100, 1_000, 10_000)
PEER_COUNTS = (20, 50, 100)
GRID = 26
REPEATS, QUICK_REPEATS = 5, 3
BLOCK_S, QUICK_BLOCK_S = 1.0, 0.25
WARMUP_TICKS = 20
MIN_TICKS = 20
PEER_MIN_STEPS = 2
SEED = 1
TARGETS = {1_000: 1_000_000, 10_000: 2_500_000}  # vehicles -> agent-steps/s


@dataclass(frozen=True)
class Row:
    """One configuration's result.

    Attributes:
        simulator: ``"roadsim"`` or ``"highway-env"``.
        asked: The traffic count configured.
        vehicles: Vehicles actually simulated (median over the blocks).
        dt_s: Simulated time of one tick (s).
        ticks: Ticks in one block (median for highway-env, whose blocks can end early).
        blocks: Blocks timed.
        rate: Agent-steps per wall second, median over the blocks.
        collisions: Collision events (roadsim) or crashed vehicles (highway-env).
    """

    simulator: str
    asked: int
    vehicles: int
    dt_s: float
    ticks: int
    blocks: int
    rate: float
    collisions: int


def roadsim_row(path: Path, count: int, repeats: int, block_s: float) -> Row:
    """Times roadsim's `Simulation` with ``count`` cars on the map at ``path``."""
    scenario = validate_data(
        {
            "map": str(path),
            "seed": SEED,
            "traffic": {"count": count, "mix": {"car": 1.0}, "min_gap": 5.0},
        },
        "bench",
    )
    sim = Simulation(scenario)
    for _ in range(WARMUP_TICKS):
        sim.step()
    start = time.perf_counter()
    for _ in range(MIN_TICKS):
        sim.step()
    probe = time.perf_counter() - start
    ticks = max(MIN_TICKS, math.ceil(MIN_TICKS * block_s / probe))
    rates, counts = [], []
    for _ in range(repeats):
        before = sim.vehicle_count
        start = time.perf_counter()
        for _ in range(ticks):
            sim.step()
        seconds = time.perf_counter() - start
        # Vehicles that leave the map during a block count for half of it.
        vehicles = 0.5 * (before + sim.vehicle_count)
        rates.append(vehicles * ticks / seconds)
        counts.append(vehicles)
    return Row(
        "roadsim",
        count,
        round(statistics.median(counts)),
        sim.dt,
        ticks,
        repeats,
        statistics.median(rates),
        len(sim.events),
    )


def import_highway_env() -> tuple[ModuleType, str] | None:
    """``(gymnasium, highway-env's version)``, or None without the ``bench`` extra."""
    try:
        import gymnasium
        import highway_env
    except ImportError:
        return None
    return gymnasium, highway_env.__version__


def highway_row(gymnasium: ModuleType, count: int, repeats: int, block_s: float) -> Row:
    """Times highway-env's ``highway-v0`` with ``count`` other vehicles."""
    env = gymnasium.make(
        "highway-v0",
        render_mode=None,
        config={"vehicles_count": count, "duration": 1_000_000},
    )
    core = env.unwrapped
    env.reset(seed=SEED)
    ticks_per_step = core.config["simulation_frequency"] // core.config["policy_frequency"]
    idle = core.action_type.actions_indexes["IDLE"]
    episode = crashed = 0

    def new_episode() -> None:
        """Counts the ended episode's crashed vehicles and starts the next episode."""
        nonlocal episode, crashed
        crashed += sum(v.crashed for v in core.road.vehicles)
        episode += 1
        env.reset(seed=SEED + episode)

    for _ in range(PEER_MIN_STEPS):  # warm-up
        _, _, terminated, truncated, _ = env.step(idle)
        if terminated or truncated:
            new_episode()
    start = time.perf_counter()
    _, _, terminated, truncated, _ = env.step(idle)
    probe = time.perf_counter() - start
    if terminated or truncated:
        new_episode()
    steps = max(PEER_MIN_STEPS, math.ceil(block_s / probe))
    rates, counts, ticks = [], [], []
    for _ in range(repeats):
        agent_steps = done = 0
        ended = False
        start = time.perf_counter()
        while done < steps and not ended:
            agent_steps += len(core.road.vehicles) * ticks_per_step
            _, _, terminated, truncated, _ = env.step(idle)
            ended = terminated or truncated
            done += 1
        seconds = time.perf_counter() - start
        rates.append(agent_steps / seconds)
        counts.append(agent_steps / (done * ticks_per_step))
        ticks.append(done * ticks_per_step)
        if ended:
            new_episode()
    crashed += sum(v.crashed for v in core.road.vehicles)
    env.close()
    return Row(
        "highway-env",
        count,
        round(statistics.median(counts)),
        1.0 / core.config["simulation_frequency"],
        round(statistics.median(ticks)),
        repeats,
        statistics.median(rates),
        crashed,
    )


def print_table(rows: list[Row]) -> None:
    peer = [row.rate for row in rows if row.simulator == "highway-env"]
    best_peer = max(peer, default=math.nan)
    head = (
        f"{'simulator':<12} {'asked':>6} {'vehicles':>8} {'dt':>7} {'ticks/block':>11} "
        f"{'blocks':>6} {'ms/tick':>8} {'agent-steps/s':>14} {'vs highway-env':>14} "
        f"{'collisions':>10}"
    )
    print(head)
    print("-" * len(head))
    for row in rows:
        ms_per_tick = row.vehicles / row.rate * 1e3
        ratio = (
            f"{row.rate / best_peer:,.1f}x"
            if row.simulator == "roadsim" and not math.isnan(best_peer)
            else "-"
        )
        print(
            f"{row.simulator:<12} {row.asked:>6,} {row.vehicles:>8,} {row.dt_s * 1e3:>5.1f}ms "
            f"{row.ticks:>11,} {row.blocks:>6} {ms_per_tick:>8.3f} {row.rate:>14,.0f} "
            f"{ratio:>14} {row.collisions:>10,}"
        )


def print_targets(rows: list[Row]) -> None:
    measured = {row.asked: row for row in rows if row.simulator == "roadsim"}
    for count, target in TARGETS.items():
        row = measured.get(count)
        if row is None:
            print(f"target {count:,} vehicles at >= {target:,} agent-steps/s: not measured")
            continue
        verdict = "ok" if row.rate >= target else "MISS"
        print(
            f"target {count:,} vehicles at >= {target:,} agent-steps/s: "
            f"{row.rate:,.0f} with {row.vehicles:,} vehicles ({verdict})"
        )


def count_list(text: str) -> tuple[int, ...]:
    """``"10,100"`` -> ``(10, 100)``."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"counts must be positive, got {text!r}")
    return values


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--counts", type=count_list, default=COUNTS, help="roadsim traffic counts (10,100,...)"
    )
    parser.add_argument("--grid", type=int, default=GRID, help="n of the n x n grid map")
    parser.add_argument(
        "--peer-counts",
        type=count_list,
        default=PEER_COUNTS,
        help="highway-env vehicles_count values; empty to skip highway-env",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_REPEATS} blocks of about {QUICK_BLOCK_S} s instead of "
        f"{REPEATS} of {BLOCK_S} s",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    repeats = QUICK_REPEATS if args.quick else REPEATS
    block_s = QUICK_BLOCK_S if args.quick else BLOCK_S
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"grid{args.grid}.xodr"
        grid(args.grid).write(path)
        for count in args.counts:
            rows.append(roadsim_row(path, count, repeats, block_s))
        lane_km = map_summary(roadsim.load_map(path)).lane_length_m.get("driving", 0.0) / 1e3
    peer = import_highway_env() if args.peer_counts else None
    if peer is not None:
        gymnasium, peer_version = peer
        for count in args.peer_counts:
            rows.append(highway_row(gymnasium, count, repeats, block_s))
    else:
        peer_version = "not run"
    print(
        f"roadsim {roadsim.__version__}, highway-env {peer_version}, numpy {np.__version__}, "
        f"Python {platform.python_version()}, single thread; median of {repeats} blocks of "
        f"about {block_s:g} s\nroadsim map: {args.grid} x {args.grid} grid, "
        f"{lane_km:,.0f} km of driving lane, junctions included\n"
    )
    print_table(rows)
    print()
    if args.peer_counts and peer is None:
        print(
            "highway-env is not installed: install the bench extra "
            "(pip install -e '.[bench]') for the side-by-side rows"
        )
    print(
        "vs highway-env: roadsim's rate over highway-env's fastest row. collisions: "
        "roadsim's collision events, highway-env's crashed vehicles (a sanity check)."
    )
    print_targets(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
