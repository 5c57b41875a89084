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
from numba import prange

from ..jit import njit
from ..threads import PRANGE_ONLY

# Suitor runs a round on the threads (_dense_round) when its searchers are at least
# 1/DENSE_SHARE of the vertices: such a round passes over all vertices (targets pull their
# best proposal from their rows, the next searchers are listed in vertex order), which pays
# only while most of them take part. Delaunay 2^20: rounds 1-3 of 10 are dense.
DENSE_SHARE = 8


@njit(cache=True)
def _grown(a, size):
    """``a`` (int64) with room for at least ``size`` entries (doubling)."""
    if size <= a.shape[0]:
        return a
    b = np.zeros(2 * a.shape[0] + size, dtype=np.int64)
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


@njit(cache=True, internal=True)
def _propose_chunk(c, chunk, rows, ns, indptr, nbr, key, sid, skey, ptr, window, growth, found, prop, stamp,
                   again, target, r):
    """Dense round, searchers of chunk c: each takes the first entry of its window that beats
    the target's current suitor (read only), and flags the target."""
    for j in range(c * chunk, min(ns, (c + 1) * chunk)):
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
        found[j] = f
        if f >= 0:
            ptr[u] = f
            prop[u] = f
            stamp[u] = r
            target[nbr[f]] = r          # every writer writes the same value
        else:
            ptr[u] = hi
            window[u] *= growth
            if hi < end:
                again[u] = r


@njit(cache=True, internal=True)
def _accept_chunk(c, chunk, n, indptr, nbr, key, sid, skey, prop, stamp, won, again, target, r):
    """Dense round, vertices of chunk c that were proposed to: each pulls its best proposal
    from its row (its proposers are its neighbours), takes it and lets the old suitor search."""
    for t in range(c * chunk, min(n, (c + 1) * chunk)):
        if target[t] != r:
            continue
        best, best_key = -1, np.uint64(0)
        for e in range(indptr[t], indptr[t + 1]):
            u = nbr[e]
            if stamp[u] == r and nbr[prop[u]] == t:
                k = key[prop[u]]
                if best < 0 or k > best_key or (k == best_key and u < best):
                    best, best_key = u, k
        d = sid[t]
        if d >= 0:
            again[d] = r                # a displaced suitor searches again (it was nobody else's)
        sid[t] = best
        skey[t] = best_key
        won[best] = r


@njit(cache=True, internal=True)
def _losers_chunk(c, chunk, rows, ns, found, won, again, r):
    for j in range(c * chunk, min(ns, (c + 1) * chunk)):
        u = rows[j]
        if found[j] >= 0 and won[u] != r:
            again[u] = r                # lost: searches again from the lost entry


@njit(cache=True, internal=True)
def _next_count_chunk(c, chunk, n, sid, again, r, counts):
    """Next searchers and mutual suitors among the chunk's vertices."""
    k = 0
    mutual = 0
    for v in range(c * chunk, min(n, (c + 1) * chunk)):
        k += again[v] == r
        s = sid[v]
        mutual += s >= 0 and sid[s] == v
    counts[2 * c] = k
    counts[2 * c + 1] = mutual


@njit(cache=True, internal=True)
def _next_write_chunk(c, chunk, n, again, r, at, nxt):
    for v in range(c * chunk, min(n, (c + 1) * chunk)):
        if again[v] == r:
            nxt[at] = v
            at += 1


@njit(cache=True, internal=True)
def _dense_round(rows, ns, nxt, indptr, nbr, key, sid, skey, ptr, window, growth, found, prop, stamp, won, again,
                 target, counts, r, chunk):
    """One Suitor round on the threads; the same transitions as the serial round. Returns
    (next searchers written to nxt in vertex order, mutual suitors after the round)."""
    n = indptr.shape[0] - 1
    schunks = (ns + chunk - 1) // chunk
    vchunks = (n + chunk - 1) // chunk
    for c in prange(schunks):
        _propose_chunk(np.int64(c), chunk, rows, ns, indptr, nbr, key, sid, skey, ptr, window, growth, found, prop,
                       stamp, again, target, r)
    for c in prange(vchunks):
        _accept_chunk(np.int64(c), chunk, n, indptr, nbr, key, sid, skey, prop, stamp, won, again, target, r)
    for c in prange(schunks):
        _losers_chunk(np.int64(c), chunk, rows, ns, found, won, again, r)
    for c in prange(vchunks):
        _next_count_chunk(np.int64(c), chunk, n, sid, again, r, counts)
    at = 0
    mutual = 0
    for c in range(vchunks):
        k = counts[2 * c]
        counts[2 * c] = at
        at += k
        mutual += counts[2 * c + 1]
    for c in prange(vchunks):
        _next_write_chunk(np.int64(c), chunk, n, again, r, counts[2 * c], nxt)
    return at, mutual


@njit(cache=True, parallel=PRANGE_ONLY)
def suitor_kernel(indptr, nbr, key, window0, growth, chunk, parallel_min):
    """Suitor's rounds on rows sorted by ``prioritised_rows``. Returns (mate, searching
    vertices per round, matched vertices after each round).

    A round, as the whole-array one: every searching vertex u takes the first entry of its
    window that beats the target's current suitor, each target keeps its best proposal,
    winners displace the old suitor, which searches again; losers search again from the
    lost entry (which then fails), vertices whose window held nothing skip it and double it.
    Proposals are read against the suitors of the round's start and applied after all of
    them, as the whole-array round does. A round of at least ``parallel_min`` searchers and
    1/DENSE_SHARE of the vertices runs on the threads (_dense_round, chunks of ``chunk``).
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
    prop = np.empty(n, dtype=np.int64)           # dense rounds: each searcher's proposal,
    stamp = np.zeros(n, dtype=np.int64)           # valid in the round it holds
    won = np.zeros(n, dtype=np.int64)             # round in which a vertex's proposal won
    again = np.zeros(n, dtype=np.int64)           # round after which a vertex searches again
    target = np.zeros(n, dtype=np.int64)          # round in which a vertex was proposed to
    counts = np.zeros(2 * ((n + chunk - 1) // chunk) + 2, dtype=np.int64)
    while ns > 0:
        if ns >= parallel_min and ns * DENSE_SHARE >= n:
            nn, mutual = _dense_round(rows, ns, nxt, indptr, nbr, key, sid, skey, ptr, window, growth, found, prop,
                                      stamp, won, again, target, counts, rounds + 1, chunk)
            active = _grown(active, rounds + 1)
            matched = _grown(matched, rounds + 1)
            active[rounds] = ns
            matched[rounds] = mutual
            rounds += 1
            rows, nxt = nxt, rows
            ns = nn
            continue
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
