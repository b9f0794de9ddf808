"""Reading the corpus' independent reference geometry (gzip'd CSV, see its README)."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import numpy as np
import numpy.typing as npt

from tests.conftest import CORPUS


def reference_file(name: str, kind: str = "") -> Path:
    suffix = f".{kind}.csv.gz" if kind else ".csv.gz"
    return CORPUS / "reference" / f"{name}{suffix}"


def read_reference(name: str, kind: str = "") -> dict[str, npt.NDArray[np.generic]]:
    """Columns of a reference CSV as arrays (numbers as float64, the rest as str).

    Returns an empty dict when the reference has no file or no rows.
    """
    path = reference_file(name, kind)
    if not path.exists():
        return {}
    with gzip.open(path, "rt", newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        return {}
    header, body = rows[0], rows[1:]
    out: dict[str, npt.NDArray[np.generic]] = {}
    for i, col in enumerate(header):
        values = [r[i] for r in body]
        try:
            out[col] = np.array([float(v) for v in values], dtype=np.float64)
        except ValueError:
            out[col] = np.array(values, dtype=object)
    # ids are text even when they look numeric
    for col in ("road_id", "from_road", "to_road", "signal_id", "junction"):
        if col in out:
            out[col] = np.array([r[header.index(col)] for r in body], dtype=object)
    return out
