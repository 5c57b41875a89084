"""Compiled passes of the distributed contraction (contract.py): the coarse entries of a
rank's rows grouped by the rank that owns their coarse row, and the merge of the received
entries into coarse rows.

The whole-array version sorted all m entries by destination and then by an int64 key
(row * n_coarse + column) and summed runs with reduceat: on delaunay 2^20 at P = 1 those
sorts and temporaries were 4.1 s of a 9.9 s run. Here grouping is a counting sort by rank
and merging a counting sort by row plus a stable sort inside each (short) row, which keeps
the whole-array version's order: the same coarse graph, duplicates summed one by one in
arrival order (float weights may differ from reduceat's sums in the last bit).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch

# Rows up to this length are sorted by insertion (stable, in place); longer ones (hubs of
# power-law graphs) by a stable argsort. Delaunay's coarse rows hold ~6-12 entries, where an
# argsort call's allocations cost more than the sort.
INSERTION_MAX = 32


@njit(cache=True)
def coarse_entries(indptr, adj, ewgt, cid_ext, owner, size):
    """Per own entry whose ends lie in different coarse vertices: (coarse row, coarse column,
    weight), grouped by owner[row] (the coarse row's rank) in entry order within a group.
    Returns (counts per rank, rows, columns, weights). One pass over the entries (each
    reads a random coarse id: a second counting pass cost as much as the fill), into slots
    sized by the rows' lengths, then the groups are closed up."""
    nl = indptr.shape[0] - 1
    start = np.zeros(size + 1, dtype=np.int64)
    for v in range(nl):
        start[owner[v] + 1] += indptr[v + 1] - indptr[v]
    for r in range(size):
        start[r + 1] += start[r]
    at = start[:size].copy()
    total = indptr[nl]
    rows = np.empty(total, dtype=np.int64)
    cols = np.empty(total, dtype=np.int64)
    w = np.empty(total, dtype=ewgt.dtype)
    for v in range(nl):
        cv = cid_ext[v]
        r = owner[v]
        i = at[r]
        for e in range(indptr[v], indptr[v + 1]):
            if e + PREFETCH_DISTANCE < total:
                prefetch(cid_ext, adj[e + PREFETCH_DISTANCE])
            cu = cid_ext[adj[e]]
            if cu != cv:
                rows[i], cols[i], w[i] = cv, cu, ewgt[e]
                i += 1
        at[r] = i
    counts = np.empty(size, dtype=np.int64)
    k = 0
    for r in range(size):   # close up: group r's entries move down to k
        counts[r] = at[r] - start[r]
        if k != start[r]:
            for i in range(start[r], at[r]):
                rows[k + i - start[r]] = rows[i]
                cols[k + i - start[r]] = cols[i]
                w[k + i - start[r]] = w[i]
        k += counts[r]
    return counts, rows[:k], cols[:k], w[:k]


@njit(cache=True)
def merge_rows(rows, cols, w, nc):
    """Coarse CSR (indptr, columns, weights) of ``nc`` local rows from entries (local row,
    column, weight): columns ascending in each row, duplicates summed in arrival order."""
    indptr = np.zeros(nc + 1, dtype=np.int64)
    for i in range(rows.shape[0]):
        indptr[rows[i] + 1] += 1
    for r in range(nc):
        indptr[r + 1] += indptr[r]
    fill = indptr[:-1].copy()
    bc = np.empty(rows.shape[0], dtype=np.int64)
    bw = np.empty(rows.shape[0], dtype=w.dtype)
    for i in range(rows.shape[0]):
        j = fill[rows[i]]
        bc[j], bw[j] = cols[i], w[i]
        fill[rows[i]] += 1
    out_ptr = np.zeros(nc + 1, dtype=np.int64)
    out_c = np.empty(rows.shape[0], dtype=np.int64)
    out_w = np.empty(rows.shape[0], dtype=w.dtype)
    k = 0
    for r in range(nc):
        lo, hi = indptr[r], indptr[r + 1]
        if hi - lo <= INSERTION_MAX:
            for i in range(lo + 1, hi):   # stable insertion sort by column
                x, y = bc[i], bw[i]
                j = i - 1
                while j >= lo and bc[j] > x:
                    bc[j + 1], bw[j + 1] = bc[j], bw[j]
                    j -= 1
                bc[j + 1], bw[j + 1] = x, y
        else:
            order = np.argsort(bc[lo:hi], kind="mergesort")
            sc = bc[lo:hi][order]
            sw = bw[lo:hi][order]
            bc[lo:hi] = sc
            bw[lo:hi] = sw
        i = lo
        while i < hi:
            col = bc[i]
            acc = bw[i]
            i += 1
            while i < hi and bc[i] == col:
                acc += bw[i]
                i += 1
            out_c[k], out_w[k] = col, acc
            k += 1
        out_ptr[r + 1] = k
    return out_ptr, out_c[:k].copy(), out_w[:k].copy()


@njit(cache=True)
def add_at(out, index, values):
    """out[index[i]] += values[i] (np.add.at, without its per-item overhead)."""
    for i in range(index.shape[0]):
        out[index[i]] += values[i]
