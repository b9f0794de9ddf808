"""The scenario format: frozen, strict pydantic models of a scenario file.

A scenario names a map and describes what happens on it: the ego vehicle, the traffic, static
and scripted objects, sensors, what ray-traced sensors see (``scene``) and how often the
capture takes a snapshot (``capture``). Every model forbids unknown keys
and does not coerce: ``"0.05"`` is not a number and ``1.0`` is not an integer. Road ids are
strings, as in OpenDRIVE; YAML integers are accepted for them and converted.

Positions (``ego.spawn``, ``objects[].position``, the points of a path) take one of two
forms:

- ``{road, lane, s, t}``: a lane of a road at s (m along the reference line); t (m, default 0)
  offsets the point from the lane's centre line toward the road's left (OpenDRIVE t). The
  heading is the lane's driving direction.
- ``{x, y, heading}`` (or ``heading_deg``): a point in the world frame; without a heading the
  point takes the driving direction of the lane it lies on.

A position is the centre of the actor's footprint, on the road surface.

Unions (positions, spawn areas, objects) pick their variant with a discriminator, so errors
name the variant the input meant; the tags of those unions, listed in `UNION_TAGS`, appear in
pydantic error locations and are dropped when locations are turned into key paths.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from roadsim.road.lanes import LANE_TYPES
from roadsim.scenario.actors import ActorIds, reference_problems
from roadsim.scenario.problems import (
    OBJECT_TYPE_ERROR,
    SourceMap,
    unknown_type_message,
    validate_model,
)

__all__ = [
    "MAX_DENSITY_PER_KM",
    "MAX_TRAFFIC_COUNT",
    "MIN_DT",
    "OBJECT_SIZES",
    "OBJECT_TYPES",
    "SCRIPTED_KINDS",
    "SENSOR_TYPES",
    "UNION_TAGS",
    "VEHICLE_MODELS",
    "VEHICLE_MODEL_NAMES",
    "Barrier",
    "Box",
    "CircleArea",
    "Cone",
    "DriverSensorSpec",
    "Ego",
    "Object",
    "PathObject",
    "PathPoint",
    "Position",
    "RoadPathPoint",
    "RoadPosition",
    "RoadsArea",
    "Scenario",
    "SpawnArea",
    "SpeedDistribution",
    "Traffic",
    "VehicleModel",
    "WorldPathPoint",
    "WorldPosition",
    "scenario_json_schema",
    "sensor_types",
    "unknown_type_message",
    "validate_data",
]

# -- vehicle models ---------------------------------------------------------------------------


@dataclass(frozen=True)
class VehicleModel:
    """Size and limits of one vehicle model, read by the vehicle dynamics.

    Attributes:
        length, width, height: Bounding box (m).
        wheelbase: Distance between the axles (m), for the bicycle model.
        max_accel: Largest forward acceleration (m/s^2).
        max_decel: Largest braking deceleration, positive (m/s^2).
        max_steer: Largest front-wheel steering angle (rad).
        max_steer_rate: Largest rate of change of the steering angle (rad/s).
        steering_ratio: Steering-wheel angle over road-wheel angle (the driver sensor's
            ``steering_wheel_angle``).
    """

    length: float
    width: float
    height: float
    wheelbase: float
    max_accel: float
    max_decel: float
    max_steer: float
    max_steer_rate: float
    steering_ratio: float


VehicleModelName = Literal["car", "truck", "bus"]

#: The vehicle models; a model's index here is its integer code in arrays.
VEHICLE_MODEL_NAMES: tuple[VehicleModelName, ...] = ("car", "truck", "bus")

#: Sizes and limits per vehicle model (a mid-size car, a 12 m rigid truck, a 12 m city bus).
VEHICLE_MODELS: Mapping[str, VehicleModel] = MappingProxyType(
    {
        "car": VehicleModel(4.6, 1.9, 1.5, 2.8, 3.5, 9.0, 0.6, 0.8, 15.0),
        "truck": VehicleModel(12.0, 2.5, 3.8, 6.5, 1.5, 6.0, 0.85, 0.8, 20.0),
        "bus": VehicleModel(12.0, 2.55, 3.2, 6.0, 1.5, 6.0, 0.85, 0.8, 20.0),
    }
)

# -- building blocks --------------------------------------------------------------------------


class _Strict(BaseModel):
    """Base of every scenario model: frozen, no unknown keys, no coercion, finite floats."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    #: Keys that were renamed, with what to write instead.
    _renamed: ClassVar[Mapping[str, str]] = MappingProxyType({})

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        """Rejects the first unknown key, with the closest known key as a suggestion.

        ``extra="forbid"`` alone would reject it too, but without knowing the valid keys.
        """
        if isinstance(data, dict) and cls.model_config.get("extra") == "forbid":
            known = list(cls.model_fields)
            for key in data:
                if key not in cls.model_fields:
                    close = difflib.get_close_matches(str(key), known, n=1)
                    hint = f"did you mean {close[0]!r}?" if close else f"expected {_or(known)}"
                    if key in cls._renamed:
                        hint = cls._renamed[key]
                    raise PydanticCustomError(
                        "unknown_key", "unknown key ({hint})", {"key": str(key), "hint": hint}
                    )
        return data


def at_path(path: tuple[str | int, ...], message: str) -> PydanticCustomError:
    """An error about the key at ``path`` below the model whose validator raises it."""
    return PydanticCustomError("at_path", "{message}", {"path": path, "message": message})


def _or(words: list[str]) -> str:
    """``"a, b or c"``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _road_id(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise PydanticCustomError(
            "id_type",
            "expected an id (a string or an integer), got {value}",
            {"value": repr(value)},
        )
    return value


#: An OpenDRIVE road id; YAML integers are converted to strings.
RoadId = Annotated[
    str, BeforeValidator(_road_id, json_schema_input_type=str | int), Field(min_length=1)
]
#: The name of an actor, to look it up by (`roadsim.Simulation.actor`) and to name it as a
#: controller. A string: a YAML integer is no name (actor ids are integers).
Name = Annotated[
    str,
    Field(min_length=1, description="A unique name to look the actor up by ('ego' is the ego's)"),
]

_ID_IS_NAME = (
    "'id' is now 'name': a string to look the actor up by (actor ids are the integers the "
    "simulation gives)"
)

#: A lenient container for YAML lists: a list becomes a tuple, its items stay strict.
Size = Annotated[
    tuple[Annotated[float, Field(gt=0)], ...],
    Field(strict=False, min_length=3, max_length=3, description="[length, width, height] (m)"),
]

# -- positions ----------------------------------------------------------------------------------


class RoadPosition(_Strict):
    """A point on a lane: road, lane id, s along the road, t from the lane's centre line."""

    road: RoadId = Field(description="OpenDRIVE road id")
    lane: int = Field(description="OpenDRIVE lane id (negative: right of the reference line)")
    s: float = Field(ge=0, description="Position along the road's reference line (m)")
    t: float = Field(
        default=0.0, description="Offset from the lane centre toward the road's left (m)"
    )


class WorldPosition(_Strict):
    """A point in the world frame, with an optional heading (default: the lane's direction)."""

    x: float = Field(description="East (m)")
    y: float = Field(description="North (m)")
    heading: float | None = Field(default=None, description="Counter-clockwise from east (rad)")
    heading_deg: float | None = Field(
        default=None, description="Counter-clockwise from east (degrees)"
    )

    @model_validator(mode="after")
    def _one_heading(self) -> Self:
        if self.heading is not None and self.heading_deg is not None:
            raise ValueError("give 'heading' (rad) or 'heading_deg', not both")
        return self

    @property
    def heading_rad(self) -> float | None:
        """The heading in radians, or ``None`` for the lane's driving direction."""
        if self.heading_deg is not None:
            return math.radians(self.heading_deg)
        return self.heading


def _position_form(value: Any) -> str | None:
    if isinstance(value, dict):
        if value.keys() & {"road", "lane", "s", "t"}:
            return "position:road"
        if value.keys() & {"x", "y", "heading", "heading_deg"}:
            return "position:xy"
        return None
    if isinstance(value, RoadPosition):
        return "position:road"
    return "position:xy" if isinstance(value, WorldPosition) else None


#: Where an actor is placed: on a lane, or at world coordinates.
Position = Annotated[
    Annotated[RoadPosition, Tag("position:road")] | Annotated[WorldPosition, Tag("position:xy")],
    Discriminator(
        _position_form,
        custom_error_type="position_form",
        custom_error_message="expected either {road, lane, s, t} or {x, y, heading}",
    ),
]

# -- ego ------------------------------------------------------------------------------------------


class Ego(_Strict):
    """The ego vehicle.

    With ``control: external`` a client drives it; while nobody does, and always with
    ``control: autopilot``, the traffic autopilot drives it.
    """

    spawn: Position
    speed: float = Field(default=0.0, ge=0, description="Initial speed (m/s)")
    model: VehicleModelName = "car"
    control: Literal["external", "autopilot"] = "autopilot"
    route: Annotated[tuple[RoadId, ...], Field(strict=False)] = Field(
        default=(), description="Road ids to prefer at forks, in order"
    )
    desired_speed: float | None = Field(
        default=None, gt=0, description="Autopilot cruise speed (m/s); default: the speed limit"
    )


# -- traffic --------------------------------------------------------------------------------------


class SpeedDistribution(_Strict):
    """Desired speeds of traffic vehicles as fractions of the speed limit.

    Each vehicle draws its fraction once, from a normal distribution with this mean and
    standard deviation clipped to [min, max], and then wants to drive at that fraction of the
    speed limit wherever it is (1.1 at a 100 km/h limit: 110 km/h).
    """

    mean: float = Field(default=1.0, gt=0)
    std: float = Field(default=0.1, ge=0)
    min: float = Field(default=0.7, gt=0)
    max: float = Field(default=1.3, gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if not self.min <= self.mean <= self.max:
            raise ValueError(
                f"expected min <= mean <= max, got min={self.min:g}, mean={self.mean:g}, "
                f"max={self.max:g}"
            )
        return self


class RoadsArea(_Strict):
    """Spawn traffic on these roads only."""

    roads: Annotated[tuple[RoadId, ...], Field(strict=False, min_length=1)]


class CircleArea(_Strict):
    """Spawn traffic within ``radius`` of ``center`` only."""

    center: Annotated[tuple[float, ...], Field(strict=False, min_length=2, max_length=2)] = Field(
        description="[x, y] (m)"
    )
    radius: float = Field(gt=0, description="m")


def _area_form(value: Any) -> str | None:
    if isinstance(value, dict):
        if "roads" in value:
            return "area:roads"
        return "area:circle" if value.keys() & {"center", "radius"} else None
    if isinstance(value, RoadsArea):
        return "area:roads"
    return "area:circle" if isinstance(value, CircleArea) else None


SpawnArea = Annotated[
    Annotated[RoadsArea, Tag("area:roads")] | Annotated[CircleArea, Tag("area:circle")],
    Discriminator(
        _area_form,
        custom_error_type="area_form",
        custom_error_message="expected either {roads} or {center, radius}",
    ),
]

_DEFAULT_MIX: dict[VehicleModelName, float] = {"car": 0.85, "truck": 0.1, "bus": 0.05}

#: Most traffic vehicles a scenario may ask for: 100 times the largest benchmarked scene
#: (10,000 vehicles). Spawning samples a position for every vehicle asked for before it
#: thins them out, so an unbounded count (``1e12``) ends in a MemoryError instead.
MAX_TRAFFIC_COUNT = 1_000_000

#: Most traffic vehicles per km of lane: the shortest vehicle model bumper to bumper
#: (1000 m / 4.6 m, 217 cars); no lane holds more, so no real scenario asks for more.
MAX_DENSITY_PER_KM = math.floor(1000.0 / min(m.length for m in VEHICLE_MODELS.values()))


class Traffic(_Strict):
    """Traffic vehicles: how many, how fast, which models, where.

    Give exactly one of ``count`` (vehicles) and ``density`` (vehicles per km of lane, over
    the lanes of ``lane_types`` in the spawn area).
    """

    count: int | None = Field(
        default=None, ge=0, le=MAX_TRAFFIC_COUNT, description="Number of traffic vehicles"
    )
    density: float | None = Field(
        default=None,
        gt=0,
        le=MAX_DENSITY_PER_KM,
        description="Vehicles per km of lane (at most a lane full of cars, bumper to bumper)",
    )
    speed: SpeedDistribution = SpeedDistribution()
    mix: Mapping[VehicleModelName, Annotated[float, Field(gt=0)]] = Field(
        default_factory=lambda: dict(_DEFAULT_MIX),
        description="Relative weights of the vehicle models (normalised to sum to 1)",
    )
    spawn_area: SpawnArea | None = None
    lane_types: Annotated[tuple[str, ...], Field(strict=False, min_length=1)] = ("driving",)
    min_gap: float = Field(
        default=10.0, ge=0, description="Least bumper-to-bumper gap at spawn (m)"
    )
    politeness: float = Field(default=0.3, ge=0, le=1, description="MOBIL politeness factor")
    keep_right: bool = Field(default=True, description="Return to the outer lane when possible")
    respawn: bool = Field(
        default=True,
        description="A vehicle that drives off the map comes back as a new vehicle at one "
        "of the map's entry lanes, so that traffic keeps its count",
    )

    @model_validator(mode="after")
    def _count_or_density(self) -> Self:
        if (self.count is None) == (self.density is None):
            raise ValueError("give exactly one of 'count' and 'density'")
        return self

    @field_validator("mix")
    @classmethod
    def _normalise(cls, mix: Mapping[VehicleModelName, float]) -> dict[VehicleModelName, float]:
        if not mix:
            raise ValueError("expected at least one of car, truck, bus with a weight > 0")
        total = math.fsum(mix.values())
        if abs(total - 1.0) < 1e-12:  # already normal: keep it bit for bit (round trips)
            return dict(mix)
        return {k: v / total for k, v in mix.items()}

    @field_validator("lane_types")
    @classmethod
    def _known_lane_types(cls, lane_types: tuple[str, ...]) -> tuple[str, ...]:
        for name in lane_types:
            if name not in LANE_TYPES:
                close = difflib.get_close_matches(name, LANE_TYPES, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(f"unknown lane type {name!r}{hint}")
        return lane_types


# -- objects ----------------------------------------------------------------------------------------

#: Default [length, width, height] (m) per object type: a box, a 75 cm traffic cone, a
#: concrete barrier segment.
OBJECT_SIZES: Mapping[str, tuple[float, float, float]] = MappingProxyType(
    {"box": (1.0, 1.0, 1.0), "cone": (0.4, 0.4, 0.75), "barrier": (3.0, 0.6, 0.8)}
)


class _Obstacle(_Strict):
    """A static obstacle; each type has its default size."""

    _renamed = MappingProxyType({"id": _ID_IS_NAME})

    type: str
    name: Name | None = None
    position: Position


class Box(_Obstacle):
    type: Literal["box"]
    size: Size = OBJECT_SIZES["box"]


class Cone(_Obstacle):
    type: Literal["cone"]
    size: Size = OBJECT_SIZES["cone"]


class Barrier(_Obstacle):
    """A concrete barrier segment."""

    type: Literal["barrier"]
    size: Size = OBJECT_SIZES["barrier"]


# -- scripted objects --------------------------------------------------------------------------------

#: [length, width, height] (m) of each kind of scripted object; a ``box`` takes its ``size``.
SCRIPTED_KINDS: Mapping[str, tuple[float, float, float]] = MappingProxyType(
    {
        **{name: (m.length, m.width, m.height) for name, m in VEHICLE_MODELS.items()},
        "pedestrian": (0.5, 0.6, 1.75),
        "cyclist": (1.8, 0.6, 1.75),
        "box": OBJECT_SIZES["box"],
    }
)

#: A direction in the plane, [dx, dy]; only its direction counts.
Direction = Annotated[
    tuple[float, ...], Field(strict=False, min_length=2, max_length=2, description="[dx, dy]")
]


class _PathPoint(_Strict):
    """What every control point of a path has besides its position."""

    speed: float = Field(ge=0, description="Speed of the object as it passes the point (m/s)")
    tangent: Direction | None = Field(
        default=None,
        description="Direction of the path through the point, [dx, dy] (default: from the "
        "neighbouring points)",
    )
    wait: float = Field(
        default=0.0,
        ge=0,
        description="Time to stand at the point (s); needs speed 0, and for a dependent "
        "object a point from its target point on",
    )

    @model_validator(mode="after")
    def _wait_at_rest(self) -> Self:
        if self.wait > 0 and self.speed > 0:
            raise ValueError(f"a wait needs speed 0 at the point, got speed {self.speed:g}")
        if self.tangent is not None and math.hypot(*self.tangent) == 0.0:
            raise ValueError("the tangent [0, 0] has no direction")
        return self


class RoadPathPoint(_PathPoint, RoadPosition):
    """A control point on a lane: road, lane, s, t (see `RoadPosition`)."""


class WorldPathPoint(_PathPoint):
    """A control point in the world frame; it may lie off the road (but not the first)."""

    x: float = Field(description="East (m)")
    y: float = Field(description="North (m)")


def _point_form(value: Any) -> str | None:
    if isinstance(value, dict):
        if value.keys() & {"road", "lane", "s", "t"}:
            return "point:road"
        return "point:xy" if value.keys() & {"x", "y"} else None
    if isinstance(value, RoadPathPoint):
        return "point:road"
    return "point:xy" if isinstance(value, WorldPathPoint) else None


#: A control point of a scripted object's path.
PathPoint = Annotated[
    Annotated[RoadPathPoint, Tag("point:road")] | Annotated[WorldPathPoint, Tag("point:xy")],
    Discriminator(
        _point_form,
        custom_error_type="position_form",
        custom_error_message="expected either {road, lane, s, t, speed} or {x, y, speed}",
    ),
]

#: How a scripted object's ``controller`` may be named.
ControllerRef = Annotated[
    str | int,
    Field(
        union_mode="left_to_right",
        description="'ego', the name of a scenario object, or an actor id",
    ),
]


class PathObject(_Strict):
    """A scripted object: it follows a path through its control points, at their speeds.

    The path passes through every point in order, smoothed by a cubic Hermite spline; the
    speed is the point's as the object passes it and linear in the distance travelled in
    between (see `roadsim.scenario.paths`). With ``target_point`` it is a *dependent*
    object: until it reaches that point its speed is set so that it arrives there when
    its ``controller`` arrives at ``controller_target``: its speed is its path length left
    over the controller's time to go, at most ``max_speed``; with ``keep_timed_speed`` it
    keeps that speed through the target point and changes it to the next point's along
    the next segment, instead of taking the target point's speed at once.

    Lifecycle: the object exists while the ego is within ``creation_radius`` of it (of its
    first point before it exists; 0: always); it is created once the ego has been inside
    that radius for ``activation_delay`` without a break, and deleted ``lifetime`` after its
    creation (0: never).
    """

    _renamed = MappingProxyType({"id": _ID_IS_NAME})

    type: Literal["path"]
    name: Name | None = None
    kind: Literal["car", "truck", "bus", "pedestrian", "cyclist", "box"] = "car"
    size: Size | None = Field(default=None, description="[length, width, height] (m)")
    path: Annotated[tuple[PathPoint, ...], Field(strict=False, min_length=2)]
    creation_radius: float = Field(
        default=0.0, ge=0, description="Exists while the ego is this close (m); 0: always"
    )
    activation_delay: float = Field(
        default=0.0, ge=0, description="Time the ego must stay within the radius first (s)"
    )
    lifetime: float = Field(default=0.0, ge=0, description="Deleted this long after creation (s)")
    at_end: Literal["stop", "delete"] = Field(
        default="stop", description="At the end of the path: stop there, or disappear"
    )
    target_point: int | None = Field(
        default=None, ge=1, description="Index of the control point to arrive at in sync"
    )
    controller: ControllerRef | None = Field(
        default=None, description="Whose arrival it syncs with (default: 'ego')"
    )
    controller_target: Position | None = Field(
        default=None, description="Where the controller arrives"
    )
    max_speed: float | None = Field(
        default=None,
        gt=0,
        description="m/s, the most its timed speed may be (it arrives late rather than faster)",
    )
    max_accel: float | None = Field(default=None, gt=0, description="m/s^2, while in sync")
    max_decel: float | None = Field(default=None, gt=0, description="m/s^2, while in sync")
    keep_timed_speed: bool = Field(
        default=False,
        description="Keep the timed speed through the target point, and change it to the "
        "next point's speed along the next segment (default: take the target point's speed "
        "at once)",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        n = len(self.path)
        if self.target_point is None:
            keys = ("controller", "controller_target", "max_speed", "max_accel", "max_decel")
            for key in (*keys, "keep_timed_speed"):
                if getattr(self, key) not in (None, False):
                    raise at_path(
                        (key,), f"'{key}' is for dependent objects: it needs a 'target_point'"
                    )
        else:
            if self.target_point >= n:
                raise at_path(
                    ("target_point",),
                    f"target_point {self.target_point} is out of range: the path has {n} "
                    f"points (0 to {n - 1})",
                )
            if self.controller_target is None:
                raise at_path(("target_point",), "a 'target_point' needs a 'controller_target'")
            # Before its target point a dependent object drives the controller's timing,
            # not the points' speeds: a wait there would never be stood.
            for i in range(self.target_point):
                if self.path[i].wait > 0:
                    raise at_path(
                        ("path", i, "wait"),
                        f"a wait before the target point (path[{self.target_point}]) would be "
                        "ignored: until it gets there a dependent object moves as its "
                        "controller's timing says; wait at the target point or after it",
                    )
            if self.keep_timed_speed and self.path[self.target_point].wait > 0:
                raise at_path(
                    ("keep_timed_speed",),
                    f"the object waits at its target point (path[{self.target_point}].wait): "
                    "it cannot keep its speed through it",
                )
        # Between two points at rest nothing would ever move it (before the target point
        # of a dependent object, the points' speeds do not count).
        for i in range((self.target_point or 0), n - 1):
            if self.path[i].speed == 0.0 and self.path[i + 1].speed == 0.0:
                raise at_path(
                    ("path", i + 1, "speed"),
                    f"path[{i}] and path[{i + 1}] both have speed 0: the object could never "
                    "move from one to the other",
                )
        return self

    @property
    def dimensions(self) -> tuple[float, float, float]:
        """[length, width, height] (m): ``size``, or the kind's."""
        length, width, height = self.size if self.size is not None else SCRIPTED_KINDS[self.kind]
        return length, width, height

    @property
    def controller_name(self) -> str | int:
        """Whose arrival a dependent object syncs with: 'ego', an object's name or an
        actor id."""
        return "ego" if self.controller is None else self.controller


#: Object classes by ``type``; a new kind of object adds its class here.
OBJECT_TYPES: Mapping[str, type[_Strict]] = MappingProxyType(
    {"box": Box, "cone": Cone, "barrier": Barrier, "path": PathObject}
)


def _object_type(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return f"object:{kind}" if kind in OBJECT_TYPES else None


#: A scenario object, chosen by its ``type``.
Object = Annotated[
    Annotated[Box, Tag("object:box")]
    | Annotated[Cone, Tag("object:cone")]
    | Annotated[Barrier, Tag("object:barrier")]
    | Annotated[PathObject, Tag("object:path")],
    Discriminator(
        _object_type,
        custom_error_type=OBJECT_TYPE_ERROR,
        custom_error_message=f"unknown type, expected {'|'.join(OBJECT_TYPES)}",
        custom_error_context={"expected": "|".join(OBJECT_TYPES)},
    ),
]

UNION_TAGS: frozenset[str] = frozenset(
    {"position:road", "position:xy", "area:roads", "area:circle", "point:road", "point:xy"}
    | {f"object:{kind}" for kind in OBJECT_TYPES}
)

# -- sensors ----------------------------------------------------------------------------------------


class DriverSensorSpec(_Strict):
    """The driver sensor (openPASS' Sensor_Driver) of one vehicle: `roadsim.sensors.view`.
    The simulation samples it after every tick into ``Simulation.readings[name]``."""

    type: Literal["driver"]
    name: str = Field(default="driver", min_length=1, description="Key of its readings")
    vehicle: str | int = Field(
        default="ego",
        union_mode="left_to_right",
        description="The vehicle it is attached to: 'ego' or an actor id",
    )
    visibility: float = Field(default=300.0, gt=0, description="How far the driver sees (m)")

    @field_validator("vehicle", mode="before")
    @classmethod
    def _ego_or_actor_id(cls, value: Any) -> Any:
        if value == "ego" or (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
        ):
            return value
        raise ValueError(f"expected 'ego' or an actor id (an integer >= 0), got {value!r}")


#: Sensor classes defined here by ``type``; `sensor_types` gives every type.
SENSOR_TYPES: Mapping[str, type[_Strict]] = MappingProxyType({"driver": DriverSensorSpec})


def sensor_types() -> dict[str, type[_Strict]]:
    """Every sensor class by ``type``: the driver sensor's, and those of
    `roadsim.scenario.sensors` (ray tracer, lidar ...), where a new kind of sensor adds
    its class.

    That module is imported here, when a scenario is validated, not at the top of this
    one: modules with compiled kernels import this one, and their cached kernels are
    stamped with every roadsim module they import (`roadsim._jit`), so that a change to
    the options of a sensor would compile them again.
    """
    from roadsim.scenario import sensors

    return {**SENSOR_TYPES, **sensors.SENSOR_TYPES}


def _sensor(value: Any) -> Any:
    """A sensor of a known ``type``; an unknown (or no) type is an error naming them all."""
    types = sensor_types()
    if isinstance(value, tuple(types.values())):
        return value
    if not isinstance(value, dict):
        raise PydanticCustomError(
            "model_type", "expected a mapping with a type ({types}), got {value}",
            {"types": "|".join(types), "value": type(value).__name__},
        )  # fmt: skip
    if "type" not in value:
        raise at_path((), f"missing required key 'type' ({'|'.join(types)})")
    kind = value["type"]
    if not isinstance(kind, str) or kind not in types:
        raise at_path(("type",), unknown_type_message(kind, list(types)))
    return types[kind].model_validate(value)


def _scene(value: Any) -> Any:
    """The scenario's ``scene`` (`roadsim.scenario.sensors.SceneSpec`, imported when
    validating, as `sensor_types` says why)."""
    from roadsim.scenario.sensors import SceneSpec

    if value is None or isinstance(value, SceneSpec):
        return value
    return SceneSpec.model_validate(value)


def _capture(value: Any) -> Any:
    """The scenario's ``capture`` (`roadsim.scenario.capture.CaptureSpec`, imported when
    validating, as `sensor_types` says why)."""
    from roadsim.scenario.capture import CaptureSpec

    if value is None or isinstance(value, CaptureSpec):
        return value
    return CaptureSpec.model_validate(value)


#: A scenario sensor, chosen by its ``type`` (`sensor_types`).
Sensor = Annotated[Any, PlainValidator(_sensor)]


# -- the scenario -------------------------------------------------------------------------------------

#: The smallest time step a scenario may take (s).
MIN_DT = 1e-4


class Scenario(_Strict):
    """A scenario: a map, a seed, a time step and what drives on the map."""

    model_config = ConfigDict(title="roadsim scenario")

    # Where the scenario was written (`source`); not part of what it says.
    _origin: _Origin | None = PrivateAttr(default=None)

    name: str | None = None
    map: str = Field(
        min_length=1,
        description="A built-in map name or a path to an .xodr file (relative to the scenario)",
    )
    seed: int = Field(default=0, ge=0, description="Seed of all random choices")
    # 0.1 ms (10 kHz) is finer than any vehicle dynamics needs; a smaller step only makes
    # a run of any length endless (1e-300 s would never finish a second).
    dt: float = Field(default=0.05, ge=MIN_DT, le=1, description="Time step (s)")
    duration: float = Field(default=60.0, gt=0, description="Simulated time of a run (s)")
    ego: Ego | None = None
    traffic: Traffic | None = None
    objects: Annotated[tuple[Object, ...], Field(strict=False)] = ()
    sensors: Annotated[tuple[Sensor, ...], Field(strict=False)] = ()
    scene: Annotated[Any, PlainValidator(_scene)] = Field(
        default=None, description="What ray-traced sensors see (roadsim.scenario.sensors)"
    )
    capture: Annotated[Any, PlainValidator(_capture)] = Field(
        default=None, description="How often snapshots are taken (roadsim.scenario.capture)"
    )

    @field_validator("objects")
    @classmethod
    def _unique_object_names(cls, objects: tuple[Object, ...]) -> tuple[Object, ...]:
        first: dict[str, int] = {}
        for i, obj in enumerate(objects):
            if obj.name is None:
                continue
            if obj.name == "ego":
                raise at_path((i, "name"), "'ego' is the ego's name; give the object another")
            if obj.name in first:
                raise at_path(
                    (i, "name"), f"objects[{first[obj.name]}] has the name {obj.name!r} already"
                )
            first[obj.name] = i
        return objects

    @field_validator("sensors")
    @classmethod
    def _unique_sensor_names(cls, sensors: tuple[Any, ...]) -> tuple[Any, ...]:
        first: dict[str, int] = {}
        for i, sensor in enumerate(sensors):
            name = getattr(sensor, "name", None)
            if not isinstance(name, str):
                continue
            if name in first:
                raise ValueError(
                    f"sensors[{i}] has the name {name!r} of sensors[{first[name]}]; give "
                    "each sensor its own name"
                )
            first[name] = i
        from roadsim.scenario.sensors import sensor_id_problems  # (see `sensor_types`)

        problems = sensor_id_problems(sensors)
        if problems:
            raise at_path(*problems[0])
        return sensors

    @model_validator(mode="after")
    def _driver_sensor_vehicles(self) -> Self:
        """A sensor on the ego needs an ego."""
        for i, sensor in enumerate(self.sensors):
            if getattr(sensor, "vehicle", None) == "ego" and self.ego is None:
                raise ValueError(
                    f"sensors[{i}].vehicle: the sensor is attached to the ego (the default), "
                    "but the scenario has no ego; add one or give an actor id"
                )
        return self

    @model_validator(mode="after")
    def _known_controllers(self) -> Self:
        """A dependent object's controller must be the ego, another object of the file or
        an actor id some actor may have (`roadsim.scenario.actors`; those of the map's
        actors are checked against the map), and a creation radius needs an ego to
        measure from."""
        names = {obj.name: i for i, obj in enumerate(self.objects) if obj.name is not None}
        for i, obj in enumerate(self.objects):
            if not isinstance(obj, PathObject):
                continue
            if obj.creation_radius > 0 and self.ego is None:
                raise at_path(
                    ("objects", i, "creation_radius"),
                    "a creation radius is measured from the ego, but the scenario has no ego",
                )
            ref = obj.controller_name
            if obj.target_point is None or isinstance(ref, int):
                continue
            where = ("objects", i, "controller")
            if ref == "ego":
                if self.ego is None:
                    raise at_path(where, "the controller is the ego, but the scenario has no ego")
            elif ref not in names:
                known = ", ".join(repr(k) for k in ["ego", *names])
                raise at_path(where, f"no actor named {ref!r}; expected {known} or an actor id")
            elif names[ref] == i:
                raise at_path(where, "an object cannot be its own controller")
            elif not isinstance(self.objects[names[ref]], PathObject):
                raise at_path(
                    where,
                    f"{ref!r} is objects[{names[ref]}], a {self.objects[names[ref]].type}, which "
                    "never moves; a controller must be the ego, a vehicle or a scripted object",
                )
        problems = reference_problems(self, ActorIds.of(self))
        if problems:
            raise at_path(*problems[0])
        return self

    @property
    def source(self) -> SourceMap:
        """Where the scenario was written, for messages about it: the file and the line
        of each key when it was loaded from one (`roadsim.scenario.load_scenario`)."""
        if self._origin is not None:
            return self._origin.source
        return SourceMap(self.name or "scenario")

    def located(self, source: SourceMap) -> Scenario:
        """A copy that says it was written at ``source`` (see `source`)."""
        out = self.model_copy()
        out._origin = _Origin(source)
        return out

    def with_overrides(self, *, seed: int | None = None, duration: float | None = None) -> Scenario:
        """A validated copy with another seed and/or duration (the CLI's ``--seed``).

        Raises:
            ScenarioError: For a value the schema rejects (a negative duration).
        """
        update = {k: v for k, v in (("seed", seed), ("duration", duration)) if v is not None}
        if not update:
            return self
        out = validate_data({**self.model_dump(exclude_unset=True), **update}, "overrides")
        return out if self._origin is None else out.located(self._origin.source)


class _Origin:
    """Where a scenario was written: equal to any other, so that two scenarios that say
    the same are equal wherever they were written."""

    __slots__ = ("source",)

    def __init__(self, source: SourceMap) -> None:
        self.source = source

    def __eq__(self, other: object) -> bool:
        return other is None or isinstance(other, _Origin)

    __hash__ = None  # type: ignore[assignment]


def validate_data(data: Any, source: SourceMap | str) -> Scenario:
    """Validates parsed YAML data (plain dicts and lists) into a `Scenario`.

    Raises:
        ScenarioError: Naming the line and key path of every problem (at most
            `roadsim.scenario.problems.MAX_PROBLEMS`).
    """
    return validate_model(Scenario, data, source, union_tags=UNION_TAGS)


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of scenario files (draft 2020-12), for editors."""
    from pydantic.json_schema import models_json_schema

    from roadsim.scenario.capture import CaptureSpec  # (see `sensor_types`)
    from roadsim.scenario.sensors import SceneSpec

    schema = Scenario.model_json_schema()
    models: list[type[BaseModel]] = [*sensor_types().values(), SceneSpec, CaptureSpec]
    refs, defs = models_json_schema(
        [(m, "validation") for m in models], ref_template="#/$defs/{model}"
    )
    schema.setdefault("$defs", {}).update(defs.get("$defs", {}))
    props = schema["properties"]
    props["sensors"]["items"] = {"anyOf": [refs[(m, "validation")] for m in models[:-2]]}
    props["scene"] = {**props["scene"], **refs[(SceneSpec, "validation")]}
    props["capture"] = {**props["capture"], **refs[(CaptureSpec, "validation")]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
