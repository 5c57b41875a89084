"""Local max rounds on the CPU: one compiled kernel, vertex by vertex, in fixed chunks on the threads.

Each round, every unmatched vertex u scans its alive adjacency and picks its top edge in
the total order (rating key, then hash32(seed, round, pair id), then the smaller pair id),
where the pair id of edge {u, v} is min(u, v) * n + max(u, v): the same for both directions
and independent of the CSR order. An edge that is the top at both of its ends is locally
dominant and matched. This is local_max's rule (local_max.local_max_rounds is the
whole-array formulation of the same rounds, which the GPU runs).

Why vertex by vertex: each vertex writes only its own slots (its top, its mate, its row's
alive prefix), so chunks of vertices run on any number of threads with the same result;
the per-vertex decisions need no atomics and no random writes, only reads of a neighbour's
matched byte (the edge-list formulation updated two random records per edge).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..backend.rng import hash32_at
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from ..threads import PRANGE_ONLY


@njit(cache=True, internal=True)
def _scan_chunk(c, chunk, active, na, start, deg, nbr, order, key, n, matched, top, alive_out):
    """For the active vertices c * chunk ..: drop alive entries whose other end is matched
    (compacting the row in place), then set top[u] to the neighbour of u's top edge (-1 when
    none is left). alive_out[c] = alive entries left in the chunk's rows."""
    alive = 0
    for i in range(c * chunk, min(na, (c + 1) * chunk)):
        u = np.int64(active[i])
        s = start[u]
        kept = 0
        best_v = np.int64(-1)
        best_o = np.uint64(0)
        best_h = np.uint32(0)
        best_p = np.uint64(0)
        for e in range(s, s + deg[u]):
            v = np.int64(nbr[e])
            if e + PREFETCH_DISTANCE < nbr.shape[0]:
                prefetch(matched, nbr[e + PREFETCH_DISTANCE])
            if matched[v] or v == u:   # a self-loop (an unchecked graph) is never an edge to match
                continue
            o = order[e]
            if kept != e - s:
                nbr[s + kept], order[s + kept] = nbr[e], o
            kept += 1
            if best_v >= 0 and o < best_o:
                continue   # the hash decides ties only: most entries skip it
            p = np.uint64(min(u, v)) * np.uint64(n) + np.uint64(max(u, v))
            h = hash32_at(np.int64(p), key)   # int64 like every caller: one compile
            if best_v < 0 or o > best_o or (h > best_h or (h == best_h and p < best_p)):
                best_v, best_o, best_h, best_p = v, o, h, p
        deg[u] = kept
        top[u] = best_v
        alive += kept
    alive_out[c] = alive


@njit(cache=True, internal=True)
def _match_chunk(c, chunk, active, na, deg, top, mate, matched, keep, counts):
    """Match the active vertices c * chunk .. whose top edge is also their neighbour's top;
    keep[i] = vertex still active next round, counts[c] = (matched, kept) vertices."""
    won = 0
    kept = 0
    hi = min(na, (c + 1) * chunk)
    for i in range(c * chunk, hi):
        if i + PREFETCH_DISTANCE < hi:
            t = top[active[i + PREFETCH_DISTANCE]]
            if t >= 0:
                prefetch(top, t)
        u = active[i]
        v = top[u]
        if v >= 0 and top[v] == u:
            mate[u] = v
            matched[u] = 1
            won += 1
            keep[i] = False
        else:
            keep[i] = v >= 0
            kept += keep[i]
    counts[2 * c] = won
    counts[2 * c + 1] = kept


@njit(cache=True, internal=True)
def _compact_chunk(c, chunk, active, na, keep, at, out):
    j = at
    for i in range(c * chunk, min(na, (c + 1) * chunk)):
        if keep[i]:
            out[j] = active[i]
            j += 1


@njit(cache=True, parallel=PRANGE_ONLY)
def _round(active, na, start, deg, nbr, order, key, n, matched, top, mate, keep, out, scratch, chunk,
           parallel_min, last):
    """One round on the active list (see the module's text): returns (alive entries after
    dropping those with a matched end, matched vertices, vertices left in ``out``). With
    ``last`` only the drop runs (the rounds' cap is reached: the greedy tail follows)."""
    chunks = (na + chunk - 1) // chunk
    threaded = na >= parallel_min
    alive_out = scratch[:chunks]
    counts = scratch[chunks:3 * chunks + 1]
    if threaded:
        for c in prange(chunks):
            _scan_chunk(np.int64(c), chunk, active, na, start, deg, nbr, order, key, n, matched, top, alive_out)
    else:
        for c in range(chunks):
            _scan_chunk(c, chunk, active, na, start, deg, nbr, order, key, n, matched, top, alive_out)
    alive = 0
    for c in range(chunks):
        alive += alive_out[c]
    if alive == 0 or last:
        return alive, 0, na
    if threaded:
        for c in prange(chunks):
            _match_chunk(np.int64(c), chunk, active, na, deg, top, mate, matched, keep, counts)
    else:
        for c in range(chunks):
            _match_chunk(c, chunk, active, na, deg, top, mate, matched, keep, counts)
    won = 0
    at = 0
    for c in range(chunks):   # counts[2c + 1] becomes the chunk's output offset
        won += counts[2 * c]
        kept = counts[2 * c + 1]
        counts[2 * c + 1] = at
        at += kept
    if threaded:
        for c in prange(chunks):
            _compact_chunk(np.int64(c), chunk, active, na, keep, counts[2 * c + 1], out)
    else:
        for c in range(chunks):
            _compact_chunk(c, chunk, active, na, keep, counts[2 * c + 1], out)
    return alive, won, at


@njit(cache=True, internal=True)
def local_max_vertex_rounds(indptr, nbr, order, round_keys, mate, chunk, parallel_min):
    """Rounds 1..len(round_keys) of local max on the CSR adjacency (indptr, nbr) with uint64
    ``order`` keys per entry; fills ``mate``. nbr and order are working copies (their rows are
    compacted in place). Returns (rounds run, matched vertices per round, alive edges after
    each round, the active vertices left, their alive degrees): after the last round's cap
    the remaining alive entries are the first deg[u] of each active vertex's row."""
    n = indptr.shape[0] - 1
    max_rounds = round_keys.shape[0]
    counts = np.zeros(max_rounds, dtype=np.int64)
    left = np.zeros(max_rounds, dtype=np.int64)
    deg = np.empty(n, dtype=np.int64)
    na = 0
    active = np.empty(n, dtype=nbr.dtype)
    for u in range(n):
        deg[u] = indptr[u + 1] - indptr[u]
        if deg[u]:
            active[na] = u
            na += 1
    out = np.empty(n, dtype=nbr.dtype)
    keep = np.empty(n, dtype=np.bool_)
    top = np.full(n, -1, dtype=nbr.dtype)
    matched = np.zeros(n, dtype=np.uint8)
    scratch = np.zeros(3 * ((n + chunk - 1) // chunk) + 1, dtype=np.int64)
    rounds = 0
    while True:
        key = round_keys[min(rounds, max_rounds - 1)] if max_rounds else np.uint64(0)
        alive, won, na_next = _round(active, na, indptr, deg, nbr, order, key, n, matched, top, mate, keep, out,
                                     scratch, chunk, parallel_min, rounds == max_rounds)
        if rounds:
            left[rounds - 1] = alive // 2
        if alive == 0 or rounds == max_rounds:
            break
        counts[rounds] = won
        rounds += 1
        active, out = out, active
        na = na_next
    return rounds, counts, left, active[:na].copy(), deg


@njit(cache=True)
def remaining_upper_entries(indptr, nbr, order, active, deg):
    """(u, v, order) of the alive edges u < v left after the rounds (see local_max_vertex_rounds)."""
    size = 0
    for u in active:
        for e in range(indptr[u], indptr[u] + deg[u]):
            size += nbr[e] > u
    eu = np.empty(size, dtype=np.int64)
    ev = np.empty(size, dtype=np.int64)
    eo = np.empty(size, dtype=np.uint64)
    k = 0
    for u in active:
        for e in range(indptr[u], indptr[u] + deg[u]):
            if nbr[e] > u:
                eu[k], ev[k], eo[k] = u, nbr[e], order[e]
                k += 1
    return eu, ev, eo
