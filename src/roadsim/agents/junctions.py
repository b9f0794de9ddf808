"""Junctions: which connecting lanes conflict, and who may enter.

Two connecting lanes of a junction conflict when their centre lines cross or come within a
car's width of each other, or when they lead into the same lane (a merge). Lanes that leave
the same lane share their start, so only later contact counts for them.

Entry is first come, first served: a vehicle close to a connecting lane enters only if no
conflicting lane is held; a lane is held while a vehicle is on it or has been let in to it.
Candidates are served in order of their distance to the entry (then slot), so the outcome
is deterministic.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from roadsim._jit import njit, njit_leaf, njit_loop
from roadsim.sensors.occupancy import LaneOccupancy, rearmost
from roadsim.world.lane_kernels import LaneArrays, choose_next
from roadsim.world.routing import LaneInfo

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
UIntArray = npt.NDArray[np.uint64]

YIELD_RANGE = 40.0  # m before a junction entry where a vehicle asks to enter, at least
_CONTACT = 3.0  # m: centre lines closer than this conflict
_CONTACT_ANGLED = 4.5  # m: ... or closer than this at an angle
_ANGLE_DEG = 20.0
SHORT_LINK = 10.0  # m: a road this short between two junctions joins them into one box
GRANT_TIMEOUT = 8.0  # s a vehicle may hold a promised path without entering
SETBACK = 3.0  # m: a vehicle told to wait stops this far before the entry (and IDM's gap)
LONG_VEHICLE = 8.0  # m: vehicles at least this long use the wider conflicts
LONG_SWEEP = 2.0  # m added to the contact distances for long vehicles
_MAX_PIECES = 40  # lanes one path through a junction may have, at most
_EXIT_MARGIN = 2.0  # m of room beyond its length a vehicle needs after a junction
_MOVING = 2.0  # m/s: traffic after the junction at this speed will make room
_SHARED_START = 4.0  # m: lanes leaving the same lane may touch over their first metres


class JunctionGate:
    """Grants entry to junction lanes; keeps who has been let in between ticks."""

    def __init__(self, info: LaneInfo) -> None:
        self.info = info
        self.boxed = _boxed(info)
        self.conflicts = junction_conflicts(info, 0.0)
        self.conflicts_long = junction_conflicts(info, LONG_SWEEP)
        self.granted: BoolArray = np.zeros(0, dtype=bool)
        self.grant_age: FloatArray = np.zeros(0)
        self._position: IntArray = np.full(info.n, -1, dtype=np.int64)  # scratch of `serve`

    def resize(self, capacity: int) -> None:
        grown = np.zeros(capacity, dtype=bool)
        grown[: self.granted.size] = self.granted
        self.granted = grown
        age = np.zeros(capacity)
        age[: self.grant_age.size] = self.grant_age
        self.grant_age = age

    def gaps(
        self,
        me: IntArray,
        lanes: IntArray,
        start: FloatArray,
        entry_hop: IntArray,
        wants_in: BoolArray,
        occ: LaneOccupancy,
        half_length: FloatArray,
        salt: UIntArray,
        speed_all: FloatArray,
        dt: float,
    ) -> FloatArray:
        """Gap to the entry of a junction lane each vehicle may not enter yet (inf: free).

        Args:
            me: Vehicle slots, shape (N,), each once.
            lanes: The vehicle's lane and the next lanes of its route, shape (N, H).
            start: Distance from the vehicle's front bumper to the start of each of
                ``lanes`` (m), shape (N, H).
            entry_hop, wants_in: `next_entry` of each vehicle: the index in ``lanes``
                of the connecting lane of its next junction entry (0: none), and whether
                it asks to enter it this tick.
            occ: This tick's lane occupancy: every actor on a connecting lane holds it.
            half_length: Half the length of every actor, by slot. A vehicle is let in
                only if the lane after the junction has room for it (or its traffic
                moves), so that a queue does not block the junction; long vehicles
                sweep wider in turns and use the wider conflicts.
            salt: Route salts, by slot.
            speed_all: Speed of every actor, by slot: a vehicle may also go when the
                traffic in the lane after the junction moves.
            dt: The time step (s).
        """
        out = np.full(me.size, np.inf)
        if self.conflicts is None or self.conflicts_long is None:
            return out
        conf, wide = self.conflicts, self.conflicts_long
        _gaps(
            self.info.arrays, occ, self.boxed, self.granted, self.grant_age, me, lanes, start,
            entry_hop, wants_in, half_length, salt, speed_all, dt, conf.ptr, conf.idx,
            wide.ptr, wide.idx, self._position, out,
        )  # fmt: skip
        return out


@njit
def _gaps(
    la: LaneArrays,
    occ: LaneOccupancy,
    boxed: BoolArray,
    granted: BoolArray,
    grant_age: FloatArray,
    me: IntArray,
    lanes: IntArray,
    start: FloatArray,
    entry_hop: IntArray,
    wants_in: BoolArray,
    half_length: FloatArray,
    salt: UIntArray,
    speed_all: FloatArray,
    dt: float,
    near_ptr: IntArray,
    near_idx: IntArray,
    wide_ptr: IntArray,
    wide_idx: IntArray,
    position: IntArray,
    out: FloatArray,
) -> None:
    """`JunctionGate.gaps` in one compiled call (``out``: inf on entry): who asks, which
    lanes are held, what each candidate needs, and who is served."""
    asking = np.empty(me.size, dtype=np.bool_)
    ask(granted, grant_age, me, start, entry_hop, wants_in, dt, out, asking)
    held = np.zeros(la.length.shape[0], dtype=np.bool_)
    held_long = np.zeros(la.length.shape[0], dtype=np.bool_)
    path = np.empty(_MAX_PIECES + 1, dtype=np.int64)
    hold(
        la, occ, boxed, granted, me, lanes, entry_hop, asking, half_length, salt, held,
        held_long, path,
    )  # fmt: skip
    cand = np.flatnonzero(asking & ~granted[me])
    m = cand.size
    if m == 0:
        return
    entry, slots = np.empty(m), np.empty(m, dtype=np.int64)
    for c in range(m):
        entry[c] = start[cand[c], entry_hop[cand[c]]]
        slots[c] = me[cand[c]]
    is_long, fits = np.empty(m, dtype=np.bool_), np.empty(m, dtype=np.bool_)
    need_ptr = np.zeros(m + 1, dtype=np.int64)
    need = np.empty(m * (_MAX_PIECES + 1), dtype=np.int64)
    request(
        la, occ, boxed, me, cand, lanes, entry_hop, half_length, salt, speed_all, is_long,
        fits, need_ptr, need, path,
    )  # fmt: skip
    grant = fits.copy()
    any_long = bool(is_long.any() or held_long.any())
    serve(
        need_ptr, need, entry, slots, is_long, held, held_long, near_ptr, near_idx, wide_ptr,
        wide_idx, position, grant, any_long,
    )  # fmt: skip
    for c in range(m):
        if grant[c]:
            granted[slots[c]] = True
        else:
            out[cand[c]] = entry[c] - SETBACK


@njit_leaf
def path_through(
    la: LaneArrays, boxed: BoolArray, first: int, salt: np.uint64, out: IntArray
) -> tuple[int, int]:
    """A vehicle's path through a junction: its connecting lane ``first`` and the lanes
    after it along its route while they belong to the box (connecting roads may come in
    pieces, and some maps join one junction straight to the next).

    Writes the path into ``out`` (at most `_MAX_PIECES` + 1 lanes) and returns
    ``(length, after)``: how many lanes it has, and the lane it leads into (-1: none).
    """
    out[0] = first
    count, cur = 1, first
    for _ in range(_MAX_PIECES):
        nxt = choose_next(la, salt, cur)
        if nxt < 0 or not boxed[nxt]:
            return count, nxt
        out[count] = nxt
        count += 1
        cur = nxt
    return count, -1


@njit_leaf
def next_entry(
    boxed: BoolArray,
    lanes: IntArray,
    start: FloatArray,
    i: int,
    stop_distance: float,
    leader_gap: float,
    ahead_goes: bool,
    stop_before: float,
) -> tuple[int, bool]:
    """Row i's next junction entry and whether it asks to enter it this tick, before its
    promises (`ask`): ``(hop, wants_in)``, hop the index in ``lanes[i]`` of the
    connecting lane it asks for (0: none). `perceive` calls it for each vehicle, from
    what the vehicle saw:

    - ``stop_distance``: the distance it needs to stop comfortably (m); a vehicle asks
      to enter from a little further than that.
    - ``leader_gap``: the gap to the vehicle ahead (m), and ``ahead_goes``: whether
      that one has been let in or is in a junction. A vehicle asks only if it is the
      first before the entry, or the one ahead of it goes: one behind a vehicle that
      waits holds nothing (no deadlock), and one that follows a vehicle in asks early
      enough to stop if refused.
    - ``stop_before``: the distance to where it must stop anyway (a red light); a
      vehicle that must stop before the entry does not ask either.
    """
    # The next entry: a connecting lane after an ordinary one (a vehicle in a junction
    # asks for the next junction too, when a short road leads to it).
    hop = 0
    for h in range(1, lanes.shape[1]):
        if lanes[i, h] < 0:
            break
        if boxed[lanes[i, h]] and not boxed[lanes[i, h - 1]]:
            hop = h
            break
    entry = start[i, hop]
    ask_range = max(YIELD_RANGE, stop_distance + 15.0)
    asks = (
        hop > 0 and entry < ask_range and (leader_gap > entry or ahead_goes) and stop_before > entry
    )
    return hop, asks


@njit_loop
def ask(
    granted: BoolArray,
    grant_age: FloatArray,
    me: IntArray,
    start: FloatArray,
    entry_hop: IntArray,
    wants_in: BoolArray,
    dt: float,
    out: FloatArray,
    asking: BoolArray,
) -> None:
    """Which vehicles ask to enter a junction this tick (``asking``): those that want to
    (`next_entry`) and whose promise, if any, has not run out. Withdraws the promises of
    vehicles that no longer ask and of those that kept one too long (they wait:
    ``out``). ``granted`` and ``grant_age`` are by slot."""
    for i in range(me.size):
        k = me[i]
        asks = wants_in[i]
        if not asks:
            granted[k] = False
        # A promise not used for `GRANT_TIMEOUT` seconds (the vehicle is stuck behind
        # others) is withdrawn, so that it cannot hold crossing traffic forever.
        grant_age[k] = grant_age[k] + dt if granted[k] and asks else 0.0
        if asks and grant_age[k] > GRANT_TIMEOUT:
            granted[k] = False
            grant_age[k] = 0.0
            out[i] = start[i, entry_hop[i]] - SETBACK  # it waits, and asks again next tick
            asks = False
        asking[i] = asks


@njit_loop
def hold(
    la: LaneArrays,
    occ: LaneOccupancy,
    boxed: BoolArray,
    granted: BoolArray,
    me: IntArray,
    lanes: IntArray,
    entry_hop: IntArray,
    asking: BoolArray,
    half_length: FloatArray,
    salt: UIntArray,
    held: BoolArray,
    held_long: BoolArray,
    path: IntArray,
) -> None:
    """Marks the held lanes (``held``, and ``held_long`` for long vehicles): every
    connecting lane with an actor on it, the paths of vehicles inside, and the paths of
    vehicles let in."""
    for e in range(occ.uid.size):
        if boxed[occ.uid[e]]:
            held[occ.uid[e]] = True
            if 2.0 * half_length[occ.slot[e]] >= LONG_VEHICLE:
                held_long[occ.uid[e]] = True
    for i in range(me.size):
        k = me[i]
        for hop in (0, entry_hop[i]):
            if hop == 0 and not boxed[lanes[i, 0]]:
                continue  # not inside a junction
            if hop > 0 and not (asking[i] and granted[k]):
                continue  # not let in to the next one
            count, _ = path_through(la, boxed, lanes[i, hop], salt[k], path)
            for j in range(count):
                held[path[j]] = True
                if 2.0 * half_length[k] >= LONG_VEHICLE:
                    held_long[path[j]] = True


@njit_loop
def request(
    la: LaneArrays,
    occ: LaneOccupancy,
    boxed: BoolArray,
    me: IntArray,
    cand: IntArray,
    lanes: IntArray,
    entry_hop: IntArray,
    half_length: FloatArray,
    salt: UIntArray,
    speed: FloatArray,
    is_long: BoolArray,
    fits: BoolArray,
    need_ptr: IntArray,
    need: IntArray,
    path: IntArray,
) -> None:
    """For each candidate row ``cand[c]``: the lanes its path needs
    (``need[need_ptr[c]:need_ptr[c + 1]]``), whether it is long, and whether the lane its
    path leads into has room for it or moving traffic (``fits``), so that a queue does
    not block the junction."""
    for c in range(cand.size):
        i = cand[c]
        k = me[i]
        length = 2.0 * half_length[k]
        is_long[c] = length >= LONG_VEHICLE
        count, after = path_through(la, boxed, lanes[i, entry_hop[i]], salt[k], path)
        for j in range(count):
            need[need_ptr[c] + j] = path[j]
        need_ptr[c + 1] = need_ptr[c] + count
        first = rearmost(occ, after)
        fits[c] = (
            first < 0
            or occ.p[first] - half_length[occ.slot[first]] > length + _EXIT_MARGIN
            or speed[occ.slot[first]] > _MOVING
        )


@njit_leaf
def _before(entry: FloatArray, slots: IntArray, a: int, b: int) -> bool:
    """Whether request a comes before request b: first come (nearest the entry), then
    the lower slot."""
    return bool(entry[a] < entry[b] or (entry[a] == entry[b] and slots[a] < slots[b]))


@njit_loop
def serve(
    need_ptr: IntArray,
    need: IntArray,
    entry: FloatArray,
    slots: IntArray,
    is_long: BoolArray,
    held: BoolArray,
    held_long: BoolArray,
    near_ptr: IntArray,
    near_idx: IntArray,
    wide_ptr: IntArray,
    wide_idx: IntArray,
    position: IntArray,
    grant: BoolArray,
    any_long: bool,
) -> None:
    """Which requests are granted this tick, first come first served (`_before`: by
    ``entry``, the distance to the entry, then by slot): clears ``grant[c]`` (set where
    the lane after the junction has room) of those refused.

    Request c needs the lanes ``need[need_ptr[c]:need_ptr[c + 1]]``. It is refused when a
    lane conflicting with one it needs is held, or when an earlier request of this tick
    needs the same lane or a conflicting one (that one may itself be refused: it is then
    served next tick, a 50 ms delay). Long vehicles use the wide conflicts, against held
    lanes and against other requests alike (``any_long``: a request is long or a lane is
    held by a long vehicle). ``position`` is scratch space by lane, -1 throughout on entry
    and on return.
    """
    m = entry.size
    for c in range(m):  # lane -> the earliest request needing it
        for j in range(need_ptr[c], need_ptr[c + 1]):
            lane = need[j]
            if position[lane] < 0 or _before(entry, slots, c, position[lane]):
                position[lane] = c
    for c in range(m):
        # (A request refused already, for want of room after the junction, stays so.)
        if grant[c] and _refused(
            c, need_ptr, need, entry, slots, is_long, held, held_long, near_ptr, near_idx,
            wide_ptr, wide_idx, position, any_long,
        ):  # fmt: skip
            grant[c] = False
    for j in range(need_ptr[m]):
        position[need[j]] = -1


@njit_leaf
def _refused(
    c: int,
    need_ptr: IntArray,
    need: IntArray,
    entry: FloatArray,
    slots: IntArray,
    is_long: BoolArray,
    held: BoolArray,
    held_long: BoolArray,
    near_ptr: IntArray,
    near_idx: IntArray,
    wide_ptr: IntArray,
    wide_idx: IntArray,
    position: IntArray,
    any_long: bool,
) -> bool:
    """Whether `serve` refuses request c (``position``: the earliest request needing each
    lane); it stops at the first reason."""
    for j in range(need_ptr[c], need_ptr[c + 1]):
        lane = need[j]
        if position[lane] != c:
            return True
        for q in range(near_ptr[lane], near_ptr[lane + 1]):
            other_lane = near_idx[q]
            if held[other_lane] and not is_long[c]:
                return True
            other = position[other_lane]
            if other >= 0 and other != c and _before(entry, slots, other, c):
                return True
        if not any_long:
            continue  # the wide conflicts concern long vehicles only
        for q in range(wide_ptr[lane], wide_ptr[lane + 1]):
            other_lane = wide_idx[q]
            if held_long[other_lane] or (held[other_lane] and is_long[c]):
                return True
            other = position[other_lane]
            if (
                other >= 0
                and other != c
                and (is_long[c] or is_long[other])
                and _before(entry, slots, other, c)
            ):
                return True
    return False


def _boxed(info: LaneInfo) -> BoolArray:
    """Lanes that belong to a junction's box: connecting lanes, and ordinary lanes shorter
    than `SHORT_LINK` that lead from one junction straight into another (two junctions so
    close together work as one: nobody may stop in between)."""
    inside = info.junction >= 0
    boxed = inside.copy()
    before, after = info.first_prev, info.first_next
    link = ~inside & (info.length < SHORT_LINK) & (before >= 0) & (after >= 0)
    link &= inside[np.maximum(before, 0)] & inside[np.maximum(after, 0)]
    boxed[link] = True
    return boxed


class Conflicts:
    """A symmetric lane-to-lane relation in CSR form: lane u relates to idx[ptr[u]:ptr[u + 1]]."""

    def __init__(self, n: int, row: IntArray, col: IntArray) -> None:
        order = np.lexsort((col, row))
        self.ptr: IntArray = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=n), out=self.ptr[1:])
        self.idx: IntArray = col[order].astype(np.int64)


def junction_conflicts(info: LaneInfo, sweep: float) -> Conflicts | None:
    """Which connecting lanes conflict (symmetric, by lane uid), in any junction.

    Two lanes conflict when they lead into the same lane (a merge), or when their centre
    lines come closer than `_CONTACT` metres, or closer than `_CONTACT_ANGLED` metres at
    an angle of more than `_ANGLE_DEG` degrees; ``sweep`` metres are added to both
    distances for vehicles that sweep wider. Lanes that leave the same lane share their
    first metres, and consecutive pieces of one connecting road touch end to start:
    neither counts. Lanes of different junctions conflict too where junctions overlap.
    """
    table = info.table
    lanes = np.flatnonzero((info.junction >= 0) & info.drivable)
    if lanes.size == 0:
        return None
    first, count = table.ptr[lanes], table.ptr[lanes + 1] - table.ptr[lanes]
    sample = np.arange(first.size).repeat(count)
    offset = np.arange(sample.size) - np.repeat(np.cumsum(count) - count, count)
    index = first[sample] + offset
    owner = lanes[sample]
    along = offset * table.spacing[owner]
    x, y = table.x[index], table.y[index]
    reach = _CONTACT_ANGLED + sweep
    pairs = cKDTree(np.column_stack((x, y))).query_pairs(reach, output_type="ndarray")
    i, j = pairs[:, 0], pairs[:, 1]
    la, lb = owner[i], owner[j]
    dist = np.hypot(x[i] - x[j], y[i] - y[j])
    cos = (
        table.dir_x[index[i]] * table.dir_x[index[j]]
        + table.dir_y[index[i]] * table.dir_y[index[j]]
    )
    touch = (la != lb) & (
        (dist < _CONTACT + sweep) | (np.abs(cos) < np.cos(np.radians(_ANGLE_DEG)))
    )
    before, after = info.first_prev, info.first_next
    shared_start = (before[la] >= 0) & (before[la] == before[lb])
    shared_start &= (along[i] < _SHARED_START) & (along[j] < _SHARED_START)
    consecutive = (after[la] == lb) | (after[lb] == la)
    touch &= ~shared_start & ~consecutive
    # Merges: connecting lanes that lead into the same lane.
    into = after[lanes]
    order = np.argsort(into, kind="stable")
    ends, ordered = into[order], lanes[order]
    ma, mb = [], []
    for k in range(1, lanes.size):
        same = (ends[k:] == ends[:-k]) & (ends[k:] >= 0)
        if not same.any():
            break
        ma.append(ordered[:-k][same])
        mb.append(ordered[k:][same])
    row = np.concatenate([la[touch], lb[touch], *ma, *mb])
    col = np.concatenate([lb[touch], la[touch], *mb, *ma])
    key = np.unique(row * info.n + col)
    return Conflicts(info.n, key // info.n, key % info.n)
