"""Each kernel compiles one signature (issue [5/9]): a second one costs a user seconds to
minutes of compile, and usually means an argument arrived with another dtype or layout."""

from __future__ import annotations

import json
import subprocess
import sys

from roadsim import _signatures

SCRIPT = """
import json
import roadsim
from roadsim import _jit, _signatures

roadsim.warmup()
print(json.dumps({
    "signatures": {
        f"{k.py_func.__module__}.{k.py_func.__qualname__}": [str(s) for s in k.signatures]
        for k in _jit.kernels() if k.signatures
    },
    "listed": sorted(
        [_signatures.kernel_name(k), [_signatures.encode(t) for t in s]]
        for k in _jit.kernels() for s in k.signatures
    ),
}))
"""


def test_every_kernel_compiles_one_signature_over_every_builtin_scenario() -> None:
    # In a process of its own: other tests call kernels with arguments of their own.
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=1800, check=True
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    signatures = result["signatures"]
    # The kernels called from Python; from a warm cache, those called only from other
    # kernels load inside their callers and list no signature of their own.
    assert len(signatures) >= 15
    many = {name: sigs for name, sigs in signatures.items() if len(sigs) > 1}
    assert not many, "\n".join(f"{name}: {len(sigs)} signatures" for name, sigs in many.items())

    # The warmup's list (roadsim/kernel_signatures.json) names these signatures, so that
    # a cold warmup can compile them in two processes at once.
    listed = sorted(
        [row["kernel"], row["args"]] for row in json.loads(_signatures.PATH.read_text())
    )
    assert listed == result["listed"], (
        "roadsim/kernel_signatures.json is stale: rewrite it with "
        "`.venv/bin/python -m roadsim.compiling --write-signatures`"
    )
