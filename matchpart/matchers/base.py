"""The matcher contract: the Matching result and helpers every matcher shares."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..jit import njit


@dataclass
class Matching:
    """A matching of a graph.

    ``mate[v] == u`` and ``mate[u] == v`` for a matched pair, ``-1`` for an unmatched
    vertex (array on the graph's backend). ``weight`` is the sum of the matched edges'
    weights (edge weights, not ratings), ``cardinality`` the number of matched pairs.
    ``stats`` holds at least ``rounds`` and ``matched_fraction`` (fraction of vertices
    matched after each round); ``time`` is the matcher's wall time in seconds.

    ``weight`` is computed when first read (an O(m) pass: coarsening never reads it, and it
    was 6% of coarsening a mesh); the matching keeps its graph until then.
    """

    mate: Any
    _weight: Any = field(repr=False, compare=False)   # the weight, or the function that computes it
    cardinality: int = 0
    stats: dict = field(default_factory=dict)
    time: float = 0.0
    matcher: str = ""

    @property
    def weight(self):
        if callable(self._weight):
            self._weight = self._weight()
        return self._weight

    @classmethod
    def from_mate(cls, graph, mate, stats=None, time=0.0, matcher=""):
        """Build a Matching from a mate array (cardinality now, weight when first read)."""
        be = graph.backend
        xp = be.xp
        mate = be.to_device(mate).astype(xp.int64, copy=False)
        if mate.shape != (graph.n,):
            raise ValueError(f"mate has shape {mate.shape}, expected ({graph.n},)")
        card = int((mate >= 0).sum().item()) // 2
        stats = dict(stats or {})
        stats.setdefault("rounds", 1)
        stats.setdefault("matched_fraction", [2 * card / graph.n if graph.n else 0.0])
        return cls(mate, lambda: _matched_weight(graph, mate), card, stats, time, matcher)

    def to_host(self):
        """numpy copy of ``mate``."""
        return self.mate.get() if hasattr(self.mate, "get") and not isinstance(self.mate, np.ndarray) \
            else np.asarray(self.mate)

    def pairs(self):
        """(k, 2) numpy array of matched pairs (u < v)."""
        mate = self.to_host()
        u = np.flatnonzero(mate > np.arange(mate.shape[0]))
        return np.stack([u, mate[u]], axis=1)


def _matched_weight(graph, mate):
    """Sum of the matched edges' weights (each pair counted once)."""
    be = graph.backend
    if be.is_gpu:
        rows = be.row_ids(graph.indptr, graph.indices.shape[0])
        w = graph.ewgt[mate[rows] == graph.indices].sum()
    elif graph.ewgt.dtype.kind in "iu":  # integer sums are exact in any order: one pass
        w = np.zeros(1, dtype=graph.ewgt.dtype)
        _matched_weight_sum(graph.indptr, graph.indices, graph.ewgt, mate, w)
        w = w[0]
    else:  # the same matched entries in the same order, gathered in one compiled pass
        w = _matched_entry_weights(graph.indptr, graph.indices, graph.ewgt, mate).sum()
    return w.item() // 2 if graph.ewgt.dtype.kind in "iu" else w.item() / 2


@njit(cache=True)
def _matched_entry_weights(indptr, indices, ewgt, mate):
    """ewgt[mate[row] == col] in CSR order (numpy then sums it exactly as it sums the mask)."""
    out = np.empty(ewgt.shape[0], dtype=ewgt.dtype)
    k = 0
    for v in range(indptr.shape[0] - 1):
        if mate[v] < 0:
            continue
        for e in range(indptr[v], indptr[v + 1]):
            if indices[e] == mate[v]:
                out[k] = ewgt[e]
                k += 1
    return out[:k]


@njit(cache=True)
def _matched_weight_sum(indptr, indices, ewgt, mate, total):
    """Adds the matched entries' weights to total[0] (integer weights: numpy's sum of the
    gathered entries, wrapping alike, without gathering them into an array)."""
    for v in range(indptr.shape[0] - 1):
        if mate[v] < 0:
            continue
        for e in range(indptr[v], indptr[v + 1]):
            if indices[e] == mate[v]:
                total[0] += ewgt[e]


def matching_problems(graph, mate):
    """Why ``mate`` is not a valid matching of ``graph`` (a list of strings; empty if valid).

    Valid: length n, entries in -1..n-1, symmetric (mate[mate[v]] == v), and every matched
    pair is an edge of the graph.
    """
    h = graph.backend.to_host
    mate = np.asarray(h(mate)).astype(np.int64)
    indptr, indices = h(graph.indptr), h(graph.indices)
    n = graph.n
    problems = []
    if mate.shape != (n,):
        return [f"mate has shape {mate.shape}, expected ({n},)"]
    if ((mate < -1) | (mate >= n)).any():
        problems.append("mate has entries outside -1..n-1")
        return problems
    m = np.flatnonzero(mate >= 0)
    if (mate[mate[m]] != m).any():
        v = int(m[mate[mate[m]] != m][0])
        problems.append(f"mate is not symmetric at vertex {v} (mate[{v}]={mate[v]}, mate[{mate[v]}]={mate[mate[v]]})")
    if (mate[m] == m).any():
        problems.append("a vertex is matched to itself")
    rows = np.repeat(np.arange(n), np.diff(indptr))
    is_edge = np.zeros(n, dtype=bool)
    is_edge[rows[mate[rows] == indices]] = True
    if (~is_edge[m]).any():
        v = int(m[~is_edge[m]][0])
        problems.append(f"vertex {v} is matched to {mate[v]}, which is not a neighbour")
    return problems


def is_maximal(graph, mate):
    """True when no edge has both endpoints unmatched."""
    h = graph.backend.to_host
    mate = np.asarray(h(mate))
    indptr, indices = h(graph.indptr), h(graph.indices)
    rows = np.repeat(np.arange(graph.n), np.diff(indptr))
    return not ((mate[rows] < 0) & (mate[indices] < 0)).any()
