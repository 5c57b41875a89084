"""Cluster coarsening: size-constrained label propagation in synchronous rounds (KaMinPar's
clustering with a cluster-weight cap, decided in parallel as in GPU Louvain's local moving).

Each round, an active half of the vertices (a hash of (seed, round, vertex), so two
neighbours rarely both move and swap) picks the neighbouring cluster it is most strongly
connected to among those with room for it (ties: the larger hash of (vertex, cluster), then
the smaller label), and moves there if that beats its own cluster; a vertex is evaluated
again only after it or a neighbour moved. All decisions read the
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

from .. import numbering, threads
from ..backend import rng as _rng
from .cluster_host import group_leaves, pair_labels
from .contract import mapping_from_labels, sum_by_index
from .lp_cluster import PREFETCH_MIN_VERTICES, lp_labels
from .twohop import two_hop_pairs

# Label propagation rounds per level; KaMinPar uses 5 iterations, half the vertices are
# active per round here, so a few more rounds give each vertex a similar number of chances.
ROUNDS = 8
# ... but a level's rounds stop after one that moves fewer than this share of its vertices:
# on the dense coarse levels of power-law graphs nearly every vertex stays pending (a
# neighbour moved) and a round costs a pass over all entries while moving under 1% (R-MAT
# 2^20, fast, k = 8: levels of 8173 and 3577 vertices, 8 rounds of 10 and 4.5 ms moving 83 and
# 22 vertices in their first). 2 threads, best of 6 runs each: R-MAT 2^20 (k = 8, 32) coarsening
# 0.90-0.97 x the time at -0.04% to +0.05% of cut, Barabasi-Albert 2^20 0.92-0.93 x at
# +0.1% to +0.3%; the 2^16 families and shared graphs (k = 8, 32, default and fast, 2 seeds)
# 0.999-1.002 x the cut.
CONVERGED_SHARE = 0.01
# Hash-RNG streams: which vertices are active in round r (ACTIVE_STREAM + r), and the
# tie-break between equally connected clusters (TIE_STREAM + r).
ACTIVE_STREAM = 0xC1C2000
TIE_STREAM = 0xC1C3000


def cluster_labels(graph, cap, *, seed=0, rounds=ROUNDS, method="auto", converged_share=CONVERGED_SHARE):
    """Cluster label (a vertex id) per vertex; every cluster weighs at most ``cap`` (or is a single vertex).

    At most ``rounds`` rounds, ending after one that moves fewer than converged_share x n
    vertices (CONVERGED_SHARE; 0: all of them). ``method``: "kernel" (CPU, compiled,
    threaded), "xp" (whole-array, any backend) or "auto" (kernel on the CPU); both give the
    same labels (see the module's text).
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
        chunk, parallel_min = threads.scaled_chunk(threads.CHUNK, threads.PARALLEL_MIN_ITEMS, n,
                                                   graph.indices.shape[0])
        return lp_labels(graph.indptr, graph.indices, graph.ewgt, graph.vwgt, float(cap),
                         _rng.stream_keys(seed, ACTIVE_STREAM, rounds), _rng.stream_keys(seed, TIE_STREAM, rounds),
                         chunk, parallel_min, float(converged_share),
                         n >= PREFETCH_MIN_VERTICES and numbering.scattered_ids(graph))
    return _labels_xp(graph, cap, seed, rounds, converged_share)


def _stable_argsort(xp, keys):
    # numpy needs kind="stable"; CuPy's sort is always stable (a radix sort)
    return xp.argsort(keys, kind="stable") if xp.__name__ == "numpy" else xp.argsort(keys)


def _group_starts(xp, sorted_keys):
    return xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), sorted_keys[1:] != sorted_keys[:-1]]))


def _labels_xp(graph, cap, seed, rounds, converged_share):
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
    pending = xp.ones(n, dtype=bool)
    for r in range(rounds):
        evaluated = pending & ((be.hash32(seed, ACTIVE_STREAM + r, vid) & 1) == 1)
        pending = pending & ~evaluated
        sel = xp.flatnonzero(evaluated[rows])
        if sel.shape[0] == 0:
            break                   # no move: fewer than converged_share x n
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
            break
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
        # a moved vertex and its neighbours are evaluated again
        moved = xp.zeros(n, dtype=xp.int64)
        moved[mv] = ok.astype(xp.int64)
        pending = pending | (moved > 0) | (be.segment_sum(moved[cols], graph.indptr) > 0)
        if int(ok.sum()) < converged_share * n:
            break
    return labels


def leaf_groups(graph, labels, cap, *, block=None):
    """Labels with the single-vertex clusters of isolated and degree-1 vertices grouped.

    Such vertices that hang off the same neighbour (isolated ones: off one virtual hub per
    block of ``block``, or one for all) and weigh at most cap / 2 are taken in order of
    (hub, weight, id) and cut into runs whose weight before them falls in the same
    multiple of cap / 2: a run weighs less than cap / 2 plus its last member, so less than
    cap. R-MAT 2^20 (edge factor 8) has 501k isolated and 145k degree-1 vertices: paired,
    they would only halve per level, and a leaf whose hub's cluster is full stays alone in
    label propagation (KaMinPar clusters such vertices two hops apart too). Grouped vertices
    get labels n.. (fresh); whole-array steps, so the CPU and the GPU group alike.
    """
    be = graph.backend
    xp = be.xp
    n = graph.n
    size = sum_by_index(be, labels, xp.ones(n, dtype=xp.int64), n)
    degree = graph.indptr[1:] - graph.indptr[:-1]
    half = cap / 2.0
    vw = graph.vwgt.astype(xp.float64)
    cand = xp.flatnonzero((size[labels] == 1) & (degree <= 1) & (vw <= half))
    if cand.shape[0] < 2:
        return labels
    nnz = graph.indices.shape[0]
    first = graph.indices[xp.minimum(graph.indptr[cand], nnz - 1)].astype(xp.int64) if nnz else xp.zeros_like(cand)
    virtual = n if block is None else n + be.to_device(block)[cand].astype(xp.int64)
    hub = xp.where(degree[cand] == 1, first, virtual)
    w = vw[cand]
    order = _stable_argsort(xp, w)                   # cand is in id order: (weight, id)
    order = order[_stable_argsort(xp, hub[order])]   # then (hub, weight, id)
    cand, hub, w = cand[order], hub[order], w[order]
    cum = xp.cumsum(w)
    hstart = _group_starts(xp, hub)
    first_of = hstart[xp.searchsorted(hstart, xp.arange(cand.shape[0]), side="right") - 1]
    before = cum - w - (cum[first_of] - w[first_of])    # weight of the hub's members before this one
    run = xp.floor(before / half).astype(xp.int64)
    new_run = xp.concatenate([xp.ones(1, dtype=bool), (hub[1:] != hub[:-1]) | (run[1:] != run[:-1])])
    rstart = xp.flatnonzero(new_run)
    start_of = rstart[xp.searchsorted(rstart, xp.arange(cand.shape[0]), side="right") - 1]
    out = labels.copy()
    out[cand] = n + cand[start_of]
    return out


def cluster_mapping(graph, cap, seed=0, *, rounds=ROUNDS, block=None, method="auto"):
    """Clusterer for ``coarsen(..., clusterer=...)``: (mapping, n_coarse, stats).

    Vertices left alone by label propagation: isolated and degree-1 ones are grouped by
    ``leaf_groups``, the others (all neighbours' clusters full) and what is still alone
    paired two-hop style, so the hierarchy does not stall on them. ``block``: see
    ``two_hop_pairs`` (keeps isolated vertices of different blocks apart). ``method``: the
    steps after label propagation compiled ("kernel", cluster_host.py, the CPU's) or as
    whole arrays ("xp", any backend; "auto": the GPU's); the same mapping.
    """
    be = graph.backend
    n = graph.n
    if method == "auto":
        method = "xp" if be.is_gpu else "kernel"
    if method not in ("kernel", "xp"):
        raise ValueError(f"method must be 'auto', 'kernel' or 'xp', got {method!r}")
    labels = cluster_labels(graph, cap, seed=seed, rounds=rounds)
    if method == "kernel":
        if be.is_gpu:
            raise ValueError("method='kernel' runs on the CPU; use 'xp' for a GPU graph")
        labels, nclustered, njoined = _grouped_and_paired_host(graph, labels, cap, seed, block)
    else:
        labels, nclustered, njoined = _grouped_and_paired_xp(graph, labels, cap, seed, block)
    mapping, n_coarse = mapping_from_labels(labels, be)
    stats = {"rounds": rounds, "matched_fraction": nclustered / max(n, 1), "two_hop_fraction": njoined / max(n, 1)}
    return mapping, n_coarse, stats


def _grouped_and_paired_xp(graph, labels, cap, seed, block):
    """(labels with leaves grouped and singletons paired, vertices clustered by label
    propagation, vertices not clustered but now grouped or paired)."""
    be = graph.backend
    xp = be.xp
    n = graph.n
    clustered = sum_by_index(be, labels, xp.ones(n, dtype=xp.int64), n)[labels] > 1
    labels = leaf_groups(graph, labels, cap, block=block)
    # an atomic count, not bincount (which syncs twice on CuPy and refuses an empty input)
    size = sum_by_index(be, labels, xp.ones(n, dtype=xp.int64), 2 * n)
    singleton = size[labels] == 1
    vid = xp.arange(n, dtype=xp.int64)
    mate = xp.where(singleton, -1, vid)
    mate = two_hop_pairs(graph, mate, cap, seed=seed, block=block)
    paired = singleton & (mate >= 0)
    # labels 2n.. are fresh, so a new pair never merges into an existing cluster or group
    labels = xp.where(paired, 2 * n + xp.minimum(vid, mate), labels)
    return labels, int(clustered.sum().item()), int((~clustered & ~singleton | paired).sum().item())


def _grouped_and_paired_host(graph, labels, cap, seed, block):
    """_grouped_and_paired_xp in compiled passes (cluster_host.py)."""
    n = graph.n
    blk = np.zeros(0, dtype=np.int64) if block is None else np.asarray(block, dtype=np.int64)
    grouped = np.empty(n, dtype=np.int64)
    clustered = np.empty(n, dtype=np.bool_)
    mate = np.empty(n, dtype=np.int64)
    nclustered = group_leaves(graph.indptr, graph.indices, graph.vwgt, labels, cap / 2.0, blk, grouped, clustered,
                              mate)
    mate = two_hop_pairs(graph, mate, cap, seed=seed, block=block)
    njoined = pair_labels(grouped, mate, clustered)
    return grouped, int(nclustered), int(njoined)
