"""Red-blue rounds (red_blue.py) as one compiled kernel on the CPU's threads.

The same rounds as the whole-array formulation the GPU runs: the same colours, proposals,
answers and compactions, so the same matching and per-round stats. The live entries are
kept grouped by their source vertex (in vertex order, as the CSR rows are), and every phase
of a round runs over fixed chunks of the vertices that still have live entries, each vertex
reading and writing only its own slots:
- a blue vertex scans its entries for its proposal (its heaviest, or random, live red
  neighbour);
- a red vertex scans its entries for neighbours whose proposal points back at it and
  answers the best of them ("pull" instead of a scatter-min over the proposals), then the
  two match;
- compaction counts each chunk's kept entries, offsets the chunks in order and copies into
  a second buffer.
The choices compare a strict order (rating or hash, then the other end), so neither the
order of the scans nor the number of threads changes a result.

Every entry left after a compaction is live (both ends free, neither dead): the list is
symmetric, so a vertex that kept no entry -- the one way to die -- is nobody's neighbour
any more. The rounds therefore need no live flags and no dead marks: a round's live entries
are the list, and a vertex drops out with its last entry.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..backend import rng as _rng
from ..jit import njit
from ..threads import PRANGE_ONLY


@njit(cache=True, internal=True)
def quarter_md5_at(v, r, init, k, shifts):
    """``quarter_md5`` of one vertex number v (uint32) with round number r."""
    # numba widens uint32 arithmetic to 64 bits: every result is cut back to 32 bits
    u32 = np.uint32
    a, b, c, d = init[0], init[1], init[2], init[3]
    word = u32(v)  # word i = r^i v (mod 2**32)
    for i in range(16):
        f = (b & c) | (u32(~b) & d)
        f = u32(f + a + k[i] + word)
        word = u32(word * r)
        a, d, c = d, c, b
        b = u32(b + u32((f << shifts[i]) | (f >> (u32(32) - shifts[i]))))
    return u32(u32(init[0] + a) + u32(init[1] + b) + u32(init[2] + c) + u32(init[3] + d))


@njit(cache=True, internal=True)
def _prefer(i, other_i, j, other_j, order, entry, key, weighted):
    """Whether entry i (other end other_i) beats entry j for the same chooser: weighted, the
    higher rating then the smaller other end; random, the smaller hash of the entry then the
    smaller other end."""
    if weighted:
        if order[i] != order[j]:
            return order[i] > order[j]
    else:
        hi, hj = _rng.hash32_at(entry[i], key), _rng.hash32_at(entry[j], key)
        if hi != hj:
            return hi < hj
    return other_i < other_j


@njit(cache=True, internal=True)
def _colour_chunk(c, chunk, verts, nverts, blue, choice, r, threshold, md5_init, md5_k, md5_s):
    """Colour the chunk's vertices (blue with probability threshold / 2^32) and clear their choices."""
    for j in range(c * chunk, min(nverts, (c + 1) * chunk)):
        x = verts[j]
        blue[x] = np.uint64(quarter_md5_at(np.uint32(x + 1), r, md5_init, md5_k, md5_s)) < threshold
        choice[x] = -1


@njit(cache=True, internal=True)
def _propose_chunk(c, chunk, verts, nverts, start, end, dst, blue, choice, order, entry, key, weighted):
    """Each blue vertex picks one entry to a red neighbour."""
    for j in range(c * chunk, min(nverts, (c + 1) * chunk)):
        u = verts[j]
        if not blue[u]:
            continue
        best = -1
        for i in range(start[j], end[j]):
            if not blue[dst[i]]:
                if best < 0 or _prefer(i, dst[i], best, dst[best], order, entry, key, weighted):
                    best = i
        choice[u] = best


@njit(cache=True, internal=True)
def _answer_chunk(c, chunk, verts, nverts, start, end, dst, blue, choice, mate, order, entry, key, weighted,
                  counts):
    """Each red vertex answers its best proposer and the two match (counts[c]: vertices
    matched). Only proposals (choice of blue vertices) are read, only red slots written."""
    won = 0
    for j in range(c * chunk, min(nverts, (c + 1) * chunk)):
        v = verts[j]
        if blue[v]:
            continue
        best, best_u = -1, -1
        for i in range(start[j], end[j]):
            u = dst[i]
            p = choice[u] if blue[u] else -1
            if p >= 0 and dst[p] == v:
                if best < 0 or _prefer(p, u, best, best_u, order, entry, key, weighted):
                    best, best_u = p, u
        choice[v] = best
        if best >= 0:
            mate[v] = best_u
            mate[best_u] = v
            won += 2
    counts[c] = won


@njit(cache=True, internal=True)
def _count_kept_chunk(c, chunk, verts, nverts, start, end, dst, mate, kept, counts):
    """Entries between free vertices that each vertex keeps (kept[j]); the chunk's totals of
    entries and of vertices keeping any (counts[2c], counts[2c + 1])."""
    entries = 0
    vertices = 0
    for j in range(c * chunk, min(nverts, (c + 1) * chunk)):
        x = verts[j]
        k = 0
        if mate[x] < 0:
            for i in range(start[j], end[j]):
                k += mate[dst[i]] < 0
        kept[j] = k
        entries += k
        vertices += k > 0
    counts[2 * c] = entries
    counts[2 * c + 1] = vertices


@njit(cache=True, internal=True)
def _copy_kept_chunk(c, chunk, verts, nverts, start, end, dst, entry, order, mate, kept, weighted,
                     at_entry, at_vertex, verts2, start2, end2, dst2, entry2, order2):
    """Copy the chunk's kept entries and vertices to the second buffers from the offsets."""
    e = at_entry
    w = at_vertex
    for j in range(c * chunk, min(nverts, (c + 1) * chunk)):
        if kept[j] == 0:
            continue
        x = verts[j]
        verts2[w] = x
        start2[w] = e
        for i in range(start[j], end[j]):
            v = dst[i]
            if mate[v] < 0:
                dst2[e] = v
                entry2[e] = entry[i]
                if weighted:
                    order2[e] = order[i]
                e += 1
        end2[w] = e
        w += 1


@njit(cache=True, parallel=PRANGE_ONLY)
def red_blue_kernel(indptr, indices, order_in, weighted, mate, seed, max_rounds, threshold, md5_init, md5_k,
                    md5_s, r_stream, propose_stream, respond_stream, chunk, parallel_min):
    """The rounds on the CSR adjacency (symmetric, no self-loops); fills ``mate`` (all -1 on
    entry), returns (matched vertices after each round, live entries of each round).
    ``order_in``: uint64 rating keys per entry (weighted)."""
    n = mate.shape[0]
    m = indices.shape[0]
    dst, dst2 = indices.astype(np.int64), np.empty(m, dtype=np.int64)
    entry, entry2 = np.arange(m), np.empty(m, dtype=np.int64)
    order, order2 = (order_in.copy(), np.empty(m, dtype=np.uint64)) if weighted else (order_in, order_in)
    verts, verts2 = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    start, start2 = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    end, end2 = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    nverts = 0
    for u in range(n):          # isolated vertices are dead from the start
        if indptr[u + 1] > indptr[u]:
            verts[nverts], start[nverts], end[nverts] = u, indptr[u], indptr[u + 1]
            nverts += 1
    kept = np.empty(n, dtype=np.int64)
    blue = np.zeros(n, dtype=np.bool_)
    choice = np.full(n, -1, dtype=np.int64)
    counts = np.zeros(2 * ((n + chunk - 1) // chunk) + 2, dtype=np.int64)
    matched_per_round = np.zeros(max_rounds, dtype=np.int64)
    live_per_round = np.zeros(max_rounds, dtype=np.int64)
    r_key = _rng.stream_key_at(seed, r_stream)
    alive = m
    total = 0
    rounds = 0
    while alive > 0 and rounds < max_rounds:
        rounds += 1
        r = np.uint32(_rng.hash32_at(rounds, r_key) | np.uint32(1))
        pkey = _rng.stream_key_at(seed, propose_stream + rounds)
        akey = _rng.stream_key_at(seed, respond_stream + rounds)
        chunks = (nverts + chunk - 1) // chunk
        if nverts >= parallel_min:
            for c in prange(chunks):
                _colour_chunk(np.int64(c), chunk, verts, nverts, blue, choice, r, threshold, md5_init, md5_k, md5_s)
            for c in prange(chunks):
                _propose_chunk(np.int64(c), chunk, verts, nverts, start, end, dst, blue, choice, order, entry, pkey,
                               weighted)
            for c in prange(chunks):
                _answer_chunk(np.int64(c), chunk, verts, nverts, start, end, dst, blue, choice, mate, order,
                              entry, akey, weighted, counts)
        else:
            for c in range(chunks):
                _colour_chunk(c, chunk, verts, nverts, blue, choice, r, threshold, md5_init, md5_k, md5_s)
            for c in range(chunks):
                _propose_chunk(c, chunk, verts, nverts, start, end, dst, blue, choice, order, entry, pkey, weighted)
            for c in range(chunks):
                _answer_chunk(c, chunk, verts, nverts, start, end, dst, blue, choice, mate, order, entry, akey,
                              weighted, counts)
        for c in range(chunks):
            total += counts[c]
        matched_per_round[rounds - 1] = total
        live_per_round[rounds - 1] = alive
        # compaction: keep the entries between free vertices, in the same order
        if nverts >= parallel_min:
            for c in prange(chunks):
                _count_kept_chunk(np.int64(c), chunk, verts, nverts, start, end, dst, mate, kept, counts)
        else:
            for c in range(chunks):
                _count_kept_chunk(c, chunk, verts, nverts, start, end, dst, mate, kept, counts)
        at_e, at_v = 0, 0
        for c in range(chunks):   # counts become the chunks' output offsets
            ke, kv = counts[2 * c], counts[2 * c + 1]
            counts[2 * c], counts[2 * c + 1] = at_e, at_v
            at_e += ke
            at_v += kv
        if nverts >= parallel_min:
            for c in prange(chunks):
                _copy_kept_chunk(np.int64(c), chunk, verts, nverts, start, end, dst, entry, order, mate, kept,
                                 weighted, counts[2 * c], counts[2 * c + 1], verts2, start2, end2, dst2, entry2,
                                 order2)
        else:
            for c in range(chunks):
                _copy_kept_chunk(c, chunk, verts, nverts, start, end, dst, entry, order, mate, kept, weighted,
                                 counts[2 * c], counts[2 * c + 1], verts2, start2, end2, dst2, entry2, order2)
        alive, nverts = at_e, at_v
        verts, verts2 = verts2, verts
        start, start2 = start2, start
        end, end2 = end2, end
        dst, dst2 = dst2, dst
        entry, entry2 = entry2, entry
        if weighted:
            order, order2 = order2, order
    return matched_per_round[:rounds], live_per_round[:rounds]
