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
#: digits). Last changed when traffic on bends began to keep away from oncoming traffic
#: by a long vehicle's swing (as far as lane and shoulder allow) and to read the curvature
#: ahead only by the lag of the turn the road asks for (both move traffic on the bends
#: and turns of highway, town and crossing; cut-in's traffic drives straight).
GOLDEN = {
    "highway": "e7951803414b9654",
    "town": "0d5ace7f86e1face",
    "crossing": "bba4262abee032ce",
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
