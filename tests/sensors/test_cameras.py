"""Cameras, rendered for real: the raster camera on a headless EGL context (Mesa's llvmpipe
in CI, `.ci/run`), the ray-cast camera through Embree.

- analytic scenes: a wall at a known distance gives that depth at every pixel, a floor
  the depth its height and the pixel's row say; a box appears at the pixels its
  projection says, with its class and actor id, in both renderers;
- on a corpus map with traffic, the raster and the ray-cast camera agree on depth (1 cm
  at 95% of pixels) and surface classes (99% of pixels), and the actor nearest ahead
  shows its id where `WorldState` and the camera model put it;
- two runs give the same images bit for bit;
- an inactive camera costs nothing (no renderer is even made); without EGL, ``auto``
  falls back to ray casting and says so once.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from roadsim import Simulation
from roadsim.road.surface_classes import SURFACE_IDS
from roadsim.sensors.camera import CameraImage, CameraWarning, Renderers, Shot
from roadsim.sensors.camera_model import CameraModel, Lighting
from roadsim.sensors.mount import Pose, rotation_rpy
from roadsim.sensors.scene import Scene, SceneMesh
from roadsim.sensors.shapes import boxes
from tests.conftest import CORPUS

CREST = CORPUS / "maps" / "esmini" / "crest-curve.xodr"
KINDS = ("raster", "raycast")



def wall_scene(distance: float) -> Scene:
    """A 200 x 200 m wall (building) facing -x at x = distance, and nothing else."""
    d, s = distance, 100.0
    v = [[d, -s, -s], [d, s, -s], [d, s, s], [d, -s, s]]
    return Scene(SceneMesh.of(v, [[0, 1, 2], [0, 2, 3]], SURFACE_IDS["building"]), ("car",))


def test_the_colour_target_falls_back_to_rgba(
    renderers: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a driver cannot draw into RGB32F (OpenGL 3.3 does not require it), the raster
    camera draws its colour into RGBA32F and reads the same images back."""
    import moderngl

    from roadsim.sensors.raster import RasterRenderer

    scene = wall_scene(12.5)
    up = rotation_rpy(0.0, -0.6, 0.0)  # (the wall's top edge and the sky above it)
    shot = Shot(CameraModel(64, 48, 100.0), Pose(np.array([0.0, 0.0, 80.0]), up), Lighting.of())
    expected = renderers["raster"].render(scene, shot)  # type: ignore[attr-defined]
    assert np.isinf(expected.depth).any() and np.isfinite(expected.depth).any()
    other = RasterRenderer()
    try:
        made = other._ctx.framebuffer

        def framebuffer(color_attachments: tuple[object, ...] = (), *args: object) -> object:
            if any(getattr(a, "components", 0) == 3 for a in color_attachments):
                raise moderngl.Error("the framebuffer is not complete")
            return made(color_attachments, *args)

        monkeypatch.setattr(other._ctx, "framebuffer", framebuffer)
        images = other.render(scene, shot)
        assert other._targets[(64, 48)].attachments[0].components == 4
    finally:
        other.close()
    for name in images._fields:
        got, want = getattr(images, name), getattr(expected, name)
        assert got.dtype == want.dtype and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", KINDS)
def test_a_wall_at_a_known_distance(kind: str, renderers: dict[str, object]) -> None:
    scene = wall_scene(12.5)
    model = CameraModel(64, 48, 100.0)
    shot = Shot(model, Pose(np.zeros(3), np.eye(3)), Lighting.of(), shadows=False)
    images = renderers[kind].render(scene, shot)  # type: ignore[attr-defined]
    # Depth is along the optical axis: the same at every pixel, to float32.
    np.testing.assert_allclose(images.depth, 12.5, rtol=2e-6)
    assert (images.surface_ids == SURFACE_IDS["building"]).all()
    assert (images.actor_ids == -1).all()
    assert images.color.dtype == np.float32 and images.color.shape == (48, 64, 3)
    assert np.all(images.color > 0.0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_floor_and_the_sky(kind: str, renderers: dict[str, object]) -> None:
    """A camera 1.5 m above a floor (z = 0): a pixel below the horizon sees it at depth
    1.5 f / (v - cy); one above sees the sky (depth +inf, class 0)."""
    v = [[-500.0, -500.0, 0.0], [500.0, -500.0, 0.0], [500.0, 500.0, 0.0], [-500.0, 500.0, 0.0]]
    scene = Scene(SceneMesh.of(v, [[0, 1, 2], [0, 2, 3]], SURFACE_IDS["road"]), ("car",))
    model = CameraModel(80, 60, 90.0, far=2000.0)
    shot = Shot(model, Pose(np.array([3.0, -2.0, 1.5]), rotation_rpy(0, 0, 0.7)), Lighting.of())
    images = renderers[kind].render(scene, shot)  # type: ignore[attr-defined]
    rows = np.arange(60) + 0.5
    below = rows > 30.0 + 1.0  # beyond the row the far plane cuts
    expected = 1.5 * model.focal / (rows[below] - 30.0)
    np.testing.assert_allclose(
        images.depth[below], np.repeat(expected[:, None], 80, 1), rtol=1e-5, atol=2e-4
    )
    assert np.isinf(images.depth[rows < 30.0]).all()
    assert (images.surface_ids[rows < 30.0] == 0).all()
    assert (images.surface_ids[below] == SURFACE_IDS["road"]).all()
    # The sky is brighter up high than at the horizon only in blue; the floor is lit.
    assert images.color[0, :, 2].mean() > 0.0 and np.isfinite(images.color).all()


@pytest.mark.parametrize("kind", KINDS)
def test_a_box_appears_where_its_projection_says(kind: str, renderers: dict[str, object]) -> None:
    v, tri = boxes(
        np.array([12.0]), np.array([3.5]), np.array([0.0]), np.array([0.3]),
        np.array([4.0]), np.array([2.0]), np.array([1.6]),
    )  # fmt: skip
    scene = Scene(SceneMesh.of(v, tri, SURFACE_IDS["car"], actor=7), ("car",))
    model = CameraModel(160, 120, 70.0)
    pose = Pose(np.array([0.0, 0.0, 1.2]), rotation_rpy(0.0, math.radians(4.0), math.radians(15.0)))
    images = renderers[kind].render(scene, Shot(model, pose, Lighting.of()))  # type: ignore[attr-defined]
    corners = pose.to_sensor(v)
    u, w, depth = model.project(corners)
    inside = images.actor_ids == 7
    # Every pixel whose centre lies 1 pixel or more inside the convex outline of the box's
    # projected corners shows it; none 1 pixel or more outside it does ...
    hull = ConvexHull(np.stack((u, w), axis=1))  # equations: unit normal . p + offset <= 0
    cols, rows = np.meshgrid(np.arange(160) + 0.5, np.arange(120) + 0.5)
    signed = np.stack((cols, rows), axis=-1) @ hull.equations[:, :2].T + hull.equations[:, 2]
    well_inside = np.all(signed <= -1.0, axis=-1)
    well_outside = np.any(signed >= 1.0, axis=-1)
    assert well_inside.sum() > 150
    assert inside[well_inside].all() and not inside[well_outside].any()
    assert (images.surface_ids[inside] == SURFACE_IDS["car"]).all()
    # ... at a depth between its nearest and farthest corner.
    assert depth.min() - 1e-3 <= images.depth[inside].min()
    assert images.depth[inside].max() <= depth.max() + 1e-3


def test_class_and_actor_survive_their_packing_into_one_integer(
    renderers: dict[str, object],
) -> None:
    """The raster camera packs class and actor into one R32I target: a class with its top
    bit set, the largest actor id it holds and the sky (class 0, actor -1) come back as
    they went in."""
    from roadsim.sensors.raster import MAX_ACTOR_ID

    v, tri = boxes(
        np.array([10.0, 10.0]), np.array([-2.0, 2.0]), np.zeros(2), np.zeros(2),
        np.full(2, 2.0), np.full(2, 2.0), np.full(2, 2.0),
    )  # fmt: skip
    surface = np.repeat(np.array([200, SURFACE_IDS["car"]], dtype=np.uint8), len(tri) // 2)
    actor = np.repeat([MAX_ACTOR_ID, 0], len(tri) // 2)
    scene = Scene(SceneMesh.of(v, tri, surface, actor=actor), ("car",))
    shot = Shot(
        CameraModel(64, 48, 90.0), Pose(np.array([0.0, 0.0, 1.0]), np.eye(3)), Lighting.of()
    )
    images = renderers["raster"].render(scene, shot)  # type: ignore[attr-defined]
    assert images.surface_ids.dtype == np.uint8 and images.actor_ids.dtype == np.int32
    ids = zip(images.surface_ids.ravel().tolist(), images.actor_ids.ravel().tolist(), strict=True)
    pairs = set(ids)
    assert pairs == {(0, -1), (200, MAX_ACTOR_ID), (SURFACE_IDS["car"], 0)}


@pytest.mark.parametrize("kind", KINDS)
def test_a_shots_images_are_its_own(kind: str, renderers: dict[str, object]) -> None:
    """A later shot leaves an earlier one's images as they were (the raster camera reads
    the ids back into an array it keeps, and unpacks them into new ones)."""
    v, tri = boxes(
        np.array([10.0]), np.zeros(1), np.zeros(1), np.zeros(1),
        np.full(1, 2.0), np.full(1, 2.0), np.full(1, 2.0),
    )  # fmt: skip
    scene = Scene(SceneMesh.of(v, tri, SURFACE_IDS["car"], actor=7), ("car",))
    model = CameraModel(64, 48, 90.0)
    render = renderers[kind].render  # type: ignore[attr-defined]
    at = np.array([0.0, 0.0, 1.0])
    first = render(scene, Shot(model, Pose(at, np.eye(3)), Lighting.of()))
    kept = [a.copy() for a in first]
    assert np.any(first.actor_ids == 7) and np.any(first.surface_ids == SURFACE_IDS["car"])
    away = np.diag([-1.0, -1.0, 1.0])  # (sky everywhere)
    second = render(scene, Shot(model, Pose(at, away), Lighting.of()))
    assert np.all(second.actor_ids == -1)
    for now, then in zip(first, kept, strict=True):
        np.testing.assert_array_equal(now, then)


@pytest.mark.parametrize("kind", KINDS)
def test_lane_markings_show_in_their_paint(kind: str, renderers: dict[str, object]) -> None:
    """Two marks on a road, seen from above: a yellow one (look: the paint) and a white one
    (look: the class's own), both of class lane_marking, each in its colour."""
    from roadsim.road.surface_classes import ALBEDO, PAINT_LOOKS, PAINTS

    yellow = PAINT_LOOKS["yellow"]
    marking = SURFACE_IDS["lane_marking"]
    road = [[-50.0, -50.0, 0.0], [50.0, -50.0, 0.0], [50.0, 50.0, 0.0], [-50.0, 50.0, 0.0]]
    parts = [SceneMesh.of(road, [[0, 1, 2], [0, 2, 3]], SURFACE_IDS["road"])]
    for y, look in ((-1.0, yellow), (1.0, marking)):  # 0.5 m wide, 1 cm up
        strip = [[-50.0, y - 0.25, 0.01], [50.0, y - 0.25, 0.01], [50.0, y + 0.25, 0.01],
                 [-50.0, y + 0.25, 0.01]]  # fmt: skip
        parts.append(SceneMesh.of(strip, [[0, 1, 2], [0, 2, 3]], marking, look=look))
    scene = Scene(SceneMesh.concat(parts), ("car",))
    model = CameraModel(64, 48, 60.0)
    down = Pose(np.array([0.0, 0.0, 10.0]), rotation_rpy(0.0, math.pi / 2 - 1e-3, 0.0))
    images = renderers[kind].render(scene, Shot(model, down, Lighting.of(), shadows=False))  # type: ignore[attr-defined]
    for y, paint in ((-1.0, PAINTS["yellow"]), (1.0, tuple(ALBEDO[marking]))):
        u, v, _ = model.project(down.to_sensor(np.array([0.0, y, 0.0])))
        pixel = images.color[int(v), int(u)]
        assert images.surface_ids[int(v), int(u)] == marking
        # Under one light, the colour's channels stand as the paint's albedo's.
        np.testing.assert_allclose(pixel / pixel[0], np.array(paint) / paint[0], rtol=0.1)


def crest_scenario(tmp_path: Path, cameras: str, seed: int = 3) -> Path:
    path = tmp_path / "crest.yaml"
    path.write_text(
        f"map: {CREST}\nseed: {seed}\ndt: 0.05\n"
        "ego: {spawn: {road: 0, lane: -1, s: 150}, speed: 10}\n"
        "traffic: {count: 24, min_gap: 5}\n"
        "sensors:\n" + cameras
    )
    return path


def pair(size: str = "[320, 240]", every: int = 1) -> str:
    """The same camera twice, on the ego's roof, rasterised and ray-cast, sampled every
    ``every`` ticks."""
    common = (
        f"resolution: {size}, horizontal_fov_deg: 80, location: roof_center, "
        f"sample_every: {every}, "
        "offset: {translation: [0.3, 0, 0.1], rotation_deg: [0, 4, 0]}"
    )
    return (
        f"  - {{type: camera, name: raster, renderer: raster, {common}}}\n"
        f"  - {{type: camera, name: raycast, renderer: raycast, {common}}}\n"
    )


def test_raster_and_raycast_agree_on_a_corpus_map(tmp_path: Path) -> None:
    with Simulation(crest_scenario(tmp_path, pair())) as sim:
        seen_actors = 0
        for step in range(3):
            if step:
                for _ in range(20):
                    sim.step()
            a, b = sim.readings["raster"], sim.readings["raycast"]
            assert isinstance(a, CameraImage) and isinstance(b, CameraImage)
            assert (a.renderer, b.renderer) == ("raster", "raycast")
            assert a.frame == b.frame == sim.frame and a.time == sim.time
            np.testing.assert_array_equal(a.pose.position, b.pose.position)
            both_sky = np.isinf(a.depth) & np.isinf(b.depth)
            finite = np.isfinite(a.depth) & np.isfinite(b.depth)
            gap = np.abs(a.depth[finite].astype(np.float64) - b.depth[finite])
            assert (np.sum(gap <= 0.01) + both_sky.sum()) / a.depth.size >= 0.95
            assert np.mean(a.surface_ids == b.surface_ids) >= 0.99
            assert np.mean(a.actor_ids == b.actor_ids) >= 0.99
            # Not a blank picture: road, marks, sky and vehicles are in it.
            for name in ("road", "lane_marking", "unknown"):
                assert np.any(a.surface_ids == SURFACE_IDS[name])
            seen_actors += len(np.unique(a.actor_ids[a.actor_ids >= 0]))
            # The colours are those of one light model (shadows aside: the raster
            # camera's reach only as far as its shadow map).
            assert np.median(np.abs(a.color - b.color)) < 1e-3
        assert seen_actors > 0


def test_the_actor_nearest_ahead_shows_where_the_state_puts_it(tmp_path: Path) -> None:
    # (Shots every 10 ticks: those the test looks at.)
    with Simulation(crest_scenario(tmp_path, pair("[480, 360]", every=10))) as sim:
        checked = 0
        for _ in range(8):
            for _ in range(10):
                sim.step()
            st = sim.state
            for name in ("raster", "raycast"):
                image = sim.readings[name]
                assert isinstance(image, CameraImage) and image.frame == sim.frame
                ego = sim.sensor(name).mount.actor
                live = np.flatnonzero(st.active & (st.id != ego))
                # The centre of each box, in the camera's frame and image.
                centres = np.stack((st.x[live], st.y[live], st.z[live] + 0.5 * st.height[live]), 1)
                u, v, depth = image.model.project(image.pose.to_sensor(centres))
                ok = (depth > 2.0) & (u > 0) & (u < 480) & (v > 0) & (v < 360)
                if not ok.any():
                    continue
                k = np.flatnonzero(ok)[np.argmin(depth[ok])]
                pixel = image.actor_ids[int(v[k]), int(u[k])]
                # The nearest box's centre shows that actor (unless a map object hides it).
                if image.surface_ids[int(v[k]), int(u[k])] in (SURFACE_IDS["car"],):
                    assert pixel == st.id[live[k]]
                    checked += 1
        assert checked >= 4


def test_two_runs_give_the_same_images(tmp_path: Path) -> None:
    runs = []
    for _ in range(2):
        with Simulation(crest_scenario(tmp_path, pair("[160, 120]"))) as sim:
            for _ in range(15):
                sim.step()
            runs.append([sim.readings["raster"], sim.readings["raycast"]])
    for a, b in zip(*runs, strict=True):
        assert isinstance(a, CameraImage) and isinstance(b, CameraImage)
        for field in ("color", "depth", "surface_ids", "actor_ids"):
            assert getattr(a, field).tobytes() == getattr(b, field).tobytes()


def test_inactive_cameras_cost_nothing_and_switch_on(tmp_path: Path) -> None:
    cameras = "  - {type: camera, name: cam, resolution: [64, 48], active: false}\n"
    with Simulation(crest_scenario(tmp_path, cameras)) as sim:
        sim.step()
        assert sim.readings["cam"] is None and sim.camera_renderers == {}
        sim.sensor("cam").active = True
        sim.step()
        image = sim.readings["cam"]
        assert isinstance(image, CameraImage) and image.frame == sim.frame
        assert image.preview().shape == (48, 64, 3) and image.preview().dtype == np.uint8
        assert set(sim.camera_renderers) == {"raster"}
        points = image.world_points()
        hit = np.isfinite(image.depth)
        # Back-projected points lie ahead of the camera, at their depth.
        np.testing.assert_allclose(
            image.pose.to_sensor(points[hit])[:, 0], image.depth[hit], rtol=1e-6
        )


def test_without_egl_auto_falls_back_to_ray_casting_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A real failure, no mock: glcontext is told to load an EGL library that is not there.
    monkeypatch.setenv("GLCONTEXT_LINUX_LIBEGL", "/nonexistent/libEGL.so.1")
    renderers = Renderers()
    with pytest.warns(CameraWarning, match="cameras are ray-cast on the CPU.*no EGL context"):
        assert renderers.get("auto").name == "raycast"
    assert renderers.get("auto").name == "raycast"  # (no second warning: it would fail here)
    from roadsim.sensors.camera import RendererUnavailable

    with pytest.raises(RendererUnavailable, match="no EGL context"):
        renderers.get("raster")
    renderers.close()
