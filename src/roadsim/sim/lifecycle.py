"""Lifecycle: vehicles that drove off the map come back at the map's entry lanes.

An *entry lane* is a drivable lane record outside junctions that no drivable lane leads
into: where traffic enters the map. A vehicle that leaves the map frees its slot; at the
start of a later tick the slot is filled by a new vehicle (a new id, a new route, the same
model) at the start of an entry lane chosen at random, once that lane has room for it.
"""

from __future__ import annotations

import numpy as np

from roadsim._types import FloatArray, IntArray, UIntArray
from roadsim.world.codes import LONG_ROUTE_BIT, LONG_VEHICLE, ROUTE_BIT
from roadsim.world.lane_info import LaneInfo
from roadsim.world.state import WorldState

_JAM_GAP = 2.0  # m left to the vehicle ahead after braking
_COMFORT_DECEL = 2.0  # m/s^2
_HEADWAY = 1.5  # s of driving a new vehicle keeps behind the one ahead


class Respawner:
    """Puts freed vehicle slots back on the map.

    Args:
        info: Lane tables.
        lane_types: Lane types traffic may use.
        min_gap: Least bumper-to-bumper gap to the vehicle ahead at entry (m).
        rng: The generator of entry choices and new routes (a child of the simulation's
            seed sequence).
    """

    def __init__(
        self, info: LaneInfo, lane_types: tuple[str, ...], min_gap: float, rng: np.random.Generator
    ) -> None:
        self.info = info
        self.min_gap = min_gap
        self.rng = rng
        allowed = set(lane_types)
        types = np.array([t in allowed for t in info.net.lanes.type_name], dtype=bool)
        no_way_in = info.prev_ptr[1:] == info.prev_ptr[:-1]
        self.entries: IntArray = np.flatnonzero(
            info.drivable
            & types
            & (info.junction < 0)
            & no_way_in
            & (info.usable > 20.0)
            & (info.usable_from == 0.0)  # (a lane that opens is too narrow at its start)
        )
        # Long vehicles come back where they can drive on (`LaneInfo.tight`), if anywhere.
        open_to_long = self.entries[info.tight[self.entries] < 2]
        self.long_entries: IntArray = open_to_long if open_to_long.size else self.entries
        self.pending: list[int] = []

    def release(self, slots: IntArray) -> None:
        """Slots whose vehicles just left the map."""
        self.pending.extend(int(k) for k in slots)

    def fill(
        self,
        state: WorldState,
        salt: UIntArray,
        desired_speed: FloatArray,
        changing_to: IntArray,
        next_id: int,
    ) -> int:
        """Places pending slots where there is room; returns the next free actor id.

        ``changing_to`` is the lane each slot's vehicle is changing into (-1: none); such
        a vehicle already takes room in that lane.
        """
        if not self.pending or self.entries.size == 0:
            return next_id
        info, net = self.info, self.info.net
        on = np.flatnonzero(state.active & (state.uid >= 0))
        rear = np.full(info.n, np.inf)
        rear_speed = np.zeros(info.n)
        p_on = info.progress(state.uid[on], state.s[on]) - 0.5 * state.length[on]
        taken = (state.uid[on], changing_to[on], self._reaching_into(state, on))
        for lanes in taken:
            ok = lanes >= 0
            np.minimum.at(rear, lanes[ok], p_on[ok])
        for lanes in taken:  # the speed of each lane's rearmost
            is_rear = (lanes >= 0) & (p_on == rear[np.maximum(lanes, 0)])
            rear_speed[lanes[is_rear]] = state.speed[on[is_rear]]
        waiting: list[int] = []
        for slot in sorted(self.pending):
            pool = self.long_entries if state.length[slot] >= LONG_VEHICLE else self.entries
            lane = int(pool[self.rng.integers(pool.size)])
            half = 0.5 * float(state.length[slot])
            p = half + 1.0
            gap = float(rear[lane]) - (p + half)
            if gap < self.min_gap:
                waiting.append(slot)
                continue
            uid = np.array([lane])
            s = info.road_s(uid, np.array([p]))
            t = net.uid_t_center(uid, s)
            x, y, z = net.to_world_index(info.road[uid], s, t)
            _, _, heading = info.table.pose(uid, np.array([p]))
            # At most 90 % of the desired speed, and slow enough to keep a headway behind
            # the vehicle ahead: no faster than it unless the gap has room beyond that
            # headway to close in at a comfortable deceleration, and never faster than
            # the gap allows at that headway (it may be just changing in).
            ahead = float(rear_speed[lane])
            room = max(gap - _JAM_GAP - _HEADWAY * ahead, 0.0)
            speed = min(
                0.9 * float(desired_speed[slot] * info.speed_limit[lane]),
                ahead + float(np.sqrt(2.0 * _COMFORT_DECEL * room)),
                max(gap - _JAM_GAP, 0.0) / _HEADWAY,
            )
            for name, value in (
                ("x", x[0]),
                ("y", y[0]),
                ("z", z[0]),
                ("heading", heading[0]),
                ("speed", speed),
                ("accel", 0.0),
                ("steer", 0.0),
                ("yaw_rate", 0.0),
                ("slip", 0.0),
                ("s", s[0]),
                ("t", t[0]),
            ):
                getattr(state, name)[slot] = value
            state.uid[slot], state.road[slot] = lane, info.road[lane]
            state.id[slot] = next_id
            state.active[slot], state.left_map[slot], state.collided[slot] = True, False, False
            salt[slot] = route_salts(
                np.array([self.rng.integers(0, 2**63 - 1)]), state.length[slot : slot + 1]
            )[0]
            rear[lane] = p - half
            next_id += 1
        self.pending = waiting
        return next_id

    def _reaching_into(self, state: WorldState, on: IntArray) -> IntArray:
        """The drivable lane of its direction beside its own that the body of each vehicle ``on``
        reaches into (-1: none): one that has just changed lanes still stands partly in
        the lane it left, where no other vehicle may come back behind it."""
        info = self.info
        uid, s = state.uid[on], state.s[on]
        # Offset from the lane's centre line toward the left of the direction of travel.
        offset = (state.t[on] - info.net.uid_t_center(uid, s)) * np.sign(info.sign[uid])
        room = 0.5 * (np.abs(info.net.uid_width(uid, s)) - state.width[on])
        left, right = info.beside[uid, 0], info.beside[uid, 1]
        out: IntArray = np.where(offset > room, left, np.where(-offset > room, right, -1))
        return out


def route_salts(draws: IntArray, length: FloatArray) -> UIntArray:
    """Route salts of new traffic vehicles from random ``draws`` (in [0, 2**63 - 1)) and
    their lengths: the draws with the `ROUTE_BIT` cleared, and the `LONG_ROUTE_BIT` set for
    long vehicles (`long_route`).

    The `ROUTE_BIT` marks the one vehicle that follows the scenario's route: left in a
    random draw, it marked half the traffic, which then followed the ego's route at its
    forks and never took another way when refused at a junction for long
    (`roadsim.agents.junctions.rerouted`)."""
    salt = np.asarray(draws).astype(np.uint64) & ~(np.uint64(1) << np.uint64(ROUTE_BIT))
    out: UIntArray = salt | long_route(length)
    return out


def long_route(length: FloatArray) -> UIntArray:
    """The route salt bit of vehicles of these lengths: set for those at least
    `LONG_VEHICLE` long, which avoid tight turns (`roadsim.world.lane_kernels.choose_next`)."""
    return np.where(length >= LONG_VEHICLE, np.uint64(1) << np.uint64(LONG_ROUTE_BIT), np.uint64(0))
