"""Pairwise 2-way FM (compiled): 2-way FM between adjacent blocks of a k-way partition.

Moving a vertex between blocks A and B leaves its edges to other blocks cut, so FM on the
subgraph induced by A and B (bounds maxw[A], maxw[B]) changes the global cut by exactly its
own cut change. The 2-way pass can swap vertices when both blocks are full, which the k-way
pass cannot: this is what refines tightly packed partitions of heavy vertices (initial
partitioning's polish). A round is one kernel: at k = 32 it is up to 96 FM runs on small
subgraphs, whose Python loop was a third of initial partitioning's time.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..sorting import argsort_stable
from . import gain_cache as gc
from .fm2 import refine2
from .kway_fm import STALL_MOVES_MIN, default_stall
from .state import block_members, host_induced, relink

# A round visits at most this many block pairs per block, those with the heaviest cut between
# them: on meshes a block has ~3-6 neighbours, so all pairs are kept, while on expanders and
# power-law graphs every pair is adjacent (k^2 / 2 pairs: 496 FM runs per round for k = 32,
# most of the initial partitioning time) and the light pairs have little cut to win back.
PAIRWISE_PAIRS_PER_BLOCK = 3


@njit(cache=True, internal=True)
def _heaviest_pairs(indptr, indices, ewgt, parts, members, k, limit):
    """(a, b) rows (a < b) of the adjacent block pairs, at most ``limit`` of them, those with
    the heaviest cut between them (ties in order of a, then of b's first edge from a).
    ``members``: block_members lists."""
    head, nxt, _ = members
    acc = np.zeros(k, dtype=np.float64)
    seen_from = np.full(k, -1, dtype=np.int64)   # a, once block b has been met from a
    touched = np.empty(k, dtype=np.int64)
    capacity = min(k * (k - 1) // 2, indices.shape[0] // 2 + 1)
    found = np.empty((capacity, 2), dtype=np.int64)
    neg_cut = np.empty(capacity, dtype=np.float64)
    npairs = 0
    for a in range(k):
        nt = 0
        v = head[a]
        while v >= 0:
            for e in range(indptr[v], indptr[v + 1]):
                b = parts[indices[e]]
                if b > a:
                    if seen_from[b] != a:
                        seen_from[b] = a
                        touched[nt] = b
                        nt += 1
                    acc[b] += ewgt[e]
            v = nxt[v]
        for i in range(nt):
            b = touched[i]
            found[npairs, 0] = a
            found[npairs, 1] = b
            neg_cut[npairs] = -acc[b]
            npairs += 1
            acc[b] = 0.0
    if npairs <= limit:
        return found[:npairs]
    order = argsort_stable(neg_cut[:npairs])
    pairs = np.empty((limit, 2), dtype=np.int64)
    for i in range(limit):
        pairs[i, 0] = found[order[i], 0]
        pairs[i, 1] = found[order[i], 1]
    return pairs


@njit(cache=True, internal=True)
def _pair_vertices(a, b, members, verts):
    """The vertices of blocks a and b (block_members lists), a's first, in the front of ``verts``."""
    head, nxt, _ = members
    ns = 0
    for blk in (a, b):
        v = head[blk]
        while v >= 0:
            verts[ns] = v
            ns += 1
            v = nxt[v]
    return verts[:ns]


@njit(cache=True)
def pairwise_nb(indptr, indices, ewgt, vwgt, parts, maxw, seed, rounds, passes):
    """Up to ``rounds`` rounds of 2-way FM (``passes`` passes, rebalancing first) over the
    heaviest adjacent block pairs (see PAIRWISE_PAIRS_PER_BLOCK) in a random order from
    ``seed``; parts is changed in place. A round that gains nothing ends the rounds.
    Returns the total cut reduction."""
    n = indptr.shape[0] - 1
    k = maxw.shape[0]
    np.random.seed(seed)
    local = np.full(n, -1, dtype=np.int64)
    scratch = np.empty(n, dtype=np.int64)
    bounds = np.empty(2, dtype=np.float64)
    total = 0.0
    members = block_members(parts, k)
    for _ in range(rounds):
        pairs = _heaviest_pairs(indptr, indices, ewgt, parts, members, k, PAIRWISE_PAIRS_PER_BLOCK * k)
        gained = 0.0
        for i in np.random.permutation(pairs.shape[0]):
            a, b = pairs[i, 0], pairs[i, 1]
            verts = _pair_vertices(a, b, members, scratch)
            sub = host_induced(indptr, indices, ewgt, vwgt, verts, local)
            ns = verts.shape[0]
            side = np.empty(ns, dtype=np.int64)
            for j in range(ns):
                side[j] = 1 if parts[verts[j]] == b else 0
            bounds[0] = maxw[a]
            bounds[1] = maxw[b]
            cache = gc.new_cache(ns, sub[1].shape[0], 2)
            before, after, _ = refine2(sub[0], sub[1], sub[2], sub[3], side, bounds, passes,
                                       np.random.randint(0, 2**31), default_stall(ns, STALL_MOVES_MIN), True, cache)
            gained += before - after
            for j in range(ns):
                v = verts[j]
                to = b if side[j] == 1 else a
                if parts[v] != to:
                    relink(v, parts[v], to, members)
                    parts[v] = to
        total += gained
        if gained <= 0:
            break
    return total
