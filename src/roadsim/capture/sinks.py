"""What a capture hands its snapshots to: the `Sink` interface, and `SnapshotList`.

A sink is any object with three methods; the capture calls ``open`` once before the
first snapshot, ``write`` for each snapshot in frame order, and ``close`` once at the end
(also after an error or Ctrl-C). Sinks that ship: `roadsim.capture.Recorder` (MCAP),
`roadsim.capture.ImageFiles` (camera images as files) and `SnapshotList` (in memory). A
sink that sends snapshots elsewhere (a TCP stream, shared memory) implements the same
three methods; a slow one should queue and drop rather than block ``write``, which runs
inside the simulation's tick.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from roadsim.capture.snapshot import CaptureInfo, Snapshot

__all__ = ["Sink", "SnapshotList"]


@runtime_checkable
class Sink(Protocol):
    """Where snapshots go."""

    def open(self, info: CaptureInfo) -> None:
        """Prepares for a run's snapshots (``info`` says which run)."""
        ...

    def write(self, snapshot: Snapshot) -> None:
        """Takes one snapshot. It must not keep the snapshot's arrays and change them:
        every sink gets the same snapshot."""
        ...

    def close(self) -> None:
        """Finishes; closing twice does nothing."""
        ...


class SnapshotList:
    """A sink that keeps every snapshot in memory (tests, notebooks, small runs).

    Attributes:
        info: What `open` was given (None before).
        snapshots: The snapshots written, in order.
    """

    def __init__(self) -> None:
        self.info: CaptureInfo | None = None
        self.snapshots: list[Snapshot] = []
        self.closed = False

    def open(self, info: CaptureInfo) -> None:
        self.info = info
        self.closed = False

    def write(self, snapshot: Snapshot) -> None:
        self.snapshots.append(snapshot)

    def close(self) -> None:
        self.closed = True
