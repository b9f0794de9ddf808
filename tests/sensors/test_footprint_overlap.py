"""An object whose footprint overlaps a lane is seen from that lane (issue 27): a box
across three lanes, a 50 m box whose centre lies in the next lane section or on the
next road, a car whose rear stands on the end of a driving lane and its centre on the
sidewalk that follows.

Scenes are built as in `tests.sensors.test_driver`, whose helpers put the actors
exactly where a case wants them; on these straight roads x is s and y is t.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from roadsim import Simulation
from roadsim.world.state import VEHICLE
from tests.sensors import roads
from tests.sensors.test_driver import (
    CAR,
    HALF,
    TRUCK,
    Y1,
    Y2,
    Y3,
    Y_SHOULDER,
    ego_view,
    place,
    simulation,
    traffic_slots,
)

Y_SIDEWALK = -4.5  # t of the centre of the sidewalk of road "e" of `roads.dead_end`


@pytest.fixture(scope="module")
def maps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("maps")
    return {
        "straight": roads.write(roads.straight(), folder),
        "junction": roads.write(roads.junction(), folder),
        "dead_end": roads.write(roads.dead_end(), folder),
    }


def box(x: float, y: float, length: float, width: float) -> dict[str, Any]:
    """A static box along the road (heading 0), ``length`` along x, ``width`` along y."""
    return {
        "type": "box",
        "position": {"x": x, "y": y, "heading": 0.0},
        "size": [length, width, 1.5],
    }


def static_slot(sim: Simulation) -> int:
    (slot,) = np.flatnonzero(sim.state.active & (sim.state.kind != VEHICLE))
    return int(slot)


# -- across lanes -------------------------------------------------------------------------------


def test_a_box_across_three_lanes_is_seen_from_each_of_them(maps: dict[str, str]) -> None:
    # 10 m wide, its centre in lane -1 near its right edge: it covers t = -8.4 to 1.6,
    # lanes -1, -2 and half of -3 (t = -7 to -10.5), not the shoulder (from -10.5).
    sim = simulation(
        maps["straight"], ego=("1", -3, 30.0), vehicles=3, objects=(box(50.0, -3.4, 2.0, 10.0),)
    )
    ego = place(sim, 0, 30.0, Y3)
    a, b, c = traffic_slots(sim)
    others = [place(sim, a, 30.0, Y1), place(sim, b, 30.0, Y2)]
    on_shoulder = place(sim, c, 30.0, Y_SHOULDER)
    wall = place(sim, static_slot(sim), 50.0, -3.4)
    views = sim.driver_views([ego, *others, on_shoulder])
    for who, y in zip((ego, *others), (Y3, Y1, Y2), strict=True):
        front = views.view_of(who).surrounding_objects.object_front
        assert front.id == wall, who
        assert front.relative_longitudinal_distance == pytest.approx(20.0 - HALF - 1.0)
        assert front.relative_lateral_distance == pytest.approx(-3.4 - y)
    assert not views.view_of(on_shoulder).surrounding_objects.object_front.exist
    # From lane -3, the lane to its left holds it too.
    assert views.view_of(ego).surrounding_objects.object_front_left.id == wall


# -- long objects -------------------------------------------------------------------------------

# A 50 m box whose near end is 27.7 m (42.7 m on the junction map) from the ego's bumper,
# its centre 52.7 m (67.7 m) beyond: ahead or behind, its centre in the next lane section
# (the straight map's sections meet at x = 120) or on the next road (the junction map:
# road 1 to x = 100, road 2 from x = 110).
LONG = [
    # map, ego (road, lane, spawn s), ego x, box x, visibility, gap (+ ahead, - behind)
    ("straight", ("1", -2, 10.0), 75.0, 130.0, 30.0, 27.7),
    ("straight", ("1", -2, 10.0), 165.0, 110.0, 30.0, -27.7),
    ("junction", ("1", -2, 10.0), 50.0, 120.0, 45.0, 42.7),
    ("junction", ("2", -2, 80.0), 160.0, 90.0, 45.0, -42.7),
]


@pytest.mark.parametrize(
    ("name", "spawn", "x", "box_x", "visibility", "gap"),
    LONG,
    ids=["ahead-section", "behind-section", "ahead-road", "behind-road"],
)
def test_a_long_box_whose_near_end_is_within_sight_is_seen(
    maps: dict[str, str],
    name: str,
    spawn: tuple[str, int, float],
    x: float,
    box_x: float,
    visibility: float,
    gap: float,
) -> None:
    sim = simulation(maps[name], ego=spawn, objects=(box(box_x, Y2, 50.0, 2.0),))
    place(sim, 0, x, Y2)
    wall = place(sim, static_slot(sim), box_x, Y2)
    objects = ego_view(sim, visibility=visibility).surrounding_objects
    found = objects.object_front if gap > 0.0 else objects.object_rear
    assert found.id == wall
    assert found.relative_longitudinal_distance == pytest.approx(gap)
    # Just out of sight, it is not seen.
    objects = ego_view(sim, visibility=abs(gap) - 0.1).surrounding_objects
    found = objects.object_front if gap > 0.0 else objects.object_rear
    assert not found.exist


# -- where a driving lane ends --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ego", "x", "y", "car_x", "car_y"),
    [
        # Lane -2 of road "e" leads into a sidewalk at x = 50, in the same road.
        (("e", -2, 10.0), 20.0, Y2, 51.5, Y_SIDEWALK),
        # Lane -1 of road "e" leads into road "f", a pedestrian zone, at x = 100.
        (("e", -1, 10.0), 70.0, Y1, 101.5, Y1),
    ],
    ids=["next-section", "next-road"],
)
def test_a_car_standing_on_the_end_of_a_driving_lane_is_seen(
    maps: dict[str, str],
    ego: tuple[str, int, float],
    x: float,
    y: float,
    car_x: float,
    car_y: float,
) -> None:
    # Its rear 1.5 - 2.3 = 0.8 m before the end of the driving lane, its centre beyond.
    sim = simulation(maps["dead_end"], ego=ego, vehicles=1)
    place(sim, 0, x, y)
    (slot,) = traffic_slots(sim)
    car = place(sim, slot, car_x, car_y)
    assert sim.net.lanes.type_name[int(sim.state.uid[slot])] == "sidewalk"
    front = ego_view(sim).surrounding_objects.object_front
    assert front.id == car
    assert front.relative_longitudinal_distance == pytest.approx(car_x - x - CAR.length)
    assert front.relative_lateral_distance == pytest.approx(car_y - y)


# -- the nearest footprint, not the nearest centre ----------------------------------------------


@pytest.mark.parametrize(
    ("ego_x", "truck_x", "car_x", "ahead"),
    [
        # The truck's rear at 44, the car's at 44.7 though its centre (47) comes first.
        (30.0, 50.0, 47.0, True),
        # Behind: the truck's front at 56, the car's at 55.3, its centre (53) nearer.
        (70.0, 50.0, 53.0, False),
    ],
    ids=["ahead", "behind"],
)
def test_a_truck_is_seen_before_a_car_beside_it_whose_centre_is_nearer(
    maps: dict[str, str], ego_x: float, truck_x: float, car_x: float, ahead: bool
) -> None:
    # The car straddles lanes -2 and -3 (its centre in -3, 0.75 m of it in -2), as one
    # changing lanes beside a truck does.
    sim = simulation(maps["straight"], ego=("1", -2, 30.0), vehicles=2)
    place(sim, 0, ego_x, Y2)
    truck_slot, car_slot = traffic_slots(sim)
    truck = place(sim, truck_slot, truck_x, Y2, model="truck")
    place(sim, car_slot, car_x, -7.2)
    objects = ego_view(sim).surrounding_objects
    found = objects.object_front if ahead else objects.object_rear
    assert found.id == truck
    expected = abs(truck_x - ego_x) - HALF - 0.5 * TRUCK.length
    assert found.relative_longitudinal_distance == pytest.approx(expected if ahead else -expected)
