"""A level's pairing bookkeeping: the weight cap on pairs and the coarse ids of a pairing or
of cluster labels; on the CPU as compiled passes on the threads.

On delaunay 2^20 the whole-array versions (hierarchy.drop_heavy_pairs plus a count of the
matched vertices, contract.mapping_from_matching) took ~40 ms of the ~1 s coarsening, in
about ten passes over the vertices with temporaries; each is one or three passes here. The whole-array
versions stay the GPU's formulation, and tests hold the two equal.
"""
from __future__ import annotations

import numpy as np

from numba import prange

from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from ..threads import PRANGE_ONLY


# Vertices per chunk of the passes below, on the threads from two chunks up (the data fix the
# chunks, so the output is the same for any number of threads). Delaunay 2^20, 2 threads:
# the two passes took 24 ms of the coarsening on one thread.
PASS_CHUNK = 1 << 16
# Labels up to this many times the vertex count are counted in an array of that size rather
# than sorted: clustering's labels lie below 3 n. R-MAT 2^20's or rgg 2^20's first level (1M
# labels): np.unique with its inverse took 10-30 ms, one thread (a sort).
LABELS_COUNTED = 4


def drop_heavy_pairs_host(vwgt, mate, cap):
    """(mate with every pair heavier than ``cap`` unpaired (a new int64 array), number of
    paired vertices left): hierarchy.drop_heavy_pairs and its count, on host arrays."""
    out = np.empty(mate.shape[0], dtype=np.int64)   # numpy's allocation: huge pages
    return out, int(_drop_heavy_kernel(vwgt, mate, float(cap), out, PASS_CHUNK))


@njit(cache=True, internal=True)
def _drop_heavy_chunk(c, chunk, vwgt, mate, cap, out):
    # the same comparison as the whole-array version: the pair's summed weight (in vwgt's
    # dtype) against the float cap
    paired = 0
    n = mate.shape[0]
    stop = min(n, (c + 1) * chunk)
    for v in range(c * chunk, stop):
        if v + PREFETCH_DISTANCE < stop and mate[v + PREFETCH_DISTANCE] >= 0:
            prefetch(vwgt, mate[v + PREFETCH_DISTANCE])
        p = mate[v]
        if p >= 0 and vwgt[v] + vwgt[p] > cap:
            p = -1
        out[v] = p
        paired += p >= 0
    return paired


@njit(cache=True, parallel=PRANGE_ONLY)
def _drop_heavy_kernel(vwgt, mate, cap, out, chunk):
    chunks = (mate.shape[0] + chunk - 1) // chunk
    counts = np.zeros(max(chunks, 1), dtype=np.int64)
    if chunks > 1:
        for c in prange(chunks):
            counts[c] = _drop_heavy_chunk(np.int64(c), chunk, vwgt, mate, cap, out)
    elif chunks == 1:
        counts[0] = _drop_heavy_chunk(0, chunk, vwgt, mate, cap, out)
    return counts.sum()


def mapping_from_matching_host(mate):
    """contract.mapping_from_matching on a host mate array: (mapping int64, n_coarse)."""
    mapping = np.empty(mate.shape[0], dtype=np.int64)
    return mapping, int(_leader_mapping_kernel(np.ascontiguousarray(mate), mapping, PASS_CHUNK))


@njit(cache=True, internal=True)
def _leads(v, mate):
    """v leads its pair when it is the smaller end (or unpaired)."""
    p = mate[v]
    return p < 0 or p > v


@njit(cache=True, parallel=PRANGE_ONLY)
def _leader_mapping_kernel(mate, mapping, chunk):
    # leaders are numbered in id order (each chunk's count, then its offset); each leader
    # writes its id to the other end of its pair too
    n = mate.shape[0]
    if n <= chunk:                  # one chunk: no thread pool (initial partitioning's small graphs)
        nc = 0
        for v in range(n):
            if _leads(v, mate):
                mapping[v] = nc
                nc += 1
            else:
                mapping[v] = mapping[mate[v]]
        return nc
    chunks = (n + chunk - 1) // chunk
    first = np.zeros(chunks + 1, dtype=np.int64)
    for c in prange(chunks):
        leaders = 0
        for v in range(c * chunk, min(n, (c + 1) * chunk)):
            leaders += _leads(v, mate)
        first[c + 1] = leaders
    for c in range(chunks):
        first[c + 1] += first[c]
    for c in prange(chunks):
        nc = first[c]
        for v in range(c * chunk, min(n, (c + 1) * chunk)):
            if _leads(v, mate):
                mapping[v] = nc
                if mate[v] >= 0:
                    mapping[mate[v]] = nc    # the follower: only its leader writes it
                nc += 1
    return first[chunks]


def mapping_from_matching(mate, backend):
    """Coarse id of every fine vertex from a pairing ``mate`` (-1 = unpaired).

    Each pair (v, mate[v]) and each unpaired vertex becomes one coarse vertex. Coarse ids
    are numbered in the order of the group's smallest fine id, so the result depends only
    on ``mate`` (deterministic, same on CPU and GPU). ``mate`` need not pair neighbours
    (two-hop pairs are fine); it must be symmetric. Returns (mapping int64, n_coarse).
    """
    be = backend
    xp = be.xp
    mate = be.to_device(mate).astype(xp.int64, copy=False)
    if not be.is_gpu:   # the same ids in one compiled pass
        return mapping_from_matching_host(mate)
    return mapping_from_matching_xp(mate, be)


def mapping_from_matching_xp(mate, be):
    """``mapping_from_matching`` as whole-array operations (the GPU's formulation)."""
    xp = be.xp
    n = mate.shape[0]
    v = xp.arange(n, dtype=xp.int64)
    leader = xp.where(mate >= 0, xp.minimum(v, mate), v)
    is_leader = leader == v
    coarse_of_leader = be.exclusive_cumsum(is_leader.astype(xp.int64))
    mapping = coarse_of_leader[leader]
    n_coarse = int(coarse_of_leader[-1].item()) if n else 0
    return mapping, n_coarse


def mapping_from_labels(labels, backend):
    """Coarse id of every fine vertex from arbitrary cluster labels (ids ordered by label value).

    Returns (mapping int64, n_coarse). On the CPU, labels in 0..LABELS_COUNTED x n are
    counted (mapping_by_counting); others, and the GPU's, are sorted (unique).
    """
    xp = backend.xp
    labels = backend.to_device(labels)
    if labels.shape[0] == 0:
        return xp.zeros(0, dtype=xp.int64), 0
    if not backend.is_gpu and labels.dtype.kind in "iu":
        low, high = int(labels.min()), int(labels.max())
        if low >= 0 and high < LABELS_COUNTED * labels.shape[0]:
            return mapping_by_counting(labels, high + 1)
    uniq, inverse = xp.unique(labels, return_inverse=True)
    return inverse.reshape(-1).astype(xp.int64), int(uniq.shape[0])


def mapping_by_counting(labels, bound):
    """mapping_from_labels for host labels in 0..bound-1, by counting: (mapping int64, n_coarse)."""
    id_of = np.zeros(bound + 1, dtype=np.int64)
    mapping = np.empty(labels.shape[0], dtype=np.int64)
    return mapping, int(_mapping_by_counting_kernel(labels, id_of, mapping, PASS_CHUNK))


@njit(cache=True, parallel=PRANGE_ONLY)
def _mapping_by_counting_kernel(labels, id_of, mapping, chunk):
    """Mark the labels in use, number them in label order (a serial prefix over the label
    range), then map every vertex; the marking and mapping passes in chunks on the threads
    (every thread writes 1 into a mark: the same for any number of them). Returns n_coarse."""
    n = labels.shape[0]
    bound = id_of.shape[0] - 1
    chunks = (n + chunk - 1) // chunk
    if chunks >= 2:
        for c in prange(chunks):
            for v in range(c * chunk, min(n, (c + 1) * chunk)):
                id_of[labels[v]] = 1
    else:
        for v in range(n):
            id_of[labels[v]] = 1
    total = 0
    for lab in range(bound):
        used = id_of[lab]
        id_of[lab] = total
        total += used
    if chunks >= 2:
        for c in prange(chunks):
            for v in range(c * chunk, min(n, (c + 1) * chunk)):
                mapping[v] = id_of[labels[v]]
    else:
        for v in range(n):
            mapping[v] = id_of[labels[v]]
    return total
