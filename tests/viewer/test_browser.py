"""The viewer in a real browser (Debian's Chromium, headless, software WebGL).

The page's test hook (``window.__roadsim``) says which frame it shows and which world
objects its scene holds; the tests compare those with the simulation's world state, or
the recording's snapshot, at that frame.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import roadsim
from roadsim.capture import Capture, Recorder
from roadsim.capture.reader import read_recording
from roadsim.viewer import LiveSession, ViewerServer
from tests.viewer.helpers import ARTIFACTS, TIMEOUT_MS, crossing, wait_for_frame


@contextmanager
def roadsim_view(*args: str) -> Iterator[str]:
    """Runs ``roadsim view ARGS --port 0``; yields the address it prints."""
    with subprocess.Popen(
        [sys.executable, "-m", "roadsim", "view", *args, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as proc:  # fmt: skip
        try:
            assert proc.stdout is not None and proc.stderr is not None
            line = proc.stdout.readline()
            url = re.search(r"http://127\.0\.0\.1:\d+/", line)
            assert url, (line, proc.stderr.read() if proc.poll() is not None else "")
            yield url.group(0)
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def scene_ids(page: Any) -> list[int]:
    ids: list[int] = page.evaluate("window.__roadsim.objectIds()")
    return ids


def world_ids(sim: roadsim.Simulation) -> list[int]:
    st = sim.state
    others = st.active & (st.id != st.id[sim.ego_slot])
    return sorted(st.id[others].tolist())


def test_live_scene_matches_the_world_state_frame_by_frame(page: Any) -> None:
    sim = roadsim.Simulation(crossing(lifetime=1.0))
    with ViewerServer(LiveSession(sim, paused=True), port=0) as server:
        page.goto(server.url)
        wait_for_frame(page, 0)
        assert scene_ids(page) == world_ids(sim)
        assert 1 in scene_ids(page)  # the pedestrian, for now
        page.wait_for_timeout(300)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "viewer-crossing-frame0.png"))
        check_picture(ARTIFACTS / "viewer-crossing-frame0.png")  # the key frame draws roads
        assert page.evaluate("window.__roadsim.egoCreations()") == 1
        page.mouse.move(480, 380)  # the follow camera keeps the ego there: hover it
        tooltip = page.get_by_test_id("tooltip")
        tooltip.wait_for(timeout=TIMEOUT_MS)
        assert tooltip.inner_text().startswith(f"id {sim.state.id[sim.ego_slot]} · ego (car)")
        page.mouse.move(5, 530)
        for _ in range(3):  # the page's step button ticks the simulation once
            frame = sim.frame
            page.get_by_test_id("step").click()
            wait_for_frame(page, frame + 1)
            assert sim.frame == frame + 1
            assert scene_ids(page) == world_ids(sim)
        page.evaluate("window.__roadsim.send({cmd: 'step', count: 30})")
        wait_for_frame(page, 33)
        assert sim.frame == 33
        ids = scene_ids(page)
        assert ids == world_ids(sim) and 1 not in ids  # the pedestrian left: gone from the scene
        assert page.evaluate("window.__roadsim.egoCreations()") == 1
        assert page.evaluate("window.__roadsim.laneBuilds()") == 1
        assert "0.0 km/h" not in page.get_by_test_id("ego-speed").inner_text()


def test_roadsim_view_serves_a_builtin_scenario(page: Any) -> None:
    """The command itself: prints the address, runs the town in real time, draws it."""
    with roadsim_view("town") as url:
        page.goto(url)
        page.wait_for_function("window.__roadsim && window.__roadsim.frame > 20", timeout=TIMEOUT_MS)
        hook = page.evaluate(
            "({n: __roadsim.objectCount(), calls: __roadsim.drawCalls(), lanes: __roadsim.laneBuilds()})"
        )
        assert hook["n"] == 40 and hook["lanes"] >= 1
        assert hook["calls"] < 20  # instanced: a few draw calls for forty cars
        # Colours are display values end to end: no sRGB conversion in every fragment shader
        # (a third of a 5,000-object frame on software WebGL); the picture check below
        # shows they still come out as their hex codes.
        assert page.evaluate("[__roadsim.outputColorSpace, __roadsim.colorManagement]") == [
            "srgb-linear",
            False,
        ]
        page.get_by_test_id("camera").select_option("orbit")
        page.wait_for_timeout(300)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "viewer-town.png"
        page.screenshot(path=str(shot))
        check_picture(shot)


def check_picture(path: Path) -> None:
    """Not blank: many colours; the ego's orange, road grey and car blue all present."""
    pixels = np.asarray(Image.open(path).convert("RGB")).astype(np.int32)
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    assert pixels.std() > 20 and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 200
    orange = (r > 150) & (g > 50) & (g < 150) & (b < 70) & (r - g > 60)
    asphalt = (abs(r - g) < 12) & (abs(g - b) < 14) & (r > 30) & (r < 90)
    blue = (b > 100) & (b - r > 50)
    assert orange.sum() > 50, "no ego in the picture"
    assert asphalt.sum() > 0.02 * r.size, "no road in the picture"
    assert blue.sum() > 20, "no traffic in the picture"


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "crossing.mcap"
    sim = roadsim.Simulation(crossing(lifetime=1.0))
    with Capture(sim, [Recorder(path)], rate=10):
        sim.run(3.0)
    return path


def test_replay_and_scrub_a_recording(page: Any, recording: Path) -> None:
    snapshots = {s.frame: s for s in read_recording(recording).snapshots()}
    first, last = min(snapshots), max(snapshots)
    with roadsim_view(str(recording), "--paused") as url:
        page.goto(url)
        wait_for_frame(page, first)

        def recorded(frame: int) -> list[int]:
            a = snapshots[frame].actors
            return sorted(a.id[a.id != snapshots[frame].ego_id].tolist())

        assert scene_ids(page) == recorded(first)
        timeline = page.get_by_test_id("timeline")
        timeline.focus()
        page.keyboard.press("End")  # scrub to the end
        wait_for_frame(page, last)
        assert scene_ids(page) == recorded(last) and 1 not in scene_ids(page)
        page.keyboard.press("Home")  # and back: the pedestrian is there again
        wait_for_frame(page, first)
        assert scene_ids(page) == recorded(first) and 1 in scene_ids(page)
        page.get_by_test_id("play").click()  # plays on from there
        page.wait_for_function(f"window.__roadsim.frame > {first}", timeout=TIMEOUT_MS)
