"""Finding the record in force at (road, s) far into a big map.

Records of all roads are searched on one axis, ``base[road] + s``. Where ``base`` is large
that sum rounds away the last digits of s, and an s just before a record's start used to be
evaluated with that record. Where records do not join exactly (the 1-2 cm gaps and
0.02-0.06 rad kinks of converted maps, a laneOffset step) lane edges moved by decimetres.
"""

from __future__ import annotations

import bisect
import math

import numpy as np
import pytest

from roadsim.errors import MapWarning
from roadsim.road.network import RoadNetwork
from roadsim.road.polynomials import RecordSearch
from roadsim.road.xodr import read_xodr

# Five long roads first put the next road's records 5e6 m along the search axis, where a
# float64 step is 9.3e-10 m.
FILLER = "".join(
    f"""<road id="far{i}" length="1e6" junction="-1">
  <planView><geometry s="0" x="0" y="-{100 + 10 * i}" hdg="0" length="1e6"><line/></geometry>
  </planView>
  <lanes><laneSection s="0"><center><lane id="0" type="none"/></center>
  <right><lane id="-1" type="driving"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right>
  </laneSection></lanes></road>"""
    for i in range(5)
)
GAP, KINK = 0.015, 0.06


def far_road(*, step: str) -> str:
    """Road X: records change at s = 50, by a geometry gap and kink or by a step in one
    of laneOffset, lane width, elevation and superelevation."""
    second = f"<geometry s='50' x='{50 + GAP}' y='0' hdg='{KINK}' length='50'><line/></geometry>"
    geometry = "<geometry s='0' x='0' y='0' hdg='0' length='50'><line/></geometry>"
    geometry += (
        second
        if step == "geometry"
        else second.replace(f"{50 + GAP}", "50").replace(f"hdg='{KINK}'", "hdg='0'")
    )
    width = "<width sOffset='0' a='3.5' b='0' c='0' d='0'/>"
    if step == "width":
        width += "<width sOffset='50' a='3.0' b='0' c='0' d='0'/>"
    offset = (
        "<laneOffset s='0' a='0' b='0' c='0' d='0'/><laneOffset s='50' a='0.5' b='0' c='0' d='0'/>"
        if step == "laneOffset"
        else ""
    )
    profiles = ""
    if step == "elevation":
        profiles = (
            "<elevationProfile><elevation s='0' a='0' b='0' c='0' d='0'/>"
            "<elevation s='50' a='1' b='0' c='0' d='0'/></elevationProfile>"
        )
    if step == "superelevation":
        profiles = (
            "<lateralProfile><superelevation s='0' a='0' b='0' c='0' d='0'/>"
            "<superelevation s='50' a='0.05' b='0' c='0' d='0'/></lateralProfile>"
        )
    return f"""<?xml version="1.0"?>
<OpenDRIVE><header revMajor="1" revMinor="6"/>{FILLER}
<road id="X" length="100" junction="-1">
  <planView>{geometry}</planView>{profiles}
  <lanes>{offset}<laneSection s="0"><center><lane id="0" type="none"/></center>
  <right><lane id="-1" type="driving">{width}</lane></right></laneSection></lanes>
</road></OpenDRIVE>"""


@pytest.mark.parametrize("step", ["geometry", "laneOffset", "width", "elevation", "superelevation"])
def test_an_s_just_before_a_record_uses_the_record_before(step: str) -> None:
    xml = far_road(step=step).encode()
    if step == "geometry":
        with pytest.warns(MapWarning, match=r"does not join the one before: 0.015 m apart"):
            net = RoadNetwork(read_xodr(xml, path="far.xodr"))
    else:
        net = RoadNetwork(read_xodr(xml, path="far.xodr"))
    s = 50.0 - np.array([1e-12, 1e-11, 1e-10, 3e-10, 1e-9, 2e-9])
    road = np.full(s.size, int(net.road_index("X")))
    uid = net.lane_uid("X", -1, s)
    t = net.uid_t_outer(uid, s)
    x, y, z = net.to_world_index(road, s, t)
    # Before s = 50 only the first records hold: the line along x, lane -1 3.5 m wide,
    # no offset, flat, level.
    assert np.array_equal(t, np.full(s.size, -3.5))
    assert np.abs(x - s).max() < 1e-12 and np.array_equal(y, np.full(s.size, -3.5))
    assert np.array_equal(z, np.zeros(s.size))
    # At s = 50 the second records hold.
    t50 = float(net.uid_t_outer(net.lane_uid("X", -1, 50.0).reshape(1), np.array([50.0]))[0])
    x50, y50, z50 = (float(v[0]) for v in net.to_world("X", [50.0], t50))
    expected = {
        "geometry": (50 + GAP + 3.5 * math.sin(KINK), -3.5 * math.cos(KINK), 0.0),
        "laneOffset": (50.0, -3.0, 0.0),
        "width": (50.0, -3.0, 0.0),
        "elevation": (50.0, -3.5, 1.0),
        "superelevation": (50.0, -3.5 * math.cos(0.05), -3.5 * math.sin(0.05)),
    }[step]
    assert (x50, y50, z50) == pytest.approx(expected, abs=1e-9)


def test_record_search_matches_a_search_per_owner() -> None:
    rng = np.random.default_rng(27)
    n_owners = 200
    spans = rng.uniform(1e5, 1e7, n_owners)
    starts: list[list[float]] = []
    for span in spans:
        k = int(rng.integers(0, 6))
        # Starts within a rounding step of each other, as zero-length records give.
        own = np.sort(rng.uniform(0.0, span, k))
        for j in range(1, min(k, 4)):
            own[j] = np.nextafter(own[j - 1], np.inf)
        starts.append(own.tolist())
    base = np.concatenate(([0.0], np.cumsum(spans + 1.0)[:-1]))
    counts = np.array([len(o) for o in starts], dtype=np.int64)
    first = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    start = np.array([v for o in starts for v in o])
    owner = np.repeat(np.arange(n_owners), 40)
    # Queries at, and one float step either side of, every start, and at random.
    s = rng.uniform(0.0, spans[owner])
    for i in range(n_owners):
        picks = [v for own in starts[i] for v in (np.nextafter(own, -np.inf), own)]
        s[i * 40 : i * 40 + len(picks)] = picks[:40]
    got = RecordSearch(start, base, first, counts).find(owner, s)
    for o, sv, g in zip(owner, s, got, strict=True):
        own = starts[o]
        k = max(bisect.bisect_right(own, sv) - 1, 0)
        assert g == (first[o] + k if own else first[o] - 1)
