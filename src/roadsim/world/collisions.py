"""Which actors' footprints overlap: oriented rectangles in the ground plane.

Every actor is a rectangle centred at (x, y), ``length`` along its heading and ``width``
across it. `find_overlaps` returns each overlapping pair once, from one call of compiled
loops (`roadsim._jit.njit`, no fast-math, so the same bits on every run), on one thread
below 4,096 boxes and on all of them from there on:

- **Broad phase** (a uniform grid). Each box gets an axis-aligned bounding box (AABB)
  from upper bounds of ``|cos|`` and ``|sin|`` of its heading: Taylor sums, since the
  math library's sine and cosine would add 0.1 ms at N=10,000. The plane is cut into
  cells wider and taller than any two AABBs together, so two AABBs only meet if their
  boxes lie in the same or in neighbouring cells. A radix sort orders the boxes by cell
  key (row, column) in O(N); each box's candidates are then two runs of the sorted order:
  the rest of its cell with the next cell of its row, and the three cells below it in the
  next row, whose start a second pointer into the sorted keys keeps track of. The
  candidates whose AABBs meet go on. Boxes far larger than the mean (a 50 m barrier among
  cars) would widen every cell, so they stay out of the grid: each meets the other large
  ones directly and looks up the grid's cells that its AABB covers, row by row. From
  4,096 boxes on (and none large), the threads share both phases by bands of grid rows
  with about as many boxes each (`_banded`): each sorts its own rows and the row after
  them, and keeps the pairs whose lower box lies in its band, so no pair is found twice.
- **Narrow phase**: on those pairs, the separating-axis test on the four edge normals of
  the two rectangles (exact for convex polygons), with double-precision sines and
  cosines.

Touching counts as overlapping: the rectangles are closed sets, so two boxes whose edges
meet (separation 0) are a pair. In floating point this matters only for boxes placed
exactly edge to edge, where rounding of the axes (1e-16 relative) can decide; boxes at
heading 0 or pi placed edge to edge are reported (tested). The AABBs' bounds are raised
by 1e-9 and the cells by 1 cm, far above rounding, so the broad phase never drops a pair
the exact test accepts.

Figures, medians on the 2-core reference machine for cars (4.5 x 1.8 m) along two-way
streets 25 m apart, 20 m of lane per car, a few overlapping: at N=10,000 this function
takes 0.16 ms, its numpy predecessor (a sort and sweep over rows, some forty array
operations) 1.9 ms, and ``scipy.spatial.cKDTree(...).query_pairs`` 3.9 ms for the tree
and its query alone; at N=1,000, 0.02 ms, 0.13 ms and 0.25 ms. Inside the simulation
(benchmarks/grid_map.py, caches cold from the rest of the tick) it took 0.21 ms at
N=10,000 on one thread and takes 0.17 to 0.20 ms on two (the numpy predecessor 1.8 ms),
and 0.03 ms at N=1,000 (0.21 ms).
"""

from __future__ import annotations

import numba
import numpy as np
import numpy.typing as npt

from roadsim._jit import (
    chunks_for,
    njit,
    njit_leaf,
    njit_loop,
    njit_rows,
    njit_split,
    njit_split_only,
    share,
)
from roadsim._types import BoolArray, FloatArray, IntArray

__all__ = ["find_overlaps"]

Boxes = tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]  # x, y, h, l, w
Aabbs = tuple[FloatArray, FloatArray, FloatArray, FloatArray]  # x, y, ex, ey

# A box whose half-length + half-width exceeds this many times the mean stays out of the
# grid instead of widening its cells for all (from 17 boxes on).
_LARGE_FACTOR = 4.0
_LARGE_MIN = 17
# Bits per radix-sort pass: 2,048 counters stay in L1 cache.
_RADIX_BITS = 11
_NO_KEY = np.iinfo(np.int64).max  # the sentinel after the last sorted cell key
# From this many boxes on, the threads share the work (`_banded`), unless the grid has
# more rows than this.
_MIN_PARALLEL = 4096
_MAX_ROWS = 1 << 16
# Columns of the figures of a chunk of boxes (`_extent_rows`): how many take part, the sum
# and the largest of their half-length + half-width, the span of their centres, and their
# AABBs' largest half-extents.
_COUNT, _SIZE_SUM, _SIZE_MAX, _X0, _X1, _Y0, _Y1, _EX, _EY = range(9)
_STATS = 9
# Columns of a grid (`_cells`).
_GX0, _GY0, _GCW, _GCH, _NCOLS, _NROWS = range(6)


def find_overlaps(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    heading: npt.ArrayLike,
    length: npt.ArrayLike,
    width: npt.ArrayLike,
    active: npt.ArrayLike,
) -> tuple[IntArray, IntArray]:
    """Pairs of active boxes whose oriented rectangles overlap (or touch).

    Args:
        x, y: Box centres in the world frame (m), shape (N,).
        heading: Heading of each box's length axis, CCW from x (rad), shape (N,).
        length: Extent along the heading (m, >= 0), shape (N,).
        width: Extent across the heading (m, >= 0), shape (N,).
        active: Which boxes take part, bool shape (N,). Inactive boxes never collide and
            their other values are not read (they may be NaN); active ones must be finite
            (one that is not is ignored, as if inactive).

    Returns:
        ``(i, j)``: int64 arrays of shape (P,) with ``i < j``, one entry per overlapping
        pair, sorted by ``i`` then ``j``.
    """
    # One dtype and layout per argument, so that the kernel compiles once; it does not
    # check bounds, so the shapes are checked here.
    mask = np.ascontiguousarray(active, dtype=np.bool_)
    x, y, h, ln, w = (
        np.ascontiguousarray(v, dtype=np.float64) for v in (x, y, heading, length, width)
    )
    if mask.ndim != 1 or any(v.shape != mask.shape for v in (x, y, h, ln, w)):
        shapes = ", ".join(str(v.shape) for v in (x, y, h, ln, w, mask))
        raise ValueError(f"find_overlaps needs arrays of one shape (N,), got {shapes}")
    return _overlaps((x, y, h, ln, w), mask, chunks_for(mask.shape[0], _MIN_PARALLEL))


@njit_split
def _overlaps(boxes: Boxes, active: BoolArray, chunks: int) -> tuple[IntArray, IntArray]:
    """`find_overlaps` on float64 arrays and a bool array of one shape (N,).

    Every temporary array costs page faults where the allocator has given its memory
    back since the last call (1.7 us a page on the reference machine), so there are few:
    no copies of the input, AABBs as two arrays, the keys and the sort's buffers. With
    1.4 MB of them at N=10,000, an earlier version took 0.45 ms instead of 0.15 ms.
    """
    x, y, heading, length, width = boxes
    n = x.shape[0]
    # The AABBs' half-extents of every box (NaN for a box that takes no part), and the
    # figures of the boxes that do, per chunk of the boxes.
    ex = np.empty(n, np.float64)
    ey = np.empty(n, np.float64)
    stats = np.empty((chunks, _STATS), np.float64)
    _extents(chunks, x, y, heading, length, width, active, ex, ey, stats)
    m = 0
    size_sum = size_max = 0.0
    for c in range(chunks):
        m += int(stats[c, _COUNT])
        size_sum += stats[c, _SIZE_SUM]
        size_max = max(size_max, stats[c, _SIZE_MAX])
    if m < 2:
        none = np.empty(0, np.int64)
        return none, none

    # Broad and narrow phase: the overlapping pairs, each once, as (lower, higher index).
    limit = _LARGE_FACTOR * size_sum / m
    grid = _grid(stats)
    if chunks > 1 and m >= _MIN_PARALLEL and size_max <= limit and grid[_NROWS] <= _MAX_ROWS:
        pairs, count = _banded(boxes, ex, ey, grid, m, chunks)
    else:
        ids = np.empty(m, np.int64)
        m = 0
        for k in range(n):
            if ex[k] == ex[k]:  # not NaN: it takes part
                ids[m] = k
                m += 1
        aabbs = (x, y, ex, ey)
        if m < _LARGE_MIN or size_max <= limit:
            pairs, count = _candidates(aabbs, ids, ids[:0])
        else:
            large = 0.5 * length[ids] + 0.5 * width[ids] > limit
            pairs, count = _candidates(aabbs, ids[~large], ids[large])
        count = _narrow(boxes, pairs, count)
    # In index order: the pairs are unique, so sorting i * n + j is deterministic.
    key = pairs[:count, 0] * n + pairs[:count, 1]
    _radix_sort_by(key, np.empty_like(key), n * n)
    return key // n, key % n


@njit_loop
def _extent_rows(
    x: FloatArray,
    y: FloatArray,
    heading: FloatArray,
    length: FloatArray,
    width: FloatArray,
    active: BoolArray,
    ex: FloatArray,
    ey: FloatArray,
    all_stats: FloatArray,
    c: int,
    chunks: int,
) -> None:
    """The AABBs' half-extents ``ex``, ``ey`` of chunk c of ``chunks`` of the boxes, NaN
    for those that take no part (inactive, or not finite), and the figures of those that
    do into ``all_stats[c]`` (columns `_COUNT` to `_EY`)."""
    first, stop = share(x.shape[0], c, chunks)
    stats = all_stats[c]
    # Without a branch, this loop vectorizes (inactive boxes give NaN or nonsense).
    for k in range(first, stop):
        ac, as_ = _abs_cos_sin_bound(heading[k])
        hl, hw = 0.5 * length[k], 0.5 * width[k]
        ex[k], ey[k] = ac * hl + as_ * hw, as_ * hl + ac * hw
    count = 0
    size_sum = size_max = max_ex = max_ey = 0.0
    x0 = y0 = np.inf
    x1 = y1 = -np.inf
    for k in range(first, stop):
        # 0 * v is 0 exactly where v is finite (ex and ey are where length and width are).
        if (
            active[k]
            and x[k] * 0.0 + y[k] * 0.0 + heading[k] * 0.0 + ex[k] * 0.0 + ey[k] * 0.0 == 0.0
        ):
            count += 1
            size = 0.5 * length[k] + 0.5 * width[k]
            size_sum += size
            size_max = max(size_max, size)
            x0, x1, y0, y1 = min(x0, x[k]), max(x1, x[k]), min(y0, y[k]), max(y1, y[k])
            max_ex, max_ey = max(max_ex, ex[k]), max(max_ey, ey[k])
        else:
            ex[k] = np.nan
    stats[_COUNT], stats[_SIZE_SUM], stats[_SIZE_MAX] = count, size_sum, size_max
    stats[_X0], stats[_X1], stats[_Y0], stats[_Y1] = x0, x1, y0, y1
    stats[_EX], stats[_EY] = max_ex, max_ey


_extents = njit_rows(_extent_rows)


@njit
def _grid(stats: FloatArray) -> FloatArray:
    """The grid of the boxes whose figures ``stats`` holds (rows by chunk): columns
    `_GX0` to `_NROWS` (see `_cells`)."""
    x0 = y0 = np.inf
    x1 = y1 = -np.inf
    cw = ch = 0.0
    for c in range(stats.shape[0]):
        if stats[c, _COUNT] > 0:
            x0, x1 = min(x0, stats[c, _X0]), max(x1, stats[c, _X1])
            y0, y1 = min(y0, stats[c, _Y0]), max(y1, stats[c, _Y1])
            cw, ch = max(cw, stats[c, _EX]), max(ch, stats[c, _EY])
    return _cells(x0, x1, y0, y1, cw, ch)


@njit
def _cells(x0: float, x1: float, y0: float, y1: float, ex: float, ey: float) -> FloatArray:
    """The grid over centres in [x0, x1] x [y0, y1] of boxes whose AABBs' half-extents
    are at most ``ex`` and ``ey``: (`_GX0`, `_GY0`: its origin; `_GCW`, `_GCH`: the width
    and height of a cell; `_NCOLS`, `_NROWS`).

    Cells wider and taller than any two AABBs together, plus 1 cm against the rounding
    of coordinates and degenerate boxes; at most 2**30 columns and rows, so that keys fit
    in int64. Half spans, and the cap on the size, keep absurd coordinates from
    overflowing into a NaN cell: they only make the grid coarse. The first and the last
    column stay empty.
    """
    cw = min(max(2.0 * ex + 0.01, (0.5 * x1 - 0.5 * x0) / 2**29), 1e300)
    ch = min(max(2.0 * ey + 0.01, (0.5 * y1 - 0.5 * y0) / 2**29), 1e300)
    grid = np.empty(6, np.float64)
    grid[_GX0], grid[_GY0], grid[_GCW], grid[_GCH] = x0, y0, cw, ch
    # (A multiplication by 1 / cw is several times faster than a division, in the loops.)
    grid[_NCOLS] = _index((x1 - x0) * (1.0 / cw)) + 3
    grid[_NROWS] = _index((y1 - y0) * (1.0 / ch)) + 1
    return grid


@numba.njit(cache=True, nogil=True)  # (a helper of `_overlaps`, not a kernel of its own)
def _no_bands(
    boxes: Boxes, ex: FloatArray, ey: FloatArray, grid: FloatArray, m: int, chunks: int
) -> tuple[IntArray, int]:
    """What stands in for `_banded` where the passes run on the calling thread: never
    called (`_overlaps` bands only with more than one chunk), it keeps that form of
    `_overlaps` from compiling the bands (about 10 s)."""
    return np.empty((0, 2), dtype=np.int64), 0


@njit_split_only(_no_bands)
def _banded(
    boxes: Boxes, ex: FloatArray, ey: FloatArray, grid: FloatArray, m: int, chunks: int
) -> tuple[IntArray, int]:
    """Both phases on the threads, for the ``m`` boxes of ``ex`` not NaN, none of them
    large: ``(pairs, count)`` as `_candidates` gives them, narrowed.

    Each chunk takes a band of the grid's rows, about as many boxes each: it sorts the
    boxes of its rows and of the row after by cell (the pairs of a box go to the rest of
    its row and to the row after, as in `_candidates`), finds the pairs whose AABBs meet
    from the boxes of its own rows, and tests those at once. No pair is found twice: it
    belongs to the band of its box in the lower row, or of its row.
    """
    x, y = boxes[0], boxes[1]
    nrows = int(grid[_NROWS])
    key = np.empty(x.shape[0], np.int64)
    per_row = np.zeros((chunks, nrows), np.int64)
    _keys(chunks, x, y, ex, grid, key, per_row)
    rows = per_row.sum(axis=0)
    # Band c is rows split[c]:split[c + 1]: the first row at which the boxes before pass
    # c m / chunks starts band c.
    split = np.full(chunks + 1, nrows, np.int64)
    split[0] = 0
    seen, c = 0, 1
    for r in range(nrows):
        while c < chunks and seen >= c * m // chunks:
            split[c] = r
            c += 1
        seen += rows[r]
    # The part of the buffers of each band: its boxes, those of the row after, and one
    # place for the sentinel.
    span = np.zeros(chunks + 1, np.int64)
    for c in range(chunks):
        span[c + 1] = span[c] + rows[split[c] : min(split[c + 1] + 1, nrows)].sum() + 1
    buffers = np.empty((4, span[chunks]), np.int64)
    counters = np.empty((chunks, 1 << _RADIX_BITS), np.int64)
    found = np.zeros(chunks, np.int64)
    room = 16 + m // (8 * chunks)
    for _ in range(2):  # the second time into buffers large enough
        pairs = np.empty((chunks, room, 2), np.int64)
        _bands(
            chunks, boxes, ex, ey, key, int(grid[_NCOLS]), split, span, buffers, counters, pairs,
            found,
        )  # fmt: skip
        if found.max() <= room:
            break
        room = found.max()
    count = found.sum()
    out = np.empty((count, 2), np.int64)
    at = 0
    for c in range(chunks):
        out[at : at + found[c]] = pairs[c, : found[c]]
        at += found[c]
    return out, count


@njit_loop
def _key_rows(
    x: FloatArray,
    y: FloatArray,
    ex: FloatArray,
    grid: FloatArray,
    key: IntArray,
    per_row: IntArray,
    c: int,
    chunks: int,
) -> None:
    """The cell keys (row, column) of chunk c of ``chunks`` of the boxes, -1 for those
    that take no part (``ex`` NaN), and their count per row added to ``per_row[c]``."""
    first, stop = share(x.shape[0], c, chunks)
    rows = per_row[c]
    x0, y0 = grid[_GX0], grid[_GY0]
    icw, ich = 1.0 / grid[_GCW], 1.0 / grid[_GCH]
    ncols = int(grid[_NCOLS])
    for k in range(first, stop):
        if ex[k] != ex[k]:
            key[k] = -1
            continue
        r = _index((y[k] - y0) * ich)
        key[k] = r * ncols + _index((x[k] - x0) * icw) + 1
        rows[r] += 1


_keys = njit_rows(_key_rows)


@njit_loop
def _band_rows(
    boxes: Boxes,
    ex: FloatArray,
    ey: FloatArray,
    key: IntArray,
    ncols: int,
    split: IntArray,
    span: IntArray,
    all_buffers: IntArray,
    all_counters: IntArray,
    all_pairs: IntArray,
    found: IntArray,
    c: int,
    chunks: int,
) -> None:
    """Band c of `_banded` (of ``chunks``): the overlapping pairs of the boxes in rows
    r0 to r1 - 1 (``split[c]`` to ``split[c + 1]``) with the boxes after them in their
    row and in the next row (see `_candidates`), into ``all_pairs[c]`` while it has
    room, and their count into ``found[c]``. The band's part of ``all_buffers``
    (``span[c]`` to ``span[c + 1]``) has four rows with room for the boxes of rows r0
    to r1 and a sentinel: keys and boxes, and the sort's second pair."""
    r0, r1 = split[c], split[c + 1]
    buffers = all_buffers[:, span[c] : span[c + 1]]
    counters, pairs = all_counters[c], all_pairs[c]
    x, y = boxes[0], boxes[1]
    base, top = r0 * ncols, (r1 + 1) * ncols  # the keys of rows r0 to r1
    cell, box = buffers[0], buffers[1]
    m = 0
    for k in range(key.shape[0]):
        if base <= key[k] < top:
            cell[m], box[m] = key[k] - base, k
            m += 1
    if _radix(cell[:m], box[:m], buffers[2, :m], buffers[3, :m], counters, top - base):
        cell, box = buffers[2], buffers[3]
    cell[m] = _NO_KEY
    scan_end = r1 * ncols - base  # boxes from rows r1 on only meet those before
    count = below = 0
    room = pairs.shape[0]
    for t in range(m):
        if cell[t] >= scan_end:
            break
        while cell[below] < cell[t] + ncols - 1:
            below += 1
        a = box[t]
        for run in range(2):
            u, end = (t + 1, cell[t] + 1) if run == 0 else (below, cell[t] + ncols + 1)
            while cell[u] <= end:
                b = box[u]
                if _meet(x, y, ex, ey, a, b) and _overlap(boxes, a, b):
                    if count < room:
                        pairs[count, 0], pairs[count, 1] = min(a, b), max(a, b)
                    count += 1
                u += 1
    found[c] = count


_bands = njit_rows(_band_rows)


@njit
def _candidates(aabbs: Aabbs, ids: IntArray, big: IntArray) -> tuple[IntArray, int]:
    """The pairs of boxes whose AABBs meet: ``(pairs, count)``, the pairs ``(i, j)``,
    ``i < j``, in the first ``count`` rows of ``pairs``.

    The boxes ``ids`` go into the grid. Each large box of ``big`` meets the large boxes
    after it directly, and the grid's boxes in the cells its AABB covers.
    """
    x, y, ex, ey = aabbs
    m = ids.shape[0]
    pairs = np.empty((16 + m // 8, 2), np.int64)
    x0 = x1 = x[ids[0]] if m else 0.0
    y0 = y1 = y[ids[0]] if m else 0.0
    cw = ch = 0.0
    for k in ids:
        x0, x1, y0, y1 = min(x0, x[k]), max(x1, x[k]), min(y0, y[k]), max(y1, y[k])
        cw, ch = max(cw, ex[k]), max(ch, ey[k])
    grid = _cells(x0, x1, y0, y1, cw, ch)
    cw, ch = grid[_GCW], grid[_GCH]
    icw, ich = 1.0 / cw, 1.0 / ch
    ncols, nrows = int(grid[_NCOLS]), int(grid[_NROWS])
    key = np.empty(m + 1, np.int64)  # cell keys, then the sentinel
    for p in range(m):
        key[p] = _index((y[ids[p]] - y0) * ich) * ncols + _index((x[ids[p]] - x0) * icw) + 1
    key[m] = _NO_KEY
    sid = ids.copy()  # the boxes in cell order, after the sort
    _radix_sort_by(key[:m], sid, nrows * ncols)

    for _ in range(2):  # the second time into a buffer large enough
        # Box sid[t] meets the rest of its cell and the next cell of its row (keys up to
        # key[t] + 1) and the three cells below in the next row (key[t] + ncols - 1 to
        # key[t] + ncols + 1), which start at `below`; the cells before met it from theirs.
        count = below = 0
        for t in range(m):
            while key[below] < key[t] + ncols - 1:
                below += 1
            a = sid[t]
            for run in range(2):
                u, end = (t + 1, key[t] + 1) if run == 0 else (below, key[t] + ncols + 1)
                while key[u] <= end:
                    if _meet(x, y, ex, ey, a, sid[u]):
                        count = _store(pairs, count, a, sid[u])
                    u += 1
        for p in range(big.shape[0]):
            a = big[p]
            for b in big[p + 1 :]:
                if _meet(x, y, ex, ey, a, b):
                    count = _store(pairs, count, a, b)
            # Rows and columns of its AABB and one cell more each way; all the keys in one
            # range where that would be more rows than boxes.
            r0 = _index((y[a] - ey[a] - ch - y0) * ich)
            r1 = min(_index((y[a] + ey[a] + ch - y0) * ich), nrows - 1)
            c0 = _index((x[a] - ex[a] - cw - x0) * icw) + 1
            c1 = min(_index((x[a] + ex[a] + cw - x0) * icw) + 1, ncols - 2)
            if r1 - r0 >= m:
                r0, r1, c0, c1 = 0, 0, 0, nrows * ncols
            for r in range(r0, r1 + 1):
                u = int(np.searchsorted(key[:m], r * ncols + c0))
                while key[u] <= r * ncols + c1:
                    if _meet(x, y, ex, ey, a, sid[u]):
                        count = _store(pairs, count, a, sid[u])
                    u += 1
        if count <= pairs.shape[0]:
            break
        pairs = np.empty((count, 2), np.int64)
    return pairs, count


@njit_leaf
def _index(v: float) -> int:
    """``int(v)`` clamped to [0, 2**30]; NaN, from coordinates that overflow, to 2**30."""
    return int(v) if 0.0 <= v < 2.0**30 else (0 if v < 0.0 else 2**30)


@njit_leaf
def _meet(x: FloatArray, y: FloatArray, ex: FloatArray, ey: FloatArray, a: int, b: int) -> bool:
    """Whether the AABBs of boxes ``a`` and ``b`` meet."""
    return bool(abs(x[b] - x[a]) <= ex[a] + ex[b] and abs(y[b] - y[a]) <= ey[a] + ey[b])


@njit
def _narrow(boxes: Boxes, pairs: IntArray, count: int) -> int:
    """Keeps those of the first ``count`` pairs whose rectangles overlap or touch
    (`_overlap`), in place, and returns how many."""
    kept = 0
    for t in range(count):
        a, b = pairs[t, 0], pairs[t, 1]
        if _overlap(boxes, a, b):
            pairs[kept, 0], pairs[kept, 1] = a, b
            kept += 1
    return kept


@njit_leaf
def _overlap(boxes: Boxes, a: int, b: int) -> bool:
    """Whether the rectangles of boxes ``a`` and ``b`` overlap or touch: the separating
    axis theorem on their four edge normals. A box is seldom in more than one pair: its
    sine and cosine are not cached, where a cache for all N boxes would cost more in page
    faults than it saves."""
    x, y, heading, length, width = boxes
    ca, sa = np.cos(heading[a]), np.sin(heading[a])
    cb, sb = np.cos(heading[b]), np.sin(heading[b])
    dx, dy = x[b] - x[a], y[b] - y[a]
    # |cos| and |sin| of the relative heading: one box's axes projected on the other's.
    c = abs(ca * cb + sa * sb)
    s = abs(ca * sb - sa * cb)
    la, wa, lb, wb = 0.5 * length[a], 0.5 * width[a], 0.5 * length[b], 0.5 * width[b]
    # On each normal, the centre distance is at most the sum of the projected
    # half-extents (the same in both orders of a and b, to the bit).
    return bool(
        abs(dx * ca + dy * sa) <= la + lb * c + wb * s
        and abs(dy * ca - dx * sa) <= wa + lb * s + wb * c
        and abs(dx * cb + dy * sb) <= lb + la * c + wa * s
        and abs(dy * cb - dx * sb) <= wb + la * s + wa * c
    )


@njit
def _store(pairs: IntArray, count: int, i: int, j: int) -> int:
    """Stores pair number ``count`` as (min, max) where ``pairs`` has room; returns
    ``count + 1``. Past the end the scans only count, and run again into a buffer that
    large: growing it inside their loops would cost reference counting every iteration."""
    if count < pairs.shape[0]:
        pairs[count, 0], pairs[count, 1] = min(i, j), max(i, j)
    return count + 1


@njit
def _radix_sort_by(key: IntArray, payload: IntArray, end: int) -> None:
    """Sorts ``key`` (values in [0, end)) in place, stably, and ``payload`` along
    (`_radix`)."""
    k2, v2 = np.empty_like(key), np.empty_like(payload)
    if _radix(key, payload, k2, v2, np.empty(1 << _RADIX_BITS, np.int64), end):
        key[:] = k2
        payload[:] = v2


@njit_leaf
def _radix(
    key: IntArray, payload: IntArray, key2: IntArray, payload2: IntArray, start: IntArray, end: int
) -> bool:
    """Sorts ``key`` (values in [0, end)), stably, and ``payload`` along: least
    significant digit first, a counting sort per digit, O(N) a pass, between the two
    pairs of buffers, with ``start`` (2 ** `_RADIX_BITS` entries) for the counts.
    Returns whether the result is in ``key2`` and ``payload2``."""
    n = key.shape[0]
    bits = 1
    while (end - 1) >> bits:
        bits += 1
    passes = (bits + _RADIX_BITS - 1) // _RADIX_BITS
    digit = (bits + passes - 1) // passes  # as few counters as the passes allow
    mask = (1 << digit) - 1
    k, v, k2, v2 = key, payload, key2, payload2
    for shift in range(0, passes * digit, digit):
        start[: mask + 1] = 0
        for t in range(n):
            start[(k[t] >> shift) & mask] += 1
        total = 0
        for d in range(mask + 1):
            start[d], total = total, total + start[d]
        for t in range(n):
            d = (k[t] >> shift) & mask
            j = start[d]  # a local: the stores below might alias start for all LLVM knows
            k2[j], v2[j] = k[t], v[t]
            start[d] = j + 1
        k, v, k2, v2 = k2, v2, k, v
    return passes % 2 == 1


@njit_leaf
def _abs_cos_sin_bound(h: float) -> tuple[float, float]:
    """Upper bounds of ``|cos h|`` and ``|sin h|``, less than 3e-5 above them.

    The AABBs only prefilter, and the math library's sine and cosine would cost 10 ns a
    box, so this reduces ``h`` to ``r`` in [-pi/2, pi/2] (``|cos|`` and ``|sin|`` have
    period pi) and sums their Taylor series up to a positive term: on that interval the
    terms shrink, so the partial sums bound ``cos |r|`` and ``sin |r|`` from above. The
    margin covers the rounding, under 1e-15 |h| in the reduction. No branch depends on
    ``h``: a mispredicted one would cost more than the sums.
    """
    big = not abs(h) < 1e8  # no reduction worth the name: bound by 1
    r = abs(h - np.floor(h * (1.0 / np.pi) + 0.5) * np.pi)
    r2 = r * r
    c = 1.0 + r2 * (-1.0 / 2 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320))))
    s = r * (1.0 + r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (1.0 / 362880)))))
    margin = 1e-9 + 1e-15 * abs(h)
    return (1.0 if big else c + margin), (1.0 if big else s + margin)
