"""Oriented-box overlaps: hand-made cases and a cross-check against brute force."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest

from roadsim.world import collisions
from roadsim.world.collisions import find_overlaps

Box = tuple[float, float, float, float, float]  # x, y, heading, length, width


def pairs(*boxes: Box, active: list[bool] | None = None) -> list[tuple[int, int]]:
    x, y, h, length, width = (np.array(col, dtype=np.float64) for col in zip(*boxes, strict=True))
    mask = np.ones(len(boxes), bool) if active is None else np.array(active)
    i, j = find_overlaps(x, y, h, length, width, mask)
    assert i.dtype == np.int64 and j.dtype == np.int64
    return list(zip(i.tolist(), j.tolist(), strict=True))


def corners(box: Box) -> npt.NDArray[np.float64]:
    x, y, h, length, width = box
    u = np.array([math.cos(h), math.sin(h)]) * length / 2
    v = np.array([-math.sin(h), math.cos(h)]) * width / 2
    c = np.array([x, y])
    return np.array([c + u + v, c + u - v, c - u - v, c - u + v])


def brute_force(boxes: list[Box], active: npt.NDArray[np.bool_]) -> set[tuple[int, int]]:
    """O(N^2) separating-axis test on the corner points, independent of the module."""
    quads = [corners(b) for b in boxes]
    axes = [
        np.array([[math.cos(b[2]), math.sin(b[2])], [-math.sin(b[2]), math.cos(b[2])]])
        for b in boxes
    ]
    out = set()
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            if not (active[i] and active[j]):
                continue
            separated = False
            for axis in (*axes[i], *axes[j]):
                pi, pj = quads[i] @ axis, quads[j] @ axis
                if pi.max() < pj.min() or pj.max() < pi.min():
                    separated = True
                    break
            if not separated:
                out.add((i, j))
    return out


# -- hand cases -------------------------------------------------------------------------------


def test_parallel_boxes_just_apart_and_just_overlapping() -> None:
    car = (0.0, 0.0, 0.0, 4.0, 2.0)
    assert pairs(car, (4.001, 0.0, 0.0, 4.0, 2.0)) == []
    assert pairs(car, (3.999, 0.0, 0.0, 4.0, 2.0)) == [(0, 1)]
    # side by side, in neighbouring lanes
    assert pairs(car, (1.0, 2.001, 0.0, 4.0, 2.0)) == []
    assert pairs(car, (1.0, 1.999, 0.0, 4.0, 2.0)) == [(0, 1)]


def test_touching_edges_count_as_overlap() -> None:
    car = (0.0, 0.0, 0.0, 4.0, 2.0)
    assert pairs(car, (4.0, 0.0, 0.0, 4.0, 2.0)) == [(0, 1)]
    assert pairs(car, (0.0, 2.0, math.pi, 4.0, 2.0)) == [(0, 1)]
    assert pairs(car, (4.0, 2.0, 0.0, 4.0, 2.0)) == [(0, 1)]  # corner to corner


def test_rotated_45_degrees() -> None:
    square = (0.0, 0.0, 0.0, 2.0, 2.0)
    # A diamond's corner reaches sqrt(2) from its centre; the square's edge is at 1.
    gap = 1.0 + math.sqrt(2.0)
    assert pairs(square, (gap + 1e-6, 0.0, math.pi / 4, 2.0, 2.0)) == []
    assert pairs(square, (gap - 1e-6, 0.0, math.pi / 4, 2.0, 2.0)) == [(0, 1)]
    # Along the diagonal the AABBs overlap but the boxes do not: the separating axis is
    # the diamond's edge normal.
    d = (1.0 + math.sqrt(2.0)) / math.sqrt(2.0) + 0.05
    assert pairs(square, (d, d, math.pi / 4, 2.0, 2.0)) == []
    assert pairs(square, (1.6, 1.6, math.pi / 4, 2.0, 2.0)) == [(0, 1)]


def test_t_bone() -> None:
    car = (0.0, 0.0, 0.0, 4.6, 1.9)
    # A car heading north whose front bumper reaches the first car's right side.
    assert pairs(car, (0.5, -0.95 - 2.3 - 0.01, math.pi / 2, 4.6, 1.9)) == []
    assert pairs(car, (0.5, -0.95 - 2.3 + 0.01, math.pi / 2, 4.6, 1.9)) == [(0, 1)]


def test_containment_and_identical_boxes() -> None:
    bus = (10.0, 5.0, 0.3, 12.0, 2.5)
    assert pairs(bus, (10.5, 5.1, 1.0, 1.0, 0.5)) == [(0, 1)]  # small box inside
    assert pairs(bus, bus) == [(0, 1)]
    assert pairs(bus, bus, bus) == [(0, 1), (0, 2), (1, 2)]


def test_heading_is_periodic() -> None:
    car = (0.0, 0.0, 0.0, 4.0, 2.0)
    for turns in (-3, 1, 1000):
        h = 2 * math.pi * turns
        assert pairs(car, (4.001, 0.0, h, 4.0, 2.0)) == []
        assert pairs(car, (3.999, 0.0, h, 4.0, 2.0)) == [(0, 1)]


def test_inactive_boxes_never_collide() -> None:
    car = (0.0, 0.0, 0.0, 4.0, 2.0)
    boxes = (car, car, (1.0, 0.0, 0.0, 4.0, 2.0))
    assert pairs(*boxes, active=[True, False, True]) == [(0, 2)]
    assert pairs(*boxes, active=[False, True, False]) == []
    assert pairs(*boxes, active=[False, False, False]) == []


def test_inactive_values_are_not_read() -> None:
    nan = float("nan")
    got = pairs(
        (0.0, 0.0, 0.0, 4.0, 2.0),
        (nan, nan, nan, nan, nan),
        (1.0, 0.0, 0.0, 4.0, 2.0),
        active=[True, False, True],
    )
    assert got == [(0, 2)]


@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_boxes(n: int) -> None:
    z = np.zeros(n)
    i, j = find_overlaps(z, z, z, z + 4.0, z + 2.0, np.ones(n, bool))
    assert i.shape == j.shape == (0,)
    assert i.dtype == j.dtype == np.int64


def test_pairs_are_ordered() -> None:
    boxes = [(float(k % 3), 0.0, 0.1 * k, 4.0, 2.0) for k in range(6)]
    got = pairs(*boxes)
    assert got == sorted(got)
    assert all(a < b for a, b in got)
    assert len(got) == 15


def test_large_box_among_small_ones() -> None:
    # A 100 m barrier along y = 3 among cars in two lanes; it is handled apart from the sweep.
    cars = [(10.0 * k, 0.0, 0.0, 4.5, 1.9) for k in range(20)]
    cars += [(10.0 * k + 5.0, 2.4, 0.0, 4.5, 1.9) for k in range(20)]  # overlap the barrier
    barrier = (50.0, 3.5, 0.0, 100.0, 0.5)
    second = (95.0, 30.0, math.pi / 2, 80.0, 0.5)  # crosses the first at x=95
    boxes = [*cars, barrier, second]
    got = set(pairs(*boxes))
    assert got == brute_force(boxes, np.ones(len(boxes), bool))
    assert (40, 41) in got
    assert len(got) > 1


# -- random cross-check -------------------------------------------------------------------------


def random_boxes(rng: np.random.Generator, n: int, extent: float) -> list[Box]:
    x = rng.uniform(0.0, extent, n)
    y = rng.uniform(0.0, extent, n)
    h = rng.uniform(-2 * math.pi, 2 * math.pi, n)
    length = rng.uniform(0.5, 8.0, n)
    width = rng.uniform(0.2, 3.0, n)
    length[: n // 50] *= 6.0  # a few long ones
    return [
        (float(a), float(b), float(c), float(d), float(e))
        for a, b, c, d, e in zip(x, y, h, length, width, strict=True)
    ]


@pytest.mark.parametrize("seed", range(6))
def test_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    boxes = random_boxes(rng, 300, extent=80.0)
    active = rng.random(300) < 0.9
    got = pairs(*boxes, active=active.tolist())
    assert len(got) == len(set(got))
    expected = brute_force(boxes, active)
    assert set(got) == expected
    assert len(expected) > 50  # the case is dense enough to test something


def test_matches_brute_force_on_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Traffic along axis-aligned lanes (rows of equal y, columns of equal x)."""
    rng = np.random.default_rng(7)
    boxes: list[Box] = []
    for lane in range(6):
        along = np.arange(25) * 6.0 + rng.uniform(-1.5, 1.5, 25)
        for a in along:
            if lane < 3:
                boxes.append((float(a), 3.5 * lane, 0.0, 4.6, 1.9))
            else:
                boxes.append((20.0 + 3.5 * lane, float(a), math.pi / 2, 4.6, 1.9))
    active = np.ones(len(boxes), bool)
    expected = brute_force(boxes, active)
    assert set(pairs(*boxes)) == expected
    # The same through the merge that replaces bisection for many boxes.
    monkeypatch.setattr(collisions, "_MERGE_MIN", 0)
    assert set(pairs(*boxes)) == expected


def test_rank_by_merge_equals_searchsorted() -> None:
    rng = np.random.default_rng(3)
    k = np.sort(np.round(rng.uniform(0, 50, 5000), 1))  # with ties
    q = np.sort(np.concatenate((k[::7] + 0.0, k[::5] + 0.05)))
    expected = np.searchsorted(k, q, "right")
    np.testing.assert_array_equal(collisions._rank(k, q), expected)
