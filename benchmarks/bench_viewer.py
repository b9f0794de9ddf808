"""What the web viewer costs and how fast its page draws, beside the seed's approach.

Run as ``.venv/bin/python benchmarks/bench_viewer.py`` (``--help`` for the options); it
needs the built bundle (``make web``) and Debian's Chromium.

1. **Feeds** (issue 26: under 2 ms of simulation time per tick and 100 kB per frame with
   1,000 objects): the built-in highway with 1,000 traffic vehicles ticks in turns with
   and without the viewer's sink (`roadsim.viewer.FeedSink`, a capture at every tick);
   the difference of the median ms/tick is what the feeds cost. It prints the frame
   messages' median size.
2. **Page** (60 fps with 1,000 objects and a town's lanes, 30+ with 5,000): N synthetic
   objects (cars, trucks, boxes) drive circles over the built-in town at 20 Hz through the
   real sink and server into the real page in headless Chromium (software WebGL); the page
   times its animation frames with requestAnimationFrame. Each N runs on the same page
   settings as (``--renderers`` picks): ``ours`` (lanes rebuilt per version; one batch per
   model, which the page picks on software WebGL, far objects in a second draw as one
   point each, vehicles 16 to 64 px across in a third as one box each), ``ours, roofs`` (far objects as their roof, a quad each; ``?far=roofs``),
   ``ours, instanced`` (one InstancedMesh per model, what a hardware GPU gets;
   ``?draw=instanced``) and ``seed`` (the seed document's approach:
   every lane rebuilt on each update, one mesh per object; ``?renderer=seed``). It prints the
   median frame time and fps (``--uncapped``: not held to the display's 60 Hz, so that
   the frame time is the cost of drawing), and, to show the work was real, the objects in the scene and
   those drawn in the last frame (a batch draws only those in the camera's view; the seed's
   meshes are culled by three.js, which the count does not show), how many of those far
   (as points or roofs) and as boxes, draw calls, lane rebuilds and bytes per frame, and
   the browser's CPU time per frame (the work, where frame times also show the wait for
   a busy machine's cores).
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

import argparse
import statistics
import threading
import time
from typing import Any

import msgpack
import numpy as np

from roadsim.capture import ActorStates, Capture, Snapshot
from roadsim.scenario import load_scenario
from roadsim.scenario.schema import validate_data
from roadsim.sim import Simulation
from roadsim.sim.build import MODEL_NAMES
from roadsim.viewer import FeedSink, ViewerServer
from roadsim.viewer.session import Session

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
]  # fmt: skip


# -- 1. the feeds' cost per tick ---------------------------------------------------------------


def feed_cost(vehicles: int, ticks: int, block: int) -> None:
    data = load_scenario("highway").model_dump(mode="json", exclude_unset=True)
    data["traffic"].pop("density", None)
    data["traffic"]["count"] = vehicles
    data["traffic"]["min_gap"] = 5.0  # room for 1,000 on the highway
    data.pop("sensors", None)
    scenario = validate_data(data, f"highway-{vehicles}")
    plain, viewed = Simulation(scenario), Simulation(scenario)
    sink = FeedSink()
    writes: list[float] = []
    write = sink.write

    def timed_write(snapshot: Snapshot) -> None:
        start = time.perf_counter()
        write(snapshot)
        writes.append(time.perf_counter() - start)

    sink.write = timed_write  # type: ignore[method-assign]
    capture = Capture(viewed, [sink]).start()
    sub = sink.subscribe(lambda: None)
    sizes: list[int] = []
    times: dict[str, list[float]] = {"plain": [], "viewer": []}
    for _ in range(max(1, ticks // block)):
        for name, sim in (("plain", plain), ("viewer", viewed)):
            for _ in range(block):
                start = time.perf_counter()
                sim.step()
                times[name].append(time.perf_counter() - start)
                if sim is viewed:
                    sizes += [len(m) for m in sink.take(sub) if not msgpack.unpackb(m)["key"]]
    capture.close()
    plain_ms = 1e3 * statistics.median(times["plain"])
    viewer_ms = 1e3 * statistics.median(times["viewer"])
    world = int((viewed.state.active).sum()) - 1
    print(f"feeds: highway, {world} world objects + the ego, {len(times['plain'])} ticks each")
    print(f"  plain tick      {plain_ms:7.3f} ms (median)")
    print(f"  with the feeds  {viewer_ms:7.3f} ms (median)")
    print(f"  difference      {viewer_ms - plain_ms:7.3f} ms/tick (noisy: other work on the machine)")
    print(
        f"  in the sink     {1e3 * statistics.median(writes):7.3f} ms/tick median, "
        f"{1e3 * np.percentile(writes, 90):.3f} p90: the feeds' cost  (target < 2 ms)"
    )
    print(
        f"  frame message   {statistics.median(sizes) / 1e3:7.1f} kB median, "
        f"{max(sizes) / 1e3:.1f} kB max over {len(sizes)} deltas  (target < 100 kB)"
    )


# -- 2. the page's frame rate ---------------------------------------------------------------------


class CirclingObjects(Session):
    """N objects driving circles over the town at 20 Hz, through the real sink."""

    mode = "benchmark"

    def __init__(self, count: int, rate: float = 20.0, spread: float = 500.0) -> None:
        sim = Simulation("town")  # the town's lanes and the ego
        self.capture = Capture(sim)
        self.info = self.capture.info()
        self.sink = FeedSink(radius=float("inf"))
        self.ego = self.capture.take().actors
        self.count, self.rate = count, rate
        rng = np.random.default_rng(0)
        table_models = [MODEL_NAMES.index(m) for m in ("car", "truck", "box")]
        self.model = rng.choice(table_models, size=count, p=[0.8, 0.1, 0.1])
        size = {MODEL_NAMES.index("car"): (4.6, 1.9, 1.5), MODEL_NAMES.index("truck"): (12, 2.5, 3.8),
                MODEL_NAMES.index("box"): (1, 1, 1)}  # fmt: skip
        self.size = np.array([size[int(m)] for m in self.model])
        ego_xy = np.array([self.ego.x[0], self.ego.y[0]])  # the top-down camera's centre
        self.centre = ego_xy + rng.uniform(-spread / 2, spread / 2, (count, 2))
        self.radius = rng.uniform(5, 40, count)
        self.phase = rng.uniform(0, 2 * np.pi, count)
        self.speed = rng.uniform(5, 15, count)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def snapshot(self, frame: int) -> Snapshot:
        t = frame / self.rate
        n = self.count
        angle = self.phase + self.speed / self.radius * t
        e = self.ego
        cols: dict[str, Any] = {
            "id": np.concatenate((e.id[:1], np.arange(1000, 1000 + n))),
            "kind": np.concatenate((e.kind[:1], np.where(self.model == MODEL_NAMES.index("box"), 1, 0))),
            "model": np.concatenate((e.model[:1], self.model)),
            "control": np.zeros(n + 1, dtype=np.int64),
            "x": np.concatenate((e.x[:1], self.centre[:, 0] + self.radius * np.cos(angle))),
            "y": np.concatenate((e.y[:1], self.centre[:, 1] + self.radius * np.sin(angle))),
            "z": np.zeros(n + 1),
            "heading": np.concatenate((e.heading[:1], angle + np.pi / 2)),
            "speed": np.concatenate((e.speed[:1], self.speed)),
            "length": np.concatenate((e.length[:1], self.size[:, 0])),
            "width": np.concatenate((e.width[:1], self.size[:, 1])),
            "height": np.concatenate((e.height[:1], self.size[:, 2])),
            "collided": np.zeros(n + 1, dtype=bool),
        }
        for name in ("accel", "steer", "yaw_rate", "slip", "s", "t"):
            cols[name] = np.zeros(n + 1)
        for name in ("road", "uid"):
            cols[name] = np.full(n + 1, -1, dtype=np.int64)
        return Snapshot(frame, frame / self.rate, int(e.id[0]), ActorStates(**cols), {})

    def start(self) -> None:
        self.sink.open(self.info)
        self.sink.write(self.snapshot(0))
        self._thread.start()

    def _run(self) -> None:
        frame, start = 0, time.perf_counter()
        while not self._stop.is_set():
            frame += 1
            delay = start + frame / self.rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self.sink.write(self.snapshot(frame))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def browser_cpu_seconds() -> float:
    """CPU time (user + system, s) used so far by this process's descendants (the browser).

    Frame times on a busy machine measure the queue for its cores as much as the work;
    CPU time per frame is the work. Reads Linux's /proc; NaN elsewhere.
    """
    if not os.path.isdir("/proc/self"):
        return float("nan")
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        parent[int(name)] = int(fields[1])
        ticks[int(name)] = int(fields[11]) + int(fields[12])  # utime, stime
    me, total = os.getpid(), 0
    for pid, t in ticks.items():
        p = parent.get(pid, 0)
        while p not in (0, 1, me):
            p = parent.get(p, 0)
        if p == me:
            total += t
    return total / os.sysconf("SC_CLK_TCK")


def page_rate(
    browser: Any,
    counts: list[int],
    seconds: float,
    viewport: tuple[int, int],
    aa: bool,
    spread: float,
    renderers: list[str],
    extra_query: str = "",
) -> None:
    width, height = viewport
    print(f"page: headless Chromium, software WebGL, {width}x{height} px, antialias {'on' if aa else 'off'},"
          f" objects circling over {spread:g} m x {spread:g} m of the town at 20 Hz, {seconds:g} s per run,"
          " seen from 140 m above (a 146 m x 260 m view)")  # fmt: skip
    print(f"  {'objects':>7} {'renderer (draw)':>36} {'ms/frame':>9} {'fps':>6} {'p90 ms':>7} "
          f"{'in scene':>8} {'in view':>7} {'far':>7} {'boxes':>6} {'draws':>6} {'lane builds':>11} {'kB/frame':>9} {'js/frame':>8} {'js/update':>9} {'cpu/frame':>9}")  # fmt: skip
    for count in counts:
        session = CirclingObjects(count, spread=spread)
        with ViewerServer(session, port=0) as server:
            for renderer in renderers:
                page = browser.new_page(viewport={"width": width, "height": height})
                query = f"?camera=top&aa={'1' if aa else '0'}&pixelRatio=1"
                if renderer == "seed":
                    query += "&renderer=seed"
                elif renderer == "ours, instanced":
                    query += "&draw=instanced"  # what a hardware GPU gets
                elif renderer == "ours, roofs":
                    query += "&far=roofs"
                if extra_query:
                    query += "&" + extra_query
                page.goto(server.url + query)
                page.wait_for_function(
                    f"window.__roadsim && window.__roadsim.objectCount && __roadsim.objectCount() === {count}",
                    timeout=120_000,
                )
                page.wait_for_timeout(1000)
                builds0 = page.evaluate("__roadsim.laneBuilds()")
                page.evaluate("__roadsim.clearFrameTimes()")
                count_frames = (
                    "__roadsim.frameCount ? __roadsim.frameCount() : __roadsim.frameTimes().length"
                )
                cpu0, frames0 = browser_cpu_seconds(), page.evaluate(count_frames)
                page.wait_for_timeout(int(1000 * seconds))
                cpu = browser_cpu_seconds() - cpu0
                frames = page.evaluate(count_frames) - frames0
                r = page.evaluate(
                    "({ft: __roadsim.frameTimes(), n: __roadsim.objectCount(), calls: __roadsim.drawCalls(),"
                    " drawn: __roadsim.drawnCount(), far: __roadsim.drawnFarCount ? __roadsim.drawnFarCount() : 0,"
                    " boxes: __roadsim.drawnBoxCount ? __roadsim.drawnBoxCount() : 0,"
                    " builds: __roadsim.laneBuilds(), bytes: __roadsim.bytes, tick: __roadsim.tickMs(),"
                    " update: __roadsim.updateMs(), draw: __roadsim.seedMode ? 'mesh each' :"
                    " __roadsim.draw === 'batched' ? 'batched, far ' + __roadsim.far : __roadsim.draw})"
                )
                ft = sorted(r["ft"])
                median = statistics.median(ft)
                p90 = ft[int(0.9 * (len(ft) - 1))]
                print(
                    f"  {count:7d} {renderer + ' (' + r['draw'] + ')':>36} {median:9.1f} {1000 / median:6.1f} {p90:7.1f} "
                    f"{r['n']:8d} {r['drawn']:7d} {r['far']:7d} {r['boxes']:6d} {r['calls']:6d} {r['builds'] - builds0:11d} {r['bytes'] / 1e3:9.1f}"
                    f" {statistics.median(r['tick']):8.1f} {statistics.median(r['update'] or [0]):9.1f}"
                    f" {1e3 * cpu / max(frames, 1):9.1f}"
                )
                page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vehicles", type=int, default=1000, help="traffic for the feed cost")
    parser.add_argument("--ticks", type=int, default=400, help="ticks per simulation (feeds)")
    parser.add_argument("--objects", default="1000,5000", help="object counts for the page")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds timed per page run")
    parser.add_argument("--viewport", default="640x360", help="page size in CSS pixels")
    parser.add_argument("--antialias", action="store_true", help="multisample (slow in software)")
    parser.add_argument(
        "--spread", type=float, default=500.0, help="side of the square the objects circle in (m)"
    )
    parser.add_argument(
        "--renderers",
        default="ours,roofs,instanced,seed",
        help="page runs per count: ours, roofs, instanced, seed",
    )
    parser.add_argument(
        "--uncapped",
        action="store_true",
        help="frames as fast as Chromium draws them, not at the display's 60 Hz: the frame "
        "time is then what drawing costs, not a whole number of display frames",
    )
    parser.add_argument(
        "--query", default="", help="more page settings, as a URL query (e.g. far=roofs)"
    )
    parser.add_argument("--skip-feeds", action="store_true")
    parser.add_argument("--skip-page", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if not args.skip_feeds:
        feed_cost(args.vehicles, args.ticks, block=20)
    if not args.skip_page:
        from playwright.sync_api import sync_playwright

        width, height = (int(v) for v in args.viewport.split("x"))
        names = {"ours": "ours", "roofs": "ours, roofs", "instanced": "ours, instanced", "seed": "seed"}
        renderers = [names[r] for r in args.renderers.split(",")]
        with sync_playwright() as p:
            extra = ["--disable-gpu-vsync", "--disable-frame-rate-limit"] if args.uncapped else []
            print("page frames: " + ("uncapped" if args.uncapped else "at most 60 Hz (the display's)"))
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS + extra
            )
            try:
                page_rate(browser, [int(c) for c in args.objects.split(",")], args.seconds,
                          (width, height), args.antialias, args.spread, renderers, args.query)  # fmt: skip
            finally:
                browser.close()


if __name__ == "__main__":
    main()
