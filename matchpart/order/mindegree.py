"""Minimum-degree ordering of the small pieces nested dissection leaves (compiled, exact external
degrees on the explicit elimination graph, indistinguishable vertices merged, multiple
elimination)."""
from __future__ import annotations

import numpy as np

from ..jit import njit

# Largest piece ordered this way: the elimination graph is a dense n x n boolean matrix
# (4 MB at this size), cheap for the few hundred vertices of a leaf and still fine for the
# dense pieces that no separator splits.
MAX_DENSE_VERTICES = 2048
# Multiple elimination's tolerance: a stage eliminates, one after another, vertices of external
# degree <= the stage's minimum + MD_DELTA that no vertex eliminated in the stage touched
# (Liu's MMD; METIS calls its genmmd with delta 1). nnz(L) against METIS, 5 graphs x 2 seeds,
# no halo: delta 0 1.088 x, 1 1.078 x, 2 1.071 x, 4 1.067 x; with the halo: 2 1.031 x, 4 1.038 x.
MD_DELTA = 2


@njit(cache=True, internal=True)
def _merge_indistinguishable(adj, alive, wgt, deg, hsh, nxt, last, nbrs, k, nelim):
    """Merge the pairs among nbrs[:k] whose closed neighbourhoods are equal (after the clique
    of an elimination they are all adjacent, so equal rows apart from each other): y joins x's
    supervariable, its members numbered right after x's. External degrees stay exact: only
    x's drops (by y's weight); every other neighbour loses y and sees x grow by as much.
    Halo vertices (ids >= nelim) are never merged. ``hsh``: the id sum of each closed
    neighbourhood (rows are compared only where these agree), kept up to date."""
    n = adj.shape[0]
    for a in range(k):
        x = nbrs[a]
        if not alive[x] or x >= nelim:
            continue
        for b in range(a + 1, k):
            y = nbrs[b]
            if not alive[y] or y >= nelim or hsh[y] != hsh[x]:
                continue
            same = True
            for u in range(n):
                if adj[x, u] != adj[y, u] and u != x and u != y:
                    same = False
                    break
            if not same:
                continue
            alive[y] = False
            for u in range(n):
                if adj[y, u]:
                    adj[u, y] = False
                    adj[y, u] = False
                    hsh[u] -= y
            deg[x] -= wgt[y]
            wgt[x] += wgt[y]
            nxt[last[x]] = y          # members of x: a linked list from x to last[x]
            last[x] = last[y]


@njit(cache=True, internal=True)
def min_degree_order(indptr, indices, vwgt):
    """Elimination order (vertex ids) of a multiple-minimum-degree ordering of the graph
    (halo_min_degree_order without a halo, multiple elimination's tolerance MD_DELTA)."""
    return halo_min_degree_order(indptr, indices, vwgt, indptr.shape[0] - 1, MD_DELTA)


@njit(cache=True, internal=True)
def halo_min_degree_order(indptr, indices, vwgt, nelim, delta):
    """Elimination order of the vertices 0..nelim-1 of the graph by multiple minimum degree;
    the vertices from nelim on are a halo: never eliminated, they count in the degrees of
    their neighbours (nested dissection's leaves see the ancestor separators they touch, which
    are eliminated later: without them a leaf's boundary vertices look cheap and go first).

    The elimination graph is kept explicitly: eliminating v joins its remaining neighbours
    into a clique. Vertices whose closed neighbourhoods become equal are merged into one
    supervariable (eliminated together, numbered consecutively), and the degree that decides
    is the external one: the vertex weight of the neighbouring supervariables (a compressed
    vertex of the input stands for several unknowns). Stages of multiple elimination (see
    ``delta``) pick the least degree, the lowest id on ties. O(n^2) per stage plus the
    pieces' own elimination work; meant for a few hundred vertices.
    """
    n = indptr.shape[0] - 1
    adj = np.zeros((n, n), dtype=np.bool_)
    wgt = np.zeros(n, dtype=np.float64)
    deg = np.zeros(n, dtype=np.float64)
    for v in range(n):
        wgt[v] = vwgt[v]
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if u != v and not adj[v, u]:
                adj[v, u] = True
                deg[v] += wgt[u]
    hsh = np.arange(n)
    for v in range(n):
        for u in range(n):
            if adj[v, u]:
                hsh[v] += u
    alive = np.ones(n, dtype=np.bool_)
    nxt = np.full(n, -1, dtype=np.int64)
    last = np.arange(n)
    touched = np.full(n, -1, dtype=np.int64)   # stage in which a vertex was last touched
    order = np.empty(nelim, dtype=np.int64)
    nbrs = np.empty(n, dtype=np.int64)
    done = 0
    stage = 0
    while done < nelim:
        mindeg = np.inf
        for u in range(nelim):
            if alive[u] and deg[u] < mindeg:
                mindeg = deg[u]
        while True:
            v = -1
            best = mindeg + delta + 0.5      # degrees are sums of integer weights in practice
            for u in range(nelim):
                if alive[u] and touched[u] != stage and deg[u] < best:
                    best = deg[u]
                    v = u
            if v < 0:
                break
            alive[v] = False
            touched[v] = stage
            m = v
            while m >= 0:
                order[done] = m
                done += 1
                m = nxt[m]
            k = 0
            for u in range(n):
                if adj[v, u]:
                    nbrs[k] = u
                    k += 1
                    touched[u] = stage
            for a in range(k):
                x = nbrs[a]
                adj[x, v] = False
                adj[v, x] = False
                deg[x] -= wgt[v]
                hsh[x] -= v
                for b in range(a + 1, k):
                    y = nbrs[b]
                    # halo-halo edges change no degree that is ever read: not kept
                    if not adj[x, y] and (x < nelim or y < nelim):
                        adj[x, y] = True
                        adj[y, x] = True
                        deg[x] += wgt[y]
                        deg[y] += wgt[x]
                        hsh[x] += y
                        hsh[y] += x
            _merge_indistinguishable(adj, alive, wgt, deg, hsh, nxt, last, nbrs, k, nelim)
        stage += 1
    return order
