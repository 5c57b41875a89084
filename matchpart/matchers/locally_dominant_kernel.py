"""Locally dominant (LD) matching's rounds as a compiled kernel on the CPU, on the rows sorted
by priority (prioritised_rows.py): the same rounds as the whole-array formulation in
``suitor.py`` (which stays for the GPU), so the same matching and per-round stats.

While a round's affected vertices are a fair share of the alive ones (dense rounds), it runs
on the threads over fixed chunks: each affected vertex picks its candidate (reading the
matches of the round's start), each mutual pair is written by its members (a member that
did not choose this round by the other), and the next alive and affected vertices are
listed in chunks offset in order. The sparse rounds stay serial.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from ..threads import PRANGE_ONLY
from .suitor_kernel import record_round

# LD finds its next affected vertices by a pass over the alive ones until a round scans
# fewer than 1/_SPARSE_SHARE of them, then from the few it touched (see the kernel)
_SPARSE_SHARE = 16


@njit(cache=True, internal=True)
def _choose_chunk(c, chunk, scan, ns, indptr, nbr, mate, cand, ptr, window, growth, stamp, r):
    """Each affected vertex of chunk c takes the first free neighbour in its window as its
    candidate (or skips the window, which doubles); freeness as at the round's start."""
    for j in range(c * chunk, min(ns, (c + 1) * chunk)):
        x = scan[j]
        stamp[x] = r
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


@njit(cache=True, internal=True)
def _match_chunk(c, chunk, scan, ns, mate, cand, stamp, r, counts):
    """Mutual candidates match; each slot has one writer (counts[c]: pairs, each counted by
    its smaller member, or by its only member that chose this round)."""
    k = 0
    for j in range(c * chunk, min(ns, (c + 1) * chunk)):
        x = scan[j]
        y = cand[x]
        if y >= 0 and cand[y] == x:
            mate[x] = y
            if stamp[y] != r:
                mate[y] = x
            k += stamp[y] != r or x < y
    counts[c] = k


@njit(cache=True, internal=True)
def _alive_count_chunk(c, chunk, alive, na, indptr, mate, cand, ptr, counts):
    keep = 0
    affected = 0
    for j in range(c * chunk, min(na, (c + 1) * chunk)):
        x = alive[j]
        if mate[x] >= 0 or ptr[x] >= indptr[x + 1]:
            continue
        keep += 1
        y = cand[x]
        affected += y < 0 or mate[y] >= 0
    counts[2 * c] = keep
    counts[2 * c + 1] = affected


@njit(cache=True, internal=True)
def _alive_write_chunk(c, chunk, alive, na, indptr, mate, cand, ptr, at_alive, at_next, alive2, nxt):
    """List the chunk's alive vertices that stay (matched and exhausted ones drop out) in
    alive2 from at_alive, and those among them whose candidate is unknown or taken in nxt
    from at_next; returns the ends. alive2 may be alive itself (one chunk, in place)."""
    for j in range(c * chunk, min(na, (c + 1) * chunk)):
        x = alive[j]
        if mate[x] >= 0 or ptr[x] >= indptr[x + 1]:
            continue
        alive2[at_alive] = x
        at_alive += 1
        y = cand[x]
        if y < 0 or mate[y] >= 0:
            nxt[at_next] = x
            at_next += 1
    return at_alive, at_next


@njit(cache=True, internal=True)
def _dense_round(scan, ns, alive, na, alive2, nxt, indptr, nbr, mate, cand, ptr, window, growth, stamp, counts, r,
                 chunk):
    """One dense LD round on the threads; returns (pairs matched, alive left in alive2,
    affected listed in nxt)."""
    schunks = (ns + chunk - 1) // chunk
    for c in prange(schunks):
        _choose_chunk(np.int64(c), chunk, scan, ns, indptr, nbr, mate, cand, ptr, window, growth, stamp, r)
    for c in prange(schunks):
        _match_chunk(np.int64(c), chunk, scan, ns, mate, cand, stamp, r, counts)
    npairs = 0
    for c in range(schunks):
        npairs += counts[c]
    achunks = (na + chunk - 1) // chunk
    for c in prange(achunks):
        _alive_count_chunk(np.int64(c), chunk, alive, na, indptr, mate, cand, ptr, counts)
    at_a, at_n = 0, 0
    for c in range(achunks):    # counts become the chunks' output offsets
        ka, kn = counts[2 * c], counts[2 * c + 1]
        counts[2 * c], counts[2 * c + 1] = at_a, at_n
        at_a += ka
        at_n += kn
    for c in prange(achunks):
        _alive_write_chunk(np.int64(c), chunk, alive, na, indptr, mate, cand, ptr, counts[2 * c],
                           counts[2 * c + 1], alive2, nxt)
    return npairs, at_a, at_n


@njit(cache=True, parallel=PRANGE_ONLY)
def locally_dominant_kernel(indptr, nbr, window0, growth, chunk, parallel_min):
    """LD's rounds on rows sorted by ``prioritised_rows``. Returns (mate, alive vertices per
    round, matched vertices after each round).

    A round, as the whole-array one: every affected vertex (candidate unknown or taken)
    takes the first free neighbour in its window as its candidate (or skips the window,
    which doubles); mutual candidates match; vertices without entries left drop out.
    Freeness is read at the round's start, matches are applied after all candidates are
    known, and the next round's affected vertices after all matches. Dense rounds of at
    least ``parallel_min`` affected vertices run on the threads (chunks of ``chunk``).

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
    alive2 = np.empty(n, dtype=np.int64)
    stamp = np.zeros(n, dtype=np.int64)      # dense rounds: the round a vertex chose in
    chunk_counts = np.zeros(2 * ((n + chunk - 1) // chunk) + 2, dtype=np.int64)
    while na > 0 and ns > 0:
        if dense and ns * _SPARSE_SHARE >= na and ns >= parallel_min:
            npairs, na_next, nn = _dense_round(scan, ns, alive, na, alive2, nxt, indptr, nbr, mate, cand, ptr, window,
                                               growth, stamp, chunk_counts, rounds + 1, chunk)
            total += 2 * npairs
            counts, matched = record_round(counts, matched, rounds, na, total)
            rounds += 1
            alive, alive2 = alive2, alive
            na = na_next
            scan, nxt = nxt, scan
            ns = nn
            continue
        _choose_chunk(0, ns, scan, ns, indptr, nbr, mate, cand, ptr, window, growth, stamp, rounds + 1)
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
        counts, matched = record_round(counts, matched, rounds, na, total)
        rounds += 1
        dense = dense and ns * _SPARSE_SHARE >= na
        nn = 0
        if dense:  # a pass over the alive: drop the matched and exhausted, list the affected
            na, nn = _alive_write_chunk(0, na, alive, na, indptr, mate, cand, ptr, 0, 0, alive, nxt)
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
