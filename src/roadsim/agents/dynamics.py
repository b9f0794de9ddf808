"""Vehicle dynamics: a kinematic bicycle model, compiled passes over all vehicles.

The reference point is the box centre. With wheelbase L, front steering angle delta and the
centre a distance ``lr`` ahead of the rear axle (``lr = L/2``), the slip angle is
``beta = atan(lr/L * tan(delta))`` and::

    x'   = v cos(psi + beta)       psi' = v / lr * sin(beta)
    y'   = v sin(psi + beta)       v'   = a

Integrated with the exact arc over one step for constant (v-average, beta), so that a vehicle
with constant controls drives a circle of radius ``lr / sin(beta)`` exactly: the chord of
length ``2 sin(dpsi/2) / dpsi`` times the path leaves at ``psi + beta + dpsi/2``. The heading
is wrapped to [-pi, pi) with a floor modulo (as ``numpy.remainder``).

The step takes no transcendental function from the C library, whose sin, cos, tan and atan
cost 10 to 20 ns each here, six of them per vehicle: ``cos(beta)`` and ``sin(beta)`` are
algebraic in ``cos(delta)`` and ``sin(delta)``, the chord's direction is the product of
the rotations by psi, beta and ``dpsi/2``, and sines and cosines come from `_sincos`
(FreeBSD's msun polynomials, within 2e-16), without branches, so that the compiler
computes several vehicles at once. Only angles beyond the polynomials' range (a heading of
2**19 rad, more than a quarter turn in one step, NaN) fall back to the C library. Results
differ from the plain formula in the last bits (1e-13 m at 3 km from the origin).

`step_bicycle_slots` advances the vehicles of a list of slots in place in the simulation's
per-slot arrays; `step_bicycle` is the same step on arrays of vehicles, returning new ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from roadsim._jit import njit

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


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
) -> None:
    """Advances the vehicles in ``slots`` by one step of ``dt`` seconds, in place.

    Args:
        slots: The vehicles to move, int64 indices into the per-slot arrays, shape (M,).
        x, y, heading, speed, steer: State by slot, float64 arrays of the same shape (C,);
            read and overwritten at ``slots``.
        accel, yaw_rate: By slot, written at ``slots``: the acceleration actually applied
            (m/s^2; speed never goes below zero) and the heading rate (rad/s).
        accel_cmd, steer_cmd: Requested acceleration (m/s^2) and steering angle (rad),
            shape (M,), aligned with ``slots``; clipped to the limits, steering also
            rate-limited.
        limits: The limits by slot, arrays of shape (C,).
        dt: Step (s).
    """
    _bicycle_kernel(
        np.ascontiguousarray(slots, dtype=np.int64),
        x,
        y,
        heading,
        speed,
        steer,
        accel,
        yaw_rate,
        np.ascontiguousarray(accel_cmd, dtype=np.float64),
        np.ascontiguousarray(steer_cmd, dtype=np.float64),
        np.ascontiguousarray(limits.wheelbase, dtype=np.float64),
        np.ascontiguousarray(limits.max_accel, dtype=np.float64),
        np.ascontiguousarray(limits.max_decel, dtype=np.float64),
        np.ascontiguousarray(limits.max_steer, dtype=np.float64),
        np.ascontiguousarray(limits.max_steer_rate, dtype=np.float64),
        float(dt),
    )


@njit
def _bicycle_kernel(
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
    wheelbase: FloatArray,
    max_accel: FloatArray,
    max_decel: FloatArray,
    max_steer: FloatArray,
    max_steer_rate: FloatArray,
    dt: float,
) -> None:
    # Three passes: one vehicle's step is a chain of ~150 cycles of dependent arithmetic,
    # so the middle pass, on contiguous arrays and without branches, lets the compiler
    # work on several vehicles at once (SIMD); the others gather and scatter by slot.
    m = slots.shape[0]
    steer_now, v_mean, psi, lr = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    for i in range(m):
        k = slots[i]
        v0 = speed[k]
        d0 = steer[k]
        a = _clip(accel_cmd[i], -max_decel[k], max_accel[k])
        v1 = v0 + a * dt
        v1 = 0.0 if v1 < 0.0 else v1
        max_delta = max_steer_rate[k] * dt
        target = _clip(steer_cmd[i], -max_steer[k], max_steer[k])
        d1 = d0 + _clip(target - d0, -max_delta, max_delta)
        speed[k] = v1
        steer[k] = d1
        accel[k] = (v1 - v0) / dt
        steer_now[i] = d1
        v_mean[i] = 0.5 * (v0 + v1)
        psi[i] = heading[k]
        lr[i] = 0.5 * wheelbase[k]

    # The arc (inline: a call would keep the compiler from vectorising the loop).
    dx, dy, omega = np.empty(m), np.empty(m), np.empty(m)
    for i in range(m):
        # beta = atan(tan(d1) / 2) in (-pi/2, pi/2): with (c, s) = (cos d1, sin d1),
        # (cos beta, sin beta) = (2|c|, sign(c) s) / sqrt(4 c^2 + s^2).
        s_d, c_d = _sincos(steer_now[i])
        norm = math.sqrt(4.0 * c_d * c_d + s_d * s_d)
        cos_b = 2.0 * math.fabs(c_d) / norm
        sin_b = math.copysign(1.0, c_d) * s_d / norm
        w = v_mean[i] / lr[i] * sin_b
        half = 0.5 * w * dt
        z = half * half
        sinc_h = 1.0 + z * _sin_tail(z)
        cos_h = _cos_kernel(z)
        sin_h = sinc_h * half
        # The chord's direction psi + beta + dpsi/2, as a product of rotations.
        c_bh = cos_b * cos_h - sin_b * sin_h
        s_bh = sin_b * cos_h + cos_b * sin_h
        s_p, c_p = _sincos(psi[i])
        chord = v_mean[i] * dt * sinc_h
        dx[i] = chord * (c_p * c_bh - s_p * s_bh)
        dy[i] = chord * (s_p * c_bh + c_p * s_bh)
        omega[i] = w

    for i in range(m):
        k = slots[i]
        if not _in_range(steer_now[i], psi[i], omega[i] * dt):
            dx[i], dy[i], omega[i] = _arc_libm(steer_now[i], v_mean[i], lr[i], psi[i], dt)
        x[k] = x[k] + dx[i]
        y[k] = y[k] + dy[i]
        heading[k] = _wrap(psi[i] + omega[i] * dt + math.pi) - math.pi
        yaw_rate[k] = omega[i]


@njit
def _in_range(d1: float, psi: float, dpsi: float) -> bool:
    """The arc's polynomials hold: angles within `_REDUCE_MAX`, at most a quarter turn a
    step."""
    return (
        math.fabs(d1) < _REDUCE_MAX
        and math.fabs(psi) < _REDUCE_MAX
        and math.fabs(dpsi) <= 0.5 * math.pi
    )


@njit
def _arc_libm(
    d1: float, v_mean: float, lr: float, psi: float, dt: float
) -> tuple[float, float, float]:
    """The step's displacement (dx, dy) and yaw rate from the C library's functions, for
    what `_bicycle_kernel`'s polynomials do not cover (and NaN)."""
    beta = math.atan(0.5 * math.tan(d1))
    omega = v_mean / lr * math.sin(beta)
    half = 0.5 * omega * dt
    chord = v_mean * dt * (math.sin(half) / half if half != 0.0 else 1.0)
    direction = psi + beta + half
    return chord * math.cos(direction), chord * math.sin(direction), omega


@njit
def _clip(value: float, lo: float, hi: float) -> float:
    """``numpy.clip`` of one value (``maximum`` then ``minimum``, NaN passes)."""
    value = lo if value < lo else value
    return hi if value > hi else value


_TWO_PI = 2.0 * math.pi


@njit
def _wrap(a: float) -> float:
    """``numpy.remainder(a, 2 pi)``: floor modulo, in [0, 2 pi]."""
    if 0.0 < a < _TWO_PI:  # fmod would return a itself
        return a
    m = float(np.fmod(a, _TWO_PI))
    if m != 0.0:
        return m + _TWO_PI if m < 0.0 else m
    return 0.0


# FreeBSD msun's k_sin.c and k_cos.c: minimax polynomials for |x| <= pi/4, error below
# 2**-58 relative to the result.
_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11
# pi/2 in two parts (33 + 53 bits) for the argument reduction (msun's e_rem_pio2.c);
# n pi/2 is exact while n has at most 20 bits.
_PIO2_1 = 1.57079632673412561417e00
_PIO2_1T = 6.07710050650619224932e-11
_INV_PIO2 = 6.36619772367581382433e-01
_REDUCE_MAX = 2.0**19


@njit
def _sin_tail(z: float) -> float:
    """(sin(r) / r - 1) / r**2 for |r| <= pi/4, z = r * r."""
    return _S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6))))


@njit
def _cos_kernel(z: float) -> float:
    """cos(r) for |r| <= pi/4, z = r * r."""
    p = z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + z * p)


@njit
def _sincos(x: float) -> tuple[float, float]:
    """(sin x, cos x) for |x| < `_REDUCE_MAX`, each within 2e-16 of the exact value (an
    absolute error: near the zeros this is more than a unit in the last place); other x
    (and NaN) count as 0, callers check `_in_range`.

    Reduces x by the nearest multiple n pi/2 and picks the quadrant with multiplications
    by 0 and +-1 (exact) instead of branches.
    """
    x = x if math.fabs(x) < _REDUCE_MAX else 0.0
    n = math.floor(x * _INV_PIO2 + 0.5)
    r = (x - n * _PIO2_1) - n * _PIO2_1T
    z = r * r
    s = r + z * r * _sin_tail(z)
    c = _cos_kernel(z)
    q = int(n) & 3
    odd = float(q & 1)
    sign = 1.0 - 2.0 * float(q >> 1)
    # quadrant q: sin x = (s, c, -s, -c)[q], cos x = (c, -s, -c, s)[q]
    a = (1.0 - odd) * sign
    b = odd * sign
    return a * s + b * c, a * c - b * s
