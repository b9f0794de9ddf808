"""The paths of scripted objects: the spline through the control points, and the speed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from roadsim.road.load import load_map
from roadsim.scenario.paths import (
    SAMPLE_SPACING,
    advance,
    build_path,
    segment_speed,
    time_to_end,
)

ZIGZAG = [[0.0, 0.0], [12.0, 0.0], [20.0, 9.0], [20.0, 40.0], [-5.0, 41.0]]


def test_the_path_passes_through_every_control_point() -> None:
    path = build_path(ZIGZAG, [3.0, 5.0, 2.0, 6.0, 1.0])
    x, y, _ = path.pose_at(path.knots)
    assert np.max(np.hypot(x - path.points[:, 0], y - path.points[:, 1])) < 1e-3
    # ... and the drawn curve too.
    curve = path.curve(step=0.05)
    for point in path.points:
        assert np.min(np.hypot(*(curve - point).T)) < 1e-3


def test_distance_along_the_path_is_arc_length() -> None:
    path = build_path(ZIGZAG, [1.0] * 5)
    d = np.linspace(0.0, path.length, 4001)
    x, y, _ = path.pose_at(d)
    polyline = np.concatenate(([0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))))
    assert np.max(np.abs(polyline - d)) < 2e-3 * path.length / 100.0 + 1e-3
    assert np.all(np.diff(path.sample_dist[path.sample_first[1] : path.sample_first[2]]) > 0)
    steps = np.diff(path.sample_dist)
    assert steps.max() <= SAMPLE_SPACING + 1e-9


def test_heading_is_the_direction_of_travel() -> None:
    path = build_path(ZIGZAG, [1.0] * 5)
    d = np.linspace(0.5, path.length - 0.5, 300)
    _, _, heading = path.pose_at(d)
    xa, ya, _ = path.pose_at(d + 1e-4)
    xb, yb, _ = path.pose_at(d - 1e-4)
    along = np.arctan2(ya - yb, xa - xb)
    assert np.max(np.abs(np.angle(np.exp(1j * (heading - along))))) < 1e-3


def test_points_on_a_line_give_the_line() -> None:
    path = build_path([[0.0, 0.0], [5.0, 0.0], [30.0, 0.0], [31.0, 0.0]], [1.0] * 4)
    x, y, heading = path.pose_at(np.linspace(0.0, path.length, 200))
    assert path.length == pytest.approx(31.0, abs=1e-9)
    assert np.all(np.abs(y) < 1e-12) and np.all(np.diff(x) > 0) and np.all(heading == 0.0)


def test_given_tangents_set_the_direction_at_the_point() -> None:
    tangents = np.full((3, 2), np.nan)
    tangents[1] = [0.0, 2.0]  # north, whatever its length
    path = build_path([[0.0, 0.0], [10.0, 0.0], [20.0, 0.0]], [1.0] * 3, tangents=tangents)
    _, y, heading = path.pose_at(path.knots[1])
    assert y[0] == 0.0
    assert heading[0] == pytest.approx(math.pi / 2)
    # Without it the path is straight through the point.
    straight = build_path([[0.0, 0.0], [10.0, 0.0], [20.0, 0.0]], [1.0] * 3)
    assert straight.pose_at(straight.knots[1])[2][0] == 0.0


def test_unevenly_spaced_points_do_not_loop() -> None:
    # A right angle with a long segment after a short one: uniform Catmull-Rom would give
    # the 1 m segment a 30 m tangent and a loop; here it only rounds the corner.
    path = build_path([[0.0, 0.0], [1.0, 0.0], [1.5, 60.0]], [1.0] * 3)
    x, y, _ = path.pose_at(np.linspace(0.0, path.length, 2000))
    assert y.min() > -0.2 and x.min() >= 0.0 and x.max() <= 1.5
    assert path.length < 1.02 * (1.0 + math.hypot(0.5, 60.0))


def test_speed_at_points_and_linear_in_distance_between() -> None:
    speeds = [3.0, 5.0, 2.0, 6.0, 1.0]
    path = build_path(ZIGZAG, speeds)
    assert np.array_equal(path.speed_at(path.knots), speeds)
    for k in range(4):
        d = np.linspace(path.knots[k], path.knots[k + 1], 9)
        v = path.speed_at(d)
        assert np.allclose(np.diff(v, 2), 0.0, atol=1e-12)  # linear in distance


def test_segments_from_or_to_rest_have_constant_acceleration() -> None:
    length = 20.0
    for v0, v1 in ((0.0, 8.0), (8.0, 0.0)):
        accel = (v1**2 - v0**2) / (2 * length)
        x = np.linspace(0.0, length, 11)
        v = np.array([segment_speed(v0, v1, length, float(xi)) for xi in x])
        assert np.allclose(v**2, v0**2 + 2 * accel * x)
        assert time_to_end(v0, v1, length, 0.0) == pytest.approx(abs(v1 - v0) / abs(accel))


def test_time_and_advance_agree_with_the_profile() -> None:
    # Exact integration of dx/dt = v(x): advancing by the time to the end reaches the end,
    # and by half of it, a point whose time to the end is the other half.
    for v0, v1 in ((4.0, 12.0), (12.0, 4.0), (7.0, 7.0), (0.0, 5.0), (5.0, 0.0)):
        length, x0 = 30.0, 3.0
        total = time_to_end(v0, v1, length, x0)
        assert advance(v0, v1, length, x0, total) == pytest.approx(length)
        mid = advance(v0, v1, length, x0, 0.5 * total)
        assert time_to_end(v0, v1, length, mid) == pytest.approx(0.5 * total)
        # Integrating numerically with tiny steps gives the same place.
        x, h = x0, 1e-4
        for _ in range(round(0.5 * total / h)):
            x += h * segment_speed(v0, v1, length, x + 0.5 * h * segment_speed(v0, v1, length, x))
        assert x == pytest.approx(mid, abs=1e-3)


def test_elevation_follows_the_road_and_holds_over_gaps() -> None:
    # The highway's middle road has a 6 m crest between s = 500 and 1300; y = -45 m is off
    # every lane (the eastbound carriageway ends 20 m south of the reference line).
    net = load_map("highway")
    road = net.road_index("2")
    s = np.array([400.0, 800.0, 1000.0])
    x, y, _ = net.to_world_index(np.full(3, road), s, np.full(3, -5.75))
    path = build_path(
        [[x[0], y[0]], [x[1], y[1]], [x[1] + 60.0, y[1] - 45.0], [x[2], y[2]]],
        [10.0] * 4,
        net=net,
    )
    on = path.sample_uid >= 0
    assert on[0] and not on.all() and on[-1]
    px, py, _ = path.pose_at(path.sample_dist)
    surface = net.localize(px[on], py[on]).surface_z
    assert np.allclose(path.sample_z[on], surface)
    assert path.sample_z.max() > 3.0  # it did climb the crest
    gap = np.flatnonzero(~on)
    held = path.sample_z[gap[0] - 1]
    assert np.all(path.sample_z[gap] == held)
