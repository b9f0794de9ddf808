"""A 640 x 480 camera's frame rate on a corpus map with 200 moving vehicles, beside a plain
moderngl render of the same triangles and the ray-cast camera.

Run as ``.venv/bin/python benchmarks/bench_camera.py`` (``--help`` for the options). It
builds esmini's ``multi_intersections`` (63 roads) with 200 traffic vehicles, mounts a
640 x 480, 90-degree camera on the roof of one of them, and at each of ``--samples``
ticks times, after the tick:

- ``camera``: one shot as a simulation takes it: the moving actors' mesh rebuilt for the
  frame (`Scene.update`), uploaded, the sun's shadow map of the shot (the static mesh's,
  drawn when the camera reaches a new square of ground, copied, and the actors drawn into
  the copy), the scene and the sky drawn into the HDR colour, depth and ids (class and
  actor) targets, all three read back;
- ``camera, render only``: the same without the scene update (the mesh as it is);
- ``camera, no shadows``: render only, ``shadows: false``;
- ``plain moderngl``: the same vertex and index buffers drawn by a minimal program
  (position only, a constant colour) into a float32 RGBA colour and a float32 depth
  target, both read back: the floor of a GL camera on this machine, which our layer adds
  to;
- ``ray-cast camera``: the same shot by `RaycastRenderer` (Embree, one ray per pixel,
  shadow rays), the fallback.

With ``--stages``, it also times a shot's stages apart (`RasterRenderer._stages`: the
upload, the shadow maps, the scene, the sky, the read-back), waiting for llvmpipe to
finish each (glFinish) before the next, with and without shadows.

It prints the median ms and frames per second of each, the median CPU time of the process
(all its threads: llvmpipe's and Embree's too) beside it, which a busy machine's time
slicing leaves out of the count, and, to show the work is real, the triangles drawn, the
share of sky pixels, the actors visible, the classes seen, how often the static mesh's
shadow map was drawn and the slowest shot.
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

from roadsim.sensors.camera import Camera, CameraImage, Shot
from roadsim.sensors.camera_raycast import RaycastRenderer
from roadsim.sensors.raster import RasterRenderer
from roadsim.sensors.scene import Scene
from roadsim.sim import Simulation

MAP = Path(__file__).parent.parent / "tests/data/opendrive/maps/esmini/multi_intersections.xodr"
SAMPLES = 30
T = TypeVar("T")

_PLAIN_VERTEX = """
#version 330
uniform mat4 u_view_projection;
in vec3 in_position;
out float v_depth;
void main() {
    gl_Position = u_view_projection * vec4(in_position, 1.0);
    v_depth = gl_Position.w;
}
"""
_PLAIN_FRAGMENT = """
#version 330
in float v_depth;
layout(location = 0) out vec4 out_color;
layout(location = 1) out float out_depth;
void main() {
    out_color = vec4(0.5, 0.5, 0.5, 1.0);
    out_depth = v_depth;
}
"""


def scenario(vehicles: int) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="bench_camera_"))
    path = folder / "camera.yaml"
    path.write_text(
        f"map: {MAP}\nseed: 1\ntraffic: {{count: {vehicles}, min_gap: 5, mix: {{car: 1.0}}}}\n"
        "sensors:\n"
        "  - {type: camera, name: camera, vehicle: 0, resolution: [640, 480],\n"
        "     horizontal_fov_deg: 90, renderer: raster, active: false,\n"
        "     offset: {translation: [0.3, 0, 0.1], rotation_deg: [0, 3, 0]}}\n"
    )
    return path


def timed(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[tuple[float, float], T]:
    """((wall ms, process CPU ms), result) of one call."""
    cpu, start = time.process_time(), time.perf_counter()
    out = fn(*args, **kwargs)
    return ((time.perf_counter() - start) * 1e3, (time.process_time() - cpu) * 1e3), out


def sample(
    scene: Scene, camera: Camera, sim: Simulation, raster: RasterRenderer
) -> CameraImage | None:
    """One shot as the simulation takes it: the moving mesh rebuilt, then the images."""
    scene.update(sim.state, -1 - sim.frame)  # (a frame the scene has not seen)
    return camera.sample(scene, sim.state, sim.frame, sim.time, raster, sim._rays.lighting)


class Plain:
    """The renderer's own vertex buffers, drawn by a minimal program."""

    def __init__(self, renderer: RasterRenderer, size: tuple[int, int]) -> None:
        ctx = renderer._ctx
        self.renderer, self.size = renderer, size
        with ctx:
            self.program = ctx.program(vertex_shader=_PLAIN_VERTEX, fragment_shader=_PLAIN_FRAGMENT)
            self.color = ctx.renderbuffer(size, 4, dtype="f4")
            self.depth = ctx.renderbuffer(size, 1, dtype="f4")
            self.fbo = ctx.framebuffer([self.color, self.depth], ctx.depth_renderbuffer(size))
        self.arrays: dict[int, Any] = {}

    def render(self, scene: Scene, shot: Shot) -> None:
        r = self.renderer
        with r._ctx as ctx:
            r._upload(scene)
            view = np.eye(4)
            from roadsim.sensors.camera_model import GL_EYE_FROM_SENSOR

            view[:3, :3] = GL_EYE_FROM_SENSOR @ shot.pose.rotation.T
            view[:3, 3] = -view[:3, :3] @ (shot.pose.position - scene.origin)
            matrix = shot.model.gl_projection() @ view
            self.program["u_view_projection"].write(np.asarray(matrix, "f4").T.tobytes())
            self.fbo.use()
            self.fbo.clear(depth=1.0)
            ctx.enable(ctx.DEPTH_TEST)
            for mesh in (r._static, r._moving):
                if mesh is None or not mesh.count:
                    continue
                vao = self.arrays.get(id(mesh.buffer))
                if vao is None:
                    vao = self.arrays[id(mesh.buffer)] = ctx.vertex_array(
                        self.program,
                        [(mesh.buffer, "3f 20x", "in_position")],
                        index_buffer=mesh.indices,
                        index_element_size=4,
                    )
                vao.render(ctx.TRIANGLES, vertices=mesh.count)
            w, h = self.size
            color = np.empty((h, w, 3), dtype=np.float32)
            depth = np.empty((h, w), dtype=np.float32)
            self.fbo.read_into(color, components=3, attachment=0, dtype="f4")
            self.fbo.read_into(depth, components=1, attachment=1, dtype="f4")


def stages(raster: RasterRenderer, scene: Scene, shot: Shot) -> dict[str, tuple[float, float]]:
    """(wall ms, process CPU ms) of each stage of a shot, each finished before the next."""
    out = {}
    with raster._ctx as ctx:
        ctx.finish()
        cpu, start = time.process_time(), time.perf_counter()
        for name, _ in raster._stages(scene, shot):
            ctx.finish()
            now, now_cpu = time.perf_counter(), time.process_time()
            out[name] = ((now - start) * 1e3, (now_cpu - cpu) * 1e3)
            cpu, start = now_cpu, now
    return out


def run(args: argparse.Namespace) -> None:
    with Simulation(scenario(args.vehicles)) as sim:
        camera = sim.sensor("camera")
        assert isinstance(camera, Camera)
        scene = sim.scene
        raster = RasterRenderer()
        raycast = RaycastRenderer()
        plain = Plain(raster, (640, 480))
        light = sim._rays.lighting
        keys = ("camera", "camera, render only", "camera, no shadows", "plain moderngl",
                "ray-cast camera")  # fmt: skip
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in keys}
        sky, actors, agree = [], [], []
        staged: dict[tuple[bool, str], list[tuple[float, float]]] = {}
        for k in range(args.samples + 2):
            sim.step()
            st = sim.state
            t_camera, image = timed(sample, scene, camera, sim, raster)
            if image is None:
                raise SystemExit("the camera's vehicle left the map; try another --vehicles")
            shot = Shot(camera.model, image.pose, light, camera.mount.actor, True)
            t_render, _ = timed(raster.render, scene, shot)
            bare = Shot(camera.model, image.pose, light, camera.mount.actor, False)
            t_bare, _ = timed(raster.render, scene, bare)
            t_plain, _ = timed(plain.render, scene, shot)
            t_cast, cast = timed(raycast.render, scene, shot)
            if args.stages:
                for lit in (True, False):
                    s = Shot(camera.model, image.pose, light, camera.mount.actor, lit)
                    for name, t in stages(raster, scene, s).items():
                        staged.setdefault((lit, name), []).append(t)
            if k < 2:  # warm-up
                continue
            for key, t in zip(keys, (t_camera, t_render, t_bare, t_plain, t_cast), strict=True):
                times[key].append(t)
            sky.append(float(np.mean(np.isinf(image.depth))))
            actors.append(len(np.unique(image.actor_ids[image.actor_ids >= 0])))
            agree.append(float(np.mean(image.surface_ids == cast.surface_ids)))
        print(
            f"multi_intersections, {int(np.sum(st.active))} actors moving, camera 640 x 480, "
            f"90 deg; {len(scene.static.triangles):,} static + {len(scene.moving.triangles):,} "
            f"moving triangles; {raster.description}"
        )
        print(f"median of {args.samples} samples, load average {os.getloadavg()[0]:.2f}:")
        for key in keys:
            ms = statistics.median(t for t, _ in times[key])
            cpu = statistics.median(c for _, c in times[key])
            print(f"  {key:22s} {ms:7.2f} ms  {1e3 / ms:6.1f} frames/s  (CPU {cpu:7.2f} ms)")
        print(
            f"static shadow map draws: {raster.static_shadow_draws} in "
            f"{3 * (args.samples + 2)} shadowed shots (warm-up included); slowest camera shot "
            f"{max(t for t, _ in times['camera']):.2f} ms"
        )
        print(
            f"sky pixels {100 * statistics.median(sky):.1f}% (median), actors visible "
            f"{statistics.median(actors):.0f} (median, {min(actors)}-{max(actors)}), classes "
            f"agreeing with the ray-cast camera {100 * min(agree):.2f}% of pixels at worst"
        )
        for lit in (True, False) if args.stages else ():
            print(f"stages of a shot {'with' if lit else 'without'} shadows, each finished "
                  "before the next: median wall ms (CPU ms)")  # fmt: skip
            print("  " + ", ".join(
                f"{name} {statistics.median(t for t, _ in ts[2:]):.2f} "
                f"({statistics.median(c for _, c in ts[2:]):.2f})"
                for (on, name), ts in staged.items() if on == lit
            ))  # fmt: skip
        raster.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=SAMPLES, help=f"default {SAMPLES}")
    parser.add_argument("--vehicles", type=int, default=200, help="default 200")
    parser.add_argument("--stages", action="store_true", help="time a shot's stages apart")
    run(parser.parse_args(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
