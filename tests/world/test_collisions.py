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


def test_matches_brute_force_on_lanes() -> None:
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


# -- the compiled kernel: many boxes, edge cases ---------------------------------------------------


def brute_force_arrays(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    h: npt.NDArray[np.float64],
    length: npt.NDArray[np.float64],
    width: npt.NDArray[np.float64],
    active: npt.NDArray[np.bool_],
) -> set[tuple[int, int]]:
    """`brute_force`, vectorised over the second box: the same corner projections."""
    idx = np.flatnonzero(active)
    c, s = np.cos(h[idx]), np.sin(h[idx])
    axes = np.stack((np.stack((c, s), -1), np.stack((-s, c), -1)), 1)  # (M, 2 axes, 2)
    u = axes[:, 0] * (length[idx] / 2)[:, None]
    v = axes[:, 1] * (width[idx] / 2)[:, None]
    centre = np.stack((x[idx], y[idx]), -1)
    quads = np.stack((centre + u + v, centre + u - v, centre - u - v, centre - u + v), 1)
    own = np.einsum("mkd,mad->mka", quads, axes)  # each box's corners on its own axes
    radius = np.hypot(length[idx], width[idx]) / 2  # (boxes farther apart never touch)
    out = set()
    for a in range(len(idx) - 1):
        after = np.arange(a + 1, len(idx))
        reach = (radius[a] + radius[after]) ** 2
        b = after[(centre[after, 0] - centre[a, 0]) ** 2 + (centre[after, 1] - centre[a, 1]) ** 2 <= reach]
        on_a = np.einsum("mkd,ad->mka", quads[b], axes[a])  # the others on a's axes
        on_b = np.einsum("kd,mad->mka", quads[a], axes[b])  # a on the others' axes
        separated = ((on_a.max(1) < own[a].min(0)) | (own[a].max(0) < on_a.min(1))).any(1) | (
            (on_b.max(1) < own[b].min(1)) | (own[b].max(1) < on_b.min(1))
        ).any(1)
        out |= {(int(idx[a]), int(j)) for j in idx[b][~separated]}
    return out


def as_pairs(i: npt.NDArray[np.int64], j: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    return list(zip(i.tolist(), j.tolist(), strict=True))


@pytest.mark.parametrize("seed", range(2))
def test_matches_brute_force_on_thousands_of_clustered_boxes(seed: int) -> None:
    """Cars in clusters and lanes, a few long boxes, NaN in inactive slots."""
    rng = np.random.default_rng(100 + seed)
    n = 2000
    centres = rng.uniform(-500.0, 500.0, (20, 2))
    which = rng.integers(0, 20, n)
    x = centres[which, 0] + rng.normal(0.0, 12.0, n)
    y = centres[which, 1] + rng.normal(0.0, 12.0, n)
    h = rng.uniform(-4 * math.pi, 4 * math.pi, n)
    h[: n // 3] = rng.choice([0.0, math.pi / 2, math.pi, -math.pi / 2], n // 3)  # lanes
    length = rng.uniform(3.5, 5.5, n)
    width = rng.uniform(1.6, 2.1, n)
    length[:10] = rng.uniform(30.0, 80.0, 10)  # barriers, outside the grid
    h[10:20] = rng.uniform(-1e9, 1e9, 10)  # headings too large for the AABB's bounds
    active = rng.random(n) < 0.9
    for col in (x, y, h, length, width):
        col[~active] = np.nan
    got = as_pairs(*find_overlaps(x, y, h, length, width, active))
    assert got == sorted(set(got))
    assert set(got) == brute_force_arrays(x, y, h, length, width, active)
    assert len(got) > 500


@pytest.mark.parametrize("layout", ["uniform", "clustered", "one row"])
def test_the_threads_bands_find_what_one_thread_finds(layout: str) -> None:
    """From 4,096 boxes on, bands of grid rows go to the threads: across the bands'
    borders too, they find the pairs that the single-threaded scan finds. (A large box far
    away keeps the boxes on one thread, and meets nothing.)"""
    rng = np.random.default_rng(len(layout))
    n = 12_000
    if layout == "uniform":
        x, y = rng.uniform(0.0, 900.0, n), rng.uniform(0.0, 900.0, n)
    elif layout == "clustered":
        centres = rng.uniform(-300.0, 300.0, (30, 2))
        which = rng.integers(0, 30, n)
        x = centres[which, 0] + rng.normal(0.0, 15.0, n)
        y = centres[which, 1] + rng.normal(0.0, 15.0, n)
    else:  # everything in one row of cells, and a few boxes above and below it
        x, y = rng.uniform(0.0, 30_000.0, n), rng.uniform(0.0, 1.0, n)
        y[:50] = rng.uniform(-20.0, 20.0, 50)
    h = rng.uniform(-math.pi, math.pi, n)
    length, width = rng.uniform(3.5, 5.5, n), rng.uniform(1.6, 2.1, n)
    active = rng.random(n) < 0.95
    got = as_pairs(*find_overlaps(x, y, h, length, width, active))
    assert got == sorted(set(got)) and len(got) > 100
    far = [
        np.append(col, v)
        for col, v in zip((x, y, h, length, width), (1e7, 1e7, 0.0, 500.0, 1.0), strict=True)
    ]
    serial = as_pairs(*find_overlaps(*far, np.append(active, True)))
    assert got == serial


def test_the_bands_match_brute_force() -> None:
    rng = np.random.default_rng(21)
    n = 4500
    x, y = rng.uniform(0.0, 250.0, n), rng.uniform(0.0, 250.0, n)
    h = rng.uniform(-math.pi, math.pi, n)
    length, width = rng.uniform(3.5, 5.5, n), rng.uniform(1.6, 2.1, n)
    active = np.ones(n, bool)
    got = as_pairs(*find_overlaps(x, y, h, length, width, active))
    assert set(got) == brute_force_arrays(x, y, h, length, width, active)


def test_touching_boxes_in_rows_and_columns() -> None:
    """Edge to edge at heading 0 and pi, in the grid among many boxes."""
    k = np.arange(40, dtype=np.float64)
    x = np.concatenate((4.0 * k, 100.0 + 0.0 * k))  # a row, then a column of sideways cars
    y = np.concatenate((0.0 * k, 50.0 + 2.0 * k))
    h = np.where(np.arange(80) % 2 == 0, 0.0, math.pi)
    length, width = np.full(80, 4.0), np.full(80, 2.0)
    got = as_pairs(*find_overlaps(x, y, h, length, width, np.ones(80, bool)))
    expected = [(a, a + 1) for a in range(39)] + [(a, a + 1) for a in range(40, 79)]
    assert got == expected


def test_a_huge_box_among_cars() -> None:
    """A 3 km barrier over 300 cars in a line: more pairs than the first buffer holds."""
    n = 300
    x = np.append(10.0 * np.arange(n), 1495.0)
    y = np.append(np.zeros(n), 1.0)
    h = np.append(np.zeros(n), math.pi)
    length, width = np.append(np.full(n, 4.5), 3100.0), np.append(np.full(n, 1.8), 0.5)
    i, j = find_overlaps(x, y, h, length, width, np.ones(n + 1, bool))
    assert as_pairs(i, j) == [(a, n) for a in range(n)]
    # Across far more rows of the grid than it holds boxes: 20 cars 50 m apart.
    y = np.append(50.0 * np.arange(20), 500.0)
    x, h = np.append(np.zeros(20), 1.0), np.full(21, math.pi / 2)
    length, width = np.append(np.full(20, 4.5), 1200.0), np.append(np.full(20, 1.8), 0.5)
    i, j = find_overlaps(x, y, h, length, width, np.ones(21, bool))
    assert as_pairs(i, j) == [(a, 20) for a in range(20)]


def test_many_pairs_in_one_place() -> None:
    """200 boxes on top of each other: every pair, beyond the first buffer."""
    n = 200
    rng = np.random.default_rng(5)
    x, y, h = rng.uniform(0, 0.1, n), rng.uniform(0, 0.1, n), rng.uniform(-3, 3, n)
    i, j = find_overlaps(x, y, h, np.full(n, 4.0), np.full(n, 2.0), np.ones(n, bool))
    assert as_pairs(i, j) == [(a, b) for a in range(n) for b in range(a + 1, n)]


def test_deterministic_and_independent_of_order() -> None:
    rng = np.random.default_rng(11)
    n = 3000
    cols = [rng.uniform(0, 400, n), rng.uniform(0, 400, n), rng.uniform(-7, 7, n)]
    cols += [rng.uniform(2, 9, n), rng.uniform(1, 3, n)]
    active = np.ones(n, bool)
    i, j = find_overlaps(*cols, active)
    i2, j2 = find_overlaps(*cols, active)
    np.testing.assert_array_equal(i, i2)
    np.testing.assert_array_equal(j, j2)
    perm = rng.permutation(n)
    pi, pj = find_overlaps(*(c[perm] for c in cols), active)
    a, b = perm[pi], perm[pj]
    assert set(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist(), strict=True)) == set(
        as_pairs(i, j)
    )


def test_non_finite_active_boxes_are_ignored() -> None:
    inf, nan = float("inf"), float("nan")
    got = pairs(
        (0.0, 0.0, 0.0, 4.0, 2.0),
        (inf, 0.0, 0.0, 4.0, 2.0),
        (1.0, 0.0, nan, 4.0, 2.0),
        (1.0, 0.0, 0.0, inf, 2.0),
        (1.0, 0.0, 0.0, 4.0, 2.0),
    )
    assert got == [(0, 4)]


def test_coordinates_far_apart() -> None:
    """Spans that overflow a double only coarsen the grid."""
    got = pairs(
        (-1e308, 0.0, 0.0, 4.0, 2.0),
        (0.0, 0.0, 0.0, 4.0, 2.0),
        (3.0, 1e300, 0.0, 4.0, 2.0),
        (1e308, 1e300, 0.0, 4.0, 2.0),
        (2.0, 0.5, 0.3, 4.0, 2.0),
        (1e308, 1e300, 1.0, 4.0, 2.0),
    )
    assert got == [(1, 4), (3, 5)]


def test_inputs_are_converted_and_shapes_checked() -> None:
    i, j = find_overlaps([0, 3], [0, 0], [0, 0], [4, 4], [2, 2], [1, 1])
    assert as_pairs(i, j) == [(0, 1)]
    with pytest.raises(ValueError, match="one shape"):
        find_overlaps(np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(2), [1, 1, 1])


def test_aabb_bounds_of_cos_and_sin_hold() -> None:
    """The broad phase's bounds of |cos| and |sin| never fall below numpy's values."""
    h = np.concatenate(
        (
            np.linspace(-20.0, 20.0, 200_001),
            np.arange(-8, 9) * (math.pi / 2),
            np.random.default_rng(2).uniform(-1e8, 1e8, 10_000),
            [1e8, -1e12, 2 * math.pi * 1000],
        )
    )
    bounds = np.array([collisions._abs_cos_sin_bound(v) for v in h])
    assert (bounds[:, 0] >= np.abs(np.cos(h))).all()
    assert (bounds[:, 1] >= np.abs(np.sin(h))).all()
    small = np.abs(h) < 1e3
    assert (bounds[small] - np.abs(np.c_[np.cos(h), np.sin(h)])[small]).max() < 3e-5


def test_large_boxes_at_any_angle_among_a_grid_of_cars() -> None:
    """Barriers along, across and diagonal to a dense grid: they look up the grid's cells."""
    rng = np.random.default_rng(9)
    gx, gy = np.meshgrid(np.arange(40) * 5.0, np.arange(40) * 2.5)
    n = gx.size
    x = np.concatenate((gx.ravel() + rng.uniform(-0.5, 0.5, n), [100.0, 100.0, 100.0, 40.0]))
    y = np.concatenate((gy.ravel() + rng.uniform(-0.3, 0.3, n), [50.0, 50.0, 50.0, 90.0]))
    h = np.concatenate((rng.normal(0.0, 0.2, n), [0.0, math.pi / 2, math.pi / 4, 1.0]))
    length = np.concatenate((np.full(n, 4.5), [120.0, 90.0, 150.0, 60.0]))
    width = np.concatenate((np.full(n, 1.8), [0.5, 0.5, 0.5, 3.0]))
    active = np.ones(n + 4, bool)
    got = as_pairs(*find_overlaps(x, y, h, length, width, active))
    assert got == sorted(brute_force_arrays(x, y, h, length, width, active))
    assert sum(1 for i, j in got if j >= n) > 100
