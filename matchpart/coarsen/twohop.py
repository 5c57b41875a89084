"""Two-hop pairing: unmatched vertices that share a neighbour are paired (METIS's 2-hop matching).

A maximal matching on a star-like graph leaves most leaves unmatched (every neighbour of a
leaf is taken), so the hierarchy would stall. Pairing vertices that hang off the same hub
lets it keep shrinking without touching the cut structure much: two leaves of one hub end
up in the same block anyway in any good partition.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..backend import rng as _rng
from ..chunks import bucket_starts
from ..jit import njit
from ..sorting import argsort_stable, then_by_small_key
from ..threads import PRANGE_ONLY

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
    on the threads, grouping by buckets of hub ids), "xp" (whole-array, any backend) or "auto"
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
        _two_hop_kernel(graph.indptr, graph.indices, graph.ewgt, graph.vwgt, mate, float(max_vertex_weight),
                        np.uint64(_rng.stream_key(seed, HUB_STREAM)), blk, CHUNK, BUCKET_HUBS)
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



# Vertices per chunk of the kernel's passes over the vertices, and free vertices per chunk of
# its passes over them, on the threads from two chunks up ...
CHUNK = 1 << 14
# ... and hub ids per bucket of the grouping (the hubs, real and virtual, in ranges of this
# many ids; each bucket is sorted on its own). All fixed by the data, so the pairs are the
# same for any number of threads. Delaunay 2^20's first level (105k free vertices), one
# thread: 27.6 ms before, when a counting sort by hub ran over 2^20 buckets at once.
BUCKET_HUBS = 1 << 10


@njit(cache=True, parallel=PRANGE_ONLY)
def _two_hop_kernel(indptr, indices, ewgt, vwgt, mate, cap, key, block, chunk, bucket_hubs):
    # the whole-array version step by step: hub = the neighbour across the first entry of
    # maximal (weight, hash >> 1) (comparing weights is comparing their dense ranks), virtual
    # hub n + block for an isolated vertex; then the free vertices in order of (hub, weight,
    # id), paired consecutively within a hub. The order: the free vertices in id order are
    # dealt to buckets of hub ranges (stable, per chunk), and each bucket sorted stably by
    # weight, then by hub (a counting sort over its range). mate is read before any write.
    n = mate.shape[0]
    nblocks = 1
    for v in range(block.shape[0]):
        nblocks = max(nblocks, block[v] + 1)
    chunks = (n + chunk - 1) // chunk
    threaded = chunks > 1
    first = np.zeros(chunks + 1, dtype=np.int64)      # free vertices before each chunk
    if threaded:
        for c in prange(chunks):
            first[c + 1] = _count_free(np.int64(c), chunk, mate)
    else:
        first[1] = _count_free(0, chunk, mate)
    for c in range(chunks):
        first[c + 1] += first[c]
    free = first[chunks]
    if free < 2:
        return
    ids = np.empty(free, dtype=np.int64)
    hub = np.empty(free, dtype=np.int64)
    if threaded:
        for c in prange(chunks):
            _choose_hubs(np.int64(c), chunk, indptr, indices, ewgt, mate, key, block, first, ids, hub)
    else:
        _choose_hubs(0, chunk, indptr, indices, ewgt, mate, key, block, first, ids, hub)
    buckets = (n + nblocks + bucket_hubs - 1) // bucket_hubs
    fchunks = (free + chunk - 1) // chunk
    at = np.zeros((fchunks, buckets), dtype=np.int64)  # per free chunk and bucket: count, then place
    if threaded:
        for c in prange(fchunks):
            _count_buckets(np.int64(c), chunk, bucket_hubs, hub, at)
    else:
        for c in range(fchunks):
            _count_buckets(c, chunk, bucket_hubs, hub, at)
    start = bucket_starts(at)
    dealt = np.empty(free, dtype=np.int64)            # positions in ids, bucket by bucket, id order
    if threaded:
        for c in prange(fchunks):
            _deal(np.int64(c), chunk, bucket_hubs, hub, at, dealt)
        for b in prange(buckets):
            _pair_bucket(np.int64(b), start, bucket_hubs, dealt, ids, hub, vwgt, cap, mate)
    else:
        for c in range(fchunks):
            _deal(c, chunk, bucket_hubs, hub, at, dealt)
        for b in range(buckets):
            _pair_bucket(b, start, bucket_hubs, dealt, ids, hub, vwgt, cap, mate)


@njit(cache=True, internal=True)
def _count_free(c, chunk, mate):
    count = 0
    for v in range(c * chunk, min(mate.shape[0], (c + 1) * chunk)):
        count += mate[v] < 0
    return count


@njit(cache=True, internal=True)
def _choose_hubs(c, chunk, indptr, indices, ewgt, mate, key, block, first, ids, hub):
    """ids and hubs of the free vertices of chunk c, at their places from first[c] on."""
    n = mate.shape[0]
    i = first[c]
    for v in range(c * chunk, min(n, (c + 1) * chunk)):
        if mate[v] >= 0:
            continue
        ids[i] = v
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


@njit(cache=True, internal=True)
def _count_buckets(c, chunk, bucket_hubs, hub, at):
    for i in range(c * chunk, min(hub.shape[0], (c + 1) * chunk)):
        at[c, hub[i] // bucket_hubs] += 1


@njit(cache=True, internal=True)
def _deal(c, chunk, bucket_hubs, hub, at, dealt):
    for i in range(c * chunk, min(hub.shape[0], (c + 1) * chunk)):
        b = hub[i] // bucket_hubs
        dealt[at[c, b]] = i
        at[c, b] += 1


@njit(cache=True, internal=True)
def _pair_bucket(b, start, bucket_hubs, dealt, ids, hub, vwgt, cap, mate):
    """Pair the free vertices of bucket b (dealt[start[b]:start[b + 1]], in id order): stably
    by weight, then by hub, each hub's group consecutively."""
    lo, hi = start[b], start[b + 1]
    size = hi - lo
    if size < 2:
        return
    weight = np.empty(size, dtype=np.float64)
    for t in range(size):
        weight[t] = vwgt[ids[dealt[lo + t]]]
    local = np.empty(size, dtype=np.int64)
    for t in range(size):
        local[t] = hub[dealt[lo + t]] - b * bucket_hubs
    order = then_by_small_key(argsort_stable(weight), local, bucket_hubs)
    s = 0
    while s < size:
        e = s + 1
        while e < size and local[order[e]] == local[order[s]]:
            e += 1
        for t in range(s, e - 1, 2):
            u, w = ids[dealt[lo + order[t]]], ids[dealt[lo + order[t + 1]]]
            if vwgt[u] + vwgt[w] <= cap:
                mate[u] = w
                mate[w] = u
        s = e
