"""The lane tables as one bundle of arrays, and compiled scalar look-ups on them.

`LaneArrays` gathers what `roadsim.world.routing.LaneInfo` and its
`roadsim.world.lane_table.LaneTable` know per lane uid and per sample into a typed named
tuple of numpy arrays, the form compiled kernels (`roadsim._jit.njit`) accept. The
functions here answer one question for one vehicle (where is the centre of this lane at
progress p, which lane comes next on this vehicle's route, ...) with the same arithmetic
as the array methods of `LaneTable` and `LaneInfo`; kernels call them inside their loops.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from roadsim._jit import njit

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]

_MIX = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


class LaneArrays(NamedTuple):
    """Per-lane-uid and per-sample arrays (see `LaneInfo` and `LaneTable` for meanings)."""

    # per uid
    s0: FloatArray
    s1: FloatArray
    sign: FloatArray
    length: FloatArray
    road: IntArray
    section: IntArray
    drivable: BoolArray
    junction: IntArray
    speed_limit: FloatArray
    next_ptr: IntArray
    next_idx: IntArray
    next_count: IntArray
    prev_ptr: IntArray
    prev_idx: IntArray
    first_next: IntArray
    first_prev: IntArray
    end_kind: IntArray
    usable: FloatArray
    drop_at: FloatArray
    left_uid: IntArray
    right_uid: IntArray
    # samples (`LaneTable`)
    ptr: IntArray
    samples: IntArray  # samples per uid
    spacing: FloatArray
    x: FloatArray
    y: FloatArray
    t_lo: FloatArray
    t_hi: FloatArray
    dir_x: FloatArray
    dir_y: FloatArray
    curvature: FloatArray
    envelope_sq: FloatArray


# -- progress and road coordinates --------------------------------------------------------------


@njit
def progress(la: LaneArrays, u: int, s: float) -> float:
    """Distance along lane record ``u`` in driving direction at road s (m)."""
    if la.sign[u] >= 0.0:
        return float(s - la.s0[u])
    return float(la.s1[u] - s)


@njit
def road_s(la: LaneArrays, u: int, p: float) -> float:
    """Road s at progress ``p`` on lane record ``u``."""
    if la.sign[u] >= 0.0:
        return float(la.s0[u] + p)
    return float(la.s1[u] - p)


# -- route choice ---------------------------------------------------------------------------------


@njit
def mix_hash(x: np.uint64) -> np.uint64:
    """splitmix64's finaliser (wrapping arithmetic), as `roadsim.world.routing._hash`."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@njit
def choose_next(la: LaneArrays, salt: np.uint64, u: int) -> int:
    """The successor a vehicle with route ``salt`` takes from lane ``u`` (-1: none)."""
    if u < 0:
        return -1
    count = la.next_count[u]
    if count <= 0 or la.next_idx.size == 0:
        return -1
    h = mix_hash(salt ^ (np.uint64(u) * _MIX))
    pick = np.int64(h % np.uint64(count))
    return int(la.next_idx[min(la.next_ptr[u] + pick, la.next_idx.size - 1)])


# -- samples --------------------------------------------------------------------------------------


@njit
def sample_at(la: LaneArrays, u: int, p: float) -> tuple[int, float]:
    """Index of the sample below progress p on lane ``u`` and the next sample's weight."""
    f = max(p, 0.0) / la.spacing[u]
    i = max(min(int(f), la.samples[u] - 2), 0)
    w = min(max(f - i, 0.0), 1.0)
    return int(la.ptr[u] + i), w


@njit
def lerp(values: FloatArray, la: LaneArrays, k: int, w: float, u: int) -> float:
    """``values`` between samples k and k + 1 (k alone at a lane's last sample)."""
    nxt = min(k + 1, la.ptr[u + 1] - 1)
    return float(values[k] + w * (values[nxt] - values[k]))


@njit
def pose(la: LaneArrays, u: int, p: float) -> tuple[float, float, float]:
    """World (x, y, heading) of the centre of lane ``u`` at progress p, facing its
    driving direction."""
    k, w = sample_at(la, u, p)
    dx = lerp(la.dir_x, la, k, w, u)
    dy = lerp(la.dir_y, la, k, w, u)
    return lerp(la.x, la, k, w, u), lerp(la.y, la, k, w, u), math.atan2(dy, dx)


@njit
def bounds(la: LaneArrays, u: int, p: float) -> tuple[float, float]:
    """Boundaries (t_lo, t_hi) of lane ``u`` at progress p, as t on the road."""
    k, w = sample_at(la, u, p)
    return lerp(la.t_lo, la, k, w, u), lerp(la.t_hi, la, k, w, u)


@njit
def signed_curvature(la: LaneArrays, u: int, p: float) -> float:
    """Curvature of lane ``u`` at progress p, positive turning left in driving direction."""
    k, w = sample_at(la, u, p)
    return lerp(la.curvature, la, k, w, u)


@njit
def curve_speed_sq(la: LaneArrays, u: int, p: float) -> float:
    """The squared speed envelope of lane ``u`` at progress p (m^2/s^2)."""
    k, _ = sample_at(la, u, p)
    return float(la.envelope_sq[k])


@njit
def project(la: LaneArrays, u: int, p: float, x: float, y: float) -> tuple[float, float]:
    """Progress and lateral offset (+ left) of the point (x, y) on lane ``u``, from a
    guess p: as `roadsim.world.lane_table.LaneTable.project`."""
    first = la.ptr[u]
    last_seg = max(la.samples[u] - 2, 0)
    end = la.ptr[u + 1] - 1
    k = min(max(int(max(p, 0.0) / la.spacing[u]), 0), last_seg)
    for _ in range(3):
        a = first + k
        b = min(a + 1, end)
        ex, ey = la.x[b] - la.x[a], la.y[b] - la.y[a]
        w = ((x - la.x[a]) * ex + (y - la.y[a]) * ey) / max(ex * ex + ey * ey, 1e-12)
        if w > 1.0 and k < last_seg:
            k += 1
        elif w < 0.0 and k > 0:
            k -= 1
        else:
            break
    a = first + k
    b = min(a + 1, end)
    ex, ey = la.x[b] - la.x[a], la.y[b] - la.y[a]
    norm = max(math.hypot(ex, ey), 1e-9)
    dx, dy = x - la.x[a], y - la.y[a]
    w = (dx * ex + dy * ey) / (norm * norm)
    lateral = (ex * dy - ey * dx) / norm
    return float((k + w) * la.spacing[u]), lateral
