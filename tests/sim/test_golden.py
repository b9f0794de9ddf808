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
#: digits). Last changed when traffic began to leave the map as its front reaches the
#: end of a lane that leads nowhere, and to come back only where no other vehicle is in
#: the way (the highway's); before that, when the driver sensor began to find the
#: nearest footprint ahead and behind rather than the nearest centre, and traffic to
#: pass over a vehicle signalling into its lane while level with it.
GOLDEN = {
    "highway": "0ef8c94a4280ade6",
    "town": "a0291d11b200a966",
    "crossing": "d0ed1525e32c22b1",
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
