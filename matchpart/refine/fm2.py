"""Compiled 2-way FM pass (bisection): one max-heap per side over a 2-way gain cache.

For two blocks a vertex's gain is one number (edge weight to the other side minus to its
own), kept in ``gain`` and updated in O(1) per edge when a neighbour moves: the 2-way form
of the k-way gain cache. Used by initial partitioning and pairwise refinement.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from . import gain_cache as gc
from .boundary import shuffled_boundary
from .heap import heap_pop, heap_remove, heap_set
from .least_loss import rebalance_if_over
from .state import better_state, host_block_weights, host_cut, host_overload

# Stop early when a whole pass improved the cut by less than this fraction: further passes
# on the same local optimum only repeat the same moves. (The k-way passes use it too.)
MIN_PASS_IMPROVEMENT = 1e-4


@njit(cache=True, internal=True)
def fm2_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, stall, cut, boundary_only):
    """One 2-way FM pass (one queue per side) in place; same contract as kway_fm.fm_pass.

    Unlike the k-way pass, a move may overfill the other side when no top move fits: with
    little or no slack (a bisection of unit weights into exact halves) FM then still swaps
    vertices, one move out and one back, and the rollback keeps only balanced best states.
    With boundary_only=False interior and isolated vertices are queued too, so balance can
    also be restored with them (needed on small disconnected graphs).
    """
    n = indptr.shape[0] - 1
    keys = np.empty((2, n), dtype=np.float64)
    verts = np.empty((2, n), dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)  # slot in the heap of the vertex's current side
    sizes = np.zeros((2, 1), dtype=np.int64)
    gain = np.zeros(n, dtype=np.float64)  # edge weight to the other side minus to its own
    locked = np.zeros(n, dtype=np.bool_)
    log_v = np.empty(n, dtype=np.int64)
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            gain[v] += ewgt[e] if parts[indices[e]] != parts[v] else -ewgt[e]
    for i in range(order.shape[0]):  # boundary vertices, in random order for tie-breaking
        v = order[i]
        if not boundary_only:
            heap_set(keys[parts[v]], verts[parts[v]], pos, sizes[parts[v]], v, gain[v])
            continue
        for e in range(indptr[v], indptr[v + 1]):
            if parts[indices[e]] != parts[v]:
                s = parts[v]
                heap_set(keys[s], verts[s], pos, sizes[s], v, gain[v])
                break

    cur_cut = cut
    cur_over = host_overload(bw, maxw)
    best_cut = cur_cut
    best_over = cur_over
    best_len = 0
    nmoves = 0
    since_best = 0
    while since_best < stall:
        fits0 = sizes[0, 0] > 0 and bw[1] + vwgt[verts[0, 0]] <= maxw[1]
        fits1 = sizes[1, 0] > 0 and bw[0] + vwgt[verts[1, 0]] <= maxw[0]
        if fits0 and fits1:
            s = 0 if keys[0, 0] >= keys[1, 0] else 1
        elif fits0:
            s = 0
        elif fits1:
            s = 1
        elif sizes[0, 0] > 0 and sizes[1, 0] > 0:
            s = 0 if bw[0] * maxw[1] >= bw[1] * maxw[0] else 1  # nothing fits: unload the fuller side
        elif sizes[0, 0] > 0:
            s = 0
        elif sizes[1, 0] > 0:
            s = 1
        else:
            break
        v, g = heap_pop(keys[s], verts[s], pos, sizes[s])
        t = 1 - s
        w = vwgt[v]
        parts[v] = t
        bw[s] -= w
        bw[t] += w
        cur_over = max(bw[0] - maxw[0], 0.0) + max(bw[1] - maxw[1], 0.0)
        cur_cut -= g
        locked[v] = True
        log_v[nmoves] = v
        nmoves += 1
        if better_state(cur_over, cur_cut, best_over, best_cut):
            best_over = cur_over
            best_cut = cur_cut
            best_len = nmoves
            since_best = 0
        else:
            since_best += 1
        gain[v] = -gain[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            su = parts[u]
            # v left side s for side t: u on s lost an inside edge, u on t gained one
            gain[u] += 2.0 * ewgt[e] if su == s else -2.0 * ewgt[e]
            if locked[u]:
                continue
            boundary = su == s or not boundary_only
            for f in range(indptr[u], indptr[u + 1]):
                if boundary:
                    break
                if parts[indices[f]] != su:
                    boundary = True
                    break
            if boundary:
                heap_set(keys[su], verts[su], pos, sizes[su], u, gain[u])
            else:
                heap_remove(keys[su], verts[su], pos, sizes[su], u)

    for i in range(nmoves - 1, best_len - 1, -1):  # roll back to the best prefix
        v = log_v[i]
        t = parts[v]
        parts[v] = 1 - t
        bw[t] -= vwgt[v]
        bw[1 - t] += vwgt[v]
    return best_cut, best_len


@njit(cache=True, internal=True)
def fm2_passes(indptr, indices, ewgt, vwgt, parts, bw, maxw, passes, stall, min_gain, boundary_only, cut):
    """Up to ``passes`` 2-way passes from a partition of cut ``cut``, in place; returns (cut,
    moves kept, passes done). Each pass queues the boundary (every vertex with
    boundary_only=False) in a random order from numba's generator, which the caller seeds.
    Stops after a pass that kept no move, or that neither reduced the overload nor the cut by
    more than ``min_gain`` of it (passes_end).
    """
    n = indptr.shape[0] - 1
    moves = 0
    done = 0
    no_hint = np.empty(0, dtype=np.bool_)
    for p in range(passes):
        before_cut = cut
        before_over = host_overload(bw, maxw)
        order = shuffled_boundary(indptr, indices, parts, no_hint) if boundary_only else np.random.permutation(n)
        cut, kept = fm2_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, stall, cut, boundary_only)
        moves += kept
        done += 1
        if passes_end(kept, bw, maxw, before_over, before_cut, cut, min_gain):
            break
    return cut, moves, done


@njit(cache=True, internal=True)
def passes_end(kept, bw, maxw, before_over, before_cut, cut, min_gain):
    """Whether FM's passes end after one that kept no move, or that lowered neither the
    overload nor the cut by more than ``min_gain`` of it (the same local optimum again)."""
    return kept == 0 or (host_overload(bw, maxw) >= before_over and before_cut - cut <= min_gain * max(before_cut, 1.0))


@njit(cache=True, internal=True)
def refine2(indptr, indices, ewgt, vwgt, side, maxw, passes, seed, stall, boundary_only, cache):
    """fm.refine_nb for two blocks, without its k-way code (for kernels that refine many
    bisections): rebalance if a side is over its bound, then up to ``passes`` 2-way passes on
    ``side`` in place. ``cache``: an unbuilt 2-block gain cache for the rebalancer, left
    unbuilt. Returns (initial cut, cut, overload)."""
    bw = host_block_weights(side, vwgt, 2)
    initial_cut = host_cut(indptr, indices, ewgt, side)
    moved = rebalance_if_over(indptr, indices, ewgt, vwgt, side, bw, maxw, seed, cache)
    np.random.seed(seed)
    cut = initial_cut if moved == 0 else host_cut(indptr, indices, ewgt, side)
    cut, _, _ = fm2_passes(indptr, indices, ewgt, vwgt, side, bw, maxw, passes, stall, MIN_PASS_IMPROVEMENT,
                           boundary_only, cut)
    gc.reset(cache)
    return initial_cut, cut, host_overload(bw, maxw)
