"""Initial partitioning of the coarsest graph: recursive (multilevel) bisection by greedy graph
growing + 2-way FM (the compiled kernel of bisection.py), then k-way and pairwise FM over the
assembled partition, and bin packing where balance needs it."""
from __future__ import annotations

import math

import numpy as np

from .bisection import DENSE_MIN_DEGREE, bisection_bounds_nb
from .bisection_levels import recursive_bisection
from .io import as_graph
from .metrics import block_bounds
from .refine.fm import host_arrays, pairwise_arrays, refine_arrays
from .refine.packing import heaviest_first, pack_decreasing

_NO_START = np.empty(0, dtype=np.int64)     # recursive_bisection from the root

# ---- tunables -------------------------------------------------------------------------
# 2-way FM passes after each grown bisection are `fm_passes`; the final k-way FM over the
# assembled partition gets this many passes: it repairs the seams that bisection cannot see
# (a vertex between two blocks of different halves). 2, not 4: the same final cut over the
# peers instances (2 seeds) in 0.91 x the initial partitioning time at k = 32 (passes on
# the dense coarsest graphs of power-law inputs cost ~30 ms each).
FINAL_KWAY_PASSES = 2
# Those passes are global only, without KaFFPa's localized multi-try rounds: on the dense
# coarsest graphs of power-law inputs (ba 2^16, k = 32: 662 vertices, 126k edges) the
# rounds were most of initial partitioning; without them initial partitioning took 0.69 x
# the time at k = 32 (0.62-0.65 x on rmat, ba, sbm, ws) for +0.04% of final cut over the
# peers instances (2 seeds).
FINAL_KWAY_LOCALIZED = False
# On a dense assembled graph (mean degree 2m / n above bisection.DENSE_MIN_DEGREE, the one
# threshold of dense graphs in initial partitioning), one k-way pass and no pairwise rounds: the coarsest graphs of power-law inputs are nearly complete (ba 2^16, k = 32: 455
# vertices, 85k edges, 57 ms of k-way FM for 0.11% of its cut), and the finest levels'
# refiners make up the rest. R-MAT, Barabasi-Albert, Watts-Strogatz and SBM 2^16, k = 8, 32,
# seeds 1-3, 2 threads: default 0.958 x the time at 1.0005 x the final cut (at most +0.45%),
# fast 0.962 x at 1.0002 x. No pass at all (rebalancing only): 0.92 x, but Barabasi-Albert
# k = 32 then took 1.25 x (its finest levels' refiners did the work, for 0.99 x the cut).
DENSE_KWAY_PASSES = 1
# ... and that pass stops after DENSE_STALL_MOVES moves without a new best, not kway_fm's
# 50: a move there updates most of the graph (ba 2^16, k = 32: 455 vertices of mean degree
# 373; the pass 44 -> 6 ms for 0.05% of the coarsest graph's cut; the same final cuts on
# R-MAT, BA, SBM and WS 2^16, k = 8, 32, seeds 1-3, whole runs 0.94-1.0 x the time).
DENSE_STALL_MOVES = 10
# Rounds of pairwise 2-way FM (every pair of adjacent blocks) after the final k-way FM: the
# 2-way pass can swap vertices between full blocks, which matters on coarse graphs whose
# vertex weights are large against the slack Lmax - W/k.
PAIRWISE_ROUNDS = 2
# Independent coarsening hierarchies per bisection (different random matchings); the cut
# varies a lot between hierarchies, so the best of a few pays off, and each is cheap. The
# bisections' other tunables (their coarsening, FM stall bounds) are in bisection.py.
BISECT_HIERARCHIES = 3


def bisection_bounds(sub_weight, k1, k2, lmax, eps_level, targets=None):
    """Side weight bounds (max0, max1) for splitting k1 + k2 blocks of a subgraph of weight sub_weight.

    A side that becomes one block may use that block's whole final bound; a side that is
    split further gets (1 + eps_level) x its target share, so that the ceil(log2 k) levels
    of bisection multiply to at most (1 + eps) (KaHIP's adapted imbalance). ``lmax``: one
    bound or the k1 + k2 blocks' bounds; ``targets``: their target fractions (equal if None).
    """
    lm = np.ascontiguousarray(np.broadcast_to(np.asarray(lmax, dtype=np.float64), (k1 + k2,)))
    t = np.ones(k1 + k2) if targets is None else np.ascontiguousarray(targets, dtype=np.float64)
    return bisection_bounds_nb(float(sub_weight), int(k1), int(k2), lm, t, float(eps_level))[:2]


def initial_partition(graph, k, eps, *, seed=0, tries=8, fm_passes=8, hierarchies=BISECT_HIERARCHIES,
                      pairwise_rounds=PAIRWISE_ROUNDS, target_weights=None):
    """Block per vertex (numpy int64, 0..k-1) of a k-way partition by recursive bisection.

    Each bisection (k1 = k // 2 blocks against k2 = k - k1, target weights in that ratio) is
    the best of `tries` greedy graph growings from random seed vertices, each refined by up to
    `fm_passes` 2-way FM passes. Subgraphs above BISECT_COARSEST vertices are first coarsened
    by heavy-edge matching (`hierarchies` independent hierarchies, best kept), grown on
    the coarsest level and refined by 2-way FM on every level back up. The assembled
    partition then gets FINAL_KWAY_PASSES k-way FM passes and `pairwise_rounds` of 2-way FM
    between adjacent blocks (DENSE_KWAY_PASSES and none on a dense graph, see
    DENSE_MIN_DEGREE); these also repair balance if needed: every block is brought to <= Lmax = max_block_weight(W, k, eps) by least-loss
    moves, and when those fail (heavy vertices, little slack) by packing the vertices heaviest
    first (LPT) and refining that packing. When no balanced partition is found (e.g. a vertex
    heavier than Lmax) the least overweight partition found is returned; check it with
    metrics.is_balanced. A GPU graph is copied to the CPU. Deterministic for a given seed.
    """
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k}")
    if not (eps >= 0 and math.isfinite(eps)):
        raise ValueError(f"eps must be a finite number >= 0, got {eps}")
    if int(tries) < 1:
        raise ValueError(f"tries must be >= 1, got {tries}")
    if int(fm_passes) < 0:
        raise ValueError(f"fm_passes must be >= 0, got {fm_passes}")
    if int(hierarchies) < 1:
        raise ValueError(f"hierarchies must be >= 1, got {hierarchies}")
    graph = as_graph(graph)
    arrays = host_arrays(graph)
    n = arrays[0].shape[0] - 1
    parts = np.zeros(n, dtype=np.int64)
    if k == 1 or n == 0:
        return parts
    maxw = block_bounds(graph.total_vwgt, k, eps, target_weights).astype(np.float64)
    targets = np.ones(k) if target_weights is None else np.asarray(target_weights, dtype=np.float64)
    eps_level = (1.0 + eps) ** (1.0 / math.ceil(math.log2(k))) - 1.0
    rng = np.random.default_rng(seed)
    parts = recursive_bisection(*arrays, maxw, targets, eps_level, int(rng.integers(2**31)), int(tries),
                                int(fm_passes), int(hierarchies), _NO_START, _NO_START, -1)
    dense = arrays[1].shape[0] > DENSE_MIN_DEGREE * n
    if dense:
        key = _polish(arrays, parts, maxw, rng, DENSE_KWAY_PASSES if fm_passes else 0, 0, DENSE_STALL_MOVES)
    else:
        key = _polish(arrays, parts, maxw, rng, FINAL_KWAY_PASSES if fm_passes else 0, int(pairwise_rounds))
    if key[0] > 0:
        parts = _repair_by_packing(arrays, parts, maxw, rng, fm_passes, key, dense)
    return parts


def _polish(arrays, parts, maxw, rng, passes, pairwise_rounds=PAIRWISE_ROUNDS, stall=None):
    """k-way FM (with rebalancing; ``stall``: its passes' stall moves, None: the default), then
    pairwise 2-way FM for k > 2, in place; returns (overload, cut)."""
    stats = refine_arrays(arrays, parts, maxw, seed=int(rng.integers(2**31)), passes=passes, stall=stall,
                          localized=FINAL_KWAY_LOCALIZED)
    if maxw.shape[0] > 2 and passes and pairwise_rounds:
        gain = pairwise_arrays(arrays, parts, maxw, seed=int(rng.integers(2**31)), rounds=pairwise_rounds,
                               passes=passes)
        stats["cut"] -= gain
    return stats["overload"], stats["cut"]


# ---- last resort for heavy vertices ----------------------------------------------------------

def _repair_by_packing(arrays, parts, maxw, rng, fm_passes, key, dense=False):
    """Balance by bin packing when least-loss moves could not (a few heavy vertices, little slack).

    Packs vertices heaviest first: keeping each in its block where it fits, else by edges or
    else by room; then by edges alone; then as pure LPT. A packing that fits is refined by k-way and
    pairwise FM (which keep it balanced; on a ``dense`` graph, above DENSE_MIN_DEGREE, the
    short polish: R-MAT and SBM 2^16, k = 32, reach this repair, and took 0.76-0.96 x the
    time with it at 0.997-1.0003 x the cut). Returns the best
    of the input and the packings by (overload, cut): a balanced partition beats a better cut.
    """
    order = heaviest_first(arrays[3])
    best, best_key = parts, key
    none = np.full(parts.shape[0], -1, dtype=np.int64)
    for preferred, use_edges in ((parts, True), (parts, False), (none, True), (none, False)):
        packed, fits = pack_decreasing(*arrays, order, preferred, maxw, use_edges)
        if not fits:
            continue
        if dense:       # the dense graph's short polish (DENSE_KWAY_PASSES, DENSE_STALL_MOVES)
            key = _polish(arrays, packed, maxw, rng, DENSE_KWAY_PASSES, 0, DENSE_STALL_MOVES)
        else:
            key = _polish(arrays, packed, maxw, rng, max(FINAL_KWAY_PASSES, int(fm_passes)))
        if key < best_key:
            best, best_key = packed, key
        if best_key[0] == 0:
            break
    return best
