"""Contraction one coarse vertex at a time (METIS's way), for graphs whose vertices' arrays fit
in the caches; coarsen/contract.py chooses between it and the bucket kernels, which stream
the fine rows in order (see GATHER_MAX_VERTICES there)."""
from __future__ import annotations

import numpy as np
from numba import prange

from ..chunks import bucket_starts
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from ..threads import PRANGE_ONLY
from .rowsort import RANK_SORT_MAX, _rank_sort_row, _sort_row

# contract_by_gathering_parallel's transposition splits the coarse rows into chunks of about
# this many entries (each chunk counts its entries per column: a row of n_coarse counters) ...
TRANSPOSE_CHUNK_ENTRIES = 1 << 17
# ... and both its gathering and its transposition into at most this many chunks: each fills
# a row of n_coarse slots or counters, which 64 chunks made cost more than they shared out
# (2 threads, a level alone: R-MAT 2^20's first 316 -> 285 ms, Barabasi-Albert 2^20's second
# 296 -> 245 ms; smaller levels within 5%). The chunks never change the result.
GATHER_MAX_CHUNKS = 16


@njit(cache=True, internal=True)
def _gather_row(c, start, first, members, indptr, indices, ewgt, mapping, slot, bcol, bw):
    """Coarse row c written from slot ``start`` of bcol / bw: the entries of its members
    (members[first[c]:first[c + 1]]) merged by coarse column d through slot[d] (d's slot in
    the row being built; slots before ``start`` are stale), summed in CSR order; entries
    inside c are dropped. Returns the row's end."""
    top = start
    for i in range(first[c], first[c + 1]):
        v = members[i]
        for e in range(indptr[v], indptr[v + 1]):
            d = mapping[indices[e]]
            if d == c:
                continue
            s = slot[d]
            if s < start:
                slot[d] = top
                bcol[top] = d
                bw[top] = ewgt[e]
                top += 1
            else:
                bw[s] += ewgt[e]
    return top


@njit(cache=True)
def contract_by_gathering(indptr, indices, ewgt, vwgt, mapping, nc, bcol, bw, by_transpose):
    """The coarse rows one coarse vertex at a time (METIS's way): walk its members' rows in
    fine id order and merge columns through slot[d] (position of column d in the row being
    built; positions before the row's start are stale). Sums run over the fine entries in
    CSR order, as in the bucket kernels, so the result is the same.

    Then the rows are sorted. ``by_transpose`` (integer weights): C is symmetric with exact
    sums, so writing every entry (c, d) to row d in order of c sorts all rows in one O(nnz)
    pass (a counting sort by column); dense coarse rows of power-law graphs cost a comparison
    sort each otherwise (R-MAT 2^16, first levels: 25 instead of 68 ms). Float sums in another
    order may differ in the last bit between (c, d) and (d, c), so float weights sort each
    row. bcol, bw: scratch for the fine entries. Returns (indptr, indices, ewgt, vwgt) of C.
    """
    n = indptr.shape[0] - 1
    first = np.zeros(nc + 1, dtype=np.int64)       # members by coarse vertex, in fine id order
    for v in range(n):
        first[mapping[v] + 1] += 1
    for c in range(nc):
        first[c + 1] += first[c]
    at = np.empty(nc, dtype=np.int64)
    for c in range(nc):
        at[c] = first[c]
    members = np.empty(n, dtype=np.int64)
    for v in range(n):
        c = mapping[v]
        members[at[c]] = v
        at[c] += 1
    slot = np.full(nc, -1, dtype=np.int64)
    cindptr = np.zeros(nc + 1, dtype=np.int64)
    top = 0
    for c in range(nc):
        top = _gather_row(c, top, first, members, indptr, indices, ewgt, mapping, slot, bcol, bw)
        cindptr[c + 1] = top
    cindices = np.empty(top, dtype=bcol.dtype)
    cewgt = np.empty(top, dtype=bw.dtype)
    if by_transpose:
        for c in range(nc):
            at[c] = cindptr[c]
        for c in range(nc):
            for s in range(cindptr[c], cindptr[c + 1]):
                d = bcol[s]
                p = at[d]
                cindices[p] = c
                cewgt[p] = bw[s]
                at[d] = p + 1
    else:
        tc = np.empty(RANK_SORT_MAX, dtype=bcol.dtype)
        tw = np.empty(RANK_SORT_MAX, dtype=bw.dtype)
        for c in range(nc):
            start, stop = cindptr[c], cindptr[c + 1]
            if stop - start <= RANK_SORT_MAX:
                _rank_sort_row(bcol, bw, start, stop, tc, tw)
            else:
                _sort_row(bcol, bw, start, stop)
        for s in range(top):
            cindices[s] = bcol[s]
            cewgt[s] = bw[s]
    return cindptr, cindices, cewgt, coarse_vertex_weights(vwgt, mapping, nc)


@njit(cache=True, parallel=PRANGE_ONLY)
def contract_by_gathering_parallel(indptr, indices, ewgt, vwgt, mapping, nc, by_transpose, chunk, transpose_chunk):
    """contract_by_gathering on the threads, with the same result: consecutive coarse vertices
    in chunks of about ``chunk`` fine entries (row_chunks; about GATHER_MAX_CHUNKS chunks at
    most), each coarse row gathered into its own range (its members' entries counted ahead),
    then the rows sorted per chunk, or transposed (``by_transpose``) in chunks of about
    ``transpose_chunk`` entries (TRANSPOSE_CHUNK_ENTRIES) that keep the order of the rows."""
    n = indptr.shape[0] - 1
    first = np.zeros(nc + 1, dtype=np.int64)       # members by coarse vertex, in fine id order
    bound = np.zeros(nc + 1, dtype=np.int64)       # their entries: the room of the coarse row
    for v in range(n):
        first[mapping[v] + 1] += 1
        bound[mapping[v] + 1] += indptr[v + 1] - indptr[v]
    for c in range(nc):
        first[c + 1] += first[c]
        bound[c + 1] += bound[c]
    at = first[:nc].copy()
    members = np.empty(n, dtype=np.int64)
    for v in range(n):
        c = mapping[v]
        members[at[c]] = v
        at[c] += 1
    bcol = np.empty(bound[nc], dtype=indices.dtype)
    bw = np.empty(bound[nc], dtype=ewgt.dtype)
    row_len = np.zeros(nc + 1, dtype=np.int64)
    crows = row_chunks(bound, max(chunk, bound[nc] // GATHER_MAX_CHUNKS))
    chunks = crows.shape[0] - 1
    for t in prange(chunks):
        slot = np.full(nc, -1, dtype=np.int64)    # as in contract_by_gathering
        for c in range(crows[t], crows[t + 1]):
            start = bound[c]
            row_len[c + 1] = _gather_row(c, start, first, members, indptr, indices, ewgt, mapping, slot, bcol,
                                         bw) - start
    for c in range(nc):
        row_len[c + 1] += row_len[c]
    cindptr = row_len
    cindices = np.empty(cindptr[nc], dtype=bcol.dtype)
    cewgt = np.empty(cindptr[nc], dtype=bw.dtype)
    if by_transpose:
        tchunks = max(1, min(GATHER_MAX_CHUNKS, cindptr[nc] // transpose_chunk))
        rows = np.minimum(np.searchsorted(cindptr, np.arange(tchunks + 1) * (cindptr[nc] / tchunks)), nc)
        rows[0] = 0
        rows[tchunks] = nc
        pos = np.zeros((tchunks, nc), dtype=np.int64)  # entries of chunk t in column d, then its write position
        for t in prange(tchunks):
            for c in range(rows[t], rows[t + 1]):
                for s in range(bound[c], bound[c] + cindptr[c + 1] - cindptr[c]):
                    pos[t, bcol[s]] += 1
        bucket_starts(pos)   # C is symmetric: column d's buckets start where row d does, at cindptr[d]
        for t in prange(tchunks):
            for c in range(rows[t], rows[t + 1]):
                for s in range(bound[c], bound[c] + cindptr[c + 1] - cindptr[c]):
                    d = bcol[s]
                    p = pos[t, d]
                    cindices[p] = c
                    cewgt[p] = bw[s]
                    pos[t, d] = p + 1
    else:
        for t in prange(chunks):
            tc = np.empty(RANK_SORT_MAX, dtype=bcol.dtype)
            tw = np.empty(RANK_SORT_MAX, dtype=bw.dtype)
            for c in range(crows[t], crows[t + 1]):
                start, stop = bound[c], bound[c] + cindptr[c + 1] - cindptr[c]
                if stop - start <= RANK_SORT_MAX:
                    _rank_sort_row(bcol, bw, start, stop, tc, tw)
                else:
                    _sort_row(bcol, bw, start, stop)
                for s in range(start, stop):
                    cindices[cindptr[c] + s - start] = bcol[s]
                    cewgt[cindptr[c] + s - start] = bw[s]
    return cindptr, cindices, cewgt, coarse_vertex_weights(vwgt, mapping, nc)


@njit(cache=True, internal=True)
def row_chunks(bound, entries):
    """Chunk boundaries over the rows of the prefix sums ``bound`` (n + 1 entries): each chunk
    of consecutive rows closes once it holds ``entries`` entries or more. The split follows
    the data, never the threads; by rows alone, one chunk of R-MAT's dense coarse rows held
    most of a level's entries and a second thread sped its gathering up by 1.0-1.2 x."""
    n = bound.shape[0] - 1
    rows = np.empty(n + 1, dtype=np.int64)
    rows[0] = 0
    count = 1
    for c in range(n):
        if bound[c + 1] - bound[rows[count - 1]] >= entries:
            rows[count] = c + 1
            count += 1
    if rows[count - 1] < n:
        rows[count] = n
        count += 1
    return rows[:count]


@njit(cache=True, internal=True)
def coarse_vertex_weights(vwgt, mapping, nc):
    """Summed vertex weights of the coarse vertices (in fine id order)."""
    cvwgt = np.zeros(nc, dtype=vwgt.dtype)
    n = mapping.shape[0]
    for v in range(n):
        if v + PREFETCH_DISTANCE < n:
            prefetch(cvwgt, mapping[v + PREFETCH_DISTANCE])
        cvwgt[mapping[v]] += vwgt[v]
    return cvwgt
