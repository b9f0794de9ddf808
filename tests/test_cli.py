"""The installed ``roadsim`` command, run as a user would, on real corpus maps."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import roadsim
from roadsim.cli import main
from roadsim.errors import ArgumentError
from tests.conftest import CORPUS

MAPS = CORPUS / "maps"
TOWN07 = MAPS / "libOpenDRIVE" / "test.xodr"
ROADSIM = Path(sys.executable).parent / "roadsim"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert ROADSIM.exists(), f"{ROADSIM} missing: install the package (pip install -e .)"
    return subprocess.run(
        [str(ROADSIM), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_version() -> None:
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"roadsim {roadsim.__version__}" == "roadsim 0.1.0"


def test_map_info_on_town07() -> None:
    proc = run("map", "info", TOWN07)
    assert proc.returncode == 0, proc.stderr
    assert "Roads        234" in proc.stdout
    assert "Junctions    31 (0 direct)" in proc.stdout
    assert "driving" in proc.stdout


def test_map_info_json() -> None:
    proc = run("map", "info", "--json", MAPS / "esmini" / "fabriksgatan_traffic_lights.xodr")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["signals_dynamic"] == 3 and data["junctions"] == 1


def test_map_info_prints_map_warnings_as_one_line_each() -> None:
    proc = run("map", "info", MAPS / "esmini" / "stationary_objects.xodr")
    assert proc.returncode == 0
    assert (
        proc.stderr.startswith("roadsim: warning: ") and "stationary_objects.xodr:6" in proc.stderr
    )
    assert len(proc.stderr.strip().splitlines()) == 1


def test_map_plot_writes_a_png(tmp_path: Path) -> None:
    out = tmp_path / "town07.png"
    proc = run("map", "plot", TOWN07, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert str(out) in proc.stdout
    width, height = png_size(out)
    assert 800 < width < 4000 and 800 < height < 4000


def test_map_plot_default_output_is_named_after_the_map(tmp_path: Path) -> None:
    proc = run("map", "plot", MAPS / "esmini" / "curves.xodr", "--dpi", "50", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert png_size(tmp_path / "curves.png")[0] > 100


def test_malformed_map_is_one_error_line(tmp_path: Path) -> None:
    text = (MAPS / "esmini" / "straight_500m.xodr").read_text()
    bad = tmp_path / "truncated.xodr"
    bad.write_text(text[: len(text) // 2])
    proc = run("map", "info", bad)
    assert proc.returncode == 2
    assert proc.stderr.startswith("roadsim: error: ")
    assert str(bad) in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2
    assert proc.stdout == ""


def test_missing_file_and_unwritable_output(tmp_path: Path) -> None:
    proc = run("map", "plot", tmp_path / "nope.xodr")
    assert proc.returncode == 2 and "nope.xodr" in proc.stderr and "Traceback" not in proc.stderr
    proc = run("map", "plot", MAPS / "esmini" / "curves.xodr", "-o", tmp_path / "no" / "dir.png")
    assert (
        proc.returncode == 2
        and proc.stderr.startswith("roadsim: error: ")
        and "Traceback" not in proc.stderr
    )


def test_empty_map_name_says_so() -> None:
    proc = run("map", "info", "")
    assert proc.returncode == 2
    assert proc.stderr.startswith("roadsim: error: the map name is empty; give an .xodr file")
    assert "directory" not in proc.stderr and "Traceback" not in proc.stderr
    with pytest.raises(ArgumentError, match="the map name is empty"):
        roadsim.load_map("")


def test_unknown_image_format(tmp_path: Path) -> None:
    proc = run("map", "plot", MAPS / "esmini" / "curves.xodr", "-o", tmp_path / "map.xyz")
    assert proc.returncode == 2 and "map.xyz" in proc.stderr and ".png" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "map.xyz").exists()


def test_usage_errors_exit_2() -> None:
    for args in ((), ("map",), ("map", "bogus"), ("map", "info"), ("--bogus",)):
        proc = run(*args)
        assert proc.returncode == 2, args
        assert "usage: roadsim" in proc.stderr and "Traceback" not in proc.stderr


def test_map_list() -> None:
    proc = run("map", "list")
    assert proc.returncode == 0
    assert proc.stdout.split() == roadsim.builtin_maps()


def test_builtin_map_by_name() -> None:
    names = roadsim.builtin_maps()
    if not names:
        pytest.skip("no built-in maps yet")
    proc = run("map", "info", names[0])
    assert proc.returncode == 0, proc.stderr
    assert "Roads" in proc.stdout


def test_python_dash_m() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "roadsim", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "roadsim 0.1.0"


def test_main_in_process(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["map", "info", str(MAPS / "esmini" / "straight_500m.xodr")]) == 0
    assert "Lanes        6 lane records" in capsys.readouterr().out
    assert main(["map", "info", str(tmp_path / "missing.xodr")]) == 2
    assert capsys.readouterr().err.startswith("roadsim: error: ")
    with pytest.raises(SystemExit) as exc:
        main(["map", "plot"])
    assert exc.value.code == 2
