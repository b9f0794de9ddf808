"""`roadsim.world.state`: moving the rows of per-slot arrays."""

from __future__ import annotations

import numpy as np

from roadsim.world.state import move_rows


def test_move_rows_moves_every_array_along_its_first_axis() -> None:
    rng = np.random.default_rng(3)
    n = 50
    dst = np.array([2, 5, 7, 11, 20, 33], dtype=np.int64)
    src = rng.permutation(dst)
    arrays = [
        rng.normal(size=n),
        rng.integers(-5, 5, n),
        rng.random(n) < 0.5,
        rng.integers(0, 2**63, n, dtype=np.uint64),
        rng.normal(size=(n, 3)),
        rng.integers(-1, 9, (n, 4)),
        rng.normal(size=(n, 2, 3)),
        rng.normal(size=(n, 4))[:, ::2],  # rows of columns, not contiguous
        rng.normal(size=(n, 2, 4))[:, :, ::2],  # not contiguous either
        np.arange(2 * n)[::2],
    ]
    expected = [a.copy() for a in arrays]
    for a in expected:
        a[dst] = a[src]
    move_rows(arrays, dst, src)
    for got, want in zip(arrays, expected, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_an_array_given_twice_moves_once() -> None:
    values = np.arange(6, dtype=np.float64)
    dst, src = np.array([0, 1, 2]), np.array([1, 2, 0])
    move_rows([values, values], dst, src)
    np.testing.assert_array_equal(values, [1.0, 2.0, 0.0, 3.0, 4.0, 5.0])
