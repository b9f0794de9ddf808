"""A large map for benchmarks: an n x n grid of junctions joined by two-lane streets.

Built with `roadsim.road.builder` from the same street and junction pieces as the built-in
town (150 m blocks, 3.5 m lanes, every arm of a junction connected to every other), with
no traffic lights, so that traffic spreads over the whole grid. ``grid(20)`` has 760
streets and about 230 km of drivable lane, room for 10,000 vehicles.

Junction (i, j) is centred at (i, j) x `BLOCK`; the street from it to junction (i + 1, j)
runs east (its lane -1 drives east, lane 1 west), the one to (i, j + 1) north; each is
`STREET_LENGTH` long. `street_ids` gives their road ids.

    python benchmarks/grid_map.py 20 /tmp/grid20.xodr
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from roadsim.road.builder import Document, JunctionSpec, Line, PlanView, Pose, RoadEnd, RoadSpec
from roadsim.road.builtin import ARM, BLOCK, _lane_in, _lane_out, _street

__all__ = ["BLOCK", "STREET_LENGTH", "grid", "street_ids"]

STREET_LENGTH = BLOCK - 2 * ARM  # m, junction arm to junction arm


def street_ids(n: int) -> dict[tuple[int, int, str], str]:
    """The road id of each street of the n x n grid.

    Returns:
        ``(i, j, "east")`` -> the street from junction (i, j) to (i + 1, j), ``(i, j,
        "north")`` -> the street from (i, j) to (i, j + 1).
    """
    ids: dict[tuple[int, int, str], str] = {}
    for i in range(n):
        for j in range(n):
            if i + 1 < n:
                ids[(i, j, "east")] = str(len(ids) + 1)
            if j + 1 < n:
                ids[(i, j, "north")] = str(len(ids) + 1)
    return ids


def grid(n: int) -> Document:
    """The n x n grid (n >= 2)."""
    if n < 2:
        raise ValueError(f"grid size must be at least 2, got {n}")
    ids = street_ids(n)
    streets: list[RoadSpec] = []
    arms: dict[tuple[int, int], list[RoadEnd]] = {(i, j): [] for i in range(n) for j in range(n)}
    for i in range(n):
        for j in range(n):
            x, y = i * BLOCK, j * BLOCK
            if i + 1 < n:  # eastward street to (i + 1, j)
                road = _street(
                    ids[(i, j, "east")],
                    PlanView(Pose(x + ARM, y, 0.0), (Line(STREET_LENGTH),)),
                    f"Street {i}-{j} east",
                )
                streets.append(road)
                arms[(i, j)].append(road.end("start"))
                arms[(i + 1, j)].append(road.end("end"))
            if j + 1 < n:  # northward street to (i, j + 1)
                road = _street(
                    ids[(i, j, "north")],
                    PlanView(Pose(x, y + ARM, math.pi / 2), (Line(STREET_LENGTH),)),
                    f"Street {i}-{j} north",
                )
                streets.append(road)
                arms[(i, j)].append(road.end("start"))
                arms[(i, j + 1)].append(road.end("end"))
    junctions: list[JunctionSpec] = []
    connecting: list[RoadSpec] = []
    next_id = 100_000
    for (i, j), ends in arms.items():
        junction = JunctionSpec(str(10_000 + i * n + j), f"Junction {i}-{j}")
        for a in ends:
            for b in ends:
                if a is b:
                    continue
                connecting.append(
                    junction.connect(
                        str(next_id),
                        a,
                        b,
                        [(_lane_in(a), _lane_out(b))],
                        spiral_fraction=0.5,
                        kind="town",
                        speed_kmh=50,
                    )
                )
                next_id += 1
        junctions.append(junction)
    return Document(f"grid{n}", [*streets, *connecting], junctions)


def main(argv: list[str]) -> int:
    n, out = int(argv[0]), Path(argv[1])
    grid(n).write(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
