"""Why no partition can be both connected and balanced: a proof through one cut vertex.

Removing a vertex v splits its graph component into pieces C_1..C_r. A block without v is
connected inside the component without v, so it lies in one piece and covers at most
Lmax of it; the k - 1 blocks without v cover at most the sum of the k - 1 largest of the
"marginals" Lmax (floor(w(C_i) / Lmax) times per piece) and w(C_i) mod Lmax. What is left
must join v's block. When w(v) plus that rest exceeds Lmax, no connected balanced partition
exists (a star: the centre's block keeps all but k - 1 leaves). The search is one iterative
depth-first pass (cut vertices and the weights of the pieces they split off), O(n + m).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit


def connected_infeasibility_proof(indptr, indices, vwgt, k, lmax):
    """A sentence with the numbers when a cut vertex proves that no partition into k blocks,
    each connected within every component and within ``lmax`` (one bound, or the largest of
    the k), exists; else None (it may still not exist)."""
    vw = np.asarray(vwgt, dtype=np.float64)
    if vw.ndim != 1 or vw.shape[0] == 0 or k < 2:
        return None
    bound = float(np.max(lmax))
    v, least = _worst_cut_vertex(np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64), vw, k,
                                 bound)
    if v < 0:
        return None
    return (f"vertex {v} separates its component into pieces that the other {k - 1} blocks, each connected "
            f"and within Lmax={bound:g}, cannot take: its block must weigh at least {least:g} > Lmax")


@njit(cache=True)
def _worst_cut_vertex(indptr, indices, vwgt, k, bound):
    """(v, the least weight of v's block) for the vertex whose least weight is largest, when
    that exceeds ``bound``; else (-1, 0)."""
    n = indptr.shape[0] - 1
    disc = np.full(n, -1, dtype=np.int64)
    low = np.zeros(n, dtype=np.int64)
    sub = np.zeros(n, dtype=np.float64)      # weight of each DFS subtree
    parent = np.full(n, -1, dtype=np.int64)
    edge = np.zeros(n, dtype=np.int64)       # next edge to scan per vertex on the stack
    stack = np.empty(n, dtype=np.int64)
    comp = np.zeros(n, dtype=np.float64)     # weight of each vertex's component (at its root)
    root_of = np.zeros(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    time = 0
    for r in range(n):
        if disc[r] >= 0:
            continue
        top = 0
        stack[0] = r
        disc[r] = low[r] = time
        order[time] = r
        time += 1
        edge[r] = indptr[r]
        while top >= 0:
            x = stack[top]
            if edge[x] < indptr[x + 1]:
                y = indices[edge[x]]
                edge[x] += 1
                if disc[y] < 0:
                    parent[y] = x
                    disc[y] = low[y] = time
                    order[time] = y
                    time += 1
                    edge[y] = indptr[y]
                    top += 1
                    stack[top] = y
                elif y != parent[x]:
                    low[x] = min(low[x], disc[y])
            else:
                top -= 1
                sub[x] += vwgt[x]
                root_of[x] = r
                p = parent[x]
                if p >= 0:
                    low[p] = min(low[p], low[x])
                    sub[p] += sub[x]
        comp[r] = sub[r]
    # per vertex: the pieces it splits off (children with low >= disc) and the rest
    best, best_least = -1, bound
    pieces = np.empty(n + 1, dtype=np.float64)
    for v in range(n):
        count = 0
        split = 0.0
        for e in range(indptr[v], indptr[v + 1]):
            c = indices[e]
            if parent[c] == v and low[c] >= disc[v]:
                pieces[count] = sub[c]
                count += 1
                split += sub[c]
        if count == 0:
            continue
        rest = comp[root_of[v]] - vwgt[v] - split
        if rest > 0:
            pieces[count] = rest
            count += 1
        full = 0.0
        rems = np.empty(count, dtype=np.float64)
        for i in range(count):
            f = np.floor(pieces[i] / bound)
            full += f
            rems[i] = pieces[i] - f * bound
        if full >= k - 1:
            continue
        cover = full * bound
        rems.sort()
        for i in range(min(count, k - 1 - int(full))):
            cover += rems[count - 1 - i]
        least = comp[root_of[v]] - cover
        if least > best_least:
            best, best_least = v, least
    return best, best_least
