"""Two clients on one server: one drives the ego (and ticks the world), one only watches.

    python examples/two_clients.py --frames 60

The watcher runs in a thread of its own here; it could as well be another process or
another machine's program (with a token). It subscribes to the actors only and reports
the ego's speed as the driver accelerates and brakes.
"""

from __future__ import annotations

import argparse
import threading

import numpy as np

from roadsim.server import Client, Server


def watch(endpoint: str, frames: int, ready: threading.Event, seen: list[tuple[int, float]]) -> None:
    with Client(endpoint, name="watcher") as watcher:
        watcher.subscribe(actors=True)
        ready.set()
        for snap in watcher.snapshots(limit=frames, timeout=10.0):
            assert snap.actors is not None
            k = int(np.searchsorted(snap.actors.id, snap.ego_id))
            seen.append((snap.frame, float(snap.actors.speed[k])))


def drive(endpoint: str, frames: int) -> list[tuple[int, float]]:
    seen: list[tuple[int, float]] = []
    ready = threading.Event()
    watcher = threading.Thread(target=watch, args=(endpoint, frames, ready, seen))
    watcher.start()
    ready.wait(10.0)
    with Client(endpoint, name="driver") as driver:
        driver.set_mode("sync")
        for frame in range(frames):
            if frame < frames // 2:
                driver.control(throttle=0.5)
            else:
                driver.control(brake=0.3)
            driver.tick()
    watcher.join(30.0)
    return seen


def main(argv: list[str] | None = None) -> list[tuple[int, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", help="a running server (default: start one on town)")
    parser.add_argument("--frames", type=int, default=60)
    args = parser.parse_args(argv)
    if args.endpoint is not None:
        seen = drive(args.endpoint, args.frames)
    else:
        with Server("town", port=0) as server:
            seen = drive(server.endpoint, args.frames)
    for frame, speed in seen[:: max(1, len(seen) // 6)]:
        print(f"watcher: frame {frame:4d}  ego speed {speed:5.2f} m/s")
    return seen


if __name__ == "__main__":
    main()
