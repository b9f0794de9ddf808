"""Writing a `roadsim.road.builder.Document` as OpenDRIVE 1.8 XML.

The counterpart of `roadsim.road.xodr` (the reader). Elements and attributes come in the
order of the OpenDRIVE 1.8 schema, numbers with ten significant digits (far below a
micrometre on maps of kilometres, and few enough that the last bit of a platform's
sin/cos never changes the text), so the same document gives the same bytes everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from lxml import etree

from roadsim.road.layout import Arc, Line, wrap_angle

if TYPE_CHECKING:
    from roadsim.road.builder import (
        Document,
        LaneSectionSpec,
        LaneSpec,
        RoadMarkSpec,
        RoadSpec,
        SignalSpec,
    )

__all__ = ["write_xodr"]

_DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>\n'


def write_xodr(doc: Document) -> bytes:
    """The document as UTF-8 XML; call `Document.to_xml`, which checks it first."""
    root = etree.Element("OpenDRIVE")
    west, south, east, north = doc.bounds()
    _sub(
        root,
        "header",
        {
            "revMajor": 1,
            "revMinor": 8,
            "name": doc.name,
            "version": "1",
            "date": doc.date,
            "north": north,
            "south": south,
            "east": east,
            "west": west,
            "vendor": "roadsim",
        },
    )
    for road in doc.roads:
        _write_road(root, road)
    for c in doc.controllers:
        attrs: dict[str, str | int] = {"id": c.id, "name": c.name}
        if c.sequence is not None:
            attrs["sequence"] = c.sequence
        el = _sub(root, "controller", attrs)
        for sid in c.signal_ids:
            _sub(el, "control", {"signalId": sid})
    for j in doc.junctions:
        el = _sub(root, "junction", {"id": j.id, "name": j.name, "type": j.type})
        road_key = "linkedRoad" if j.type == "direct" else "connectingRoad"
        for con in j.connections:
            cel = _sub(
                el,
                "connection",
                {
                    "id": con.id,
                    "incomingRoad": con.incoming_road,
                    road_key: con.connecting_road,
                    "contactPoint": con.contact_point,
                },
            )
            for a, b in con.lane_links:
                _sub(cel, "laneLink", {"from": a, "to": b})
        for cid, seq in j.controllers:
            _sub(el, "controller", {"id": cid, "sequence": seq})
    return _DECLARATION + bytes(etree.tostring(root, encoding="UTF-8", pretty_print=True))


def _num(value: float) -> str:
    text = f"{value:.10g}"
    return "0" if text == "-0" else text


def _sub(
    parent: etree._Element, tag: str, attrs: Mapping[str, str | float | int]
) -> etree._Element:
    return etree.SubElement(
        parent, tag, {k: v if isinstance(v, str) else _num(v) for k, v in attrs.items()}
    )


def _write_road(root: etree._Element, road: RoadSpec) -> None:
    el = _sub(
        root,
        "road",
        {
            "name": road.name,
            "length": road.length,
            "id": road.id,
            "junction": road.junction,
            "rule": "RHT",
        },
    )
    if road.predecessor is not None or road.successor is not None:
        link = _sub(el, "link", {})
        for tag, rl in (("predecessor", road.predecessor), ("successor", road.successor)):
            if rl is not None:
                attrs = {"elementType": rl.element_type, "elementId": rl.element_id}
                if rl.contact_point is not None:
                    attrs["contactPoint"] = rl.contact_point
                _sub(link, tag, attrs)
    if road.kind is not None:
        type_el = _sub(el, "type", {"s": 0.0, "type": road.kind})
        if road.speed_kmh is not None:
            _sub(type_el, "speed", {"max": road.speed_kmh, "unit": "km/h"})
    plan = _sub(el, "planView", {})
    for seg, s, pose in zip(road.plan.segments, road.plan.starts, road.plan.poses, strict=False):
        geo = _sub(
            plan,
            "geometry",
            {"s": s, "x": pose.x, "y": pose.y, "hdg": wrap_angle(pose.hdg), "length": seg.length},
        )
        if isinstance(seg, Line):
            _sub(geo, "line", {})
        elif isinstance(seg, Arc):
            _sub(geo, "arc", {"curvature": seg.curvature})
        else:
            _sub(geo, "spiral", {"curvStart": seg.curv_start, "curvEnd": seg.curv_end})
    for group, tag, records in (
        ("elevationProfile", "elevation", road.elevation),
        ("lateralProfile", "superelevation", road.superelevation),
    ):
        if records:
            parent = _sub(el, group, {})
            for r in records:
                _sub(parent, tag, {"s": r.s, "a": r.a, "b": r.b, "c": r.c, "d": r.d})
    lanes_el = _sub(el, "lanes", {})
    for sec in road.sections:
        _write_section(_sub(lanes_el, "laneSection", {"s": sec.s}), sec)
    if road.signals:
        sigs = _sub(el, "signals", {})
        for sig in road.signals:
            _write_signal(sigs, sig)


def _write_section(el: etree._Element, sec: LaneSectionSpec) -> None:
    left = sorted((ln for ln in sec.lanes if ln.id > 0), key=lambda ln: -ln.id)
    right = sorted((ln for ln in sec.lanes if ln.id < 0), key=lambda ln: -ln.id)
    if left:
        side = _sub(el, "left", {})
        for lane in left:
            _write_lane(side, lane)
    center = _sub(_sub(el, "center", {}), "lane", {"id": 0, "type": "none", "level": "false"})
    _write_marks(center, sec.center_marks)
    if right:
        side = _sub(el, "right", {})
        for lane in right:
            _write_lane(side, lane)


def _write_lane(parent: etree._Element, lane: LaneSpec) -> None:
    el = _sub(parent, "lane", {"id": lane.id, "type": lane.type, "level": "false"})
    if lane.predecessor is not None or lane.successor is not None:
        link = _sub(el, "link", {})
        if lane.predecessor is not None:
            _sub(link, "predecessor", {"id": lane.predecessor})
        if lane.successor is not None:
            _sub(link, "successor", {"id": lane.successor})
    for w in lane.widths:
        _sub(el, "width", {"sOffset": w.s, "a": w.a, "b": w.b, "c": w.c, "d": w.d})
    _write_marks(el, lane.marks)


def _write_marks(parent: etree._Element, marks: Sequence[RoadMarkSpec]) -> None:
    for m in marks:
        attrs: dict[str, str | float] = {
            "sOffset": m.s_offset,
            "type": m.type,
            "weight": m.weight,
            "color": m.color,
            "width": m.width,
        }
        if m.lane_change is not None:
            attrs["laneChange"] = m.lane_change
        _sub(parent, "roadMark", attrs)


def _write_signal(parent: etree._Element, sig: SignalSpec) -> None:
    attrs: dict[str, str | float] = {
        "s": sig.s,
        "t": sig.t,
        "id": sig.id,
        "name": sig.name,
        "dynamic": "yes" if sig.dynamic else "no",
        "orientation": sig.orientation,
        "zOffset": sig.z_offset,
        "country": sig.country,
        "type": sig.type,
        "subtype": sig.subtype,
    }
    if sig.value is not None:
        attrs["value"] = sig.value
    if sig.unit is not None:
        attrs["unit"] = sig.unit
    attrs |= {"height": sig.height, "width": sig.width}
    el = _sub(parent, "signal", attrs)
    if sig.lanes is not None:
        lo, hi = min(sig.lanes), max(sig.lanes)
        _sub(el, "validity", {"fromLane": lo, "toLane": hi})
