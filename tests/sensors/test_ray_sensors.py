"""Ray tracers and lidars in a running simulation, with the real Embree backend.

- mounted on a moving, turning vehicle with offsets, the rays start and point where the
  vehicle's pose and the mount's transforms (checked here with scipy's rotations) say;
- on a corpus map with traffic, every lidar point lies on a surface of the class, lane and
  actor it reports: re-cast from just before it, on the actor's box of that frame in
  `WorldState`, on the lane `RoadNetwork.localize` finds, at the road's height;
- two runs give the same readings bit for bit, noise included;
- sensors switch on and off at run time, and an inactive one reads None.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from roadsim import EgoCommand, Simulation
from roadsim.errors import ArgumentError, QueryError, ScenarioError
from roadsim.road.surface_classes import SURFACE_IDS
from roadsim.scenario.load import parse_scenario
from roadsim.sensors.lidar import PointCloud
from roadsim.sensors.raytracer import RayTracerReading
from tests.conftest import CORPUS

CREST = CORPUS / "maps" / "esmini" / "crest-curve.xodr"


def crest_scenario(tmp_path: Path, sensors: str = "", seed: int = 3) -> Path:
    """crest-curve (a crest and a curve, buildings, vegetation, obstacles) with traffic."""
    path = tmp_path / "crest.yaml"
    path.write_text(
        f"map: {CREST}\nseed: {seed}\ndt: 0.05\n"
        "ego: {spawn: {road: 0, lane: -1, s: 150}, speed: 10}\n"
        "traffic: {count: 24, min_gap: 5}\n" + sensors
    )
    return path


LIDAR = (
    "sensors:\n"
    "  - {type: lidar, name: roof, channels: 32, horizontal_resolution_deg: 0.5,\n"
    "     range: 150, range_noise_std: 0.02, dropout: 0.1}\n"
    "  - type: raytracer\n"
    "    name: fan\n"
    "    location: front_bumper\n"
    "    offset: {translation: [0.1, 0.0, 0.2], rotation_deg: [0, 5, 0]}\n"
    "    directions: [[1, 0, -0.05], [1, 0.2, -0.05], [1, -0.2, -0.05], [0, 0, -1]]\n"
    "    max_lengths: 80\n"
    "    bounces: 2\n"
)


def test_mounted_on_a_moving_turning_vehicle(tmp_path: Path) -> None:
    sim = Simulation(crest_scenario(tmp_path))
    spec = {
        "type": "raytracer",
        "name": "probe",
        "location": "left_mirror",
        "offset": {"translation": [0.3, -0.2, 0.4], "rotation_deg": [4.0, -7.0, 25.0]},
        "origins": [[0.0, 0.1, 0.0]],
        "directions": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.2, -0.1, -1.0]],
        "max_lengths": [200.0, 200.0, 200.0],
        "bounces": 0,
    }
    sensor = sim.add_sensor(spec)
    assert sensor.id == 1 and sim.sensor("probe") is sensor
    sim.drive_ego(EgoCommand(throttle=0.3, steering=0.6))
    ego = sim.ego_slot
    assert ego is not None
    headings = []
    for _ in range(30):
        sim.step()
        st = sim.state
        reading = sim.readings["probe"]
        assert isinstance(reading, RayTracerReading) and reading.frame == sim.frame
        # The pose, worked out from the state with scipy's rotations.
        yaw = float(st.heading[ego])
        body = Rotation.from_euler("z", yaw)
        mirror = np.array([st.length[ego] / 4, st.width[ego] / 2, 0.65 * st.height[ego]])
        position = np.array([st.x[ego], st.y[ego], st.z[ego]]) + body.apply(
            mirror + np.array([0.3, -0.2, 0.4])
        )
        rotation = (body * Rotation.from_euler("ZYX", [25.0, -7.0, 4.0], degrees=True)).as_matrix()
        np.testing.assert_allclose(reading.pose.position, position, atol=1e-9)
        np.testing.assert_allclose(reading.pose.rotation, rotation, atol=1e-12)
        # Every hit lies on its ray: the origin and the direction turned by that pose.
        d = np.array(spec["directions"], dtype=float)  # type: ignore[arg-type]
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        start = position + rotation @ [0.0, 0.1, 0.0]
        expected = start + reading.hit_distances[:, :1] * (d @ rotation.T)
        ok = reading.is_valid_hit
        np.testing.assert_allclose(reading.hit_locations[ok, 0], expected[ok], atol=1e-4)
        headings.append(yaw)
    # It turned, and the downward ray found the ground under the sensor all along.
    assert abs(headings[-1] - headings[0]) > 0.3
    assert sim.readings["probe"].is_valid_hit[2]  # type: ignore[union-attr]


def _point_checks(sim: Simulation, pc: PointCloud) -> None:
    """Every point of ``pc`` lies where and on what it says (see the module docstring)."""
    st, net = sim.state, sim.net
    world = pc.world_xyz()
    ray = world - pc.pose.position
    d = ray / np.linalg.norm(ray, axis=1, keepdims=True)
    direct = pc.bounce == 0
    # Re-cast from 20 cm before each direct return (more than the range noise moves it),
    # along its ray: the same surface, 20 cm on.
    own = sim.sensor(pc.name).mount.actor
    again = sim.scene.cast(world[direct] - 0.2 * d[direct], d[direct], 0.5, ignore_actor=own)
    assert again.valid.all()
    same = (again.surface == pc.surface_ids[direct]) & (again.actor == pc.actor_ids[direct])
    assert same.mean() > 0.999
    np.testing.assert_allclose(again.distance[same], 0.2, atol=0.11)  # (5 sigma of the noise)
    # Actors: on the box `WorldState` gives them in this frame.
    hit_actor = pc.actor_ids >= 0
    assert hit_actor.sum() > 50
    slot = {int(i): k for k, i in enumerate(st.id) if st.active[k]}
    rows = np.array([slot[int(a)] for a in pc.actor_ids[hit_actor]])
    rel = world[hit_actor] - np.stack((st.x[rows], st.y[rows], st.z[rows]), axis=1)
    c, s = np.cos(st.heading[rows]), np.sin(st.heading[rows])
    u, v, w = c * rel[:, 0] + s * rel[:, 1], -s * rel[:, 0] + c * rel[:, 1], rel[:, 2]
    tol = 0.07  # 3 sigma of the range noise, along the ray
    half_l, half_w, height = st.length[rows] / 2, st.width[rows] / 2, st.height[rows]
    assert np.all(np.abs(u) <= half_l + tol) and np.all(np.abs(v) <= half_w + tol)
    assert np.all((w >= -tol) & (w <= height + tol))
    on_face = np.minimum.reduce(
        [np.abs(np.abs(u) - half_l), np.abs(np.abs(v) - half_w), np.abs(w - height), np.abs(w)]
    )
    assert np.all(on_face <= tol)
    # The road: on the lane it names (where lanes do not overlap), at the road's height.
    road = (pc.lane_uids >= 0) & (pc.surface_ids == SURFACE_IDS["road"]) & direct
    assert road.sum() > 100  # (a lidar by crest-curve's hedge sees little road beyond it)
    pos = net.localize(world[road, 0], world[road, 1])
    assert np.mean(pos.uid == pc.lane_uids[road]) > 0.98
    z = net.surface_height(world[road, 0], world[road, 1], world[road, 2])
    assert np.nanmax(np.abs(z - world[road, 2])) < 0.1  # mesh chords (2 cm) and the noise
    # The ground plane, flat under the lowest road.
    grass = pc.surface_ids == SURFACE_IDS["grass"]
    assert grass.any()
    static = sim.scene.static
    ground_z = static.vertices[static.triangles[static.surface == SURFACE_IDS["grass"]], 2].min()
    assert np.all(np.abs(world[grass & direct, 2] - ground_z) < tol)


def test_lidar_points_lie_on_what_they_report(tmp_path: Path) -> None:
    sim = Simulation(crest_scenario(tmp_path, LIDAR))
    for _ in range(3):
        sim.step()
        pc = sim.readings["roof"]
        assert isinstance(pc, PointCloud) and pc.frame == sim.frame
        _point_checks(sim, pc)
    classes = set(np.unique(pc.surface_ids).tolist())
    assert {SURFACE_IDS[c] for c in ("road", "lane_marking", "grass", "car")} <= classes
    # A second lidar on a traffic vehicle, added at run time: moving actors, its own
    # vehicle left out.
    st = sim.state
    other = int(st.id[np.flatnonzero(st.active & (st.id != 0))[0]])
    sim.add_sensor({"type": "lidar", "name": "other", "vehicle": other, "channels": 16})
    for _ in range(2):
        sim.step()
        pc = sim.readings["other"]
        assert isinstance(pc, PointCloud)
        assert other not in pc.actor_ids
        _point_checks(sim, pc)
    # Its fields line up: the channel's elevation and the azimuth give the direction.
    spec = sim.sensor("other")
    elevation = np.radians(np.array(spec.spec.elevations()))[pc.channel]  # type: ignore[attr-defined]
    direct = pc.bounce == 0
    d = pc.xyz[direct] / np.linalg.norm(pc.xyz[direct], axis=1, keepdims=True)
    np.testing.assert_allclose(np.arcsin(d[:, 2]), elevation[direct], atol=1e-4)
    turn = np.arctan2(d[:, 1], d[:, 0]) - pc.azimuth[direct]
    np.testing.assert_allclose((turn + np.pi) % (2 * np.pi) - np.pi, 0.0, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(pc.xyz[direct], axis=1), pc.range[direct], rtol=1e-6)
    assert pc.time_offset.min() >= 0 and pc.time_offset.max() < 0.1


def _readings(path: Path) -> list[dict[str, np.ndarray]]:
    sim = Simulation(path)
    out = []
    for _ in range(6):
        sim.step()
        for name in ("roof", "fan"):
            r = sim.readings[name]
            assert r is not None
            out.append({k: getattr(r, k) for k in r.__dataclass_fields__ if k != "pose"})
    return out


def test_same_seed_same_readings_bit_for_bit(tmp_path: Path) -> None:
    path = crest_scenario(tmp_path, LIDAR)
    a, b = _readings(path), _readings(path)
    for ra, rb in zip(a, b, strict=True):
        assert ra.keys() == rb.keys()
        for key in ra:
            if isinstance(ra[key], np.ndarray):
                np.testing.assert_array_equal(ra[key], rb[key])
                assert ra[key].tobytes() == rb[key].tobytes()
            else:
                assert ra[key] == rb[key]
    # Another seed moves the traffic and draws other noise.
    c = _readings(crest_scenario(tmp_path, LIDAR, seed=4))
    assert a[0]["range"].tobytes() != c[0]["range"].tobytes()


def test_noise_and_dropout(tmp_path: Path) -> None:
    sim = Simulation(crest_scenario(tmp_path, LIDAR))
    noisy = sim.readings["roof"]
    assert isinstance(noisy, PointCloud)
    clean = sim.add_sensor(
        {"type": "lidar", "name": "clean", "channels": 32, "horizontal_resolution_deg": 0.5,
         "range": 150}
    )  # fmt: skip
    pc = sim.readings["clean"]
    assert isinstance(pc, PointCloud) and clean.id == 3
    assert len(noisy) == pytest.approx(0.9 * len(pc), rel=0.02)
    # The noise is along the ray, with the asked sigma.
    key = lambda c: c.channel.astype(np.int64) * 100_000 + np.round(c.azimuth * 1e4).astype(np.int64)  # noqa: E731
    common, i, j = np.intersect1d(key(noisy), key(pc), return_indices=True)
    diff = noisy.range[i] - pc.range[j]
    assert len(common) > 1000 and np.std(diff) == pytest.approx(0.02, rel=0.1)


def test_activation_costs_nothing_and_reads_none(tmp_path: Path) -> None:
    sim = Simulation(crest_scenario(tmp_path, LIDAR.replace("dropout: 0.1}", "dropout: 0.1, active: false}")))
    assert sim.readings["roof"] is None and isinstance(sim.readings["fan"], RayTracerReading)
    sim.sensor("fan").active = False
    sim.step()
    assert sim.readings["roof"] is None and sim.readings["fan"] is None
    assert sim._rays._scene is not None  # (built at frame 0 for "fan")
    sim.sensor("roof").active = True
    sim.step()
    assert isinstance(sim.readings["roof"], PointCloud) and sim.readings["roof"].frame == 2
    with pytest.raises(QueryError, match="no ray tracer, lidar or camera named 'rof'"):
        sim.sensor("rof")


def test_scene_is_built_only_when_needed(tmp_path: Path) -> None:
    sim = Simulation(crest_scenario(tmp_path, LIDAR.replace("dropout: 0.1}", "dropout: 0.1, active: false}").replace("bounces: 2\n", "bounces: 2\n    active: false\n")))
    sim.run(0.5)
    assert sim._rays._scene is None


def test_sample_every(tmp_path: Path) -> None:
    sim = Simulation(crest_scenario(tmp_path, LIDAR.replace("dropout: 0.1}", "dropout: 0.1, sample_every: 3}")))
    frames = []
    for _ in range(7):
        sim.step()
        frames.append(sim.readings["roof"].frame)  # type: ignore[union-attr]
    assert frames == [0, 0, 3, 3, 3, 6, 6]


def test_add_sensor_errors(tmp_path: Path) -> None:
    sim = Simulation(crest_scenario(tmp_path, LIDAR))
    with pytest.raises(ArgumentError, match=r"directions\[1\]: a ray direction \[0, 0, 0\]"):
        sim.add_sensor({"type": "raytracer", "directions": [[1, 0, 0], [0, 0, 0]]})
    with pytest.raises(ArgumentError, match="a sensor named 'roof' exists already"):
        sim.add_sensor({"type": "lidar", "name": "roof"})
    with pytest.raises(ArgumentError, match="a sensor has the id 2 already"):
        sim.add_sensor({"type": "lidar", "name": "x", "id": 2})
    with pytest.raises(ArgumentError, match=r"expected raytracer\|lidar\|camera"):
        sim.add_sensor({"type": "radar"})
    with pytest.raises(ArgumentError, match=r"resolution: expected \[width, height\]"):
        sim.add_sensor({"type": "camera", "resolution": [0, 0]})
    with pytest.raises(QueryError, match="no actor has the id 999"):
        sim.add_sensor({"type": "lidar", "name": "y", "vehicle": 999})


def test_unknown_vehicle_is_a_located_error(tmp_path: Path) -> None:
    path = crest_scenario(tmp_path, "sensors:\n  - {type: lidar, vehicle: 900}\n")
    with pytest.raises(ScenarioError, match=r"crest.yaml:7: sensors\[0\].vehicle: no actor has the id 900"):
        Simulation(path)


def test_town_has_an_inactive_lidar() -> None:
    sim = Simulation("town")
    assert sim.readings["lidar"] is None and not sim.sensor("lidar").active
    sim.sensor("lidar").active = True
    sim.step()
    pc = sim.readings["lidar"]
    assert isinstance(pc, PointCloud) and len(pc) > 1000
    assert math.isclose(pc.time, sim.time)


def test_scene_objects_of_the_map(tmp_path: Path) -> None:
    # crest-curve's Building2 (type none, an outline in road coordinates) is no actor: it
    # stands in the static mesh as a prism, of class obstacle, unless the scenario says.
    text = crest_scenario(tmp_path).read_text() + "scene: {object_classes: {none: building}}\n"
    scenario = parse_scenario(text, tmp_path / "s.yaml")
    sim = Simulation(scenario)
    static = sim.scene.static
    buildings = static.surface == SURFACE_IDS["building"]
    assert (static.actor[buildings] == -1).any() and (static.actor[buildings] >= 0).any()
    plain = Simulation(crest_scenario(tmp_path)).scene.static
    assert ((plain.surface == SURFACE_IDS["obstacle"]) & (plain.actor == -1)).any()


@pytest.mark.parametrize("bounces", [0, 1])
def test_a_lidar_casts_near_actors_only_as_if_it_cast_every_ray(
    tmp_path: Path, bounces: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lidar casts against the moving actors only the rays within an actor's bounding
    # sphere as seen from it, and only against the actors within its range
    # (Lidar._near_actors); casting every ray against every actor must give the same.
    from roadsim.sensors.lidar import Lidar

    sensors = (
        "sensors:\n"
        f"  - {{type: lidar, name: roof, channels: 32, horizontal_resolution_deg: 0.5,\n"
        f"     range: 150, bounces: {bounces}}}\n"
    )
    sim = Simulation(crest_scenario(tmp_path, sensors))
    lidar = sim.sensor("roof")
    assert isinstance(lidar, Lidar)
    seen_actors = 0
    for _ in range(6):
        sim.run(0.5)
        culled = sim.readings["roof"]
        assert isinstance(culled, PointCloud)
        pose = lidar.pose(sim.state)
        assert pose is not None
        near, actors = lidar._near_actors(sim.state, pose)
        assert near is not None and 0 < len(near) < lidar.rays
        assert 0 < len(actors) < int(np.sum(sim.state.active)) - 1
        with monkeypatch.context() as m:
            m.setattr(Lidar, "_near_actors", lambda self, state, pose: (None, None))
            every = lidar.sample(sim.scene, sim.state, sim.frame, sim.time)
        assert every is not None
        for name in ("xyz", "range", "intensity", "surface_ids", "actor_ids", "lane_uids"):
            assert np.array_equal(getattr(culled, name), getattr(every, name), equal_nan=True)
        seen_actors += int(np.sum(every.actor_ids >= 0))
    assert seen_actors > 0  # (the check means something only where actors are hit)


@pytest.mark.parametrize("bounces", [0, 2])
def test_a_lidars_points_are_those_of_its_trace(tmp_path: Path, bounces: int) -> None:
    # The lidar gathers its points in compiled loops from the valid segments alone; they
    # must be, bit for bit, what numpy makes of the full (N, B+1) trace of its rays.
    from roadsim.sensors.lidar import REFLECTIVITY, Lidar
    from roadsim.sensors.raytracer import trace

    sensors = (
        "sensors:\n"
        f"  - {{type: lidar, name: roof, channels: 32, horizontal_resolution_deg: 0.5,\n"
        f"     range: 150, bounces: {bounces}}}\n"
    )
    sim = Simulation(crest_scenario(tmp_path, sensors))
    sim.run(1.0)
    lidar, pc = sim.sensor("roof"), sim.readings["roof"]
    assert isinstance(lidar, Lidar) and isinstance(pc, PointCloud)
    pose = lidar.pose(sim.state)
    assert pose is not None
    n = lidar.rays
    d = lidar.directions @ pose.rotation.T
    tr = trace(
        sim.scene, np.broadcast_to(pose.position, (n, 3)), d, np.full(n, lidar.range),
        bounces, ignore_actor=lidar.mount.actor,
    )  # fmt: skip
    ray, seg = np.nonzero(tr.valid)
    if bounces == 0:
        points = lidar.directions[ray] * tr.distances[ray, seg][:, None]
        cos = np.abs(np.einsum("ij,ij->i", d, tr.normals[:, 0]))[ray]
        before = np.ones(len(ray))
    else:
        # (Rotations and dot products summing their three products in the order x, y, z.)
        def rotate(v: np.ndarray) -> np.ndarray:
            r = pose.rotation
            return (v[:, :1] * r[0] + v[:, 1:2] * r[1]) + v[:, 2:3] * r[2]

        points = rotate(tr.locations[ray, seg] - pose.position)
        before_it = rotate(tr.locations[ray, np.maximum(seg - 1, 0)] - pose.position)
        prev = np.where((seg > 0)[:, None], before_it, 0.0)
        seg_dir = points - prev
        seg_dir /= np.linalg.norm(seg_dir, axis=1, keepdims=True).clip(1e-12)
        normal = rotate(tr.normals[ray, seg])
        dot = (seg_dir[:, 0] * normal[:, 0] + seg_dir[:, 1] * normal[:, 1]) + seg_dir[:, 2] * normal[:, 2]
        cos = np.abs(dot)
        refl = np.where(tr.valid, REFLECTIVITY[tr.surface_ids], 1.0)
        before = np.cumprod(np.concatenate((np.ones((n, 1)), refl[:, :-1]), axis=1), axis=1)
        before = before[ray, seg]
    path = np.cumsum(np.nan_to_num(tr.distances), axis=1)[ray, seg]
    intensity = REFLECTIVITY[tr.surface_ids[ray, seg]] * cos * before
    assert bounces == 0 or np.any(seg > 0)
    assert np.array_equal(pc.xyz, points.astype(np.float32))
    assert np.array_equal(pc.range, path.astype(np.float32))
    assert np.array_equal(pc.intensity, intensity.astype(np.float32))
    assert np.array_equal(pc.surface_ids, tr.surface_ids[ray, seg])
    assert np.array_equal(pc.actor_ids, tr.actor_ids[ray, seg])
    assert np.array_equal(pc.lane_uids, tr.lane_uids[ray, seg])
    assert np.array_equal(pc.bounce, seg.astype(np.uint8))
    assert np.array_equal(pc.channel, lidar.channel[ray])


def test_a_lidar_traced_in_blocks_over_threads_gives_the_same_points(tmp_path: Path) -> None:
    # The pool traces blocks of rays, each through its reflections on its own thread
    # (trace_segments); the points, noise and dropout included, and a ray tracer's
    # segments must not depend on how many blocks there were.
    from roadsim.sensors.lidar import Lidar
    from roadsim.sensors.raycast import RayPool
    from roadsim.sensors.raytracer import trace

    sensors = (
        "sensors:\n"
        "  - {type: lidar, name: roof, channels: 32, horizontal_resolution_deg: 0.5,\n"
        "     range: 150, bounces: 2, range_noise_std: 0.02, dropout: 0.1}\n"
    )
    sim = Simulation(crest_scenario(tmp_path, sensors))
    sim.run(1.0)
    lidar = sim.sensor("roof")
    assert isinstance(lidar, Lidar)
    pose = lidar.pose(sim.state)
    assert pose is not None
    n = lidar.rays
    d = lidar.directions @ pose.rotation.T
    clouds, traces = [], []
    pools = (RayPool(1), RayPool(3, min_rays_per_thread=1000), RayPool(2, min_rays_per_thread=7))
    for pool in pools:
        sim.scene.pool = pool
        assert pool.chunks(n) == pool.threads
        clouds.append(lidar.sample(sim.scene, sim.state, sim.frame, sim.time))
        origins = np.broadcast_to(pose.position, (n, 3))
        traces.append(
            trace(sim.scene, origins, d, np.full(n, 150.0), 2, ignore_actor=lidar.mount.actor)
        )
        pool.close()
    assert clouds[0] is not None and np.any(clouds[0].bounce == 2)

    def same(a: object, b: object) -> bool:
        x, y = np.asarray(a), np.asarray(b)
        return np.array_equal(x, y, equal_nan=x.dtype.kind == "f")

    for pc, tr in zip(clouds[1:], traces[1:], strict=True):
        for name in PointCloud.__dataclass_fields__:
            if name != "pose":
                assert same(getattr(pc, name), getattr(clouds[0], name)), name
        for name in tr.__dataclass_fields__:
            assert same(getattr(tr, name), getattr(traces[0], name)), name


@pytest.mark.parametrize("culled", [True, False])
def test_blocks_cast_at_once_build_each_moving_mesh_once(
    tmp_path: Path, culled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pool's threads cast their blocks at once, each asking the scene for the moving
    # mesh (of the actors in range, or of all but the lidar's own); a slow build, during
    # which the other thread asks too, must still be the only one.
    import time

    from roadsim.sensors.lidar import Lidar
    from roadsim.sensors.raycast import RayPool

    sensors = (
        "sensors:\n"
        "  - {type: lidar, name: roof, channels: 32, horizontal_resolution_deg: 0.5,\n"
        "     range: 150, bounces: 1, active: false}\n"
    )
    sim = Simulation(crest_scenario(tmp_path, sensors))
    lidar = sim.sensor("roof")
    assert isinstance(lidar, Lidar)
    scene = sim.scene
    scene.pool = RayPool(2, min_rays_per_thread=1000)
    if not culled:
        monkeypatch.setattr(Lidar, "_near_actors", lambda self, state, pose: (None, None))
    backend = type(scene._backend)
    builds = []
    build = backend.build

    def slow_build(self: object, vertices: np.ndarray, triangles: np.ndarray) -> object:
        builds.append(len(triangles))
        time.sleep(0.05)  # (the other thread runs meanwhile)
        return build(self, vertices, triangles)  # type: ignore[arg-type]

    monkeypatch.setattr(backend, "build", slow_build)
    scene.update(sim.state, sim.frame)
    assert lidar.sample(scene, sim.state, sim.frame, sim.time) is not None
    scene.pool.close()
    assert len(builds) == 1
