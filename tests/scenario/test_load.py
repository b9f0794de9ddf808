"""Loading scenario files: built-ins, map paths, and the message of every kind of mistake."""

from __future__ import annotations

import math
import shutil
import textwrap
from pathlib import Path

import pytest

from roadsim.errors import MapError, ScenarioError
from roadsim.road.load import load_map, resolve_map
from roadsim.scenario import (
    Scenario,
    builtin_scenarios,
    load_scenario,
    parse_scenario,
    resolve_spawn,
)
from roadsim.scenario.load import MAX_YAML_VALUES
from roadsim.scenario.schema import RoadPosition, WorldPosition

EGO = "map: highway\nego: {spawn: {road: 1, lane: -3, s: 5}}\n"
PATH = "  - type: path\n    path: [{x: 20, y: -5.75, speed: 3}, {x: 50, y: -5.75, speed: 3}]\n"

# (YAML text, a fragment of the message: file, line, key path and what was expected).
# Road 1 of the built-in highway is 300 m long with lanes 5..-5 (+-1 median, +-5
# shoulder); road 4 is the on-ramp with lanes -1 (onRamp) and -2 (shoulder).
BAD = [
    (
        "map: highway\ndurration: 5\n",
        "t.yaml:2: durration: unknown key (did you mean 'duration'?)",
    ),
    (
        "map: highway\ntraffic:\n  cout: 3\n",
        "t.yaml:3: traffic.cout: unknown key (did you mean 'count'?)",
    ),
    (
        "map: highway\nego:\n  speed: 3\n  spawn:\n    road: 1\n    lan: -2\n    s: 3\n",
        "t.yaml:6: ego.spawn.lan: unknown key (did you mean 'lane'?)",
    ),
    (
        "map: highway\nobjects:\n  - type: box\n    position: {x: 1, y: 2}\n    colour: red\n",
        "t.yaml:5: objects[0].colour: unknown key (expected type, name, position or size)",
    ),
    ("map: highway\nduration: '10'\n", "t.yaml:2: duration: expected a number, got '10'"),
    ("map: highway\nseed: 1.5\n", "t.yaml:2: seed: expected an integer, got 1.5"),
    ("map: highway\ndt: true\n", "t.yaml:2: dt: expected a number, got true"),
    ("map: highway\ndt: -0.1\n", "t.yaml:2: dt: expected a value >= 0.0001, got -0.1"),
    ("map: highway\ndt: 1e-300\n", "t.yaml:2: dt: expected a value >= 0.0001, got 1e-300"),
    (
        "map: highway\ntraffic:\n  count: 1000000000000\n",
        "t.yaml:3: traffic.count: expected a value <= 1000000, got 1000000000000",
    ),
    (
        "map: highway\ntraffic:\n  density: 1e9\n",
        "t.yaml:3: traffic.density: expected a value <= 217, got 1e+09",
    ),
    (
        "map: highway\nego: {spawn: {road: 1, lane: -3, s: 5}}\nsensors:\n  - {type: drivr}\n",
        "t.yaml:4: sensors[0].type: unknown type 'drivr' (did you mean 'driver'?), expected "
        "driver|raytracer|lidar",
    ),
    (
        "map: highway\nsensors:\n  - {type: sonar, channels: 32}\n",
        "t.yaml:3: sensors[0].type: unknown type 'sonar', expected driver|raytracer|lidar",
    ),
    (
        "map: highway\nsensors:\n  - {name: front}\n",
        "t.yaml:3: sensors[0]: missing required key 'type' (driver|raytracer|lidar|camera)",
    ),
    (
        "map: highway\ncapture: {fps: banana}\n",
        "t.yaml:2: capture.fps: unknown key (expected rate or every)",
    ),
    (
        "map: highway\nrecord: {fps: banana}\n",
        "t.yaml:2: record: unknown key (expected name, map, seed, dt, duration, ego, traffic, "
        "objects, sensors, scene or capture)",
    ),
    (
        "map: highway\nobjects:\n  - {type: cnoe, position: {x: 1, y: 2}}\n",
        "t.yaml:3: objects[0].type: unknown type 'cnoe' (did you mean 'cone'?), expected "
        "box|cone|barrier|path",
    ),
    ("map: highway\ndt: 2\n", "t.yaml:2: dt: expected a value <= 1, got 2"),
    ("map: highway\nduration: 0\n", "t.yaml:2: duration: expected a value > 0, got 0"),
    (
        "map: highway\nego:\n  spawn: {road: 1, lane: -2, s: 30}\n  speed: -3\n",
        "t.yaml:4: ego.speed: expected a value >= 0, got -3",
    ),
    (
        "map: highway\nego:\n  spawn: {road: 1, lane: -2, s: 30}\n  model: van\n",
        "t.yaml:4: ego.model: expected 'car', 'truck' or 'bus', got 'van'",
    ),
    (
        "map: highway\ntraffic:\n  count: 10\n  density: 20\n",
        "t.yaml:2: traffic: give exactly one of 'count' and 'density'",
    ),
    (
        "map: highway\ntraffic:\n  min_gap: 5\n",
        "t.yaml:2: traffic: give exactly one of 'count' and 'density'",
    ),
    (
        "map: highway\nego:\n  spawn: {lat: 1, lon: 2}\n",
        "t.yaml:3: ego.spawn: expected either {road, lane, s, t} or {x, y, heading}",
    ),
    ("map: highway\nego:\n  speed: 3\n", "t.yaml:2: ego: missing required key 'spawn'"),
    (
        "map: highway\nego:\n  spawn: {x: 1, y: 2, heading: 1, heading_deg: 3}\n",
        "t.yaml:3: ego.spawn: give 'heading' (rad) or 'heading_deg', not both",
    ),
    ("map: nowhere\n", "t.yaml:1: map: no map file"),
    (
        "map: highway\nego:\n  spawn: {road: 12, lane: -2, s: 30}\n",
        "t.yaml:3: ego.spawn.road: road 12 does not exist in highway.xodr (roads: 1, 2, 3, 4, 5)",
    ),
    (
        "map: highway\nego:\n  spawn:\n    road: 4\n    lane: -4\n    s: 30\n",
        "t.yaml:5: ego.spawn.lane: lane -4 does not exist on road 4 at s=30; lanes there: -1, -2",
    ),
    (
        "map: highway\nego:\n  spawn: {road: 1, lane: -2, s: 400}\n",
        "t.yaml:3: ego.spawn.s: s=400 is beyond the end of road 1 (length 300 m)",
    ),
    (
        "map: highway\nego:\n  spawn: {road: 1, lane: -2, s: 30, t: 2.5}\n",
        "t.yaml:3: ego.spawn.t: t=2.5 puts the point outside lane -2",
    ),
    (
        "map: highway\nego:\n  spawn: {road: 1, lane: -2, s: 30}\n"
        "objects:\n  - {type: box, position: {road: 1, lane: -2, s: 32}}\n",
        "t.yaml:5: objects[0].position: overlaps the ego vehicle",
    ),
    (
        "map: highway\nobjects:\n  - {type: barrier, position: {road: 1, lane: -3, s: 50}}\n"
        "  - {type: cone, position: {x: 51, y: -7.6}}\n",
        "t.yaml:4: objects[1].position: overlaps objects[0]",
    ),
    (
        "map: highway\nego:\n  spawn: {x: 5000, y: 3, heading: 0}\n",
        "t.yaml:3: ego.spawn: off the road: no lane at x=5000, y=3",
    ),
    (
        "map: highway\nego:\n  spawn: {road: 1, lane: -5, s: 30}\n",
        "t.yaml:3: ego.spawn.lane: lane -5 of road 1 at s=30 is a 'shoulder' lane; "
        "a vehicle needs a drivable lane",
    ),
    (
        "map: highway\nego:\n  spawn: {x: 30, y: -1}\n",
        "t.yaml:3: ego.spawn: x=30, y=-1 (lane -1 of road 1) is a 'median' lane",
    ),
    (
        "map: highway\ntraffic:\n  count: 5\n  mix: {car: 1, truck: 0}\n",
        "t.yaml:4: traffic.mix.truck: expected a value > 0, got 0",
    ),
    (
        "map: highway\ntraffic:\n  count: 5\n  mix: {car: 1, van: 2}\n",
        "t.yaml:4: traffic.mix.van: expected 'car', 'truck' or 'bus', got 'van'",
    ),
    (
        "map: highway\ntraffic:\n  count: 5\n  mix: {}\n",
        "t.yaml:4: traffic.mix: expected at least one of car, truck, bus",
    ),
    (
        "map: highway\ntraffic:\n  count: 5\n  speed: {min: 0.9, mean: 0.8}\n",
        "t.yaml:4: traffic.speed: expected min <= mean <= max, got min=0.9, mean=0.8, max=1.3",
    ),
    (
        "map: highway\ntraffic:\n  count: 5\n  lane_types: [drivng]\n",
        "t.yaml:4: traffic.lane_types: unknown lane type 'drivng' (did you mean 'driving'?)",
    ),
    (
        "map: highway\ntraffic:\n  count: 5\n  spawn_area:\n    roads: [1, 77]\n",
        "t.yaml:5: traffic.spawn_area.roads[1]: road 77 does not exist in highway.xodr",
    ),
    (
        "map: highway\nego:\n  spawn: {road: 1, lane: -2, s: 3}\n  route: [1, 2.5]\n",
        "t.yaml:4: ego.route[1]: expected an id (a string or an integer), got 2.5",
    ),
    ("map: highway\nego:\n  spawn: {road: 1\n  speed: 3\n", "t.yaml:4: invalid YAML"),
    ("map: highway\nmap: town\n", "t.yaml:2: map: duplicate key"),
    ("", "t.yaml: the scenario is empty"),
    ("- map: highway\n", "t.yaml:1: expected a mapping, got a list"),
    (
        "map: highway\nobjects:\n  - type: van\n    position: {x: 1, y: 2}\n",
        "t.yaml:3: objects[0].type: unknown type 'van', expected box|cone|barrier|path",
    ),
    (
        "map: highway\nobjects:\n  - position: {x: 1, y: 2}\n",
        "t.yaml:3: objects[0]: missing required key 'type' (box|cone|barrier|path)",
    ),
    # Scripted objects (`type: path`): y = -5.75 is on road 1 (lanes -2 and -3 meet there).
    (
        "map: highway\nobjects:\n  - type: path\n    path: [{x: 10, y: -5.75, speed: 3}]\n",
        "t.yaml:4: objects[0].path: expected at least 2 items, got 1",
    ),
    (
        "map: highway\nobjects:\n  - type: path\n    path:\n      - {x: 10, y: -5.75, speed: 3}\n"
        "      - {x: 50, y: -5.75, speed: -2}\n",
        "t.yaml:6: objects[0].path[1].speed: expected a value >= 0, got -2",
    ),
    (
        "map: highway\nego: {spawn: {road: 1, lane: -3, s: 5}}\nobjects:\n  - type: path\n"
        "    path: [{x: 20, y: -5.75, speed: 3}, {x: 50, y: -5.75, speed: 3}]\n"
        "    target_point: 2\n    controller_target: {x: 100, y: -5.75}\n",
        "t.yaml:6: objects[0].target_point: target_point 2 is out of range: the path has 2 "
        "points (0 to 1)",
    ),
    (
        "map: highway\nego: {spawn: {road: 1, lane: -3, s: 5}}\nobjects:\n  - type: path\n"
        "    path: [{x: 20, y: -5.75, speed: 3}, {x: 50, y: -5.75, speed: 3}]\n"
        "    target_point: 1\n    controller: lead\n    controller_target: {x: 100, y: -5.75}\n",
        "t.yaml:7: objects[0].controller: no actor named 'lead'; expected 'ego' or an actor id",
    ),
    (
        "map: highway\nobjects:\n  - type: path\n"
        "    path: [{x: 5000, y: 3, speed: 3}, {x: 50, y: -5.75, speed: 3}]\n",
        "t.yaml:4: objects[0].path[0]: a path must start on a road: no lane at x=5000, y=3",
    ),
    (
        "map: highway\nobjects:\n  - type: path\n"
        "    path: [{road: 1, lane: -9, s: 5, speed: 3}, {x: 50, y: -5.75, speed: 3}]\n",
        "t.yaml:4: objects[0].path[0].lane: lane -9 does not exist on road 1 at s=5",
    ),
    (
        "map: highway\nobjects:\n  - type: path\n"
        "    path: [{x: 20, y: -5.75, speed: 3, wait: 2}, {x: 50, y: -5.75, speed: 3}]\n",
        "t.yaml:4: objects[0].path[0]: a wait needs speed 0 at the point, got speed 3",
    ),
    (
        "map: highway\nobjects:\n  - type: path\n"
        "    path: [{x: 20, y: -5.75, speed: 0}, {x: 50, y: -5.75, speed: 0}]\n",
        "t.yaml:4: objects[0].path[1].speed: path[0] and path[1] both have speed 0",
    ),
    (
        "map: highway\nobjects:\n  - type: path\n"
        "    path: [{x: 20, y: -5.75, speed: 1}, {x: 20, y: -5.75, speed: 3}]\n",
        "t.yaml:4: objects[0].path[1]: at the same place as path[0]",
    ),
    (
        "map: highway\nobjects:\n  - type: path\n    creation_radius: 50\n"
        "    path: [{x: 20, y: -5.75, speed: 1}, {x: 50, y: -5.75, speed: 3}]\n",
        "t.yaml:4: objects[0].creation_radius: a creation radius is measured from the ego, "
        "but the scenario has no ego",
    ),
    (
        "map: highway\nobjects:\n  - type: path\n    controller_target: {x: 100, y: -5.75}\n"
        "    path: [{x: 20, y: -5.75, speed: 1}, {x: 50, y: -5.75, speed: 3}]\n",
        "t.yaml:4: objects[0].controller_target: 'controller_target' is for dependent "
        "objects: it needs a 'target_point'",
    ),
    (
        "map: highway\nobjects:\n  - type: path\n    kind: horse\n"
        "    path: [{x: 20, y: -5.75, speed: 1}, {x: 50, y: -5.75, speed: 3}]\n",
        "t.yaml:4: objects[0].kind: expected 'car', 'truck', 'bus', 'pedestrian', 'cyclist' "
        "or 'box', got 'horse'",
    ),
    (
        "map: highway\nobjects:\n  - type: cone\n    position: {x: 1, y: 2}\n    size: [1, 2]\n",
        "t.yaml:5: objects[0].size: expected at least 3 items, got 2",
    ),
    (
        "map: highway\nobjects:\n  - {type: cone, name: a, position: {x: 50, y: -7.6}}\n"
        "  - {type: cone, name: a, position: {x: 60, y: -7.6}}\n",
        "t.yaml:4: objects[1].name: objects[0] has the name 'a' already",
    ),
    (
        "map: highway\nego: {spawn: {road: 1, lane: -3, s: 5}}\nsensors:\n"
        "  - {type: driver, visibility: 0}\n",
        "t.yaml:4: sensors[0].visibility: expected a value > 0, got 0",
    ),
    (
        "map: highway\nego: {spawn: {road: 1, lane: -3, s: 5}}\nsensors:\n"
        "  - {type: driver, vehicle: car}\n",
        "t.yaml:4: sensors[0].vehicle: expected 'ego' or an actor id (an integer >= 0), got 'car'",
    ),
    (
        "map: highway\nsensors:\n  - {type: driver}\n",
        "sensors[0].vehicle: the sensor is attached to the ego (the default), but the "
        "scenario has no ego",
    ),
    (
        "map: highway\nego: {spawn: {road: 1, lane: -3, s: 5}}\nsensors:\n"
        "  - {type: driver}\n  - {type: driver, vehicle: 3}\n",
        "t.yaml:3: sensors: sensors[1] has the name 'driver' of sensors[0]",
    ),
    # Names.
    (
        "map: highway\nobjects:\n  - {type: cone, id: c, position: {x: 50, y: -7.6}}\n",
        "t.yaml:3: objects[0].id: unknown key ('id' is now 'name': a string to look the actor "
        "up by (actor ids are the integers the simulation gives))",
    ),
    (
        "map: highway\nobjects:\n  - {type: cone, name: 7, position: {x: 50, y: -7.6}}\n",
        "t.yaml:3: objects[0].name: expected a string, got 7",
    ),
    (
        "map: highway\nobjects:\n  - {type: cone, name: ego, position: {x: 50, y: -7.6}}\n",
        "t.yaml:3: objects[0].name: 'ego' is the ego's name; give the object another",
    ),
    # Actor ids and names that controllers and sensors give (the ego is actor 0, the
    # objects follow; the highway has no map objects).
    (
        EGO + "objects:\n" + PATH + "    target_point: 1\n    controller: 99\n"
        "    controller_target: {x: 100, y: -5.75}\n",
        "t.yaml:7: objects[0].controller: no actor has the id 99 (ids: ego 0, objects 1)",
    ),
    (
        EGO + "traffic: {count: 5}\nobjects:\n" + PATH + "    target_point: 1\n"
        "    controller: 7\n    controller_target: {x: 100, y: -5.75}\n",
        "t.yaml:8: objects[0].controller: no actor has the id 7 (ids: ego 0, objects 1, "
        "traffic 2-6)",
    ),
    (
        EGO + "objects:\n" + PATH + "    target_point: 1\n    controller: 1\n"
        "    controller_target: {x: 100, y: -5.75}\n",
        "t.yaml:7: objects[0].controller: the id 1 is this object's own: it cannot control itself",
    ),
    (
        EGO
        + "objects:\n  - {type: cone, position: {x: 50, y: -9}}\n"
        + PATH
        + "    target_point: 1\n    controller: 1\n    controller_target: {x: 100, y: -5.75}\n",
        "t.yaml:8: objects[1].controller: the id 1 is objects[0], a cone, which never moves; "
        "a controller must be the ego, a vehicle or a scripted object",
    ),
    (
        EGO
        + "objects:\n  - {type: cone, name: c, position: {x: 50, y: -9}}\n"
        + PATH
        + "    target_point: 1\n    controller: c\n    controller_target: {x: 100, y: -5.75}\n",
        "t.yaml:8: objects[1].controller: 'c' is objects[0], a cone, which never moves",
    ),
    (
        EGO + "sensors:\n  - {type: driver, vehicle: 42}\n",
        "t.yaml:4: sensors[0].vehicle: no actor has the id 42 (ids: ego 0)",
    ),
    (
        EGO + "traffic: {density: 1}\nsensors:\n  - {type: driver, vehicle: 500}\n",
        "t.yaml:5: sensors[0].vehicle: no actor has the id 500 (ids: ego 0, traffic 1-14)",
    ),
    (
        EGO + "objects:\n" + PATH + "sensors:\n  - {type: driver, vehicle: 1}\n",
        "t.yaml:7: sensors[0].vehicle: the id 1 is objects[0]; a driver sensor needs a "
        "vehicle: 'ego' or a traffic vehicle's id",
    ),
    # Dependent objects: what only they take, and no wait before the target point.
    (
        EGO + "objects:\n" + PATH + "    max_speed: 3\n",
        "t.yaml:6: objects[0].max_speed: 'max_speed' is for dependent objects: it needs a "
        "'target_point'",
    ),
    (
        EGO + "objects:\n" + PATH + "    keep_timed_speed: true\n",
        "t.yaml:6: objects[0].keep_timed_speed: 'keep_timed_speed' is for dependent objects",
    ),
    (
        EGO + "objects:\n  - type: path\n    path:\n"
        "      - {x: 20, y: -5.75, speed: 0, wait: 2}\n      - {x: 50, y: -5.75, speed: 3}\n"
        "    target_point: 1\n    controller_target: {x: 100, y: -5.75}\n",
        "t.yaml:6: objects[0].path[0].wait: a wait before the target point (path[1]) would be "
        "ignored: until it gets there a dependent object moves as its controller's timing "
        "says; wait at the target point or after it",
    ),
    (
        EGO + "objects:\n  - type: path\n    path:\n      - {x: 20, y: -5.75, speed: 3}\n"
        "      - {x: 50, y: -5.75, speed: 0, wait: 1}\n      - {x: 60, y: -5.75, speed: 3}\n"
        "    target_point: 1\n    keep_timed_speed: true\n"
        "    controller_target: {x: 100, y: -5.75}\n",
        "t.yaml:10: objects[0].keep_timed_speed: the object waits at its target point "
        "(path[1].wait): it cannot keep its speed through it",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_scenario_message(text: str, expected: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, name="t.yaml")
    assert expected in str(info.value)


def test_every_problem_is_listed_in_file_order() -> None:
    text = "map: highway\ndt: -1\nseed: x\nduration: 0\n"
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, name="t.yaml")
    lines = str(info.value).splitlines()
    assert [line.split(":")[1] for line in lines] == ["2", "3", "4"]


@pytest.mark.parametrize("name", ["highway", "town", "crossing", "cut-in"])
def test_builtin_scenarios_load(name: str) -> None:
    assert name in builtin_scenarios()
    scenario = load_scenario(name)
    assert scenario.map in ("highway", "town")
    assert scenario.ego is not None


def test_builtin_name_in_messages(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no-such: no such file, and no built-in scenario"):
        load_scenario("no-such")
    with pytest.raises(ScenarioError, match="no built-in scenario"):
        load_scenario(tmp_path / "missing.yaml")


def test_relative_map_path_is_relative_to_the_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "maps").mkdir()
    (tmp_path / "scenarios").mkdir()
    shutil.copy(resolve_map("ring"), tmp_path / "maps" / "loop.xodr")
    scenario_file = tmp_path / "scenarios" / "s.yaml"
    scenario_file.write_text(
        "map: ../maps/loop.xodr\nego:\n  spawn: {road: 1, lane: -1, s: 10}\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path / "maps")  # elsewhere: the working directory must not matter
    scenario = load_scenario(scenario_file)
    assert Path(scenario.map) == (tmp_path / "maps" / "loop.xodr").resolve()
    assert load_map(scenario.map).road_ids == ("1", "2")


def test_bad_map_file_raises_map_error(tmp_path: Path) -> None:
    (tmp_path / "bad.xodr").write_text("<OpenDRIVE><road", encoding="utf-8")
    (tmp_path / "s.yaml").write_text("map: bad.xodr\n", encoding="utf-8")
    with pytest.raises(MapError):
        load_scenario(tmp_path / "s.yaml")


def test_check_map_false_skips_the_map() -> None:
    text = "map: nowhere.xodr\nego:\n  spawn: {road: 99, lane: -9, s: 1}\n"
    scenario = parse_scenario(text, Path("/data/s.yaml"), check_map=False)
    assert scenario.map == str(Path("/data/nowhere.xodr"))


def test_yaml_1_2_floats_and_int_road_ids() -> None:
    scenario = parse_scenario(
        "map: highway\ndt: 1e-2\nego:\n  spawn: {road: 1, lane: -2, s: 5e1}\n"
    )
    assert scenario.dt == 0.01
    assert scenario.ego is not None
    assert scenario.ego.spawn == RoadPosition(road="1", lane=-2, s=50.0)


def test_resolve_spawn_on_lanes_of_both_directions() -> None:
    net = load_map("highway")
    east = resolve_spawn(RoadPosition(road="1", lane=-3, s=60.0), net)
    west = resolve_spawn(RoadPosition(road="1", lane=3, s=60.0, t=0.5), net)
    assert east.heading == pytest.approx(0.0)
    assert abs(west.heading) == pytest.approx(math.pi)
    assert east.s == 60.0
    assert net.lanes.lane_id[east.uid] == -3
    assert west.t == pytest.approx(7.625 + 0.5)  # median 2 m + 1.5 lanes of 3.75 m, + t
    # A point at world coordinates, without heading, takes its lane's heading.
    here = resolve_spawn(WorldPosition(x=east.x, y=east.y), net)
    assert here.uid == east.uid
    assert here.heading == pytest.approx(east.heading)
    assert here.s == pytest.approx(60.0)
    turned = resolve_spawn(WorldPosition(x=east.x, y=east.y, heading_deg=90), net)
    assert turned.heading == pytest.approx(math.pi / 2)


def test_town_ego_starts_toward_the_crossroads() -> None:
    scenario = load_scenario("town")
    assert scenario.ego is not None
    pose = resolve_spawn(scenario.ego.spawn, load_map(scenario.map))
    assert pose.heading == pytest.approx(-math.pi / 2)  # south, toward the origin
    assert pose.y > 0


def test_parse_is_the_same_as_validating_the_data() -> None:
    text = textwrap.dedent(
        """\
        map: town
        ego:
          spawn: {x: -1.75, y: 100}
        """
    )
    scenario = parse_scenario(text)
    assert isinstance(scenario, Scenario)
    assert scenario.ego is not None
    assert scenario.ego.spawn == WorldPosition(x=-1.75, y=100.0)


def test_yaml_anchors_and_merge_keys() -> None:
    text = textwrap.dedent(
        """\
        map: highway
        objects:
          - &cone {type: cone, size: [0.5, 0.5, 1], position: {road: 1, lane: -2, s: 100}}
          - {<<: *cone, position: {road: 1, lane: -2, s: 110}}
        """
    )
    scenario = parse_scenario(text)
    assert [o.size for o in scenario.objects] == [(0.5, 0.5, 1.0)] * 2
    assert scenario.objects[1].position == RoadPosition(road="1", lane=-2, s=110.0)


def _alias_bomb(levels: int) -> str:
    """A document of ``9 ** levels`` strings in a few lines ("billion laughs")."""
    lines = [
        "map: highway",
        'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
    ]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def _merge_bomb(levels: int) -> str:
    """Merge keys (<<) that double a mapping at every level."""
    lines = ["map: highway", "m0: &m0 {a: 1, b: 2}"]
    for i in range(1, levels):
        lines.append(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: 1}}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("text", "line"), [(_alias_bomb(9), 8), (_merge_bomb(40), 19)])
def test_alias_bombs_are_refused_with_the_limit(text: str, line: int) -> None:
    # Before the limit these took minutes and all the memory; counting takes milliseconds.
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, name="b.yaml", check_map=False)
    message = str(info.value)
    assert message.startswith(f"b.yaml:{line}: the document expands to more than 1,000,000")
    assert f"{MAX_YAML_VALUES:,}" in message


def test_aliases_below_the_limit_still_load() -> None:
    # 9 ** 5 = 59,049 strings: large, but within the limit, and each alias counts in full.
    text = _alias_bomb(5) + "name: ok\n"
    with pytest.raises(ScenarioError, match="l0: unknown key"):
        parse_scenario(text, name="b.yaml", check_map=False)


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(ScenarioError, match=r"^b\.yaml:2: invalid YAML: an alias refers to"):
        parse_scenario("map: highway\nx: &a [1, *a]\n", name="b.yaml", check_map=False)


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    text = "map: highway\nx: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(ScenarioError, match=r"^b\.yaml(:\d+)?: invalid YAML: .*nest"):
        parse_scenario(text, name="b.yaml", check_map=False)
