"""The autopilot stops for an obstacle across its lane, wherever the obstacle's centre
lies (issue 27: a car drove at 13.7 m/s into a box across three lanes whose centre was
two lanes away)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from roadsim import Simulation
from roadsim.agents.traffic import _scripted_ahead
from roadsim.scenario.schema import VEHICLE_MODELS, validate_data
from roadsim.sensors.occupancy import LaneOccupancy
from roadsim.world.state import SCRIPTED_OBJECT
from tests.sensors import roads


def test_the_autopilot_stops_before_a_box_across_its_lane_centred_two_lanes_away(
    tmp_path: Path,
) -> None:
    # The straight map: lanes -1, -2, -3 (t = 0 to -10.5), then a shoulder. The box is
    # 10 m wide, centred in lane -1 (t = -3.4): it covers lanes -1 and -2 and lane -3 to
    # t = -8.4, where the ego (centred at -8.75, 1.9 m wide) reaches t = -7.8.
    data = {
        "map": roads.write(roads.straight(), tmp_path),
        "ego": {
            "spawn": {"road": "1", "lane": -3, "s": 20.0},
            "speed": 13.7,
            "control": "autopilot",
        },
        "objects": [
            {
                "type": "box",
                "position": {"x": 100.0, "y": -3.4, "heading": 0.0},
                "size": [2.0, 10.0, 1.5],
            }
        ],
    }
    sim = Simulation(validate_data(data, "test"))
    ego = sim.ego_slot
    assert ego is not None
    sim.run(15.0)
    assert sim.events == []
    st = sim.state
    assert abs(st.y[ego] + 8.75) < 0.5  # still in lane -3: there is no way round
    assert st.x[ego] + 0.5 * VEHICLE_MODELS["car"].length < 99.0
    assert st.speed[ego] < 0.1


def test_traffic_sees_a_scripted_pedestrian_in_the_lane_it_is_about_to_step_into() -> None:
    # The built-in crossing's pedestrian steps off the kerb into North Street's lane 1 at
    # 7.95 s, whatever the traffic does. 0.75 s before, traffic sees it in that lane
    # already (its box reaching SCRIPTED_LOOKAHEAD_S ahead); the driver sensor's true
    # footprints do not have it there yet.
    sim = Simulation("crossing")
    lane = int(sim.net.lane_uid("1", 1, 12.0))
    sim.run(7.2)
    st = sim.state
    (ped,) = np.flatnonzero(st.active & (st.kind == SCRIPTED_OBJECT))
    assert st.uid[ped] != lane and st.speed[ped] > 1.0

    def in_lane(occ: LaneOccupancy) -> bool:
        return bool(ped in occ.slot[occ.ptr[lane] : occ.ptr[lane + 1]])

    sensor = sim._driver
    assert not in_lane(sensor.occupancy(st))
    assert in_lane(sensor.occupancy(st, None, _scripted_ahead(st, sim.net)))
    sim.run(1.0)
    assert sim.state.uid[ped] == lane  # (it did step in)
