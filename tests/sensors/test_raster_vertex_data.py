"""The raster camera's indexed meshes (`roadsim.sensors.raster.vertex_data`), without GL.

Every triangle comes back with its three corners where the mesh puts them, its last
corner (the provoking vertex, whose outputs the fragment shader takes flat) a record of
its own that carries the triangle's normal, class, look and actor, and its other corners
shared only with records of the same actor (the vertex shader hides the actor the camera
rides on vertex by vertex).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roadsim.errors import ArgumentError
from roadsim.sensors.raster import MAX_ACTOR_ID, vertex_data, vertex_layout
from roadsim.sensors.scene import SceneMesh


def check(mesh: SceneMesh, origin: np.ndarray) -> None:
    data = vertex_data(mesh, origin)
    t = len(mesh.triangles)
    corners = data.indices.reshape(t, 3)
    assert data.indices.dtype == np.uint32
    np.testing.assert_array_equal(corners[:, 2], np.arange(t))
    expected = (mesh.vertices - origin)[mesh.triangles].astype(np.float32)
    np.testing.assert_array_equal(data.vertices["position"][corners], expected)
    records = data.vertices[:t]
    np.testing.assert_array_equal(records["ids"][:, 0], mesh.surface | mesh.look.astype(int) << 8)
    np.testing.assert_array_equal(
        data.vertices["ids"][corners][..., 1], mesh.actor[:, None] + 0 * corners
    )
    p = expected.astype(np.float64)
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    big = np.linalg.norm(n, axis=1) > 1e-6
    unit = n[big] / np.linalg.norm(n[big], axis=1)[:, None]
    np.testing.assert_allclose(records["normal"][big], unit, atol=1e-5)
    # Shared: fewer records than corners where triangles meet.
    assert len(data.vertices) <= 3 * t


def test_a_strip_shares_its_corners() -> None:
    xs = np.arange(6, dtype=np.float64)
    v = np.concatenate([np.column_stack([xs, np.zeros(6), np.zeros(6)]),
                        np.column_stack([xs, np.ones(6), np.zeros(6)])])  # fmt: skip
    tri = [[k, k + 1, k + 7] for k in range(5)] + [[k, k + 7, k + 6] for k in range(5)]
    mesh = SceneMesh.of(v, tri, 3)
    check(mesh, np.array([100.0, -5.0, 1.0]))
    assert len(vertex_data(mesh, np.zeros(3)).vertices) < 3 * len(tri)


def test_corners_of_different_actors_are_not_shared() -> None:
    """Two triangles on the same vertices, of two actors: each corner record keeps its
    triangle's actor (so hiding one actor leaves the other whole)."""
    v = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    mesh = SceneMesh.of(v, [[0, 1, 2], [1, 2, 0]], 14, actor=[4, 9])
    check(mesh, np.zeros(3))


def test_a_layout_serves_the_same_triangles_moved() -> None:
    """The moving mesh of the next frame (same triangles, actors, classes and looks, the
    vertices elsewhere) takes the last one's layout and gets the records it would get
    without; any other change needs a layout of its own."""
    rng = np.random.default_rng(3)
    v = rng.normal(scale=5.0, size=(8, 3))
    tri = rng.integers(0, 8, size=(10, 3))
    mesh = SceneMesh.of(v, tri, 5, actor=[3] * 5 + [4] * 5, look=rng.integers(0, 9, 10))
    layout = vertex_layout(mesh)
    moved = SceneMesh.of(v + np.array([40.0, -3.0, 0.5]), tri, 5, actor=mesh.actor, look=mesh.look)
    assert layout.fits(moved, mesh)
    origin = np.array([10.0, 20.0, 0.0])
    reused, fresh = vertex_data(moved, origin, layout), vertex_data(moved, origin)
    assert reused.vertices.tobytes() == fresh.vertices.tobytes()
    np.testing.assert_array_equal(reused.indices, fresh.indices)
    others = (
        SceneMesh.of(v, tri, 5, actor=[3] * 6 + [4] * 4, look=mesh.look),  # an actor's triangle
        SceneMesh.of(v, tri, 6, actor=mesh.actor, look=mesh.look),  # a class
        SceneMesh.of(v, tri, 5, actor=mesh.actor, look=mesh.look + 1),  # a look
        SceneMesh.of(v, tri[:, ::-1], 5, actor=mesh.actor, look=mesh.look),  # the corners
        SceneMesh.of(np.vstack((v, v[:1])), tri, 5, actor=mesh.actor, look=mesh.look),  # a vertex
    )
    for other in others:
        assert not layout.fits(other, mesh)


def test_an_actor_id_beyond_the_ids_target_is_refused() -> None:
    v = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    vertex_layout(SceneMesh.of(v, [[0, 1, 2]], 14, actor=MAX_ACTOR_ID))
    with pytest.raises(ArgumentError, match=f"actor ids up to {MAX_ACTOR_ID}"):
        vertex_layout(SceneMesh.of(v, [[0, 1, 2]], 14, actor=MAX_ACTOR_ID + 1))


def test_an_empty_mesh() -> None:
    data = vertex_data(SceneMesh.empty(), np.zeros(3))
    assert len(data.vertices) == 0 and len(data.indices) == 0


@settings(max_examples=50, deadline=None)
@given(
    st.integers(3, 12),
    st.integers(1, 30),
    st.integers(0, 2**32 - 1),
)
def test_random_meshes(vertices: int, triangles: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    v = rng.normal(scale=50.0, size=(vertices, 3)) + np.array([4.0e5, 5.7e6, 30.0])
    tri = rng.integers(0, vertices, size=(triangles, 3))
    mesh = SceneMesh.of(
        v,
        tri,
        rng.integers(0, 40, triangles),
        actor=rng.choice([-1, 0, 7, MAX_ACTOR_ID], triangles),
        look=rng.integers(0, 20, triangles),
    )
    check(mesh, np.array([4.0e5, 5.7e6, 0.0]))
