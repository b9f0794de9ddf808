"""Scenario options of the scene sensors (ray tracer, lidar, camera) and of their scene.

`roadsim.scenario.schema` validates a ``sensors:`` entry of these types, and the
scenario's ``scene:``, with the models here. It imports this module when it validates,
not at its own top: modules with compiled kernels import the schema, and their cached
kernels are stamped with every roadsim module they import (`roadsim._jit`), so a change
here would compile them again for nothing.

Frames (ISO 8855): a sensor's ``origins`` and ``directions`` are in the sensor frame, x
forward, y left, z up; ``offset`` moves the sensor from its mounting location in the
vehicle frame (same axes; roll about x, pitch about y, yaw about z, counter-clockwise
positive looking down each axis, applied yaw, then pitch, then roll). Mounted on
``scene``, the sensor sits at the world origin and its ``offset`` is in the world frame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal, NamedTuple, Self

from pydantic import Field, field_validator, model_validator

from roadsim.road.surface_classes import SURFACE_CLASSES
from roadsim.scenario.schema import _Strict, at_path

__all__ = [
    "CAMERA_RENDERERS",
    "LIDAR_PRESETS",
    "MOUNT_LOCATIONS",
    "SENSOR_TYPES",
    "CameraSpec",
    "LidarPreset",
    "LidarSpec",
    "Offset",
    "RayTracerSpec",
    "SceneSpec",
    "Sun",
    "sensor_id_problems",
]

#: Where a sensor may be mounted on a vehicle (`roadsim.sensors.mount` says where each
#: lies on the vehicle's box); a sensor on the ``scene`` takes ``origin`` only.
MOUNT_LOCATIONS = (
    "origin",
    "front_bumper",
    "rear_bumper",
    "roof_center",
    "left_mirror",
    "right_mirror",
)

#: Most bounces of a ray.
MAX_BOUNCES = 16
#: Most rays of one sensor: a 128 x 4096 lidar has 524,288.
MAX_RAYS = 4_194_304

Vector3 = Annotated[tuple[float, ...], Field(strict=False, min_length=3, max_length=3)]


class Offset(_Strict):
    """Where the sensor sits relative to its mounting location (vehicle frame, ISO 8855)."""

    translation: Vector3 = Field(default=(0.0, 0.0, 0.0), description="[x, y, z] (m)")
    rotation_deg: Vector3 = Field(
        default=(0.0, 0.0, 0.0), description="[roll, pitch, yaw] (degrees)"
    )


def _vehicle(value: Any) -> Any:
    if value in ("ego", "scene") or (
        isinstance(value, int) and not isinstance(value, bool) and value >= 0
    ):
        return value
    raise ValueError(f"expected 'ego', 'scene' or an actor id (an integer >= 0), got {value!r}")


class _RaySensor(_Strict):
    """What every ray-traced sensor has: a name, an id, a mount and a rate."""

    name: str = Field(min_length=1, description="Key of its readings")
    id: int | None = Field(
        default=None,
        gt=0,
        description="Unique sensor id (default: one more than the largest before it)",
    )
    vehicle: str | int = Field(
        default="ego",
        union_mode="left_to_right",
        description="What it is mounted on: 'ego', an actor id, or 'scene' (the world origin)",
    )
    location: str = Field(default="origin", description="|".join(MOUNT_LOCATIONS))
    offset: Offset = Offset()
    sample_every: int = Field(default=1, ge=1, description="Ticks between two samples")
    active: bool = Field(default=True, description="Sampled from the start")

    @field_validator("vehicle", mode="before")
    @classmethod
    def _ego_scene_or_actor_id(cls, value: Any) -> Any:
        return _vehicle(value)

    @field_validator("location")
    @classmethod
    def _known_location(cls, value: str) -> str:
        if value not in MOUNT_LOCATIONS:
            import difflib

            close = difflib.get_close_matches(value, MOUNT_LOCATIONS, n=1, cutoff=0.5)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"unknown mounting location {value!r}{hint}, expected {'|'.join(MOUNT_LOCATIONS)}"
            )
        return value

    @model_validator(mode="after")
    def _scene_at_origin(self) -> Self:
        if self.vehicle == "scene" and self.location != "origin":
            raise at_path(
                ("location",),
                f"a sensor mounted on the scene sits at its origin: the location must be "
                f"'origin', got {self.location!r}",
            )
        return self


class RayTracerSpec(_RaySensor):
    """A ray tracer: N rays, each reflected up to ``bounces`` times (the seed's Simulation
    3D Ray Tracer). Origins and directions are in the sensor frame."""

    type: Literal["raytracer"]
    name: str = Field(default="raytracer", min_length=1, description="Key of its readings")
    directions: Annotated[tuple[Vector3, ...], Field(strict=False, min_length=1)] = Field(
        description="[[x, y, z], ...] ray directions (normalised on load)"
    )
    origins: Annotated[tuple[Vector3, ...], Field(strict=False, min_length=1)] = Field(
        default=((0.0, 0.0, 0.0),),
        description="[[x, y, z], ...] ray origins (m): one per direction, or one for all",
    )
    max_lengths: float | Annotated[tuple[float, ...], Field(strict=False, min_length=1)] = Field(
        default=10.0,
        union_mode="left_to_right",
        description="Total path length of each ray, bounces included (m): one per ray or "
        "one for all",
    )
    bounces: int = Field(default=2, ge=0, le=MAX_BOUNCES, description="Reflections per ray")

    @field_validator("directions")
    @classmethod
    def _unit(cls, value: tuple[tuple[float, ...], ...]) -> tuple[tuple[float, ...], ...]:
        if len(value) > MAX_RAYS:
            raise ValueError(f"expected at most {MAX_RAYS:,} rays, got {len(value):,}")
        out = []
        for i, d in enumerate(value):
            norm = math.sqrt(sum(c * c for c in d))
            if not norm > 0.0:
                raise at_path((i,), "a ray direction [0, 0, 0] has no direction")
            out.append(tuple(c / norm for c in d))
        return tuple(out)

    @field_validator("max_lengths")
    @classmethod
    def _positive(cls, value: float | tuple[float, ...]) -> float | tuple[float, ...]:
        values = (value,) if isinstance(value, float | int) else value
        for i, length in enumerate(values):
            if not length > 0.0:
                where = () if isinstance(value, float | int) else (i,)
                raise at_path(where, f"expected a ray length > 0 (m), got {length:g}")
        return value

    @model_validator(mode="after")
    def _counts(self) -> Self:
        n = len(self.directions)
        if len(self.origins) not in (1, n):
            raise at_path(
                ("origins",),
                f"expected one origin or one per direction ({n}), got {len(self.origins)}",
            )
        if isinstance(self.max_lengths, tuple) and len(self.max_lengths) not in (1, n):
            raise at_path(
                ("max_lengths",),
                f"expected one length or one per direction ({n}), got {len(self.max_lengths)}",
            )
        return self


class LidarPreset(NamedTuple):
    """A lidar's channels and vertical field of view (degrees), and a sensor that has them."""

    channels: int
    lower_deg: float
    upper_deg: float
    model: str


#: Channel counts a lidar may name, with the vertical field of view of a common sensor of
#: that many channels (channels evenly spread over it).
LIDAR_PRESETS: Mapping[int, LidarPreset] = MappingProxyType(
    {
        16: LidarPreset(16, -15.0, 15.0, "Velodyne VLP-16"),
        32: LidarPreset(32, -30.67, 10.67, "Velodyne HDL-32E"),
        64: LidarPreset(64, -24.8, 2.0, "Velodyne HDL-64E"),
        128: LidarPreset(128, -25.0, 15.0, "Velodyne VLS-128"),
    }
)


class LidarSpec(_RaySensor):
    """A spinning lidar: ``channels`` lasers at fixed elevations, swept around z."""

    type: Literal["lidar"]
    name: str = Field(default="lidar", min_length=1, description="Key of its readings")
    location: str = Field(default="roof_center", description="|".join(MOUNT_LOCATIONS))
    channels: int | None = Field(
        default=None, description="16|32|64|128 (default 32 without elevations_deg)"
    )
    elevations_deg: Annotated[tuple[float, ...], Field(strict=False, min_length=1)] | None = Field(
        default=None, description="Elevation of each channel (degrees, up positive)"
    )
    vertical_fov_deg: Annotated[
        tuple[float, ...], Field(strict=False, min_length=2, max_length=2)
    ] | None = Field(
        default=None, description="[lower, upper] (degrees; default: the preset's)"
    )
    horizontal_resolution_deg: float = Field(
        default=0.2, gt=0, le=360, description="Azimuth step (degrees)"
    )
    horizontal_fov_deg: float = Field(
        default=360.0, gt=0, le=360, description="Azimuth range, centred on x (degrees)"
    )
    range: float = Field(default=120.0, gt=0, description="Farthest return (m)")
    rotation_rate_hz: float = Field(default=10.0, gt=0, description="Sweeps per second")
    bounces: int = Field(default=0, ge=0, le=MAX_BOUNCES, description="Reflections per ray")
    range_noise_std: float = Field(default=0.0, ge=0, description="Range noise sigma (m)")
    dropout: float = Field(
        default=0.0, ge=0, lt=1, description="Probability that a return is lost"
    )

    @field_validator("channels")
    @classmethod
    def _preset(cls, value: int | None) -> int | None:
        if value is not None and value not in LIDAR_PRESETS:
            raise ValueError(
                f"expected a preset channel count {'|'.join(map(str, LIDAR_PRESETS))} (or "
                f"give elevations_deg), got {value}"
            )
        return value

    @field_validator("elevations_deg")
    @classmethod
    def _elevations(cls, value: tuple[float, ...] | None) -> tuple[float, ...] | None:
        for i, e in enumerate(value or ()):
            if not -90.0 <= e <= 90.0:
                raise at_path((i,), f"expected an elevation in [-90, 90] degrees, got {e:g}")
        return value

    @model_validator(mode="after")
    def _pattern(self) -> Self:
        if self.elevations_deg is not None and (
            self.channels is not None or self.vertical_fov_deg is not None
        ):
            key = "channels" if self.channels is not None else "vertical_fov_deg"
            raise at_path(
                (key,), f"give either elevations_deg or {key}: the elevations say both"
            )
        fov = self.vertical_fov_deg
        if fov is not None and not -90.0 <= fov[0] < fov[1] <= 90.0:
            raise at_path(
                ("vertical_fov_deg",),
                f"expected -90 <= lower < upper <= 90 (degrees), got [{fov[0]:g}, {fov[1]:g}]",
            )
        rays = len(self.elevations()) * self.azimuth_count
        if rays > MAX_RAYS:
            raise at_path(
                ("horizontal_resolution_deg",),
                f"the lidar would cast {rays:,} rays a sweep; at most {MAX_RAYS:,}",
            )
        return self

    def elevations(self) -> tuple[float, ...]:
        """The elevation of each channel (degrees), from the lowest."""
        if self.elevations_deg is not None:
            return tuple(sorted(self.elevations_deg))
        preset = LIDAR_PRESETS[self.channels or 32]
        lower, upper = self.vertical_fov_deg or (preset.lower_deg, preset.upper_deg)
        n = preset.channels
        return tuple(lower + (upper - lower) * k / (n - 1) for k in range(n))

    @property
    def azimuth_count(self) -> int:
        """Azimuth steps of a sweep."""
        return max(1, round(self.horizontal_fov_deg / self.horizontal_resolution_deg))


#: How a camera may be rendered: ``raster`` (moderngl on EGL), ``raycast`` (Embree, the
#: same scene), or ``auto`` (raster where an EGL context can be made, else ray-cast).
CAMERA_RENDERERS = ("auto", "raster", "raycast")
#: Most pixels along a side of a camera image.
MAX_CAMERA_SIDE = 8192
#: Widest horizontal field of view of a (pinhole) camera (degrees).
MAX_CAMERA_FOV_DEG = 170.0


class CameraSpec(_RaySensor):
    """A pinhole camera looking along its mount's +x (`roadsim.sensors.camera`): an HDR
    colour image, a depth image, a surface-class image and an instance image per shot."""

    type: Literal["camera"]
    name: str = Field(default="camera", min_length=1, description="Key of its readings")
    location: str = Field(default="roof_center", description="|".join(MOUNT_LOCATIONS))
    resolution: Annotated[tuple[int, ...], Field(strict=False, min_length=2, max_length=2)] = (
        Field(default=(640, 480), description="[width, height] (pixels)")
    )
    horizontal_fov_deg: float = Field(
        default=90.0, description=f"Horizontal field of view (degrees, (0, {MAX_CAMERA_FOV_DEG:g}])"
    )
    near: float = Field(default=0.1, gt=0, description="Nearest surface seen (m, along x)")
    range: float = Field(default=1000.0, gt=0, description="Farthest surface seen (m, along x)")
    shadows: bool = Field(default=True, description="The sun casts shadows")
    renderer: str = Field(default="auto", description="|".join(CAMERA_RENDERERS))

    @field_validator("resolution")
    @classmethod
    def _pixels(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not all(1 <= side <= MAX_CAMERA_SIDE for side in value):
            raise ValueError(
                f"expected [width, height] from 1 to {MAX_CAMERA_SIDE} pixels each, got "
                f"{value[0]} x {value[1]}"
            )
        return value

    @field_validator("horizontal_fov_deg")
    @classmethod
    def _fov(cls, value: float) -> float:
        if not 0.0 < value <= MAX_CAMERA_FOV_DEG:
            raise ValueError(
                f"expected a horizontal field of view in (0, {MAX_CAMERA_FOV_DEG:g}] degrees "
                f"(a pinhole camera sees less than 180), got {value:g}"
            )
        return value

    @field_validator("renderer")
    @classmethod
    def _known_renderer(cls, value: str) -> str:
        if value not in CAMERA_RENDERERS:
            raise ValueError(
                f"unknown camera renderer {value!r}, expected {'|'.join(CAMERA_RENDERERS)}"
            )
        return value

    @model_validator(mode="after")
    def _clip(self) -> Self:
        if not self.near < self.range:
            raise at_path(
                ("range",), f"expected a range beyond near ({self.near:g} m), got {self.range:g}"
            )
        return self

    @property
    def width(self) -> int:
        return self.resolution[0]

    @property
    def height(self) -> int:
        return self.resolution[1]


#: Scene sensor classes by ``type`` (the schema adds the driver sensor's).
SENSOR_TYPES: Mapping[str, type[_RaySensor]] = MappingProxyType(
    {"raytracer": RayTracerSpec, "lidar": LidarSpec, "camera": CameraSpec}
)


class Sun(_Strict):
    """Where the sun stands (world frame): it lights the cameras' images and casts shadows."""

    azimuth_deg: float = Field(
        default=225.0, description="Counter-clockwise from east (x) (degrees; 225: south-west)"
    )
    elevation_deg: float = Field(
        default=45.0, ge=-90, le=90, description="Above the horizon (degrees; below it: night)"
    )


class SceneSpec(_Strict):
    """What the ray-traced sensors see besides the road and the actors."""

    object_classes: Mapping[str, str] = Field(
        default_factory=dict,
        description="Surface class of map object types, over the defaults ({wind: pole})",
    )
    ground: bool = Field(default=True, description="A ground plane (grass) around the road")
    sun: Sun = Field(default_factory=Sun, description="The sun, for cameras")

    @field_validator("object_classes")
    @classmethod
    def _known_classes(cls, value: Mapping[str, str]) -> dict[str, str]:
        for key, name in value.items():
            if name not in SURFACE_CLASSES:
                import difflib

                close = difflib.get_close_matches(name, SURFACE_CLASSES, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise at_path(
                    (key,),
                    f"unknown surface class {name!r}{hint}, expected one of "
                    f"{', '.join(SURFACE_CLASSES)}",
                )
        return dict(value)


def sensor_id_problems(sensors: tuple[Any, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    """Two ray-traced sensors with one ``id``, as (key path under ``sensors``, message)."""
    first: dict[int, int] = {}
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for i, sensor in enumerate(sensors):
        sid = getattr(sensor, "id", None) if isinstance(sensor, _RaySensor) else None
        if sid is None:
            continue
        if sid in first:
            problems.append(((i, "id"), f"sensors[{first[sid]}] has the id {sid} already"))
        first.setdefault(sid, i)
    return problems
