"""`map_summary`: counts checked against the corpus' own feature table."""

from __future__ import annotations

import csv
import json
import warnings

import pytest

from roadsim import load_map
from roadsim.errors import MapWarning
from roadsim.road.summary import map_summary
from tests.conftest import CORPUS

MAPS = CORPUS / "maps"

with (CORPUS / "FEATURES.tsv").open(newline="") as _f:
    FEATURES = {row["file"]: row for row in csv.DictReader(_f, delimiter="\t")}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_counts_match_the_feature_table(name: str) -> None:
    row = FEATURES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MapWarning)
        summary = map_summary(load_map(MAPS / name))
    assert summary.opendrive_version == row["ver"]
    assert summary.geo_reference == (row["geoRef"] == "1")
    assert summary.roads == int(row["roads"])
    assert summary.junctions == int(row["junctions"])
    assert summary.direct_junctions == int(row["direct_junc"])
    assert summary.signals_static + summary.signals_dynamic == int(row["signals"])
    assert summary.signal_references == int(row["signalRef"])
    assert summary.controllers == int(row["controllers"])
    assert summary.objects == int(row["objects"])


def test_straight_road() -> None:
    net = load_map(MAPS / "esmini" / "straight_500m.xodr")
    s = map_summary(net)
    assert s.road_length_m == pytest.approx(500.0)
    assert s.lane_counts == {"border": 2, "shoulder": 2, "driving": 2}
    assert s.lane_length_m == pytest.approx(
        {"border": 1000.0, "shoulder": 1000.0, "driving": 1000.0}
    )
    half = 3.07 + 1.68 + 6.0
    assert s.bbox == pytest.approx((0.0, -half, 500.0, half))
    assert s.load_seconds == net.load_seconds > 0.0
    assert s.name == "straight_500m.xodr"  # the header has no name


def test_signals_split_by_dynamic_flag() -> None:
    s = map_summary(load_map(MAPS / "esmini" / "fabriksgatan_traffic_lights.xodr"))
    assert (s.signals_static, s.signals_dynamic) == (0, 3)


def test_bbox_covers_the_lane_borders_of_a_curved_map() -> None:
    net = load_map(MAPS / "libOpenDRIVE" / "test.xodr")
    x0, y0, x1, y1 = map_summary(net).bbox
    mesh = net.surface_mesh()
    v = mesh.vertices
    # The summary samples coarsely (25 cm chord error): the mesh may bulge past it a little.
    assert x0 - 0.3 < v[:, 0].min() and v[:, 0].max() < x1 + 0.3
    assert y0 - 0.3 < v[:, 1].min() and v[:, 1].max() < y1 + 0.3
    assert v[:, 0].min() < x0 + 0.3 and v[:, 1].max() > y1 - 0.3


def test_text_and_dict_renderings() -> None:
    s = map_summary(load_map(MAPS / "libOpenDRIVE" / "test.xodr"))
    text = s.to_text()
    assert str(s) == text
    assert "Roads        234, 5.00 km of reference line" in text
    assert "Junctions    31 (0 direct)" in text
    assert "OpenDRIVE    1.4, geoReference: yes" in text
    lane_lines = [ln.split() for ln in text.splitlines() if ln.startswith("               ")]
    assert lane_lines[0][:2] == ["driving", "754"]  # longest first
    data = json.loads(json.dumps(s.to_dict()))
    assert data["lane_counts"]["driving"] == 754
    assert data["bbox"] == list(s.bbox)
