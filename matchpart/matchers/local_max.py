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
# Rounds run in batches between compactions of the alive edge list; the compaction's size
# is the termination test, a host sync on the GPU, so there it happens once a batch. On
# the CPU a sync is free and compacting every round saves work. The matching does not
# depend on the batch size (same keys, same winners), only the work does.
ROUNDS_PER_CHECK = {"cpu": 1, "gpu": 4}


def undirected_edges(graph, be):
    """(u, v, entry) for every undirected edge u < v, with ``entry`` its CSR position u->v."""
    xp = be.xp
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
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
    Then every edge with a matched endpoint is dropped: masked out within a batch of
    rounds, removed by a compaction after it. Rounds work on local vertex ids (``orig``
    maps them back); the result depends neither on the relabelling nor on the batch size.
    """
    xp = be.xp
    m = eu.shape[0]
    # slot n of mate (and of matched) is a trash slot: masked-out writes go there, so a
    # round needs no boolean compaction (a host sync on the GPU)
    mate_ext = xp.full(n + 1, -1, dtype=xp.int64)
    u64 = xp.uint64
    eid = xp.arange(m, dtype=u64)  # stable edge id for the hash, same for both directions
    shifted = rank.astype(u64) << u64(RANK_SHIFT)
    matched_counts, alive_counts = [], []  # per round, device scalars: read once at the end
    orig = None  # local vertex id -> graph vertex id (None: identity)
    nv = n
    batch = ROUNDS_PER_CHECK[be.name]
    rounds = 0
    tail = 0
    while eu.shape[0] > 0:
        if eu.shape[0] * 2 * RELABEL_SHRINK < nv:
            ids = xp.unique(xp.concatenate([eu, ev]))
            eu, ev = xp.searchsorted(ids, eu), xp.searchsorted(ids, ev)
            orig = ids if orig is None else orig[ids]
            nv = ids.shape[0]
        if rounds >= GREEDY_TAIL_AFTER:
            rounds += 1
            key = shifted | be.hash32(seed, STREAM_BASE + rounds, eid).astype(u64)
            tail = eu.shape[0]
            wu, wv = _greedy_tail(eu, ev, key, eid, nv, be)
            gu, gv = (wu, wv) if orig is None else (orig[wu], orig[wv])
            mate_ext[gu] = gv
            mate_ext[gv] = gu
            matched_counts.append(xp.asarray(2 * wu.shape[0]))
            alive_counts.append(xp.asarray(0))
            break
        matched = xp.zeros(nv + 1, dtype=bool)  # every endpoint of an alive edge is unmatched
        alive = xp.ones(eu.shape[0], dtype=bool)
        ends = xp.concatenate([eu, ev])
        for i in range(min(batch, GREEDY_TAIL_AFTER - rounds)):
            rounds += 1
            key = shifted | be.hash32(seed, STREAM_BASE + rounds, eid).astype(u64)
            if i:  # after the first round of a batch some edges are dead: mask them out
                key = xp.where(alive, key, u64(0))
            best = xp.zeros(nv, dtype=u64)
            be.scatter_max(best, ends, xp.concatenate([key, key]))
            cand = (key == best[eu]) & (key == best[ev])
            if i:
                cand &= alive
            # resolve key collisions: per vertex, only the candidate with the smallest edge id
            first = xp.full(nv, m, dtype=u64)
            # the CPU's scatter costs per element and its compaction nothing: scatter the
            # candidates only; the GPU scatters all edges (non-candidates send m), no sync
            c = slice(None) if be.is_gpu else xp.flatnonzero(cand)
            ce = xp.where(cand[c], eid[c], u64(m))
            be.scatter_min(first, xp.concatenate([eu[c], ev[c]]), xp.concatenate([ce, ce]))
            win = cand & (first[eu] == eid) & (first[ev] == eid)
            wu, wv = xp.where(win, eu, nv), xp.where(win, ev, nv)
            matched[wu] = True
            matched[wv] = True
            gu = xp.where(win, eu if orig is None else orig[eu], n)
            gv = xp.where(win, ev if orig is None else orig[ev], n)
            mate_ext[gu] = gv
            mate_ext[gv] = gu
            mate_ext[n] = -1
            matched[nv] = False
            alive &= ~matched[eu] & ~matched[ev]
            matched_counts.append(2 * win.sum())
            alive_counts.append(alive.sum())
        # compaction: keep the alive edges (its size is the termination test)
        keep = xp.flatnonzero(alive)
        eu, ev, eid, shifted = eu[keep], ev[keep], eid[keep], shifted[keep]
    counts = be.to_host(xp.stack(matched_counts)) if matched_counts else np.zeros(0, dtype=np.int64)
    left = be.to_host(xp.stack(alive_counts)) if alive_counts else np.zeros(0, dtype=np.int64)
    # rounds that started with alive edges; trailing no-op rounds of the last batch don't count
    used = int(np.flatnonzero(counts > 0).max() + 1) if (counts > 0).any() else 0
    fractions = (np.cumsum(counts[:used]) / n).tolist() if n else []
    edges_left = (left[:used] / m).tolist() if m else []
    return mate_ext[:n], {"rounds": used, "matched_fraction": fractions, "edges_left": edges_left,
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
