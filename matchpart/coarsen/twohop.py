"""Two-hop pairing: unmatched vertices that share a neighbour are paired (METIS's 2-hop matching).

A maximal matching on a star-like graph leaves most leaves unmatched (every neighbour of a
leaf is taken), so the hierarchy would stall. Pairing vertices that hang off the same hub
lets it keep shrinking without touching the cut structure much: two leaves of one hub end
up in the same block anyway in any good partition.
"""
from __future__ import annotations

import numpy as np

from ..backend import rng as _rng
from ..jit import njit
from ..sorting import argsort_stable, then_by_small_key

# Hash-RNG stream for the tie-break between equally heavy hub candidates.
HUB_STREAM = 0x2409


def two_hop_pairs(graph, mate, max_vertex_weight, *, seed=0, block=None, method="auto"):
    """Extend ``mate`` by pairing unmatched vertices with a common heaviest neighbour.

    Every unmatched vertex picks its heaviest incident edge's neighbour as its hub (ties:
    a hash of (seed, entry) so hubs spread evenly); isolated vertices share one virtual
    hub. Within each hub's group, vertices are sorted by weight and paired consecutively
    (lightest first, so pairs stay small); a pair heavier than ``max_vertex_weight`` is
    left unpaired. ``block`` (optional, per vertex) gives isolated vertices one virtual hub
    per block, so with a graph holding only intra-block edges every pair stays in a block.
    Returns a new mate array (pairs need not be edges). ``method``: "kernel" (CPU, compiled,
    one pass plus a counting sort by hub), "xp" (whole-array, any backend) or "auto"
    (kernel on the CPU); both give the same pairs.
    """
    be = graph.backend
    xp = be.xp
    n = graph.n
    mate = be.to_device(mate).astype(xp.int64, copy=True)
    if n == 0:
        return mate
    if method == "auto":
        method = "xp" if be.is_gpu else "kernel"
    if method == "kernel":
        blk = np.zeros(0, dtype=np.int64) if block is None else np.asarray(block, dtype=np.int64)
        _two_hop_kernel(graph.indptr, graph.indices, graph.ewgt, graph.vwgt.astype(np.float64), mate,
                        float(max_vertex_weight), np.uint64(_rng.stream_key(seed, HUB_STREAM)), blk)
        return mate
    if method != "xp":
        raise ValueError(f"method must be 'auto', 'kernel' or 'xp', got {method!r}")
    free = mate < 0
    # heaviest edge per row with a random low-order tie-break packed into an int64 key
    if graph.m:
        wr = xp.unique(graph.ewgt, return_inverse=True)[1].reshape(-1).astype(xp.int64)
        key = (wr << 31) | (be.hash32(seed, HUB_STREAM, xp.arange(wr.shape[0])).astype(xp.int64) >> 1)
        best = be.segment_argmax(key, graph.indptr)
        hub = xp.where(best >= 0, graph.indices[xp.maximum(best, 0)].astype(xp.int64), n)
    else:
        hub = xp.full(n, n, dtype=xp.int64)
    if block is not None:
        hub = xp.where(hub == n, n + be.to_device(block).astype(xp.int64), hub)

    cand = xp.flatnonzero(free)
    if cand.shape[0] < 2:
        return mate
    cw = graph.vwgt[cand]
    # sort by (hub, weight, id): lexsort's last key is the primary one
    f64 = xp.float64
    order = xp.lexsort(xp.stack([cand.astype(f64), cw.astype(f64), hub[cand].astype(f64)]))
    cand, ch, cw = cand[order], hub[cand][order], cw[order]
    # position within the hub's group: index minus the group's start
    idx = xp.arange(cand.shape[0], dtype=xp.int64)
    new_group = xp.concatenate([xp.ones(1, dtype=bool), ch[1:] != ch[:-1]])
    starts = xp.flatnonzero(new_group)
    group_start = starts[xp.searchsorted(starts, idx, side="right") - 1]
    pos = idx - group_start
    # the even-positioned vertex pairs with the next one when both are in the same group
    first = idx[(pos % 2 == 0)]
    first = first[first + 1 < cand.shape[0]]
    first = first[ch[first] == ch[first + 1]]
    light = (cw[first] + cw[first + 1]) <= max_vertex_weight
    first = first[light]
    a, b = cand[first], cand[first + 1]
    mate[a] = b
    mate[b] = a
    return mate



@njit(cache=True)
def _two_hop_kernel(indptr, indices, ewgt, vwgt, mate, cap, key, block):
    # the whole-array version step by step: hub = the neighbour across the first entry of
    # maximal (weight, hash >> 1) (comparing weights is comparing their dense ranks); then
    # the free vertices in order of (hub, weight, id): a stable sort by weight of the free
    # vertices in id order, then a stable sort by hub (sorting.then_by_small_key); then
    # consecutive pairs. Plain loops and argsort_stable rather than np.argsort and slice
    # assignments, which cost seconds of compile time on the first run.
    n = mate.shape[0]
    nblocks = 1
    for v in range(block.shape[0]):
        nblocks = max(nblocks, block[v] + 1)
    virtual = n + nblocks  # hub ids n.. are virtual hubs
    free = 0
    for v in range(n):
        if mate[v] < 0:
            free += 1
    if free < 2:
        return
    ids = np.empty(free, dtype=np.int64)     # the free vertices, increasing id
    hub = np.empty(free, dtype=np.int64)
    weight = np.empty(free, dtype=np.float64)
    i = 0
    for v in range(n):
        if mate[v] >= 0:
            continue
        ids[i] = v
        weight[i] = vwgt[v]
        start, stop = indptr[v], indptr[v + 1]
        if start == stop:
            hub[i] = n + block[v] if block.shape[0] else n
        else:
            best, bw, bh = start, ewgt[start], _rng.hash32_at(start, key) >> np.uint32(1)
            for e in range(start + 1, stop):
                h = _rng.hash32_at(e, key) >> np.uint32(1)
                if ewgt[e] > bw or (ewgt[e] == bw and h > bh):
                    best, bw, bh = e, ewgt[e], h
            hub[i] = indices[best]
        i += 1
    # positions in ids by (hub, weight, id); ties of weight stay in id order
    cand = then_by_small_key(argsort_stable(weight), hub, virtual)
    lo = 0
    while lo < free:
        hi = lo + 1
        while hi < free and hub[cand[hi]] == hub[cand[lo]]:
            hi += 1
        for t in range(lo, hi - 1, 2):
            a, b = ids[cand[t]], ids[cand[t + 1]]
            if vwgt[a] + vwgt[b] <= cap:
                mate[a] = b
                mate[b] = a
        lo = hi
