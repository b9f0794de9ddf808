"""Shared pieces of the viewer tests: a short-lived scripted object, the browser, and
waiting for the page to show a frame."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from roadsim.scenario import load_scenario
from roadsim.scenario.schema import Scenario, validate_data

#: How long a browser test waits for the page (ms).
TIMEOUT_MS = 30_000
#: Where the browser tests leave their screenshots (gitignored).
ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
]


def crossing(lifetime: float = 1.0) -> Scenario:
    """The built-in crossing, its pedestrian gone after ``lifetime`` seconds, and a driver
    sensor on the ego."""
    data = load_scenario("crossing").model_dump(mode="json", exclude_unset=True)
    data["objects"][0]["lifetime"] = lifetime
    data["sensors"] = [{"type": "driver", "name": "driver"}]
    return validate_data(data, "crossing-short")


def browser_or_skip() -> Any:
    """Launches Debian's Chromium headless (Playwright's own download is not used)."""
    if not Path(CHROMIUM).exists() or not bool(os.access(CHROMIUM, os.X_OK)):
        message = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("ROADSIM_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    sync_api = pytest.importorskip("playwright.sync_api")
    playwright = sync_api.sync_playwright().start()
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
    )
    return playwright, browser


def wait_for_frame(page: Any, frame: int) -> None:
    """Waits until the page has received feed frame ``frame`` and handed it to its scene."""
    page.wait_for_function(f"window.__roadsim && window.__roadsim.frame === {frame}", timeout=TIMEOUT_MS)
    page.wait_for_function(  # React has handed the frame to the scene
        f"window.__roadsim.objectIds && window.__roadsim.shown === {frame}", timeout=TIMEOUT_MS
    )
