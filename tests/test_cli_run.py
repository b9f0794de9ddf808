"""``roadsim run`` and ``roadsim scenario``, run as the installed command."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.test_cli import ROADSIM, run


def test_run_prints_a_summary() -> None:
    proc = run("run", "town", "--duration", "2", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "Scenario          town (seed 0)" in text
    assert "Frames            40" in text
    assert "Simulated time    2.00 s" in text
    for field in ("Real-time factor", "Agent-steps/s", "Collisions", "Left the map"):
        assert field in text
    # The wall time is the whole command's: loading and building are in it, and shown.
    pattern = r"^(Wall time|  load and build|  compiling|  run) +([0-9.]+) s"
    times = {m[1].strip(): float(m[2]) for m in re.finditer(pattern, text, re.MULTILINE)}
    assert set(times) >= {"Wall time", "load and build", "run"}
    assert times["load and build"] > 0
    parts = times["load and build"] + times.get("compiling", 0.0) + times["run"]
    assert times["Wall time"] == pytest.approx(parts, abs=0.02)


def test_run_json_summary_with_seed() -> None:
    proc = run("run", "highway", "--duration", "1", "--seed", "7", "--no-progress", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["seed"] == 7
    assert summary["frames"] == 20
    assert summary["simulated_s"] == 1.0
    assert summary["vehicles"] > 100
    assert summary["agent_steps_per_s"] > 0
    assert summary["interrupted"] is False
    assert summary["setup_s"] > 0 and summary["run_s"] > 0
    parts = summary["setup_s"] + summary["compile_s"] + summary["run_s"]
    assert summary["wall_s"] == pytest.approx(parts)


def test_run_realtime_is_paced() -> None:
    start = time.perf_counter()
    proc = run("run", "town", "--duration", "1.5", "--realtime", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert time.perf_counter() - start >= 1.5


def test_ctrl_c_ends_with_the_summary() -> None:
    proc = subprocess.Popen(
        [str(ROADSIM), "run", "highway", "--duration", "3600", "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4.0)  # past start-up, into the run
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err  # 128 + SIGINT: the run did not finish
    assert "(interrupted)" in out and "Wall time" in out
    assert "Traceback" not in err


def test_bad_scenario_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("map: highway\ntraffic:\n  cout: 3\n")
    for command in (["run", str(bad)], ["scenario", "check", str(bad)]):
        proc = run(*command)
        assert proc.returncode == 2
        assert "bad.yaml:3: traffic.cout: unknown key (did you mean 'count'?)" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_actor_ids_that_name_no_actor_are_located_errors(tmp_path: Path) -> None:
    bad = tmp_path / "ids.yaml"
    bad.write_text(
        "map: highway\nego: {spawn: {road: 1, lane: -3, s: 20}}\nobjects:\n"
        "  - type: path\n    path: [{x: 20, y: -9, speed: 3}, {x: 50, y: -9, speed: 3}]\n"
        "    target_point: 1\n    controller: 99\n    controller_target: {x: 100, y: -7.6}\n"
        "sensors:\n  - {type: driver, vehicle: 42}\n"
    )
    for command in (["run", str(bad)], ["scenario", "check", str(bad)]):
        proc = run(*command)
        assert proc.returncode == 2
        assert proc.stderr.splitlines() == [
            f"roadsim: error: {bad}:7: objects[0].controller: no actor has the id 99 "
            "(ids: ego 0, objects 1)",
            f"{bad}:10: sensors[0].vehicle: no actor has the id 42 (ids: ego 0, objects 1)",
        ]


def test_bad_duration_is_a_usage_error() -> None:
    proc = run("run", "town", "--duration", "-1")
    assert proc.returncode == 2
    assert "--duration must be positive" in proc.stderr


def test_scenario_schema_list_and_check() -> None:
    schema = json.loads(run("scenario", "schema").stdout)
    assert schema["type"] == "object"
    assert {"map", "seed", "dt", "duration", "ego", "traffic", "objects"} <= set(
        schema["properties"]
    )
    names = run("scenario", "list").stdout.split()
    assert {"highway", "town", "crossing", "cut-in"} <= set(names)
    proc = run("scenario", "check", "town")
    assert proc.returncode == 0
    assert "town: ok" in proc.stdout
