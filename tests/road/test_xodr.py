"""Parsing OpenDRIVE: every corpus map loads; malformed input gives a precise MapError."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

import roadsim
from roadsim.errors import MapError, MapWarning
from roadsim.road.xodr import read_xodr
from tests.conftest import CORPUS_MAPS, corpus_name

# The warnings corpus maps give, as patterns of their messages (every other map gives none).
EXPECTED_WARNINGS = {
    # esmini's stationary_objects.xodr links road 0 to a road "1" it does not contain.
    "esmini/stationary_objects": [r"road 0: successor names road '1', which does not exist"],
    # Its planView covers 8.8 m of the 69.9 m road.
    "qc-opendrive/road_geometry_parampoly3_arclength_range_valid": [
        r":11: road 0: the <geometry> records end at s=8.80392, 61.1 m short of the road's "
        r"length 69.8968$"
    ],
}


@pytest.mark.parametrize("path", CORPUS_MAPS, ids=corpus_name)
def test_corpus_map_loads(path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = roadsim.load_map(path)
    messages = [str(w.message) for w in caught]
    expected = EXPECTED_WARNINGS.get(corpus_name(path), [])
    assert len(messages) == len(expected), messages
    for message, pattern in zip(messages, expected, strict=True):
        assert issubclass(caught[messages.index(message)].category, MapWarning)
        assert re.search(pattern, message), message
    assert len(net.roads) > 0
    assert net.load_seconds > 0


def test_corpus_has_57_maps() -> None:
    assert len(CORPUS_MAPS) == 57


def test_comment_before_declaration_keeps_line_numbers(tmp_path: Path) -> None:
    text = (
        "<!-- licence\n   text -->\n<?xml version='1.0' encoding='UTF-8'?>\n"
        "<OpenDRIVE>\n<header revMajor='1' revMinor='6'/>\n"
        "<road id='1' length='oops' junction='-1'/>\n</OpenDRIVE>\n"
    )
    path = tmp_path / "commented.xodr"
    path.write_text(text)
    with pytest.raises(MapError) as err:
        read_xodr(path)
    assert err.value.line == 6
    assert "length='oops' is not a number" in str(err.value)


def test_header_and_georeference_are_kept() -> None:
    net = roadsim.load_map(next(p for p in CORPUS_MAPS if p.stem == "straight_500m"))
    assert net.header.rev_major == 1 and net.header.rev_minor == 4
    assert net.header.geo_reference is not None and "+proj" in net.header.geo_reference


def test_left_hand_traffic_is_read() -> None:
    net = roadsim.load_map(next(p for p in CORPUS_MAPS if p.stem == "e6mini-lht"))
    assert net.road_lht.all()


def test_unknown_element_warns_once(tmp_path: Path) -> None:
    path = tmp_path / "unknown.xodr"
    path.write_text(_road_xml(extra="<fancyThing/><fancyThing/><otherThing/>"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        roadsim.load_map(path)
    texts = [str(w.message) for w in caught if issubclass(w.category, MapWarning)]
    assert len(texts) == 2
    assert any("<fancyThing>" in t for t in texts) and any("<otherThing>" in t for t in texts)


def test_file_without_header_loads_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "headless.xodr"
    path.write_text(re.sub(r"\n\s*<header[^>]*/>", "", _road_xml()))
    with pytest.warns(MapWarning) as caught:
        net = roadsim.load_map(path)
    assert [str(w.message) for w in caught] == [
        f"{path}:2: no <header>; read with the defaults (OpenDRIVE 1.4, no name, no geoReference)"
    ]
    assert (net.header.rev_major, net.header.rev_minor, net.header.name) == (1, 4, "")
    assert net.road_ids == ("7",) and float(net.lane_width("7", -1, 50.0)) == 3.5


def _road_xml(
    *,
    length: str = "100",
    geometry: str = "<geometry s='0' x='0' y='0' hdg='0' length='100'><line/></geometry>",
    extra: str = "",
    junctions: str = "",
    road_extra: str = "",
) -> str:
    return f"""<?xml version="1.0"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="6" name="t"/>
  <road id="7" length="{length}" junction="-1">
    {road_extra}
    <planView>
      {geometry}
    </planView>
    <lanes>
      <laneSection s="0">
        <center><lane id="0" type="none"/></center>
        <right><lane id="-1" type="driving"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right>
      </laneSection>
    </lanes>
    {extra}
  </road>
  {junctions}
</OpenDRIVE>
"""


MALFORMED = [
    # (name, file text, regex the message must match, line)
    ("truncated XML", _road_xml()[:300], r"malformed XML", None),
    ("no geometry", _road_xml(geometry=""), r"<planView> road 7: road has no <geometry>", 6),
    (
        "junction names a missing road",
        _road_xml(
            junctions="<junction id='1'><connection id='0' incomingRoad='7' "
            "connectingRoad='99' contactPoint='start'/></junction>"
        ),
        r"<connection>: connectingRoad='99' names a road that does not exist \(junction 1\)",
        17,
    ),
    (
        "negative road length",
        _road_xml(length="-5"),
        r"<road> road 7: length='-5' must be positive",
        4,
    ),
    (
        "negative geometry length",
        _road_xml(geometry="<geometry s='0' x='0' y='0' hdg='0' length='-1'><line/></geometry>"),
        r"<geometry> road 7: length='-1' is negative",
        7,
    ),
    (
        "non-numeric attribute",
        _road_xml(geometry="<geometry s='0' x='abc' y='0' hdg='0' length='100'><line/></geometry>"),
        r"<geometry> road 7: attribute x='abc' is not a number",
        7,
    ),
    (
        "non-finite attribute",
        _road_xml(geometry="<geometry s='0' x='0' y='nan' hdg='0' length='100'><line/></geometry>"),
        r"attribute y='nan' is not a finite number",
        7,
    ),
    (
        "unknown geometry shape",
        _road_xml(geometry="<geometry s='0' x='0' y='0' hdg='0' length='100'><wiggle/></geometry>"),
        r"<wiggle> road 7: unknown geometry shape",
        7,
    ),
    (
        "road link to a missing junction is fine, but a road in a missing junction is not",
        _road_xml().replace('junction="-1"', 'junction="42"'),
        r"junction='42' names a junction that does not exist",
        4,
    ),
    (
        "wrong root",
        "<?xml version='1.0'?><Road/>",
        r"root element is <Road>, expected <OpenDRIVE>",
        1,
    ),
    (
        "bad pRange",
        _road_xml(
            geometry="<geometry s='0' x='0' y='0' hdg='0' length='100'>"
            "<paramPoly3 aU='0' bU='1' cU='0' dU='0' aV='0' bV='0' cV='0' dV='0' pRange='weird'/>"
            "</geometry>"
        ),
        r"pRange='weird' is neither 'arcLength' nor 'normalized'",
        7,
    ),
    (
        "bad lane width",
        _road_xml().replace('a="3.5"', 'a="wide"'),
        r"<width> road 7: attribute a='wide' is not a number",
        12,
    ),
    (
        "duplicate road id",
        _road_xml().replace("</OpenDRIVE>", _road_xml().split("<OpenDRIVE>")[1]),
        r"duplicate road id '7'",
        None,
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "pattern", "line"), MALFORMED, ids=[m[0] for m in MALFORMED]
)
def test_malformed_input_gives_precise_map_error(
    tmp_path: Path, name: str, text: str, pattern: str, line: int | None
) -> None:
    path = tmp_path / "bad.xodr"
    path.write_text(text)
    with warnings.catch_warnings(), pytest.raises(MapError) as err:
        warnings.simplefilter("ignore", MapWarning)  # an unknown shape is also an unknown element
        roadsim.load_map(path)
    message = str(err.value)
    assert message.startswith(str(path)), message
    assert re.search(pattern, message), message
    if line is not None:
        assert err.value.line == line, message


def test_missing_file_and_unknown_builtin_name() -> None:
    with pytest.raises(MapError, match="cannot read file"):
        roadsim.load_map("/nonexistent/map.xodr")
    with pytest.raises(MapError, match="no built-in map of that name"):
        roadsim.load_map("atlantis")
