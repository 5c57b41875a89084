"""Deterministic parallel k-way FM (numba): 2-way FM on the block pairs of quotient-graph
matchings, all pairs of a matching at the same time.

A pass lists the boundary, weighs every adjacent block pair by its cut, and splits the pairs
into rounds by greedy matchings in order of weight (heaviest first, ties by block ids): in a
round no block is in two pairs, so the pairs' searches (pair_search.pair_task) are
independent and run in ``prange`` over the pairs, a unit of work fixed by the data. Each
pair's seeds are its listed vertices with a neighbour in the other block, in list order;
the round's cut change is the pairs' gains summed in pair order. The result is the same for
any number of threads, and the same on the serial path below ``parallel_min`` list entries.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from ..sorting import argsort_stable
from ..threads import PRANGE_ONLY
from . import gain_cache as gc
from .boundary import boundary_from_scratch, cover_changes, extend_boundary
from .fm2 import MIN_PASS_IMPROVEMENT, passes_end
from .least_loss import rebalance_if_over
from .pair_search import pair_task
from .state import host_block_weights, host_cut, host_overload

# ---- tunables -------------------------------------------------------------------------
# Matching rounds per pass: a mesh's quotient graph (k = 32) has ~90 adjacent pairs, which
# ~8 greedy matchings cover; on power-law graphs every pair is adjacent and the light ones
# left over after this many rounds have little cut to win back.
MAX_ROUNDS = 12
# A pair's global search stops after this many moves without a new best (and never after
# more than the k-way pass's stall): there are ~90 of them per pass where the k-way pass
# made one, so a long fruitless tail is paid ~90 times.
PAIR_STALL_MOVES = 25
# refine_arrays (k > 2) runs these rounds instead of the k-way passes from this many vertices
# up: below, a round's fixed costs (quotient pairs, ~12 rounds of set-up) outweigh its work
# and the list is too short for the threads; per level of rgg 2^16 k = 32 (CPU time, one
# thread) the rounds took 1.3-2.7 x the k-way pass below 20000 vertices, 1.0-1.2 x from 35000
# up, and 0.75-0.93 x on the 2^20 meshes' levels (k = 32) while winning more cut on all of them.
PARALLEL_FM_MIN_VERTICES = 30_000
# ... and only when at most this share of the vertices with an edge is on the boundary: on
# every level of delaunay and rgg (2^16, 2^20) at most 0.40, where the rounds won 1-4x the
# k-way pass's cut; on rmat and ba 2^16 0.67-1.0, where every block pair is adjacent and a
# vertex's best move leads to a third block: the rounds won 0-70% of the k-way pass's (ba 2^16
# k = 32: 0 of 302). Isolated vertices do not count: R-MAT 2^20's finest level has 0.49 of all
# its vertices on the boundary, 0.93 of those with an edge (grouped_fm's rounds instead of
# these: the same time at k = 8 and 32, -0.7% cut at k = 32).
MAX_BOUNDARY_SHARE = 0.5


def with_pair_rounds(call):
    """``call()`` with the rounds on graphs of any size (they take over from
    PARALLEL_FM_MIN_VERTICES): warm-ups on small graphs load or compile their kernels too."""
    global PARALLEL_FM_MIN_VERTICES
    saved = PARALLEL_FM_MIN_VERTICES
    PARALLEL_FM_MIN_VERTICES = 0
    try:
        return call()
    finally:
        PARALLEL_FM_MIN_VERTICES = saved


@njit(cache=True)
def new_workspace(n):
    """Per-vertex scratch for parallel_refine_nb on graphs of up to n vertices, reusable by
    the calls on every level of a hierarchy: fresh pages cost more than the work on them
    (three n-long np.full on delaunay 2^20: 34 ms here, against an 88 ms k-way FM pass).
    (gain, gain epoch, done mark, heap keys, heap vertices, heap slots, move log (2n),
    list classes, boundary list, list flags, epoch clock); the epochs and marks of a call
    are above every earlier call's, so nothing is reset between calls."""
    return (np.empty(n, dtype=np.float64), np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64),
            np.empty(n, dtype=np.float64), np.empty(n, dtype=np.int64), np.full(n, -1, dtype=np.int64),
            np.empty(2 * n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.bool_), np.zeros(1, dtype=np.int64))


@njit(cache=True, internal=True)
def _quotient_pairs(indptr, indices, ewgt, parts, listed, nb):
    """(a, b) of every adjacent block pair (a < b), heaviest cut first (ties by a, then b)."""
    count = 0
    for i in range(nb):
        v = listed[i]
        for e in range(indptr[v], indptr[v + 1]):
            if parts[indices[e]] > parts[v]:
                count += 1
    k_big = np.int64(1) << np.int64(31)
    key = np.empty(count, dtype=np.int64)
    wt = np.empty(count, dtype=np.float64)
    at = 0
    for i in range(nb):
        v = listed[i]
        for e in range(indptr[v], indptr[v + 1]):
            b = parts[indices[e]]
            if b > parts[v]:
                key[at] = parts[v] * k_big + b
                wt[at] = ewgt[e]
                at += 1
    order = np.argsort(key, kind="mergesort")
    npairs = 0
    pkey = np.empty(count, dtype=np.int64)
    neg_w = np.empty(count, dtype=np.float64)
    for i in range(count):
        j = order[i]
        if npairs == 0 or pkey[npairs - 1] != key[j]:
            pkey[npairs] = key[j]
            neg_w[npairs] = 0.0
            npairs += 1
        neg_w[npairs - 1] -= wt[j]
    heavy = argsort_stable(neg_w[:npairs])
    pa = np.empty(npairs, dtype=np.int64)
    pb = np.empty(npairs, dtype=np.int64)
    for i in range(npairs):
        pa[i] = pkey[heavy[i]] // k_big
        pb[i] = pkey[heavy[i]] % k_big
    return pa, pb


@njit(cache=True, internal=True)
def _matching_rounds(pa, pb, k, max_rounds):
    """Round of each pair (-1: none) by greedy matchings over the pairs in order, and the
    number of rounds: a pair joins the first round in which neither block is taken yet."""
    npairs = pa.shape[0]
    rnd = np.full(npairs, -1, dtype=np.int64)
    taken = np.full(k, -1, dtype=np.int64)
    rounds = 0
    for r in range(max_rounds):
        placed = False
        for i in range(npairs):
            if rnd[i] < 0 and taken[pa[i]] != r and taken[pb[i]] != r:
                rnd[i] = r
                taken[pa[i]] = r
                taken[pb[i]] = r
                placed = True
        if not placed:
            break
        rounds = r + 1
    return rnd, rounds


@njit(cache=True, internal=True)
def _classify_chunk(c, chunk, indptr, indices, parts, listed, nb, task_of, ta, tb, cls):
    """cls[i] = the task of list entry i when it has a neighbour in its pair's other block, else -1."""
    for i in range(c * chunk, min(nb, (c + 1) * chunk)):
        v = listed[i]
        t = task_of[parts[v]]
        cls[i] = -1
        if t < 0:
            continue
        other = ta[t] + tb[t] - parts[v]
        for e in range(indptr[v], indptr[v + 1]):
            if parts[indices[e]] == other:
                cls[i] = t
                break


@njit(cache=True, parallel=PRANGE_ONLY)
def _run_round(ta, tb, listed, nb, task_of, cls, stall, local_stall, epoch, indptr, indices, ewgt, vwgt, parts, bw,
               maxw, counts, gain, gain_epoch, done, keys, verts, pos, log_v, chunk, parallel_min):
    """One matching round: seeds per pair, then every pair's task. Returns (gains, kept, log
    offsets) per task, in task order."""
    ntasks = ta.shape[0]
    chunks = (nb + chunk - 1) // chunk
    threaded = nb >= parallel_min
    if threaded:
        for c in prange(chunks):
            _classify_chunk(np.int64(c), chunk, indptr, indices, parts, listed, nb, task_of, ta, tb, cls)
    else:
        for c in range(chunks):
            _classify_chunk(c, chunk, indptr, indices, parts, listed, nb, task_of, ta, tb, cls)
    seed_at = np.zeros(ntasks + 1, dtype=np.int64)
    for i in range(nb):
        if cls[i] >= 0:
            seed_at[cls[i] + 1] += 1
    heap_at = np.zeros(ntasks + 1, dtype=np.int64)
    for t in range(ntasks):
        seed_at[t + 1] += seed_at[t]
        heap_at[t + 1] = heap_at[t] + counts[ta[t]] + counts[tb[t]]
    seeds = np.empty(seed_at[ntasks], dtype=np.int64)
    fill = seed_at[:ntasks].copy()
    for i in range(nb):
        t = cls[i]
        if t >= 0:
            seeds[fill[t]] = listed[i]
            fill[t] += 1
    gains = np.zeros(ntasks, dtype=np.float64)
    kept = np.zeros(ntasks, dtype=np.int64)
    sizes = np.zeros(ntasks, dtype=np.int64)
    if threaded and ntasks > 1:
        for t in prange(ntasks):
            g, m = pair_task(
                ta[t], tb[t], seeds[seed_at[t]:seed_at[t + 1]], stall, local_stall, epoch, indptr, indices, ewgt,
                vwgt, parts, bw, maxw, counts, gain, gain_epoch, done, keys[heap_at[t]:heap_at[t + 1]],
                verts[heap_at[t]:heap_at[t + 1]], pos, sizes[t:t + 1], log_v, 2 * heap_at[t])
            gains[t] = g
            kept[t] = m
    else:
        for t in range(ntasks):
            g, m = pair_task(
                ta[t], tb[t], seeds[seed_at[t]:seed_at[t + 1]], stall, local_stall, epoch, indptr, indices, ewgt,
                vwgt, parts, bw, maxw, counts, gain, gain_epoch, done, keys[heap_at[t]:heap_at[t + 1]],
                verts[heap_at[t]:heap_at[t + 1]], pos, sizes[t:t + 1], log_v, 2 * heap_at[t])
            gains[t] = g
            kept[t] = m
    return gains, kept, 2 * heap_at


@njit(cache=True)
def parallel_refine_nb(indptr, indices, ewgt, vwgt, parts, maxw, passes, seed, stall, rebalance, local_stall,
                       known_cut, hint, workspace, max_share, chunk, parallel_min):
    """fm.refine_nb's contract with the pair rounds for its passes (``stall``: a pair's global
    search's): rebalance if overweight,
    then up to ``passes`` passes of matching rounds, in place. ``hint``: flags of a superset of
    the input's boundary or an empty array; when given it is extended to cover the result's.
    ``workspace``: new_workspace of at least n vertices, left ready for the next call.
    Returns (initial cut, cut, moves, passes done, rebalance moves, overload); passes done
    = -1 when more than ``max_share`` of the vertices with an edge are on the boundary (after
    any rebalancing, with the hint extended): then no pass ran."""
    n = indptr.shape[0] - 1
    k = maxw.shape[0]
    bw = host_block_weights(parts, vwgt, k)
    initial_cut = known_cut if known_cut >= 0 else host_cut(indptr, indices, ewgt, parts)
    rb_moves = 0
    if rebalance and host_overload(bw, maxw) > 0:
        before = parts.copy()
        rb_moves = rebalance_if_over(indptr, indices, ewgt, vwgt, parts, bw, maxw, seed,
                                     gc.new_cache(n, indices.shape[0], k))
        if hint.shape[0]:
            cover_changes(indptr, indices, before, parts, hint)
    cut = initial_cut if rb_moves == 0 else host_cut(indptr, indices, ewgt, parts)
    counts = np.zeros(k, dtype=np.int64)
    linked = 0                 # vertices with an edge: an isolated one is never on the boundary
    for v in range(n):
        counts[parts[v]] += 1
        linked += indptr[v + 1] > indptr[v]
    gain, gain_epoch, done, keys, verts, pos, log_v, cls, listed, in_list, clock = workspace
    first_epoch = clock[0]
    clock[0] += passes * MAX_ROUNDS
    nb = boundary_from_scratch(indptr, indices, parts, listed, in_list, hint)
    if nb > max_share * linked:     # declined: the caller runs the k-way passes (passes done = -1)
        return initial_cut, cut, 0, -1, rb_moves, host_overload(bw, maxw)
    task_of = np.full(k, -1, dtype=np.int64)
    moves = 0
    done_passes = 0
    for p in range(passes):
        before_cut = cut
        before_over = host_overload(bw, maxw)
        pa, pb = _quotient_pairs(indptr, indices, ewgt, parts, listed, nb)
        rnd, rounds = _matching_rounds(pa, pb, k, MAX_ROUNDS)
        kept_pass = 0
        for r in range(rounds):
            ntasks = 0
            for i in range(pa.shape[0]):
                if rnd[i] == r:
                    ntasks += 1
            ta = np.empty(ntasks, dtype=np.int64)
            tb = np.empty(ntasks, dtype=np.int64)
            t = 0
            for i in range(pa.shape[0]):
                if rnd[i] == r:
                    ta[t] = pa[i]
                    tb[t] = pb[i]
                    task_of[pa[i]] = t
                    task_of[pb[i]] = t
                    t += 1
            gains, kept, log_at = _run_round(ta, tb, listed, nb, task_of, cls, stall, local_stall,
                                             first_epoch + p * MAX_ROUNDS + r, indptr, indices, ewgt, vwgt, parts, bw, maxw, counts,
                                             gain, gain_epoch, done, keys, verts, pos, log_v, chunk, parallel_min)
            for t in range(ntasks):
                task_of[ta[t]] = -1
                task_of[tb[t]] = -1
                cut -= gains[t]
                kept_pass += kept[t]
                # the boundary changes only around moved vertices
                nb = extend_boundary(indptr, indices, log_v, log_at[t], log_at[t] + kept[t], listed, nb, in_list)
                if hint.shape[0]:
                    for i in range(log_at[t], log_at[t] + kept[t]):
                        v = log_v[i]
                        hint[v] = True
                        for e in range(indptr[v], indptr[v + 1]):
                            hint[indices[e]] = True
        moves += kept_pass
        done_passes += 1
        if passes_end(kept_pass, bw, maxw, before_over, before_cut, cut, MIN_PASS_IMPROVEMENT):
            break
    return initial_cut, cut, moves, done_passes, rb_moves, host_overload(bw, maxw)
