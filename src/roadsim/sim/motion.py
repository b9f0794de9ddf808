"""Dynamics and lane localisation of a tick in one pass over the vehicles.

The bicycle model (`roadsim.agents.dynamics`) writes each vehicle's new pose, and
incremental localisation (`roadsim.world.localization`) reads it straight back. As two
passes, the second read the poses of 10,000 vehicles after the first had moved on to
others; here each thread moves its run of vehicles and then localises the same run, so
the poses it reads are still in its cache, and the threads start once instead of twice.
Each vehicle's arithmetic is that of the two passes, so the results are the same bits.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import prange

from roadsim._jit import CHUNKS, njit_rows
from roadsim.agents.dynamics import VehicleLimits, bicycle_rows, commands_and_limits
from roadsim.world.lane_kernels import LaneArrays
from roadsim.world.localization import relocalize_rows, search_lost
from roadsim.world.routing import LaneInfo
from roadsim.world.state import WorldState

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]


def move_and_localize(
    info: LaneInfo,
    slots: IntArray,
    state: WorldState,
    accel_cmd: FloatArray,
    steer_cmd: FloatArray,
    limits: VehicleLimits,
    dt: float,
    salt: UIntArray,
) -> IntArray:
    """`roadsim.agents.dynamics.step_bicycle_slots`, then
    `roadsim.world.localization.relocalize_slots`, for the vehicles in ``slots`` (each
    on a lane when the tick started, in slot order), in place in ``state``.

    Args:
        info: The lane tables.
        slots: The vehicles, int64 slots.
        state: The world; each vehicle's pose, speed, steering angle, acceleration, yaw
            rate and slip angle, and its lane, road coordinates and road are written.
        accel_cmd, steer_cmd: The commands, aligned with ``slots`` (m/s^2, rad).
        limits: The vehicles' limits by slot.
        dt: Step (s).
        salt: Route salts by slot.

    Returns:
        The slots of the vehicles now on no lane at all, as `relocalize_slots`.
    """
    st = state
    slots = np.ascontiguousarray(slots, dtype=np.int64)
    lost = np.zeros(slots.shape[0], dtype=np.bool_)
    _motion_kernel(
        info.arrays, slots, st.x, st.y, st.heading, st.speed, st.steer, st.accel,
        st.yaw_rate, st.slip, *commands_and_limits(accel_cmd, steer_cmd, limits), float(dt),
        st.uid, st.s, st.t, st.road, salt, np.arange(slots.shape[0]), lost,
    )  # fmt: skip
    return search_lost(info, slots[lost], st.uid, st.s, st.t, st.road, st.x, st.y, st.heading)


@njit_rows
def _motion_kernel(
    la: LaneArrays,
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
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
    road: IntArray,
    salt: UIntArray,
    order: IntArray,
    lost_at: BoolArray,
) -> None:
    """Each chunk of rows: `bicycle_rows`, then `relocalize_rows` of the same rows
    (``order`` is ``arange``: slot order)."""
    n = slots.shape[0]
    for c in prange(CHUNKS):
        first, stop = c * n // CHUNKS, (c + 1) * n // CHUNKS
        bicycle_rows(
            slots, x, y, heading, speed, steer, accel, yaw_rate, slip, accel_cmd, steer_cmd,
            wheelbase, max_accel, max_decel, max_steer, max_steer_rate, dt, first, stop,
        )  # fmt: skip
        relocalize_rows(la, slots, uid, s, t, road, x, y, salt, order[first:stop], lost_at)
