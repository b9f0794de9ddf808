"""How traffic is doing: speeds, vehicles standing, junction throughput and collisions.

`TrafficStats` watches a `Simulation` tick by tick (call `observe` after every step) and
sums up what shows whether traffic flows: the mean speed and the share of vehicles
standing, the longest time a vehicle stood, vehicles that stood for more than a minute
without a red light ahead (stuck), vehicles entering junctions per minute, and collision
events, those between two vehicles apart. Benchmarks print it beside their speed figures,
and the tests hold traffic to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roadsim._types import FloatArray, IntArray
from roadsim.sim.simulation import Simulation
from roadsim.world.state import AUTOPILOT, VEHICLE

#: Below this speed a vehicle stands (m/s).
STANDING_SPEED = 0.1

#: A vehicle that stands this long without a red light ahead is stuck (s).
STUCK_AFTER = 60.0

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
        stuck: Vehicles that stood longer than `STUCK_AFTER` with no red or yellow light
            within `LIGHT_REACH` ahead in their lane when that time was up.
        junction_entries_per_min: Vehicles entering a junction, per simulated minute.
        collisions: Collision events that began while watched.
        vehicle_collisions: Those between two vehicles.
    """

    seconds: float
    vehicles: float
    mean_speed: float
    standing: float
    longest_stand: float
    stuck: int
    junction_entries_per_min: float
    collisions: int
    vehicle_collisions: int

    def to_text(self) -> str:
        return (
            f"{self.vehicles:.0f} vehicles, mean speed {self.mean_speed:.1f} m/s, "
            f"{100 * self.standing:.0f}% standing, longest stand {self.longest_stand:.0f} s, "
            f"{self.stuck} stuck, {self.junction_entries_per_min:.0f} junction entries/min, "
            f"{self.vehicle_collisions} vehicle collisions ({self.collisions} in all)"
        )


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
        self._stuck = 0
        self._longest = 0.0
        # By actor id (grown as ids appear): when it began to stand (NaN: moving), whether
        # it counted as stuck in this stand, whether it was in a junction last tick.
        self._since = np.full(0, np.nan)
        self._counted = np.zeros(0, dtype=bool)
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

        # Stands: begin, go on or end.
        moving = ids[~standing]
        ended = moving[~np.isnan(self._since[moving])]
        if ended.size:
            self._longest = max(self._longest, float(np.max(now - self._since[ended])))
        self._since[moving] = np.nan
        self._counted[moving] = False
        still = ids[standing]
        began = still[np.isnan(self._since[still])]
        self._since[began] = now
        if still.size:
            self._longest = max(self._longest, float(np.max(now - self._since[still])))
        due = still[(now - self._since[still] > STUCK_AFTER) & ~self._counted[still]]
        if due.size:
            self._counted[due] = True
            self._stuck += int(np.sum(~self._red_ahead(due)))

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
        return TrafficSummary(
            seconds=seconds,
            vehicles=self._vehicle_ticks / ticks,
            mean_speed=self._speed_sum / max(self._vehicle_ticks, 1),
            standing=self._standing_ticks / max(self._vehicle_ticks, 1),
            longest_stand=self._longest,
            stuck=self._stuck,
            junction_entries_per_min=60.0 * self._entries / seconds if seconds > 0 else 0.0,
            collisions=self._collisions,
            vehicle_collisions=self._vehicle_collisions,
        )


def watch(sim: Simulation, seconds: float) -> TrafficSummary:
    """Steps ``sim`` for ``seconds`` of simulated time with a `TrafficStats` watching, and
    returns what it saw."""
    stats = TrafficStats(sim)
    for _ in range(round(seconds / sim.dt)):
        sim.step()
        stats.observe()
    return stats.summary()
