"""Cameras: an HDR colour image, a depth image, a surface-class image and an instance image
per shot, of the scene the ray-traced sensors see (`roadsim.sensors.scene.Scene`).

A camera (`CameraSpec`, ``type: camera``) is mounted as the ray tracers are
(`roadsim.sensors.mount`) and looks along its sensor frame's +x; the pinhole model, the
image axes, the light and the tone mapping are `roadsim.sensors.camera_model`'s. It never
sees the actor it is mounted on (that actor still casts its shadow).

Two renderers draw the same scene with the same model, chosen by name from `RENDERERS`:

- ``raster``: OpenGL through moderngl on a headless EGL context (`roadsim.sensors.raster`;
  Mesa's llvmpipe on a machine without a GPU), shadows from a shadow map of the sun;
- ``raycast``: one Embree ray per pixel through the scene's own `Scene.cast`
  (`roadsim.sensors.camera_raycast`), shadows from one ray per lit pixel to the sun.

A camera's ``renderer: auto`` (the default) takes ``raster`` where an EGL context can be
made and ``raycast`` where not; `Renderers` tries once per simulation and says which it
took: a log line (logger ``roadsim.sensors.camera``) for the raster one, a
`CameraWarning` for the ray-cast fallback.

Images (H x W): ``color`` float32 linear radiance (H, W, 3); ``depth`` float32 metres
along the optical axis, +inf where nothing is hit within the camera's range (sky);
``surface_ids`` uint8 (`roadsim.road.surface_classes`, 0 for sky); ``actor_ids`` int32
(-1 for none).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple, Protocol

import numpy as np

from roadsim._types import Float32Array, FloatArray, Int32Array, UInt8Array
from roadsim.errors import RoadsimError
from roadsim.scenario.sensors import CameraSpec
from roadsim.sensors.camera_model import CameraModel, Lighting, tone_map
from roadsim.sensors.mount import Mount, Pose
from roadsim.sensors.raytracer import RaySensor
from roadsim.sensors.scene import Scene
from roadsim.world.state import WorldState

__all__ = [
    "RENDERERS",
    "Camera",
    "CameraImage",
    "CameraWarning",
    "Images",
    "Renderer",
    "RendererUnavailable",
    "Renderers",
    "Shot",
]


log = logging.getLogger(__name__)


class CameraWarning(UserWarning):
    """Cameras fall back to ray casting: no EGL context could be made."""


class RendererUnavailable(RoadsimError):
    """A camera renderer cannot run here (no moderngl, no EGL context)."""


@dataclass(frozen=True, slots=True, eq=False)
class Shot:
    """What a renderer needs for one image besides the scene.

    Attributes:
        model: The camera's pinhole model.
        pose: The camera's pose in the world (sensor frame to world).
        lighting: The sun and the sky.
        ignore_actor: The actor the camera rides on, left out of the image (-1: none).
        shadows: Whether the sun casts shadows.
    """

    model: CameraModel
    pose: Pose
    lighting: Lighting
    ignore_actor: int = -1
    shadows: bool = True


class Images(NamedTuple):
    """A renderer's output: colour (H, W, 3) float32, depth (H, W) float32, surface ids
    (H, W) uint8, actor ids (H, W) int32 (see the module docstring)."""

    color: Float32Array
    depth: Float32Array
    surface_ids: UInt8Array
    actor_ids: Int32Array


class Renderer(Protocol):
    """Draws camera images of a scene."""

    #: Its name in `RENDERERS`.
    name: str
    #: What it runs on, for people ("moderngl on EGL (llvmpipe ...)").
    description: str

    def render(self, scene: Scene, shot: Shot) -> Images:
        """The images of ``shot`` in ``scene`` (its moving actors as they are)."""
        ...

    def close(self) -> None:
        """Frees what it holds (a GL context); it may not render afterwards."""
        ...


def _raster() -> Renderer:
    from roadsim.sensors.raster import RasterRenderer

    return RasterRenderer()


def _raycast() -> Renderer:
    from roadsim.sensors.camera_raycast import RaycastRenderer

    return RaycastRenderer()


#: Camera renderers by name; each call makes a new one (raises `RendererUnavailable`
#: where it cannot run).
RENDERERS: Mapping[str, Callable[[], Renderer]] = MappingProxyType(
    {"raster": _raster, "raycast": _raycast}
)


class Renderers:
    """The renderers of one simulation's cameras, made on first use and shared by them.

    ``auto`` is resolved once: ``raster`` if it can be made (a log line says so), else
    ``raycast`` with a `CameraWarning` that says why.
    """

    def __init__(self) -> None:
        self._made: dict[str, Renderer] = {}
        self._auto: str | None = None

    def get(self, choice: str) -> Renderer:
        """The renderer for a camera's ``renderer`` option.

        Raises:
            RendererUnavailable: For ``raster`` where no EGL context can be made.
        """
        name = self._resolve(choice)
        found = self._made.get(name)
        if found is None:
            found = self._made[name] = RENDERERS[name]()
        return found

    def _resolve(self, choice: str) -> str:
        if choice != "auto":
            return choice
        if self._auto is None:
            try:
                raster = self._made.get("raster") or RENDERERS["raster"]()
            except RendererUnavailable as exc:
                warnings.warn(
                    f"cameras are ray-cast on the CPU (slower): {exc}", CameraWarning, stacklevel=4
                )
                self._auto = "raycast"
            else:
                self._made["raster"] = raster
                log.info("cameras render with %s", raster.description)
                self._auto = "raster"
        return self._auto

    @property
    def made(self) -> Mapping[str, Renderer]:
        """The renderers made so far, by name."""
        return MappingProxyType(self._made)

    def close(self) -> None:
        for renderer in self._made.values():
            renderer.close()
        self._made.clear()
        self._auto = None


@dataclass(frozen=True, slots=True, eq=False)
class CameraImage:
    """One shot of a camera (see the module docstring for the images).

    Attributes:
        name, sensor_id: The camera's name and id.
        frame, time: The frame it sampled and its simulation time (s).
        pose: The camera's pose in the world at that frame.
        model: Its pinhole model (intrinsics: `CameraModel.matrix`).
        renderer: The renderer that drew it (``raster`` or ``raycast``).
        color: (H, W, 3) float32 linear radiance (HDR).
        depth: (H, W) float32 distance along the optical axis (m); +inf: nothing hit.
        surface_ids: (H, W) uint8 surface class; 0 for nothing hit.
        actor_ids: (H, W) int32 actor seen; -1 for none.
    """

    name: str
    sensor_id: int
    frame: int
    time: float
    pose: Pose
    model: CameraModel
    renderer: str
    color: Float32Array
    depth: Float32Array
    surface_ids: UInt8Array
    actor_ids: Int32Array

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W)."""
        return self.model.height, self.model.width

    def preview(self, exposure: float = 1.0) -> UInt8Array:
        """(H, W, 3) uint8 sRGB image for people (`roadsim.sensors.camera_model.tone_map`)."""
        return tone_map(self.color, exposure)

    def sensor_points(self) -> FloatArray:
        """(H, W, 3) the surface seen at each pixel's centre, sensor frame (m); NaN where
        nothing is hit."""
        depth = np.where(np.isfinite(self.depth), self.depth, np.nan).astype(np.float64)
        out: FloatArray = self.model.rays() * depth[..., None]
        return out

    def world_points(self) -> FloatArray:
        """(H, W, 3) `sensor_points` in the world frame (m)."""
        return self.pose.to_world(self.sensor_points())


class Camera(RaySensor):
    """A camera (`CameraSpec`) mounted on ``actor`` (-1: the scene origin).

    Attributes:
        model: Its pinhole model.
        shadows: Whether its images show the sun's shadows.
        renderer: ``auto``, ``raster`` or ``raycast`` (see the module docstring).
    """

    def __init__(self, spec: CameraSpec, sensor_id: int, actor: int) -> None:
        super().__init__(
            spec.name,
            sensor_id,
            Mount(actor, spec.location, spec.offset.translation, spec.offset.rotation_deg),  # type: ignore[arg-type]
            spec.sample_every,
            spec.active,
        )
        self.model = CameraModel(
            spec.width, spec.height, spec.horizontal_fov_deg, spec.near, spec.range
        )
        self.shadows = spec.shadows
        self.renderer = spec.renderer

    def sample(
        self,
        scene: Scene,
        state: WorldState,
        frame: int,
        time: float,
        renderer: Renderer,
        lighting: Lighting,
    ) -> CameraImage | None:
        """Takes a shot of ``state`` (the scene updated to it); None while the actor it
        rides on is not active."""
        pose = self.pose(state)
        if pose is None:
            return None
        shot = Shot(self.model, pose, lighting, self.mount.actor, self.shadows)
        images = renderer.render(scene, shot)
        return CameraImage(
            self.name, self.id, frame, time, pose, self.model, renderer.name, *images
        )
