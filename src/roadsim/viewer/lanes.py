"""The lanes a viewer draws: every lane section sampled once, and those near the ego picked.

The road network never changes during a run, so its lane borders and road-mark pieces are
sampled once (`roadsim.road.mesh.sample_road_surface`, coarser than the ray tracer's mesh:
a viewer needs no 2 cm chord error) and kept as per-section blocks. Each frame the
lane sensor asks which sections lie within ``radius`` of the ego; the answer changes only
when the ego has moved `REANCHOR_FRACTION` of the radius from where the set was last
picked, and the set is then picked with that much margin, so every lane within ``radius``
of the ego is always in it. The set's *version* changes only when its content changes,
and a client rebuilds its lane meshes only then (the seed rebuilt every lane on each
update).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from roadsim._types import FloatArray, IntArray
from roadsim.road.lanes import LANE_TYPES
from roadsim.road.mesh import sample_road_surface
from roadsim.road.network import RoadNetwork

__all__ = ["DEFAULT_RADIUS_M", "LaneSelection", "LaneTable"]

#: Default radius around the ego within which lanes are sent (m).
DEFAULT_RADIUS_M = 400.0
#: The ego moves this fraction of the radius before the set of sections is picked again.
REANCHOR_FRACTION = 0.25
#: Sampling of the borders for display: looser than the ray tracer's mesh.
_CHORD_ERROR_M = 0.05
_MAX_STEP_M = 10.0


@dataclass(frozen=True, slots=True)
class LaneSelection:
    """The sections picked around one anchor, and the version that names their content."""

    version: int
    sections: IntArray


class LaneTable:
    """A network's lane borders and road marks by section, in float32 relative to ``origin``.

    Args:
        net: The road network.

    Attributes:
        origin: (3,) world position subtracted from every point sent (m): the centre of the
            network's extent, so that float32 keeps millimetres on a large map.
        mark_types, colors: Names of the road-mark type and colour codes.
    """

    def __init__(self, net: RoadNetwork) -> None:
        sampling = sample_road_surface(net, max_chord_error=_CHORD_ERROR_M, max_step=_MAX_STEP_M)
        lanes, marks = sampling.lanes, sampling.marks
        lt = net.lanes
        points = lanes.points
        if points.size:
            lo, hi = points.min(axis=0), points.max(axis=0)
            self.origin: FloatArray = np.round(0.5 * (lo + hi))
            self.origin[2] = 0.0
        else:
            self.origin = np.zeros(3)
        self._points = (points - self.origin).astype(np.float32)
        self._point_start = lanes.point_start
        self._rows = np.diff(lanes.grid_start).astype(np.int32)
        self._cols = lt.sec_count.astype(np.int32)
        self._first_uid = lt.sec_first_uid
        self._lane_id = lt.lane_id.astype(np.int8)
        self._lane_type = lt.type_code.astype(np.uint8)
        n_sec = lt.sections
        # Each section's bounding circle, to pick those near the ego.
        self._centre = np.zeros((n_sec, 2))
        self._extent = np.zeros(n_sec)
        for k in range(n_sec):
            block = points[lanes.point_start[k] : lanes.point_start[k + 1], :2]
            if block.size:
                lo2, hi2 = block.min(axis=0), block.max(axis=0)
                self._centre[k] = 0.5 * (lo2 + hi2)
                self._extent[k] = 0.5 * float(np.hypot(*(hi2 - lo2)))
        # Road-mark pieces, by the section of the lane they belong to.
        surfaces = sampling.surfaces
        piece_section = np.array([surfaces[int(s)].section for s in marks.surface], dtype=np.int64)
        self.mark_types: tuple[str, ...] = tuple(sorted({s.type for s in surfaces if s.kind == "road_mark"}))
        self.colors: tuple[str, ...] = tuple(sorted({s.color for s in surfaces if s.kind == "road_mark"}))
        type_code = {name: i for i, name in enumerate(self.mark_types)}
        color_code = {name: i for i, name in enumerate(self.colors)}
        self._mark_section = piece_section
        self._mark_start = marks.piece_start
        self._mark_points = (marks.points - self.origin).astype(np.float32)
        self._mark_width = marks.width.astype(np.float32)
        self._mark_type = np.array(
            [type_code[surfaces[int(s)].type] for s in marks.surface], dtype=np.uint8
        )
        self._mark_color = np.array(
            [color_code[surfaces[int(s)].color] for s in marks.surface], dtype=np.uint8
        )
        self._cache: tuple[int, dict[str, Any]] | None = None

    @property
    def sections(self) -> int:
        return int(self._rows.shape[0])

    def near(self, x: float, y: float, radius: float) -> IntArray:
        """Sections with a point within ``radius`` of (x, y) (world frame, m), sorted."""
        if not math.isfinite(radius):
            return np.flatnonzero(self._rows > 0)
        d = np.hypot(self._centre[:, 0] - x, self._centre[:, 1] - y) - self._extent
        return np.flatnonzero((d <= radius) & (self._rows > 0))

    def message(self, selection: LaneSelection) -> dict[str, Any]:
        """The lane sensor's content for a selection (built once per version)."""
        if self._cache is not None and self._cache[0] == selection.version:
            return self._cache[1]
        sec = selection.sections
        point_blocks = [self._points[self._point_start[k] : self._point_start[k + 1]] for k in sec]
        col_idx = [np.arange(self._first_uid[k], self._first_uid[k] + self._cols[k]) for k in sec]
        cols = np.concatenate(col_idx) if col_idx else np.zeros(0, dtype=np.int64)
        pieces = np.flatnonzero(np.isin(self._mark_section, sec))
        counts = np.diff(self._mark_start)[pieces]
        mark_points = [self._mark_points[self._mark_start[p] : self._mark_start[p + 1]] for p in pieces]
        msg: dict[str, Any] = {
            "version": selection.version,
            "sections": sec.astype(np.int32).tobytes(),
            "rows": self._rows[sec].tobytes(),
            "cols": self._cols[sec].tobytes(),
            "points": _concat(point_blocks).tobytes(),
            "lane_id": self._lane_id[cols].tobytes(),
            "lane_type": self._lane_type[cols].tobytes(),
            "mark_start": np.concatenate(([0], np.cumsum(counts))).astype(np.int32).tobytes(),
            "mark_points": _concat(mark_points).tobytes(),
            "mark_width": self._mark_width[pieces].tobytes(),
            "mark_type": self._mark_type[pieces].tobytes(),
            "mark_color": self._mark_color[pieces].tobytes(),
            "lane_types": list(LANE_TYPES),
            "mark_types": list(self.mark_types),
            "colors": list(self.colors),
        }
        self._cache = (selection.version, msg)
        return msg


class LanePicker:
    """Picks the sections around a moving ego, with hysteresis (see the module docstring).

    Args:
        table: The network's lanes.
        radius: Lanes within this distance of the ego are always in the set (m); inf: all.
    """

    def __init__(self, table: LaneTable, radius: float) -> None:
        self.table = table
        self.radius = radius
        self._anchor: tuple[float, float] | None = None
        self.selection = LaneSelection(0, np.zeros(0, dtype=np.int64))

    def update(self, x: float, y: float) -> LaneSelection:
        """The selection for the ego at (x, y); a new version only if the set changed."""
        if self._anchor is not None and (
            not math.isfinite(self.radius)
            or math.hypot(x - self._anchor[0], y - self._anchor[1])
            <= REANCHOR_FRACTION * self.radius
        ):
            return self.selection
        self._anchor = (x, y)
        sections = self.table.near(x, y, self.radius * (1.0 + REANCHOR_FRACTION))
        if self.selection.version == 0 or not np.array_equal(sections, self.selection.sections):
            self.selection = LaneSelection(self.selection.version + 1, sections)
        return self.selection


def _concat(blocks: list[np.ndarray[Any, Any]]) -> np.ndarray[Any, Any]:
    if not blocks:
        return np.zeros((0, 3), dtype=np.float32)
    return np.ascontiguousarray(np.concatenate(blocks), dtype=np.float32)
