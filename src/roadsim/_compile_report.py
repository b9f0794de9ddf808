"""The report of roadsim's kernels compiling: a line on stderr as each starts.

The first simulation on a machine (and the first after an upgrade or an edit of a module
kernels are compiled from) compiles the tick's kernels with numba, about a minute of
CPU in all; later runs load them from the cache (`roadsim._jit`). While a kernel
compiles, `CompileReport` writes which one, with how many of roadsim's kernels are
ready and about how long the rest takes, so that a first run never looks hung.
`roadsim._jit` imports this module, so the report listens before any kernel can
compile, however roadsim was imported. (`roadsim.compiling.warmup` compiles
everything up front.)
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from numba.core import event

from roadsim import _jit

#: CPU seconds each kernel took to compile from an empty cache on the reference machine
#: (2 cores; `benchmarks/compile_times.py` measures them), by the name the report shows.
#: Kernels not listed count `_OTHER_S`.
EXPECTED_S: dict[str, float] = {
    "_observe_perceive_rows": 18.0,
    "_overlaps": 11.0,
    "_footprints": 10.0,
    "_gaps": 9.5,
    "_full_rows": 8.5,
    "_tick": 7.0,
    "commit_changes": 6.5,
    "_prepare_rows": 3.5,
    "_decide_rows": 3.0,
    "_relocalize_rows": 2.0,
}
_OTHER_S = 0.5


def _name(dispatcher: Any) -> str:
    return str(dispatcher.py_func.__name__)


def _ours(dispatcher: Any) -> bool:
    return str(getattr(dispatcher.py_func, "__module__", "")).startswith("roadsim.")


class CompileReport(event.Listener):
    """Writes a line to ``stream`` (stderr by default) as each of roadsim's kernels starts
    compiling (numba's ``numba:compile`` event, which only a cache miss raises), after a
    line that says why the first time, and counts the seconds spent compiling."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._depth = 0
        self._announced = False
        self._kernel_started = 0.0
        self.seconds = 0.0  # wall seconds spent compiling roadsim's kernels so far

    def on_start(self, ev: event.Event) -> None:
        dispatcher = ev.data["dispatcher"]
        if not _ours(dispatcher):
            return
        self._depth += 1
        if self._depth > 1:
            return  # a helper compiled as part of a kernel
        self._kernel_started = time.perf_counter()
        if not self._announced:
            self._announced = True
            self._write(
                "roadsim: compiling the simulation's kernels (once per machine and version; "
                "`roadsim warmup` does it up front)"
            )
        ready = sum(1 for k in _jit.kernels() if k.signatures)
        self._write(
            f"roadsim: compiling {dispatcher.py_func.__module__.removeprefix('roadsim.')}."
            f"{_name(dispatcher)} ({ready} of {len(_jit.kernels())} kernels ready, "
            f"about {_expected_left():.0f} s left)"
        )

    def on_end(self, ev: event.Event) -> None:
        if not _ours(ev.data["dispatcher"]):
            return
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._kernel_started

    def _write(self, line: str) -> None:
        stream = self._stream if self._stream is not None else sys.stderr
        print(line, file=stream, flush=True)


def _expected_left() -> float:
    """Expected CPU seconds to compile the kernels not ready in this process yet."""
    return sum(EXPECTED_S.get(_name(k), _OTHER_S) for k in _jit.kernels() if not k.signatures)


_REPORT = CompileReport()
event.register("numba:compile", _REPORT)  # type: ignore[no-untyped-call]


def compile_seconds() -> float:
    """Wall seconds this process has spent compiling roadsim's kernels so far."""
    return _REPORT.seconds
