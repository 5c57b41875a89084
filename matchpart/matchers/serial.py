"""Serial baseline matchers (CPU, numba): heavy_edge and random (paper 000 Alg. 1), greedy (Alg. 2)."""
from __future__ import annotations

import numpy as np

from ..jit import njit
from .base import Matching
from .ratings import edge_ratings
from .registry import register

# Hash-RNG streams: one for the vertex visiting order, one for random neighbour choice.
ORDER_STREAM = 0x5E1A0001
CHOICE_STREAM = 0x5E1A0002


@njit(cache=True)
def _visit_heaviest(order, indptr, indices, ratings, mate):
    """Alg. 1 with heaviest select: each unmatched vertex (in ``order``) takes its unmatched
    neighbour along the heaviest edge. Ties go to the smallest neighbour id, which for a
    fixed v is the contract's smaller (min id, max id) pair; rows are sorted, so a strict
    ``>`` while scanning keeps the first (smallest) one."""
    for v in order:
        if mate[v] >= 0:
            continue
        best = -1
        best_rating = -np.inf
        for j in range(indptr[v], indptr[v + 1]):
            u = indices[j]
            if mate[u] < 0 and (best < 0 or ratings[j] > best_rating):
                best_rating = ratings[j]
                best = u
        if best >= 0:
            mate[v] = best
            mate[best] = v


@njit(cache=True)
def _visit_random(order, indptr, indices, choice, mate):
    """Alg. 1 with random select: each unmatched vertex (in ``order``) takes a uniformly
    random unmatched neighbour; ``choice[v]`` in [0, 1) is v's random number."""
    for v in order:
        if mate[v] >= 0:
            continue
        free = 0
        for j in range(indptr[v], indptr[v + 1]):
            if mate[indices[j]] < 0:
                free += 1
        if free == 0:
            continue
        pick = min(int(choice[v] * free), free - 1)
        for j in range(indptr[v], indptr[v + 1]):
            u = indices[j]
            if mate[u] < 0:
                if pick == 0:
                    mate[v] = u
                    mate[u] = v
                    break
                pick -= 1


@njit(cache=True)
def _greedy_scan(eu, ev, mate):
    """Alg. 2: scan edges in the given (decreasing rating) order, match if both ends are free."""
    for i in range(eu.shape[0]):
        u = eu[i]
        v = ev[i]
        if mate[u] < 0 and mate[v] < 0:
            mate[u] = v
            mate[v] = u


def _host_csr(graph):
    h = graph.backend.to_host
    return np.ascontiguousarray(h(graph.indptr)), np.ascontiguousarray(h(graph.indices))


def _cpu_graph(graph, backend):
    be = backend or graph.backend
    if be.is_gpu or graph.backend.is_gpu:
        raise ValueError("serial matchers run on the CPU only; pass graph.to('cpu') "
                         "(matchpart.match / run_matcher do this for you)")
    return be


@register("heavy_edge",
          description="heavy edge matching: random vertex order, each takes its heaviest free neighbour (serial)",
          paper="000_b430d225e224388c Alg. 1 (heaviest select); HEM in 001_bd35ca2a1a8d7ddc",
          weighted=True, backends=("cpu",), serial=True)
def heavy_edge(graph, *, rating="weight", seed=0, backend=None):
    """Heavy edge matching (HEM): visit vertices in a random order; an unmatched vertex
    matches its heaviest unmatched neighbour (ties: smaller (min id, max id) pair)."""
    be = _cpu_graph(graph, backend)
    indptr, indices = _host_csr(graph)
    order = be.permutation(seed, ORDER_STREAM, graph.n).astype(np.int64)
    ratings = np.ascontiguousarray(edge_ratings(graph, rating), dtype=np.float64)
    mate = np.full(graph.n, -1, dtype=np.int64)
    _visit_heaviest(order, indptr, indices, ratings, mate)
    return Matching.from_mate(graph, mate, stats={"rounds": 1})


@register("random",
          description="random matching: random vertex order, each takes a random free neighbour (serial)",
          paper="000_b430d225e224388c Alg. 1 (random select)",
          weighted=False, backends=("cpu",), serial=True)
def random_matching(graph, *, rating="weight", seed=0, backend=None):
    """Random matching: visit vertices in a random order; an unmatched vertex matches a
    uniformly random unmatched neighbour. ``rating`` is ignored (unweighted)."""
    be = _cpu_graph(graph, backend)
    indptr, indices = _host_csr(graph)
    order = be.permutation(seed, ORDER_STREAM, graph.n).astype(np.int64)
    choice = be.uniform(seed, CHOICE_STREAM, np.arange(graph.n, dtype=np.uint64))
    mate = np.full(graph.n, -1, dtype=np.int64)
    _visit_random(order, indptr, indices, choice, mate)
    return Matching.from_mate(graph, mate, stats={"rounds": 1})


def greedy_order(graph, rating="weight"):
    """Undirected edges (u, v) (u < v) sorted heaviest first under the contract tie-break."""
    be = graph.backend
    rows = be.to_host(be.row_ids(graph.indptr, graph.indices.shape[0]))
    cols = be.to_host(graph.indices).astype(np.int64)
    upper = np.flatnonzero(rows < cols)
    # CSR rows and their columns are sorted, so the u < v entries are already in
    # (min id, max id) order: a stable sort by decreasing rating is the contract order
    # (the same order as edge_priority, without its three-key lexsort over both directions)
    ratings = be.to_host(edge_ratings(graph, rating))[upper]
    order = np.argsort(-ratings, kind="stable")
    return rows[upper][order], cols[upper][order]


@register("greedy",
          description="greedy matching: edges by decreasing rating, match when both ends are free (serial, 1/2-approx)",
          paper="000_b430d225e224388c Alg. 2; greedy in 001_bd35ca2a1a8d7ddc",
          weighted=True, backends=("cpu",), serial=True)
def greedy(graph, *, rating="weight", seed=0, backend=None):
    """Greedy matching: scan edges by decreasing rating (ties: smaller (min id, max id)
    pair first) and match an edge when both endpoints are free. Deterministic; ``seed`` is
    ignored. This is the reference the Suitor and locally-dominant matchers must equal."""
    _cpu_graph(graph, backend)
    eu, ev = greedy_order(graph, rating)
    mate = np.full(graph.n, -1, dtype=np.int64)
    _greedy_scan(eu, ev, mate)
    return Matching.from_mate(graph, mate, stats={"rounds": 1})
