"""Scenario options of ray tracers, lidars and the scene: what they accept, and located
errors (file, line, key) for what they do not."""

from __future__ import annotations

import math

import pytest
import yaml

from roadsim.errors import ScenarioError
from roadsim.scenario.load import parse_scenario
from roadsim.scenario.sensors import CameraSpec, LidarSpec, RayTracerSpec, SceneSpec

HEAD = "map: highway\nego: {spawn: {road: 1, lane: -3, s: 5}}\nsensors:\n"


def load(sensors: str, tail: str = ""):  # type: ignore[no-untyped-def]
    return parse_scenario(HEAD + sensors + tail, "t.yaml", check_map=False)


def test_ray_tracer_options() -> None:
    scenario = load(
        "  - type: raytracer\n"
        "    directions: [[3, 0, 4], [0, 2, 0]]\n"
        "    max_lengths: [10, 20.5]\n"
        "    offset: {translation: [1, 0, 0.5], rotation_deg: [0, 0, 90]}\n"
        "    location: front_bumper\n"
    )
    spec = scenario.sensors[0]
    assert isinstance(spec, RayTracerSpec)
    assert spec.directions == ((0.6, 0.0, 0.8), (0.0, 1.0, 0.0))  # normalised
    assert spec.origins == ((0.0, 0.0, 0.0),) and spec.bounces == 2 and spec.sample_every == 1
    assert spec.id is None and spec.name == "raytracer" and spec.vehicle == "ego"
    # A round trip through YAML keeps it.
    again = parse_scenario(yaml.safe_dump(scenario.model_dump(mode="json")), check_map=False)
    assert again == scenario


def test_lidar_presets_and_elevations() -> None:
    spec = load("  - {type: lidar, channels: 64, horizontal_resolution_deg: 0.17578125}\n").sensors[0]
    assert isinstance(spec, LidarSpec)
    elevations = spec.elevations()
    assert len(elevations) == 64 and elevations[0] == -24.8 and math.isclose(elevations[-1], 2.0)
    assert spec.azimuth_count == 2048 and spec.location == "roof_center" and spec.bounces == 0
    custom = load("  - {type: lidar, elevations_deg: [5, -5, 0]}\n").sensors[0]
    assert custom.elevations() == (-5.0, 0.0, 5.0)
    default = load("  - {type: lidar}\n").sensors[0]
    assert len(default.elevations()) == 32


def test_camera_options() -> None:
    spec = load("  - {type: camera, resolution: [320, 200], horizontal_fov_deg: 60}\n").sensors[0]
    assert isinstance(spec, CameraSpec)
    assert (spec.width, spec.height, spec.horizontal_fov_deg) == (320, 200, 60.0)
    assert spec.location == "roof_center" and spec.renderer == "auto" and spec.shadows
    assert spec.name == "camera" and spec.active and spec.range == 1000.0


def test_scene_options() -> None:
    scenario = load("  - {type: lidar}\n", "scene: {object_classes: {wind: pole}, ground: false}\n")
    assert scenario.scene == SceneSpec(object_classes={"wind": "pole"}, ground=False)


@pytest.mark.parametrize(
    ("sensors", "message"),
    [
        (
            "  - type: raytracer\n    directions:\n      - [1, 0, 0]\n      - [0, 0, 0]\n",
            "t.yaml:7: sensors[0].directions[1]: a ray direction [0, 0, 0] has no direction",
        ),
        (
            "  - {type: raytracer, directions: [[1, 0, 0]], max_lengths: -1}\n",
            "t.yaml:4: sensors[0].max_lengths: expected a ray length > 0 (m), got -1",
        ),
        (
            "  - type: raytracer\n    directions: [[1, 0, 0], [0, 1, 0]]\n"
            "    max_lengths: [5, 0]\n",
            "t.yaml:6: sensors[0].max_lengths[1]: expected a ray length > 0 (m), got 0",
        ),
        (
            "  - {type: raytracer, directions: [[1, 0, 0], [0, 1, 0]], max_lengths: [1, 2, 3]}\n",
            "t.yaml:4: sensors[0].max_lengths: expected one length or one per direction (2), got 3",
        ),
        (
            "  - {type: raytracer, directions: [[1, 0]]}\n",
            "t.yaml:4: sensors[0].directions[0]: expected at least 3 items, got 2",
        ),
        (
            "  - {type: raytracer, directions: [[1, 0, 0]], bounces: -1}\n",
            "t.yaml:4: sensors[0].bounces: expected a value >= 0, got -1",
        ),
        (
            "  - type: lidar\n    location: roof\n",
            "t.yaml:5: sensors[0].location: unknown mounting location 'roof' (did you mean "
            "'roof_center'?), expected origin|front_bumper|rear_bumper|roof_center|left_mirror|"
            "right_mirror",
        ),
        (
            "  - {type: lidar, vehicle: scene, location: front_bumper}\n",
            "t.yaml:4: sensors[0].location: a sensor mounted on the scene sits at its origin",
        ),
        (
            "  - {type: lidar, vehicle: truck}\n",
            "t.yaml:4: sensors[0].vehicle: expected 'ego', 'scene' or an actor id",
        ),
        (
            "  - {type: lidar, channels: 20}\n",
            "t.yaml:4: sensors[0].channels: expected a preset channel count 16|32|64|128",
        ),
        (
            "  - {type: lidar, channels: 16, elevations_deg: [0, 1]}\n",
            "t.yaml:4: sensors[0].channels: give either elevations_deg or channels",
        ),
        (
            "  - {type: lidar, vertical_fov_deg: [10, -10]}\n",
            "t.yaml:4: sensors[0].vertical_fov_deg: expected -90 <= lower < upper <= 90",
        ),
        (
            "  - {type: lidar, dropout: 1}\n",
            "t.yaml:4: sensors[0].dropout: expected a value < 1, got 1",
        ),
        (
            "  - {type: lidar, horizontal_resolution_deg: 0.0001}\n",
            "t.yaml:4: sensors[0].horizontal_resolution_deg: the lidar would cast",
        ),
        (
            "  - {type: lidar, sample_every: 0}\n",
            "t.yaml:4: sensors[0].sample_every: expected a value >= 1, got 0",
        ),
        (
            "  - {type: lidar, rotation_hz: 10}\n",
            "t.yaml:4: sensors[0].rotation_hz: unknown key (did you mean 'rotation_rate_hz'?)",
        ),
        (
            "  - {type: lidar, id: 2}\n  - {type: raytracer, id: 2, directions: [[1, 0, 0]]}\n",
            "t.yaml:5: sensors[1].id: sensors[0] has the id 2 already",
        ),
        (
            "  - {type: lidar, id: 0}\n",
            "t.yaml:4: sensors[0].id: expected a value > 0, got 0",
        ),
        (
            "  - {type: lidar, offset: {rotation_deg: [0, 0]}}\n",
            "t.yaml:4: sensors[0].offset.rotation_deg: expected at least 3 items, got 2",
        ),
        (
            "  - {type: sonar}\n",
            "t.yaml:4: sensors[0].type: unknown type 'sonar', expected "
            "driver|raytracer|lidar|camera",
        ),
        (
            "  - {type: camera, resolution: [0, 0]}\n",
            "t.yaml:4: sensors[0].resolution: expected [width, height] from 1 to 8192 pixels "
            "each, got 0 x 0",
        ),
        (
            "  - type: camera\n    resolution: [640]\n",
            "t.yaml:5: sensors[0].resolution: expected at least 2 items, got 1",
        ),
        (
            "  - {type: camera, horizontal_fov_deg: 180}\n",
            "t.yaml:4: sensors[0].horizontal_fov_deg: expected a horizontal field of view in "
            "(0, 170] degrees",
        ),
        (
            "  - {type: camera, horizontal_fov_deg: 0}\n",
            "t.yaml:4: sensors[0].horizontal_fov_deg: expected a horizontal field of view",
        ),
        (
            "  - type: camera\n    location: windscreen\n",
            "t.yaml:5: sensors[0].location: unknown mounting location 'windscreen'",
        ),
        (
            "  - {type: camera, near: 5, range: 2}\n",
            "t.yaml:4: sensors[0].range: expected a range beyond near (5 m), got 2",
        ),
        (
            "  - {type: camera, renderer: vulkan}\n",
            "t.yaml:4: sensors[0].renderer: unknown camera renderer 'vulkan', expected "
            "auto|raster|raycast",
        ),
    ],
)
def test_bad_options_are_located(sensors: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load(sensors)
    assert message in str(info.value)


def test_bad_scene_and_ego() -> None:
    with pytest.raises(ScenarioError, match=r"t.yaml:6: scene.object_classes.wind: unknown "
                       r"surface class 'pol' \(did you mean 'pole'\?\)"):  # fmt: skip
        load("  - {type: lidar}\n", "scene:\n  object_classes: {wind: pol}\n")
    with pytest.raises(ScenarioError, match=r"sensors\[0\].vehicle: the sensor is attached to "
                       "the ego"):  # fmt: skip
        parse_scenario("map: highway\nsensors:\n  - {type: lidar}\n", check_map=False)
