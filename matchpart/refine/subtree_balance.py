"""Rebalancing and cut-lowering passes built on subtree_moves (contiguity's step after the
fragments have moved): every move keeps every block connected.

Rebalancing moves subtrees out of the most overweight block into adjacent blocks with room;
where no subtree fits (the blocks around are full, or their room is smaller than the
lightest subtree that touches them), it pushes along a chain of blocks found by a
breadth-first search on the block graph, ending at the first block with room for the
lightest subtree of the block before it. The chain runs from its end: each hop moves
enough into the next block to make room for the hop before it.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from .connected_moves import block_totals
from .subtree_moves import move_subtrees, workspace

# Rebalancing rounds (each moves subtrees out of the most overweight block, directly or along
# a chain of blocks); it stops earlier after SUBTREE_STALL rounds that did not lower the total
# overload below its best.
MAX_SUBTREE_ROUNDS = 400
SUBTREE_STALL = 12


@njit(cache=True, internal=True)
def _chain(over, need, indptr, indices, ewgt, vwgt, parts, bw, maxw, blocked, ws, floor):
    """Breadth-first search on the block graph from ``over`` (a hop c -> d exists where a
    subtree of c touches d and the hop is not blocked) to the first block with room for the
    lightest subtree of the block before it. Returns (path, amounts, hops): path[0] = over,
    path[hops] the end; amounts[i]: the weight the hop path[i] -> path[i + 1] should move.
    hops = 0: no such chain."""
    k = bw.shape[0]
    prev = np.full(k, -1, dtype=np.int64)
    lightest = np.full(k, np.inf)          # lightest subtree of prev[d] that could move to d
    prev[over] = over
    queue = np.empty(k, dtype=np.int64)
    queue[0] = over
    none = np.zeros(k, dtype=np.bool_)
    head, tail, end = 0, 1, -1
    while head < tail and end < 0:
        c = queue[head]
        head += 1
        # no moves (max_loss -inf); fills floor for c
        move_subtrees(c, np.inf, -np.inf, indptr, indices, ewgt, vwgt, parts, bw, maxw, none, ws, floor)
        for d in range(k):
            if d != c and prev[d] < 0 and floor[d] < np.inf and not blocked[c, d]:
                prev[d] = c
                lightest[d] = floor[d]
                if maxw[d] - bw[d] >= floor[d]:
                    end = d
                    break
                queue[tail] = d
                tail += 1
    path = np.empty(k, dtype=np.int64)
    amounts = np.zeros(k)
    if end < 0:
        return path, amounts, 0
    hops = 0
    d = end
    while d != over:
        hops += 1
        d = prev[d]
    d = end
    for i in range(hops, -1, -1):
        path[i] = d
        d = prev[d]
    # room wanted in path[i]: what the hop into it moves, at least its lightest subtree
    amounts[0] = need
    for i in range(1, hops):
        want = max(amounts[i - 1], lightest[path[i]])
        amounts[i] = max(want - (maxw[path[i]] - bw[path[i]]), 0.0)
    return path, amounts, hops


@njit(cache=True)
def balance_subtrees(indptr, indices, ewgt, vwgt, parts, k, maxw):
    """Move subtrees out of overweight blocks until every block is within maxw, keeping every
    block connected (see the module's text). Returns whether every block is within its bound."""
    ws = workspace(parts, k)
    floor = np.empty(k)
    bw = block_totals(parts, vwgt, k)[0]
    blocked = np.zeros((k, k), dtype=np.bool_)
    everywhere = np.ones(k, dtype=np.bool_)
    only = np.zeros(k, dtype=np.bool_)
    best_over, stalled = np.inf, 0
    for _ in range(MAX_SUBTREE_ROUNDS):
        over = -1
        total = 0.0
        for b in range(k):
            excess = bw[b] - maxw[b]
            if excess > 0:
                total += excess
                if over < 0 or excess > bw[over] - maxw[over]:
                    over = b
        if over < 0:
            return True
        if total < best_over:
            best_over, stalled = total, 0
            blocked[:, :] = False           # new room may have opened hops that failed before
        else:
            stalled += 1
            if stalled == SUBTREE_STALL:
                return False
        need = bw[over] - maxw[over]
        if move_subtrees(over, need, np.inf, indptr, indices, ewgt, vwgt, parts, bw, maxw, everywhere, ws,
                         floor) > 0:
            continue
        path, amounts, hops = _chain(over, need, indptr, indices, ewgt, vwgt, parts, bw, maxw, blocked, ws, floor)
        if hops == 0:
            return False                     # no block with room can be reached
        for i in range(hops - 1, -1, -1):
            src, dst = path[i], path[i + 1]
            if amounts[i] <= 0:
                continue
            only[:] = False
            only[dst] = True
            if move_subtrees(src, amounts[i], np.inf, indptr, indices, ewgt, vwgt, parts, bw, maxw, only, ws,
                             floor) == 0:
                blocked[src, dst] = True
                break
    return not (bw > maxw).any()


@njit(cache=True)
def lower_cut_by_subtrees(indptr, indices, ewgt, vwgt, parts, k, maxw, passes):
    """Passes over the blocks moving disjoint subtrees with positive gain into blocks with room."""
    ws = workspace(parts, k)
    floor = np.empty(k)
    bw = block_totals(parts, vwgt, k)[0]
    everywhere = np.ones(k, dtype=np.bool_)
    for _ in range(passes):
        moved = 0.0
        for b in range(k):
            moved += move_subtrees(b, np.inf, -1e-9, indptr, indices, ewgt, vwgt, parts, bw, maxw, everywhere, ws,
                                   floor)
        if moved == 0:
            break
