"""Compiled rounds of the distributed local max (matching.py) on one rank's rows, with ghosts
as extra columns (local index n_local + j for ghost j).

A round is matchers/local_max_kernel's: every active own vertex drops the alive entries whose
other end is matched (compacting its row in place) and picks its top edge, the largest
(rating, hash32(seed, round, pair id)), then the smaller pair id, with the pair id
min(u, v) * n + max(u, v) of global ids; an edge that is the top at both ends is matched.
Between own vertices both tops are here; for a ghost neighbour the rank learns the other
top from the proposals its owner sends (``cross_wins``). The whole-array rounds built
temporaries of every live entry and sorted them per row: on delaunay 2^20 at P = 1 they took
4.5 s of the 17 s run, against 0.3 s for the single process's kernel.
"""
from __future__ import annotations

import numpy as np

from ..backend.rng import hash32_at
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch


@njit(cache=True)
def expansion_ratings(indptr, adj, ewgt, c_ext, squared):
    """float64 rating per own entry: w / (c[u] c[v]) (expansion_star) or w * w / (c[u] c[v])
    (expansion_star2), c = max(vertex weight, 1) of own vertices then ghosts; the same
    operations as ratings.edge_ratings, so the same bits. One pass instead of numpy's five
    temporaries of the entries' size (0.35 s of a 7.4 s run on delaunay 2^20, P = 1)."""
    nl = indptr.shape[0] - 1
    out = np.empty(indptr[nl], dtype=np.float64)
    last = indptr[nl] - PREFETCH_DISTANCE
    for u in range(nl):
        cu = c_ext[u]
        for e in range(indptr[u], indptr[u + 1]):
            if e < last:   # the neighbour's weight is a random read (as ratings._entry_keys)
                prefetch(c_ext, adj[e + PREFETCH_DISTANCE])
            w = np.float64(ewgt[e])
            cc = cu * c_ext[adj[e]]
            out[e] = w * w / cc if squared else w / cc
    return out


@njit(cache=True)
def start_rounds(indptr):
    """(active own vertices: those with entries, alive degree per own vertex); the rounds
    compact working copies of the columns and ratings (adj.copy(), rate.copy())."""
    nl = indptr.shape[0] - 1
    active = np.empty(nl, dtype=np.int64)
    deg = np.empty(nl, dtype=np.int64)
    na = 0
    for u in range(nl):
        deg[u] = indptr[u + 1] - indptr[u]
        if deg[u]:
            active[na] = u
            na += 1
    return active[:na].copy(), deg


@njit(cache=True)
def scan(active, indptr, deg, nbr, rate, gid, n, key, matched, top):
    """Drop the entries with a matched end from the active rows of the working copies ``nbr``
    (local columns) and ``rate`` (compacted in place) and set top[u] (the local index of u's
    top neighbour, -1 when none is left). Returns the alive entries left. An own vertex's
    global id is first + its local index, computed rather than read: gid[v] per entry was a
    random read of an n-sized array (delaunay 2^20, P = 1, level 0: 1.2 -> 0.7 s CPU)."""
    nl = indptr.shape[0] - 1
    first = gid[0] if nl else 0
    alive = 0
    for i in range(active.shape[0]):
        u = active[i]
        s = indptr[u]
        kept = 0
        best_v = np.int64(-1)
        best_o = 0.0
        best_h = np.uint32(0)
        best_p = np.uint64(0)
        gu = first + u
        for e in range(s, s + deg[u]):
            v = nbr[e]
            if e + PREFETCH_DISTANCE < nbr.shape[0]:
                prefetch(matched, nbr[e + PREFETCH_DISTANCE])
            if matched[v] or v == u:   # a self-loop is never an edge to match (as the single process)
                continue
            o = rate[e]
            if kept != e - s:
                nbr[s + kept], rate[s + kept] = v, o
            kept += 1
            if best_v >= 0 and o < best_o:
                continue   # the hash decides ties only: most entries skip it
            gv = first + v if v < nl else gid[v]
            p = np.uint64(min(gu, gv)) * np.uint64(n) + np.uint64(max(gu, gv))
            h = hash32_at(np.int64(p), key)
            if best_v < 0 or o > best_o or (h > best_h or (h == best_h and p < best_p)):
                best_v, best_o, best_h, best_p = v, o, h, p
        deg[u] = kept
        top[u] = best_v
        alive += kept
    return alive


@njit(cache=True)
def proposals(active, top, nl, gid):
    """(global id of the ghost, global id of the own vertex) for every active own vertex
    whose top neighbour is a ghost: what the ghost's owner needs to know."""
    count = 0
    for u in active:
        count += top[u] >= nl
    to = np.empty(count, dtype=np.int64)
    frm = np.empty(count, dtype=np.int64)
    i = 0
    for u in active:
        if top[u] >= nl:
            to[i] = gid[top[u]]
            frm[i] = gid[u]
            i += 1
    return to, frm


@njit(cache=True)
def local_wins(active, top, nl, gid, mate, matched, newly, won):
    """Match the active own vertices whose top is an own vertex whose top they are; returns
    how many were matched (listed in ``won``, flagged in ``newly``)."""
    nw = 0
    na = active.shape[0]
    for i in range(na):
        if i + PREFETCH_DISTANCE < na:   # top[v] is a random read (as local_max_kernel._match_chunk)
            t = top[active[i + PREFETCH_DISTANCE]]
            if t >= 0:
                prefetch(top, t)
        u = active[i]
        v = top[u]
        if v >= 0 and v < nl and top[v] == u:
            mate[u] = gid[v]
            matched[u] = 1
            newly[u] = True
            won[nw] = u
            nw += 1
    return nw


@njit(cache=True)
def cross_wins(own_local, ghost_local, top, gid, mate, matched, newly, won, nw):
    """Proposals received (own vertex, proposing ghost): where the own vertex's top is that
    ghost, both tops agree and the cross edge is matched at this end (its owner does the
    same with this rank's proposal). Returns the new count in ``won``."""
    for i in range(own_local.shape[0]):
        u = own_local[i]
        v = ghost_local[i]
        if top[u] == v:
            mate[u] = gid[v]
            matched[u] = 1
            matched[v] = 1
            newly[u] = True
            won[nw] = u
            nw += 1
    return nw


@njit(cache=True)
def next_active(active, top, matched):
    """The active vertices still unmatched with alive entries left."""
    out = np.empty(active.shape[0], dtype=np.int64)
    na = 0
    for u in active:
        if not matched[u] and top[u] >= 0:
            out[na] = u
            na += 1
    return out[:na]


@njit(cache=True)
def alive_entries(active, indptr, deg, nbr, rate):
    """(own row, local column, rating) of the alive entries of the active rows after the
    last scan, in row order."""
    size = 0
    for u in active:
        size += deg[u]
    rows = np.empty(size, dtype=np.int64)
    cols = np.empty(size, dtype=np.int64)
    rates = np.empty(size, dtype=np.float64)
    i = 0
    for u in active:
        for e in range(indptr[u], indptr[u] + deg[u]):
            rows[i], cols[i], rates[i] = u, nbr[e], rate[e]
            i += 1
    return rows, cols, rates


@njit(cache=True)
def drop_heavy(mate, vwgt_ext, ghosts, first, cap):
    """``mate`` with the pairs whose two vertex weights sum above ``cap`` unmatched (both
    ends decide alike); ``vwgt_ext``: own vertices' weights, then the ghosts'. One pass
    where matching._drop_heavy_pairs makes a dozen (delaunay 2^20, P = 2: 28 ms a run)."""
    nl = mate.shape[0]
    out = mate.copy()
    for v in range(nl):
        m = mate[v]
        if m < 0:
            continue
        p = m - first if first <= m < first + nl else nl + np.searchsorted(ghosts, m)
        if vwgt_ext[v] + vwgt_ext[p] > cap:
            out[v] = -1
    return out
