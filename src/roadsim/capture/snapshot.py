"""What a capture takes: `Snapshot`s of the world, each `Sample` stamped, and `CaptureInfo`.

A snapshot holds the state of every active actor (`ActorStates`, sorted by actor id so
that two snapshots line up whatever the simulation's slot order) and one `Sample` per
sensor that read this frame: its name, type, frame, time, pose in the world and reading.

Readings are told apart by their class through `READING_TYPES`, the one place a new kind
of sensor registers: ``driver`` (`roadsim.sensors.view.DriverView`), ``raytracer``
(`roadsim.sensors.raytracer.RayTracerReading`), ``lidar``
(`roadsim.sensors.lidar.PointCloud`) and ``camera`` (``roadsim.sensors.camera.CameraImage``,
where that module exists). Sinks choose what to do with a sample by its ``type``.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

import numpy as np

from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.sensors.lidar import PointCloud
from roadsim.sensors.mount import Pose
from roadsim.sensors.raytracer import RayTracerReading
from roadsim.sensors.view import DriverView
from roadsim.world.state import WorldState

__all__ = [
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

    @classmethod
    def of(cls, state: WorldState) -> ActorStates:
        """Copies of the active rows of ``state``, by id."""
        active = np.flatnonzero(state.active)
        rows = active[np.argsort(state.id[active], kind="stable")]
        return cls(**{name: getattr(state, name)[rows] for name in ACTOR_FIELDS})

    def __len__(self) -> int:
        return int(self.id.shape[0])

    def arrays(self) -> dict[str, np.ndarray[Any, Any]]:
        return {name: getattr(self, name) for name in ACTOR_FIELDS}

    def equals(self, other: ActorStates) -> bool:
        """Bit for bit (NaN equal to NaN)."""
        return all(
            np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
            for a, b in zip(self.arrays().values(), other.arrays().values(), strict=True)
        )


#: `ActorStates`' fields, in order.
ACTOR_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ActorStates))


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
