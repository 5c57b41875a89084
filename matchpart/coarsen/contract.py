"""Contraction: a fine-to-coarse mapping turns a graph into its coarse graph C = P^T A P.

Two formulations of one operation: on the CPU compiled kernels (``contract_arrays``: rows
gathered per coarse vertex, gather.py, on graphs up to GATHER_MAX_VERTICES, which initial
partitioning's bisection hierarchy uses too, on the threads from PARALLEL_MIN_ENTRIES
entries; the bucket kernels here above that), on the GPU
a sort of the mapped (row, col) keys plus a segmented sum (``contract_xp``). All give sorted
coarse rows and exact int64 sums; tests hold them equal.
"""
from __future__ import annotations

import contextlib
import warnings

import numba
import numpy as np
from numba import prange

from ..chunks import bucket_starts
from ..graph import Graph
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from ..threads import PRANGE_ONLY
from .gather import (TRANSPOSE_CHUNK_ENTRIES, coarse_vertex_weights, contract_by_gathering,
                     contract_by_gathering_parallel)
from .rowsort import (INSERTION_SORT_MAX, RANK_SORT_MAX, _rank_sort_row, _sort_row, merge_sorted_row,
                      merge_unsorted_by_slots)
# coarse ids live beside the other pairing bookkeeping; imported here, where callers look
from .pairs import mapping_from_labels, mapping_from_matching, mapping_from_matching_xp  # noqa: F401

# Graphs of up to this many vertices are contracted one coarse vertex at a time
# (gather.contract_by_gathering): each coarse row is gathered from its members' rows where they lie,
# which costs a cache miss per member once the vertices' arrays outgrow the caches (the
# bucket kernels stream the fine rows in order instead). Whole coarsenings on one core,
# median of 5, against the bucket kernel everywhere: 4elt 0.84 x, rgg 2^16 0.93 x,
# delaunay 2^16 1.0 x, Barabasi-Albert 2^16 0.70 x, R-MAT 2^16 0.68 x (their dense coarse
# rows are sorted by one transposition instead of one by one, see there), delaunay 2^20
# 1.0 x (its levels above 100k vertices stay with the buckets: gathering its first level
# took 2.3 x as long).
GATHER_MAX_VERTICES = 100_000
# Larger graphs are gathered too when they have at least this many fine entries per coarse
# vertex: then a member's row is long and its cache miss is paid once for many entries.
# Clustered levels of power-law graphs, 2 threads, two alternating runs (best of 6 each):
# Barabasi-Albert 2^20's second level (195 entries per coarse vertex) 343-346 instead of
# 421-423 ms, R-MAT 2^20's first (230) 342-430 instead of 433-449 ms. With 145 (rgg 2^20's
# first level, whose neighbours have nearby ids, which the buckets stream) and 62 (BA's
# first) the buckets were faster (101 against 128 ms, 673 against 885 ms).
GATHER_MIN_ENTRIES_PER_COARSE = 160
# Below this many fine adjacency entries the kernels run on one thread: waking the thread
# pool costs more than the work (the bisection hierarchy of initial partitioning contracts
# many graphs of a few hundred vertices). Gathering on 2 threads against 1, the levels of
# 200k+ entries of the 2^16 families (2-core machine, median of 5): rmat 65 -> 52 ms,
# rgg 45 -> 27 ms, delaunay 36 -> 25 ms.
PARALLEL_MIN_ENTRIES = 200_000
# Threads are used when numba has at least this many. Level 0, 2 threads against the serial
# kernel (TBB layer, 2-core machine, median of 5): delaunay 2^20 0.107 vs 0.144 s, R-MAT 2^18
# 0.209 vs 0.327 s, rgg 2^20 0.301 vs 0.372 s (the workqueue layer once measured no gain).
PARALLEL_MIN_THREADS = 2
# Fine entries per chunk of the threaded gathering (gather.contract_by_gathering_parallel);
# each chunk fills a slot row of n_coarse entries.
GATHER_CHUNK_ENTRIES = 1 << 16
# The parallel kernel's chunks: one per PARALLEL_CHUNK_ENTRIES fine entries rounded down to a
# power of two, which splits evenly over 2, 4, 8 threads (2 to PARALLEL_MAX_CHUNKS; fixed by
# the data). Each costs a count row of n_coarse entries. Delaunay 2^20, 2 threads: level 0,
# 4 chunks 121 ms against 5 chunks 132 ms (and 8 chunks 1.23 x 4's); level 1, 2 against 3: 56, 65 ms.
PARALLEL_CHUNK_ENTRIES = 1 << 20
PARALLEL_MAX_CHUNKS = 64
# (contract_arrays reads these at each call: tests set the thresholds to 0 so that small
# graphs take the bucket kernels, and the parallel one.)


def parallel_chunks(entries):
    """Chunks of the parallel contraction of a level with ``entries`` fine adjacency entries."""
    per_entries = max(2, entries // PARALLEL_CHUNK_ENTRIES)
    return int(min(PARALLEL_MAX_CHUNKS, 1 << (per_entries.bit_length() - 1)))


def sum_by_index(be, index, values, size):
    """out[i] = sum of values[index == i], exact for int64 on both backends."""
    out = be.xp.zeros(size, dtype=values.dtype)
    return be.scatter_add(out, index, values)


def contract(graph, mapping, n_coarse, *, method="auto"):
    """The coarse graph of ``graph`` under ``mapping`` (fine vertex -> coarse id in 0..n_coarse-1).

    Coarse edge weight between a and b = total weight of fine edges between their groups
    (C = P^T A P with the 0/1 aggregation matrix P, diagonal dropped); coarse vertex weight
    = summed fine vertex weights. Returns a Graph on the same backend, int32 indices (while
    n_coarse < 2**31 - 1), rows sorted by column. ``method``: "kernel" (CPU, compiled,
    O(n + m)), "xp" (whole-array, any backend) or "auto" (kernel on the CPU, xp on the GPU).
    """
    be = graph.backend
    if method == "auto":
        method = "xp" if be.is_gpu else "kernel"
    if method == "xp":
        return contract_xp(graph, mapping, n_coarse)
    if method != "kernel":
        raise ValueError(f"method must be 'auto', 'kernel' or 'xp', got {method!r}")
    if be.is_gpu:
        raise ValueError("method='kernel' runs on the CPU only; use method='xp' for a GPU graph")
    nc = int(n_coarse)
    index_dtype = np.int32 if nc < 2**31 - 1 else np.int64
    indices = np.ascontiguousarray(graph.indices, dtype=index_dtype)
    indptr, cindices, ewgt, vwgt = contract_arrays(
        (graph.indptr, indices, graph.ewgt, graph.vwgt), mapping, nc)
    return Graph._trusted(indptr, cindices, ewgt, vwgt, be)


def contract_arrays(arrays, mapping, n_coarse):
    """Host CSR arrays (indptr, indices, ewgt, vwgt) of the coarse graph, by the compiled kernel.

    ``arrays`` = (indptr int64, indices, ewgt, vwgt) of the fine graph; the coarse arrays keep
    the dtypes of indices, ewgt and vwgt (int64 sums are exact). Rows come out sorted by
    column. The result does not depend on the number of threads: every sum runs over the
    fine entries in CSR order, whichever thread computes it.
    """
    indptr, indices, ewgt, vwgt = arrays
    # the mapping in the indices' dtype (coarse ids < fine ids' bound): every fine entry
    # reads it at random, and int32 halves what those reads pull through the caches
    # (delaunay 2^20, level 0: ~10% of the contraction)
    mapping = np.ascontiguousarray(mapping, dtype=indices.dtype)
    nc = int(n_coarse)
    dense_rows = indices.shape[0] >= GATHER_MIN_ENTRIES_PER_COARSE * nc
    if indptr.shape[0] - 1 <= GATHER_MAX_VERTICES or dense_rows:
        if indices.shape[0] >= PARALLEL_MIN_ENTRIES and numba.get_num_threads() >= PARALLEL_MIN_THREADS:
            with warnings.catch_warnings(), _default_split():
                # compiling it, numba warns of no parallel loop: the warning comes from a nested
                # compile of its loop bodies, and its prange loops do run on the threads
                warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
                return contract_by_gathering_parallel(indptr, indices, ewgt, vwgt, mapping, nc,
                                                      ewgt.dtype.kind in "iu", GATHER_CHUNK_ENTRIES,
                                                      TRANSPOSE_CHUNK_ENTRIES)
        bcol, bw = np.empty(indices.shape[0], dtype=indices.dtype), np.empty(indices.shape[0], dtype=ewgt.dtype)
        return contract_by_gathering(indptr, indices, ewgt, vwgt, mapping, nc, bcol, bw, ewgt.dtype.kind in "iu")
    if indices.shape[0] < PARALLEL_MIN_ENTRIES or numba.get_num_threads() < PARALLEL_MIN_THREADS:
        # (the size test first: asking numba for its threads starts its thread pool)
        count, mapped, bcol, bw, slot = _serial_scratch(indices, ewgt, nc)
        cindptr, cvwgt = _contract_serial(indptr, indices, ewgt, vwgt, mapping, nc, count, mapped, bcol,
                                          bw, slot)
        # the coarse rows now lie merged at the front of the buckets: shrink them to the
        # coarse arrays (realloc, which shrinks large blocks in place; nothing else refers
        # to these arrays) rather than copying them out
        bcol.resize(cindptr[nc], refcheck=False)
        bw.resize(cindptr[nc], refcheck=False)
        return cindptr, bcol, bw, cvwgt
    with _default_split():
        return _contract_parallel(indptr, indices, ewgt, vwgt, mapping, nc, parallel_chunks(indices.shape[0]))


@contextlib.contextmanager
def _default_split():
    """numba's default split of a prange loop (one range per thread) rather than
    threads.CHUNKS_PER_TAKE, for the contraction kernels: their few chunks are balanced by
    work already, and taken one at a time they ran 3-7 x slower (delaunay 2^20 level 0, 2
    threads: 1.6 s against 0.23 s). Set here, not in the kernels: a kernel that sets it
    cannot be cached."""
    taken = numba.set_parallel_chunksize(0)
    try:
        yield
    finally:
        numba.set_parallel_chunksize(taken)


def _serial_scratch(indices, ewgt, nc):
    """_contract_serial's working arrays, allocated by numpy rather than inside the kernel:
    numpy asks for transparent huge pages on arrays of 4 MiB and more, numba's allocator
    does not, and the bucket fill's scattered writes and the merge's slot lookups then
    miss the TLB far less. The buckets hold at most every fine entry."""
    m = indices.shape[0]
    return (np.zeros((1, nc), dtype=np.int64), np.empty(m, dtype=indices.dtype),
            np.empty(m, dtype=indices.dtype), np.empty(m, dtype=ewgt.dtype),
            np.full(nc, -1, dtype=np.int64))


# O(n + m), streaming: (1) bucket every fine entry that leaves its coarse vertex into its
# coarse row (a counting sort by mapping[row]; fine rows are read in order rather than
# jumping to each coarse vertex's members, which cost a cache miss per member on large
# graphs); (2) sort each coarse row and merge its duplicate columns (_merge_rows); (3) copy
# the merged rows out. _contract_parallel runs each phase over `chunks` ranges (of fine
# vertices, then of coarse vertices); a chunk owns its scratch arrays and output ranges, and
# sums keep CSR order, so the result is the same for any number of chunks and threads.
# _contract_serial is the same phases on one range, compiled without threads: even one
# chunk in a parallel kernel wakes the thread pool, which slowed contended runs down
# (delaunay 2^20 coarsening, 2 busy cores: 2.1 s wall for 1.5 s CPU; without: 1.5 s).
@njit(cache=True)
def _contract_serial(indptr, indices, ewgt, vwgt, mapping, nc, count, mapped, bcol, bw, slot):
    # scratch (see _serial_scratch): count zeros (1, nc); mapped (coarse id of each entry's
    # column), bcol, bw of the fine entries' length; slot -1 (nc). Returns (coarse indptr,
    # coarse vertex weights); the coarse rows end up at the front of bcol and bw.
    n = indptr.shape[0] - 1
    _bucket_count(0, n, indptr, indices, mapping, mapped, count[0])
    bstart = bucket_starts(count)
    _bucket_fill(0, n, indptr, mapped, ewgt, mapping, count[0], bcol, bw)
    row_len = np.zeros(nc + 1, dtype=np.int64)
    _merge_rows(0, nc, bstart, bcol, bw, slot, row_len, np.empty(RANK_SORT_MAX, dtype=bcol.dtype),
                np.empty(RANK_SORT_MAX, dtype=bw.dtype))
    # move the merged rows to the front, in order (at <= bstart[c]: nothing unread is
    # overwritten). A separate pass: merging and moving each row in one loop, calling
    # _merge_rows per row, was slower (delaunay 2^20 level 0: 161 vs 131 ms in all).
    at = 0
    for c in range(nc):
        start = bstart[c]
        if at != start:
            for j in range(row_len[c + 1]):
                bcol[at + j] = bcol[start + j]
                bw[at + j] = bw[start + j]
        at += row_len[c + 1]
    return _prefix_in_place(row_len), coarse_vertex_weights(vwgt, mapping, nc)


def _contract_parallel(indptr, indices, ewgt, vwgt, mapping, nc, chunks):
    """The parallel bucket kernels' three calls, with their arrays allocated by numpy between
    them (transparent huge pages, see _serial_scratch: rgg 2^20's first clustered level, 2
    threads, called alone, 93-111 -> 70-83 ms and 22k page faults -> 1.5k: numba's allocator
    takes fresh 4 KiB pages for arrays above glibc's 32 MiB mmap threshold; whole partitions
    34k -> 12k page faults a run, no change of their time beyond the machine's noise)."""
    count = np.zeros((chunks, nc), dtype=np.int64)
    mapped = np.empty(indices.shape[0], dtype=indices.dtype)
    vbounds, bstart, longest = _parallel_count(indptr, indices, mapping, nc, chunks, count, mapped)
    bcol = np.empty(bstart[nc], dtype=indices.dtype)
    bw = np.empty(bstart[nc], dtype=ewgt.dtype)
    # slot rows for the rows too long to merge after a sort (hubs, clusters); meshes have none
    slots = np.full((chunks, nc if longest > INSERTION_SORT_MAX else 0), -1, dtype=np.int64)
    cbounds, cindptr = _parallel_fill_merge(indptr, ewgt, mapping, nc, chunks, vbounds, count, mapped, bstart, bcol, bw,
                                            slots)
    cindices = np.empty(cindptr[nc], dtype=indices.dtype)
    cewgt = np.empty(cindptr[nc], dtype=ewgt.dtype)
    cvwgt = _parallel_copy(chunks, cbounds, bstart, bcol, bw, cindptr, cindices, cewgt, vwgt, mapping, nc)
    return cindptr, cindices, cewgt, cvwgt


@njit(cache=True, parallel=PRANGE_ONLY)
def _parallel_count(indptr, indices, mapping, nc, chunks, count, mapped):
    vbounds = _balanced_bounds(indptr, chunks)
    for t in prange(chunks):
        _bucket_count(vbounds[t], vbounds[t + 1], indptr, indices, mapping, mapped, count[t])
    bstart = bucket_starts(count)
    longest = 0
    for c in range(nc):
        longest = max(longest, bstart[c + 1] - bstart[c])
    return vbounds, bstart, longest


@njit(cache=True, parallel=PRANGE_ONLY)
def _parallel_fill_merge(indptr, ewgt, mapping, nc, chunks, vbounds, count, mapped, bstart, bcol, bw, slots):
    for t in prange(chunks):
        _bucket_fill(vbounds[t], vbounds[t + 1], indptr, mapped, ewgt, mapping, count[t], bcol, bw)
    cbounds = _balanced_bounds(bstart, chunks)
    row_len = np.zeros(nc + 1, dtype=np.int64)
    for t in prange(chunks):
        tc = np.empty(RANK_SORT_MAX, dtype=bcol.dtype)
        tw = np.empty(RANK_SORT_MAX, dtype=bw.dtype)
        _merge_rows(cbounds[t], cbounds[t + 1], bstart, bcol, bw, slots[t], row_len, tc, tw)
    return cbounds, _prefix_in_place(row_len)


@njit(cache=True, parallel=PRANGE_ONLY)
def _parallel_copy(chunks, cbounds, bstart, bcol, bw, cindptr, cindices, cewgt, vwgt, mapping, nc):
    for t in prange(chunks):
        _copy_rows(cbounds[t], cbounds[t + 1], bstart, bcol, bw, cindptr, cindices, cewgt)
    return coarse_vertex_weights(vwgt, mapping, nc)


@njit(cache=True, internal=True)
def _prefix_in_place(row_len):
    """row_len[c + 1] = length of row c -> CSR indptr."""
    for c in range(row_len.shape[0] - 1):
        row_len[c + 1] += row_len[c]
    return row_len


@njit(cache=True, internal=True)
def _copy_rows(lo, hi, bstart, bcol, bw, cindptr, cindices, cewgt):
    """Merged rows lo..hi-1 (at the starts of their buckets) into the coarse CSR arrays."""
    for c in range(lo, hi):
        shift = bstart[c] - cindptr[c]
        for e in range(cindptr[c], cindptr[c + 1]):   # a loop, not slices: see _sort_row
            cindices[e] = bcol[e + shift]
            cewgt[e] = bw[e + shift]


@njit(cache=True, internal=True)
def _balanced_bounds(offsets, chunks):
    """Split rows 0..len(offsets)-2 into ``chunks`` consecutive ranges of about equal work
    (offsets[i] = work before row i, e.g. a CSR indptr)."""
    rows = offsets.shape[0] - 1
    bounds = np.searchsorted(offsets, np.arange(chunks + 1) * (offsets[rows] / chunks))
    bounds = np.minimum(bounds, rows)
    bounds[0] = 0
    bounds[chunks] = rows
    return bounds


@njit(cache=True, internal=True)
def _bucket_count(lo, hi, indptr, indices, mapping, mapped, count):
    """count[c] += entries of fine vertices lo..hi-1 in coarse vertex c that leave c; also
    mapped[e] = coarse id of entry e's column (the fill pass then reads it sequentially
    instead of gathering mapping[indices[e]] at random a second time). The random reads of
    mapping and count are prefetched a few entries / vertices ahead (see prefetch.py)."""
    last = indptr[hi] - PREFETCH_DISTANCE
    for v in range(lo, hi):
        c = mapping[v]
        if v + PREFETCH_DISTANCE < hi:
            prefetch(count, mapping[v + PREFETCH_DISTANCE])
        k = 0
        for e in range(indptr[v], indptr[v + 1]):
            if e < last:
                prefetch(mapping, indices[e + PREFETCH_DISTANCE])
            d = mapping[indices[e]]
            mapped[e] = d
            k += d != c
        count[c] += k


@njit(cache=True, internal=True)
def _bucket_fill(lo, hi, indptr, mapped, ewgt, mapping, pos, bcol, bw):
    """Append (coarse neighbour, weight) of every leaving entry to its coarse row at pos[c].
    Prefetched ahead: pos[c] two distances ahead, then the row's bucket slots one ahead."""
    for v in range(lo, hi):
        if v + 2 * PREFETCH_DISTANCE < hi:
            prefetch(pos, mapping[v + 2 * PREFETCH_DISTANCE])
        if v + PREFETCH_DISTANCE < hi:
            ahead = pos[mapping[v + PREFETCH_DISTANCE]]
            if ahead < bcol.shape[0]:
                prefetch(bcol, ahead)
                prefetch(bw, ahead)
        c = mapping[v]
        p = pos[c]
        for e in range(indptr[v], indptr[v + 1]):
            d = mapped[e]
            if d != c:
                bcol[p] = d
                bw[p] = ewgt[e]
                p += 1
        pos[c] = p


@njit(cache=True, internal=True)
def _merge_rows(lo, hi, bstart, bcol, bw, slot, row_len, tc, tw):
    """Sort each bucket row lo..hi-1 by column and merge its duplicate columns in place,
    weights summed in bucket order; row_len[c + 1] = its number of distinct columns.

    Short rows: a stable rank or insertion sort (see _rank_sort_row; tc, tw: its scratch of
    RANK_SORT_MAX entries), then adjacent duplicates merge (all in cache; the columns
    of a mesh-like graph in random order would make every slot lookup a cache miss).
    Long rows (hubs, clusters): slot[d] = position of column d in the row (-1 if absent),
    then a sort of the distinct columns. (rowsort.sort_merged_rows' counting sort of a chunk's
    long rows at once was no faster here, each chunk sweeping every coarse column: rgg 2^20,
    k = 32, 2 threads, whole runs 1.32-1.49 s against 1.34-1.37 s.)
    """
    for c in range(lo, hi):
        start = bstart[c]
        stop = bstart[c + 1]
        if stop - start <= INSERTION_SORT_MAX:
            if stop - start <= RANK_SORT_MAX:
                _rank_sort_row(bcol, bw, start, stop, tc, tw)
            else:
                _sort_row(bcol, bw, start, stop)
            row_len[c + 1] = merge_sorted_row(bcol, bw, start, stop, start) - start
            continue
        top = merge_unsorted_by_slots(bcol, bw, start, stop, slot)
        _sort_row(bcol, bw, start, top)
        row_len[c + 1] = top - start


def contract_xp(graph, mapping, n_coarse):
    """``contract`` as whole-array operations (the GPU's formulation; runs on numpy too): a
    sort of the mapped (row, col) keys plus a segmented sum, which is exact for int64 weights
    on both numpy and cupy (cupyx sparse matrices have no integer dtypes)."""
    be = graph.backend
    xp = be.xp
    mapping = be.to_device(mapping).astype(xp.int64, copy=False)
    nc = int(n_coarse)
    vwgt = sum_by_index(be, mapping, graph.vwgt, nc)

    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cr = mapping[rows]
    cc = mapping[graph.indices.astype(xp.int64)]
    off_diagonal = cr != cc
    cr, cc, w = cr[off_diagonal], cc[off_diagonal], graph.ewgt[off_diagonal]
    key = cr * max(nc, 1) + cc
    order = xp.argsort(key, kind="stable") if xp.__name__ == "numpy" else xp.argsort(key)
    key, w = key[order], w[order]
    if key.shape[0]:
        starts = xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), key[1:] != key[:-1]]))
        bounds = xp.concatenate([starts, xp.asarray([key.shape[0]], dtype=starts.dtype)])
        ewgt = be.segment_sum(w, bounds)
        ukey = key[starts]
    else:
        ewgt = w
        ukey = key
    crow = ukey // max(nc, 1)
    ccol = (ukey % max(nc, 1)).astype(xp.int32 if nc < 2**31 - 1 else xp.int64)
    if be.is_gpu:  # crow is sorted: row starts by binary search (CuPy's bincount syncs twice
        # and raises on an empty input, e.g. a level whose edges all contract)
        indptr = xp.searchsorted(crow, xp.arange(nc + 1, dtype=xp.int64))
    else:
        indptr = be.exclusive_cumsum(xp.bincount(crow, minlength=nc).astype(xp.int64))
    return Graph._trusted(indptr, ccol, ewgt.astype(graph.ewgt.dtype, copy=False), vwgt, be)
