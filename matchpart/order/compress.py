"""Compression of vertices with identical closed neighbourhoods (several unknowns per mesh node)
into one weighted vertex before nested dissection, as METIS does."""
from __future__ import annotations

import numpy as np

from ..jit import njit

# Compress only when it removes at least this share of the vertices (METIS's 0.85 rule:
# below that the smaller graph does not pay for building it).
MIN_COMPRESSION = 0.15


@njit(cache=True)
def identical_groups(indptr, indices):
    """(cmap, nc): a group id per vertex, equal for vertices whose closed neighbourhoods
    (neighbours and the vertex itself) are equal; groups numbered by their lowest vertex."""
    n = indptr.shape[0] - 1
    key = np.empty(n, dtype=np.int64)
    for v in range(n):
        s = v
        for e in range(indptr[v], indptr[v + 1]):
            s += indices[e]
        key[v] = s * (n + 1) + (indptr[v + 1] - indptr[v])   # sum of the closed set, then degree
    order = np.argsort(key, kind="mergesort")
    rep = np.full(n, -1, dtype=np.int64)
    mark = np.full(n, -1, dtype=np.int64)
    i = 0
    while i < n:
        j = i
        while j < n and key[order[j]] == key[order[i]]:
            j += 1
        for a in range(i, j):
            va = order[a]
            if rep[va] >= 0:
                continue
            rep[va] = va
            if a + 1 == j:
                break
            mark[va] = va
            for e in range(indptr[va], indptr[va + 1]):
                mark[indices[e]] = va
            for b in range(a + 1, j):
                vb = order[b]
                if rep[vb] >= 0 or mark[vb] != va:
                    continue
                same = True
                for e in range(indptr[vb], indptr[vb + 1]):
                    if mark[indices[e]] != va:
                        same = False
                        break
                if same:
                    rep[vb] = va
        i = j
    cmap = np.empty(n, dtype=indices.dtype)
    gid = np.full(n, -1, dtype=np.int64)
    nc = 0
    for v in range(n):
        r = rep[v]
        if gid[r] < 0:
            gid[r] = nc
            nc += 1
        cmap[v] = gid[r]
    return cmap, nc
