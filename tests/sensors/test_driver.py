"""The driver sensor (openPASS ``Sensor_Driver``) on small hand-built maps.

Every expected value is worked out by hand from the map (`tests.sensors.roads`): the
simulation is built with an ego and a few traffic vehicles or objects, then the actors
are put exactly where a case wants them by writing the state arrays (and their lane
fields from `RoadNetwork.localize`). No case steps the simulation unless it says so: the
views are read from the current state.

Conventions used below: F is the centre of the front edge of the viewing vehicle (a car
is 4.6 m long, 1.9 m wide, so F lies 2.3 m ahead of its centre); on straight roads x is s
and y is t. Gaps along the road are centre distance - own length / 2 - the object's
longitudinal half-extent 0.5 (L |cos d| + W |sin d|).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from roadsim import Simulation
from roadsim.errors import QueryError
from roadsim.scenario.schema import VEHICLE_MODELS, validate_data
from roadsim.sensors.view import (
    MISSING,
    DriverView,
    LaneGeometry,
    LaneTrafficRules,
    ObjectInformation,
)
from roadsim.sim.build import MODEL_NAMES
from roadsim.world.state import VEHICLE
from roadsim.world.traffic_lights import GREEN, RED, YELLOW
from tests.sensors import roads

EXACT = 1e-6  # straight roads: exact geometry
CURVED = 1e-2  # curves: the lane tables interpolate between samples <= 2 m apart
CAR = VEHICLE_MODELS["car"]
TRUCK = VEHICLE_MODELS["truck"]
HALF = CAR.length / 2  # 2.3 m: from a car's centre to its front edge
LIGHT_NAMES = {RED: "red", YELLOW: "yellow", GREEN: "green"}

# Lane centres (t) of the straight, lane-drop and junction roads.
Y1, Y2, Y3, Y_SHOULDER = -1.75, -5.25, -8.75, -11.5


# -- building scenes ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def maps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("maps")
    return {
        "straight": roads.write(roads.straight(), folder),
        "curve": roads.write(roads.curve(), folder),
        "curve_lht": roads.write(roads.curve(), folder, lht=True),
        "lane_drop": roads.write(roads.lane_drop(), folder),
        "junction": roads.write(roads.junction(), folder),
        "two_way": roads.write(roads.two_way(), folder),
        "opening": roads.write(roads.opening(), folder),
        "two_way_lht": roads.write(roads.two_way(lht=True), folder, lht=True),
    }


def simulation(
    map_path: str,
    *,
    ego: tuple[str, int, float] | None = None,
    model: str = "car",
    vehicles: int = 0,
    objects: tuple[dict[str, Any], ...] = (),
    sensors: tuple[dict[str, Any], ...] = (),
) -> Simulation:
    """A simulation with an ego at the centre of (road, lane, s) and exactly ``vehicles``
    traffic cars (placed at random: `place` them)."""
    data: dict[str, Any] = {"map": map_path}
    if ego is not None:
        road, lane, s = ego
        data["ego"] = {
            "spawn": {"road": road, "lane": lane, "s": s},
            "model": model,
            "control": "external",
        }
    if vehicles:
        # A few more than asked for (some may not find room), the rest switched off below.
        data["traffic"] = {
            "count": vehicles + 3,
            "respawn": False,
            "min_gap": 0.0,
            "mix": {"car": 1.0},
        }
    if objects:
        data["objects"] = list(objects)
    if sensors:
        data["sensors"] = list(sensors)
    sim = Simulation(validate_data(data, "test"))
    extra = traffic_slots(sim)[vehicles:]
    st = sim.state
    st.active[extra] = False
    st.uid[extra] = -1
    st.road[extra] = -1
    st.s[extra] = np.nan
    st.t[extra] = np.nan
    assert len(traffic_slots(sim)) == vehicles
    return sim


def traffic_slots(sim: Simulation) -> list[int]:
    st = sim.state
    slots = np.flatnonzero(st.active & (st.kind == VEHICLE))
    return [int(k) for k in slots if k != sim.ego_slot]


def place(
    sim: Simulation,
    slot: int,
    x: float,
    y: float,
    heading: float = 0.0,
    *,
    speed: float = 0.0,
    accel: float = 0.0,
    steer: float = 0.0,
    model: str | None = None,
) -> int:
    """Puts actor ``slot`` at (x, y) with this heading and motion; returns its id."""
    st = sim.state
    st.x[slot], st.y[slot], st.heading[slot] = x, y, heading
    st.speed[slot], st.accel[slot], st.steer[slot] = speed, accel, steer
    if model is not None:
        size = VEHICLE_MODELS[model]
        st.length[slot], st.width[slot], st.height[slot] = size.length, size.width, size.height
        st.model[slot] = MODEL_NAMES.index(model)
    pos = sim.net.localize(np.array([x]), np.array([y]), heading=np.array([heading]))
    uid = int(pos.uid[0])
    assert uid >= 0, f"({x}, {y}) is on no lane"
    st.uid[slot] = uid
    st.s[slot] = float(pos.s[0])
    st.t[slot] = float(pos.t[0])
    st.road[slot] = int(sim._info.road[uid])
    return int(st.id[slot])


def ego_view(sim: Simulation, visibility: float = 300.0) -> DriverView:
    assert sim.ego_slot is not None
    return sim.driver_view(int(sim.state.id[sim.ego_slot]), visibility=visibility)


def centre_behind(fx: float, heading: float = 0.0) -> float:
    """x of a car's centre whose front edge centre is at x = fx (heading along +x)."""
    return fx - HALF * math.cos(heading)


def gap(centre_distance: float, obj_length: float, obj_width: float, d: float = 0.0) -> float:
    """Bumper-to-bumper gap of an object ahead of a car (negative: use -gap behind)."""
    half = 0.5 * (obj_length * abs(math.cos(d)) + obj_width * abs(math.sin(d)))
    return centre_distance - HALF - half


# -- checking ------------------------------------------------------------------------------------


def assert_lane(
    lane: LaneGeometry, curvature: float, width: float, end: float, tol: float = EXACT
) -> None:
    assert lane.exists
    assert lane.curvature == pytest.approx(curvature, abs=tol)
    assert lane.width == pytest.approx(width, abs=tol)
    if math.isinf(end):
        assert lane.distance_to_end_of_lane == math.inf
    else:
        assert lane.distance_to_end_of_lane == pytest.approx(end, abs=tol)


def assert_marks(
    got: tuple[Any, ...], expected: list[tuple[float, str, str | None, float | None]]
) -> None:
    """Lane markings as (relative start, type, colour, width); colour and width None for
    a border without a road mark (type "none"), whose colour and width are not given."""
    assert [m.type for m in got] == [e[1] for e in expected], got
    for m, (start, _, color, width) in zip(got, expected, strict=True):
        assert m.relative_start_distance == pytest.approx(start, abs=1e-6)
        if color is not None:
            assert m.color == color
        if width is not None:
            assert m.width == pytest.approx(width, abs=1e-9)


Sign = tuple[str, float, str, str, str, float, str]


def assert_signs(got: tuple[Any, ...], expected: list[Sign], tol: float = EXACT) -> None:
    """Signs (or lights) as (id, distance, type, subtype, country, value, unit)."""
    assert [s.id for s in got] == [e[0] for e in expected], got
    for s, (_, dist, typ, subtype, country, value, unit) in zip(got, expected, strict=True):
        assert s.relative_distance == pytest.approx(dist, abs=tol)
        assert (s.type, s.subtype, s.country, s.unit) == (typ, subtype, country, unit)
        assert s.value == pytest.approx(value)


def assert_object(
    obj: ObjectInformation,
    *,
    id: int,
    static: bool = False,
    speed: float = 0.0,
    accel: float = 0.0,
    heading: float,
    size: tuple[float, float, float],
    longitudinal: float,
    lateral: float,
    tol: float = EXACT,
) -> None:
    assert obj.exist
    assert obj.id == id
    assert obj.is_static == static
    if static:
        assert (obj.absolute_velocity, obj.acceleration) == (MISSING, MISSING)
    else:
        assert obj.absolute_velocity == pytest.approx(speed, abs=tol)
        assert obj.acceleration == pytest.approx(accel, abs=tol)
    assert obj.heading == pytest.approx(heading, abs=tol)
    assert (obj.length, obj.width, obj.height) == pytest.approx(size, abs=1e-9)
    assert obj.relative_longitudinal_distance == pytest.approx(longitudinal, abs=tol)
    assert obj.relative_lateral_distance == pytest.approx(lateral, abs=tol)


def assert_no_lane(lane: LaneGeometry) -> None:
    assert lane == LaneGeometry()
    assert (lane.exists, lane.curvature, lane.width, lane.distance_to_end_of_lane) == (
        False,
        -999.0,
        -999.0,
        -999.0,
    )


def assert_no_object(obj: ObjectInformation) -> None:
    assert obj == ObjectInformation()
    assert (obj.id, obj.exist, obj.is_static) == (-1, False, False)
    values = (
        obj.absolute_velocity,
        obj.acceleration,
        obj.heading,
        obj.length,
        obj.width,
        obj.height,
        obj.relative_longitudinal_distance,
        obj.relative_lateral_distance,
    )
    assert values == (MISSING,) * 8


CAR_SIZE = (CAR.length, CAR.width, CAR.height)
TRUCK_SIZE = (TRUCK.length, TRUCK.width, TRUCK.height)


def light_state(sim: Simulation, signal_id: str) -> str:
    ids = [sig.id for sig in sim._lights.signals]
    return LIGHT_NAMES[int(sim._lights.state(sim.time)[ids.index(signal_id)])]


# -- own vehicle ---------------------------------------------------------------------------------


def test_own_vehicle_state_on_a_straight_lane(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -2, 20.0))
    h = 0.04
    # F at s = 10, 0.3 m left of lane -2's centre.
    place(
        sim,
        0,
        centre_behind(10.0, h),
        Y2 + 0.3 - HALF * math.sin(h),
        h,
        speed=12.5,
        accel=-1.5,
        steer=0.05,
    )
    own = ego_view(sim).own_vehicle_states
    assert own.absolute_velocity == pytest.approx(12.5)
    assert own.acceleration == pytest.approx(-1.5)
    assert own.lateral_position == pytest.approx(0.3, abs=EXACT)
    assert own.heading == pytest.approx(h, abs=EXACT)
    assert own.steering_wheel_angle == pytest.approx(0.05 * CAR.steering_ratio)
    corner = 0.5 * CAR.width * math.cos(h)
    assert own.distance_to_lane_boundary_left == pytest.approx(1.75 - (0.3 + corner), abs=EXACT)
    assert own.distance_to_lane_boundary_right == pytest.approx(1.75 + (0.3 - corner), abs=EXACT)
    assert own.collision is False


def test_a_truck_reads_its_steering_ratio_width_and_collision(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -3, 50.0), model="truck")
    h = -0.02
    place(sim, 0, 50.0, Y3 - 0.4, h, speed=8.0, accel=0.7, steer=-0.1)
    sim.state.collided[0] = True
    own = ego_view(sim).own_vehicle_states
    fy = Y3 - 0.4 + 0.5 * TRUCK.length * math.sin(h)
    lateral = fy - Y3
    assert own.lateral_position == pytest.approx(lateral, abs=EXACT)
    assert own.heading == pytest.approx(h, abs=EXACT)
    assert own.steering_wheel_angle == pytest.approx(-0.1 * TRUCK.steering_ratio)
    corner = 0.5 * TRUCK.width * math.cos(h)
    assert own.distance_to_lane_boundary_left == pytest.approx(1.75 - (lateral + corner), abs=EXACT)
    assert own.distance_to_lane_boundary_right == pytest.approx(
        1.75 + (lateral - corner), abs=EXACT
    )
    assert own.collision is True
    assert own.absolute_velocity == pytest.approx(8.0)
    assert own.acceleration == pytest.approx(0.7)


def test_the_main_lane_is_the_lane_under_the_front_edge(maps: dict[str, str]) -> None:
    # The centre is in lane -2 (y = -4.0), the front edge over the line in lane -1.
    sim = simulation(maps["straight"], ego=("1", -2, 60.0), vehicles=1)
    h = 0.3
    place(sim, 0, 60.0, -4.0, h)
    assert int(sim.net.lanes.lane_id[sim.state.uid[0]]) == -2
    car = place(sim, traffic_slots(sim)[0], 80.0, Y1)
    fx, fy = 60.0 + HALF * math.cos(h), -4.0 + HALF * math.sin(h)
    assert fy > -3.5
    views = sim.driver_views([0])
    uid = sim.net.lane_uid
    assert views.lane_uid[0].tolist() == [-1, int(uid("1", -1, fx)), int(uid("1", -2, fx))]
    view = views[0]
    own = view.own_vehicle_states
    lateral = fy - Y1
    assert own.lateral_position == pytest.approx(lateral, abs=EXACT)
    assert own.heading == pytest.approx(h, abs=EXACT)
    corner = 0.5 * CAR.width * math.cos(h)
    assert own.distance_to_lane_boundary_left == pytest.approx(1.75 - (lateral + corner), abs=EXACT)
    right = 1.75 + (lateral - corner)
    assert right < 0.0  # the right front corner is over the line
    assert own.distance_to_lane_boundary_right == pytest.approx(right, abs=EXACT)
    geo = view.geometry_information
    assert_no_lane(geo.lane_left)
    assert_lane(geo.lane_ego, 0.0, 3.5, 200.0 - fx)
    assert_lane(geo.lane_right, 0.0, 3.5, 200.0 - fx)
    rules = view.traffic_rule_information
    assert rules.lane_left == LaneTrafficRules()
    assert rules.lane_markings_left_of_left_lane == ()
    assert_marks(
        rules.lane_markings_left,
        [(0.0, "solid", "yellow", 0.15), (120.0 - fx, "solid solid", "yellow", 0.15)],
    )
    assert_marks(
        rules.lane_markings_right,
        [(0.0, "solid", "white", 0.12), (160.0 - fx, "broken", "white", 0.12)],
    )
    assert_marks(rules.lane_markings_right_of_right_lane, [(0.0, "broken", "white", 0.12)])
    objects = view.surrounding_objects
    assert_object(
        objects.object_front,
        id=car,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=20.0 - HALF - HALF,
        lateral=Y1 - (-4.0),
    )
    for empty in (objects.object_front_left, objects.object_rear_left):
        assert_no_object(empty)


def test_a_front_edge_over_the_lane_of_the_other_direction_keeps_the_own_lane(
    maps: dict[str, str],
) -> None:
    """The centre is in lane -1 (driven east), the front edge over the centre line in
    lane 1 (driven west): the main lane stays lane -1, whose signs come ahead, not lane 1
    read the other way. (A 12 m truck in a junction turn of 8 m radius swings its front
    over the lane beside its exit; reading that lane, whose red light for the traffic
    coming the other way stood at its front, it stopped inside the junction.)"""
    sim = simulation(maps["two_way"], ego=("w", -1, 90.0))
    h = 0.6
    place(sim, 0, 90.0, -0.5, h)
    fy = -0.5 + HALF * math.sin(h)
    assert fy > 0.0 and int(sim.net.lanes.lane_id[sim.state.uid[0]]) == -1
    views = sim.driver_views([0])
    uid = sim.net.lane_uid
    assert int(views.lane_uid[0][1]) == int(uid("w", -1, 90.0 + HALF * math.cos(h)))
    signs = views[0].traffic_rule_information.lane_ego.traffic_signs
    assert [sign.id for sign in signs] == ["w3"]


def test_a_front_edge_past_a_section_boundary_reads_the_next_section(
    maps: dict[str, str],
) -> None:
    # The centre in the first section (s = 118), F in the second (s = 120.3).
    sim = simulation(maps["straight"], ego=("1", -2, 110.0))
    place(sim, 0, 118.0, Y2)
    fx = 118.0 + HALF
    views = sim.driver_views()
    uid = sim.net.lane_uid
    assert views.lane_uid[0].tolist() == [int(uid("1", k, fx)) for k in (-1, -2, -3)]
    assert int(sim.net.lanes.section[views.lane_uid[0, 1]]) == 1
    view = views[0]
    assert_lane(view.geometry_information.lane_ego, 0.0, 3.5, 200.0 - fx)
    rules = view.traffic_rule_information
    assert_marks(rules.lane_markings_left_of_left_lane, [(0.0, "solid solid", "yellow", 0.15)])
    assert_marks(
        rules.lane_markings_left,
        [(0.0, "solid", "white", 0.12), (160.0 - fx, "broken", "white", 0.12)],
    )
    assert_marks(rules.lane_markings_right, [(0.0, "broken", "white", 0.12)])
    assert_marks(rules.lane_markings_right_of_right_lane, [(0.0, "solid", "yellow", 0.2)])
    # The stop sign and the light of the second section; s2 (s = 90) is behind.
    assert_signs(rules.lane_ego.traffic_signs, [("s4", 140.0 - fx, "206", "-1", "DE", MISSING, "")])
    assert [light.id for light in rules.lane_ego.traffic_lights] == ["L1"]


# -- geometry ------------------------------------------------------------------------------------


def test_geometry_of_three_lanes_and_the_visibility_distance(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -2, 20.0))
    place(sim, 0, centre_behind(10.0), Y2)
    geo = ego_view(sim).geometry_information
    assert geo.visibility_distance == 300.0
    for lane in (geo.lane_left, geo.lane_ego, geo.lane_right):
        assert_lane(lane, 0.0, 3.5, 190.0)
    near = ego_view(sim, visibility=150.0).geometry_information
    assert near.visibility_distance == 150.0
    for lane in (near.lane_left, near.lane_ego, near.lane_right):
        assert_lane(lane, 0.0, 3.5, math.inf)


def test_a_shoulder_exists_and_ends_at_once(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -3, 20.0))
    place(sim, 0, centre_behind(30.0), Y3)
    view = ego_view(sim)
    geo = view.geometry_information
    assert_lane(geo.lane_left, 0.0, 3.5, 170.0)
    assert_lane(geo.lane_ego, 0.0, 3.5, 170.0)
    assert_lane(geo.lane_right, 0.0, roads.SHOULDER, 0.0)
    rules = view.traffic_rule_information
    assert_marks(
        rules.lane_markings_right, [(0.0, "solid", "white", 0.2), (90.0, "solid", "yellow", 0.2)]
    )
    assert_marks(rules.lane_markings_right_of_right_lane, [(0.0, "curb", "standard", 0.15)])
    assert_marks(rules.lane_markings_left, [(0.0, "broken", "white", 0.12)])
    assert_marks(
        rules.lane_markings_left_of_left_lane,
        [
            (0.0, "broken", "white", 0.12),
            (30.0, "solid", "white", 0.12),
            (130.0, "broken", "white", 0.12),
        ],
    )


def test_distance_to_the_end_of_a_dropped_lane(maps: dict[str, str]) -> None:
    # Lane -3 ends at s = 100; lane -2 goes on as an exit lane, then becomes a shoulder at
    # s = 150; lane -1 goes on to the end of the road at 200.
    sim = simulation(maps["lane_drop"], ego=("d", -2, 30.0))
    place(sim, 0, centre_behind(40.0), Y2)
    geo = ego_view(sim).geometry_information
    assert_lane(geo.lane_left, 0.0, 3.5, 160.0)
    assert_lane(geo.lane_ego, 0.0, 3.5, 110.0)
    assert_lane(geo.lane_right, 0.0, 3.5, 60.0)
    geo = ego_view(sim, visibility=100.0).geometry_information
    assert_lane(geo.lane_left, 0.0, 3.5, math.inf)
    assert_lane(geo.lane_ego, 0.0, 3.5, math.inf)
    assert_lane(geo.lane_right, 0.0, 3.5, 60.0)
    geo = ego_view(sim, visibility=50.0).geometry_information
    for lane in (geo.lane_left, geo.lane_ego, geo.lane_right):
        assert_lane(lane, 0.0, 3.5, math.inf)


def test_the_rightmost_lane_has_no_right_lane(maps: dict[str, str]) -> None:
    sim = simulation(maps["lane_drop"], ego=("d", -3, 30.0))
    place(sim, 0, centre_behind(40.0), Y3)
    view = ego_view(sim)
    geo = view.geometry_information
    assert_lane(geo.lane_left, 0.0, 3.5, 110.0)
    assert_lane(geo.lane_ego, 0.0, 3.5, 60.0)
    assert_no_lane(geo.lane_right)
    rules = view.traffic_rule_information
    assert rules.lane_right == LaneTrafficRules()
    assert rules.lane_markings_right_of_right_lane == ()
    # Lane -3's edge ends with the lane.
    assert_marks(rules.lane_markings_right, [(0.0, "solid", "white", 0.2)])
    objects = view.surrounding_objects
    assert_no_object(objects.object_front_right)
    assert_no_object(objects.object_rear_right)


def test_a_vehicle_on_a_shoulder_is_at_the_end_of_its_lane(maps: dict[str, str]) -> None:
    # Lane -2 is a 2 m shoulder from s = 150 on.
    sim = simulation(maps["lane_drop"], ego=("d", -1, 150.0))
    place(sim, 0, centre_behind(160.0), -3.5 - roads.SHOULDER / 2)
    geo = ego_view(sim).geometry_information
    assert_lane(geo.lane_ego, 0.0, roads.SHOULDER, 0.0)
    assert_lane(geo.lane_left, 0.0, 3.5, 40.0)
    assert_no_lane(geo.lane_right)


def arc_point(radius: float, angle: float) -> tuple[float, float]:
    """The point at ``radius`` from the centre (20, 100) of `roads.curve`'s arc, ``angle``
    into the arc (the reference line has radius 100 and s = 20 + 100 * angle)."""
    return 20.0 + radius * math.sin(angle), roads.CURVE_RADIUS - radius * math.cos(angle)


def test_curvature_on_a_left_curve(maps: dict[str, str]) -> None:
    # In lane -1 (radius 101.75), 60 m into the arc: the lane on the left is lane 1,
    # driven the other way (radius 98.25), the one on the right lane -2 (105.25).
    sim = simulation(maps["curve"], ego=("c", -1, 60.0))
    r, a0 = 101.75, 0.6
    place(sim, 0, *arc_point(r, a0), a0)
    # F lies 2.3 m along the tangent: farther out, a little further round.
    rf = math.hypot(r, HALF)
    af = a0 + math.atan2(HALF, r)
    sf = 20.0 + 100.0 * af
    view = ego_view(sim)
    own = view.own_vehicle_states
    lateral = r - rf  # (outside: to the right)
    assert own.lateral_position == pytest.approx(lateral, abs=CURVED)
    assert own.heading == pytest.approx(a0 - af, abs=2e-3)
    corner = 0.5 * CAR.width * math.cos(a0 - af)
    assert own.distance_to_lane_boundary_left == pytest.approx(
        1.75 - (lateral + corner), abs=CURVED
    )
    assert own.distance_to_lane_boundary_right == pytest.approx(
        1.75 + (lateral - corner), abs=CURVED
    )
    geo = view.geometry_information
    for lane, radius in ((geo.lane_left, 98.25), (geo.lane_ego, 101.75), (geo.lane_right, 105.25)):
        assert lane.exists
        assert lane.curvature == pytest.approx(1.0 / radius, abs=5e-5)
        assert lane.width == pytest.approx(3.5, abs=CURVED)
        assert lane.distance_to_end_of_lane == pytest.approx(170.0 - sf, abs=5e-2)


def test_curvature_against_s_is_a_right_curve(maps: dict[str, str]) -> None:
    # In lane 1 (radius 98.25) driving against s, clockwise: a right-hand curve. Its left
    # is lane -1 (radius 101.75), its right lane 2 (94.75).
    sim = simulation(maps["curve"], ego=("c", 1, 90.0))
    r, a0 = 98.25, 0.9
    place(sim, 0, *arc_point(r, a0), a0 - math.pi)
    rf = math.hypot(r, HALF)
    af = a0 - math.atan2(HALF, r)
    sf = 20.0 + 100.0 * af
    view = ego_view(sim)
    own = view.own_vehicle_states
    lateral = rf - r  # outside is the driver's left
    assert own.lateral_position == pytest.approx(lateral, abs=CURVED)
    assert own.heading == pytest.approx(a0 - af, abs=2e-3)
    geo = view.geometry_information
    for lane, radius in ((geo.lane_left, 101.75), (geo.lane_ego, 98.25), (geo.lane_right, 94.75)):
        assert lane.exists
        assert lane.curvature == pytest.approx(-1.0 / radius, abs=5e-5)
        assert lane.width == pytest.approx(3.5, abs=CURVED)
        # Toward s = 0, through the first (straight) section; lane -1 the way the driver
        # is headed.
        assert lane.distance_to_end_of_lane == pytest.approx(sf, abs=5e-2)


def test_objects_on_a_curve(maps: dict[str, str]) -> None:
    # The ego in lane -1 (radius 101.75) 60 m into the arc; a car 20 m of s further on,
    # 0.3 m outside its lane centre and yawed 0.05 rad left of the lane; a car in lane 1
    # coming the other way. Lateral distances are differences of t = 100 - radius.
    sim = simulation(maps["curve"], ego=("c", -1, 60.0), vehicles=2)
    a0, a1, a2 = 0.6, 0.8, 0.9
    place(sim, 0, *arc_point(101.75, a0), a0)
    cars = traffic_slots(sim)
    ahead = place(sim, cars[0], *arc_point(102.05, a1), a1 + 0.05, speed=5.0)
    oncoming = place(sim, cars[1], *arc_point(98.25, a2), a2 - math.pi, speed=6.0)
    objects = ego_view(sim).surrounding_objects
    front = objects.object_front
    assert (front.id, front.exist, front.is_static) == (ahead, True, False)
    assert front.absolute_velocity == pytest.approx(5.0)
    assert front.heading == pytest.approx(0.05, abs=2e-3)
    assert front.relative_lateral_distance == pytest.approx(-0.3, abs=CURVED)
    # 20 m of s apart (20.35 m along the lane centre): either, less the two half lengths.
    assert front.relative_longitudinal_distance == pytest.approx(20.2 - CAR.length, abs=0.25)
    left = objects.object_front_left
    assert (left.id, left.exist) == (oncoming, True)
    assert abs(abs(left.heading) - math.pi) < 2e-3
    assert left.relative_lateral_distance == pytest.approx(3.5, abs=CURVED)
    assert left.relative_longitudinal_distance == pytest.approx(30.0 - CAR.length, abs=0.5)
    for empty in ("object_rear", "object_rear_left", "object_front_right", "object_rear_right"):
        assert_no_object(getattr(objects, empty))


def test_a_wrong_way_driver_reads_a_heading_of_minus_pi(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -2, 60.0))
    place(sim, 0, 60.0, Y2, math.pi)
    heading = ego_view(sim).own_vehicle_states.heading
    assert -math.pi <= heading < math.pi
    assert heading == pytest.approx(-math.pi, abs=EXACT)


def test_curvature_in_left_hand_traffic(maps: dict[str, str]) -> None:
    # Left-hand traffic drives lane 1 along s (counter-clockwise): a left-hand curve; its
    # left is lane 2 (94.75), its right lane -1 (101.75), driven the other way.
    sim = simulation(maps["curve_lht"], ego=("c", 1, 60.0))
    r, a0 = 98.25, 0.6
    place(sim, 0, *arc_point(r, a0), a0)
    rf = math.hypot(r, HALF)
    af = a0 + math.atan2(HALF, r)
    sf = 20.0 + 100.0 * af
    view = ego_view(sim)
    own = view.own_vehicle_states
    assert own.lateral_position == pytest.approx(r - rf, abs=CURVED)
    assert own.heading == pytest.approx(a0 - af, abs=2e-3)
    geo = view.geometry_information
    for lane, radius in ((geo.lane_left, 94.75), (geo.lane_ego, 98.25), (geo.lane_right, 101.75)):
        assert lane.exists
        assert lane.curvature == pytest.approx(1.0 / radius, abs=5e-5)
        assert lane.width == pytest.approx(3.5, abs=CURVED)
        assert lane.distance_to_end_of_lane == pytest.approx(170.0 - sf, abs=5e-2)


# -- traffic rules ---------------------------------------------------------------------------------


def test_signs_and_lights_per_lane(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -2, 20.0))
    place(sim, 0, centre_behind(10.0), Y2)  # F at s = 10: s0 (s = 5) is behind
    rules = ego_view(sim).traffic_rule_information
    s1: Sign = ("s1", 40.0, "274", "58", "DE", 80.0, "km/h")
    s2: Sign = ("s2", 80.0, "274", "60", "DE", 100.0, "km/h")
    s4: Sign = ("s4", 130.0, "206", "-1", "DE", MISSING, "")
    light: Sign = ("L1", 140.0, "1000001", "-1", "OpenDRIVE", MISSING, "")
    assert_signs(rules.lane_left.traffic_signs, [s1, s2])  # s1 is for lane -1 only
    assert_signs(rules.lane_ego.traffic_signs, [s2, s4])
    assert_signs(rules.lane_right.traffic_signs, [s2, s4])
    state = light_state(sim, "L1")
    for lane in (rules.lane_left, rules.lane_ego, rules.lane_right):
        assert_signs(lane.traffic_lights, [light])
        assert lane.traffic_lights[0].state == state
    # Within 100 m: neither the stop sign nor the light.
    near = ego_view(sim, visibility=100.0).traffic_rule_information
    assert_signs(near.lane_left.traffic_signs, [s1, s2])
    assert_signs(near.lane_ego.traffic_signs, [s2])
    assert_signs(near.lane_right.traffic_signs, [s2])
    for lane in (near.lane_left, near.lane_ego, near.lane_right):
        assert lane.traffic_lights == ()


def test_a_shoulder_sees_the_signs_valid_for_every_lane(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -3, 20.0))
    place(sim, 0, centre_behind(10.0), Y3)
    rules = ego_view(sim).traffic_rule_information
    assert_signs(rules.lane_right.traffic_signs, [("s2", 80.0, "274", "60", "DE", 100.0, "km/h")])
    assert rules.lane_right.traffic_lights == ()


def test_a_light_shows_what_the_plan_shows(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -2, 20.0))
    place(sim, 0, centre_behind(10.0), Y2)
    seen = set()
    for second in range(0, 26):
        sim.frame = round(second / sim.dt)
        view = ego_view(sim)
        assert view.frame == sim.frame
        assert view.time == pytest.approx(sim.time)
        (light,) = view.traffic_rule_information.lane_ego.traffic_lights
        assert light.state == light_state(sim, "L1")
        seen.add(light.state)
    assert seen == {"red", "yellow", "green"}


def test_lane_markings_along_the_road(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -2, 20.0))
    place(sim, 0, centre_behind(10.0), Y2)
    rules = ego_view(sim).traffic_rule_information
    # Lane -1's mark: broken to s = 60, solid (in both sections: one marking), broken
    # from 160.
    assert_marks(
        rules.lane_markings_left,
        [
            (0.0, "broken", "white", 0.12),
            (50.0, "solid", "white", 0.12),
            (150.0, "broken", "white", 0.12),
        ],
    )
    # Lane -2's mark: three records of the same broken line.
    assert_marks(rules.lane_markings_right, [(0.0, "broken", "white", 0.12)])
    # The centre lane's mark, left of lane -1.
    assert_marks(
        rules.lane_markings_left_of_left_lane,
        [(0.0, "solid", "yellow", 0.15), (110.0, "solid solid", "yellow", 0.15)],
    )
    # Lane -3's mark: none before s = 20, then white, then yellow from the second section.
    assert_marks(
        rules.lane_markings_right_of_right_lane,
        [(0.0, "none", None, None), (10.0, "solid", "white", 0.2), (110.0, "solid", "yellow", 0.2)],
    )
    near = ego_view(sim, visibility=100.0).traffic_rule_information
    assert_marks(
        near.lane_markings_left, [(0.0, "broken", "white", 0.12), (50.0, "solid", "white", 0.12)]
    )
    assert_marks(near.lane_markings_right, [(0.0, "broken", "white", 0.12)])
    assert_marks(near.lane_markings_left_of_left_lane, [(0.0, "solid", "yellow", 0.15)])
    assert_marks(
        near.lane_markings_right_of_right_lane,
        [(0.0, "none", None, None), (10.0, "solid", "white", 0.2)],
    )


# -- surrounding objects ---------------------------------------------------------------------------


def test_an_empty_road_has_no_objects(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -2, 60.0))
    objects = ego_view(sim).surrounding_objects
    for name in (
        "object_front",
        "object_rear",
        "object_front_left",
        "object_rear_left",
        "object_front_right",
        "object_rear_right",
    ):
        assert_no_object(getattr(objects, name))


def straight_scene(maps: dict[str, str]) -> tuple[Simulation, dict[str, int]]:
    """The ego in lane -2 at x = 30 with objects around it (see the test below)."""
    shoulder_cone = {"type": "cone", "position": {"x": 35.0, "y": Y_SHOULDER}}
    box = {"type": "box", "position": {"x": 40.0, "y": Y3, "heading": 0.0}}
    sim = simulation(
        maps["straight"], ego=("1", -2, 30.0), vehicles=6, objects=(box, shoulder_cone)
    )
    st = sim.state
    place(sim, 0, 30.0, Y2, speed=10.0)
    cars = traffic_slots(sim)
    ids = {
        "front": place(sim, cars[0], 52.0, -5.0, 0.1, speed=7.0, accel=0.5),
        "rear": place(sim, cars[1], 8.0, Y2, speed=3.0, accel=-0.2),
        "front_left": place(sim, cars[2], 65.0, Y1, speed=11.0, model="truck"),
        "rear_right": place(sim, cars[3], 23.0, -9.0, -0.05, speed=9.0, accel=1.0),
        "hidden_front": place(sim, cars[4], 80.0, Y2, speed=5.0),
        "hidden_right": place(sim, cars[5], 90.0, Y3, speed=5.0),
    }
    static = [int(k) for k in np.flatnonzero(st.active & (st.kind != VEHICLE))]
    assert len(static) == 2
    ids["box"] = place(sim, static[0], 40.0, Y3)
    ids["cone"] = place(sim, static[1], 35.0, Y_SHOULDER)
    return sim, ids


def test_the_nearest_object_ahead_and_behind_in_each_lane(maps: dict[str, str]) -> None:
    sim, ids = straight_scene(maps)
    objects = ego_view(sim).surrounding_objects
    assert_object(
        objects.object_front,
        id=ids["front"],
        speed=7.0,
        accel=0.5,
        heading=0.1,
        size=CAR_SIZE,
        longitudinal=gap(22.0, CAR.length, CAR.width, 0.1),
        lateral=-5.0 - Y2,
    )
    assert_object(
        objects.object_rear,
        id=ids["rear"],
        speed=3.0,
        accel=-0.2,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=-gap(22.0, CAR.length, CAR.width),
        lateral=0.0,
    )
    assert_object(
        objects.object_front_left,
        id=ids["front_left"],
        speed=11.0,
        heading=0.0,
        size=TRUCK_SIZE,
        longitudinal=gap(35.0, TRUCK.length, TRUCK.width),
        lateral=Y1 - Y2,
    )
    assert_no_object(objects.object_rear_left)
    assert_object(
        objects.object_front_right,
        id=ids["box"],
        static=True,
        heading=0.0,
        size=(1.0, 1.0, 1.0),
        longitudinal=10.0 - HALF - 0.5,
        lateral=Y3 - Y2,
    )
    assert_object(
        objects.object_rear_right,
        id=ids["rear_right"],
        speed=9.0,
        accel=1.0,
        heading=-0.05,
        size=CAR_SIZE,
        longitudinal=-gap(7.0, CAR.length, CAR.width, -0.05),
        lateral=-9.0 - Y2,
    )


def test_objects_beyond_the_visibility_distance_are_not_seen(maps: dict[str, str]) -> None:
    sim, ids = straight_scene(maps)
    objects = ego_view(sim, visibility=12.0).surrounding_objects
    for far in ("object_front", "object_rear", "object_front_left", "object_rear_left"):
        assert_no_object(getattr(objects, far))
    assert objects.object_front_right.id == ids["box"]  # 10 m ahead (centres), 7.2 m gap
    assert objects.object_rear_right.id == ids["rear_right"]  # 7 m behind, 2.35 m gap


def test_objects_that_straddle_two_lanes_are_in_both(maps: dict[str, str]) -> None:
    barrier = {"type": "barrier", "position": {"x": 45.0, "y": -8.25, "heading": math.pi / 2}}
    sim = simulation(maps["straight"], ego=("1", -2, 30.0), vehicles=5, objects=(barrier,))
    st = sim.state
    place(sim, 0, 30.0, Y2)
    cars = traffic_slots(sim)
    # Across lane -3: centre 0.5 m from lane -3's centre toward -2, 1.5 m to each side.
    (slot,) = np.flatnonzero(st.active & (st.kind != VEHICLE))
    wall = place(sim, int(slot), 45.0, -8.25, math.pi / 2)
    # In lane -3 near its left line, but not over it (0.7 + 0.95 < 1.75).
    near_line = place(sim, cars[0], 38.0, Y3 + 0.7)
    # On the line between lanes -1 and -2, behind.
    on_line = place(sim, cars[1], 12.0, -3.5)
    hidden = place(sim, cars[2], 5.0, Y1)
    # Beside the ego in lane -1, 1 m ahead: they overlap along the road.
    beside = place(sim, cars[3], 31.0, Y1)
    place(sim, cars[4], 50.0, Y1)
    objects = ego_view(sim).surrounding_objects
    wall_fields: dict[str, Any] = {
        "id": wall,
        "static": True,
        "heading": math.pi / 2,
        "size": (3.0, 0.6, 0.8),
        "longitudinal": 15.0 - HALF - 0.3,
        "lateral": -8.25 - Y2,
    }
    assert_object(objects.object_front, **wall_fields)
    assert objects.object_front_right.id == near_line
    assert_object(
        objects.object_front_right,
        id=near_line,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=8.0 - CAR.length,
        lateral=Y3 + 0.7 - Y2,
    )
    line_fields: dict[str, Any] = {
        "id": on_line,
        "heading": 0.0,
        "size": CAR_SIZE,
        "longitudinal": -(18.0 - CAR.length),
        "lateral": -3.5 - Y2,
    }
    assert_object(objects.object_rear, **line_fields)
    assert_object(objects.object_rear_left, **line_fields)
    assert hidden not in (objects.object_rear.id, objects.object_rear_left.id)
    assert_object(
        objects.object_front_left,
        id=beside,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=0.0,
        lateral=Y1 - Y2,
    )
    assert_no_object(objects.object_rear_right)


def test_a_scripted_object_is_seen_with_its_motion(maps: dict[str, str]) -> None:
    path = {
        "type": "path",
        "kind": "cyclist",
        "path": [
            {"road": "1", "lane": -3, "s": 50.0, "speed": 4.0},
            {"road": "1", "lane": -3, "s": 150.0, "speed": 4.0},
        ],
    }
    sim = simulation(maps["straight"], ego=("1", -2, 30.0), objects=(path,))
    place(sim, 0, 30.0, Y2)
    slot = int(sim._scripted.scripts.slot[0])
    assert sim.state.active[slot]
    cyclist = place(sim, slot, 45.0, Y3, speed=4.0, accel=0.3)
    objects = ego_view(sim).surrounding_objects
    assert_object(
        objects.object_front_right,
        id=cyclist,
        speed=4.0,
        accel=0.3,
        heading=0.0,
        size=(1.8, 0.6, 1.75),
        longitudinal=15.0 - HALF - 0.9,
        lateral=Y3 - Y2,
    )


def test_objects_past_a_lane_section_boundary(maps: dict[str, str]) -> None:
    # The ego at s = 108 in the first section; cars at 125 (lane -2) and 121 (lane -1)
    # in the second.
    sim = simulation(maps["straight"], ego=("1", -2, 100.0), vehicles=2)
    ego = place(sim, 0, 108.0, Y2)
    a, b = traffic_slots(sim)
    ahead = place(sim, a, 125.0, Y2)
    left = place(sim, b, 121.0, Y1)
    views = sim.driver_views([ego, ahead])
    assert views.id.tolist() == [ego, ahead]
    mine = views.view_of(ego).surrounding_objects
    assert_object(
        mine.object_front, id=ahead, heading=0.0, size=CAR_SIZE, longitudinal=12.4, lateral=0.0
    )
    assert_object(
        mine.object_front_left, id=left, heading=0.0, size=CAR_SIZE, longitudinal=8.4, lateral=3.5
    )
    theirs = views.view_of(ahead).surrounding_objects
    assert_object(
        theirs.object_rear, id=ego, heading=0.0, size=CAR_SIZE, longitudinal=-12.4, lateral=0.0
    )
    assert_object(
        theirs.object_rear_left, id=left, heading=0.0, size=CAR_SIZE, longitudinal=0.0, lateral=3.5
    )


# -- junctions -------------------------------------------------------------------------------------


def test_across_a_junction(maps: dict[str, str]) -> None:
    # Road 1 (x = 0-100), connecting road 3 (100-110), road 2 (110-210).
    sim = simulation(maps["junction"], ego=("1", -1, 70.0), vehicles=3)
    place(sim, 0, centre_behind(80.0), Y1)
    a, b, c = traffic_slots(sim)
    ahead = place(sim, a, 125.0, Y1, speed=6.0)
    truck = place(sim, b, 140.0, Y2, model="truck")
    right_behind = place(sim, c, 60.0, Y2)
    view = ego_view(sim)
    geo = view.geometry_information
    assert_no_lane(geo.lane_left)
    assert_lane(geo.lane_ego, 0.0, 3.5, 130.0)
    assert_lane(geo.lane_right, 0.0, 3.5, 130.0)
    rules = view.traffic_rule_information
    assert_signs(rules.lane_ego.traffic_signs, [("j1", 50.0, "274", "55", "DE", 50.0, "km/h")])
    assert rules.lane_right == LaneTrafficRules()
    # The connecting road has no road marks.
    assert_marks(
        rules.lane_markings_left,
        [(0.0, "solid", "white", 0.12), (20.0, "none", None, None), (30.0, "solid", "white", 0.12)],
    )
    assert_marks(
        rules.lane_markings_right,
        [
            (0.0, "broken", "white", 0.12),
            (20.0, "none", None, None),
            (30.0, "broken", "white", 0.12),
        ],
    )
    assert_marks(
        rules.lane_markings_right_of_right_lane,
        [(0.0, "solid", "white", 0.2), (20.0, "none", None, None), (30.0, "solid", "white", 0.2)],
    )
    assert rules.lane_markings_left_of_left_lane == ()
    objects = view.surrounding_objects
    fx = 80.0 - HALF
    assert_object(
        objects.object_front,
        id=ahead,
        speed=6.0,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=gap(125.0 - fx, CAR.length, CAR.width),
        lateral=0.0,
    )
    assert_object(
        objects.object_front_right,
        id=truck,
        heading=0.0,
        size=TRUCK_SIZE,
        longitudinal=gap(140.0 - fx, TRUCK.length, TRUCK.width),
        lateral=Y2 - Y1,
    )
    assert_object(
        objects.object_rear_right,
        id=right_behind,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=-gap(fx - 60.0, CAR.length, CAR.width),
        lateral=Y2 - Y1,
    )
    for empty in (objects.object_rear, objects.object_front_left, objects.object_rear_left):
        assert_no_object(empty)


def test_behind_across_a_junction_and_inside_it(maps: dict[str, str]) -> None:
    # The ego on road 2 at x = 120; one car inside the junction (x = 105), one on road 1.
    sim = simulation(maps["junction"], ego=("2", -1, 10.0), vehicles=2)
    ego = place(sim, 0, 120.0, Y1)
    a, b = traffic_slots(sim)
    inside = place(sim, a, 105.0, Y1)
    back = place(sim, b, 90.0, Y2)
    assert sim.net.road_ids[int(sim.state.road[a])] == "3"
    views = sim.driver_views([ego, inside])
    mine = views.view_of(ego)
    objects = mine.surrounding_objects
    assert_object(
        objects.object_rear, id=inside, heading=0.0, size=CAR_SIZE, longitudinal=-10.4, lateral=0.0
    )
    assert_object(
        objects.object_rear_right,
        id=back,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=-25.4,
        lateral=Y2 - Y1,
    )
    # The car in the junction: its lane is the connecting road's; the ego is ahead of it.
    theirs = views.view_of(inside)
    assert_lane(theirs.geometry_information.lane_ego, 0.0, 3.5, 110.0 - 107.3 + 100.0)
    assert_object(
        theirs.surrounding_objects.object_front,
        id=ego,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=10.4,
        lateral=0.0,
    )
    assert_object(
        theirs.surrounding_objects.object_rear_right,
        id=back,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=-10.4,
        lateral=Y2 - Y1,
    )


# -- driving against s, left-hand traffic ------------------------------------------------------------


def against_s_scene(maps: dict[str, str]) -> tuple[Simulation, dict[str, int], float, float]:
    """The ego in lane 1 of the two-way road, driving west (against s), its centre at
    x = 101 (second section), 0.2 m north of the lane centre, yawed 0.05 rad to the left
    (south); F is in the first section."""
    sim = simulation(maps["two_way"], ego=("w", 1, 100.0), vehicles=4)
    h = -math.pi + 0.05  # pi + 0.05
    ego = place(sim, 0, 101.0, 1.95, h)
    fx, fy = 101.0 + HALF * math.cos(h), 1.95 + HALF * math.sin(h)
    cars = traffic_slots(sim)
    ids = {
        "ego": ego,
        "front": place(sim, cars[0], 80.0, 1.5, math.pi, speed=8.0),
        "oncoming": place(sim, cars[1], 70.0, Y1, 0.0, speed=12.0),
        "rear_right": place(sim, cars[2], 112.0, 5.25, math.pi),
        "going_away": place(sim, cars[3], 130.0, Y1, 0.0, speed=4.0),
    }
    return sim, ids, fx, fy


def test_driving_against_s_own_state_and_geometry(maps: dict[str, str]) -> None:
    sim, _, fx, fy = against_s_scene(maps)
    view = ego_view(sim)
    own = view.own_vehicle_states
    lateral = -(fy - 1.75)  # left of a westbound driver is south, -t
    assert own.lateral_position == pytest.approx(lateral, abs=EXACT)
    assert own.heading == pytest.approx(0.05, abs=EXACT)
    corner = 0.5 * CAR.width * math.cos(0.05)
    assert own.distance_to_lane_boundary_left == pytest.approx(1.75 - (lateral + corner), abs=EXACT)
    assert own.distance_to_lane_boundary_right == pytest.approx(
        1.75 + (lateral - corner), abs=EXACT
    )
    uid = sim.net.lane_uid
    views = sim.driver_views([0])
    assert views.lane_uid[0].tolist() == [int(uid("w", k, fx)) for k in (-1, 1, 2)]
    geo = view.geometry_information
    # All three run toward s = 0; lane -1 the way the driver is headed.
    for lane in (geo.lane_left, geo.lane_ego, geo.lane_right):
        assert_lane(lane, 0.0, 3.5, fx)
    rules = view.traffic_rule_information
    assert_marks(rules.lane_markings_left, [(0.0, "solid", "yellow", 0.15)])
    assert_marks(rules.lane_markings_right, [(0.0, "broken", "white", 0.12)])
    assert_marks(rules.lane_markings_left_of_left_lane, [(0.0, "broken", "white", 0.12)])
    assert_marks(rules.lane_markings_right_of_right_lane, [(0.0, "solid", "white", 0.2)])
    w1: Sign = ("w1", fx - 50.0, "274", "57", "DE", 70.0, "km/h")
    assert_signs(rules.lane_ego.traffic_signs, [w1])
    assert_signs(rules.lane_right.traffic_signs, [w1])


def test_driving_against_s_the_opposite_lane_reads_the_drivers_way(maps: dict[str, str]) -> None:
    # Lane -1 is followed the way the driver is headed (west): "w2" (s = 60) lies ahead on
    # it, "w3" (s = 120) behind.
    sim, _, fx, _ = against_s_scene(maps)
    rules = ego_view(sim).traffic_rule_information
    assert_signs(
        rules.lane_left.traffic_signs, [("w2", fx - 60.0, "274", "59", "DE", 90.0, "km/h")]
    )


def test_the_opposite_lane_ends_where_its_predecessors_do(maps: dict[str, str]) -> None:
    # Westbound in lane 1 with F at s = 120: lane -1 on the left, driven east, is followed
    # west through its predecessors and ends at s = 50, where it is a shoulder.
    sim = simulation(maps["opening"], ego=("o", 1, 150.0))
    place(sim, 0, 120.0 + HALF, 1.75, math.pi)
    geo = ego_view(sim).geometry_information
    assert_lane(geo.lane_left, 0.0, 3.5, 70.0)
    assert_lane(geo.lane_ego, 0.0, 3.5, 120.0)
    assert_lane(geo.lane_right, 0.0, 3.5, 120.0)
    geo = ego_view(sim, visibility=100.0).geometry_information
    assert_lane(geo.lane_left, 0.0, 3.5, 70.0)
    assert_lane(geo.lane_ego, 0.0, 3.5, math.inf)
    assert_lane(geo.lane_right, 0.0, 3.5, math.inf)


def test_driving_against_s_objects(maps: dict[str, str]) -> None:
    sim, ids, _, _ = against_s_scene(maps)
    objects = ego_view(sim).surrounding_objects
    own_t = 1.95
    assert_object(
        objects.object_front,
        id=ids["front"],
        speed=8.0,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=gap(21.0, CAR.length, CAR.width),
        lateral=-(1.5 - own_t),
    )
    oncoming = objects.object_front_left
    assert abs(abs(oncoming.heading) - math.pi) < EXACT
    assert_object(
        oncoming,
        id=ids["oncoming"],
        speed=12.0,
        heading=oncoming.heading,
        size=CAR_SIZE,
        longitudinal=gap(31.0, CAR.length, CAR.width),
        lateral=-(Y1 - own_t),
    )
    away = objects.object_rear_left
    assert abs(abs(away.heading) - math.pi) < EXACT
    assert_object(
        away,
        id=ids["going_away"],
        speed=4.0,
        heading=away.heading,
        size=CAR_SIZE,
        longitudinal=-gap(29.0, CAR.length, CAR.width),
        lateral=-(Y1 - own_t),
    )
    assert_object(
        objects.object_rear_right,
        id=ids["rear_right"],
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=-gap(11.0, CAR.length, CAR.width),
        lateral=-(5.25 - own_t),
    )
    assert_no_object(objects.object_rear)
    assert_no_object(objects.object_front_right)


def test_driving_against_s_next_to_a_sidewalk(maps: dict[str, str]) -> None:
    # The car in lane 2 (westbound): its right is the sidewalk, lane 3; the ego is ahead
    # on its left.
    sim, ids, _, _ = against_s_scene(maps)
    view = sim.driver_view(ids["rear_right"])
    geo = view.geometry_information
    fx = 112.0 - HALF
    assert_lane(geo.lane_left, 0.0, 3.5, fx)
    assert_lane(geo.lane_ego, 0.0, 3.5, fx)
    assert_lane(geo.lane_right, 0.0, roads.SIDEWALK, 0.0)
    rules = view.traffic_rule_information
    assert_marks(rules.lane_markings_left, [(0.0, "broken", "white", 0.12)])
    assert_marks(rules.lane_markings_right, [(0.0, "solid", "white", 0.2)])
    assert_marks(rules.lane_markings_right_of_right_lane, [(0.0, "curb", "standard", 0.15)])
    assert_marks(rules.lane_markings_left_of_left_lane, [(0.0, "solid", "yellow", 0.15)])
    ego = view.surrounding_objects.object_front_left
    assert_object(
        ego,
        id=ids["ego"],
        heading=0.05,
        size=CAR_SIZE,
        longitudinal=gap(11.0, CAR.length, CAR.width, 0.05),
        lateral=-(1.95 - 5.25),
    )


def test_left_hand_traffic(maps: dict[str, str]) -> None:
    # Left-hand traffic drives lanes 1 and 2 east, along s. The ego is in lane 2: its left
    # is the sidewalk (lane 3), its right lane 1.
    cone = {"type": "cone", "position": {"x": 45.0, "y": 8.5, "heading": 0.0}}
    sim = simulation(maps["two_way_lht"], ego=("w", 2, 30.0), vehicles=4, objects=(cone,))
    st = sim.state
    place(sim, 0, centre_behind(40.0), 5.25)
    cars = traffic_slots(sim)
    front = place(sim, cars[0], 60.0, 5.25, speed=10.0)
    front_right = place(sim, cars[1], 50.0, 1.75)
    rear_right = place(sim, cars[2], 20.0, 1.75)
    oncoming = place(sim, cars[3], 60.0, Y1, math.pi)
    (slot,) = np.flatnonzero(st.active & (st.kind != VEHICLE))
    sidewalk_cone = place(sim, int(slot), 45.0, 8.5)
    view = ego_view(sim)
    own = view.own_vehicle_states
    assert own.lateral_position == pytest.approx(0.0, abs=EXACT)
    assert own.heading == pytest.approx(0.0, abs=EXACT)
    geo = view.geometry_information
    assert_lane(geo.lane_left, 0.0, roads.SIDEWALK, 0.0)
    assert_lane(geo.lane_ego, 0.0, 3.5, 160.0)
    assert_lane(geo.lane_right, 0.0, 3.5, 160.0)
    rules = view.traffic_rule_information
    assert_marks(rules.lane_markings_left, [(0.0, "solid", "white", 0.2)])
    assert_marks(rules.lane_markings_right, [(0.0, "broken", "white", 0.12)])
    assert_marks(rules.lane_markings_left_of_left_lane, [(0.0, "curb", "standard", 0.15)])
    assert_marks(rules.lane_markings_right_of_right_lane, [(0.0, "solid", "yellow", 0.15)])
    w1: Sign = ("w1", 10.0, "274", "57", "DE", 70.0, "km/h")
    assert_signs(rules.lane_ego.traffic_signs, [w1])
    assert_signs(rules.lane_right.traffic_signs, [w1])
    assert rules.lane_left.traffic_signs == ()
    objects = view.surrounding_objects
    assert_object(
        objects.object_front,
        id=front,
        speed=10.0,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=17.7,
        lateral=0.0,
    )
    assert_object(
        objects.object_front_right,
        id=front_right,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=7.7,
        lateral=-3.5,
    )
    assert_object(
        objects.object_rear_right,
        id=rear_right,
        heading=0.0,
        size=CAR_SIZE,
        longitudinal=-13.1,
        lateral=-3.5,
    )
    assert_object(
        objects.object_front_left,
        id=sidewalk_cone,
        static=True,
        heading=0.0,
        size=(0.4, 0.4, 0.75),
        longitudinal=(45.0 - 37.7) - HALF - 0.2,
        lateral=8.5 - 5.25,
    )
    assert_no_object(objects.object_rear)
    assert_no_object(objects.object_rear_left)
    assert oncoming not in [getattr(objects, f.name).id for f in dataclasses.fields(objects)]


# -- the API ----------------------------------------------------------------------------------------


def test_views_of_all_vehicles_and_of_some(maps: dict[str, str]) -> None:
    sim, ids = straight_scene(maps)
    st = sim.state
    everyone = sim.driver_views()
    vehicles = st.id[st.active & (st.kind == VEHICLE)]
    assert sorted(everyone.id.tolist()) == sorted(vehicles.tolist())
    assert len(everyone) == len(vehicles) == 7
    assert (everyone.frame, everyone.time) == (sim.frame, sim.time)
    n = len(everyone)
    for name, shape in (
        ("absolute_velocity", (n,)),
        ("collision", (n,)),
        ("lane_uid", (n, 3)),
        ("lane_exists", (n, 3)),
        ("lane_distance_to_end_of_lane", (n, 3)),
        ("object_id", (n, 6)),
        ("object_relative_lateral_distance", (n, 6)),
        ("sign_ptr", (3 * n + 1,)),
        ("light_ptr", (3 * n + 1,)),
        ("marking_ptr", (4 * n + 1,)),
    ):
        assert getattr(everyone, name).shape == shape, name
    for i, view in enumerate(everyone):
        one = sim.driver_view(view.id)
        assert one.to_dict() == view.to_dict() == everyone[i].to_dict()
        assert everyone.view_of(view.id).to_dict() == one.to_dict()
    some = sim.driver_views([ids["front"], 0])
    assert some.id.tolist() == [ids["front"], 0]
    assert some[1].to_dict() == ego_view(sim).to_dict()
    assert some[-1].id == 0
    with pytest.raises(IndexError):
        _ = some[2]
    far = sim.driver_views([0], visibility=50.0)
    assert far.visibility_distance.tolist() == [50.0]


def test_unknown_and_inactive_vehicles_are_query_errors(maps: dict[str, str]) -> None:
    sim = simulation(maps["straight"], ego=("1", -2, 30.0), vehicles=2)
    place(sim, 0, 30.0, Y2)
    a, b = traffic_slots(sim)
    place(sim, a, 60.0, Y1)
    gone = place(sim, b, 50.0, Y2)
    sim.state.active[b] = False
    # An inactive actor is no object either.
    assert_no_object(ego_view(sim).surrounding_objects.object_front)
    for bad in (999, -1, gone):
        with pytest.raises(QueryError):
            sim.driver_view(bad)
        with pytest.raises(QueryError):
            sim.driver_views([0, bad])
    assert sim.driver_views().id.tolist() in ([0, int(sim.state.id[a])], [int(sim.state.id[a]), 0])


def test_to_dict_uses_the_openpass_names(maps: dict[str, str]) -> None:
    sim, ids = straight_scene(maps)
    view = ego_view(sim)
    d = view.to_dict()
    assert set(d) == {
        "id",
        "frame",
        "time",
        "ownVehicleStates",
        "geometryInformation",
        "trafficRuleInformation",
        "surroundingObjects",
    }
    assert (d["id"], d["frame"], d["time"]) == (0, sim.frame, sim.time)
    own = d["ownVehicleStates"]
    assert set(own) == {
        "absoluteVelocity",
        "acceleration",
        "lateralPosition",
        "heading",
        "steeringWheelAngle",
        "distanceToLaneBoundaryLeft",
        "distanceToLaneBoundaryRight",
        "collision",
    }
    assert own["absoluteVelocity"] == pytest.approx(10.0)
    geo = d["geometryInformation"]
    assert set(geo) == {"visibilityDistance", "laneLeft", "laneEgo", "laneRight"}
    assert geo["visibilityDistance"] == 300.0
    for lane in ("laneLeft", "laneEgo", "laneRight"):
        assert set(geo[lane]) == {"exists", "curvature", "width", "distanceToEndOfLane"}
    assert geo["laneEgo"]["distanceToEndOfLane"] == pytest.approx(200.0 - 32.3)
    rules = d["trafficRuleInformation"]
    assert set(rules) == {
        "laneLeft",
        "laneEgo",
        "laneRight",
        "laneMarkingsLeft",
        "laneMarkingsRight",
        "laneMarkingsLeftOfLeftLane",
        "laneMarkingsRightOfRightLane",
    }
    for lane in ("laneLeft", "laneEgo", "laneRight"):
        assert set(rules[lane]) == {"trafficSigns", "trafficLights"}
    sign = rules["laneLeft"]["trafficSigns"][0]
    assert sign == {
        "id": "s1",
        "relativeDistance": pytest.approx(50.0 - 32.3),
        "type": "274",
        "subtype": "58",
        "country": "DE",
        "value": 80.0,
        "unit": "km/h",
    }
    light = rules["laneEgo"]["trafficLights"][0]
    assert set(light) == {
        "id",
        "relativeDistance",
        "type",
        "subtype",
        "country",
        "value",
        "unit",
        "state",
    }
    assert light["state"] in ("red", "yellow", "green")
    mark = rules["laneMarkingsRight"][0]
    assert mark == {
        "relativeStartDistance": 0.0,
        "type": "broken",
        "color": "white",
        "width": pytest.approx(0.12),
    }
    objects = d["surroundingObjects"]
    assert set(objects) == {
        "objectFront",
        "objectRear",
        "objectFrontLeft",
        "objectRearLeft",
        "objectFrontRight",
        "objectRearRight",
    }
    front = objects["objectFront"]
    assert set(front) == {
        "id",
        "exist",
        "isStatic",
        "absoluteVelocity",
        "acceleration",
        "heading",
        "length",
        "width",
        "height",
        "relativeLongitudinalDistance",
        "relativeLateralDistance",
    }
    assert front["id"] == ids["front"]
    assert objects["objectRearLeft"] == {
        "id": -1,
        "exist": False,
        "isStatic": False,
        "absoluteVelocity": -999.0,
        "acceleration": -999.0,
        "heading": -999.0,
        "length": -999.0,
        "width": -999.0,
        "height": -999.0,
        "relativeLongitudinalDistance": -999.0,
        "relativeLateralDistance": -999.0,
    }
    assert objects["objectFrontRight"]["isStatic"] is True


def test_a_driver_sensor_in_the_scenario_reads_every_step(maps: dict[str, str]) -> None:
    data = {
        "map": maps["straight"],
        "ego": {"spawn": {"road": "1", "lane": -2, "s": 30.0}, "speed": 10.0},
        "traffic": {"count": 1, "respawn": False, "mix": {"car": 1.0}},
        "sensors": [
            {"type": "driver"},
            {"type": "driver", "name": "other", "vehicle": 1, "visibility": 50.0},
            {"type": "driver", "name": "near", "vehicle": "ego", "visibility": 120.0},
        ],
    }
    sim = Simulation(validate_data(data, "test"))
    assert traffic_slots(sim) == [1] and int(sim.state.id[1]) == 1
    for frame in range(4):
        if frame:
            sim.step()
        assert sim.frame == frame
        driver, other = sim.readings["driver"], sim.readings["other"]
        assert isinstance(driver, DriverView) and isinstance(other, DriverView)
        assert (driver.id, driver.frame, other.id, other.frame) == (0, frame, 1, frame)
        assert driver.time == pytest.approx(sim.time)
        assert driver.geometry_information.visibility_distance == 300.0
        assert other.geometry_information.visibility_distance == 50.0
        assert driver.to_dict() == ego_view(sim).to_dict()
        assert other.to_dict() == sim.driver_view(1, visibility=50.0).to_dict()
        near = sim.readings["near"]
        assert near.to_dict() == ego_view(sim, visibility=120.0).to_dict()
    # The ego's speed is the one the state has now.
    assert driver.own_vehicle_states.absolute_velocity == pytest.approx(float(sim.state.speed[0]))
