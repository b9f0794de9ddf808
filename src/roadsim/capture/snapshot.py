"""What a capture takes: `Snapshot`s of the world, each `Sample` stamped, and `CaptureInfo`.

A snapshot holds the state of every active actor (`ActorStates`, sorted by actor id so
that two snapshots line up whatever the simulation's slot order) and one `Sample` per
sensor that read this frame: its name, type, frame, time, pose in the world and reading.
`ActorStates.of` gathers the actors' rows in one compiled pass into one buffer, the
columns back to back (`ActorStates.block`), which a recorder's writer process is handed
as it is (`roadsim.capture.wire`).

Readings are told apart by their class through `READING_TYPES`, the one place a new kind
of sensor registers: ``driver`` (`roadsim.sensors.view.DriverView`), ``raytracer``
(`roadsim.sensors.raytracer.RayTracerReading`), ``lidar``
(`roadsim.sensors.lidar.PointCloud`) and ``camera`` (``roadsim.sensors.camera.CameraImage``,
where that module exists). Sinks choose what to do with a sample by its ``type``.
"""

from __future__ import annotations

import importlib
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from roadsim._jit import njit, njit_leaf
from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.sensors.lidar import PointCloud
from roadsim.sensors.mount import Pose
from roadsim.sensors.raytracer import RayTracerReading
from roadsim.sensors.view import DriverView
from roadsim.world.state import WorldState

__all__ = [
    "ACTOR_FIELDS",
    "COLUMN_DTYPES",
    "READING_TYPES",
    "ActorStates",
    "CaptureInfo",
    "Sample",
    "Snapshot",
    "reading_type",
]


@dataclass(frozen=True, slots=True, eq=False)
class ActorStates:
    """The active actors of one frame, sorted by id: `WorldState`'s fields for them.

    Attributes:
        id, kind, model, control: int64, shape (N,) (`roadsim.world.state` codes).
        x, y, z, heading, speed, accel, steer, yaw_rate, slip, length, width, height,
            s, t: float64 (N,), SI units, world frame.
        road, uid: int64 (N,) road index and lane uid (-1: off every lane).
        collided: bool (N,).
        block: Where the columns are views of one buffer (`of`, `from_block`), that
            buffer: uint8, the columns in `ACTOR_FIELDS` order back to back, N values of
            their `COLUMN_DTYPES` each (8-byte columns first, so each is aligned as the
            buffer is). None for columns given one by one.
    """

    id: IntArray
    kind: IntArray
    model: IntArray
    control: IntArray
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
    block: npt.NDArray[np.uint8] | None = field(default=None, init=False, repr=False)

    @classmethod
    def of(cls, state: WorldState) -> ActorStates:
        """Copies of the active rows of ``state``, by id, in one `block`."""
        block, n = _gather(state.active, *_columns_of(state))
        return cls.from_block(block, n)

    @classmethod
    def from_block(cls, block: npt.NDArray[np.uint8], n: int) -> ActorStates:
        """The states of ``n`` actors laid out in ``block`` as `ActorStates.block` says.

        Each column is made on first use, a view of the block: a recorder's writer
        process is handed the block as it is, and most columns of a snapshot are then
        never looked at on the simulation's side.

        Raises:
            ValueError: For a block of another size than ``n`` actors take.
        """
        if block.shape != (n * ROW_BYTES,):
            raise ValueError(f"a block of {block.shape} bytes for {n} actors")
        states = object.__new__(cls)
        object.__setattr__(states, "block", block)
        return states

    if not TYPE_CHECKING:  # (mypy would take any name for an attribute)

        def __getattr__(self, name: str) -> Any:
            """A column of a block not made yet (Python asks only for slots not set)."""
            place = _PLACES.get(name)
            if place is None or self.block is None:
                raise AttributeError(f"'ActorStates' object has no attribute {name!r}")
            start, dtype = place
            n = self.block.shape[0] // ROW_BYTES
            column = self.block[start * n : (start + dtype.itemsize) * n].view(dtype)
            object.__setattr__(self, name, column)
            return column

    def __len__(self) -> int:
        if self.block is not None:
            return int(self.block.shape[0]) // ROW_BYTES
        return int(self.id.shape[0])

    def arrays(self) -> dict[str, np.ndarray[Any, Any]]:
        return {name: getattr(self, name) for name in ACTOR_FIELDS}

    def equals(self, other: ActorStates) -> bool:
        """Bit for bit (NaN equal to NaN)."""
        return all(
            np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
            for a, b in zip(self.arrays().values(), other.arrays().values(), strict=True)
        )


#: `ActorStates`' columns, in order.
ACTOR_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ActorStates) if f.init)

#: The dtype of each `ActorStates` column, by name, in `ACTOR_FIELDS` order.
COLUMN_DTYPES: Mapping[str, np.dtype[Any]] = MappingProxyType(
    {
        name: np.dtype(
            np.bool_ if name == "collided"
            else np.int64 if name in ("id", "kind", "model", "control", "road", "uid")
            else np.float64
        )
        for name in ACTOR_FIELDS
    }
)  # fmt: skip

# A state's arrays of the `ActorStates` columns, in order, in one call.
_columns_of = operator.attrgetter(*ACTOR_FIELDS)

#: Bytes an actor takes in `ActorStates.block`.
ROW_BYTES = sum(dtype.itemsize for dtype in COLUMN_DTYPES.values())


def _places() -> dict[str, tuple[int, np.dtype[Any]]]:
    """Where each column starts in `ActorStates.block` (bytes a row before it), its dtype."""
    places, start = {}, 0
    for name, dtype in COLUMN_DTYPES.items():
        places[name] = (start, dtype)
        start += dtype.itemsize
    return places


_PLACES = _places()
# `_gather` writes the 8-byte columns, then ``collided``, one byte a row.
_WORDS = len(ACTOR_FIELDS) - 1
assert _PLACES["collided"][0] == 8 * _WORDS and ROW_BYTES == 8 * _WORDS + 1


@njit_leaf
def _put(words: npt.NDArray[np.uint64], j: int, bits: npt.NDArray[np.uint64], rows: IntArray) -> None:
    """Rows ``rows`` of an 8-byte column (its bits) into ``words[j * n : (j + 1) * n]``."""
    n = rows.shape[0]
    for k in range(n):
        words[j * n + k] = bits[rows[k]]


@njit
def _by_id(active: BoolArray, ids: IntArray) -> IntArray:
    """The active slots in the order of their ids, as a stable sort gives them.

    Where the ids span at most a few times their count (a run's ids grow slowly: the
    highway's 340 vehicles span 0 to 500 after a minute), each slot goes straight to its
    id's place, in a few microseconds; a sort of the ids took 9 microseconds. Ids are
    unique; should two share one, the sort decides."""
    n, lo, hi = 0, 0, -1
    for k in range(active.shape[0]):
        if active[k]:
            i = int(ids[k])
            lo = i if n == 0 else min(lo, i)
            hi = i if n == 0 else max(hi, i)
            n += 1
    rows = np.flatnonzero(active)
    if n > 0 and hi - lo < 8 * n + 64:
        place = np.full(hi - lo + 1, -1, dtype=np.int64)
        for slot in rows:
            place[ids[slot] - lo] = slot
        placed = rows.copy()
        m = 0
        for slot in place:
            if slot >= 0:
                placed[m] = slot
                m += 1
        if m == n:
            return placed
    return rows[np.argsort(ids[rows], kind="mergesort")]


@njit
def _gather(
    active: BoolArray,
    id: IntArray,
    kind: IntArray,
    model: IntArray,
    control: IntArray,
    x: FloatArray,
    y: FloatArray,
    z: FloatArray,
    heading: FloatArray,
    speed: FloatArray,
    accel: FloatArray,
    steer: FloatArray,
    yaw_rate: FloatArray,
    slip: FloatArray,
    length: FloatArray,
    width: FloatArray,
    height: FloatArray,
    road: IntArray,
    uid: IntArray,
    s: FloatArray,
    t: FloatArray,
    collided: BoolArray,
) -> tuple[npt.NDArray[np.uint8], int]:
    """The `ActorStates.block` of the active slots, by id, and their count: one pass a
    column, and the columns come in `ACTOR_FIELDS` order."""
    rows = _by_id(active, id)
    n = rows.shape[0]
    block = np.empty(n * ROW_BYTES, dtype=np.uint8)
    words = block[: n * _WORDS * 8].view(np.uint64)
    j = 0
    for codes in (id, kind, model, control):
        _put(words, j, codes.view(np.uint64), rows)
        j += 1
    for values in (x, y, z, heading, speed, accel, steer, yaw_rate, slip, length, width, height):
        _put(words, j, values.view(np.uint64), rows)
        j += 1
    for codes in (road, uid):
        _put(words, j, codes.view(np.uint64), rows)
        j += 1
    for values in (s, t):
        _put(words, j, values.view(np.uint64), rows)
        j += 1
    flags = block[n * _WORDS * 8 :]
    for k in range(n):
        flags[k] = collided[rows[k]]
    return block, n


@dataclass(frozen=True, slots=True, eq=False)
class Sample:
    """One sensor's reading in a snapshot, stamped.

    Attributes:
        name: The sensor's name (its key in `roadsim.Simulation.readings`).
        type: Its kind (`READING_TYPES`): ``driver``, ``raytracer``, ``lidar``, ``camera``.
        sensor_id: Its sensor id (-1 for a driver sensor, which has none).
        frame, time: When it read (s).
        pose: Its pose in the world: the sensor's mount for scene sensors, the vehicle's
            box centre on the ground (x forward, y left, z up) for a driver sensor.
        reading: What it read.
    """

    name: str
    type: str
    sensor_id: int
    frame: int
    time: float
    pose: Pose
    reading: Any


@dataclass(frozen=True, slots=True, eq=False)
class Snapshot:
    """The world at one frame, as a capture took it.

    Attributes:
        frame, time: The frame and its simulation time (s, ``frame * dt``).
        ego_id: The ego's actor id (-1: no ego).
        actors: Every active actor's state.
        samples: The sensors that read this frame, by name, in the simulation's order.
    """

    frame: int
    time: float
    ego_id: int
    actors: ActorStates
    samples: Mapping[str, Sample]


@dataclass(frozen=True, slots=True)
class CaptureInfo:
    """What a sink learns when it opens: the run a capture's snapshots come from.

    Attributes:
        scenario_name: The scenario's name.
        scenario_yaml: The scenario, as YAML that loads again (its overrides applied).
        seed: The simulation's seed.
        map: The scenario's map (a built-in name or a path).
        dt: The simulation's step (s).
        every: Ticks between two snapshots.
        model_names, kind_names, control_names: The names of the codes of
            `ActorStates` ``model``, ``kind`` and ``control``.
        net: The road network (None where a sink is fed from a recording).
    """

    scenario_name: str
    scenario_yaml: str
    seed: int
    map: str
    dt: float
    every: int
    model_names: tuple[str, ...]
    kind_names: tuple[str, ...]
    control_names: tuple[str, ...]
    net: Any = None

    @property
    def rate_hz(self) -> float:
        """Snapshots per simulated second."""
        return 1.0 / (self.every * self.dt)


def _camera_type() -> type | None:
    """The camera's reading class, where this version has cameras."""
    try:
        module = importlib.import_module("roadsim.sensors.camera")
    except ImportError:
        return None
    found = getattr(module, "CameraImage", None)
    return found if isinstance(found, type) else None


def _reading_types() -> Mapping[type, str]:
    types: dict[type, str] = {
        DriverView: "driver",
        RayTracerReading: "raytracer",
        PointCloud: "lidar",
    }
    camera = _camera_type()
    if camera is not None:
        types[camera] = "camera"
    return MappingProxyType(types)


#: The type name of each reading class: a new kind of sensor adds its class here.
READING_TYPES: Mapping[type, str] = _reading_types()


def reading_type(reading: object) -> str | None:
    """The type name of a reading (`READING_TYPES`), None for a class not known."""
    return READING_TYPES.get(type(reading))


def vehicle_pose(x: float, y: float, z: float, heading: float) -> Pose:
    """The pose of a vehicle frame (ISO 8855) at its box centre on the ground."""
    c, s = math.cos(heading), math.sin(heading)
    rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return Pose(np.array([x, y, z], dtype=np.float64), rotation)
