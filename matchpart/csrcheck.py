"""Compiled O(nnz) checks of CSR adjacency arrays, shared by the Graph constructor and the readers.

Each check returns where the first problem is (positions and vertices, 0-based) and leaves
the wording to the caller: the constructor speaks of 0-based vertices, a file reader of
1-based ids and file lines.
"""
from __future__ import annotations

import numpy as np

from .jit import njit

# what a check found
OK, OUT_OF_RANGE, SELF_LOOP, ASYMMETRIC, WEIGHT_MISMATCH = 0, 1, 2, 3, 4


@njit(cache=True)
def first_bad_neighbor(indptr, indices):
    """(OUT_OF_RANGE or SELF_LOOP, row, position) of the first neighbour outside 0..n-1 or
    equal to its own row; (OK, -1, -1) when there is none."""
    n = indptr.shape[0] - 1
    for u in range(n):
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if v < 0 or v >= n:
                return OUT_OF_RANGE, u, k
            if v == u:
                return SELF_LOOP, u, k
    return OK, -1, -1


@njit(cache=True)
def sort_rows(indptr, indices, weights):
    """Sort every row by neighbour id in place, carrying ``weights`` along (stable, so equal
    neighbours keep their order). Rows already sorted, the usual case, cost one comparison
    per entry. ``weights`` may be empty (no weights to carry)."""
    carry = weights.shape[0] > 0
    for u in range(indptr.shape[0] - 1):
        a, b = indptr[u], indptr[u + 1]
        ordered = True
        for k in range(a + 1, b):
            if indices[k] < indices[k - 1]:
                ordered = False
                break
        if ordered:
            continue
        order = np.argsort(indices[a:b], kind="mergesort")
        indices[a:b] = indices[a:b][order]
        if carry:
            weights[a:b] = weights[a:b][order]


@njit(cache=True)
def first_duplicate(indptr, indices):
    """Position k of the first neighbour listed twice in its row (rows sorted), or -1."""
    for u in range(indptr.shape[0] - 1):
        for k in range(indptr[u] + 1, indptr[u + 1]):
            if indices[k] == indices[k - 1]:
                return k
    return -1


@njit(cache=True)
def first_asymmetry(indptr, indices, weights):
    """(code, u, v, k, p): the first entry whose mirror is missing or differs in weight.

    Needs sorted rows without repeats or self-loops. Each pair is checked once, from its
    smaller end: walking the rows u = 0, 1, ... in order, an entry (u, v) with v > u must
    match the next unmatched entry of row v's lower part (its neighbours < v), because the
    sources of that lower part arrive in increasing order, as row v lists them. At the end
    every lower part must be used up. O(nnz), half the entries touch memory at random, and
    no transpose is built. Codes: ASYMMETRIC (u lists v, v does not list u: the first such
    entry k in CSR order), WEIGHT_MISMATCH (weights[k] of (u, v) != weights[p] of (v, u):
    the first such k), OK. ``weights`` may be empty (no weights to compare).
    """
    n = indptr.shape[0] - 1
    check_w = weights.shape[0] > 0
    # state[2v] = next unmatched entry of row v, state[2v + 1] = end of its lower part:
    # side by side, so that the random visit to row v's state is one cache line
    state = np.empty(2 * n, dtype=np.int64)
    for v in range(n):
        a, b = indptr[v], indptr[v + 1]
        low = a
        while low < b and indices[low] < v:
            low += 1
        state[2 * v] = a
        state[2 * v + 1] = low
    for u in range(n):
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if v < u:
                continue  # checked from u's side when row v was walked
            p = state[2 * v]
            if p == state[2 * v + 1] or indices[p] != u:
                # row v lacks u, or lists some w < u that did not list v: either way the
                # adjacency is asymmetric; name the first unmirrored entry, as readers expect
                return _first_unmirrored(indptr, indices)
            if check_w and weights[p] != weights[k]:
                return WEIGHT_MISMATCH, u, v, k, p
            state[2 * v] = p + 1
    for v in range(n):
        if state[2 * v] != state[2 * v + 1]:  # lower entries of v that no source matched
            return _first_unmirrored(indptr, indices)
    return OK, -1, -1, -1, -1


@njit(cache=True, internal=True)
def _first_unmirrored(indptr, indices):
    """(ASYMMETRIC, u, v, k, -1) for the first entry k = (u, v) in CSR order whose mirror (v, u)
    is missing: a binary search in each row v (sorted). Only run once asymmetry is known."""
    for u in range(indptr.shape[0] - 1):
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            lo, hi = indptr[v], indptr[v + 1]
            while lo < hi:
                mid = (lo + hi) // 2
                if indices[mid] < u:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == indptr[v + 1] or indices[lo] != u:
                return ASYMMETRIC, u, v, k, -1
    return OK, -1, -1, -1, -1
