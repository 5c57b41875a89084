"""Initial partitioning of the coarsest graph: recursive (multilevel) bisection by greedy graph growing + 2-way FM."""
from __future__ import annotations

import math

import numpy as np

from .coarsen.contract import contract_arrays
from .io import as_graph
from .jit import njit
from .metrics import block_bounds
from .refine import gain_cache as gc
from .refine.fm import host_arrays, induced_subgraph, pairwise_arrays, refine_arrays, refine_nb
from .refine.heap import heap_pop, heap_set
from .refine.kway_fm import default_stall
from .refine.packing import heaviest_first, pack_decreasing

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
# Rounds of pairwise 2-way FM (every pair of adjacent blocks) after the final k-way FM: the
# 2-way pass can swap vertices between full blocks, which matters on coarse graphs whose
# vertex weights are large against the slack Lmax - W/k.
PAIRWISE_ROUNDS = 2
# Bisections of subgraphs larger than this are multilevel: the subgraph is coarsened by
# heavy-edge matching to about this many vertices, grown there, and refined by 2-way FM on
# the way back. Growing on a few dozen vertices sees the global shape that greedy growth on
# thousands misses (4elt, k=2: ~140 instead of ~180-260 flat; rgg2d, k=2: 25 with 50 here,
# 25-42 with 150).
BISECT_COARSEST = 50
# Flat growing (no coarsening) is also tried on subgraphs up to this size: with a few heavy
# vertices, coarsening merges them into lumps too coarse to balance well (example_weighted,
# k=8: 1897 flat, 2119 multilevel only), and on small graphs the extra tries are cheap.
BISECT_FLAT_MAX = 500
# Independent coarsening hierarchies per bisection (different random matchings); the cut
# varies a lot between hierarchies, so the best of a few pays off, and each is cheap.
BISECT_HIERARCHIES = 3
# 2-way FM of a bisection below the first stops a pass after min(max(1% of n, 15), 100)
# moves without improvement (METIS's bound): on the subgraphs of a few dozen to a few
# hundred vertices of deeper bisections, a bound of 200 let every pass move nearly every
# vertex. The first bisection (all of k = 2, half of the work of k = 8) keeps a longer
# search, max(1% of n, 200). Measured (peers instances, 2 seeds): initial partitioning 0.79 x
# its time at k = 32 and 0.875 x at k = 8, final cut 0.9965 x; with the short bound on the
# first bisection too, k = 2 lost 1.6%.
BISECT_STALL_MIN = 15
BISECT_STALL_MAX = 100
FIRST_BISECT_STALL_MIN = 200
# Coarsening stops when a level shrinks by less than this factor (star-like graphs).
MIN_SHRINK = 0.9
# A coarse vertex may weigh at most this fraction of the subgraph weight (METIS uses 1.5 x
# W / coarsen-to): heavier ones would make a balanced bisection unreachable on the coarse level.
MAX_COARSE_VERTEX_FRACTION = 1.5 / BISECT_COARSEST


# ---- greedy graph growing ---------------------------------------------------------------------

@njit(cache=True)
def _grow_bisection(indptr, indices, ewgt, vwgt, order, target0, max0):
    """Side per vertex (0 = grown region, 1 = rest) from greedy graph growing (GGGP).

    Starting at order[0], repeatedly add the frontier vertex whose move to side 0 gains most
    (edge weight into side 0 minus edge weight to the rest) until side 0 weighs >= target0.
    A vertex that would push side 0 above max0 is skipped; when the frontier is empty (the
    component is exhausted) growth jumps to the next vertex of `order` still on side 1.
    """
    n = indptr.shape[0] - 1
    side = np.ones(n, dtype=np.int64)
    rejected = np.zeros(n, dtype=np.bool_)
    to_side0 = np.zeros(n, dtype=np.float64)
    degw = np.zeros(n, dtype=np.float64)
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            degw[v] += ewgt[e]
    keys = np.empty(n, dtype=np.float64)
    verts = np.empty(n, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    w0 = 0.0
    nxt = 0
    while w0 < target0:
        if size[0] > 0:
            v, _ = heap_pop(keys, verts, pos, size)
        else:
            while nxt < n and (side[order[nxt]] == 0 or rejected[order[nxt]]):
                nxt += 1
            if nxt == n:
                break
            v = order[nxt]
        if w0 + vwgt[v] > max0:
            rejected[v] = True
            continue
        side[v] = 0
        w0 += vwgt[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if side[u] == 1 and not rejected[u]:
                to_side0[u] += ewgt[e]
                heap_set(keys, verts, pos, size, u, 2.0 * to_side0[u] - degw[u])
    return side


# ---- coarsening for multilevel bisection -------------------------------------------------------

@njit(cache=True)
def _heavy_edge_matching(indptr, indices, ewgt, vwgt, order, cap):
    """Coarse vertex id per vertex from a serial heavy-edge matching (rating w / (c(u) c(v))).

    Vertices are visited in `order`; each unmatched one pairs with the unmatched neighbour of
    highest rating whose combined weight stays <= cap, or stays single. Returns (cmap, nc).
    """
    n = indptr.shape[0] - 1
    mate = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        v = order[i]
        if mate[v] >= 0:
            continue
        best = -1
        best_rating = -1.0
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if mate[u] < 0 and vwgt[u] + vwgt[v] <= cap:
                r = ewgt[e] / max(vwgt[u] * vwgt[v], 1e-300)  # zero vertex weights are allowed
                if r > best_rating:
                    best_rating = r
                    best = u
        if best >= 0:
            mate[v] = best
            mate[best] = v
        else:
            mate[v] = v
    cmap = np.empty(n, dtype=np.int64)
    nc = 0
    for v in range(n):
        if mate[v] >= v:  # v leads its pair (or is single)
            cmap[v] = nc
            if mate[v] != v:
                cmap[mate[v]] = nc
            nc += 1
    return cmap, nc


def _contract(arrays, cmap, nc):
    """Host arrays of the coarse graph C = P^T A P, diagonal dropped (the compiled kernel of
    coarsen.contract: these graphs are small and many, so whole-array ops would be mostly
    call overhead).

    The kernel runs on the dtypes of the multilevel hierarchy's graphs (int32 ids, int64
    weights when they are integers), so that a run compiles it once, not a second time for
    host_arrays' int64 / float64 (a few seconds of the first run); conversions of these
    small graphs cost microseconds, and integer sums are exact in both.
    """
    indptr, indices, ewgt, vwgt = arrays
    if indptr.shape[0] - 1 < 2**31 - 1:
        indices = indices.astype(np.int32)
    cindptr, cindices, cewgt, cvwgt = contract_arrays((indptr, indices, _graph_weights(ewgt),
                                                       _graph_weights(vwgt)), cmap, nc)
    return (cindptr, cindices.astype(np.int64), cewgt.astype(np.float64, copy=False),
            cvwgt.astype(np.float64, copy=False))


def _graph_weights(w):
    """Host float64 weights as a Graph holds them: int64 when all are integers, else float64."""
    iw = w.astype(np.int64)
    return iw if np.array_equal(iw, w) else w


def _hierarchy(sub, rng):
    """[(graph arrays, map to the next coarser level)] down to about BISECT_COARSEST vertices."""
    levels = []
    cur = sub
    cap = max(MAX_COARSE_VERTEX_FRACTION * float(sub[3].sum()), float(sub[3].max()))
    while cur[0].shape[0] - 1 > BISECT_COARSEST:
        n = cur[0].shape[0] - 1
        cmap, nc = _heavy_edge_matching(*cur, rng.permutation(n), cap)
        if nc > MIN_SHRINK * n:
            break
        levels.append((cur, cmap))
        cur = _contract(cur, cmap, nc)
    return levels, cur


# ---- recursive bisection ------------------------------------------------------------------------

def _bisect(sub, target0, max_weights, rng, tries, fm_passes, hierarchies, first):
    """Best bisection by (overload, cut) among flat growing (subgraphs of up to BISECT_FLAT_MAX
    vertices) and `hierarchies` multilevel bisections (subgraphs above BISECT_COARSEST:
    grow on the coarsest level, 2-way FM on each level back up). ``first``: the first
    bisection of the recursion (longer FM searches, see BISECT_STALL_*). Returns the side array."""
    n = sub[0].shape[0] - 1
    stall_of = _first_bisect_stall if first else _bisect_stall
    best = None
    best_key = None
    if n <= BISECT_FLAT_MAX:
        best, best_key = _grow_and_refine(sub, target0, max_weights, rng, tries, fm_passes, stall_of)
    for _ in range(hierarchies if n > BISECT_COARSEST else 0):
        levels, coarsest = _hierarchy(sub, rng)
        side, key = _grow_and_refine(coarsest, target0, max_weights, rng, tries, fm_passes, stall_of)
        for fine, cmap in reversed(levels):
            side = side[cmap]
            stats = refine_arrays(fine, side, max_weights, seed=int(rng.integers(2**31)), passes=fm_passes,
                                  stall=stall_of(fine[0].shape[0] - 1))
            key = (stats["overload"], stats["cut"])
        if best_key is None or key < best_key:
            best, best_key = side, key
    return best


def _first_bisect_stall(n):
    return default_stall(n, FIRST_BISECT_STALL_MIN)


def _bisect_stall(n):
    return int(min(max(0.01 * n, BISECT_STALL_MIN), BISECT_STALL_MAX))


def _grow_and_refine(sub, target0, max_weights, rng, tries, fm_passes, stall_of):
    """Best of `tries` grown + FM-refined bisections by (overload, cut); returns (side, key).

    The loop over the tries is Python's, three compiled calls per try (a few microseconds
    each, ~1 ms per partition for k = 32): one compiled loop calling refine_nb had LLVM
    optimise and emit refine_nb's whole call tree a second time on the first run (~1.5 s).
    """
    n = sub[0].shape[0] - 1
    cache = gc.new_cache(n, sub[1].shape[0], 2)
    target0 = float(target0)
    fm_passes = int(fm_passes)
    stall = stall_of(n)
    seed = int(rng.integers(2**31))
    best, best_over, best_cut = np.zeros(n, dtype=np.int64), np.inf, np.inf
    for _ in range(int(tries)):
        order, fm_seed, seed = _try_draws(seed, n)
        side = _grow_bisection(*sub, order, target0, max_weights[0])
        _, cut, _, _, _, over = refine_nb(*sub, side, max_weights, fm_passes, fm_seed, stall, True, False, 0, cache)
        if over < best_over or (over == best_over and cut < best_cut):
            best, best_over, best_cut = side, over, cut
    return best, (best_over, best_cut)


@njit(cache=True)
def _try_draws(seed, n):
    """A try's random vertex order, FM seed and the next try's seed, from numba's generator
    (refine_nb reseeds it, so the tries are independent of each other)."""
    np.random.seed(seed)
    order = np.random.permutation(n)
    fm_seed = np.random.randint(0, 2**31)
    return order, fm_seed, np.random.randint(0, 2**31)


def bisection_bounds(sub_weight, k1, k2, lmax, eps_level, targets=None):
    """Side weight bounds (max0, max1) for splitting k1 + k2 blocks of a subgraph of weight sub_weight.

    A side that becomes one block may use that block's whole final bound; a side that is
    split further gets (1 + eps_level) x its target share, so that the ceil(log2 k) levels
    of bisection multiply to at most (1 + eps) (KaHIP's adapted imbalance). ``lmax``: one
    bound or the k1 + k2 blocks' bounds; ``targets``: their target fractions (equal if None).
    """
    lm = np.broadcast_to(np.asarray(lmax, dtype=np.float64), (k1 + k2,))
    t = np.full(k1 + k2, 1.0) if targets is None else np.asarray(targets, dtype=np.float64)
    total = float(t.sum())
    bounds = []
    for lo, hi in ((0, k1), (k1, k1 + k2)):
        share = float(t[lo:hi].sum()) / total if total > 0 else (hi - lo) / (k1 + k2)
        target = sub_weight * share
        bounds.append(lm[lo] if hi - lo == 1 else min(target * (1.0 + eps_level), float(lm[lo:hi].sum())))
    return np.array(bounds, dtype=np.float64)


def initial_partition(graph, k, eps, *, seed=0, tries=8, fm_passes=8, hierarchies=BISECT_HIERARCHIES,
                      pairwise_rounds=PAIRWISE_ROUNDS, target_weights=None):
    """Block per vertex (numpy int64, 0..k-1) of a k-way partition by recursive bisection.

    Each bisection (k1 = k // 2 blocks against k2 = k - k1, target weights in that ratio) is
    the best of `tries` greedy graph growings from random seed vertices, each refined by up to
    `fm_passes` 2-way FM passes. Subgraphs above BISECT_COARSEST vertices are first coarsened
    by heavy-edge matching (`hierarchies` independent hierarchies, best kept), grown on
    the coarsest level and refined by 2-way FM on every level back up. The assembled
    partition then gets FINAL_KWAY_PASSES k-way FM passes and `pairwise_rounds` of 2-way FM
    between adjacent blocks; these also repair balance if needed: every block is brought to <= Lmax = max_block_weight(W, k, eps) by least-loss
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
    targets = None if target_weights is None else np.asarray(target_weights, dtype=np.float64)
    eps_level = (1.0 + eps) ** (1.0 / math.ceil(math.log2(k))) - 1.0
    rng = np.random.default_rng(seed)

    # Python loop over the k - 1 bisections (not over vertices): each is one compiled job.
    todo = [(np.arange(n), k, 0)]
    while todo:
        verts, ks, first = todo.pop()
        if ks == 1 or verts.shape[0] == 0:
            parts[verts] = first
            continue
        k1, k2 = ks // 2, ks - ks // 2
        sub = induced_subgraph(arrays, verts)
        sub_weight = float(sub[3].sum())
        group = slice(first, first + ks)
        bounds = bisection_bounds(sub_weight, k1, k2, maxw[group], eps_level,
                                  None if targets is None else targets[group])
        share0 = k1 / ks if targets is None or targets[group].sum() <= 0 else \
            float(targets[first:first + k1].sum() / targets[group].sum())
        side = _bisect(sub, sub_weight * share0, bounds, rng, int(tries), int(fm_passes), int(hierarchies),
                       ks == k)
        todo.append((verts[side == 0], k1, first))
        todo.append((verts[side == 1], k2, first + k1))

    key = _polish(arrays, parts, maxw, rng, FINAL_KWAY_PASSES if fm_passes else 0, int(pairwise_rounds))
    if key[0] > 0:
        parts = _repair_by_packing(arrays, parts, maxw, rng, fm_passes, key)
    return parts


def _polish(arrays, parts, maxw, rng, passes, pairwise_rounds=PAIRWISE_ROUNDS):
    """k-way FM (with rebalancing), then pairwise 2-way FM for k > 2, in place; returns (overload, cut)."""
    stats = refine_arrays(arrays, parts, maxw, seed=int(rng.integers(2**31)), passes=passes,
                          localized=FINAL_KWAY_LOCALIZED)
    if maxw.shape[0] > 2 and passes and pairwise_rounds:
        gain = pairwise_arrays(arrays, parts, maxw, seed=int(rng.integers(2**31)), rounds=pairwise_rounds,
                               passes=passes)
        stats["cut"] -= gain
    return stats["overload"], stats["cut"]


# ---- last resort for heavy vertices ----------------------------------------------------------

def _repair_by_packing(arrays, parts, maxw, rng, fm_passes, key):
    """Balance by bin packing when least-loss moves could not (a few heavy vertices, little slack).

    Packs vertices heaviest first: keeping each in its block where it fits, else by edges or
    else by room; then by edges alone; then as pure LPT. A packing that fits is refined by k-way and
    pairwise FM (which keep it balanced). Returns the best
    of the input and the packings by (overload, cut): a balanced partition beats a better cut.
    """
    order = heaviest_first(arrays[3])
    best, best_key = parts, key
    none = np.full(parts.shape[0], -1, dtype=np.int64)
    for preferred, use_edges in ((parts, True), (parts, False), (none, True), (none, False)):
        packed, fits = pack_decreasing(*arrays, order, preferred, maxw, use_edges)
        if not fits:
            continue
        key = _polish(arrays, packed, maxw, rng, max(FINAL_KWAY_PASSES, int(fm_passes)))
        if key < best_key:
            best, best_key = packed, key
        if best_key[0] == 0:
            break
    return best
