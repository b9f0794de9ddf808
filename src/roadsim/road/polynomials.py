"""Many piecewise cubic functions of s, packed into flat arrays for vectorised evaluation.

OpenDRIVE describes elevation, superelevation, laneOffset, lane width and lane border as
sequences of cubic records ``a + b*ds + c*ds**2 + d*ds**3`` that each hold from their start
``s`` until the next record starts (OpenDRIVE 1.8, 8.4, 9.3, 9.5.3). `PiecewiseCubics`
stores such sequences for many owners (roads or lanes) and evaluates any mix of
(owner, s) pairs in one call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from roadsim._types import FloatArray, IntArray
from roadsim.road.model import Cubic


class PiecewiseCubics:
    """Piecewise cubic functions of s for ``n_owners`` owners.

    Each owner's records live in a disjoint window of one global axis: owner ``i``
    occupies ``[base[i], base[i] + span[i])``, so finding the record for any (owner, s) is
    one `numpy.searchsorted` (`RecordSearch`, which corrects its rounding). An owner without
    records evaluates to ``default``.
    """

    def __init__(
        self, records: Sequence[Sequence[Cubic]], spans: Sequence[float], default: float = 0.0
    ) -> None:
        n = len(records)
        span = np.maximum(np.asarray(spans, dtype=np.float64), 0.0) + 1.0
        self.base: FloatArray = np.concatenate(([0.0], np.cumsum(span)[:-1])) if n else np.zeros(0)
        counts = np.array([len(r) for r in records], dtype=np.int64)
        self.first: IntArray = (
            np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
            if n
            else np.zeros(0, np.int64)
        )
        self.count: IntArray = counts
        flat = [c for rec in records for c in rec]
        owner = np.repeat(np.arange(n, dtype=np.int64), counts)
        self.s0: FloatArray = np.array([c.s for c in flat], dtype=np.float64)
        self.coef: FloatArray = np.array(
            [(c.a, c.b, c.c, c.d) for c in flat], dtype=np.float64
        ).reshape(-1, 4)
        # Records of an owner never start before its window; a start beyond the span is
        # kept inside the window so the global axis stays sorted.
        start = np.clip(self.s0, 0.0, span[owner] - 0.5) if flat else self.s0
        self.search = RecordSearch(start, self.base, self.first, self.count)
        self.default = default

    def record(self, owner: IntArray, s: FloatArray) -> IntArray:
        """Index of the record in force at ``s`` for each owner (-1 where it has none)."""
        idx = self.search.find(owner, np.maximum(s, 0.0))
        return np.where(self.count[owner] > 0, idx, -1)

    def evaluate(self, owner: npt.ArrayLike, s: npt.ArrayLike, derivative: int = 0) -> FloatArray:
        """Value (or first/second derivative in s) at ``s`` for each owner.

        Args:
            owner: Owner indices, any shape.
            s: Positions in the owner's own s (metres), broadcast against ``owner``.
            derivative: 0 for the value, 1 for d/ds, 2 for d2/ds2.
        """
        o, sv = np.broadcast_arrays(
            np.asarray(owner, dtype=np.int64), np.asarray(s, dtype=np.float64)
        )
        shape = o.shape
        o, sv = o.ravel(), sv.ravel()
        out = np.full(o.shape, self.default if derivative == 0 else 0.0)
        if self.s0.size == 0 or o.size == 0:
            return out.reshape(shape)
        idx = self.record(o, sv)
        ok = idx >= 0
        i = idx[ok]
        ds = sv[ok] - self.s0[i]
        a, b, c, d = self.coef[i].T
        if derivative == 0:
            out[ok] = a + ds * (b + ds * (c + ds * d))
        elif derivative == 1:
            out[ok] = b + ds * (2.0 * c + ds * 3.0 * d)
        else:
            out[ok] = 2.0 * c + 6.0 * d * ds
        return out.reshape(shape)

    def has_records(self, owner: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        return np.asarray(self.count[np.asarray(owner, dtype=np.int64)] > 0)


class RecordSearch:
    """Finds, per (owner, s), the record in force: the owner's last record that starts at
    or before s (its first record where s lies before them all).

    Records are searched on one global axis, ``base[owner] + start``. Far into a big map
    that sum rounds away the last digits of s (``base`` is the summed length of the owners
    before), so an s just before a record's start can land on that record; where records
    do not join exactly (a 2 cm gap between geometries, a laneOffset step) that moved lane
    edges by decimetres. Each found record is therefore checked against its own start and
    the next record's, both exact, and corrected where s lies outside them: two compares
    per query, and a short loop over the rare queries that rounding moved.

    Args:
        start: Where each record starts in its owner's own s, shape (R,); owners'
            records consecutive, non-decreasing within an owner.
        base: Per owner, the start of its window on the global axis (windows disjoint and
            increasing), shape (n_owners,).
        first, count: Per owner, its first record and its number of records.
    """

    def __init__(self, start: FloatArray, base: FloatArray, first: IntArray, count: IntArray):
        owner = np.repeat(np.arange(count.size, dtype=np.int64), count)
        self.start = start
        self.key: FloatArray = base[owner] + start
        self.base, self.first, self.count = base, first, count
        # The interval each record is in force over: from its start (from -inf for an
        # owner's first record) to the next record's start (to +inf for its last).
        self.lower: FloatArray = start.copy()
        self.lower[(np.cumsum(count) - count)[count > 0]] = -np.inf
        self.upper: FloatArray = np.full(start.size, np.inf)
        same = owner[1:] == owner[:-1]
        self.upper[:-1][same] = start[1:][same]

    def find(self, owner: IntArray, s: FloatArray) -> IntArray:
        """Record indices for each (owner, s), shape (N,); ``first - 1`` for an owner
        without records.

        Args:
            owner: Owner of each query, shape (N,).
            s: Each query's position in its owner's own s, clamped as ``start`` was
                (so that a start clamped to a window matches), shape (N,).
        """
        lo = self.first[owner]
        hi = lo + self.count[owner] - 1
        found = np.searchsorted(self.key, self.base[owner] + s, side="right") - 1
        idx: IntArray = np.minimum(np.maximum(found, lo), hi)
        if self.key.size == 0:
            return idx
        j = np.maximum(idx, 0)  # idx is first - 1 (maybe -1) only for an owner without records
        moved = (s < self.lower[j]) | (s >= self.upper[j])
        if not moved.any():
            return idx
        rows = np.flatnonzero(moved & (hi >= lo))
        k, sv = idx[rows], s[rows]
        while rows.size:
            # Rounding moves a query by one record, or a few where records start within a
            # rounding step of each other; lower/upper hold the way (never both).
            k = k - (sv < self.lower[k]) + (sv >= self.upper[k])
            still = (sv < self.lower[k]) | (sv >= self.upper[k])
            idx[rows] = k
            rows, k, sv = rows[still], k[still], sv[still]
        return idx
