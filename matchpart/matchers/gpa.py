"""GPA, the global path algorithm of Maue & Sanders (the quality baseline of Birn et al., seed 001).

Edges are scanned by decreasing rating (the contract's tie-break) and kept when the kept
set stays a collection of paths and even cycles (every vertex degree <= 2, no odd cycle).
A maximum-rating matching of every path and cycle is then found by dynamic programming,
and the result is made maximal by greedily adding the remaining free edges. Serial by
nature: one numba kernel on the CPU.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from .base import Matching
from .ratings import edge_ratings
from .registry import register


@register("gpa", description="Global path algorithm: greedy paths and even cycles, then dynamic "
          "programming per path (serial, CPU)", paper="Maue & Sanders, via Birn et al. (seed 001)",
          weighted=True, backends=("cpu",), serial=True)
def gpa(graph, *, rating="weight", seed=0, backend=None) -> Matching:
    """GPA matching (runs on host copies; ``mate`` is returned on the graph's backend).

    ``seed`` is unused: the algorithm is deterministic.
    """
    be = graph.backend
    h = be.to_host
    ratings = h(edge_ratings(graph, rating)).astype(np.float64)
    indptr, indices = h(graph.indptr), h(graph.indices).astype(np.int64)
    n = graph.n
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    once = np.flatnonzero(rows < indices)
    # CSR rows and the columns within them are sorted, so the u < v entries are in (min id,
    # max id) order already: a stable sort by decreasing rating is the contract's edge order
    # (the order of edge_priority, without its lexsort over both directions)
    order = once[np.argsort(-ratings[once], kind="stable")]
    eu, ev, er = rows[order], indices[order], ratings[order]
    mate = _gpa_kernel(n, eu, ev, er)
    return Matching.from_mate(graph, mate, stats={"rounds": 1, "matched_fraction": [float((mate >= 0).sum()) / n if n else 0.0]})


@njit(cache=True, internal=True)
def _find(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]  # path halving
        x = parent[x]
    return x


@njit(cache=True, internal=True)
def _path_dp(w, lo, hi, best):
    """Best total of a matching on the path of edges w[lo:hi]; fills best[0..hi-lo]."""
    best[0] = 0.0
    if hi > lo:
        best[1] = w[lo]
    for i in range(2, hi - lo + 1):
        take = best[i - 2] + w[lo + i - 1]
        best[i] = take if take > best[i - 1] else best[i - 1]
    return best[hi - lo]


@njit(cache=True, internal=True)
def _path_pick(w, lo, hi, best, chosen):
    """Mark in ``chosen`` the edges of the optimum found by ``_path_dp(w, lo, hi, best)``."""
    i = hi - lo
    while i > 0:
        if best[i] == best[i - 1]:
            i -= 1  # edge lo+i-1 not needed
        else:
            chosen[lo + i - 1] = True
            i -= 2


@njit(cache=True)
def _gpa_kernel(n, eu, ev, er):
    m = eu.shape[0]
    # 1) greedy collection of paths and even cycles
    deg = np.zeros(n, dtype=np.int64)
    nbr = np.full((n, 2), -1, dtype=np.int64)    # the (up to) two kept neighbours
    nbe = np.full((n, 2), -1, dtype=np.int64)    # ... and the kept edges' indices
    parent = np.arange(n)
    edges_in = np.zeros(n, dtype=np.int64)       # edges of the component, at its root
    for e in range(m):
        u, v = eu[e], ev[e]
        if deg[u] >= 2 or deg[v] >= 2:
            continue
        ru, rv = _find(parent, u), _find(parent, v)
        if ru == rv:
            # u and v are the two ends of one path: closing it gives a cycle of edges+1 edges
            if edges_in[ru] % 2 == 0:
                continue  # odd cycle
            edges_in[ru] += 1
        else:
            parent[rv] = ru
            edges_in[ru] += edges_in[rv] + 1
        nbr[u, deg[u]] = v
        nbe[u, deg[u]] = e
        deg[u] += 1
        nbr[v, deg[v]] = u
        nbe[v, deg[v]] = e
        deg[v] += 1
    # 2) dynamic programming along every path, then every cycle
    mate = np.full(n, -1, dtype=np.int64)
    seen = np.zeros(n, dtype=np.bool_)
    w = np.empty(n + 1, dtype=np.float64)        # ratings of the current path's edges, in order
    eid = np.empty(n + 1, dtype=np.int64)
    best = np.empty(n + 2, dtype=np.float64)
    chosen = np.zeros(n + 1, dtype=np.bool_)
    for phase in range(2):                       # phase 0: paths (start at an end), 1: cycles
        for s in range(n):
            if seen[s] or deg[s] == 0 or (phase == 0 and deg[s] != 1):
                continue
            length = 0
            prev, cur = -1, s
            seen[s] = True
            while True:
                k = 0 if nbr[cur, 0] != prev else 1
                if k >= deg[cur] or (phase == 1 and length > 0 and cur == s):
                    break
                nxt = nbr[cur, k]
                e = nbe[cur, k]
                if length > 0 and e == eid[length - 1]:
                    break
                w[length] = er[e]
                eid[length] = e
                length += 1
                prev, cur = cur, nxt
                if seen[cur]:
                    break  # back at the start of a cycle
                seen[cur] = True
            for i in range(length):
                chosen[i] = False
            if phase == 0:
                _path_dp(w, 0, length, best)
                _path_pick(w, 0, length, best, chosen)
            else:
                # a cycle: either edge 0 is out (path 1..L-1) or in (then 1 and L-1 are out)
                without = _path_dp(w, 1, length, best)
                with_ = w[0] + _path_dp(w, 2, length - 1, best)
                if with_ > without:
                    chosen[0] = True
                    _path_pick(w, 2, length - 1, best, chosen)
                else:
                    _path_dp(w, 1, length, best)
                    _path_pick(w, 1, length, best, chosen)
            for i in range(length):
                if chosen[i]:
                    e = eid[i]
                    mate[eu[e]] = ev[e]
                    mate[ev[e]] = eu[e]
    # 3) maximal: add remaining free edges greedily
    for e in range(m):
        u, v = eu[e], ev[e]
        if mate[u] < 0 and mate[v] < 0:
            mate[u] = v
            mate[v] = u
    return mate
