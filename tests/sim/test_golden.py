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
#: digits). Last changed when junction entry began to count the room promised to
#: vehicles ahead and to withdraw a promise once its junction is entered (the town).
GOLDEN = {
    "highway": "43b8933bcfa86d08",
    "town": "635772413481660c",
    "crossing": "18247a160dd9d52c",
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
