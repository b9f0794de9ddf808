"""Triangle meshes of simple solids for the ray-casting scene: boxes, prisms, cylinders.

All in the world frame (m), z up; a solid stands on its base height ``z0`` and rises by
``height``. Triangles are wound counter-clockwise seen from outside (normals point out),
though the scene does not rely on it: a hit's normal is turned toward the ray.
"""

from __future__ import annotations

import numpy as np

from roadsim._types import BoolArray, FloatArray, Int32Array

__all__ = ["BOX_TRIANGLES", "boxes", "cylinder_outline", "prism", "triangulate_polygon"]

# The 8 corners of a unit box, (x, y, z) in {-1/2, 1/2} x {-1/2, 1/2} x {0, 1}, and its
# 12 triangles, outward.
_CORNERS = np.array(
    [[x, y, z] for z in (0.0, 1.0) for y in (-0.5, 0.5) for x in (-0.5, 0.5)], dtype=np.float64
)
_BOX = np.array(
    [
        [0, 2, 1], [1, 2, 3],  # bottom (z = 0), facing down
        [4, 5, 6], [5, 7, 6],  # top
        [0, 1, 4], [1, 5, 4],  # y = -1/2
        [2, 6, 3], [3, 6, 7],  # y = +1/2
        [0, 4, 2], [2, 4, 6],  # x = -1/2 (rear)
        [1, 3, 5], [3, 7, 5],  # x = +1/2 (front)
    ],
    dtype=np.int32,
)  # fmt: skip
#: Triangles per box: a box's triangles are ``12 k .. 12 k + 11``.
BOX_TRIANGLES = len(_BOX)


def boxes(
    x: FloatArray,
    y: FloatArray,
    z0: FloatArray,
    heading: FloatArray,
    length: FloatArray,
    width: FloatArray,
    height: FloatArray,
) -> tuple[FloatArray, Int32Array]:
    """K boxes centred on (x, y) seen from above, standing on z0, turned by heading.

    Returns:
        ``(vertices, triangles)``: (8K, 3) float64 and (12K, 3) int32, box k owning
        vertices ``8k .. 8k+7`` and triangles ``12k .. 12k+11``.
    """
    k = len(x)
    local = _CORNERS[None, :, :] * np.stack((length, width, height), axis=1)[:, None, :]
    c, s = np.cos(heading)[:, None], np.sin(heading)[:, None]
    vx = x[:, None] + c * local[:, :, 0] - s * local[:, :, 1]
    vy = y[:, None] + s * local[:, :, 0] + c * local[:, :, 1]
    vz = z0[:, None] + local[:, :, 2]
    vertices = np.stack((vx, vy, vz), axis=2).reshape(-1, 3)
    tri = (_BOX[None, :, :] + 8 * np.arange(k, dtype=np.int32)[:, None, None]).reshape(-1, 3)
    return vertices, tri.astype(np.int32)


def cylinder_outline(radius: float, sides: int = 12) -> FloatArray:
    """(sides, 2) corners of a regular polygon around a circle of ``radius``, counter-
    clockwise (its edges touch the circle's outside at their middles)."""
    a = (np.arange(sides) + 0.5) * (2.0 * np.pi / sides)
    r = radius / np.cos(np.pi / sides)
    return np.stack((r * np.cos(a), r * np.sin(a)), axis=1)


def triangulate_polygon(points: FloatArray) -> Int32Array:
    """(k-2, 3) triangles of a simple polygon (k, 2), counter-clockwise, by ear clipping.

    Outlines of map objects have a handful of corners; a convex one needs no clipping
    test, a concave one a few. A polygon that is not simple (self-intersecting) still
    gives k-2 triangles, some of them outside it.
    """
    k = len(points)
    if k < 3:
        return np.zeros((0, 3), dtype=np.int32)
    p = np.asarray(points, dtype=np.float64)
    area2 = np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1])
    order = list(range(k)) if area2 >= 0 else list(range(k - 1, -1, -1))
    out: list[tuple[int, int, int]] = []
    guard = 0
    while len(order) > 3 and guard < 4 * k * k:
        guard += 1
        n = len(order)
        for j in range(n):
            a, b, c = order[j - 1], order[j], order[(j + 1) % n]
            if _cross(p[a], p[b], p[c]) <= 0.0:
                continue  # reflex (or flat) corner: no ear
            others = [q for q in order if q not in (a, b, c)]
            if others and np.any(_inside(p[others], p[a], p[b], p[c])):
                continue
            out.append((a, b, c))
            order.pop(j)
            break
        else:  # no ear (degenerate input): fan the rest
            out.extend((order[0], order[i], order[i + 1]) for i in range(1, len(order) - 1))
            order = []
    if len(order) == 3:
        out.append((order[0], order[1], order[2]))
    return np.array(out, dtype=np.int32).reshape(-1, 3)


def prism(outline: FloatArray, z0: float, height: float) -> tuple[FloatArray, Int32Array]:
    """A solid of a (k, 2) world outline, from z0 up by height: walls, floor and roof.

    Returns:
        ``(vertices, triangles)``: (2k, 3) and (2(k-2) + 2k, 3).
    """
    p = np.asarray(outline, dtype=np.float64)
    k = len(p)
    area2 = np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1])
    if area2 < 0:
        p = p[::-1]
    bottom = np.column_stack((p, np.full(k, z0)))
    top = np.column_stack((p, np.full(k, z0 + height)))
    vertices: FloatArray = np.concatenate((bottom, top))
    cap = triangulate_polygon(p)
    i = np.arange(k, dtype=np.int32)
    j = (i + 1) % k
    walls = np.concatenate((np.stack((i, j, k + i), 1), np.stack((j, k + j, k + i), 1)))
    tri = np.concatenate((cap[:, [0, 2, 1]], cap + k, walls)).astype(np.int32)
    return vertices, tri


def _cross(a: FloatArray, b: FloatArray, c: FloatArray) -> float:
    return float((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))


def _inside(q: FloatArray, a: FloatArray, b: FloatArray, c: FloatArray) -> BoolArray:
    """Whether points q (m, 2) lie inside or on the counter-clockwise triangle abc."""

    def side(u: FloatArray, v: FloatArray) -> FloatArray:
        out: FloatArray = (v[0] - u[0]) * (q[:, 1] - u[1]) - (v[1] - u[1]) * (q[:, 0] - u[0])
        return out

    return (side(a, b) >= 0) & (side(b, c) >= 0) & (side(c, a) >= 0)


def sweep(rings: FloatArray) -> tuple[FloatArray, Int32Array]:
    """A solid (or a wall) swept along a path: ``rings`` (m, k, 3) are the corners of its
    cross-section at m places along the path, in the same order at each. With k >= 3
    the cross-sections are closed polygons and both ends get a cap; with k = 2 the
    result is a strip (a wall without thickness; Embree hits both sides).

    Returns:
        ``(vertices, triangles)``: (m k, 3) and the triangles over them.
    """
    m, k = rings.shape[:2]
    vertices: FloatArray = rings.reshape(-1, 3).astype(np.float64)
    edges = k if k >= 3 else 1  # (a strip has one edge between its two corners)
    a = np.arange(m - 1, dtype=np.int32)[:, None] * k
    i = np.arange(edges, dtype=np.int32)[None, :]
    j = (i + 1) % k
    p0, p1, q0, q1 = a + i, a + j, a + k + i, a + k + j
    quads = np.concatenate(
        (np.stack((p0, p1, q1), -1).reshape(-1, 3), np.stack((p0, q1, q0), -1).reshape(-1, 3))
    )
    parts = [quads]
    if k >= 3:
        fan = np.stack((np.zeros(k - 2), np.arange(1, k - 1), np.arange(2, k)), -1).astype(np.int32)
        parts += [fan[:, [0, 2, 1]], fan + (m - 1) * k]
    return vertices, np.concatenate(parts).astype(np.int32)
