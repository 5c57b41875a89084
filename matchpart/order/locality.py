"""Breadth-first renumbering of a badly numbered graph before nested dissection, so that the
neighbours of a vertex lie near it in memory on every subgraph and coarse level (the
renumbering itself is matchpart.locality's, the partitioner's too)."""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..locality import bfs_relabel_arrays

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


def renumber_for_locality(indptr, indices, vwgt):
    """(indptr, indices, vwgt, old): the graph in breadth-first order where its numbering
    scatters neighbours (median spread above SPREAD_SHARE of n), else the arrays as given
    and ``old`` None."""
    n = indptr.shape[0] - 1
    if n < LOCALITY_MIN_VERTICES or median_spread(indptr, indices, SPREAD_SAMPLES) <= SPREAD_SHARE * n:
        return indptr, indices, vwgt, None
    old, ptr, idx, _ = bfs_relabel_arrays(indptr, indices, np.ones(indices.shape[0], dtype=np.int64))
    return ptr, idx, vwgt[old], old
