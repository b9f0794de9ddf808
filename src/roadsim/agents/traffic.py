"""The traffic model: lane following with IDM, lane changes with MOBIL, lights, junctions.

All vehicles driven by the autopilot are handled together, as arrays. Each tick:

1. *Perception*, through the driver sensor (`roadsim.sensors.driver`): the vehicle ahead
   in the main lane and along the route, the neighbours ahead and behind in the lanes
   beside it (for vehicles about to consider a lane change), the lights of the main lane
   and the distance to its end, all within the sensor's visibility (`VISIBILITY`). A
   vehicle that signals a lane change (or must merge before a lane drop) is also entered
   in the lane it moves into, so that the traffic there sees it coming. Red and yellow
   lights, the ends of lanes that drop, and junction entries a vehicle must yield at
   (`roadsim.agents.junctions`) are standing obstacles.
2. *Longitudinal*: IDM toward the nearest obstacle. The desired speed is the lane's limit
   times the vehicle's factor, lowered ahead of curves so that the lateral acceleration
   stays below `roadsim.world.lane_samples.LATERAL_ACCEL`.
3. *Lateral*: MOBIL (Kesting, Treiber, Helbing 2007) picks changes to the left or right
   neighbour lane of the same direction; a lane that drops forces a change.
4. *Steering*: the curvature of the centre line of the lane the vehicle wants to be in,
   plus a critically damped correction of its lateral and heading errors, as a
   front-wheel angle for the bicycle model.

The per-vehicle work is compiled (`roadsim.agents.traffic_kernels`, where the constants
live); this class keeps the state between ticks and the tables built once per map.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from roadsim._jit import chunks_for
from roadsim._types import FloatArray, IntArray, UIntArray
from roadsim.agents.idm import IdmParams
from roadsim.agents.junctions import JunctionGate
from roadsim.agents.passages import PassageGate
from roadsim.agents.traffic_kernels import (
    COMFORT_DECEL,
    HOPS,
    MIN_GAP,
    TIME_HEADWAY,
    Drivers,
    Perceived,
    Routes,
    Seen,
    TrafficActors,
    commit_changes,
    decide,
    observe_perceive,
    prepare,
    routes,
)
from roadsim.sensors.driver import DEFAULT_VISIBILITY, DriverSensor, out_fits
from roadsim.sensors.driver_kernels import FRONT, WANT_FRONT, Out
from roadsim.world.lane_info import LaneInfo
from roadsim.world.lane_kernels import by_lane, straight_headings
from roadsim.world.state import SCRIPTED_OBJECT, WorldState
from roadsim.world.traffic_lights import NON_VEHICLE_LIGHT_TYPES, TrafficLightPlan

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork

_THROUGH_TYPES = frozenset({"driving", "bidirectional"})  # lanes open to lane changes
VISIBILITY = DEFAULT_VISIBILITY  # m: how far traffic drivers see


@dataclass
class TrafficParams:
    """Per-vehicle behaviour, arrays over actor slots."""

    speed_factor: FloatArray  # desired speed / speed limit
    idm: IdmParams
    politeness: float = 0.3
    keep_right: bool = True
    #: Seconds the steering lags (half the time the wheels take from straight to full
    #: lock): lane keeping reads the lane's curvature this much further ahead. 0: none.
    steer_lag: FloatArray | float = 0.0
    #: How fast the wheels turn (rad/s): lane keeping reads ahead only by the lag of
    #: the turn the road asks for, up to ``steer_lag``.
    steer_rate: FloatArray | float = 1.0


class TrafficModel:
    """Drives the vehicles whose ``control`` is the autopilot.

    Args:
        info: The lane tables of the network, with the stop lines of ``lights``
            (``LaneInfo(net, lights.stop_lines)``).
        lights: The traffic-light plan (may have no signals).
        sensor: The driver sensor the vehicles perceive through.

    Raises:
        ValueError: If ``info`` was built without the stop lines of ``lights``.
    """

    def __init__(self, info: LaneInfo, lights: TrafficLightPlan, sensor: DriverSensor) -> None:
        if len(lights.stop_lines.uid) and info.stop_lines is not lights.stop_lines:
            # Traffic reads the stop lines from the lane tables (`LaneInfo.stop_p`):
            # without the lights' own, it would drive through their red.
            raise ValueError("info: expected LaneInfo(net, lights.stop_lines)")
        self.info = info
        self.lights = lights
        self.sensor = sensor
        self.straight_heading = straight_headings(info.arrays)  # for the lane keeping
        table = sensor.signals
        # The lights traffic stops at: for vehicles (the sensor lists them all).
        self.stops: IntArray = np.array(
            [
                bool(light) and kind not in NON_VEHICLE_LIGHT_TYPES
                for light, kind in zip(sensor.tables.sig_light, table.type, strict=True)
            ],
            dtype=np.int64,
        )
        self.light_ahead = _light_ahead(info)
        self.gate = JunctionGate(info)
        self.passages = PassageGate(info)
        self.merge_into = _merge_lanes(info)
        self.through_lane = np.array(
            [name in _THROUGH_TYPES for name in info.net.lanes.type_name], dtype=bool
        )
        self.change_timer: FloatArray = np.zeros(0)
        self._seen: Out | None = None  # the sensor's results, reused from tick to tick
        self._perceived: Perceived | None = None  # and perceive's
        self._seen_by: Seen | None = None  # what traffic reads of `_seen`
        self._order: IntArray = np.zeros(0, dtype=np.int64)  # 0, 1, ..., n - 1
        self._visibility: FloatArray = np.zeros(0)  # VISIBILITY, by row
        self.target_uid: IntArray = np.zeros(0, dtype=np.int64)
        self.routes = Routes.empty(0)

    def resize(self, capacity: int) -> None:
        """Makes room for ``capacity`` actor slots (new slots start fresh)."""
        timer = np.zeros(capacity)
        timer[: self.change_timer.size] = self.change_timer
        target = np.full(capacity, -1, dtype=np.int64)
        target[: self.target_uid.size] = self.target_uid
        self.change_timer, self.target_uid = timer, target
        self.gate.resize(capacity)
        self.passages.resize(capacity)
        routes = Routes.empty(capacity)
        for kept, old in zip(routes, self.routes, strict=True):
            kept[: old.shape[0]] = old
        self.routes = routes

    def per_slot(self) -> tuple[npt.NDArray[Any], ...]:
        """The model's memory of each vehicle, arrays by slot along their first axis (the
        simulation moves their rows with the vehicles: `roadsim.world.state.move_rows`)."""
        return (
            self.change_timer,
            self.target_uid,
            self.gate.granted,
            self.gate.grant_lane,
            self.gate.grant_age,
            self.gate.wait_age,
            self.passages.let_in,
            self.passages.waits,
            self.passages.waited,
            *self.routes,
        )

    def forget(self, slots: IntArray) -> None:
        """Clears the memory of slots whose vehicles left (their slots may be reused)."""
        self.change_timer[slots] = 0.0
        self.target_uid[slots] = -1
        self.gate.granted[slots] = False
        self.gate.grant_lane[slots] = -1
        self.gate.grant_age[slots] = 0.0
        self.gate.wait_age[slots] = 0.0
        self.passages.let_in[slots] = -1
        self.passages.waits[slots] = np.inf
        self.passages.waited[slots] = 0.0

    def settle_speeds(
        self, idx: IntArray, state: WorldState, salt: UIntArray, params: TrafficParams
    ) -> None:
        """Lowers the speeds of vehicles ``idx`` (at spawn) to IDM's equilibrium for the gap
        to the vehicle ahead, and to what lets them stop comfortably before the next
        junction or stop line, so that nobody starts by braking hard or is carried into
        a junction it was not let into."""
        info = self.info
        me = idx[state.uid[idx] >= 0]
        if me.size == 0:
            return  # (and a scene without traffic compiles none of traffic's kernels)
        uid = state.uid[me]
        p = info.progress(uid, state.s[me])
        half_all = 0.5 * state.length
        drivers = _drivers(params, salt, np.zeros(state.capacity))
        seen = self.lean_view(state, salt, drivers, me)
        gap = np.where(seen.object_slot[:, FRONT] >= 0, seen.object_lon[:, FRONT], np.inf)
        route = routes(info.arrays, uid, salt[me], HOPS)
        min_gap, headway = drivers.idm[me, MIN_GAP], drivers.idm[me, TIME_HEADWAY]
        calm = np.maximum(gap - min_gap, 0.0) / headway
        # Before the first junction lane or stop line ahead (not the lane it is on).
        lanes = np.concatenate((uid[:, None], route), axis=1)
        length = np.where(lanes >= 0, info.length[np.maximum(lanes, 0)], np.inf)
        front = -p - half_all[me]  # from the front bumper to the start of the own lane
        start = np.column_stack((front, front[:, None] + np.cumsum(length, axis=1)[:, :-1]))
        lanes_c = np.maximum(lanes, 0)
        entry = np.where((lanes >= 0) & (info.junction[lanes_c] >= 0), start, np.inf)
        entry[:, 0] = np.where(info.junction[uid] >= 0, np.inf, entry[:, 0])
        line = np.where(lanes >= 0, start + info.stop_p[lanes_c], np.inf)
        line = np.where(line > 0.0, line, np.inf)
        room = np.minimum(entry.min(axis=1), line.min(axis=1)) - min_gap
        stoppable = np.sqrt(2.0 * drivers.idm[me, COMFORT_DECEL] * np.maximum(room, 0.0))
        state.speed[me] = np.minimum(state.speed[me], np.minimum(calm, stoppable))

    def lean_view(
        self,
        state: WorldState,
        salt: UIntArray,
        drivers: Drivers,
        me: IntArray,
        want: int = WANT_FRONT,
        time: float = 0.0,
    ) -> Out:
        """The driver sensor's lean rows (``want``: what to find, the sensor's WANT_*
        flags; the view ahead by default) of the vehicles in slots ``me`` (on lanes),
        through traffic's own loop over them, without `perceive`: the sensor's pass for
        such rows then compiles only once."""
        n = me.size
        sensor = self.sensor
        occ = sensor.occupancy(state)
        order = by_lane(state.uid[me], self.info.n)
        wants, visibility = np.full(n, want), np.full(n, VISIBILITY)
        sensed, actors, shown = (
            sensor.actors(state, salt),
            _traffic_actors(state),
            sensor.shown(time),
        )
        target, p = np.empty(n, dtype=np.int64), np.zeros(n)
        view = sensor.out_for(n)
        gate = self.gate
        while True:
            observe_perceive(
                len(view.cursor), self.info.arrays, sensor.tables, occ, sensed, wants, visibility,
                shown, view, Seen.of(view), actors, drivers, me, p, target, gate.granted,
                gate.boxed, gate.setback, self.stops, self.routes, Perceived.empty(n), order,
                False,
            )  # fmt: skip
            if out_fits(view):
                return view
            view = sensor.grown(view)

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
        *,
        all_on_lane: bool = False,
    ) -> tuple[FloatArray, FloatArray]:
        """Acceleration and steering commands for the autopilot vehicles ``idx`` (sorted).

        Every active actor of ``state`` is an obstacle; ``wheelbase``, ``salt`` and the
        arrays of ``params`` are indexed by slot. A caller that knows every vehicle of
        ``idx`` is on a lane says so (``all_on_lane``), which saves looking.

        Returns:
            ``(accel, steer)`` for ``idx`` (m/s^2, rad).
        """
        info = self.info
        la = info.arrays
        drivers = _drivers(params, salt, wheelbase)
        # The rows in slot order, which is lane order give or take the vehicles that moved
        # on since the simulation last sorted its slots: each thread's share of a pass is
        # a run of rows, and vehicles near each other read neighbouring table rows.
        me, at = idx, None  # at: the positions in idx of the rows, where not all of idx
        on_lane = None if all_on_lane else state.uid[idx] >= 0
        if on_lane is not None and not on_lane.all():
            # Off every lane (a vehicle pushed off the road): brake, wheels straight.
            accel, steer = np.zeros(idx.size), np.zeros(idx.size)
            accel[~on_lane] = -drivers.idm[idx[~on_lane], COMFORT_DECEL]
            if not on_lane.any():
                return accel, steer
            at = np.flatnonzero(on_lane)
            me = idx[at]
        actors = _traffic_actors(state)
        # -- what each vehicle is about to do, and what it sees ----------------------------------
        n = me.size
        p, target, extra = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        may_change, want = np.empty(n, dtype=bool), np.empty(n, dtype=np.int64)
        if self._order.size != n:
            self._order, self._visibility = np.arange(n), np.full(n, VISIBILITY)
        order = self._order
        envelope_sq, curvature = np.empty(n), np.empty(n)
        chunks = chunks_for(n)
        prepare(
            chunks, la, self.straight_heading, actors, drivers, me, self.target_uid,
            self.merge_into, self.change_timer, round(time / dt) + 1, dt, p, target, extra,
            may_change, want, self.light_ahead, VISIBILITY, order, envelope_sq, curvature,
        )  # fmt: skip
        planned = target.copy()
        # Vehicles signalling a change, or merging before a lane drop, are seen in the lane
        # they move into too (a few hundred of 10,000: only theirs go to the sort).
        sensor = self.sensor
        moving = np.flatnonzero(extra >= 0)
        boxes = _scripted_ahead(state, self.info.net)
        occ = sensor.occupancy(state, (me[moving], extra[moving], p[moving]), boxes)
        if self._perceived is None or self._perceived.gap.size != n:
            self._perceived = Perceived.empty(n)
        seen = self._perceived  # every field of every row is written
        gate = self.gate
        sensed, shown = sensor.actors(state, salt), sensor.shown(time)
        view = sensor.out_for(n, self._seen)
        while True:
            if self._seen_by is None or self._seen_by.main_side is not view.main_side:
                self._seen_by = Seen.of(view)
            observe_perceive(
                len(view.cursor), la, sensor.tables, occ, sensed, want, self._visibility, shown,
                view, self._seen_by, actors, drivers, me, p, target, gate.granted, gate.boxed,
                gate.setback, self.stops, self.routes, seen, order, True,
            )  # fmt: skip
            if out_fits(view):
                break
            target[:] = planned  # as before the pass, which runs again with more room
            view = sensor.grown(view)
        self._seen, seen_by = view, self._seen_by
        if self.passages.passages.number:
            # (where long vehicles stop before passages now: the room after a junction
            # ends there)
            gate.long_stop = self.passages.stops()
            # A vehicle that waits for a passage before its next junction's entry does
            # not ask to enter meanwhile: a promise it could not use held the lanes that
            # cross its path, where those coming out of the passage wait to leave it
            # (Town07's road 60).
            entry = seen.start[np.arange(n), seen.entry_hop]
            held_back = (seen.entry_hop > 0) & (self.passages.waits[me] <= entry)
            seen.wants_in[held_back] = False
        waits = gate.gaps(
            me, seen.lanes, seen.start, seen.entry_hop, seen.wants_in, occ, actors.half_length,
            actors.speed, salt, dt,
        )  # fmt: skip
        passage_waits = self.passages.gaps(
            me, seen.lanes, seen.start, gate.boxed, actors.half_length, actors.speed, salt,
            seen.gap, dt,
        )  # fmt: skip
        if passage_waits is not None:
            np.minimum(waits, passage_waits, out=waits)

        # -- longitudinal, lateral, steering -------------------------------------------------------
        a, best, d = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n)
        decide(
            chunks, la, seen_by, actors, drivers, me, p, target, seen.lanes, seen.start, seen.gap,
            seen.lead_v, seen.obstacle, waits, envelope_sq, may_change, self.change_timer,
            self.through_lane, float(params.politeness), bool(params.keep_right),
            float(params.idm.delta), a, best, self.straight_heading, planned, curvature, d, order,
        )  # fmt: skip
        commit_changes(
            la, self.straight_heading, actors, drivers, me, p, target, best, planned, curvature,
            d, self.change_timer, self.target_uid,
        )  # fmt: skip
        if at is None:
            return a, d
        accel[at] = a
        steer[at] = d
        return accel, steer


#: Seconds ahead of a scripted object that traffic sees it: a scripted pedestrian follows
#: its script whatever the traffic does, so drivers brake when it is about to step into
#: their lane, not once it stands in it.
SCRIPTED_LOOKAHEAD_S = 1.5


def _scripted_ahead(
    state: WorldState, net: RoadNetwork
) -> tuple[FloatArray, FloatArray, FloatArray] | None:
    """Each actor's s, t and length as traffic sees them: a moving scripted object's box
    reaches `SCRIPTED_LOOKAHEAD_S` ahead along its heading (its centre moved half of that
    on); None where no scripted object moves on a lane."""
    slots = np.flatnonzero(
        state.active & (state.kind == SCRIPTED_OBJECT) & (state.uid >= 0) & (state.speed > 0.1)
    )
    if not slots.size:
        return None
    s, t, length = state.s.copy(), state.t.copy(), state.length.copy()
    reach = state.speed[slots] * SCRIPTED_LOOKAHEAD_S
    turn = state.heading[slots] - net.reference_pose(state.road[slots], state.s[slots])[3]
    s[slots] += 0.5 * reach * np.cos(turn)
    t[slots] += 0.5 * reach * np.sin(turn)
    length[slots] += reach
    return s, t, length


def _traffic_actors(state: WorldState) -> TrafficActors:
    """What the traffic kernels read of every actor, by slot."""
    return TrafficActors(
        id=state.id,
        active=state.active,
        uid=state.uid,
        s=state.s,
        t=state.t,
        x=state.x,
        y=state.y,
        heading=state.heading,
        speed=state.speed,
        slip=state.slip,
        half_length=0.5 * state.length,
        width=state.width,
    )


def _drivers(params: TrafficParams, salt: UIntArray, wheelbase: FloatArray) -> Drivers:
    """The per-slot arrays the kernels read (scalars in ``params.idm`` spread over slots)."""
    n = salt.size

    def per_slot(value: FloatArray | float) -> FloatArray:
        if isinstance(value, np.ndarray) and value.dtype == np.float64 and value.size == n:
            return value
        return np.broadcast_to(np.asarray(value, dtype=np.float64), (n,)).copy()

    return Drivers(
        idm=_idm_table(params.idm, n),
        speed_factor=per_slot(params.speed_factor),
        salt=salt,
        wheelbase=per_slot(wheelbase),
        steer_lag=per_slot(params.steer_lag),
        steer_rate=per_slot(params.steer_rate),
    )


def _idm_table(idm: IdmParams, n: int) -> FloatArray:
    """``idm``'s four parameters as the (n, 4) table of `Drivers.idm`: the table they
    are the columns of, where they are the columns of one that owns its memory as a
    simulation's does (no copy: the simulation's moves of slots move its rows), or else
    a new one."""
    values = (idm.max_accel, idm.comfort_decel, idm.time_headway, idm.min_gap)
    columns = [c for c in values if isinstance(c, np.ndarray)]
    table = columns[0].base if len(columns) == 4 else None
    if (
        isinstance(table, np.ndarray)
        and table.shape == (n, 4)
        and table.dtype == np.float64
        and table.flags.c_contiguous
        and all(
            c.base is table and c.shape == (n,) and (n == 1 or c.strides == table.strides[:1])
            for c in columns
        )
    ):
        at = table.__array_interface__["data"][0]
        if all(c.__array_interface__["data"][0] == at + 8 * j for j, c in enumerate(columns)):
            return table
    out = np.empty((n, 4))
    for j, value in enumerate(values):
        out[:, j] = value
    return out


def _light_ahead(info: LaneInfo, hops: int = 12) -> FloatArray:
    """Per lane, the distance from its start to the nearest stop line of a light on it or
    on the lanes after it (any branch, up to ``hops`` lanes on; inf: none)."""
    src = np.repeat(np.arange(info.n, dtype=np.int64), info.next_count)
    dst = info.next_idx
    out = info.stop_p.copy()
    for _ in range(hops):
        np.minimum.at(out, src, info.length[src] + out[dst])
    return out


def _merge_lanes(info: LaneInfo) -> IntArray:
    """For each lane that drops, or leads into a drop (``LaneInfo.drop_at``), the
    neighbour (same direction) its traffic merges into: the one that goes on further; -1
    for other lanes. (A vehicle asks to merge in the lane before the one that drops, too:
    else one beside it in the lane it merges into may come alongside it unasked, and
    each then waits for the other.)"""
    out = np.full(info.n, -1, dtype=np.int64)
    drops = np.flatnonzero(np.isfinite(info.drop_at) & info.drivable)
    best = np.full(drops.size, -np.inf)
    for column in (0, 1):  # (left, then right)
        cand = info.beside[drops, column]
        reach = info.drop_at[np.maximum(cand, 0)]
        better = (cand >= 0) & (reach > info.drop_at[drops]) & (reach > best)
        out[drops[better]] = cand[better]
        best = np.where(better, reach, best)
    return out
