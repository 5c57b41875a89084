"""Suitor and locally dominant (LD) rounds as compiled kernels on the CPU, on the rows sorted
by priority (prioritised_rows.py).

The same rounds as the whole-array formulations in ``suitor.py`` and ``b_suitor.py`` (which
stay for the GPU): the same windows, pointers and proposals, so the same matching and the
same per-round stats. No random numbers are involved: the contract's tie-break decides.

The rounds compare (key, other end) at one vertex, which is the contract's order there
(prioritised_rows.py).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit

# LD finds its next affected vertices by a pass over the alive ones until a round scans
# fewer than 1/_SPARSE_SHARE of them, then from the few it touched (see the kernel)
_SPARSE_SHARE = 16


@njit(cache=True)
def _grown(a, size):
    """``a`` (int64) with room for at least ``size`` entries (doubling)."""
    if size <= a.shape[0]:
        return a
    b = np.zeros(2 * a.shape[0] + size, dtype=np.int64)
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


@njit(cache=True)
def suitor_kernel(indptr, nbr, key, window0, growth):
    """Suitor's rounds on rows sorted by ``prioritised_rows``. Returns (mate, searching
    vertices per round, matched vertices after each round).

    A round, as the whole-array one: every searching vertex u takes the first entry of its
    window that beats the target's current suitor, each target keeps its best proposal,
    winners displace the old suitor, which searches again; losers search again from the
    lost entry (which then fails), vertices whose window held nothing skip it and double it.
    Proposals are read against the suitors of the round's start and applied after all of
    them, as the whole-array round does.
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
        active = _grown(active, rounds + 1)
        matched = _grown(matched, rounds + 1)
        active[rounds] = ns
        matched[rounds] = mutual
        rounds += 1
        rows, nxt = nxt, rows
        ns = nn
    mate = np.full(n, -1, dtype=np.int64)
    for v in range(n):
        s = sid[v]
        if s >= 0 and sid[s] == v:
            mate[v] = s
    return mate, active[:rounds], matched[:rounds]


@njit(cache=True)
def locally_dominant_kernel(indptr, nbr, window0, growth):
    """LD's rounds on rows sorted by ``prioritised_rows``. Returns (mate, alive vertices per
    round, matched vertices after each round).

    A round, as the whole-array one: every affected vertex (candidate unknown or taken)
    takes the first free neighbour in its window as its candidate (or skips the window,
    which doubles); mutual candidates match; vertices without entries left drop out.
    Freeness is read at the round's start, matches are applied after all candidates are
    known, and the next round's affected vertices after all matches.

    The next affected vertices come from a pass over the alive ones (in vertex order, which
    keeps the next scan's reads local) while the affected are a fair share of them; after
    a round with few, from the affected and the neighbours of the vertices just matched
    (among whom are all that chose one of them), so that a round costs its work, not
    O(alive): no quadratic total on inputs that match a pair a round (a path with
    increasing weights).
    """
    n = indptr.shape[0] - 1
    mate = np.full(n, -1, dtype=np.int64)
    cand = np.full(n, -1, dtype=np.int64)
    ptr = indptr[:-1].copy()
    window = np.full(n, window0, dtype=np.int64)
    listed = np.zeros(n, dtype=np.int64)  # the round whose next scan list holds a vertex
    alive = np.empty(n, dtype=np.int64)   # (kept while passing over it pays)
    scan = np.empty(n, dtype=np.int64)    # this round's affected vertices
    nxt = np.empty(n, dtype=np.int64)
    pairs = np.empty(n, dtype=np.int64)   # one end of each pair matched in this round
    na = 0
    for v in range(n):
        if indptr[v + 1] > indptr[v]:
            alive[na] = scan[na] = v
            na += 1
    ns = na
    dense = True
    counts = np.zeros(64, dtype=np.int64)
    matched = np.zeros(64, dtype=np.int64)
    total = 0
    rounds = 0
    while na > 0 and ns > 0:
        for j in range(ns):
            x = scan[j]
            p = ptr[x]
            hi = min(p + window[x], indptr[x + 1])
            f = -1
            for e in range(p, hi):
                if mate[nbr[e]] < 0:
                    f = e
                    break
            if f >= 0:
                ptr[x] = f
                cand[x] = nbr[f]
            else:
                ptr[x] = hi
                window[x] *= growth
                cand[x] = -1
        # a new mutual pair has a member that chose its candidate in this round
        npairs = 0
        for j in range(ns):
            x = scan[j]
            c = cand[x]
            if c >= 0 and cand[c] == x and mate[x] < 0:
                mate[x] = c
                mate[c] = x
                pairs[npairs] = x
                npairs += 1
        total += 2 * npairs
        counts = _grown(counts, rounds + 1)
        matched = _grown(matched, rounds + 1)
        counts[rounds] = na
        matched[rounds] = total
        rounds += 1
        dense = dense and ns * _SPARSE_SHARE >= na
        nn = 0
        if dense:  # a pass over the alive: drop the matched and exhausted, list the affected
            k = 0
            for j in range(na):
                x = alive[j]
                if mate[x] >= 0 or ptr[x] >= indptr[x + 1]:
                    continue
                alive[k] = x
                k += 1
                c = cand[x]
                if c < 0 or mate[c] >= 0:
                    nxt[nn] = x
                    nn += 1
            na = k
        else:  # the scanned vertices still alive, and those whose candidate was just matched
            na -= 2 * npairs
            for j in range(ns):
                x = scan[j]
                if mate[x] >= 0:
                    continue
                if ptr[x] >= indptr[x + 1]:  # no entries left: never matched
                    na -= 1
                    continue
                c = cand[x]
                if c < 0 or mate[c] >= 0:
                    listed[x] = rounds
                    nxt[nn] = x
                    nn += 1
            for i in range(2 * npairs):
                c = pairs[i // 2] if i % 2 == 0 else mate[pairs[i // 2]]
                for e in range(indptr[c], indptr[c + 1]):
                    y = nbr[e]
                    if cand[y] == c and mate[y] < 0 and listed[y] != rounds:
                        listed[y] = rounds
                        nxt[nn] = y
                        nn += 1
        scan, nxt = nxt, scan
        ns = nn
    return mate, counts[:rounds], matched[:rounds]
