"""The Intelligent Driver Model: free road, equilibrium gap, and a braking leader."""

from __future__ import annotations

import numpy as np

from roadsim.agents.idm import IdmParams, idm_accel

P = IdmParams(max_accel=1.5, comfort_decel=2.0, time_headway=1.5, min_gap=2.0)


def test_free_road_accelerates_and_stops_at_desired_speed() -> None:
    inf = np.full(2, np.inf)
    a = idm_accel(np.array([0.0, 30.0]), np.full(2, 30.0), inf, np.zeros(2), P)
    assert np.isclose(a[0], 1.5) and np.isclose(a[1], 0.0)


def test_equilibrium_gap_gives_no_acceleration_in_dense_traffic() -> None:
    v, v0 = 10.0, 30.0
    # Equilibrium: 1 - (v/v0)^4 = (s*/s)^2 with s* = s0 + vT.
    s_star = 2.0 + v * 1.5
    gap = s_star / np.sqrt(1 - (v / v0) ** 4)
    a = idm_accel(np.array([v]), np.array([v0]), np.array([gap]), np.array([v]), P)
    assert abs(a[0]) < 1e-12


def test_follower_keeps_a_safe_gap_behind_a_braking_leader() -> None:
    dt = 0.05
    lead_x, lead_v = 50.0, 25.0
    x, v = 0.0, 25.0
    min_gap = np.inf
    for k in range(int(30 / dt)):
        lead_a = -6.0 if k * dt < 4.0 else 0.0  # hard braking to a stop
        lead_v = max(lead_v + lead_a * dt, 0.0)
        lead_x += lead_v * dt
        gap = lead_x - x - 4.6
        a = idm_accel(np.array([v]), np.array([30.0]), np.array([gap]), np.array([lead_v]), P)[0]
        a = max(a, -9.0)  # physical limit of the follower
        v = max(v + a * dt, 0.0)
        x += v * dt
        min_gap = min(min_gap, lead_x - x - 4.6)
    assert min_gap > 1.0
    # The follower creeps up to about the minimum gap behind the stopped leader.
    assert 1.0 < lead_x - x - 4.6 < 4.0
