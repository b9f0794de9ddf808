"""Road-network benchmark: load time until a map is fully queryable, and localisation speed.

Run as ``.venv/bin/python benchmarks/bench_map.py`` (optionally with map paths). For each of
the corpus' largest maps it prints:

- the time from file to a fully queryable network, ``load_map(path).prepare()`` (parse,
  `RoadNetwork`, lane graph, localiser), median of 5, with the parts;
- `RoadNetwork.localize` throughput, in points per second: the median of 5 runs over the
  same 100,000 random points on lanes (fixed seed; ``to_world`` of a random lane, s and
  t inside the lane), without and with a heading hint.

Targets: Town07 (``libOpenDRIVE/test.xodr``) queryable in < 250 ms; >= 1,000,000 points/s.
Single-threaded (OPENBLAS_NUM_THREADS=1); no peer library runs in this process, so there
is no side-by-side column.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

import roadsim
from roadsim.road.localize import Localizer
from roadsim.road.network import RoadNetwork

MAPS = Path(__file__).resolve().parent.parent / "tests" / "data" / "opendrive" / "maps"
DEFAULT = [
    "libOpenDRIVE/test.xodr",
    "esmini/multi_intersections.xodr",
    "qc-opendrive/positive18.xodr",
    "qc-opendrive/road_lane_link_new_lane_appear_junction_valid_1.xodr",
]
LOAD_TARGET_S = {"libOpenDRIVE/test.xodr": 0.250}
RATE_TARGET = 1_000_000
POINTS = 100_000
REPEATS = 5


def median_time(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def lane_points(
    net: RoadNetwork, n: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` random points inside lanes (uniform over lane area, roughly), and their headings."""
    rng = np.random.default_rng(seed)
    lanes = net.lanes
    sec_len = lanes.sec_s1 - lanes.sec_s0
    cand = np.flatnonzero((lanes.lane_id != 0) & (sec_len[lanes.section] > 0.1))
    weight = sec_len[lanes.section[cand]]
    uid = rng.choice(cand, size=2 * n, p=weight / weight.sum())
    sec = lanes.section[uid]
    s = lanes.sec_s0[sec] + (0.01 + 0.98 * rng.random(uid.size)) * sec_len[sec]
    outer = net.uid_t_outer(uid, s)
    inner = net.uid_t_outer(lanes.inner[uid], s)
    keep = np.flatnonzero(np.abs(outer - inner) > 0.1)[:n]
    uid, s = uid[keep], s[keep]
    t = inner[keep] + (0.02 + 0.96 * rng.random(keep.size)) * (outer[keep] - inner[keep])
    road = lanes.road[uid]
    x, y, _ = net.to_world_index(road, s, t)
    _, _, hdg, _ = net.reference.evaluate(road, s)
    return x, y, hdg + np.where(net.driving_sign(uid) < 0, np.pi, 0.0)


def has_graph() -> bool:
    try:
        import roadsim.road.graph  # noqa: F401
    except ImportError:
        return False
    return True


Row = tuple[str, int, int, float, float, float, float, float, float, float]


def bench(name: str, graph: bool) -> Row:
    """Timings of one map: see the module docstring."""
    path = Path(name) if Path(name).exists() else MAPS / name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dangling links in some published maps
        parse = median_time(lambda: roadsim.load_map(path))
        full = median_time(lambda: roadsim.load_map(path).prepare()) if graph else math.nan
        net = roadsim.load_map(path)
    build = median_time(lambda: Localizer(net))
    graph_s = math.nan
    if graph:
        from roadsim.road.graph import LaneGraph

        graph_s = median_time(lambda: LaneGraph(net))
        net.prepare()
    x, y, hdg = lane_points(net, POINTS)
    found = float(np.mean(net.localize(x, y).on_lane))
    plain = median_time(lambda: net.localize(x, y))
    hinted = median_time(lambda: net.localize(x, y, heading=hdg))
    n_lanes = len(net.lanes.lanes)
    return (name, len(net.roads), n_lanes, parse, build, graph_s, full, x.size / plain,
            x.size / hinted, found)  # fmt: skip


def main(names: list[str]) -> int:
    graph = has_graph()
    rows = [bench(name, graph) for name in names]
    print(
        f"roadsim {roadsim.__version__}, numpy {np.__version__}, single thread; "
        f"median of {REPEATS}; {POINTS:,} points on lanes per run\n"
    )
    head = (
        f"{'map':<60} {'roads':>5} {'lanes':>5} {'parse+net':>9} {'localizer':>9} {'graph':>7} "
        f"{'queryable':>9} {'target':>9} {'localize/s':>11} {'+heading/s':>11} {'found':>6}"
    )
    print(head)
    print("-" * len(head))
    for name, roads, n_lanes, parse, build, graph_s, full, rate, rate_h, on in rows:
        target = LOAD_TARGET_S.get(name)
        verdict = "" if target is None else ("ok" if full < target else "MISS")
        tgt = f"{target * 1e3:.0f} ms {verdict}" if target else "-"
        print(
            f"{name:<60} {roads:>5} {n_lanes:>5} {parse * 1e3:>7.1f}ms {build * 1e3:>7.1f}ms "
            f"{graph_s * 1e3:>5.1f}ms {full * 1e3:>7.1f}ms {tgt:>9} {rate / 1e6:>9.2f} M "
            f"{rate_h / 1e6:>9.2f} M {on:>6.1%}"
        )
    worst = min(row[7] for row in rows)
    print(
        f"\nlocalize target {RATE_TARGET / 1e6:.0f} M points/s: slowest map "
        f"{worst / 1e6:.2f} M points/s ({'ok' if worst >= RATE_TARGET else 'MISS'})"
    )
    if not graph:
        print("roadsim.road.graph is missing: 'queryable' not measured; localizer timed alone")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or DEFAULT))
