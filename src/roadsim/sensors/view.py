"""What the driver sensor reports: `DriverView` for one vehicle, `DriverViews` for many.

The four parts follow the driver sensor of openPASS (``Sensor_Driver``): `OwnVehicleStates`,
`GeometryInformation`, `TrafficRuleInformation` and `SurroundingObjects`, with the
document's fields in snake_case (``absoluteVelocity`` -> ``absolute_velocity``) and its
defaults for what does not exist: `MISSING` (-999) for a number, -1 for an id, false for
a flag. `DriverView.to_dict` gives the document's own camelCase names.

Conventions (see `roadsim.sensors.driver` for how each value is found):

- The *reference point* is the centre of the vehicle's front edge; the *main lane* is the
  lane containing it. Left and right are in the main lane's driving direction.
- Distances are in metres, along the lanes of the vehicle's route; angles in radians,
  counter-clockwise positive, wrapped to [-pi, pi); speeds m/s, accelerations m/s^2.
- ``distance_to_end_of_lane`` is +inf when the end lies beyond the visibility distance.

`DriverViews` holds the same fields for N vehicles as arrays (lanes along an axis of 3:
left, ego, right; objects along an axis of 6: front, rear, front left, rear left, front
right, rear right) and the lists (signs, lights, lane markings) as CSR tables; indexing
it gives one `DriverView`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from roadsim._types import BoolArray, FloatArray, IntArray

__all__ = [
    "LANES",
    "MARKING_SIDES",
    "MISSING",
    "NO_ID",
    "OBJECTS",
    "DriverView",
    "DriverViews",
    "GeometryInformation",
    "LaneGeometry",
    "LaneMarking",
    "LaneTrafficRules",
    "ObjectInformation",
    "OwnVehicleStates",
    "SurroundingObjects",
    "TrafficLight",
    "TrafficRuleInformation",
    "TrafficSign",
]


MISSING = -999.0  # a number that does not exist (openPASS' default)
NO_ID = -1  # an id that does not exist

#: The lanes of `GeometryInformation` and `TrafficRuleInformation`, in array order.
LANES = ("left", "ego", "right")
LEFT, EGO, RIGHT = range(3)
#: The objects of `SurroundingObjects`, in array order.
OBJECTS = ("front", "rear", "front_left", "rear_left", "front_right", "rear_right")
FRONT, REAR, FRONT_LEFT, REAR_LEFT, FRONT_RIGHT, REAR_RIGHT = range(6)
#: The lists of lane markings, in array order: both sides of the main lane, then the outer
#: sides of its neighbours.
MARKING_SIDES = ("left", "right", "left_of_left_lane", "right_of_right_lane")

#: What a traffic light shows (`TrafficLight.state`), by the values of
#: `roadsim.world.traffic_lights` (RED, YELLOW, GREEN).
LIGHT_STATES = ("red", "yellow", "green")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


class _Record:
    """`to_dict` for the frozen dataclasses below: camelCase keys, nested records and lists
    of records converted too."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, _Record):
                value = value.to_dict()
            elif isinstance(value, tuple):
                value = [v.to_dict() if isinstance(v, _Record) else v for v in value]
            out[_camel(f.name)] = value
        return out


# -- OwnVehicleStates ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OwnVehicleStates(_Record):
    """The driver's own vehicle.

    Attributes:
        absolute_velocity: Speed (m/s).
        acceleration: Acceleration along the vehicle's heading (m/s^2).
        lateral_position: Offset of the reference point from the main lane's centre line
            (m, + left).
        heading: Vehicle yaw minus the main lane's heading at the reference point (rad).
        steering_wheel_angle: Road-wheel angle times the model's steering ratio (rad).
        distance_to_lane_boundary_left: From the left front corner to the main lane's
            left boundary (m, negative once the corner is over it).
        distance_to_lane_boundary_right: From the right front corner to the right
            boundary (m, negative once over it).
        collision: The vehicle overlaps another actor in this frame.
    """

    absolute_velocity: float = MISSING
    acceleration: float = MISSING
    lateral_position: float = MISSING
    heading: float = MISSING
    steering_wheel_angle: float = MISSING
    distance_to_lane_boundary_left: float = MISSING
    distance_to_lane_boundary_right: float = MISSING
    collision: bool = False


# -- GeometryInformation ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LaneGeometry(_Record):
    """One lane as the driver sees it at the reference point.

    Attributes:
        exists: There is a lane there (of any type: a shoulder exists).
        curvature: Curvature of the lane's centre line at the reference point's s (1/m,
            + turning left in the main lane's driving direction).
        width: Width of the lane there (m).
        distance_to_end_of_lane: From the reference point to where the lane's stream ends
            along the route (m; 0 for a lane of a type traffic does not drive along;
            +inf beyond the visibility distance).
    """

    exists: bool = False
    curvature: float = MISSING
    width: float = MISSING
    distance_to_end_of_lane: float = MISSING


@dataclass(frozen=True, slots=True)
class GeometryInformation(_Record):
    """The lanes around the driver.

    Attributes:
        visibility_distance: How far the driver sees (m).
        lane_left, lane_ego, lane_right: The lane to the left of the main lane, the main
            lane, the lane to its right.
    """

    visibility_distance: float = MISSING
    lane_left: LaneGeometry = LaneGeometry()
    lane_ego: LaneGeometry = LaneGeometry()
    lane_right: LaneGeometry = LaneGeometry()


# -- TrafficRuleInformation ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TrafficSign(_Record):
    """A traffic sign valid for a lane ahead (OpenDRIVE 1.8, 14: ``<signal>``).

    Attributes:
        id: The signal's id in the map.
        relative_distance: From the reference point along the route (m, >= 0).
        type, subtype: The sign's catalogue type and subtype ("-1": none), as in the map.
        country: The catalogue's country code ("" where the map gives none).
        value: Its value (e.g. the speed of a speed limit; MISSING where it has none).
        unit: The value's unit as in the map ("km/h", "m", ...; "" where it has none).
    """

    id: str
    relative_distance: float
    type: str
    subtype: str
    country: str = ""
    value: float = MISSING
    unit: str = ""


@dataclass(frozen=True, slots=True)
class TrafficLight(TrafficSign):
    """A traffic light valid for a lane ahead: a `TrafficSign`'s fields, and what it
    shows now (``state``: "red", "yellow" or "green")."""

    state: str = "red"


@dataclass(frozen=True, slots=True)
class LaneMarking(_Record):
    """A lane marking along one side of a lane (OpenDRIVE 1.8, 9.6 ``<roadMark>``).

    Attributes:
        relative_start_distance: Where the marking starts, from the reference point along
            the route (m; 0 for the marking at the reference point).
        type: The mark's type as in the map ("solid", "broken", "solid broken", "curb",
            "none", ...; "none" where the map has no mark).
        color: Its colour as in the map ("standard", "white", "yellow", ...).
        width: Its width (m; 0 where the map gives none).
    """

    relative_start_distance: float
    type: str
    color: str
    width: float


@dataclass(frozen=True, slots=True)
class LaneTrafficRules(_Record):
    """The signs and lights valid for one lane within the visibility distance, nearest
    first."""

    traffic_signs: tuple[TrafficSign, ...] = ()
    traffic_lights: tuple[TrafficLight, ...] = ()


@dataclass(frozen=True, slots=True)
class TrafficRuleInformation(_Record):
    """Signs, lights and lane markings around the driver.

    Attributes:
        lane_left, lane_ego, lane_right: Signs and lights per lane.
        lane_markings_left, lane_markings_right: Markings on the left and right side of
            the main lane, in order along the route.
        lane_markings_left_of_left_lane: Markings on the left side of the lane to the left.
        lane_markings_right_of_right_lane: Markings on the right side of the lane to the
            right.
    """

    lane_left: LaneTrafficRules = LaneTrafficRules()
    lane_ego: LaneTrafficRules = LaneTrafficRules()
    lane_right: LaneTrafficRules = LaneTrafficRules()
    lane_markings_left: tuple[LaneMarking, ...] = ()
    lane_markings_right: tuple[LaneMarking, ...] = ()
    lane_markings_left_of_left_lane: tuple[LaneMarking, ...] = ()
    lane_markings_right_of_right_lane: tuple[LaneMarking, ...] = ()


# -- SurroundingObjects -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ObjectInformation(_Record):
    """The nearest object in one direction, as the driver sees it.

    Attributes:
        id: The actor's id (-1: no object).
        exist: There is an object.
        is_static: It is a static object (velocity and acceleration are then MISSING).
        absolute_velocity: Its speed (m/s).
        acceleration: Its acceleration along its heading (m/s^2).
        heading: Its yaw relative to the street at the object, in the main lane's driving
            direction (rad).
        length, width, height: Its size (m).
        relative_longitudinal_distance: Bumper-to-bumper gap along the road (m, positive
            ahead, negative behind, 0 where the two overlap along the road).
        relative_lateral_distance: Lateral position of its centre minus that of the
            driver's vehicle, in road coordinates (m, + left).
    """

    id: int = NO_ID
    exist: bool = False
    is_static: bool = False
    absolute_velocity: float = MISSING
    acceleration: float = MISSING
    heading: float = MISSING
    length: float = MISSING
    width: float = MISSING
    height: float = MISSING
    relative_longitudinal_distance: float = MISSING
    relative_lateral_distance: float = MISSING


@dataclass(frozen=True, slots=True)
class SurroundingObjects(_Record):
    """The nearest object ahead and behind in the main lane and in its neighbours."""

    object_front: ObjectInformation = ObjectInformation()
    object_rear: ObjectInformation = ObjectInformation()
    object_front_left: ObjectInformation = ObjectInformation()
    object_rear_left: ObjectInformation = ObjectInformation()
    object_front_right: ObjectInformation = ObjectInformation()
    object_rear_right: ObjectInformation = ObjectInformation()


# -- the view -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DriverView(_Record):
    """What the driver of one vehicle sees at one frame.

    Attributes:
        id: The vehicle's actor id.
        frame, time: The frame and simulation time (s) of the sample.
        own_vehicle_states, geometry_information, traffic_rule_information,
            surrounding_objects: The four parts of openPASS' driver sensor.
    """

    id: int
    frame: int
    time: float
    own_vehicle_states: OwnVehicleStates
    geometry_information: GeometryInformation
    traffic_rule_information: TrafficRuleInformation
    surrounding_objects: SurroundingObjects


@dataclass(frozen=True, slots=True)
class SignalTable:
    """The map's signals as the sensor reports them, by index (see `DriverViews`).

    Attributes:
        id, type, subtype, country, unit: Per signal, as in the map.
        value: Per signal (MISSING where the map gives none).
    """

    id: tuple[str, ...]
    type: tuple[str, ...]
    subtype: tuple[str, ...]
    country: tuple[str, ...]
    value: FloatArray
    unit: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MarkingTable:
    """The names of lane-marking types and colours, by code (see `DriverViews`)."""

    types: tuple[str, ...]
    colors: tuple[str, ...]


@dataclass(frozen=True, slots=True, eq=False)
class DriverViews:
    """Driver views of N vehicles at one frame, as arrays.

    Attributes:
        id: Actor id of each vehicle, shape (N,).
        frame, time: The frame and simulation time (s).
        visibility_distance: (N,) m.
        absolute_velocity, acceleration, lateral_position, heading, steering_wheel_angle,
            distance_to_lane_boundary_left, distance_to_lane_boundary_right, collision:
            `OwnVehicleStates`, shape (N,).
        lane_uid: roadsim's lane uid of the left, ego and right lane (-1: none), (N, 3).
        lane_exists, lane_curvature, lane_width, lane_distance_to_end_of_lane:
            `LaneGeometry` of the left, ego and right lane, shape (N, 3).
        object_id, object_exist, object_is_static, object_absolute_velocity,
            object_acceleration, object_heading, object_length, object_width,
            object_height, object_relative_longitudinal_distance,
            object_relative_lateral_distance: `ObjectInformation` of the six objects in
            `OBJECTS` order, shape (N, 6).
        sign_ptr, sign_signal, sign_distance: The signs of lane ``j`` (0 left, 1 ego,
            2 right) of vehicle ``i`` are entries ``sign_ptr[3 i + j]:sign_ptr[3 i + j + 1]``,
            each an index into ``signals`` and a relative distance (m), nearest first.
        light_ptr, light_signal, light_distance, light_state: The same for traffic
            lights, with what each shows (`LIGHT_STATES` index).
        marking_ptr, marking_type, marking_color, marking_width, marking_start: The lane
            markings of side ``j`` (`MARKING_SIDES` order) of vehicle ``i`` are entries
            ``marking_ptr[4 i + j]:marking_ptr[4 i + j + 1]``: type and colour codes
            (names in ``markings``), width (m) and relative start distance (m).
        signals: The signal table ``sign_signal`` and ``light_signal`` index.
        markings: The names of the marking codes.
    """

    id: IntArray
    frame: int
    time: float
    visibility_distance: FloatArray
    absolute_velocity: FloatArray
    acceleration: FloatArray
    lateral_position: FloatArray
    heading: FloatArray
    steering_wheel_angle: FloatArray
    distance_to_lane_boundary_left: FloatArray
    distance_to_lane_boundary_right: FloatArray
    collision: BoolArray
    lane_uid: IntArray
    lane_exists: BoolArray
    lane_curvature: FloatArray
    lane_width: FloatArray
    lane_distance_to_end_of_lane: FloatArray
    object_id: IntArray
    object_exist: BoolArray
    object_is_static: BoolArray
    object_absolute_velocity: FloatArray
    object_acceleration: FloatArray
    object_heading: FloatArray
    object_length: FloatArray
    object_width: FloatArray
    object_height: FloatArray
    object_relative_longitudinal_distance: FloatArray
    object_relative_lateral_distance: FloatArray
    sign_ptr: IntArray
    sign_signal: IntArray
    sign_distance: FloatArray
    light_ptr: IntArray
    light_signal: IntArray
    light_distance: FloatArray
    light_state: IntArray
    marking_ptr: IntArray
    marking_type: IntArray
    marking_color: IntArray
    marking_width: FloatArray
    marking_start: FloatArray
    signals: SignalTable
    markings: MarkingTable

    def __len__(self) -> int:
        return int(self.id.shape[0])

    def __getitem__(self, i: int) -> DriverView:
        """The view of the i-th vehicle."""
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"driver view {i} out of range for {n} vehicles")
        i %= n
        own = OwnVehicleStates(
            absolute_velocity=float(self.absolute_velocity[i]),
            acceleration=float(self.acceleration[i]),
            lateral_position=float(self.lateral_position[i]),
            heading=float(self.heading[i]),
            steering_wheel_angle=float(self.steering_wheel_angle[i]),
            distance_to_lane_boundary_left=float(self.distance_to_lane_boundary_left[i]),
            distance_to_lane_boundary_right=float(self.distance_to_lane_boundary_right[i]),
            collision=bool(self.collision[i]),
        )
        lanes = [
            LaneGeometry(
                exists=bool(self.lane_exists[i, j]),
                curvature=float(self.lane_curvature[i, j]),
                width=float(self.lane_width[i, j]),
                distance_to_end_of_lane=float(self.lane_distance_to_end_of_lane[i, j]),
            )
            for j in range(3)
        ]
        geometry = GeometryInformation(float(self.visibility_distance[i]), *lanes)
        per_lane = [
            LaneTrafficRules(self._signs(3 * i + j), self._lights(3 * i + j)) for j in range(3)
        ]
        rules = TrafficRuleInformation(
            lane_left=per_lane[0],
            lane_ego=per_lane[1],
            lane_right=per_lane[2],
            lane_markings_left=self._markings(4 * i),
            lane_markings_right=self._markings(4 * i + 1),
            lane_markings_left_of_left_lane=self._markings(4 * i + 2),
            lane_markings_right_of_right_lane=self._markings(4 * i + 3),
        )
        objects = SurroundingObjects(*(self._object(i, j) for j in range(6)))
        return DriverView(int(self.id[i]), self.frame, self.time, own, geometry, rules, objects)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (self[i] for i in range(len(self)))

    def view_of(self, actor_id: int) -> DriverView:
        """The view of the vehicle with actor id ``actor_id``.

        Raises:
            KeyError: If no vehicle of these views has that id.
        """
        hits = np.flatnonzero(self.id == actor_id)
        if hits.size == 0:
            raise KeyError(f"no driver view of actor {actor_id}")
        return self[int(hits[0])]

    def _object(self, i: int, j: int) -> ObjectInformation:
        if not self.object_exist[i, j]:
            return ObjectInformation()
        return ObjectInformation(
            id=int(self.object_id[i, j]),
            exist=True,
            is_static=bool(self.object_is_static[i, j]),
            absolute_velocity=float(self.object_absolute_velocity[i, j]),
            acceleration=float(self.object_acceleration[i, j]),
            heading=float(self.object_heading[i, j]),
            length=float(self.object_length[i, j]),
            width=float(self.object_width[i, j]),
            height=float(self.object_height[i, j]),
            relative_longitudinal_distance=float(self.object_relative_longitudinal_distance[i, j]),
            relative_lateral_distance=float(self.object_relative_lateral_distance[i, j]),
        )

    def _signal_fields(self, k: int) -> dict[str, Any]:
        t = self.signals
        value = float(t.value[k])
        return {
            "id": t.id[k],
            "type": t.type[k],
            "subtype": t.subtype[k],
            "country": t.country[k],
            "value": value if math.isfinite(value) else MISSING,
            "unit": t.unit[k],
        }

    def _signs(self, row: int) -> tuple[TrafficSign, ...]:
        a, b = int(self.sign_ptr[row]), int(self.sign_ptr[row + 1])
        return tuple(
            TrafficSign(
                relative_distance=float(self.sign_distance[e]),
                **self._signal_fields(int(self.sign_signal[e])),
            )
            for e in range(a, b)
        )

    def _lights(self, row: int) -> tuple[TrafficLight, ...]:
        a, b = int(self.light_ptr[row]), int(self.light_ptr[row + 1])
        return tuple(
            TrafficLight(
                relative_distance=float(self.light_distance[e]),
                state=LIGHT_STATES[int(self.light_state[e])],
                **self._signal_fields(int(self.light_signal[e])),
            )
            for e in range(a, b)
        )

    def _markings(self, row: int) -> tuple[LaneMarking, ...]:
        a, b = int(self.marking_ptr[row]), int(self.marking_ptr[row + 1])
        names = self.markings
        return tuple(
            LaneMarking(
                relative_start_distance=float(self.marking_start[e]),
                type=names.types[int(self.marking_type[e])],
                color=names.colors[int(self.marking_color[e])],
                width=float(self.marking_width[e]),
            )
            for e in range(a, b)
        )
