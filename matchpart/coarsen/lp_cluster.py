"""Size-constrained label propagation on the CPU: compiled, on the threads, the same labels
for any number of them (and the same as cluster.py's whole-array formulation).

A round has two phases. Decide (fixed chunks of rows on the threads, row_chunk_starts): every
active vertex sums its edge weight to each neighbouring cluster of the previous round's
labels, in CSR order, in a small hash table of its chunk, and picks the cluster of highest
connection weight (ties: the larger hash of (vertex, cluster), then the smaller label) among
those with room for it under
the previous round's cluster weights; it moves when that beats its own cluster. A vertex is
evaluated while pending: at first, then again after it or a neighbour moved (later rounds
cost what changed: R-MAT 2^20 moves 273k vertices in the first round, 5k in the eighth). Apply (one
pass, vertex order): moves into a cluster are accepted while the weights arriving in vertex
order keep it within the cap; leaving vertices are not counted as room, so no cluster ever
exceeds the cap. Nothing depends on which thread ran a chunk.

Whether a vertex is pending is read, not written: the apply stamps each moved vertex with the
round, and an active vertex is pending when it or a neighbour carries a stamp from its last
evaluation's round on. Flagging the neighbours of every moved vertex took a pass over their
rows per round, writes on the threads (rgg 2^20's first level: 65 of 410 ms), where the
stamps cost a read of an active vertex's row up to its first stamped neighbour: that level's
rounds 0.92 x the time on one and two threads (Barabasi-Albert 2^20: 0.97-0.99 x), the same labels.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..backend.rng import hash32_at
from ..chunks import max_chunk_entries, row_chunk_starts
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from ..threads import PRANGE_ONLY

# The rounds prefetch the neighbours' labels on graphs of this many vertices or more whose
# numbering is scattered (numbering.scattered_ids): where the labels (int32) and cluster
# weights outgrow a core's cache and neighbours lie anywhere. Elsewhere the prefetches are
# only instructions: a level's rounds, 2 threads, interleaved, without / with them: R-MAT
# 2^16 (scattered, 65k vertices) 0.83 x, rgg 2^20 numbered breadth-first 0.94 x;
# Barabasi-Albert 2^20's second level (scattered, 274k) 1.12 x and its first 1.4 x.
PREFETCH_MIN_VERTICES = 1 << 17
# Multiplier of the chunk tables' hash of a cluster label (Knuth's 2^64 / golden ratio).
TABLE_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, internal=True)
def _table_size(c, starts, indptr):
    """A power of two above twice the largest degree of chunk c (a table of at most half load)."""
    most = 1
    for v in range(starts[c], starts[c + 1]):
        most = max(most, indptr[v + 1] - indptr[v])
    size = 4
    while size < 2 * most:
        size *= 2
    return size


@njit(cache=True, internal=True)
def _decide_chunk(c, starts, indptr, indices, ewgt, vwgt, labels, weight, cap, active_key, tie_key, evaluated,
                  moved_at, rnd, target, fresh, prefetching):
    """target[v] = the cluster vertex v of chunk c moves to (-1: stays), for the active
    vertices that are pending (_pending); evaluated[v] = rnd for those. ``fresh``: every
    cluster is still its own vertex (the first round); ``prefetching``: see PREFETCH_MIN_VERTICES."""
    n = indptr.shape[0] - 1
    size = _table_size(c, starts, indptr)
    keys = np.full(size, -1, dtype=np.int64)
    conn = np.zeros(size, dtype=np.float64)
    used = np.empty(size, dtype=np.int64)   # occupied slots in order of first appearance
    last = indptr[starts[c + 1]] - PREFETCH_DISTANCE
    for v in range(starts[c], starts[c + 1]):
        target[v] = -1
        if (hash32_at(v, active_key) & np.uint32(1)) == 0 or not _pending(v, indptr, indices, evaluated, moved_at):
            continue
        evaluated[v] = rnd
        if fresh:
            target[v] = _singleton_choice(v, indptr, indices, ewgt, weight, np.float64(vwgt[v]), cap, tie_key, n)
            continue
        # a table of v's own size (half load at most) at the front of the chunk's: its slots
        # stay in the core's cache, where hashing into the chunk's table, sized for its
        # largest row, missed it (Barabasi-Albert 2^20: a first level's rounds 0.95 x the time)
        vsize = 4
        while vsize < 2 * (indptr[v + 1] - indptr[v]):
            vsize *= 2
        mask = np.uint64(vsize - 1)
        nused = 0
        for e in range(indptr[v], indptr[v + 1]):
            if prefetching and e < last:   # the label of a neighbour a few entries on: a cache miss
                prefetch(labels, indices[e + PREFETCH_DISTANCE])
            lab = labels[indices[e]]
            s = (np.uint64(lab) * TABLE_MIX) >> np.uint64(32) & mask
            while keys[s] != -1 and keys[s] != lab:
                s = (s + np.uint64(1)) & mask
            if keys[s] == -1:
                keys[s] = lab
                conn[s] = 0.0
                used[nused] = s
                nused += 1
            conn[s] += np.float64(ewgt[e])
        own = labels[v]
        own_conn = 0.0
        best, best_conn, best_tie = -1, 0.0, np.uint32(0)
        wv = np.float64(vwgt[v])
        for i in range(nused):
            s = used[i]
            lab = keys[s]
            cw = conn[s]
            keys[s] = -1
            if lab == own:
                own_conn = cw
                continue
            best, best_conn, best_tie = _better(v, lab, cw, n, tie_key, weight, wv, cap, best, best_conn, best_tie)
        if best >= 0 and best_conn > own_conn:
            target[v] = best


@njit(cache=True, internal=True)
def _pending(v, indptr, indices, evaluated, moved_at):
    """v is pending: never evaluated, or it or a neighbour moved in the round of its last
    evaluation (after it) or later."""
    since = evaluated[v]
    if since < 0 or moved_at[v] >= since:
        return True
    for e in range(indptr[v], indptr[v + 1]):
        if moved_at[indices[e]] >= since:
            return True
    return False


@njit(cache=True, internal=True)
def _better(v, lab, cw, n, tie_key, weight, wv, cap, best, best_conn, best_tie):
    """(best, best_conn, best_tie) after offering v cluster ``lab`` joined by weight cw: the
    cluster of highest connection with room for v; ties: the larger hash of (v, lab), then
    the smaller label."""
    if best >= 0 and cw < best_conn:
        return best, best_conn, best_tie
    # an int64 counter like every caller's (one compile of hash32_at); the same bits
    tie = hash32_at(np.int64(np.uint64(v) * np.uint64(n) + np.uint64(lab)), tie_key)
    if best >= 0 and cw == best_conn and (tie < best_tie or (tie == best_tie and lab > best)):
        return best, best_conn, best_tie
    # only a candidate that beats the best so far reads its cluster's weight (a random
    # access): ~log(degree) of them per vertex instead of every one
    if weight[lab] + wv <= cap:
        return lab, cw, tie
    return best, best_conn, best_tie


@njit(cache=True, internal=True)
def _singleton_choice(v, indptr, indices, ewgt, weight, wv, cap, tie_key, n):
    """_decide_chunk's choice for v while every cluster is a single vertex: a neighbour's
    cluster is the neighbour, joined by that one entry (a Graph's rows hold no duplicates), so
    no table is needed; the same candidates in the same order, hence the same pick. The first
    round is the costliest (every vertex pending): a first level's rounds took 0.93 x the time
    on R-MAT 2^16 and 0.97 x on rgg 2^20 (1 and 2 threads)."""
    own_conn = 0.0
    best, best_conn, best_tie = -1, 0.0, np.uint32(0)
    for e in range(indptr[v], indptr[v + 1]):
        lab = np.int64(indices[e])
        cw = np.float64(ewgt[e])
        if lab == v:
            own_conn += cw
            continue
        best, best_conn, best_tie = _better(v, lab, cw, n, tie_key, weight, wv, cap, best, best_conn, best_tie)
    if best >= 0 and best_conn > own_conn:
        return best
    return -1


@njit(cache=True, parallel=PRANGE_ONLY)
def lp_round(indptr, indices, ewgt, vwgt, labels, weight, cap, active_key, tie_key, evaluated, moved_at, rnd, target,
             incoming, starts, parallel_min, fresh, prefetching):
    """Round ``rnd`` (decide, then apply); updates labels, weight, evaluated and moved_at (the
    round each moved vertex last moved in), returns the moves. ``incoming`` is all zeros on
    entry and on return.

    The apply costs O(moves) beyond one read of ``target``: cluster weights change by the
    moved vertices' weights (exact for integer weights, like the whole-array formulation's
    sums), where recomputing them and clearing ``incoming`` took three more passes over n
    (rgg 2^20: 10-15% of a round at one thread, all of it serial)."""
    n = indptr.shape[0] - 1
    chunks = starts.shape[0] - 1
    if n >= parallel_min:
        for c in prange(chunks):
            _decide_chunk(np.int64(c), starts, indptr, indices, ewgt, vwgt, labels, weight, cap, active_key, tie_key,
                          evaluated, moved_at, rnd, target, fresh, prefetching)
    else:
        for c in range(chunks):
            _decide_chunk(c, starts, indptr, indices, ewgt, vwgt, labels, weight, cap, active_key, tie_key,
                          evaluated, moved_at, rnd, target, fresh, prefetching)
    # accept in vertex order against the previous round's weights; a refused move keeps its
    # target as -2 - t so that the second pass can clear incoming[t]
    for v in range(n):
        t = target[v]
        if t < 0:
            continue
        incoming[t] += np.float64(vwgt[v])
        if weight[t] + incoming[t] > cap:
            target[v] = -2 - t
    moved = 0
    for v in range(n):
        t = target[v]
        if t == -1:
            continue
        if t < -1:
            incoming[-2 - t] = 0.0
            continue
        incoming[t] = 0.0
        w = np.float64(vwgt[v])
        weight[labels[v]] -= w
        weight[t] += w
        labels[v] = t
        moved_at[v] = rnd
        moved += 1
    return moved


def lp_labels(indptr, indices, ewgt, vwgt, cap, active_keys, tie_keys, chunk, parallel_min, converged_share,
              prefetching=True):
    """Labels after len(active_keys) rounds (keys: numpy uint64, one per round, from rng), or
    after the first round that moves fewer than converged_share x n vertices. ``prefetching``:
    prefetch the neighbours' labels (PREFETCH_MIN_VERTICES); the labels do not depend on it."""
    n = indptr.shape[0] - 1
    # int32 labels (while they fit): the rounds read labels[indices[e]] at random, and half the
    # bytes stay in cache longer (Barabasi-Albert 2^20's first level, best of 11: 0.89 x the
    # time on one thread, 0.98 x on two; median 0.92 x and 0.94 x)
    labels = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    weight = vwgt.astype(np.float64)
    target = np.empty(n, dtype=np.int64)
    incoming = np.zeros(n, dtype=np.float64)
    stamp = np.int16 if active_keys.shape[0] < 2**15 else np.int64
    evaluated = np.full(n, -1, dtype=stamp)     # the round of each vertex's last evaluation
    moved_at = np.full(n, -1, dtype=stamp)      # ... and of its last move
    starts = row_chunk_starts(indptr, chunk, max_chunk_entries(chunk, n, indices.shape[0]))
    for r in range(active_keys.shape[0]):
        moved = lp_round(indptr, indices, ewgt, vwgt, labels, weight, float(cap), active_keys[r], tie_keys[r],
                         evaluated, moved_at, stamp(r), target, incoming, starts, parallel_min, r == 0,
                         bool(prefetching))
        if moved < converged_share * n:
            break
    return labels.astype(np.int64)
