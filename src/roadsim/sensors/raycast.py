"""Casting rays against triangle meshes: our small interface, and Embree behind it.

Everything above this module speaks `cast(origins, directions, max_t) -> Hits`
(`roadsim.sensors.scene.Scene.cast`); what traces the rays is a `Backend` picked by name
from `BACKENDS`, so that another (a GPU tracer, a pure numpy one for a platform without
Embree's wheel) can be added beside it without touching the sensors.

A backend gets triangles in a frame local to the scene (the world shifted by the scene's
origin) in float32, which is what Embree traces in: 1 mm resolution holds within about
65 km of that origin, where world coordinates of a georeferenced map (x = 500,000 m)
would leave 3 cm steps.

embreex (Embree 4) traces one ray at a time in C, and releases the GIL while it does (a
pure-Python thread keeps running beside a cast); `RayPool` splits large batches over
threads (`MIN_RAYS_PER_THREAD`).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np

from roadsim._types import BoolArray, Float32Array, FloatArray, Int32Array, IntArray, UInt8Array

__all__ = [
    "BACKENDS",
    "MIN_RAYS_PER_THREAD",
    "Backend",
    "EmbreeBackend",
    "Hits",
    "RawHits",
    "RayPool",
    "TracedMesh",
]


#: Fewest rays per thread for a batch to be split over threads: below it, one thread
#: casts them all. Measured with ``benchmarks/bench_rays.py --threads`` on the 2-core
#: machine with its other core busy (``docs/performance.md``): two threads cost 33% more
#: at 1,024 rays, 5% from 16,384 to 65,536, nothing at 131,072; where the other core is
#: free they are what makes a 64 x 2048 lidar cast in parallel.
MIN_RAYS_PER_THREAD = 32_768


@dataclass(frozen=True, slots=True)
class RawHits:
    """What a backend returns for N rays: the nearest triangle each ray hit.

    Attributes:
        triangle: (N,) int32 index of the triangle hit, -1 for none.
        t: (N,) float32 distance along the (unit) direction, ``max_t`` for none.
        normal: (N, 3) float32 geometric normal of the triangle hit, not normalised,
            in the winding's direction (any for none).
    """

    triangle: Int32Array
    t: Float32Array
    normal: Float32Array


class TracedMesh(Protocol):
    """A triangle mesh built for tracing; thread-safe to trace from several threads."""

    def intersect(
        self, origins: Float32Array, directions: Float32Array, max_t: Float32Array
    ) -> RawHits:
        """The nearest hit of each ray within ``max_t`` (local frame, unit directions).
        ``origins`` may be one row broadcast to N (stride 0), as a lidar's are."""
        ...


class Backend(Protocol):
    """Builds `TracedMesh`es."""

    def build(self, vertices: Float32Array, triangles: Int32Array) -> TracedMesh:
        """A mesh of (V, 3) float32 vertices and (T, 3) int32 triangles (local frame)."""
        ...


class _EmbreeMesh:
    def __init__(self, scene: Any) -> None:
        self._scene = scene

    def intersect(
        self, origins: Float32Array, directions: Float32Array, max_t: Float32Array
    ) -> RawHits:
        out = self._scene.run(origins, directions, dists=max_t, output=1)
        return RawHits(out["primID"], out["tfar"], out["Ng"])


class _EmptyMesh:
    """A mesh without triangles: every ray misses (Embree would refuse an empty one)."""

    def intersect(
        self, origins: Float32Array, directions: Float32Array, max_t: Float32Array
    ) -> RawHits:
        n = len(origins)
        return RawHits(
            np.full(n, -1, dtype=np.int32), max_t.copy(), np.zeros((n, 3), dtype=np.float32)
        )


class EmbreeBackend:
    """Embree 4 through embreex. One Embree device serves every mesh it builds."""

    def __init__(self) -> None:
        try:
            from embreex import rtcore as rtc  # type: ignore[import-untyped]
        except ImportError as exc:  # pragma: no cover - embreex is a dependency
            raise ImportError(
                "ray casting needs embreex (pip install embreex), Embree's Python binding"
            ) from exc
        self._device = rtc.EmbreeDevice()

    def build(self, vertices: Float32Array, triangles: Int32Array) -> TracedMesh:
        if len(triangles) == 0:
            return _EmptyMesh()
        from embreex import mesh_construction, rtcore_scene

        scene = rtcore_scene.EmbreeScene(device=self._device)
        mesh_construction.TriangleMesh(
            scene,
            np.ascontiguousarray(vertices, dtype=np.float32),
            np.ascontiguousarray(triangles, dtype=np.int32),
        )
        return _EmbreeMesh(scene)


#: Ray-casting backends by name.
BACKENDS: Mapping[str, Callable[[], Backend]] = MappingProxyType({"embree": EmbreeBackend})


@dataclass(frozen=True, slots=True)
class Hits:
    """The nearest hit of each of N rays.

    Attributes:
        distance: (N,) float64 distance from the origin to the hit (m); NaN for none.
        normal: (N, 3) float64 unit normal of the surface hit, turned to face the ray
            (``normal @ direction <= 0``); NaN for none.
        surface: (N,) uint8 surface class (`roadsim.road.surface_classes`); 0 for none.
        actor: (N,) int64 id of the actor hit; -1 for none or a surface of no actor.
        lane: (N,) int64 uid of the lane whose surface (or road mark) was hit; -1 for
            none or a surface of no lane.
        valid: (N,) bool: the ray hit something within its ``max_t``.
        look: (N,) uint8 look of the surface hit (its albedo's index in
            `roadsim.road.surface_classes.LOOK_ALBEDO`: the class's, or a road mark's
            paint); 0 for none.
    """

    distance: FloatArray
    normal: FloatArray
    surface: UInt8Array
    actor: IntArray
    lane: IntArray
    valid: BoolArray
    look: UInt8Array

    @classmethod
    def none(cls, n: int) -> Hits:
        """N rays that hit nothing."""
        return cls(
            np.full(n, np.nan),
            np.full((n, 3), np.nan),
            np.zeros(n, dtype=np.uint8),
            np.full(n, -1, dtype=np.int64),
            np.full(n, -1, dtype=np.int64),
            np.zeros(n, dtype=bool),
            np.zeros(n, dtype=np.uint8),
        )


class RayPool:
    """Splits batches of rays over threads, where a batch is large enough to pay for it.

    Args:
        threads: Most threads to use (default: the CPUs this process may run on).
        min_rays_per_thread: Fewest rays each thread must get (`MIN_RAYS_PER_THREAD`).
    """

    def __init__(
        self, threads: int | None = None, *, min_rays_per_thread: int = MIN_RAYS_PER_THREAD
    ) -> None:
        self.threads = max(1, threads if threads is not None else len(os.sched_getaffinity(0)))
        self.min_rays_per_thread = max(1, int(min_rays_per_thread))
        self._executor: ThreadPoolExecutor | None = None

    def chunks(self, n: int) -> int:
        """How many parts a batch of n rays is cast in."""
        return max(1, min(self.threads, n // self.min_rays_per_thread))

    def map(self, work: Callable[[int, int], None], n: int) -> None:
        """Calls ``work(start, stop)`` over [0, n) in `chunks` parts, in parallel where
        more than one; each part must write only its own rows."""
        parts = self.chunks(n)
        if parts == 1:
            work(0, n)
            return
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix="roadsim-rays")
        bounds = np.linspace(0, n, parts + 1).astype(np.int64)
        futures = [
            self._executor.submit(work, int(a), int(b))
            for a, b in itertools.pairwise(bounds)
        ]
        for f in futures:
            f.result()

    def close(self) -> None:
        """Stops the threads (a later `map` starts them again)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
