"""Nested dissection: separator numbered last, the two sides recursively, minimum degree on the
small pieces, identical vertices compressed first, components ordered separately."""
from __future__ import annotations

import numbers
import time
import warnings

import numba
import numpy as np

from .. import threads as _threads
from ..bisection import contract
from ..errors import GraphError
from ..refine.state import host_induced
from .compress import MIN_COMPRESSION, identical_groups
from .locality import renumber_for_locality
from .mindegree import MAX_DENSE_VERTICES
from .ndkernel import MULTI_SEPS, TOP_SEPS, nd_kernel

# ---- tunables -------------------------------------------------------------------------
# Pieces of at most this many vertices are ordered by minimum degree instead of being
# dissected further (METIS switches at 120). With the halo-aware multiple minimum degree
# (mindegree.py), 5 graphs x 2 seeds against METIS: 250 gives nnz 1.031 x / flops 1.120 x,
# 120 gives 1.031 x / 1.118 x; the levels it saves are the dearest per vertex (a separator
# of 250 vertices costs 4.4 us a vertex, one of 4000+ vertices 1.6-1.8 us).
LEAF_SIZE = 250
# Pieces above this many vertices get the public multilevel separator (the chosen matcher's
# coarsening, the exact bipartite matcher); smaller ones the compiled kernel, which orders
# all of them in one call. delaunay_n15's top separator took 0.19 s the public way against
# 0.06-0.09 s for a kernel run, so below a million vertices the kernel's best of MULTI_SEPS
# runs is both cheaper and smaller; above, the chosen matcher's threads / GPU are expected
# to pay (not measured).
PY_MIN_VERTICES = 1_000_000
# Coarsening levels those runs share (separator.ml_separator_best): only the best run's
# separator is refined on them. 9 benchmark graphs x 3 seeds against METIS: 0 levels flops
# 1.067 x, CPU 2.52 x; 1 level 1.086 x, 2.13 x; 2 levels 1.105 x, 1.95 x (grid:40x40x40 0.89 ->
# 0.97 -> 1.05 x): the best run on a coarse level is a poor guess of the best one on the finest.
MULTI_SHARED_LEVELS = 0
# The separators' matchings visit windows of this many consecutive vertices (0: a random
# permutation of all). 256 makes the hierarchy ~0.7 x as dear on a well numbered graph, and
# the same 27 orderings: flops 1.054 x (grid:40x40x40 0.70 x, its matchings follow the grid
# lines), but delaunay_n15 1.05 -> 1.10 x and rgg:131072 1.05 -> 1.12 x: left off until more
# seeds say which way it goes.
MATCH_WINDOW = 0
# Separator FM passes per level inside nested dissection (the public vertex_separator keeps
# sepfm.SEP_PASSES = 10). 5 graphs x 2 seeds, best of 3 on big pieces: 10 passes flops
# 1.095 x METIS's, 3 passes 1.104 x for 0.94 x the time; one separator: 1.145 vs 1.138 x, 0.90 x.
ND_SEP_PASSES = 3
# Balance of nested dissection's separators: each side at most (1 + ORDER_EPS) / 2 of its piece.
# Looser than METIS's 0.2 (vertex_separator's default): smaller separators pay more than
# balance. Flops against METIS, 2 seeds each: 5 meshes/grids 1.104 x at 0.2, 1.048 x at 0.3,
# 1.050 x at 0.4, 1.052 x at 0.5, 1.253 x at 0.7; fe_4elt2 + two 3-D grids 1.384 x at 0.2,
# 1.299 x at 0.3, 1.295 x at 0.4.
ORDER_EPS = 0.3
# Pieces above this many vertices are split one depth at a time, all separator runs of a depth
# on the threads; the smaller ones' whole recursions run on the threads, largest first. NOT yet
# measured (the 2-core machine was saturated by other work): 2000 only so that airfoil1 (4253
# vertices) still gives the threads two pieces; the result does not depend on the thread count.
PAR_SPLIT_MIN = 2000
# Separators of pieces of FLOW_MIN+ vertices are replaced by the lightest vertex cut of the
# band of FLOW_DEPTH steps around them (flow.py), the lightest run's only: cutting every run
# before choosing gave 0.975 x / 0.981 x against 0.976 x / 0.987 x for 1.1-1.35 x the CPU
# time on rgg:131072 and grid27:40. Measured with every run cut, 9 benchmark graphs x 2
# seeds against METIS (nnz, flops, our CPU / METIS's):
# no flow 1.003 x, 1.062 x, 2.41; depth 2 0.995, 1.034, 2.36; depth 3 0.984, 1.000, 2.44;
# depth 4 0.982, 0.989, 2.67; depth 3 on pieces of 2000+ (every piece split one depth at a
# time) 0.975, 0.981, 2.57; of 500+ 0.967, 0.967, 3.41. Wider bands let the cut drift off
# towards the smaller side (grid27:40's top separator: 2345 at depth 0, 2053 at depth 4,
# rejected as unbalanced at depth 5): a tilted plane's cross-section shrinks that way.
FLOW_DEPTH = 3
FLOW_MIN = 2000
# Hash stream of the kernel's seed (distinct from the separators' own seeds).
KERNEL_STREAM = 0x0D15


class OrderResult(tuple):
    """``(perm, iperm)`` as pymetis.nested_dissection returns them (perm[i]: the vertex numbered i;
    iperm[v]: the number of vertex v), with ``separators`` (rows depth, vertices, weight of every
    separator, top first; vertices of the compressed graph, weight = original vertices when
    they weigh 1), ``compressed_n`` (vertices after compression) and ``time`` as attributes."""

    def __new__(cls, perm, iperm, separators=None, compressed_n=0, seconds=0.0):
        self = super().__new__(cls, (perm, iperm))
        self.perm = perm
        self.iperm = iperm
        self.separators = separators if separators is not None else np.zeros((0, 3))
        self.compressed_n = compressed_n
        self.time = seconds
        return self


def order(graph, *, matcher="local_max", rating="expansion_star2", eps=ORDER_EPS, seed=0, leaf_size=LEAF_SIZE,
          compress=True, method="apfb", device="auto", threads=None):
    """A fill-reducing nested-dissection ordering of ``graph``: returns ``(perm, iperm)``
    (numpy int64; an OrderResult) with pymetis.nested_dissection's meaning: the permuted
    matrix is A[perm][:, perm], vertex v is eliminated iperm[v]-th.

    Vertices with identical closed neighbourhoods are merged first (``compress``), a graph
    whose numbering scatters neighbours is renumbered breadth-first (locality.py); then each
    piece is split by a vertex separator (vertex_separator's multilevel method with
    ``matcher``/``rating``/``method`` on pieces of more than PY_MIN_VERTICES vertices, the
    compiled heavy-edge version of ndkernel.py, the lightest of MULTI_SEPS (TOP_SEPS at depth 0) on pieces of MULTI_SEP_MIN+
    vertices), the separator numbered after both sides, the sides ordered recursively;
    disconnected pieces are ordered one component at a time, pieces of at most ``leaf_size``
    vertices by multiple minimum degree with their halo of ancestor-separator vertices
    counted in the degrees. ``eps``: each side weighs at most (1 + eps) / 2 of its piece
    (ORDER_EPS = 0.3 by default). ``threads``: how many the compiled dissection uses (None:
    every core); the result is deterministic for a seed and the same for any thread count.
    """
    from ..io import as_graph
    from ..matchers import resolve
    t0 = time.perf_counter()
    if isinstance(leaf_size, bool) or not isinstance(leaf_size, numbers.Integral) or \
            not 1 <= leaf_size <= MAX_DENSE_VERTICES:
        raise GraphError(f"leaf_size must be an integer between 1 and {MAX_DENSE_VERTICES}, got {leaf_size!r}",
                         kind="invalid")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 <= eps < 1e9:
        raise GraphError(f"eps must be a number >= 0 (e.g. 0.2), got {eps!r}", kind="invalid")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise GraphError(f"seed must be a non-negative integer, got {seed!r}", kind="invalid")
    if method not in ("apfb", "apsb"):
        raise GraphError(f"unknown method {method!r}; choose apfb or apsb", kind="invalid")
    threads = _threads.check(threads)
    resolve(matcher)   # an unknown matcher fails now, not only once a piece is large enough to use it
    g = as_graph(graph)
    host = g.to("cpu")
    n = host.n
    indptr = np.ascontiguousarray(host.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(host.indices)
    vwgt = np.ascontiguousarray(host.vwgt)
    cmap = None
    if compress and n:
        cmap, nc = identical_groups(indptr, indices)
        if nc <= (1.0 - MIN_COMPRESSION) * n:
            indptr, indices, _, vwgt = contract(indptr, indices, np.ones(indices.shape[0], dtype=np.int64),
                                                vwgt, cmap, nc)
            indptr = indptr.astype(np.int64)
        else:
            cmap = None
    indptr, indices, vwgt, old = renumber_for_locality(indptr, indices, vwgt)
    nv = indptr.shape[0] - 1
    ewgt = np.ones(indices.shape[0], dtype=np.int64)
    verts = np.arange(nv, dtype=np.int64)
    iperm_c = np.full(nv, -1, dtype=np.int64)
    tasks, seps = _dissect_top(indptr, indices, ewgt, vwgt, verts, iperm_c, matcher=matcher, rating=rating,
                               eps=float(eps), seed=int(seed), method=method, device=device, leaf_size=leaf_size)
    kseed = (int(seed) * 1_000_003 + KERNEL_STREAM) % (2**31 - 1)
    with _threads.limit(threads), warnings.catch_warnings():
        # compiling it, numba says that nd_kernel has no parallel loop: its prange loops do run on
        # the threads, the warning comes from a nested compile of their loop bodies (as fm.py's)
        warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
        ksep = nd_kernel(indptr, indices, ewgt, vwgt, verts, iperm_c,
                         np.asarray(tasks, dtype=np.int64).reshape(-1, 3), float(eps), kseed, int(leaf_size),
                         ND_SEP_PASSES, MULTI_SEPS, MULTI_SHARED_LEVELS, MATCH_WINDOW, max(PAR_SPLIT_MIN, leaf_size), FLOW_DEPTH,
                         FLOW_MIN, TOP_SEPS)
    separators = np.vstack([np.asarray(seps, dtype=np.float64).reshape(-1, 3), ksep])
    if old is not None:   # back to the (compressed) graph's own numbering
        renumbered = iperm_c
        iperm_c = np.empty(nv, dtype=np.int64)
        iperm_c[old] = renumbered
    if cmap is not None:
        # members of a compressed vertex get consecutive numbers, in the order of their ids
        perm = np.argsort(iperm_c[cmap], kind="stable").astype(np.int64)
    else:
        perm = np.empty(nv, dtype=np.int64)
        perm[iperm_c] = np.arange(nv)
    iperm = np.empty(n, dtype=np.int64)
    iperm[perm] = np.arange(n)
    return OrderResult(perm, iperm, separators[np.lexsort((-separators[:, 2], separators[:, 0]))], nv,
                       time.perf_counter() - t0)


def _dissect_top(indptr, indices, ewgt, vwgt, verts, iperm, *, matcher, rating, eps, seed, method, device,
                 leaf_size):
    """Split the pieces of more than PY_MIN_VERTICES vertices with the public multilevel
    separator (numbering each separator last in its piece); returns the smaller pieces as
    kernel tasks (lo, hi, depth) and the separators as rows (depth, vertices, weight)."""
    from scipy.sparse.csgraph import connected_components

    from .. import backend as _backend
    from ..graph import Graph
    from .separator import multilevel_separator
    be = _backend.get(device)
    local = np.full(indptr.shape[0] - 1, -1, dtype=np.int64)
    stack = [(0, verts.shape[0], 0)]
    tasks, seps = [], []
    count = 0
    while stack:
        lo, hi, depth = stack.pop()
        if hi - lo <= max(PY_MIN_VERTICES, leaf_size):
            tasks.append((lo, hi, depth))
            continue
        sub = host_induced(indptr, indices, ewgt, vwgt, verts[lo:hi], local)
        sg = Graph._trusted(sub[0], sub[1], sub[2], sub[3], _backend.get("cpu"))
        ncomp, comp = connected_components(sg.to_scipy(), directed=False)
        if ncomp > 1:
            start = np.concatenate([[0], np.cumsum(np.bincount(comp, minlength=ncomp))])
            verts[lo:hi] = verts[lo:hi][np.argsort(comp, kind="stable")]
            stack.extend((lo + int(start[c]), lo + int(start[c + 1]), depth) for c in range(ncomp))
            continue
        labels, _ = multilevel_separator(sg.to(be), matcher=matcher, rating=rating, eps=eps,
                                         seed=(seed * 7919 + count) % (2**31 - 1), method=method)
        count += 1
        verts[lo:hi] = verts[lo:hi][np.argsort(labels, kind="stable")]
        n0, n1 = int((labels == 0).sum()), int((labels == 1).sum())
        s0 = lo + n0 + n1
        if n0 == 0 or n1 == 0:            # no split (a dense piece): leave it to the kernel
            tasks.append((lo, hi, depth))
            continue
        iperm[verts[s0:hi]] = np.arange(s0, hi)
        seps.append((depth, hi - s0, float(sub[3][labels == 2].sum())))
        stack.append((lo + n0, s0, depth + 1))
        stack.append((lo, lo + n0, depth + 1))
    return tasks, seps


def nested_dissection(graph, **kwargs):
    """``order`` under the name pymetis uses (see compat.nested_dissection for its call shape)."""
    return order(graph, **kwargs)
