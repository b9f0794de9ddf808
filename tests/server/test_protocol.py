"""The wire protocol: requests read and refused, arrays beside msgpack (no sockets)."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roadsim.server import protocol as p

LIMITS = p.Limits(max_request_bytes=4096)


def _req(type_: str, **args: object) -> list[bytes]:
    return [msgpack.packb({"v": p.PROTOCOL_VERSION, "id": 7, "type": type_, "args": args})]


def test_a_request_is_read_into_its_schema() -> None:
    req = p.decode_request(_req("control", actor=3, throttle=0.5, steering=-0.2), LIMITS)
    assert req.id == 7 and req.type == "control"
    assert isinstance(req.args, p.Control)
    assert (req.args.actor, req.args.throttle, req.args.steering) == (3, 0.5, -0.2)


@pytest.mark.parametrize(
    ("frames", "code", "words"),
    [
        ([b"\xc1"], "bad_message", "not a msgpack"),
        ([msgpack.packb([1, 2])], "bad_message", "expected a msgpack map"),
        ([b"a", b"b"], "bad_message", "one frame"),
        ([msgpack.packb({"v": 1, "type": "tick"})], "bad_message", "id: expected an integer"),
        ([msgpack.packb({"v": 9, "id": 1, "type": "tick"})], "version", "speaks protocol version 1"),
        (_req("fly"), "unknown_type", "expected one of hello"),
        (_req("tick", count=0), "bad_request", "args.count"),
        (_req("tick", count="3"), "bad_request", "args.count"),
        (_req("control", steering=float("nan")), "bad_request", "args.steering"),
        (_req("spawn", x=1.0), "bad_request", r"as x and y \(with heading\), or as road, lane and s"),
        (_req("spawn", x=1.0, y=2.0, road="1", lane=-1, s=3.0), "bad_request", "not both"),
        (_req("spawn", road="1", lane=-1.5, s=3.0), "bad_request", "args.lane"),
        (_req("spawn", x=1.0, y=2.0, colour="red"), "bad_request", "args.colour"),
        (_req("load"), "bad_request", "exactly one of scenario"),
        ([b"\x00" * 5000], "too_large", "at most 4096 bytes"),
    ],
)
def test_bad_requests_are_refused_with_a_code_and_what_was_expected(
    frames: list[bytes], code: str, words: str
) -> None:
    with pytest.raises(p.ProtocolError, match=words) as info:
        p.decode_request(frames, LIMITS)
    assert info.value.code == code


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_are_a_request_or_a_protocol_error(raw: bytes) -> None:
    try:
        p.decode_request([raw], LIMITS)
    except p.ProtocolError as exc:
        assert exc.code in p.ERROR_CODES


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([*p.REQUESTS, "nope"]),
    st.dictionaries(st.sampled_from(["x", "y", "actor", "count", "mode", "seed", "spec", "ids"]),
                    _values, max_size=4),
    st.one_of(st.just(1), _values),
)
def test_any_msgpack_request_is_read_or_refused(kind: str, args: dict, version: object) -> None:
    raw = msgpack.packb({"v": version, "id": 1, "type": kind, "args": args})
    try:
        p.decode_request([raw], LIMITS)
    except p.ProtocolError as exc:
        assert exc.code in p.ERROR_CODES


def test_arrays_travel_as_frames_and_come_back_equal() -> None:
    enc = p.Encoder()
    arrays = {
        "f": np.arange(12, dtype=np.float32).reshape(3, 4),
        "i": np.array([-1, 5], dtype=np.int64),
        "b": np.array([True, False]),
        "e": np.zeros((0, 3)),
    }
    frames = enc.message({"a": {k: enc.array(v) for k, v in arrays.items()}})
    header = msgpack.unpackb(frames[0])
    back = p.decode_arrays(header, [bytes(f) for f in frames])["a"]
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and np.array_equal(back[k], v)


@pytest.mark.parametrize(
    "ref",
    [
        {"$nd": 5, "dtype": "<f8", "shape": [1]},
        {"$nd": 1, "dtype": "|O", "shape": [1]},
        {"$nd": 1, "dtype": "<f8", "shape": [3]},
        {"$nd": 1, "dtype": "<f8", "shape": "1"},
    ],
)
def test_array_references_that_do_not_fit_their_frames_are_refused(ref: dict) -> None:
    with pytest.raises(p.ProtocolError):
        p.decode_arrays(ref, [b"", np.zeros(1).tobytes()])


def test_docs_protocol_md_documents_every_request_and_argument() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text()
    for name, schema in p.REQUESTS.items():
        assert f"### `{name}`" in doc, name
        section = doc.split(f"### `{name}`", 1)[1].split("\n### ", 1)[0]
        for field in schema.model_fields:
            assert f"`{field}`" in section, f"{name}.{field}"
    for code in p.ERROR_CODES:
        assert f"| `{code}` |" in doc, code
