"""The grid that finds the rays which may reach a few moving actors (`ActorGrid`).

Casting with the actors named (`Scene.cast(..., actors=...)`, where the grid drops the
rays that cannot reach one) must give what casting every ray against every actor gives,
for rays from everywhere, grazing boxes, starting inside them or cut short; and the grid
must drop most rays that pass far from the boxes, or it saves nothing.
"""

from __future__ import annotations

import numpy as np

from roadsim.sensors.actor_grid import CELL_M, ActorGrid
from roadsim.sensors.shapes import boxes
from tests.sensors.test_rays_analytic import plane, scene_of, world


def cars() -> list[dict[str, float]]:
    rng = np.random.default_rng(5)
    return [
        {"id": k, "x": float(x), "y": float(y), "z": float(z), "heading": float(h)}
        for k, (x, y, z, h) in enumerate(
            zip(rng.uniform(-60, 60, 12), rng.uniform(-60, 60, 12), rng.uniform(0, 3, 12),
                rng.uniform(-np.pi, np.pi, 12), strict=True)
        )
    ]  # fmt: skip


def same_hits(a: object, b: object) -> bool:
    return all(
        np.array_equal(getattr(a, f), getattr(b, f), equal_nan=getattr(a, f).dtype.kind == "f")
        for f in ("distance", "normal", "surface", "actor", "lane", "valid")
    )


def test_naming_the_actors_casts_as_every_ray_against_every_actor() -> None:
    rows = cars()
    scene = scene_of(plane(z=0.0, half=200.0), world(*rows))
    rng = np.random.default_rng(7)
    n = 40_000
    # From the ground and above it, in every direction, half of them aimed at a box's
    # corner (with a jitter of a few cm: grazing it, or just missing), some cut short.
    o = np.column_stack((rng.uniform(-80, 80, n), rng.uniform(-80, 80, n), rng.uniform(0, 6, n)))
    d = rng.normal(size=(n, 3))
    corner = scene.moving.vertices[rng.integers(0, len(scene.moving.vertices), n // 2)]
    d[: n // 2] = corner + rng.normal(scale=0.03, size=(n // 2, 3)) - o[: n // 2]
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    far = rng.choice([1.0, 10.0, 150.0], n)
    every = scene.cast(o, d, far)
    named = scene.cast(o, d, far, actors=np.arange(len(rows), dtype=np.int64))
    assert same_hits(named, every)
    assert np.sum(every.actor >= 0) > n // 20  # (many hit an actor)
    # And without one of them (the one a sensor rides on): as every ray, but that one.
    every = scene.cast(o, d, far, ignore_actor=3)
    named = scene.cast(o, d, far, ignore_actor=3, actors=np.arange(len(rows), dtype=np.int64))
    assert same_hits(named, every)


def test_rays_far_from_the_boxes_are_dropped() -> None:
    # Two boxes 4 x 2 x 1.5 m; rays along x at 10 m above them, at their height beside
    # them (on other rows of cells), and straight at them.
    v, tri = boxes(np.array([0.0, 30.0]), np.zeros(2), np.zeros(2), np.zeros(2),
                   np.full(2, 4.0), np.full(2, 2.0), np.full(2, 1.5))  # fmt: skip
    grid = ActorGrid.of(v.astype(np.float32), tri)
    o = np.array([[-50, 0, 10], [-50, 3 * CELL_M, 1], [-50, -3 * CELL_M, 1], [-50, 0, 1],
                  [15, 0.5, 0.5], [15, 0.5, 20]], dtype=np.float32)  # fmt: skip
    d = np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, -1]],
                 dtype=np.float32)  # fmt: skip
    far = np.full(6, 100.0, dtype=np.float32)
    assert grid.rays_near(o, d, far).tolist() == [3]
    # Cut short before the first box, the ray along it is dropped too; a ray down onto
    # the ground between the boxes is dropped, and one down onto a box is kept.
    far[3] = 45.0
    o[5] = (2.0, 0.5, 20.0)
    assert grid.rays_near(o, d, far).tolist() == [5]
    # No boxes: no ray.
    empty = ActorGrid.of(np.zeros((0, 3), dtype=np.float32), np.zeros((0, 3), dtype=np.int32))
    assert empty.rays_near(o, d, far).size == 0
