"""Where a sensor sits: its mounting location on a vehicle, its offset, its pose in the world.

Frames (ISO 8855): the vehicle frame has its origin at the centre of the actor's box on
the ground (`WorldState`'s x, y, z), x forward along its heading, y left, z up (the
simulation gives vehicles no roll or pitch). The mounting locations lie on the box:

| location | x | y | z |
|---|---|---|---|
| ``origin`` | 0 | 0 | 0 |
| ``front_bumper`` | length / 2 | 0 | 0.3 height |
| ``rear_bumper`` | -length / 2 | 0 | 0.3 height |
| ``roof_center`` | 0 | 0 | height |
| ``left_mirror`` | length / 4 | width / 2 | 0.65 height |
| ``right_mirror`` | length / 4 | -width / 2 | 0.65 height |

The sensor frame is the mounting location moved by the offset's translation and turned
by its rotation: ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (yaw first, about the vehicle's z).
A sensor mounted on the ``scene`` has the world frame at its location.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from roadsim._types import FloatArray
from roadsim.world.state import WorldState

__all__ = ["LOCATION_FACTORS", "Mount", "Pose", "rotation_rpy"]

#: Each location as fractions of the box's (length, width, height).
LOCATION_FACTORS: dict[str, tuple[float, float, float]] = {
    "origin": (0.0, 0.0, 0.0),
    "front_bumper": (0.5, 0.0, 0.3),
    "rear_bumper": (-0.5, 0.0, 0.3),
    "roof_center": (0.0, 0.0, 1.0),
    "left_mirror": (0.25, 0.5, 0.65),
    "right_mirror": (0.25, -0.5, 0.65),
}


def rotation_rpy(roll: float, pitch: float, yaw: float) -> FloatArray:
    """(3, 3) rotation ``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (radians)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    out: FloatArray = rz @ ry @ rx
    return out


@dataclass(frozen=True, slots=True, eq=False)
class Pose:
    """A sensor's pose in the world: ``world = position + rotation @ sensor``.

    Attributes:
        position: (3,) world position (m).
        rotation: (3, 3) rotation from the sensor frame to the world frame.
    """

    position: FloatArray
    rotation: FloatArray

    def matrix(self) -> FloatArray:
        """(4, 4) homogeneous transform from the sensor frame to the world frame."""
        out = np.eye(4)
        out[:3, :3] = self.rotation
        out[:3, 3] = self.position
        return out

    def to_world(self, points: FloatArray) -> FloatArray:
        """(..., 3) sensor-frame points to the world frame."""
        out: FloatArray = points @ self.rotation.T + self.position
        return out

    def to_sensor(self, points: FloatArray) -> FloatArray:
        """(..., 3) world points to the sensor frame."""
        out: FloatArray = (points - self.position) @ self.rotation
        return out


@dataclass(frozen=True, slots=True)
class Mount:
    """What a sensor is mounted on and where.

    Attributes:
        actor: The actor id it rides on, or -1 for the scene origin.
        location: A name in `LOCATION_FACTORS`.
        translation: (x, y, z) offset from the location, vehicle frame (m).
        rotation_deg: (roll, pitch, yaw) of the sensor in the vehicle frame (degrees).
    """

    actor: int
    location: str = "origin"
    translation: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rotation_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def offset_rotation(self) -> FloatArray:
        """(3, 3) rotation of the sensor frame in the vehicle frame."""
        return rotation_rpy(*(math.radians(a) for a in self.rotation_deg))

    def pose(self, state: WorldState) -> Pose | None:
        """The sensor's pose in ``state``; None while its actor is not active."""
        offset_rot = self.offset_rotation()
        t = np.array(self.translation, dtype=np.float64)
        if self.actor < 0:
            return Pose(t, offset_rot)
        slots = np.flatnonzero(state.active & (state.id == self.actor))
        if not slots.size:
            return None
        k = int(slots[0])
        fx, fy, fz = LOCATION_FACTORS[self.location]
        local = np.array(
            [fx * state.length[k], fy * state.width[k], fz * state.height[k]]
        ) + t
        yaw = float(state.heading[k])
        body = rotation_rpy(0.0, 0.0, yaw)
        position = np.array([state.x[k], state.y[k], state.z[k]]) + body @ local
        return Pose(position, body @ offset_rot)
