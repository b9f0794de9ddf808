"""Recordings read back: replay gives the snapshots that were recorded; a recording cut
short by SIGKILL reads up to its last complete chunk; bad files are clear errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from roadsim.capture import Capture, Recorder, RecordingError, SnapshotList
from roadsim.capture.reader import read_recording
from roadsim.sim import Simulation
from tests.capture.helpers import camera_snapshot, highway_with_driver

SRC = Path(__file__).resolve().parents[2] / "src"


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def test_replay_gives_the_recorded_snapshots(tmp_path: Path) -> None:
    sim = Simulation(highway_with_driver(sensors=[{"type": "driver"}]))
    sim.add_sensor({"type": "lidar", "name": "roof", "channels": 16, "horizontal_resolution_deg": 2.0})
    sim.add_sensor({"type": "raytracer", "name": "rt", "directions": [[1, 0, 0], [0, 1, -0.2]], "bounces": 2})
    path = tmp_path / "run.mcap"
    sink = SnapshotList()
    with Capture(sim, [Recorder(path), sink], rate=10):
        sim.run(1.0)
    recording = read_recording(path)
    assert recording.complete
    replayed = list(recording.snapshots())
    assert [s.frame for s in replayed] == [s.frame for s in sink.snapshots] == list(range(0, 21, 2))
    for rec, orig in zip(replayed, sink.snapshots, strict=True):
        assert (rec.frame, rec.time, rec.ego_id) == (orig.frame, orig.time, orig.ego_id)
        assert rec.actors.equals(orig.actors)
        assert rec.samples.keys() == orig.samples.keys() == {"driver", "roof", "rt"}
        for name, a in orig.samples.items():
            b = rec.samples[name]
            assert (b.type, b.sensor_id, b.frame, b.time) == (a.type, a.sensor_id, a.frame, a.time)
            assert _same(a.pose.position, b.pose.position) and _same(a.pose.rotation, b.pose.rotation)
        assert rec.samples["driver"].reading == orig.samples["driver"].reading
        lidar_a, lidar_b = orig.samples["roof"].reading, rec.samples["roof"].reading
        for field in ("xyz", "range", "intensity", "surface_ids", "actor_ids", "lane_uids",
                      "channel", "azimuth", "time_offset", "bounce"):  # fmt: skip
            assert _same(getattr(lidar_a, field), getattr(lidar_b, field)), field
        assert lidar_a.rays == lidar_b.rays and lidar_b.name == "roof"
        rays_a, rays_b = orig.samples["rt"].reading, rec.samples["rt"].reading
        for field in ("hit_locations", "hit_normals", "hit_distances", "surface_ids",
                      "actor_ids", "lane_uids", "valid"):  # fmt: skip
            assert _same(getattr(rays_a, field), getattr(rays_b, field)), field
    info = recording.info
    assert info.every == 2 and info.seed == 0 and info.rate_hz == 10.0


def test_camera_shots_replay(tmp_path: Path) -> None:
    sim = Simulation("highway")
    sink = SnapshotList()
    Capture(sim, [sink]).start().close()
    assert sink.info is not None
    path = tmp_path / "cam.mcap"
    recorder = Recorder(path)
    recorder.open(sink.info)
    snaps = [camera_snapshot(k, sink.snapshots[0].actors) for k in range(3)]
    for snap in snaps:
        recorder.write(snap)
    recorder.close()
    back = list(read_recording(path).snapshots())
    assert len(back) == 3
    for a, b in zip(snaps, back, strict=True):
        x, y = a.samples["front"].reading, b.samples["front"].reading
        for field in ("color", "depth", "surface_ids", "actor_ids"):
            assert _same(getattr(x, field), getattr(y, field)), field
        assert np.array_equal(x.preview(), y.preview())
        assert (y.model.width, y.model.height, y.model.horizontal_fov_deg) == (8, 6, 90.0)


def test_summary(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    sim = Simulation(highway_with_driver())
    with Capture(sim, [Recorder(path)], every=4):
        sim.run(1.0)
    summary = read_recording(path).summary()
    assert summary.complete and summary.snapshots == 6
    assert (summary.first_frame, summary.last_frame) == (0, 20)
    assert summary.duration_s == pytest.approx(1.0)
    assert summary.sensors == {"driver": ("driver", 6)}
    assert {c.topic: c.messages for c in summary.channels}["/roadsim/actors"] == 6
    text = summary.to_text()
    assert "Snapshots         6 at 5 Hz (every 4 ticks of 0.05 s)" in text
    assert "/driver/driver" in text and "roadsim.DriverView" in text
    assert summary.to_dict()["sensors"] == {"driver": {"type": "driver", "samples": 6}}


CHILD = textwrap.dedent(
    """
    import sys
    from roadsim.capture import Capture, Recorder
    from roadsim.sim import Simulation

    sim = Simulation("highway")
    Capture(sim, [Recorder(sys.argv[1], chunk_size=1 << 16)]).start()
    while True:
        sim.step()
        if sim.frame == 30:
            print("ready", flush=True)
    """
)


def _killed_when_ready(child: str, path: Path) -> subprocess.Popen[str]:
    """Runs ``child`` (a script recording to ``path``) and kills it with SIGKILL once it
    says it is ready (30 frames on)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-c", child, str(path)], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()
    return proc


def test_a_recorder_killed_with_sigkill_leaves_a_readable_file(tmp_path: Path) -> None:
    path = tmp_path / "killed.mcap"
    proc = _killed_when_ready(CHILD, path)
    assert proc.returncode == -signal.SIGKILL
    with pytest.raises(RecordingError, match=r"cut short .* can be read with --partial"):
        read_recording(path)
    recording = read_recording(path, partial=True)
    assert not recording.complete
    frames = [s.frame for s in recording.snapshots()]
    assert len(frames) >= 20  # 64 KiB chunks: a few snapshots each
    assert frames == list(range(len(frames)))
    summary = recording.summary()
    assert not summary.complete and summary.snapshots == len(frames)
    # The snapshots that were read are whole and match a fresh run's.
    sim = Simulation("highway")
    sink = SnapshotList()
    with Capture(sim, [sink]):
        sim.run((len(frames) - 1) * sim.dt)
    for a, b in zip(sink.snapshots, recording.snapshots(), strict=True):
        assert a.actors.equals(b.actors)


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="no such file"):
        read_recording(tmp_path / "missing.mcap")
    with pytest.raises(RecordingError, match="a folder"):
        read_recording(tmp_path)
    text = tmp_path / "notes.mcap"
    text.write_text("not a recording\n")
    with pytest.raises(RecordingError, match="not an MCAP file"):
        read_recording(text)
    empty = tmp_path / "empty.mcap"
    empty.write_bytes(b"")
    with pytest.raises(RecordingError, match="not an MCAP file"):
        read_recording(empty)
    # An MCAP file that is not roadsim's.
    import foxglove

    other = tmp_path / "other.mcap"
    ctx = foxglove.Context()
    with foxglove.open_mcap(other, context=ctx):
        foxglove.Channel("/x", context=ctx).log({"a": 1})
    with pytest.raises(RecordingError, match="no roadsim recording"):
        read_recording(other)
    # A recording cut at any point: an error, or with partial, the whole snapshots before.
    good = tmp_path / "good.mcap"
    sim = Simulation("highway")
    with Capture(sim, [Recorder(good, chunk_size=1 << 14)]):
        sim.run(0.5)
    data = good.read_bytes()
    for cut in (9, 200, len(data) // 3, len(data) // 2, len(data) - 10):
        cut_file = tmp_path / f"cut{cut}.mcap"
        cut_file.write_bytes(data[:cut])
        with pytest.raises(RecordingError):
            read_recording(cut_file)
        try:
            frames = [s.frame for s in read_recording(cut_file, partial=True).snapshots()]
        except RecordingError as exc:
            assert "no roadsim recording" in str(exc)  # cut before the metadata
            continue
        assert frames == list(range(len(frames)))


def test_the_writer_process_writes_the_same_recording(tmp_path: Path) -> None:
    sims = [Simulation(highway_with_driver()), Simulation(highway_with_driver())]
    paths = [tmp_path / "here.mcap", tmp_path / "there.mcap"]
    captures = [
        Capture(sim, [Recorder(path, background=bg)], rate=10).start()
        for sim, path, bg in zip(sims, paths, (False, True), strict=True)
    ]
    for sim in sims:
        sim.run(1.0)
    for capture in captures:
        capture.close()
    here, there = (list(read_recording(p).snapshots()) for p in paths)
    assert len(here) == len(there) == 11
    for a, b in zip(here, there, strict=True):
        assert a.actors.equals(b.actors)
        assert a.samples["driver"].reading == b.samples["driver"].reading


WRITER_CHILD = textwrap.dedent(
    """
    import sys
    from roadsim.capture import Capture, Recorder
    from roadsim.sim import Simulation

    sim = Simulation("highway")
    Capture(sim, [Recorder(sys.argv[1], background=True)]).start()
    while True:
        sim.step()
        if sim.frame == 30:
            print("ready", flush=True)
    """
)


def test_the_writer_process_finishes_the_file_of_a_killed_run(tmp_path: Path) -> None:
    path = tmp_path / "killed.mcap"
    _killed_when_ready(WRITER_CHILD, path)
    # The writer sees its socket close, writes what it was sent, and the summary.
    deadline = 60.0
    while deadline > 0 and not read_recording_complete(path):
        time.sleep(0.2)
        deadline -= 0.2
    recording = read_recording(path)
    frames = [s.frame for s in recording.snapshots()]
    assert frames[:31] == list(range(31))


def read_recording_complete(path: Path) -> bool:
    try:
        return read_recording(path).complete
    except RecordingError:
        return False


def test_a_writer_that_fails_is_an_error(tmp_path: Path) -> None:
    sim = Simulation("highway")
    recorder = Recorder(tmp_path / "x.mcap", background=True)
    capture = Capture(sim, [recorder]).start()
    assert recorder._worker is not None
    recorder._worker._process.kill()  # the writer dies
    recorder._worker._process.wait()
    with pytest.raises(RecordingError, match="the writer process ended"):
        for _ in range(50):
            sim.step()
    with pytest.raises(RecordingError):
        capture.close()
