"""Capture: snapshots of a simulation at a rate, handed to sinks (MCAP recordings, image
files, and what else implements `Sink`), and recordings read back.

    from roadsim.capture import Capture, Recorder

    sim = roadsim.Simulation("highway")
    with Capture(sim, [Recorder("run.mcap")], rate=20):
        sim.run(60.0)

See docs/capture.md.
"""

from typing import TYPE_CHECKING

from roadsim._lazy import exports

__getattr__, __dir__ = exports(
    __name__,
    {
        "READING_TYPES": "roadsim.capture.snapshot",
        "ActorStates": "roadsim.capture.snapshot",
        "Capture": "roadsim.capture.capture",
        "CaptureInfo": "roadsim.capture.snapshot",
        "Recorder": "roadsim.capture.recorder",
        "RecordingError": "roadsim.capture.errors",
        "Sample": "roadsim.capture.snapshot",
        "Sink": "roadsim.capture.sinks",
        "Snapshot": "roadsim.capture.snapshot",
        "SnapshotList": "roadsim.capture.sinks",
        "every_ticks": "roadsim.capture.capture",
    },
)

__all__ = [
    "READING_TYPES",
    "ActorStates",
    "Capture",
    "CaptureInfo",
    "Recorder",
    "RecordingError",
    "Sample",
    "Sink",
    "Snapshot",
    "SnapshotList",
    "every_ticks",
]

if TYPE_CHECKING:
    from roadsim.capture.capture import Capture, every_ticks
    from roadsim.capture.errors import RecordingError
    from roadsim.capture.recorder import Recorder
    from roadsim.capture.sinks import Sink, SnapshotList
    from roadsim.capture.snapshot import (
        READING_TYPES,
        ActorStates,
        CaptureInfo,
        Sample,
        Snapshot,
    )
