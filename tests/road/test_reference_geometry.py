"""Our geometry against the corpus' independent reference (libOpenDRIVE), map by map.

Where the reference itself is wrong (its README lists the cases) we do not compare:
``<border>`` lanes, ``<arc curvature="0">`` positions (inf/NaN there), and paramPoly3
roads get 2 cm instead of 1 mm because the reference approximates their arc length.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import roadsim
from roadsim.road.geometry import PARAM
from tests.conftest import CORPUS_MAPS, corpus_name
from tests.road.reference import read_reference

# The reference does not implement <border> records (its README).
BORDER_MAPS = {
    "qc-opendrive/performance_avoid_redundant_info_lane_border_valid",
    "qc-opendrive/road_lane_border_overlap_with_inner_lanes_valid",
}
TOL = 1e-3
TOL_PARAM = 2e-2
# The CSV prints s with 9 decimals; snap values that close to a section end onto it.
SNAP = 2e-9

MAPS = [p for p in CORPUS_MAPS if read_reference(corpus_name(p), "refline")]


def load(path):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", roadsim.errors.MapWarning)
        return roadsim.load_map(path)


def param_roads(net: roadsim.RoadNetwork) -> np.ndarray:
    """Per road index: does the road have a paramPoly3/poly3 geometry?"""
    ref = net.reference
    road_of_geom = np.repeat(np.arange(len(net.roads)), ref.count)
    out = np.zeros(len(net.roads), dtype=bool)
    out[road_of_geom[ref.kind == PARAM]] = True
    return out


@pytest.mark.parametrize("path", MAPS, ids=corpus_name)
def test_reference_line_matches(path):  # type: ignore[no-untyped-def]
    name = corpus_name(path)
    ref = read_reference(name, "refline")
    net = load(path)
    road = net.road_index(ref["road_id"])
    x, y, hdg, _ = net.reference.evaluate(road, ref["s"])
    z = net.elevation.evaluate(road, ref["s"])
    tol = np.where(param_roads(net)[road], TOL_PARAM, TOL)
    finite = np.isfinite(ref["x"]) & np.isfinite(ref["y"])
    err = np.hypot(x - ref["x"], y - ref["y"])
    assert np.all(err[finite] <= tol[finite]), f"max error {err[finite].max():.3g} m"
    assert np.all(np.abs(z - ref["z"])[finite] <= tol[finite])
    dh = np.abs(np.angle(np.exp(1j * (hdg - ref["hdg"]))))
    assert np.all(dh[finite] <= np.where(tol == TOL, 1e-6, 2e-3)[finite])
    assert np.allclose(net.lane_offset.evaluate(road, ref["s"]), ref["lane_offset"], atol=1e-6)
    assert np.allclose(
        net.superelevation.evaluate(road, ref["s"]), ref["superelevation"], atol=1e-6
    )
    lengths = dict(zip(ref["road_id"], ref["road_length"], strict=False))
    for rid, length in lengths.items():
        assert net.road_length[int(net.road_index(rid))] == pytest.approx(length, abs=1e-6)


@pytest.mark.parametrize(
    "path", [p for p in MAPS if read_reference(corpus_name(p))], ids=corpus_name
)
def test_lane_outer_boundaries_match(path):  # type: ignore[no-untyped-def]
    name = corpus_name(path)
    if name in BORDER_MAPS:
        pytest.skip("the reference ignores <border> records (its README)")
    ref = read_reference(name)
    net = load(path)
    road = net.road_index(ref["road_id"])
    s0, s1, s = ref["section_s0"], ref["section_s1"], ref["s"].copy()
    # The section of each row: the one holding the middle of its [s0, s1] (the printed
    # bounds are rounded, so the start itself may fall into the previous section).
    section = net.lanes.section_at(road, 0.5 * (s0 + s1))
    exact0, exact1 = net.lanes.sec_s0[section], net.lanes.sec_s1[section]
    s = np.where(np.abs(s - exact0) <= SNAP, exact0, s)
    s = np.where(np.abs(s - exact1) <= SNAP, exact1, s)
    lane_id = ref["lane_id"].astype(np.int64)
    uid = net.lanes.uid_at(section, lane_id)
    assert np.all(uid >= 0), "a reference lane is missing"
    # A lane without a type attribute is printed as "" by the reference; we call it "none".
    assert [net.lanes.type_name[u] for u in uid] == [t or "none" for t in ref["lane_type"]]

    tol = np.where(param_roads(net)[road], TOL_PARAM, TOL)
    t_outer = net.uid_t_outer(uid, s)
    assert np.all(np.abs(t_outer - ref["t_outer"]) <= TOL), np.abs(t_outer - ref["t_outer"]).max()
    width = net.uid_width(uid, s)
    assert np.all(np.abs(width - ref["width"]) <= TOL)
    x, y, z = net.to_world_index(road, s, t_outer)
    finite = np.isfinite(ref["x"]) & np.isfinite(ref["y"])
    err = np.sqrt((x - ref["x"]) ** 2 + (y - ref["y"]) ** 2 + (z - ref["z"]) ** 2)
    assert np.all(err[finite] <= tol[finite]), f"max error {err[finite].max():.3g} m"


def test_every_lane_record_is_in_the_reference():  # type: ignore[no-untyped-def]
    """The comparison is complete: each of our (road, section, lane) appears in the CSV."""
    path = next(p for p in CORPUS_MAPS if corpus_name(p) == "esmini/multi_intersections")
    ref = read_reference(corpus_name(path))
    net = load(path)
    road = net.road_index(ref["road_id"])
    section = net.lanes.section_at(road, 0.5 * (ref["section_s0"] + ref["section_s1"]))
    uid = net.lanes.uid_at(section, ref["lane_id"].astype(np.int64))
    assert set(uid.tolist()) == set(range(len(net.lanes.lanes)))
