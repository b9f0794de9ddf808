"""Dynamics and localisation in one pass: the same bits as the two passes apart."""

from __future__ import annotations

import copy

import numpy as np

from roadsim import Simulation
from roadsim.agents.dynamics import step_bicycle_slots
from roadsim.scenario.load import validate_data
from roadsim.sim.motion import move_and_localize
from roadsim.world.localization import relocalize_slots
from roadsim.world.state import vehicle_slots


def test_one_pass_gives_the_two_passes_bits_and_the_same_lost_vehicles() -> None:
    sim = Simulation(validate_data({"map": "town", "seed": 3, "traffic": {"count": 60}}, "t"))
    sim.run(2.0)
    st = sim.state
    vehicles, _, off = vehicle_slots(st.active, st.kind, st.uid)
    assert off.size == 0 and vehicles.size > 20
    rng = np.random.default_rng(0)
    accel = rng.uniform(-8.0, 3.0, vehicles.size)
    steer = rng.uniform(-0.6, 0.6, vehicles.size)
    # Two vehicles jump: one far off the map (lost), one onto another's lane (found again
    # by the full search only).
    far, moved, onto = vehicles[0], vehicles[1], vehicles[-1]
    st.x[far] += 5000.0
    st.x[moved], st.y[moved], st.heading[moved] = st.x[onto], st.y[onto], st.heading[onto]

    apart = copy.deepcopy(st)
    step_bicycle_slots(
        vehicles, apart.x, apart.y, apart.heading, apart.speed, apart.steer, apart.accel,
        apart.yaw_rate, accel, steer, sim.limits, sim.dt, slip=apart.slip,
    )  # fmt: skip
    lost_apart = relocalize_slots(
        sim.info, vehicles, apart.uid, apart.s, apart.t, apart.road, apart.x, apart.y,
        apart.heading, sim.salt,
    )  # fmt: skip

    lost = move_and_localize(sim.info, vehicles, st, accel, steer, sim.limits, sim.dt, sim.salt)

    np.testing.assert_array_equal(lost, lost_apart)
    assert lost.tolist() == [far]
    assert st.uid[moved] == apart.uid[moved] >= 0
    for name, values in st.arrays().items():
        np.testing.assert_array_equal(values, apart.arrays()[name], err_msg=name)
