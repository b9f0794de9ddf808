"""Child processes for the server tests: roadsim in another Python, and a free port pair."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import zmq

import roadsim

#: The source tree, for the children's PYTHONPATH.
SRC = Path(roadsim.__file__).parent.parent


@contextmanager
def python_child(*args: str, **popen: Any) -> Iterator[subprocess.Popen[str]]:
    """``python ARGS`` with roadsim importable from the source tree; killed and reaped
    on leaving, its pipes closed."""
    child = subprocess.Popen([sys.executable, *args], text=True,
                             env={**os.environ, "PYTHONPATH": str(SRC)}, **popen)  # fmt: skip
    try:
        yield child
    finally:
        child.kill()
        child.wait()
        for pipe in (child.stdout, child.stderr):
            if pipe is not None:
                pipe.close()


def free_port_pair() -> int:
    """A port whose next one is free too, as ``roadsim serve --port`` needs (streams)."""
    with zmq.Context.instance().socket(zmq.ROUTER) as probe:
        return probe.bind_to_random_port("tcp://127.0.0.1", min_port=20000, max_port=40000) - 1
