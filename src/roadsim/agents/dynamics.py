"""Vehicle dynamics: a kinematic bicycle model, compiled passes over all vehicles.

The reference point is the box centre. With wheelbase L, front steering angle delta and the
centre a distance ``lr`` ahead of the rear axle (``lr = L/2``), the slip angle is
``beta = atan(lr/L * tan(delta))`` and::

    x'   = v cos(psi + beta)       psi' = v / lr * sin(beta)
    y'   = v sin(psi + beta)       v'   = a

Integrated with the exact arc over one step for constant (v-average, beta), so that a vehicle
with constant controls drives a circle of radius ``lr / sin(beta)`` exactly: the chord of
length ``2 sin(dpsi/2) / dpsi`` times the path leaves at ``psi + beta + dpsi/2``. The heading
is wrapped to [-pi, pi) (`roadsim.world.lane_kernels.wrap`).

`step_bicycle_slots` advances the vehicles of a list of slots in place in the simulation's
per-slot arrays; `step_bicycle` is the same step on arrays of vehicles, returning new ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from roadsim._jit import chunks_for, njit_leaf, njit_loop, njit_rows, share
from roadsim._types import FloatArray, IntArray
from roadsim.world.lane_kernels import wrap


@dataclass(frozen=True)
class VehicleLimits:
    """Per-vehicle physical limits, arrays of shape (N,) (SI units)."""

    wheelbase: FloatArray
    max_accel: FloatArray
    max_decel: FloatArray  # positive number
    max_steer: FloatArray  # rad
    max_steer_rate: FloatArray  # rad/s


def wheel_angle(curvature: FloatArray | float, wheelbase: FloatArray) -> FloatArray:
    """The front-wheel angle with which the kinematic bicycle's centre drives a path of
    ``curvature``: slip angle beta = asin(curvature * wheelbase / 2) (kept below 0.99
    of its range), tan(wheel) = 2 tan(beta)."""
    beta = np.arcsin(np.clip(np.multiply(curvature, 0.5 * wheelbase), -0.99, 0.99))
    out: FloatArray = np.arctan(2.0 * np.tan(beta))
    return out


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
    n = np.shape(x)[0]
    new_x, new_y, new_heading, new_speed, new_steer = (
        np.array(a, dtype=np.float64) for a in (x, y, heading, speed, steer)
    )
    accel, yaw_rate = np.zeros(n), np.zeros(n)
    step_bicycle_slots(
        np.arange(n, dtype=np.int64),
        new_x,
        new_y,
        new_heading,
        new_speed,
        new_steer,
        accel,
        yaw_rate,
        accel_cmd,
        steer_cmd,
        limits,
        dt,
    )
    return new_x, new_y, new_heading, new_speed, new_steer, accel, yaw_rate


def step_bicycle_slots(
    slots: IntArray,
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    speed: FloatArray,
    steer: FloatArray,
    accel: FloatArray,
    yaw_rate: FloatArray,
    accel_cmd: FloatArray,
    steer_cmd: FloatArray,
    limits: VehicleLimits,
    dt: float,
    slip: FloatArray | None = None,
) -> None:
    """Advances the vehicles in ``slots`` by one step of ``dt`` seconds, in place.

    Args:
        slots: The vehicles to move, int64 indices into the per-slot arrays, shape (M),
            each once (the rows are split over numba's threads).
        x, y, heading, speed, steer: State by slot, float64 arrays of the same shape (C,);
            read and overwritten at ``slots``.
        accel, yaw_rate: By slot, written at ``slots``: the acceleration actually applied
            (m/s^2; speed never goes below zero) and the heading rate (rad/s).
        accel_cmd, steer_cmd: Requested acceleration (m/s^2) and steering angle (rad),
            shape (M,), aligned with ``slots``; clipped to the limits, steering also
            rate-limited.
        limits: The limits by slot, arrays of shape (C,).
        dt: Step (s).
        slip: By slot, written at ``slots`` if given: the slip angle ``beta`` of the new
            steering angle (rad).
    """
    if slip is None:
        slip = np.empty(np.shape(x)[0])
    slots = np.ascontiguousarray(slots, dtype=np.int64)
    _bicycle_threaded(
        chunks_for(slots.shape[0]),
        slots,
        x,
        y,
        heading,
        speed,
        steer,
        accel,
        yaw_rate,
        slip,
        np.ascontiguousarray(accel_cmd, dtype=np.float64),
        np.ascontiguousarray(steer_cmd, dtype=np.float64),
        np.ascontiguousarray(limits.wheelbase, dtype=np.float64),
        np.ascontiguousarray(limits.max_accel, dtype=np.float64),
        np.ascontiguousarray(limits.max_decel, dtype=np.float64),
        np.ascontiguousarray(limits.max_steer, dtype=np.float64),
        np.ascontiguousarray(limits.max_steer_rate, dtype=np.float64),
        float(dt),
    )


@njit_loop
def _bicycle_rows(
    slots: IntArray,
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    speed: FloatArray,
    steer: FloatArray,
    accel: FloatArray,
    yaw_rate: FloatArray,
    slip: FloatArray,
    accel_cmd: FloatArray,
    steer_cmd: FloatArray,
    wheelbase: FloatArray,
    max_accel: FloatArray,
    max_decel: FloatArray,
    max_steer: FloatArray,
    max_steer_rate: FloatArray,
    dt: float,
    c: int,
    chunks: int,
) -> None:
    """Chunk c of ``chunks`` of `step_bicycle_slots`'s rows."""
    first, stop = share(slots.shape[0], c, chunks)
    for i in range(first, stop):
        k = slots[i]
        v0, d0 = speed[k], steer[k]
        v1 = max(v0 + _clip(accel_cmd[i], -max_decel[k], max_accel[k]) * dt, 0.0)
        max_delta = max_steer_rate[k] * dt
        target = _clip(steer_cmd[i], -max_steer[k], max_steer[k])
        d1 = d0 + _clip(target - d0, -max_delta, max_delta)
        speed[k], steer[k], accel[k] = v1, d1, (v1 - v0) / dt
        # The slip angle beta = atan(tan(d1) / 2), from cos and sin of d1 (|d1| < pi/2).
        cos_d, sin_d = math.cos(d1), math.sin(d1)
        norm = math.sqrt(4.0 * cos_d * cos_d + sin_d * sin_d)
        beta = math.atan2(sin_d / norm, 2.0 * cos_d / norm)
        v_mean = 0.5 * (v0 + v1)
        omega = v_mean / (0.5 * wheelbase[k]) * (sin_d / norm)
        half = 0.5 * omega * dt
        # Exact arc: the chord leaves at half the turn, 2 sin(dpsi/2)/dpsi times the path.
        chord = v_mean * dt * (math.sin(half) / half if half != 0.0 else 1.0)
        direction = heading[k] + beta + half
        x[k] += chord * math.cos(direction)
        y[k] += chord * math.sin(direction)
        heading[k] = wrap(heading[k] + 2.0 * half)
        yaw_rate[k] = omega
        slip[k] = beta


_bicycle_threaded = njit_rows(_bicycle_rows)


@njit_leaf
def _clip(value: float, lo: float, hi: float) -> float:
    """``numpy.clip`` of one value (``maximum`` then ``minimum``, NaN passes)."""
    value = lo if value < lo else value
    return hi if value > hi else value
