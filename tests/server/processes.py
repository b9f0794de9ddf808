"""Child processes for the server tests: roadsim in another Python, and a free port pair."""

from __future__ import annotations

import os
import signal
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
    """``python ARGS`` with roadsim importable from the source tree, and Python's fault
    handler on (SIGABRT dumps its threads' stacks to stderr); killed and reaped on
    leaving, its pipes closed."""
    child = subprocess.Popen([sys.executable, "-X", "faulthandler", *args], text=True,
                             env={**os.environ, "PYTHONPATH": str(SRC)},
                             preexec_fn=_interruptible, **popen)  # fmt: skip
    try:
        yield child
    finally:
        child.kill()
        child.wait()
        for pipe in (child.stdout, child.stderr):
            if pipe is not None:
                pipe.close()


def _interruptible() -> None:
    """In the child, before it runs Python: SIGINT handled and unblocked, as a shell
    starts a command (a child inherits an ignored or blocked SIGINT, and Python then
    leaves it so).

    Without this, in three fresh-clone runs of the whole suite, the `roadsim serve`
    children of two tests never acted on the SIGINT their tests sent: a dump of their
    stacks 30 s later showed them still polling in `Server.serve`. The cause is not
    known: the workers' own SIGINT handler, mask and disposition were the same before
    and after every test. A ``preexec_fn`` also makes `subprocess` fork instead of
    vfork, which may be what helps."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def interrupt(child: subprocess.Popen[str]) -> None:
    """Sends ``child`` (a `python_child` with ``stderr=PIPE``) SIGINT, as Ctrl-C would,
    and checks that it ends as roadsim ends on Ctrl-C (exit code 130), with no
    traceback in what it wrote after. Its stderr is read while waiting, so that a full
    pipe cannot hold it; one that has not ended after 30 s dumps its threads' stacks
    into the failure."""
    child.send_signal(signal.SIGINT)
    try:
        _, rest = child.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGABRT)  # (-X faulthandler: the stacks to stderr)
        _, rest = child.communicate(timeout=30)
    assert child.returncode == 130, rest[-4000:]
    assert "Traceback" not in rest, rest[-4000:]


def free_port_pair() -> int:
    """A port whose next one is free too, as ``roadsim serve --port`` needs (streams)."""
    with zmq.Context.instance().socket(zmq.ROUTER) as probe:
        return probe.bind_to_random_port("tcp://127.0.0.1", min_port=20000, max_port=40000) - 1
