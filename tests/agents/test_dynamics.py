"""The kinematic bicycle model against its closed form."""

from __future__ import annotations

import numpy as np

from roadsim.agents.dynamics import VehicleLimits, step_bicycle


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
