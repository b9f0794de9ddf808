"""`map_summary`: what a road network holds, as numbers and as text (``roadsim map info``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from roadsim.road.mesh import sample_lanes

if TYPE_CHECKING:
    from roadsim.road.network import RoadNetwork

# The extent needs no centimetre accuracy: sample coarsely.
_EXTENT_CHORD_ERROR_M = 0.25
_EXTENT_STEP_M = 10.0


@dataclass(frozen=True, slots=True)
class MapSummary:
    """Counts and sizes of a road network.

    Attributes:
        name: The header's name, else the file name.
        path: The file, if any.
        opendrive_version: ``revMajor.revMinor`` of the header, e.g. ``"1.6"``.
        geo_reference: Whether the header has a ``<geoReference>``.
        roads: Number of roads.
        road_length_m: Total length of the roads' reference lines (m).
        junctions: Number of junctions, direct ones included.
        direct_junctions: Number of junctions of type ``direct``.
        lane_counts: Lane records (one per lane and lane section, center lanes left out)
            by lane type.
        lane_length_m: By lane type, the summed length of those records' lane sections
            along the reference line (m).
        signals_static, signals_dynamic: Signals by their ``dynamic`` flag
            (``signalReference`` records left out).
        signal_references: Number of ``signalReference`` records.
        controllers: Number of signal controllers.
        objects: Number of road objects.
        bbox: ``(x_min, y_min, x_max, y_max)`` of the reference lines and lane borders,
            world frame (m).
        load_seconds: Time spent loading the map (s).
    """

    name: str
    path: str | None
    opendrive_version: str
    geo_reference: bool
    roads: int
    road_length_m: float
    junctions: int
    direct_junctions: int
    lane_counts: dict[str, int]
    lane_length_m: dict[str, float]
    signals_static: int
    signals_dynamic: int
    signal_references: int
    controllers: int
    objects: int
    bbox: tuple[float, float, float, float]
    load_seconds: float

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON-ready values."""
        return dataclasses.asdict(self)

    def to_text(self) -> str:
        """A human-readable rendering, one fact per line."""
        x0, y0, x1, y1 = self.bbox
        lines = [
            f"Map          {self.name}",
            f"File         {self.path or '-'}",
            f"OpenDRIVE    {self.opendrive_version}, geoReference: {'yes' if self.geo_reference else 'no'}",
            f"Roads        {self.roads}, {_length(self.road_length_m)} of reference line",
            f"Junctions    {self.junctions} ({self.direct_junctions} direct)",
        ]
        if self.lane_counts:
            width = max(len(t) for t in self.lane_counts)
            lines.append(f"Lanes        {sum(self.lane_counts.values())} lane records by type:")
            for t in sorted(self.lane_counts, key=lambda k: -self.lane_length_m[k]):
                lines.append(
                    f"               {t:<{width}}  {self.lane_counts[t]:>6}  {_length(self.lane_length_m[t]):>10}"
                )
        else:
            lines.append("Lanes        none")
        total = self.signals_static + self.signals_dynamic
        refs = f", {self.signal_references} references" if self.signal_references else ""
        lines += [
            f"Signals      {total} ({self.signals_static} static, {self.signals_dynamic} dynamic){refs}",
            f"Controllers  {self.controllers}",
            f"Objects      {self.objects}",
            f"Extent       x {x0:.1f} .. {x1:.1f} m, y {y0:.1f} .. {y1:.1f} m "
            f"({x1 - x0:.1f} m x {y1 - y0:.1f} m)",
            f"Load time    {self.load_seconds:.3f} s",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def map_summary(net: RoadNetwork) -> MapSummary:
    """Counts and sizes of a road network; see `MapSummary`."""
    lt = net.lanes
    sec_len = lt.sec_s1 - lt.sec_s0
    counts: dict[str, int] = {}
    lengths: dict[str, float] = {}
    for uid in np.flatnonzero(lt.lane_id != 0).tolist():
        t = lt.type_name[uid]
        counts[t] = counts.get(t, 0) + 1
        lengths[t] = lengths.get(t, 0.0) + float(sec_len[lt.section[uid]])
    signals = [s for s in net.signals if s.reference_of is None]
    dynamic = sum(1 for s in signals if s.dynamic)
    header = net.header
    name = header.name.strip() if header.name else ""
    return MapSummary(
        name=name or (Path(net.path).name if net.path else "road network"),
        path=net.path,
        opendrive_version=f"{header.rev_major}.{header.rev_minor}",
        geo_reference=bool(header.geo_reference and header.geo_reference.strip()),
        roads=len(net.roads),
        road_length_m=float(net.road_length.sum()),
        junctions=len(net.junctions),
        direct_junctions=sum(1 for j in net.junctions if j.type == "direct"),
        lane_counts=counts,
        lane_length_m=lengths,
        signals_static=len(signals) - dynamic,
        signals_dynamic=dynamic,
        signal_references=len(net.signals) - len(signals),
        controllers=len(net.controllers),
        objects=len(net.objects),
        bbox=map_extent(net),
        load_seconds=float(net.load_seconds),
    )


def map_extent(net: RoadNetwork) -> tuple[float, float, float, float]:
    """``(x_min, y_min, x_max, y_max)`` of the reference lines and lane borders (m)."""
    lanes = sample_lanes(net, max_chord_error=_EXTENT_CHORD_ERROR_M, max_step=_EXTENT_STEP_M)
    sec = np.repeat(np.arange(net.lanes.sections), np.diff(lanes.grid_start))
    x, y, _, _ = net.reference.evaluate(net.lanes.sec_road[sec], lanes.s)
    xs = np.concatenate((x, lanes.points[:, 0]))
    ys = np.concatenate((y, lanes.points[:, 1]))
    if not len(xs):
        return (0.0, 0.0, 0.0, 0.0)
    return float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())


def _length(m: float) -> str:
    return f"{m / 1000:.2f} km" if m >= 1000 else f"{m:.1f} m"
