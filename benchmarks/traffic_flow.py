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

``--mix car=0.7,truck=0.15,bus=0.15`` runs another vehicle mix (cars only by default),
``--count`` a fixed number of vehicles instead of a share of the capacity, and
``--collisions`` lists each collision between vehicles: when, the two models, and for
each its lane, whether that is in a junction, the radius of the lane there, its speed and
how far its body is turned from the lane's heading.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from roadsim import Simulation
from roadsim.errors import TrafficWarning
from roadsim.scenario import Scenario
from roadsim.sim.build import MODEL_NAMES
from roadsim.sim.traffic_stats import (
    BEHIND_RED,
    IN_MOVING_QUEUE,
    STUCK,
    TrafficStats,
    watch,
)
from roadsim.world.lane_info import LaneInfo
from roadsim.world.state import VEHICLE

ROOT = Path(__file__).resolve().parent.parent
TOWN07 = ROOT / "tests" / "data" / "opendrive" / "maps" / "libOpenDRIVE" / "test.xodr"
MAPS = [str(TOWN07), "town"]
STAND_KINDS = {
    BEHIND_RED: "behind a red light",
    IN_MOVING_QUEUE: "in a queue that moves",
    STUCK: "stuck",
}


CARS_ONLY = {"car": 1.0}


def scenario(
    map_name: str, count: int, min_gap: float, seed: int, mix: dict[str, float] = CARS_ONLY
) -> Scenario:
    return Scenario.model_validate(
        {
            "map": map_name,
            "seed": seed,
            "traffic": {"count": count, "min_gap": min_gap, "mix": mix},
        }
    )


def parse_mix(text: str) -> dict[str, float]:
    """``car=0.7,truck=0.15,bus=0.15`` as a dict (the scenario checks the names)."""
    mix = {}
    for part in text.split(","):
        name, _, share = part.partition("=")
        try:
            mix[name.strip()] = float(share)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--mix: {part!r} is not name=share") from None
    return mix


class CollisionLog:
    """Describes each collision between vehicles as it happens (for ``--collisions``)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.info = LaneInfo(sim.net)
        self.seen = 0
        self.lines: list[str] = []

    def _describe(self, actor: int) -> str:
        st, info = self.sim.state, self.info
        k = int(np.flatnonzero(st.id == actor)[0])
        model = MODEL_NAMES[int(st.model[k])]
        u = int(st.uid[k])
        if u < 0:
            return f"{model} #{actor} off the lanes"
        p = float(info.progress(np.array([u]), np.array([st.s[k]]))[0])
        table = info.table
        first, last = int(table.ptr[u]), int(table.ptr[u + 1]) - 1
        sample = min(first + round(p / float(table.spacing[u])), last)
        bend = abs(float(table.curvature[sample]))
        radius = f"R {1.0 / bend:.0f} m" if bend > 1e-4 else "straight"
        where = "junction" if info.junction[u] >= 0 else "road"
        # How far the body is turned from the lane (a long vehicle leaving a tight turn
        # is turned still, and sweeps over the lane beside it).
        lane_heading = np.arctan2(table.dir_y[sample], table.dir_x[sample])
        turned = np.degrees(np.angle(np.exp(1j * (st.heading[k] - lane_heading))))
        return (
            f"{model} #{actor} lane {u} at {p:.1f} of {info.length[u]:.1f} m, t {st.t[k]:.1f} m "
            f"({where}, {radius}, {st.speed[k]:.1f} m/s, turned {turned:+.0f} deg)"
        )

    def step(self) -> None:
        self.sim.step()
        events = self.sim.events[self.seen :]
        self.seen = len(self.sim.events)
        kinds = dict(zip(self.sim.state.id.tolist(), self.sim.state.kind.tolist(), strict=True))
        for e in events:
            if kinds.get(e.id_a) == VEHICLE and kinds.get(e.id_b) == VEHICLE:
                self.lines.append(
                    f"{e.time:7.1f} s: {self._describe(e.id_a)} / {self._describe(e.id_b)}"
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
    parser.add_argument(
        "--mix", type=parse_mix, default=CARS_ONLY, help="vehicle mix, e.g. car=0.7,truck=0.3"
    )
    parser.add_argument("--count", type=int, help="vehicles asked (default: --fill)")
    parser.add_argument(
        "--collisions", action="store_true", help="list the collisions between vehicles"
    )
    args = parser.parse_args(argv)
    for map_name in args.maps:
        holds = capacity(map_name, args.min_gap)
        count = args.count if args.count is not None else max(1, round(args.fill * holds))
        sim = Simulation(scenario(map_name, count, args.min_gap, args.seed, args.mix))
        log = CollisionLog(sim) if args.collisions else None
        start = time.perf_counter()
        if log is None:
            summary = watch(sim, 60.0 * args.minutes)
        else:
            stats = TrafficStats(sim)
            for _ in range(round(60.0 * args.minutes / sim.dt)):
                log.step()
                stats.observe()
            summary = stats.summary()
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
        for line in log.lines if log is not None else ():
            print(f"    {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
