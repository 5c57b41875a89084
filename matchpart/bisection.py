"""Recursive bisection of the coarsest graph as one compiled call (initial partitioning's core).

Each bisection is the best, by (overload, cut), of greedy graph growings (GGGP) refined by
2-way FM: grown on the subgraph itself when it is small, else on the coarsest level of a few
independent heavy-edge-matching hierarchies, refined by 2-way FM on every level back up.
The recursion over the k - 1 bisections of a k-way partition is bisection_levels.py.
"""
from __future__ import annotations

import numpy as np

from .coarsen.gather import contract_by_gathering
from .jit import njit
from .prefetch import PREFETCH_DISTANCE, prefetch
from .refine import gain_cache as gc
from .refine.fm2 import refine2
from .refine.heap import heap_pop, heap_set
from .refine.kway_fm import default_stall

# ---- tunables -------------------------------------------------------------------------
# Bisections of subgraphs larger than this are multilevel: the subgraph is coarsened by
# heavy-edge matching to about this many vertices, grown there, and refined by 2-way FM on
# the way back. Growing on a few dozen vertices sees the global shape that greedy growth on
# thousands misses (4elt, k=2: ~140 instead of ~180-260 flat; rgg2d, k=2: 25 with 50 here,
# 25-42 with 150).
BISECT_COARSEST = 50
# Subgraphs of at most BISECT_COARSEST vertices are grown as they are (they are their own
# coarsest level); larger ones only on their hierarchies' coarsest levels. Flat growing on
# subgraphs of up to 500 vertices as well (once needed for heavy vertices, example_weighted)
# gave the same final cut over the peers instances (6 seeds: 1.0001 x; example_weighted,
# k = 32: 0.88 x without it) in 0.67 x the initial partitioning time.
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
# A level of mean degree above DENSE_MIN_DEGREE is dense (initial.py's polish reads it too):
# every bisection of it, the first too, stops a 2-way FM pass after BISECT_STALL_MIN moves
# without improvement and runs at most DENSE_FM_PASSES passes: a move there updates a large share of the graph (the coarsest
# graphs of power-law inputs: ba 2^16, k = 32, 455 vertices of mean degree 373). R-MAT, BA,
# SBM, WS 2^16, k = 8, 32, seeds 1-3: the stall bound took initial partitioning of BA
# k = 32 from 78 to 54 ms, whole runs 0.92 x the time at 1.0004 x the cut; one pass then
# 0.93 x the time at 0.9999 x the cut (BA k = 32 0.75-0.80 x; k = 2 within +-0.5%).
DENSE_MIN_DEGREE = 40.0
DENSE_FM_PASSES = 1
# Bisections below the first two levels of the recursion (subgraphs that hold fewer than
# half of the k blocks) use at most this many hierarchies: their cuts are small pieces of
# the whole, which k-way FM, pairwise FM and the multilevel refinement rework anyway. With
# 1: initial partitioning 0.85 x its time at k = 32, final cut 1.004 x (peers instances, 3
# seeds; k = 2 and 8 unchanged: their deeper subgraphs are grown flat). Below the first
# level only, k = 8 lost 1.8% (4elt, rgg2d: 10%).
DEEP_BISECTION_HIERARCHIES = 1
# Coarsening stops when a level shrinks by less than this factor (star-like graphs).
MIN_SHRINK = 0.9
# A coarse vertex may weigh at most this fraction of the subgraph weight (METIS uses 1.5 x
# W / coarsen-to): heavier ones would make a balanced bisection unreachable on the coarse level.
MAX_COARSE_VERTEX_FRACTION = 1.5 / BISECT_COARSEST


# ---- greedy graph growing ---------------------------------------------------------------------

@njit(cache=True, internal=True)
def grow_bisection(indptr, indices, ewgt, vwgt, order, target0, max0):
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

@njit(cache=True, internal=True)
def heavy_edge_matching(indptr, indices, ewgt, vwgt, order, cap):
    """Coarse vertex id per vertex from a serial heavy-edge matching (rating w / (c(u) c(v))).

    Vertices are visited in `order`; each unmatched one pairs with the unmatched neighbour of
    highest rating whose combined weight stays <= cap, or stays single. Returns (cmap, nc).
    """
    n = indptr.shape[0] - 1
    mate = np.full(n, -1, dtype=np.int64)
    ahead = PREFETCH_DISTANCE
    for i in range(n):
        # random visits wait on memory (delaunay 2^17, first level: ~45 ns an entry): the row
        # bounds of the vertex 2 * ahead visits on, then the row itself ahead visits on
        # (nested dissection's separators: this matching 25 -> 12 ms there, the same matching)
        if i + 2 * ahead < n:
            w = order[i + 2 * ahead]
            prefetch(indptr, w)
            prefetch(mate, w)
            prefetch(vwgt, w)
        if i + ahead < n:
            w = order[i + ahead]
            prefetch(indices, indptr[w])
            prefetch(ewgt, indptr[w])
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
    cmap = np.empty(n, dtype=indices.dtype)   # coarsening's mapping dtype: one contraction signature
    nc = 0
    for v in range(n):
        if mate[v] >= v:  # v leads its pair (or is single)
            cmap[v] = nc
            if mate[v] != v:
                cmap[mate[v]] = nc
            nc += 1
    return cmap, nc


@njit(cache=True, internal=True)
def contract(indptr, indices, ewgt, vwgt, cmap, nc):
    """Host arrays of the coarse graph C = P^T A P, diagonal dropped, rows sorted: the
    multilevel hierarchy's contraction kernel (coarsen.contract) on these small graphs."""
    m = indices.shape[0]
    return contract_by_gathering(indptr, indices, ewgt, vwgt, cmap, nc, np.empty(m, dtype=indices.dtype),
                                 np.empty(m, dtype=ewgt.dtype), False)


# ---- one bisection ------------------------------------------------------------------------------

@njit(cache=True, internal=True)
def windowed_order(n, window):
    """A random order of 0..n-1 that takes windows of ``window`` consecutive ids one at a
    time (the windows in random order, each shuffled); window <= 1: a plain permutation.
    On a well numbered graph the rows a window visits share cache lines: heavy-edge matching
    of delaunay 2^17 in random order waits on memory for most of its 32 ns an entry."""
    if window <= 1 or n <= window:
        return np.random.permutation(n)
    nw = (n + window - 1) // window
    out = np.empty(n, dtype=np.int64)
    k = 0
    for w in np.random.permutation(nw):
        lo = w * window
        hi = min(n, lo + window)
        for v in range(lo, hi):
            out[k] = v
            k += 1
        np.random.shuffle(out[k - (hi - lo):k])
    return out


@njit(cache=True, internal=True)
def heavy_edge_hierarchy(graph, coarsen_to, cap, min_shrink, by_transpose, max_levels, window):
    """Heavy-edge matching levels of ``graph`` (a CSR tuple) down to ``coarsen_to`` vertices,
    stopping early at a level that keeps more than ``min_shrink`` of its vertices or after
    ``max_levels`` levels: (graphs, cmaps), finest first; cmaps[i] maps level i - 1 to level i
    (cmaps[0] is empty).

    ``by_transpose``: the contraction sorts the coarse rows by one transposition pass, for
    integer edge weights only (nested dissection's separators: 60% of a separator's time is
    this hierarchy), instead of a sort per row (coarsen.gather.contract_by_gathering).
    ``window``: the matching visits the vertices in windowed_order(n, window)."""
    graphs = [graph]
    cmaps = [np.empty(0, dtype=graph[1].dtype)]
    cur = graph
    while cur[0].shape[0] - 1 > coarsen_to and len(graphs) <= max_levels:
        nf = cur[0].shape[0] - 1
        cmap, nc = heavy_edge_matching(cur[0], cur[1], cur[2], cur[3], windowed_order(nf, window), cap)
        if nc > min_shrink * nf:
            break
        m = cur[1].shape[0]
        cur = contract_by_gathering(cur[0], cur[1], cur[2], cur[3], cmap, nc, np.empty(m, dtype=cur[1].dtype),
                                    np.empty(m, dtype=cur[2].dtype), by_transpose)
        graphs.append(cur)
        cmaps.append(cmap)
    return graphs, cmaps


@njit(cache=True, internal=True)
def project_labels(coarse, cmap, nf):
    """The label of each of nf fine vertices: its coarse vertex's (cmap: fine -> coarse)."""
    fine = np.empty(nf, dtype=np.int64)
    for v in range(nf):
        fine[v] = coarse[cmap[v]]
    return fine


@njit(cache=True, internal=True)
def _passes(passes, n, entries):
    """2-way FM passes for a bisection level of n vertices and ``entries`` stored edge
    entries (see DENSE_MIN_DEGREE)."""
    return min(passes, DENSE_FM_PASSES) if entries > DENSE_MIN_DEGREE * n else passes


@njit(cache=True, internal=True)
def _stall(n, first, entries):
    """FM's moves without improvement for a bisection level of n vertices and ``entries``
    stored edge entries (see BISECT_STALL_* and DENSE_MIN_DEGREE)."""
    if entries > DENSE_MIN_DEGREE * n:
        return BISECT_STALL_MIN
    if first:
        return default_stall(n, FIRST_BISECT_STALL_MIN)
    return min(max(int(0.01 * n), BISECT_STALL_MIN), BISECT_STALL_MAX)


@njit(cache=True, internal=True)
def _grow_and_refine(indptr, indices, ewgt, vwgt, target0, maxw, tries, passes, stall):
    """Best of `tries` grown + FM-refined bisections by (overload, cut): (side, overload, cut).
    Every try draws its vertex order and FM seed from numba's generator and reseeds it
    afterwards (FM seeds it), so the tries are independent of each other."""
    n = indptr.shape[0] - 1
    cache = gc.new_cache(n, indices.shape[0], 2)
    best, best_over, best_cut = np.zeros(n, dtype=np.int64), np.inf, np.inf
    for _ in range(tries):
        order = np.random.permutation(n)
        fm_seed = np.random.randint(0, 2**31)
        next_seed = np.random.randint(0, 2**31)
        side = grow_bisection(indptr, indices, ewgt, vwgt, order, target0, maxw[0])
        _, cut, over = refine2(indptr, indices, ewgt, vwgt, side, maxw,
                               _passes(passes, indptr.shape[0] - 1, indices.shape[0]), fm_seed, stall, False, cache)
        if over < best_over or (over == best_over and cut < best_cut):
            best, best_over, best_cut = side, over, cut
        np.random.seed(next_seed)
    return best, best_over, best_cut


@njit(cache=True, internal=True)
def coarse_vertex_cap(vwgt):
    """The heaviest coarse vertex a bisection's hierarchy may build (MAX_COARSE_VERTEX_FRACTION)."""
    total = 0.0
    heaviest = 0.0
    for v in range(vwgt.shape[0]):   # loops, not vwgt.sum() / vwgt.max(): each numpy call compiles its own template
        total += vwgt[v]
        heaviest = max(heaviest, vwgt[v])
    return max(MAX_COARSE_VERTEX_FRACTION * total, heaviest)


@njit(cache=True, internal=True)
def multilevel_bisection(sub, target0, maxw, tries, passes, first, cap):
    """One heavy-edge hierarchy of ``sub``: grow on its coarsest level, 2-way FM on each
    level back up; (side, overload, cut). Draws from numba's generator."""
    graphs, cmaps = heavy_edge_hierarchy(sub, BISECT_COARSEST, cap, MIN_SHRINK, False, 1 << 30, 0)  # float weights
    cur = graphs[-1]
    side, over, cut = _grow_and_refine(cur[0], cur[1], cur[2], cur[3], target0, maxw, tries, passes,
                                       _stall(cur[0].shape[0] - 1, first, cur[1].shape[0]))
    for level in range(len(graphs) - 2, -1, -1):
        fine = graphs[level]
        cmap = cmaps[level + 1]
        nf = fine[0].shape[0] - 1
        side = project_labels(side, cmap, nf)
        cache = gc.new_cache(nf, fine[1].shape[0], 2)
        _, cut, over = refine2(fine[0], fine[1], fine[2], fine[3], side, maxw, _passes(passes, nf, fine[1].shape[0]),
                               np.random.randint(0, 2**31), _stall(nf, first, fine[1].shape[0]), True, cache)
    return side, over, cut


# ---- recursive bisection ------------------------------------------------------------------------

@njit(cache=True)
def bisection_bounds_nb(sub_weight, k1, k2, lmax, targets, eps_level):
    """(max0, max1, share0): side weight bounds for splitting k1 + k2 blocks of a subgraph of
    weight sub_weight, and side 0's share of the weight; see initial.bisection_bounds.
    ``lmax``, ``targets``: the k1 + k2 blocks' bounds and target fractions."""
    total = 0.0
    for b in range(k1 + k2):
        total += targets[b]
    out = np.empty(3, dtype=np.float64)
    for s in range(2):
        lo, hi = (0, k1) if s == 0 else (k1, k1 + k2)
        part_t = 0.0
        part_l = 0.0
        for b in range(lo, hi):
            part_t += targets[b]
            part_l += lmax[b]
        share = part_t / total if total > 0 else (hi - lo) / (k1 + k2)
        out[s] = lmax[lo] if hi - lo == 1 else min(sub_weight * share * (1.0 + eps_level), part_l)
        if s == 0:
            out[2] = share
    return out


@njit(cache=True, internal=True)
def new_task_stack(n, k):
    """The recursion's open tasks, (start, stop, blocks, first block) each, at most k at once
    (a range of the vertex array each); the first: all n vertices, k blocks."""
    stack = np.empty((k + 1, 4), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = 0, n, k, 0
    return stack


@njit(cache=True, internal=True)
def pop_split_task(stack, depth, verts, parts):
    """Pop tasks until one has two or more blocks and vertices to split; a task of one block
    gives its vertices that block. Returns (depth after the pop, start, stop, blocks, first
    block), depth -1 when no task is left."""
    while depth > 0:
        depth -= 1
        lo, hi, ks, first = stack[depth, 0], stack[depth, 1], stack[depth, 2], stack[depth, 3]
        if ks == 1 or hi == lo:
            for i in range(lo, hi):
                parts[verts[i]] = first
            continue
        return depth, lo, hi, ks, first
    return -1, 0, 0, 0, 0


@njit(cache=True, internal=True)
def split_by_side(verts, lo, hi, side):
    """Order verts[lo:hi] by ``side`` (stable: side 0 first, both halves stay ascending);
    returns where side 1 starts."""
    ordered = np.empty(hi - lo, dtype=np.int64)
    mid = 0
    for i in range(hi - lo):
        if side[i] == 0:
            ordered[mid] = verts[lo + i]
            mid += 1
    at = mid
    for i in range(hi - lo):
        if side[i] == 1:
            ordered[at] = verts[lo + i]
            at += 1
    verts[lo:hi] = ordered
    return lo + mid


@njit(cache=True, internal=True)
def push_halves(verts, lo, hi, side, stack, depth, k1, ks, first):
    """Split the task verts[lo:hi] of ``ks`` blocks by ``side`` (split_by_side) and push its
    halves, k1 blocks from ``first`` and ks - k1 after them, on ``stack`` at ``depth``;
    returns the new depth."""
    mid = split_by_side(verts, lo, hi, side)
    stack[depth, 0], stack[depth, 1], stack[depth, 2], stack[depth, 3] = lo, mid, k1, first
    stack[depth + 1, 0], stack[depth + 1, 1], stack[depth + 1, 2], stack[depth + 1, 3] = \
        mid, hi, ks - k1, first + k1
    return depth + 2
