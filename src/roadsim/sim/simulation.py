"""`Simulation`: a scenario on a road network, advanced in fixed steps.

The tick order is fixed::

    lifecycle -> controllers -> dynamics -> lane localisation -> collisions -> sensors

- *lifecycle*: collision flags are cleared; slots of vehicles that drove off the map come
  back as new vehicles at the map's entry lanes (`roadsim.sim.lifecycle`); scripted
  objects are created and deleted around the ego (`roadsim.agents.scripted`); every
  `SORT_EVERY` ticks, the traffic vehicles are sorted into lane order (below);
- *controllers*: the autopilot (traffic model) and external commands give every vehicle an
  acceleration and a steering angle; then the scripted objects move along their paths
  (after the controllers, so that all of them see the frame the tick starts from);
- *dynamics*: the kinematic bicycle model integrates the vehicles' commands, within the
  vehicle's limits;
- *lane localisation*: incremental (see `roadsim.world.localization`); a traffic vehicle
  on no lane any more has left the map and is deactivated; a scripted object starts from
  the lane under its path; a vehicle on a lane takes the height of the road surface
  there (on maps with elevation or superelevation);
- *collisions*: boxes of active actors that overlap, seen from above and in height, set
  ``collided`` on both and are reported as `CollisionEvent`s when they begin (two static
  objects never collide);
- *sensors*: the scenario's driver sensors read the frame just made
  (`Simulation.readings`). Traffic perceives through the same driver sensor
  (`roadsim.sensors.driver`) in the controllers step, from the frame the tick starts from.
  Then the scene sensors due at this frame (ray tracers, lidars, cameras;
  `roadsim.sim.ray_sensors`) cast their rays into (or render) the scene of this frame.

Slots. An actor's id never changes; the slot it sits in may. Every `SORT_EVERY` ticks the
traffic vehicles (autopilot vehicles on a lane, the ego and the vehicles scripted objects
follow aside) are moved among their own slots into lane order. The passes of a tick visit
vehicles in slot order, so that they read the per-slot arrays front to back and neighbours
on the map read neighbouring rows of the lane tables, instead of at random (at 10,000
vehicles a tick went from 9 to 12 ms to 6 to 7 ms). Look actors up by id.

Time is ``frame * dt``; nothing in a tick reads the wall clock. Randomness comes from one
`numpy.random.SeedSequence` per simulation, spawned per subsystem, so the same scenario
and seed give bit-identical states.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim._checks import as_id, as_ids, as_number
from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.agents.dynamics import VehicleLimits, step_bicycle_slots, wheel_angle
from roadsim.agents.idm import IdmParams
from roadsim.agents.passages import Passages
from roadsim.agents.scripted import Controls, ScriptedObjects
from roadsim.agents.traffic import TrafficModel, TrafficParams
from roadsim.agents.traffic_kernels import routes
from roadsim.errors import ArgumentError, ArgumentTypeError, QueryError
from roadsim.road.load import load_map
from roadsim.road.network import RoadNetwork
from roadsim.scenario import Scenario, validate_against_map
from roadsim.scenario.load import load_scenario_with_map
from roadsim.scenario.schema import VEHICLE_MODELS, DriverSensorSpec, PathObject, RoadPosition
from roadsim.scenario.validate import resolve_spawn
from roadsim.sensors.driver import DEFAULT_VISIBILITY, DriverSensor
from roadsim.sensors.raytracer import RaySensor
from roadsim.sensors.scene import Scene
from roadsim.sensors.view import DriverView, DriverViews
from roadsim.sim.actor import Actor
from roadsim.sim.build import IDM_BY_MODEL, MODEL_NAMES, WorldBuilder
from roadsim.sim.lifecycle import Respawner, route_salts
from roadsim.sim.ray_sensors import RayReading, RaySensors, SceneSensorSpec
from roadsim.world.codes import LONG_VEHICLE, MAP_EDGE, ROUTE_BIT
from roadsim.world.collisions import find_overlaps
from roadsim.world.lane_info import LaneInfo
from roadsim.world.lane_kernels import by_lane
from roadsim.world.localization import relocalize_slots
from roadsim.world.state import (
    AUTOPILOT,
    EXTERNAL,
    KIND_NAMES,
    SCRIPTED_OBJECT,
    STATIC_OBJECT,
    VEHICLE,
    WorldState,
    move_rows,
    vehicle_slots,
)
from roadsim.world.traffic_lights import TrafficLightPlan

#: Ticks between two sortings of the traffic vehicles' slots into lane order.
SORT_EVERY = 20


@dataclass(frozen=True)
class CollisionEvent:
    """Two actors began to overlap at ``frame``."""

    frame: int
    time: float
    id_a: int
    id_b: int


@dataclass(frozen=True)
class EgoCommand:
    """What an external client asks of the ego for the next tick.

    Either pedals and wheel (``throttle`` and ``brake`` in [0, 1], ``steering`` in [-1, 1]
    of the maximum angle, positive left) or targets (``accel`` in m/s^2, ``curvature`` in
    1/m, any finite value: the vehicle's limits bound what it does); targets win where both
    are given.

    Raises:
        ArgumentTypeError: For a value that is not a number (a string, a dict, a bool).
        ArgumentError: For NaN, an infinity, or pedals and wheel outside their ranges.
    """

    throttle: float = 0.0
    brake: float = 0.0
    steering: float = 0.0
    accel: float | None = None
    curvature: float | None = None

    def __post_init__(self) -> None:
        # Checked here, not in the tick: a NaN would make the ego's pose NaN for good, and
        # a string would fail a tick later, far from the call that gave it.
        ranges = {"throttle": (0.0, 1.0), "brake": (0.0, 1.0), "steering": (-1.0, 1.0)}
        for name, (low, high) in ranges.items():
            value = as_number(getattr(self, name), f"EgoCommand.{name}", low=low, high=high)
            object.__setattr__(self, name, value)
        for name in ("accel", "curvature"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, as_number(getattr(self, name), f"EgoCommand.{name}"))


class Simulation:
    """A running scenario.

    Args:
        scenario: A `Scenario`, a path to a scenario file, or a built-in scenario name.
        seed: Overrides the scenario's seed.

    Attributes:
        scenario: The validated scenario (`roadsim.Scenario`), with ``seed`` applied.
        net: The road network (`roadsim.RoadNetwork`), every index built.
        dt: The fixed step (s).
        frame: Frames simulated so far; the current frame's time is `time` (s).
        events: Collision events (`CollisionEvent`) so far, in the order they began.
        left_map: How many vehicles drove off the road network so far.
        traffic_asked, traffic_placed: Traffic vehicles the scenario asked for and those
            placed at frame 0 (fewer only where the spawn lanes hold no more, with a
            `roadsim.errors.TrafficWarning`).
        state: The `WorldState` of the current frame: arrays of shape ``(capacity,)``
            indexed by actor slot. Slots of traffic vehicles change when they are sorted
            (see the module docstring): look actors up by ``state.id``.
        ego_slot: The ego's slot in ``state`` (it never moves), or None without an ego.
        readings: The latest reading of each sensor, by name: a `DriverView` for a driver
            sensor, a `roadsim.sensors.raytracer.RayTracerReading` for a ray tracer, a
            `roadsim.sensors.lidar.PointCloud` for a lidar, a
            `roadsim.sensors.camera.CameraImage` for a camera (each stamped with its frame).
            None while the sensor's vehicle is not active, or the sensor is not.

    Everything else (the lane tables, the traffic model, the driver sensor, the
    per-vehicle parameters) is internal and may change without notice.
    """

    def __init__(self, scenario: Scenario | str | Path, *, seed: int | None = None) -> None:
        if isinstance(scenario, Scenario):
            net = load_map(scenario.map)
            validate_against_map(scenario, net)
        else:
            scenario, net = load_scenario_with_map(scenario)
        if seed is not None:
            scenario = scenario.with_overrides(seed=seed)
        self.scenario = scenario
        self.net: RoadNetwork = net.prepare()
        self.dt = float(scenario.dt)
        self.frame = 0
        self.events: list[CollisionEvent] = []
        self.left_map = 0
        # Commands of externally driven vehicles, by actor id (`drive`).
        self._commands: dict[int, EgoCommand] = {}
        self._tick_listeners: list[Callable[[Simulation], None]] = []

        # Whether the road surface leaves z = 0 anywhere (then vehicles follow its height).
        self._relief = bool(
            np.any(self.net.elevation.coef != 0) or np.any(self.net.superelevation.coef != 0)
        )
        self._lights = TrafficLightPlan.from_network(self.net)
        ego = scenario.ego
        route = self.net.road_index(list(ego.route)).tolist() if ego and ego.route else []
        self._info = LaneInfo(self.net, self._lights.stop_lines, route)
        self._driver = DriverSensor(self._info, self._lights, MODEL_NAMES)
        self._traffic = TrafficModel(self._info, self._lights, self._driver)
        builder = WorldBuilder(self.net, self._info, scenario, self._traffic.passages.stretches())
        built = builder.build()
        self.traffic_asked: int = builder.traffic_asked
        self.traffic_placed: int = builder.traffic_placed
        self.state: WorldState = built.state
        self.ego_slot: int | None = built.ego_slot
        self._limits: VehicleLimits = built.limits
        self._idm: IdmParams = built.idm
        self._speed_factor: FloatArray = built.speed_factor
        self._salt = built.salt
        if route and self.ego_slot is not None:  # the ego follows its route at forks
            self._salt[self.ego_slot] |= np.uint64(1) << np.uint64(ROUTE_BIT)
        self._traffic.resize(self.state.capacity)
        # Half the time the wheels take from straight to full lock (s), by slot.
        self._steer_lag = np.minimum(
            0.5 * self._limits.max_steer / np.maximum(self._limits.max_steer_rate, 1e-3), 2.0
        )
        self._traffic_params = TrafficParams(
            speed_factor=self._speed_factor,
            idm=self._idm,
            politeness=built.politeness,
            keep_right=built.keep_right,
            steer_lag=self._steer_lag,
            steer_rate=self._limits.max_steer_rate,
        )
        self._pairs: set[tuple[int, int]] = set()
        self.readings: dict[str, DriverView | RayReading | None] = {}
        self._driver_sensors = self._attach_driver_sensors()
        self._rays = RaySensors(self.net, MODEL_NAMES, scenario.scene, scenario.seed)
        self._rays.attach_scenario(
            scenario, self.state, self._ego_id(), {name for name, _, _ in self._driver_sensors}
        )
        st = self.state
        self._next_id = int(st.id.max(initial=-1)) + 1
        traffic = scenario.traffic
        self._respawner: Respawner | None = None
        if traffic is not None and traffic.respawn:
            rng = np.random.default_rng(np.random.SeedSequence(scenario.seed).spawn(4)[3])
            self._respawner = Respawner(self._info, traffic.lane_types, traffic.min_gap, rng)
        long = st.active & (st.kind == VEHICLE) & (st.length >= LONG_VEHICLE)
        if long.any():
            # Trucks or buses (respawns keep the models): entries keep clear of their turns,
            # and cars wait for them before corners they take whole.
            back = self._respawner.long_entries if self._respawner is not None else st.uid[:0]
            reach = self._info.reach_of_long(np.concatenate([st.uid[long], back]))
            self._traffic.gate.keep_clear_of_long_vehicles(reach)
            self._traffic.passages.hold_every_class()
        self._names = self._actor_names()
        # Slots that `spawn_vehicle` may fill: those it grew and those `remove_actor` freed.
        self._free_slots: list[int] = []
        # Salts of spawned vehicles (a fifth child of the seed sequence, apart from the four
        # the build and the respawner use, so that spawning changes none of their draws).
        self._spawn_rng = np.random.default_rng(np.random.SeedSequence(scenario.seed).spawn(5)[4])
        self._scripted = ScriptedObjects(
            built.scripted,
            built.scripted_slots,
            self._controllers(built.scripted),
            built.paths,
            self._info.arrays,
        )
        # Frame 0's lifecycle: the scripted objects that exist from the start.
        self._place_scripted(
            self._scripted.lifecycle(0, self.dt, self._ego(), self.state, self._salt)
        )
        self._traffic.settle_speeds(
            np.flatnonzero(st.active & (st.control == AUTOPILOT)),
            st,
            self._salt,
            self._traffic_params,
        )
        self._sample_sensors()

    def _attach_driver_sensors(self) -> list[tuple[str, int, float]]:
        """The scenario's driver sensors as (name, actor id, visibility).

        Raises:
            ScenarioError: For an actor id that no vehicle has (the scenario's file,
                line and key; loading it checked all but the traffic that found room).
        """
        st = self.state
        out = []
        for i, spec in enumerate(self.scenario.sensors):
            if not isinstance(spec, DriverSensorSpec):
                continue
            if spec.vehicle == "ego":
                assert self.ego_slot is not None  # the schema checked that there is one
                actor = int(st.id[self.ego_slot])
            else:
                hits = np.flatnonzero((st.id == spec.vehicle) & (st.kind == VEHICLE))
                if hits.size == 0:
                    vehicles = np.sort(st.id[st.active & (st.kind == VEHICLE)])
                    raise self.scenario.source.error(
                        [
                            (
                                ("sensors", i, "vehicle"),
                                f"no vehicle has the actor id {spec.vehicle}; those placed: "
                                f"{_id_ranges(vehicles)}",
                            )
                        ]
                    )
                actor = int(spec.vehicle)
            out.append((spec.name, actor, float(spec.visibility)))
        return out

    def _ego_id(self) -> int | None:
        return None if self.ego_slot is None else int(self.state.id[self.ego_slot])

    def _sample_sensors(self) -> None:
        """The scenario's sensors read the frame just finished (`readings`); a sensor
        whose vehicle is gone reads None."""
        self._sample_driver_sensors()
        self._rays.sample(self.state, self.frame, self.time, self.readings)

    def _sample_driver_sensors(self) -> None:
        if not self._driver_sensors:
            return
        st = self.state
        sensor = self._driver
        live = [
            (name, slots[0], vis)
            for name, actor, vis in self._driver_sensors
            for slots in [np.flatnonzero(st.active & (st.id == actor))]
            if slots.size
        ]
        self.readings.update({name: None for name, _, _ in self._driver_sensors})
        if not live:
            return
        slots = np.array([slot for _, slot, _ in live], dtype=np.int64)
        out = sensor.observe(
            sensor.actors(st, self._salt), sensor.occupancy(st), slots, self.time,
            visibility=np.array([vis for _, _, vis in live]),
        )  # fmt: skip
        views = sensor.views(out, st.id[slots], self.frame, self.time)
        for k, (name, _, _) in enumerate(live):
            self.readings[name] = views[k]

    def _actor_names(self) -> dict[str, int]:
        """Actor ids by name: the ego's ("ego") and the scenario objects' (their ids
        follow the ego's, in order; `roadsim.scenario.actors`)."""
        names = {} if self.ego_slot is None else {"ego": int(self.state.id[self.ego_slot])}
        offset = 0 if self.ego_slot is None else 1
        for i, obj in enumerate(self.scenario.objects):
            if obj.name is not None:
                names[obj.name] = offset + i
        return names

    def _controllers(self, objects: list[PathObject]) -> Controls:
        """Who controls each scripted object, and where that one arrives (see
        `roadsim.agents.scripted.Controls`).

        Raises:
            ScenarioError: For an actor id that no actor has (the scenario's file, line
                and key; loading it checked all but the traffic that found room).
        """
        st = self.state
        controls = Controls.none(len(objects))
        scripted = {id(obj): i for i, obj in enumerate(objects)}
        for i, obj in enumerate(objects):
            if obj.target_point is None or obj.controller_target is None:
                continue
            ref = obj.controller_name
            actor = self._names.get(ref) if isinstance(ref, str) else ref
            hits = np.flatnonzero(st.id == actor)
            if actor is None or hits.size == 0:
                index = self.scenario.objects.index(obj)
                raise self.scenario.source.error(
                    [
                        (
                            ("objects", index, "controller"),
                            f"no actor has the id {ref}; those placed: "
                            f"{_id_ranges(np.sort(st.id[st.id >= 0]))}",
                        )
                    ]
                )
            slot = int(hits[0])
            controls.slot[i], controls.id[i] = slot, int(st.id[slot])
            if st.kind[slot] == SCRIPTED_OBJECT:
                offset = 0 if self.ego_slot is None else 1
                controls.object[i] = scripted[id(self.scenario.objects[int(actor) - offset])]
            pose = resolve_spawn(obj.controller_target, self.net)
            controls.target_x[i], controls.target_y[i] = pose.x, pose.y
            if pose.uid >= 0:
                controls.target_section[i] = int(self.net.lanes.section[pose.uid])
                controls.target_s[i] = pose.s
        return controls

    # -- time ------------------------------------------------------------------------------------------

    @property
    def time(self) -> float:
        """Simulation time (s): ``frame * dt``."""
        return self.frame * self.dt

    def run(
        self,
        duration: float | None = None,
        *,
        on_step: Callable[[Simulation], bool | None] | None = None,
    ) -> int:
        """Runs ``duration`` seconds (the scenario's by default); returns frames run.

        ``on_step`` is called after every tick; returning True stops the run early.

        Raises:
            ArgumentError: For a negative, NaN or infinite duration.
            ArgumentTypeError: For a duration that is not a number.
        """
        if duration is None:
            duration = self.scenario.duration
        steps = round(as_number(duration, "duration", low=0.0) / self.dt)
        for k in range(steps):
            self.step()
            if on_step is not None and on_step(self):
                return k + 1
        return steps

    def add_tick_listener(self, listener: Callable[[Simulation], None]) -> None:
        """Calls ``listener(sim)`` at the end of every tick, once the frame's sensors have
        read (a capture, `roadsim.capture.Capture`, takes its snapshots there)."""
        self._tick_listeners.append(listener)

    def remove_tick_listener(self, listener: Callable[[Simulation], None]) -> None:
        """Stops calling ``listener`` (nothing if it was not added)."""
        if listener in self._tick_listeners:
            self._tick_listeners.remove(listener)

    def drive_ego(self, command: EgoCommand | None) -> None:
        """Drives the ego with ``command`` from the next tick on, until the next call.

        The ego's ``control`` becomes EXTERNAL; ``None`` hands it back to the autopilot.
        Until the first command, the autopilot drives the ego whatever the scenario's
        ``ego.control`` says.

        Raises:
            ValueError: If the scenario has no ego.
            ArgumentTypeError: If ``command`` is neither an `EgoCommand` nor None.
        """
        if self.ego_slot is None:
            raise ValueError("this scenario has no ego vehicle to drive")
        self.drive(int(self.state.id[self.ego_slot]), command)

    def drive(self, actor: str | int, command: EgoCommand | None) -> int:
        """Drives a vehicle (the ego, a traffic vehicle or one `spawn_vehicle` made) with
        ``command`` from the next tick on, until the next call.

        Its ``control`` becomes EXTERNAL; ``None`` hands it back to the autopilot. The
        command holds tick after tick; a vehicle without one is driven by the autopilot.

        Raises:
            QueryError: For a name or id that no active vehicle has.
            ArgumentTypeError: If ``command`` is neither an `EgoCommand` nor None.

        Returns:
            The vehicle's actor id.
        """
        if command is not None and not isinstance(command, EgoCommand):
            raise ArgumentTypeError(
                f"command: expected an EgoCommand or None, got {type(command).__name__}"
            )
        slot = self._vehicle_slot(actor)
        actor_id = int(self.state.id[slot])
        if command is None:
            self._commands.pop(actor_id, None)
        else:
            self._commands[actor_id] = command
        self.state.control[slot] = AUTOPILOT if command is None else EXTERNAL
        return actor_id

    def _vehicle_slot(self, actor: str | int) -> int:
        """The slot of an active vehicle, by name or actor id."""
        slot, actor_id = self._slot_of(actor)
        st = self.state
        if not st.active[slot] or st.kind[slot] != VEHICLE:
            kind = KIND_NAMES[int(st.kind[slot])]
            what = "not active" if not st.active[slot] else f"a {kind}, not a vehicle"
            raise QueryError(f"actor {actor_id} cannot be driven: it is {what}")
        return slot

    # -- actors made and removed at run time -----------------------------------------------------

    def spawn_vehicle(
        self,
        x: float,
        y: float,
        heading: float,
        *,
        model: str = "car",
        speed: float = 0.0,
        external: bool = False,
    ) -> int:
        """Puts a new vehicle into the world now; returns its actor id.

        It stands at (``x``, ``y``) (m, world frame, its box centre) facing ``heading``
        (rad), on the lane found there (or off every lane), at ``speed`` (m/s). The
        autopilot drives it, unless ``external``: then it keeps its speed and course until
        `drive` gives it a command (it coasts: no throttle, no brake). It collides and is
        seen by the sensors from the current frame on. Where every slot is taken the
        state grows (`WorldState.grow`), with every per-slot array beside it.

        Raises:
            ArgumentError: For a model that is not a vehicle model, a non-finite pose or
                a negative speed.
            ArgumentTypeError: For values that are not numbers.
        """
        if model not in VEHICLE_MODELS:
            raise ArgumentError(
                f"model: expected one of {', '.join(VEHICLE_MODELS)}, got {model!r}"
            )
        x, y = as_number(x, "x"), as_number(y, "y")
        heading, speed = as_number(heading, "heading"), as_number(speed, "speed", low=0.0)
        spec = VEHICLE_MODELS[model]
        if not self._free_slots:
            self._grow(self.state.capacity + max(8, self.state.capacity // 4))
        slot = self._free_slots.pop(0)
        st = self.state
        heading = float(np.remainder(heading + np.pi, 2.0 * np.pi) - np.pi)
        for name, value in (
            ("x", x), ("y", y), ("z", 0.0), ("heading", heading), ("speed", speed),
            ("accel", 0.0), ("steer", 0.0), ("yaw_rate", 0.0), ("slip", 0.0),
            ("length", spec.length), ("width", spec.width), ("height", spec.height),
        ):  # fmt: skip
            getattr(st, name)[slot] = value
        for name in ("wheelbase", "max_accel", "max_decel", "max_steer", "max_steer_rate"):
            getattr(self._limits, name)[slot] = getattr(spec, name)
        idm = self._idm
        for values, value in zip(
            (idm.max_accel, idm.comfort_decel, idm.time_headway, idm.min_gap),
            IDM_BY_MODEL.get(model, IDM_BY_MODEL["car"]),
            strict=True,
        ):
            np.asarray(values)[slot] = value
        self._speed_factor[slot] = 1.0
        self._steer_lag[slot] = min(0.5 * spec.max_steer / max(spec.max_steer_rate, 1e-3), 2.0)
        self._salt[slot] = route_salts(
            np.array([self._spawn_rng.integers(0, 2**63 - 1)]), st.length[slot : slot + 1]
        )[0]
        self._traffic.forget(np.array([slot]))
        if spec.length >= LONG_VEHICLE:
            self._traffic.passages.hold_every_class()  # cars wait for it before corners
        st.kind[slot], st.model[slot] = VEHICLE, MODEL_NAMES.index(model)
        st.control[slot] = EXTERNAL if external else AUTOPILOT
        st.id[slot] = self._next_id
        self._next_id += 1
        st.active[slot], st.collided[slot], st.left_map[slot] = True, False, False
        pos = self.net.localize(st.x[slot : slot + 1], st.y[slot : slot + 1], heading=heading)
        st.uid[slot], st.s[slot], st.t[slot] = pos.uid[0], pos.s[0], pos.t[0]
        st.road[slot] = pos.road_index[0]
        if self._relief and st.uid[slot] >= 0:
            st.z[slot] = _surface_z(self.net, st.road[slot : slot + 1], st.s[slot : slot + 1],
                                    st.t[slot : slot + 1])[0]  # fmt: skip
        if external:
            self._commands[int(st.id[slot])] = EgoCommand()
        return int(st.id[slot])

    def spawn_vehicle_on_lane(
        self,
        road: str | int,
        lane: int,
        s: float,
        *,
        t: float = 0.0,
        model: str = "car",
        speed: float = 0.0,
        external: bool = False,
    ) -> int:
        """`spawn_vehicle` at a place given in road coordinates: on lane ``lane``
        (OpenDRIVE lane id) of road ``road`` at ``s`` (m along the road's reference line),
        ``t`` m from the lane's centre toward the road's left, facing the lane's driving
        direction; returns its actor id.

        Raises:
            QueryError: For a road the map does not have, or a lane that road does not
                have at ``s``.
            ArgumentError: For an ``s`` outside the road, and as `spawn_vehicle` does.
            ArgumentTypeError: For values that are not numbers.
        """
        road_id = str(road)
        lane_id = as_id(lane, "lane")
        s, t = as_number(s, "s"), as_number(t, "t")
        self.net.to_world(road_id, s, 0.0)  # (refuses an s outside the road, saying where it runs)
        place = resolve_spawn(
            RoadPosition.model_construct(road=road_id, lane=lane_id, s=s, t=t), self.net
        )
        return self.spawn_vehicle(
            place.x, place.y, place.heading, model=model, speed=speed, external=external
        )

    def remove_actor(self, actor: str | int) -> None:
        """Takes a vehicle (a traffic vehicle, one `spawn_vehicle` made) out of the world
        now; its id is not reused, its slot is.

        The ego stays (a scenario's sensors hang on it); static objects are part of the
        scene the sensors see, built once, and scripted objects come and go by their
        script.

        Raises:
            QueryError: For a name or id no active actor has.
            ArgumentError: For the ego or an actor that is not a vehicle.
        """
        found = self.actor(actor)
        st = self.state
        slot = int(np.flatnonzero(st.id == found.id)[0])
        if not st.active[slot]:
            raise QueryError(f"actor {found.id} is not in the world now")
        if slot == self.ego_slot:
            raise ArgumentError("actor: the ego cannot be removed")
        if st.kind[slot] != VEHICLE:
            raise ArgumentError(
                f"actor: expected a vehicle, got {found.id}, a {found.kind} (only vehicles "
                "can be removed)"
            )
        st.active[slot], st.collided[slot] = False, False
        st.uid[slot], st.road[slot] = -1, -1
        self._commands.pop(found.id, None)
        self._traffic.forget(np.array([slot]))
        if found.name is not None:
            del self._names[found.name]
        self._free_slots.append(slot)

    def _grow(self, capacity: int) -> None:
        """Makes room for ``capacity`` actors: the state and every per-slot array (the
        rows `_per_slot` lists), new slots free for `spawn_vehicle`."""
        old = self.state.capacity
        self.state = self.state.grow(capacity)

        def grown(values: npt.NDArray[Any], fill: float = 0.0) -> npt.NDArray[Any]:
            out = np.full(capacity, fill, dtype=values.dtype)
            out[:old] = values
            return out

        lim = self._limits
        self._limits = VehicleLimits(
            *(grown(getattr(lim, f)) for f in
              ("wheelbase", "max_accel", "max_decel", "max_steer", "max_steer_rate"))
        )  # fmt: skip
        idm = self._idm
        self._idm = IdmParams(
            max_accel=grown(np.asarray(idm.max_accel)),
            comfort_decel=grown(np.asarray(idm.comfort_decel)),
            time_headway=grown(np.asarray(idm.time_headway)),
            min_gap=grown(np.asarray(idm.min_gap)),
            delta=idm.delta,
        )
        self._speed_factor = grown(self._speed_factor, 1.0)
        self._steer_lag = grown(self._steer_lag)
        self._salt = grown(self._salt)
        self._traffic.resize(capacity)
        p = self._traffic_params
        self._traffic_params = TrafficParams(
            speed_factor=self._speed_factor,
            idm=self._idm,
            politeness=p.politeness,
            keep_right=p.keep_right,
            steer_lag=self._steer_lag,
            steer_rate=self._limits.max_steer_rate,
        )
        self._free_slots.extend(range(old, capacity))

    # -- the tick -----------------------------------------------------------------------------------------

    def step(self) -> None:
        """Advances the world by one step of ``dt``."""
        st = self.state
        # lifecycle
        if self.frame % SORT_EVERY == 0:
            self._sort_slots()
        st.collided[:] = False
        if self._respawner is not None and self._respawner.pending:
            changing = np.where(self._traffic.target_uid != st.uid, self._traffic.target_uid, -1)
            self._next_id = self._respawner.fill(
                st, self._salt, self._speed_factor, changing, self._next_id, self._traffic.passages
            )

        scripted = self._scripted
        self._place_scripted(scripted.lifecycle(self.frame, self.dt, self._ego(), st, self._salt))

        vehicles, on, off = vehicle_slots(st.active, st.kind, st.uid)
        accel = steer = np.zeros(0)
        if vehicles.size:
            accel, steer = self._controls(vehicles, all_on_lane=off.size == 0)
        # Scripted objects move after every controller has seen the frame they start from.
        moved = scripted.move(self.frame, self.dt, self._ego(), st, self._salt)
        if vehicles.size:
            step_bicycle_slots(
                vehicles,
                st.x,
                st.y,
                st.heading,
                st.speed,
                st.steer,
                st.accel,
                st.yaw_rate,
                accel,
                steer,
                self._limits,
                self.dt,
                slip=st.slip,
            )
            self._localize(on, off)
        self._place_scripted(moved)
        self._collide()
        self.frame += 1
        self._sample_sensors()
        for listener in tuple(self._tick_listeners):
            listener(self)

    def _ego(self) -> int:
        return -1 if self.ego_slot is None else self.ego_slot

    def _sort_slots(self) -> None:
        """Moves the traffic vehicles among their own slots into lane order (see the
        module docstring), with everything kept per slot about them."""
        st = self.state
        movable = st.active & (st.kind == VEHICLE) & (st.control == AUTOPILOT) & (st.uid >= 0)
        if self.ego_slot is not None:
            movable[self.ego_slot] = False
        followed = self._scripted.scripts.controller
        movable[followed[followed >= 0]] = False
        slots = np.flatnonzero(movable)
        src = slots[by_lane(st.uid[slots], self._info.n)]
        if np.array_equal(src, slots):
            return
        move_rows(self._per_slot(), slots, src)

    def _per_slot(self) -> list[npt.NDArray[Any]]:
        """Everything kept about each slot's actor, arrays along their first axis: the
        rows `_sort_slots` moves with the vehicles. A new per-slot array joins here."""
        limits, idm = self._limits, self._idm
        return [
            *self.state.arrays().values(),
            limits.wheelbase,
            limits.max_accel,
            limits.max_decel,
            limits.max_steer,
            limits.max_steer_rate,
            *(
                np.asarray(v)
                for v in (idm.max_accel, idm.comfort_decel, idm.time_headway, idm.min_gap)
            ),
            self._speed_factor,
            self._steer_lag,
            self._salt,
            *self._traffic.per_slot(),
        ]

    def _place_scripted(self, slots: IntArray) -> None:
        """Projects scripted objects onto the lane under their path (their guess)."""
        st = self.state
        on = slots[st.uid[slots] >= 0]
        if on.size:
            relocalize_slots(
                self._info, on, st.uid, st.s, st.t, st.road, st.x, st.y, st.heading, self._salt
            )

    def _autopilot(self, idx: IntArray, all_on_lane: bool) -> tuple[FloatArray, FloatArray]:
        """The traffic model's commands for the vehicles ``idx``."""
        return self._traffic.act(
            idx,
            self.state,
            self._limits.wheelbase,
            self._salt,
            self._traffic_params,
            self.time,
            self.dt,
            all_on_lane=all_on_lane,
        )

    def _controls(self, vehicles: IntArray, all_on_lane: bool) -> tuple[FloatArray, FloatArray]:
        st = self.state
        if not self._commands:  # no external commands: the autopilot drives every vehicle
            return self._autopilot(vehicles, all_on_lane)
        ids = st.id[vehicles]
        external = (st.control[vehicles] == EXTERNAL) & np.isin(ids, list(self._commands))
        auto = vehicles[~external]
        accel = np.zeros(vehicles.size)
        steer = np.zeros(vehicles.size)
        if auto.size:
            a, d = self._autopilot(auto, all_on_lane)
            accel[~external] = a
            steer[~external] = d
        for k in np.flatnonzero(external).tolist():
            slot = int(vehicles[k])
            cmd = self._commands[int(ids[k])]
            if cmd.accel is not None:
                accel[k] = cmd.accel
            else:
                accel[k] = (
                    cmd.throttle * self._limits.max_accel[slot]
                    - cmd.brake * self._limits.max_decel[slot]
                )
            if cmd.curvature is not None:
                steer[k] = wheel_angle(cmd.curvature, self._limits.wheelbase[slot : slot + 1])[0]
            else:
                steer[k] = np.clip(cmd.steering, -1.0, 1.0) * self._limits.max_steer[slot]
        return accel, steer

    def _localize(self, on: IntArray, off: IntArray) -> None:
        """Localises the vehicles that were on a lane (``on``) and those that were not
        (``off``) before they moved."""
        st = self.state
        if on.size:
            # Writes uid, s, t and road of `on` in place; returns those now on no lane.
            lost = relocalize_slots(
                self._info, on, st.uid, st.s, st.t, st.road, st.x, st.y, st.heading, self._salt
            )
            leaving = np.concatenate((lost, self._at_map_edge(on)))
            gone = leaving[
                (st.control[leaving] == AUTOPILOT)
                & (leaving != (self.ego_slot if self.ego_slot is not None else -1))
            ]
            if gone.size:
                self._traffic.forget(gone)
                st.active[gone] = False
                st.left_map[gone] = True
                self.left_map += int(gone.size)
                if self._respawner is not None:
                    self._respawner.release(gone)
        # Vehicles that were off every lane before this tick: a full search. (Those lost
        # just now had theirs in `relocalize_slots`.)
        if off.size:
            pos = self.net.localize(st.x[off], st.y[off], heading=st.heading[off])
            st.uid[off], st.s[off], st.t[off] = pos.uid, pos.s, pos.t
            st.road[off] = pos.road_index
        if self._relief:
            slots = np.concatenate((on, off))
            slots = slots[st.active[slots] & (st.uid[slots] >= 0)]
            st.z[slots] = _surface_z(self.net, st.road[slots], st.s[slots], st.t[slots])

    def _at_map_edge(self, slots: IntArray) -> IntArray:
        """Those of ``slots`` whose front reached the end of a lane that leads nowhere
        (`roadsim.world.codes.MAP_EDGE`): traffic leaves the map there, as it arrives at
        the end of its route in SUMO, before its body runs on past the road (a dead end
        drawn a few metres from another road put a truck's front onto it). Where the
        dead end lies over another road (`LaneInfo.map_edges`), it leaves before that."""
        st, info = self.state, self._info
        on = slots[st.uid[slots] >= 0]
        on = on[info.end_kind[st.uid[on]] == MAP_EDGE]
        front = info.progress(st.uid[on], st.s[on]) + 0.5 * st.length[on]
        out: IntArray = on[front >= info.map_edges[0][st.uid[on]]]
        return out

    def _collide(self) -> None:
        st = self.state
        i, j = find_overlaps(st.x, st.y, st.heading, st.length, st.width, st.active)
        if i.size:
            # Boxes that overlap from above also overlap in height (a bridge's traffic
            # does not meet the traffic under it), and two static objects never collide
            # (guard rails and walls touch by design).
            meet = (st.z[i] < st.z[j] + st.height[j]) & (st.z[j] < st.z[i] + st.height[i])
            meet &= (st.kind[i] != STATIC_OBJECT) | (st.kind[j] != STATIC_OBJECT)
            i, j = i[meet], j[meet]
        if i.size == 0:
            self._pairs = set()
            return
        st.collided[i] = True
        st.collided[j] = True
        ids_a, ids_b = st.id[i], st.id[j]
        pairs = set(zip(ids_a.tolist(), ids_b.tolist(), strict=True))
        for a, b in sorted(pairs - self._pairs):
            self.events.append(CollisionEvent(self.frame + 1, (self.frame + 1) * self.dt, a, b))
        self._pairs = pairs

    # -- actors ------------------------------------------------------------------------------------------

    def actor(self, key: str | int) -> Actor:
        """One actor at the current frame, by name or actor id (`Actor`).

        The ego is named ``"ego"``; a scenario object goes by its ``name``. An actor that
        does not exist in this frame (a scripted object before its creation or after its
        deletion) is found, with ``active`` false; a vehicle that left the map is not.

        Raises:
            QueryError: For a name or id that no actor has.
            ArgumentTypeError: For a key that is neither a string nor an integer.
        """
        slot, actor_id = self._slot_of(key)
        name = next((n for n, i in self._names.items() if i == actor_id), None)
        return Actor.of(
            self.state, slot, name=name, model_names=MODEL_NAMES, net=self.net,
            frame=self.frame, time=self.time,
        )  # fmt: skip

    def _slot_of(self, key: str | int) -> tuple[int, int]:
        """The slot and actor id of an actor by name or id (as `actor` takes them)."""
        st = self.state
        if isinstance(key, str):
            if key not in self._names:
                known = ", ".join(repr(n) for n in self._names) or "none"
                raise QueryError(f"no actor named {key!r} (names: {known})")
            actor_id = self._names[key]
        elif isinstance(key, bool | np.bool_) or not isinstance(key, numbers.Integral):
            raise ArgumentTypeError(
                f"key: expected a name (a string) or an actor id (an integer), got {key!r}"
            )
        else:
            actor_id = int(key)
        hits = np.flatnonzero(st.id == actor_id)
        if hits.size == 0:
            raise QueryError(
                f"no actor has the id {actor_id} (ids now: {_id_ranges(np.sort(st.id[st.active]))})"
            )
        return int(hits[0]), actor_id

    # -- ray-traced sensors -----------------------------------------------------------------------------

    def add_sensor(self, spec: Mapping[str, Any] | SceneSensorSpec) -> RaySensor:
        """Adds a ray tracer, a lidar or a camera at run time, and samples it at once (if
        active).

        Args:
            spec: Its options, as a scenario's ``sensors:`` entry gives them
                (``{"type": "lidar", "name": "roof", "channels": 64}``), or a
                `roadsim.scenario.sensors.RayTracerSpec` / ``LidarSpec`` / ``CameraSpec``.

        Returns:
            The sensor (`sensor`).

        Raises:
            ArgumentError: For options a scenario could not give, or a name or id taken.
            QueryError: For a ``vehicle`` that no actor is.
        """
        taken = {name for name, _, _ in self._driver_sensors}
        sensor = self._rays.add(spec, self.state, self._ego_id(), taken)
        self._rays.sample(self.state, self.frame, self.time, self.readings, only=[sensor])
        return sensor

    def sensor(self, name: str) -> RaySensor:
        """A scene sensor (ray tracer, lidar, camera) by name: set ``active`` to switch it
        on or off (an inactive sensor costs nothing and reads None), read its ``id`` and
        ``mount``.

        Raises:
            QueryError: For a name no ray tracer, lidar or camera has.
        """
        found = self._rays.sensors.get(name)
        if found is None:
            known = ", ".join(repr(n) for n in self._rays.sensors) or "none"
            raise QueryError(f"no ray tracer, lidar or camera named {name!r} (names: {known})")
        return found

    @property
    def scene_sensors(self) -> tuple[str, ...]:
        """The names of the scene sensors (ray tracers, lidars, cameras), in the order
        they were added."""
        return tuple(self._rays.sensors)

    def sample_sensors(self, names: Sequence[str] | None = None) -> None:
        """Switches scene sensors on and samples them at the current frame now, whatever
        their ``sample_every`` (a snapshot); their readings go to `readings`.

        Args:
            names: Scene sensor names (default: all of them).

        Raises:
            QueryError: For a name no ray tracer, lidar or camera has.
        """
        sensors = [self.sensor(n) for n in (self.scene_sensors if names is None else names)]
        for sensor in sensors:
            sensor.active = True
        self._rays.sample(self.state, self.frame, self.time, self.readings, only=sensors, now=True)

    @property
    def camera_renderers(self) -> Mapping[str, str]:
        """What draws the cameras' images, by renderer name (``raster``, ``raycast``):
        those made so far, with what they run on."""
        return {name: r.description for name, r in self._rays.renderers.made.items()}

    def close(self) -> None:
        """Frees the cameras' GL context and the ray-casting threads now, rather than when
        the process ends; the simulation may go on (they are made again if needed)."""
        self._rays.close()

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def scene(self) -> Scene:
        """What the ray-traced sensors see (`roadsim.sensors.scene.Scene`) at the current
        frame: built on first use, its moving actors updated to this frame."""
        return self._rays.scene(self.state, self.frame)

    # -- the driver sensor ---------------------------------------------------------------------------

    def driver_views(
        self, ids: npt.ArrayLike | None = None, *, visibility: float = DEFAULT_VISIBILITY
    ) -> DriverViews:
        """The driver sensor's views of vehicles at the current frame, as arrays.

        Args:
            ids: Actor ids (any active actor; default: every active vehicle, by slot).
            visibility: How far the drivers see (m).

        Raises:
            QueryError: For an id that is no active actor.
            ArgumentTypeError: For an id that is not an integer (``0.5``, ``True``).
        """
        st = self.state
        if ids is None:
            slots = np.flatnonzero(st.active & (st.kind == VEHICLE))
        else:
            wanted = np.atleast_1d(as_ids(ids, "ids")).ravel()
            live = np.flatnonzero(st.active)
            order = np.argsort(st.id[live])
            where = np.searchsorted(st.id[live][order], wanted)
            where = np.minimum(where, max(live.size - 1, 0))
            found = live.size > 0
            slots = live[order][where] if found else np.zeros(0, dtype=np.int64)
            bad = ~(st.id[slots] == wanted) if found else np.ones(wanted.size, dtype=bool)
            if bad.any():
                raise QueryError(f"no active actor with id {int(wanted[np.flatnonzero(bad)[0]])}")
        if as_number(visibility, "visibility", low=0.0) == 0.0:
            raise ArgumentError("visibility: expected a number > 0 (m), got 0")
        sensor = self._driver
        out = sensor.observe(
            sensor.actors(st, self._salt), sensor.occupancy(st), slots, self.time,
            visibility=visibility,
        )  # fmt: skip
        return sensor.views(out, st.id[slots], self.frame, self.time)

    def driver_view(self, actor_id: int, *, visibility: float = DEFAULT_VISIBILITY) -> DriverView:
        """The driver sensor's view of one vehicle (see `driver_views`)."""
        return self.driver_views([as_id(actor_id, "actor_id")], visibility=visibility)[0]

    # -- routes -------------------------------------------------------------------------------------------

    @property
    def lane_info(self) -> LaneInfo:
        """The lane tables traffic drives on (lengths, successors, junctions, by lane uid)."""
        return self._info

    @property
    def junction_box(self) -> BoolArray:
        """Lanes (by uid) where traffic never stops to wait: the connecting lanes of
        junctions, and links so short that the junctions they join count as one
        (`roadsim.agents.junctions.JunctionGate`)."""
        return self._traffic.gate.boxed

    @property
    def narrow_passages(self) -> Passages:
        """The bends where long vehicles coming opposite ways take turns (and, in those
        they take whole, cars too): `roadsim.agents.passages`."""
        return self._traffic.passages.passages

    def lanes_ahead(self, slots: IntArray, hops: int) -> IntArray:
        """The next ``hops`` lanes (uids; -1 past the route's end) of the routes of the
        vehicles in ``slots``, from the lane each is on, shape (N, hops): where each will
        drive as its route salt stands now."""
        st = self.state
        return routes(self._info.arrays, st.uid[slots], self._salt[slots], hops)

    # -- summaries ----------------------------------------------------------------------------------------

    @property
    def vehicle_count(self) -> int:
        """Active vehicles (``kind`` VEHICLE: traffic and the ego) in the current frame;
        scripted and static objects do not count."""
        st = self.state
        return int(np.sum(st.active & (st.kind == VEHICLE)))


def _surface_z(net: RoadNetwork, road: IntArray, s: FloatArray, t: FloatArray) -> FloatArray:
    """Height of the road surface at road coordinates (s, t): the elevation, and the
    superelevation's tilt across the road (as `RoadNetwork.to_world_index` at h = 0)."""
    slope = net.elevation.evaluate(road, s, derivative=1)
    roll = net.superelevation.evaluate(road, s)
    return net.elevation.evaluate(road, s) + t * np.sin(roll) / np.sqrt(1.0 + slope * slope)


def _id_ranges(ids: IntArray) -> str:
    """Sorted ids as ranges: '0-12, 15'."""
    if ids.size == 0:
        return "none"
    breaks = np.flatnonzero(np.diff(ids) != 1)
    starts = np.concatenate(([ids[0]], ids[breaks + 1]))
    ends = np.concatenate((ids[breaks], [ids[-1]]))
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in zip(starts, ends, strict=True))
