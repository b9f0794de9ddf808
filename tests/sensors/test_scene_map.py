"""The static scene of real maps: objects repeated along the road (``<repeat>``) and the
map's signals, hit where the map puts them (real Embree backend)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from roadsim import Simulation
from roadsim.road.surface_classes import SURFACE_IDS
from roadsim.sensors.scene import PLATE_AHEAD_M, PLATE_THICKNESS_M, POST_WIDTH_M
from tests.conftest import CORPUS

ESMINI = CORPUS / "maps" / "esmini"


def _sim(tmp_path: Path, name: str) -> Simulation:
    path = tmp_path / "s.yaml"
    path.write_text(f"map: {ESMINI / name}\nseed: 1\n")
    return Simulation(path)


def _cast(sim: Simulation, road: str, s: float, t: float, up: float, toward_t: float, z_dir: float):  # type: ignore[no-untyped-def]
    """A ray from (s, t) on ``road``, ``up`` metres above its surface, toward +t
    (``toward_t`` 1), -t (-1) or straight up (``z_dir`` 1)."""
    x, y, z = sim.net.to_world(road, [s, s], [t, t + 1.0])
    side = np.array([x[1] - x[0], y[1] - y[0], 0.0])
    d = toward_t * side / np.linalg.norm(side) + np.array([0.0, 0.0, z_dir])
    return sim.scene.cast(np.array([[x[0], y[0], z[0] + up]]), d[None] / np.linalg.norm(d), 60.0)


def test_repeats_stretch_the_tunnels_walls_and_ceiling_along_the_road(tmp_path: Path) -> None:
    # tunnels.xodr, road 1: barriers repeated with distance 0 over s = 400..550: walls
    # 10 m wide centred at t = 13 and t = -16.5, 5 m high, and a 2 m thick ceiling
    # 5 m up, 39.5 m wide at t = -1.75. The barrier objects have no height of their
    # own: only the repeats stand.
    sim = _sim(tmp_path, "tunnels.xodr")
    barrier = SURFACE_IDS["barrier"]
    for s in (410.0, 475.0, 540.0):
        up = _cast(sim, "1", s, -1.75, 1.0, 0.0, 1.0)
        left = _cast(sim, "1", s, 0.0, 1.0, 1.0, 0.0)
        right = _cast(sim, "1", s, 0.0, 1.0, -1.0, 0.0)
        assert up.surface[0] == left.surface[0] == right.surface[0] == barrier
        assert abs(up.distance[0] - 4.0) < 1e-3
        assert abs(left.distance[0] - 8.0) < 1e-3
        assert abs(right.distance[0] - 11.5) < 1e-3
    # Before s = 400 the road is open: the ray up meets nothing.
    assert not _cast(sim, "1", 380.0, -1.75, 1.0, 0.0, 1.0).valid[0]


def test_repeats_with_a_distance_copy_the_object(tmp_path: Path) -> None:
    # e6mini.xodr: rail poles every 4 m along the road, 0.55 m high, at t = +-1.35 from
    # the guard rail's road; each copy is the object's own shape at its place.
    sim = _sim(tmp_path, "e6mini.xodr")
    poles = [o for o in sim.net.objects if o.type == "rail-pole" and o.repeats]
    assert poles
    pole = poles[0]
    rep = pole.repeats[0]
    assert rep.distance == 4.0
    static = sim.scene.static
    n_poles = int(np.sum(static.surface == SURFACE_IDS["pole"]))
    copies = int(min(rep.length, float(sim.net.road_length[sim.net.road_index(pole.road_id)]) - rep.s) // 4.0) + 1
    assert n_poles >= copies * 12  # (a box has 12 triangles, a cylinder more)
    # A ray along the road at pole height, just beside the poles, meets no pole; one
    # across the poles' line, at a pole's s, meets it.
    hit = _cast(sim, pole.road_id, rep.s + 8.0, 0.0, rep.height_start / 2, np.sign(rep.t_start), 0.0)
    assert hit.valid[0]


def test_signals_stand_on_posts_facing_their_traffic(tmp_path: Path) -> None:
    # straight_500m_signs.xodr: speed signs 0.61 x 0.61 m, 1.7 m above the road at
    # t = +-3.57. A ray along the road toward a sign at the sign's height hits its plate
    # (class sign), in front of its post; one at 1 m hits the post (class pole: ours,
    # or the map's own pole there); one at 3 m passes over it.
    sim = _sim(tmp_path, "straight_500m_signs.xodr")
    sig = next(sig for sig in sim.net.signals if sig.s == 350.0)  # (none 20 m before it)
    x, y, z = sim.net.to_world(sig.road_id, [sig.s - 20.0, sig.s - 19.0], [sig.t, sig.t])
    d = np.array([x[1] - x[0], y[1] - y[0], 0.0])
    d /= np.linalg.norm(d)
    plate = sim.scene.cast(np.array([[x[0], y[0], z[0] + sig.z_offset + 0.3]]), d[None], 40.0)
    assert plate.surface[0] == SURFACE_IDS["sign"]
    assert abs(plate.distance[0] - (20.0 - PLATE_AHEAD_M - 0.5 * PLATE_THICKNESS_M)) < 1e-3
    post = sim.scene.cast(np.array([[x[0], y[0], z[0] + 1.0]]), d[None], 40.0)
    assert post.surface[0] == SURFACE_IDS["pole"]
    assert abs(post.distance[0] - 20.0) <= 0.5 * POST_WIDTH_M + 1e-3
    over = sim.scene.cast(np.array([[x[0], y[0], z[0] + 3.0]]), d[None], 40.0)
    assert not over.valid[0] or over.distance[0] > 21.0
