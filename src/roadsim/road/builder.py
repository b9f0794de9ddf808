"""Building OpenDRIVE documents in Python, to write them as XML.

A small typed model of what an OpenDRIVE 1.8 file holds -- roads with a planView of
lines, arcs and spirals (`roadsim.road.layout`), elevation and superelevation (8.4), lane
sections with lanes, widths, road marks and lane links (9), road links (8.1), junctions
with connecting roads or, for ramps, direct junctions (10), signals (14) and controllers
(14.6) -- and `Document.to_xml`, which writes it byte for byte the same on every run
(`roadsim.road.xodr_writer`).

Every road knows its own geometry without a `RoadNetwork`: `RoadSpec.lane_t_center` gives a
lane's centre and `RoadEnd` the pose where a road meets a junction. `JunctionSpec.connect`
builds a junction's connecting road between two road ends (a line when they are aligned,
else lines and a spiral-arc-spiral turn) and checks that its lanes meet theirs exactly.

The classes of a concept that `roadsim.road.model` also has (a road, a lane, a signal...)
end in ``Spec``: they describe a document to write, the model's ones the document read.

Typical use::

    lanes = (LaneSpec(1), LaneSpec(-1))
    plan = PlanView(Pose(0.0, 0.0, 0.0), (Line(100.0),))
    road = RoadSpec("1", plan, [LaneSectionSpec(0.0, lanes)])
    xml = Document("example", [road]).to_xml()
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from roadsim.road.layout import (
    EPS,
    Arc,
    Line,
    PlanView,
    Pose,
    Segment,
    Spiral,
    connect,
    turn,
    wrap_angle,
)
from roadsim.road.xodr_writer import write_xodr

__all__ = [
    "FIXED_DATE",
    "Arc",
    "ConnectionSpec",
    "ControllerSpec",
    "CubicSpec",
    "Document",
    "JunctionSpec",
    "LaneSectionSpec",
    "LaneSpec",
    "Line",
    "Link",
    "PlanView",
    "Pose",
    "RoadEnd",
    "RoadMarkSpec",
    "RoadSpec",
    "Segment",
    "SignalSpec",
    "Spiral",
    "connect",
    "link_roads",
    "link_sections",
    "smoothstep",
    "speed_limit",
    "stop_sign",
    "traffic_light",
    "turn",
    "yield_sign",
]

#: The header date of every document roadsim writes, so that output is reproducible.
FIXED_DATE = "2025-01-01T00:00:00"

ContactPoint = Literal["start", "end"]


# -- polynomials, lanes and lane sections (8.4, 9) ---------------------------------------------


@dataclass(frozen=True, slots=True)
class CubicSpec:
    """``a + b*ds + c*ds**2 + d*ds**3`` from ``s`` on (road s, or section-relative
    ``sOffset`` for lane widths)."""

    s: float
    a: float
    b: float = 0.0
    c: float = 0.0
    d: float = 0.0

    def __call__(self, s: float) -> float:
        ds = s - self.s
        return self.a + ds * (self.b + ds * (self.c + ds * self.d))


def smoothstep(s: float, length: float, v0: float, v1: float) -> CubicSpec:
    """The cubic going from ``v0`` at ``s`` to ``v1`` at ``s + length`` with zero slope at
    both ends (a lane taper, a crest)."""
    dv = v1 - v0
    return CubicSpec(s, v0, 0.0, 3.0 * dv / length**2, -2.0 * dv / length**3)


def _piecewise(records: Sequence[CubicSpec], s: float) -> float:
    value = 0.0
    for rec in records:
        if rec.s <= s + EPS:
            value = rec(s)
    return value


@dataclass(frozen=True, slots=True)
class RoadMarkSpec:
    """A lane's road mark on its outer border from ``s_offset`` on (9.6)."""

    type: str = "solid"
    color: str = "white"
    width: float = 0.12
    weight: str = "standard"
    s_offset: float = 0.0
    lane_change: str | None = None


@dataclass(frozen=True, slots=True)
class LaneSpec:
    """One lane (9.5): id (positive left, negative right), type, width (a constant in
    metres or cubic records over the section), road marks and lane links."""

    id: int
    type: str = "driving"
    width: float | tuple[CubicSpec, ...] = 3.5
    marks: tuple[RoadMarkSpec, ...] = ()
    predecessor: int | None = None
    successor: int | None = None

    @property
    def widths(self) -> tuple[CubicSpec, ...]:
        if isinstance(self.width, tuple):
            return self.width
        return (CubicSpec(0.0, float(self.width)),)

    def width_at(self, ds: float) -> float:
        """The width ``ds`` metres after the section start."""
        return _piecewise(self.widths, ds)


@dataclass(frozen=True, slots=True)
class LaneSectionSpec:
    """The lanes from ``s`` on (9.3); ``center_marks`` are the center lane's road marks."""

    s: float
    lanes: tuple[LaneSpec, ...]
    center_marks: tuple[RoadMarkSpec, ...] = ()

    def lane(self, lane_id: int) -> LaneSpec:
        for lane in self.lanes:
            if lane.id == lane_id:
                return lane
        raise KeyError(f"no lane {lane_id} in the section at s={self.s}")

    def t_outer(self, lane_id: int, ds: float) -> float:
        """t of the outer border of a lane (0 for the center lane), ``ds`` into the section."""
        side = 1 if lane_id > 0 else -1
        return side * sum(self.lane(side * i).width_at(ds) for i in range(1, abs(lane_id) + 1))

    def t_center(self, lane_id: int, ds: float) -> float:
        inner = lane_id - 1 if lane_id > 0 else lane_id + 1
        return 0.5 * (self.t_outer(lane_id, ds) + self.t_outer(inner, ds))


def link_sections(
    sections: Sequence[LaneSectionSpec],
    changes: Mapping[int, Mapping[int, int | None]] | None = None,
) -> list[LaneSectionSpec]:
    """Sections with their lane links set from one to the next (9.5.1).

    Each lane links to the lane of the same id in the next section, if there is one,
    unless ``changes[i]`` maps its id (in section ``i``) to another id or to ``None``
    (the lane ends there).
    """
    changes = changes or {}
    succ: list[dict[int, int | None]] = []
    for i in range(len(sections) - 1):
        ids = {lane.id for lane in sections[i + 1].lanes}
        step = {lane.id: lane.id if lane.id in ids else None for lane in sections[i].lanes}
        step.update(changes.get(i, {}))
        succ.append(step)
    out = []
    for i, sec in enumerate(sections):
        lanes = []
        for lane in sec.lanes:
            nxt = succ[i].get(lane.id) if i < len(succ) else lane.successor
            prev = lane.predecessor
            if i > 0:
                prev = next((a for a, b in succ[i - 1].items() if b == lane.id), None)
            lanes.append(dataclasses.replace(lane, predecessor=prev, successor=nxt))
        out.append(dataclasses.replace(sec, lanes=tuple(lanes)))
    return out


# -- signals (14) ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SignalSpec:
    """A sign or traffic light at (s, t) on its road (OpenDRIVE 1.8, 14.2).

    ``orientation`` ``+`` faces traffic driving along +s, ``-`` traffic against s;
    ``lanes`` is the (lowest, highest) lane id it is valid for (13.2 validity).
    Heights are metres: ``z_offset`` from the road surface to the signal's bottom.
    """

    id: str
    s: float
    t: float
    type: str
    subtype: str = "-1"
    country: str = "DE"
    orientation: Literal["+", "-", "none"] = "+"
    dynamic: bool = False
    name: str = ""
    value: float | None = None
    unit: str | None = None
    z_offset: float = 0.0
    height: float = 0.0
    width: float = 0.0
    lanes: tuple[int, int] | None = None


def speed_limit(
    id: str, s: float, t: float, kmh: int, *, orientation: Literal["+", "-"], lanes: tuple[int, int]
) -> SignalSpec:
    """A German maximum-speed sign (StVO 274; subtype 50 + kmh / 10, e.g. 274-62: 120 km/h)."""
    return SignalSpec(
        id,
        s,
        t,
        "274",
        subtype=str(50 + kmh // 10),
        orientation=orientation,
        name=f"speed limit {kmh} km/h",
        value=float(kmh),
        unit="km/h",
        z_offset=1.5,
        height=0.6,
        width=0.6,
        lanes=lanes,
    )


def stop_sign(
    id: str, s: float, t: float, *, orientation: Literal["+", "-"], lanes: tuple[int, int]
) -> SignalSpec:
    """A stop sign (StVO 206)."""
    return SignalSpec(
        id,
        s,
        t,
        "206",
        orientation=orientation,
        name="stop",
        z_offset=1.5,
        height=0.6,
        width=0.6,
        lanes=lanes,
    )


def yield_sign(
    id: str, s: float, t: float, *, orientation: Literal["+", "-"], lanes: tuple[int, int]
) -> SignalSpec:
    """A give-way sign (StVO 205)."""
    return SignalSpec(
        id,
        s,
        t,
        "205",
        orientation=orientation,
        name="yield",
        z_offset=1.5,
        height=0.6,
        width=0.6,
        lanes=lanes,
    )


def traffic_light(
    id: str,
    s: float,
    t: float,
    *,
    orientation: Literal["+", "-"],
    lanes: tuple[int, int],
    name: str = "traffic light",
) -> SignalSpec:
    """A dynamic three-light traffic light (OpenDRIVE signal catalogue, type 1000001)."""
    return SignalSpec(
        id,
        s,
        t,
        "1000001",
        country="OpenDRIVE",
        orientation=orientation,
        dynamic=True,
        name=name,
        z_offset=2.1,
        height=0.9,
        width=0.3,
        lanes=lanes,
    )


# -- roads and road links (8) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Link:
    """A road's predecessor or successor (8.1)."""

    element_type: Literal["road", "junction"]
    element_id: str
    contact_point: ContactPoint | None = None


@dataclass(eq=False)
class RoadSpec:
    """One road (8): its plan, lane sections and everything placed on it.

    Attributes:
        kind: The road type (``motorway``, ``town``, ...), written with ``speed_kmh``
            as its speed limit when given.
        elevation, superelevation: Cubic records along s (8.4.1, 8.4.2).
    """

    id: str
    plan: PlanView
    sections: list[LaneSectionSpec]
    name: str = ""
    junction: str = "-1"
    predecessor: Link | None = None
    successor: Link | None = None
    kind: str | None = None
    speed_kmh: float | None = None
    elevation: list[CubicSpec] = field(default_factory=list)
    superelevation: list[CubicSpec] = field(default_factory=list)
    signals: list[SignalSpec] = field(default_factory=list)

    @property
    def length(self) -> float:
        return self.plan.length

    def section_at(self, s: float) -> LaneSectionSpec:
        """The lane section holding ``s`` (the later one exactly at a boundary, 9.3)."""
        starts = [sec.s for sec in self.sections]
        return self.sections[max(0, bisect.bisect_right(starts, s + EPS) - 1)]

    def lane_t_center(self, lane_id: int, s: float) -> float:
        """t of a lane's centre line at ``s`` (m)."""
        sec = self.section_at(s)
        return sec.t_center(lane_id, s - sec.s)

    def end(self, contact: ContactPoint) -> RoadEnd:
        """The road's start or end, to link it to a junction."""
        return RoadEnd(self, contact)


@dataclass(frozen=True, eq=False)
class RoadEnd:
    """The start or end of a road, where it meets a junction or another road."""

    road: RoadSpec
    contact: ContactPoint

    @property
    def section(self) -> LaneSectionSpec:
        return self.road.sections[0] if self.contact == "start" else self.road.sections[-1]

    @property
    def pose_out(self) -> Pose:
        """The pose at this end, facing out of the road."""
        p = self.road.plan
        return p.end if self.contact == "end" else p.start.reversed()

    @property
    def pose_in(self) -> Pose:
        """The pose at this end, facing into the road."""
        return self.pose_out.reversed()

    def lane_pose(self, lane_id: int, *, facing_in: bool) -> Pose:
        """A lane centre's pose at this end, facing into or out of the road."""
        sec = self.section
        t = sec.t_center(lane_id, self.road.length - sec.s if self.contact == "end" else 0.0)
        pose = self.road.plan.end if self.contact == "end" else self.road.plan.start
        pose = pose.shifted(t)
        return pose.reversed() if (self.contact == "start") != facing_in else pose

    def set_link(self, link: Link) -> None:
        if self.contact == "start":
            self.road.predecessor = link
        else:
            self.road.successor = link

    def width(self, lane_id: int) -> float:
        """A lane's width at this end (m)."""
        sec = self.section
        return sec.lane(lane_id).width_at(
            self.road.length - sec.s if self.contact == "end" else 0.0
        )


# -- junctions and controllers (10, 14.6) ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConnectionSpec:
    """A junction connection (10.3): ``lane_links`` are (incoming lane, connecting lane).

    In a direct junction (10.5) ``connecting_road`` is written as ``linkedRoad``.
    """

    id: str
    incoming_road: str
    connecting_road: str
    contact_point: ContactPoint
    lane_links: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class ControllerSpec:
    """Signals switched together (14.6); ``sequence`` orders controllers of a junction."""

    id: str
    name: str
    signal_ids: tuple[str, ...]
    sequence: int | None = None


@dataclass(eq=False)
class JunctionSpec:
    """A junction (10): ``default`` with connecting roads, or ``direct`` for ramps.

    Attributes:
        controllers: (controller id, sequence) pairs of the traffic lights of the junction.
    """

    id: str
    name: str = ""
    type: Literal["default", "direct"] = "default"
    connections: list[ConnectionSpec] = field(default_factory=list)
    controllers: list[tuple[str, int]] = field(default_factory=list)

    def connect(
        self,
        road_id: str,
        src: RoadEnd,
        dst: RoadEnd,
        lanes: Sequence[tuple[int, int]],
        *,
        spiral_fraction: float = 0.0,
        radius: float | None = None,
        kind: str | None = None,
        speed_kmh: float | None = None,
        lane_type: str = "driving",
        name: str = "",
    ) -> RoadSpec:
        """Builds a connecting road from ``src`` into ``dst`` and its connection.

        The connecting road's reference line runs from ``src.pose_out`` to ``dst.pose_in``
        (see `connect`) and carries lanes -1, -2, ... for the ``lanes`` pairs (lane at
        ``src``, lane at ``dst``), innermost first; their widths go smoothly from the
        width at ``src`` to the width at ``dst``. Both ends' road links are set.
        ``spiral_fraction`` and ``radius`` shape the turn (see `connect`); ``kind``,
        ``speed_kmh`` and ``name`` are the new road's.

        Raises:
            ValueError: If the lanes at either end do not line up with the connecting
                road's lanes (they must be the lanes next to the reference line).
        """
        if self.type != "default":
            raise ValueError(f"junction {self.id}: connecting roads need a default junction")
        plan = PlanView(
            src.pose_out,
            connect(src.pose_out, dst.pose_in, radius=radius, spiral_fraction=spiral_fraction),
        )
        built = []
        for i, (a, b) in enumerate(lanes, start=1):
            w0, w1 = src.width(a), dst.width(b)
            width: float | tuple[CubicSpec, ...] = w0
            if abs(w1 - w0) > EPS:
                width = (smoothstep(0.0, plan.length, w0, w1),)
            built.append(LaneSpec(-i, lane_type, width, predecessor=a, successor=b))
        section = LaneSectionSpec(0.0, tuple(built))
        for i, (a, b) in enumerate(lanes, start=1):
            first = plan.start.shifted(section.t_center(-i, 0.0))
            last = plan.end.shifted(section.t_center(-i, plan.length))
            _check_meet(
                f"junction {self.id}: lane {a} of road {src.road.id} and lane {-i} of "
                f"connecting road {road_id}",
                src.lane_pose(a, facing_in=False),
                first,
            )
            _check_meet(
                f"junction {self.id}: lane {-i} of connecting road {road_id} and lane "
                f"{b} of road {dst.road.id}",
                last,
                dst.lane_pose(b, facing_in=True),
            )
        road = RoadSpec(
            road_id,
            plan,
            [section],
            name=name,
            junction=self.id,
            predecessor=Link("road", src.road.id, src.contact),
            successor=Link("road", dst.road.id, dst.contact),
            kind=kind,
            speed_kmh=speed_kmh,
        )
        self.connections.append(
            ConnectionSpec(
                str(len(self.connections)),
                src.road.id,
                road_id,
                "start",
                tuple((a, -i) for i, (a, _) in enumerate(lanes, 1)),
            )
        )
        for end in (src, dst):
            end.set_link(Link("junction", self.id))
        return road

    def link_direct(
        self, incoming: RoadEnd, linked: RoadEnd, lanes: Sequence[tuple[int, int]]
    ) -> None:
        """Adds a direct-junction connection (10.5): lanes of ``incoming`` continue
        without a connecting road into ``linked`` as (incoming lane, linked lane) pairs.

        Raises:
            ValueError: If a linked lane does not start where its incoming lane ends.
        """
        if self.type != "direct":
            raise ValueError(f"junction {self.id}: linked roads need a direct junction")
        for a, b in lanes:
            _check_meet(
                f"junction {self.id}: lane {a} of road {incoming.road.id} and lane {b} "
                f"of road {linked.road.id}",
                incoming.lane_pose(a, facing_in=False),
                linked.lane_pose(b, facing_in=True),
            )
        self.connections.append(
            ConnectionSpec(
                str(len(self.connections)),
                incoming.road.id,
                linked.road.id,
                linked.contact,
                tuple(lanes),
            )
        )
        for end in (incoming, linked):
            end.set_link(Link("junction", self.id))


def link_roads(a: RoadEnd, b: RoadEnd, lanes: Sequence[tuple[int, int]]) -> None:
    """Links two roads end to end without a junction (OpenDRIVE 1.8, 8.1 and 9.5.1).

    Sets both roads' predecessor or successor (with the contact point) and the lane
    links of the touching lane sections, for ``lanes`` as (lane at ``a``, lane at ``b``).

    Raises:
        ValueError: If a pair of lanes does not meet.
    """
    for la, lb in lanes:
        _check_meet(
            f"lane {la} of road {a.road.id} ({a.contact}) and lane {lb} of road {b.road.id} "
            f"({b.contact})",
            a.lane_pose(la, facing_in=False),
            b.lane_pose(lb, facing_in=True),
        )
    for end, other, pairs in ((a, b, lanes), (b, a, [(lb, la) for la, lb in lanes])):
        end.set_link(Link("road", other.road.id, other.contact))
        index = 0 if end.contact == "start" else len(end.road.sections) - 1
        sec = end.road.sections[index]
        links = dict(pairs)
        updated = tuple(_linked(lane, end.contact, links.get(lane.id)) for lane in sec.lanes)
        end.road.sections[index] = dataclasses.replace(sec, lanes=updated)


def _linked(lane: LaneSpec, contact: ContactPoint, other: int | None) -> LaneSpec:
    """``lane`` with its link at ``contact`` set to lane ``other`` (unchanged if None)."""
    if other is None:
        return lane
    if contact == "start":
        return dataclasses.replace(lane, predecessor=other)
    return dataclasses.replace(lane, successor=other)


def _check_meet(what: str, a: Pose, b: Pose) -> None:
    gap = math.hypot(b.x - a.x, b.y - a.y)
    if gap > 1e-6 or abs(wrap_angle(b.hdg - a.hdg)) > 1e-9:
        raise ValueError(
            f"{what} do not meet: {gap:.3g} m apart, headings {a.hdg:.4f} and {b.hdg:.4f} rad"
        )


# -- the document and its XML -----------------------------------------------------------------------


@dataclass(eq=False)
class Document:
    """A whole OpenDRIVE 1.8 document.

    Args:
        name: The header's name.
        roads, junctions, controllers: The document's content, written in this order.
    """

    name: str
    roads: list[RoadSpec]
    junctions: list[JunctionSpec] = field(default_factory=list)
    controllers: list[ControllerSpec] = field(default_factory=list)
    date: str = FIXED_DATE

    def to_xml(self) -> bytes:
        """The document as UTF-8 XML (byte for byte the same for the same content).

        Raises:
            ValueError: If ids repeat or a link names something that does not exist.
        """
        self._check()
        return write_xodr(self)

    def write(self, path: str | Path) -> None:
        Path(path).write_bytes(self.to_xml())

    def bounds(self) -> tuple[float, float, float, float]:
        """(west, south, east, north): the extent of every road's outermost lanes (m),
        from samples at most 1 m apart, rounded outward to 0.1 m."""
        xs: list[float] = []
        ys: list[float] = []
        for road in self.roads:
            n = max(2, math.ceil(road.length) + 1)
            for k in range(n):
                s = road.length * k / (n - 1)
                pose = road.plan.pose_at(s)
                sec = road.sections[-1] if k == n - 1 else road.section_at(s)
                ids = [lane.id for lane in sec.lanes] + [0]
                for t in (sec.t_outer(max(ids), s - sec.s), sec.t_outer(min(ids), s - sec.s)):
                    p = pose.shifted(t)
                    xs.append(p.x)
                    ys.append(p.y)
        # Outward to 0.1 m, ignoring rounding noise below a micrometre.
        return (
            math.floor(min(xs) * 10 + 1e-5) / 10,
            math.floor(min(ys) * 10 + 1e-5) / 10,
            math.ceil(max(xs) * 10 - 1e-5) / 10,
            math.ceil(max(ys) * 10 - 1e-5) / 10,
        )

    def _check(self) -> None:
        def unique(kind: str, ids: list[str]) -> set[str]:
            seen: set[str] = set()
            for i in ids:
                if i in seen:
                    raise ValueError(f"{self.name}: duplicate {kind} id {i!r}")
                seen.add(i)
            return seen

        roads = unique("road", [r.id for r in self.roads])
        junctions = unique("junction", [j.id for j in self.junctions])
        signals = unique("signal", [s.id for r in self.roads for s in r.signals])
        controllers = unique("controller", [c.id for c in self.controllers])
        for road in self.roads:
            if not road.sections or road.sections[0].s != 0.0:
                raise ValueError(
                    f"{self.name}: road {road.id}: the first lane section must start at s=0"
                )
            for link in (road.predecessor, road.successor):
                if link is not None and link.element_id not in (
                    roads if link.element_type == "road" else junctions
                ):
                    raise ValueError(
                        f"{self.name}: road {road.id} links to missing {link.element_type} {link.element_id!r}"
                    )
            if road.junction != "-1" and road.junction not in junctions:
                raise ValueError(
                    f"{self.name}: road {road.id} lies in missing junction {road.junction!r}"
                )
        for c in self.controllers:
            for sid in c.signal_ids:
                if sid not in signals:
                    raise ValueError(
                        f"{self.name}: controller {c.id} controls missing signal {sid!r}"
                    )
        for j in self.junctions:
            for con in j.connections:
                for rid in (con.incoming_road, con.connecting_road):
                    if rid not in roads:
                        raise ValueError(f"{self.name}: junction {j.id} names missing road {rid!r}")
            for cid, _ in j.controllers:
                if cid not in controllers:
                    raise ValueError(
                        f"{self.name}: junction {j.id} names missing controller {cid!r}"
                    )
