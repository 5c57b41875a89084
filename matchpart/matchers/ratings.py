"""Edge ratings (what "heavy" means when matching for coarsening) and the tie-break order.

Ratings: ``weight`` w; ``expansion_star`` w/(c(u)c(v)); ``expansion_star2`` w^2/(c(u)c(v));
``inner_outer`` w/(out(u)+out(v)-2w) (KaFFPa), with c the vertex weight and out the
weighted degree. Zero vertex weights count as 1 so that ratings stay finite.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .. import threads
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from ..threads import PRANGE_ONLY

RATINGS = ("weight", "expansion_star", "expansion_star2", "inner_outer")


def edge_ratings(graph, rating="weight"):
    """float64 rating per stored CSR entry (equal for both directions of an edge)."""
    be = graph.backend
    xp = be.xp
    if callable(rating):
        return xp.asarray(rating(graph), dtype=xp.float64)
    if rating not in RATINGS:
        raise ValueError(f"unknown rating {rating!r}; choose one of {', '.join(RATINGS)}")
    w = graph.ewgt.astype(xp.float64)
    if rating == "weight":
        return w
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cols = graph.indices
    if rating == "inner_outer":
        out = be.segment_sum(w, graph.indptr)
        denom = out[rows] + out[cols] - 2.0 * w
        # an isolated edge (all weight inner) is the best possible contraction
        return xp.where(denom > 0, w / xp.where(denom > 0, denom, 1.0), xp.inf)
    c = xp.maximum(graph.vwgt.astype(xp.float64), 1.0)
    cc = c[rows] * c[cols]
    return w / cc if rating == "expansion_star" else w * w / cc


def upper_edge_ratings(graph, rating="weight"):
    """(u, v, rating) of every undirected edge u < v, in CSR order: the entries u -> v of
    ``edge_ratings`` (bit for bit), with u and v in the graph's index dtype.

    On the CPU one compiled pass over the adjacency replaces the whole-array version's
    passes (row ids, gathers, products, the upper-entry selection); those passes were a
    large part of a coarsening level's time. Elsewhere, or for a callable rating, the
    whole-array version.
    """
    be = graph.backend
    if be.is_gpu or callable(rating) or rating not in RATINGS:
        xp = be.xp
        rows = be.row_ids(graph.indptr, graph.indices.shape[0])
        upper = xp.flatnonzero(rows < graph.indices)
        return (rows[upper].astype(graph.indices.dtype), graph.indices[upper],
                edge_ratings(graph, rating)[upper])
    # a valid graph (symmetric, no self-loops) has exactly nnz / 2 upper entries: the outputs
    # are allocated by numpy (huge pages for the matcher's passes over them) without a
    # counting pass; a graph built without checks that breaks this is done again at its size
    code = RATINGS.index(rating)
    args = (graph.indptr, graph.indices, graph.ewgt, graph.vwgt, code)
    threaded = graph.indices.shape[0] >= threads.PARALLEL_MIN_ITEMS and numba.get_num_threads() > 1
    if threaded:   # rows in chunks on the threads; a counting pass places each chunk's entries
        args += (_weighted_degrees(graph.indptr, graph.ewgt) if code == 3 else np.zeros(0), threads.CHUNK)
    size = graph.indices.shape[0] // 2
    while True:
        out = (np.empty(size, dtype=graph.indices.dtype), np.empty(size, dtype=graph.indices.dtype),
               np.empty(size, dtype=np.float64))
        count = _upper_ratings_chunked(*args, *out) if threaded else _upper_ratings_kernel(*args, *out)
        if count == size:
            return out
        size = count


@njit(cache=True, internal=True)
def _weighted_degrees(indptr, ewgt):
    """Weighted degrees as segment_sum computes them: differences of one prefix sum."""
    n = indptr.shape[0] - 1
    out = np.zeros(n, dtype=np.float64)
    prefix = 0.0
    for u in range(n):
        start = prefix
        for e in range(indptr[u], indptr[u + 1]):
            prefix += np.float64(ewgt[e])
        out[u] = prefix - start
    return out


@njit(cache=True, internal=True)
def _rating(code, w, cu, v, vwgt, wdeg, u):
    """The rating of edge (u, v) of weight w: the float64 operations of edge_ratings."""
    if code == 0:
        return w
    if code == 3:
        denom = wdeg[u] + wdeg[v] - 2.0 * w
        return w / denom if denom > 0 else np.inf
    cc = cu * max(np.float64(vwgt[v]), 1.0)
    return w / cc if code == 1 else w * w / cc


@njit(cache=True)
def _upper_ratings_kernel(indptr, indices, ewgt, vwgt, code, eu, ev, r):
    # the same float64 operations in the same order as edge_ratings, so results are equal;
    # ``code`` is the rating's position in RATINGS. Fills eu, ev, r up to their length and
    # returns the number of upper entries.
    n = indptr.shape[0] - 1
    size = eu.shape[0]
    out = _weighted_degrees(indptr, ewgt) if code == 3 else np.zeros(0, dtype=np.float64)
    k = 0
    last = indptr[n] - PREFETCH_DISTANCE
    for u in range(n):
        cu = max(np.float64(vwgt[u]), 1.0)
        for e in range(indptr[u], indptr[u + 1]):
            if e < last:   # the ratings read the neighbour's weight or degree
                if code == 3:
                    prefetch(out, indices[e + PREFETCH_DISTANCE])
                elif code != 0:
                    prefetch(vwgt, indices[e + PREFETCH_DISTANCE])
            v = indices[e]
            if v <= u:
                continue
            if k < size:
                eu[k], ev[k], r[k] = u, v, _rating(code, np.float64(ewgt[e]), cu, v, vwgt, out, u)
            k += 1
    return k


@njit(cache=True, internal=True)
def _count_upper(c, chunk, indptr, indices):
    """Upper entries (u -> v, u < v) of the rows of chunk c."""
    count = 0
    for u in range(c * chunk, min(indptr.shape[0] - 1, (c + 1) * chunk)):
        for e in range(indptr[u], indptr[u + 1]):
            count += indices[e] > u
    return count


@njit(cache=True, internal=True)
def _fill_upper(c, chunk, at, indptr, indices, ewgt, vwgt, code, wdeg, eu, ev, r):
    """_upper_ratings_kernel's entries for the rows of chunk c, written from position at."""
    n = indptr.shape[0] - 1
    hi = min(n, (c + 1) * chunk)
    last = indptr[hi] - PREFETCH_DISTANCE
    for u in range(c * chunk, hi):
        cu = max(np.float64(vwgt[u]), 1.0)
        for e in range(indptr[u], indptr[u + 1]):
            if e < last:
                if code == 3:
                    prefetch(wdeg, indices[e + PREFETCH_DISTANCE])
                elif code != 0:
                    prefetch(vwgt, indices[e + PREFETCH_DISTANCE])
            v = indices[e]
            if v > u:
                eu[at], ev[at], r[at] = u, v, _rating(code, np.float64(ewgt[e]), cu, v, vwgt, wdeg, u)
                at += 1


@njit(cache=True, parallel=PRANGE_ONLY)
def _upper_ratings_chunked(indptr, indices, ewgt, vwgt, code, wdeg, chunk, eu, ev, r):
    """_upper_ratings_kernel in chunks of ``chunk`` rows (threads.CHUNK) on the threads: the same entries
    in the same (CSR) order. Fills nothing when the outputs' size is not the count."""
    chunks = (indptr.shape[0] - 1 + chunk - 1) // chunk
    start = np.zeros(chunks + 1, dtype=np.int64)
    for c in prange(chunks):
        start[c + 1] = _count_upper(np.int64(c), chunk, indptr, indices)
    for c in range(chunks):
        start[c + 1] += start[c]
    if start[chunks] != eu.shape[0]:
        return start[chunks]
    for c in prange(chunks):
        _fill_upper(np.int64(c), chunk, start[c], indptr, indices, ewgt, vwgt, code, wdeg, eu, ev, r)
    return start[chunks]


def rating_ranks(ratings, xp):
    """Dense integer rank of each rating (equal ratings -> equal rank, higher = heavier)."""
    if ratings.shape[0] == 0:
        return xp.zeros(0, dtype=xp.int64)
    _, inverse = xp.unique(ratings, return_inverse=True)
    return inverse.reshape(-1).astype(xp.int64)


def order_keys(values):
    """uint64 keys that order like ``values`` (equal values, equal keys), so a kernel compares
    one integer type: the IEEE bit pattern of a float with its sign handled (-0.0 becomes
    +0.0 first); ranks of the values when they hold NaN (as the whole-array rounds use)."""
    values = np.asarray(values)
    if values.dtype.kind == "f":
        keys, has_nan = _float_order_keys(np.ascontiguousarray(values, dtype=np.float64))
        return rating_ranks(values, np).astype(np.uint64) if has_nan else keys
    return values.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)


@njit(cache=True, internal=True)
def _float_key(x):
    """The uint64 key of a float64 that is not NaN: -0.0 orders as +0.0."""
    b = np.float64(x).view(np.uint64) if x != 0.0 else np.uint64(0)
    return ~b if b & np.uint64(1 << 63) else b | np.uint64(1 << 63)


@njit(cache=True)
def _float_order_keys(values):
    # one pass (the whole-array version took five over the edge list); no array expression
    # (`values + 0.0`): numba's ufunc machinery costs compile time and start-up imports
    keys = np.empty(values.shape[0], dtype=np.uint64)
    for i in range(values.shape[0]):
        if np.isnan(values[i]):
            return keys, True
        keys[i] = _float_key(values[i])
    return keys, False


def entry_order_keys(graph, rating="weight"):
    """order_keys(edge_ratings(graph, rating)): a uint64 key per CSR entry, equal for both
    directions of an edge. On the CPU one compiled pass, on the threads in chunks of rows."""
    if graph.backend.is_gpu or callable(rating) or rating not in RATINGS:
        return order_keys(edge_ratings(graph, rating))
    code = RATINGS.index(rating)
    wdeg = _weighted_degrees(graph.indptr, graph.ewgt) if code == 3 else np.zeros(0)
    keys = np.empty(graph.indices.shape[0], dtype=np.uint64)
    chunks = (graph.n + threads.CHUNK - 1) // threads.CHUNK
    nan = np.zeros(max(chunks, 1), dtype=np.bool_)
    parallel_min = threads.PARALLEL_MIN_ITEMS if numba.get_num_threads() > 1 else graph.indices.shape[0] + 1
    _entry_keys(graph.indptr, graph.indices, graph.ewgt, graph.vwgt, code, wdeg, keys, nan, threads.CHUNK,
                parallel_min)
    return order_keys(edge_ratings(graph, rating)) if nan.any() else keys


@njit(cache=True, internal=True)
def _entry_keys_chunk(c, chunk, indptr, indices, ewgt, vwgt, code, wdeg, keys, nan):
    hi = min(indptr.shape[0] - 1, (c + 1) * chunk)
    last = indptr[hi] - PREFETCH_DISTANCE
    for u in range(c * chunk, hi):
        cu = max(np.float64(vwgt[u]), 1.0)
        for e in range(indptr[u], indptr[u + 1]):
            if e < last:   # the ratings read the neighbour's weight or degree
                if code == 3:
                    prefetch(wdeg, indices[e + PREFETCH_DISTANCE])
                elif code != 0:
                    prefetch(vwgt, indices[e + PREFETCH_DISTANCE])
            r = _rating(code, np.float64(ewgt[e]), cu, indices[e], vwgt, wdeg, u)
            if np.isnan(r):
                nan[c] = True
            else:
                keys[e] = _float_key(r)


@njit(cache=True, parallel=PRANGE_ONLY)
def _entry_keys(indptr, indices, ewgt, vwgt, code, wdeg, keys, nan, chunk, parallel_min):
    """_entry_keys_chunk over the chunks of ``chunk`` rows; nan[c]: chunk c met a NaN rating."""
    chunks = (indptr.shape[0] - 1 + chunk - 1) // chunk
    if indices.shape[0] >= parallel_min:
        for c in prange(chunks):
            _entry_keys_chunk(np.int64(c), chunk, indptr, indices, ewgt, vwgt, code, wdeg, keys, nan)
    else:
        for c in range(chunks):
            _entry_keys_chunk(c, chunk, indptr, indices, ewgt, vwgt, code, wdeg, keys, nan)


def edge_priority(graph, rating="weight", ratings=None):
    """int64 rank per stored CSR entry; lower = heavier; unique per undirected edge.

    This is the contract's tie-break: edges are ordered by decreasing rating, and among
    equal ratings the lexicographically smaller (min id, max id) pair comes first. Both
    directions of an edge get the same rank, so comparing ranks is comparing edges.
    """
    be = graph.backend
    xp = be.xp
    r = edge_ratings(graph, rating) if ratings is None else ratings
    n = max(graph.n, 1)
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cols = graph.indices.astype(xp.int64)
    pair = xp.minimum(rows, cols) * n + xp.maximum(rows, cols)  # (lo, hi) as one key
    # sorting by the pair key puts both directions of each edge side by side, in (lo, hi)
    # order; a stable sort of one entry per edge by decreasing rating then keeps (lo, hi)
    # order among equal ratings. Two one-key sorts beat a three-key lexsort several times.
    by_pair = _stable_argsort(xp, pair)
    edge_of_entry = xp.empty(pair.shape[0], dtype=xp.int64)
    edge_of_entry[by_pair] = xp.arange(pair.shape[0], dtype=xp.int64) // 2
    by_rating = _stable_argsort(xp, -r[by_pair[0::2]])
    edge_rank = xp.empty(by_rating.shape[0], dtype=xp.int64)
    edge_rank[by_rating] = xp.arange(by_rating.shape[0], dtype=xp.int64)
    return edge_rank[edge_of_entry]


def _stable_argsort(xp, keys):
    # numpy needs kind="stable"; CuPy's sort is always stable (a radix sort)
    return xp.argsort(keys, kind="stable") if xp.__name__ == "numpy" else xp.argsort(keys)
