"""The lane tables as one bundle of arrays, and compiled scalar look-ups on them.

`LaneArrays` gathers what `roadsim.world.lane_info.LaneInfo` and its
`roadsim.world.lane_samples.LaneSamples` know per lane uid and per sample into a typed named
tuple of numpy arrays, the form compiled kernels (`roadsim._jit.njit`) accept. The
functions here answer one question for one vehicle (where is the centre of this lane at
progress p, which lane comes next on this vehicle's route, ...) by linear interpolation
between the samples, as `LaneSamples` defines them; kernels call them inside their loops.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from roadsim._jit import PREFETCH_AHEAD, njit, njit_leaf, prefetch
from roadsim._types import FloatArray, IntArray
from roadsim.world.codes import LONG_ROUTE_BIT, ROUTE_BIT

_MIX = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


class LaneArrays(NamedTuple):
    """Per-lane-uid and per-sample arrays (see `LaneInfo` and `LaneSamples` for meanings).

    The per-uid arrays are strided views into two row-major tables (see
    `roadsim.world.lane_info.LaneInfo._bundle`); ``drivable`` is 0 or 1. The stop-line
    columns come from the traffic-light plan's stop lines (`LaneInfo`'s ``stop_lines``).
    """

    # per uid
    length: FloatArray
    sign: FloatArray
    s0: FloatArray
    s1: FloatArray
    spacing: FloatArray  # between two samples
    speed_limit: FloatArray
    usable: FloatArray
    drop_at: FloatArray
    envelope_start: FloatArray  # the speed envelope at the lane's first sample
    stop_p: FloatArray  # progress of the lane's first stop line (inf: none)
    ptr: IntArray  # first sample
    samples: IntArray  # samples per uid
    next_ptr: IntArray
    next_count: IntArray
    prev_ptr: IntArray
    junction: IntArray
    section: IntArray
    end_kind: IntArray
    left_uid: IntArray
    right_uid: IntArray
    drivable: IntArray
    first_next: IntArray
    road: IntArray
    stop_signal: IntArray  # the light governing that stop line (-1: none)
    tight: IntArray  # 1: a turn too tight for long vehicles (`LaneInfo.tight`)
    route_next: IntArray  # the successor the route prefers at a fork (-1: none)
    # CSR columns and samples
    next_idx: IntArray
    prev_idx: IntArray
    sample: FloatArray  # (samples, 8): one row of the columns below per sample


# The columns of `LaneArrays.sample`. One sample is one 64-byte row, a cache line: a
# vehicle's look-ups at samples k and k + 1 read two lines, where eight separate arrays
# would cost up to sixteen (on the 500 km benchmark map, 7 MB of samples and 5 MB of lane
# rows, more than a core's caches).
X, Y, DIR_X, DIR_Y, T_LO, T_HI, CURVATURE, ENVELOPE_SQ = range(8)
SAMPLE_COLUMNS = ("x", "y", "dir_x", "dir_y", "t_lo", "t_hi", "curvature", "envelope_sq")


# -- progress and road coordinates --------------------------------------------------------------


@njit_leaf
def progress(la: LaneArrays, u: int, s: float) -> float:
    """Distance along lane record ``u`` in driving direction at road s (m)."""
    if la.sign[u] >= 0.0:
        return float(s - la.s0[u])
    return float(la.s1[u] - s)


@njit_leaf
def road_s(la: LaneArrays, u: int, p: float) -> float:
    """Road s at progress ``p`` on lane record ``u``."""
    if la.sign[u] >= 0.0:
        return float(la.s0[u] + p)
    return float(la.s1[u] - p)


# -- route choice ---------------------------------------------------------------------------------


@njit_leaf
def mix_hash(x: np.uint64) -> np.uint64:
    """splitmix64's finaliser (wrapping arithmetic): the route hash of `choose_next`."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@njit_leaf
def choose_next(la: LaneArrays, salt: np.uint64, u: int) -> int:
    """The successor a vehicle with route ``salt`` takes from lane ``u`` (-1: none): one
    picked by a hash of the salt and the lane; a vehicle whose salt has the
    `LONG_ROUTE_BIT` set (a long one) passes over the lanes it avoids (``tight``) where
    the fork offers one it avoids less; one whose salt has the `ROUTE_BIT` set (the ego with a
    ``route``) takes the lane's ``route_next`` where it has one."""
    if u < 0:
        return -1
    count = la.next_count[u]
    if count <= 0 or la.next_idx.size == 0:
        return -1
    if count == 1:  # no fork: the successor is in the lane's row, no look-up elsewhere
        return int(la.first_next[u])
    if (salt >> np.uint64(ROUTE_BIT)) & np.uint64(1) and la.route_next[u] >= 0:
        return int(la.route_next[u])
    h = mix_hash(salt ^ (np.uint64(u) * _MIX))
    pick = np.int64(h % np.uint64(count))
    first, last = la.next_ptr[u], la.next_idx.size - 1
    chosen = int(la.next_idx[min(first + pick, last)])
    if (salt >> np.uint64(LONG_ROUTE_BIT)) & np.uint64(1) and la.tight[chosen]:
        # A long vehicle takes the next successor round that it avoids least.
        for step in range(1, count):
            other = int(la.next_idx[min(first + (pick + step) % count, last)])
            if la.tight[other] < la.tight[chosen]:
                chosen = other
    return chosen


# -- samples --------------------------------------------------------------------------------------


@njit_leaf
def sample_at(la: LaneArrays, u: int, p: float) -> tuple[int, float]:
    """Index of the sample below progress p on lane ``u`` and the next sample's weight."""
    f = max(p, 0.0) / la.spacing[u]
    i = max(min(int(f), la.samples[u] - 2), 0)
    w = min(max(f - i, 0.0), 1.0)
    return int(la.ptr[u] + i), w


@njit_leaf
def lerp(la: LaneArrays, column: int, k: int, w: float, u: int) -> float:
    """A sample ``column`` between samples k and k + 1 (k alone at a lane's last sample)."""
    nxt = min(k + 1, la.ptr[u + 1] - 1)
    a = la.sample[k, column]
    return float(a + w * (la.sample[nxt, column] - a))


@njit_leaf
def wrap(angle: float) -> float:
    """``angle`` wrapped to [-pi, pi): itself where it lies there already, which is
    nearly always, without the library call a float ``%`` makes."""
    if -math.pi <= angle < math.pi:
        return angle
    return float((angle + math.pi) % (2.0 * math.pi) - math.pi)


@njit_leaf
def pose(la: LaneArrays, u: int, p: float) -> tuple[float, float, float]:
    """World (x, y, heading) of the centre of lane ``u`` at progress p, facing its
    driving direction."""
    k, w = sample_at(la, u, p)
    dx = lerp(la, DIR_X, k, w, u)
    dy = lerp(la, DIR_Y, k, w, u)
    return lerp(la, X, k, w, u), lerp(la, Y, k, w, u), math.atan2(dy, dx)


@njit_leaf
def centre(la: LaneArrays, u: int, p: float) -> tuple[float, float, float, float]:
    """World (x, y) of the centre of lane ``u`` at progress p, and the unit vector of
    its driving direction there (as `pose`, without the angle)."""
    k, w = sample_at(la, u, p)
    dx = lerp(la, DIR_X, k, w, u)
    dy = lerp(la, DIR_Y, k, w, u)
    norm = math.sqrt(dx * dx + dy * dy)
    return lerp(la, X, k, w, u), lerp(la, Y, k, w, u), dx / norm, dy / norm


@njit_leaf
def direction(la: LaneArrays, u: int, p: float) -> tuple[float, float]:
    """The unit vector of lane ``u``'s driving direction at progress p (as `pose`'s
    angle, without calling the math library for it)."""
    k, w = sample_at(la, u, p)
    dx = lerp(la, DIR_X, k, w, u)
    dy = lerp(la, DIR_Y, k, w, u)
    norm = math.sqrt(dx * dx + dy * dy)
    return dx / norm, dy / norm


@njit_leaf
def progress_per_metre(la: LaneArrays, u: int, p: float) -> float:
    """Metres of progress (road s) per metre driven along lane ``u``'s centre line at
    progress p, at least 1: more than 1 on the inside of a bend that the road's reference
    line takes wider (1.36 m of s a metre on the inside of Town07's 4.5 m corner), where a length along the lane
    spans more progress than it measures."""
    k, _ = sample_at(la, u, p)
    nxt = min(k + 1, la.ptr[u + 1] - 1)
    if nxt == k:
        return 1.0
    dx = la.sample[nxt, X] - la.sample[k, X]
    dy = la.sample[nxt, Y] - la.sample[k, Y]
    driven = math.sqrt(dx * dx + dy * dy)
    return max(1.0, float(la.spacing[u]) / max(driven, 1e-9))


@njit_leaf
def bounds(la: LaneArrays, u: int, p: float) -> tuple[float, float]:
    """Boundaries (t_lo, t_hi) of lane ``u`` at progress p, as t on the road."""
    k, w = sample_at(la, u, p)
    return lerp(la, T_LO, k, w, u), lerp(la, T_HI, k, w, u)


@njit_leaf
def signed_curvature(la: LaneArrays, u: int, p: float) -> float:
    """Curvature of lane ``u`` at progress p, positive turning left in driving direction."""
    k, w = sample_at(la, u, p)
    return lerp(la, CURVATURE, k, w, u)


@njit_leaf
def curve_speed_sq(la: LaneArrays, u: int, p: float) -> float:
    """The squared speed envelope of lane ``u`` at progress p (m^2/s^2)."""
    k, _ = sample_at(la, u, p)
    return float(la.sample[k, ENVELOPE_SQ])


@njit_leaf
def project(la: LaneArrays, u: int, p: float, x: float, y: float) -> tuple[float, float]:
    """Progress and lateral offset (+ left) of the point (x, y) on lane ``u``, from a
    guess p."""
    first = la.ptr[u]
    last_seg = max(la.samples[u] - 2, 0)
    end = la.ptr[u + 1] - 1
    k = min(max(int(max(p, 0.0) / la.spacing[u]), 0), last_seg)
    for _ in range(3):
        a = first + k
        b = min(a + 1, end)
        xa, ya = la.sample[a, X], la.sample[a, Y]
        ex, ey = la.sample[b, X] - xa, la.sample[b, Y] - ya
        w = ((x - xa) * ex + (y - ya) * ey) / max(ex * ex + ey * ey, 1e-12)
        if w > 1.0 and k < last_seg:
            k += 1
        elif w < 0.0 and k > 0:
            k -= 1
        else:
            break
    a = first + k
    b = min(a + 1, end)
    xa, ya = la.sample[a, X], la.sample[a, Y]
    ex, ey = la.sample[b, X] - xa, la.sample[b, Y] - ya
    # (Not math.hypot: a library call, and samples metres apart cannot overflow.)
    norm = max(math.sqrt(ex * ex + ey * ey), 1e-9)
    dx, dy = x - xa, y - ya
    w = (dx * ex + dy * ey) / (norm * norm)
    lateral = (ex * dy - ey * dx) / norm
    return float((k + w) * la.spacing[u]), lateral


@njit_leaf
def over_edge(
    la: LaneArrays, u: int, p: float, lateral: float, x: float, y: float
) -> tuple[int, float, float, float, float]:
    """The neighbour of lane ``u`` on the side of ``lateral`` (+ left) and the point
    (x, y) projected onto it, for a point at progress p on ``u`` that lies over its edge:
    ``(lane, progress, lateral, t_lo, t_hi)``, lane -1 where there is no lane there (the
    caller decides whether the point lies in it). A neighbour of the other direction
    counts progress from the other end."""
    cand = la.left_uid[u] if lateral > 0.0 else la.right_uid[u]
    if cand < 0 or la.sign[cand] == 0.0:
        return -1, 0.0, 0.0, 0.0, 0.0
    q = p if la.sign[cand] == la.sign[u] else la.length[cand] - p
    q2, lat2 = project(la, cand, q, x, y)
    lo2, hi2 = bounds(la, cand, q2)
    return int(cand), q2, lat2, lo2, hi2


@njit
def straight_headings(la: LaneArrays) -> FloatArray:
    """Per lane record u: the angle of its driving
    direction where all its samples have the same direction to the bit (straight lanes,
    nearly all of a grid of streets), NaN elsewhere. At any progress on such a record,
    ``math.atan2`` of `centre`'s direction gives this very angle (the same operations on
    the same numbers), so that a pass may read it instead of calling the library.

    (An array of its own, not a column of `LaneArrays`: one field more there changed how
    LLVM compiled the driver sensor's pass, 0.25 ms slower at 10,000 vehicles.)"""
    sample = la.sample
    n = la.length.shape[0]
    out = np.full(n, np.nan)
    for u in range(n):
        first, stop = la.ptr[u], la.ptr[u + 1]
        if stop <= first:
            continue
        dx, dy = sample[first, DIR_X], sample[first, DIR_Y]
        same = True
        for k in range(first + 1, stop):
            same = same and sample[k, DIR_X] == dx and sample[k, DIR_Y] == dy
        if same:
            norm = math.sqrt(dx * dx + dy * dy)
            out[u] = math.atan2(dy / norm, dx / norm)
    return out


# -- prefetching ---------------------------------------------------------------------------------


@njit_leaf
def prefetch_lane(la: LaneArrays, u: int) -> None:
    """Starts loading lane ``u``'s rows of the two lane tables, two cache lines each
    (`roadsim._jit.prefetch`); nothing for a uid outside the tables."""
    if 0 <= u < la.length.shape[0]:
        prefetch(la.length, u)  # columns 0 to 7 of the float row
        prefetch(la.envelope_start, u)  # columns 8 to 15
        prefetch(la.ptr, u)  # and of the integer row
        prefetch(la.left_uid, u)


@njit_leaf
def prefetch_samples(la: LaneArrays, u: int, s: float, count: int) -> None:
    """Starts loading ``count`` samples of lane ``u`` from the one below road s on (the
    lane's rows should be at hand already: `prefetch_lane`)."""
    if 0 <= u < la.length.shape[0]:
        k, _ = sample_at(la, u, progress(la, u, s))
        for j in range(count):
            prefetch(la.sample, k + j)


@njit_leaf
def prefetch_ahead(
    la: LaneArrays,
    uid: IntArray,
    s: FloatArray,
    rows: IntArray,
    order: IntArray,
    j: int,
    samples: int,
) -> None:
    """For a pass at position j of ``order`` over the vehicles ``rows`` (slots of the
    arrays ``uid`` and ``s``): starts loading the lane rows of the vehicle
    ``2 PREFETCH_AHEAD`` positions on, and ``samples`` samples from the one below the
    vehicle `PREFETCH_AHEAD` positions on, whose lane rows this call made it load
    ``PREFETCH_AHEAD`` rows ago."""
    n = order.shape[0]
    if j + 2 * PREFETCH_AHEAD < n:
        prefetch_lane(la, uid[rows[order[j + 2 * PREFETCH_AHEAD]]])
    if j + PREFETCH_AHEAD < n:
        k = rows[order[j + PREFETCH_AHEAD]]
        prefetch_samples(la, uid[k], s[k], samples)


# -- visiting order -------------------------------------------------------------------------------


@njit
def by_lane(uid: IntArray, lanes: int) -> IntArray:
    """The indices of ``uid`` ordered by lane (a stable counting sort; uids outside
    [0, lanes) first).

    Kernels that visit vehicles in this order (and write their results by index) read
    neighbouring rows of the lane tables for neighbours on the map (then 27 MB on the
    500 km benchmark map): four times faster than visiting them in a random order of
    slots. The simulation sorts its traffic's slots with it every few ticks
    (`roadsim.sim.simulation`), so that its passes can visit them in slot order.
    """
    bucket = np.empty(uid.size, dtype=np.int64)
    ptr = np.zeros(lanes + 2, dtype=np.int64)
    for k in range(uid.size):
        bucket[k] = uid[k] + 1 if 0 <= uid[k] < lanes else 0
        ptr[bucket[k] + 1] += 1
    for b in range(lanes + 1):
        ptr[b + 1] += ptr[b]
    order = np.empty(uid.size, dtype=np.int64)
    for k in range(uid.size):
        order[ptr[bucket[k]]] = k
        ptr[bucket[k]] += 1
    return order
