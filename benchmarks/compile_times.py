"""Cold compile time: what a user's first run waits for.

Run as ``.venv/bin/python benchmarks/compile_times.py`` (``--help`` for the options). It
copies the package into a temporary directory, so that its numba cache starts empty and
the project's own cache is left alone, and in a fresh process imports roadsim from the
copy and runs either one built-in scenario for a second (``--scenario``, ``highway`` by
default: what ``roadsim run`` compiles) or `roadsim.warmup` (``--warmup``: everything the
built-in scenarios and whole driver views use). It prints the CPU and wall seconds of
that process and, from numba's ``numba:compile`` events, the kernels that took longest
(each kernel's time includes the helpers compiled for it), then the same run again in a
second process, which loads everything from the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "roadsim"

CHILD = r"""
import json, sys, time
from numba.core import event

kernels = []

class Timer(event.Listener):
    depth = 0
    def on_start(self, ev):
        self.depth += 1
        if self.depth == 1:
            self.started = (time.process_time(), ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            cpu, name = self.started
            kernels.append((name, time.process_time() - cpu))

event.register("numba:compile", Timer())
cpu, wall = time.process_time(), time.perf_counter()
import roadsim
if sys.argv[1] == "--warmup":
    roadsim.warmup()
else:
    roadsim.Simulation(sys.argv[1]).run(1.0)
print(json.dumps({
    "cpu": time.process_time() - cpu,
    "wall": time.perf_counter() - wall,
    "kernels": sorted(kernels, key=lambda k: -k[1]),
}))
"""


def measure(root: Path, what: str) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(root), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, what],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=3600,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="highway", help="built-in scenario to run")
    parser.add_argument("--warmup", action="store_true", help="run roadsim.warmup() instead")
    parser.add_argument("--top", type=int, default=12, help="kernels to list")
    args = parser.parse_args(argv)
    what = "--warmup" if args.warmup else args.scenario
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(
            PACKAGE, root / "roadsim", ignore=shutil.ignore_patterns("*.nbi", "*.nbc", "*.pyc")
        )
        cold = measure(root, what)
        warm = measure(root, what)
    label = "roadsim.warmup()" if args.warmup else f"Simulation({args.scenario!r}).run(1.0)"
    print(f"{label}, empty cache: {cold['cpu']:.1f} s CPU, {cold['wall']:.1f} s wall")
    kernels = cold["kernels"]
    assert isinstance(kernels, list)
    print(f"  {len(kernels)} kernels compiled; the longest (CPU s, helpers included):")
    for name, seconds in kernels[: args.top]:
        print(f"  {seconds:7.1f}  {name}")
    print(f"the same, from the cache: {warm['cpu']:.1f} s CPU, {warm['wall']:.1f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
