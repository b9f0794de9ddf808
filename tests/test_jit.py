"""The compiled kernels: their cache's staleness rules, the numba internals it relies on,
and the threaded passes `njit_rows` writes."""

from __future__ import annotations

import ast
import importlib.metadata
import itertools
from collections.abc import Iterator
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core import caching

from roadsim import _jit
from roadsim.sensors.occupancy import sort_entries


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A stand-in for the roadsim package: ``roadsim/`` with a few modules."""
    root = tmp_path / "roadsim"
    (root / "world").mkdir(parents=True)
    (root / "__init__.py").write_text("from roadsim.cli import main\n")
    (root / "cli.py").write_text("from roadsim.world import kernels\n")
    (root / "world" / "__init__.py").write_text("")
    (root / "world" / "constants.py").write_text("LIMIT = 1\n")
    (root / "world" / "kernels.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from roadsim.world.constants import LIMIT\n"
        "from . import helpers\n"
        "if TYPE_CHECKING:\n"
        "    from roadsim.cli import main\n"
        "def f():\n"
        "    from roadsim import schema\n"
    )
    (root / "world" / "helpers.py").write_text("from .constants import LIMIT\n")
    (root / "schema.py").write_text("A = 1\n")
    monkeypatch.setattr(_jit, "_PACKAGE", root)
    _jit.module_stamp.cache_clear()
    _jit._imported.cache_clear()
    yield root
    _jit.module_stamp.cache_clear()
    _jit._imported.cache_clear()


def stamp_after(path: Path, edit: Path, text: str) -> tuple[str, str]:
    """The stamp of the module at ``path`` before and after ``edit`` gets ``text``."""
    before = _jit.module_stamp(path)
    edit.write_text(text)
    _jit.module_stamp.cache_clear()
    _jit._imported.cache_clear()
    return before, _jit.module_stamp(path)


def test_a_kernels_stamp_changes_with_its_module(package: Path) -> None:
    kernels = package / "world" / "kernels.py"
    before, after = stamp_after(kernels, kernels, kernels.read_text() + "X = 2\n")
    assert before != after


def test_a_kernels_stamp_changes_with_what_it_imports_directly_or_not(package: Path) -> None:
    kernels = package / "world" / "kernels.py"
    constants = package / "world" / "constants.py"
    before, after = stamp_after(kernels, constants, "LIMIT = 2\n")  # through helpers too
    assert before != after
    before, after = stamp_after(kernels, package / "world" / "helpers.py", "B = 1\n")
    assert before != after


def test_a_kernels_stamp_ignores_modules_it_does_not_import(package: Path) -> None:
    kernels = package / "world" / "kernels.py"
    for other in ("cli.py", "__init__.py", "schema.py"):  # above it, type-only, lazy
        before, after = stamp_after(kernels, package / other, "# edited\n")
        assert before == after, other


def test_the_stamp_is_the_same_for_the_same_sources(package: Path) -> None:
    kernels = package / "world" / "kernels.py"
    first = _jit.module_stamp(kernels)
    _jit.module_stamp.cache_clear()
    _jit._imported.cache_clear()
    assert _jit.module_stamp(kernels) == first


def test_the_real_kernels_modules_import_no_command_line_or_schema() -> None:
    """Editing the CLI or the scenario schema compiles no kernel (issue [5/9])."""
    package = _jit._PACKAGE
    for module in ("world/collisions.py", "agents/traffic_kernels.py", "sensors/occupancy.py"):
        closure = {package / module}
        todo = [package / module]
        while todo:
            for other in _jit._imported(todo.pop()):
                if other not in closure:
                    closure.add(other)
                    todo.append(other)
        names = {p.relative_to(package).as_posix() for p in closure}
        assert not names & {"cli.py", "cli_run.py", "scenario/schema.py", "__init__.py"}, names


def _parsed_imports(path: Path) -> set[Path]:
    """What `_jit._imported` must find in the module at ``path``, by Python's parser: the
    roadsim modules its top-level statements import (in ``try`` and ``if`` blocks too,
    but for ``if TYPE_CHECKING:``)."""
    package = ".".join(("roadsim", *path.relative_to(_jit._PACKAGE).with_suffix("").parts))
    package = package.removesuffix(".__init__") if path.name == "__init__.py" else package.rpartition(".")[0]
    names: list[str] = []

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
                names.append(base)
                names.extend(f"{base}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit([*node.body, *node.orelse, *node.finalbody])
                for handler in node.handlers:
                    visit(handler.body)

    visit(ast.parse(path.read_bytes()).body)
    found = (_jit._module_file(name) for name in names)
    return {f for f in found if f is not None and f != path}


def test_the_import_scan_finds_what_the_parser_finds_in_every_module() -> None:
    sources = sorted(_jit._PACKAGE.rglob("*.py"))
    assert len(sources) > 50
    for path in sources:
        assert _jit._imported(path) == _parsed_imports(path), path


def test_the_import_scan_reads_every_way_of_writing_an_import(package: Path) -> None:
    module = package / "world" / "kernels.py"
    module.write_text(
        '"""A docstring."""\n'
        "import os, roadsim.schema as s  # a comment\n"
        "from roadsim.world import (  # the modules\n"
        "    constants,\n"
        "    helpers as h,\n"
        ")\n"
        "try:\n"
        "    from roadsim import cli\n"
        "except ImportError:\n"
        "    pass\n"
        "class A:\n"
        "    from roadsim import world\n"
        "@decorated\n"
        "def g():\n"
        "    import roadsim\n"
    )
    _jit._imported.cache_clear()
    names = {p.relative_to(package).as_posix() for p in _jit._imported(module)}
    assert names == {
        "schema.py", "world/__init__.py", "world/constants.py", "world/helpers.py", "cli.py", "__init__.py"
    }
    assert _jit._imported(module) == _parsed_imports(module)


def test_roadsim_kernels_are_cached_under_their_module_stamp() -> None:
    locator = sort_entries._cache._impl.locator
    assert isinstance(locator, _jit._ModuleStamped)
    source = Path(sort_entries.py_func.__code__.co_filename).resolve()
    assert locator.get_source_stamp() == _jit.module_stamp(source)


def test_other_code_keeps_numbas_own_cache(tmp_path: Path) -> None:
    elsewhere = tmp_path / "user_code.py"
    elsewhere.write_text("def f():\n    return 1\n")
    assert _jit._InTreeLocator.from_function(lambda: 1, str(elsewhere)) is None


def test_a_cache_index_naming_a_moved_class_reads_as_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba unpickles an index before it compares stamps: an index written by an older
    roadsim whose classes have moved must mean 'compile anew', not an ImportError."""

    def moved(self: object) -> object:
        raise ModuleNotFoundError("No module named 'roadsim.agents.perception'")

    monkeypatch.setattr(_jit, "_load_index", moved)
    assert caching.IndexDataCacheFile._load_index(object()) == {}


def test_the_numba_internals_the_cache_relies_on_are_there() -> None:
    """The hooks use numba internals; pyproject.toml pins the minor version they were
    written for. An upgrade that moves them fails here, not in a user's first run."""
    assert caching.CacheImpl._locator_classes[:2] == [_jit._InTreeLocator, _jit._UserWideLocator]
    assert hasattr(caching.InTreeCacheLocator, "get_source_stamp")
    assert hasattr(caching.IndexDataCacheFile, "_load_index")
    version = importlib.metadata.version("numba")
    assert version.startswith("0.68."), version


# -- the threaded passes ------------------------------------------------------------------------


def test_chunks_for_keeps_few_rows_on_one_thread() -> None:
    assert _jit.chunks_for(10) == 1
    assert _jit.chunks_for(10**6) == numba.get_num_threads()
    with _jit.always_split():
        assert _jit.chunks_for(10) == numba.get_num_threads()
    assert _jit.chunks_for(10) == 1


@numba.njit
def chunk_copy(order: np.ndarray, c: int, chunks: int) -> np.ndarray:  # type: ignore[type-arg]
    return _jit.chunk(order, c, chunks).copy()  # (a view cannot leave a kernel without NRT)


def test_share_and_chunk_cover_every_row_once() -> None:
    order = np.arange(10, 33)
    for chunks in (1, 2, 3, 7):
        seen = np.concatenate([chunk_copy(order, c, chunks) for c in range(chunks)])
        assert np.array_equal(seen, order)
        spans = [_jit.share(23, c, chunks) for c in range(chunks)]
        assert spans[0][0] == 0 and spans[-1][1] == 23
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


@numba.njit
def share_in_a_kernel(n: int, c: int, chunks: int) -> tuple[int, int]:
    return _jit.share(n, c, chunks)


def test_a_helper_compiles_without_wrappers_and_still_answers_python() -> None:
    """Compiled code gets the helper without the wrappers a call from Python needs (they
    doubled a cold compile); a call from Python gets a compilation with them."""
    assert share_in_a_kernel(23, 1, 3) == (7, 15)
    assert _jit.share.targetoptions["no_cpython_wrapper"] is True
    assert _jit.share.targetoptions["no_cfunc_wrapper"] is True
    assert _jit.share(23, 1, 3) == (7, 15)
    assert len(_jit.share.overloads) == 1  # (the call from Python compiled a twin)


def test_a_passs_forms_are_written_from_its_row_kernels_parameters() -> None:
    from roadsim.agents.dynamics import _bicycle_rows, _bicycle_threaded

    params = list(_bicycle_rows.py_func.__code__.co_varnames[:19])
    assert params[-2:] == ["c", "chunks"]
    for threaded, name in ((True, "bicycle_rows_threaded"), (False, "bicycle_rows_here")):
        form = _bicycle_threaded.form(threaded)
        assert form.py_func.__name__ == name
        assert form.py_func.__module__ == "roadsim.agents.dynamics"
        assert list(form.py_func.__code__.co_varnames[:18]) == ["_chunks", *params[:-2]]
        assert form.targetoptions.get("parallel", False) is threaded


@_jit.njit_loop
def _add_rows(x: np.ndarray, out: np.ndarray, c: int, chunks: int) -> None:  # type: ignore[type-arg]
    first, stop = _jit.share(x.shape[0], c, chunks)
    for i in range(first, stop):
        out[i] = x[i] + 1.0


_add = _jit.njit_rows(_add_rows)


@_jit.njit_split
def _add_twice(x: np.ndarray, chunks: int) -> np.ndarray:  # type: ignore[type-arg]
    once = np.empty_like(x)
    _add(chunks, x, once)
    twice = np.empty_like(x)
    _add(chunks, once, twice)
    return twice


def test_a_pass_and_a_kernel_that_calls_passes_run_on_threads_only_when_split() -> None:
    x = np.arange(10.0)
    out = np.empty_like(x)
    _add(1, x, out)
    assert np.array_equal(out, x + 1.0)
    assert not _add._forms  # (one chunk calls the row kernel itself: no form compiled)
    assert np.array_equal(_add_twice(x, 1), x + 2.0)
    assert list(_add_twice._forms) == [False]  # type: ignore[attr-defined]
    assert not _add.form(False).targetoptions.get("parallel", False)
    assert np.array_equal(_add_twice(x, 2), x + 2.0)
    assert list(_add_twice._forms) == [False, True]  # type: ignore[attr-defined]
    assert _add_twice.form(True).py_func.__qualname__ == "_add_twice_threaded"  # type: ignore[attr-defined]
    assert _add.form(True).targetoptions["parallel"] is True


def test_a_row_kernel_must_end_with_its_chunk() -> None:
    @_jit.njit_loop
    def rows(x: np.ndarray, first: int, stop: int) -> None:  # type: ignore[type-arg]
        pass

    with pytest.raises(TypeError, match=r"ends with \(c, chunks\)"):
        _jit.njit_rows(rows)


# -- the compile report ---------------------------------------------------------------------------


def test_the_compile_report_names_roadsims_kernels_and_counts_their_time() -> None:
    import io
    from types import SimpleNamespace

    from numba.core import event

    from roadsim._compile_report import CompileReport

    def kernel(module: str, name: str) -> SimpleNamespace:
        return SimpleNamespace(py_func=SimpleNamespace(__module__=module, __name__=name))

    def ev(dispatcher: SimpleNamespace, kind: event.EventStatus) -> event.Event:
        return event.Event("numba:compile", kind, data={"dispatcher": dispatcher})

    stream = io.StringIO()
    report = CompileReport(stream)
    ours, helper = kernel("roadsim.world.collisions", "_overlaps"), kernel("roadsim.x", "h")
    theirs = kernel("user_code", "f")
    report.on_start(ev(theirs, event.EventStatus.START))  # a user's own kernel: silent
    report.on_end(ev(theirs, event.EventStatus.END))
    report.on_start(ev(ours, event.EventStatus.START))
    report.on_start(ev(helper, event.EventStatus.START))  # compiled as part of it: silent
    report.on_end(ev(helper, event.EventStatus.END))
    report.on_end(ev(ours, event.EventStatus.END))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert "warmup" in lines[0]
    assert lines[1].startswith("roadsim: compiling world.collisions._overlaps (")
    assert report.seconds > 0.0
