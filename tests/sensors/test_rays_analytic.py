"""The ray-casting scene and the ray tracer on hand-built scenes with exact answers.

Scenes are built from triangles directly (`SceneMesh.of`), actors from a `WorldState`
written by hand, and everything is cast with the real Embree backend. Distances come
through Embree's float32 (a local frame around the scene's centre), so "exact" here is
1e-5 m over distances of tens of metres.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from roadsim.road.surface_classes import SURFACE_IDS
from roadsim.scenario.sensors import RayTracerSpec
from roadsim.sensors.raycast import RayPool
from roadsim.sensors.raytracer import BOUNCE_OFFSET_M, RayTracer, trace
from roadsim.sensors.scene import Scene, SceneMesh
from roadsim.sensors.shapes import boxes, prism, triangulate_polygon
from roadsim.sim.build import MODEL_NAMES
from roadsim.world.state import STATIC_OBJECT, VEHICLE, WorldState

TOL = 1e-5
ROAD, CAR, BARRIER = SURFACE_IDS["road"], SURFACE_IDS["car"], SURFACE_IDS["barrier"]


def plane(z: float = 0.0, half: float = 100.0, surface: int = ROAD, lane: int = 7) -> SceneMesh:
    v = [[-half, -half, z], [half, -half, z], [half, half, z], [-half, half, z]]
    return SceneMesh.of(v, [[0, 1, 2], [0, 2, 3]], surface, -1, lane)


def world(*rows: dict[str, float]) -> WorldState:
    """Actors standing where ``rows`` say (car boxes by default)."""
    st = WorldState.empty(max(len(rows), 1))
    for k, row in enumerate(rows):
        st.active[k] = True
        st.id[k] = row.get("id", k)
        st.kind[k] = row.get("kind", VEHICLE)
        st.model[k] = MODEL_NAMES.index(row.get("model", "car"))  # type: ignore[arg-type]
        for name in ("x", "y", "z", "heading"):
            getattr(st, name)[k] = row.get(name, 0.0)
        st.length[k], st.width[k], st.height[k] = row.get("length", 4.0), 2.0, 1.5
    return st


def scene_of(mesh: SceneMesh, state: WorldState | None = None) -> Scene:
    scene = Scene(mesh, MODEL_NAMES)
    scene.update(state if state is not None else world(), 0)
    return scene


def test_plane_distances_locations_normals_and_ids() -> None:
    scene = scene_of(plane(z=0.0))
    # Rays down from 10 m at several angles: distance 10 / cos(angle).
    angles = np.radians([0.0, 10.0, 30.0, 60.0])
    d = np.stack((np.sin(angles), np.zeros(4), -np.cos(angles)), axis=1)
    o = np.tile([1.0, 2.0, 10.0], (4, 1))
    hits = scene.cast(o, d, 100.0)
    assert hits.valid.all()
    np.testing.assert_allclose(hits.distance, 10.0 / np.cos(angles), atol=TOL)
    np.testing.assert_allclose(hits.normal, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-7)
    assert (hits.surface == ROAD).all() and (hits.lane == 7).all() and (hits.actor == -1).all()
    # From below, the normal faces the ray: down.
    up = scene.cast([[0.0, 0.0, -3.0]], [[0.0, 0.0, 1.0]], 100.0)
    np.testing.assert_allclose(up.distance, [3.0], atol=TOL)
    np.testing.assert_allclose(up.normal, [[0.0, 0.0, -1.0]])


def test_misses_and_max_t() -> None:
    scene = scene_of(plane(z=0.0))
    o = np.array([[0.0, 0.0, 10.0]] * 3)
    d = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [0.0, 0.0, -1.0]])
    hits = scene.cast(o, d, [100.0, 9.99, 10.01])
    assert hits.valid.tolist() == [False, False, True]
    assert np.isnan(hits.distance[:2]).all() and np.isnan(hits.normal[:2]).all()
    assert hits.surface[:2].tolist() == [0, 0] and hits.actor[:2].tolist() == [-1, -1]
    assert hits.lane[:2].tolist() == [-1, -1]


def test_box_actor_faces_and_ids() -> None:
    # A car (4 x 2 x 1.5 m) at (20, 5) turned 90 degrees: it spans x 19..21, y 3..7.
    st = world({"id": 42, "x": 20.0, "y": 5.0, "heading": math.pi / 2})
    scene = scene_of(plane(z=-1.0), st)
    o = np.array([[0.0, 5.0, 0.75], [20.0, 5.0, 10.0], [20.0, -10.0, 0.5], [20.0, 5.0, 0.5]])
    d = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    hits = scene.cast(o, d, 100.0)
    np.testing.assert_allclose(hits.distance, [19.0, 8.5, 13.0, 1.0], atol=TOL)
    np.testing.assert_allclose(
        hits.normal, [[-1, 0, 0], [0, 0, 1], [0, -1, 0], [-1, 0, 0]], atol=1e-6
    )
    # The last ray starts inside the box: it hits the inside of the far face.
    assert hits.actor.tolist() == [42, 42, 42, 42]
    assert (hits.surface == CAR).all() and (hits.lane == -1).all()
    # The nearer of the static and the moving hit wins.
    np.testing.assert_allclose(scene.cast([[20.0, 5.0, 10.0]], [[0.0, 0.0, -1.0]], 9.0).distance, [8.5])


def test_a_sensor_passes_through_its_own_actor() -> None:
    st = world({"id": 3, "x": 0.0, "y": 0.0}, {"id": 4, "x": 10.0, "y": 0.0})
    scene = scene_of(plane(z=0.0), st)
    o = np.array([[0.0, 0.0, 0.75]])
    ahead = scene.cast(o, [[1.0, 0.0, 0.0]], 100.0, ignore_actor=3)
    assert ahead.actor.tolist() == [4]
    np.testing.assert_allclose(ahead.distance, [8.0], atol=TOL)
    down = scene.cast(o, [[0.0, 0.0, -1.0]], 100.0, ignore_actor=3)
    assert down.surface.tolist() == [ROAD]
    np.testing.assert_allclose(down.distance, [0.75], atol=TOL)
    # A static actor (in the static mesh) is skipped too.
    static = world({"id": 9, "x": 0.0, "y": 0.0, "kind": STATIC_OBJECT, "model": "barrier"})
    solid = SceneMesh.concat([plane(z=0.0), _boxes_of(static)])
    scene = scene_of(solid)
    above = np.array([[0.0, 0.0, 3.0]])
    assert scene.cast(above, [[0.0, 0.0, -1.0]], 10.0).actor.tolist() == [9]
    through = scene.cast(above, [[0.0, 0.0, -1.0]], 10.0, ignore_actor=9)
    assert through.surface.tolist() == [ROAD] and through.actor.tolist() == [-1]
    np.testing.assert_allclose(through.distance, [3.0], atol=1e-4)


def _boxes_of(st: WorldState) -> SceneMesh:
    v, tri = boxes(st.x, st.y, st.z, st.heading, st.length, st.width, st.height)
    return SceneMesh.of(v, tri, BARRIER, np.repeat(st.id, 12))


def test_mirror_at_45_degrees() -> None:
    # A mirror plane through x = 10 turned 45 degrees (normal (-1, 1, 0)/sqrt 2): a ray
    # along +x from the origin turns to +y there, and hits a wall at y = 6.
    mirror = SceneMesh.of(
        [[5.0, -5.0, -5.0], [15.0, 5.0, -5.0], [15.0, 5.0, 5.0], [5.0, -5.0, 5.0]],
        [[0, 1, 2], [0, 2, 3]],
        SURFACE_IDS["building"],
    )
    wall = SceneMesh.of(
        [[-50.0, 6.0, -50.0], [50.0, 6.0, -50.0], [50.0, 6.0, 50.0], [-50.0, 6.0, 50.0]],
        [[0, 1, 2], [0, 2, 3]],
        BARRIER,
    )
    scene = scene_of(SceneMesh.concat([mirror, wall]))
    tr = trace(scene, np.array([[0.0, 0.0, 0.0]]), np.array([[1.0, 0.0, 0.0]]), np.array([100.0]), 1)
    assert tr.valid[0].tolist() == [True, True]
    np.testing.assert_allclose(tr.locations[0, 0], [10.0, 0.0, 0.0], atol=TOL)
    np.testing.assert_allclose(tr.normals[0, 0], np.array([-1.0, 1.0, 0.0]) / math.sqrt(2), atol=1e-6)
    # The reflected ray starts BOUNCE_OFFSET_M off the mirror along its normal.
    start = np.array([10.0, 0.0, 0.0]) + BOUNCE_OFFSET_M * np.array([-1.0, 1.0, 0.0]) / math.sqrt(2)
    np.testing.assert_allclose(tr.locations[0, 1], [start[0], 6.0, 0.0], atol=TOL)
    np.testing.assert_allclose(tr.distances[0], [10.0, 6.0 - start[1]], atol=TOL)
    np.testing.assert_allclose(tr.normals[0, 1], [0.0, -1.0, 0.0], atol=1e-6)
    assert tr.surface_ids[0].tolist() == [SURFACE_IDS["building"], BARRIER]
    # The wall sends it straight back to the mirror, and the mirror back along -x, where
    # nothing is: the last segment is invalid.
    back = trace(scene, np.array([[0.0, 0.0, 0.0]]), np.array([[1.0, 0.0, 0.0]]), np.array([100.0]), 3)
    assert back.valid[0].tolist() == [True, True, True, False]
    np.testing.assert_allclose(back.locations[0, 2], [10.0, 0.0, 0.0], atol=2e-3)
    assert back.surface_ids[0].tolist() == [SURFACE_IDS["building"], BARRIER, SURFACE_IDS["building"], 0]


def test_total_length_cuts_the_path() -> None:
    # Between two parallel walls 4 m apart, from the middle: segments of 2, 4, 4, ...
    walls = SceneMesh.concat(
        [
            SceneMesh.of([[x, -50, -50], [x, 50, -50], [x, 50, 50], [x, -50, 50]],
                         [[0, 1, 2], [0, 2, 3]], BARRIER)
            for x in (-2.0, 2.0)
        ]
    )  # fmt: skip
    scene = scene_of(walls)
    o, d = np.zeros((3, 3)), np.tile([1.0, 0.0, 0.0], (3, 1))
    tr = trace(scene, o, d, np.array([1.5, 5.0, 100.0]), 3)
    assert tr.valid.tolist() == [
        [False, False, False, False],  # 1.5 m: the wall is 2 m away
        [True, False, False, False],  # 2 m used, 3 left: the next wall is 4 m away
        [True, True, True, True],
    ]
    np.testing.assert_allclose(tr.distances[2], [2.0, 4.0, 4.0, 4.0], atol=1e-3)
    np.testing.assert_allclose(tr.locations[2, :, 0], [2.0, -2.0, 2.0, -2.0], atol=1e-3)


def test_segments_after_a_miss_hold_no_stale_values() -> None:
    rt = RayTracer(
        RayTracerSpec(type="raytracer", vehicle="scene", directions=((0, 0, -1), (1, 0, -1)),
                      origins=((0, 0, 5),), max_lengths=100.0, bounces=3),
        1, -1,
    )  # fmt: skip
    st = world({"id": 1, "x": 8.0, "y": 0.0})
    scene = scene_of(plane(z=0.0), st)
    first = rt.sample(scene, st, 0, 0.0)
    # Straight down to the road and back up into the sky; at 45 degrees to the road, up
    # into the car's rear, and back up into the sky.
    assert first is not None
    assert first.valid.tolist() == [[True, False, False, False], [True, True, False, False]]
    assert first.actor_ids[1].tolist() == [-1, 1, -1, -1]
    # The plane and the car go: every ray misses; nothing of the last reading remains.
    empty = Scene(SceneMesh.empty(), MODEL_NAMES)
    st.active[:] = False
    empty.update(st, 1)
    second = rt.sample(empty, st, 1, 0.05)
    assert second is not None and not second.valid.any() and not second.is_valid_hit.any()
    assert np.isnan(second.hit_locations).all() and np.isnan(second.hit_normals).all()
    assert np.isnan(second.hit_distances).all()
    assert (second.surface_ids == 0).all() and (second.actor_ids == -1).all()
    assert (second.lane_uids == -1).all()
    # Still, the first reading is what it was (readings own their arrays).
    assert first.valid[:, 0].all() and first.actor_ids[1, 1] == 1


def test_matlab_layout_round_trip() -> None:
    st = world({"id": 5, "x": 0.0, "y": 0.0, "heading": 0.7})
    scene = scene_of(plane(z=0.0), st)
    rng = np.random.default_rng(1)
    d = rng.normal(size=(50, 3))
    spec = RayTracerSpec(type="raytracer", directions=tuple(map(tuple, d)), max_lengths=30.0,
                         origins=((0.5, 0.2, 0.0),), location="roof_center", bounces=2)  # fmt: skip
    reading = RayTracer(spec, 1, 5).sample(scene, st, 3, 0.15)
    assert reading is not None and reading.valid.any() and not reading.valid.all()
    layout = reading.to_matlab_layout()
    n = 50
    assert layout.hit_locations.shape == (3 * n, 3) and layout.is_valid_hit.shape == (n, 1)
    # Row k N + i is segment k of ray i, y to the right.
    local = reading.in_sensor_frame()
    np.testing.assert_array_equal(layout.hit_locations[n + 7], local.hit_locations[7, 1] * [1, -1, 1])
    np.testing.assert_array_equal(layout.hit_distances[2 * n + 3, 0], reading.hit_distances[3, 2])
    locations, normals, distances, surface_ids = layout.unstack()
    np.testing.assert_array_equal(locations, local.hit_locations)
    np.testing.assert_array_equal(normals, local.hit_normals)
    np.testing.assert_array_equal(distances, reading.hit_distances)
    np.testing.assert_array_equal(surface_ids, reading.surface_ids)
    # And the sensor frame goes back to the world frame.
    np.testing.assert_allclose(reading.pose.to_world(local.hit_locations), reading.hit_locations)


def test_prisms_and_polygons() -> None:
    # An L-shaped (concave) outline: its cap covers the L and nothing else.
    outline = np.array([[0, 0], [4, 0], [4, 1], [1, 1], [1, 4], [0, 4]], dtype=float)
    tri = triangulate_polygon(outline)
    u, w = outline[tri[:, 1]] - outline[tri[:, 0]], outline[tri[:, 2]] - outline[tri[:, 0]]
    area = 0.5 * np.abs(u[:, 0] * w[:, 1] - u[:, 1] * w[:, 0]).sum()
    assert len(tri) == 4 and area == pytest.approx(7.0)
    v, t = prism(outline, 1.0, 2.0)
    scene = scene_of(SceneMesh.of(v, t, SURFACE_IDS["building"]))
    hits = scene.cast([[0.5, 3.0, 10.0], [3.0, 3.0, 10.0], [-5.0, 0.5, 2.0]],
                      [[0, 0, -1], [0, 0, -1], [1, 0, 0]], 100.0)  # fmt: skip
    assert hits.valid.tolist() == [True, False, True]
    np.testing.assert_allclose(hits.distance[[0, 2]], [7.0, 5.0], atol=TOL)


def test_threads_give_the_same_hits() -> None:
    st = world(*({"id": k, "x": 6.0 * k, "y": 3.0} for k in range(10)))
    rng = np.random.default_rng(0)
    n = 5000
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    o = np.tile([20.0, 0.0, 1.0], (n, 1))
    one = Scene(plane(), MODEL_NAMES, pool=RayPool(1))
    many = Scene(plane(), MODEL_NAMES, pool=RayPool(4, min_rays_per_thread=100))
    for scene in (one, many):
        scene.update(st, 0)
    a, b = one.cast(o, d, 50.0), many.cast(o, d, 50.0)
    assert many.pool.chunks(n) == 4
    for name in ("distance", "normal", "surface", "actor", "lane", "valid"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    many.pool.close()
