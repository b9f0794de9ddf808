"""``roadsim sensors snapshot``, run as a user would, in a process of its own (headless)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import roadsim
from tests.test_cli import png_size

SOURCE = Path(roadsim.__file__).parents[1]


def snapshot(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SOURCE), "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "roadsim", "sensors", "snapshot", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env,
        check=False,
    )


def test_snapshot_of_the_town(tmp_path: Path) -> None:
    out = tmp_path / "shots"
    done = snapshot("town", "--at", "1.5", "-o", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "frame 30 (1.5 s)" in done.stdout
    assert "cameras: raster renderer, moderngl on EGL" in done.stdout
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "camera_depth.npy",
        "camera_depth.png",
        "camera_preview.png",
        "camera_segmentation.png",
        "lidar_perspective.png",
        "lidar_top.png",
    ]
    assert png_size(out / "camera_preview.png") == (640, 480)
    depth = np.load(out / "camera_depth.npy")
    assert depth.shape == (480, 640) and depth.dtype == np.float32
    assert np.isinf(depth).any() and (depth[np.isfinite(depth)] > 0).all()
    for name in names:
        if name.endswith(".png"):
            width, height = png_size(out / name)
            assert width >= 640 and height >= 480


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    no_sensors = tmp_path / "plain.yaml"
    no_sensors.write_text("map: town\nego: {spawn: {road: 1, lane: 1, s: 100}}\n")
    bad_camera = tmp_path / "bad.yaml"
    bad_camera.write_text(
        "map: town\nego: {spawn: {road: 1, lane: 1, s: 100}}\n"
        "sensors:\n  - {type: camera, resolution: [0, 0]}\n"
    )
    cases = [
        (("town", "--at", "-1", "-o", tmp_path / "o"), "--at: expected a time >= 0 (s), got -1"),
        (("nowhere.yaml", "-o", tmp_path / "o"), "nowhere.yaml"),
        ((no_sensors, "-o", tmp_path / "o"), "the scenario has no cameras, lidars or ray tracers"),
        ((bad_camera, "-o", tmp_path / "o"), "bad.yaml:4: sensors[0].resolution: expected"),
    ]
    for args, message in cases:
        done = snapshot(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr
        assert "Traceback" not in done.stderr and done.stderr.startswith("roadsim: error: ")
    done = snapshot("town", cwd=tmp_path)  # -o is required: argparse's usage error
    assert done.returncode == 2 and "-o/--output" in done.stderr
