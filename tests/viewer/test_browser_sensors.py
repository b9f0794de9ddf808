"""The town with its sensors in a real browser (Debian's Chromium, software WebGL): the
lidar and ray-trace overlays, the camera panel, and the three view cameras.

One paused simulation serves every test here; each test ticks it from the page (the
step command) and compares what the page shows, through its test hook
(``window.__roadsim``), with the simulation at that frame.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import roadsim
from roadsim.road.surface_classes import LABEL_COLORS
from roadsim.scenario import load_scenario
from roadsim.scenario.schema import Scenario, validate_data
from roadsim.viewer import LiveSession, ViewerServer
from roadsim.viewer.sensors import MAX_LIDAR_POINTS
from tests.viewer.helpers import TIMEOUT_MS, wait_for_frame

CAMERA_SIZE = (160, 120)  # small: the camera renders on the CPU in every tick
UP = np.array([0.0, 0.0, 1.0])  # world frame
NORTH = np.array([0.0, 1.0, 0.0])


def sensor_town() -> Scenario:
    """The built-in town, its lidar and camera on, and a ray tracer on the ego's front
    bumper whose rays bounce (a trace of several segments each)."""
    data = load_scenario("town").model_dump(mode="json", exclude_unset=True)
    for sensor in data["sensors"]:
        sensor["active"] = True
        if sensor["type"] == "camera":
            sensor["resolution"] = list(CAMERA_SIZE)
    data["sensors"].append({
        "type": "raytracer", "name": "traces", "vehicle": "ego", "location": "front_bumper",
        "directions": [[1, 0, 0], [1, 0.3, -0.05], [1, -0.3, -0.05], [0.5, 0.5, -0.02]],
        "max_lengths": 60.0, "bounces": 2,
    })  # fmt: skip
    return validate_data(data, "town-sensors")


Town = tuple[roadsim.Simulation, ViewerServer, np.ndarray]


@pytest.fixture(scope="module")
def town() -> Iterator[Town]:
    sim = roadsim.Simulation(sensor_town())
    session = LiveSession(sim, paused=True)
    with ViewerServer(session, port=0) as server:
        yield sim, server, np.asarray(session.sink.origin, dtype=np.float64)


def open_page(page: Any, town: Town) -> None:
    sim, server, _ = town
    page.goto(server.url)
    wait_for_frame(page, sim.frame)


def step(page: Any, sim: roadsim.Simulation) -> None:
    """Ticks the simulation once from the page, and waits until the page shows the tick."""
    frame = sim.frame
    page.evaluate("window.__roadsim.send({cmd: 'step'})")
    wait_for_frame(page, frame + 1)
    assert sim.frame == frame + 1


def to_three(world: np.ndarray) -> np.ndarray:
    """World (x, y, z) rows, origin subtracted, in three.js' frame: (x, z, -y)."""
    return np.stack((world[:, 0], world[:, 2], -world[:, 1]), axis=1)


def to_world(three: list[float]) -> np.ndarray:
    return np.array([three[0], -three[2], three[1]])


def lidar_points(sim: roadsim.Simulation, origin: np.ndarray) -> np.ndarray:
    """The lidar's latest sweep as the page should draw it: world frame minus the origin,
    evenly subsampled to at most MAX_LIDAR_POINTS."""
    cloud = sim.readings["lidar"]
    xyz = np.asarray(cloud.xyz, dtype=np.float64)
    every = math.ceil(len(xyz) / MAX_LIDAR_POINTS)
    return np.asarray(cloud.pose.to_world(xyz[::every])) - origin


def trace_segments(sim: roadsim.Simulation, origin: np.ndarray) -> np.ndarray:
    """(N, 2, 3) each ray's path from the sensor through its valid hits, segment by segment."""
    r = sim.readings["traces"]
    assert r.coordinates == "world"
    out = []
    for ray in range(r.valid.shape[0]):
        start = np.asarray(r.pose.position, dtype=np.float64)
        for hit in range(r.valid.shape[1]):
            if not r.valid[ray, hit]:
                break
            end = np.asarray(r.hit_locations[ray, hit], dtype=np.float64)
            out.append((start, end))
            start = end
    return np.asarray(out).reshape(-1, 2, 3) - origin


def test_lidar_points_and_ray_traces_are_the_frames_readings(page: Any, town: Town) -> None:
    sim, _, origin = town
    open_page(page, town)
    boxes = [page.get_by_label(name, exact=True) for name in ("lidar", "ray traces")]
    for box in boxes:
        box.uncheck()
    step(page, sim)
    shown = page.evaluate("window.__roadsim.overlays()")
    assert not shown["lidar"]["visible"] and not shown["rays"]["visible"]
    for box in boxes:
        box.check()
    for _ in range(2):  # each tick's readings replace the last
        step(page, sim)
        shown = page.evaluate("window.__roadsim.overlays()")
        lidar, rays = shown["lidar"], shown["rays"]
        assert lidar["visible"] and rays["visible"]
        assert lidar["frame"] == rays["frame"] == sim.frame == sim.readings["lidar"].frame
        points = lidar_points(sim, origin)
        assert lidar["count"] == len(points) > 1000
        np.testing.assert_allclose(np.reshape(lidar["first"], (-1, 3)), to_three(points[:4]), atol=2e-3)
        segments = trace_segments(sim, origin)
        assert rays["count"] == len(segments) >= 4  # every ray hits something at least once
        drawn = np.reshape(rays["first"], (-1, 3))  # the first four segments' ends
        np.testing.assert_allclose(drawn, to_three(segments[:4].reshape(-1, 3)), atol=2e-3)


def image_pixels(page: Any, alt: str) -> np.ndarray:
    """(H, W, 3) the pixels of the panel's image ``alt`` as the page decoded them."""
    rgba = page.evaluate(
        """(alt) => {
            const img = document.querySelector(`img[alt="${alt}"]`);
            const canvas = document.createElement("canvas");
            [canvas.width, canvas.height] = [img.naturalWidth, img.naturalHeight];
            const ctx = canvas.getContext("2d");
            ctx.drawImage(img, 0, 0);
            return Array.from(ctx.getImageData(0, 0, canvas.width, canvas.height).data);
        }""",
        alt,
    )
    w, h = CAMERA_SIZE
    return np.asarray(rgba, dtype=np.int32).reshape(h, w, 4)[..., :3]


def test_the_camera_panel_shows_each_stream_of_the_frame(page: Any, town: Town) -> None:
    sim, _, _ = town
    open_page(page, town)
    step(page, sim)
    panel = page.get_by_test_id("cameras")
    panel.wait_for(timeout=TIMEOUT_MS)
    assert panel.inner_text().strip() == "camera"
    streams = ("color", "depth", "segmentation")
    assert panel.locator("img").evaluate_all("imgs => imgs.map(i => i.alt)") == [
        f"camera {s}" for s in streams
    ]
    page.wait_for_function(  # decoded, at the camera's size
        f"""[...document.querySelectorAll('[data-testid=cameras] img')].every(
            i => i.complete && i.naturalWidth === {CAMERA_SIZE[0]} && i.naturalHeight === {CAMERA_SIZE[1]})""",
        timeout=TIMEOUT_MS,
    )
    image = sim.readings["camera"]
    assert image.frame == sim.frame
    shown = {s: image_pixels(page, f"camera {s}") for s in streams}
    for s, pixels in shown.items():  # not blank
        assert pixels.std() > 10 and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 20, s
    # What the simulation saw, within JPEG's losses.
    colour = np.asarray(image.preview(), dtype=np.int32)
    assert np.abs(shown["color"] - colour).mean() < 8
    labels = LABEL_COLORS[np.minimum(np.asarray(image.surface_ids), len(LABEL_COLORS) - 1)]
    assert np.abs(shown["segmentation"] - labels.astype(np.int32)).mean() < 8


def settled_view(page: Any) -> dict[str, Any]:
    """The view camera once the ego's motion has been shown to its end (alpha 1)."""
    page.wait_for_function(
        "(() => { const v = window.__roadsim.view(); return v.alpha === 1 && v.ego !== null; })()",
        timeout=TIMEOUT_MS,
    )
    page.wait_for_timeout(50)  # an animation frame placed the camera at alpha 1
    view: dict[str, Any] = page.evaluate("window.__roadsim.view()")
    return view


def test_view_cameras_follow_the_ego_look_down_and_orbit(page: Any, town: Town) -> None:
    sim, _, origin = town
    open_page(page, town)
    step(page, sim)
    view = settled_view(page)
    st, k = sim.state, sim.ego_slot
    x, y, z = st.x[k] - origin[0], st.y[k] - origin[1], st.z[k] - origin[2]
    h = float(st.heading[k])
    np.testing.assert_allclose(view["ego"], [x, y, z, h], atol=1e-3)
    ahead = np.array([math.cos(h), math.sin(h), 0.0])
    ego = np.array([x, y, z])

    # Follow (the default): 14 m behind the ego and 6 m up, looking at a point 12 m ahead.
    eye = to_world(view["position"])
    np.testing.assert_allclose(eye, ego - 14 * ahead + 6 * UP, atol=1e-2)
    look = ego + 12 * ahead + UP - eye
    np.testing.assert_allclose(to_world(view["direction"]), look / np.linalg.norm(look), atol=1e-3)

    # Top-down: 140 m straight above the ego, north up the screen.
    page.get_by_test_id("camera").select_option("top")
    page.wait_for_function("window.__roadsim.view().position[1] > 100", timeout=TIMEOUT_MS)
    view = settled_view(page)
    np.testing.assert_allclose(to_world(view["position"]), ego + 140 * UP - 0.01 * NORTH, atol=1e-2)
    np.testing.assert_allclose(to_world(view["direction"]), -UP, atol=1e-3)
    np.testing.assert_allclose(to_world(view["up"]), NORTH, atol=1e-6)

    # Orbit: a drag turns the camera about the ego at the same distance; when the ego moves,
    # the camera moves with it.
    page.get_by_test_id("camera").select_option("orbit")
    page.wait_for_timeout(100)
    before = settled_view(page)
    target = ego + UP
    radius = np.linalg.norm(to_world(before["position"]) - target)
    page.mouse.move(480, 300)
    page.mouse.down()
    page.mouse.move(400, 200, steps=8)  # up the screen: tilts the camera down from overhead
    page.mouse.up()
    page.wait_for_timeout(100)
    turned = settled_view(page)
    offset = to_world(turned["position"]) - target
    assert np.linalg.norm(offset - (to_world(before["position"]) - target)) > 10  # it turned
    assert np.linalg.norm(offset) == pytest.approx(radius, abs=0.05)  # about the ego
    step(page, sim)
    moved = settled_view(page)
    ego2 = np.array([st.x[k] - origin[0], st.y[k] - origin[1], st.z[k] - origin[2]])
    assert np.linalg.norm(ego2 - ego) > 0.1  # the ego drove on
    np.testing.assert_allclose(to_world(moved["position"]) - (ego2 + UP), offset, atol=1e-2)
