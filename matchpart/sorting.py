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


@njit(cache=True, internal=True)
def _before(t, x, y):
    """Whether column x of the keys comes strictly before column y (t: keys transposed)."""
    for r in range(t.shape[1]):
        if t[x, r] != t[y, r]:
            return t[x, r] < t[y, r]
    return False


@njit(cache=True, internal=True)
def lexsort_rows(keys):
    """Positions 0..m-1 sorted by the columns of keys (float64 rows, row 0 most significant,
    then by position): numpy.lexsort(keys[::-1]).

    One stable merge sort comparing whole columns, not one argsort_stable per row: the
    rebalancer's 4-row sorts of ~140k movers per Jet iteration on R-MAT 2^19 took 0.48 s
    of a 1.5 s rebalancing the other way (one pass per row, each gathering its row anew)."""
    rows, m = keys.shape
    t = np.empty((m, rows), dtype=keys.dtype)      # a column's keys side by side
    for r in range(rows):
        for i in range(m):
            t[i, r] = keys[r, i]
    a = np.arange(m)
    for lo in range(0, m, _RUN):
        hi = min(lo + _RUN, m)
        for j in range(lo + 1, hi):
            p = a[j]
            i = j - 1
            while i >= lo and _before(t, p, a[i]):
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
                if _before(t, a[j], a[i]):    # strict: the left run wins ties (stable)
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
