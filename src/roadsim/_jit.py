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


def njit(fn: F) -> F:
    """Compiles ``fn`` with numba in nopython mode (cached, releases the GIL)."""
    return cast(F, numba.njit(cache=True, nogil=True, error_model="numpy")(fn))
