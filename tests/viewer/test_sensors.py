"""What the page is sent of the sensors: lidar points, ray traces, camera streams."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import roadsim
from roadsim.capture import ActorStates, Capture
from roadsim.viewer.sensors import MAX_LIDAR_POINTS, sensor_message
from tests.capture.helpers import camera_snapshot


@pytest.fixture(scope="module")
def town() -> roadsim.Simulation:
    sim = roadsim.Simulation("town")
    sim.sensor("lidar").active = True
    sim.step()
    return sim


def test_lidar_points_are_in_the_world_frame_minus_the_origin(town: roadsim.Simulation) -> None:
    snap = Capture(town).take()
    origin = np.array([10.0, -5.0, 0.0])
    (lidar,) = sensor_message(snap, origin)["lidar"]
    cloud = town.readings["lidar"]
    points = np.frombuffer(lidar["points"], dtype="<f4").reshape(-1, 3)
    assert lidar["total"] == len(cloud.xyz) and 0 < len(points) <= MAX_LIDAR_POINTS
    step = -(-len(cloud.xyz) // MAX_LIDAR_POINTS)
    expected = cloud.pose.to_world(cloud.xyz[::step].astype(np.float64)) - origin
    np.testing.assert_allclose(points, expected, atol=1e-3)
    # The roof lidar sees the road around the ego: most points near the ground.
    ego = town.actor("ego")
    assert np.median(np.hypot(points[:, 0] + origin[0] - ego.x, points[:, 1] + origin[1] - ego.y)) < 60


def test_camera_streams_are_jpeg_pictures(town: roadsim.Simulation) -> None:
    snap = camera_snapshot(3, ActorStates.of(town.state))
    (camera,) = sensor_message(snap, np.zeros(3))["camera"]
    assert (camera["width"], camera["height"]) == (8, 6)
    for stream in ("color", "depth", "segmentation"):
        picture = Image.open(io.BytesIO(camera[stream]))
        assert picture.format == "JPEG" and picture.size == (8, 6)


def test_a_snapshot_without_sensors_sends_none(town: roadsim.Simulation) -> None:
    town.sensor("lidar").active = False
    town.step()
    assert sensor_message(Capture(town).take(), np.zeros(3)) == {}

