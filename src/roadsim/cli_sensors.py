"""``roadsim sensors``: pictures of what a scenario's scene sensors see."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from roadsim.errors import ArgumentError

SubParsers = Any


def register_sensors(groups: SubParsers) -> None:
    """``roadsim sensors snapshot SCENARIO [--at SECONDS] -o DIR``."""
    group = groups.add_parser(
        "sensors", help="scene sensors", description="Look at a scenario's scene sensors."
    )
    cmds = group.add_subparsers(dest="sensors_command", metavar="SUBCOMMAND", required=True)
    snap = cmds.add_parser(
        "snapshot",
        help="pictures of every camera, lidar and ray tracer at one moment",
        description="Run a scenario to a moment, switch on its cameras, lidars and ray "
        "tracers (inactive ones too) and write what they see there: for each camera its "
        "preview (NAME_preview.png), its depth (NAME_depth.png colour-mapped, "
        "NAME_depth.npy in metres) and its surface classes (NAME_segmentation.png); for "
        "each lidar and ray tracer its points from above (NAME_top.png) and in "
        "perspective (NAME_perspective.png), coloured by surface class.",
    )
    snap.add_argument("scenario", help="a scenario file or the name of a built-in scenario")
    snap.add_argument(
        "--at",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="simulated time of the snapshot (default: 0, the first frame)",
    )
    snap.add_argument(
        "-o", "--output", type=Path, required=True, metavar="DIR", help="folder to write into"
    )
    snap.set_defaults(handler=_snapshot)


def _snapshot(args: argparse.Namespace) -> int:
    from roadsim.sensors.camera import CameraImage
    from roadsim.sensors.lidar import PointCloud
    from roadsim.sensors.pictures import save_camera, save_rays
    from roadsim.sensors.raytracer import RayTracerReading
    from roadsim.sim import Simulation

    at = args.at
    if not (math.isfinite(at) and at >= 0.0):
        raise ArgumentError(f"--at: expected a time >= 0 (s), got {at:g}")
    if args.output.exists() and not args.output.is_dir():
        raise ArgumentError(f"-o: {args.output} is a file, not a folder")
    with Simulation(args.scenario) as sim:
        names = sim.scene_sensors
        if not names:
            raise ArgumentError(
                f"{args.scenario}: the scenario has no cameras, lidars or ray tracers "
                "(type: camera|lidar|raytracer under sensors:)"
            )
        frames = round(at / sim.dt)
        # The sensors stay off on the way: they would only slow the run down.
        for name in names:
            sim.sensor(name).active = False
        for _ in range(frames):
            sim.step()
        sim.sample_sensors()
        args.output.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        for name in names:
            reading = sim.readings.get(name)
            if reading is None:
                print(f"{name}: no reading (its vehicle is not on the map at {sim.time:g} s)")
            elif isinstance(reading, CameraImage):
                written += save_camera(reading, args.output)
            elif isinstance(reading, PointCloud | RayTracerReading):
                written += save_rays(reading, args.output)
        for name, description in sim.camera_renderers.items():
            print(f"cameras: {name} renderer, {description}")
    print(f"frame {sim.frame} ({sim.time:g} s): wrote {len(written)} files to {args.output}")
    for path in written:
        print(f"  {path.name}")
    return 0
