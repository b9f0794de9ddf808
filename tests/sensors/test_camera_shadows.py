"""The sun's shadows in both camera renderers, rendered for real (EGL and Embree).

A floor with a building (static mesh) and a car (moving actor) on it, the sun in the
south-west at 45 degrees: the ground just north-east of each box is in shadow, the ground
just south-west of it is lit, in the raster and in the ray-cast camera. The raster camera
keeps the static mesh's shadow map between shots (`roadsim.sensors.raster`): a car that
moves takes its shadow with it, the static map is not drawn again, and a renderer that
drew other shots before gives the same images, bit for bit, as a new one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from roadsim.road.surface_classes import SURFACE_IDS
from roadsim.sensors.camera import Images, Shot
from roadsim.sensors.camera_model import CameraModel, Lighting
from roadsim.sensors.mount import Pose, rotation_rpy
from roadsim.sensors.raster import RasterRenderer
from roadsim.sensors.scene import Scene, SceneMesh
from roadsim.sensors.shapes import boxes
from roadsim.sim.build import MODEL_NAMES
from tests.sensors.test_rays_analytic import world

KINDS = ("raster", "raycast")
ROAD = SURFACE_IDS["road"]
BUILDING = (20.0, 8.0)  # centre (m): 4 x 4 m, 6 m high
CAR = (20.0, -6.0)  # centre (m): 4 x 2 m, 1.5 m high
#: Ground points (x, y) in the shadow (north-east of a box) and in the sun (south-west).
SHADED = {"building": (24.0, 11.0), "car": (22.5, -5.5)}
SUNLIT = {"building": (16.5, 4.5), "car": (17.0, -8.0)}


def scene(car: tuple[float, float] = CAR) -> Scene:
    h = 200.0
    floor = SceneMesh.of(
        [[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]], [[0, 1, 2], [0, 2, 3]], ROAD
    )
    v, tri = boxes(
        np.array([BUILDING[0]]), np.array([BUILDING[1]]), np.zeros(1), np.zeros(1),
        np.array([4.0]), np.array([4.0]), np.array([6.0]),
    )  # fmt: skip
    out = Scene(
        SceneMesh.concat([floor, SceneMesh.of(v, tri, SURFACE_IDS["building"])]), MODEL_NAMES
    )
    out.update(world({"id": 3, "x": car[0], "y": car[1]}), 0)
    return out


def shot(shadows: bool = True, x: float = 40.0) -> Shot:
    """A camera 40 m up, east of both boxes, looking west and down (it sees the ground
    on both sides of them)."""
    pose = Pose(np.array([x, 2.0, 40.0]), rotation_rpy(0.0, math.radians(80.0), math.pi))
    return Shot(CameraModel(200, 150, 90.0), pose, Lighting.of(225.0, 45.0), shadows=shadows)


def ground(images: Images, s: Shot, xy: tuple[float, float]) -> float:
    """The radiance (mean of RGB) of the floor at a point, which the pixel must see."""
    u, v, _ = s.model.project(s.pose.to_sensor(np.array([xy[0], xy[1], 0.0])))
    row, col = int(v), int(u)
    assert 0 <= row < s.model.height and 0 <= col < s.model.width
    assert images.surface_ids[row, col] == ROAD
    return float(images.color[row, col].mean())



@pytest.mark.parametrize("kind", KINDS)
def test_boxes_shade_the_ground_away_from_the_sun(kind: str, renderers: dict[str, object]) -> None:
    render = renderers[kind].render  # type: ignore[attr-defined]
    s, flat = shot(), shot(shadows=False)
    lit, unlit = render(scene(), s), render(scene(), flat)
    for name in ("building", "car"):
        dark, sunny = ground(lit, s, SHADED[name]), ground(lit, s, SUNLIT[name])
        # In the shadow, the ambient light alone: a third of the sunlit floor here.
        assert dark < 0.5 * sunny, name
        # Without shadows both points are lit alike (a flat floor, one light).
        assert ground(unlit, flat, SHADED[name]) == pytest.approx(sunny, rel=1e-4)


def test_the_raster_camera_keeps_the_static_shadow_map_and_redraws_the_actors() -> None:
    moved = (CAR[0], CAR[1] - 8.0)
    at_moved = (SHADED["car"][0], SHADED["car"][1] - 8.0)
    kept = RasterRenderer()
    try:
        s, sc = shot(), scene()
        first = kept.render(sc, s)
        assert kept.static_shadow_draws == 1
        # The car moves: its shadow moves with it; the static map is not drawn again.
        sc.update(world({"id": 3, "x": moved[0], "y": moved[1]}), 1)
        second = kept.render(sc, s)
        assert kept.static_shadow_draws == 1
        assert ground(second, s, SHADED["car"]) > 2.0 * ground(first, s, SHADED["car"])
        assert ground(second, s, at_moved) < 0.5 * ground(first, s, at_moved)
        assert ground(second, s, SHADED["building"]) == ground(first, s, SHADED["building"])
        # Far away, another square (drawn); back, the kept one (not drawn again) ...
        kept.render(sc, shot(x=-300.0))
        assert kept.static_shadow_draws == 2
        back = kept.render(sc, s)
        assert kept.static_shadow_draws == 2
        # ... and what a new renderer gives, bit for bit.
        fresh = RasterRenderer()
        try:
            new = fresh.render(sc, s)
        finally:
            fresh.close()
        for a, b, c in zip(second, back, new, strict=True):
            assert a.tobytes() == b.tobytes() == c.tobytes()
    finally:
        kept.close()
