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


def test_road_marks_keep_their_class_and_take_their_paint() -> None:
    # libOpenDRIVE's test.xodr paints 199 road-mark records yellow, the rest white
    # ("standard" or "white").
    import roadsim
    from roadsim.road.surface_classes import LOOK_ALBEDO, PAINTS
    from roadsim.sensors.scene import static_mesh
    from roadsim.sim.build import MODEL_NAMES
    from roadsim.world.state import WorldState

    net = roadsim.load_map(CORPUS / "maps" / "libOpenDRIVE" / "test.xodr")
    road = net.surface_mesh()
    scene = static_mesh(net, WorldState.empty(1), MODEL_NAMES, ground=False)
    color = np.array([s.color for s in road.surfaces])[road.surface_id]
    kind = np.array([s.kind for s in road.surfaces])[road.surface_id]
    n = len(road.triangles)
    marking = SURFACE_IDS["lane_marking"]
    yellow = (color == "yellow") & (scene.surface[:n] == marking)
    white = (color == "white") & (scene.surface[:n] == marking)
    assert yellow.sum() > 100 and white.sum() > 100
    assert (LOOK_ALBEDO[scene.look[:n][yellow]] == np.float32(PAINTS["yellow"])).all()
    assert (scene.look[:n][white] == marking).all()
    # Lanes, curbs and every other triangle look as their class.
    rest = np.ones(len(scene.look), dtype=bool)
    rest[:n] &= kind != "road_mark"
    np.testing.assert_array_equal(scene.look[rest], scene.surface[rest])


OPEN_OUTLINES = """<?xml version="1.0" encoding="UTF-8"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="8" name="open outlines"/>
  <road name="straight" length="100" id="1" junction="-1">
    <planView>
      <geometry s="0" x="0" y="0" hdg="0" length="100"><line/></geometry>
    </planView>
    <lanes>
      <laneSection s="0">
        <left>
          <lane id="1" type="driving" level="false"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane>
        </left>
        <center><lane id="0" type="none" level="false"/></center>
        <right>
          <lane id="-1" type="driving" level="false"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane>
        </right>
      </laneSection>
    </lanes>
    <objects>
      <object id="1" type="barrier" name="wall" s="10" t="6" zOffset="0" hdg="0">
        <outlines>
          <outline id="1" closed="false">
            <cornerRoad id="1" s="10" t="6" dz="0" height="2.0"/>
            <cornerRoad id="2" s="60" t="6" dz="0" height="2.0"/>
            <cornerRoad id="3" s="60" t="12" dz="0" height="2.0"/>
          </outline>
        </outlines>
      </object>
      <object id="2" type="railing" name="fence" s="70" t="-8" zOffset="0" hdg="0" height="1.5">
        <outlines>
          <outline id="1" closed="false">
            <cornerLocal id="1" u="0" v="0" z="0"/>
            <cornerLocal id="2" u="20" v="0" z="0"/>
          </outline>
        </outlines>
      </object>
    </objects>
  </road>
</OpenDRIVE>
"""


def test_open_outlines_stand_as_walls_along_their_corners(tmp_path: Path) -> None:
    """An open outline (``closed="false"``) is a wall through its corners, not a prism
    closed back to its first corner: an L of road corners (s 10..60 at t = 6, then
    t = 6..12 at s = 60; 2 m high, the corners' own height) and a straight fence of
    local corners (s 70..90 at t = -8; 1.5 m, the object's height). On this straight
    road heading east from the origin, x is s and y is t."""
    (tmp_path / "open.xodr").write_text(OPEN_OUTLINES)
    path = tmp_path / "s.yaml"
    path.write_text(f"map: {tmp_path / 'open.xodr'}\nseed: 1\n")
    with Simulation(path) as sim:
        obj = {o.name: o for o in sim.net.objects}
        assert not obj["wall"].outline_closed and obj["wall"].outline_heights == (2.0,) * 3

        def cast(origin: list[float], direction: list[float]):  # type: ignore[no-untyped-def]
            return sim.scene.cast(np.array([origin]), np.array([direction], dtype=float), 30.0)

        wall = cast([35.0, 0.0, 1.0], [0.0, 1.0, 0.0])
        assert wall.surface[0] == SURFACE_IDS["barrier"] and abs(wall.distance[0] - 6.0) < 1e-4
        assert abs(cast([65.0, 9.0, 1.0], [-1.0, 0.0, 0.0]).distance[0] - 5.0) < 1e-4
        # No roof, and no wall back from the last corner to the first (at t = 9 here).
        assert not cast([35.0, 9.0, 1.0], [0.0, 0.0, 1.0]).valid[0]
        assert abs(cast([35.0, 11.0, 1.0], [0.0, -1.0, 0.0]).distance[0] - 5.0) < 1e-4
        assert not cast([35.0, 0.0, 2.1], [0.0, 1.0, 0.0]).valid[0]  # (over it)
        # The fence, hit from either side, as high as the object.
        fence = cast([80.0, 0.0, 1.0], [0.0, -1.0, 0.0])
        assert fence.surface[0] == SURFACE_IDS["barrier"] and abs(fence.distance[0] - 8.0) < 1e-4
        assert abs(cast([80.0, -10.0, 1.0], [0.0, 1.0, 0.0]).distance[0] - 2.0) < 1e-4
        assert not cast([80.0, 0.0, 1.6], [0.0, -1.0, 0.0]).valid[0]
