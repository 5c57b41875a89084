"""Deterministic parallel k-way FM for graphs whose boundary is most of the graph: FM passes
restricted to groups of blocks, all groups at the same time.

A round splits the k blocks into groups at random (a seeded permutation dealt round-robin)
and runs one k-way FM pass (kway_fm.locked_pass) per group, in ``prange`` over the groups: a
group's pass moves only the vertices of its blocks, and only into its blocks. A move from
block a to block b changes a neighbour's edge weight into a and b only, so it changes no
gain of a move inside another group: the groups' passes are independent, their gains add
up exactly, and each pass runs on its own gain cache, block weights and bounds (the other
groups' blocks have weight 0 and bound -1 there: never a target, a constant overload).
The result is the same for any number of threads.

Why groups and not parallel_fm's block pairs: on power-law graphs every block pair is
adjacent and a vertex's best move usually leads to a third block, so 2-way searches found
almost nothing (ba 2^16, k = 32: 0 of the k-way pass's 302). Two groups of k / 2 blocks
cover half of the block pairs per round; on ba 2^18, k = 32, two rounds of two groups won
0.80 x the global pass's cut reduction with 1.05 x its moves, three rounds 1.15 x.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from ..threads import PRANGE_ONLY
from . import gain_cache as gc
from .boundary import shuffled_boundary
from .kway_fm import hub_flags, locked_pass

# ---- tunables -------------------------------------------------------------------------
# Blocks per group, at most: 2 groups at k = 32. Groups of 8 won less than half of what
# groups of 16 won per move on ba 2^18, k = 32 (two rounds: 5.7k against 15.7k).
GROUP_BLOCKS = 16
# ... and never more groups than this: each group's pass sets up n-long arrays (its lock
# flags, heap slots and cache index). At k = 8192 (512 groups of 16) that made delaunay 2^20's
# run 1.16-1.22 x slower (its coarsest graph and coarse levels have most vertices on the
# boundary); 8 groups: default 0.99 x the time of no groups at +0.08% cut, fast 1.05 x at
# -0.02% (2 runs, 2 threads).
MAX_GROUPS = 8
# Rounds per FM pass, and the fewest blocks for which refine_arrays runs them. A round that
# keeps no move ends the pass: after Jet, the finest levels of the Watts-Strogatz and SBM
# graphs of the peers benchmark (2^16, k = 8, 32) kept none in either round, 12-20 ms each.
ROUNDS = 2
MIN_BLOCKS = 8


@njit(cache=True, internal=True)
def group_count(k, group_blocks, max_groups):
    """Groups per round for k blocks: at least 2, at most ``group_blocks`` blocks each unless
    that makes more than ``max_groups``."""
    return max(2, min(max_groups, (k + group_blocks - 1) // group_blocks))


@njit(cache=True, internal=True)
def random_groups(k, ngroups):
    """Block -> group: a permutation of the blocks (numba's generator) dealt round-robin."""
    perm = np.random.permutation(k)
    group = np.empty(k, dtype=np.int64)
    for i in range(k):
        group[perm[i]] = i % ngroups
    return group


@njit(cache=True, parallel=PRANGE_ONLY)
def grouped_round(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, group, ngroups, stall, chunk):
    """One round in place: for each group g, a k-way FM pass over the vertices of its blocks
    listed in ``order`` (in that order), moving them between its blocks only. ``group``: block
    -> group in 0..ngroups-1. Returns (cut reduction, moves kept): each group's reduction is its
    own pass's, summed in group order."""
    n = indptr.shape[0] - 1
    k = maxw.shape[0]
    # the listed vertices by group, each group's in list order, and the gain-cache slots its
    # pass may need (the degrees of its blocks' vertices: only those are ever built there)
    start = np.zeros(ngroups + 1, dtype=np.int64)
    for i in range(order.shape[0]):
        start[group[parts[order[i]]] + 1] += 1
    for g in range(ngroups):
        start[g + 1] += start[g]
    fill = start[:-1].copy()
    listed = np.empty(order.shape[0], dtype=np.int64)
    for i in range(order.shape[0]):
        g = group[parts[order[i]]]
        listed[fill[g]] = order[i]
        fill[g] += 1
    slots = np.zeros(ngroups, dtype=np.int64)
    for v in range(n):
        slots[group[parts[v]]] += indptr[v + 1] - indptr[v]
    gains = np.zeros(ngroups, dtype=np.float64)
    kept = np.zeros(ngroups, dtype=np.int64)
    never = np.iinfo(np.int64).max       # a pass's own set-up stays on its thread
    hub = hub_flags(indptr)
    for g in prange(ngroups):
        own_bw = np.zeros(k, dtype=np.float64)
        own_maxw = np.full(k, -1.0)
        for b in range(k):
            if group[b] == g:
                own_bw[b] = bw[b]
                own_maxw[b] = maxw[b]
        # another group's pass changes parts[v] only within that group: group[parts[v]] is
        # fixed for the round, whichever value this thread reads
        locked = np.empty(n, dtype=np.bool_)
        for v in range(n):
            locked[v] = hub[v] or group[parts[v]] != g
        cache = gc.new_cache(n, slots[g], k)
        cut, kept[g] = locked_pass(indptr, indices, ewgt, vwgt, parts, own_bw, own_maxw,
                                   listed[start[g]:start[g + 1]], locked, stall, 0.0, cache, chunk, never)
        gains[g] = -cut
        for b in range(k):
            if group[b] == g:
                bw[b] = own_bw[b]
    total = 0.0
    for g in range(ngroups):
        total += gains[g]
    return total, kept.sum()


@njit(cache=True, internal=True)
def grouped_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, rounds, group_blocks, max_groups, stall, cut,
                 chunk):
    """Up to ``rounds`` grouped rounds in place (until one keeps no move), each with new
    groups of at most ``group_blocks`` blocks (numba's generator), the first over ``order``,
    the others over the boundary then, shuffled; returns (cut, moves kept)."""
    k = maxw.shape[0]
    ngroups = group_count(k, group_blocks, max_groups)
    kept = 0
    for r in range(rounds):
        if r > 0:
            order = shuffled_boundary(indptr, indices, parts, np.empty(0, dtype=np.bool_))
        gain, moved = grouped_round(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, random_groups(k, ngroups),
                                    ngroups, stall, chunk)
        cut -= gain
        kept += moved
        if moved == 0:
            break       # a local optimum of this grouping: see ROUNDS
    return cut, kept
