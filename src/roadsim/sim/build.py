"""Building frame 0 of a simulation from its scenario: ego, traffic and static objects.

Traffic is spread over the allowed lanes (outside junctions, in the spawn area), in
proportion to their length, at least ``min_gap`` apart bumper to bumper and clear of the
ego and the objects (`roadsim.sim.placement`): every vehicle asked for is placed unless
the lanes hold no more, and then a `TrafficWarning` says how many they hold. All
randomness comes from the simulation's `numpy.random.SeedSequence`, one child per use.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from roadsim._types import FloatArray, IntArray
from roadsim.agents.dynamics import VehicleLimits, wheel_angle
from roadsim.agents.idm import IdmParams
from roadsim.agents.junctions import SETBACK, entry_setbacks
from roadsim.errors import MapWarning, TrafficWarning
from roadsim.road.network import RoadNetwork
from roadsim.scenario import Scenario
from roadsim.scenario.actors import map_obstacles
from roadsim.scenario.paths import PathGeometry, resolve_paths
from roadsim.scenario.schema import (
    OBJECT_SIZES,
    SCRIPTED_KINDS,
    VEHICLE_MODELS,
    CircleArea,
    PathObject,
    RoadsArea,
)
from roadsim.scenario.validate import resolve_spawn
from roadsim.sim.lifecycle import route_salts
from roadsim.sim.placement import joined, place_apart
from roadsim.world.codes import LONG_VEHICLE, LONG_WIDTH
from roadsim.world.collisions import find_overlaps
from roadsim.world.lane_info import LaneInfo
from roadsim.world.overlaps import Overlaps
from roadsim.world.state import (
    AUTOPILOT,
    EXTERNAL,
    NO_CONTROL,
    SCRIPTED_OBJECT,
    STATIC_OBJECT,
    VEHICLE,
    WorldState,
)

#: Model indices in `WorldState.model`: the vehicle models, the static object types, map
#: objects, then the kinds of scripted objects that are not vehicles.
MODEL_NAMES: tuple[str, ...] = (
    *VEHICLE_MODELS,
    *OBJECT_SIZES,
    "map_object",
    *(k for k in SCRIPTED_KINDS if k not in VEHICLE_MODELS and k not in OBJECT_SIZES),
)
_MODEL_INDEX = {name: i for i, name in enumerate(MODEL_NAMES)}

#: IDM parameters by vehicle model: a_max, b, T, s0.
IDM_BY_MODEL = {
    "car": (1.5, 2.0, 1.4, 2.0),
    "truck": (0.8, 1.5, 1.8, 3.0),
    "bus": (1.0, 1.5, 1.6, 3.0),
}


@dataclass
class Built:
    state: WorldState
    ego_slot: int | None
    limits: VehicleLimits
    idm: IdmParams
    speed_factor: FloatArray
    salt: npt.NDArray[np.uint64]
    politeness: float
    keep_right: bool
    scripted: list[PathObject]  # the scenario's path objects, in order
    scripted_slots: IntArray  # their slots (inactive at build)
    paths: list[PathGeometry]  # their paths


#: Rounds of placing traffic and moving it out of the way of the ego and objects.
_CLEAR_ROUNDS = 4


def _grow(
    blocked: tuple[IntArray, FloatArray, FloatArray] | None,
    fixed: list[dict[str, float]],
    clash: tuple[IntArray, IntArray],
    uid: IntArray,
    p: FloatArray,
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    min_gap: float,
) -> tuple[IntArray, FloatArray, FloatArray]:
    """``blocked`` with, for each clash of a vehicle with a fixed row, the stretch of the
    vehicle's lane that the row covers (its centre projected on the lane, give or take
    half its diagonal and ``min_gap``)."""
    k, f = clash
    fx = np.array([fixed[r]["x"] for r in f.tolist()])
    fy = np.array([fixed[r]["y"] for r in f.tolist()])
    reach = 0.5 * np.hypot(
        [fixed[r]["length"] for r in f.tolist()], [fixed[r]["width"] for r in f.tolist()]
    )
    along = p[k] + (fx - x[k]) * np.cos(heading[k]) + (fy - y[k]) * np.sin(heading[k])
    return joined(blocked, (uid[k], along - reach - min_gap, along + reach + min_gap))


#: Deceleration (m/s^2) a long vehicle placed before a narrow passage can stop at from
#: its starting speed before the passage.
START_DECEL = 1.5


def _room_before(
    stretches: tuple[IntArray, FloatArray, FloatArray], uid: IntArray, front: FloatArray
) -> FloatArray:
    """How far ahead of each ``front`` (progress on lane ``uid``) the nearest of the
    ``stretches`` ``(lane, start, end)`` on its lane begins (inf: none ahead)."""
    lane, start, _ = stretches
    ahead = start[None, :] - front[:, None]  # (vehicle, stretch)
    ahead[(lane[None, :] != uid[:, None]) | (ahead < 0.0)] = np.inf
    out: FloatArray = ahead.min(axis=1, initial=np.inf)
    return out


class WorldBuilder:
    """Places everything a scenario asks for; see the module docstring."""

    def __init__(
        self,
        net: RoadNetwork,
        info: LaneInfo,
        scenario: Scenario,
        long_kept_out: tuple[IntArray, FloatArray, FloatArray] | None = None,
    ) -> None:
        """``long_kept_out``: stretches of lanes ``(lane, start, end)``, progress in m,
        where no long vehicle is placed, where the map leaves it other room (the narrow
        passages, `roadsim.agents.passages`: two trucks placed in one facing each other
        could never pass)."""
        self.net = net
        self.info = info
        self.scenario = scenario
        self.long_kept_out = long_kept_out
        seq = np.random.SeedSequence(scenario.seed)
        self._spawn_seq, self._behaviour_seq, self._route_seq, self._place_seq = seq.spawn(4)
        #: Traffic vehicles the scenario asked for and those that were placed.
        self.traffic_asked = self.traffic_placed = 0

    def build(self) -> Built:
        sc = self.scenario
        rows: list[dict[str, float]] = []
        ego_slot = None
        if sc.ego is not None:
            ego_slot = 0
            rows.append(self._ego_row())
        rows.extend(self._object_rows())
        rows.extend(self._traffic_rows(rows))
        n = len(rows)
        state = WorldState.empty(max(n, 1))
        for name in ("x", "y", "z", "heading", "speed", "length", "width", "height", "s", "t"):
            getattr(state, name)[:n] = [r[name] for r in rows]
        state.steer[:n] = [r.get("steer", 0.0) for r in rows]
        for name in ("kind", "model", "control", "uid"):
            getattr(state, name)[:n] = [int(r[name]) for r in rows]
        state.id[:n] = np.arange(n)
        state.active[:n] = True
        scripted_slots = np.flatnonzero(state.kind[:n] == SCRIPTED_OBJECT)
        state.active[scripted_slots] = False  # until their lifecycle creates them
        uid = state.uid[:n]
        state.road[:n] = np.where(uid >= 0, self.info.road[np.maximum(uid, 0)], -1)

        model = [MODEL_NAMES[int(m)] for m in state.model[:n]]
        spec = [VEHICLE_MODELS.get(m) for m in model]
        cap = state.capacity

        def column(attr: str, default: float) -> FloatArray:
            out = np.full(cap, default)
            out[:n] = [getattr(v, attr) if v is not None else default for v in spec]
            return out

        limits = VehicleLimits(
            wheelbase=column("wheelbase", 2.8),
            max_accel=column("max_accel", 3.0),
            max_decel=column("max_decel", 8.0),
            max_steer=column("max_steer", 0.6),
            max_steer_rate=column("max_steer_rate", 1.0),
        )
        idm_cols = np.zeros((cap, 4))
        for k, m in enumerate(model):
            idm_cols[k] = IDM_BY_MODEL.get(m, IDM_BY_MODEL["car"])
        idm = IdmParams(
            max_accel=idm_cols[:, 0],
            comfort_decel=idm_cols[:, 1],
            time_headway=idm_cols[:, 2],
            min_gap=idm_cols[:, 3],
        )
        speed_factor = np.ones(cap)
        speed_factor[:n] = [r.get("speed_factor", 1.0) for r in rows]
        draws = np.random.default_rng(self._route_seq).integers(
            0, 2**63 - 1, size=cap, dtype=np.int64
        )
        salt = route_salts(draws, np.where(np.arange(cap) < n, state.length, 0.0))
        traffic = sc.traffic
        return Built(
            state=state,
            ego_slot=ego_slot,
            limits=limits,
            idm=idm,
            speed_factor=speed_factor,
            salt=salt,
            politeness=traffic.politeness if traffic is not None else 0.3,
            keep_right=traffic.keep_right if traffic is not None else True,
            scripted=[o for o in sc.objects if isinstance(o, PathObject)],
            scripted_slots=scripted_slots,
            paths=self._paths,
        )

    # -- the ego and objects ------------------------------------------------------------------------------

    def _ego_row(self) -> dict[str, float]:
        ego = self.scenario.ego
        assert ego is not None
        pose = resolve_spawn(ego.spawn, self.net)
        size = VEHICLE_MODELS[ego.model]
        limit = float(self.info.speed_limit[pose.uid]) if pose.uid >= 0 else 13.9
        desired = ego.desired_speed if ego.desired_speed is not None else limit
        return {
            "x": pose.x,
            "y": pose.y,
            "z": pose.z,
            "heading": pose.heading,
            "speed": ego.speed,
            "length": size.length,
            "width": size.width,
            "height": size.height,
            "uid": pose.uid,
            "s": pose.s,
            "t": pose.t,
            "kind": VEHICLE,
            "model": _MODEL_INDEX[ego.model],
            "control": EXTERNAL if ego.control == "external" else AUTOPILOT,
            "speed_factor": desired / max(limit, 0.1),
        }

    def _object_rows(self) -> list[dict[str, float]]:
        rows = []
        scripted = [obj for obj in self.scenario.objects if isinstance(obj, PathObject)]
        self._paths: list[PathGeometry] = resolve_paths(scripted, self.net)
        paths = iter(self._paths)
        for obj in self.scenario.objects:
            if isinstance(obj, PathObject):
                rows.append(self._path_row(obj, next(paths)))
                continue
            pose = resolve_spawn(obj.position, self.net)
            length, width, height = obj.size
            rows.append(
                {
                    "x": pose.x,
                    "y": pose.y,
                    "z": pose.z,
                    "heading": pose.heading,
                    "speed": 0.0,
                    "length": length,
                    "width": width,
                    "height": height,
                    "uid": pose.uid,
                    "s": pose.s,
                    "t": pose.t,
                    "kind": STATIC_OBJECT,
                    "model": _MODEL_INDEX[obj.type],
                    "control": NO_CONTROL,
                }
            )
        net = self.net
        for item in map_obstacles(net):  # (in the order `roadsim.scenario.actors` numbers them)
            length = item.length or 2.0 * item.radius
            width = item.width or 2.0 * item.radius
            road = net.road_index(item.road_id).reshape(1)
            x, y, z = net.to_world_index(road, np.array([item.s]), np.array([item.t]))
            _, _, hdg, _ = net.reference.evaluate(road, np.array([item.s]))
            pos = net.localize(x, y)
            rows.append(
                {
                    "x": float(x[0]),
                    "y": float(y[0]),
                    "z": float(z[0]) + item.z_offset,
                    "heading": float(hdg[0]) + item.hdg,
                    "speed": 0.0,
                    "length": length,
                    "width": width,
                    "height": item.height or 1.0,
                    "uid": int(pos.uid[0]),
                    "s": float(pos.s[0]),
                    "t": float(pos.t[0]),
                    "kind": STATIC_OBJECT,
                    "model": _MODEL_INDEX["map_object"],
                    "control": NO_CONTROL,
                }
            )
        return rows

    def _path_row(self, obj: PathObject, path: PathGeometry) -> dict[str, float]:
        """A scripted object, standing at the start of its path (created later)."""
        x, y, heading = path.pose_at(0.0)
        length, width, height = obj.dimensions
        return {
            "x": float(x[0]),
            "y": float(y[0]),
            "z": float(path.sample_z[0]),
            "heading": float(heading[0]),
            "speed": 0.0,
            "length": length,
            "width": width,
            "height": height,
            "uid": -1,
            "s": float("nan"),
            "t": float("nan"),
            "kind": SCRIPTED_OBJECT,
            "model": _MODEL_INDEX[obj.kind],
            "control": NO_CONTROL,
        }

    # -- traffic ------------------------------------------------------------------------------------------------

    def _warn_overlaps(self, overlaps: Overlaps) -> None:
        """One `MapWarning` for the roads of the map drawn over each other with no
        junction or link between them, naming the first such place."""
        info, net = self.info, self.net
        lane, other = int(overlaps.lane[0]), int(overlaps.other[0])
        road, other_road = net.roads[info.road[lane]], net.roads[info.road[other]]
        ends = np.array([overlaps.start[0], overlaps.end[0]])
        s = np.sort(info.road_s(np.array([lane, lane]), ends))
        where = net.path or "<string>"
        if road.line is not None:
            where += f":{road.line}"
        message = (
            f"{where}: road {road.id}: lane {int(net.lanes.lane_id[lane])} lies over lane "
            f"{int(net.lanes.lane_id[other])} of road {other_road.id} from s={s[0]:.3g} to "
            f"s={s[1]:.3g} with no junction or link between them"
        )
        roads = np.unique(info.road[np.concatenate((overlaps.lane, overlaps.other))])
        pairs = {
            tuple(sorted(pair))
            for pair in zip(overlaps.lane.tolist(), overlaps.other.tolist(), strict=True)
        }
        if len(pairs) > 1:
            message += f" (and {len(pairs) - 1} more pairs, on {roads.size} roads in all)"
        message += (
            "; traffic does not see across such places: it starts on none of them and leaves "
            "a dead end before one"
        )
        warnings.warn(message, MapWarning, stacklevel=5)

    def _traffic_rows(self, placed: list[dict[str, float]]) -> list[dict[str, float]]:
        traffic = self.scenario.traffic
        if traffic is None:
            return []
        info, net = self.info, self.net
        allowed_types = set(traffic.lane_types)
        types = np.array([t in allowed_types for t in net.lanes.type_name], dtype=bool)
        ok = info.drivable & types & (info.junction < 0) & (info.usable - info.usable_from > 10.0)
        area = traffic.spawn_area
        if isinstance(area, RoadsArea):
            wanted = net.road_index(list(area.roads))
            ok &= np.isin(info.road, wanted)
        lanes = np.flatnonzero(ok)
        if isinstance(area, CircleArea) and lanes.size:
            mid_s = 0.5 * (info.s0[lanes] + info.s1[lanes])
            mx, my, _ = net.to_world_index(info.road[lanes], mid_s, net.uid_t_center(lanes, mid_s))
            near = np.hypot(mx - area.center[0], my - area.center[1]) <= area.radius
            lanes = lanes[near]
        total = float(info.length[lanes].sum())
        if traffic.count is not None:
            n = traffic.count
        else:
            n = round((traffic.density or 0.0) * total / 1000.0)
        self.traffic_asked = n
        if n <= 0:
            return []
        if lanes.size == 0:
            warnings.warn(
                f"{self._map_name()} has no lane traffic may start on (outside junctions, "
                f"of types {', '.join(traffic.lane_types)}, in the spawn area); placed 0 of {n}",
                TrafficWarning,
                stacklevel=4,
            )
            return []
        rng = np.random.default_rng(self._spawn_seq)
        names = list(traffic.mix)
        weights = np.array([traffic.mix[m] for m in names], dtype=float)
        models = np.array(names)[rng.choice(len(names), size=n, p=weights / weights.sum())]
        long_model = np.array([VEHICLE_MODELS[m].length >= LONG_VEHICLE for m in models])
        if long_model.any() and not np.any(info.widest[lanes] >= LONG_WIDTH):
            warnings.warn(
                f"{self._map_name()} has no lane wide enough for trucks and buses to start on "
                f"({LONG_WIDTH:g} m); placed {int(long_model.sum())} cars in their stead",
                TrafficWarning,
                stacklevel=4,
            )
            models[long_model] = "car"
        length = np.array([VEHICLE_MODELS[m].length for m in models])
        width = np.array([VEHICLE_MODELS[m].width for m in models])
        height = np.array([VEHICLE_MODELS[m].height for m in models])

        # Spread over the lanes, then moved out of the way of the ego and the objects:
        # where a vehicle would overlap one (with min_gap around it), that stretch of the
        # lane is kept free and the vehicles are placed again (a few rounds).
        # (where a lane that opens is still too narrow, nobody starts)
        narrow = lanes[info.usable_from[lanes] > 0.0]
        blocked: tuple[IntArray, FloatArray, FloatArray] | None = (
            (narrow, np.full(narrow.size, -np.inf), info.usable_from[narrow])
            if narrow.size
            else None
        )
        overlaps = info.overlaps
        if overlaps.size:
            # Roads drawn over each other: traffic does not see across them, so nobody
            # starts there (and dead ends there move, `LaneInfo.map_edges`).
            self._warn_overlaps(overlaps)
            blocked = joined(blocked, (overlaps.lane, overlaps.start, overlaps.end))
        if long_model.any():
            # Nobody starts where traffic waiting for a junction keeps clear of the turns
            # long vehicles sweep (`roadsim.agents.junctions.entry_setbacks`): a car placed
            # there stands in the way of the first truck that turns past it.
            setback = entry_setbacks(info)[lanes]
            wide = setback > SETBACK
            swept, end = lanes[wide], info.length[lanes[wide]] - setback[wide]
            blocked = joined(blocked, (swept, end, np.full(swept.size, np.inf)))
        usable = info.usable[lanes]
        long = length >= LONG_VEHICLE
        open_to_long = info.tight[lanes] < 2  # (`LaneInfo.tight`)
        if np.any(open_to_long & info.circuits_of_long[lanes]):
            # Where their ways close into circuits, long vehicles start on those: the
            # traffic starts as it drives after a while, without trucks on the roads they
            # would only pass once (Town07's narrow bends).
            open_to_long &= info.circuits_of_long[lanes]
        for _ in range(_CLEAR_ROUNDS):
            rng = np.random.default_rng(self._place_seq)
            spot = place_apart(
                length, long, lanes, usable, open_to_long, traffic.min_gap, rng, blocked,
                self.long_kept_out,
            )  # fmt: skip
            uid, p, v = spot.lane, spot.progress, spot.vehicle
            s = info.road_s(uid, p)
            road = info.road[uid]
            t = net.uid_t_center(uid, s)
            x, y, z = net.to_world_index(road, s, t)
            _, _, hdg, _ = net.reference.evaluate(road, s)
            heading = np.where(info.sign[uid] < 0, hdg + np.pi, hdg)
            heading = np.remainder(heading + np.pi, 2 * np.pi) - np.pi
            clash = self._clashes(placed, x, y, z, heading, length[v], width[v], height[v])
            if clash[0].size == 0:
                break
            blocked = _grow(blocked, placed, clash, uid, p, x, y, heading, traffic.min_gap)
        else:
            keep = np.ones(uid.size, bool)
            keep[clash[0]] = False
            uid, p, v, s, road, t = uid[keep], p[keep], v[keep], s[keep], road[keep], t[keep]
            x, y, z, heading = x[keep], y[keep], z[keep], heading[keep]
        models, length, width, height = models[v], length[v], width[v], height[v]
        self.traffic_asked, self.traffic_placed = n, int(uid.size)
        if uid.size < n:
            warnings.warn(
                f"{self._map_name()} holds {uid.size} vehicles with min_gap "
                f"{traffic.min_gap:g} m; placed {uid.size} of {n}",
                TrafficWarning,
                stacklevel=4,
            )
        n = uid.size

        speed_cfg = traffic.speed
        behaviour = np.random.default_rng(self._behaviour_seq)
        factor = np.clip(
            behaviour.normal(speed_cfg.mean, speed_cfg.std, size=n), speed_cfg.min, speed_cfg.max
        )
        v0 = info.speed_limit[uid] * factor
        # Below the speed from which the curves ahead can be taken (the simulation
        # lowers it further where the vehicle ahead is close), the wheels already turned
        # as the lane bends.
        table = info.table
        at = table.ptr[uid] + np.clip(
            (p / table.spacing[uid]).astype(np.int64), 0, table.count[uid] - 1
        )
        speed = np.minimum(0.9 * v0, np.sqrt(table.envelope_sq[at]))
        if self.long_kept_out is not None:
            # A long vehicle starts slow enough to stop where it waits for a passage
            # ahead on its lane: one placed fast just before a passage that one coming
            # the other way was let in to could not stop, and met it in the bend.
            longs = np.flatnonzero(length >= LONG_VEHICLE)
            ahead = _room_before(self.long_kept_out, uid[longs], p[longs] + 0.5 * length[longs])
            speed[longs] = np.minimum(speed[longs], np.sqrt(2.0 * START_DECEL * ahead))
        wheelbase = np.array([VEHICLE_MODELS[str(m)].wheelbase for m in models])
        steer = wheel_angle(table.curvature[at], wheelbase)
        rows = []
        for k in range(n):
            rows.append(
                {
                    "x": float(x[k]),
                    "y": float(y[k]),
                    "z": float(z[k]),
                    "heading": float(heading[k]),
                    "speed": float(speed[k]),
                    "steer": float(steer[k]),
                    "length": float(length[k]),
                    "width": float(width[k]),
                    "height": float(height[k]),
                    "uid": int(uid[k]),
                    "s": float(s[k]),
                    "t": float(t[k]),
                    "kind": VEHICLE,
                    "model": _MODEL_INDEX[str(models[k])],
                    "control": AUTOPILOT,
                    "speed_factor": float(factor[k]),
                }
            )
        return rows

    def _clashes(
        self,
        fixed: list[dict[str, float]],
        x: FloatArray,
        y: FloatArray,
        z: FloatArray,
        heading: FloatArray,
        length: FloatArray,
        width: FloatArray,
        height: FloatArray,
    ) -> tuple[IntArray, IntArray]:
        """``(vehicle, row)``: the traffic vehicles that would overlap a ``fixed`` row
        (the ego, an object), with min_gap before and behind and 0.5 m beside them, and
        which row each overlaps."""
        none = np.zeros(0, np.int64)
        if not fixed or x.size == 0:
            return none, none
        assert self.scenario.traffic is not None
        gap = self.scenario.traffic.min_gap
        m = len(fixed)

        def column(name: str, values: FloatArray) -> FloatArray:
            return np.concatenate(([r[name] for r in fixed], values))

        i, j = find_overlaps(
            column("x", x),
            column("y", y),
            column("heading", heading),
            column("length", length + 2.0 * gap),
            column("width", width + 1.0),
            np.ones(m + x.size, bool),
        )
        zs, hs = column("z", z), column("height", height)
        met = (i < m) & (j >= m) & (zs[i] < zs[j] + hs[j]) & (zs[j] < zs[i] + hs[i])
        return j[met] - m, i[met]

    def _map_name(self) -> str:
        """The map's name for messages: its header's, else the scenario's ``map``."""
        name = (self.net.header.name or "").strip()
        if name:
            return name
        given = self.scenario.map
        return Path(given).stem if given.endswith(".xodr") else given
