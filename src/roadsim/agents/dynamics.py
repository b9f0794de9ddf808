"""Vehicle dynamics: a kinematic bicycle model, vectorised over all vehicles.

The reference point is the box centre. With wheelbase L, front steering angle delta and the
centre a distance ``lr`` ahead of the rear axle (``lr = L/2``), the slip angle is
``beta = atan(lr/L * tan(delta))`` and::

    x'   = v cos(psi + beta)       psi' = v / lr * sin(beta)
    y'   = v sin(psi + beta)       v'   = a

Integrated with the exact arc over one step for constant (v-average, beta), so that a vehicle
with constant controls drives a circle of radius ``lr / sin(beta)`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class VehicleLimits:
    """Per-vehicle physical limits, arrays of shape (N,) (SI units)."""

    wheelbase: FloatArray
    max_accel: FloatArray
    max_decel: FloatArray  # positive number
    max_steer: FloatArray  # rad
    max_steer_rate: FloatArray  # rad/s


def step_bicycle(
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    speed: FloatArray,
    steer: FloatArray,
    accel_cmd: FloatArray,
    steer_cmd: FloatArray,
    limits: VehicleLimits,
    dt: float,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Advances vehicles by one step of ``dt`` seconds.

    Args:
        x, y, heading, speed, steer: Current state, shape (N,).
        accel_cmd: Requested longitudinal acceleration (m/s^2), clipped to the limits.
        steer_cmd: Requested steering angle (rad), clipped to the limits and rate-limited.
        limits: The vehicles' limits.
        dt: Step (s).

    Returns:
        ``(x, y, heading, speed, steer, accel, yaw_rate)`` after the step; ``accel`` is the
        acceleration actually applied (speed never goes below zero).
    """
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
    # Exact arc: the chord leaves at half the turn, 2 sin(dpsi/2)/dpsi times the path length.
    dist = v_mean * dt
    chord = dist * np.sinc(dpsi / (2.0 * np.pi))
    direction = heading + beta + 0.5 * dpsi
    new_x = x + chord * np.cos(direction)
    new_y = y + chord * np.sin(direction)
    new_heading = np.remainder(heading + dpsi + np.pi, 2.0 * np.pi) - np.pi
    return new_x, new_y, new_heading, new_speed, new_steer, applied, yaw_rate
