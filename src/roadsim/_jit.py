"""Compiled loops: numba's ``njit`` behind a few typed decorators.

The tick's hot passes (localisation, perception, the traffic model, the bicycle model,
collisions) are loops over vehicles, compiled once per machine and cached next to their
source (numba's ``cache=True``), so a tick is a handful of calls instead of hundreds of
numpy operations. They never use fast-math, and each row of a pass depends only on its
inputs, so results are the same on every run: same scenario and seed, same bits.

Passes over many rows split them over numba's threads (`njit_rows`): each row writes
only its own outputs, so the split changes nothing in the results. How many chunks a
pass is split in is an argument (`chunks_for`), never a compiled constant, so one cache
serves every thread count, and a pass over few rows runs on the calling thread alone:
handing rows to a second thread costs more than it saves there, and far more when the
other core is busy (each pass then waits for the OS to schedule the second thread).
The threaded form of a pass, numba's parallel loop, is compiled on first use: a small
scene never compiles it.

``error_model="numpy"`` makes a division by zero give inf or NaN as numpy does, instead
of raising.

Numba's cache checks only the source file of the function it compiled, but a kernel
embeds the helpers it calls from other files, and the constants it reads from them. So
the cached kernels of roadsim are stamped with a hash of their module's source and of
every roadsim module it imports, directly or not (`module_stamp`): editing a module
compiles again the kernels of the modules that import it, and no others; a stale kernel
is never loaded. The cache hooks, and the dispatcher class of the helpers
(`njit_leaf`, built on numba's ``CPUDispatcher``), use numba internals (there is no
public API for them); ``pyproject.toml`` pins numba's minor version and
``tests/test_jit.py`` checks both.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

import numba
import numba.extending
import numpy as np
import numpy.typing as npt
from llvmlite import ir as llvm_ir  # type: ignore[import-untyped]
from numba.core import caching
from numba.core import cgutils as _cgutils
from numba.core.registry import CPUDispatcher

F = TypeVar("F", bound=Callable[..., Any])

cgutils: Any = _cgutils  # (untyped)

# numba's private switch for compiling without reference counting (typed stubs omit it).
_NO_REFCOUNT: dict[str, Any] = {"_nrt": False}
# ... and its switches for a function that compiled code calls, never Python (`njit_leaf`).
_HELPER_ONLY: dict[str, Any] = {**_NO_REFCOUNT, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


_PACKAGE = Path(__file__).resolve().parent


def _module_file(name: str) -> Path | None:
    """The source file of roadsim module ``name`` (dotted), if there is one."""
    parts = name.split(".")
    if parts[0] != "roadsim":
        return None
    base = _PACKAGE.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


# A statement at the top level that opens a block whose imports do not run with the
# module's: a function, a class (their bodies), or the type checker's block.
_SKIPPED_BLOCK = re.compile(rb"(?:async\s+def|def|class)\b|@|if\s+(?:typing\.)?TYPE_CHECKING\s*:")
_IMPORT = re.compile(
    rb"[ \t]*(?:from[ \t]+(?P<base>\.*[\w.]*)[ \t]+import[ \t]*(?P<names>\([^)]*\)|(?:\\\n|[^\n#;])*)"
    rb"|import[ \t]+(?P<modules>[^\n#;]*))"
)


@cache
def _imported(path: Path) -> frozenset[Path]:
    """The roadsim modules that the module at ``path`` imports at its top level (not
    those imported only for type checking or inside functions: a kernel cannot reach
    code through them).

    A scan of the source's lines rather than a parse (every kernel module is stamped at
    import, and parsing them took a quarter of a second): an import statement counts
    unless it is indented under a ``def``, a ``class`` or ``if TYPE_CHECKING:`` at the
    top level. Text that only looks like an import (in a docstring) can add a module,
    which at worst compiles a kernel again when that module changes; a real top-level
    import is never missed (``tests/test_jit.py`` compares the scan with Python's parser)."""
    package = ".".join(("roadsim", *path.relative_to(_PACKAGE).with_suffix("").parts))
    if path.name == "__init__.py":
        package = package.removesuffix(".__init__")
    else:
        package = package.rpartition(".")[0]
    source = path.read_bytes()
    names: list[str] = []
    skipping = False
    at = 0
    for line in source.splitlines(keepends=True):
        start, at = at, at + len(line)
        if not line.strip() or line.lstrip().startswith(b"#"):
            continue
        if not line[:1].isspace():
            skipping = _SKIPPED_BLOCK.match(line) is not None
        if skipping:
            continue
        found = _IMPORT.match(source, start)
        if found is None:
            continue
        if found["modules"] is not None:
            names.extend(m.split()[0].decode() for m in found["modules"].split(b",") if m.strip())
            continue
        base = found["base"].decode()
        level = len(base) - len(base.lstrip("."))
        base = base[level:]
        if level:
            anchor = package.split(".")[: len(package.split(".")) - level + 1]
            base = ".".join([*anchor, *([base] if base else [])])
        names.append(base)
        listed = re.sub(rb"#[^\n]*|\\\n|[()]", b" ", found["names"])
        for alias in listed.split(b","):
            if alias.strip():
                names.append(f"{base}.{alias.split()[0].decode()}")
    found_files = (_module_file(name) for name in names)
    return frozenset(f for f in found_files if f is not None and f != path)


@cache
def module_stamp(path: Path) -> str:
    """A hash of the source of the roadsim module at ``path`` and of every roadsim
    module it imports, directly or through others (parent packages' ``__init__`` only
    where a module imports them by name)."""
    closure = {path}
    todo = [path]
    while todo:
        for other in _imported(todo.pop()):
            if other not in closure:
                closure.add(other)
                todo.append(other)
    digest = hashlib.sha256()
    for source in sorted(closure):
        digest.update(source.relative_to(_PACKAGE).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


class _ModuleStamped:
    """A numba cache locator mixin: for roadsim's files only, stamped with
    `module_stamp` instead of the file's modification time."""

    _py_file: str

    def get_source_stamp(self) -> str:
        return module_stamp(Path(self._py_file).resolve())

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> Any:
        if not Path(py_file).resolve().is_relative_to(_PACKAGE):
            return None
        return super().from_function(py_func, py_file)  # type: ignore[misc]


class _InTreeLocator(_ModuleStamped, caching.InTreeCacheLocator):
    """``__pycache__`` beside the source."""


class _UserWideLocator(_ModuleStamped, caching.UserWideCacheLocator):
    """The user's cache directory, where the package's own is read-only."""


caching.CacheImpl._locator_classes[:0] = [_InTreeLocator, _UserWideLocator]

_load_index: Callable[[Any], Any] = caching.IndexDataCacheFile._load_index


def _load_index_or_nothing(self: Any) -> Any:
    """numba's cache index, or nothing where it cannot be read back: an index pickles the
    types of the kernel's arguments, and one written by an older roadsim may name a
    class that has moved since. numba compares the source stamp only after unpickling,
    so it would raise instead of compiling anew."""
    try:
        return _load_index(self)
    except (ImportError, AttributeError):
        return {}


caching.IndexDataCacheFile._load_index = _load_index_or_nothing  # type: ignore[method-assign]


_KERNELS: list[Any] = []  # every kernel (not the inlined helpers), for `kernels`


def njit(fn: F) -> F:
    """Compiles ``fn`` with numba in nopython mode (cached, releases the GIL)."""
    kernel = numba.njit(cache=True, nogil=True, error_model="numpy")(fn)
    _KERNELS.append(kernel)
    return cast(F, kernel)


def kernels() -> list[Any]:
    """Every kernel of roadsim imported so far (numba dispatchers; not the helpers
    inlined into them)."""
    return list(_KERNELS)


def njit_leaf(fn: F) -> F:
    """Compiles a helper that allocates nothing (a look-up, one vehicle's step): compiled
    once, then inlined by LLVM into every caller, without numba's reference counting.

    Kernels pass bundles of arrays to their helpers
    (`roadsim.world.lane_kernels.LaneArrays` has 32). Numba passes a bundle as its ~220
    flattened fields at every call LLVM does not inline, and with reference counting it
    increments and decrements every array of the bundle at each call: 100 to 200 ns a
    call measured here, against a few ns inlined without. So a helper carries LLVM's
    ``alwaysinline`` (numba's ``forceinline``): numba types and lowers it once, and LLVM
    inlines the compiled helper where it is called. (Numba's own ``inline="always"``
    translates the helper's bytecode anew at every call site: 60% of the compile of the
    traffic loop, for a tick no faster.) Such a helper must not create arrays, nor
    return views of its arguments (`njit_view`), and neither may the loops that call it
    (`njit_loop`).

    A helper is called from compiled code only, so it gets no wrappers for calls from
    Python or C (``no_cpython_wrapper``, ``no_cfunc_wrapper``: the options numba's own
    ``@overload`` functions compile with). Unboxing a bundle's ~220 fields from Python
    objects was the bulk of the machine code numba made for a helper: without the
    wrappers a cold compile of the highway takes 59 s of CPU instead of 94.
    """
    options = {"nopython": True, "nogil": True, "error_model": "numpy", "forceinline": True}
    helper = _Helper(py_func=fn, locals={}, targetoptions={**options, **_HELPER_ONLY})
    helper.enable_caching()
    return cast(F, helper)


class _Helper(CPUDispatcher):
    """The dispatcher of a `njit_leaf` helper. Compiled code calls the helper as numba
    compiled it, without wrappers; numba cannot call that from Python, so a call from
    Python (the tests check helpers so) goes to a second compilation of the same function
    with them, made on the first such call and not cached."""

    _from_python: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._from_python is None:
            self._from_python = numba.njit(nogil=True, error_model="numpy")(self.py_func)
        return self._from_python(*args, **kwargs)


def njit_view(fn: F) -> F:
    """Compiles a helper that returns a view of an array argument (`chunk`): numba inlines
    it into its callers (``inline="always"``), as without reference counting a compiled
    function may return only the arrays it was given."""
    return cast(
        F,
        numba.njit(cache=True, nogil=True, error_model="numpy", inline="always", **_NO_REFCOUNT)(
            fn
        ),
    )


def njit_loop(fn: F) -> F:
    """Compiles a loop over vehicles that writes into arrays its caller allocated, without
    reference counting (see `njit_leaf`); called from Python once per tick."""
    kernel = numba.njit(cache=True, nogil=True, error_model="numpy", **_NO_REFCOUNT)(fn)
    _KERNELS.append(kernel)
    return cast(F, kernel)


class Pass:
    """A pass over rows, written once as its row kernel (`njit_rows`).

    Called as ``pass_(chunks, *args)`` with the row kernel's arguments but its last two:
    with one chunk it calls the row kernel once on the calling thread (chunk 0 of 1),
    else its threaded form once, which runs chunk c of ``chunks`` on numba's threads, in
    a ``numba.prange`` loop. The threaded form is compiled on first use only: numba
    compiles the row kernel a second time inside a parallel loop, and a scene too small
    to split its passes (`chunks_for`) never needs it. Kernels that call passes are
    compiled in one form for each way (`njit_split`).
    """

    def __init__(self, row: Callable[..., None]) -> None:
        py_func = row.py_func  # type: ignore[attr-defined]
        params = list(inspect.signature(py_func).parameters)
        if params[-2:] != ["c", "chunks"]:
            raise TypeError(f"{py_func.__qualname__}: a row kernel ends with (c, chunks)")
        self.row = row
        self.__name__ = py_func.__name__.strip("_")
        self.__doc__ = py_func.__doc__
        self._params = params[:-2]
        self._forms: dict[bool, Any] = {}

    def __call__(self, chunks: int, *args: Any) -> None:
        if chunks <= 1:
            self.row(*args, 0, 1)
        else:
            self.form(True)(chunks, *args)

    def form(self, threaded: bool) -> Any:
        """The pass as a kernel of ``(chunks, *args)``, for kernels that call it: with
        ``threaded``, chunk c of ``chunks`` on numba's threads (one chunk: the calling
        thread); else every row on the calling thread, whatever ``chunks`` says. Its
        source is written from the row kernel's parameter names, so the two never
        disagree, and the row kernel compiles one signature for every form.

        The threaded body must stay one call: numba's parallel lowering (0.68) drops
        stores into arrays reached through a named tuple (``out.gap[i] = ...``) made in
        the prange body itself, but not those made inside a kernel called from it."""
        if threaded not in self._forms:
            self._forms[threaded] = self._compile(threaded)
        return self._forms[threaded]

    def _compile(self, threaded: bool) -> Any:
        py_func = self.row.py_func  # type: ignore[attr-defined]
        args = "".join(f"{name}, " for name in self._params)
        name = f"{self.__name__}_{'threaded' if threaded else 'here'}"
        body = (
            f"    if _chunks <= 1:\n"
            f"        _row({args}_np.int64(0), _np.int64(1))\n"
            f"    else:\n"
            f"        for _c in _prange(_chunks):\n"
            f"            _row({args}_np.int64(_c), _np.int64(_chunks))\n"
        )
        if not threaded:
            body = f"    _row({args}_np.int64(0), _np.int64(1))\n"
        # Compiled as if it stood in the row kernel's file, so that it is cached beside it.
        namespace: dict[str, Any] = {
            "__name__": py_func.__module__,
            "_row": self.row,
            "_np": np,
            "_prange": numba.prange,
        }
        source = f"def {name}(_chunks, {args}):\n{body}"
        exec(compile(source, inspect.getfile(py_func), "exec"), namespace)
        form = namespace[name]
        form.__qualname__ = name
        form.__doc__ = f"`{py_func.__name__}` as a pass (`roadsim._jit.Pass`)."
        kernel = numba.njit(
            cache=True, nogil=True, error_model="numpy", parallel=threaded, **_NO_REFCOUNT
        )(form)
        _KERNELS.append(kernel)
        return kernel


def njit_rows(row: Callable[..., None]) -> Pass:
    """The pass over rows that ``row`` does a chunk of (`Pass`).

    ``row`` is a `njit_loop` kernel whose last two parameters are ``c`` and ``chunks``:
    it does chunk c of ``chunks`` of the pass's rows (`chunk` cuts an order of rows in
    chunks, `share` a range), and every row writes only its own outputs (scratch, if
    any, by chunk), so the results do not depend on the split. The pass takes
    ``chunks`` first (see `chunks_for`), then ``row``'s other parameters.
    """
    return Pass(row)


class Split:
    """A kernel that calls passes (`Pass`) or other such kernels, compiled in two forms
    (`njit_split`): one in which every pass runs on the calling thread, and one in which
    they split their rows over numba's threads. A call takes the first where its
    ``chunks`` argument is 1, so that a small scene never compiles parallel code."""

    def __init__(self, fn: Callable[..., Any], here: Any = None) -> None:
        self.py_func = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._chunks_at = list(inspect.signature(fn).parameters).index("chunks")
        self._forms: dict[bool, Any] = {} if here is None else {False: here}

    def __call__(self, *args: Any) -> Any:
        return self.form(args[self._chunks_at] > 1)(*args)

    def form(self, threaded: bool) -> Any:
        """The kernel in which the passes it calls (and the kernels of this kind it
        calls) are their forms `Pass.form` ``threaded``. Made on first use, when every
        name the kernel reads in its module exists."""
        if threaded not in self._forms:
            fn = self.py_func
            names = dict(fn.__globals__)
            for key in fn.__code__.co_names:  # (the globals it reads)
                value = names.get(key)
                if isinstance(value, Pass | Split):
                    names[key] = value.form(threaded)
            form = types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__)
            form.__qualname__ = fn.__qualname__ + ("_threaded" if threaded else "")
            form.__doc__ = fn.__doc__
            kernel = numba.njit(cache=True, nogil=True, error_model="numpy")(form)
            _KERNELS.append(kernel)
            self._forms[threaded] = kernel
        return self._forms[threaded]


def njit_split(fn: F) -> F:
    """Compiles a kernel that calls passes (`njit_rows`) in one form for each way they
    run (`Split`); it has a parameter ``chunks``, the chunks of its passes."""
    return cast(F, Split(fn))


def njit_split_only(here: Any) -> Callable[[F], F]:
    """`njit_split` for a kernel that is called only where its passes split (its callers
    call it only with ``chunks`` > 1): where they run on the calling thread, kernel
    ``here`` stands in for it, never called, so that those forms of its callers do not
    compile it. ``here`` takes the same arguments and returns the same types."""

    def wrap(fn: F) -> F:
        return cast(F, Split(fn, here))

    return wrap


#: Rows a pass needs before it splits them over the threads, unless it says otherwise.
#: Measured with `benchmarks/split_threshold.py` on the 2-core machine, idle: splitting
#: every pass broke even at 300 to 600 vehicles and gained 16% at 1,000. With the other
#: core busy it made a tick 3 times slower at 1,000 vehicles and 40 to 80 times slower
#: below 600, so one simulation per core is best run with ``NUMBA_NUM_THREADS=1``.
MIN_PARALLEL_ROWS = 768

_always_split = False  # see `always_split`


@contextmanager
def always_split() -> Iterator[None]:
    """Within this, every pass splits its rows over the threads however few they are
    (the tests use it to check that the split changes nothing)."""
    global _always_split
    before, _always_split = _always_split, True
    try:
        yield
    finally:
        _always_split = before


def split_from(min_rows: int = MIN_PARALLEL_ROWS) -> int:
    """The rows from which a pass with threshold ``min_rows`` splits them (0 within
    `always_split`)."""
    return 0 if _always_split else min_rows


def chunks_for(rows: int, min_rows: int = MIN_PARALLEL_ROWS) -> int:
    """How many chunks a pass over ``rows`` rows is split in: one a numba thread
    (``numba.get_num_threads()``: ``NUMBA_NUM_THREADS``, or ``numba.set_num_threads``
    in this thread), or one alone below ``min_rows`` (`split_from`), where handing rows
    to another thread costs more than it saves."""
    if rows < split_from(min_rows):
        return 1
    return int(numba.get_num_threads())


@njit_view
def chunk(order: npt.NDArray[np.int64], c: int, chunks: int) -> npt.NDArray[np.int64]:
    """Chunk c of ``chunks`` equal runs of the visiting ``order`` (a view)."""
    n = order.shape[0]
    return order[c * n // chunks : (c + 1) * n // chunks]


@njit_leaf
def share(n: int, c: int, chunks: int) -> tuple[int, int]:
    """Chunk c of ``chunks`` equal runs of ``range(n)``: its first and stop."""
    return c * n // chunks, (c + 1) * n // chunks


# -- prefetching ------------------------------------------------------------------------------------


@numba.extending.intrinsic
def _prefetch_row(typingctx: Any, array: Any, row: Any) -> Any:
    """Compiles to a prefetch of the first byte of row ``row`` of ``array`` (its first
    axis) into every cache level, for reading: LLVM's ``llvm.prefetch``. A prefetch
    never faults, so a row outside the array is harmless."""
    if not isinstance(array, numba.types.Array) or not isinstance(row, numba.types.Integer):
        return None
    signature = numba.types.void(array, row)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        byte_ptr = llvm_ir.IntType(8).as_pointer()
        i32 = llvm_ir.IntType(32)
        view = context.make_array(sig.args[0])(context, builder, args[0])
        stride = cgutils.unpack_tuple(builder, view.strides, sig.args[0].ndim)[0]
        index = context.cast(builder, args[1], sig.args[1], numba.types.intp)
        address = builder.gep(builder.bitcast(view.data, byte_ptr), [builder.mul(index, stride)])
        hint = llvm_ir.FunctionType(llvm_ir.VoidType(), [byte_ptr, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, hint, "llvm.prefetch.p0")
        # (address, 0 = read, 3 = keep in every level, 1 = data cache)
        builder.call(fn, [address, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return signature, codegen


@njit_leaf
def prefetch(array: npt.NDArray[Any], row: int) -> None:
    """Asks the CPU to start loading row ``row`` of ``array`` (one cache line from its
    start) while the caller works on something else.

    The passes of a tick visit vehicles whose lanes lie scattered over tables of several
    megabytes; on a large map each look-up waits for memory (about 200 ns a vehicle for
    relocalisation alone at 10,000 vehicles). A pass that names the rows of a vehicle a
    few rows ahead of the one it works on overlaps those waits (`PREFETCH_AHEAD`)."""
    _prefetch_row(array, row)  # type: ignore[call-arg]  # (the typing context is numba's)


#: Rows ahead of the current one whose table rows a pass prefetches (measured on the
#: 26 x 26 grid: 8 ahead cut relocalisation from 205 to 68 ns a vehicle; 24 is too far).
PREFETCH_AHEAD = 8


def _report_compiles() -> None:
    """Starts the report of kernels compiling (`roadsim._compile_report`). Every kernel
    module imports this one, so it listens before any of them can compile. (Imported in a
    function: it holds no kernel code, so the kernels' stamps, `module_stamp`, leave it
    out, and editing it compiles nothing.)"""
    from roadsim import _compile_report  # noqa: F401


_report_compiles()
