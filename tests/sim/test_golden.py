"""Golden trajectories: a checksum of every built-in scenario's first 200 ticks.

The speed work rewrites kernels often; a change that was meant to keep behaviour must
keep these bits. A change meant to alter behaviour updates the checksum here and says
why in its commit (print the new one with ``trajectory_checksum``).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from roadsim import Simulation

TICKS = 200

#: sha256 of every `WorldState` array after each tick, in field order (first 16 hex
#: digits). Last changed when a footprint began to be entered in a lane beside its own
#: only where it reaches over by more than `roadsim.sensors.occupancy.SIDE_SLACK` (the
#: highway's and the crossing's traffic); before that, when the driver sensor began to
#: find the nearest footprint ahead and behind rather than the nearest centre, and
#: traffic to pass over a vehicle signalling into its lane while level with it.
GOLDEN = {
    "highway": "bef8e290c8cae2d3",
    "town": "a0291d11b200a966",
    "crossing": "ff8f0ac690f247c7",
    "cut-in": "d9dc7eaebe49c819",
}


def trajectory_checksum(name: str, ticks: int = TICKS) -> str:
    sim = Simulation(name)
    digest = hashlib.sha256()
    for _ in range(ticks):
        sim.step()
        for key, values in sorted(sim.state.arrays().items()):
            digest.update(key.encode())
            digest.update(np.ascontiguousarray(values).tobytes())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_trajectory_matches_its_golden_checksum(name: str) -> None:
    assert trajectory_checksum(name) == GOLDEN[name]
