"""Long vehicles meet oncoming traffic on bends of a two-lane road without touching.

A 12 m truck whose centre follows its lane's centre line on a bend swings its front
toward the road's middle by about (L/2)(L/2 + wheelbase) / 2R: 1.9 m on a 20 m bend,
more than a 3.2 m lane leaves beside it. Keeping away from the middle by half of that,
at most 0.6 m, left it and what it met touching; both now make room as far as their
lanes and the shoulders beside them let them (`roadsim.agents.traffic_kernels._track`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roadsim import Simulation
from roadsim.agents.passages import find_passages
from roadsim.scenario.schema import validate_data
from roadsim.world.lane_info import LaneInfo
from tests.agents.bends import LANE, bend_road

STRAIGHT = 60.0  # m before and after the bend


def _bend_road(folder: Path, radius: float, lane: float = LANE) -> tuple[str, float]:
    """`bend_road` with 60 m straights; the file and the s of the bend's middle."""
    path, begin, end = bend_road(folder, radius, STRAIGHT, lane)
    return path, 0.5 * (begin + end)


def _meet(
    folder: Path, radius: float, ours: str, theirs: str, where: float, lane: float = LANE
) -> tuple[int, float]:
    """``ours`` drives along s in lane -1 (the bend's outer lane), ``theirs`` against it
    in lane 1 (the inner lane), from 40 m either side of the place ``where`` (a share
    of the bend's length from its middle, along s), at the same speed: they meet about
    there. Returns the collision events and the least distance between their centres
    (m), which shows they met."""
    path, middle = _bend_road(folder, radius, lane)
    sim = Simulation(validate_data({"map": path}, "test"))
    meet = middle + where * np.pi * radius
    a = sim.spawn_vehicle_on_lane("1", -1, meet - 40.0, model=ours, speed=6.0)
    b = sim.spawn_vehicle_on_lane("1", 1, meet + 40.0, model=theirs, speed=6.0)
    closest = np.inf
    for _ in range(round(16.0 / sim.dt)):
        sim.step()
        st = sim.state
        ia, ib = (int(np.flatnonzero(st.id == i)[0]) for i in (a, b))
        closest = min(closest, float(np.hypot(st.x[ia] - st.x[ib], st.y[ia] - st.y[ib])))
    return len(sim.events), closest


@pytest.mark.parametrize(
    ("radius", "where"),
    [(20.0, -0.5), (20.0, -0.25), (20.0, 0.0), (15.0, 0.0), (15.0, 0.25)],
)
def test_a_truck_on_the_inside_of_a_bend_and_the_car_it_meets_do_not_touch(
    tmp_path: Path, radius: float, where: float
) -> None:
    # Before: one collision event in each of these meetings (the truck's front over the
    # middle, the car on its lane's centre line).
    events, closest = _meet(tmp_path, radius, "car", "truck", where)
    assert closest < 2.0 * LANE  # (they did meet, side by side)
    assert events == 0


@pytest.mark.parametrize("where", [-0.5, -0.25, 0.0, 0.25, 0.5])
def test_two_long_vehicles_meet_on_a_bend_of_wide_lanes_that_is_no_passage(
    tmp_path: Path, where: float
) -> None:
    """On 3.5 m lanes two trucks fit side by side down to 17.9 m radius on the inner
    lane's centre (their widths and the swing of one take 6.56 m of the 7 m at 24.1 m,
    CARLA's Town07 road 24). A bend of 22 m (20.25 m on the inner lane) is no passage
    (`roadsim.agents.passages`), and two trucks meet in it, at its ends or its middle,
    without touching; one of 18 m, where they touched, is a passage. Before, every lane
    bending tighter than 25 m was a passage however wide: Town07's road 24, right after
    junction 7, held trucks waiting for it across the junction's exit."""
    for radius, passage in ((22.0, False), (18.0, True)):
        path, _ = _bend_road(tmp_path, radius, lane=3.5)
        net = Simulation(validate_data({"map": path}, "test")).net
        assert (find_passages(LaneInfo(net)).number > 0) == passage
    events, closest = _meet(tmp_path, 22.0, "truck", "truck", where, lane=3.5)
    assert closest < 2.0 * 3.5  # (they did meet, side by side)
    assert events == 0


def test_cars_keep_to_their_lanes_while_making_room(tmp_path: Path) -> None:
    """The room a vehicle makes on a bend stays on its side: its centre on its lane."""
    path, middle = _bend_road(tmp_path, 20.0)
    sim = Simulation(validate_data({"map": path}, "test"))
    ids = [
        sim.spawn_vehicle_on_lane("1", -1, middle - 40.0, speed=6.0),
        sim.spawn_vehicle_on_lane("1", 1, middle + 40.0, speed=6.0, model="truck"),
    ]
    lanes = {int(sim.net.lane_uid("1", lane, middle)) for lane in (-1, 1)}
    for _ in range(round(16.0 / sim.dt)):
        sim.step()
        st = sim.state
        for i in ids:
            k = int(np.flatnonzero(st.id == i)[0])
            assert int(st.uid[k]) in lanes


@pytest.mark.parametrize(("shift", "passes"), [(0.5, True), (0.3, False)])
def test_a_car_passes_a_truck_standing_in_a_bend_whose_corner_just_reaches_over(
    tmp_path: Path, shift: float, passes: bool
) -> None:
    """A truck stands in the inner lane of a 20 m bend, ``shift`` m from its lane's
    centre toward the bend's inside. Shifted 0.5 m, its ends reach 0.1 m over the middle
    of the road (a car beside it has half a metre to spare): the car coming the other
    way passes it. (Before, it stopped 10 m before the truck for as long as the truck
    stood: on CARLA's Town07, cars stood for minutes beside trucks queued in a bend.)
    Shifted 0.3 m, its ends reach 0.3 m over: the car waits."""
    path, middle = _bend_road(tmp_path, 20.0)
    sim = Simulation(validate_data({"map": path}, "test"))
    truck = sim.spawn_vehicle_on_lane("1", 1, middle, t=shift, model="truck", external=True)
    car = sim.spawn_vehicle_on_lane("1", -1, middle - 40.0, speed=6.0)
    st = sim.state
    k, c = (int(np.flatnonzero(st.id == i)[0]) for i in (truck, car))
    furthest = -np.inf
    for _ in range(round(15.0 / sim.dt)):
        sim.step()
        if st.active[c]:
            furthest = max(furthest, float(st.s[c]))
    assert st.speed[k] == 0.0
    assert (furthest > middle + 20.0) == passes
    assert not sim.events
