"""The lidar's cost per sample on a corpus map with 200 moving vehicles, beside Embree's own.

Run as ``.venv/bin/python benchmarks/bench_rays.py`` (``--help`` for the options). It
builds esmini's ``multi_intersections`` (63 roads, 10 km of driving lanes) with 200
traffic vehicles, mounts a 64 x 2048 lidar (131,072 rays) on the roof of one of them, and
at each of ``--samples`` ticks times, after the tick:

- ``lidar``: one sample as a simulation takes it: the moving actors' mesh rebuilt for the
  frame (`Scene.update`), the rays cast against both meshes with full records (distance,
  normal, class, actor, lane), and the point cloud made (every field);
- ``lidar, 1 bounce``: the same with ``bounces: 1``;
- ``embree``: the casts of that sample through embreex alone, on one thread, float32
  rays ready: the 131,072 rays against the static mesh, then the rays near an actor
  against the mesh of the actors in range up to the static hit (`Lidar._near_actors`),
  ``output=1``: the floor that our layer adds to;
- ``embree, every ray``: every ray against the static mesh and then against every
  moving actor's box: what a cast without the lidar's culling would cost;
- ``embree, reflected``: the casts of that sample's bounce through embreex alone, on one
  thread, float32 rays ready: its ~117,000 reflected rays against the static mesh, then
  against the actors in range, up to the static hit;
- ``update``: the moving mesh's rebuild alone;
- ``the bounce``: what the bounce adds, ``lidar, 1 bounce`` less ``lidar`` in each tick.

It prints the median ms of each; the median CPU ms of all the process's threads in it
(the work done: a machine busy with other jobs inflates it less than the wall time, and
it exceeds the wall time where the pool's threads ran at once); and, to show the work was
real, the vehicles, the triangles, the returns per ray, the share of rays that hit an
actor, and the reflected rays.

``--threads`` instead times one cast of N rays on one thread and split over two, for N
from 1,024 to 131,072, in alternation in the same process (so that both see the same
spells of a shared machine): where splitting starts to pay is
`roadsim.sensors.raycast.MIN_RAYS_PER_THREAD`.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from roadsim.sensors.lidar import Lidar, PointCloud
from roadsim.sensors.raycast import RayPool
from roadsim.sensors.raytracer import BOUNCE_OFFSET_M, trace
from roadsim.sensors.scene import Scene
from roadsim.sim import Simulation
from roadsim.world.state import VEHICLE

MAP = Path(__file__).parent.parent / "tests/data/opendrive/maps/esmini/multi_intersections.xodr"
SAMPLES = 30
T = TypeVar("T")


def scenario(vehicles: int) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="bench_rays_"))
    path = folder / "rays.yaml"
    path.write_text(
        f"map: {MAP}\nseed: 1\ntraffic: {{count: {vehicles}, min_gap: 5, mix: {{car: 1.0}}}}\n"
        "sensors:\n"
        "  - {type: lidar, name: lidar, vehicle: 0, channels: 64,\n"
        "     horizontal_resolution_deg: 0.17578125, active: false}\n"
        "  - {type: lidar, name: bounce, vehicle: 0, channels: 64,\n"
        "     horizontal_resolution_deg: 0.17578125, bounces: 1, active: false}\n"
    )
    return path


def timed(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[float, T]:
    """(ms, result) of one call."""
    ms, _, out = timed_cpu(fn, *args, **kwargs)
    return ms, out


def timed_cpu(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[float, float, T]:
    """(ms, CPU ms of every thread of the process, result) of one call."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return (time.perf_counter() - start) * 1e3, (time.process_time() - cpu) * 1e3, out


def sample(scene: Scene, sensor: Lidar, sim: Simulation) -> PointCloud:
    """One sample as the simulation takes it: the moving mesh rebuilt, then the sweep."""
    scene.update(sim.state, -1 - sim.frame)  # (a frame the scene has not seen)
    out = sensor.sample(scene, sim.state, sim.frame, sim.time)
    assert out is not None
    return out


def embree_only(
    scene: Scene, o: Any, d: Any, far: Any, near: Any, in_range: Any, actor: int
) -> None:
    """The lidar's casts through embreex alone: static, then the rays near an actor
    (``near``, None: every ray) against the actors in range (``in_range``, None: every
    moving actor but the lidar's own), up to the static hit."""
    t = scene._static.intersect(o, d, far).t
    some = None if in_range is None else scene._some_actors(in_range)[0]
    moving = scene._moving_mesh(actor) if some is None else some
    rows = slice(None) if near is None else near
    moving.intersect(o[rows], d[rows], t[rows])


def reflected_rays(
    scene: Scene, sensor: Lidar, sim: Simulation
) -> tuple[Any, Any, Any]:
    """The origins, directions and lengths (float32, the scene's frame) of the sample's
    reflected rays: those whose first segment hit within the range, reflected there."""
    pose = sensor.pose(sim.state)
    assert pose is not None
    n = sensor.rays
    d = sensor.directions @ pose.rotation.T
    near, in_range = sensor._near_actors(sim.state, pose)
    tr = trace(
        scene, np.broadcast_to(pose.position, (n, 3)), d, np.full(n, sensor.range), 0,
        ignore_actor=sensor.mount.actor, near_actors=near, actors=in_range,
    )  # fmt: skip
    go = np.flatnonzero(tr.valid[:, 0] & (tr.distances[:, 0] < sensor.range))
    normal, d = tr.normals[go, 0], d[go]
    r = d - 2.0 * np.einsum("ij,ij->i", d, normal)[:, None] * normal
    r /= np.linalg.norm(r, axis=1, keepdims=True)
    o = tr.locations[go, 0] + BOUNCE_OFFSET_M * normal - scene.origin
    far = sensor.range - tr.distances[go, 0]
    return o.astype(np.float32), r.astype(np.float32), far.astype(np.float32)


def embree_reflected(scene: Scene, o: Any, d: Any, far: Any, in_range: Any) -> None:
    """The bounce's casts through embreex alone: the reflected rays against the static
    mesh, then against the actors in range, up to the static hit."""
    t = scene._static.intersect(o, d, far).t
    scene._some_actors(in_range)[0].intersect(o, d, t)


def run_samples(args: argparse.Namespace) -> None:
    sim = Simulation(scenario(args.vehicles))
    lidar, bounce = sim.sensor("lidar"), sim.sensor("bounce")
    assert isinstance(lidar, Lidar) and isinstance(bounce, Lidar)
    scene = sim.scene
    scene.pool = RayPool(args.pool)
    names = (
        "lidar", "lidar, 1 bounce", "the bounce", "embree", "embree, every ray",
        "embree, reflected", "update",
    )  # fmt: skip
    times: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    returns, actors, seen, reflected = [], [], [], []
    for k in range(args.samples + 2):
        sim.step()
        st = sim.state
        pose = lidar.pose(st)
        if pose is None:
            raise SystemExit("the lidar's vehicle left the map; try another --vehicles")
        t_lidar, c_lidar, pc = timed_cpu(sample, scene, lidar, sim)
        t_bounce, c_bounce, _ = timed_cpu(sample, scene, bounce, sim)
        t_update, c_update, _ = timed_cpu(scene.update, st, sim.frame)
        # The same rays, straight to Embree.
        d = (lidar.directions @ pose.rotation.T).astype(np.float32)
        o = np.broadcast_to((pose.position - scene.origin).astype(np.float32), d.shape).copy()
        far = np.full(len(d), lidar.range, dtype=np.float32)
        near, in_range = lidar._near_actors(st, pose)
        # (The meshes built here, not timed: a sample's time holds their builds.)
        own = lidar.mount.actor
        scene._some_actors(in_range), scene._moving_mesh(own)
        t_embree, c_embree, _ = timed_cpu(embree_only, scene, o, d, far.copy(), near, in_range, own)
        t_every, c_every, _ = timed_cpu(embree_only, scene, o, d, far.copy(), None, None, own)
        ro, rd, rfar = reflected_rays(scene, bounce, sim)
        t_refl, c_refl, _ = timed_cpu(embree_reflected, scene, ro, rd, rfar, in_range)
        if k < 2:  # warm-up
            continue
        for name, t, c in (
            ("lidar", t_lidar, c_lidar), ("lidar, 1 bounce", t_bounce, c_bounce),
            ("the bounce", t_bounce - t_lidar, c_bounce - c_lidar),
            ("embree", t_embree, c_embree), ("embree, every ray", t_every, c_every),
            ("embree, reflected", t_refl, c_refl),
            ("update", t_update, c_update),
        ):  # fmt: skip
            times[name].append(t)
            cpu[name].append(c)
        returns.append(len(pc) / pc.rays)
        actors.append(np.sum(pc.actor_ids >= 0) / pc.rays)
        seen.append(len(np.unique(pc.actor_ids[pc.actor_ids >= 0])))
        reflected.append(len(rd))
    st = sim.state
    vehicles = int(np.sum(st.active & (st.kind == VEHICLE)))
    print(
        f"multi_intersections, {vehicles} vehicles moving, {len(scene.static.triangles):,} static "
        f"+ {len(scene.moving.triangles):,} moving triangles; lidar 64 x 2048 = {lidar.rays:,} "
        f"rays, {args.samples} samples, {scene.pool.threads} thread(s), load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    floor = statistics.median(times["embree"])
    print(f"{'what':<18} {'median ms':>9} {'x embree':>9} {'CPU ms':>7}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:<18} {med:9.2f} {med / floor:9.2f} {statistics.median(cpu[name]):7.2f}")
    print(
        f"returns per ray {statistics.median(returns):.3f}, rays hitting an actor "
        f"{100 * statistics.median(actors):.1f}%, actors seen {statistics.median(seen):.0f}",
        f"reflected rays {statistics.median(reflected):,.0f}",
        sep="\n",
    )


def run_threads(args: argparse.Namespace) -> None:
    sim = Simulation(scenario(args.vehicles))
    lidar = sim.sensor("lidar")
    assert isinstance(lidar, Lidar)
    scene = sim.scene
    one, two = RayPool(1), RayPool(2, min_rays_per_thread=1)
    pose = lidar.pose(sim.state)
    assert pose is not None
    d_all = lidar.directions @ pose.rotation.T
    print(f"{'rays':>7} {'1 thread ms':>11} {'2 threads ms':>12} {'ratio':>6}")
    for n in (1024, 4096, 8192, 16384, 32768, 65536, 131072):
        idx = np.linspace(0, len(d_all) - 1, n).astype(np.int64)
        o, d = np.broadcast_to(pose.position, (n, 3)), d_all[idx]
        a, b = [], []
        for _ in range(args.samples):
            for pool, times in ((one, a), (two, b)):
                scene.pool = pool
                times.append(timed(scene.cast, o, d, 120.0, ignore_actor=lidar.mount.actor)[0])
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"{n:7d} {ma:11.2f} {mb:12.2f} {mb / ma:6.2f}")
    two.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vehicles", type=int, default=200, help="traffic vehicles")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="samples timed")
    parser.add_argument("--pool", type=int, default=None, help="threads (default: the CPUs)")
    parser.add_argument("--threads", action="store_true", help="time 1 vs 2 threads by N")
    args = parser.parse_args(argv)
    if args.threads:
        run_threads(args)
    else:
        run_samples(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
