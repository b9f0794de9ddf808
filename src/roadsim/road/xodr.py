"""Reading OpenDRIVE (.xodr) files into `roadsim.road.model` records.

Covers OpenDRIVE 1.4 to 1.8. Every error raises `MapError` naming the file, the source
line, the element and the road. Elements roadsim does not use are ignored; an element
name that is not OpenDRIVE at all is reported once per name with a `MapWarning`.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, cast

from lxml import etree

from roadsim.errors import MapError, MapWarning
from roadsim.road.model import (
    Connection,
    ContactPoint,
    Controller,
    Cubic,
    Geometry,
    GeometryKind,
    Header,
    Junction,
    Lane,
    LaneLink,
    LaneSection,
    ObjectRepeat,
    OpenDrive,
    Road,
    RoadLink,
    RoadMark,
    RoadMarkLine,
    RoadObject,
    Signal,
    SpeedRecord,
    Validity,
)

# Element names of OpenDRIVE 1.4-1.8 (and common vendor extensions) that roadsim knows,
# whether it reads them or deliberately skips them. Anything else gets a warning.
_KNOWN_TAGS = frozenset(
    [
        "OpenDRIVE",
        "header",
        "geoReference",
        "offset",
        "userData",
        "include",
        "dataQuality",
        "error",
        "rawData",
        "road",
        "link",
        "predecessor",
        "successor",
        "neighbor",
        "type",
        "speed",
        "planView",
        "geometry",
        "line",
        "arc",
        "spiral",
        "poly3",
        "paramPoly3",
        "elevationProfile",
        "elevation",
        "lateralProfile",
        "superelevation",
        "crossfall",
        "shape",
        "lanes",
        "laneOffset",
        "laneSection",
        "left",
        "center",
        "right",
        "lane",
        "width",
        "border",
        "roadMark",
        "sway",
        "explicit",
        "style",
        "material",
        "visibility",
        "access",
        "height",
        "rule",
        "objects",
        "object",
        "repeat",
        "outline",
        "outlines",
        "cornerRoad",
        "cornerLocal",
        "cornerReference",
        "material",
        "validity",
        "parkingSpace",
        "markings",
        "marking",
        "bridge",
        "tunnel",
        "objectReference",
        "borders",
        "signals",
        "signal",
        "signalReference",
        "positionRoad",
        "positionInertial",
        "dependency",
        "reference",
        "semantics",
        "controller",
        "control",
        "junction",
        "connection",
        "laneLink",
        "priority",
        "junctionGroup",
        "junctionReference",
        "station",
        "platform",
        "segment",
        "railroad",
        "switch",
        "mainTrack",
        "sideTrack",
        "partner",
        "surface",
        "CRG",
        "roadMarks",
        "vectorScene",
        "vectorLane",
        "vectorRoad",
        "vectorJunction",
        "vectorSignal",
        "fillet",
        "boundary",
        "boundaries",
        "elementDir",
        "crossPath",
        "startLaneLink",
        "endLaneLink",
        "roadSection",
        "speedCategory",
    ]
)

_SPEED_UNITS = {"m/s": 1.0, "km/h": 1.0 / 3.6, "mph": 0.44704}

#: Magnitudes no map can mean (OpenDRIVE sets no bounds). A larger value is a corrupt or
#: mis-scaled file, which would have roadsim sample and index a road for minutes and
#: gigabytes, or overflow; it is a located `MapError`. Lengths and s positions (m): one
#: road of 1000 km.
MAX_LENGTH_M = 1e6
#: Every other number: coordinates (m; projected coordinates stay below 1e8), offsets,
#: widths, polynomial coefficients, curvatures, integers.
MAX_NUMBER = 1e9

Element = etree._Element


class _Reader:
    """Parses one document; holds the file name for error messages."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.road_id: str | None = None

    # -- errors and attributes ------------------------------------------------------------

    def error(self, el: Element | None, reason: str) -> MapError:
        return MapError(
            reason,
            path=self.path,
            line=_line(el) if el is not None else None,
            element=_tag(el) if el is not None else None,
            road_id=self.road_id,
        )

    def num(
        self, el: Element, name: str, default: float | None = None, limit: float = MAX_NUMBER
    ) -> float:
        raw = el.get(name)
        if raw is None:
            if default is None:
                raise self.error(el, f"missing attribute '{name}' (expected a number)")
            return default
        try:
            value = float(raw)
        except ValueError:
            raise self.error(el, f"attribute {name}={raw!r} is not a number") from None
        if not math.isfinite(value):
            raise self.error(el, f"attribute {name}={raw!r} is not a finite number")
        if abs(value) > limit:
            raise self.error(el, _too_large(name, raw, limit))
        return value

    def nonneg(
        self, el: Element, name: str, default: float | None = None, limit: float = MAX_LENGTH_M
    ) -> float:
        """A distance (by default: at most `MAX_LENGTH_M`)."""
        value = self.num(el, name, default, limit)
        if value < 0:
            raise self.error(el, f"attribute {name}={el.get(name)!r} is negative (expected >= 0)")
        return value

    def integer(self, el: Element, name: str, default: int | None = None) -> int:
        raw = el.get(name)
        if raw is None:
            if default is None:
                raise self.error(el, f"missing attribute '{name}' (expected an integer)")
            return default
        try:
            value = int(raw)
        except ValueError:
            try:
                as_float = float(raw)
            except ValueError:
                as_float = math.nan
            if not as_float.is_integer():
                raise self.error(el, f"attribute {name}={raw!r} is not an integer") from None
            value = int(as_float)
        if abs(value) > MAX_NUMBER:
            raise self.error(el, _too_large(name, raw, MAX_NUMBER))
        return value

    def text(self, el: Element, name: str, default: str | None = None) -> str:
        raw = el.get(name)
        if raw is None:
            if default is None:
                raise self.error(el, f"missing attribute '{name}'")
            return default
        return raw.strip()

    def cubic(self, el: Element, s_name: str) -> Cubic:
        get = el.get
        try:
            record = Cubic(
                float(get(s_name, 0.0)),
                float(get("a", 0.0)),
                float(get("b", 0.0)),
                float(get("c", 0.0)),
                float(get("d", 0.0)),
            )
        except ValueError:
            record = None
        if (
            record is None
            or not math.isfinite(sum(record))
            or (s_name == "sOffset" and record.s < 0)
            or abs(record.s) > MAX_LENGTH_M
            or max(map(abs, record[1:])) > MAX_NUMBER
        ):
            # Slow path, only to name the offending attribute precisely.
            s = (
                self.nonneg(el, s_name, 0.0)
                if s_name == "sOffset"
                else self.num(el, s_name, 0.0, MAX_LENGTH_M)
            )
            return Cubic(s, *(self.num(el, k, 0.0) for k in "abcd"))
        return record

    def cubics(self, els: Iterable[Element], s_name: str) -> tuple[Cubic, ...]:
        records = sorted((self.cubic(el, s_name) for el in els), key=_first)
        return tuple(records)

    # -- document ---------------------------------------------------------------------------

    def document(self, root: Element) -> OpenDrive:
        if _tag(root) != "OpenDRIVE":
            raise self.error(root, f"root element is <{_tag(root)}>, expected <OpenDRIVE>")
        self.warn_unknown(root)
        header_el = _child(root, "header")
        if header_el is None:
            # Mandatory, but other OpenDRIVE readers load files without it, and several
            # published maps lack it: nothing else in the file depends on it.
            self.warn(
                _line(root),
                "no <header>; read with the defaults (OpenDRIVE 1.4, no name, no geoReference)",
            )
            header_el = etree.Element("header")
        header = self.header(header_el)
        roads = tuple(self.road(el) for el in _children(root, "road"))
        self.road_id = None
        junctions = tuple(self.junction(el) for el in _children(root, "junction"))
        controllers = tuple(self.controller(el) for el in _children(root, "controller"))
        doc = OpenDrive(self.path, header, roads, junctions, controllers)
        return self.check_references(root, doc)

    def warn(self, line: int | None, message: str) -> None:
        """A `MapWarning` ``path:line: message``."""
        where = self.path or "<string>"
        if line is not None:
            where += f":{line}"
        warnings.warn(f"{where}: {message}", MapWarning, stacklevel=4)

    def warn_unknown(self, root: Element) -> None:
        # Collecting the distinct names with one C-level pass keeps this cheap on big maps.
        names = {el.tag for el in root.iter("*")}
        for tag in sorted(names - _KNOWN_TAGS):
            first = next(root.iter(tag))
            warnings.warn(
                f"{self.path or '<string>'}:{_line(first)}: unknown element <{tag}> ignored",
                MapWarning,
                stacklevel=4,
            )

    def header(self, el: Element) -> Header:
        geo = _child(el, "geoReference")
        geo_text = None
        if geo is not None:
            geo_text = (geo.text or "").strip() or None
        offset_el = _child(el, "offset")
        offset = None
        if offset_el is not None:
            offset = tuple(self.num(offset_el, k, 0.0) for k in ("x", "y", "z", "hdg"))
        return Header(
            rev_major=self.integer(el, "revMajor", 1),
            rev_minor=self.integer(el, "revMinor", 4),
            name=self.text(el, "name", ""),
            version=self.text(el, "version", ""),
            date=self.text(el, "date", ""),
            vendor=self.text(el, "vendor", ""),
            north=self.num(el, "north", 0.0),
            south=self.num(el, "south", 0.0),
            east=self.num(el, "east", 0.0),
            west=self.num(el, "west", 0.0),
            geo_reference=geo_text,
            offset=cast("tuple[float, float, float, float] | None", offset),
        )

    # -- roads --------------------------------------------------------------------------------

    def road(self, el: Element) -> Road:
        self.road_id = None
        road_id = self.text(el, "id")
        self.road_id = road_id
        length = self.num(el, "length", limit=MAX_LENGTH_M)
        if length <= 0:
            raise self.error(el, f"length={el.get('length')!r} must be positive")
        junction = self.text(el, "junction", "-1")
        rule = self.text(el, "rule", "RHT").upper()
        if rule not in ("RHT", "LHT"):
            raise self.error(el, f"rule={rule!r} is neither 'RHT' nor 'LHT'")

        predecessor = successor = None
        link = _child(el, "link")
        if link is not None:
            pred_el = _child(link, "predecessor")
            succ_el = _child(link, "successor")
            predecessor = self.road_link(pred_el) if pred_el is not None else None
            successor = self.road_link(succ_el) if succ_el is not None else None

        plan = _child(el, "planView")
        geometries = (
            tuple(self.geometry(g) for g in _children(plan, "geometry")) if plan is not None else ()
        )
        if not geometries:
            raise self.error(
                plan if plan is not None else el, "road has no <geometry> in <planView>"
            )
        geometries = tuple(sorted(geometries, key=lambda g: g.s))

        elevation = self.cubics(_grandchildren(el, "elevationProfile", "elevation"), "s")
        superelevation = self.cubics(_grandchildren(el, "lateralProfile", "superelevation"), "s")
        lanes_el = _child(el, "lanes")
        if lanes_el is None:
            raise self.error(el, "road has no <lanes>")
        lane_offset = self.cubics(_children(lanes_el, "laneOffset"), "s")
        sections = tuple(self.lane_section(s) for s in _children(lanes_el, "laneSection"))
        if not sections:
            raise self.error(lanes_el, "road has no <laneSection>")
        sections = tuple(sorted(sections, key=lambda sec: sec.s))
        for sec in sections:
            if sec.s > length + 1e-6:
                raise self.error(
                    lanes_el, f"laneSection s={sec.s} lies beyond the road length {length}"
                )

        speed_limits = []
        for type_el in _children(el, "type"):
            speed_el = _child(type_el, "speed")
            if speed_el is not None and speed_el.get("max") not in (None, "no limit", "undefined"):
                speed_limits.append(
                    (
                        self.num(type_el, "s", 0.0, MAX_LENGTH_M),
                        self.speed(speed_el, "max", speed_el.get("unit")),
                    )
                )

        signals: list[Signal] = []
        signals_el = _child(el, "signals")
        if signals_el is not None:
            signals.extend(self.signal(s, road_id) for s in _children(signals_el, "signal"))
            signals.extend(
                self.signal_reference(s, road_id) for s in _children(signals_el, "signalReference")
            )
        objects_el = _child(el, "objects")
        objects = (
            tuple(self.road_object(o, road_id) for o in _children(objects_el, "object"))
            if objects_el is not None
            else ()
        )

        return Road(
            id=road_id,
            name=self.text(el, "name", ""),
            length=length,
            junction=None if junction in ("-1", "") else junction,
            rule=cast('Literal["RHT", "LHT"]', rule),
            predecessor=predecessor,
            successor=successor,
            geometries=geometries,
            elevation=elevation,
            superelevation=superelevation,
            lane_offset=lane_offset,
            sections=sections,
            signals=tuple(signals),
            objects=objects,
            speed_limits=tuple(speed_limits),
            line=_line(el),
        )

    def speed(self, el: Element, name: str, unit: str | None) -> float:
        value = self.num(el, name)
        factor = _SPEED_UNITS.get(unit or "m/s")
        if factor is None:
            raise self.error(el, f"unit={unit!r} is not a speed unit (expected m/s, km/h or mph)")
        return value * factor

    def road_link(self, el: Element) -> RoadLink:
        kind = self.text(el, "elementType", "road")
        if kind not in ("road", "junction"):
            raise self.error(el, f"elementType={kind!r} is neither 'road' nor 'junction'")
        contact = el.get("contactPoint")
        if contact is not None and contact not in ("start", "end"):
            raise self.error(el, f"contactPoint={contact!r} is neither 'start' nor 'end'")
        if kind == "road" and contact is None:
            raise self.error(el, "a link to a road needs contactPoint='start' or 'end'")
        return RoadLink(
            element_type=cast('Literal["road", "junction"]', kind),
            element_id=self.text(el, "elementId"),
            contact_point=cast("ContactPoint | None", contact),
        )

    def geometry(self, el: Element) -> Geometry:
        s = self.nonneg(el, "s")
        length = self.num(el, "length", limit=MAX_LENGTH_M)
        if length < 0:
            raise self.error(el, f"length={el.get('length')!r} is negative (expected >= 0)")
        shape = next((c for c in el if isinstance(c.tag, str) and _tag(c) != "userData"), None)
        if shape is None:
            raise self.error(
                el, "geometry has no shape (expected line, arc, spiral, poly3 or paramPoly3)"
            )
        kind = _tag(shape)
        params: dict[str, float] = {}
        p_range = "arcLength"
        if kind == "line":
            pass
        elif kind == "arc":
            params["curvature"] = self.num(shape, "curvature")
        elif kind == "spiral":
            params["curvStart"] = self.num(shape, "curvStart")
            params["curvEnd"] = self.num(shape, "curvEnd")
        elif kind == "poly3":
            params.update({k: self.num(shape, k, 0.0) for k in "abcd"})
        elif kind == "paramPoly3":
            params.update(
                {
                    k: self.num(shape, k, 0.0)
                    for k in ("aU", "bU", "cU", "dU", "aV", "bV", "cV", "dV")
                }
            )
            # Optional in the OpenDRIVE 1.4 and 1.5 schemas, with default "normalized";
            # files written to those versions (and some later ones) leave it out.
            p_range = self.text(shape, "pRange", "normalized")
            if p_range not in ("arcLength", "normalized"):
                raise self.error(
                    shape, f"pRange={p_range!r} is neither 'arcLength' nor 'normalized'"
                )
        else:
            raise self.error(
                shape, "unknown geometry shape (expected line, arc, spiral, poly3 or paramPoly3)"
            )
        return Geometry(
            s=s,
            x=self.num(el, "x"),
            y=self.num(el, "y"),
            hdg=self.num(el, "hdg"),
            length=length,
            kind=cast("GeometryKind", kind),
            params=params,
            p_range=p_range,
            line=_line(el),
        )

    def lane_section(self, el: Element) -> LaneSection:
        lanes: list[Lane] = []
        for side in ("left", "center", "right"):
            side_el = _child(el, side)
            if side_el is None:
                continue
            for lane_el in _children(side_el, "lane"):
                lane = self.lane(lane_el)
                sign = {"left": 1, "center": 0, "right": -1}[side]
                if (lane.id > 0) - (lane.id < 0) != sign:
                    raise self.error(lane_el, f"lane id {lane.id} does not belong in <{side}>")
                lanes.append(lane)
        ids = [lane.id for lane in lanes]
        if len(set(ids)) != len(ids):
            raise self.error(el, f"duplicate lane ids in lane section: {sorted(ids)}")
        if 0 not in ids:
            raise self.error(el, "lane section has no center lane (id 0)")
        for sign in (1, -1):
            side_ids = sorted(abs(i) for i in ids if i * sign > 0)
            if side_ids != list(range(1, len(side_ids) + 1)):
                raise self.error(
                    el,
                    f"lane ids {sorted(i for i in ids if i * sign > 0)} are not consecutive from the center",
                )
        lanes.sort(key=lambda lane: -lane.id)
        return LaneSection(
            s=self.nonneg(el, "s"),
            single_side=self.text(el, "singleSide", "false").lower() == "true",
            lanes=tuple(lanes),
            line=_line(el),
        )

    def lane(self, el: Element) -> Lane:
        lane_id = self.integer(el, "id")
        preds: list[int] = []
        succs: list[int] = []
        marks: list[RoadMark] = []
        speeds: list[SpeedRecord] = []
        widths: list[Cubic] = []
        borders: list[Cubic] = []
        # One pass over the children: this runs for every lane of every section.
        for child in el.iterchildren("*"):
            tag = child.tag
            if tag == "width":
                widths.append(self.cubic(child, "sOffset"))
            elif tag == "roadMark":
                marks.append(self.road_mark(child))
            elif tag == "link":
                for ref in child.iterchildren("predecessor", "successor"):
                    (preds if ref.tag == "predecessor" else succs).append(self.integer(ref, "id"))
            elif tag == "border":
                borders.append(self.cubic(child, "sOffset"))
            elif tag == "speed":
                speeds.append(
                    SpeedRecord(
                        self.nonneg(child, "sOffset", 0.0),
                        self.speed(child, "max", child.get("unit")),
                    )
                )
        widths.sort(key=_first)
        borders.sort(key=_first)
        marks.sort(key=lambda m: m.s_offset)
        speeds.sort(key=_first)
        return Lane(
            id=lane_id,
            type=el.get("type", "none").strip(),
            level=el.get("level", "false").strip().lower() in ("true", "1"),
            widths=tuple(widths),
            borders=() if widths else tuple(borders),  # widths win when both are given (9.5.4)
            road_marks=tuple(marks),
            predecessors=tuple(preds),
            successors=tuple(succs),
            speeds=tuple(speeds),
            line=_line(el),
        )

    def road_mark(self, m: Element) -> RoadMark:
        weight = m.get("weight", "standard").strip()
        return RoadMark(
            s_offset=self.nonneg(m, "sOffset", 0.0),
            type=m.get("type", "none").strip(),
            weight=weight,
            color=m.get("color", "standard").strip(),
            width=self.num(m, "width", 0.12 if weight == "standard" else 0.25),
            lane_change=m.get("laneChange", "both").strip(),
            material=m.get("material", "standard").strip(),
            lines=tuple(
                RoadMarkLine(
                    length=self.nonneg(ln, "length", 0.0),
                    space=self.nonneg(ln, "space", 0.0),
                    t_offset=self.num(ln, "tOffset", 0.0),
                    s_offset=self.num(ln, "sOffset", 0.0, MAX_LENGTH_M),
                    width=self.nonneg(ln, "width", 0.0),
                    rule=ln.get("rule", "none").strip(),
                    color=ln.get("color", "").strip(),
                )
                for t in m.iterchildren("type")
                for ln in t.iterchildren("line")
            ),
        )

    # -- signals and objects ----------------------------------------------------------------

    def validities(self, el: Element) -> tuple[Validity, ...]:
        out = []
        for v in _children(el, "validity"):
            lo, hi = self.integer(v, "fromLane"), self.integer(v, "toLane")
            out.append(Validity(min(lo, hi), max(lo, hi)))
        return tuple(out)

    def signal(self, el: Element, road_id: str) -> Signal:
        value = self.num(el, "value", math.nan) if el.get("value", "").strip() else math.nan
        orientation = self.text(el, "orientation", "none")
        if orientation not in ("+", "-", "none"):
            raise self.error(el, f"orientation={orientation!r} is not '+', '-' or 'none'")
        dynamic = self.text(el, "dynamic", "no").lower()
        if dynamic not in ("yes", "no", "true", "false"):
            raise self.error(el, f"dynamic={dynamic!r} is neither 'yes' nor 'no'")
        return Signal(
            road_id=road_id,
            id=self.text(el, "id"),
            name=self.text(el, "name", ""),
            s=self.nonneg(el, "s"),
            t=self.num(el, "t", 0.0),
            z_offset=self.num(el, "zOffset", 0.0),
            h_offset=self.num(el, "hOffset", 0.0),
            orientation=orientation,
            dynamic=dynamic in ("yes", "true"),
            country=self.text(el, "country", ""),
            type=self.text(el, "type", "-1"),
            subtype=self.text(el, "subtype", "-1"),
            value=value,
            unit=self.text(el, "unit", ""),
            height=self.num(el, "height", 0.0),
            width=self.num(el, "width", 0.0),
            validities=self.validities(el),
            line=_line(el),
        )

    def signal_reference(self, el: Element, road_id: str) -> Signal:
        orientation = self.text(el, "orientation", "none")
        if orientation not in ("+", "-", "none"):
            raise self.error(el, f"orientation={orientation!r} is not '+', '-' or 'none'")
        ref = self.text(el, "id")
        return Signal(
            road_id=road_id,
            id=ref,
            name="",
            s=self.nonneg(el, "s"),
            t=self.num(el, "t", 0.0),
            z_offset=0.0,
            h_offset=0.0,
            orientation=orientation,
            dynamic=False,
            country="",
            type="",
            subtype="",
            value=math.nan,
            unit="",
            height=0.0,
            width=0.0,
            validities=self.validities(el),
            reference_of=ref,
            line=_line(el),
        )

    def road_object(self, el: Element, road_id: str) -> RoadObject:
        outline: list[tuple[float, float]] = []
        heights: list[float] = []
        frame: Literal["local", "road", ""] = ""
        closed = True
        outline_el = _child(el, "outline")
        if outline_el is None:
            outlines = _child(el, "outlines")
            outline_el = _child(outlines, "outline") if outlines is not None else None
        if outline_el is not None:
            closed = self.text(outline_el, "closed", "true").lower() in ("true", "1")
            for corner in outline_el:
                tag = _tag(corner)
                if tag == "cornerLocal":
                    frame = "local"
                    outline.append((self.num(corner, "u"), self.num(corner, "v")))
                elif tag == "cornerRoad":
                    frame = "road"
                    outline.append((self.num(corner, "s"), self.num(corner, "t")))
                else:
                    continue
                heights.append(self.nonneg(corner, "height", math.nan))
        return RoadObject(
            road_id=road_id,
            id=self.text(el, "id"),
            name=self.text(el, "name", ""),
            type=self.text(el, "type", "none"),
            s=self.nonneg(el, "s"),
            t=self.num(el, "t", 0.0),
            z_offset=self.num(el, "zOffset", 0.0),
            hdg=self.num(el, "hdg", 0.0),
            length=self.nonneg(el, "length", 0.0),
            width=self.nonneg(el, "width", 0.0),
            height=self.nonneg(el, "height", 0.0),
            radius=self.nonneg(el, "radius", 0.0),
            outline=tuple(outline),
            outline_frame=frame,
            outline_heights=tuple(heights),
            outline_closed=closed,
            line=_line(el),
            repeats=tuple(self.object_repeat(r) for r in _children(el, "repeat")),
        )

    def object_repeat(self, el: Element) -> ObjectRepeat:
        """A ``<repeat>`` (OpenDRIVE 1.8, 13.3); dimensions it leaves out are NaN."""

        def size(name: str) -> float:
            return self.nonneg(el, name) if el.get(name) is not None else math.nan

        return ObjectRepeat(
            s=self.nonneg(el, "s"),
            length=self.nonneg(el, "length"),
            distance=self.nonneg(el, "distance", 0.0),
            t_start=self.num(el, "tStart", 0.0),
            t_end=self.num(el, "tEnd", 0.0),
            z_offset_start=self.num(el, "zOffsetStart", 0.0),
            z_offset_end=self.num(el, "zOffsetEnd", 0.0),
            height_start=size("heightStart"),
            height_end=size("heightEnd"),
            width_start=size("widthStart"),
            width_end=size("widthEnd"),
            length_start=size("lengthStart"),
            length_end=size("lengthEnd"),
            radius_start=size("radiusStart"),
            radius_end=size("radiusEnd"),
        )

    # -- junctions and controllers ----------------------------------------------------------

    def junction(self, el: Element) -> Junction:
        junction_id = self.text(el, "id")
        connections = []
        for c in _children(el, "connection"):
            connecting = c.get("connectingRoad") or c.get("linkedRoad")
            if connecting is None:
                raise self.error(c, "connection has neither connectingRoad nor linkedRoad")
            contact = self.text(c, "contactPoint", "start")
            if contact not in ("start", "end"):
                raise self.error(c, f"contactPoint={contact!r} is neither 'start' nor 'end'")
            links = tuple(
                LaneLink(self.integer(ll, "from"), self.integer(ll, "to"))
                for ll in _children(c, "laneLink")
            )
            connections.append(
                Connection(
                    id=self.text(c, "id", ""),
                    incoming_road=self.text(c, "incomingRoad"),
                    connecting_road=connecting.strip(),
                    contact_point=cast("ContactPoint", contact),
                    lane_links=links,
                )
            )
        controllers = tuple(self.text(c, "id") for c in _children(el, "controller"))
        return Junction(
            id=junction_id,
            name=self.text(el, "name", ""),
            type=self.text(el, "type", "default"),
            connections=tuple(connections),
            controllers=controllers,
            line=_line(el),
        )

    def controller(self, el: Element) -> Controller:
        seq = el.get("sequence")
        return Controller(
            id=self.text(el, "id"),
            name=self.text(el, "name", ""),
            sequence=self.integer(el, "sequence") if seq is not None else None,
            signal_ids=tuple(self.text(c, "signalId") for c in _children(el, "control")),
        )

    # -- references -----------------------------------------------------------------------------

    def check_references(self, root: Element, doc: OpenDrive) -> OpenDrive:
        """Raises on references that break the network; returns ``doc`` without the
        dangling road links that published maps are known to carry."""
        roads = {r.id: r for r in doc.roads}
        if len(roads) != len(doc.roads):
            seen: set[str] = set()
            for el in _children(root, "road"):
                rid = el.get("id", "")
                if rid in seen:
                    self.road_id = rid
                    raise self.error(el, f"duplicate road id {rid!r}")
                seen.add(rid)
        junctions = {j.id: j for j in doc.junctions}
        dangling: list[tuple[str, str]] = []
        road_els = {el.get("id"): el for el in _children(root, "road")}
        for road in doc.roads:
            self.road_id = road.id
            el = road_els[road.id]
            for which, link in (("predecessor", road.predecessor), ("successor", road.successor)):
                if link is None:
                    continue
                table: dict[str, object] = roads if link.element_type == "road" else junctions  # type: ignore[assignment]
                if link.element_id not in table:
                    # Published maps do this (esmini's stationary_objects.xodr links to a
                    # road it does not contain); the link is dropped, not the map.
                    link_el = _child(_child(el, "link"), which)
                    line = _line(link_el) if link_el is not None else _line(el)
                    warnings.warn(
                        f"{self.path or '<string>'}:{line}: road {road.id}: {which} names "
                        f"{link.element_type} {link.element_id!r}, which does not exist; link ignored",
                        MapWarning,
                        stacklevel=4,
                    )
                    dangling.append((road.id, which))
            if road.junction is not None and road.junction not in junctions:
                raise self.error(
                    el, f"junction={road.junction!r} names a junction that does not exist"
                )
        self.road_id = None
        junction_els = {el.get("id"): el for el in _children(root, "junction")}
        for junction in doc.junctions:
            j_el = junction_els[junction.id]
            for conn, c_el in zip(junction.connections, _children(j_el, "connection"), strict=True):
                for attr, rid in (
                    ("incomingRoad", conn.incoming_road),
                    ("connectingRoad", conn.connecting_road),
                ):
                    if rid not in roads:
                        raise self.error(
                            c_el,
                            f"{attr}={rid!r} names a road that does not exist (junction {junction.id})",
                        )
        if not dangling:
            return doc
        fixed = {r.id: r for r in doc.roads}
        for road_id, which in dangling:
            road = fixed[road_id]
            if which == "predecessor":
                fixed[road_id] = dataclasses.replace(road, predecessor=None)
            else:
                fixed[road_id] = dataclasses.replace(road, successor=None)
        return dataclasses.replace(doc, roads=tuple(fixed[r.id] for r in doc.roads))


def _too_large(name: str, raw: str, limit: float) -> str:
    return f"attribute {name}={raw!r} is too large for any map (at most {limit:.0e} expected)"


def _first(record: tuple[float, ...]) -> float:
    return record[0]


def _line(el: Element) -> int | None:
    """The element's 1-based source line (lxml's stubs type it loosely)."""
    line = el.sourceline
    return line if isinstance(line, int) else None


def _tag(el: Element) -> str:
    tag = el.tag
    return tag if isinstance(tag, str) else "#comment"


# The tree has no namespaces (stripped in _parse_xml), so lxml's C-level tag filters apply.
def _child(el: Element | None, tag: str) -> Element | None:
    if el is None:
        return None
    return next(el.iterchildren(tag), None)


def _children(el: Element | None, tag: str) -> list[Element]:
    if el is None:
        return []
    return list(el.iterchildren(tag))


def _grandchildren(el: Element, tag: str, sub: str) -> list[Element]:
    return list(el.iterfind(f"{tag}/{sub}"))


_DECLARATION = re.compile(rb"<\?xml[^>]*\?>")
_ENCODING = re.compile(rb"""encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def _parse_xml(data: bytes, path: str | None) -> Element:
    # Some published maps carry a licence comment before the XML declaration, which XML
    # forbids. Decode by the declared encoding and blank the declaration out, keeping
    # every line and column where it was, so error positions still match the file.
    decl = _DECLARATION.search(data)
    if decl is not None and decl.start() > 0:
        enc = _ENCODING.search(decl.group(0))
        encoding = enc.group(1).decode() if enc else "utf-8"
        blanked = data[: decl.start()] + b" " * (decl.end() - decl.start()) + data[decl.end() :]
        try:
            text = blanked.decode(encoding)
        except (LookupError, UnicodeDecodeError) as exc:
            raise MapError(f"cannot decode as {encoding}: {exc}", path=path) from None
        source: bytes | str = text
    else:
        source = data
    parser = etree.XMLParser(
        remove_comments=True,
        remove_pis=True,
        huge_tree=True,
        resolve_entities=False,
        no_network=True,
    )
    try:
        root = etree.fromstring(source, parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        msg = exc.msg if hasattr(exc, "msg") and exc.msg else str(exc)
        raise MapError(f"malformed XML: {msg}", path=path, line=line) from None
    if isinstance(root.tag, str) and root.tag.startswith("{"):
        # OpenDRIVE 1.8 files may declare a default namespace; element names are what count.
        for el in root.iter():
            if isinstance(el.tag, str) and el.tag.startswith("{"):
                el.tag = el.tag.split("}", 1)[1]
    return root


def read_xodr(source: str | Path | bytes, *, path: str | None = None) -> OpenDrive:
    """Parses an OpenDRIVE document.

    Args:
        source: A file path, or the document's bytes (then ``path`` names it in errors).
        path: The name to use in error messages for a document given as bytes.

    Raises:
        MapError: For unreadable, malformed or inconsistent input.
    """
    if isinstance(source, bytes):
        data = source
    else:
        path = str(source)
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise MapError(f"cannot read file: {exc.strerror}", path=path) from None
    root = _parse_xml(data, path)
    return _Reader(path).document(root)
