"""Checks of the arguments of the Python API, shared by the layers that take ids and numbers.

numpy converts silently where a user made a mistake (``np.asarray(0.5, dtype=np.int64)`` is
0, ``float("nan")`` passes every range test by failing it), so calls that take ids or
numbers from a user check them here first and raise `roadsim.errors.ArgumentTypeError`
or `roadsim.errors.ArgumentError` naming the argument.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import numpy.typing as npt

from roadsim.errors import ArgumentError, ArgumentTypeError

__all__ = ["as_id", "as_ids", "as_number"]


def as_id(value: object, name: str) -> int:
    """An integer id (a Python or numpy integer, not a bool) as an ``int``.

    Raises:
        ArgumentTypeError: For anything else, e.g. ``7.9`` (which numpy would truncate to 7).
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name}: expected an integer id, got {_show(value)}")
    return int(value)


def as_ids(values: npt.ArrayLike, name: str) -> npt.NDArray[np.int64]:
    """Integer ids (a scalar, a sequence or an array of integers) as an int64 array of the
    same shape; an empty sequence is no ids.

    Raises:
        ArgumentTypeError: If any value is not an integer (floats, bools, strings).
    """
    arr = np.asarray(values)
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        wrong = [v for v in arr.ravel().tolist() if isinstance(v, bool) or not isinstance(v, int)]
        if wrong:
            # Name a value with a fraction first: in [2, 0.5] numpy has made 2 a float too.
            shown = next((v for v in wrong if not _whole(v)), wrong[0])
            raise ArgumentTypeError(f"{name}: expected integer ids, got {_show(shown)}")
    if arr.dtype.kind != "i":  # unsigned, or Python ints too large for int64
        limit = np.iinfo(np.int64).max
        if any(v > limit for v in arr.ravel().tolist()):
            raise ArgumentError(f"{name}: an id is larger than {limit}")
    return arr.astype(np.int64)


def as_number(
    value: object,
    name: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
) -> float:
    """A finite real number in ``[low, high]`` (ints and numpy numbers too, not bools) as
    a ``float``.

    Raises:
        ArgumentTypeError: For a value that is not a real number (a string, a dict, a bool).
        ArgumentError: For NaN, an infinity or a value outside ``[low, high]``.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name}: expected a number, got {_show(value)}")
    x = float(value)
    if not math.isfinite(x):
        raise ArgumentError(f"{name}: expected a finite number, got {x}")
    if not low <= x <= high:
        if math.isinf(high):
            expected = f">= {low:g}"
        elif math.isinf(low):
            expected = f"<= {high:g}"
        else:
            expected = f"in [{low:g}, {high:g}]"
        raise ArgumentError(f"{name}: expected a number {expected}, got {x:g}")
    return x


def _whole(value: object) -> bool:
    return isinstance(value, float) and value.is_integer()


def _show(value: object) -> str:
    """A value for a message: its repr, shortened, and its type where the repr hides it."""
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{text} ({type(value).__name__})"
