"""The scene sensors of a simulation (ray tracers, lidars, cameras) and the scene they share.

The scene (`roadsim.sensors.scene.Scene`) is built the first time a scene sensor samples
(or `RaySensors.scene` is asked for), so that a scenario whose sensors are all inactive
costs nothing; its moving actors are updated once per sampled frame, whatever the number
of sensors sampling it. The cameras' renderers (`roadsim.sensors.camera.Renderers`: a GL
context for the raster ones) are made the first time a camera samples, and shared.

Sensor ids: a sensor without an ``id`` gets one more than the largest id given so far or
written anywhere in the scenario (the seed's "N + 1").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import ValidationError

from roadsim.errors import ArgumentError, ArgumentTypeError, QueryError
from roadsim.road.network import RoadNetwork
from roadsim.scenario import Scenario
from roadsim.scenario.problems import describe_error, format_path
from roadsim.scenario.sensors import (
    SENSOR_TYPES,
    CameraSpec,
    LidarSpec,
    RayTracerSpec,
    SceneSpec,
)
from roadsim.sensors.camera import Camera, CameraImage, Renderers
from roadsim.sensors.camera_model import Lighting
from roadsim.sensors.lidar import Lidar, PointCloud
from roadsim.sensors.raytracer import RaySensor, RayTracer, RayTracerReading
from roadsim.sensors.scene import Scene
from roadsim.world.state import WorldState

__all__ = ["RayReading", "RaySensors", "SceneSensorSpec"]

#: What a scene sensor reads.
RayReading = RayTracerReading | PointCloud | CameraImage
#: The options of a scene sensor.
SceneSensorSpec = RayTracerSpec | LidarSpec | CameraSpec


class RaySensors:
    """The scene sensors of one simulation, by name.

    Args:
        net: The road network.
        model_names: The actor model of each ``WorldState.model`` code.
        scene: The scenario's ``scene`` options (None: the defaults).
        seed: The simulation's seed (lidar noise).
    """

    def __init__(
        self,
        net: RoadNetwork,
        model_names: tuple[str, ...],
        scene: SceneSpec | None,
        seed: int,
    ) -> None:
        self._net = net
        self._model_names = model_names
        self._scene_spec = scene or SceneSpec()
        self._seed = seed
        self._scene: Scene | None = None
        sun = self._scene_spec.sun
        self.lighting = Lighting.of(sun.azimuth_deg, sun.elevation_deg)
        self.renderers = Renderers()
        self.sensors: dict[str, RaySensor] = {}
        self._ids: set[int] = set()

    # -- adding ------------------------------------------------------------------------------------------

    def attach_scenario(
        self, scenario: Scenario, state: WorldState, ego_id: int | None, taken: set[str]
    ) -> None:
        """Adds the scenario's ray tracers, lidars and cameras.

        Raises:
            ScenarioError: For a ``vehicle`` id that no actor has (file, line and key).
        """
        specs = [(i, s) for i, s in enumerate(scenario.sensors) if isinstance(s, SceneSensorSpec)]
        self._ids.update(s.id for _, s in specs if s.id is not None)
        for i, spec in specs:
            try:
                actor = self._actor(spec, state, ego_id)
            except QueryError as exc:
                raise scenario.source.error([(("sensors", i, "vehicle"), exc.args[0])]) from None
            self._add(spec, actor, taken)

    def add(
        self,
        spec: Mapping[str, Any] | SceneSensorSpec,
        state: WorldState,
        ego_id: int | None,
        taken: set[str],
    ) -> RaySensor:
        """Adds a sensor at run time (`roadsim.Simulation.add_sensor`).

        Raises:
            ArgumentError: For options the scenario format rejects, a name or id taken.
            ArgumentTypeError: For a spec that is neither a mapping nor a spec.
            QueryError: For a ``vehicle`` that no actor is.
        """
        spec = _validated(spec)
        if spec.name in taken or spec.name in self.sensors:
            raise ArgumentError(f"add_sensor: name: a sensor named {spec.name!r} exists already")
        if spec.id is not None and spec.id in self._ids:
            raise ArgumentError(f"add_sensor: id: a sensor has the id {spec.id} already")
        if spec.id is not None:
            self._ids.add(spec.id)
        try:
            actor = self._actor(spec, state, ego_id)
        except QueryError as exc:
            raise QueryError(f"add_sensor: vehicle: {exc.args[0]}") from None
        return self._add(spec, actor, taken)

    def _add(self, spec: SceneSensorSpec, actor: int, taken: set[str]) -> RaySensor:
        sensor_id = spec.id if spec.id is not None else max(self._ids, default=0) + 1
        self._ids.add(sensor_id)
        sensor: RaySensor
        if isinstance(spec, LidarSpec):
            sensor = Lidar(spec, sensor_id, actor, seed=self._seed)
        elif isinstance(spec, CameraSpec):
            sensor = Camera(spec, sensor_id, actor)
        else:
            sensor = RayTracer(spec, sensor_id, actor)
        self.sensors[spec.name] = sensor
        return sensor

    @staticmethod
    def _actor(spec: SceneSensorSpec, state: WorldState, ego_id: int | None) -> int:
        if spec.vehicle == "scene":
            return -1
        if spec.vehicle == "ego":
            if ego_id is None:
                raise QueryError("the sensor rides on the ego, but there is no ego")
            return ego_id
        actor = int(spec.vehicle)
        if not np.any(state.id == actor):
            raise QueryError(f"no actor has the id {actor}")
        return actor

    # -- sampling ----------------------------------------------------------------------------------------

    def scene(self, state: WorldState, frame: int) -> Scene:
        """The scene, its moving actors those of ``state`` at ``frame``."""
        if self._scene is None:
            spec = self._scene_spec
            self._scene = Scene.from_world(
                self._net,
                state,
                self._model_names,
                object_classes=spec.object_classes,
                ground=spec.ground,
            )
        if self._scene.frame != frame:
            self._scene.update(state, frame)
        return self._scene

    def sample(
        self,
        state: WorldState,
        frame: int,
        time: float,
        readings: dict[str, Any],
        only: list[RaySensor] | None = None,
        *,
        now: bool = False,
    ) -> None:
        """Writes the reading of every sensor (or of those in ``only``) due at ``frame``
        (``now``: active, whatever its rate) into ``readings``; an inactive sensor reads
        None, one not due keeps its last reading."""
        due = []
        for sensor in self.sensors.values() if only is None else only:
            name = sensor.name
            if not sensor.active:
                readings[name] = None
            elif now or sensor.due(frame):
                due.append(sensor)
            else:
                readings.setdefault(name, None)
        if not due:
            return
        scene = self.scene(state, frame)
        for sensor in due:
            if isinstance(sensor, Camera):
                renderer = self.renderers.get(sensor.renderer)
                readings[sensor.name] = sensor.sample(
                    scene, state, frame, time, renderer, self.lighting
                )
                continue
            assert isinstance(sensor, RayTracer | Lidar)
            readings[sensor.name] = sensor.sample(scene, state, frame, time)

    def close(self) -> None:
        """Stops the scene's ray-casting threads and frees the cameras' GL context."""
        if self._scene is not None:
            self._scene.pool.close()
        self.renderers.close()


def _validated(spec: Mapping[str, Any] | SceneSensorSpec) -> SceneSensorSpec:
    if isinstance(spec, SceneSensorSpec):
        return spec
    if not isinstance(spec, Mapping):
        raise ArgumentTypeError(
            f"spec: expected a mapping of sensor options or a RayTracerSpec, LidarSpec or "
            f"CameraSpec, got {type(spec).__name__}"
        )
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in SENSOR_TYPES:
        raise ArgumentError(
            f"add_sensor: type: expected {'|'.join(SENSOR_TYPES)} (driver sensors are "
            f"given in the scenario), got {kind!r}"
        )
    try:
        out = SENSOR_TYPES[kind].model_validate(dict(spec))
    except ValidationError as exc:
        problems = [describe_error(e) for e in exc.errors()]
        text = "; ".join(f"{format_path(p)}: {m}" if p else m for p, m in problems)
        raise ArgumentError(f"add_sensor: {text}") from None
    assert isinstance(out, SceneSensorSpec)
    return out
