"""Cluster coarsening: size-constrained label propagation in parallel rounds (Louvain-style local moving).

Each round, an active half of the vertices (chosen by a hash of (seed, round, vertex), so
two neighbours rarely both move and swap) moves to the neighbouring cluster it is most
strongly connected to, if that beats its own cluster. Moves into one cluster are accepted
in order of decreasing gain while the cluster stays within the weight cap (a sorted prefix
sum of the incoming weights), so no cluster ever exceeds the cap. This is the parallel
local-moving phase of GPU Louvain (seed 004, Naim's thesis) with KaMinPar's cluster-weight
cap instead of modularity, which suits partitioning better: clusters must stay small.
"""
from __future__ import annotations

from .contract import mapping_from_labels, sum_by_index
from .twohop import two_hop_pairs

# Label propagation rounds per level; KaMinPar uses 5 iterations, half the vertices are
# active per round here, so a few more rounds give each vertex a similar number of chances.
ROUNDS = 8
# Hash-RNG stream base for activity and tie-breaking (distinct from the matchers' streams).
STREAM_BASE = 0xC1C1000


def cluster_labels(graph, cap, *, seed=0, rounds=ROUNDS):
    """Cluster label (a vertex id) per vertex; every cluster weighs at most ``cap`` (or is a single vertex)."""
    be = graph.backend
    xp = be.xp
    n = graph.n
    labels = xp.arange(n, dtype=xp.int64)
    if n == 0 or graph.m == 0:
        return labels
    vw = graph.vwgt
    cw = vw.copy()
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cols = graph.indices.astype(xp.int64)
    w = graph.ewgt
    vid = xp.arange(n, dtype=xp.int64)
    for r in range(rounds):
        # connection weight of each vertex to each neighbouring cluster: sort (row, label) keys
        lab = labels[cols]
        key = rows * n + lab
        order = xp.argsort(key)
        key_s, w_s = key[order], w[order]
        starts = xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), key_s[1:] != key_s[:-1]]))
        bounds = xp.concatenate([starts, xp.asarray([key_s.shape[0]], dtype=starts.dtype)])
        conn = be.segment_sum(w_s, bounds)
        crow = key_s[starts] // n
        clab = key_s[starts] % n
        own = clab == labels[crow]
        own_conn = xp.zeros(n, dtype=conn.dtype)
        own_conn[crow[own]] = conn[own]
        # a candidate cluster must have room for the vertex
        fits = own | ((cw[clab] + vw[crow]) <= cap)
        tie = be.hash32(seed, STREAM_BASE + r, clab * 7919 + crow).astype(xp.float64) / 2.0**32
        # the tie-break must never outweigh a real difference in connection weight
        cf = conn.astype(xp.float64)
        jitter = tie * 0.5 if conn.dtype.kind in "iu" else cf * tie * 1e-9
        score = xp.where(fits & ~own, cf + jitter, -1.0)
        # best candidate per vertex: segmented argmax over the (row-sorted) candidate list
        # crow is sorted: its row starts by binary search (CuPy's bincount syncs twice)
        cptr = xp.searchsorted(crow, xp.arange(n + 1, dtype=xp.int64))
        best = be.segment_argmax(score, cptr)
        has = best >= 0
        best_c = xp.maximum(best, 0)
        gain = xp.where(has, conn[best_c] - own_conn, 0)
        active = (be.hash32(seed, STREAM_BASE + 4096 + r, vid) & 1) == 1
        move = xp.flatnonzero(has & active & (gain > 0) & (score[best_c] >= 0))
        if move.shape[0] == 0:
            continue
        target = clab[best_c[move]]
        # accept moves per target in decreasing gain until the target would overflow
        g = gain[move].astype(xp.float64)
        o = xp.lexsort(xp.stack([move.astype(xp.float64), -g, target.astype(xp.float64)]))
        move, target = move[o], target[o]
        mw = vw[move]
        cum = xp.cumsum(mw)
        tstart = xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), target[1:] != target[:-1]]))
        idx = xp.arange(move.shape[0])
        first = tstart[xp.searchsorted(tstart, idx, side="right") - 1]
        before = cum[first] - mw[first]
        incoming = cum - before
        ok = (cw[target] + incoming) <= cap
        move, target = move[ok], target[ok]
        labels[move] = target
        cw = sum_by_index(be, labels, vw, n)
    return labels


def cluster_mapping(graph, cap, seed=0, *, rounds=ROUNDS, block=None):
    """Clusterer for ``coarsen(..., clusterer=...)``: (mapping, n_coarse, stats).

    Vertices left alone by label propagation (isolated vertices, or all neighbours full)
    are paired two-hop style so the hierarchy does not stall on them. ``block``: see
    ``two_hop_pairs`` (keeps isolated vertices of different blocks apart).
    """
    be = graph.backend
    xp = be.xp
    labels = cluster_labels(graph, cap, seed=seed, rounds=rounds)
    n = graph.n
    # an atomic count, not bincount (which syncs twice on CuPy and refuses an empty input)
    size = sum_by_index(be, labels, xp.ones(n, dtype=xp.int64), n)
    singleton = size[labels] == 1
    vid = xp.arange(n, dtype=xp.int64)
    mate = xp.where(singleton, -1, vid)
    mate = two_hop_pairs(graph, mate, cap, seed=seed, block=block)
    paired = singleton & (mate >= 0)
    # labels n.. are fresh, so a new pair never merges into an existing cluster's label
    labels = xp.where(paired, n + xp.minimum(vid, mate), labels)
    mapping, n_coarse = mapping_from_labels(labels, be)
    stats = {"rounds": rounds, "matched_fraction": float((~singleton).sum().item()) / max(n, 1),
             "two_hop_fraction": float(paired.sum().item()) / max(n, 1)}
    return mapping, n_coarse, stats
