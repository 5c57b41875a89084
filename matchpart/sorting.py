"""A stable argsort for compiled kernels, small enough to compile quickly.

numba's own sorts (np.argsort, np.sort, kind="mergesort" or not) are generic templates that
cost about a second of compile time per key dtype and kind on the first run after
installing; this merge sort compiles in a fraction of that, and kernels call it with
float64 keys only (exact for integer keys below 2**53), so it compiles once.
"""
from __future__ import annotations

import numpy as np

from .jit import njit

# Runs of this many positions are sorted by insertion before the merges (fewer passes over
# short inputs, which are the common case: the rows and groups kernels sort are short).
_RUN = 16


@njit(cache=True, internal=True)
def argsort_stable(keys):
    """Positions 0..len(keys)-1 in ascending order of keys (float64, no NaN); equal keys keep
    their order, as numpy.argsort(keys, kind="stable")."""
    m = keys.shape[0]
    a = np.arange(m)
    ordered = True
    for i in range(1, m):
        if keys[i] < keys[i - 1]:
            ordered = False
            break
    if ordered:                # e.g. unit vertex weights in two-hop pairing: nothing to do
        return a
    for lo in range(0, m, _RUN):
        hi = min(lo + _RUN, m)
        for j in range(lo + 1, hi):
            p = a[j]
            key = keys[p]
            i = j - 1
            while i >= lo and keys[a[i]] > key:
                a[i + 1] = a[i]
                i -= 1
            a[i + 1] = p
    if m <= _RUN:
        return a
    b = np.empty(m, dtype=np.int64)
    width = _RUN
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if keys[a[j]] < keys[a[i]]:   # strict: the left run wins ties (stable)
                    b[o] = a[j]
                    j += 1
                else:
                    b[o] = a[i]
                    i += 1
                o += 1
            while i < mid:
                b[o] = a[i]
                i += 1
                o += 1
            while j < hi:
                b[o] = a[j]
                j += 1
                o += 1
        a, b = b, a
        width *= 2
    return a


# then_by_small_key counts where the items number at least 1 / this of the key range, else
# merge-sorts them (a clustered level leaves a few percent of its vertices to group or pair,
# and passes over every key cost more than the sort: rgg 2^20, k = 32, two-hop pairing's five
# calls 18-22 -> 9 ms).
COUNTING_SHARE = 8


@njit(cache=True, internal=True)
def then_by_small_key(order, key, bound):
    """``order`` (positions) stably reordered by key[order[t]], keys in 0..bound-1: positions
    in order of (key, their place in ``order``)."""
    m = order.shape[0]
    out = np.empty(m, dtype=np.int64)
    if m * COUNTING_SHARE >= bound:
        start = np.zeros(bound + 1, dtype=np.int64)
        for t in range(m):
            start[key[order[t]] + 1] += 1
        for c in range(bound):
            start[c + 1] += start[c]
        for t in range(m):
            j = order[t]
            out[start[key[j]]] = j
            start[key[j]] += 1
        return out
    ordered_keys = np.empty(m, dtype=np.float64)   # exact: keys below 2**53
    for t in range(m):
        ordered_keys[t] = key[order[t]]
    by_key = argsort_stable(ordered_keys)
    for t in range(m):
        out[t] = order[by_key[t]]
    return out


@njit(cache=True, internal=True)
def _before(a, x, b, y, rows):
    """Whether record x of a comes strictly before record y of b (their first ``rows`` keys)."""
    for r in range(rows):
        if a[x, r] != b[y, r]:
            return a[x, r] < b[y, r]
    return False


@njit(cache=True, internal=True)
def _copy_record(src, i, dst, j):
    for r in range(src.shape[1]):
        dst[j, r] = src[i, r]


@njit(cache=True, internal=True)
def lexsort_rows(keys):
    """Positions 0..m-1 sorted by the columns of keys (float64 rows, row 0 most significant,
    then by position): numpy.lexsort(keys[::-1]).

    One stable merge sort of records (a column's keys and its position side by side) that
    moves the records themselves, so every pass streams through memory: sorting positions
    and comparing the keys they point to missed the cache on most comparisons of the late
    passes (R-MAT 2^20's finest Jet, rebalancing's 3-key sorts of ~250k movers: 0.66 -> 0.32 s)."""
    rows, m = keys.shape
    t = np.empty((m, rows + 1), dtype=np.float64)
    for i in range(m):
        for r in range(rows):
            t[i, r] = keys[r, i]
        t[i, rows] = i
    held = np.empty((1, rows + 1), dtype=np.float64)
    for lo in range(0, m, _RUN):
        hi = min(lo + _RUN, m)
        for j in range(lo + 1, hi):
            _copy_record(t, j, held, 0)
            i = j - 1
            while i >= lo and _before(held, 0, t, i, rows):
                _copy_record(t, i, t, i + 1)
                i -= 1
            _copy_record(held, 0, t, i + 1)
    if m > _RUN:
        b = np.empty_like(t)
        width = _RUN
        while width < m:
            for lo in range(0, m, 2 * width):
                mid = min(lo + width, m)
                hi = min(lo + 2 * width, m)
                i, j, o = lo, mid, lo
                while i < mid and j < hi:
                    if _before(t, j, t, i, rows):    # strict: the left run wins ties (stable)
                        _copy_record(t, j, b, o)
                        j += 1
                    else:
                        _copy_record(t, i, b, o)
                        i += 1
                    o += 1
                while i < mid:
                    _copy_record(t, i, b, o)
                    i += 1
                    o += 1
                while j < hi:
                    _copy_record(t, j, b, o)
                    j += 1
                    o += 1
            t, b = b, t
            width *= 2
    out = np.empty(m, dtype=np.int64)
    for i in range(m):
        out[i] = np.int64(t[i, rows])
    return out
