"""Checks against the map: the overlap test of explicit spawns, and many obstacles at once."""

from __future__ import annotations

import math

import numpy as np
import pytest

from roadsim.errors import ScenarioError
from roadsim.road.load import load_map
from roadsim.scenario import parse_scenario, validate_against_map
from roadsim.scenario.validate import _Footprint, _overlap, first_overlaps


def _brute_force(boxes: list[_Footprint]) -> list[int]:
    """The first earlier box each box overlaps, by testing every pair."""
    return [
        next((j for j in range(k) if _overlap(boxes[k], boxes[j])), -1) for k in range(len(boxes))
    ]


@pytest.mark.parametrize("seed", range(5))
def test_the_spatial_index_finds_what_every_pair_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    # Mostly cones, some long barriers and a few large boxes, crowded into 40 m x 40 m
    # so that many overlap, at every heading and on two levels (a bridge above a road).
    kinds = rng.choice(3, size=n, p=[0.7, 0.25, 0.05])
    length = np.choose(kinds, [0.4, 3.0, 12.0]) * rng.uniform(0.5, 1.5, n)
    width = np.choose(kinds, [0.4, 0.6, 4.0]) * rng.uniform(0.5, 1.5, n)
    boxes = [
        _Footprint(
            float(rng.uniform(0, 40)),
            float(rng.uniform(0, 40)),
            float(rng.uniform(-math.pi, math.pi)),
            float(length[k]),
            float(width[k]),
            float(rng.choice([0.0, 6.0])),
            1.0,
        )
        for k in range(n)
    ]
    # Equal sizes too: ties in the radius must not lose a pair.
    boxes += [_Footprint(20.0 + 0.3 * k, 20.0, 0.0, 0.4, 0.4, 0.0, 1.0) for k in range(10)]
    expected = _brute_force(boxes)
    assert sum(k >= 0 for k in expected) > 50  # the set is crowded enough to mean something
    assert first_overlaps(boxes) == expected


def test_no_boxes_and_one_box() -> None:
    assert first_overlaps([]) == []
    assert first_overlaps([_Footprint(0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0)]) == [-1]


def test_many_cones_are_checked_together() -> None:
    # 2,000 cones along a lane, 0.3 m apart: each overlaps the one before it (0.4 m long).
    lines = ["map: highway", "objects:"]
    lines += [
        f"  - {{type: cone, position: {{road: 2, lane: -3, s: {10 + 0.3 * k:.1f}}}}}"
        for k in range(2000)
    ]
    scenario = parse_scenario("\n".join(lines) + "\n", name="c.yaml", check_map=False)
    net = load_map("highway")
    with pytest.raises(ScenarioError) as info:
        validate_against_map(scenario, net)
    message = str(info.value).splitlines()
    assert message[0].endswith("objects[1].position: overlaps objects[0]")
    assert message[1].endswith("objects[2].position: overlaps objects[1]")
    assert message[-1] == "... and 1994 more problems"
