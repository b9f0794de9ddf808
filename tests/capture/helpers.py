"""Shared pieces of the capture tests: small simulations and a stand-in camera reading."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim.capture.snapshot import ActorStates, Sample, Snapshot
from roadsim.scenario import load_scenario
from roadsim.scenario.schema import Scenario, validate_data
from roadsim.sensors.mount import Pose


def highway_with_driver(**overrides: Any) -> Scenario:
    """The built-in highway with a driver sensor on the ego."""
    data = load_scenario("highway").model_dump(mode="json", exclude_unset=True)
    data["sensors"] = [{"type": "driver", "name": "driver"}]
    data.update(overrides)
    return validate_data(data, "highway-with-driver")


@dataclass(frozen=True)
class FakeModel:
    width: int = 8
    height: int = 6
    horizontal_fov_deg: float = 90.0
    near: float = 0.1
    far: float = 200.0

    def matrix(self) -> npt.NDArray[np.float64]:
        f = 0.5 * self.width
        return np.array([[f, 0, 0.5 * self.width], [0, f, 0.5 * self.height], [0, 0, 1.0]])


@dataclass(frozen=True, eq=False)
class FakeCameraImage:
    """What the recorder and the image sink read of a camera shot (the attributes of
    ``roadsim.sensors.camera.CameraImage``), for branches without cameras."""

    name: str
    sensor_id: int
    frame: int
    time: float
    pose: Pose
    model: FakeModel
    renderer: str
    color: npt.NDArray[np.float32]
    depth: npt.NDArray[np.float32]
    surface_ids: npt.NDArray[np.uint8]
    actor_ids: npt.NDArray[np.int32]

    def preview(self, exposure: float = 1.0) -> npt.NDArray[np.uint8]:
        return np.clip(self.color * 255 * exposure, 0, 255).astype(np.uint8)


def camera_snapshot(frame: int, actors: ActorStates) -> Snapshot:
    """A snapshot with one (stand-in) camera shot."""
    rng = np.random.default_rng(frame)
    model = FakeModel()
    h, w = model.height, model.width
    depth = rng.uniform(1, 50, (h, w)).astype(np.float32)
    depth[0, 0] = np.inf
    pose = Pose(np.array([1.0, 2.0, 1.5]), np.eye(3))
    image = FakeCameraImage(
        "front", 7, frame, frame * 0.05, pose, model, "raster",
        rng.uniform(0, 2, (h, w, 3)).astype(np.float32), depth,
        rng.integers(0, 20, (h, w)).astype(np.uint8), rng.integers(-1, 30, (h, w)).astype(np.int32),
    )  # fmt: skip
    sample = Sample("front", "camera", 7, frame, frame * 0.05, pose, image)
    return Snapshot(frame, frame * 0.05, 0, actors, {"front": sample})
