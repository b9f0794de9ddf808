"""``roadsim view``: a user's mistakes are one line and exit code 2 (the page itself is
tested in tests/viewer)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from roadsim.cli import main


def error_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["view", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("roadsim: error: ") and err.count("\n") <= 2
    return err


def test_a_missing_recording(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert "nothere.mcap" in error_of(capsys, str(tmp_path / "nothere.mcap"))


def test_a_file_that_is_no_recording(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.mcap"
    bad.write_text("not mcap")
    assert "bad.mcap" in error_of(capsys, str(bad))


def test_an_unknown_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert "no-such-scenario" in error_of(capsys, "no-such-scenario")


def test_bad_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert "--speed" in error_of(capsys, "town", "--speed", "fast")
    assert "speed" in error_of(capsys, "town", "--speed", "1000", "--port", "0")
    assert "--radius" in error_of(capsys, "town", "--radius", "-5")
    assert "--seed" in error_of(capsys, str(tmp_path / "x.mcap"), "--seed", "3")


def test_a_taken_port(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert "--port" in error_of(capsys, "crossing", "--port", str(port))
