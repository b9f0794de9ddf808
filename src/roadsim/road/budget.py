"""Budgets of work per road: values each within the reader's limits can, together, ask for
more samples or segments than any map needs (an absurd curvature over a long road, a
paramPoly3 far longer than declared); a budget turns that into a located `MapError` before
the arrays are allocated, never a `MemoryError` with no place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from roadsim._types import FloatArray, IntArray
from roadsim.errors import MapError

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork


@dataclass(frozen=True, slots=True)
class Budget:
    """What a road may cost: ``base + per_m * length`` of ``what``; far above real maps."""

    what: str
    base: float
    per_m: float


def check_budget(net: RoadNetwork, road: IntArray, amount: FloatArray, budget: Budget) -> None:
    """Raises a located `MapError` for the road whose share of ``amount`` exceeds its budget
    by the most.

    Args:
        net: The network.
        road: Road index of each item, shape (N,).
        amount: How many samples (or segments) each item needs, shape (N,).
        budget: What each road may use.
    """
    need = np.bincount(road, weights=amount, minlength=len(net.roads))
    allowed = budget.base + budget.per_m * net.road_length
    if not np.any(need > allowed):
        return
    r = int(np.argmax(need / allowed))
    bad = net.roads[r]
    raise MapError(
        f"the road would need {need[r]:.3g} {budget.what} (a road {bad.length:g} m long needs "
        f"at most {allowed[r]:.3g}): a curvature, paramPoly3 or lane width beyond any map",
        path=net.path,
        line=bad.line,
        element="road",
        road_id=bad.id,
    )
