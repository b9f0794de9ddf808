"""Which rays may reach a few boxes, found without casting them.

Casting a ray against a mesh of a few actors' boxes costs about as much in embreex
whether it hits or not (its cost per ray, some 60 ns). Where the caller knows which rays
may reach an actor (a lidar's first segments, `roadsim.sensors.lidar.Lidar`), only those
are cast; a reflected ray's direction says nothing of where the actors are, so
`roadsim.sensors.scene.Scene.cast` asks an `ActorGrid` instead: a conservative test
that passes every ray which may hit one of the boxes within its length, and few others.

The boxes' footprints (the x-y bounds of each triangle, widened by `MARGIN_M`) mark the
cells of a grid of `CELL_M` squares, kept as a summed-area table, so that the number of
marked cells in any rectangle of cells takes four look-ups. A ray is cut to the part of
it that lies between the lowest and the highest point of the boxes, and that part, in
pieces of `PIECE_CELLS` cells' length, tested against the table by its pieces'
bounding rectangles: a ray none of whose pieces touches a marked cell cannot reach a box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from roadsim._jit import njit, njit_leaf
from roadsim._types import BoolArray, Float32Array, Int32Array, IntArray

__all__ = ["CELL_M", "MARGIN_M", "PIECE_CELLS", "ActorGrid"]

#: Side of a grid cell (m).
CELL_M = 2.0
#: How far each box's bounds are widened, against rounding in the float32 casts (m).
MARGIN_M = 0.05
#: Length of a piece of ray tested by its bounding rectangle, in cells (along x-y).
PIECE_CELLS = 4


@dataclass(frozen=True, slots=True, eq=False)
class ActorGrid:
    """Where a few boxes stand (see the module docstring), in the frame of the rays.

    Attributes:
        x0, y0: The corner of cell (0, 0) (m).
        z_lo, z_hi: The lowest and the highest point of the boxes, widened (m).
        table: (nx + 1, ny + 1) int32 marked cells among cells [0, i) x [0, j).
    """

    x0: float
    y0: float
    z_lo: float
    z_hi: float
    table: Int32Array

    @classmethod
    def of(cls, vertices: Float32Array, triangles: Int32Array) -> ActorGrid:
        """The grid of a mesh: (V, 3) vertices (m) and (T, 3) triangles."""
        if not len(triangles):
            return cls(0.0, 0.0, 0.0, 0.0, np.zeros((1, 1), dtype=np.int32))
        corners = np.asarray(vertices, dtype=np.float64)[triangles]
        lo, hi = corners.min(axis=1) - MARGIN_M, corners.max(axis=1) + MARGIN_M
        x0, y0 = float(lo[:, 0].min()), float(lo[:, 1].min())
        i0, i1 = ((lo[:, 0] - x0) // CELL_M).astype(np.int64), ((hi[:, 0] - x0) // CELL_M).astype(np.int64)
        j0, j1 = ((lo[:, 1] - y0) // CELL_M).astype(np.int64), ((hi[:, 1] - y0) // CELL_M).astype(np.int64)
        nx, ny = int(i1.max()) + 1, int(j1.max()) + 1
        # Each triangle's rectangle of cells added as four corners of a difference table.
        cover = np.zeros((nx + 1, ny + 1), dtype=np.int64)
        for i, j, sign in ((i0, j0, 1), (i1 + 1, j0, -1), (i0, j1 + 1, -1), (i1 + 1, j1 + 1, 1)):
            np.add.at(cover, (i, j), sign)
        marked = cover.cumsum(axis=0).cumsum(axis=1)[:nx, :ny] > 0
        table = np.zeros((nx + 1, ny + 1), dtype=np.int32)
        table[1:, 1:] = marked.cumsum(axis=0).cumsum(axis=1)
        return cls(x0, y0, float(lo[:, 2].min()), float(hi[:, 2].max()), table)

    def rays_near(
        self, origins: Float32Array, directions: Float32Array, max_t: Float32Array
    ) -> IntArray:
        """The rays (ascending) that may hit a box at a distance below ``max_t``: (N, 3)
        origins, (N, 3) unit directions and (N,) lengths, in the grid's frame."""
        if self.table[-1, -1] == 0:
            return np.zeros(0, dtype=np.int64)
        mask = np.empty(len(directions), dtype=bool)
        _mark_near(
            np.ascontiguousarray(origins), np.ascontiguousarray(directions),
            np.ascontiguousarray(max_t), self.x0, self.y0, self.z_lo, self.z_hi,
            self.table, CELL_M, PIECE_CELLS * CELL_M, mask,
        )  # fmt: skip
        return np.flatnonzero(mask)


@njit_leaf
def _clip(ta: float, tb: float, p: float, r: float, lo: float, hi: float) -> tuple[float, float]:
    """[ta, tb] cut to where ``p + t r`` lies within [lo, hi] (empty: ta > tb)."""
    if r != 0.0:
        t1, t2 = (lo - p) / r, (hi - p) / r
        return max(ta, min(t1, t2)), min(tb, max(t1, t2))
    if p < lo or p > hi:
        return 1.0, -1.0
    return ta, tb


@njit
def _mark_near(
    o: Float32Array,
    d: Float32Array,
    max_t: Float32Array,
    x0: float,
    y0: float,
    z_lo: float,
    z_hi: float,
    table: Int32Array,
    cell: float,
    piece: float,
    mask: BoolArray,
) -> None:
    """Marks in ``mask`` the rays that may reach a marked cell between the heights
    ``z_lo`` and ``z_hi`` within ``max_t`` (`ActorGrid.rays_near`)."""
    nx, ny = table.shape[0] - 1, table.shape[1] - 1
    x1, y1 = x0 + nx * cell, y0 + ny * cell
    for i in range(d.shape[0]):
        mask[i] = False
        # The part [ta, tb] of the ray between the heights and within the grid (the
        # heights first: most rays that miss the boxes leave them soon).
        ta, tb = _clip(0.0, float(max_t[i]), float(o[i, 2]), float(d[i, 2]), z_lo, z_hi)
        ta, tb = _clip(ta, tb, float(o[i, 0]), float(d[i, 0]), x0, x1)
        ta, tb = _clip(ta, tb, float(o[i, 1]), float(d[i, 1]), y0, y1)
        if not ta <= tb:  # (NaN too)
            continue
        px, py = float(o[i, 0]), float(o[i, 1])
        rx, ry = float(d[i, 0]), float(d[i, 1])
        flat = math.sqrt(rx * rx + ry * ry)
        step = piece / flat if flat > 0.0 else math.inf
        s = ta
        while True:
            e = min(s + step, tb)
            xa, xb = px + s * rx, px + e * rx
            ya, yb = py + s * ry, py + e * ry
            # The piece's rectangle of cells, within the grid (it lies in it but for
            # rounding).
            ia = min(max(math.floor((min(xa, xb) - x0) / cell), 0), nx - 1)
            ib = min(max(math.floor((max(xa, xb) - x0) / cell), 0), nx - 1) + 1
            ja = min(max(math.floor((min(ya, yb) - y0) / cell), 0), ny - 1)
            jb = min(max(math.floor((max(ya, yb) - y0) / cell), 0), ny - 1) + 1
            if table[ib, jb] - table[ia, jb] - table[ib, ja] + table[ia, ja] > 0:
                mask[i] = True
                break
            if e >= tb:
                break
            s = e
