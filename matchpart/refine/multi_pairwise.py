"""Pairwise multi-constraint 2-way FM: for each pair of adjacent blocks, heaviest cut first,
bisection_nc's FM (one queue per side and constraint, moves may overload a side for a while,
the best prefix within every bound kept) on the subgraph the two blocks induce.

k-way FM (refine/multi_fm.py) moves only vertices that fit their destination in every
constraint, so between two blocks at their bounds it cannot exchange anything; the 2-way
pass can, because a move that overloads one side is followed by one back from it.
"""
from __future__ import annotations

import numpy as np

from ..bisection_nc import NC_STALL_MAX, NC_STALL_MIN, _dominant, _fm, _inverse_totals, _overload, \
    _side_weights
from ..jit import njit
from .state import host_cut, host_induced

# Rounds over all adjacent pairs (a round runs only while the previous one gained) and FM
# passes per pair. benchmarks/ncon.py subset (4elt, fe_4elt2, PGPgiantcompo, rgg2d,
# example_weighted, airfoil1, delaunay and rgg 2^16; three sets; k = 8, 32), on levels of
# <= 5000 vertices, cut against none: 2 rounds 0.978 at 1.12 x the CPU time, 1 round 0.981
# at 1.02 x; 1 pass instead of 2 lost 0.1-0.2% and saved nothing measurable.
PAIRWISE_NC_ROUNDS = 1
PAIRWISE_NC_PASSES = 2


@njit(cache=True, internal=True)
def _pairs_by_cut(indptr, indices, ewgt, parts, k):
    """Adjacent block pairs (a < b), the heaviest cut between them first: (m, 2) int64."""
    w = np.zeros((k, k), dtype=np.float64)
    for v in range(indptr.shape[0] - 1):
        a = parts[v]
        for e in range(indptr[v], indptr[v + 1]):
            b = parts[indices[e]]
            if a < b:
                w[a, b] += ewgt[e]
    m = 0
    for a in range(k):
        for b in range(a + 1, k):
            if w[a, b] > 0:
                m += 1
    pairs = np.empty((m, 2), dtype=np.int64)
    key = np.empty(m, dtype=np.float64)
    i = 0
    for a in range(k):
        for b in range(a + 1, k):
            if w[a, b] > 0:
                pairs[i, 0], pairs[i, 1], key[i] = a, b, -w[a, b]
                i += 1
    return pairs[np.argsort(key, kind="mergesort")]


@njit(cache=True)
def pairwise_nc(indptr, indices, ewgt, vw, parts, maxw, seed, rounds, passes):
    """Pairwise rounds on host arrays (``parts`` changed in place); ``vw`` (n, c) and ``maxw``
    (k, c) float64. A pair's result is kept only when it is no worse by (overload, cut), so a
    balanced partition stays balanced. Returns the cut weight gained."""
    n = indptr.shape[0] - 1
    k, c = maxw.shape
    np.random.seed(seed)
    local = np.full(n, -1, dtype=np.int64)
    dummy = np.zeros(n, dtype=np.float64)
    gained = 0.0
    for _ in range(rounds):
        round_gain = 0.0
        pairs = _pairs_by_cut(indptr, indices, ewgt, parts, k)
        for p in range(pairs.shape[0]):
            a, b = pairs[p, 0], pairs[p, 1]
            ns = 0
            for v in range(n):
                if parts[v] == a or parts[v] == b:
                    ns += 1
            verts = np.empty(ns, dtype=np.int64)
            i = 0
            for v in range(n):
                if parts[v] == a or parts[v] == b:
                    verts[i] = v
                    i += 1
            sub = host_induced(indptr, indices, ewgt, dummy, verts, local)
            svw = np.empty((ns, c), dtype=np.float64)
            side = np.empty(ns, dtype=np.int64)
            for i in range(ns):
                side[i] = 0 if parts[verts[i]] == a else 1
                for j in range(c):
                    svw[i, j] = vw[verts[i], j]
            bounds = np.empty((2, c), dtype=np.float64)
            for j in range(c):
                bounds[0, j], bounds[1, j] = maxw[a, j], maxw[b, j]
            bw = _side_weights(svw, side)
            inv = _inverse_totals(bw)
            qnum = _dominant(svw, inv)
            cut0 = host_cut(sub[0], sub[1], sub[2], side)
            over0 = max(_overload(bw, bounds, inv), 0.0)
            stall = min(max(int(0.01 * ns), NC_STALL_MIN), NC_STALL_MAX)
            cut = _fm(sub[0], sub[1], sub[2], svw, qnum, side, bw, bounds, inv, cut0, passes, stall)
            over = max(_overload(bw, bounds, inv), 0.0)
            if over < over0 or (over == over0 and cut < cut0):
                for i in range(ns):
                    parts[verts[i]] = a if side[i] == 0 else b
                round_gain += cut0 - cut
        gained += round_gain
        if round_gain <= 0:
            break
    return gained
