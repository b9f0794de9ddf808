"""Which actor ids a scenario's actors get, and the checks of what refers to them.

A simulation numbers its actors in this order (`roadsim.sim.build`):

1. the ego, 0, if there is one;
2. the scenario's ``objects``, in file order;
3. the map's obstacles (`map_obstacles`: its ``<object>``s that stand in the way);
4. the traffic vehicles; as many as find room, at most ``traffic.count`` (or the
   ``density``'s number over the lanes);
5. vehicles that re-enter the map later (``traffic.respawn``), new ids from then on.

So the ids of the first three groups are known from the scenario and its map, before
anything is built, and a ``controller`` or a sensor's ``vehicle`` that gives an integer
id is checked against them at load (`reference_problems`); whether a traffic vehicle of
that id is placed is known only once the simulation has placed the traffic.

Names: the ego is ``ego``; a scenario object may have a ``name``. A dependent object's
``controller`` may give either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from roadsim.scenario.problems import KeyPath

if TYPE_CHECKING:
    from roadsim.road.model import RoadObject
    from roadsim.road.network import RoadNetwork
    from roadsim.scenario.schema import Scenario, Traffic

__all__ = ["OBSTACLE_TYPES", "ActorIds", "map_obstacles", "reference_problems"]

#: Map objects that stand in the way (OpenDRIVE 1.8, 13.3 object types): the simulation
#: makes actors of them. Flat ones such as crosswalks, road marks or parking spaces are
#: no actors.
OBSTACLE_TYPES = frozenset(
    {
        "obstacle",
        "pole",
        "tree",
        "vegetation",
        "barrier",
        "building",
        "car",
        "van",
        "bus",
        "trailer",
        "bike",
        "motorbike",
        "tram",
        "train",
        "pedestrian",
        "streetLamp",
        "wind",
        "gantry",
        "soundBarrier",
        "trafficIsland",
    }
)


def map_obstacles(net: RoadNetwork) -> list[RoadObject]:
    """The map's objects that become static actors, in the order of their ids."""
    out = []
    for item in net.objects:
        if item.type not in OBSTACLE_TYPES:
            continue
        length = item.length or 2.0 * item.radius
        width = item.width or 2.0 * item.radius
        if length > 0.0 and width > 0.0:
            out.append(item)
    return out


@dataclass(frozen=True)
class ActorIds:
    """The actor ids a scenario's actors get (see the module docstring).

    Attributes:
        ego: The ego's id, or None without an ego.
        objects: The ids of the scenario's objects, in order.
        map_objects: The ids of the map's obstacles (None: the map is not known).
        traffic: The ids traffic vehicles may get (None: the map is not known); whether
            each is placed is known only in the simulation.
    """

    ego: int | None
    objects: range
    map_objects: range | None
    traffic: range | None

    @classmethod
    def of(cls, scenario: Scenario, net: RoadNetwork | None = None) -> ActorIds:
        """The ids of ``scenario``'s actors (with ``net``, those of the map's too)."""
        first = 0 if scenario.ego is None else 1
        objects = range(first, first + len(scenario.objects))
        if net is None:
            return cls(None if scenario.ego is None else 0, objects, None, None)
        obstacles = range(objects.stop, objects.stop + len(map_obstacles(net)))
        most = _most_traffic(scenario.traffic, net)
        return cls(
            None if scenario.ego is None else 0,
            objects,
            obstacles,
            range(obstacles.stop, obstacles.stop + most),
        )

    def describe(self) -> str:
        """``ego 0, objects 1-3, map objects 4-9, traffic 10-49``, for messages."""
        parts = [] if self.ego is None else [f"ego {self.ego}"]
        for what, ids in (
            ("objects", self.objects),
            ("map objects", self.map_objects),
            ("traffic", self.traffic),
        ):
            if ids is not None and len(ids):
                parts.append(f"{what} {_span(ids)}")
        return ", ".join(parts) if parts else "none"

    def known(self, actor_id: int) -> bool:
        """Whether an actor may have ``actor_id`` (all of them are known with the map)."""
        if self.traffic is None:  # without the map, any id after the objects may exist
            return actor_id == self.ego or actor_id in self.objects or actor_id >= self.objects.stop
        groups = (self.objects, self.map_objects, self.traffic)
        return actor_id == self.ego or any(ids is not None and actor_id in ids for ids in groups)


def reference_problems(scenario: Scenario, ids: ActorIds) -> list[tuple[KeyPath, str]]:
    """What is wrong with the integer actor ids that ``controller`` keys and sensors'
    ``vehicle`` keys give: ids no actor can have, and actors that cannot be one (a
    static object does not move, so it never arrives; a sensor's vehicle must be one)."""
    from roadsim.scenario.schema import DriverSensorSpec, PathObject

    problems: list[tuple[KeyPath, str]] = []
    objects = scenario.objects
    for i, obj in enumerate(objects):
        if not isinstance(obj, PathObject) or not isinstance(obj.controller, int):
            continue
        ref = obj.controller
        where: KeyPath = ("objects", i, "controller")
        if not ids.known(ref):
            problems.append((where, f"no actor has the id {ref} (ids: {ids.describe()})"))
        elif ref in ids.objects and ids.objects.index(ref) == i:
            problems.append((where, f"the id {ref} is this object's own: it cannot control itself"))
        elif ref in ids.objects and not isinstance(objects[ids.objects.index(ref)], PathObject):
            j = ids.objects.index(ref)
            problems.append(
                (
                    where,
                    f"the id {ref} is objects[{j}], a {objects[j].type}, which never moves; "
                    "a controller must be the ego, a vehicle or a scripted object",
                )
            )
        elif ids.map_objects is not None and ref in ids.map_objects:
            problems.append(
                (
                    where,
                    f"the id {ref} is a map object, which never moves; a controller must be "
                    "the ego, a vehicle or a scripted object",
                )
            )
    for i, sensor in enumerate(scenario.sensors):
        if not isinstance(sensor, DriverSensorSpec) or not isinstance(sensor.vehicle, int):
            continue
        ref = sensor.vehicle
        where = ("sensors", i, "vehicle")
        if not ids.known(ref):
            problems.append((where, f"no actor has the id {ref} (ids: {ids.describe()})"))
        elif ref in ids.objects or (ids.map_objects is not None and ref in ids.map_objects):
            what = f"objects[{ids.objects.index(ref)}]" if ref in ids.objects else "a map object"
            problems.append(
                (
                    where,
                    f"the id {ref} is {what}; a driver sensor needs a vehicle: 'ego' or a "
                    "traffic vehicle's id",
                )
            )
    return problems


def _most_traffic(traffic: Traffic | None, net: RoadNetwork) -> int:
    """The most traffic vehicles the scenario may place: ``count``, or the ``density``
    over every lane of its lane types (more than the simulation's spawn lanes hold)."""
    if traffic is None:
        return 0
    if traffic.count is not None:
        return traffic.count
    lanes = net.lanes
    length = lanes.sec_s1[lanes.section] - lanes.sec_s0[lanes.section]
    types = set(traffic.lane_types)
    allowed = np.array([name in types for name in lanes.type_name], dtype=bool)
    total = float(length[allowed].sum()) if length.size else 0.0
    return round((traffic.density or 0.0) * total / 1000.0)


def _span(ids: range) -> str:
    return f"{ids.start}" if len(ids) == 1 else f"{ids.start}-{ids.stop - 1}"
