"""Shared pieces of the capture tests: small simulations and a camera shot."""

from __future__ import annotations

from typing import Any

import numpy as np

from roadsim.capture.snapshot import ActorStates, Sample, Snapshot
from roadsim.scenario import load_scenario
from roadsim.scenario.schema import Scenario, validate_data
from roadsim.sensors.camera import CameraImage
from roadsim.sensors.camera_model import CameraModel
from roadsim.sensors.mount import Pose


def highway_with_driver(**overrides: Any) -> Scenario:
    """The built-in highway with a driver sensor on the ego."""
    data = load_scenario("highway").model_dump(mode="json", exclude_unset=True)
    data["sensors"] = [{"type": "driver", "name": "driver"}]
    data.update(overrides)
    return validate_data(data, "highway-with-driver")


def camera_snapshot(frame: int, actors: ActorStates) -> Snapshot:
    """A snapshot with one camera shot of random images."""
    rng = np.random.default_rng(frame)
    model = CameraModel(8, 6, 90.0, 0.1, 200.0)
    h, w = model.height, model.width
    depth = rng.uniform(1, 50, (h, w)).astype(np.float32)
    depth[0, 0] = np.inf
    pose = Pose(np.array([1.0, 2.0, 1.5]), np.eye(3))
    image = CameraImage(
        "front", 7, frame, frame * 0.05, pose, model, "raster",
        rng.uniform(0, 2, (h, w, 3)).astype(np.float32), depth,
        rng.integers(0, 20, (h, w)).astype(np.uint8), rng.integers(-1, 30, (h, w)).astype(np.int32),
    )  # fmt: skip
    sample = Sample("front", "camera", 7, frame, frame * 0.05, pose, image)
    return Snapshot(frame, frame * 0.05, 0, actors, {"front": sample})
