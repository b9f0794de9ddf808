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
    one `numpy.searchsorted`. An owner without records evaluates to ``default``.
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
        local = np.clip(self.s0, 0.0, span[owner] - 0.5) if flat else self.s0
        self.key: FloatArray = self.base[owner] + local if flat else np.zeros(0)
        self.default = default

    def record(self, owner: IntArray, s: FloatArray) -> IntArray:
        """Index of the record in force at ``s`` for each owner (-1 where it has none)."""
        key = self.base[owner] + np.maximum(s, 0.0)
        idx = np.searchsorted(self.key, key, side="right") - 1
        first = self.first[owner]
        idx = np.clip(idx, first, first + self.count[owner] - 1)
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
