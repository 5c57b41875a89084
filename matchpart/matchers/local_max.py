"""Local max matching (Birn et al.): match every edge that beats all incident alive edges; repeat."""
from __future__ import annotations

import numpy as np

from .base import Matching
from .ratings import edge_ratings
from .registry import register

# Hash-RNG stream of round r is STREAM_BASE + r; a base of its own keeps local max's
# tie-break numbers unrelated to other matchers that use small stream ids for seed 0.
STREAM_BASE = 0x10CA1000
# The packed key is (rating_rank << RANK_SHIFT) | random32 in uint64: cupyx.scatter_max /
# scatter_min accept int32, uint32, uint64 and floats but not int64.
RANK_SHIFT = 32
# When the alive edges touch fewer than 1/RELABEL_SHRINK of the current vertex ids, the
# ids are compacted, so a round costs O(alive edges) rather than O(n): the paper's linear
# total work, and no O(n)-per-round tail on inputs that need many rounds (a path with
# increasing weights matches one edge per round). No round cap is needed: every round
# matches at least the globally heaviest alive edge.
RELABEL_SHRINK = 4
# After this many rounds the remaining edges are matched in one sequential pass, greedily
# by the last round's keys: local max with the perturbation frozen is exactly greedy in
# key order, so the result is still a local max matching (maximal, 1/2-approximate).
# Why: rounds can be Theta(m) (a path with increasing weights matches one edge per round,
# 100k rounds and ~6 minutes for 200k vertices), while the paper reports <= ~10 rounds on
# partitioning instances and we see 4-6 on rgg/delaunay, so 50 is never reached there.
GREEDY_TAIL_AFTER = 50


def undirected_edges(graph, be):
    """(u, v, entry) for every undirected edge u < v, with ``entry`` its CSR position u->v."""
    xp = be.xp
    rows = be.row_ids(graph.indptr)
    cols = graph.indices.astype(xp.int64)
    entry = xp.flatnonzero(rows < cols)
    return rows[entry], cols[entry], entry


def rating_ranks(ratings, xp):
    """Dense integer rank of each rating (equal ratings -> equal rank, higher = heavier)."""
    if ratings.shape[0] == 0:
        return xp.zeros(0, dtype=xp.int64)
    _, inverse = xp.unique(ratings, return_inverse=True)
    return inverse.reshape(-1).astype(xp.int64)


def local_max_rounds(n, eu, ev, rank, *, seed, be):
    """Run local max on the undirected edge list (eu[i], ev[i]) with integer ranks.

    Returns (mate, stats). Each round every alive edge gets the key
    (rank << 32) | hash32(seed, round, edge id); an edge whose key is the maximum at both
    endpoints is locally dominant and matched. Equal keys (a 32-bit hash collision) are
    resolved by the smaller edge id, so at most one edge per vertex is ever chosen.
    Then every edge with a matched endpoint is dropped (compaction). Rounds work on local
    vertex ids (``orig`` maps them back); the result does not depend on the relabelling.
    """
    xp = be.xp
    m = eu.shape[0]
    mate = xp.full(n, -1, dtype=xp.int64)
    u64 = xp.uint64
    eid = xp.arange(m, dtype=u64)  # stable edge id for the hash, same for both directions
    shifted = rank.astype(u64) << u64(RANK_SHIFT)
    matched_counts, edges_left = [], []
    orig = None  # local vertex id -> graph vertex id (None: identity)
    nv = n
    matched = xp.zeros(nv, dtype=bool)
    rounds = 0
    tail = 0
    while eu.shape[0] > 0:
        rounds += 1
        if eu.shape[0] * 2 * RELABEL_SHRINK < nv:
            ids = xp.unique(xp.concatenate([eu, ev]))
            eu, ev = xp.searchsorted(ids, eu), xp.searchsorted(ids, ev)
            orig = ids if orig is None else orig[ids]
            nv = ids.shape[0]
            matched = xp.zeros(nv, dtype=bool)  # every endpoint of an alive edge is unmatched
        key = shifted | be.hash32(seed, STREAM_BASE + rounds, eid).astype(u64)
        if rounds > GREEDY_TAIL_AFTER:
            tail = eu.shape[0]
            wu, wv = _greedy_tail(eu, ev, key, eid, nv, be)
            gu, gv = (wu, wv) if orig is None else (orig[wu], orig[wv])
            mate[gu] = gv
            mate[gv] = gu
            matched_counts.append(2 * wu.shape[0])
            edges_left.append(0.0)
            break
        best = xp.zeros(nv, dtype=u64)
        ends = xp.concatenate([eu, ev])
        be.scatter_max(best, ends, xp.concatenate([key, key]))
        cand = xp.flatnonzero((key == best[eu]) & (key == best[ev]))
        # resolve key collisions: per vertex, only the candidate with the smallest edge id
        first = xp.full(nv, m, dtype=u64)
        cu, cv, ce = eu[cand], ev[cand], eid[cand]
        be.scatter_min(first, xp.concatenate([cu, cv]), xp.concatenate([ce, ce]))
        win = (first[cu] == ce) & (first[cv] == ce)
        wu, wv = cu[win], cv[win]
        matched[wu] = True
        matched[wv] = True
        gu, gv = (wu, wv) if orig is None else (orig[wu], orig[wv])
        mate[gu] = gv
        mate[gv] = gu
        alive = ~matched[eu] & ~matched[ev]
        eu, ev, eid, shifted = eu[alive], ev[alive], eid[alive], shifted[alive]
        matched_counts.append(2 * wu.shape[0])  # shape is known on the host: no extra sync
        edges_left.append(eu.shape[0] / m)
    total = 0
    fractions = []
    for c in matched_counts:
        total += c
        fractions.append(total / n if n else 0.0)
    return mate, {"rounds": rounds, "matched_fraction": fractions, "edges_left": edges_left,
                  "greedy_tail_edges": tail}


def _greedy_tail(eu, ev, key, eid, nv, be):
    """Match the remaining edges greedily by decreasing key (ties: smaller edge id), on the
    host with the serial greedy scan; returns the matched pairs (local ids) on ``be``."""
    from .serial import _greedy_scan  # numba kernel; imported here to keep import light
    h = be.to_host
    eu_h, ev_h, key_h, eid_h = h(eu), h(ev), h(key), h(eid)
    order = np.lexsort((eid_h, ~key_h))  # primary: key descending (~ reverses uint64)
    mate = np.full(nv, -1, dtype=np.int64)
    _greedy_scan(eu_h[order], ev_h[order], mate)
    u = np.flatnonzero(mate > np.arange(nv))
    return be.to_device(u), be.to_device(mate[u])


@register("local_max",
          description="local max: match edges heavier than all incident alive edges, repeat (maximal, 1/2-approx)",
          paper="001_bd35ca2a1a8d7ddc (Birn et al., local max)",
          weighted=True, backends=("cpu", "gpu"), serial=False)
def local_max(graph, *, rating="weight", seed=0, backend=None):
    """Local max matching: every round, each alive edge that is the heaviest (ties by a fresh
    random perturbation) at both endpoints is matched and its endpoints' edges removed."""
    be = backend or graph.backend
    xp = be.xp
    eu, ev, entry = undirected_edges(graph, be)
    rank = rating_ranks(edge_ratings(graph, rating)[entry], xp)
    if rank.shape[0] >= 2 ** 32:
        raise ValueError("local_max supports fewer than 2**32 undirected edges")
    mate, stats = local_max_rounds(graph.n, eu, ev, rank, seed=seed, be=be)
    return Matching.from_mate(graph, mate, stats=stats)
