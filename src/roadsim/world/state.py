"""`WorldState`: everything that changes during a simulation, as one array per field.

All arrays have shape (capacity,) and are indexed by actor slot; ``active`` says which slots
hold a live actor. An actor's id is stable, its slot need not be (the simulation sorts
traffic into lane order now and then: `roadsim.sim.simulation`). Units are SI, poses are
in the world frame (x east, y north, z up, heading counter-clockwise from x). Lane fields
follow `roadsim.road.network.RoadNetwork`: ``uid`` is the lane uid (-1: not on a lane),
``s``/``t`` road coordinates.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim._jit import njit, njit_leaf
from roadsim._types import BoolArray, FloatArray, IntArray

# Actor kinds (`WorldState.kind`).
VEHICLE, STATIC_OBJECT, SCRIPTED_OBJECT = 0, 1, 2
KIND_NAMES = ("vehicle", "static_object", "scripted_object")

# Who drives a vehicle (`WorldState.control`).
NO_CONTROL, AUTOPILOT, EXTERNAL = 0, 1, 2


@dataclass
class WorldState:
    """The changing state of every actor at one frame.

    Attributes:
        id: Stable actor id (never reused within a simulation), int64.
        kind: VEHICLE, STATIC_OBJECT or SCRIPTED_OBJECT, int64.
        model: Index into the vehicle/object model table (car, truck, bus, box, ...), int64.
        control: NO_CONTROL, AUTOPILOT or EXTERNAL, int64.
        active: The slot holds a live actor.
        x, y, z: Position of the box centre on the ground (m).
        heading: Heading (rad), wrapped to [-pi, pi).
        speed: Longitudinal speed (m/s), >= 0.
        accel: Longitudinal acceleration over the last tick (m/s^2).
        steer: Front-wheel steering angle (rad), positive left.
        yaw_rate: Heading rate (rad/s).
        slip: Side-slip angle (rad): the box centre moves along ``heading + slip``; a
            vehicle's comes from its steering (the kinematic bicycle model), 0 for others.
        length, width, height: Box size (m).
        road: Road index of the lane the actor is on (-1: off every lane).
        uid: Lane uid (-1: off every lane).
        s, t: Road coordinates of the position on that road (NaN off lane).
        collided: The actor overlapped another one in this frame.
        left_map: The actor left the road network and was deactivated.
    """

    id: IntArray
    kind: IntArray
    model: IntArray
    control: IntArray
    active: BoolArray
    x: FloatArray
    y: FloatArray
    z: FloatArray
    heading: FloatArray
    speed: FloatArray
    accel: FloatArray
    steer: FloatArray
    yaw_rate: FloatArray
    slip: FloatArray
    length: FloatArray
    width: FloatArray
    height: FloatArray
    road: IntArray
    uid: IntArray
    s: FloatArray
    t: FloatArray
    collided: BoolArray
    left_map: BoolArray

    @classmethod
    def empty(cls, capacity: int) -> WorldState:
        """A state with ``capacity`` inactive slots."""
        values: dict[str, npt.NDArray[np.generic]] = {}
        for f in fields(cls):
            dtype = _DTYPES.get(f.name, np.float64)
            fill: object = -1 if f.name in ("road", "uid", "id") else 0
            values[f.name] = np.full(capacity, fill, dtype=dtype)
        state = cls(**values)  # type: ignore[arg-type]
        state.s[:] = np.nan
        state.t[:] = np.nan
        return state

    @property
    def capacity(self) -> int:
        return int(self.id.shape[0])

    def arrays(self) -> dict[str, npt.NDArray[np.generic]]:
        """Every field by name (the arrays themselves, not copies)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def copy(self) -> WorldState:
        return WorldState(**{k: v.copy() for k, v in self.arrays().items()})  # type: ignore[arg-type]

    def grow(self, capacity: int) -> WorldState:
        """A copy with room for ``capacity`` actors (new slots inactive)."""
        bigger = WorldState.empty(capacity)
        n = self.capacity
        for name, values in self.arrays().items():
            getattr(bigger, name)[:n] = values
        return bigger


@njit
def vehicle_slots(
    active: BoolArray, kind: IntArray, uid: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """The slots of the active vehicles, and of those of them on a lane and off every
    lane (``uid`` -1), each in slot order: one pass instead of a few numpy calls a tick."""
    n = active.shape[0]
    vehicles = np.empty(n, dtype=np.int64)
    count = on_count = 0
    for k in range(n):
        if active[k] and kind[k] == VEHICLE:
            vehicles[count] = k
            count += 1
            on_count += uid[k] >= 0
    on = np.empty(on_count, dtype=np.int64)
    off = np.empty(count - on_count, dtype=np.int64)
    a = b = 0
    for k in vehicles[:count]:
        if uid[k] >= 0:
            on[a] = k
            a += 1
        else:
            off[b] = k
            b += 1
    return vehicles[:count], on, off


_DTYPES: dict[str, type] = {
    "id": np.int64,
    "kind": np.int64,
    "model": np.int64,
    "control": np.int64,
    "active": np.bool_,
    "road": np.int64,
    "uid": np.int64,
    "collided": np.bool_,
    "left_map": np.bool_,
}


def move_rows(arrays: Iterable[npt.NDArray[Any]], dst: IntArray, src: IntArray) -> None:
    """``values[dst] = values[src]`` for each array of ``arrays`` (along its first axis;
    an array given twice moves once), where ``dst`` and ``src`` hold the same rows.

    Every 20 ticks the simulation moves some 45 arrays of 10,000 vehicles, which numpy's
    indexing did in 1.5 ms. Each array moves here as raw rows of 8-byte words (or of
    bytes, for rows of another size), so two kernels of one signature each serve every
    dtype and shape."""
    seen: set[int] = set()
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    src = np.ascontiguousarray(src, dtype=np.int64)
    for values in arrays:
        if id(values) in seen:
            continue
        seen.add(id(values))
        if not values.flags.c_contiguous:
            values[dst] = values[src]
            continue
        rows = values.reshape(values.shape[0], -1).view(np.uint8)
        if rows.shape[1] % 8 == 0:
            _move_words(rows.view(np.uint64), dst, src)
        else:
            _move_bytes(rows, dst, src)


@njit_leaf
def _move(rows: npt.NDArray[Any], dst: IntArray, src: IntArray, scratch: npt.NDArray[Any]) -> None:
    """``rows[dst] = rows[src]``, through ``scratch`` (as many rows as ``dst``)."""
    width = rows.shape[1]
    for i in range(dst.size):
        for j in range(width):
            scratch[i, j] = rows[src[i], j]
    for i in range(dst.size):
        for j in range(width):
            rows[dst[i], j] = scratch[i, j]


@njit
def _move_words(rows: npt.NDArray[np.uint64], dst: IntArray, src: IntArray) -> None:
    """`move_rows` for one array whose rows are whole 8-byte words."""
    _move(rows, dst, src, np.empty((dst.size, rows.shape[1]), dtype=np.uint64))


@njit
def _move_bytes(rows: npt.NDArray[np.uint8], dst: IntArray, src: IntArray) -> None:
    """`move_rows` for one array whose rows are bytes of another count."""
    _move(rows, dst, src, np.empty((dst.size, rows.shape[1]), dtype=np.uint8))
