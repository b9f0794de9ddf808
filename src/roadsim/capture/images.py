"""`ImageFiles`: a sink that writes each camera shot of each snapshot to files.

Per camera and snapshot, in ``DIR/CAMERA/``, named by the frame (``000120.color.png``):

| file | what |
|---|---|
| ``.color.png`` | the tone-mapped colour preview, 8-bit sRGB |
| ``.hdr.npy`` | the linear radiance, (H, W, 3) float32 |
| ``.depth.npy`` | distance along the optical axis, (H, W) float32 metres (+inf: nothing hit) |
| ``.surface.png`` | surface class ids (`roadsim.road.surface_classes`), 8-bit grey |
| ``.instance.npy`` | actor ids, (H, W) int32 (-1: none) |

``DIR/index.csv`` lists every shot: frame, time, camera, sensor id, size, the camera's
pose (position and quaternion x, y, z, w in the world frame) and the files (relative to
DIR). The HDR and depth images are NumPy files: EXR would need a library with native
parts that is not always at hand, and ``numpy.load`` reads these anywhere.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from roadsim.capture.errors import RecordingError
from roadsim.capture.messages import quaternion
from roadsim.capture.snapshot import CaptureInfo, Sample, Snapshot

__all__ = ["IMAGE_KINDS", "INDEX_COLUMNS", "ImageFiles"]

#: What can be written per shot, and the file suffix of each.
IMAGE_KINDS: dict[str, str] = {
    "color": ".color.png",
    "hdr": ".hdr.npy",
    "depth": ".depth.npy",
    "surface": ".surface.png",
    "instance": ".instance.npy",
}

#: The columns of ``index.csv``.
INDEX_COLUMNS = (
    "frame", "time", "camera", "sensor_id", "width", "height",
    "x", "y", "z", "qx", "qy", "qz", "qw", *IMAGE_KINDS,
)  # fmt: skip


class ImageFiles:
    """Writes camera images to files (see the module docstring); other samples are left out.

    Args:
        folder: Where to write (made if missing).
        kinds: Which images to write (default: all of `IMAGE_KINDS`).
        exposure: The exposure of the colour previews.

    Attributes:
        shots: Camera shots written so far.
    """

    def __init__(
        self, folder: str | Path, *, kinds: Sequence[str] | None = None, exposure: float = 1.0
    ) -> None:
        self.folder = Path(folder)
        self.kinds = tuple(IMAGE_KINDS if kinds is None else kinds)
        unknown = [k for k in self.kinds if k not in IMAGE_KINDS]
        if unknown:
            raise RecordingError(
                f"image kinds: unknown {', '.join(map(repr, unknown))} "
                f"(expected some of {', '.join(IMAGE_KINDS)})"
            )
        self.exposure = exposure
        self.shots = 0
        self._index: IO[str] | None = None
        self._csv: Any = None

    def open(self, info: CaptureInfo) -> None:
        """Makes the folder and starts ``index.csv``.

        Raises:
            RecordingError: If the folder cannot be made.
        """
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._index = (self.folder / "index.csv").open("w", newline="", encoding="utf-8")
        except OSError as exc:
            raise RecordingError(f"{self.folder}: cannot write images there ({exc.strerror})") from None
        self._csv = csv.writer(self._index)
        self._csv.writerow(INDEX_COLUMNS)
        self.shots = 0

    def write(self, snapshot: Snapshot) -> None:
        for sample in snapshot.samples.values():
            if sample.type == "camera":
                self._write_shot(sample)
        if self._index is not None:
            self._index.flush()

    def _write_shot(self, sample: Sample) -> None:
        from PIL import Image

        image = sample.reading
        folder = self.folder / sample.name
        folder.mkdir(exist_ok=True)
        stem = f"{sample.frame:06d}"
        files: dict[str, str] = {}
        for kind in self.kinds:
            path = folder / f"{stem}{IMAGE_KINDS[kind]}"
            if kind == "color":
                Image.fromarray(np.asarray(image.preview(self.exposure), dtype=np.uint8)).save(path)
            elif kind == "surface":
                Image.fromarray(np.asarray(image.surface_ids, dtype=np.uint8)).save(path)
            else:
                array = {"hdr": image.color, "depth": image.depth, "instance": image.actor_ids}[kind]
                np.save(path, array, allow_pickle=False)
            files[kind] = str(path.relative_to(self.folder))
        height, width = np.shape(image.depth)[:2]
        qx, qy, qz, qw = quaternion(sample.pose.rotation)
        x, y, z = (float(v) for v in sample.pose.position)
        row = [
            sample.frame, repr(sample.time), sample.name, sample.sensor_id, width, height,
            repr(x), repr(y), repr(z), repr(qx), repr(qy), repr(qz), repr(qw),
            *(files.get(kind, "") for kind in IMAGE_KINDS),
        ]  # fmt: skip
        self._csv.writerow(row)
        self.shots += 1

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None
