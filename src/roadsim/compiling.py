"""`warmup`: compiles roadsim's kernels up front (``roadsim warmup``, which ``make run``
and ``make install`` call), so that a user's first simulation does not stall. While
kernels compile, `roadsim._compile_report` says which and how long the rest takes.

On a machine with a second core, the kernels named in ``kernel_signatures.json``
(`roadsim._signatures`) compile in two processes at once, the largest first, each
process taking the next kernel that keeps the two shares even; then the built-in
scenarios run, which loads those kernels from numba's cache and compiles whatever the
file did not name. ``python -m roadsim.compiling --write-signatures`` rewrites the file
after a change to a kernel's arguments (``tests/sim/test_signatures.py`` says when).
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from numba.core.errors import NumbaError
from numba.core.registry import CPUDispatcher

from roadsim import _jit, _signatures
from roadsim._compile_report import expected_s, reporting

#: Processes that compile at once at most (the parts of a warmup do not split further).
MAX_PROCESSES = 2


@dataclass(frozen=True)
class WarmupSummary:
    """What `warmup` did."""

    kernels: int  # kernels ready after it
    compiled: int  # of those, compiled now (the rest came from the cache)
    seconds: float  # wall time


def warmup(processes: int | None = None) -> WarmupSummary:
    """Compiles (or loads from the cache) every kernel a simulation of the built-in
    scenarios uses: traffic, scripted objects, an ego, collisions and whole driver
    views, in up to ``processes`` processes at once (default: one a free core, at most
    `MAX_PROCESSES`). Returns how many kernels were compiled now."""
    from roadsim.scenario import builtin_scenarios
    from roadsim.sim import Simulation
    from roadsim.sim.simulation import SORT_EVERY

    start = time.perf_counter()
    if processes is None:
        processes = min(MAX_PROCESSES, len(os.sched_getaffinity(0)))
    compiled_before = _compiled_here()
    elsewhere = _compile_listed(processes) if processes > 1 else 0
    for name in builtin_scenarios():
        sim = Simulation(name)
        sim.run((SORT_EVERY + 1) * sim.dt)  # (the slots are sorted every SORT_EVERY ticks)
        sim.driver_views()
    ready = [k for k in _jit.kernels() if k.signatures]
    compiled = _compiled_here() - compiled_before + elsewhere
    return WarmupSummary(len(ready), compiled, time.perf_counter() - start)


def _compiled_here() -> int:
    return sum(1 for k in _jit.kernels() if sum(k.stats.cache_misses.values()))


def shares(listed: list[tuple[str, Any]], processes: int) -> list[list[tuple[str, Any]]]:
    """The kernels of ``listed`` dealt to ``processes`` processes: largest first (by
    their expected compile time), each to the process with the least so far."""
    order = sorted(listed, key=lambda row: -_expected(row[0]))
    dealt: list[list[tuple[str, Any]]] = [[] for _ in range(processes)]
    load = [0.0] * processes
    for row in order:
        i = load.index(min(load))
        dealt[i].append(row)
        load[i] += _expected(row[0])
    return dealt


def _expected(name: str) -> float:
    """The expected compile seconds of kernel ``module:qualname``."""
    return expected_s(name.rpartition(":")[2])


def _compile_listed(processes: int) -> int:
    """Compiles share 0 of the listed kernels here and, once one of them misses the
    cache, the other shares in processes of their own; returns how many those compiled."""
    listed = _signatures.read()
    if not listed:
        return 0
    dealt = shares(listed, processes)
    total_s = sum(_expected(name) for name, _ in listed)
    done_s = [0.0]  # expected seconds of the kernels compiled or loaded so far, everywhere
    done = [0]
    elsewhere = [0]
    lock = threading.Lock()
    children: list[subprocess.Popen[str]] = []
    followers: list[threading.Thread] = []

    def finished(name: str) -> None:
        with lock:
            done[0] += 1
            done_s[0] += _expected(name)

    def follow(child: subprocess.Popen[str]) -> None:
        assert child.stdout is not None
        for line in child.stdout:  # "name compiled" (1, or 0 where it came from the cache)
            name, compiled = line.split()
            finished(name)
            with lock:
                elsewhere[0] += int(compiled)

    def start_the_others() -> None:
        for share in range(1, processes):
            child = subprocess.Popen(
                [sys.executable, "-m", "roadsim.compiling", "--share", str(share), str(processes)],
                stdout=subprocess.PIPE,
                text=True,
                env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
            )
            children.append(child)
            followers.append(threading.Thread(target=follow, args=(child,), daemon=True))
            followers[-1].start()

    def progress() -> tuple[int, int, float]:
        with lock:
            return done[0], len(listed), (total_s - done_s[0]) / processes

    with reporting(progress=progress, on_first_compile=start_the_others):
        for name, signature in dealt[0]:
            _compile_one(name, signature)
            finished(name)
    for child, follower in zip(children, followers, strict=True):
        child.wait()
        follower.join()  # (it has read the pipe to its end)
        assert child.stdout is not None
        child.stdout.close()
    return elsewhere[0]


def _compile_one(name: str, signature: tuple[Any, ...]) -> bool:
    """Compiles (or loads) kernel ``name`` for ``signature``; False where the kernel is
    not there any more or does not take those types (the scenarios then compile it)."""
    dispatcher = _dispatcher(name)
    if dispatcher is None:
        return False
    try:
        dispatcher.compile(signature)
    except (NumbaError, TypeError, IndexError):  # a stale entry (IndexError: fewer arguments)
        return False
    return True


def _dispatcher(name: str) -> Any:
    """The numba dispatcher of kernel ``module:qualname``, a form of a `_jit.Split` or
    `_jit.Pass` included; None if there is none of that name."""
    module_name, _, qualname = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    found = getattr(module, qualname, None)
    if isinstance(found, CPUDispatcher):
        return found
    if isinstance(found, _jit.Split):
        return found.form(False)
    split = getattr(module, qualname.removesuffix("_threaded"), None)
    if isinstance(split, _jit.Split):
        return split.form(True)
    for value in vars(module).values():
        if isinstance(value, _jit.Pass):
            for threaded in (False, True):
                if qualname == f"{value.__name__}_{'threaded' if threaded else 'here'}":
                    return value.form(threaded)
    return None


def main(argv: list[str] | None = None) -> int:
    """``python -m roadsim.compiling``: ``--share I N`` compiles share I of N of the
    listed kernels (warmup's other processes), printing each kernel's name when done and
    1 if it compiled (0 if it came from the cache);
    ``--write-signatures`` rewrites the list from a warm run of the built-in scenarios."""
    parser = argparse.ArgumentParser(prog="python -m roadsim.compiling")
    parser.add_argument("--share", nargs=2, type=int, metavar=("I", "N"))
    parser.add_argument("--write-signatures", action="store_true")
    parser.add_argument("--again", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.share:
        share, processes = args.share
        with reporting(quiet=True):
            for name, signature in shares(_signatures.read(), processes)[share]:
                before = _compiled_here()
                _compile_one(name, signature)
                print(name, min(1, _compiled_here() - before), flush=True)
        return 0
    if args.write_signatures:
        # Kernels compiled inside others list their signatures only once loaded from the
        # cache: a run that compiled anything writes the list from a second, warm run
        # (one only: a stale entry of the list compiles on every run).
        if warmup().compiled and not args.again:
            again = [sys.executable, "-m", "roadsim.compiling", "--write-signatures", "--again"]
            return subprocess.run(again, check=False).returncode
        count = _signatures.write(_jit.kernels())
        print(f"wrote {count} signatures to {_signatures.PATH}")
        return 0
    parser.print_usage()
    return 2


if __name__ == "__main__":
    sys.exit(main())
