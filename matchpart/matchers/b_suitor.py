"""b-Suitor b-matching (Naim's thesis, seed 004): each vertex v is matched to at most b[v] neighbours.

Every vertex u proposes to its heaviest neighbours (by the contract's edge rank) that
prefer u to their current worst suitor, until it is a suitor of b[u] vertices or runs out
of neighbours; a vertex keeps its best b[v] proposals and the displaced suitors propose
again. The result is exactly the greedy b-matching (edges by decreasing rating, taken
while both ends have capacity left).

Rounds of whole-array operations on the backend's ``xp`` (numpy or cupy): proposals are
found with the same forward-only windowed pointer scan as Suitor, and every vertex that
received proposals merges them with its suitors by one sort of (vertex, rank).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import backend as _backend
from .ratings import edge_priority
from .suitor import (INITIAL_WINDOW, WINDOW_GROWTH, count_per_slot, scan_windows, scatter_max_nonneg,
                     sorted_adjacency)


@dataclass
class BMatching:
    """A b-matching: ``edges`` (E x 2 numpy int64, u < v, by increasing rank), ``weight`` (sum of
    their edge weights), ``b`` (per-vertex capacities, numpy int64), ``stats`` (``rounds``)."""

    edges: np.ndarray
    weight: float
    b: np.ndarray
    stats: dict = field(default_factory=dict)

    @property
    def cardinality(self):
        return int(self.edges.shape[0])

    def degrees(self):
        """Number of matched edges at each vertex (numpy)."""
        return np.bincount(self.edges.ravel(), minlength=self.b.shape[0])


def _capacities(b, n):
    """Per-vertex capacities as a numpy int64 array (b may be an int or a length-n array)."""
    arr = np.asarray(b.get() if hasattr(b, "get") and not isinstance(b, np.ndarray) else b)
    if arr.ndim == 0:
        arr = np.full(n, arr)
    if arr.shape != (n,):
        raise ValueError(f"b must be an integer or an array of length n={n}, got shape {arr.shape}")
    if arr.size and (arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.array_equal(arr, np.round(arr)))):
        raise ValueError(f"b must hold non-negative integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if (arr < 0).any():
        v = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"b must be non-negative; b[{v}] = {arr[v]}")
    return arr


def b_matching(graph, b, *, seed=0, device="auto", rating="weight") -> BMatching:
    """Greedy-equivalent b-matching of ``graph`` by b-Suitor.

    graph: anything ``matchpart.graph.as_graph`` accepts; b: an int (same capacity for every
    vertex) or a length-n array of non-negative ints; device: "auto", "cpu", "gpu";
    rating: which edges count as heavy (see ``matchpart.matchers.RATINGS``). ``seed`` is
    accepted for API symmetry; the result is deterministic.
    """
    from ..graph import as_graph
    be = _backend.get(device)
    g = as_graph(graph).to(be)
    xp = be.xp
    n = g.n
    cap_host = _capacities(b, n)
    cap = be.to_device(cap_host)
    rank = edge_priority(g, rating)
    nbr, srank, order = sorted_adjacency(g, rank)
    srow = be.row_ids(g.indptr)                  # rows are unchanged by the per-row sort
    none = xp.iinfo(xp.int64).max
    # rank of v's worst kept suitor when v is full (a proposal must beat it); -1 when b[v] == 0
    worst = xp.full(n, none, dtype=xp.int64)
    worst[cap == 0] = -1
    count = xp.zeros(n, dtype=xp.int64)          # how many vertices u is currently a suitor of
    held = xp.zeros(0, dtype=xp.int64)           # sorted-adjacency positions (u -> v) of kept proposals
    ptr = g.indptr[:-1].astype(xp.int64)
    end = g.indptr[1:]
    window = xp.full(n, INITIAL_WINDOW, dtype=xp.int64)
    rounds = 0
    while True:
        active = xp.flatnonzero((count < cap) & (ptr < end))
        if active.shape[0] == 0:
            break
        rounds += 1
        new = _propose(be, active, cap[active] - count[active], ptr, end, window, nbr, srank, worst)
        count += count_per_slot(be, n, srow[new])
        held, dropped = _keep_best(be, n, held, new, nbr, srank, cap, worst, max(g.m, 1))
        count -= count_per_slot(be, n, srow[dropped])
    # an edge is in the b-matching when each end holds the other (its rank appears twice)
    r = srank[held]
    twice = count_per_slot(be, max(g.m, 1), r)
    mine = held[(twice[r] == 2) & (srow[held] < nbr[held])]
    mine = mine[xp.argsort(srank[mine])]
    edges = xp.stack([srow[mine], nbr[mine]], axis=1)
    w = g.ewgt[order[mine]].sum()
    weight = w.item() if g.ewgt.dtype.kind in "iu" else float(w.item())
    return BMatching(be.to_host(edges).astype(np.int64), weight, cap_host, {"rounds": rounds})


def _propose(be, u, need, ptr, end, window, nbr, srank, worst):
    """Each searcher u finds up to ``need[u]`` targets in its window that would accept it.

    Advances ``ptr``/``window`` in place; returns the sorted-adjacency positions (u -> v) proposed.
    """
    xp = be.xp
    pos, seg, ok, length = scan_windows(be, ptr[u], end[u], window[u], lambda p: srank[p] < worst[nbr[p]])
    # the first ``need`` usable entries of each window (running count of usable entries per window)
    offs = be.exclusive_cumsum(length)
    csum = xp.cumsum(ok.astype(xp.int64))
    before = xp.concatenate([xp.zeros(1, dtype=xp.int64), csum])[offs[:-1]]
    take = ok & ((csum - before[seg]) <= need[seg])
    filled = count_per_slot(be, u.shape[0], seg[take]) == need
    last = scatter_max_nonneg(be, u.shape[0], seg[take], pos[take])
    # a searcher that got all it needed resumes after its last proposal, the others after the window
    ptr[u] = xp.where(filled, last + 1, ptr[u] + length)
    window[u] = xp.where(filled, window[u], window[u] * WINDOW_GROWTH)
    return pos[take]


def _keep_best(be, n, held, new, nbr, srank, cap, worst, rank_bound):
    """Merge new proposals into the targets' suitor sets, keeping the best ``cap[v]`` at each v.

    Updates ``worst`` in place for targets that are full; returns (held, dropped positions).
    """
    xp = be.xp
    touched = xp.zeros(n, dtype=bool)
    touched[nbr[new]] = True
    at_touched = touched[nbr[held]]
    merge = xp.concatenate([held[at_touched], new])
    # group by target, best (lowest rank) first; the place in the group decides who stays
    merge = merge[xp.argsort(nbr[merge] * rank_bound + srank[merge])]
    tv = nbr[merge]
    start = xp.ones(merge.shape[0], dtype=bool)
    start[1:] = tv[1:] != tv[:-1]
    group_start = xp.flatnonzero(start)
    place = xp.arange(merge.shape[0], dtype=xp.int64) - group_start[xp.cumsum(start.astype(xp.int64)) - 1]
    keep = place < cap[tv]
    full = keep & (place == cap[tv] - 1)   # the worst kept suitor of a full target
    worst[tv[full]] = srank[merge[full]]
    return xp.concatenate([held[~at_touched], merge[keep]]), merge[~keep]
