"""Each kernel compiles one signature (issue [5/9]): a second one costs a user seconds to
minutes of compile, and usually means an argument arrived with another dtype or layout."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json
import roadsim
from roadsim import _jit

roadsim.warmup()
print(json.dumps({
    f"{k.py_func.__module__}.{k.py_func.__qualname__}": [str(s) for s in k.signatures]
    for k in _jit.kernels() if k.signatures
}))
"""


def test_every_kernel_compiles_one_signature_over_every_builtin_scenario() -> None:
    # In a process of its own: other tests call kernels with arguments of their own.
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=1800, check=True
    )
    signatures = json.loads(done.stdout.strip().splitlines()[-1])
    # The kernels called from Python; from a warm cache, those called only from other
    # kernels load inside their callers and list no signature of their own.
    assert len(signatures) >= 15
    many = {name: sigs for name, sigs in signatures.items() if len(sigs) > 1}
    assert not many, "\n".join(f"{name}: {len(sigs)} signatures" for name, sigs in many.items())
