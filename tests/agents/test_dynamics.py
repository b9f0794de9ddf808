"""The kinematic bicycle model against its closed form, and the compiled step against the
array formula it replaced."""

from __future__ import annotations

import math

import numpy as np
import pytest

from roadsim._types import FloatArray
from roadsim.agents.dynamics import VehicleLimits, step_bicycle, step_bicycle_slots


def limits(n: int) -> VehicleLimits:
    return VehicleLimits(
        wheelbase=np.full(n, 2.8),
        max_accel=np.full(n, 3.0),
        max_decel=np.full(n, 8.0),
        max_steer=np.full(n, 0.6),
        max_steer_rate=np.full(n, 1.0),
    )


def drive(steer: float, accel: float, speed: float, seconds: float, dt: float = 0.05):  # type: ignore[no-untyped-def]
    x = np.zeros(1)
    y = np.zeros(1)
    h = np.full(1, 0.3)
    v = np.full(1, speed)
    d = np.full(1, steer)
    for _ in range(round(seconds / dt)):
        x, y, h, v, d, _, _ = step_bicycle(x, y, h, v, d, np.full(1, accel), np.full(1, steer), limits(1), dt)
    return x[0], y[0], h[0], v[0]


def test_constant_steering_drives_the_closed_form_circle() -> None:
    steer, speed, seconds = 0.2, 10.0, 7.0
    lr = 1.4
    beta = np.arctan(0.5 * np.tan(steer))
    omega = speed / lr * np.sin(beta)
    radius = lr / np.sin(beta)
    x, y, h, v = drive(steer, 0.0, speed, seconds)
    psi0 = 0.3
    want_x = radius * (np.sin(psi0 + beta + omega * seconds) - np.sin(psi0 + beta))
    want_y = -radius * (np.cos(psi0 + beta + omega * seconds) - np.cos(psi0 + beta))
    assert np.hypot(x - want_x, y - want_y) < 1e-9
    assert np.isclose(np.angle(np.exp(1j * (h - psi0 - omega * seconds))), 0.0, atol=1e-12)
    assert v == speed


def test_constant_acceleration_on_a_straight() -> None:
    x, y, _, v = drive(0.0, 2.0, 5.0, 4.0)
    travelled = 5.0 * 4.0 + 0.5 * 2.0 * 4.0**2
    assert np.isclose(np.hypot(x, y), travelled, atol=1e-9)
    assert np.isclose(v, 13.0)


def test_limits_clip_acceleration_steering_and_speed() -> None:
    lim = limits(1)
    out = step_bicycle(
        np.zeros(1), np.zeros(1), np.zeros(1), np.full(1, 1.0), np.zeros(1),
        np.full(1, -100.0), np.full(1, 5.0), lim, 0.5,
    )
    _, _, _, v, steer, applied, _ = out
    assert v[0] == 0.0  # never reverses
    assert applied[0] == -2.0  # what it took to stop, not the request
    assert steer[0] == 0.5  # rate-limited: 1 rad/s over 0.5 s


# -- the compiled step against the array formula ------------------------------------------------

Step = tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]


def reference(
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    speed: FloatArray,
    steer: FloatArray,
    accel_cmd: FloatArray,
    steer_cmd: FloatArray,
    limits: VehicleLimits,
    dt: float,
) -> Step:
    """The numpy implementation `step_bicycle` replaced."""
    a = np.clip(accel_cmd, -limits.max_decel, limits.max_accel)
    new_speed = np.maximum(speed + a * dt, 0.0)
    applied = (new_speed - speed) / dt
    max_delta = limits.max_steer_rate * dt
    target = np.clip(steer_cmd, -limits.max_steer, limits.max_steer)
    new_steer = steer + np.clip(target - steer, -max_delta, max_delta)
    lr = 0.5 * limits.wheelbase
    beta = np.arctan(0.5 * np.tan(new_steer))
    v_mean = 0.5 * (speed + new_speed)
    yaw_rate = v_mean / lr * np.sin(beta)
    dpsi = yaw_rate * dt
    chord = v_mean * dt * np.sinc(dpsi / (2.0 * np.pi))
    direction = heading + beta + 0.5 * dpsi
    new_heading = np.remainder(heading + dpsi + np.pi, 2.0 * np.pi) - np.pi
    return (
        x + chord * np.cos(direction),
        y + chord * np.sin(direction),
        new_heading,
        new_speed,
        new_steer,
        applied,
        yaw_rate,
    )


def states(n: int, seed: int, heading_range: float) -> tuple[FloatArray, ...]:
    rng = np.random.default_rng(seed)
    return (
        rng.uniform(-3000.0, 3000.0, n),
        rng.uniform(-3000.0, 3000.0, n),
        rng.uniform(-heading_range, heading_range, n),
        rng.uniform(0.0, 30.0, n),
        rng.uniform(-0.6, 0.6, n),
        rng.uniform(-10.0, 5.0, n),
        rng.uniform(-0.8, 0.8, n),
    )


@pytest.mark.parametrize(
    ("case", "heading_range", "dt"),
    [
        ("a tick", math.pi, 0.05),
        ("headings of a million radians", 1e6, 0.05),
        ("steps of two seconds", math.pi, 2.0),
    ],
)
def test_matches_the_array_formula(case: str, heading_range: float, dt: float) -> None:
    x, y, h, v, d, a, c = states(20_000, 1, heading_range)
    got = step_bicycle(x, y, h, v, d, a, c, limits(x.size), dt)
    want = reference(x, y, h, v, d, a, c, limits(x.size), dt)
    names = ("x", "y", "heading", "speed", "steer", "accel", "yaw_rate")
    # Positions: the reference adds beta to the heading before its cosine, rounding to
    # the heading's last bit (1e-10 rad at a million radians).
    atol = {"x": 1e-9, "y": 1e-9, "heading": 1e-12, "yaw_rate": 1e-12}
    for name, g, w in zip(names, got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=0.0, atol=atol.get(name, 0.0), err_msg=name)


def test_nan_requests_give_nan_as_the_array_formula() -> None:
    x, y, h, v, d, a, c = states(1000, 2, math.pi)
    a[::5] = np.nan
    c[::7] = np.nan
    got = step_bicycle(x, y, h, v, d, a, c, limits(x.size), 0.05)
    with np.errstate(invalid="ignore"):
        want = reference(x, y, h, v, d, a, c, limits(x.size), 0.05)
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_allclose(g, w, rtol=0.0, atol=1e-9)


def test_in_place_step_writes_only_its_slots() -> None:
    n = 500
    x, y, h, v, d, a, c = states(n, 3, math.pi)
    lim = limits(n)
    slots = np.arange(1, n, 3, dtype=np.int64)
    want = step_bicycle(
        x[slots], y[slots], h[slots], v[slots], d[slots], a[slots], c[slots],
        VehicleLimits(*(getattr(lim, f)[slots] for f in VehicleLimits.__dataclass_fields__)),
        0.05,
    )  # fmt: skip
    sx, sy, sh, sv, sd = (col.copy() for col in (x, y, h, v, d))
    accel, yaw_rate = np.full(n, 7.0), np.full(n, 7.0)
    step_bicycle_slots(slots, sx, sy, sh, sv, sd, accel, yaw_rate, a[slots], c[slots], lim, 0.05)
    for col, w in zip((sx, sy, sh, sv, sd, accel, yaw_rate), want, strict=True):
        assert np.array_equal(col[slots], w)
    rest = np.setdiff1d(np.arange(n), slots)
    for col, before in zip((sx, sy, sh, sv, sd), (x, y, h, v, d), strict=True):
        assert np.array_equal(col[rest], before[rest])
    assert np.all(accel[rest] == 7.0) and np.all(yaw_rate[rest] == 7.0)
