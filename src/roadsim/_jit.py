"""Compiled loops: numba's ``njit`` behind one typed decorator.

The tick's hot passes (localisation, perception, the traffic model, the bicycle model,
collisions) are loops over vehicles, compiled once per machine and cached next to their
source (numba's ``cache=True``), so a tick is a handful of calls instead of hundreds of
numpy operations. They never use fast-math, and each row of a pass depends only on its
inputs, so results are the same on every run: same scenario and seed, same bits.

The heaviest passes split their rows over numba's threads (`njit_rows`; one a core,
or ``NUMBA_NUM_THREADS``): each row writes only its own outputs, so the split changes
nothing in the results. Compiling them takes longer (a minute more for the driver
sensor's pass, once per machine); Python threads cost less to compile but about 0.1 ms
a pass to hand rows over, more than the passes of 1,000 vehicles take.

``error_model="numpy"`` makes a division by zero give inf or NaN as numpy does, instead
of raising.

Numba's cache checks only the source file of the function it compiled, but a kernel
embeds the helpers it calls from other files, and the constants it reads from them. So
the cached kernels of roadsim are stamped with a hash of every source file of the
package instead (`_PackageStamped`): any change to the package compiles them
anew, and a stale kernel is never loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
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

F = TypeVar("F", bound=Callable[..., Any])

cgutils: Any = _cgutils  # (untyped)

# numba's private switch for compiling without reference counting (typed stubs omit it).
_NO_REFCOUNT: dict[str, Any] = {"_nrt": False}


_PACKAGE = Path(__file__).resolve().parent


@cache
def package_stamp() -> str:
    """A hash of every Python source file of the roadsim package."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class _PackageStamped:
    """A numba cache locator mixin: for roadsim's files only, stamped with
    `package_stamp` instead of the file's modification time, and kept apart by the
    number of chunks the passes split their rows in (`CHUNKS`, a constant compiled
    into them): a kernel compiled under ``NUMBA_NUM_THREADS=1`` runs every pass on one
    thread however many a later process has."""

    def get_source_stamp(self) -> str:
        return package_stamp()

    def get_cache_path(self) -> str:
        return str(Path(super().get_cache_path()) / f"chunks{CHUNKS}")  # type: ignore[misc]

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> Any:
        if not Path(py_file).resolve().is_relative_to(_PACKAGE):
            return None
        return super().from_function(py_func, py_file)  # type: ignore[misc]


class _InTreeLocator(_PackageStamped, caching.InTreeCacheLocator):
    """``__pycache__`` beside the source."""


class _UserWideLocator(_PackageStamped, caching.UserWideCacheLocator):
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


# Chunks a pass over rows is split in (`njit_rows`): one a numba thread. A constant,
# because a kernel that asks numba for its threads cannot be cached; with fewer threads
# than this (``numba.set_num_threads``), a thread takes several chunks.
CHUNKS: int = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]

_KERNELS: list[Any] = []  # every dispatcher called from Python, for `kernels_cached`


def njit(fn: F) -> F:
    """Compiles ``fn`` with numba in nopython mode (cached, releases the GIL)."""
    kernel = numba.njit(cache=True, nogil=True, error_model="numpy")(fn)
    _KERNELS.append(kernel)
    return cast(F, kernel)


def compiled_before() -> bool:
    """Whether this machine has compiled code of these sources in the cache for any kernel
    imported so far: false on a fresh install, after an upgrade, or when unsure."""
    try:
        return any(len(kernel._cache._cache_file._load_index()) > 0 for kernel in _KERNELS)
    except Exception:  # numba's cache internals moved
        return False


def njit_leaf(fn: F) -> F:
    """Compiles a helper that allocates nothing (a look-up, one vehicle's step): inlined
    into its callers, without numba's reference counting.

    Kernels pass bundles of arrays to their helpers
    (`roadsim.world.lane_kernels.LaneArrays` has 32). Numba passes a bundle as its ~220
    flattened fields at every call LLVM does not inline, and with reference counting it
    increments and decrements every array of the bundle at each call: 100 to 200 ns a
    call measured here, against a few ns inlined without. Such a helper must not create
    arrays (views of its arguments are fine), and neither may the loops that call it
    (`njit_loop`).
    """
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


def njit_rows(fn: F) -> F:
    """Compiles a pass over rows that splits them over numba's threads: ``fn`` loops
    with ``numba.prange`` over `CHUNKS` chunks, and its loop body is one call of a
    `njit_loop` kernel on the chunk's rows (`chunk`). Every row must write only its own
    outputs (no reductions; scratch, if any, by chunk), so the results do not depend on
    the number of threads or on the split.

    The body must stay one call: numba's parallel lowering (0.68) drops stores into
    arrays reached through a named tuple (``out.gap[i] = ...``) made in the prange body
    itself, but not those made inside a kernel called from it.
    """
    kernel = numba.njit(cache=True, nogil=True, error_model="numpy", parallel=True, **_NO_REFCOUNT)(
        fn
    )
    _KERNELS.append(kernel)
    return cast(F, kernel)


@njit_leaf
def chunk(order: npt.NDArray[np.int64], c: int, chunks: int) -> npt.NDArray[np.int64]:
    """Chunk c of ``chunks`` equal runs of the visiting ``order`` (a view)."""
    n = order.shape[0]
    return order[c * n // chunks : (c + 1) * n // chunks]


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
