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

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
        # Kernels ready, kernels in all and seconds left, where this process alone cannot
        # tell (`roadsim.compiling` compiling in several processes); else counted here.
        self.progress: Callable[[], tuple[int, int, float]] | None = None
        # Called once as the next kernel starts compiling (a cache miss).
        self.on_first_compile: Callable[[], None] | None = None

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
        started, self.on_first_compile = self.on_first_compile, None
        if started is not None:
            started()
        ready, total, left = (self.progress or _progress)()
        self._write(
            f"roadsim: compiling {dispatcher.py_func.__module__.removeprefix('roadsim.')}."
            f"{_name(dispatcher)} ({ready} of {total} kernels ready, about {left:.0f} s left)"
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


def expected_s(name: str) -> float:
    """The CPU seconds kernel ``name`` (its function's name) is expected to compile in."""
    return EXPECTED_S.get(name, _OTHER_S)


def _progress() -> tuple[int, int, float]:
    """The kernels of this process ready, all of them, and the expected CPU seconds to
    compile those not ready yet."""
    kernels = _jit.kernels()
    left = sum(expected_s(_name(k)) for k in kernels if not k.signatures)
    return sum(1 for k in kernels if k.signatures), len(kernels), left


_REPORT = CompileReport()
event.register("numba:compile", _REPORT)  # type: ignore[no-untyped-call]


@contextmanager
def reporting(
    progress: Callable[[], tuple[int, int, float]] | None = None,
    on_first_compile: Callable[[], None] | None = None,
    quiet: bool = False,
) -> Iterator[CompileReport]:
    """Within this, the report counts with ``progress``, calls ``on_first_compile`` as
    the first kernel starts compiling, or (``quiet``) writes nothing."""
    saved = (_REPORT.progress, _REPORT.on_first_compile, _REPORT._stream)
    _REPORT.progress, _REPORT.on_first_compile = progress, on_first_compile
    quiet_stream = open(os.devnull, "w") if quiet else None  # noqa: SIM115
    if quiet_stream is not None:
        _REPORT._stream = quiet_stream
    try:
        yield _REPORT
    finally:
        _REPORT.progress, _REPORT.on_first_compile, _REPORT._stream = saved
        if quiet_stream is not None:
            quiet_stream.close()


def compile_seconds() -> float:
    """Wall seconds this process has spent compiling roadsim's kernels so far."""
    return _REPORT.seconds
