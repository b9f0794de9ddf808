"""Each example in examples/ runs, on its own server on 127.0.0.1."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np

EXAMPLES = Path(__file__).parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lane_keeping_drive_saves_camera_images(tmp_path: Path) -> None:
    saved = _load("drive_and_save_images").main(
        ["--frames", "12", "--every", "4", "--out", str(tmp_path / "img")]
    )
    assert saved == 3
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == [
        "000004.png", "000008.png", "000012.png"
    ]  # fmt: skip


def test_lidar_sequence_is_recorded(tmp_path: Path) -> None:
    out = tmp_path / "sweeps.npz"
    assert _load("record_lidar").main(["--frames", "5", "--out", str(out)]) == 5
    with np.load(out) as data:
        assert data["xyz_000005"].shape[1] == 3 and data["rotation_000001"].shape == (3, 3)


def test_one_client_drives_another_watches() -> None:
    seen = _load("two_clients").main(["--frames", "20"])
    assert [f for f, _ in seen] == list(range(1, 21))
    speeds = [s for _, s in seen]
    assert max(speeds) > speeds[0] and speeds[-1] < max(speeds)
