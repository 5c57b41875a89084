"""Suitor's rounds as a compiled kernel on the CPU, on the rows sorted by priority
(prioritised_rows.py); LD's are in locally_dominant_kernel.py.

The same rounds as the whole-array formulations in ``suitor.py`` and ``b_suitor.py`` (which
stay for the GPU): the same windows, pointers and proposals, so the same matching and the
same per-round stats. No random numbers are involved: the contract's tie-break decides.

The rounds compare (key, other end) at one vertex, which is the contract's order there
(prioritised_rows.py).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit

@njit(cache=True)
def grown(a, size):
    """``a`` (int64) with room for at least ``size`` entries (doubling)."""
    if size <= a.shape[0]:
        return a
    b = np.zeros(2 * a.shape[0] + size, dtype=np.int64)
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


@njit(cache=True, internal=True)
def record_round(first, second, rounds, a, b):
    """The per-round stats arrays with a and b recorded for round ``rounds`` (grown as needed)."""
    first = grown(first, rounds + 1)
    second = grown(second, rounds + 1)
    first[rounds] = a
    second[rounds] = b
    return first, second


@njit(cache=True)
def suitor_kernel(indptr, nbr, key, window0, growth):
    """Suitor's rounds on rows sorted by ``prioritised_rows``. Returns (mate, searching
    vertices per round, matched vertices after each round).

    A round, as the whole-array one: every searching vertex u takes the first entry of its
    window that beats the target's current suitor, each target keeps its best proposal,
    winners displace the old suitor, which searches again; losers search again from the
    lost entry (which then fails), vertices whose window held nothing skip it and double it.
    Proposals are read against the suitors of the round's start and applied after all of
    them, as the whole-array round does. (Serial: with threaded rounds, where each target pulled
    its best proposal from its row, Suitor on delaunay 2^20 took 0.64 s on 2 threads against
    0.53 s on one: the pull reads every entry of the targets' rows at random.)
    """
    n = indptr.shape[0] - 1
    sid = np.full(n, -1, dtype=np.int64)          # current suitor
    skey = np.zeros(n, dtype=np.uint64)           # key of the current suitor's edge
    pid = np.full(n, -1, dtype=np.int64)          # best proposal of this round
    pkey = np.zeros(n, dtype=np.uint64)
    ptr = indptr[:-1].copy()
    window = np.full(n, window0, dtype=np.int64)
    rows = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    found = np.empty(n, dtype=np.int64)
    ns = 0
    for v in range(n):
        if indptr[v + 1] > indptr[v]:
            rows[ns] = v
            ns += 1
    active = np.zeros(64, dtype=np.int64)
    matched = np.zeros(64, dtype=np.int64)
    mutual = 0  # vertices whose suitor is also the vertex they are the suitor of
    rounds = 0
    while ns > 0:
        for j in range(ns):
            u = rows[j]
            p, end = ptr[u], indptr[u + 1]
            hi = min(p + window[u], end)
            f = -1
            for e in range(p, hi):
                t = nbr[e]
                s = sid[t]
                if s < 0 or key[e] > skey[t] or (key[e] == skey[t] and u < s):
                    f = e
                    break
            if f >= 0:
                ptr[u] = f
                t = nbr[f]
                q = pid[t]
                if q < 0 or key[f] > pkey[t] or (key[f] == pkey[t] and u < q):
                    pid[t] = u
                    pkey[t] = key[f]
            else:
                ptr[u] = hi
                window[u] *= growth
            found[j] = f
        nn = 0
        for j in range(ns):
            u = rows[j]
            f = found[j]
            if f < 0:
                if ptr[u] < indptr[u + 1]:
                    nxt[nn] = u
                    nn += 1
                continue
            t = nbr[f]
            if pid[t] != u:  # lost: searches again
                nxt[nn] = u
                nn += 1
                continue
            pid[t] = -1
            d = sid[t]
            if d >= 0:  # displaced (never a searcher of this round): searches again
                mutual -= 2 if sid[d] == t else 0
                nxt[nn] = d
                nn += 1
            sid[t] = u
            skey[t] = key[f]
            mutual += 2 if sid[u] == t else 0
        active, matched = record_round(active, matched, rounds, ns, mutual)
        rounds += 1
        rows, nxt = nxt, rows
        ns = nn
    mate = np.full(n, -1, dtype=np.int64)
    for v in range(n):
        s = sid[v]
        if s >= 0 and sid[s] == v:
            mate[v] = s
    return mate, active[:rounds], matched[:rounds]
