"""Sorting one coarse row in place (columns ascending, weights carried along): the merge
step of contract.py's kernel, which sorts every coarse row of every level.

Loops of their own rather than np.argsort or slice assignments: numba's sort templates and
slicing cost seconds of compile time on the first run, and sorting the pairs in place needs
no permutation and no gathers.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit

# Coarse rows with up to this many fine entries are merged after a stable sort of the row
# (typical rows have 10-30 entries, which then stay in cache); longer rows (hubs) by a dense
# scratch row plus a sort, which is linear in the row length plus the distinct columns' sort.
INSERTION_SORT_MAX = 48
# Short rows up to this many entries are sorted by rank (quadratic compares without
# branches), longer ones by insertion (quadratic moves, but fewer of them).
RANK_SORT_MAX = 24
# Long merged rows are sorted all at once by counting (sort_rows_by_counting) when the
# columns are at most this many per entry to sort, so that its pass over every column stays
# below the comparison sorts' log2 of 50-250 entries a row; set from that estimate, not tuned
# (R-MAT 2^18's clustered levels at P = 2 have 0.1-0.2 columns per entry).
COUNTING_COLUMNS_PER_ENTRY = 8


@njit(cache=True, internal=True)
def _rank_sort_row(cols, wgts, start, stop, tc, tw):
    """Stable sort of a short row cols[start:stop] (at most RANK_SORT_MAX entries),
    carrying wgts along: each entry goes to its rank, the number of entries before it in
    the sorted order (smaller columns, and equal ones earlier in the row). Quadratic but
    without branches: an insertion sort of the ~10-entry rows of mesh-like graphs spent
    most of its time in mispredicted loop exits (delaunay 2^20, level 0: 55 -> 33 ms)."""
    k = stop - start
    for i in range(k):
        tc[i] = cols[start + i]
        tw[i] = wgts[start + i]
    for i in range(k):
        x = tc[i]
        r = 0
        for j in range(k):
            r += (tc[j] < x) | ((tc[j] == x) & (j < i))
        cols[start + r] = x
        wgts[start + r] = tw[i]


@njit(cache=True, internal=True)
def merge_sorted_row(cols, wgts, start, stop, to):
    """Merge the duplicate columns of the sorted row cols[start:stop] (weights summed in row
    order) into cols[to:], to <= start; returns the end of the merged row. Without branches
    (whether a column repeats is a coin flip): a new column goes to the end, a repeat adds
    its weight to the entry before it."""
    top = to
    for i in range(start, stop):
        d, w = cols[i], wgts[i]
        new = (top == to) | (cols[top - 1] != d)
        t = top - 1 + new
        prev = wgts[t]
        cols[t] = d
        wgts[t] = w if new else prev + w
        top += new
    return top


@njit(cache=True, internal=True)
def merge_unsorted_by_slots(cols, wgts, start, stop, slot):
    """Merge the duplicate columns of the row cols[start:stop] (any order) in place: each
    column's weights summed in row order into its first position, found through ``slot``
    (-1 for every column; restored on return); the distinct columns stay in order of first
    arrival (sort_merged_rows sorts them). Returns the end of the merged row. Linear in the
    row: the long rows of hubs and clusters."""
    top = start
    for i in range(start, stop):
        d = cols[i]
        s = slot[d]
        if s < 0:
            slot[d] = top
            cols[top] = d
            wgts[top] = wgts[i]
            top += 1
        else:
            wgts[s] += wgts[i]
    for j in range(start, top):
        slot[cols[j]] = -1
    return top


@njit(cache=True, internal=True)
def sort_merged_rows(cols, wgts, starts, ends, n_columns):
    """Sort the rows cols[starts[i]:ends[i]] (disjoint, distinct columns in 0..n_columns-1)
    in place: all at once by counting where they hold enough entries (see
    COUNTING_COLUMNS_PER_ENTRY), else each by comparison."""
    total = 0
    for i in range(starts.shape[0]):
        total += ends[i] - starts[i]
    if total * COUNTING_COLUMNS_PER_ENTRY >= n_columns:
        sort_rows_by_counting(cols, wgts, starts, ends, n_columns)
        return
    for i in range(starts.shape[0]):
        _sort_row(cols, wgts, starts[i], ends[i])


@njit(cache=True, internal=True)
def sort_rows_by_counting(cols, wgts, starts, ends, n_columns):
    """Sort the rows cols[starts[i]:ends[i]] (disjoint, each of distinct columns in
    0..n_columns-1) in place, weights carried along, by two counting sorts: their entries by
    column, then back to their rows in column order. O(entries + n_columns) for all of them
    at once, where a comparison sort of each long row costs its length's log: the distributed
    merge of R-MAT 2^18's first clustered level at P = 2 (10170 rows of ~250 distinct columns
    per rank) took 0.29 -> 0.15 s on rank 0 and 0.21 -> 0.18 s on rank 1 (the same rows)."""
    at = np.zeros(n_columns + 1, dtype=np.int64)
    total = 0
    for i in range(starts.shape[0]):
        total += ends[i] - starts[i]
        for s in range(starts[i], ends[i]):
            at[cols[s] + 1] += 1
    for d in range(n_columns):
        at[d + 1] += at[d]
    row_of = np.empty(total, dtype=np.int64)
    w_of = np.empty(total, dtype=wgts.dtype)
    for i in range(starts.shape[0]):
        for s in range(starts[i], ends[i]):
            p = at[cols[s]]
            row_of[p] = i
            w_of[p] = wgts[s]
            at[cols[s]] = p + 1
    fill = starts.copy()
    p = 0
    for d in range(n_columns):      # at[d] is now column d's end
        while p < at[d]:
            i = row_of[p]
            cols[fill[i]] = d
            wgts[fill[i]] = w_of[p]
            fill[i] += 1
            p += 1


@njit(cache=True, internal=True)
def _sort_row(cols, wgts, start, stop):
    """Sort cols[start:stop] ascending, carrying wgts along; stable for short rows (equal
    columns keep their order), long rows must have distinct columns."""
    if stop - start <= INSERTION_SORT_MAX:
        _insertion_sort_pairs(cols, wgts, start, stop)
        return
    _quicksort_pairs(cols, wgts, start, stop)


@njit(cache=True)
def sort_rows_distinct(indptr, cols, wgts):
    """Sort every row of a CSR graph in place (rows of distinct columns), weights carried."""
    tc = np.empty(RANK_SORT_MAX, dtype=cols.dtype)
    tw = np.empty(RANK_SORT_MAX, dtype=wgts.dtype)
    for v in range(indptr.shape[0] - 1):
        start, stop = indptr[v], indptr[v + 1]
        if stop - start <= RANK_SORT_MAX:
            _rank_sort_row(cols, wgts, start, stop, tc, tw)
        else:
            _sort_row(cols, wgts, start, stop)


@njit(cache=True, internal=True)
def _insertion_sort_pairs(cols, wgts, start, stop):
    """Stable insertion sort of cols[start:stop] ascending, carrying wgts along (short ranges)."""
    for j in range(start + 1, stop):
        c, w = cols[j], wgts[j]
        i = j - 1
        while i >= start and cols[i] > c:
            cols[i + 1] = cols[i]
            wgts[i + 1] = wgts[i]
            i -= 1
        cols[i + 1] = c
        wgts[i + 1] = w


# Ranges up to this long are finished by insertion sort in _quicksort_pairs.
_QUICKSORT_CUTOFF = 16


@njit(cache=True, internal=True)
def _quicksort_pairs(cols, wgts, start, stop):
    """Sort cols[start:stop] (distinct values) ascending, carrying wgts along, in place.

    A quicksort of its own rather than np.argsort: numba's sort templates cost about a second
    of compile time per dtype on the first run, and sorting the pairs in place needs no
    permutation and no gathers. Median-of-three pivots; the smaller side is sorted first and
    the larger one waits on a stack, so the stack holds at most log2(n) ranges.
    """
    stack = np.empty(128, dtype=np.int64)
    top = 0
    lo, hi = start, stop - 1
    while True:
        while hi - lo > _QUICKSORT_CUTOFF:
            mid = (lo + hi) >> 1
            a, b, c = cols[lo], cols[mid], cols[hi]
            pivot = max(min(a, b), min(max(a, b), c))
            i, j = lo, hi
            while i <= j:
                while cols[i] < pivot:
                    i += 1
                while cols[j] > pivot:
                    j -= 1
                if i <= j:
                    cols[i], cols[j] = cols[j], cols[i]
                    wgts[i], wgts[j] = wgts[j], wgts[i]
                    i += 1
                    j -= 1
            if j - lo < hi - i:          # [lo, j] is the smaller side: sort it now
                stack[top], stack[top + 1] = i, hi
                hi = j
            else:
                stack[top], stack[top + 1] = lo, j
                lo = i
            top += 2
        _insertion_sort_pairs(cols, wgts, lo, hi + 1)
        if top == 0:
            return
        top -= 2
        lo, hi = stack[top], stack[top + 1]
