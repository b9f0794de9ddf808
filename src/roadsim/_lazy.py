"""A package's public names imported on first use (PEP 562's module ``__getattr__``).

A package whose ``__init__`` imports everything it offers makes every import of any of
its modules pay for all of them: ``roadsim info run.mcap`` waited a second for numba
and the simulation. A package lists instead where each name lives::

    __getattr__, __dir__ = exports(__name__, {"Capture": "roadsim.capture.capture"})

and imports the names under ``if TYPE_CHECKING:`` for type checkers.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def exports(
    package: str, homes: dict[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose names ``homes`` maps to
    the module each is defined in (a submodule of the package maps to itself)."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home)
        value = module if home == f"{package}.{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)  # (found directly from now on)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    return __getattr__, __dir__
