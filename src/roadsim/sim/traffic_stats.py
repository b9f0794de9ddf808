"""How traffic is doing: speeds, vehicles standing, junction throughput and collisions.

`TrafficStats` watches a `Simulation` tick by tick (call `observe` after every step) and
sums up what shows whether traffic flows: the mean speed and the share of vehicles
standing, the longest time a vehicle stood, vehicles entering junctions per minute, and
collision events, those between two vehicles apart. Benchmarks print it beside their speed
figures, and the tests hold traffic to it.

Stands longer than `STUCK_AFTER` are counted twice over:

- the strict count (``long_stands``): every such stand with no red light ahead when its
  minute was up;
- by class, the measure of issue 27 ("no vehicle stands for more than 60 s except behind
  a red light or in a queue that moves"). From its minute on, a stand is looked at once a
  second (`NOTE_EVERY`): the vehicle's queue moved over the last `STUCK_AFTER` seconds
  (`roadsim.sim.queues`: one of the vehicles ahead of it up to the queue's head, or for a
  head waiting at a junction one of those on its path and the lanes after it, and the
  queue of the foremost of those where it waits at the next junction in turn, or for a
  head waiting before a narrow passage one of those in the passage, drove
  `roadsim.sim.queues.MOVED_ON` metres), or else a red or yellow light is within
  `LIGHT_REACH` ahead of it, or else it is stuck. A stand is stuck if it was stuck once;
  else behind a red light if it was so once; else in a queue that moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roadsim._types import FloatArray, IntArray
from roadsim.sim.queues import QueueWatch, Traffic
from roadsim.sim.simulation import Simulation
from roadsim.world.state import AUTOPILOT, VEHICLE

#: Below this speed a vehicle stands (m/s).
STANDING_SPEED = 0.1

#: A vehicle that stands this long, neither behind a red light nor in a queue that moves
#: (over the last this many seconds), is stuck (s).
STUCK_AFTER = 60.0

#: How often the queues of standing vehicles are looked at (s).
NOTE_EVERY = 1.0

#: The classes of a long stand, in the order a stand's class is raised (0: none yet).
IN_MOVING_QUEUE, BEHIND_RED, STUCK = 1, 2, 3

#: How far ahead a red (or yellow) light explains a vehicle standing (m): a queue that
#: waits for a light may be long.
LIGHT_REACH = 300.0


@dataclass(frozen=True)
class TrafficSummary:
    """What `TrafficStats` saw.

    Attributes:
        seconds: Simulated time watched (s).
        vehicles: Mean number of autopilot vehicles.
        mean_speed: Their mean speed over all ticks (m/s).
        standing: The share of them standing (below `STANDING_SPEED`), over all ticks.
        longest_stand: The longest time one of them stood (s), up to the last tick.
        long_stands: Stands longer than `STUCK_AFTER` with no red or yellow light within
            `LIGHT_REACH` ahead in the lane when that time was up (the strict count).
        behind_red, in_moving_queue, stuck: Stands longer than `STUCK_AFTER` by class
            (see the module docstring): behind a red light, in a queue that moves, and
            neither (stuck, the issue's measure).
        stands: The stands longer than `STUCK_AFTER`, in the order they ended (those
            still going on at the last tick last).
        junction_entries_per_min: Vehicles entering a junction, per simulated minute.
        collisions: Collision events that began while watched.
        vehicle_collisions: Those between two vehicles.
    """

    seconds: float
    vehicles: float
    mean_speed: float
    standing: float
    longest_stand: float
    long_stands: int
    behind_red: int
    in_moving_queue: int
    stuck: int
    junction_entries_per_min: float
    collisions: int
    vehicle_collisions: int
    stands: tuple[Stand, ...] = ()

    def to_text(self) -> str:
        over = self.behind_red + self.in_moving_queue + self.stuck
        return (
            f"{self.vehicles:.0f} vehicles, mean speed {self.mean_speed:.1f} m/s, "
            f"{100 * self.standing:.0f}% standing, longest stand {self.longest_stand:.0f} s, "
            f"{over} stands over {STUCK_AFTER:.0f} s ({self.long_stands} without a red light "
            f"ahead; {self.behind_red} behind a red light, {self.in_moving_queue} in a queue "
            f"that moves, {self.stuck} stuck), "
            f"{self.junction_entries_per_min:.0f} junction entries/min, "
            f"{self.vehicle_collisions} vehicle collisions ({self.collisions} in all)"
        )


@dataclass(frozen=True)
class Stand:
    """One stand longer than `STUCK_AFTER`.

    Attributes:
        id: The vehicle's actor id.
        begin: When it began (simulation time, s).
        seconds: How long it lasted (s), up to the last tick watched.
        kind: `IN_MOVING_QUEUE`, `BEHIND_RED` or `STUCK`.
        uid: The lane the vehicle stood on (uid).
    """

    id: int
    begin: float
    seconds: float
    kind: int
    uid: int


class TrafficStats:
    """Watches ``sim``'s autopilot vehicles from its current frame on; see the module
    docstring. Call `observe` after every `Simulation.step`, then `summary`."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        roads = sim.net.road_junction
        self._junction_road = np.array([j is not None for j in roads], dtype=bool)
        self._events_seen = len(sim.events)
        self._ticks = 0
        self._start = sim.time
        self._vehicle_ticks = 0
        self._speed_sum = 0.0
        self._standing_ticks = 0
        self._entries = 0
        self._collisions = 0
        self._vehicle_collisions = 0
        self._long_stands = 0
        self._longest = 0.0
        self._stands: list[Stand] = []
        self._queues = QueueWatch(STUCK_AFTER)
        self._note_every = max(1, round(NOTE_EVERY / sim.dt))
        # By actor id (grown as ids appear): when it began to stand (NaN: moving), whether
        # it counted in the strict count in this stand, the class of this stand so far
        # (0: none), whether it was in a junction last tick.
        self._since = np.full(0, np.nan)
        self._counted = np.zeros(0, dtype=bool)
        self._kind = np.zeros(0, dtype=np.int64)
        self._in_junction = np.zeros(0, dtype=bool)
        self._grow(int(sim.state.id.max(initial=-1)) + 1)
        ids, _, in_junction = self._vehicles()
        self._in_junction[ids] = in_junction

    def _grow(self, size: int) -> None:
        if size <= self._since.size:
            return
        extra = max(size, 2 * self._since.size) - self._since.size
        self._since = np.concatenate((self._since, np.full(extra, np.nan)))
        self._counted = np.concatenate((self._counted, np.zeros(extra, dtype=bool)))
        self._kind = np.concatenate((self._kind, np.zeros(extra, dtype=np.int64)))
        self._in_junction = np.concatenate((self._in_junction, np.zeros(extra, dtype=bool)))

    def _vehicles(self) -> tuple[IntArray, FloatArray, np.ndarray]:
        st = self.sim.state
        slots = np.flatnonzero(st.active & (st.kind == VEHICLE) & (st.control == AUTOPILOT))
        road = st.road[slots]
        in_junction = np.zeros(slots.size, dtype=bool)
        on = road >= 0
        in_junction[on] = self._junction_road[road[on]]
        return st.id[slots], st.speed[slots], in_junction

    def observe(self) -> None:
        """Takes in the frame the simulation has just made."""
        sim = self.sim
        now = sim.time
        ids, speed, in_junction = self._vehicles()
        self._grow(int(ids.max(initial=-1)) + 1)
        self._ticks += 1
        self._vehicle_ticks += ids.size
        self._speed_sum += float(speed.sum())
        standing = speed < STANDING_SPEED
        self._standing_ticks += int(standing.sum())

        st = sim.state
        on = st.active & (st.kind == VEHICLE)
        self._queues.drive(st.id[on], st.speed[on], sim.dt)

        # Stands: begin, go on or end.
        moving = ids[~standing]
        ended = moving[~np.isnan(self._since[moving])]
        if ended.size:
            self._longest = max(self._longest, float(np.max(now - self._since[ended])))
            self._end_stands(ended[self._kind[ended] > 0], now)
        self._since[moving] = np.nan
        self._counted[moving] = False
        self._kind[moving] = 0
        still = ids[standing]
        began = still[np.isnan(self._since[still])]
        self._since[began] = now
        if still.size:
            self._longest = max(self._longest, float(np.max(now - self._since[still])))
        long = still[now - self._since[still] > STUCK_AFTER]
        due = long[~self._counted[long]]
        if due.size:
            self._counted[due] = True
            self._long_stands += int(np.sum(~self._red_ahead(due)))
        if self._ticks % self._note_every == 0:
            self._queues.note(Traffic.of(sim) if still.size else None, still, now)
            self._classify(long)
        elif due.size:
            self._classify(due)  # (a stand may end before the next note)

        self._entries += int(np.sum(in_junction & ~self._in_junction[ids]))
        self._in_junction[ids] = in_junction

        events = sim.events[self._events_seen :]
        self._events_seen = len(sim.events)
        if events:
            st = sim.state
            kind_of = dict(zip(st.id.tolist(), st.kind.tolist(), strict=True))
            self._collisions += len(events)
            self._vehicle_collisions += sum(
                kind_of.get(e.id_a) == VEHICLE and kind_of.get(e.id_b) == VEHICLE for e in events
            )

    def _classify(self, ids: IntArray) -> None:
        """Raises the class of the stands of vehicles ``ids`` (standing longer than
        `STUCK_AFTER`) by what they wait for now."""
        if ids.size == 0:
            return
        now = np.array([self._queues.moved(int(i)) for i in ids.tolist()], dtype=bool)
        kind = np.full(ids.size, IN_MOVING_QUEUE)
        if not now.all():
            red = self._red_ahead(ids[~now])
            kind[~now] = np.where(red, BEHIND_RED, STUCK)
        self._kind[ids] = np.maximum(self._kind[ids], kind)

    def _end_stands(self, ids: IntArray, now: float) -> None:
        """Records the long stands of vehicles ``ids`` as they are at ``now``."""
        st = self.sim.state
        slot_of = dict(zip(st.id.tolist(), range(st.id.size), strict=True))
        for vid in ids.tolist():
            slot = slot_of.get(vid)
            uid = int(st.uid[slot]) if slot is not None else -1
            begin = float(self._since[vid])
            self._stands.append(Stand(vid, begin, now - begin, int(self._kind[vid]), uid))

    def _red_ahead(self, ids: IntArray) -> np.ndarray:
        """Whether each vehicle ``ids`` has a red or yellow light within `LIGHT_REACH`
        ahead in its lane."""
        views = self.sim.driver_views(ids)
        out = np.zeros(ids.size, dtype=bool)
        for k in range(ids.size):
            lights = views[k].traffic_rule_information.lane_ego.traffic_lights
            out[k] = any(
                light.state != "green" and 0.0 <= light.relative_distance <= LIGHT_REACH
                for light in lights
            )
        return out

    def summary(self) -> TrafficSummary:
        ticks = max(self._ticks, 1)
        seconds = self.sim.time - self._start
        ended = list(self._stands)
        going = np.flatnonzero(~np.isnan(self._since) & (self._kind > 0))
        self._end_stands(going, self.sim.time)
        stands, self._stands = tuple(self._stands), ended
        kinds = [stand.kind for stand in stands]
        return TrafficSummary(
            seconds=seconds,
            vehicles=self._vehicle_ticks / ticks,
            mean_speed=self._speed_sum / max(self._vehicle_ticks, 1),
            standing=self._standing_ticks / max(self._vehicle_ticks, 1),
            longest_stand=self._longest,
            long_stands=self._long_stands,
            behind_red=kinds.count(BEHIND_RED),
            in_moving_queue=kinds.count(IN_MOVING_QUEUE),
            stuck=kinds.count(STUCK),
            junction_entries_per_min=60.0 * self._entries / seconds if seconds > 0 else 0.0,
            collisions=self._collisions,
            vehicle_collisions=self._vehicle_collisions,
            stands=stands,
        )


def watch(sim: Simulation, seconds: float) -> TrafficSummary:
    """Steps ``sim`` for ``seconds`` of simulated time with a `TrafficStats` watching, and
    returns what it saw."""
    stats = TrafficStats(sim)
    for _ in range(round(seconds / sim.dt)):
        sim.step()
        stats.observe()
    return stats.summary()
