"""`roadsim.compiling`: the warmup's list of kernel signatures and how it deals them out."""

from __future__ import annotations

import subprocess
import sys
from collections import namedtuple

import pytest
from numba.core import types

from roadsim import _signatures
from roadsim.compiling import _compile_one, _dispatcher, shares

Pair = namedtuple("Pair", "a b")
Mixed = namedtuple("Mixed", "a b")


@pytest.mark.parametrize(
    "t",
    [
        types.int64,
        types.uint64,
        types.float64,
        types.boolean,
        types.Array(types.float64, 1, "C"),
        types.Array(types.int32, 2, "A", readonly=True),
        types.UniTuple(types.Array(types.float64, 1, "C"), 5),
        types.Tuple([types.int64, types.Array(types.boolean, 1, "C")]),
        types.NamedUniTuple(types.Array(types.int64, 1, "C"), 2, Pair),
        types.NamedTuple([types.Array(types.float64, 1, "A"), types.int64], Mixed),
    ],
    ids=str,
)
def test_a_type_reads_back_as_it_was_written(t: types.Type) -> None:
    back = _signatures.decode(_signatures.encode(t))
    assert back == t and type(back) is type(t)


def test_a_type_the_file_cannot_hold_is_an_error() -> None:
    with pytest.raises(TypeError, match="cannot store"):
        _signatures.encode(types.unicode_type)


def test_every_listed_kernel_is_found_and_loads_for_its_signature() -> None:
    listed = _signatures.read()
    assert len(listed) >= 15
    for name, signature in listed:
        assert _dispatcher(name) is not None, name
        assert _compile_one(name, signature), name  # (from the cache the warmup filled)


def test_a_stale_entry_is_passed_over() -> None:
    name, signature = _signatures.read()[0]
    assert not _compile_one(name, signature[:-1])  # one argument short
    assert not _compile_one("roadsim.world.collisions:_gone", signature)
    assert _dispatcher("roadsim.no_such_module:f") is None


def test_shares_cover_every_kernel_once_largest_first_and_even() -> None:
    listed = [(f"m:k{i}", ()) for i in range(7)] + [
        ("m:_observe_perceive_rows", ()),
        ("m:_overlaps", ()),
        ("m:_footprints", ()),
    ]
    dealt = shares(listed, 2)
    assert sorted(row for share in dealt for row in share) == sorted(listed)
    assert dealt[0][0][0] == "m:_observe_perceive_rows"  # the largest goes first
    assert {dealt[1][0][0], dealt[1][1][0]} == {"m:_overlaps", "m:_footprints"}
    assert len(shares(listed, 1)) == 1 and len(shares(listed, 1)[0]) == len(listed)


def test_another_process_compiles_its_share_and_names_each_kernel() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "roadsim.compiling", "--share", "1", "2"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    expected = [name for name, _ in shares(_signatures.read(), 2)[1]]
    rows = [line.split() for line in done.stdout.splitlines()]
    assert [name for name, _ in rows] == expected
    assert {compiled for _, compiled in rows} == {"0"}  # all from the cache the warmup filled
    assert done.stderr == ""  # the report stays quiet in that process


def test_writing_the_signatures_runs_again_once_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that compiles writes the list from a second, warm run; a stale entry compiles
    on every run, and the second run started a third, and so on (hundreds of processes)."""
    import roadsim.compiling as compiling

    runs: list[list[str]] = []
    written: list[int] = []

    class Report:
        compiled = 3  # (as if every run compiled something)

    monkeypatch.setattr(compiling, "warmup", lambda: Report())
    monkeypatch.setattr(compiling._signatures, "write", lambda kernels: written.append(1) or 0)
    monkeypatch.setattr(
        compiling.subprocess,
        "run",
        lambda args, check: runs.append(args) or subprocess.CompletedProcess(args, 0),
    )
    assert compiling.main(["--write-signatures"]) == 0
    assert runs and runs[0][-2:] == ["--write-signatures", "--again"] and not written
    runs.clear()
    assert compiling.main(["--write-signatures", "--again"]) == 0
    assert not runs and written == [1]
