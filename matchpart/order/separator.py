"""Multilevel vertex separators: coarsen, bisect the coarsest graph, turn its cut into a
separator by a minimum vertex cover (Konig), refine the separator on every level back up."""
from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..bisection import _grow_and_refine, heavy_edge_hierarchy, project_labels
from ..errors import GraphError
from ..jit import njit
from .cover import konig_cover, max_matching_nb, min_vertex_cover
from .sepfm import SEP_PASSES, refine_separator, side_weights
from .thin import thin_separator  # noqa: F401  (tests and the public separator import it from here)

# ---- tunables -------------------------------------------------------------------------
# METIS's default balance for orderings and separators (ufactor 200): each side weighs at most
# (1 + eps) / 2 of the graph; looser than partitioning's 3% since a smaller separator saves
# more fill than balanced sides do.
DEFAULT_EPS = 0.2
# The public separator coarsens (with the chosen matcher) to about this many vertices: the
# coarsest bisection then sees the whole shape of the graph and is cheap to try often.
SEP_COARSEN_TO = 200
# Initial bisections on the coarsest graph (greedy growing + 2-way FM each; the best cut kept).
INITIAL_TRIES = 8
INITIAL_FM_PASSES = 8
# The compiled separators of the nested-dissection kernel coarsen by heavy-edge matching to
# this many vertices (as bisection.BISECT_COARSEST) ...
KERNEL_COARSEST = 60
# ... and keep the best of this many greedy growings there. 5 graphs x 2 seeds, flops against
# METIS (geomean): 2 tries 1.169 x, 4 tries 1.120 x, 8 tries 1.119 x.
KERNEL_TRIES = 4
# (METIS's two-stage bisection, 2 runs on a graph coarsened 8 x for pieces of 5000+ vertices,
# was dropped once nested.MULTI_SEPS gave the large pieces whole runs: flops 1.084 -> 1.095 x
# for 0.78 x the ordering time.)
# A compiled coarsening level that keeps more than this share of its vertices ends the hierarchy.
KERNEL_MIN_SHRINK = 0.9


@dataclass
class SeparatorResult:
    """A vertex separator: ``labels`` 0 / 1 per side, 2 for the separator (numpy int64);
    ``weight`` the separator's vertex weight; ``side_weights`` (side 0, side 1);
    ``max_side_weight`` the balance bound (1 + eps) * W / 2; ``levels`` the hierarchy's sizes."""

    labels: np.ndarray
    weight: float
    side_weights: tuple
    max_side_weight: float
    balanced: bool
    levels: list = field(default_factory=list)
    time: float = 0.0


# ---- cut edges -> separator ----------------------------------------------------------------
@njit(cache=True, internal=True)
def cut_bipartite(indptr, indices, side):
    """The bipartite graph of the cut edges of a bisection: (nl, nr, ptr, adj, left, right),
    left vertices the boundary of side 0, right those of side 1 (``left``/``right`` their ids)."""
    n = indptr.shape[0] - 1
    local = np.full(n, -1, dtype=np.int64)
    nl = 0
    nr = 0
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            if side[indices[e]] != side[v]:
                if side[v] == 0:
                    local[v] = nl
                    nl += 1
                else:
                    local[v] = nr
                    nr += 1
                break
    left = np.empty(nl, dtype=np.int64)
    right = np.empty(nr, dtype=np.int64)
    ptr = np.zeros(nl + 1, dtype=np.int64)
    for v in range(n):
        if local[v] >= 0:
            if side[v] == 0:
                left[local[v]] = v
            else:
                right[local[v]] = v
    for i in range(nl):
        v = left[i]
        c = 0
        for e in range(indptr[v], indptr[v + 1]):
            if side[indices[e]] == 1:
                c += 1
        ptr[i + 1] = ptr[i] + c
    adj = np.empty(ptr[nl], dtype=np.int64)
    for i in range(nl):
        v = left[i]
        at = ptr[i]
        for e in range(indptr[v], indptr[v + 1]):
            if side[indices[e]] == 1:
                adj[at] = local[indices[e]]
                at += 1
    return nl, nr, ptr, adj, left, right


@njit(cache=True, internal=True)
def cover_to_labels(side, left, right, cover_l, cover_r):
    """Labels 0 / 1 / 2 from a bisection and a vertex cover of its cut edges (covered -> 2)."""
    where = side.copy()
    for i in range(left.shape[0]):
        if cover_l[i]:
            where[left[i]] = 2
    for i in range(right.shape[0]):
        if cover_r[i]:
            where[right[i]] = 2
    return where


@njit(cache=True, internal=True)
def separator_from_bisection_nb(indptr, indices, side):
    """Labels of the minimum separator within the cut of ``side`` (compiled matcher)."""
    nl, nr, ptr, adj, left, right = cut_bipartite(indptr, indices, side)
    lmate, rmate = max_matching_nb(nl, nr, ptr, adj)
    cover_l, cover_r = konig_cover(nl, nr, ptr, adj, lmate, rmate)
    return cover_to_labels(side, left, right, cover_l, cover_r)


def separator_from_bisection(indptr, indices, side, *, method="apfb", device="auto"):
    """Labels 0 / 1 / 2: the bisection ``side`` with a minimum vertex cover of its cut edges
    (by matchpart's exact bipartite matcher, ``method`` APFB or APsB) moved to the separator."""
    side = np.ascontiguousarray(side, dtype=np.int64)
    nl, nr, ptr, adj, left, right = cut_bipartite(indptr, indices, side)
    if adj.shape[0] == 0:
        return side.copy()
    B = sp.csr_array((np.ones(adj.shape[0], dtype=np.int8), adj, ptr), shape=(nl, nr))
    cover_l, cover_r = min_vertex_cover(B, method=method, device=device)
    return cover_to_labels(side, left, right, cover_l, cover_r)


@njit(cache=True, internal=True)
def coarsest_separator(indptr, indices, ewgt, vwgt, maxside, tries, passes):
    """The best of ``tries`` separators of a small graph by (overload, weight): each from a
    grown and FM-refined edge bisection, its minimum-cover separator, then separator FM
    (the smallest edge cut does not always give the smallest separator)."""
    n = indptr.shape[0] - 1
    total = 0.0
    for v in range(n):
        total += vwgt[v]
    maxw = np.full(2, maxside, dtype=np.float64)
    stall = max(int(0.01 * n), 15)
    best = np.zeros(n, dtype=np.int64)
    best_over, best_sep = np.inf, np.inf
    for _ in range(tries):
        side, _, _ = _grow_and_refine(indptr, indices, ewgt, vwgt, 0.5 * total, maxw, 1, passes, stall)
        where = separator_from_bisection_nb(indptr, indices, side)
        pw = refine_separator(indptr, indices, vwgt, where, maxside, passes, np.random.randint(0, 2**31))
        over = max(pw[0] - maxside, 0.0) + max(pw[1] - maxside, 0.0)
        if over < best_over or (over == best_over and pw[2] < best_sep):
            best, best_over, best_sep = where, over, pw[2]
    return best


# ---- the compiled multilevel separator (nested dissection's kernel) -------------------------
@njit(cache=True, internal=True)
def _uncoarsen(graphs, cmaps, where, maxside, passes):
    """Project the coarsest level's separator ``where`` level by level, thinning and refining each."""
    for level in range(len(graphs) - 2, -1, -1):
        fine = graphs[level]
        cmap = cmaps[level + 1]
        where = project_labels(where, cmap, fine[0].shape[0] - 1)
        where = thin_separator(fine[0], fine[1], fine[3], where, maxside)
        refine_separator(fine[0], fine[1], fine[3], where, maxside, passes, np.random.randint(0, 2**31))
    return where


@njit(cache=True, internal=True)
def _ml_once(indptr, indices, ewgt, vwgt, maxside, cap, passes, window):
    """One multilevel separator: hierarchy to KERNEL_COARSEST, coarsest_separator, uncoarsen."""
    # integer edge weights: the coarse rows are sorted by one transposition pass (the same graphs)
    graphs, cmaps = heavy_edge_hierarchy((indptr, indices, ewgt, vwgt), KERNEL_COARSEST, cap, KERNEL_MIN_SHRINK,
                                         True, 1 << 30, window)
    cur = graphs[len(graphs) - 1]
    where = coarsest_separator(cur[0], cur[1], cur[2], cur[3], maxside, KERNEL_TRIES, passes)
    return _uncoarsen(graphs, cmaps, where, maxside, passes)


@njit(cache=True, internal=True)
def ml_separator_nb(indptr, indices, ewgt, vwgt, eps, passes):
    """Labels 0 / 1 / 2 of a multilevel vertex separator (one _ml_once run), drawing on
    numba's generator; each side weighs at most (1 + eps) / 2 of the total."""
    return ml_separator_best(indptr, indices, ewgt, vwgt, eps, passes, 1, 0, 0)


@njit(cache=True, internal=True)
def ml_separator_best(indptr, indices, ewgt, vwgt, eps, passes, runs, shared, window):
    """Labels 0 / 1 / 2 of the best of ``runs`` multilevel separators by (overload, weight).
    The first ``shared`` coarsening levels are built once (with runs > 1): each run coarsens
    on from the last of them, is compared there, and only the winner is projected through
    and refined on the shared levels, which are most of a run's time (METIS's
    MlevelNodeBisectionL2 shares its first levels the same way). shared = 0: whole runs.
    ``window``: the matchings' visit order (bisection.windowed_order)."""
    n = indptr.shape[0] - 1
    total = 0.0
    heaviest = 0.0
    for v in range(n):
        total += vwgt[v]
        heaviest = max(heaviest, vwgt[v])
    maxside = 0.5 * (1.0 + eps) * total
    cap = max(1.5 * total / KERNEL_COARSEST, heaviest)
    graphs, cmaps = heavy_edge_hierarchy((indptr, indices, ewgt, vwgt), KERNEL_COARSEST, cap, KERNEL_MIN_SHRINK,
                                         True, shared if runs > 1 else 0, window)
    cur = graphs[len(graphs) - 1]
    best = _ml_once(cur[0], cur[1], cur[2], cur[3], maxside, cap, passes, window)
    pw = side_weights(best, cur[3])
    best_over, best_sep = max(pw[0] - maxside, 0.0) + max(pw[1] - maxside, 0.0), pw[2]
    for _ in range(runs - 1):
        other = _ml_once(cur[0], cur[1], cur[2], cur[3], maxside, cap, passes, window)
        pw = side_weights(other, cur[3])
        over = max(pw[0] - maxside, 0.0) + max(pw[1] - maxside, 0.0)
        if over < best_over or (over == best_over and pw[2] < best_sep):
            best, best_over, best_sep = other, over, pw[2]
    return _uncoarsen(graphs, cmaps, best, maxside, passes)


# ---- the public separator ------------------------------------------------------------------
def multilevel_separator(g, *, matcher, rating, eps, seed, method, device="auto"):
    """Labels (numpy int64) and level sizes of a separator of the Graph ``g`` (host arrays are
    refined; coarsening runs on g's backend with the chosen matcher)."""
    from ..coarsen import coarsen
    from ..initial import initial_partition
    from ..refine.state import host_arrays
    be = g.backend
    # the matcher on every level: separators were not measured with clustering levels
    levels = coarsen(g, matcher=matcher, rating=rating, seed=seed, coarsen_to=SEP_COARSEN_TO, cluster_fallback=False)
    total = float(g.total_vwgt)
    maxside = 0.5 * (1.0 + eps) * total
    coarsest = levels[-1].graph.to("cpu")
    indptr, indices, _, vwgt = host_arrays(coarsest)
    if coarsest.n >= 2:
        side = initial_partition(coarsest, 2, eps, seed=seed, tries=INITIAL_TRIES, fm_passes=INITIAL_FM_PASSES)
    else:
        side = np.zeros(coarsest.n, dtype=np.int64)
    where = separator_from_bisection(indptr, indices, side, method=method, device="cpu")
    refine_separator(indptr, indices, vwgt, where, maxside, SEP_PASSES, seed)
    for i in range(len(levels) - 2, -1, -1):
        where = where[be.to_host(levels[i].mapping)]
        indptr, indices, _, vwgt = host_arrays(levels[i].graph)
        where = thin_separator(indptr, indices, vwgt, where, maxside)
        refine_separator(indptr, indices, vwgt, where, maxside, SEP_PASSES, (seed * 1_000_003 + i) % (2**31 - 1))
    return where, [lv.graph.n for lv in levels]


def vertex_separator(graph, *, matcher="local_max", rating="expansion_star2", eps=DEFAULT_EPS, seed=0,
                     method="apfb", device="auto"):
    """A small vertex separator of ``graph``: removing the vertices labelled 2 leaves no edge
    between side 0 and side 1, and each side weighs at most (1 + eps) / 2 of the total vertex
    weight (METIS's bound for separators, its default ufactor 200 being eps = 0.2).

    Multilevel: the graph is coarsened with ``matcher`` / ``rating`` (as ``partition``), the
    coarsest graph bisected (initial partitioning's growing + 2-way FM), the bisection's cut
    edges turned into a separator by a minimum vertex cover (Konig's theorem on a maximum
    matching from ``maximum_bipartite_matching``, ``method`` "apfb" or "apsb"), and the
    separator refined by two-sided node FM on every level back up (vertex weights are the
    gains). Edge weights guide coarsening only. Deterministic for a seed.
    Returns a SeparatorResult.
    """
    from .. import backend as _backend
    from ..io import as_graph
    from ..matchers import resolve
    t0 = time.perf_counter()
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 <= eps < 1e9:
        raise GraphError(f"eps must be a number >= 0 (e.g. 0.2 for sides of at most 60%), got {eps!r}",
                         kind="invalid")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise GraphError(f"seed must be a non-negative integer, got {seed!r}", kind="invalid")
    if method not in ("apfb", "apsb"):
        raise GraphError(f"unknown method {method!r}; choose apfb or apsb", kind="invalid")
    resolve(matcher)
    g = as_graph(graph).to(_backend.get(device))
    if g.n == 0:
        labels, sizes = np.zeros(0, dtype=np.int64), [0]
    else:
        labels, sizes = multilevel_separator(g, matcher=matcher, rating=rating, eps=float(eps), seed=int(seed),
                                             method=method)
    vwgt = np.ascontiguousarray(g.backend.to_host(g.vwgt), dtype=np.float64)
    pw = side_weights(labels, vwgt) if g.n else np.zeros(3)
    maxside = 0.5 * (1.0 + float(eps)) * float(g.total_vwgt)
    return SeparatorResult(labels=labels.astype(np.int64), weight=_num(pw[2]),
                           side_weights=(_num(pw[0]), _num(pw[1])), max_side_weight=maxside,
                           balanced=bool(pw[0] <= maxside and pw[1] <= maxside), levels=sizes,
                           time=time.perf_counter() - t0)


def _num(x):
    x = float(x)
    return int(x) if x.is_integer() else x
