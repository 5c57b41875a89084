"""Degree-bucket relabelling: on graphs with a heavy-tailed degree distribution (power-law),
partition a copy whose vertices are numbered by degree bucket, the highest degrees first.

Every phase reads its arrays (blocks, flags, weights, cluster ids) at the neighbours of the
vertex it works on. On a power-law graph most of those neighbours are the few hubs; numbered
first, their entries share a few hot cache lines instead of lying anywhere in arrays of
megabytes. R-MAT 2^20 (8M edges, k = 32, fast, 1 thread): 2.0 x faster (refinement 2.6 x,
coarsening 1.35 x), the same cut within 0.1%. Meshes and other graphs without hubs keep their
numbering (and so their partitions).

The bucket of a vertex of degree d is the bit length of d (0 for isolated vertices, 1 for
degree 1, 2 for 2-3, ...): buckets in decreasing order, vertex ids in increasing order within
a bucket, so the order is a pure function of the graph. The relabelled graph's rows are
sorted, as every Graph's are. Same result on the host (compiled, rows on threads) and on ``xp`` (the GPU's).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from . import threads
from .graph import Graph
from .jit import njit
from .prefetch import PREFETCH_DISTANCE, prefetch
from .coarsen.rowsort import RANK_SORT_MAX, _rank_sort_row, _sort_row
from .threads import PRANGE_ONLY

# Tunables
RELABEL_MIN_VERTICES = 1 << 17  # below this a level's per-vertex arrays (1 MB of int64 blocks at
                                # 2^17) fit in a core's L2 cache, and the 2^16 families and shared
                                # graphs keep their numbering (and partitions)
ROWS_CHUNK_ENTRIES = 1 << 16   # entries per chunk of the relabelled rows (see _relabel_host)
RELABEL_MIN_SKEW = 32           # relabel when max degree >= 32 x mean degree: power-law graphs have
                                # 100-3000 (R-MAT 2^20: 2600, Barabasi-Albert 2^20: ~500); meshes,
                                # geometric and Erdos-Renyi graphs 1.5-5
RUNS_MAX = 64                   # an order of at most this many increasing runs (the degree order:
                                # one per bucket) sorts a long row by counting its entries per run
                                # (_runs_sort_row) instead of comparing them


def heavy_tailed(max_degree, n, m) -> bool:
    """Whether a graph of n vertices, m edges and this max degree is power-law by
    RELABEL_MIN_SKEW (max degree against the mean); the one rule for every caller."""
    return m > 0 and max_degree * n >= RELABEL_MIN_SKEW * 2 * m


def power_law(graph) -> bool:
    """Whether ``graph`` is heavy-tailed (RELABEL_MIN_SKEW), whatever its size."""
    if graph.m == 0:
        return False
    xp = graph.backend.xp
    return heavy_tailed(int(xp.diff(graph.indptr).max()), graph.n, graph.m)


def skewed(graph) -> bool:
    """Whether ``graph`` is big and heavy-tailed enough to be relabelled (see the tunables)."""
    return graph.n >= RELABEL_MIN_VERTICES and power_law(graph)


def degree_order(graph):
    """order[i] = the old id of new vertex i: buckets by decreasing degree, ids increasing
    within a bucket (a device array)."""
    be = graph.backend
    if not be.is_gpu:
        return _order_nb(np.asarray(graph.indptr))
    xp = be.xp
    n = graph.n
    bucket = degree_bucket(xp, xp.diff(graph.indptr))
    # unique keys: any sort gives the one order
    key = (int(bucket.max()) - bucket).astype(xp.int64) * n + xp.arange(n, dtype=xp.int64)
    return xp.argsort(key)


def relabel(graph, order):
    """The graph with vertex order[i] renamed i (rows sorted), on the same device."""
    be = graph.backend
    if not be.is_gpu:
        indptr, indices, ewgt = _relabel_host(graph, order)
    else:
        indptr, indices, ewgt = _relabel_xp(be, graph.indptr, graph.indices, graph.ewgt, order)
    return Graph._trusted(indptr, indices, ewgt, graph.vwgt[order], be)


def restore(parts, order, xp=np):
    """Blocks of the original vertices from those of the relabelled ones."""
    out = xp.empty_like(parts)
    out[order] = parts
    return out


# ---- whole-array formulation (numpy or cupy) ---------------------------------------------------
def degree_bucket(xp, d):
    """The degree bucket of each degree in ``d`` (see the module's text): its bit length, for
    non-negative integers below 2^53 (frexp's exponent is exact there)."""
    _, e = xp.frexp(d.astype(xp.float64))
    return e.astype(xp.int64)


def _relabel_xp(be, indptr, indices, ewgt, order):
    xp = be.xp
    n = order.shape[0]
    inv = xp.empty(n, dtype=xp.int64)
    inv[order] = xp.arange(n, dtype=xp.int64)
    deg = xp.diff(indptr)
    row = inv[be.row_ids(indptr, indices.shape[0])]    # each old entry's new row
    col = inv[indices.astype(xp.int64)]
    perm = xp.argsort(row * n + col)                   # unique keys: rows in order, each sorted
    new_indptr = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(deg[order])])
    return new_indptr, col[perm].astype(indices.dtype), ewgt[perm]


# ---- compiled formulation (CPU) ----------------------------------------------------------------
@njit(cache=True)
def _order_nb(indptr):
    """degree_order by a counting sort over the buckets (ids stay increasing in each)."""
    n = indptr.shape[0] - 1
    bucket = np.empty(n, dtype=np.int64)
    top = 0
    for v in range(n):
        d = indptr[v + 1] - indptr[v]
        b = 0
        while d > 0:
            b += 1
            d >>= 1
        bucket[v] = b
        top = max(top, b)
    start = np.zeros(top + 2, dtype=np.int64)
    for v in range(n):
        start[top - bucket[v] + 1] += 1
    for b in range(top + 1):
        start[b + 1] += start[b]
    order = np.empty(n, dtype=np.int64)
    for v in range(n):
        slot = top - bucket[v]
        order[start[slot]] = v
        start[slot] += 1
    return order


def _relabel_host(graph, order):
    indptr = np.asarray(graph.indptr, dtype=np.int64)
    indices, ewgt = np.asarray(graph.indices), np.asarray(graph.ewgt)
    n = order.shape[0]
    inv = np.empty(n, dtype=indices.dtype)            # int32 ids: half the randomly read bytes
    inv[order] = np.arange(n, dtype=indices.dtype)
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.diff(indptr)[order], out=new_indptr[1:])
    new_indices = np.empty_like(indices)
    new_ewgt = np.empty_like(ewgt)
    # chunks of about ROWS_CHUNK_ENTRIES entries: the rows come in decreasing degree, so
    # chunks of equally many rows put the hubs' rows (and most entries) in the first ones
    bounds = np.unique(np.searchsorted(new_indptr, np.arange(0, int(new_indptr[-1]), ROWS_CHUNK_ENTRIES),
                                       side="right") - 1)
    starts = np.append(bounds, n).astype(np.int64)
    runs = increasing_runs(order)
    _relabel_rows_nb(indptr, indices, ewgt, order, inv, new_indptr, new_indices, new_ewgt, starts,
                     threads.PARALLEL_MIN_ITEMS, runs if runs.shape[0] <= RUNS_MAX + 1 else runs[:0])
    return new_indptr, new_indices, new_ewgt


def increasing_runs(order):
    """Starts of the maximal runs of new ids over which the old ids ``order`` increase, and n:
    renaming is increasing on each run."""
    n = order.shape[0]
    breaks = np.flatnonzero(order[1:] < order[:-1]) + 1
    return np.concatenate([np.zeros(1, dtype=np.int64), breaks.astype(np.int64), np.full(1, n, dtype=np.int64)])


@njit(cache=True, internal=True)
def _run_of(x, runs):
    """The run holding new id x: the last r with runs[r] <= x (a binary search)."""
    lo, hi = 0, runs.shape[0] - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if runs[mid] <= x:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True, internal=True)
def _runs_sort_row(cols, wgts, start, stop, runs, count, run, tc, tw):
    """Sort the renamed row cols[start:stop] (its old ids were increasing), carrying wgts:
    renaming keeps the order of the entries inside one run of ``runs``, and the runs' ids
    are ordered, so a stable counting sort by run sorts the row in O(entries x log(runs))
    (R-MAT 2^20's hubs' rows: ~20 runs, where comparison sorts took most of relabelling).
    run, tc, tw: scratch of at least stop - start entries."""
    nruns = runs.shape[0] - 1
    for r in range(nruns + 1):
        count[r] = 0
    d = stop - start
    for j in range(d):
        tc[j] = cols[start + j]
        tw[j] = wgts[start + j]
        run[j] = _run_of(tc[j], runs)
        count[run[j] + 1] += 1
    for r in range(nruns):
        count[r + 1] += count[r]
    for j in range(d):
        pos = start + count[run[j]]
        cols[pos] = tc[j]
        wgts[pos] = tw[j]
        count[run[j]] += 1


@njit(cache=True, internal=True)
def _rows_chunk(lo, hi, indptr, indices, ewgt, order, inv, new_indptr, new_indices, new_ewgt, tc, tw, runs,
                count):
    longest = 0
    for i in range(lo, hi):
        longest = max(longest, new_indptr[i + 1] - new_indptr[i])
    size = longest if runs.shape[0] and longest > RANK_SORT_MAX else 0
    run = np.empty(size, dtype=np.int64)         # the runs sort's scratch, once per chunk
    rc = np.empty(size, dtype=new_indices.dtype)
    rw = np.empty(size, dtype=new_ewgt.dtype)
    for i in range(lo, hi):
        a = indptr[order[i]]
        s, t = new_indptr[i], new_indptr[i + 1]
        ascending = True          # the old row, as every Graph's
        renamed_ascending = True  # the new row already
        for e in range(t - s):
            if e + PREFETCH_DISTANCE < t - s:
                prefetch(inv, indices[a + e + PREFETCH_DISTANCE])
            new_indices[s + e] = inv[indices[a + e]]
            new_ewgt[s + e] = ewgt[a + e]
            if e > 0:
                ascending = ascending and indices[a + e] > indices[a + e - 1]
                renamed_ascending = renamed_ascending and new_indices[s + e] > new_indices[s + e - 1]
        # the renamed ids are distinct: any sort gives the one order. Rows that renaming left
        # sorted skip it (Barabasi-Albert 2^20, whose old ids already follow the degrees: the
        # relabelling 0.24 -> 0.20 s at one thread; R-MAT 2^20 with the runs sort 0.7 -> 0.4 s)
        if renamed_ascending:
            continue
        if t - s <= RANK_SORT_MAX:
            _rank_sort_row(new_indices, new_ewgt, s, t, tc, tw)
        elif runs.shape[0] and ascending:
            _runs_sort_row(new_indices, new_ewgt, s, t, runs, count, run, rc, rw)
        else:
            _sort_row(new_indices, new_ewgt, s, t)


@njit(cache=True, parallel=PRANGE_ONLY)
def _relabel_rows_nb(indptr, indices, ewgt, order, inv, new_indptr, new_indices, new_ewgt, starts, parallel_min,
                     runs):
    """Row i of the result is row order[i], its neighbours renamed by inv and sorted; new rows
    in the chunks starts[c] .. starts[c + 1] - 1, on threads from ``parallel_min`` rows up.
    ``runs``: increasing_runs(order), or empty to sort long rows by comparisons."""
    n = order.shape[0]
    chunks = starts.shape[0] - 1
    if n >= parallel_min:
        for c in prange(chunks):
            _rows_chunk(starts[c], starts[c + 1], indptr, indices, ewgt, order, inv, new_indptr, new_indices,
                        new_ewgt, np.empty(RANK_SORT_MAX, dtype=new_indices.dtype),
                        np.empty(RANK_SORT_MAX, dtype=new_ewgt.dtype), runs, np.empty(runs.shape[0], dtype=np.int64))
    else:
        tc = np.empty(RANK_SORT_MAX, dtype=new_indices.dtype)
        tw = np.empty(RANK_SORT_MAX, dtype=new_ewgt.dtype)
        count = np.empty(runs.shape[0], dtype=np.int64)
        for c in range(chunks):
            _rows_chunk(starts[c], starts[c + 1], indptr, indices, ewgt, order, inv, new_indptr, new_indices,
                        new_ewgt, tc, tw, runs, count)
