"""Cluster coarsening: size-constrained label propagation in synchronous rounds (KaMinPar's
clustering with a cluster-weight cap, decided in parallel as in GPU Louvain's local moving).

Each round, an active half of the vertices (a hash of (seed, round, vertex), so two
neighbours rarely both move and swap) picks the neighbouring cluster it is most strongly
connected to among those with room for it (ties: the larger hash of (vertex, cluster), then
the smaller label), and moves there if that beats its own cluster. All decisions read the
previous round's labels and cluster weights; moves into one cluster are then accepted in
vertex order while the arriving weights keep the cluster within the cap (leaving vertices
free no room), so no cluster ever exceeds the cap.

Two formulations give the same labels: the compiled kernel on the threads (lp_cluster.py,
the CPU's) and the whole-array one here (any backend: the GPU's). Connection weights are
summed in different orders, so they agree exactly when those sums are exact: integer edge
weights (every coarse graph of an unweighted graph) or sums of dyadic fractions.
"""
from __future__ import annotations

import numpy as np

from .. import threads
from ..backend import rng as _rng
from .contract import mapping_from_labels, sum_by_index
from .lp_cluster import lp_labels
from .twohop import two_hop_pairs

# Label propagation rounds per level; KaMinPar uses 5 iterations, half the vertices are
# active per round here, so a few more rounds give each vertex a similar number of chances.
ROUNDS = 8
# Hash-RNG streams: which vertices are active in round r (ACTIVE_STREAM + r), and the
# tie-break between equally connected clusters (TIE_STREAM + r).
ACTIVE_STREAM = 0xC1C2000
TIE_STREAM = 0xC1C3000


def cluster_labels(graph, cap, *, seed=0, rounds=ROUNDS, method="auto"):
    """Cluster label (a vertex id) per vertex; every cluster weighs at most ``cap`` (or is a single vertex).

    ``method``: "kernel" (CPU, compiled, threaded), "xp" (whole-array, any backend) or
    "auto" (kernel on the CPU); both give the same labels (see the module's text).
    """
    be = graph.backend
    xp = be.xp
    n = graph.n
    if method == "auto":
        method = "xp" if be.is_gpu else "kernel"
    if method not in ("kernel", "xp"):
        raise ValueError(f"method must be 'auto', 'kernel' or 'xp', got {method!r}")
    if n == 0 or graph.m == 0:
        return xp.arange(n, dtype=xp.int64)
    if method == "kernel":
        if be.is_gpu:
            raise ValueError("method='kernel' runs on the CPU; use 'xp' for a GPU graph")
        return lp_labels(graph.indptr, graph.indices, graph.ewgt, graph.vwgt, float(cap),
                         _rng.stream_keys(seed, ACTIVE_STREAM, rounds), _rng.stream_keys(seed, TIE_STREAM, rounds),
                         threads.CHUNK, threads.PARALLEL_MIN_ITEMS)
    return _labels_xp(graph, cap, seed, rounds)


def _stable_argsort(xp, keys):
    # numpy needs kind="stable"; CuPy's sort is always stable (a radix sort)
    return xp.argsort(keys, kind="stable") if xp.__name__ == "numpy" else xp.argsort(keys)


def _group_starts(xp, sorted_keys):
    return xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), sorted_keys[1:] != sorted_keys[:-1]]))


def _labels_xp(graph, cap, seed, rounds):
    be = graph.backend
    xp = be.xp
    n = graph.n
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cols = graph.indices.astype(xp.int64)
    w = graph.ewgt.astype(xp.float64)
    vw = graph.vwgt.astype(xp.float64)
    vid = xp.arange(n, dtype=xp.int64)
    labels = vid.copy()
    weight = vw.copy()
    for r in range(rounds):
        active = (be.hash32(seed, ACTIVE_STREAM + r, vid) & 1) == 1
        sel = xp.flatnonzero(active[rows])
        # connection weight of each active vertex to each neighbouring cluster: entries
        # sorted by (row, label), stably, so each sum runs in CSR order
        key = rows[sel] * n + labels[cols[sel]]
        order = _stable_argsort(xp, key)
        key_s, w_s = key[order], w[sel][order]
        starts = _group_starts(xp, key_s)
        conn = be.segment_sum(w_s, xp.concatenate([starts, xp.asarray([key_s.shape[0]], dtype=starts.dtype)]))
        crow, clab = key_s[starts] // n, key_s[starts] % n
        own = clab == labels[crow]
        # (a sum with one term per row: no boolean-mask indexing, which syncs on the GPU)
        own_conn = sum_by_index(be, crow, xp.where(own, conn, 0.0), n)
        fits = ~own & ((weight[clab] + vw[crow]) <= cap)
        # crow is sorted: its row starts by binary search (CuPy's bincount syncs twice)
        cptr = xp.searchsorted(crow, xp.arange(n + 1, dtype=xp.int64))
        top = be.segment_max(xp.where(fits, conn, -xp.inf), cptr, -xp.inf)
        tied = fits & (conn == top[crow])
        # among the best connected: the larger hash, then the smaller label, as one int64
        tie = be.hash32(seed, TIE_STREAM + r, crow * n + clab).astype(xp.int64)
        packed = xp.where(tied, tie * 2**31 + (2**31 - 1 - clab), -1)
        best = be.segment_argmax(packed, cptr)
        pick = xp.maximum(best, 0)
        moves = (best >= 0) & tied[pick] & (conn[pick] > own_conn)
        mv = xp.flatnonzero(moves)
        if mv.shape[0] == 0:
            continue
        target = clab[pick[mv]]
        # accept moves per target in vertex order while the arriving weight fits
        by_target = _stable_argsort(xp, target)
        mv, target = mv[by_target], target[by_target]
        mw = vw[mv]
        cum = xp.cumsum(mw)
        tstart = _group_starts(xp, target)
        first = tstart[xp.searchsorted(tstart, xp.arange(mv.shape[0]), side="right") - 1]
        incoming = cum - (cum[first] - mw[first])
        ok = (weight[target] + incoming) <= cap
        labels[mv] = xp.where(ok, target, labels[mv])
        weight = sum_by_index(be, labels, vw, n)
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
