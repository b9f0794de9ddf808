"""Compiled loops: numba's ``njit`` behind one typed decorator.

The tick's hot passes (localisation, perception, the traffic model, the bicycle model,
collisions) are loops over vehicles, compiled once per machine and cached next to their
source (numba's ``cache=True``), so a tick is a handful of calls instead of hundreds of
numpy operations. The kernels run single-threaded and never use fast-math, so results
are the same on every run: same scenario and seed, same bits.

``error_model="numpy"`` makes a division by zero give inf or NaN as numpy does, instead
of raising.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba

F = TypeVar("F", bound=Callable[..., Any])

# numba's private switch for compiling without reference counting (typed stubs omit it).
_NO_REFCOUNT: dict[str, Any] = {"_nrt": False}


def njit(fn: F) -> F:
    """Compiles ``fn`` with numba in nopython mode (cached, releases the GIL)."""
    return cast(F, numba.njit(cache=True, nogil=True, error_model="numpy")(fn))


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
        numba.njit(cache=True, nogil=True, error_model="numpy", inline="always", **_NO_REFCOUNT)(fn),
    )


def njit_loop(fn: F) -> F:
    """Compiles a loop over vehicles that writes into arrays its caller allocated, without
    reference counting (see `njit_leaf`); called from Python once per tick."""
    return cast(F, numba.njit(cache=True, nogil=True, error_model="numpy", **_NO_REFCOUNT)(fn))
