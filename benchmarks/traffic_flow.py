"""Does traffic flow? Town maps at half their capacity, watched for ten minutes.

Run as ``.venv/bin/python benchmarks/traffic_flow.py`` (``--help`` for the options). For
each map (CARLA's Town07 from the test corpus and the built-in ``town`` by default), it
asks for far more traffic than the map holds to learn its capacity at the given
``min_gap`` (`Simulation.traffic_placed`), then runs half of that for ``--minutes``
simulated minutes and prints `roadsim.sim.traffic_stats.TrafficSummary`: mean speed,
share of vehicles standing, the longest stand, the stands over a minute (all of them, those
with no red light ahead, and by class: behind a red light, in a queue that moves, stuck),
junction entries per minute and collision events (between vehicles apart), with the wall
time of the run. Traffic flows (issue 27) when no vehicle is stuck (stands over a minute
neither behind a red light nor in a queue that moves) and there are no collisions;
``--stands`` lists each stand over a minute.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import sys
import time
import warnings
from pathlib import Path

from roadsim import Simulation
from roadsim.errors import TrafficWarning
from roadsim.scenario import Scenario
from roadsim.sim.traffic_stats import BEHIND_RED, IN_MOVING_QUEUE, STUCK, watch

ROOT = Path(__file__).resolve().parent.parent
TOWN07 = ROOT / "tests" / "data" / "opendrive" / "maps" / "libOpenDRIVE" / "test.xodr"
MAPS = [str(TOWN07), "town"]
STAND_KINDS = {
    BEHIND_RED: "behind a red light",
    IN_MOVING_QUEUE: "in a queue that moves",
    STUCK: "stuck",
}


def scenario(map_name: str, count: int, min_gap: float, seed: int) -> Scenario:
    return Scenario.model_validate(
        {
            "map": map_name,
            "seed": seed,
            "traffic": {"count": count, "min_gap": min_gap, "mix": {"car": 1.0}},
        }
    )


def capacity(map_name: str, min_gap: float) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrafficWarning)
        return Simulation(scenario(map_name, 1_000_000, min_gap, 0)).traffic_placed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("maps", nargs="*", default=MAPS, help="maps (default: Town07, town)")
    parser.add_argument("--minutes", type=float, default=10.0, help="simulated minutes")
    parser.add_argument("--min-gap", type=float, default=10.0, help="traffic.min_gap (m)")
    parser.add_argument("--fill", type=float, default=0.5, help="share of capacity asked")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stands", action="store_true", help="list the stands over a minute")
    args = parser.parse_args(argv)
    for map_name in args.maps:
        holds = capacity(map_name, args.min_gap)
        count = max(1, round(args.fill * holds))
        sim = Simulation(scenario(map_name, count, args.min_gap, args.seed))
        start = time.perf_counter()
        summary = watch(sim, 60.0 * args.minutes)
        wall = time.perf_counter() - start
        name = Path(map_name).name
        print(
            f"{name}: holds {holds}, ran {sim.traffic_placed} for {args.minutes:g} min "
            f"({wall:.1f} s wall)"
        )
        print(f"  {summary.to_text()}")
        if args.stands:
            for stand in summary.stands:
                print(
                    f"    vehicle {stand.id} on lane {stand.uid} from {stand.begin:.1f} s "
                    f"for {stand.seconds:.1f} s: {STAND_KINDS[stand.kind]}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
