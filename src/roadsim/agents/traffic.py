"""The traffic model: lane following with IDM, lane changes with MOBIL, lights, junctions.

All vehicles driven by the autopilot are handled together, as arrays. Each tick:

1. *Perception* (`roadsim.agents.perception`): every actor on a lane is sorted by (lane,
   progress); a vehicle's leader is the next entry in its lane or the first one in the
   next lanes of its route (up to `HOPS` lane records ahead). A vehicle changing lanes is
   in both lanes. Stop lines of red and yellow lights, the ends of lanes that drop, and
   junction entries a vehicle must yield at (`roadsim.agents.junctions`) are standing
   obstacles in the same search.
2. *Longitudinal*: IDM toward the nearest obstacle. The desired speed is the lane's limit
   times the vehicle's factor, lowered ahead of curves so that the lateral acceleration
   stays below `roadsim.world.lane_table.LATERAL_ACCEL`.
3. *Lateral*: MOBIL (Kesting, Treiber, Helbing 2007) picks changes to the left or right
   neighbour lane of the same direction; a lane that drops forces a change.
4. *Steering*: the curvature of the centre line of the lane the vehicle wants to be in,
   plus a critically damped correction of its lateral and heading errors, as a
   front-wheel angle for the bicycle model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from roadsim.agents.idm import IdmParams, idm_accel
from roadsim.agents.junctions import JunctionGate
from roadsim.agents.perception import LaneOccupancy, follower, leader
from roadsim.world.lane_table import ENVELOPE_DECEL
from roadsim.world.routing import LANE_DROP, LaneInfo
from roadsim.world.state import WorldState
from roadsim.world.traffic_lights import GREEN, RED, YELLOW, TrafficLightPlan

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]

HOPS = 3  # lane records searched ahead for leaders and stop lines
_TRACK_MIN = 4.0  # m, lane keeping: distance over which an error is corrected, at least
_TRACK_TIME = 0.8  # s of driving over which an error is corrected
_TRACK_PREVIEW = 0.15  # s ahead where the lane's curvature is read
_TRACK_MAX_ERROR = 1.2  # m, the lateral error the lane keeping acts on, at most
_SAFE_DECEL = 4.0  # m/s^2 MOBIL safety criterion
_CHANGE_THRESHOLD = 0.2  # m/s^2 MOBIL incentive threshold
_KEEP_RIGHT_BIAS = 0.3  # m/s^2
_CHANGE_COOLDOWN = 4.0  # s between two lane changes of one vehicle
_NO_CHANGE_BEFORE_END = 25.0  # m: no voluntary change this close to the end of a lane record
_FORCED_RANGE = 200.0  # m before a lane drop where vehicles must change lanes
_FORCED_BONUS = 10.0  # m/s^2 added to the incentive of a forced change
_MERGE_RANGE = 60.0  # m before the end of a dropping lane where a vehicle asks to merge
_THROUGH_TYPES = frozenset({"driving", "bidirectional"})  # lanes open to lane changes
_DECIDE_EVERY = 4  # ticks between two lane-change decisions of one vehicle
_WIDTH_MARGIN = 0.5  # m a lane must be wider than a vehicle changing into it
_EDGE_TOLERANCE = 0.2  # m an actor may reach over its lane's edge unseen by the next lane
_ABORT_GAP = 1.0  # m: a change is given up when the gap ahead in the target lane is smaller


@dataclass
class TrafficParams:
    """Per-vehicle behaviour, arrays over actor slots."""

    speed_factor: FloatArray  # desired speed / speed limit
    idm: IdmParams
    politeness: float = 0.3
    keep_right: bool = True


class TrafficModel:
    """Drives the vehicles whose ``control`` is the autopilot.

    Args:
        info: The lane tables of the network.
        lights: The traffic-light plan (may have no signals).
    """

    def __init__(self, info: LaneInfo, lights: TrafficLightPlan) -> None:
        self.info = info
        self.lights = lights
        n = info.n
        # Per lane: progress of its first stop line, and the light that governs it.
        self.stop_p = np.full(n, np.inf)
        self.stop_signal = np.full(n, -1, dtype=np.int64)
        lines = lights.stop_lines
        if len(lines.uid):
            sp = info.progress(lines.uid, lines.s)
            order = np.lexsort((sp, lines.uid))
            su, sp, sig = lines.uid[order], sp[order], lines.signal_index[order]
            first = np.concatenate(([True], su[1:] != su[:-1]))
            self.stop_p[su[first]] = sp[first]
            self.stop_signal[su[first]] = sig[first]
        self.gate = JunctionGate(info)
        self.merge_into = _merge_lanes(info)
        self.through_lane = np.array(
            [name in _THROUGH_TYPES for name in info.net.lanes.type_name], dtype=bool
        )
        self.change_timer: FloatArray = np.zeros(0)
        self.target_uid: IntArray = np.zeros(0, dtype=np.int64)

    def resize(self, capacity: int) -> None:
        """Makes room for ``capacity`` actor slots (new slots start fresh)."""
        timer = np.zeros(capacity)
        timer[: self.change_timer.size] = self.change_timer
        target = np.full(capacity, -1, dtype=np.int64)
        target[: self.target_uid.size] = self.target_uid
        self.change_timer, self.target_uid = timer, target
        self.gate.resize(capacity)

    def forget(self, slots: IntArray) -> None:
        """Clears the memory of slots whose vehicles left (their slots may be reused)."""
        self.change_timer[slots] = 0.0
        self.target_uid[slots] = -1
        self.gate.granted[slots] = False
        self.gate.grant_age[slots] = 0.0

    def settle_speeds(
        self, idx: IntArray, state: WorldState, salt: UIntArray, params: TrafficParams
    ) -> None:
        """Lowers the speeds of vehicles ``idx`` (at spawn) to IDM's equilibrium for the gap
        to the vehicle ahead, and to what lets them stop comfortably before the next
        junction or stop line, so that nobody starts by braking hard or is carried into
        a junction it was not let into."""
        info = self.info
        me = idx[state.uid[idx] >= 0]
        on = np.flatnonzero(state.active & (state.uid >= 0))
        occ = LaneOccupancy.build(
            info.n, on, state.uid[on], info.progress(state.uid[on], state.s[on])
        )
        uid = state.uid[me]
        p = info.progress(uid, state.s[me])
        half = 0.5 * state.length[me]
        gap, _, route, _ = leader(
            occ, info, me, uid, p, salt[me], 0.5 * state.length, state.speed, HOPS
        )
        idm = _take(params.idm, me)
        calm = np.maximum(gap - idm.min_gap, 0.0) / idm.time_headway
        # Before the first junction lane or stop line ahead (not the lane it is on).
        lanes = np.concatenate((uid[:, None], route), axis=1)
        start = self._starts(lanes, p, half)
        lanes_c = np.maximum(lanes, 0)
        entry = np.where((lanes >= 0) & (info.junction[lanes_c] >= 0), start, np.inf)
        entry[:, 0] = np.where(info.junction[uid] >= 0, np.inf, entry[:, 0])
        line = np.where(lanes >= 0, start + self.stop_p[lanes_c], np.inf)
        line = np.where(line > 0.0, line, np.inf)
        room = np.minimum(entry.min(axis=1), line.min(axis=1)) - idm.min_gap
        stoppable = np.sqrt(2.0 * np.asarray(idm.comfort_decel) * np.maximum(room, 0.0))
        state.speed[me] = np.minimum(state.speed[me], np.minimum(calm, stoppable))

    # ---------------------------------------------------------------------------------------------

    def act(
        self,
        idx: IntArray,
        state: WorldState,
        wheelbase: FloatArray,
        salt: UIntArray,
        params: TrafficParams,
        time: float,
        dt: float,
    ) -> tuple[FloatArray, FloatArray]:
        """Acceleration and steering commands for the autopilot vehicles ``idx`` (sorted).

        Every active actor of ``state`` is an obstacle; ``wheelbase``, ``salt`` and the
        arrays of ``params`` are indexed by slot.

        Returns:
            ``(accel, steer)`` for ``idx`` (m/s^2, rad).
        """
        info = self.info
        accel = np.zeros(idx.size)
        steer = np.zeros(idx.size)
        on_lane = state.uid[idx] >= 0
        me = idx[on_lane]
        off = idx[~on_lane]
        # Off every lane (a vehicle pushed off the road): brake, wheels straight.
        accel[~on_lane] = -np.asarray(_take(params.idm, off).comfort_decel)
        if me.size == 0:
            return accel, steer

        uid = state.uid[me]
        p = info.progress(uid, state.s[me])
        v = state.speed[me]
        half_all = 0.5 * state.length
        half = half_all[me]
        my_salt = salt[me]
        idm = _take(params.idm, me)
        target = self._carry_target(self.target_uid[me], uid, my_salt)
        changing = target != uid

        # -- perception ----------------------------------------------------------------------------
        # A vehicle changing lanes is in both; one that must leave a lane that drops asks
        # to merge by showing itself in the lane it merges into (a zipper).
        # Any actor whose body reaches over its lane's edge is in the neighbour lane too.
        merging = ~changing & (info.usable[uid] - p < _MERGE_RANGE) & (self.merge_into[uid] >= 0)
        on = np.flatnonzero(state.active & (state.uid >= 0))
        u_on = state.uid[on]
        p_on = info.progress(u_on, state.s[on])
        over, over_lane = self._straddling(u_on, p_on, state.t[on], state.width[on])
        occ = LaneOccupancy.build(
            info.n,
            np.concatenate((on, me[changing], me[merging], on[over])),
            np.concatenate(
                (u_on, target[changing], self.merge_into[uid[merging]], over_lane[over])
            ),
            np.concatenate((p_on, p[changing], p[merging], p_on[over])),
        )
        gap, lead_v, route, ahead = leader(
            occ, info, me, uid, p, my_salt, half_all, state.speed, HOPS
        )
        if changing.any():
            c = np.flatnonzero(changing)
            g2, v2, _, _ = leader(
                occ, info, me[c], target[c], p[c], my_salt[c], half_all, state.speed, HOPS
            )
            # No room left in the target lane (someone else moved in): stay in the lane.
            abort = g2 < _ABORT_GAP
            target[c[abort]] = uid[c[abort]]
            closer = ~abort & (g2 < gap[c])
            gap[c[closer]], lead_v[c[closer]] = g2[closer], v2[closer]
        lanes = np.concatenate((uid[:, None], route), axis=1)  # (n, 1 + HOPS)
        start = self._starts(lanes, p, half)
        # The vehicle ahead goes into or through the junction: one may ask behind it.
        lead_slot = np.maximum(ahead, 0)
        ahead_goes = (ahead >= 0) & (
            self.gate.granted[lead_slot] | (info.junction[np.maximum(state.uid[lead_slot], 0)] >= 0)
        )
        obstacle = self._obstacles(
            me,
            lanes,
            start,
            v,
            time,
            idm,
            gap,
            occ,
            half_all,
            my_salt,
            target != uid,
            ahead_goes,
            state.speed,
            dt,
        )
        blocked = obstacle < gap
        gap = np.where(blocked, obstacle, gap)
        lead_v = np.where(blocked, 0.0, lead_v)

        # -- longitudinal ---------------------------------------------------------------------------
        v0 = info.speed_limit[uid] * params.speed_factor[me]
        v0 = np.minimum(v0, self._curve_speed(lanes, p, start + half[:, None]))
        a = idm_accel(v, v0, gap, lead_v, idm)

        # -- lateral ----------------------------------------------------------------------------------
        self.change_timer[me] = np.maximum(self.change_timer[me] - dt, 0.0)
        target = self._mobil(
            me,
            uid,
            p,
            v,
            v0,
            half,
            a,
            target,
            idm,
            params,
            occ,
            state,
            half_all,
            my_salt,
            round(time / dt) + 1,  # the tick being computed, counted from 1
        )
        self.target_uid[me] = target

        # -- steering: track the centre line of the target lane ----------------------------------
        # The box centre moves at the slip angle beta to the body's heading.
        course = state.heading[me] + np.arctan(0.5 * np.tan(state.steer[me]))
        curvature = self._track(target, p, v, state.x[me], state.y[me], course)
        beta = np.arcsin(np.clip(curvature * 0.5 * wheelbase[me], -0.99, 0.99))
        accel[on_lane] = a
        steer[on_lane] = np.arctan(2.0 * np.tan(beta))
        return accel, steer

    def _track(
        self,
        lane: IntArray,
        p: FloatArray,
        v: FloatArray,
        x: FloatArray,
        y: FloatArray,
        course: FloatArray,
    ) -> FloatArray:
        """Path curvature that brings each vehicle (centre at x, y, moving in direction
        ``course``) onto the centre line of ``lane``.

        The lane's own curvature (looked up a little ahead, for the steering lag) plus a
        critically damped correction of the lateral and heading errors over a distance of
        `_TRACK_TIME` seconds of driving (at least `_TRACK_MIN` metres). The lateral error
        is capped at `_TRACK_MAX_ERROR`, which paces lane changes.
        """
        table = self.info.table
        xc, yc, hc = table.pose(lane, p)
        sin_h, cos_h = np.sin(hc), np.cos(hc)
        lateral = np.clip(-(x - xc) * sin_h + (y - yc) * cos_h, -_TRACK_MAX_ERROR, _TRACK_MAX_ERROR)
        heading_error = np.remainder(course - hc + np.pi, 2.0 * np.pi) - np.pi
        reach = np.maximum(_TRACK_MIN, _TRACK_TIME * v)
        ahead = np.minimum(p + _TRACK_PREVIEW * v, self.info.length[lane])
        feedback: FloatArray = lateral / reach**2 + 2.0 * heading_error / reach
        return table.signed_curvature(lane, ahead) - feedback

    # -- obstacles -------------------------------------------------------------------------------------

    def _straddling(
        self, uid: IntArray, p: FloatArray, t: FloatArray, width: FloatArray
    ) -> tuple[BoolArray, IntArray]:
        """Which actors reach over the edge of their lane, and into which neighbour lane
        (of the same direction; -1 where there is none)."""
        info = self.info
        graph = info.net.graph
        lo, hi = info.table.bounds(uid, p)
        offset = info.sign[uid] * (t - 0.5 * (lo + hi))  # positive: left of driving direction
        side = np.where(offset > 0.0, graph.left_uid[uid], graph.right_uid[uid])
        side_c = np.maximum(side, 0)
        over = np.abs(offset) + 0.5 * width > 0.5 * (hi - lo) + _EDGE_TOLERANCE
        over &= (side >= 0) & info.drivable[side_c] & (info.sign[side_c] == info.sign[uid])
        return over, side

    def _starts(self, lanes: IntArray, p: FloatArray, half: FloatArray) -> FloatArray:
        """Distance from each front bumper to the start of each of ``lanes`` (inf past the
        route's end)."""
        length = self.info.length
        start = np.empty(lanes.shape)
        start[:, 0] = -p - half
        for h in range(1, lanes.shape[1]):
            prev = lanes[:, h - 1]
            start[:, h] = start[:, h - 1] + np.where(prev >= 0, length[np.maximum(prev, 0)], np.inf)
        return start

    def _obstacles(
        self,
        me: IntArray,
        lanes: IntArray,
        start: FloatArray,
        v: FloatArray,
        time: float,
        idm: IdmParams,
        leader_gap: FloatArray,
        occ: LaneOccupancy,
        half_all: FloatArray,
        salt: UIntArray,
        changing: BoolArray,
        ahead_goes: BoolArray,
        speed: FloatArray,
        dt: float,
    ) -> FloatArray:
        """Gap from each front bumper to the nearest standing obstacle (inf: none).

        ``lanes`` are the vehicle's lane and the next ones of its route, ``start`` the
        distance to the start of each (see `_starts`).
        """
        info = self.info
        n = lanes.shape[0]
        lanes_c = np.maximum(lanes, 0)
        stop_distance = v * v / (2.0 * np.asarray(idm.comfort_decel) * np.ones(n))
        obstacle = np.full(n, np.inf)

        # Red lights, and yellow ones where there is room to stop.
        if self.lights.signals:
            shown = self.lights.state(time)
            signal = self.stop_signal[lanes_c]
            has = (lanes >= 0) & (signal >= 0)
            colour = np.where(has, shown[np.maximum(signal, 0)], GREEN)
            d = start + self.stop_p[lanes_c]
            can_stop = d > stop_distance[:, None]
            stop = has & (d > -0.5) & ((colour == RED) | ((colour == YELLOW) & can_stop))
            obstacle = np.minimum(obstacle, np.where(stop, d, np.inf).min(axis=1))

        # The end of a lane that drops (where it gets too narrow). Vehicles reaching the
        # edge of the map drive off it and are taken out by the simulation.
        last = np.concatenate((lanes[:, 1:] < 0, np.ones((n, 1), dtype=bool)), axis=1)
        ends = (lanes >= 0) & last & (info.end_kind[lanes_c] == LANE_DROP)
        # A vehicle already moving over into the next lane may use the whole of its own.
        usable = info.usable[lanes_c]
        usable[:, 0] = np.where(changing, info.length[lanes_c[:, 0]], usable[:, 0])
        d = start + usable
        obstacle = np.minimum(obstacle, np.where(ends, d, np.inf).min(axis=1))

        # Junction entries the vehicle must yield at.
        gate = self.gate.gaps(
            me,
            lanes,
            start,
            stop_distance,
            leader_gap,
            ahead_goes,
            obstacle,
            occ,
            half_all,
            salt,
            speed,
            dt,
        )
        nearest: FloatArray = np.minimum(obstacle, gate)
        return nearest

    def _curve_speed(self, lanes: IntArray, p: FloatArray, start: FloatArray) -> FloatArray:
        """Highest speed from which the vehicle can slow down for the curves ahead: the
        speed envelope of its own lane at p, and those of the next lanes of its route at
        their start (``start``: distance from the vehicle's centre), reached by braking."""
        table = self.info.table
        v_sq = table.curve_speed_sq(lanes[:, 0], p)
        for h in range(1, lanes.shape[1]):
            lane = np.maximum(lanes[:, h], 0)
            ahead = table.envelope_sq[table.ptr[lane]] + 2.0 * ENVELOPE_DECEL * start[:, h]
            v_sq = np.minimum(v_sq, np.where(lanes[:, h] >= 0, ahead, np.inf))
        speed: FloatArray = np.sqrt(v_sq)
        return speed

    # -- lane changes ------------------------------------------------------------------------------------

    def _carry_target(self, target: IntArray, uid: IntArray, salt: UIntArray) -> IntArray:
        """The lane-change target in the vehicle's current lane section.

        A vehicle that passes into the next section mid-change goes on into the target's
        successor; a finished change or a target that ends becomes the vehicle's own lane.
        """
        section = self.info.net.lanes.section
        moved_on = (target >= 0) & (section[np.maximum(target, 0)] != section[uid])
        if moved_on.any():
            target = target.copy()
            target[moved_on] = self.info.choose_next(salt[moved_on], target[moved_on])
        t = np.maximum(target, 0)
        keep = (target >= 0) & (section[t] == section[uid]) & (target != uid)
        return np.where(keep, target, uid)

    def _mobil(
        self,
        me: IntArray,
        uid: IntArray,
        p: FloatArray,
        v: FloatArray,
        v0: FloatArray,
        half: FloatArray,
        a_now: FloatArray,
        target: IntArray,
        idm: IdmParams,
        params: TrafficParams,
        occ: LaneOccupancy,
        state: WorldState,
        half_all: FloatArray,
        salt: UIntArray,
        tick: int,
    ) -> IntArray:
        """Lane-change decisions: the new target lane of each vehicle."""
        info = self.info
        graph = info.net.graph
        to_end = info.length[uid] - p
        free = (target == uid) & (self.change_timer[me] <= 0.0) & (info.junction[uid] < 0)
        forced = info.drop_at[uid] - p < _FORCED_RANGE
        free &= forced | (to_end > _NO_CHANGE_BEFORE_END)
        # Drivers think about changing lanes a few times a second, not at every tick:
        # each vehicle (by slot) on one tick in `_DECIDE_EVERY`, forced changes always.
        free &= forced | (me % _DECIDE_EVERY == tick % _DECIDE_EVERY)
        if not free.any():
            return target
        best_gain = np.full(uid.size, -np.inf)
        best = target.copy()
        for right, neighbour in ((False, graph.left_uid), (True, graph.right_uid)):
            cand = neighbour[uid]
            cand_c = np.maximum(cand, 0)
            ok = free & (cand >= 0) & info.drivable[cand_c] & (info.sign[cand_c] == info.sign[uid])
            # Wide enough for the vehicle here and a little further on.
            for ahead in (0.0, 15.0):
                lo, hi = info.table.bounds(cand_c, np.minimum(p + ahead, info.length[cand_c]))
                ok &= hi - lo >= state.width[me] + _WIDTH_MARGIN
            # Room in the new lane: a voluntary change never goes into a lane about to drop.
            room = np.where(forced, 2.0 * half, _FORCED_RANGE + _NO_CHANGE_BEFORE_END)
            ok &= np.minimum(info.usable[cand_c], info.drop_at[cand_c]) - p > room
            # Entry, exit and ramp lanes are for traffic that needs them, not for overtaking.
            ok &= forced | self.through_lane[cand_c]
            if not ok.any():
                continue
            i = np.flatnonzero(ok)
            lane = cand_c[i]
            # Neighbours share the section: progress is the same coordinate in both.
            g_lead, v_lead, _, _ = leader(
                occ, info, me[i], lane, p[i], salt[i], half_all, state.speed, 1
            )
            g_follow, follow = follower(occ, info, lane, p[i], half[i], half_all)
            has_follow = follow >= 0
            follow = np.maximum(follow, 0)
            a_new = idm_accel(v[i], v0[i], g_lead, v_lead, _take(idm, i))
            v_follow = state.speed[follow]
            follow_idm = _take(params.idm, follow)
            follow_v0 = info.speed_limit[lane] * params.speed_factor[follow]
            a_follow = idm_accel(v_follow, follow_v0, g_follow, v[i], follow_idm)
            safe = (g_lead > 1.0) & (g_follow > 1.0)
            safe &= ~has_follow | (a_follow > -_SAFE_DECEL)
            gain = a_new - a_now[i]
            gain += params.politeness * np.where(has_follow, np.minimum(a_follow, 0.0), 0.0)
            if params.keep_right:
                gain += _KEEP_RIGHT_BIAS if right else -_KEEP_RIGHT_BIAS
            gain = np.where(forced[i], gain + _FORCED_BONUS, gain)
            want = safe & (gain > _CHANGE_THRESHOLD) & (gain > best_gain[i])
            best[i[want]] = lane[want]
            best_gain[i[want]] = gain[want]
        changed = np.flatnonzero(best != target)
        changed = changed[self._clear_of_each_other(changed, best, p, half)]
        out = target.copy()
        out[changed] = best[changed]
        self.change_timer[me[changed]] = _CHANGE_COOLDOWN
        return out

    @staticmethod
    def _clear_of_each_other(
        changed: IntArray, lane: IntArray, p: FloatArray, half: FloatArray
    ) -> BoolArray:
        """Which of the vehicles deciding to change into a lane this tick may do so: of two
        that would end up too close in the same lane, the rear one waits."""
        keep = np.ones(changed.size, dtype=bool)
        if changed.size < 2:
            return keep
        order = np.lexsort((-p[changed], lane[changed]))  # by lane, front first
        ln, q, h = lane[changed][order], p[changed][order], half[changed][order]
        too_close = (ln[1:] == ln[:-1]) & (q[:-1] - q[1:] - h[:-1] - h[1:] < 2.0 * _ABORT_GAP + 2.0)
        keep[order[1:][too_close]] = False
        return keep

    # -- geometry ------------------------------------------------------------------------------------------


def _merge_lanes(info: LaneInfo) -> IntArray:
    """For each lane that drops, the neighbour (same direction) its traffic merges into:
    the one that goes on further; -1 for other lanes."""
    graph = info.net.graph
    out = np.full(info.n, -1, dtype=np.int64)
    drops = np.flatnonzero(info.end_kind == LANE_DROP)
    best = np.full(drops.size, -np.inf)
    for neighbour in (graph.left_uid, graph.right_uid):
        cand = neighbour[drops]
        c = np.maximum(cand, 0)
        ok = (cand >= 0) & info.drivable[c] & (info.sign[c] == info.sign[drops])
        reach = np.where(info.end_kind[c] == LANE_DROP, info.usable[c], np.inf)
        better = ok & (reach > info.usable[drops]) & (reach > best)
        out[drops[better]] = cand[better]
        best = np.where(better, reach, best)
    return out


def _take(p: IdmParams, slots: IntArray) -> IdmParams:
    """The IDM parameters of some vehicles."""

    def pick(value: FloatArray | float) -> FloatArray | float:
        return value[slots] if isinstance(value, np.ndarray) else value

    return IdmParams(
        max_accel=pick(p.max_accel),
        comfort_decel=pick(p.comfort_decel),
        time_headway=pick(p.time_headway),
        min_gap=pick(p.min_gap),
        delta=p.delta,
    )
