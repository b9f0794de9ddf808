"""Freed memory kept between samples (`roadsim.sensors.heap`): on glibc, a round of
allocations that faults thousands of pages by default faults none once the thresholds
are set. Each case runs in a process of its own (the setting is the process's)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from roadsim.sensors.heap import keep_freed_memory

ROUNDS = """
import resource, sys
import numpy as np
from roadsim.sensors.heap import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
def once():  # a sample's temporaries: 36 MB in four arrays
    arrays = [np.ones(n) for n in (300_000, 1_500_000, 700_000, 2_000_000)]
    return sum(float(a[-1]) for a in arrays)
once(); once()
start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    once()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start) // 5)
"""


def faults_per_round(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", ROUNDS, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_freed_pages_stay_mapped() -> None:
    assert keep_freed_memory()  # (glibc here)
    assert faults_per_round("default") > 1000
    assert faults_per_round("keep") < 50
