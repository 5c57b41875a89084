"""Minimum vertex cover of a bipartite graph (Konig's theorem) from a maximum matching: the
step that turns an edge bisection's cut edges into a vertex separator."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..jit import njit


@njit(cache=True)
def konig_cover(nl, nr, ptr, adj, lmate, rmate):
    """(cover_left, cover_right) bool flags of a minimum vertex cover, given a maximum matching.

    Left vertex u has right neighbours adj[ptr[u]:ptr[u + 1]]; lmate[u] / rmate[r] its mate (-1:
    none). Z = the vertices reachable from unmatched left vertices by alternating paths
    (any edge left -> right, the matching edge right -> left); the cover is (L \\ Z) + (R & Z).
    """
    seen_l = np.zeros(nl, dtype=np.bool_)
    seen_r = np.zeros(nr, dtype=np.bool_)
    queue = np.empty(nl, dtype=np.int64)
    head = 0
    tail = 0
    for u in range(nl):
        if lmate[u] < 0:
            seen_l[u] = True
            queue[tail] = u
            tail += 1
    while head < tail:
        u = queue[head]
        head += 1
        for e in range(ptr[u], ptr[u + 1]):
            r = adj[e]
            if seen_r[r]:
                continue
            seen_r[r] = True
            w = rmate[r]
            if w >= 0 and not seen_l[w]:
                seen_l[w] = True
                queue[tail] = w
                tail += 1
    return ~seen_l, seen_r


@njit(cache=True, internal=True)
def max_matching_nb(nl, nr, ptr, adj):
    """(lmate, rmate) of a maximum cardinality matching: a greedy start, then one augmenting
    depth-first search per unmatched left vertex (the compiled matcher of the nested-dissection
    kernel, whose cut graphs hold a few hundred edges; the whole-array APFB / APsB of
    matchers.bipartite serve the top-level separators)."""
    lmate = np.full(nl, -1, dtype=np.int64)
    rmate = np.full(nr, -1, dtype=np.int64)
    for u in range(nl):
        for e in range(ptr[u], ptr[u + 1]):
            r = adj[e]
            if rmate[r] < 0:
                lmate[u] = r
                rmate[r] = u
                break
    stamp = np.full(nr, -1, dtype=np.int64)
    stack_u = np.empty(nl + 1, dtype=np.int64)
    stack_e = np.empty(nl + 1, dtype=np.int64)
    for root in range(nl):
        if lmate[root] >= 0:
            continue
        depth = 0
        stack_u[0] = root
        stack_e[0] = ptr[root]
        found = False
        while depth >= 0 and not found:
            u = stack_u[depth]
            if stack_e[depth] == ptr[u + 1]:
                depth -= 1
                continue
            r = adj[stack_e[depth]]
            stack_e[depth] += 1
            if stamp[r] == root:
                continue
            stamp[r] = root
            w = rmate[r]
            if w < 0:
                # augment along the stack: each stack level's last edge is its path edge
                for d in range(depth, -1, -1):
                    uu = stack_u[d]
                    rr = adj[stack_e[d] - 1]
                    lmate[uu] = rr
                    rmate[rr] = uu
                found = True
            else:
                depth += 1
                stack_u[depth] = w
                stack_e[depth] = ptr[w]
    return lmate, rmate


def min_vertex_cover(B, *, method="apfb", device="auto"):
    """Minimum vertex cover of the bipartite graph of the r x c sparse matrix ``B`` (rows and
    columns are the two vertex sets, stored nonzeros the edges); returns (rows, cols): bool
    arrays of the covered rows and columns. The maximum matching is matchpart's exact
    ``maximum_bipartite_matching`` (``method`` "apfb" or "apsb"), the cover Konig's construction.
    """
    from ..matchers.bipartite import maximum_bipartite_matching
    B = sp.csr_array(B)
    B.sum_duplicates()
    nl, nr = B.shape
    lmate = np.asarray(maximum_bipartite_matching(B, method=method, device=device), dtype=np.int64)
    rmate = np.full(nr, -1, dtype=np.int64)
    matched = np.flatnonzero(lmate >= 0)
    rmate[lmate[matched]] = matched
    return konig_cover(nl, nr, B.indptr.astype(np.int64), B.indices.astype(np.int64), lmate, rmate)
