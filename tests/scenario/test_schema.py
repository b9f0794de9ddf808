"""The scenario models: defaults, strictness, unions, vehicle models, JSON Schema, round trip."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from roadsim.errors import ScenarioError
from roadsim.scenario import VEHICLE_MODELS, Scenario, parse_scenario, scenario_json_schema
from roadsim.scenario.schema import (
    MAX_DENSITY_PER_KM,
    MAX_TRAFFIC_COUNT,
    MIN_DT,
    VEHICLE_MODEL_NAMES,
    Barrier,
    Box,
    CircleArea,
    Cone,
    DriverSensorSpec,
    RoadPosition,
    RoadsArea,
    Traffic,
    WorldPosition,
)

GOOD = """\
name: round trip
map: highway
seed: 7
dt: 0.02
duration: 12.5
ego:
  spawn: {x: 60, y: -7.625, heading_deg: 0}
  speed: 20
  model: truck
  control: external
  route: [1, 2, "3"]
  desired_speed: 30
traffic:
  density: 12.5
  speed: {mean: 1.1, std: 0.05, min: 0.9, max: 1.2}
  mix: {car: 3, bus: 1}
  spawn_area: {center: [100, 0], radius: 500}
  lane_types: [driving, entry]
  min_gap: 12
  politeness: 0.5
  keep_right: false
objects:
  - {type: cone, name: c1, position: {road: 1, lane: -2, s: 150, t: 0.5}}
  - {type: box, position: {x: 200, y: -11.375, heading: 0.1}, size: [2, 1, 0.5]}
  - {type: barrier, name: "7", position: {road: 2, lane: -4, s: 10}}
sensors:
  - {type: driver, name: front, visibility: 150}
"""


def test_defaults() -> None:
    scenario = Scenario(map="highway")
    assert (scenario.seed, scenario.dt, scenario.duration) == (0, 0.05, 60.0)
    assert scenario.ego is None and scenario.traffic is None
    assert scenario.objects == () and scenario.sensors == ()
    traffic = Traffic(count=3)
    assert dict(traffic.mix) == {"car": 0.85, "truck": 0.1, "bus": 0.05}
    assert (traffic.speed.mean, traffic.speed.std, traffic.speed.min, traffic.speed.max) == (
        1.0,
        0.1,
        0.7,
        1.3,
    )
    assert traffic.lane_types == ("driving",)
    assert (traffic.min_gap, traffic.politeness, traffic.keep_right) == (10.0, 0.3, True)


def test_models_are_frozen() -> None:
    scenario = Scenario(map="highway")
    with pytest.raises(ValidationError):
        scenario.seed = 3


@pytest.mark.parametrize(
    ("data", "error_type"),
    [
        ({"map": "highway", "dt": "0.05"}, "float_type"),
        ({"map": "highway", "seed": 1.0}, "int_type"),
        ({"map": "highway", "seed": True}, "int_type"),
        ({"map": "highway", "duration": math.inf}, "finite_number"),
        ({"map": 5}, "string_type"),
        ({"map": "highway", "traffic": {"count": 3, "keep_right": "yes"}}, "bool_type"),
    ],
)
def test_no_coercion(data: dict[str, Any], error_type: str) -> None:
    with pytest.raises(ValidationError) as info:
        Scenario.model_validate(data)
    assert info.value.errors()[0]["type"] == error_type


def test_road_ids_are_strings_and_integers_are_converted() -> None:
    assert RoadPosition.model_validate({"road": 12, "lane": -1, "s": 0}).road == "12"
    assert RoadsArea.model_validate({"roads": [1, "a"]}).roads == ("1", "a")
    with pytest.raises(ValidationError):
        RoadPosition.model_validate({"road": 1.5, "lane": -1, "s": 0})


def test_unions_pick_their_variant() -> None:
    scenario = Scenario.model_validate(
        {
            "map": "m",
            "ego": {"spawn": {"x": 1, "y": 2}},
            "traffic": {"count": 1, "spawn_area": {"roads": [3]}},
            "objects": [
                {"type": "box", "position": {"road": 1, "lane": 1, "s": 2}},
                {"type": "cone", "position": {"x": 0, "y": 0}},
                {"type": "barrier", "position": {"x": 0, "y": 9}},
            ],
        }
    )
    assert scenario.ego is not None and isinstance(scenario.ego.spawn, WorldPosition)
    assert scenario.traffic is not None and isinstance(scenario.traffic.spawn_area, RoadsArea)
    assert [type(o) for o in scenario.objects] == [Box, Cone, Barrier]
    assert [o.size for o in scenario.objects] == [
        (1.0, 1.0, 1.0),
        (0.4, 0.4, 0.75),
        (3.0, 0.6, 0.8),
    ]
    assert isinstance(scenario.objects[0].position, RoadPosition)
    area = Traffic.model_validate({"density": 1, "spawn_area": {"center": [1, 2], "radius": 3}})
    assert area.spawn_area == CircleArea(center=(1.0, 2.0), radius=3.0)


def test_heading_in_degrees() -> None:
    assert WorldPosition(x=0, y=0, heading_deg=90).heading_rad == pytest.approx(math.pi / 2)
    assert WorldPosition(x=0, y=0, heading=0.5).heading_rad == 0.5
    assert WorldPosition(x=0, y=0).heading_rad is None


def test_mix_is_normalised() -> None:
    traffic = Traffic.model_validate({"count": 1, "mix": {"car": 3, "truck": 1}})
    assert dict(traffic.mix) == {"car": 0.75, "truck": 0.25}


def test_vehicle_models() -> None:
    assert set(VEHICLE_MODELS) == set(VEHICLE_MODEL_NAMES) == {"car", "truck", "bus"}
    car, truck, bus = (VEHICLE_MODELS[m] for m in ("car", "truck", "bus"))
    assert (car.length, car.width, car.height) == (4.6, 1.9, 1.5)
    assert (truck.length, truck.width, truck.height) == (12.0, 2.5, 3.8)
    assert (bus.length, bus.width, bus.height) == (12.0, 2.55, 3.2)
    for model in (car, truck, bus):
        assert 0 < model.wheelbase < model.length
        assert model.max_accel > 0 and model.max_decel > 0
        assert 0 < model.max_steer < math.pi / 2 and model.max_steer_rate > 0
    with pytest.raises(TypeError):
        VEHICLE_MODELS["van"] = car  # type: ignore[index]


def test_with_overrides() -> None:
    scenario = parse_scenario(GOOD, check_map=False)
    other = scenario.with_overrides(seed=3, duration=5.0)
    assert (other.seed, other.duration) == (3, 5.0)
    assert other.model_copy(update={"seed": 7, "duration": 12.5}) == scenario
    assert scenario.with_overrides() is scenario
    with pytest.raises(ScenarioError, match="duration: expected a value > 0, got -1"):
        scenario.with_overrides(duration=-1.0)


def test_json_schema() -> None:
    schema = json.loads(json.dumps(scenario_json_schema()))
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema["title"] == "roadsim scenario"
    assert schema["required"] == ["map"]
    assert schema["additionalProperties"] is False
    expected = {"name", "map", "seed", "dt", "duration", "ego", "traffic", "objects", "sensors"}
    assert {*expected, "scene", "capture"} == set(schema["properties"])
    # Every sensor type's options, though the schema validates them lazily.
    kinds = [schema["$defs"][ref["$ref"].split("/")[-1]] for ref in
             schema["properties"]["sensors"]["items"]["anyOf"]]
    assert [k["properties"]["type"]["const"] for k in kinds] == [
        "driver",
        "raytracer",
        "lidar",
        "camera",
    ]
    assert "object_classes" in schema["$defs"]["SceneSpec"]["properties"]
    assert set(schema["$defs"]["CaptureSpec"]["properties"]) == {"rate", "every"}


def test_round_trip() -> None:
    scenario = parse_scenario(GOOD)
    text = yaml.safe_dump(scenario.model_dump(mode="json"), sort_keys=False)
    again = parse_scenario(text)
    assert again == scenario
    assert again.sensors[0] == DriverSensorSpec(type="driver", name="front", visibility=150.0)
    assert again.objects[2].name == "7"


@pytest.mark.parametrize(
    ("data", "key", "limit"),
    [
        ({"dt": 1e-300}, "dt", MIN_DT),
        ({"traffic": {"count": 10**12}}, "count", MAX_TRAFFIC_COUNT),
        ({"traffic": {"density": 1e9}}, "density", MAX_DENSITY_PER_KM),
    ],
)
def test_sizes_are_bounded(data: dict[str, Any], key: str, limit: float) -> None:
    with pytest.raises(ValidationError) as info:
        Scenario.model_validate({"map": "highway", **data})
    error = info.value.errors()[0]
    assert error["loc"][-1] == key
    assert limit in error.get("ctx", {}).values()


def test_the_limits_leave_every_real_scenario_alone() -> None:
    # A lane can hold no more cars than bumper to bumper; a step of 0.1 ms is 10 kHz.
    assert MAX_DENSITY_PER_KM == 217  # 1000 m / 4.6 m
    Scenario.model_validate(
        {"map": "highway", "dt": MIN_DT, "traffic": {"density": MAX_DENSITY_PER_KM}}
    )
    Traffic(count=MAX_TRAFFIC_COUNT)
