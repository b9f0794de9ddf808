"""Simulation benchmark: agent-steps per second, roadsim beside highway-env.

Run as ``.venv/bin/python benchmarks/bench_sim.py`` (``make bench`` installs the ``bench``
extra first; ``--quick`` for a short run, ``--help`` for the options). It prints one table:

- roadsim's `Simulation` with 10, 100, 1,000 and 10,000 cars of traffic on an n x n grid of
  junctions (``benchmarks/grid_map.py``, n = 26 by default: about 330 km of lane on the
  streets, 490 km with the junctions' connecting lanes), written once to a temporary
  directory. After 20 warm-up ticks, blocks of k ticks are timed, k chosen so that a block
  takes about a second (at least 20 ticks); the rate is active vehicles x ticks / wall
  second, median of 5 blocks. Traffic perceives through the driver sensor in every tick.
  After each block of the 1,000-vehicle row, one call of `Simulation.driver_views` gives
  the full driver views (every field, signs, lights and markings included) of every
  vehicle; the line after the table gives its median time;
- roadsim's `Simulation` with 1,000 scripted cars (``type: path`` objects) and no traffic,
  on the same map, beside a traffic row with as many vehicles (run for it if ``--counts``
  lacks that count). Each car drives 12 streets (1.7 to 1.9 km; fewer streets when the
  grid is too full) in a straight line along an east-west lane, through control points at
  the middle of every street at 8 to 15 m/s (`scripted_objects`). Paths end, so each block
  starts from a copy of the simulation as built and runs its own 20 warm-up ticks; k is
  chosen as above but capped at the ticks after which a car at 15 m/s could reach the end
  of the shortest path (2,300 at dt = 0.05 s), and every car is checked to be still moving
  when a block ends. The rate is objects x ticks / wall second, median of 5 blocks;
- highway-env's ``highway-v0`` with 20, 50 and 100 other vehicles, its default kinematics
  observation, no rendering, and a fixed action (IDLE). One ``env.step()`` runs
  ``simulation_frequency / policy_frequency`` ticks (15 by default), so the rate is
  vehicles on the road (the ego included) x ticks / wall second, median of 5 blocks of
  about a second each. An episode that ends inside a block (the ego crashed) ends the
  block; the reset that follows is not timed.

The ratio column divides a roadsim traffic rate by highway-env's fastest rate. The
collisions column is a sanity check: roadsim's collision events (none expected for the
scripted cars, which never catch up with one another), highway-env's crashed vehicles.

Targets: 1,000 vehicles at >= 1,000,000 agent-steps/s; 10,000 vehicles at >= 2,500,000
agent-steps/s; 1,000 scripted objects at no more ms/tick than 1,000 traffic vehicles (the
line after the table gives the ratio). roadsim splits its heaviest passes over numba's
threads (one a core; NUMBA_NUM_THREADS to change it), highway-env runs on one;
OPENBLAS_NUM_THREADS=1. Both simulators run in the same process, one after the other.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import argparse
import copy
import math
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numba
import numpy as np

import roadsim
from grid_map import BLOCK, STREET_LENGTH, grid, street_ids  # beside this file, on sys.path
from roadsim.road.summary import map_summary
from roadsim.scenario.load import validate_data
from roadsim.sim import Simulation
from roadsim.world.state import SCRIPTED_OBJECT, VEHICLE

COUNTS = (10, 100, 1_000, 10_000)
PEER_COUNTS = (20, 50, 100)
SCRIPTED_COUNTS = (1_000,)
VIEW_COUNTS = (1_000,)
GRID = 26
REPEATS, QUICK_REPEATS = 5, 3
BLOCK_S, QUICK_BLOCK_S = 1.0, 0.25
WARMUP_TICKS = 20
MIN_TICKS = 20
PEER_MIN_STEPS = 2
SEED = 1
TARGETS = {1_000: 1_000_000, 10_000: 2_500_000}  # vehicles -> agent-steps/s
SCRIPTED_TARGET = 1.0  # scripted objects' ms/tick over as many traffic vehicles', at most
SCRIPTED_SPEEDS = (8.0, 15.0)  # m/s, range of the speeds at the control points
SCRIPTED_STREETS = 12  # streets an object's path spans (fewer where the grid is too full)
START_SPACING = 12.0  # m between the start positions along a lane
START_REACH = 60.0  # m, farthest a start lies from the middle of its street


@dataclass(frozen=True)
class Row:
    """One configuration's result.

    Attributes:
        simulator: ``"roadsim"``, ``"roadsim scripted"`` or ``"highway-env"``.
        asked: The traffic (or scripted object) count configured.
        vehicles: Vehicles (scripted objects) actually simulated (median over the blocks).
        dt_s: Simulated time of one tick (s).
        ticks: Ticks in one block (median for highway-env, whose blocks can end early).
        blocks: Blocks timed.
        rate: Agent-steps per wall second, median over the blocks.
        collisions: Collision events (roadsim: those that began in the timed blocks) or
            crashed vehicles (highway-env).
        views_ms: Wall time of `Simulation.driver_views` over every vehicle (ms, median
            over the blocks; NaN where not measured).
        mean_speed, standing: roadsim's mean speed of the moving actors (m/s) and the
            share of them standing (below 0.1 m/s), at the end of each block, median
            over the blocks (NaN for highway-env).
    """

    simulator: str
    asked: int
    vehicles: int
    dt_s: float
    ticks: int
    blocks: int
    rate: float
    collisions: int
    views_ms: float = math.nan
    mean_speed: float = math.nan
    standing: float = math.nan


def motion(sim: Simulation, slots: np.ndarray | None = None) -> tuple[float, float]:
    """Mean speed and share standing of the active vehicles (or of ``slots``)."""
    st = sim.state
    if slots is None:
        slots = np.flatnonzero(st.active & (st.kind == VEHICLE))
    else:
        slots = slots[st.active[slots]]
    speed = st.speed[slots]
    if speed.size == 0:
        return math.nan, math.nan
    return float(speed.mean()), float(np.mean(speed < 0.1))


def block_ticks(sim: Simulation, block_s: float) -> int:
    """Runs the warm-up ticks and a probe; returns the ticks of a block of about ``block_s``
    seconds (at least `MIN_TICKS`)."""
    for _ in range(WARMUP_TICKS):
        sim.step()
    start = time.perf_counter()
    for _ in range(MIN_TICKS):
        sim.step()
    probe = time.perf_counter() - start
    return max(MIN_TICKS, math.ceil(MIN_TICKS * block_s / probe))


def roadsim_row(path: Path, count: int, repeats: int, block_s: float, views: bool) -> Row:
    """Times roadsim's `Simulation` with ``count`` cars on the map at ``path`` and, with
    ``views``, the full driver views of all of them after each block."""
    scenario = validate_data(
        {
            "map": str(path),
            "seed": SEED,
            "traffic": {"count": count, "mix": {"car": 1.0}, "min_gap": 5.0},
        },
        "bench",
    )
    sim = Simulation(scenario)
    ticks = block_ticks(sim, block_s)
    events_before = len(sim.events)
    rates, counts, views_s, speeds, standing = [], [], [], [], []
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
        speed, stand = motion(sim)
        speeds.append(speed)
        standing.append(stand)
        if views:
            sim.driver_views()  # compiled and warm
            start = time.perf_counter()
            seen = sim.driver_views()
            views_s.append(time.perf_counter() - start)
            assert len(seen) == sim.vehicle_count
    return Row(
        "roadsim",
        count,
        round(statistics.median(counts)),
        sim.dt,
        ticks,
        repeats,
        statistics.median(rates),
        len(sim.events) - events_before,
        statistics.median(views_s) * 1e3 if views else math.nan,
        statistics.median(speeds),
        statistics.median(standing),
    )


def scripted_streets(n: int, count: int) -> int:
    """The streets each of ``count`` scripted objects drives on the n x n grid: up to
    `SCRIPTED_STREETS`, fewer where the grid has not that many distinct starts."""
    per_street = 2 * int(START_REACH / START_SPACING) + 1
    for streets in range(min(SCRIPTED_STREETS, n - 2), 0, -1):
        if 2 * n * (n - 1 - streets) * per_street >= count:
            return streets
    raise SystemExit(
        f"{count:,} scripted objects do not fit on a {n} x {n} grid: pass a larger --grid"
    )


def scripted_objects(n: int, count: int, streets: int) -> list[dict[str, object]]:
    """``count`` scripted cars on the east-west lanes of the n x n grid, each driving
    ``streets`` streets in a straight line through the junctions.

    Each of the 2n lanes that cross the grid (eastward and westward in every row) has its
    own speed profile: a speed drawn from `SCRIPTED_SPEEDS` at the middle of every street,
    linear in between. An object's control points are its start, then the middle of each
    street it passes, so every object on a lane drives the same speed profile (the speed
    depends on the position, not on the object): none catches up with another and there
    are no collisions. Starts are distinct, `START_SPACING` apart within `START_REACH` of
    a street's middle: a time gap of at least 12 / 15 = 0.8 s, so at 8 m/s at least 6.4 m
    apart, more than a car's 4.6 m. The choice is deterministic (seeded with `SEED`).
    """
    ids = street_ids(n)
    rng = np.random.default_rng(SEED)
    lanes = [(row, east) for row in range(n) for east in (True, False)]
    middles = BLOCK * np.arange(n - 1)  # along a lane, from the middle of its first street
    profiles = rng.uniform(*SCRIPTED_SPEEDS, size=(len(lanes), n - 1))
    offsets = np.arange(-START_REACH, START_REACH + 1e-9, START_SPACING)
    shape = (len(lanes), n - 1 - streets, offsets.size)
    picks = rng.choice(math.prod(shape), size=count, replace=False)
    objects: list[dict[str, object]] = []
    for lane_index, first, offset_index in zip(*np.unravel_index(picks, shape), strict=True):
        row, east = lanes[lane_index]
        start = middles[first] + offsets[offset_index]
        ahead = middles[first : first + streets + 1]
        points = []
        for u in [start, *ahead[ahead > start]]:
            street = round(u / BLOCK)  # along the lane
            shift = u - BLOCK * street  # from the street's middle, in the lane's direction
            points.append(
                {
                    "road": ids[(street if east else n - 2 - street, row, "east")],
                    "lane": -1 if east else 1,
                    "s": float(0.5 * STREET_LENGTH + (shift if east else -shift)),
                    "speed": float(np.interp(u, middles, profiles[lane_index])),
                }
            )
        objects.append({"type": "path", "kind": "car", "path": points})
    return objects


def fresh(built: Simulation) -> Simulation:
    """A copy of ``built`` to run; the road network is static, so the copy shares it."""
    return copy.deepcopy(built, {id(built.net): built.net})


def scripted_row(path: Path, n: int, count: int, repeats: int, block_s: float) -> Row:
    """Times roadsim's `Simulation` with ``count`` scripted cars and no traffic on the
    n x n grid at ``path``.

    Paths end, so one simulation cannot run every block: each block starts from a copy of
    the simulation as built, runs the warm-up ticks, then its timed ticks. A block has at
    most the ticks after which an object at the top speed could reach the end of the
    shortest path, the warm-up included.

    Raises:
        RuntimeError: If an object stood still (at its path's end) after a block.
    """
    streets = scripted_streets(n, count)
    scenario = validate_data(
        {"map": str(path), "seed": SEED, "objects": scripted_objects(n, count, streets)},
        "bench-scripted",
    )
    built = Simulation(scenario)
    slots = np.flatnonzero(built.state.kind == SCRIPTED_OBJECT)
    shortest_m = BLOCK * streets - START_REACH
    reach = math.floor(shortest_m / SCRIPTED_SPEEDS[1] / built.dt) - WARMUP_TICKS
    ticks = min(block_ticks(fresh(built), block_s), reach)
    rates, counts, speeds, standing = [], [], [], []
    events = 0
    for _ in range(repeats):
        sim = fresh(built)
        for _ in range(WARMUP_TICKS):
            sim.step()
        events -= len(sim.events)
        st = sim.state
        before = int(st.active[slots].sum())
        start = time.perf_counter()
        for _ in range(ticks):
            sim.step()
        seconds = time.perf_counter() - start
        moving = int(np.sum(st.active[slots] & (st.speed[slots] > 0.0)))
        if moving < count:
            raise RuntimeError(f"{count - moving} scripted objects stood still after a block")
        objects = 0.5 * (before + int(st.active[slots].sum()))
        rates.append(objects * ticks / seconds)
        counts.append(objects)
        events += len(sim.events)
        speed, stand = motion(sim, slots)
        speeds.append(speed)
        standing.append(stand)
    return Row(
        "roadsim scripted",
        count,
        round(statistics.median(counts)),
        built.dt,
        ticks,
        repeats,
        statistics.median(rates),
        events,
        mean_speed=statistics.median(speeds),
        standing=statistics.median(standing),
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
        f"{'simulator':<16} {'asked':>6} {'vehicles':>8} {'dt':>7} {'ticks/block':>11} "
        f"{'blocks':>6} {'ms/tick':>8} {'agent-steps/s':>14} {'vs highway-env':>14} "
        f"{'collisions':>10} {'mean m/s':>8} {'standing':>8}"
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
            f"{row.simulator:<16} {row.asked:>6,} {row.vehicles:>8,} {row.dt_s * 1e3:>5.1f}ms "
            f"{row.ticks:>11,} {row.blocks:>6} {ms_per_tick:>8.3f} {row.rate:>14,.0f} "
            f"{ratio:>14} {row.collisions:>10,} {_maybe(row.mean_speed, '.1f'):>8} "
            f"{_maybe(100 * row.standing, '.0f', '%'):>8}"
        )


def _maybe(value: float, spec: str, unit: str = "") -> str:
    return "-" if math.isnan(value) else f"{value:{spec}}{unit}"


def print_targets(rows: list[Row]) -> None:
    measured = {row.asked: row for row in rows if row.simulator == "roadsim"}
    for count, target in TARGETS.items():
        row = measured.get(count)
        if row is None:
            print(f"target {count:,} vehicles at >= {target:,} agent-steps/s: not measured")
            continue
        # A speed figure counts only where the traffic in it is collision-free.
        verdict = "ok" if row.rate >= target and row.collisions == 0 else "MISS"
        if row.collisions:
            verdict += f": {row.collisions} collisions"
        print(
            f"target {count:,} vehicles at >= {target:,} agent-steps/s: "
            f"{row.rate:,.0f} with {row.vehicles:,} vehicles ({verdict})"
        )


def print_scripted(rows: list[Row]) -> None:
    """Scripted objects' cost per tick against as many traffic vehicles'."""
    traffic = {row.asked: row for row in rows if row.simulator == "roadsim"}
    for row in rows:
        if row.simulator != "roadsim scripted" or row.asked not in traffic:
            continue
        vehicles = traffic[row.asked]
        ratio = (row.vehicles / row.rate) / (vehicles.vehicles / vehicles.rate)
        verdict = "ok" if ratio <= SCRIPTED_TARGET else "MISS"
        print(
            f"{row.asked:,} scripted objects cost {ratio:.2f}x of {row.asked:,} traffic "
            f"vehicles per tick (target <= {SCRIPTED_TARGET:g}x): {verdict}"
        )


def print_views(rows: list[Row]) -> None:
    """The driver sensor's own line: full views of every vehicle of a row in one call."""
    for row in rows:
        if row.simulator != "roadsim" or math.isnan(row.views_ms):
            continue
        budget = row.vehicles / TARGETS.get(row.asked, math.inf) * 1e3  # ms per tick
        share = f", {row.views_ms / budget:.0%} of the {budget:g} ms tick budget" if budget else ""
        print(
            f"driver sensor: full views of {row.vehicles:,} vehicles in {row.views_ms:.3f} ms "
            f"({row.vehicles / row.views_ms * 1e3:,.0f} views/s{share}); traffic perceives "
            "through it in every tick of the table"
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
        "--scripted-counts",
        type=count_list,
        default=SCRIPTED_COUNTS,
        help="roadsim scripted object counts, each beside as many traffic vehicles; empty to skip",
    )
    parser.add_argument(
        "--view-counts",
        type=count_list,
        default=VIEW_COUNTS,
        help="traffic counts whose rows also time the full driver views of every vehicle",
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
    for count in args.scripted_counts:  # fail before anything runs
        scripted_streets(args.grid, count)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"grid{args.grid}.xodr"
        grid(args.grid).write(path)
        # Scripted objects are compared with as many traffic vehicles.
        extra = [count for count in args.scripted_counts if count not in args.counts]
        for count in [*args.counts, *extra]:
            views = count in args.view_counts
            rows.append(roadsim_row(path, count, repeats, block_s, views))
        for count in args.scripted_counts:
            rows.append(scripted_row(path, args.grid, count, repeats, block_s))
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
        f"Python {platform.python_version()}, roadsim on {numba.get_num_threads()} threads; "
        f"median of {repeats} blocks of "
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
        "roadsim's collision events in the timed blocks, highway-env's crashed vehicles; "
        "mean m/s and standing: roadsim's actors at the end of each block (median). A "
        "target counts as met only without collisions."
    )
    print_targets(rows)
    print_scripted(rows)
    print_views(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
