"""The Intelligent Driver Model (Treiber, Hennecke, Helbing 2000), vectorised.

    a = a_max * (1 - (v / v0)**4 - (s_star / gap)**2)
    s_star = s0 + max(0, v*T + v * dv / (2 sqrt(a_max * b)))

with ``dv = v - v_leader`` and ``gap`` the bumper-to-bumper distance. A free road is a gap
of +inf. The result is not clipped; the vehicle dynamics apply the physical limits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roadsim._jit import njit_leaf
from roadsim._types import FloatArray


@dataclass(frozen=True)
class IdmParams:
    """IDM parameters, scalars or arrays of shape (N,)."""

    max_accel: FloatArray | float = 1.5  # a_max (m/s^2)
    comfort_decel: FloatArray | float = 2.0  # b (m/s^2)
    time_headway: FloatArray | float = 1.5  # T (s)
    min_gap: FloatArray | float = 2.0  # s0 (m)
    delta: float = 4.0


def idm_accel(
    speed: FloatArray,
    desired_speed: FloatArray,
    gap: FloatArray,
    leader_speed: FloatArray,
    p: IdmParams,
) -> FloatArray:
    """IDM acceleration (m/s^2) for each follower; all arrays shape (N,)."""
    v = speed
    v0 = np.maximum(desired_speed, 0.1)
    dv = v - leader_speed
    s_star = p.min_gap + np.maximum(
        0.0,
        v * p.time_headway + v * dv / (2.0 * np.sqrt(np.asarray(p.max_accel) * p.comfort_decel)),
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        interaction = np.where(np.isfinite(gap), (s_star / np.maximum(gap, 0.1)) ** 2, 0.0)
    return np.asarray(p.max_accel * (1.0 - (v / v0) ** p.delta - interaction), dtype=np.float64)


@njit_leaf
def idm_accel_one(
    v: float,
    desired_speed: float,
    gap: float,
    leader_speed: float,
    max_accel: float,
    comfort_decel: float,
    time_headway: float,
    min_gap: float,
    delta: float,
) -> float:
    """`idm_accel` for one follower, for compiled kernels."""
    v0 = max(desired_speed, 0.1)
    s_star = min_gap + max(
        0.0, v * time_headway + v * (v - leader_speed) / (2.0 * np.sqrt(max_accel * comfort_decel))
    )
    interaction = (s_star / max(gap, 0.1)) ** 2 if np.isfinite(gap) else 0.0
    ratio = v / v0
    free = (ratio * ratio) * (ratio * ratio) if delta == 4.0 else ratio**delta  # pow is slow
    return float(max_accel * (1.0 - free - interaction))
