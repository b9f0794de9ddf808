"""Traffic lights that run fixed-time cycles, deterministic from simulation time.

A `TrafficLightPlan` is built once from a road network and answers "what does every
light show at time t" with a handful of array operations.

**Heads.** The plan covers the map's dynamic signals (``net.signals`` with ``dynamic``;
OpenDRIVE 1.8, 14.1), with signal references resolved as in `roadsim.road.signals`. A
reference places the same light head again, so every signal with the same id shows the
same state.

**Phases.** Lights switch in *groups*, usually one per junction, and a group's phases take
turns: phase 1 green for ``green`` s, yellow for ``yellow`` s, red for ``all_red`` s
(everyone red, to clear the junction), then phase 2, and so on. The groups come from

1. the map's controllers (OpenDRIVE 1.8, 14.6): every controller is one phase. A junction
   lists its controllers (``junction.controllers``) and they take turns ordered by
   ``sequence`` (controllers without one last), then id. A controller no junction lists
   joins the junction its first light stands at (see below), or else cycles alone.
2. a default plan for dynamic signals no controller names: at each junction, its lights
   are grouped by approach direction -- lights whose traffic heads within 30 degrees of
   each other, or of the opposite direction, share a phase (north-south, then east-west)
   -- and these phases follow the junction's controller phases. A light for pedestrians or
   cyclists (`NON_VEHICLE_LIGHT_TYPES`) lets people *cross* the road it stands on, so it is
   grouped with the direction at right angles. Lights at no junction are grouped the same
   way with the others on their road within ``junction_distance`` (a pedestrian
   crossing), and a light alone there cycles alone.

A light "stands at" a junction when its road is part of the junction, or when the road
ends at the junction (OpenDRIVE road link) at most ``junction_distance`` metres beyond
the light in the direction of the traffic it faces (orientation ``+``: the road's
successor, ``-``: its predecessor, none: the nearer end).

**Offsets.** Groups do not switch together: group ``g`` is shifted by the fractional part
of ``g`` times the golden ratio, times its cycle length, where ``g`` is the junction's
index in ``net.junctions`` (and ``len(net.junctions) + k`` for the k-th group at no
junction). Junction 0's first phase thus turns green at t = 0.

**States.** `TrafficLightPlan.state` gives `RED`, `YELLOW` or `GREEN` per signal.
Pedestrian and cyclist lights have no yellow: they show red while their phase is yellow.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from roadsim._types import FloatArray, IntArray
from roadsim.road.graph import END_OF_LANE_TYPES
from roadsim.road.model import Controller, Signal
from roadsim.road.signals import SignalIndex, resolve_signal_references
from roadsim.world.codes import GREEN as GREEN
from roadsim.world.codes import RED as RED
from roadsim.world.codes import YELLOW as YELLOW

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork

__all__ = [
    "GREEN",
    "NON_VEHICLE_LIGHT_TYPES",
    "RED",
    "STOP_LANE_TYPES",
    "YELLOW",
    "LightGroup",
    "StopLines",
    "TrafficLightPlan",
]

StateArray = npt.NDArray[np.int8]

#: What a light shows, as the int8 values of `TrafficLightPlan.state`.

#: Catalogue types of lights for pedestrians and cyclists (OpenDRIVE signal catalogue:
#: 1000002 pedestrians, 1000007 pedestrians and bicycles, 1000013 bicycles). They have no
#: yellow, govern no vehicle lane (no stop line), and in a default plan they go green
#: with the traffic at right angles to their road.
NON_VEHICLE_LIGHT_TYPES: frozenset[str] = frozenset({"1000002", "1000007", "1000013"})

#: Lane types that get a stop line where a light applies to them: the lanes vehicles
#: drive (`roadsim.road.graph.END_OF_LANE_TYPES`) and the special-purpose vehicle lanes.
STOP_LANE_TYPES: frozenset[str] = END_OF_LANE_TYPES | {"bidirectional", "bus", "taxi", "HOV"}

_SAME_AXIS = math.radians(30.0)  # default plan: approaches this close share a phase
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True, slots=True)
class LightGroup:
    """Lights that switch together, in phases that take turns.

    Attributes:
        junction_id: The junction the group controls, or ``None`` for a light or
            controller at no junction.
        phases: Per phase, the indices into `TrafficLightPlan.signals` that are green in
            it.
        controllers: Per phase, the id of the controller it comes from, or ``None`` for a
            phase of the default plan.
        cycle: Length of the cycle (s).
        offset: Time into the cycle at t = 0 (s).
    """

    junction_id: str | None
    phases: tuple[tuple[int, ...], ...]
    controllers: tuple[str | None, ...]
    cycle: float
    offset: float


@dataclass(frozen=True, slots=True)
class StopLines:
    """Where traffic stops for a light: one entry per (light, lane it applies to).

    Sorted by lane uid, then by position in the lane's driving direction.

    Attributes:
        signal_index: Index into `TrafficLightPlan.signals`, shape (K,).
        uid: Lane uid the light governs, shape (K,).
        s: Road s of the stop line (the light's s), m, shape (K,).
        ptr: CSR pointers by lane uid, shape (n_lanes + 1,): the stop lines of lane ``u``
            are entries ``ptr[u]:ptr[u + 1]``.
    """

    signal_index: IntArray
    uid: IntArray
    s: FloatArray
    ptr: IntArray


class TrafficLightPlan:
    """Fixed-time cycles for the dynamic signals of a road network.

    Build it with `from_network`; do not change it afterwards. `state` is a pure function
    of time.

    Attributes:
        signals: The dynamic signals (references resolved), in file order.
        groups: The groups of lights that switch together.
        group: Group index of each signal, shape (n,).
        phase: Phase index of each signal within its group, shape (n,).
        green, yellow, all_red: The phase timings (s).
        stop_lines: Where vehicles stop for each light (`StopLines`).
    """

    def __init__(
        self,
        signals: tuple[Signal, ...],
        groups: tuple[LightGroup, ...],
        stop_lines: StopLines,
        *,
        green: float,
        yellow: float,
        all_red: float,
    ) -> None:
        self.signals = signals
        self.groups = groups
        self.stop_lines = stop_lines
        self.green, self.yellow, self.all_red = green, yellow, all_red
        n = len(signals)
        self.group: IntArray = np.full(n, -1, dtype=np.int64)
        self.phase: IntArray = np.full(n, -1, dtype=np.int64)
        for g, grp in enumerate(groups):
            for p, members in enumerate(grp.phases):
                self.group[list(members)] = g
                self.phase[list(members)] = p
        if np.any(self.group < 0):
            raise ValueError("every signal must be in exactly one phase")
        slot = green + yellow + all_red
        cycle = np.array([grp.cycle for grp in groups], dtype=np.float64)
        offset = np.array([grp.offset for grp in groups], dtype=np.float64)
        # A signal's phase is green from (time + offset) mod cycle = phase * slot on.
        self._cycle: FloatArray = cycle[self.group]
        self._start: FloatArray = self.phase * slot - offset[self.group]
        amber = np.array([sig.type not in NON_VEHICLE_LIGHT_TYPES for sig in signals], bool)
        self._amber_end: FloatArray = green + np.where(amber, yellow, 0.0)

    @classmethod
    def from_network(
        cls,
        net: RoadNetwork,
        *,
        green: float = 20.0,
        yellow: float = 3.0,
        all_red: float = 2.0,
        junction_distance: float = 50.0,
    ) -> TrafficLightPlan:
        """The plan for a network's dynamic signals (see the module docstring).

        Args:
            net: The road network.
            green: Green time of every phase (s, > 0).
            yellow: Yellow time after each green (s, >= 0).
            all_red: Time all lights of a group stay red after a yellow (s, >= 0).
            junction_distance: How far before a junction a light may stand and still
                belong to it (m).

        Raises:
            ValueError: For a non-positive green or a negative yellow or all-red time.
        """
        if not green > 0.0 or not yellow >= 0.0 or not all_red >= 0.0:
            raise ValueError(
                f"traffic light timings: need green > 0, yellow >= 0 and all_red >= 0, "
                f"got green={green}, yellow={yellow}, all_red={all_red}"
            )
        resolved = resolve_signal_references(net.signals)
        index_of = [i for i, sig in enumerate(resolved) if sig.dynamic]
        signals = tuple(resolved[i] for i in index_of)
        builder = _GroupBuilder(net, signals, junction_distance)
        slot = green + yellow + all_red
        groups = tuple(
            LightGroup(
                junction_id,
                phases,
                ctrls,
                len(phases) * slot,
                math.fmod(rank * _GOLDEN, 1.0) * len(phases) * slot,
            )
            for rank, junction_id, phases, ctrls in builder.groups()
        )
        stop_lines = _stop_lines(net, resolved, index_of)
        return cls(signals, groups, stop_lines, green=green, yellow=yellow, all_red=all_red)

    def state(self, time: float) -> StateArray:
        """What each light shows at simulation time ``time`` (s).

        Returns:
            int8 array of shape (n,) over `signals`: `RED`, `YELLOW` or `GREEN`.
        """
        rel = np.mod(time - self._start, self._cycle)
        shown = (rel >= self.green).astype(np.int8)
        shown += rel >= self._amber_end
        return np.int8(GREEN) - shown

    def stop_line_state(self, time: float) -> StateArray:
        """`state` at each stop line, shape (K,) over `stop_lines`."""
        return self.state(time)[self.stop_lines.signal_index]

    def __repr__(self) -> str:
        return (
            f"TrafficLightPlan({len(self.signals)} lights in {len(self.groups)} groups, "
            f"{len(self.stop_lines.uid)} stop lines)"
        )


class _GroupBuilder:
    """Assigns every light head (signal id) to a group and phase."""

    def __init__(self, net: RoadNetwork, signals: Sequence[Signal], distance: float) -> None:
        self._net = net
        self._signals = signals
        self._distance = distance
        self._members: dict[str, list[int]] = {}  # head id -> signal indices
        for i, sig in enumerate(signals):
            self._members.setdefault(sig.id, []).append(i)
        self._junction_rank = {j.id: k for k, j in enumerate(net.junctions)}

    def groups(
        self,
    ) -> list[tuple[int, str | None, tuple[tuple[int, ...], ...], tuple[str | None, ...]]]:
        """``(rank, junction id, phases, controllers)`` per group, junctions first."""
        net = self._net
        heads = self._members
        # Controllers (the first of each id): a head belongs to the first naming it.
        controllers: dict[str, Controller] = {}
        for ctrl in net.controllers:
            controllers.setdefault(ctrl.id, ctrl)
        owner: dict[str, str] = {}  # head id -> controller id
        for ctrl in controllers.values():
            for sid in ctrl.signal_ids:
                if sid in heads:
                    owner.setdefault(sid, ctrl.id)
        ctrl_heads: dict[str, list[str]] = {}
        for sid, cid in owner.items():
            ctrl_heads.setdefault(cid, []).append(sid)
        listed: dict[str, str] = {}  # controller id -> first junction listing it
        for junction in net.junctions:
            for cid in junction.controllers:
                listed.setdefault(cid, junction.id)
        at_junction: dict[str, list[Controller]] = {}
        lone_ctrls: list[Controller] = []
        for cid, ctrl in controllers.items():
            if cid not in ctrl_heads:
                continue  # no dynamic signal of the map
            jid = listed.get(cid) or self._junction_of_heads(ctrl_heads[cid])
            if jid is None:
                lone_ctrls.append(ctrl)
            else:
                at_junction.setdefault(jid, []).append(ctrl)
        # Heads no controller names: the default plan.
        free_at: dict[str, list[str]] = {}
        lone_heads: list[str] = []
        for sid in heads:
            if sid in owner:
                continue
            jid = self._junction_of_heads([sid])
            if jid is None:
                lone_heads.append(sid)
            else:
                free_at.setdefault(jid, []).append(sid)

        out: list[tuple[int, str | None, tuple[tuple[int, ...], ...], tuple[str | None, ...]]]
        out = []
        for junction in net.junctions:
            phases: list[tuple[int, ...]] = []
            ctrls: list[str | None] = []
            for ctrl in sorted(at_junction.get(junction.id, []), key=_controller_order):
                phases.append(self._indices(ctrl_heads[ctrl.id]))
                ctrls.append(ctrl.id)
            for members in self._by_direction(free_at.get(junction.id, [])):
                phases.append(self._indices(members))
                ctrls.append(None)
            if phases:
                out.append(
                    (self._junction_rank[junction.id], junction.id, tuple(phases), tuple(ctrls))
                )
        rank = len(net.junctions)
        for ctrl in lone_ctrls:
            out.append((rank, None, (self._indices(ctrl_heads[ctrl.id]),), (ctrl.id,)))
            rank += 1
        for cluster in self._clusters(lone_heads):
            default = tuple(self._indices(members) for members in self._by_direction(cluster))
            out.append((rank, None, default, (None,) * len(default)))
            rank += 1
        return out

    def _clusters(self, head_ids: Sequence[str]) -> list[list[str]]:
        """Lights at no junction, clustered by road and s (within the junction distance).

        A pedestrian crossing's car and pedestrian lights thus switch as one group.
        """
        clusters: list[tuple[Signal, list[str]]] = []
        for sid in head_ids:
            sig = self._signals[self._members[sid][0]]
            for first, members in clusters:
                if first.road_id == sig.road_id and abs(first.s - sig.s) <= self._distance:
                    members.append(sid)
                    break
            else:
                clusters.append((sig, [sid]))
        return [members for _, members in clusters]

    def _indices(self, head_ids: Iterable[str]) -> tuple[int, ...]:
        return tuple(sorted(i for sid in head_ids for i in self._members[sid]))

    def _junction_of_heads(self, head_ids: Iterable[str]) -> str | None:
        """The junction the first placed signal of these heads stands at, if any."""
        for i in sorted(i for sid in head_ids for i in self._members[sid]):
            jid = _junction_at(self._net, self._signals[i], self._distance)
            if jid in self._junction_rank:  # not None, nor a junction the map lacks
                return jid
        return None

    def _by_direction(self, head_ids: Sequence[str]) -> list[list[str]]:
        """Heads grouped by the axis of the traffic they govern, first-seen order."""
        phases: list[tuple[float, list[str]]] = []
        for sid in head_ids:
            axis = _axis(self._net, self._signals[self._members[sid][0]])
            for ref, members in phases:
                diff = abs(axis - ref) % math.pi
                if min(diff, math.pi - diff) <= _SAME_AXIS:
                    members.append(sid)
                    break
            else:
                phases.append((axis, [sid]))
        return [members for _, members in phases]


def _controller_order(ctrl: Controller) -> tuple[bool, int, tuple[int, int | str]]:
    seq = ctrl.sequence
    return (seq is None, seq if seq is not None else 0, _id_order(ctrl.id))


def _id_order(ident: str) -> tuple[int, int | str]:
    """Numeric ids in numeric order, then the others as text."""
    try:
        return (0, int(ident))
    except ValueError:
        return (1, ident)


def _junction_at(net: RoadNetwork, sig: Signal, distance: float) -> str | None:
    """The junction a signal stands at (module docstring), or ``None``."""
    road = net.roads[int(net.road_index(sig.road_id))]
    if road.junction is not None:
        return road.junction
    ends = []
    if sig.orientation != "-" and road.successor is not None:
        ends.append((road.length - sig.s, road.successor))
    if sig.orientation != "+" and road.predecessor is not None:
        ends.append((sig.s, road.predecessor))
    ends = [(d, link) for d, link in ends if link.element_type == "junction" and d <= distance]
    if not ends:
        return None
    return min(ends, key=lambda e: e[0])[1].element_id


def _axis(net: RoadNetwork, sig: Signal) -> float:
    """Direction (rad, modulo pi) of the traffic a light lets go when it is green."""
    road = net.road_index(sig.road_id).reshape(1)
    hdg = float(net.reference_pose(road, np.array([sig.s]))[3][0])
    if sig.type in NON_VEHICLE_LIGHT_TYPES:
        hdg += 0.5 * math.pi  # people cross the road
    return hdg % math.pi


def _stop_lines(net: RoadNetwork, resolved: Sequence[Signal], index_of: Sequence[int]) -> StopLines:
    """Stop lines of the vehicle lights: the lanes each applies to (`SignalIndex`)."""
    index = SignalIndex(net, net.graph)
    n_lanes = net.graph.n_lanes
    plan_index = np.full(len(resolved), -1, dtype=np.int64)
    plan_index[np.asarray(index_of, dtype=np.int64)] = np.arange(len(index_of))
    vehicle = np.array(
        [sig.dynamic and sig.type not in NON_VEHICLE_LIGHT_TYPES for sig in resolved], bool
    )
    lane_ok = np.array([t in STOP_LANE_TYPES for t in net.lanes.type_name], bool)
    uid = np.repeat(np.arange(n_lanes, dtype=np.int64), np.diff(index.lane_ptr))
    keep = vehicle[index.lane_signal] & lane_ok[uid]
    uid = uid[keep]
    sig_idx = plan_index[index.lane_signal[keep]]
    s = np.array([resolved[i].s for i in index.lane_signal[keep]], dtype=np.float64)
    # SignalIndex lists a lane's signals by their position from the lane's entry.
    order = np.lexsort((sig_idx, index.lane_pos[keep], uid))
    uid, sig_idx, s = uid[order], sig_idx[order], s[order]
    ptr = np.zeros(n_lanes + 1, dtype=np.int64)
    np.cumsum(np.bincount(uid, minlength=n_lanes), out=ptr[1:])
    return StopLines(sig_idx, uid, s, ptr)
