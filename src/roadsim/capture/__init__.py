"""Capture: snapshots of a simulation at a rate, handed to sinks (MCAP recordings, image
files, and what else implements `Sink`), and recordings read back.

    from roadsim.capture import Capture, Recorder

    sim = roadsim.Simulation("highway")
    with Capture(sim, [Recorder("run.mcap")], rate=20):
        sim.run(60.0)

See docs/capture.md.
"""

from roadsim.capture.capture import Capture, every_ticks
from roadsim.capture.errors import RecordingError
from roadsim.capture.recorder import Recorder
from roadsim.capture.sinks import Sink, SnapshotList
from roadsim.capture.snapshot import READING_TYPES, ActorStates, CaptureInfo, Sample, Snapshot

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
