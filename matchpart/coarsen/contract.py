"""Contraction: a fine-to-coarse mapping turns a graph into its coarse graph C = P^T A P."""
from __future__ import annotations

from ..graph import Graph


def sum_by_index(be, index, values, size):
    """out[i] = sum of values[index == i], exact for int64 on both backends."""
    out = be.xp.zeros(size, dtype=values.dtype)
    return be.scatter_add(out, index, values)


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

    Returns (mapping int64, n_coarse).
    """
    xp = backend.xp
    labels = backend.to_device(labels)
    if labels.shape[0] == 0:
        return xp.zeros(0, dtype=xp.int64), 0
    uniq, inverse = xp.unique(labels, return_inverse=True)
    return inverse.reshape(-1).astype(xp.int64), int(uniq.shape[0])


def contract(graph, mapping, n_coarse):
    """The coarse graph of ``graph`` under ``mapping`` (fine vertex -> coarse id in 0..n_coarse-1).

    Coarse edge weight between a and b = total weight of fine edges between their groups
    (C = P^T A P with the 0/1 aggregation matrix P, diagonal dropped); coarse vertex weight
    = summed fine vertex weights. Computed as a sort of the mapped (row, col) keys plus a
    segmented sum, which is exact for int64 weights on both numpy and cupy (cupyx sparse
    matrices have no integer dtypes). Returns a Graph on the same backend, int32 indices,
    sorted rows.
    """
    be = graph.backend
    xp = be.xp
    mapping = be.to_device(mapping).astype(xp.int64, copy=False)
    nc = int(n_coarse)
    vwgt = sum_by_index(be, mapping, graph.vwgt, nc)

    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cr = mapping[rows]
    cc = mapping[graph.indices.astype(xp.int64)]
    off_diagonal = cr != cc
    cr, cc, w = cr[off_diagonal], cc[off_diagonal], graph.ewgt[off_diagonal]
    key = cr * max(nc, 1) + cc
    order = xp.argsort(key, kind="stable") if xp.__name__ == "numpy" else xp.argsort(key)
    key, w = key[order], w[order]
    if key.shape[0]:
        starts = xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), key[1:] != key[:-1]]))
        bounds = xp.concatenate([starts, xp.asarray([key.shape[0]], dtype=starts.dtype)])
        ewgt = be.segment_sum(w, bounds)
        ukey = key[starts]
    else:
        ewgt = w
        ukey = key
    crow = ukey // max(nc, 1)
    ccol = (ukey % max(nc, 1)).astype(xp.int32 if nc < 2**31 - 1 else xp.int64)
    if be.is_gpu:  # crow is sorted: row starts by binary search (CuPy's bincount syncs twice
        # and raises on an empty input, e.g. a level whose edges all contract)
        indptr = xp.searchsorted(crow, xp.arange(nc + 1, dtype=xp.int64))
    else:
        indptr = be.exclusive_cumsum(xp.bincount(crow, minlength=nc).astype(xp.int64))
    return Graph._trusted(indptr, ccol, ewgt.astype(graph.ewgt.dtype, copy=False), vwgt, be)
