"""``roadsim run --record``, ``roadsim replay``, ``export`` and ``info``, run as the command."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from roadsim.capture.reader import read_recording
from tests.test_cli import ROADSIM, run


def test_record_then_info_replay_export(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    proc = run("run", "highway", "--duration", "1", "--record", path, "--capture-rate", "10",
               "--no-progress", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["snapshots"] == 11 and summary["recording"] == str(path)
    assert summary["recorded_bytes"] == path.stat().st_size > 0

    info = run("info", path)
    assert info.returncode == 0, info.stderr
    assert "Complete          yes" in info.stdout
    assert "Snapshots         11 at 10 Hz (every 2 ticks of 0.05 s)" in info.stdout
    assert "/scene/actors      foxglove.SceneUpdate (protobuf), 11 messages" in info.stdout
    as_json = json.loads(run("info", path, "--json").stdout)
    assert as_json["snapshots"] == 11 and as_json["metadata"]["seed"] == "0"

    replay = run("replay", path)
    assert replay.returncode == 0, replay.stderr
    lines = replay.stdout.splitlines()
    assert len(lines) == 11
    assert lines[0].startswith("frame      0  t     0.00 s  actors")
    assert "ego (60.0, -7.6) 25.0 m/s" in lines[0]

    again = tmp_path / "again.mcap"
    replay = run("replay", path, "--record", again)
    assert replay.returncode == 0, replay.stderr
    assert "replayed 11 snapshots" in replay.stdout
    a = list(read_recording(path).snapshots())
    b = list(read_recording(again).snapshots())
    assert all(x.actors.equals(y.actors) for x, y in zip(a, b, strict=True))

    out = tmp_path / "csv"
    export = run("export", path, "--csv", out)
    assert export.returncode == 0, export.stderr
    with (out / "actors.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {r["frame"] for r in rows} == {str(k) for k in range(0, 21, 2)}
    assert f"wrote {out / 'actors.csv'} ({len(rows)} rows)" in export.stdout


def test_an_existing_recording_needs_force(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    path.write_bytes(b"old")
    proc = run("run", "highway", "--duration", "0.1", "--record", path, "--no-progress")
    assert proc.returncode == 2
    assert proc.stderr == f"roadsim: error: {path}: the file exists (overwrite it with --force)\n"
    assert path.read_bytes() == b"old"
    proc = run("run", "highway", "--duration", "0.1", "--record", path, "--force", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert read_recording(path).complete


def test_bad_options_and_inputs_are_clear_errors(tmp_path: Path) -> None:
    proc = run("run", "highway", "--capture-rate", "10")
    assert proc.returncode == 2 and "--capture-rate needs --record" in proc.stderr
    proc = run("run", "highway", "--record", tmp_path / "x.mcap", "--capture-rate", "100")
    assert proc.returncode == 2
    assert "--capture-rate: 100 Hz is above the simulation's 20 ticks per second" in proc.stderr
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    truncated = tmp_path / "cut.mcap"
    good = tmp_path / "good.mcap"
    assert run("run", "highway", "--duration", "0.5", "--record", good, "--no-progress").returncode == 0
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    cases = {
        tmp_path / "missing.mcap": "no such file",
        text: "not an MCAP file",
        tmp_path: "a folder, not a recording",
        truncated: "the recording is cut short",
    }
    for command in (["info"], ["replay"], ["export", "--csv", str(tmp_path / "out")]):
        for path, message in cases.items():
            proc = run(*command[:1], path, *command[1:])
            assert proc.returncode == 2, (command, path)
            assert proc.stderr.startswith(f"roadsim: error: {path}: "), proc.stderr
            assert message in proc.stderr and "Traceback" not in proc.stderr
    proc = run("info", truncated, "--partial")
    assert proc.returncode == 0, proc.stderr
    assert "Complete          no" in proc.stdout


def test_ctrl_c_closes_the_recording(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    proc = subprocess.Popen(
        [str(ROADSIM), "run", "highway", "--duration", "3600", "--no-progress", "--record", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Past start-up, into the run: the recording grew after it was opened (on a busy
    # machine start-up alone can take several seconds).
    sizes: set[int] = set()
    deadline = time.monotonic() + 60.0
    while len(sizes - {0}) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        sizes.add(path.stat().st_size if path.exists() else 0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "(interrupted)" in out and "Recorded " in out
    recording = read_recording(path)  # complete: no --partial needed
    assert recording.complete
    assert recording.summary().snapshots > 1


def test_the_writer_process_is_the_default_where_a_second_cpu_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from roadsim.cli import build_parser
    from roadsim.cli_run import _capture
    from roadsim.sim import Simulation

    def background(cpus: int, *options: str) -> bool:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
        args = build_parser().parse_args(
            ["run", "highway", "--record", str(tmp_path / f"{cpus}{len(options)}.mcap"), *options]
        )
        with Simulation("highway") as sim:
            capture = _capture(sim, args)
            (recorder,) = capture.sinks
            return bool(recorder.background)

    assert background(2) and background(16)
    assert not background(1)
    assert not background(2, "--no-writer-process")
    assert background(1, "--writer-process")
