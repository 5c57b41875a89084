"""The share of a graph's edges that contracting a matching would keep, estimated from a sample
of the coarse vertices before contracting (hierarchy.py then skips a contraction that the
cluster fallback would throw away).

The coarse vertices sampled are those whose smaller member is a multiple of ``stride``; for
them the estimate counts the distinct coarse neighbours (what the coarse graph stores) and
the fine entries of their members (what the fine graph stores): the ratio of the two sums is
the share the whole contraction keeps, up to sampling error. Both formulations (compiled on
the CPU, whole-array on any backend) count the same integers.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit

# At least one coarse vertex in SAMPLE_STRIDE is sampled (hierarchy.py samples fewer on large
# graphs): the estimate then reads at most ~1/16 of the entries.
SAMPLE_STRIDE = 16


def sampled_edges_kept(graph, mate, mapping, n_coarse, stride=SAMPLE_STRIDE):
    """(distinct coarse entries, fine entries, coarse vertices) over the sampled coarse
    vertices of contracting ``graph`` by the pairing ``mate`` (mapping: its coarse ids)."""
    be = graph.backend
    if not be.is_gpu:
        return tuple(int(x) for x in _sampled_kept_kernel(
            graph.indptr, graph.indices, np.ascontiguousarray(be.to_host(mate), dtype=np.int64),
            np.ascontiguousarray(be.to_host(mapping), dtype=np.int64), int(n_coarse), int(stride)))
    return sampled_edges_kept_xp(graph, mate, mapping, n_coarse, stride)


def sampled_edges_kept_xp(graph, mate, mapping, n_coarse, stride=SAMPLE_STRIDE):
    """sampled_edges_kept as whole-array operations over all entries (the GPU's formulation)."""
    be = graph.backend
    xp = be.xp
    mate = be.to_device(mate).astype(xp.int64, copy=False)
    mapping = be.to_device(mapping).astype(xp.int64, copy=False)
    ids = xp.arange(graph.n, dtype=xp.int64)
    smaller = xp.where((mate >= 0) & (mate < ids), mate, ids)
    sampled = smaller % stride == 0
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    in_sample = sampled[rows]
    c = mapping[rows][in_sample]
    d = mapping[graph.indices.astype(xp.int64)][in_sample]
    keys = c[c != d] * max(int(n_coarse), 1) + d[c != d]
    distinct = int(xp.unique(keys).shape[0])
    return distinct, int(in_sample.sum()), int((sampled & (smaller == ids)).sum())


@njit(cache=True)
def _sampled_kept_kernel(indptr, indices, mate, mapping, nc, stride):
    mark = np.full(nc, -1, dtype=np.int64)    # mark[d] = the sampled coarse vertex that saw d
    distinct = 0
    entries = 0
    samples = 0
    for v in range(0, mate.shape[0], stride):
        p = mate[v]
        if 0 <= p < v:                        # the pair's smaller member is p, not sampled here
            continue
        c = mapping[v]
        samples += 1
        for u in (v, p):
            if u < 0:
                continue
            for e in range(indptr[u], indptr[u + 1]):
                entries += 1
                d = mapping[indices[e]]
                if d != c and mark[d] != c:
                    mark[d] = c
                    distinct += 1
    return distinct, entries, samples
