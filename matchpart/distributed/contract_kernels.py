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
from ..coarsen.rowsort import (INSERTION_SORT_MAX, RANK_SORT_MAX, _insertion_sort_pairs, _rank_sort_row,
                               merge_sorted_row, merge_unsorted_by_slots, sort_merged_rows)
from ..prefetch import PREFETCH_DISTANCE, prefetch



@njit(cache=True)
def coarse_entries(indptr, adj, ewgt, cid_ext, owner, size, skip):
    """Per own entry whose ends lie in different coarse vertices and whose row's coarse
    owner (owner[row]) is not ``skip``: (coarse row, coarse column, weight), grouped by that
    owner in entry order within a group (``skip``'s group empty: merge_rows reads those
    rows in place; -1 skips none). Returns (counts per rank, rows, columns, weights). One
    pass over the entries (each reads a random coarse id: a second counting pass cost as
    much as the fill), into slots sized by the rows' lengths, then the groups are closed up."""
    nl = indptr.shape[0] - 1
    start = np.zeros(size + 1, dtype=np.int64)
    for v in range(nl):
        if owner[v] != skip:
            start[owner[v] + 1] += indptr[v + 1] - indptr[v]
    for r in range(size):
        start[r + 1] += start[r]
    at = start[:size].copy()
    total = indptr[nl]
    rows = np.empty(total, dtype=np.int64)
    cols = np.empty(total, dtype=np.int64)
    w = np.empty(total, dtype=ewgt.dtype)
    for v in range(nl):
        r = owner[v]
        if r == skip:
            continue
        cv = cid_ext[v]
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
def merge_rows(indptr, adj, ewgt, cid_ext, owner, rank, first, nc, rrows, rcols, rw, before, bc, bw, mapped, slot):
    """Coarse CSR (indptr, columns, weights) of this rank's ``nc`` coarse rows (global ids
    ``first`` + local row): the own fine rows whose coarse owner is ``rank`` (read in place,
    as coarse_entries would list them), and the entries (row, column, weight) received from
    the other ranks, the first ``before`` of them from lower ranks. Columns ascending in each
    row; duplicates summed in arrival order (lower ranks, own rows, higher ranks), as a
    merge of every rank's coarse_entries would. Scratch, allocated by numpy (transparent huge
    pages: the bucket fill's scattered writes miss the TLB far less, as in coarsen.contract):
    ``bc``, ``bw`` of the entries' total length, ``mapped`` of the own entries' length.
    Not materialising the own entries as triples saved ~25% of delaunay 2^20's P = 1
    contraction. ``slot``: -1 for every global coarse vertex, or an empty array: long rows
    (hubs, clusters) then merge through it in linear time, as the single process merges
    them, instead of a stable sort (R-MAT 2^18, P = 1, its two clustered levels: 480 -> 316 ms
    and 321 -> 115 ms), and are sorted together after the loop (rowsort.sort_merged_rows)."""
    nl = indptr.shape[0] - 1
    ne = rrows.shape[0]
    ptr = np.zeros(nc + 1, dtype=np.int64)
    for i in range(ne):
        ptr[rrows[i] - first + 1] += 1
    total = indptr[nl]
    for v in range(nl):
        if owner[v] != rank:
            continue
        cv = cid_ext[v]
        n_off = 0
        for e in range(indptr[v], indptr[v + 1]):
            if e + PREFETCH_DISTANCE < total:
                prefetch(cid_ext, adj[e + PREFETCH_DISTANCE])
            cu = cid_ext[adj[e]]
            mapped[e] = cu
            n_off += cu != cv
        ptr[cv - first + 1] += n_off
    for r in range(nc):
        ptr[r + 1] += ptr[r]
    fill = ptr[:-1].copy()
    for i in range(before):
        r = rrows[i] - first
        j = fill[r]
        bc[j], bw[j] = rcols[i], rw[i]
        fill[r] = j + 1
    for v in range(nl):
        if owner[v] != rank:
            continue
        cv = cid_ext[v]
        r = cv - first
        j = fill[r]
        for e in range(indptr[v], indptr[v + 1]):
            cu = mapped[e]
            if cu != cv:
                bc[j], bw[j] = cu, ewgt[e]
                j += 1
        fill[r] = j
    for i in range(before, ne):
        r = rrows[i] - first
        j = fill[r]
        bc[j], bw[j] = rcols[i], rw[i]
        fill[r] = j + 1
    tc = np.empty(RANK_SORT_MAX, dtype=bc.dtype)
    tw = np.empty(RANK_SORT_MAX, dtype=bw.dtype)
    out_ptr = np.zeros(nc + 1, dtype=np.int64)
    long_start = np.empty(nc if slot.shape[0] else 0, dtype=np.int64)    # the merged long rows
    long_end = np.empty_like(long_start)
    n_long = 0
    k = 0
    for r in range(nc):
        lo, hi = ptr[r], ptr[r + 1]
        if hi - lo <= RANK_SORT_MAX:
            _rank_sort_row(bc, bw, lo, hi, tc, tw)
        elif hi - lo <= INSERTION_SORT_MAX:
            _insertion_sort_pairs(bc, bw, lo, hi)
        elif slot.shape[0]:
            # duplicates summed in arrival order into their first slot (the same sums as the
            # stable sort and merge below), the distinct columns sorted after the loop
            top = merge_unsorted_by_slots(bc, bw, lo, hi, slot)
            long_start[n_long] = k
            for i in range(lo, top):   # down to k <= lo
                bc[k + i - lo] = bc[i]
                bw[k + i - lo] = bw[i]
            k += top - lo
            long_end[n_long] = k
            n_long += 1
            out_ptr[r + 1] = k
            continue
        else:   # hubs: a stable sort (the row may repeat columns, so not _quicksort_pairs)
            order = np.argsort(bc[lo:hi], kind="mergesort")
            sc = bc[lo:hi][order]
            sw = bw[lo:hi][order]
            bc[lo:hi] = sc
            bw[lo:hi] = sw
        k = merge_sorted_row(bc, bw, lo, hi, k)   # down to k <= lo: nothing unread is overwritten
        out_ptr[r + 1] = k
    if n_long:
        sort_merged_rows(bc, bw, long_start[:n_long], long_end[:n_long], slot.shape[0])
    return out_ptr, bc[:k].copy(), bw[:k].copy()


@njit(cache=True)
def count_leaders(mate, first):
    """Own vertices that lead their coarse vertex: free ones, and the smaller id of a pair."""
    count = 0
    for i in range(mate.shape[0]):
        if mate[i] < 0 or mate[i] > first + i:
            count += 1
    return count


@njit(cache=True)
def pair_ids(mate, first, offset):
    """(coarse id of every own vertex, the own followers whose leader lies on a lower rank):
    leaders numbered from ``offset`` in id order, a follower given its own leader's id (-1
    for the far ones, which ask the leader's rank). One pass each, where the whole-array
    version's temporaries cost delaunay 2^20 at P = 2 40 ms a run."""
    nl = mate.shape[0]
    cid = np.empty(nl, dtype=np.int64)
    at = offset
    n_far = 0
    for i in range(nl):
        m = mate[i]
        if m < 0 or m > first + i:
            cid[i] = at
            at += 1
        elif m < first:
            n_far += 1
    far = np.empty(n_far, dtype=np.int64)
    j = 0
    for i in range(nl):
        m = mate[i]
        if m >= 0 and m < first + i:
            if m >= first:
                cid[i] = cid[m - first]
            else:
                cid[i] = -1
                far[j] = i
                j += 1
    return cid, far


@njit(cache=True)
def foreign(owner, rank):
    """Indices of the own vertices whose coarse vertex another rank owns."""
    n_far = 0
    for v in range(owner.shape[0]):
        n_far += owner[v] != rank
    far = np.empty(n_far, dtype=np.int64)
    j = 0
    for v in range(owner.shape[0]):
        if owner[v] != rank:
            far[j] = v
            j += 1
    return far


@njit(cache=True)
def add_own(out, cid, vwgt, owner, rank, first):
    """out[cid[v] - first] += vwgt[v] for the own vertices whose coarse vertex is this rank's."""
    for v in range(cid.shape[0]):
        if owner[v] == rank:
            out[cid[v] - first] += vwgt[v]


@njit(cache=True)
def add_at(out, index, values):
    """out[index[i]] += values[i] (np.add.at, without its per-item overhead)."""
    for i in range(index.shape[0]):
        out[index[i]] += values[i]
