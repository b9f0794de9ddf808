"""`export_csv`: a recording's actor trajectories and driver views as CSV files.

- ``actors.csv``: one row per actor per snapshot: frame, time, then every
  `roadsim.capture.snapshot.ActorStates` field (``kind``, ``model`` and ``control`` by
  name); floats are written exactly (Python's shortest repr).
- ``driver_NAME.csv``: one row per snapshot of each driver sensor: frame, time, then the
  view's fields flattened with dots in openPASS' camelCase names
  (``ownVehicleStates.absoluteVelocity``); a list (signs, lights, markings) is one cell
  of JSON.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from roadsim.capture.errors import RecordingError
from roadsim.capture.schemas import driver_view_json
from roadsim.capture.snapshot import ACTOR_FIELDS, CaptureInfo, Snapshot

__all__ = ["ExportSummary", "export_csv"]

_NAMED = {"kind": "kind_names", "model": "model_names", "control": "control_names"}


class ExportSummary:
    """What `export_csv` wrote: the files and their data rows."""

    def __init__(self) -> None:
        self.rows: dict[Path, int] = {}

    def __repr__(self) -> str:
        return f"ExportSummary({self.rows})"


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, f"{name}."))
        elif isinstance(value, list):
            out[name] = json.dumps(value, separators=(",", ":"))
        else:
            out[name] = value
    return out


def export_csv(snapshots: Iterable[Snapshot], info: CaptureInfo, folder: str | Path) -> ExportSummary:
    """Writes ``actors.csv`` and one ``driver_NAME.csv`` per driver sensor into ``folder``
    (made if missing; files there are replaced).

    Raises:
        RecordingError: If the folder cannot be made or written.
    """
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordingError(f"{out}: cannot make the folder ({exc.strerror})") from None
    summary = ExportSummary()
    names = {f: getattr(info, attr) for f, attr in _NAMED.items()}
    files: dict[str, IO[str]] = {}
    writers: dict[str, Any] = {}

    def writer(key: str, path: Path, header: list[str]) -> Any:
        if key not in writers:
            files[key] = path.open("w", newline="", encoding="utf-8")
            writers[key] = csv.writer(files[key])
            writers[key].writerow(header)
            summary.rows[path] = 0
        return writers[key]

    try:
        actors_path = out / "actors.csv"
        actor_csv = writer("actors", actors_path, ["frame", "time", *ACTOR_FIELDS])
        for snap in snapshots:
            columns = []
            for name in ACTOR_FIELDS:
                values = getattr(snap.actors, name).tolist()
                table = names.get(name)
                if table:
                    values = [table[v] if 0 <= v < len(table) else v for v in values]
                elif name == "collided":
                    values = [int(v) for v in values]
                columns.append(values)
            n = len(snap.actors)
            actor_csv.writerows(zip([snap.frame] * n, [repr(snap.time)] * n, *columns, strict=True))
            summary.rows[actors_path] += n
            for sample in snap.samples.values():
                if sample.type != "driver":
                    continue
                flat = _flatten(driver_view_json(sample.reading))
                path = out / f"driver_{sample.name}.csv"
                w = writer(f"driver/{sample.name}", path, ["frame", "time", *flat])
                w.writerow([snap.frame, repr(snap.time), *flat.values()])
                summary.rows[path] += 1
    except OSError as exc:
        raise RecordingError(f"{out}: cannot write ({exc.strerror})") from None
    finally:
        for f in files.values():
            f.close()
    return summary
