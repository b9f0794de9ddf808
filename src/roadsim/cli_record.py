"""``roadsim replay``, ``roadsim export`` and ``roadsim info``: recordings read back.

A recording that is missing, no MCAP file, not roadsim's, or cut short by a killed run
is an error (exit 2) that says so; ``--partial`` reads a cut-short one as far as it goes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

SubParsers = Any


def _recording_arguments(parser: argparse.ArgumentParser) -> None:
    """The recording a command reads, and ``--partial``."""
    parser.add_argument("recording", type=Path, help="an MCAP file written by roadsim run --record")
    parser.add_argument(
        "--partial",
        action="store_true",
        help="read a recording a killed run cut short, as far as it goes",
    )


def register_recording(groups: SubParsers) -> None:
    """``roadsim replay|export|info RECORDING``."""
    replay = groups.add_parser(
        "replay",
        help="play a recording into sinks",
        description="Play a recording's snapshots, without simulating: print one line per "
        "snapshot, or write them into sinks (--images, --record).",
    )
    _recording_arguments(replay)
    replay.add_argument("--images", type=Path, metavar="DIR", help="write camera images into DIR")
    replay.add_argument("--record", type=Path, metavar="FILE", help="write another recording")
    replay.add_argument("--force", action="store_true", help="overwrite --record's file")
    replay.set_defaults(handler=_replay)

    export = groups.add_parser(
        "export",
        help="write a recording's trajectories as CSV",
        description="Write a recording's actor trajectories (actors.csv) and driver views "
        "(driver_NAME.csv) as CSV files.",
    )
    _recording_arguments(export)
    export.add_argument("--csv", type=Path, metavar="DIR", required=True, help="folder to write")
    export.set_defaults(handler=_export)

    info = groups.add_parser(
        "info",
        help="summarise a recording",
        description="Summarise a recording: scenario, duration, snapshots, sensors, "
        "channels and schemas, metadata.",
    )
    _recording_arguments(info)
    info.add_argument("--json", action="store_true", help="print the summary as JSON")
    info.set_defaults(handler=_info)


def _replay(args: argparse.Namespace) -> int:
    from roadsim.capture import Recorder, Sink
    from roadsim.capture.images import ImageFiles
    from roadsim.capture.reader import read_recording

    recording = read_recording(args.recording, partial=args.partial)
    sinks: list[Sink] = []
    if args.images is not None:
        sinks.append(ImageFiles(args.images))
    if args.record is not None:
        if args.record.resolve() == args.recording.resolve():
            from roadsim.cli import _UsageError

            raise _UsageError("--record: give another file than the recording replayed")
        sinks.append(Recorder(args.record, overwrite=args.force))
    info = recording.info
    opened: list[Sink] = []
    count = 0
    try:
        for sink in sinks:
            sink.open(info)
            opened.append(sink)
        for snapshot in recording.snapshots():
            count += 1
            if not sinks:
                print(_line(snapshot))
            for sink in sinks:
                sink.write(snapshot)
    finally:
        for sink in opened:
            sink.close()
    if sinks:
        where = ", ".join(str(p) for p in (args.images, args.record) if p is not None)
        print(f"replayed {count} snapshots into {where}")
    return 0


def _line(snapshot: Any) -> str:
    """One line per snapshot: frame, time, actors, the ego, and each sample."""
    actors = snapshot.actors
    parts = [f"frame {snapshot.frame:6d}", f"t {snapshot.time:8.2f} s", f"actors {len(actors):5d}"]
    hits = (actors.id == snapshot.ego_id).nonzero()[0]
    if hits.size:
        k = int(hits[0])
        parts.append(
            f"ego ({actors.x[k]:.1f}, {actors.y[k]:.1f}) {actors.speed[k]:.1f} m/s"
        )
    for name, sample in snapshot.samples.items():
        parts.append(f"{name}: {_describe(sample)}")
    return "  ".join(parts)


def _describe(sample: Any) -> str:
    r = sample.reading
    if sample.type == "driver":
        front = r.surrounding_objects.object_front
        gap = f", gap ahead {front.relative_longitudinal_distance:.1f} m" if front.exist else ""
        return f"driver view of {r.id}{gap}"
    if sample.type == "lidar":
        return f"lidar, {len(r)} points"
    if sample.type == "raytracer":
        return f"ray tracer, {int(r.is_valid_hit.sum())}/{r.valid.shape[0]} rays hit"
    if sample.type == "camera":
        h, w = r.depth.shape[:2]
        return f"camera {w}x{h}"
    return str(sample.type)


def _export(args: argparse.Namespace) -> int:
    from roadsim.capture.export import export_csv
    from roadsim.capture.reader import read_recording

    recording = read_recording(args.recording, partial=args.partial)
    summary = export_csv(recording.snapshots(), recording.info, args.csv)
    for path, rows in summary.rows.items():
        print(f"wrote {path} ({rows} rows)")
    return 0


def _info(args: argparse.Namespace) -> int:
    from roadsim.capture.reader import read_recording

    summary = read_recording(args.recording, partial=args.partial).summary()
    print(json.dumps(summary.to_dict(), indent=2) if args.json else summary.to_text())
    return 0
