"""Drive the ego with a simple lane-keeping controller while saving camera images.

    python examples/drive_and_save_images.py                     # its own server
    python examples/drive_and_save_images.py --endpoint tcp://127.0.0.1:2000   # roadsim serve town

The controller reads the driver sensor's view of the ego (its offset from the lane centre,
its heading against the lane, the lane's curvature) and asks for a curvature and an
acceleration; the world waits for each tick (sync mode). Every few frames the camera's
tone-mapped image is saved as a PNG.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image

from roadsim.sensors.camera_model import tone_map
from roadsim.server import Client, Server


def lane_keeping(view: dict, target_speed: float = 8.0) -> dict[str, float]:
    """A curvature (1/m) and an acceleration (m/s^2) that hold the lane centre and a speed."""
    own = view["ownVehicleStates"]
    lane = view["geometryInformation"]["laneEgo"]
    curvature = lane["curvature"] - 0.08 * own["lateralPosition"] - 0.6 * own["heading"]
    accel = float(np.clip(0.8 * (target_speed - own["absoluteVelocity"]), -4.0, 2.0))
    return {"curvature": float(curvature), "accel": accel}


def drive(client: Client, frames: int, out: Path, every: int) -> int:
    out.mkdir(parents=True, exist_ok=True)
    ego = client.world["ego_id"]
    client.set_mode("sync")
    client.sensor("camera").activate()
    client.subscribe(sensors=["camera"], actors=False)
    saved = 0
    for _ in range(frames):
        client.control("ego", **lane_keeping(client.driver_views([ego])[0]))
        client.tick()
        snap = client.next_snapshot(timeout=10.0)
        if snap is None:
            raise RuntimeError("no snapshot came")
        if snap.frame % every == 0 and "camera" in snap.samples:
            image = tone_map(snap.samples["camera"].data["color"])
            Image.fromarray(image).save(out / f"{snap.frame:06d}.png")
            saved += 1
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", help="a running server (default: start one on town)")
    parser.add_argument("--frames", type=int, default=100)
    parser.add_argument("--every", type=int, default=10, help="save every n-th frame")
    parser.add_argument("--out", type=Path, default=Path("camera_frames"))
    args = parser.parse_args(argv)
    if args.endpoint is not None:
        with Client(args.endpoint) as client:
            saved = drive(client, args.frames, args.out, args.every)
    else:
        with Server("town", port=0) as server, Client(server.endpoint) as client:
            saved = drive(client, args.frames, args.out, args.every)
    print(f"saved {saved} images into {args.out}")
    return saved


if __name__ == "__main__":
    main()
