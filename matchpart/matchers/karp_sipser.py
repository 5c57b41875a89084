"""Karp-Sipser maximum-cardinality heuristic in synchronous rounds (Patwary, Bisseling & Manne, seed 002).

Degree-one vertices are matched first with their only free neighbour: that choice is
always part of some maximum matching. When no degree-one vertex is left, a round of
random requests matches a few random edges, which creates new degree-one vertices.

Rounds follow the paper's BSP scheme with whole-array operations: requesters send a
request to one neighbour; a target that is not itself requesting (or that requested the
sender back) accepts the request with the smallest hash. Current degrees (free
neighbours) and the sum of free neighbour ids are kept with scatter-add decrements, so a
degree-one vertex finds its neighbour without scanning its row.
"""
from __future__ import annotations

from .base import Matching
from .registry import register
from .suitor import scatter_max_nonneg, scatter_min_nonneg

# Fraction of the free vertices that send a random request in a round without degree-one
# vertices. The paper's quality drops as more random matches are made per round (its
# Table 6); one in twenty keeps most matches decided by the exact degree-one rule (4elt:
# 96% of maximum vs 95% at a quarter) with about 150 rounds on 2^15-vertex meshes.
RANDOM_REQUEST_FRACTION = 0.05

# hash streams (stream = 3 * round + kind), so that each use of the seed draws independent numbers
_STREAM_ACCEPT = 0
_STREAM_REQUESTER = 1
_STREAM_NEIGHBOUR = 2


@register("karp_sipser", description="Karp-Sipser: match degree-one vertices first, else random edges "
          "(maximum-cardinality heuristic, ignores weights)",
          paper="Patwary, Bisseling & Manne, parallel Karp-Sipser (seed 002)", weighted=False,
          backends=("cpu", "gpu"), serial=False)
def karp_sipser(graph, *, rating="weight", seed=0, backend=None) -> Matching:
    """Karp-Sipser matching in rounds; ``rating`` is ignored (cardinality is what counts).

    stats: ``rounds``, ``matched_fraction`` per round, ``degree_one_rounds``, ``random_rounds``.
    """
    be = backend or graph.backend
    if be is not graph.backend:
        graph = graph.to(be)
    xp = be.xp
    n = graph.n
    indptr = graph.indptr
    indices = graph.indices.astype(xp.int64)
    # free neighbours of each vertex (int32 and float64: the dtypes CuPy's scatter_add takes)
    deg = graph.degree.astype(xp.int32)
    # sum of free neighbours' ids, exact in float64 while n * max degree < 2**53
    idsum = be.segment_sum(indices.astype(xp.float64), indptr)
    mate = xp.full(n, -1, dtype=xp.int64)
    rounds = d1_rounds = rand_rounds = matched = 0
    fractions = []
    while True:
        free = mate < 0
        singles = xp.flatnonzero(free & (deg == 1))
        if singles.shape[0]:
            requester, target = singles, idsum[singles].astype(xp.int64)
            d1_rounds += 1
        else:
            open_ = xp.flatnonzero(free & (deg > 0))
            if open_.shape[0] == 0:
                break
            rand_rounds += 1
            pick = be.uniform(seed, 3 * rounds + _STREAM_REQUESTER, open_) < RANDOM_REQUEST_FRACTION
            requester = open_[pick]
            if requester.shape[0] == 0:  # tiny graphs: make sure someone asks
                requester = open_[:1]
            target = _random_free_neighbour(be, graph, indices, requester, mate, seed, rounds)
        rounds += 1
        pu, pv = _resolve_requests(be, n, requester, target, seed, rounds)
        mate[pu] = pv
        mate[pv] = pu
        newly = xp.zeros(n, dtype=bool)
        newly[pu] = True
        newly[pv] = True
        newly = xp.flatnonzero(newly)
        matched += newly.shape[0]
        fractions.append(matched / n if n else 0.0)
        _remove_vertices(be, indptr, indices, newly, deg, idsum)
    return Matching.from_mate(graph, mate, stats={"rounds": rounds, "matched_fraction": fractions,
                                                  "degree_one_rounds": d1_rounds, "random_rounds": rand_rounds})


def _resolve_requests(be, n, requester, target, seed, rnd):
    """Pairs (u, v) accepted among requests u -> v: disjoint, each target accepts at most one.

    A target that is itself requesting someone else declines (its own request is pending);
    two vertices requesting each other accept each other.
    """
    xp = be.xp
    asks = xp.full(n, -1, dtype=xp.int64)
    asks[requester] = target
    ok = (asks[target] < 0) | (asks[target] == requester)
    # key: 31 random bits above the requester id, so the minimum is unique per target
    h = (be.hash64(seed, 3 * rnd + _STREAM_ACCEPT, requester) >> xp.uint64(33)).astype(xp.int64)
    key = (h << 32) | requester
    best = scatter_min_nonneg(be, n, target[ok], key[ok])
    acc = ok & (best[target] == key)
    return requester[acc], target[acc]


def _random_free_neighbour(be, graph, indices, requester, mate, seed, rnd):
    """For each requester, a uniformly random free neighbour (smallest hash of the stored entry)."""
    xp = be.xp
    start = graph.indptr[requester]
    length = graph.indptr[requester + 1] - start
    offs = be.exclusive_cumsum(length)
    seg = be.row_ids(offs)
    pos = start[seg] + (xp.arange(seg.shape[0], dtype=xp.int64) - offs[seg])
    nb = indices[pos]
    h = (be.hash64(seed, 3 * rnd + _STREAM_NEIGHBOUR, pos) >> xp.uint64(1)).astype(xp.int64)
    free = mate[nb] < 0
    best = scatter_min_nonneg(be, requester.shape[0], seg[free], h[free])
    hit = free & (h == best[seg])
    # equal hashes (astronomically rare) pick the largest id among them
    return scatter_max_nonneg(be, requester.shape[0], seg[hit], nb[hit])


def _remove_vertices(be, indptr, indices, gone, deg, idsum):
    """Update free degrees and free-neighbour id sums of the neighbours of newly matched vertices."""
    xp = be.xp
    start = indptr[gone]
    length = indptr[gone + 1] - start
    offs = be.exclusive_cumsum(length)
    seg = be.row_ids(offs)
    pos = start[seg] + (xp.arange(seg.shape[0], dtype=xp.int64) - offs[seg])
    nb = indices[pos]
    be.scatter_add(deg, nb, xp.full(nb.shape[0], -1, dtype=xp.int32))
    be.scatter_add(idsum, nb, -gone[seg].astype(xp.float64))
