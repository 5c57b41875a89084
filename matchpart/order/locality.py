"""Breadth-first renumbering of a badly numbered graph before nested dissection, so that the
neighbours of a vertex lie near it in memory on every subgraph and coarse level."""
from __future__ import annotations

import numpy as np

from ..jit import njit

# Renumber when the median |u - v| over the sampled edges exceeds this share of n: randomly
# numbered graphs (the generated delaunay / rgg) sit near 0.3, meshes stored in a mesh
# generator's or a sweep's order below 0.01. delaunay:131072 took 0.70 x the CPU time of the
# original numbering (every kernel of the recursion waits less for memory), rgg:131072 0.75 x.
SPREAD_SHARE = 0.05
# Edges sampled for that median (spread evenly over the edge array).
SPREAD_SAMPLES = 4096
# Graphs below this many vertices fit the caches whatever their numbering.
LOCALITY_MIN_VERTICES = 20_000


@njit(cache=True)
def median_spread(indptr, indices, samples):
    """Median |u - v| over ``samples`` edges (u, v) spread evenly over the edge array."""
    n = indptr.shape[0] - 1
    m = indices.shape[0]
    k = min(samples, m)
    if k == 0:
        return 0
    spread = np.empty(k, dtype=np.int64)
    v = 0
    for i in range(k):
        e = (i * m) // k
        while indptr[v + 1] <= e:   # the row of edge e (e grows with i)
            v += 1
        spread[i] = abs(indices[e] - v)
    spread.sort()
    return spread[k // 2] if n > 0 else 0


@njit(cache=True)
def bfs_numbering(indptr, indices):
    """``old`` (new id -> old id): breadth-first order, each component from its lowest vertex,
    neighbours in their row's order."""
    n = indptr.shape[0] - 1
    old = np.empty(n, dtype=np.int64)
    seen = np.zeros(n, dtype=np.bool_)
    tail = 0
    for s in range(n):
        if seen[s]:
            continue
        seen[s] = True
        old[tail] = s
        head = tail
        tail += 1
        while head < tail:
            v = old[head]
            head += 1
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if not seen[u]:
                    seen[u] = True
                    old[tail] = u
                    tail += 1
    return old


@njit(cache=True)
def permute_symmetric(indptr, indices, vwgt, old):
    """(indptr, indices, vwgt) of the symmetric graph renumbered by ``old`` (new id -> old id),
    rows sorted: every entry (c, d) is written to row d in order of c (one transposition
    pass sorts all rows, as the graph is symmetric)."""
    n = indptr.shape[0] - 1
    new = np.empty(n, dtype=np.int64)
    for i in range(n):
        new[old[i]] = i
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        ptr[i + 1] = ptr[i] + indptr[old[i] + 1] - indptr[old[i]]
    at = ptr[:n].copy()
    out = np.empty(indices.shape[0], dtype=indices.dtype)
    for c in range(n):
        v = old[c]
        for e in range(indptr[v], indptr[v + 1]):
            d = new[indices[e]]
            out[at[d]] = c
            at[d] += 1
    w = np.empty(n, dtype=vwgt.dtype)
    for i in range(n):
        w[i] = vwgt[old[i]]
    return ptr, out, w


def renumber_for_locality(indptr, indices, vwgt):
    """(indptr, indices, vwgt, old): the graph in breadth-first order where its numbering
    scatters neighbours (median spread above SPREAD_SHARE of n), else the arrays as given
    and ``old`` None."""
    n = indptr.shape[0] - 1
    if n < LOCALITY_MIN_VERTICES or median_spread(indptr, indices, SPREAD_SAMPLES) <= SPREAD_SHARE * n:
        return indptr, indices, vwgt, None
    old = bfs_numbering(indptr, indices)
    ptr, idx, w = permute_symmetric(indptr, indices, vwgt, old)
    return ptr, idx, w, old
