"""The argument types every kernel of the built-in scenarios compiles for, kept in
``kernel_signatures.json`` beside this module, so that `roadsim.compiling.warmup` can
compile kernels in several processes at once without first running the code that
reaches them (numba compiles a kernel for the types of its first call).

The file is written by ``python -m roadsim.compiling --write-signatures`` after a warmup
and checked by ``tests/test_compiling.py``; a stale entry costs only time (the warmup's
simulations then compile that kernel), never a wrong result. Types are stored as JSON:
a scalar by its numba name (``"int64"``), an array as ``{"array": [dtype, ndim, layout,
readonly]}``, tuples as ``{"tuple": [...]}``, and named tuples by their class
(``{"named": "module:qualname", "fields": [...]}``, or ``"of"`` and ``"count"`` where
every field has the same type).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from numba.core import types

PATH = Path(__file__).with_name("kernel_signatures.json")

Json = Any  # a JSON value, as `encode` makes it


def encode(t: types.Type) -> Json:
    """``t`` (a numba type of the kinds roadsim's kernels take) as JSON."""
    if isinstance(t, types.Array):
        return {"array": [t.dtype.name, t.ndim, t.layout, not t.mutable]}
    if isinstance(t, types.NamedUniTuple):
        return {"named": _class_name(t.instance_class), "of": encode(t.dtype), "count": t.count}
    if isinstance(t, types.NamedTuple):
        return {"named": _class_name(t.instance_class), "fields": [encode(x) for x in t.types]}
    if isinstance(t, types.UniTuple | types.Tuple):
        return {"tuple": [encode(x) for x in t.types]}
    if isinstance(t, types.Boolean | types.Integer | types.Float):
        return t.name
    raise TypeError(f"roadsim._signatures cannot store the numba type {t!r}")


def decode(value: Json) -> types.Type:
    """The numba type `encode` made ``value`` of."""
    if isinstance(value, str):
        scalar = getattr(types, value)
        assert isinstance(scalar, types.Type), value
        return scalar
    if "array" in value:
        dtype, ndim, layout, readonly = value["array"]
        return types.Array(decode(dtype), ndim, layout, readonly=readonly)
    if "tuple" in value:
        return types.Tuple([decode(x) for x in value["tuple"]])  # type: ignore[no-untyped-call]
    cls = _class(value["named"])
    if "of" in value:
        return types.NamedUniTuple(decode(value["of"]), value["count"], cls)  # type: ignore[no-untyped-call]
    return types.NamedTuple([decode(x) for x in value["fields"]], cls)  # type: ignore[no-untyped-call]


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _class(name: str) -> Any:
    module, _, qualname = name.partition(":")
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def kernel_name(dispatcher: Any) -> str:
    """How the file names a kernel: ``module:qualname`` of its Python function."""
    return f"{dispatcher.py_func.__module__}:{dispatcher.py_func.__qualname__}"


def write(dispatchers: list[Any], path: Path = PATH) -> int:
    """Writes the signatures ``dispatchers`` have compiled (or loaded); returns how many."""
    rows = sorted(
        (kernel_name(d), [encode(t) for t in signature])
        for d in dispatchers
        for signature in d.signatures
    )
    text = json.dumps([{"kernel": k, "args": a} for k, a in rows], separators=(",", ":"))
    path.write_text(text.replace('{"kernel"', '\n{"kernel"') + "\n")
    return len(rows)


def read(path: Path = PATH) -> list[tuple[str, tuple[types.Type, ...]]]:
    """The kernels and signatures of the file, in its order (empty without the file);
    entries naming a class that is not there any more are left out."""
    if not path.exists():
        return []
    listed = []
    for row in json.loads(path.read_text()):
        try:
            listed.append((row["kernel"], tuple(decode(a) for a in row["args"])))
        except (ImportError, AttributeError):
            continue
    return listed
