"""Record a lidar sequence: every sweep of the ego's roof lidar into one .npz file.

    python examples/record_lidar.py --frames 50 --out sweeps.npz

Each sweep's points (sensor frame, float32), their ranges and the sensor's pose in the
world are kept under keys named by frame (``xyz_000012``, ``range_000012``,
``position_000012``, ``rotation_000012``); the autopilot drives the ego.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from roadsim.server import Client, Server


def record(client: Client, frames: int, out: Path) -> int:
    client.set_mode("sync")
    client.sensor("lidar").activate()
    client.subscribe(sensors=["lidar"], actors=False)
    arrays: dict[str, np.ndarray] = {}
    client.tick(frames)
    for snap in client.snapshots(limit=frames, timeout=10.0):
        sweep = snap.samples["lidar"]
        key = f"{snap.frame:06d}"
        arrays[f"xyz_{key}"] = np.array(sweep.data["xyz"])
        arrays[f"range_{key}"] = np.array(sweep.data["range"])
        arrays[f"position_{key}"] = sweep.position
        arrays[f"rotation_{key}"] = sweep.rotation
    np.savez_compressed(out, **arrays)
    return len(arrays) // 4


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", help="a running server (default: start one on town)")
    parser.add_argument("--frames", type=int, default=50)
    parser.add_argument("--out", type=Path, default=Path("sweeps.npz"))
    args = parser.parse_args(argv)
    if args.endpoint is not None:
        with Client(args.endpoint) as client:
            sweeps = record(client, args.frames, args.out)
    else:
        with Server("town", port=0) as server, Client(server.endpoint) as client:
            sweeps = record(client, args.frames, args.out)
    print(f"recorded {sweeps} sweeps into {args.out}")
    return sweeps


if __name__ == "__main__":
    main()
