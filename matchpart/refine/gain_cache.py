"""Gain cache for FM (numba): per vertex, its edge weight into each adjacent block.

The k-way FM without a cache recomputes a neighbour's best move from its whole row after
every move, so one move costs the sum of the neighbours' degrees: 10^4-10^5 operations on
the coarse levels of power-law graphs. With the cache (KaMinPar, Mt-KaHyPar) a move updates
each neighbour's entry in O(number of blocks it touches) and a best move is read from the
cache.

Layout: cache = (block, conn, count, nb, scratch, start, top). The entries of vertex v live
in the slots start[v] .. start[v] + nb[v] - 1 of three arrays of length m: ``block`` (block
id), ``conn`` (edge weight into it) and ``count`` (edges into it, so an entry is dropped
exactly when its last edge leaves, whatever float residue the weight sum carries). A vertex
touches at most deg(v) distinct blocks, so it gets deg(v) slots, handed out from the front
of the arrays (top[0]) when it is built: FM builds only the boundary and its neighbours, and
slots at indptr[v] instead scattered those few vertices over the whole m-long arrays, one
page fault per array and vertex (delaunay 2^20, k = 32: 73 of a 93 ms FM pass). nb[v] = -1
marks a vertex whose entries are not built yet: entries are built on first use, so vertices
FM never looks at cost nothing, and a cache lives for a whole refinement call (rollbacks
apply reverse moves to it).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from ..threads import PRANGE_ONLY
from .boundary import ROWS_AHEAD, prefetch_row_blocks


# The helpers FM calls once per neighbour of a moved vertex (shift, best_move,
# prefetch_entries_ahead, the entry lookups; kway_fm._best) are inlined into their callers by numba
# (inline="always"): a call took the cache's seven arrays and a reference count on each, two
# atomic operations per array, on counters the threads share. BA 2^20, k = 32, a grouped FM
# pass of one group on the finest level: 1.8 -> 1.2 s, the same moves.

# Row entries ahead at which a walk over a moved vertex's row prefetches a neighbour's slot
# range, and (nearer) its entries (BA 2^20, k = 32: the finest FM pass 13.6 -> 11.5 s; 16 was
# slower than 8).
SLOTS_AHEAD = 8
ENTRIES_AHEAD = 4


@njit(cache=True)
def new_cache(n, m, k):
    """An empty cache for a graph of n vertices, m stored entries, k blocks (see the layout)."""
    block = np.empty(m, dtype=np.int64)
    conn = np.empty(m, dtype=np.float64)
    count = np.empty(m, dtype=np.int64)
    nb = np.full(n, -1, dtype=np.int64)
    scratch = np.full(k, -1, dtype=np.int64)   # block -> slot while a row is built; reset after
    start = np.empty(n, dtype=np.int64)
    top = np.zeros(1, dtype=np.int64)
    return block, conn, count, nb, scratch, start, top


@njit(cache=True, internal=True)
def reset(cache):
    """Mark every entry unbuilt again (so the cache can serve another call on the same graph)."""
    nb = cache[3]
    for v in range(nb.shape[0]):
        nb[v] = -1
    cache[6][0] = 0


@njit(cache=True, internal=True, inline="always")
def built(v, cache):
    """Whether v's entries are built."""
    return cache[3][v] >= 0


@njit(cache=True, internal=True)
def build(v, indptr, indices, ewgt, parts, cache):
    """Fill v's entries from its row (O(deg v)) unless they are built already."""
    block, conn, count, nb, scratch, start, top = cache
    if nb[v] >= 0:
        return
    base = top[0]
    top[0] += indptr[v + 1] - indptr[v]
    start[v] = base
    nb[v] = _fill(v, base, indptr, indices, ewgt, parts, block, conn, count, scratch)


@njit(cache=True, internal=True)
def _fill(v, base, indptr, indices, ewgt, parts, block, conn, count, scratch):
    """Write v's entries from slot base on (scratch: k entries of -1, left so); returns how many."""
    end = base
    last = indptr[v + 1] - PREFETCH_DISTANCE
    for e in range(indptr[v], indptr[v + 1]):
        if e < last:     # a neighbour's block a few entries on: a cache miss on large graphs
            prefetch(parts, indices[e + PREFETCH_DISTANCE])
        b = parts[indices[e]]
        s = scratch[b]
        if s < 0:
            s = end
            scratch[b] = s
            block[s] = b
            conn[s] = 0.0
            count[s] = 0
            end += 1
        conn[s] += ewgt[e]
        count[s] += 1
    for s in range(base, end):
        scratch[block[s]] = -1
    return end - base


# build_best: the listed vertices' entries and best moves in chunks of ``chunk`` list entries on
# the threads. Slots are handed out in list order before, so a chunk writes only its own
# vertices' slots and the cache is the one build() would make vertex by vertex in that order.
# The list in id order reads the rows in order: FM's queue built vertex by vertex in its random
# order took 38 ms on ws 2^16's finest level (40k boundary vertices), a cache miss per row.
@njit(cache=True, internal=True)
def _build_best_chunk(c, chunk, vs, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, scratch, gain, target):
    block, conn, count, nb, _, start, _ = cache
    stop = min(vs.shape[0], (c + 1) * chunk)
    for i in range(c * chunk, stop):
        v = vs[i]
        if i + ROWS_AHEAD < stop:
            prefetch_row_blocks(vs[i + ROWS_AHEAD], indptr, indices, parts)
        if nb[v] < 0:
            nb[v] = _fill(v, start[v], indptr, indices, ewgt, parts, block, conn, count, scratch)
        if is_boundary(v, parts[v], cache):
            gain[v], target[v] = best_move(v, parts[v], vwgt[v], bw, maxw, cache)
        else:
            target[v] = -2


@njit(cache=True, parallel=PRANGE_ONLY)
def build_best(vs, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, gain, target, chunk, parallel_min):
    """Build the entries of the vertices vs (distinct) and set gain[v], target[v] = best_move for
    those on the boundary, target[v] = -2 for the others (-1: on it, without a move)."""
    nb, start, top = cache[3], cache[5], cache[6]
    for i in range(vs.shape[0]):
        v = vs[i]
        if nb[v] < 0:
            start[v] = top[0]
            top[0] += indptr[v + 1] - indptr[v]
    k = maxw.shape[0]
    chunks = (vs.shape[0] + chunk - 1) // chunk
    if vs.shape[0] >= parallel_min:
        for c in prange(chunks):
            _build_best_chunk(np.int64(c), chunk, vs, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache,
                              np.full(k, -1, dtype=np.int64), gain, target)
    else:
        for c in range(chunks):
            _build_best_chunk(c, chunk, vs, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, cache[4], gain,
                              target)


@njit(cache=True, internal=True, inline="always")
def shift(u, b, w, c, cache):
    """Add weight w and c edges (w, c may be negative) to u's entry of block b."""
    block, conn, count, nb, _, start, _ = cache
    base = start[u]
    end = base + nb[u]
    for s in range(base, end):
        if block[s] == b:
            count[s] += c
            if count[s] == 0:              # last edge into b gone: drop the entry
                last = end - 1
                block[s] = block[last]
                conn[s] = conn[last]
                count[s] = count[last]
                nb[u] -= 1
            else:
                conn[s] += w
            return
    block[end] = b                         # a new adjacent block (c > 0 here)
    conn[end] = w
    count[end] = c
    nb[u] += 1


@njit(cache=True, internal=True, inline="always")
def prefetch_entries_ahead(e, end, indices, cache):
    """In a walk over a row ending at ``end``, at entry e: prefetch the slot range of the
    neighbour SLOTS_AHEAD entries on and the entries of the one ENTRIES_AHEAD on. Each is a
    cache miss on large graphs (FM's moves and rollbacks, the least-loss rebalancer)."""
    block, nb, start = cache[0], cache[3], cache[5]
    if e + SLOTS_AHEAD < end:
        ahead = indices[e + SLOTS_AHEAD]
        prefetch(nb, ahead)
        prefetch(start, ahead)
    if e + ENTRIES_AHEAD < end:
        near = indices[e + ENTRIES_AHEAD]
        if nb[near] >= 0:
            prefetch(block, start[near])


@njit(cache=True, internal=True)
def move(v, frm, to, indptr, indices, ewgt, cache):
    """Update the built entries of v's neighbours for v moving from block frm to block to.

    v's own entries do not change: they depend on its neighbours' blocks only.
    """
    nb = cache[3]
    end = indptr[v + 1]
    for e in range(indptr[v], end):
        prefetch_entries_ahead(e, end, indices, cache)
        u = indices[e]
        if nb[u] < 0:
            continue
        w = ewgt[e]
        shift(u, frm, -w, -1, cache)
        shift(u, to, w, 1, cache)


@njit(cache=True, internal=True, inline="always")
def _slot(v, b, cache):
    """The slot of v's entry for block b, or -1 when v has none (v's entries must be built)."""
    block, _, _, nb, _, start, _ = cache
    base = start[v]
    for s in range(base, base + nb[v]):
        if block[s] == b:
            return s
    return -1


@njit(cache=True, internal=True, inline="always")
def inside(v, own, cache):
    """v's edge weight into block own (0 when none)."""
    s = _slot(v, own, cache)
    return cache[1][s] if s >= 0 else 0.0


@njit(cache=True, internal=True, inline="always")
def entry_count(v, b, cache):
    """v's neighbours in block b (v's entries must be built)."""
    s = _slot(v, b, cache)
    return cache[2][s] if s >= 0 else 0


@njit(cache=True, internal=True, inline="always")
def best_move(v, own, w, bw, maxw, cache):
    """Best (gain, target) of moving v (weight w) from block own to an adjacent block with room.

    Ties go to the lighter block (keeps the partition balanced for free), then to the lower
    block id, so the answer depends on the state only, not on the order of the entries.
    Returns (-inf, -1) when no adjacent block has room.
    """
    block, conn, _, nb, _, start, _ = cache
    base = start[v]
    end = base + nb[v]
    internal = 0.0
    for s in range(base, end):
        if block[s] == own:
            internal = conn[s]
            break
    best_gain = -np.inf
    best = -1
    for s in range(base, end):
        b = block[s]
        if b == own or bw[b] + w > maxw[b]:
            continue
        g = conn[s] - internal
        if g > best_gain or (g == best_gain and (bw[b] < bw[best] or (bw[b] == bw[best] and b < best))):
            best_gain = g
            best = b
    return best_gain, best


@njit(cache=True)
def is_boundary(v, own, cache):
    """True when v has a neighbour outside block own (its entries must be built)."""
    block, _, _, nb, _, start, _ = cache
    base = start[v]
    for s in range(base, base + nb[v]):
        if block[s] != own:
            return True
    return False
