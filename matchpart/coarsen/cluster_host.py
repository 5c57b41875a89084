"""cluster_mapping's steps after label propagation, compiled for the CPU: leaf groups,
singletons paired two hops apart, the labels of those pairs. The same labels as the
whole-array steps of cluster.py (the GPU's; tests hold them equal) in a few passes over the
vertices instead of some twenty array operations, each a pass of its own (a first level on
2 threads: rgg 2^20 37-42 -> 18 ms, R-MAT 2^20 with its 501k isolated vertices 59-65 -> 15 ms).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..sorting import argsort_stable, then_by_small_key


@njit(cache=True)
def group_leaves(indptr, indices, vwgt, labels, half, block, grouped, clustered, mate):
    """cluster.leaf_groups on host arrays: grouped = the labels (all below n) with the
    single-vertex clusters of isolated and degree-1 vertices of weight <= half grouped
    (labels n..), clustered[v] = v's cluster in ``labels`` holds more than one vertex, mate[v]
    = -1 where v is still alone after grouping, else v (two-hop pairing's input). ``block``:
    per vertex, or empty (one virtual hub for every isolated vertex). Returns the number of
    clustered vertices."""
    n = labels.shape[0]
    nblocks = 0
    for v in range(block.shape[0]):
        nblocks = max(nblocks, block[v] + 1)
    size = np.zeros(n, dtype=np.int64)
    for v in range(n):
        size[labels[v]] += 1
    nclustered = 0
    ncand = 0
    for v in range(n):
        grouped[v] = labels[v]
        clustered[v] = size[labels[v]] > 1
        mate[v] = v if clustered[v] else -1
        if clustered[v]:
            nclustered += 1
        elif indptr[v + 1] - indptr[v] <= 1 and np.float64(vwgt[v]) <= half:
            ncand += 1
    if ncand < 2:
        return nclustered
    cand = np.empty(ncand, dtype=np.int64)
    hub = np.empty(ncand, dtype=np.int64)
    w = np.empty(ncand, dtype=np.float64)
    i = 0
    for v in range(n):
        if not clustered[v] and indptr[v + 1] - indptr[v] <= 1 and np.float64(vwgt[v]) <= half:
            cand[i] = v
            w[i] = np.float64(vwgt[v])
            if indptr[v + 1] > indptr[v]:
                hub[i] = indices[indptr[v]]
            else:
                hub[i] = n + block[v] if block.shape[0] else n
            i += 1
    # cand is in id order: by (weight, id), then by (hub, weight, id)
    order = then_by_small_key(argsort_stable(w), hub, n + max(nblocks, 1))
    # the whole-array steps' arithmetic, step for step (a sequential cumulative sum, then
    # the weight before each member within its hub), so that runs split at the same places
    cum = np.empty(ncand, dtype=np.float64)
    total = 0.0
    for j in range(ncand):
        total += w[order[j]]
        cum[j] = total
    first = 0
    start = 0
    prev_run = np.int64(0)
    run_start = np.empty(ncand, dtype=np.int64)
    run_size = np.zeros(ncand, dtype=np.int64)
    for j in range(ncand):
        o = order[j]
        new_hub = j == 0 or hub[o] != hub[order[j - 1]]
        if new_hub:
            first = j
        wf = w[order[first]]
        before = cum[j] - w[o] - (cum[first] - wf)
        run = np.int64(np.floor(before / half))
        if new_hub or run != prev_run:
            start = j
        prev_run = run
        grouped[cand[o]] = n + cand[order[start]]
        run_start[j] = start
        run_size[start] += 1
    for j in range(ncand):
        if run_size[run_start[j]] > 1:
            mate[cand[order[j]]] = cand[order[j]]
    return nclustered


@njit(cache=True)
def pair_labels(labels, mate, clustered):
    """Gives each pair that two-hop pairing made of singletons (mate[v] >= 0, v not its own
    mate) the fresh label 2n + its smaller id, in place; returns how many vertices were not
    clustered by label propagation but are now in a group or pair."""
    n = labels.shape[0]
    joined = 0
    for v in range(n):
        m = mate[v]
        if m >= 0 and m != v:
            labels[v] = 2 * n + min(v, m)
            joined += 1
        elif m == v and not clustered[v]:
            joined += 1                  # grouped with other leaves
    return joined
