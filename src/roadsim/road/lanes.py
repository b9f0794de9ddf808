"""Lane sections and lanes packed into flat arrays, and lane boundaries evaluated from them.

Every (road, lane section, lane) gets a stable integer id, its *uid*: roads in file order,
their sections in order of s, and within a section the lanes from the leftmost to the
rightmost (center lane 0 included). Arrays indexed by uid describe each lane.

A lane's outer boundary is (OpenDRIVE 1.8, 9.3 and 9.5.3-9.5.4)::

    t_outer = laneOffset(s) + sign(id) * sum of the widths from lane +-1 out to this lane

where a lane described by ``<border>`` records contributes its border directly, measured
from the center lane (the widths of the lanes outside it are added to it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.road.model import Cubic, Lane, Road
from roadsim.road.polynomials import PiecewiseCubics

#: Lane types of OpenDRIVE 1.8 (9.5.2), plus the deprecated ones still found in files.
LANE_TYPES: tuple[str, ...] = (
    "none",
    "driving",
    "stop",
    "shoulder",
    "biking",
    "sidewalk",
    "border",
    "restricted",
    "parking",
    "bidirectional",
    "median",
    "special1",
    "special2",
    "special3",
    "roadWorks",
    "tram",
    "rail",
    "entry",
    "exit",
    "offRamp",
    "onRamp",
    "connectingRamp",
    "bus",
    "taxi",
    "HOV",
    "mwyEntry",
    "mwyExit",
    "walking",
    "curb",
    "slipLane",
    "shared",
)
_TYPE_CODE = {name.lower(): i for i, name in enumerate(LANE_TYPES)}

#: Lane types a car may drive on.
DRIVABLE_TYPES: frozenset[str] = frozenset(
    {
        "driving",
        "entry",
        "exit",
        "offRamp",
        "onRamp",
        "connectingRamp",
        "bidirectional",
        "slipLane",
        "mwyEntry",
        "mwyExit",
        "bus",
        "taxi",
        "HOV",
        "stop",
    }
)


def lane_type_code(name: str) -> int:
    """The index of a lane type in `LANE_TYPES` (unknown types count as ``none``)."""
    return _TYPE_CODE.get(name.lower(), 0)


class LaneRecords:
    """All lane sections and lanes (lane records) of a network, as arrays by section and
    by uid.

    Section arrays (index: global section number): ``sec_road``, ``sec_s0``, ``sec_s1``,
    ``sec_first_uid``, ``sec_count`` (lanes including the center lane), ``sec_center_uid``.

    Lane arrays (index: uid): ``road``, ``section``, ``lane_id``, ``type_code``,
    ``inner`` (uid of the next lane toward the center; the center lane itself for lanes
    +-1; -1 for the center lane), ``has_border``.
    """

    def __init__(self, roads: Sequence[Road]) -> None:
        sec_road: list[int] = []
        sec_s0: list[float] = []
        sec_s1: list[float] = []
        sec_first: list[int] = []
        sec_count: list[int] = []
        lanes: list[Lane] = []
        lane_road: list[int] = []
        lane_sec: list[int] = []
        widths: list[Sequence[Cubic]] = []
        borders: list[Sequence[Cubic]] = []
        spans: list[float] = []
        self.road_first_section: IntArray = np.zeros(len(roads), dtype=np.int64)
        self.road_section_count: IntArray = np.zeros(len(roads), dtype=np.int64)
        for r, road in enumerate(roads):
            self.road_first_section[r] = len(sec_road)
            self.road_section_count[r] = len(road.sections)
            for k, sec in enumerate(road.sections):
                s1 = road.sections[k + 1].s if k + 1 < len(road.sections) else road.length
                s1 = max(s1, sec.s)
                sec_idx = len(sec_road)
                sec_road.append(r)
                sec_s0.append(sec.s)
                sec_s1.append(s1)
                sec_first.append(len(lanes))
                sec_count.append(len(sec.lanes))
                for lane in sec.lanes:
                    lanes.append(lane)
                    lane_road.append(r)
                    lane_sec.append(sec_idx)
                    widths.append(lane.widths)
                    borders.append(lane.borders)
                    spans.append(s1 - sec.s)
        self.sections = len(sec_road)
        self.sec_road: IntArray = np.array(sec_road, dtype=np.int64)
        self.sec_s0: FloatArray = np.array(sec_s0, dtype=np.float64)
        self.sec_s1: FloatArray = np.array(sec_s1, dtype=np.float64)
        self.sec_first_uid: IntArray = np.array(sec_first, dtype=np.int64)
        self.sec_count: IntArray = np.array(sec_count, dtype=np.int64)

        self.lanes: tuple[Lane, ...] = tuple(lanes)
        self.road: IntArray = np.array(lane_road, dtype=np.int64)
        self.section: IntArray = np.array(lane_sec, dtype=np.int64)
        self.lane_id: IntArray = np.array([lane.id for lane in lanes], dtype=np.int64)
        self.type_code: IntArray = np.array(
            [lane_type_code(lane.type) for lane in lanes], dtype=np.int64
        )
        self.type_name: tuple[str, ...] = tuple(lane.type for lane in lanes)
        self.has_border: BoolArray = np.array([bool(lane.borders) for lane in lanes], dtype=bool)
        # Within a section lanes run from the leftmost (highest id) to the rightmost, so
        # the center lane sits at first + (number of left lanes).
        n_left = np.array(
            [sum(1 for ln in self.lanes_of(i) if ln.id > 0) for i in range(self.sections)],
            dtype=np.int64,
        )
        self.sec_center_uid: IntArray = self.sec_first_uid + n_left
        uid = np.arange(len(lanes), dtype=np.int64)
        inner = np.where(self.lane_id > 0, uid + 1, uid - 1)
        self.inner: IntArray = np.where(self.lane_id == 0, -1, inner)
        assert np.all(self.inner[self.lane_id != 0] >= 0)
        self.widths = PiecewiseCubics(widths, spans)
        self.borders = PiecewiseCubics(borders, spans)
        self.max_depth = int(np.max(np.abs(self.lane_id))) if lanes else 0
        self._uid_index = {
            key: u
            for u, key in enumerate(zip(lane_road, lane_sec, (ln.id for ln in lanes), strict=True))
        }

    def lanes_of(self, section: int) -> tuple[Lane, ...]:
        f = int(self.sec_first_uid[section])
        return self.lanes[f : f + int(self.sec_count[section])]

    def section_at(self, road: IntArray, s: FloatArray) -> IntArray:
        """Global index of the lane section holding each (road, s).

        Exactly at a section boundary the later section applies (OpenDRIVE 1.8, 9.3: a
        section is valid from its s on).
        """
        first = self.road_first_section[road]
        count = self.road_section_count[road]
        idx = first.copy()
        # Roads have few sections; a masked scan over the deepest road is cheap.
        for k in range(1, int(count.max()) if count.size else 0):
            nxt = first + k
            ok = (k < count) & (s >= self.sec_s0[np.minimum(nxt, self.sections - 1)])
            idx = np.where(ok, nxt, idx)
        return idx

    def uid(self, road: int, section: int, lane_id: int) -> int:
        """The uid of a lane, or -1 if that section has no such lane."""
        return self._uid_index.get((road, section, lane_id), -1)

    def uid_at(self, section: IntArray, lane_id: IntArray) -> IntArray:
        """Vectorised uid lookup from global section index and lane id (-1 if absent)."""
        center = self.sec_center_uid[section]
        uid = center - lane_id
        first = self.sec_first_uid[section]
        ok = (uid >= first) & (uid < first + self.sec_count[section])
        uid_c = np.clip(uid, 0, len(self.lanes) - 1)
        ok &= self.lane_id[uid_c] == lane_id
        return np.where(ok, uid, -1)

    def width(self, uid: IntArray, s: FloatArray) -> FloatArray:
        """Width of each lane at road position ``s`` (m); 0 for center lanes."""
        inner = self.t_outer(self.inner_or_self(uid), s, np.zeros_like(s))
        outer = self.t_outer(uid, s, np.zeros_like(s))
        return np.where(self.lane_id[uid] == 0, 0.0, np.abs(outer - inner))

    def inner_or_self(self, uid: IntArray) -> IntArray:
        return np.where(self.inner[uid] >= 0, self.inner[uid], uid)

    def t_outer(self, uid: IntArray, s: FloatArray, lane_offset: FloatArray) -> FloatArray:
        """Lateral position of each lane's outer boundary, relative to the reference line.

        Args:
            uid: Lane uids, shape (N,).
            s: Positions along the road (m), shape (N,); evaluated with the polynomials of
                the lane's own section, even at or past its ends.
            lane_offset: laneOffset at s (m), shape (N,).
        """
        ds = s - self.sec_s0[self.section[uid]]
        total = np.zeros(uid.shape)
        sign = np.sign(self.lane_id[uid]).astype(np.float64)
        cur = uid.copy()
        active = self.lane_id[cur] != 0
        for _ in range(self.max_depth + 1):
            if not active.any():
                break
            c = cur[active]
            border = self.has_border[c]
            value = np.where(
                border,
                self.borders.evaluate(c, ds[active]) * sign[active],
                self.widths.evaluate(c, ds[active]),
            )
            total[active] += value
            stop = border | (self.lane_id[self.inner[c]] == 0)
            idx = np.flatnonzero(active)
            active[idx[stop]] = False
            cur[idx[~stop]] = self.inner[c[~stop]]
        return lane_offset + sign * total
