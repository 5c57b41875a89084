"""Breadth-first renumbering of graphs whose numbering has no locality.

Every phase reads per-vertex arrays (cluster ids, blocks, weights) at the neighbours of the
vertex it works on. When the ids of neighbours lie anywhere in 0..n-1 (graphs generated or
stored in random order), each of those reads is a cache miss: on rgg 2^20 (k = 32, default, one
thread) the first clustering level took 90% of the run at ~36 ns per entry. Numbered
breadth-first, a vertex's neighbours lie in the layers before and after its own, a few
thousand ids away: the partition itself took 0.4-0.5 x the time (5.3 s -> 2.1-2.8 s, CPU) at 0.97 x
the cut. The renumbering (BFS and relabel.relabel) costs ~1-1.5 s there at one thread, so the
pipeline applies it only to graphs clustered from the first level (eight label-propagation
rounds per level read every neighbour's cluster): on delaunay 2^20, coarsened by matching, the
run went from 1.8 to 2.6 s. Graphs whose numbering already keeps most neighbours close (meshes
from files, generated grids) keep it, and so do graphs below relabel.RELABEL_MIN_VERTICES.

The order is a pure function of the graph: components by their smallest vertex, then by the
distance from it, then by id: (root, level, id). Same order on the host (compiled BFS) and on
``xp`` (the GPU's: minimum-label components, then a BFS from every root at once).
"""
from __future__ import annotations

import numpy as np

from . import relabel
from .jit import njit

# Tunables
SAMPLE_ROWS = 4096          # rows sampled (evenly spaced) to judge the numbering
LOCAL_WINDOW_MAX = 1 << 14  # an entry is local when |u - v| <= min(this, n / LOCAL_WINDOW_SHARE):
LOCAL_WINDOW_SHARE = 32     # 128 KB of int64 per-vertex data; a random numbering has ~2/32 local
SCATTERED_MAX_LOCAL = 0.5   # renumber when at most this share of the sampled entries is local:
                            # random orders (rgg, delaunay generators) have < 0.07, mesh files and
                            # grids most of theirs (4elt 0.99)


def scattered(graph) -> bool:
    """Whether ``graph`` is large and numbered so that few neighbours lie close in id."""
    n = graph.n
    if n < relabel.RELABEL_MIN_VERTICES or graph.m == 0:
        return False
    be = graph.backend
    xp = be.xp
    rows = xp.arange(0, n, max(1, n // SAMPLE_ROWS), dtype=xp.int64)
    start = graph.indptr[rows].astype(xp.int64)
    entries, local = be.ranges(start, graph.indptr[rows + 1].astype(xp.int64) - start)
    if entries.shape[0] == 0:
        return False
    window = min(LOCAL_WINDOW_MAX, n // LOCAL_WINDOW_SHARE)
    near = xp.abs(graph.indices[entries].astype(xp.int64) - rows[local]) <= window
    return float(near.mean().item()) <= SCATTERED_MAX_LOCAL


def bfs_order(graph):
    """order[i] = the old id of new vertex i: (component's smallest vertex, distance from it,
    id) ascending (a device array)."""
    be = graph.backend
    if not be.is_gpu:
        return _bfs_order_nb(np.asarray(graph.indptr, dtype=np.int64), np.asarray(graph.indices))
    return _bfs_order_xp(be, graph)


@njit(cache=True)
def _bfs_order_nb(indptr, indices):
    """Breadth-first search from each unvisited vertex in id order (so components come by their
    smallest vertex), numbering layers globally; then a counting sort by layer, ids
    increasing within one."""
    n = indptr.shape[0] - 1
    layer = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    layers = 0
    for root in range(n):
        if layer[root] >= 0:
            continue
        layer[root] = layers
        queue[tail] = root
        tail += 1
        deepest = layers
        while head < tail:
            v = queue[head]
            head += 1
            nxt = layer[v] + 1
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if layer[u] < 0:
                    layer[u] = nxt
                    queue[tail] = u
                    tail += 1
                    deepest = max(deepest, nxt)
        layers = deepest + 1
    start = np.zeros(layers + 1, dtype=np.int64)
    for v in range(n):
        start[layer[v] + 1] += 1
    for i in range(layers):
        start[i + 1] += start[i]
    order = np.empty(n, dtype=np.int64)
    for v in range(n):
        order[start[layer[v]]] = v
        start[layer[v]] += 1
    return order


def _bfs_order_xp(be, graph):
    xp = be.xp
    n = graph.n
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cols = graph.indices.astype(xp.int64)
    # components: every vertex takes the smallest label among itself and its neighbours until
    # nothing changes; the label is then the component's smallest vertex
    root = xp.arange(n, dtype=xp.int64)
    while True:
        new = root.copy()
        be.scatter_min(new, rows, root[cols])
        if bool((new == root).all()):
            break
        root = new
    # distances from the roots, every component's BFS at once
    level = xp.full(n, -1, dtype=xp.int64)
    frontier = xp.flatnonzero(root == xp.arange(n, dtype=xp.int64))
    level[frontier] = 0
    depth = 0
    while frontier.shape[0]:
        entries, _ = be.ranges(graph.indptr[frontier].astype(xp.int64),
                               (graph.indptr[frontier + 1] - graph.indptr[frontier]).astype(xp.int64))
        reached = cols[entries]
        reached = xp.unique(reached[level[reached] < 0])
        depth += 1
        level[reached] = depth
        frontier = reached
    return xp.lexsort(xp.stack([xp.arange(n, dtype=xp.int64), level, root]))
