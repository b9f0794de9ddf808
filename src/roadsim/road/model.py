"""The parsed content of an OpenDRIVE file, as plain frozen records.

These records mirror the file (OpenDRIVE 1.8 names, snake_case); they hold no derived
geometry. `roadsim.road.network.RoadNetwork` compiles them into flat numpy arrays for the
vectorised queries. Lengths are in metres, angles in radians, ids are the file's strings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

GeometryKind = Literal["line", "arc", "spiral", "poly3", "paramPoly3"]
ContactPoint = Literal["start", "end"]


class Cubic(NamedTuple):
    """One record of a cubic polynomial along s: ``a + b*ds + c*ds**2 + d*ds**3``.

    ``s`` is where the record starts: along the road for elevation, superelevation and
    laneOffset (OpenDRIVE 1.8, 8.4 and 9.3), relative to the lane section start for lane
    width and border (``sOffset``, 9.5.3 and 9.5.4).
    """

    s: float
    a: float
    b: float
    c: float
    d: float


@dataclass(frozen=True, slots=True)
class Geometry:
    """One planView record (OpenDRIVE 1.8, 7.3-7.8).

    Attributes:
        kind: line, arc, spiral, poly3 or paramPoly3.
        params: The kind's attributes: ``curvature`` (arc); ``curvStart``, ``curvEnd``
            (spiral); ``a``..``d`` (poly3); ``aU``..``dV`` (paramPoly3).
        p_range: paramPoly3 only: ``arcLength`` or ``normalized`` (the default when the
            file gives none).
        line: The ``<geometry>`` element's source line, when read from a file.
    """

    s: float
    x: float
    y: float
    hdg: float
    length: float
    kind: GeometryKind
    params: dict[str, float] = field(default_factory=dict)
    p_range: str = "normalized"
    line: int | None = None


class RoadMarkLine(NamedTuple):
    """One line of a road mark's detailed ``<type>`` description (OpenDRIVE 1.8, 9.6.2).

    ``length`` and ``space`` are the visible part and the gap along s (``space`` 0: a
    continuous line); ``t_offset`` is the lateral offset from the lane border, positive
    toward +t; ``s_offset`` where the pattern starts, relative to the road mark's start;
    ``width`` is 0 and ``color`` empty when the file gives none.
    """

    length: float
    space: float
    t_offset: float
    s_offset: float
    width: float
    rule: str
    color: str


class RoadMark(NamedTuple):
    """A lane's road mark from ``sOffset`` on (OpenDRIVE 1.8, 9.6).

    ``lines`` holds the lines of the optional ``<type>`` child, which describes the mark
    in detail instead of the ``type`` keyword.
    """

    s_offset: float
    type: str
    weight: str
    color: str
    width: float
    lane_change: str
    material: str
    lines: tuple[RoadMarkLine, ...] = ()


class SpeedRecord(NamedTuple):
    """A lane speed limit from ``sOffset`` on, in m/s (converted from the file's unit)."""

    s_offset: float
    max_speed: float


@dataclass(frozen=True, slots=True)
class Lane:
    """One lane of a lane section (OpenDRIVE 1.8, 9.5).

    ``widths`` and ``borders`` are relative to the section start. ``predecessors`` and
    ``successors`` are the ``<link>`` lane ids in the neighbouring section or road.
    """

    id: int
    type: str
    level: bool
    widths: tuple[Cubic, ...]
    borders: tuple[Cubic, ...]
    road_marks: tuple[RoadMark, ...]
    predecessors: tuple[int, ...]
    successors: tuple[int, ...]
    speeds: tuple[SpeedRecord, ...] = ()
    line: int | None = None


@dataclass(frozen=True, slots=True)
class LaneSection:
    """A lane section from ``s`` on (OpenDRIVE 1.8, 9.3); lanes ordered left to right."""

    s: float
    single_side: bool
    lanes: tuple[Lane, ...]
    line: int | None = None

    def lane(self, lane_id: int) -> Lane | None:
        for lane in self.lanes:
            if lane.id == lane_id:
                return lane
        return None


@dataclass(frozen=True, slots=True)
class RoadLink:
    """A road's predecessor or successor (OpenDRIVE 1.8, 8.1)."""

    element_type: Literal["road", "junction"]
    element_id: str
    contact_point: ContactPoint | None


class Validity(NamedTuple):
    """The lanes a signal or object applies to, inclusive (OpenDRIVE 1.8, 13.2)."""

    from_lane: int
    to_lane: int


@dataclass(frozen=True, slots=True)
class Signal:
    """A sign or traffic light placed on a road (OpenDRIVE 1.8, 14).

    ``orientation`` is ``+`` (valid for traffic along +s), ``-`` (against s) or ``none``.
    ``value`` is NaN when the file gives none. A ``signalReference`` becomes a Signal on
    the referencing road with ``reference_of`` set to the referenced signal's id.
    """

    road_id: str
    id: str
    name: str
    s: float
    t: float
    z_offset: float
    h_offset: float
    orientation: str
    dynamic: bool
    country: str
    type: str
    subtype: str
    value: float
    unit: str
    height: float
    width: float
    validities: tuple[Validity, ...]
    reference_of: str | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ObjectRepeat:
    """A ``<repeat>`` of a road object (OpenDRIVE 1.8, 13.3): the object again every
    ``distance`` metres from ``s`` over ``length`` metres of road, or stretched along
    them where ``distance`` is 0 (a guard rail, a wall). Each dimension goes linearly
    from its start to its end value over the run; NaN where the file gives none (the
    object's own value holds)."""

    s: float
    length: float
    distance: float
    t_start: float
    t_end: float
    z_offset_start: float
    z_offset_end: float
    height_start: float
    height_end: float
    width_start: float = math.nan
    width_end: float = math.nan
    length_start: float = math.nan
    length_end: float = math.nan
    radius_start: float = math.nan
    radius_end: float = math.nan


@dataclass(frozen=True, slots=True)
class RoadObject:
    """A static object placed on a road (OpenDRIVE 1.8, 13).

    ``outline`` holds the corners of the first outline as (u, v) in the object's local
    frame (``cornerLocal``) or as (s, t) road coordinates (``cornerRoad``), see
    ``outline_frame``; empty when the object is a box or cylinder. ``outline_heights``:
    each corner's own ``height`` (NaN where it gives none); ``outline_closed``: the
    outline bounds an area (``closed="true"``, or no ``closed``) rather than following a
    line (a fence, a wall: ``closed="false"``), OpenDRIVE 1.8, 13.2. ``repeats``: its
    ``<repeat>`` records.
    """

    road_id: str
    id: str
    name: str
    type: str
    s: float
    t: float
    z_offset: float
    hdg: float
    length: float
    width: float
    height: float
    radius: float
    outline: tuple[tuple[float, float], ...] = ()
    outline_frame: Literal["local", "road", ""] = ""
    outline_heights: tuple[float, ...] = ()
    outline_closed: bool = True
    line: int | None = None
    repeats: tuple[ObjectRepeat, ...] = ()


@dataclass(frozen=True, slots=True)
class Road:
    """One ``<road>`` (OpenDRIVE 1.8, 8)."""

    id: str
    name: str
    length: float
    junction: str | None
    rule: Literal["RHT", "LHT"]
    predecessor: RoadLink | None
    successor: RoadLink | None
    geometries: tuple[Geometry, ...]
    elevation: tuple[Cubic, ...]
    superelevation: tuple[Cubic, ...]
    lane_offset: tuple[Cubic, ...]
    sections: tuple[LaneSection, ...]
    signals: tuple[Signal, ...]
    objects: tuple[RoadObject, ...]
    speed_limits: tuple[tuple[float, float], ...] = ()
    line: int | None = None


class LaneLink(NamedTuple):
    from_lane: int
    to_lane: int


@dataclass(frozen=True, slots=True)
class Connection:
    """A junction connection (OpenDRIVE 1.8, 10.3).

    In a direct junction, ``connecting_road`` is the ``linkedRoad``.
    """

    id: str
    incoming_road: str
    connecting_road: str
    contact_point: ContactPoint
    lane_links: tuple[LaneLink, ...]


@dataclass(frozen=True, slots=True)
class Junction:
    id: str
    name: str
    type: str
    connections: tuple[Connection, ...]
    controllers: tuple[str, ...] = ()
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Controller:
    """A group of signals switched together (OpenDRIVE 1.8, 14.6)."""

    id: str
    name: str
    sequence: int | None
    signal_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Header:
    rev_major: int
    rev_minor: int
    name: str
    version: str
    date: str
    vendor: str
    north: float
    south: float
    east: float
    west: float
    geo_reference: str | None
    offset: tuple[float, float, float, float] | None = None


@dataclass(frozen=True, slots=True)
class OpenDrive:
    """A whole parsed file."""

    path: str | None
    header: Header
    roads: tuple[Road, ...]
    junctions: tuple[Junction, ...]
    controllers: tuple[Controller, ...]
