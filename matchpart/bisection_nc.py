"""Recursive bisection of the coarsest graph with several weights per vertex (METIS's
multi-constraint initial partitioning: McGrowBisection, McGeneral2WayBalance, MocFM_2WayRefine).

Every bisection balances each constraint on its own instead of one combined weight: each
vertex sits in the queue of its side and of its dominant constraint (the one where its share
of the subgraph's total is largest), 2 x c gain-ordered queues in all. While a side is over
its bound in some constraint, moves come from the queue of the most overweight (side,
constraint); otherwise from the queue whose best gain is largest. Growing is balancing from
one seed vertex: side 1 holds everything else and gives up its best-gain vertices until
every constraint is within its target. Subgraphs above bisection.BISECT_COARSEST vertices
are bisected on heavy-edge hierarchies and refined on every level back up (bisect_ml_nc).
Serial and seeded: independent of the thread count.
"""
from __future__ import annotations

import numpy as np

from .bisection import (BISECT_COARSEST, MAX_COARSE_VERTEX_FRACTION, MIN_SHRINK, bisection_bounds_nb,
                        heavy_edge_hierarchy, new_task_stack, pop_split_task, project_labels, push_halves)
from .jit import njit
from .refine.heap import heap_pop, heap_remove, heap_set
from .refine.state import host_cut, host_induced

# ---- tunables -------------------------------------------------------------------------
# Grown bisections per split, best kept by (overload, cut). On the benchmarks/ncon.py subset
# of refine/multi_pairwise.py: 4 instead of 8 gave 1.007 x the cut in 0.83 x the CPU time;
# one hierarchy instead of NC_HIERARCHIES 1.010 x in 0.83 x, both 1.015 x in 0.77 x.
NC_TRIES = 4
# FM passes after growing and again after the balancing that follows; a pass runs only while
# the previous one improved.
NC_FM_PASSES = 4
# A pass stops after this many moves without a new best (METIS's bound: min(max(1% of n, 15),
# 100), bisection.BISECT_STALL_*).
NC_STALL_MIN = 15
NC_STALL_MAX = 100
# Subgraphs above bisection.BISECT_COARSEST vertices are bisected on NC_HIERARCHIES heavy-edge
# hierarchies (matched by the sum of each vertex's shares), grown on the coarsest level and
# refined on every level back up, the best kept.
NC_HIERARCHIES = 2


@njit(cache=True, internal=True)
def _dominant(vw, inv):
    """Per vertex, the constraint of its largest share (its queue)."""
    n, c = vw.shape
    q = np.zeros(n, dtype=np.int64)
    for v in range(n):
        best = -1.0
        for j in range(c):
            x = vw[v, j] * inv[j]
            if x > best:
                best, q[v] = x, j
    return q


@njit(cache=True, internal=True)
def _degrees(indptr, indices, ewgt, side):
    """(ext, inn): edge weight of each vertex to the other side and to its own."""
    n = indptr.shape[0] - 1
    ext = np.zeros(n, dtype=np.float64)
    inn = np.zeros(n, dtype=np.float64)
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            if side[indices[e]] == side[v]:
                inn[v] += ewgt[e]
            else:
                ext[v] += ewgt[e]
    return ext, inn


@njit(cache=True, internal=True)
def _overload(bw, maxw, inv):
    """Largest excess of a side over its bound, in shares of the constraint's total (<= 0: within)."""
    worst = -np.inf
    for s in range(2):
        for j in range(bw.shape[1]):
            worst = max(worst, (bw[s, j] - maxw[s, j]) * inv[j])
    return worst


@njit(cache=True, internal=True)
def _select(bw, maxw, inv, keys, sizes):
    """Queue (2 j + s) to move from: the most overweight (side, constraint), or another queue of
    that side when it is empty; when nothing is over, the queue of largest gain. -1: none."""
    c = bw.shape[1]
    worst, s_over, j_over = 0.0, -1, -1
    for s in range(2):
        for j in range(c):
            x = (bw[s, j] - maxw[s, j]) * inv[j]
            if x > worst:
                worst, s_over, j_over = x, s, j
    if s_over >= 0:
        if sizes[2 * j_over + s_over] > 0:
            return 2 * j_over + s_over
        best, q = -np.inf, -1
        for j in range(c):
            x = (bw[s_over, j] - maxw[s_over, j]) * inv[j]
            if sizes[2 * j + s_over] > 0 and x > best:
                best, q = x, 2 * j + s_over
        return q
    best, q = -np.inf, -1
    for i in range(2 * c):
        if sizes[i] > 0 and keys[i, 0] > best:
            best, q = keys[i, 0], i
    return q


@njit(cache=True, internal=True)
def _move(v, indptr, indices, ewgt, vw, side, bw, ext, inn):
    """Move v to the other side, updating block weights and its neighbours' degrees."""
    a = side[v]
    for j in range(vw.shape[1]):
        bw[a, j] -= vw[v, j]
        bw[1 - a, j] += vw[v, j]
    side[v] = 1 - a
    ext[v], inn[v] = inn[v], ext[v]
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if side[u] == a:
            inn[u] -= ewgt[e]
            ext[u] += ewgt[e]
        else:
            ext[u] -= ewgt[e]
            inn[u] += ewgt[e]


@njit(cache=True, internal=True)
def _refine(indptr, indices, ewgt, vw, qnum, side, bw, maxw, inv, cut, balance_only, stall, order):
    """One pass of moves between the two sides (the best prefix kept); returns the new cut.

    ``balance_only``: every vertex is queued and the pass stops once no side is over its
    bound (balancing, growing); else only boundary vertices are queued and the best prefix
    is the one of least cut among those within bounds (or, while none is, of least overload)."""
    n = indptr.shape[0] - 1
    c = vw.shape[1]
    keys = np.empty((2 * c, n), dtype=np.float64)
    verts = np.empty((2 * c, n), dtype=np.int64)
    pos = np.full((2 * c, n), -1, dtype=np.int64)
    sizes = np.zeros(2 * c, dtype=np.int64)
    ext, inn = _degrees(indptr, indices, ewgt, side)
    for i in range(n):
        v = order[i]
        if balance_only or ext[v] > 0:
            q = 2 * qnum[v] + side[v]
            heap_set(keys[q], verts[q], pos[q], sizes[q:q + 1], v, ext[v] - inn[v])
    locked = np.zeros(n, dtype=np.bool_)
    moved = np.empty(n, dtype=np.int64)
    best_cut, best_over, best_count = cut, max(_overload(bw, maxw, inv), 0.0), 0
    now = cut
    made = 0
    while made < n:
        if balance_only and _overload(bw, maxw, inv) <= 0:
            break
        q = _select(bw, maxw, inv, keys, sizes)
        if q < 0:
            break
        v, g = heap_pop(keys[q], verts[q], pos[q], sizes[q:q + 1])
        now -= g
        _move(v, indptr, indices, ewgt, vw, side, bw, ext, inn)
        locked[v] = True
        moved[made] = v
        made += 1
        over = max(_overload(bw, maxw, inv), 0.0)
        if (now < best_cut and over <= 0) or (now == best_cut and over < best_over) or \
                (best_over > 0 and over < best_over):
            best_cut, best_over, best_count = now, over, made
        elif not balance_only and made - best_count > stall:
            break
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if locked[u]:
                continue
            q = 2 * qnum[u] + side[u]
            if balance_only or ext[u] > 0:
                heap_set(keys[q], verts[q], pos[q], sizes[q:q + 1], u, ext[u] - inn[u])
            else:
                heap_remove(keys[q], verts[q], pos[q], sizes[q:q + 1], u)
    for i in range(made - 1, best_count - 1, -1):       # undo the moves after the best prefix
        _move(moved[i], indptr, indices, ewgt, vw, side, bw, ext, inn)
    return best_cut


@njit(cache=True, internal=True)
def _fm(indptr, indices, ewgt, vw, qnum, side, bw, maxw, inv, cut, passes, stall):
    """Up to ``passes`` FM passes, each while the previous lowered the cut or the overload."""
    n = indptr.shape[0] - 1
    for _ in range(passes):
        over0, cut0 = max(_overload(bw, maxw, inv), 0.0), cut
        cut = _refine(indptr, indices, ewgt, vw, qnum, side, bw, maxw, inv, cut, False, stall,
                      np.random.permutation(n))
        over1 = max(_overload(bw, maxw, inv), 0.0)
        if over1 > over0 or (over1 == over0 and cut >= cut0):
            break
    return cut


@njit(cache=True, internal=True)
def _side_weights(vw, side):
    bw = np.zeros((2, vw.shape[1]), dtype=np.float64)
    for v in range(vw.shape[0]):
        for j in range(vw.shape[1]):
            bw[side[v], j] += vw[v, j]
    return bw


@njit(cache=True)
def bisect_nc(indptr, indices, ewgt, vw, target, maxw, tries, passes):
    """Side per vertex of the best of ``tries`` grown and FM-refined bisections by (overload,
    cut). ``target``, ``maxw``: (2, c) side targets and bounds. Seeded by the caller's
    np.random state."""
    n = indptr.shape[0] - 1
    c = vw.shape[1]
    inv = _inverse_totals(target)
    qnum = _dominant(vw, inv)
    stall = min(max(int(0.01 * n), NC_STALL_MIN), NC_STALL_MAX)
    # growing stops once side 1 is within its target in every constraint (side 0 unbounded)
    grow = np.empty((2, c), dtype=np.float64)
    for j in range(c):
        grow[0, j], grow[1, j] = np.inf, target[1, j]
    best, best_over, best_cut = np.zeros(n, dtype=np.int64), np.inf, np.inf
    for _ in range(tries):
        side = np.ones(n, dtype=np.int64)
        side[np.random.randint(0, n)] = 0
        bw = _side_weights(vw, side)
        cut = host_cut(indptr, indices, ewgt, side)
        cut = _refine(indptr, indices, ewgt, vw, qnum, side, bw, grow, inv, cut, True, n,
                      np.random.permutation(n))
        cut = _fm(indptr, indices, ewgt, vw, qnum, side, bw, maxw, inv, cut, passes, stall)
        if _overload(bw, maxw, inv) > 0:
            cut = _refine(indptr, indices, ewgt, vw, qnum, side, bw, maxw, inv, cut, True, n,
                          np.random.permutation(n))
            cut = _fm(indptr, indices, ewgt, vw, qnum, side, bw, maxw, inv, cut, passes, stall)
        over = max(_overload(bw, maxw, inv), 0.0)
        if over < best_over or (over == best_over and cut < best_cut):
            best, best_over, best_cut = side.copy(), over, cut
    return best


@njit(cache=True, internal=True)
def _inverse_totals(target):
    c = target.shape[1]
    inv = np.empty(c, dtype=np.float64)
    for j in range(c):
        t = target[0, j] + target[1, j]
        inv[j] = 1.0 / t if t > 0 else 1.0
    return inv


@njit(cache=True)
def bisect_ml_nc(indptr, indices, ewgt, vw, target, maxw, tries, passes, hierarchies):
    """bisect_nc on the subgraph itself when it has at most BISECT_COARSEST vertices, else the
    best by (overload, cut) of ``hierarchies`` multilevel bisections: bisect_nc on the coarsest
    level of a heavy-edge hierarchy, then balancing (when a side is over) and FM on each level."""
    n = indptr.shape[0] - 1
    c = vw.shape[1]
    if n <= BISECT_COARSEST:
        return bisect_nc(indptr, indices, ewgt, vw, target, maxw, tries, passes)
    inv = _inverse_totals(target)
    share = np.zeros(n, dtype=np.float64)
    total, heaviest = 0.0, 0.0
    for v in range(n):
        for j in range(c):
            share[v] += vw[v, j] * inv[j]
        total += share[v]
        heaviest = max(heaviest, share[v])
    cap = max(MAX_COARSE_VERTEX_FRACTION * total, heaviest)
    best, best_over, best_cut = np.zeros(n, dtype=np.int64), np.inf, np.inf
    for _ in range(hierarchies):
        graphs, cmaps = heavy_edge_hierarchy((indptr, indices, ewgt, share), BISECT_COARSEST, cap, MIN_SHRINK,
                                             False, 1 << 30, 0)
        weights = [vw]
        for level in range(1, len(graphs)):
            cw = np.zeros((graphs[level][0].shape[0] - 1, c), dtype=np.float64)
            fine = weights[level - 1]
            cmap = cmaps[level]
            for v in range(fine.shape[0]):
                for j in range(c):
                    cw[cmap[v], j] += fine[v, j]
            weights.append(cw)
        top = graphs[-1]
        side = bisect_nc(top[0], top[1], top[2], weights[-1], target, maxw, tries, passes)
        for level in range(len(graphs) - 2, -1, -1):
            fg = graphs[level]
            nf = fg[0].shape[0] - 1
            side = project_labels(side, cmaps[level + 1], nf)
            side = _polish(fg[0], fg[1], fg[2], weights[level], side, target, maxw, passes)
        lw = _side_weights(vw, side)
        over = max(_overload(lw, maxw, inv), 0.0)
        cut = host_cut(indptr, indices, ewgt, side)
        if over < best_over or (over == best_over and cut < best_cut):
            best, best_over, best_cut = side, over, cut
    return best


@njit(cache=True, internal=True)
def _polish(indptr, indices, ewgt, vw, side, target, maxw, passes):
    """Balancing when a side is over its bound, then FM, on one level (side changed in place)."""
    n = indptr.shape[0] - 1
    inv = _inverse_totals(target)
    qnum = _dominant(vw, inv)
    stall = min(max(int(0.01 * n), NC_STALL_MIN), NC_STALL_MAX)
    bw = _side_weights(vw, side)
    cut = host_cut(indptr, indices, ewgt, side)
    if _overload(bw, maxw, inv) > 0:
        cut = _refine(indptr, indices, ewgt, vw, qnum, side, bw, maxw, inv, cut, True, n, np.random.permutation(n))
    _fm(indptr, indices, ewgt, vw, qnum, side, bw, maxw, inv, cut, passes, stall)
    return side


@njit(cache=True)
def recursive_bisection_nc(indptr, indices, ewgt, vw, maxw, targets, eps_level, seed, tries, passes, hierarchies):
    """Block per vertex (0..k-1, k = maxw.shape[0]) by recursive multi-constraint bisection.
    ``vw``: (n, c) float64 weights; ``maxw``: (k, c) block bounds; ``targets``: (k, c)
    target fractions; ``eps_level``: c tolerances per level (side bounds as
    bisection.bisection_bounds_nb gives them, one constraint at a time)."""
    n = indptr.shape[0] - 1
    k, c = maxw.shape
    np.random.seed(seed)
    parts = np.zeros(n, dtype=np.int64)
    verts = np.arange(n)
    local = np.full(n, -1, dtype=np.int64)
    dummy = np.zeros(n, dtype=np.float64)
    stack = new_task_stack(n, k)
    depth = 1
    while True:
        depth, lo, hi, ks, first = pop_split_task(stack, depth, verts, parts)
        if depth < 0:
            break
        k1 = ks // 2
        sub = host_induced(indptr, indices, ewgt, dummy, verts[lo:hi], local)
        svw = np.empty((hi - lo, c), dtype=np.float64)
        for i in range(hi - lo):
            for j in range(c):
                svw[i, j] = vw[verts[lo + i], j]
        target = np.empty((2, c), dtype=np.float64)
        side_max = np.empty((2, c), dtype=np.float64)
        for j in range(c):
            w = 0.0
            for i in range(hi - lo):
                w += svw[i, j]
            b = bisection_bounds_nb(w, k1, ks - k1, np.ascontiguousarray(maxw[first:first + ks, j]),
                                    np.ascontiguousarray(targets[first:first + ks, j]), eps_level[j])
            target[0, j], target[1, j] = w * b[2], w * (1.0 - b[2])
            side_max[0, j], side_max[1, j] = b[0], b[1]
        side = bisect_ml_nc(sub[0], sub[1], sub[2], svw, target, side_max, tries, passes, hierarchies)
        depth = push_halves(verts, lo, hi, side, stack, depth, k1, ks, first)
    return parts


def initial_partition_nc(indptr, indices, ewgt, vw, bounds, eps, target_weights=None, *, seed=0, tries=NC_TRIES,
                         passes=NC_FM_PASSES, hierarchies=NC_HIERARCHIES):
    """Block per vertex (int64, 0..k-1) of the host graph with (n, c) weights ``vw`` by recursive
    multi-constraint bisection: ``bounds`` (k, c) block bounds, ``eps`` c tolerances,
    ``target_weights`` None or checked (k, c) fractions. Each constraint's side bounds
    multiply over the ceil(log2 k) levels to at most its (1 + eps) (as initial.py does for one)."""
    k, c = np.shape(bounds)
    n = indptr.shape[0] - 1
    if k == 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    levels = max(int(np.ceil(np.log2(k))), 1)
    eps_level = np.array([(1.0 + e) ** (1.0 / levels) - 1.0 for e in eps], dtype=np.float64)
    targets = np.ones((k, c)) if target_weights is None else np.asarray(target_weights, dtype=np.float64)
    return recursive_bisection_nc(np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64),
                                  np.asarray(ewgt, dtype=np.float64), np.ascontiguousarray(vw, dtype=np.float64),
                                  np.ascontiguousarray(bounds, dtype=np.float64), np.ascontiguousarray(targets),
                                  eps_level, int(seed), int(tries), int(passes), int(hierarchies))
