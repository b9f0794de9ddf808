"""How far a dependent scripted object's controller still has to go to its target.

A dependent object (`roadsim.agents.scripted`) times its motion by its controller's time
to go: that distance over the controller's speed. The distance is measured the way the
controller will drive:

- **A vehicle on a lane** (the ego, a traffic vehicle): along the lane graph, from where
  it is on its lane to the end of that lane, then along the successor lanes its route
  takes (`roadsim.world.lane_kernels.choose_next`, the choice traffic and lane
  localisation make), to the target: the first lane of the route in the target's lane
  section (any lane of the road there, so a target in a neighbouring lane counts), at
  the target's road s. Lengths are along the lanes' sampled centre lines (`lane_arcs`),
  which on a curve differ from the reference line's s. Negative once the controller is
  past the target.
- **A scripted object**: along its own path, to the path's point nearest the target.
- **Otherwise** (a vehicle off every lane or facing against its lane, a target on no
  lane, or a target not on the first `MAX_HOPS` lanes of the route): the straight line,
  the target's distance ahead of the controller along its heading.

On a straight road the three agree. On a curve or a roundabout only the first two are
right: the straight line goes negative while the target is still ahead along the road,
and then far too small (a pedestrian timed to a car driving round a roundabout reached
27 m/s and arrived seconds early).

The route is walked only when the controller enters another lane (`RouteCache`); each
tick then costs one look-up in the controller's lane.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from roadsim._jit import njit_leaf
from roadsim._types import FloatArray, IntArray, UIntArray
from roadsim.world.lane_kernels import (
    LaneArrays,
    X,
    Y,
    choose_next,
    direction,
    progress,
    sample_at,
)

__all__ = ["MAX_HOPS", "RouteCache", "arc_at", "lane_arcs", "route_left", "straight_ahead"]

#: Lane records of a controller's route searched for its target.
MAX_HOPS = 64


class RouteCache(NamedTuple):
    """Per dependent object: the controller's route to its target from the start of the
    lane it was last seen on (made anew when that lane or its route salt changes).

    Attributes:
        lane: The lane the route starts from (-1: none yet).
        salt: The route salt it was walked with.
        left: Distance from the lane's start along the route to the target (m; NaN: the
            target is not on the route).
    """

    lane: IntArray
    salt: UIntArray
    left: FloatArray

    @classmethod
    def empty(cls, m: int) -> RouteCache:
        return cls(np.full(m, -1, dtype=np.int64), np.zeros(m, dtype=np.uint64), np.zeros(m))


def lane_arcs(la: LaneArrays) -> FloatArray:
    """Length along each lane's sampled centre line from its first sample to each sample
    (m), one entry per row of ``la.sample``."""
    xy = la.sample[:, [X, Y]]
    step = np.zeros(xy.shape[0])
    if xy.shape[0] > 1:
        step[1:] = np.hypot(xy[1:, 0] - xy[:-1, 0], xy[1:, 1] - xy[:-1, 1])
    total = np.cumsum(step)
    first = la.ptr[:-1]
    owner = np.repeat(np.arange(first.size), np.diff(la.ptr))
    out: FloatArray = total - total[first[owner]]
    return out


@njit_leaf
def arc_at(la: LaneArrays, arc: FloatArray, u: int, p: float) -> float:
    """Length along lane ``u``'s centre line from its start to progress ``p`` (m)."""
    k, w = sample_at(la, u, p)
    nxt = min(k + 1, la.ptr[u + 1] - 1)
    past = max(p - la.length[u], 0.0)  # beyond the last sample: on in a straight line
    return float(arc[k] + w * (arc[nxt] - arc[k]) + past)


@njit_leaf
def _walk(
    la: LaneArrays, arc: FloatArray, salt: np.uint64, u: int, section: int, s: float
) -> float:
    """Distance from the start of lane ``u`` along the route of ``salt`` to road s ``s``
    in lane section ``section`` (NaN: not within `MAX_HOPS` lanes)."""
    total = 0.0
    for _ in range(MAX_HOPS):
        if la.section[u] == section:
            return total + arc_at(la, arc, u, progress(la, u, s))
        total += arc[la.ptr[u + 1] - 1]
        u = choose_next(la, salt, u)
        if u < 0:
            break
    return math.nan


@njit_leaf
def route_left(
    la: LaneArrays, arc: FloatArray, cache: RouteCache, i: int, salt: np.uint64, u: int,
    s: float, heading: float, section: int, target_s: float,
) -> float:  # fmt: skip
    """Distance along the route from a controller on lane ``u`` at road s ``s`` to the
    target of object ``i`` (NaN: not on the route, or the controller faces against its
    lane and does not drive it); ``cache`` keeps the walk."""
    p = progress(la, u, s)
    dx, dy = direction(la, u, p)
    if dx * math.cos(heading) + dy * math.sin(heading) < 0.0:
        return math.nan
    if cache.lane[i] != u or cache.salt[i] != salt:
        cache.lane[i] = u
        cache.salt[i] = salt
        cache.left[i] = _walk(la, arc, salt, u, section, target_s)
    return float(cache.left[i] - arc_at(la, arc, u, p))


@njit_leaf
def straight_ahead(x: float, y: float, heading: float, tx: float, ty: float) -> float:
    """How far ``(tx, ty)`` lies ahead of ``(x, y)`` along ``heading`` (m)."""
    return (tx - x) * math.cos(heading) + (ty - y) * math.sin(heading)
