"""`warmup`: compiles roadsim's kernels up front (``roadsim warmup``, which ``make run``
and ``make install`` call), so that a user's first simulation does not stall. While
kernels compile, `roadsim._compile_report` says which and how long the rest takes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from roadsim import _jit


@dataclass(frozen=True)
class WarmupSummary:
    """What `warmup` did."""

    kernels: int  # kernels ready after it
    compiled: int  # of those, compiled now (the rest came from the cache)
    seconds: float  # wall time


def warmup() -> WarmupSummary:
    """Compiles (or loads from the cache) every kernel a simulation of the built-in
    scenarios uses: traffic, scripted objects, an ego, collisions and whole driver
    views. Returns how many kernels were compiled now."""
    from roadsim.scenario import builtin_scenarios
    from roadsim.sim import Simulation
    from roadsim.sim.simulation import SORT_EVERY

    start = time.perf_counter()
    compiled_before = sum(1 for k in _jit.kernels() if sum(k.stats.cache_misses.values()))
    for name in builtin_scenarios():
        sim = Simulation(name)
        sim.run((SORT_EVERY + 1) * sim.dt)  # (the slots are sorted every SORT_EVERY ticks)
        sim.driver_views()
    ready = [k for k in _jit.kernels() if k.signatures]
    compiled = sum(1 for k in ready if sum(k.stats.cache_misses.values())) - compiled_before
    return WarmupSummary(len(ready), compiled, time.perf_counter() - start)
