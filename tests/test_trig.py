"""`roadsim._trig.sin_cos` against the math library."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from roadsim._trig import sin_cos
from roadsim._types import FloatArray


@numba.njit
def _sin_cos_all(angles: FloatArray) -> tuple[FloatArray, FloatArray]:
    sines, cosines = np.empty(angles.size), np.empty(angles.size)
    for i in range(angles.size):
        sines[i], cosines[i] = sin_cos(angles[i])
    return sines, cosines


def _ulps(values: FloatArray, reference: FloatArray) -> float:
    """The largest difference in units of the last place of the reference (of 1e-300
    at least, for references of 0)."""
    return float(
        np.max(np.abs(values - reference) / np.spacing(np.maximum(np.abs(reference), 1e-300)))
    )


@pytest.mark.parametrize("span", [1e-6, 1.0, math.pi, 100.0, 4e5])
def test_within_two_ulps_of_the_library(span: float) -> None:
    angles = np.random.default_rng(7).uniform(-span, span, 200_000)
    sines, cosines = _sin_cos_all(angles)
    assert _ulps(sines, np.sin(angles)) <= 2.0
    assert _ulps(cosines, np.cos(angles)) <= 2.0


def test_quadrant_boundaries_and_signs() -> None:
    angles = np.array([0.0, -0.0, math.pi / 2, math.pi, -math.pi, 1.5 * math.pi, 2 * math.pi])
    sines, cosines = _sin_cos_all(angles)
    assert sines[0] == 0.0 and cosines[0] == 1.0
    assert math.copysign(1.0, sines[1]) == -1.0  # sin(-0) is -0
    np.testing.assert_allclose(sines, np.sin(angles), rtol=0, atol=3e-16)
    np.testing.assert_allclose(cosines, np.cos(angles), rtol=0, atol=3e-16)


def test_large_and_non_finite_angles_as_the_library() -> None:
    angles = np.array([1e6, -3e9, 1e300, np.inf, -np.inf, np.nan])
    sines, cosines = _sin_cos_all(angles)
    finite = np.isfinite(angles)
    np.testing.assert_array_equal(sines[finite], np.sin(angles[finite]))
    np.testing.assert_array_equal(cosines[finite], np.cos(angles[finite]))
    assert np.isnan(sines[~finite]).all() and np.isnan(cosines[~finite]).all()


def test_same_bits_every_call() -> None:
    angles = np.random.default_rng(3).uniform(-10.0, 10.0, 1000)
    first = _sin_cos_all(angles)
    second = _sin_cos_all(angles.copy())
    assert first[0].tobytes() == second[0].tobytes()
    assert first[1].tobytes() == second[1].tobytes()
