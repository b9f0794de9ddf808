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

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from roadsim._jit import (
    chunk,
    chunks_for,
    njit_leaf,
    njit_loop,
    njit_rows,
    njit_split,
    share,
    split_from,
)
from roadsim._types import BoolArray, FloatArray, IntArray, UIntArray
from roadsim.sensors.occupancy import LaneOccupancy
from roadsim.world.codes import LONG_LINK, LONG_ROUTE_BIT, LONG_VEHICLE, ROUTE_BIT
from roadsim.world.lane_kernels import LaneArrays, choose_next

if TYPE_CHECKING:  # (annotations only: kernels are cached by what their module imports)
    from roadsim.world.lane_info import LaneInfo


YIELD_RANGE = 40.0  # m before a junction entry where a vehicle asks to enter, at least
_CONTACT = 3.0  # m: centre lines closer than this conflict
_CONTACT_ANGLED = 4.5  # m: ... or closer than this at an angle
_ANGLE_DEG = 20.0
SHORT_LINK = 10.0  # m: a road this short between two junctions joins them into one box
GRANT_TIMEOUT = 8.0  # s a vehicle may hold a promised path without entering
_WITHDRAW_DECEL = 3.0  # m/s^2: ... unless it could not stop before the entry braking so
REROUTE_AFTER = 5.0  # s a vehicle refused at a junction's entry waits before it reroutes
_AT_ENTRY = 5.0  # m: a vehicle this close to where it waits for an entry is waiting there
_WAITED_AHEAD = 5.0  # m: each second waited there counts as this much nearer the entry
STARVED_AFTER = 30.0  # s waited there after which a vehicle keeps its place without room
_KEPT_BITS = np.uint64((1 << LONG_ROUTE_BIT) | (1 << ROUTE_BIT))  # not stirred by `rerouted`
_STIR, _STIR_ADD = np.uint64(6364136223846793005), np.uint64(1442695040888963407)
_REROUTE_TRIES = 8  # stirs of a rerouted salt, at most, to leave its fork another way
SETBACK = 3.0  # m: a vehicle told to wait stops this far before the entry (and IDM's gap),
# or further where long vehicles sweep over the entry's mouth (`entry_setbacks`)
LONG_SWEEP = 2.0  # m added to the contact distances for long vehicles
SWEEP_LENGTH, SWEEP_WIDTH = 12.0, 2.55  # m: the longest vehicle entries keep clear of
SWEEP_WHEELBASE = 6.5  # m: its wheelbase
SWEEP_LAG = 9.0  # m: how far back along its path a long vehicle's body still turns
MAX_SETBACK = 12.0  # m: a vehicle told to wait stops at most this far before the entry
_BEYOND_SETBACK = 4.0  # m: ... also where long vehicles sweep up to this much further back
_STRAIGHTENING = 3.0  # wheelbases over which a long vehicle's body straightens after a turn
_TURNING = 1.0 / 60.0  # 1/m: connecting lanes that curve more than this are turns
_MAX_PIECES = 40  # lanes one path through a junction may have, at most
_EXIT_MARGIN = 2.0  # m of room beyond its length a vehicle needs after a junction
# (IDM's 2 m gap to the vehicle ahead when standing)
_ROOM_LANES = 4  # lanes after a junction looked at for room, at most
_SHARED_START = 4.0  # m: lanes leaving the same lane may touch over their first metres


class JunctionGate:
    """Grants entry to junction lanes; keeps who has been let in between ticks."""

    def __init__(self, info: LaneInfo) -> None:
        self.info = info
        self.boxed = _boxed(info, SHORT_LINK)
        #: How far before each lane's end a vehicle waits (`SETBACK`, or with
        #: `keep_clear_of_long_vehicles` more where long vehicles sweep in turns).
        self.setback: FloatArray = np.full(info.n, SETBACK)
        #: Where a long vehicle on each lane would stop before a narrow passage now
        #: (progress, m; inf: nowhere), which the traffic model sets each tick
        #: (`roadsim.agents.passages.PassageGate.stops`).
        self.long_stop: FloatArray = np.full(info.n, np.inf)
        self.conflicts = junction_conflicts(info, 0.0)
        self.conflicts_long = junction_conflicts(info, LONG_SWEEP)
        conf, wide = self.conflicts, self.conflicts_long
        self._conflicting = (
            None
            if conf is None or wide is None
            else Conflicting(conf.ptr, conf.idx, wide.ptr, wide.idx)
        )
        self.granted: BoolArray = np.zeros(0, dtype=bool)
        #: The connecting lane each promise (``granted``) was given for, by slot.
        self.grant_lane: IntArray = np.zeros(0, dtype=np.int64)
        self.grant_age: FloatArray = np.zeros(0)
        #: How long each vehicle (by slot) has been refused at the entry it waits at (s).
        self.wait_age: FloatArray = np.zeros(0)
        self._position: IntArray = np.full(info.n, -1, dtype=np.int64)  # scratch of `serve`

    def keep_clear_of_long_vehicles(self, reach: BoolArray) -> None:
        """Makes vehicles wait clear of the turns long vehicles take (`entry_setbacks`):
        for a simulation that has trucks or buses (elsewhere the room is better used by
        the queues).

        Long vehicles keep off the links between junctions with no room for them to wait
        on (`roadsim.world.codes.LONG_LINK`) where they can. Where one cannot (such a link
        is its only way on), the junctions the link joins work as one box, so that it is
        let in through both at once: such links in ``reach`` (by uid, the lanes long
        vehicles may come to, `LaneInfo.reach_of_long`) join their junctions. Joining
        them all, for everyone, locked Town07's queues of cars."""
        self.setback = entry_setbacks(self.info)
        self.boxed = _boxed(self.info, SHORT_LINK) | (self.info.links_shorter(LONG_LINK) & reach)

    def resize(self, capacity: int) -> None:
        grown = np.zeros(capacity, dtype=bool)
        grown[: self.granted.size] = self.granted
        self.granted = grown
        lane = np.full(capacity, -1, dtype=np.int64)
        lane[: self.grant_lane.size] = self.grant_lane
        self.grant_lane = lane
        age = np.zeros(capacity)
        age[: self.grant_age.size] = self.grant_age
        self.grant_age = age
        wait = np.zeros(capacity)
        wait[: self.wait_age.size] = self.wait_age
        self.wait_age = wait

    def gaps(
        self,
        me: IntArray,
        lanes: IntArray,
        start: FloatArray,
        entry_hop: IntArray,
        wants_in: BoolArray,
        occ: LaneOccupancy,
        half_length: FloatArray,
        speed: FloatArray,
        salt: UIntArray,
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
                only if the lanes after the junction have room for it (`room_after`),
                so that a queue does not block the junction; long vehicles
                sweep wider in turns and use the wider conflicts.
            speed: The speed of every actor, by slot (m/s).
            salt: Route salts, by slot. A vehicle refused at an entry for
                `REROUTE_AFTER` seconds is given a new one (`rerouted`), unless it is
                starved (`STARVED_AFTER`) and has room after the junction.
            dt: The time step (s).
        """
        out = np.full(me.size, np.inf)
        if self._conflicting is None:
            return out
        _gaps(
            self.info.arrays, occ, self.boxed, self.setback, self.long_stop, self.granted,
            self.grant_lane, self.grant_age, self.wait_age, me, lanes, start, entry_hop, wants_in,
            half_length,
            speed, salt, dt, self._conflicting, self._position, out, chunks_for(me.size), split_from(),
        )  # fmt: skip
        return out


@njit_split
def _gaps(
    la: LaneArrays,
    occ: LaneOccupancy,
    boxed: BoolArray,
    setback: FloatArray,
    long_stop: FloatArray,
    granted: BoolArray,
    grant_lane: IntArray,
    grant_age: FloatArray,
    wait_age: FloatArray,
    me: IntArray,
    lanes: IntArray,
    start: FloatArray,
    entry_hop: IntArray,
    wants_in: BoolArray,
    half_length: FloatArray,
    speed: FloatArray,
    salt: UIntArray,
    dt: float,
    conflicts: Conflicting,
    position: IntArray,
    out: FloatArray,
    chunks: int,
    split_requests: int,
) -> None:
    """`JunctionGate.gaps` in one compiled call (``out``: inf on entry): who asks, which
    lanes are held, what each candidate needs, and who is served.

    The passes over vehicles and over requests split their rows over the threads, and
    only the order of the requests (`_first_requests`) is one loop."""
    lane_count = la.length.shape[0]
    asking = np.empty(me.size, dtype=np.bool_)
    held = np.zeros(lane_count, dtype=np.bool_)
    held_long = np.zeros(lane_count, dtype=np.bool_)
    path = np.empty((chunks, _MAX_PIECES + 1), dtype=np.int64)
    ask_hold(
        chunks, la, occ, boxed, setback, granted, grant_lane, grant_age, wait_age, me, lanes,
        start, entry_hop, wants_in, dt, half_length, speed, salt, out, asking, held, held_long,
        path,
        np.arange(me.size),
    )  # fmt: skip
    # Room promised after the junction: to vehicles inside it and those let in.
    incoming = np.zeros(lane_count)
    long_in = np.zeros(lane_count, dtype=np.bool_)
    _incoming(
        la, boxed, granted, me, lanes, entry_hop, asking, half_length, salt, path[0], incoming,
        long_in,
    )  # fmt: skip
    # The candidates: vehicles that ask and have no promise yet.
    m = 0
    for i in range(me.size):
        if asking[i] and not granted[me[i]]:
            m += 1
    if m == 0:
        return
    cand = np.empty(m, dtype=np.int64)
    m = 0
    for i in range(me.size):
        if asking[i] and not granted[me[i]]:
            cand[m] = i
            m += 1
    entry, rank, slots = np.empty(m), np.empty(m), np.empty(m, dtype=np.int64)
    starved = np.empty(m, dtype=np.bool_)
    for c in range(m):
        # How far each is from where it waits (the entry's setback before it): first
        # come, first served, whatever the setback of its lane; who has waited there
        # comes before who approaches.
        i = cand[c]
        entry[c] = start[i, entry_hop[i]] - setback[lanes[i, entry_hop[i] - 1]]
        slots[c] = me[i]
        rank[c] = entry[c] - _WAITED_AHEAD * wait_age[me[i]]
        starved[c] = entry[c] < _AT_ENTRY and wait_age[me[i]] >= STARVED_AFTER
    requests = Requests(
        start=np.empty(m, dtype=np.int64),
        end=np.empty(m, dtype=np.int64),
        lane=np.empty(m * (_MAX_PIECES + 1), dtype=np.int64),
        rank=rank,
        slot=slots,
        is_long=np.empty(m, dtype=np.bool_),
        after=np.empty(m, dtype=np.int64),
        starved=starved,
    )
    grant = np.empty(m, dtype=np.bool_)
    few = chunks if m >= split_requests else 1
    request(
        few, la, occ, boxed, setback, long_stop, me, cand, lanes, entry_hop, half_length, salt,
        incoming, long_in, requests, grant, path,
    )  # fmt: skip
    _keep_room(requests, entry, grant, position)
    roomy = grant.copy()  # (which requests have room after the junction)
    any_long = bool(requests.is_long.any() or held_long.any())
    _first_requests(requests, grant, position)
    kept = np.full(lane_count if starved.any() else 0, -1, dtype=np.int64)
    if kept.size > 0:
        _keep_paths(requests, grant, kept)
    serve(few, requests, held, held_long, conflicts, position, kept, any_long, grant)
    for c in range(m):
        for j in range(requests.start[c], requests.end[c]):
            position[requests.lane[j]] = -1
    for c in range(m):
        k = slots[c]
        if grant[c]:
            granted[k] = True
            grant_lane[k] = lanes[cand[c], entry_hop[cand[c]]]
            wait_age[k] = 0.0
            continue
        out[cand[c]] = entry[c]
        # A vehicle refused at the entry for `REROUTE_AFTER` seconds, and again every
        # `REROUTE_AFTER` seconds it goes on waiting, takes another way: a new route salt
        # (the ego's route is kept). Queues that wait for each other's room in a ring of
        # short streets would otherwise stand for ever. A starved one refused for
        # crossing traffic only keeps its way, where it comes first: on a new way it
        # would find others let in across it (on Town07 a car went round three ways for
        # 70 s, each time finding the vehicles let in while it had waited for the last one
        # across the next).
        if entry[c] < _AT_ENTRY:
            wait_age[k] += dt
            if not (roomy[c] and starved[c]) and wait_age[k] % REROUTE_AFTER < dt <= wait_age[k]:
                i = cand[c]
                fork, taken = lanes[i, entry_hop[i] - 1], lanes[i, entry_hop[i]]
                salt[k] = rerouted(la, salt[k], fork, taken)


@njit_leaf
def rerouted(la: LaneArrays, salt: np.uint64, fork: int, taken: int) -> np.uint64:
    """The route salt of a vehicle that takes another way (`REROUTE_AFTER`) than lane
    ``taken`` after lane ``fork``: the route bits stirred by a multiplicative hash until
    the route leaves ``fork`` by another lane, where ``fork`` has one (a few tries), the
    `LONG_ROUTE_BIT` kept. The vehicle with the `ROUTE_BIT` (the ego's route) keeps its
    salt."""
    if (salt >> np.uint64(ROUTE_BIT)) & np.uint64(1):
        return salt
    kept = salt & _KEPT_BITS
    for _ in range(_REROUTE_TRIES):
        salt = ((salt * _STIR + _STIR_ADD) & ~_KEPT_BITS) | kept
        if choose_next(la, salt, fork) != taken:
            break
    return salt


@njit_loop
def _incoming(
    la: LaneArrays,
    boxed: BoolArray,
    granted: BoolArray,
    me: IntArray,
    lanes: IntArray,
    entry_hop: IntArray,
    asking: BoolArray,
    half_length: FloatArray,
    salt: UIntArray,
    path: IntArray,
    incoming: FloatArray,
    long_in: BoolArray,
) -> None:
    """Adds to ``incoming`` (by lane) the room each vehicle inside a junction, or let in
    to one, will take in the lane its path leads into: its length and `_EXIT_MARGIN`;
    marks in ``long_in`` the lanes a long vehicle comes into so.

    A request's room after the junction is what that lane has free less what is promised
    already, so that vehicles following each other through one connecting lane (which
    never conflicts with itself) do not fill a short lane and leave the last one standing
    in the junction, across the paths of others. One loop: few vehicles are in a box."""
    for i in range(me.size):
        if boxed[lanes[i, 0]]:
            hop = 0
        elif asking[i] and granted[me[i]]:
            hop = entry_hop[i]
        else:
            continue
        _, after = path_through(la, boxed, lanes[i, hop], salt[me[i]], path)
        if after >= 0:
            incoming[after] += 2.0 * half_length[me[i]] + _EXIT_MARGIN
            long_in[after] |= 2.0 * half_length[me[i]] >= LONG_VEHICLE


@njit_leaf
def room_after(
    la: LaneArrays,
    occ: LaneOccupancy,
    boxed: BoolArray,
    setback: FloatArray,
    long_stop: FloatArray,
    lane: int,
    salt: np.uint64,
    need: float,
    long_coming: bool,
) -> float:
    """The room (m) a vehicle with route ``salt`` finds after a junction, from the start
    of ``lane`` on: the lane's length up to where a queue in it stands (its stop line, or
    the ``setback`` before the next junction, or where a long vehicle on its way there,
    on the lane or coming into it from the junction (``long_coming``), would wait for a
    narrow passage one comes the other way through, ``long_stop``), less what its actors
    take when they stand queued (each its extent along the lane and `_EXIT_MARGIN`), and
    at most the room before the rearmost of them. An empty lane shorter than ``need`` adds the lanes
    after it along the route, up to the next junction.

    Traffic that moves now may stop on the lane (behind a queue at the next junction, or
    a truck before a passage while one comes the other way): counting it as queued keeps
    a vehicle from being let in behind it and left standing inside the junction, across
    the paths of others. (On CARLA's Town07 a truck let in behind one that then stopped
    before a passage stood in the junction, where the traffic coming out of the passage
    had to pass: 87 of 128 vehicles stood for minutes.)"""
    free = 0.0
    for _ in range(_ROOM_LANES):
        taken = 0.0
        end = float(min(la.length[lane], la.stop_p[lane]))
        if long_coming:
            end = min(end, long_stop[lane])
            long_coming = False
        for e in range(occ.ptr[lane], occ.ptr[lane + 1]):
            reach = occ.reach[occ.slot[e]]
            taken += 2.0 * reach + _EXIT_MARGIN
            if 2.0 * reach >= LONG_VEHICLE and occ.p[e] + reach <= long_stop[lane]:
                end = min(end, long_stop[lane])
        if la.first_next[lane] >= 0 and boxed[la.first_next[lane]]:
            end = min(end, la.length[lane] - setback[lane])
        if taken > 0.0:
            # (and no more than there is before the rearmost, which may stand anywhere)
            rear = occ.ptr[lane]
            before_rear = float(occ.p[rear] - occ.reach[occ.slot[rear]])
            return free + min(end - taken, before_rear)
        free += end
        if free >= need:
            return free
        lane = choose_next(la, salt, lane)
        if lane < 0 or boxed[lane]:
            return free
    return free


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
    promises (`_ask_hold_rows`): ``(hop, wants_in)``, hop the index in ``lanes[i]`` of the
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


class Requests(NamedTuple):
    """A tick's requests to enter a junction, one row each (`request`).

    Attributes:
        start, end: Request c needs the lanes ``lane[start[c]:end[c]]``, its path through
            the junction.
        lane: The lanes of all paths (with room to spare between the threads' parts).
        rank: First come, first served: the distance from the vehicle to where it waits
            for the entry (the entry less its lane's setback, m), less `_WAITED_AHEAD`
            metres for each second it has waited there.
        slot: The vehicle's slot, which breaks ties.
        is_long: Whether it is a long vehicle (`LONG_VEHICLE`).
        after: The lane its path leads into after the junction (-1: none).
        starved: Whether it has waited at the entry for `STARVED_AFTER` seconds: while
            it has no room, it keeps that room from later requests (`_keep_room`) and
            its path from later long vehicles (`_keep_paths`).
    """

    start: IntArray
    end: IntArray
    lane: IntArray
    rank: FloatArray
    slot: IntArray
    is_long: BoolArray
    after: IntArray
    starved: BoolArray


class Conflicting(NamedTuple):
    """The conflicts of every lane (`Conflicts` in CSR form): ``near_idx[near_ptr[u]:
    near_ptr[u + 1]]`` for ordinary vehicles, ``wide_*`` the wider ones of long vehicles."""

    near_ptr: IntArray
    near_idx: IntArray
    wide_ptr: IntArray
    wide_idx: IntArray


@njit_loop
def _ask_hold_rows(
    la: LaneArrays,
    occ: LaneOccupancy,
    boxed: BoolArray,
    setback: FloatArray,
    granted: BoolArray,
    grant_lane: IntArray,
    grant_age: FloatArray,
    wait_age: FloatArray,
    me: IntArray,
    lanes: IntArray,
    start: FloatArray,
    entry_hop: IntArray,
    wants_in: BoolArray,
    dt: float,
    half_length: FloatArray,
    speed: FloatArray,
    salt: UIntArray,
    out: FloatArray,
    asking: BoolArray,
    held: BoolArray,
    held_long: BoolArray,
    paths: IntArray,
    order: IntArray,
    c: int,
    chunks: int,
) -> None:
    """For chunk c of ``chunks`` of the rows ``order``: which vehicles ask to enter a
    junction this tick (``asking``), and the lanes they hold; and the lanes held by
    chunk c of the occupancy's entries (``paths[c]``: the chunk's scratch).

    The chunks mark the lanes they find held in the same ``held`` and ``held_long``: a
    mark only ever sets a byte to True, so whatever the order of two chunks' marks of a
    lane, it ends True, and the arrays are the union of the chunks' marks (read only
    after the pass). Marking per chunk and merging cost a serial pass over every lane.

    A vehicle asks when it wants to (`next_entry`) and its promise, if any, has not run
    out; the promises of vehicles that no longer ask, and of those that kept one too
    long, are withdrawn (they wait: ``out``), and so are those given for a junction the
    vehicle has entered (``grant_lane``): it asks for the next one anew. ``granted``,
    ``grant_lane``, ``grant_age`` and ``wait_age`` are by slot.

    Held (``held``, and ``held_long`` for long vehicles): every connecting lane with an
    actor on it, the paths of vehicles inside, and the paths of vehicles let in."""
    path = paths[c]
    first, stop = share(occ.uid.size, c, chunks)
    for e in range(first, stop):
        if boxed[occ.uid[e]]:
            held[occ.uid[e]] = True
            if 2.0 * half_length[occ.slot[e]] >= LONG_VEHICLE:
                held_long[occ.uid[e]] = True
    for i in chunk(order, c, chunks):
        k = me[i]
        asks = wants_in[i]
        if not asks:
            granted[k] = False
            # (A vehicle still where it waits keeps its time there: a truck turning
            # through the junction swings over the mouth it waits at, and every such
            # truck, seen ahead for a moment, put a car that had waited a minute behind
            # the next one to come.)
            hop = entry_hop[i]
            if hop == 0 or start[i, hop] - setback[lanes[i, hop - 1]] >= _AT_ENTRY:
                wait_age[k] = 0.0
        elif granted[k] and grant_lane[k] != lanes[i, entry_hop[i]]:
            # The promise was for the junction it is in now; it asks for the next one.
            granted[k] = False
        # A promise not used for `GRANT_TIMEOUT` seconds (the vehicle is stuck behind
        # others) is withdrawn, so that it cannot hold crossing traffic forever; but not
        # from a vehicle that could no longer stop before the entry braking at
        # `_WITHDRAW_DECEL` (a truck that had crept up behind others entered anyway, into
        # a car let in; a car whose front was in stopped there, in the path of the car
        # let in), nor, where long vehicles turning nearby sweep the mouth before the
        # entry (`entry_setbacks`), before the mouth: standing in it, it is in their way.
        grant_age[k] = grant_age[k] + dt if granted[k] and asks else 0.0
        if asks and grant_age[k] > GRANT_TIMEOUT:
            wait_at = setback[lanes[i, entry_hop[i] - 1]]
            room = start[i, entry_hop[i]] - (wait_at if wait_at > SETBACK else 0.0)
            if room > 0.5 * speed[k] * speed[k] / _WITHDRAW_DECEL:
                granted[k] = False
                grant_age[k] = 0.0
                # It waits, and asks again next tick.
                out[i] = start[i, entry_hop[i]] - wait_at
                asks = False
        asking[i] = asks
        for hop in (0, entry_hop[i]):
            if hop == 0 and not boxed[lanes[i, 0]]:
                continue  # not inside a junction
            if hop > 0 and not (asks and granted[k]):
                continue  # not let in to the next one
            count, _ = path_through(la, boxed, lanes[i, hop], salt[k], path)
            for j in range(count):
                held[path[j]] = True
                if 2.0 * half_length[k] >= LONG_VEHICLE:
                    held_long[path[j]] = True


ask_hold = njit_rows(_ask_hold_rows)


@njit_loop
def _request_rows(
    la: LaneArrays,
    occ: LaneOccupancy,
    boxed: BoolArray,
    setback: FloatArray,
    long_stop: FloatArray,
    me: IntArray,
    cand: IntArray,
    lanes: IntArray,
    entry_hop: IntArray,
    half_length: FloatArray,
    salt: UIntArray,
    incoming: FloatArray,
    long_in: BoolArray,
    requests: Requests,
    fits: BoolArray,
    paths: IntArray,
    c: int,
    chunks: int,
) -> None:
    """For each request q of chunk c of ``chunks`` (a run), from vehicle row
    ``cand[q]``: the lanes its path needs, whether it is long, and whether the lane its
    path leads into has room for it (`room_after`) beyond the room promised to those
    ahead of it (``incoming``, `_incoming`): ``fits``, so that a queue does not block
    the junction. The paths of the run follow each other in ``requests.lane``
    from where the run's first request would start with the longest paths before it
    (``paths[c]``: the chunk's scratch)."""
    first, stop = share(cand.size, c, chunks)
    path = paths[c]
    at = first * (_MAX_PIECES + 1)
    for q in range(first, stop):
        i = cand[q]
        k = me[i]
        length = 2.0 * half_length[k]
        requests.is_long[q] = length >= LONG_VEHICLE
        count, after = path_through(la, boxed, lanes[i, entry_hop[i]], salt[k], path)
        requests.start[q] = at
        for j in range(count):
            requests.lane[at + j] = path[j]
        at += count
        requests.end[q] = at
        requests.after[q] = after
        need = length + _EXIT_MARGIN
        fits[q] = (
            after < 0
            or room_after(la, occ, boxed, setback, long_stop, after, salt[k], need, long_in[after])
            - incoming[after]
            >= need
        )


request = njit_rows(_request_rows)


@njit_loop
def _keep_room(requests: Requests, entry: FloatArray, fits: BoolArray, waiting: IntArray) -> None:
    """Refuses (in ``fits``) the requests into a lane after the junction for which a
    vehicle that came before them (`_before`) waits without room there yet, where that
    vehicle is long and at its entry (``entry``, m, within `_AT_ENTRY`), or starved
    (``requests.starved``): first come, first served for that room too. Else the cars
    from the junction's other entries, which need less room, fill the lane as fast as it
    empties, and the long vehicle waits for ever. (Not every vehicle at once: keeping
    room and path for all of them locked rings of short streets on Town07.) ``waiting``:
    scratch, a row a lane, -1 everywhere on entry and again on return (only the rows of
    the requests' lanes are touched)."""
    any_keeps = False
    for c in range(fits.size):
        any_keeps = any_keeps or _keeps_room(requests, entry, fits, c)
    if not any_keeps:
        return
    for c in range(fits.size):
        after = requests.after[c]
        if _keeps_room(requests, entry, fits, c) and (
            waiting[after] < 0 or _before(requests, c, waiting[after])
        ):
            waiting[after] = c
    for c in range(fits.size):
        after = requests.after[c]
        if fits[c] and after >= 0 and waiting[after] >= 0:
            fits[c] = not _before(requests, waiting[after], c)
    for c in range(fits.size):
        if requests.after[c] >= 0:
            waiting[requests.after[c]] = -1


@njit_leaf
def _keeps_room(requests: Requests, entry: FloatArray, fits: BoolArray, c: int) -> bool:
    """Whether request c keeps the room after the junction from later ones (`_keep_room`)."""
    return bool(
        not fits[c]
        and requests.after[c] >= 0
        and (requests.starved[c] or (requests.is_long[c] and entry[c] < _AT_ENTRY))
    )


@njit_leaf
def _before(requests: Requests, a: int, b: int) -> bool:
    """Whether request a comes before request b: first come (the lower ``rank``), then
    the lower slot."""
    rank, slot = requests.rank, requests.slot
    return bool(rank[a] < rank[b] or (rank[a] == rank[b] and slot[a] < slot[b]))


@njit_loop
def _first_requests(requests: Requests, fits: BoolArray, position: IntArray) -> None:
    """``position``: for each lane a request needs, the earliest such request (`_before`);
    -1 elsewhere (as on entry). Requests that do not ``fit`` (no room after the junction)
    are refused anyway and compete for nothing: they must not keep others out (but see
    `_keep_paths`)."""
    for c in range(requests.rank.size):
        if not fits[c]:
            continue
        for j in range(requests.start[c], requests.end[c]):
            lane = requests.lane[j]
            if position[lane] < 0 or _before(requests, c, position[lane]):
                position[lane] = c


@njit_loop
def _keep_paths(requests: Requests, fits: BoolArray, kept: IntArray) -> None:
    """``kept``: for each lane on the path of a starved request without room
    (``requests.starved``, not ``fits``), the earliest such request (`_before`); -1
    elsewhere (as on entry).

    A starved vehicle keeps its path from the long vehicles that came after it (`_refused`)
    while it waits for room. On Town07 a car waited 81 s at an entry: a convoy of
    trucks through a conflicting turn was let in whenever it had no room after the
    junction, and held the turn whenever it had. Cars are not kept out: the room after a
    starved vehicle may wait for a car it would keep out (a car coming the other way
    through a bend only one truck fits, which the truck ahead waits for, locked a ring
    of queues)."""
    for c in range(requests.rank.size):
        if fits[c] or not requests.starved[c]:
            continue
        for j in range(requests.start[c], requests.end[c]):
            lane = requests.lane[j]
            if kept[lane] < 0 or _before(requests, c, kept[lane]):
                kept[lane] = c


@njit_loop
def _serve_rows(
    requests: Requests,
    held: BoolArray,
    held_long: BoolArray,
    conflicts: Conflicting,
    position: IntArray,
    kept: IntArray,
    any_long: bool,
    grant: BoolArray,
    c: int,
    chunks: int,
) -> None:
    """Which of the requests of chunk c of ``chunks`` are granted this tick, first come first served
    (`_before`): clears ``grant[c]`` (set where the lane after the junction has room) of
    those refused.

    A request is refused when a lane conflicting with one it needs is held, or when an
    earlier request of this tick with room after the junction needs the same lane or a
    conflicting one (that one may itself be refused: it is then served next tick, a 50 ms
    delay). Long vehicles use
    the wide conflicts, against held lanes and against other requests alike
    (``any_long``: a request is long or a lane is held by a long vehicle).
    ``position`` holds the earliest request needing each lane (`_first_requests`), and
    ``kept`` (empty: none) the lanes starved vehicles keep from long ones (`_keep_paths`).
    """
    first, stop = share(grant.size, c, chunks)
    for q in range(first, stop):
        # (A request refused already, for want of room after the junction, stays so.)
        if grant[q] and _refused(requests, held, held_long, conflicts, position, kept, any_long, q):
            grant[q] = False


serve = njit_rows(_serve_rows)


@njit_leaf
def _refused(
    requests: Requests,
    held: BoolArray,
    held_long: BoolArray,
    conflicts: Conflicting,
    position: IntArray,
    kept: IntArray,
    any_long: bool,
    c: int,
) -> bool:
    """Whether `serve` refuses request c; it stops at the first reason."""
    near_ptr, near_idx, wide_ptr, wide_idx = conflicts
    is_long = requests.is_long
    for j in range(requests.start[c], requests.end[c]):
        lane = requests.lane[j]
        if position[lane] != c:
            return True
        if is_long[c] and kept.size > 0 and _kept_from(requests, conflicts, kept, lane, c):
            return True
        for q in range(near_ptr[lane], near_ptr[lane + 1]):
            other_lane = near_idx[q]
            if held[other_lane] and not is_long[c]:
                return True
            other = position[other_lane]
            if other >= 0 and other != c and _before(requests, other, c):
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
                and _before(requests, other, c)
            ):
                return True
    return False


@njit_leaf
def _kept_from(
    requests: Requests, conflicts: Conflicting, kept: IntArray, lane: int, c: int
) -> bool:
    """Whether a starved request before request c keeps ``lane`` or a lane conflicting
    with it (`_keep_paths`)."""
    near_ptr, near_idx, wide_ptr, wide_idx = conflicts
    if _kept_before(requests, kept[lane], c):
        return True
    for q in range(near_ptr[lane], near_ptr[lane + 1]):
        if _kept_before(requests, kept[near_idx[q]], c):
            return True
    for q in range(wide_ptr[lane], wide_ptr[lane + 1]):
        if _kept_before(requests, kept[wide_idx[q]], c):
            return True
    return False


@njit_leaf
def _kept_before(requests: Requests, keeper: int, c: int) -> bool:
    """Whether ``keeper`` (a request, -1: none) is another request than c, before it."""
    return keeper >= 0 and keeper != c and _before(requests, keeper, c)


def _boxed(info: LaneInfo, short_link: float) -> BoolArray:
    """Lanes that belong to a junction's box: connecting lanes, and the ordinary lanes of
    a link shorter than ``short_link`` metres (`SHORT_LINK`) that leads from one junction
    straight into another (two junctions so close together work as one: nobody may stop
    in between)."""
    boxed: BoolArray = (info.junction >= 0) | info.links_shorter(short_link)
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
    from scipy.spatial import cKDTree  # (0.1 s to import: not for a command that builds no world)

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


def entry_setbacks(info: LaneInfo) -> FloatArray:
    """How far before the end of each lane (by uid) a vehicle told to wait for the
    junction ahead stops: `SETBACK`, or more where a long vehicle turning through a
    junction would sweep over the lane's last metres.

    A vehicle drives a turn with its centre on the lane's centre line and its body
    turned from the path by its slip angle, so the ends of a long one swing out of the
    curve (a 12 m truck in a turn of 7 m radius: its front some 3 m) and over the mouths
    of the streets beside its path, where traffic waits.

    For a `SWEEP_LENGTH` x `SWEEP_WIDTH` box at every sample of every connecting lane
    that turns and that long vehicles take (not the tight turns they avoid), and for
    `_STRAIGHTENING` wheelbases after it, the outline is located on the lanes. Where it
    falls within `MAX_SETBACK` (and `_BEYOND_SETBACK`) of the end of a lane that ends at a
    junction (other than the turn's own lanes before and after it), that lane's setback
    becomes the distance to its end plus a metre (`MAX_SETBACK` at most), but never more
    than leaves room for a long vehicle on the lane
    (`SWEEP_LENGTH` and `_EXIT_MARGIN`).
    `JunctionGate.keep_clear_of_long_vehicles` applies them.
    """
    setback = np.full(info.n, SETBACK)
    table = info.table
    inside = np.flatnonzero((info.junction >= 0) & info.drivable)
    if inside.size == 0:
        return setback
    first, count = table.ptr[inside], table.ptr[inside + 1] - table.ptr[inside]
    owner = np.repeat(inside, count)
    index = np.concatenate([np.arange(a, a + n) for a, n in zip(first, count, strict=True)])
    bends = np.zeros(info.n, dtype=bool)
    np.logical_or.at(bends, owner, np.abs(table.curvature[index]) > _TURNING)
    turn = bends[owner] & _taken_by_long(info)[owner]
    owner, index = owner[turn], index[turn]
    if owner.size == 0:
        return setback
    # The outline of the box, every metre or so, in its own frame (x forward, y left).
    half_l, half_w = 0.5 * SWEEP_LENGTH, 0.5 * SWEEP_WIDTH
    along = np.linspace(-half_l, half_l, int(SWEEP_LENGTH) + 1)
    across = np.linspace(-half_w, half_w, 4)
    local_x = np.concatenate((along, along, np.full(4, half_l), np.full(4, -half_l)))
    local_y = np.concatenate(
        (np.full(along.size, half_w), np.full(along.size, -half_w), across, across)
    )
    # The body turns away from its path by the slip angle: the centre of a kinematic
    # bicycle drives at beta = asin(curvature * wheelbase / 2) to the body's heading;
    # and the body turns late, as the wheels do: by the slip of `SWEEP_LAG` metres back.
    spacing = table.spacing[owner]
    back = np.maximum(index - np.round(SWEEP_LAG / spacing).astype(np.int64), table.ptr[owner])
    curvature = np.where(
        np.abs(table.curvature[back]) > np.abs(table.curvature[index]),
        table.curvature[back],
        table.curvature[index],
    )
    beta = np.arcsin(np.clip(curvature * 0.5 * SWEEP_WHEELBASE, -0.99, 0.99))
    cx, cy = table.x[index], table.y[index]
    course = np.arctan2(table.dir_y[index], table.dir_x[index])
    # Past the end of the turn the body straightens as a bicycle's does, its slip
    # falling by e over each wheelbase driven, for `_STRAIGHTENING` wheelbases (the lane
    # after it taken as straight): a 12 m truck leaving a turn of 7.2 m radius into
    # Town07's road 55 was still turned 6 degrees 8 m on.
    last = np.flatnonzero(np.r_[owner[1:] != owner[:-1], True])
    steps = np.arange(1.0, _STRAIGHTENING * SWEEP_WHEELBASE + 1.0)
    fade = np.tile(np.exp(-steps / SWEEP_WHEELBASE), last.size)
    ends = np.repeat(last, steps.size)
    run = np.tile(steps, last.size)
    cx = np.concatenate((cx, cx[ends] + run * np.cos(course[ends])))
    cy = np.concatenate((cy, cy[ends] + run * np.sin(course[ends])))
    beta = np.concatenate((beta, beta[ends] * fade))
    course = np.concatenate((course, course[ends]))
    owner = np.concatenate((owner, owner[ends]))
    body = course - beta
    cx, cy = cx[:, None], cy[:, None]
    dx, dy = np.cos(body)[:, None], np.sin(body)[:, None]
    px = (cx + local_x * dx - local_y * dy).ravel()
    py = (cy + local_x * dy + local_y * dx).ravel()
    point_owner = np.repeat(owner, local_x.size)
    pos = info.net.localize(px, py)
    uid = np.asarray(pos.uid, dtype=np.int64)
    hit = uid >= 0
    uid, s, point_owner = uid[hit], np.asarray(pos.s)[hit], point_owner[hit]
    # Lanes where traffic waits for a junction: outside junctions, leading into one.
    nxt = info.first_next
    waits = (info.junction < 0) & info.drivable & (nxt >= 0)
    waits[waits] = info.junction[nxt[waits]] >= 0
    keep = waits[uid]
    uid, s, point_owner = uid[keep], s[keep], point_owner[keep]
    # Not the turn's own lane before it, nor the one after it.
    own = info.linked(point_owner, uid)
    uid, s = uid[~own], s[~own]
    # Near the lane's end (its start may lie at another junction's mouth).
    distance = info.length[uid] - info.progress(uid, s)
    # (where it reaches further back than `MAX_SETBACK`, there)
    near = distance + 1.0 <= MAX_SETBACK + _BEYOND_SETBACK
    np.maximum.at(setback, uid[near], np.minimum(distance[near] + 1.0, MAX_SETBACK))
    # A lane keeps room for a long vehicle and the room behind it (`_EXIT_MARGIN`): one
    # that waits on a link between two junctions waits on the link, never back in the
    # junction before it, and is let in to that junction at all.
    room = info.length - (SWEEP_LENGTH + _EXIT_MARGIN)
    out: FloatArray = np.minimum(setback, np.maximum(SETBACK, room))
    return out


def _taken_by_long(info: LaneInfo) -> BoolArray:
    """Lanes long vehicles may drive (by uid): all but those they avoid (``tight``) where
    the fork before them offers one they avoid less (`roadsim.world.lane_kernels.choose_next`)."""
    avoided = np.zeros(info.n, dtype=bool)
    forks = np.flatnonzero(info.next_count > 1)
    for u in forks.tolist():
        after = info.next_idx[info.next_ptr[u] : info.next_ptr[u + 1]]
        level = info.tight[after]
        avoided[after[level > level.min()]] = True
    # A lane some vehicle reaches without a choice is taken all the same.
    single = info.next_idx[np.repeat(info.next_count == 1, info.next_count)]
    avoided[single] = False
    avoided[info.tight == 2] = True  # (placed outside them, long vehicles never get there)
    return ~avoided
