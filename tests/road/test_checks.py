"""Broken maps load with one located MapWarning per kind of oddity; values no map can
mean are a located MapError (see `roadsim.road.checks`)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from roadsim.errors import MapError, MapWarning
from roadsim.road.network import RoadNetwork
from roadsim.road.xodr import read_xodr

LANE = "<width sOffset='0' a='3.5' b='0' c='0' d='0'/>"


def line(s: float, x: float, hdg: float, length: float) -> str:
    return f"<geometry s='{s}' x='{x}' y='0' hdg='{hdg}' length='{length}'><line/></geometry>"


def road(
    rid: str, geometry: str, *, length: float = 100.0, width: str = LANE, s0: float = 0.0
) -> str:
    """A road written over several lines, so that each element has its own line number."""
    return f"""
<road id="{rid}" length="{length}" junction="-1">
<planView>
{geometry}
</planView>
<lanes>
<laneSection s="{s0}">
<center><lane id="0" type="none"/></center>
<right>
<lane id="-1" type="driving">{width}</lane>
</right>
</laneSection>
</lanes>
</road>"""


def document(*roads: str) -> bytes:
    return (
        '<?xml version="1.0"?>\n<OpenDRIVE>\n<header revMajor="1" revMinor="6"/>'
        + "".join(roads)
        + "\n</OpenDRIVE>\n"
    ).encode()


def load(xml: bytes) -> tuple[RoadNetwork, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = RoadNetwork(read_xodr(xml, path="broken.xodr"))
    assert all(issubclass(w.category, MapWarning) for w in caught)
    return net, [str(w.message) for w in caught]


# (name, road, the one warning expected). The road starts on line 4, its planView's first
# <geometry> is on line 6; with one <geometry> line, the laneSection is on line 9 and the
# lane on line 12.
ODD = [
    (
        "gap between geometries",
        road("g", line(0, 0, 0, 50) + "\n" + line(50, 50.02, 0, 50)),
        "broken.xodr:7: road g: <geometry> s=50 does not join the one before: 0.02 m apart",
    ),
    (
        "kink between geometries",
        road("k", line(0, 0, 0, 50) + "\n" + line(50, 50, 0.03, 50)),
        "broken.xodr:7: road k: <geometry> s=50 does not join the one before: a 0.03 rad kink",
    ),
    (
        "gap in s between geometries",
        road("s", line(0, 0, 0, 40) + "\n" + line(50, 50, 0, 50)),
        "broken.xodr:7: road s: <geometry> s=50 does not join the one before: "
        "starts 10 m after it ends",
    ),
    (
        "geometries overlap",
        road("o", line(0, 0, 0, 60) + "\n" + line(50, 50, 0, 50)),
        "broken.xodr:7: road o: <geometry> s=50 starts 10 m before the previous one ends (s=60)",
    ),
    (
        "planView shorter than the road",
        road("p", line(0, 0, 0, 80)),
        "broken.xodr:6: road p: the <geometry> records end at s=80, 20 m short of the road's "
        "length 100",
    ),
    (
        "planView starting after 0",
        road("q", line(5, 0, 0, 95)),
        "broken.xodr:6: road q: the first <geometry> starts at s=5, not 0",
    ),
    (
        "arc of absurd curvature",
        road(
            "a",
            "<geometry s='0' x='0' y='0' hdg='0' length='100'><arc curvature='-250'/></geometry>",
        ),
        "broken.xodr:6: road a: <arc> curvature=-250 1/m, a radius of 0.004 m",
    ),
    (
        "spiral of absurd curvature",
        road(
            "c",
            "<geometry s='0' x='0' y='0' hdg='0' length='100'>"
            "<spiral curvStart='0' curvEnd='2'/></geometry>",
        ),
        "broken.xodr:6: road c: <spiral> curvature reaches 2 1/m, a radius of 0.5 m",
    ),
    (
        "negative lane width",
        road("w", line(0, 0, 0, 100), width="<width sOffset='0' a='1' b='-0.02' c='0' d='0'/>"),
        "broken.xodr:12: road w: lane -1 of the <laneSection> s=0 has a negative width "
        "(-1 m at s=100)",
    ),
    (
        "first lane section after s = 0",
        road("f", line(0, 0, 0, 100), s0=20.0),
        "broken.xodr:9: road f: the first <laneSection> starts at s=20, not 0: the lanes "
        "before it are those of the first section, extrapolated",
    ),
]


@pytest.mark.parametrize(
    ("xml", "expected"), [(r, e) for _, r, e in ODD], ids=[n for n, _, _ in ODD]
)
def test_each_oddity_warns_once_naming_file_line_road_and_what(xml: str, expected: str) -> None:
    net, messages = load(document(xml))
    assert messages == [expected]
    # The map still loads, as the file says.
    x, _, _ = net.to_world(net.road_ids[0], 10.0, 0.0)
    assert np.isfinite(x)


def test_a_width_dipping_below_zero_by_rounding_is_fine() -> None:
    # A taper to zero whose cubic ends at -1e-9 m.
    taper = "<width sOffset='0' a='3.5' b='-0.03500000001' c='0' d='0'/>"
    _, messages = load(document(road("t", line(0, 0, 0, 100), width=taper)))
    assert messages == []


def test_joins_within_a_centimetre_are_fine() -> None:
    _, messages = load(document(road("j", line(0, 0, 0, 50) + line(50, 50.009, 0.009, 50))))
    assert messages == []


def test_thousands_of_odd_places_give_one_warning_per_kind() -> None:
    roads = [road(f"r{i}", line(0, 0, 0, 50) + line(50, 50.05, 0.02, 50)) for i in range(2000)]
    roads += [
        road(f"n{i}", line(0, 0, 0, 100), width="<width sOffset='0' a='-1' b='0' c='0' d='0'/>")
        for i in range(3)
    ]
    _, messages = load(document(*roads))
    assert len(messages) == 2
    assert re.fullmatch(
        r"broken\.xodr:6: road r0: <geometry> s=50 does not join the one before: 0\.05 m apart, "
        r"a 0\.02 rad kink \(and 1999 more such places, on 2000 roads in all\)",
        messages[0],
    )
    assert messages[1].endswith(
        "has a negative width (-1 m at s=0) (and 2 more such places, on 3 roads in all)"
    )


UNMEANT = [
    # (name, road, MapError message pattern)
    (
        "road 1e12 m long",
        road("h", line(0, 0, 0, 1e12), length=1e12),
        r"broken\.xodr:4 <road> road h: attribute length='1000000000000\.0' is too large for "
        r"any map \(at most 1e\+06 expected\)",
    ),
    (
        "coordinates of 1e308",
        road("x", "<geometry s='0' x='1e308' y='0' hdg='0' length='100'><line/></geometry>"),
        r"broken\.xodr:6 <geometry> road x: attribute x='1e308' is too large for any map "
        r"\(at most 1e\+09 expected\)",
    ),
    (
        "lane id of 1e20",
        road("l", line(0, 0, 0, 100)).replace('<lane id="-1"', '<lane id="-1e20"'),
        r"broken\.xodr:12 <lane> road l: attribute id='-1e20' is too large for any map "
        r"\(at most 1e\+09 expected\)",
    ),
    (
        "width coefficient of 1e300",
        road("c", line(0, 0, 0, 100), width="<width sOffset='0' a='3' b='0' c='0' d='1e300'/>"),
        r"broken\.xodr:12 <width> road c: attribute d='1e300' is too large for any map "
        r"\(at most 1e\+09 expected\)",
    ),
    (
        "a paramPoly3 that reaches 1e27 m",
        road(
            "p",
            "<geometry s='0' x='0' y='0' hdg='0' length='1e6'><paramPoly3 aU='0' bU='1' cU='0' "
            "dU='1e9' aV='0' bV='0' cV='0' dV='0' pRange='arcLength'/></geometry>",
            length=1e6,
        ),
        r"broken\.xodr:6 <geometry> road p: the geometry ends at x=1e\+27, y=0: farther than "
        r"1e\+09 m from the origin, which no map can mean",
    ),
    (
        "a lane width that grows to 1e15 m",
        road("w", line(0, 0, 0, 100), width="<width sOffset='0' a='3' b='0' c='0' d='1e9'/>"),
        r"broken\.xodr:12 <width> road w: the lane -1 <width> record at s=0 reaches 1e\+15 m "
        r"within its range: more than 1e\+03 m, which no map can mean",
    ),
]


@pytest.mark.parametrize(
    ("xml", "pattern"), [(r, p) for _, r, p in UNMEANT], ids=[n for n, _, _ in UNMEANT]
)
def test_values_no_map_can_mean_are_a_located_map_error(xml: str, pattern: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or other warning on the way
        with pytest.raises(MapError) as err:
            RoadNetwork(read_xodr(document(xml), path="broken.xodr"))
    assert re.fullmatch(pattern, str(err.value)), str(err.value)


def test_cli_prints_the_error_in_one_line(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from roadsim.cli import main

    bad = tmp_path / "huge.xodr"
    bad.write_bytes(document(road("h", line(0, 0, 0, 1e12), length=1e12)))
    assert main(["map", "info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"roadsim: error: {bad}:4 <road> road h: attribute length='1000000000000.0' is too "
        "large for any map (at most 1e+06 expected)\n"
    )
    odd = tmp_path / "odd.xodr"
    odd.write_bytes(document(road("g", line(0, 0, 0, 50) + "\n" + line(50, 50.02, 0, 50))))
    assert main(["map", "info", str(odd)]) == 0
    err = capsys.readouterr().err
    assert err == (
        f"roadsim: warning: {odd}:7: road g: <geometry> s=50 does not join the one before: "
        "0.02 m apart\n"
    )


def _with_mark(width: str) -> str:
    return width + (
        "<roadMark sOffset='0' type='broken' width='0.12'><type name='x'>"
        "<line length='1e-9' space='1e-9' tOffset='0' sOffset='0' width='0.12'/></type></roadMark>"
    )


EXTREME = [
    # (name, road): values each within the reader's limits, together absurd.
    (
        "tight arc over a long road",
        road(
            "a",
            "<geometry s='0' x='0' y='0' hdg='0' length='3e4'><arc curvature='999'/></geometry>",
            length=3e4,
        ),
    ),
    (
        "paramPoly3 with a cusp",
        road(
            "p",
            "<geometry s='0' x='0' y='0' hdg='0' length='100'><paramPoly3 aU='0' bU='1e-9' "
            "cU='0' dU='0' aV='0' bV='0' cV='5' dV='0' pRange='normalized'/></geometry>",
        ),
    ),
    (
        "paramPoly3 that starts at a standstill",
        road(
            "p",
            "<geometry s='0' x='0' y='0' hdg='0' length='100'><paramPoly3 aU='0' bU='0' "
            "cU='0' dU='0' aV='0' bV='0' cV='5' dV='0' pRange='normalized'/></geometry>",
        ),
    ),
    (
        "paramPoly3 of denormal length",
        road(
            "q",
            line(0, 0, 0, 100)
            + "<geometry s='100' x='100' y='0' hdg='0' length='5e-324'><paramPoly3 aU='0' "
            "bU='100' cU='0' dU='0' aV='0' bV='0' cV='0' dV='0' pRange='normalized'/></geometry>",
        ),
    ),
    (
        "superelevation spinning the road",
        road("s", line(0, 0, 0, 100)).replace(
            "<lanes>",
            "<lateralProfile><superelevation s='0' a='0' b='1e9' c='0' d='0'/>"
            "</lateralProfile><lanes>",
        ),
    ),
    ("nanometre dashes", road("d", line(0, 0, 0, 100), width=_with_mark(LANE))),
    ("999 m wide lane", road("w", line(0, 0, 0, 100), width="<width sOffset='0' a='999'/>")),
]


@pytest.mark.parametrize("xml", [r for _, r in EXTREME], ids=[n for n, _ in EXTREME])
def test_extreme_maps_load_or_give_a_located_error_never_a_crash(xml: str) -> None:
    """What a road network offers (summary, surface mesh, localisation) on maps whose values
    are each within limits: it works, or names the place, with no other warning."""
    from roadsim.road.summary import map_summary

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", MapWarning)
        try:
            net = RoadNetwork(read_xodr(document(xml), path="broken.xodr"))
            map_summary(net)
            assert net.surface_mesh().triangles.size > 0
            rid = net.road_ids[0]
            x, y, _ = net.to_world(rid, [0.0, float(net.road_length[0])], -1.0)
            net.localize(x, y)
        except MapError as err:
            assert re.match(r"broken\.xodr:4 <\w+> road \w: ", str(err)), str(err)
