"""Keeping freed memory in the process between sensor samples, where glibc would return it.

A sample of a 64 x 2048 lidar with one bounce makes some 50 MB of temporary arrays (hits,
reflected rays, points) and frees them. glibc's malloc serves blocks above its mmap
threshold with fresh mappings and gives the free top of its heap back to the system
beyond its trim threshold, so the next sample touches new pages: some 9,000 page faults
a sample on the benchmark (`benchmarks/bench_rays.py`), each one a trap into the kernel
that zeroes a page; on the shared 2-core virtual machine they cost some 15 ms of a
bounce sample's 80 ms of CPU time (``docs/performance.md``).

`keep_freed_memory` raises both thresholds (``mallopt``), once per process, so that the
freed blocks stay mapped and are handed out again: the process keeps up to
`TRIM_THRESHOLD_BYTES` of free heap instead of returning it. Elsewhere than on glibc it
does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

__all__ = ["MMAP_THRESHOLD_BYTES", "TRIM_THRESHOLD_BYTES", "keep_freed_memory"]

#: Blocks below this size come from the heap, not from a mapping of their own (glibc's
#: largest allowed on 64-bit systems).
MMAP_THRESHOLD_BYTES = 32 << 20
#: Free memory at the top of the heap kept rather than returned to the system.
TRIM_THRESHOLD_BYTES = 1 << 30

# glibc's <malloc.h> parameter numbers.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


@functools.cache
def keep_freed_memory() -> bool:
    """Sets glibc's trim and mmap thresholds for the process (see the module docstring);
    whether it did (False where the C library is not glibc)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 (glibc only: AttributeError elsewhere)
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
        and mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    )
