"""Minimum-degree ordering of the small pieces nested dissection leaves (compiled, exact degrees
on the explicit elimination graph)."""
from __future__ import annotations

import numpy as np

from ..jit import njit

# Largest piece ordered this way: the elimination graph is a dense n x n boolean matrix
# (4 MB at this size), cheap for the few hundred vertices of a leaf and still fine for the
# dense pieces that no separator splits.
MAX_DENSE_VERTICES = 2048


@njit(cache=True, internal=True)
def min_degree_order(indptr, indices, vwgt):
    """Elimination order (vertex ids) of a minimum-degree ordering of the graph.

    The elimination graph is kept explicitly: eliminating v joins its remaining neighbours
    into a clique. The next vertex is one of least weighted degree (the vertex weight of its
    remaining neighbours: a compressed vertex stands for several unknowns), the lowest id on
    ties; its neighbours that become indistinguishable from it are not merged (the pieces
    are small). O(n^2 + sum of squared degrees at elimination), i.e. the piece's own flops.
    """
    n = indptr.shape[0] - 1
    adj = np.zeros((n, n), dtype=np.bool_)
    deg = np.zeros(n, dtype=np.float64)
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if u != v and not adj[v, u]:
                adj[v, u] = True
                deg[v] += vwgt[u]
    done = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    nbrs = np.empty(n, dtype=np.int64)
    for step in range(n):
        v = -1
        best = np.inf
        for u in range(n):
            if not done[u] and deg[u] < best:
                best = deg[u]
                v = u
        done[v] = True
        order[step] = v
        k = 0
        for u in range(n):
            if adj[v, u]:
                nbrs[k] = u
                k += 1
        for a in range(k):
            x = nbrs[a]
            adj[x, v] = False
            deg[x] -= vwgt[v]
            for b in range(a + 1, k):
                y = nbrs[b]
                if not adj[x, y]:
                    adj[x, y] = True
                    adj[y, x] = True
                    deg[x] += vwgt[y]
                    deg[y] += vwgt[x]
    return order
