"""Lifecycle: vehicles that drove off the map come back at the map's entry lanes.

An *entry lane* is a drivable lane record outside junctions that no drivable lane leads
into: where traffic enters the map. A vehicle that leaves the map (its front at the end
of a lane that leads nowhere, `roadsim.sim.simulation`) frees its slot; at the start of
a later tick the slot is filled by a new vehicle (a new id, a new route, the same model)
at the start of an entry lane chosen at random (past the stretch where it lies over
another road, `roadsim.world.overlaps`), once that lane has room for it and no
other vehicle is in the way there (`Respawner._swept`).
"""

from __future__ import annotations

import numpy as np

from roadsim._types import FloatArray, IntArray, UIntArray
from roadsim.agents.passages import PassageGate
from roadsim.world.codes import LONG_ROUTE_BIT, LONG_VEHICLE, ROUTE_BIT
from roadsim.world.collisions import find_overlaps
from roadsim.world.lane_info import LaneInfo
from roadsim.world.state import WorldState

_JAM_GAP = 2.0  # m left to the vehicle ahead after braking
_COMFORT_DECEL = 2.0  # m/s^2
_HEADWAY = 1.5  # s of driving a new vehicle keeps behind the one ahead
_CLEAR = 0.5  # m a new vehicle keeps from every other body, on any lane
_SWEEP_TIME = 2.0  # s of driving ahead of every other vehicle a new one keeps out of


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
        # (where an entry starts over another road, traffic comes back past it)
        self.enter_at: FloatArray = info.map_edges[1]
        self.entries: IntArray = np.flatnonzero(
            info.drivable
            & types
            & (info.junction < 0)
            & no_way_in
            & (info.usable - self.enter_at > 20.0)
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
        passages: PassageGate | None = None,
    ) -> int:
        """Places pending slots where there is room; returns the next free actor id.

        ``changing_to`` is the lane each slot's vehicle is changing into (-1: none); such
        a vehicle already takes room in that lane. With ``passages``, a vehicle does not
        come back inside a narrow passage that a long vehicle coming the other way holds,
        nor a long vehicle inside one where anybody stands the other way
        (`PassageGate.opposed`).
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
        # Who stands where, for the passages a long vehicle may come back into (and
        # those placed here, as they are).
        bodies = (
            (state.uid[on], p_on, p_on + state.length[on])
            if passages is not None and passages.passages.number
            else None
        )
        waiting: list[int] = []
        for slot in sorted(self.pending):
            is_long = bool(state.length[slot] >= LONG_VEHICLE)
            pool = self.long_entries if is_long else self.entries
            lane = int(pool[self.rng.integers(pool.size)])
            half = 0.5 * float(state.length[slot])
            p = float(self.enter_at[lane]) + half + 1.0
            gap = float(rear[lane]) - (p + half)
            if gap < self.min_gap:
                waiting.append(slot)
                continue
            uid = np.array([lane])
            s = info.road_s(uid, np.array([p]))
            t = net.uid_t_center(uid, s)
            x, y, z = net.to_world_index(info.road[uid], s, t)
            _, _, heading = info.table.pose(uid, np.array([p]))
            if self._swept(state, float(x[0]), float(y[0]), float(heading[0]), slot) or (
                passages is not None and passages.opposed(lane, p - half, p + half, is_long, bodies)
            ):
                waiting.append(slot)
                continue
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
            if bodies is not None:
                bodies = (
                    np.append(bodies[0], lane),
                    np.append(bodies[1], p - half),
                    np.append(bodies[2], p + half),
                )
            next_id += 1
        self.pending = waiting
        return next_id

    @staticmethod
    def _swept(state: WorldState, x: float, y: float, heading: float, slot: int) -> bool:
        """Whether a vehicle of ``slot`` placed at (x, y, heading) would come within
        `_CLEAR` of another body, or of where another vehicle drives in the next
        `_SWEEP_TIME` seconds straight on: an entry lane's start may lie beside another
        lane's end (a road that ends in a bend both ways: a car came back beside a truck
        leaving, in the truck's swing)."""
        others = np.flatnonzero(state.active)
        half = 0.5 * float(state.length[slot])
        ahead = state.speed[others] * _SWEEP_TIME
        reach = half + 0.5 * state.length[others] + ahead + state.width[others] + _CLEAR
        near = others[np.hypot(state.x[others] - x, state.y[others] - y) < reach]
        if near.size == 0:
            return False
        cos_h, sin_h = np.cos(state.heading[near]), np.sin(state.heading[near])
        shift = 0.5 * state.speed[near] * _SWEEP_TIME
        one = np.ones(1, dtype=bool)
        i, _ = find_overlaps(
            np.concatenate(([x], state.x[near] + shift * cos_h)),
            np.concatenate(([y], state.y[near] + shift * sin_h)),
            np.concatenate(([heading], state.heading[near])),
            np.concatenate(([2.0 * half + 2.0 * _CLEAR], state.length[near] + 2.0 * shift)),
            np.concatenate(([float(state.width[slot]) + 2.0 * _CLEAR], state.width[near])),
            np.concatenate((one, one.repeat(near.size))),
        )
        return bool((i == 0).any())

    def _reaching_into(self, state: WorldState, on: IntArray) -> IntArray:
        """The drivable lane of its direction beside its own that the body of each vehicle
        ``on`` reaches into (-1: none): one that has just changed lanes still stands partly
        in the lane it left, where no other vehicle may come back behind it (on esmini's
        two_plus_one.xodr a truck came back at 12.6 m/s 8.5 m behind the corner of a car
        leaving its lane at 1.5 m/s)."""
        info = self.info
        uid, s = state.uid[on], state.s[on]
        # Offset from the lane's centre line toward the left of the direction of travel,
        # and how far the body reaches to either side of its centre at its angle d to
        # the lane (a car leaving a lane at an angle still has a corner in it).
        offset = (state.t[on] - info.net.uid_t_center(uid, s)) * np.sign(info.sign[uid])
        _, _, lane_heading = info.table.pose(uid, info.progress(uid, s))
        d = state.heading[on] - lane_heading
        across = 0.5 * (state.length[on] * np.abs(np.sin(d)) + state.width[on] * np.abs(np.cos(d)))
        room = 0.5 * np.abs(info.net.uid_width(uid, s)) - across
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
