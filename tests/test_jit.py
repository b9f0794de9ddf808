"""The compiled kernels' cache: valid only for the package sources it was built from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import roadsim
from roadsim import _jit
from roadsim.sensors.occupancy import sort_entries


@pytest.fixture
def fresh_stamp() -> Iterator[None]:
    _jit.package_stamp.cache_clear()
    yield
    _jit.package_stamp.cache_clear()


@pytest.mark.usefixtures("fresh_stamp")
def test_the_stamp_changes_with_any_source_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("A = 1\n")
    (tmp_path / "sub" / "b.py").write_text("B = 2\n")
    monkeypatch.setattr(_jit, "_PACKAGE", tmp_path)
    first = _jit.package_stamp()
    _jit.package_stamp.cache_clear()
    assert _jit.package_stamp() == first  # same sources, same stamp
    (tmp_path / "sub" / "b.py").write_text("B = 3\n")  # a constant another kernel reads
    _jit.package_stamp.cache_clear()
    assert _jit.package_stamp() != first


@pytest.mark.usefixtures("fresh_stamp")
def test_roadsim_kernels_are_cached_under_the_package_stamp() -> None:
    locator = sort_entries._cache._impl.locator
    assert isinstance(locator, _jit._PackageStamped)
    assert locator.get_source_stamp() == _jit.package_stamp()


def test_other_code_keeps_numbas_own_cache(tmp_path: Path) -> None:
    elsewhere = tmp_path / "user_code.py"
    elsewhere.write_text("def f():\n    return 1\n")
    assert _jit._InTreeLocator.from_function(lambda: 1, str(elsewhere)) is None


def test_compiled_before_once_a_simulation_has_run() -> None:
    roadsim.Simulation("town").step()  # compiles (or loads) the tick's kernels
    assert _jit.compiled_before()


def test_a_cache_index_naming_a_moved_class_reads_as_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba unpickles an index before it compares stamps: an index written by an older
    roadsim whose classes have moved must mean 'compile anew', not an ImportError."""
    from numba.core import caching

    from roadsim import _jit

    def moved(self: object) -> object:
        raise ModuleNotFoundError("No module named 'roadsim.agents.perception'")

    monkeypatch.setattr(_jit, "_load_index", moved)
    assert caching.IndexDataCacheFile._load_index(object()) == {}
