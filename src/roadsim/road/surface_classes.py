"""Surface classes: what a ray hit, as one small integer (uint8) per triangle of the scene.

The ray tracer's document calls it the *surface id*: "0 if unknown". This module is the one
table of them; every triangle of `roadsim.sensors.scene.Scene` carries one, and every
sensor reports it. The road surface mesh (`roadsim.road.mesh.SurfaceMesh`) has its own,
finer ids (one record per lane and road-mark record, with a `Material`); a class is
derived from a record's material here (`material_class`), so the two never disagree.

| id | class | what carries it |
|---:|---|---|
| 0 | unknown | lanes of type ``none`` and anything not classified |
| 1 | road | driving and other drivable lanes, ``restricted``, ``roadWorks`` |
| 2 | lane_marking | road marks (lines, Botts' dots) |
| 3 | sidewalk | ``sidewalk`` and ``walking`` lanes |
| 4 | shoulder | ``shoulder`` and ``border`` lanes |
| 5 | curb | ``curb`` lanes and ``curb`` road marks |
| 6 | grass | the ground plane around the road, ``grass`` road marks |
| 7 | building | map objects of type ``building`` |
| 8 | pole | ``pole``, ``streetLamp``, the posts of signs |
| 9 | sign | sign plates (map signals that are no lights) |
| 10 | vegetation | ``tree``, ``vegetation`` |
| 11 | barrier | ``barrier``, ``soundBarrier``, ``railing``, ``gantry``; scenario barriers |
| 12 | car | vehicles of model ``car``; map objects ``car``, ``van`` |
| 13 | truck | model ``truck``; map objects ``trailer`` |
| 14 | bus | model ``bus``; map objects ``bus`` |
| 15 | pedestrian | scripted pedestrians; map objects ``pedestrian`` |
| 16 | cyclist | scripted cyclists; map objects ``bike``, ``motorbike`` |
| 17 | traffic_light | map signals that are lights |
| 18 | obstacle | scenario boxes, map ``obstacle`` and objects of other types |
| 19 | cone | scenario cones |
| 20 | parking | ``parking`` lanes |
| 21 | bike_lane | ``biking`` lanes |
| 22 | median | ``median`` lanes, ``trafficIsland`` objects |
| 23 | rail_track | ``tram`` and ``rail`` lanes |
| 24 | rail_vehicle | map objects ``tram``, ``train`` |

A scenario can give a map object type another class (``scene: {object_classes: {wind:
pole}}``); the names above are the values it may use.

Each class also has a look, here beside the table so that a new class gets one: its
diffuse **albedo** (linear RGB in [0, 1], what the cameras shade it with:
`roadsim.sensors.camera`) and a **label colour** (8-bit sRGB, distinct from the others:
segmentation pictures and the lidar's points by class). The lidar's near-infrared
reflectivity is `roadsim.sensors.lidar.REFLECTIVITY`.

Road marks are painted in the colour the map gives them (OpenDRIVE 1.8, 11.8.1,
``e_roadMarkColor``): a scene's triangle carries a **look** besides its class, an index
into `LOOK_ALBEDO`: the class's own albedo (look = class id) for every triangle but the
lane markings, which take their paint's (`PAINTS`; ``standard`` and ``white`` are the
class's own white). The class stays ``lane_marking`` whatever the paint.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from roadsim.road.lanes import DRIVABLE_TYPES
from roadsim.road.mesh import Material

__all__ = [
    "ACTOR_MODEL_CLASSES",
    "ALBEDO",
    "LABEL_COLORS",
    "LANE_CLASSES",
    "LOOK_ALBEDO",
    "MAP_OBJECT_CLASSES",
    "PAINTS",
    "PAINT_LOOKS",
    "SURFACE_CLASSES",
    "SURFACE_IDS",
    "UNKNOWN",
    "class_name",
    "material_class",
    "material_looks",
    "object_class",
]

#: The surface classes, by id (the index).
SURFACE_CLASSES: tuple[str, ...] = (
    "unknown",
    "road",
    "lane_marking",
    "sidewalk",
    "shoulder",
    "curb",
    "grass",
    "building",
    "pole",
    "sign",
    "vegetation",
    "barrier",
    "car",
    "truck",
    "bus",
    "pedestrian",
    "cyclist",
    "traffic_light",
    "obstacle",
    "cone",
    "parking",
    "bike_lane",
    "median",
    "rail_track",
    "rail_vehicle",
)

#: The id of each class name.
SURFACE_IDS: Mapping[str, int] = MappingProxyType({n: i for i, n in enumerate(SURFACE_CLASSES)})

UNKNOWN = 0

#: Lane types (OpenDRIVE 1.8, 11.4) that are not road, by class.
LANE_CLASSES: Mapping[str, str] = MappingProxyType(
    {
        "none": "unknown",
        "sidewalk": "sidewalk",
        "walking": "sidewalk",
        "shoulder": "shoulder",
        "border": "shoulder",
        "curb": "curb",
        "parking": "parking",
        "biking": "bike_lane",
        "median": "median",
        "tram": "rail_track",
        "rail": "rail_track",
        **{t: "road" for t in (*DRIVABLE_TYPES, "restricted", "roadWorks", "shared")},
    }
)

#: Road-mark types (OpenDRIVE 1.8, 11.8) that are no lane marking.
_MARK_CLASSES: Mapping[str, str] = MappingProxyType({"curb": "curb", "grass": "grass"})

#: Map object types (OpenDRIVE 1.8, 13.3, and common names in real maps) by class; other
#: types are obstacles.
MAP_OBJECT_CLASSES: Mapping[str, str] = MappingProxyType(
    {
        "building": "building",
        "pole": "pole",
        "streetLamp": "pole",
        "rail-pole": "pole",
        "guide-post": "pole",
        "wind": "pole",
        "tree": "vegetation",
        "vegetation": "vegetation",
        "barrier": "barrier",
        "soundBarrier": "barrier",
        "railing": "barrier",
        "gantry": "barrier",
        "car": "car",
        "van": "car",
        "trailer": "truck",
        "bus": "bus",
        "pedestrian": "pedestrian",
        "bike": "cyclist",
        "motorbike": "cyclist",
        "tram": "rail_vehicle",
        "train": "rail_vehicle",
        "trafficIsland": "median",
        "obstacle": "obstacle",
    }
)

#: The class of each actor model (`roadsim.sim.build.MODEL_NAMES`); map objects that are
#: actors take their type's class instead.
ACTOR_MODEL_CLASSES: Mapping[str, str] = MappingProxyType(
    {
        "car": "car",
        "truck": "truck",
        "bus": "bus",
        "box": "obstacle",
        "cone": "cone",
        "barrier": "barrier",
        "pedestrian": "pedestrian",
        "cyclist": "cyclist",
        "map_object": "obstacle",
    }
)


#: (albedo as linear RGB, label colour as 8-bit sRGB) of each class, by name.
_LOOKS: Mapping[str, tuple[tuple[float, float, float], tuple[int, int, int]]] = MappingProxyType(
    {
        "unknown": ((0.30, 0.30, 0.30), (0, 0, 0)),
        "road": ((0.07, 0.07, 0.075), (128, 64, 128)),
        "lane_marking": ((0.75, 0.75, 0.72), (255, 255, 255)),
        "sidewalk": ((0.20, 0.19, 0.18), (244, 35, 232)),
        "shoulder": ((0.12, 0.115, 0.11), (110, 110, 160)),
        "curb": ((0.30, 0.30, 0.28), (196, 196, 196)),
        "grass": ((0.05, 0.11, 0.025), (152, 251, 152)),
        "building": ((0.45, 0.35, 0.28), (70, 70, 70)),
        "pole": ((0.35, 0.35, 0.35), (153, 153, 153)),
        "sign": ((0.65, 0.60, 0.15), (220, 220, 0)),
        "vegetation": ((0.06, 0.14, 0.04), (107, 142, 35)),
        "barrier": ((0.45, 0.45, 0.42), (190, 153, 153)),
        "car": ((0.05, 0.12, 0.45), (0, 0, 142)),
        "truck": ((0.50, 0.50, 0.52), (0, 0, 70)),
        "bus": ((0.55, 0.35, 0.05), (0, 60, 100)),
        "pedestrian": ((0.55, 0.10, 0.10), (220, 20, 60)),
        "cyclist": ((0.50, 0.05, 0.30), (255, 0, 0)),
        "traffic_light": ((0.05, 0.05, 0.05), (250, 170, 30)),
        "obstacle": ((0.55, 0.45, 0.10), (255, 120, 50)),
        "cone": ((0.80, 0.25, 0.02), (255, 160, 0)),
        "parking": ((0.09, 0.09, 0.10), (250, 170, 160)),
        "bike_lane": ((0.20, 0.06, 0.05), (119, 11, 32)),
        "median": ((0.14, 0.22, 0.08), (81, 0, 81)),
        "rail_track": ((0.16, 0.13, 0.11), (230, 150, 140)),
        "rail_vehicle": ((0.50, 0.52, 0.55), (0, 80, 100)),
    }
)
assert tuple(_LOOKS) == SURFACE_CLASSES

#: (C, 3) float32 diffuse albedo of each class (linear RGB), by id.
ALBEDO = np.array([look[0] for look in _LOOKS.values()], dtype=np.float32)
#: (C, 3) uint8 label colour of each class (sRGB), by id.
LABEL_COLORS = np.array([look[1] for look in _LOOKS.values()], dtype=np.uint8)

#: Road-mark paints other than white (OpenDRIVE 1.8, 11.8.1), by name: albedo (linear RGB).
PAINTS: Mapping[str, tuple[float, float, float]] = MappingProxyType(
    {
        "yellow": (0.70, 0.48, 0.04),
        "orange": (0.75, 0.28, 0.02),
        "red": (0.55, 0.04, 0.03),
        "green": (0.04, 0.33, 0.08),
        "blue": (0.03, 0.12, 0.50),
        "violet": (0.30, 0.06, 0.45),
        "black": (0.03, 0.03, 0.03),
    }
)
#: (C + P, 3) float32 albedo of each look (linear RGB): the classes' (`ALBEDO`, by class
#: id), then the paints' (`PAINTS`, in its order).
LOOK_ALBEDO = np.concatenate((ALBEDO, np.array(list(PAINTS.values()), dtype=np.float32)))
#: The look of each paint in `PAINTS`.
PAINT_LOOKS: Mapping[str, int] = MappingProxyType(
    {name: len(ALBEDO) + k for k, name in enumerate(PAINTS)}
)


def class_name(surface_id: int) -> str:
    """The name of a surface class id (``"unknown"`` for ids beyond the table)."""
    return SURFACE_CLASSES[surface_id] if 0 <= surface_id < len(SURFACE_CLASSES) else "unknown"


def material_class(material: Material) -> int:
    """The class of a road-surface material (`roadsim.road.mesh.Material`)."""
    if material.kind == "road_mark":
        return SURFACE_IDS[_MARK_CLASSES.get(material.type, "lane_marking")]
    return SURFACE_IDS[LANE_CLASSES.get(material.type, "unknown")]


def object_class(object_type: str, overrides: Mapping[str, str] | None = None) -> int:
    """The class of a map object type, ``overrides`` (type -> class name) first."""
    if overrides and object_type in overrides:
        return SURFACE_IDS[overrides[object_type]]
    return SURFACE_IDS[MAP_OBJECT_CLASSES.get(object_type, "obstacle")]


def material_classes(materials: tuple[Material, ...]) -> np.ndarray[tuple[int], np.dtype[np.uint8]]:
    """(M,) uint8 class of each material."""
    return np.array([material_class(m) for m in materials], dtype=np.uint8)


def material_looks(materials: tuple[Material, ...]) -> np.ndarray[tuple[int], np.dtype[np.uint8]]:
    """(M,) uint8 look of each material (`LOOK_ALBEDO`): its class, or a lane marking's
    paint (a colour the table does not know, ``standard`` and ``white`` paint white)."""
    out = material_classes(materials)
    for k, m in enumerate(materials):
        if out[k] == SURFACE_IDS["lane_marking"]:
            out[k] = PAINT_LOOKS.get(m.color.lower(), out[k])
    return out
