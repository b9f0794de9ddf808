"""The driver sensor's lean rows (what traffic perceives through, in its own loop) agree
with the whole views (`Simulation.driver_views`) on everything a lean row holds."""

from __future__ import annotations

import numpy as np
import pytest

from roadsim import Simulation
from roadsim.agents.traffic import VISIBILITY, _drivers
from roadsim.sensors.driver_kernels import (
    EGO,
    WANT_END,
    WANT_FRONT,
    WANT_LIGHTS,
    WANT_REAR,
    WANT_SIDES,
    Out,
)
from roadsim.world.state import VEHICLE

EVERY_LEAN = WANT_FRONT | WANT_REAR | WANT_SIDES | WANT_LIGHTS | WANT_END


def lights(out: Out, i: int) -> list[tuple[int, float, int]]:
    """Row i's lights on its main lane: (signal, distance, state)."""
    first, count = out.light_start[i, EGO], out.light_count[i, EGO]
    return [
        (int(out.light_signal[j]), float(out.light_distance[j]), int(out.light_state[j]))
        for j in range(first, first + count)
    ]


@pytest.mark.parametrize("name", ["town", "highway"])
def test_lean_rows_agree_with_whole_views(name: str) -> None:
    sim = Simulation(name)
    sim.run(4.0)
    st = sim.state
    me = np.flatnonzero(st.active & (st.uid >= 0) & (st.kind == VEHICLE))
    assert me.size > 10
    traffic, sensor = sim._traffic, sim._driver
    drivers = _drivers(sim._traffic_params, sim._salt, sim._limits.wheelbase)
    lean = traffic.lean_view(st, sim._salt, drivers, me, EVERY_LEAN, sim.time)
    whole = sensor.observe(
        sensor.actors(st, sim._salt), sensor.occupancy(st), me, sim.time, visibility=VISIBILITY
    )
    for field in ("main_uid", "main_p", "main_side", "object_slot", "object_lon"):
        np.testing.assert_array_equal(getattr(lean, field), getattr(whole, field), field)
    np.testing.assert_array_equal(lean.lane_end[:, EGO], whole.lane_end[:, EGO])
    np.testing.assert_array_equal(lean.lane_end_uid[:, EGO], whole.lane_end_uid[:, EGO])
    seen_lights = 0
    for i in range(me.size):
        assert lights(lean, i) == lights(whole, i), i
        seen_lights += len(lights(whole, i))
    found = (whole.object_slot >= 0).sum()
    assert found > me.size  # the comparison covered real neighbours
    if name == "town":
        assert seen_lights > 0
