"""Partition quality measures: edge cut, block weights, balance bound, imbalance, communication volume;
and the fill of an ordering (``fill``, computed in order/fill.py)."""
from __future__ import annotations

import math

import numpy as np

from .jit import njit


def max_block_weight(total_vwgt, k, eps):
    """Lmax = (1 + eps) * ceil(W / k), the KaHIP/KaMinPar balance bound (floored for integer weights)."""
    if isinstance(total_vwgt, (int, np.integer)):
        return int(math.floor((1.0 + eps) * math.ceil(total_vwgt / k) + 1e-9))
    return (1.0 + eps) * math.ceil(total_vwgt / k)


def block_bounds(total_vwgt, k, eps, target_weights=None):
    """Per-block weight bounds (numpy array of k): (1 + eps) * ceil(t_i * W).

    Without target weights every t_i = 1/k, which is max_block_weight for every block.
    ``target_weights``: k fractions >= 0 summing to 1 (METIS's tpwgts). Integer total
    weights give integer (floored) bounds, as max_block_weight does.
    """
    integral = isinstance(total_vwgt, (int, np.integer))
    if target_weights is None:
        lmax = max_block_weight(total_vwgt, k, eps)
        return np.full(k, lmax, dtype=np.int64 if integral else np.float64)
    t = check_target_weights(target_weights, k)
    # ceil with a tolerance for the float product (0.25 * 8 must give 2, not 3)
    ideal = [math.ceil(float(x) * total_vwgt - 1e-9 * max(1.0, float(total_vwgt))) for x in t]
    if integral:
        return np.array([int(math.floor((1.0 + eps) * c + 1e-9)) for c in ideal], dtype=np.int64)
    return np.array([(1.0 + eps) * c for c in ideal], dtype=np.float64)


def check_target_weights(target_weights, k):
    """Target weights as a float array of k fractions >= 0 summing to 1; ValueError otherwise."""
    try:
        t = np.asarray(target_weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"target_weights must be {k} numbers, got {target_weights!r}") from None
    if t.ndim != 1 or t.shape[0] != k:
        raise ValueError(f"target_weights must have one fraction per block (k={k}), got {t.shape[0] if t.ndim == 1 else t.shape}")
    if not np.isfinite(t).all() or (t < 0).any():
        raise ValueError("target_weights must be finite fractions >= 0")
    if abs(float(t.sum()) - 1.0) > 1e-6:
        raise ValueError(f"target_weights must sum to 1 (like METIS's tpwgts), got {float(t.sum()):g}")
    return t


def infeasibility_proof(vwgt, k, lmax):
    """Why no k-way partition with every block <= lmax can exist, or None when none of the
    simple proofs applies (it may still be infeasible: bin packing is NP-hard).

    Proofs: a vertex heavier than lmax; more than k vertices heavier than lmax / 2 (no two of
    them fit together, so each needs a block of its own).
    """
    vw = np.asarray(vwgt)
    if vw.shape[0] == 0:
        return None
    lmax = np.max(lmax)          # per-block bounds: no vertex may exceed the largest one
    heaviest = vw.max()
    if heaviest > lmax:
        return f"vertex weight {heaviest} exceeds the block bound Lmax={lmax}"
    halves = int((vw > lmax / 2).sum())
    if halves > k:
        return (f"{halves} vertices weigh more than Lmax/2 = {lmax / 2:g}, no two of them fit in one "
                f"block, and there are only k={k} blocks")
    return None


def block_weights(graph, parts, k):
    """Weight of each block (array of length k on the graph's backend)."""
    be = graph.backend
    xp = be.xp
    parts = be.to_device(parts)
    w = xp.zeros(k, dtype=graph.vwgt.dtype)
    return be.scatter_add(w, parts.astype(xp.int64), graph.vwgt)


def edge_cut(graph, parts):
    """Total weight of edges whose endpoints are in different blocks (each edge once)."""
    be = graph.backend
    parts = be.to_device(parts)
    if be.is_gpu:
        rows = be.row_ids(graph.indptr, graph.indices.shape[0])
        cut = graph.ewgt[parts[rows] != parts[graph.indices]].sum().item()
    else:
        # one pass without the O(m) row-id and mask arrays of the whole-array form (a
        # millisecond of a 25 ms partition of 4elt); sums in the weights' dtype as .sum() does
        cut = rows_cut_weight(graph.indptr, graph.indices, graph.ewgt, parts)
    return cut // 2 if graph.ewgt.dtype.kind in "iu" else cut / 2


def rows_cut_weight(indptr, indices, ewgt, parts):
    """Host CSR rows: the weight of their entries whose two ends are in different blocks
    (twice the cut for a whole graph), in the weights' type (a Python int or float).
    ``parts`` covers every column id (a distributed rank passes its own and ghost blocks)."""
    return _rows_cut_weight(indptr, indices, ewgt, parts) if indices.shape[0] else 0


@njit(cache=True)
def _rows_cut_weight(indptr, indices, ewgt, parts):
    total = ewgt[0] * 0          # the weights' dtype (callers pass m > 0)
    for v in range(indptr.shape[0] - 1):
        pv = parts[v]
        for e in range(indptr[v], indptr[v + 1]):
            if parts[indices[e]] != pv:
                total += ewgt[e]
    return total


def imbalance(graph, parts, k):
    """max block weight / ceil(W / k) - 1 (0 is perfect; <= eps means balanced)."""
    if graph.total_vwgt == 0:
        return 0.0
    bw = block_weights(graph, parts, k)
    return float(bw.max().item()) / math.ceil(graph.total_vwgt / k) - 1.0


def communication_volume(graph, parts):
    """Sum over vertices of the number of other blocks among its neighbours."""
    be = graph.backend
    xp = be.xp
    parts = be.to_device(parts).astype(xp.int64)
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    other = parts[graph.indices] != parts[rows]
    # distinct (vertex, block) pairs with block != own
    k = int(parts.max().item()) + 1 if parts.shape[0] else 1
    keys = xp.unique(rows[other] * k + parts[graph.indices][other])
    return int(keys.shape[0])


def imbalance_from_weights(bw, total_vwgt, k, target_weights=None):
    """max over blocks of weight / ideal weight - 1 from host block weights (ideal ceil(t_i W),
    t_i = 1/k without targets; as imbalance() for equal targets)."""
    if not total_vwgt:
        return 0.0
    bw = np.asarray(bw, dtype=np.float64)
    if target_weights is None:
        return float(bw.max()) / math.ceil(total_vwgt / k) - 1.0
    ideal = np.array([math.ceil(float(t) * total_vwgt - 1e-9 * max(1.0, float(total_vwgt)))
                      for t in check_target_weights(target_weights, k)], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ideal > 0, bw / np.maximum(ideal, 1e-300), np.where(bw > 0, np.inf, 1.0))
    return float(ratio.max()) - 1.0


def is_balanced(graph, parts, k, eps):
    """True when every block weight is <= max_block_weight(W, k, eps)."""
    bw = block_weights(graph, parts, k)
    return bool((bw <= max_block_weight(graph.total_vwgt, k, eps)).all().item())


def _host_csr(graph, parts):
    """Host copies (rows, indices, parts) for the reporting measures below (not a hot path)."""
    h = graph.backend.to_host
    indptr = np.asarray(h(graph.indptr), dtype=np.int64)
    indices = np.asarray(h(graph.indices), dtype=np.int64)
    rows = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(indptr))
    return rows, indices, np.asarray(h(graph.backend.to_device(parts)), dtype=np.int64)


def communication_volumes(graph, parts, k):
    """Per block: the sum over its vertices of the number of other blocks among their neighbours
    (the data a block sends when every vertex is sent once to each neighbouring block)."""
    rows, indices, p = _host_csr(graph, parts)
    other = p[indices] != p[rows]
    pairs = np.unique(rows[other] * k + p[indices][other])  # distinct (vertex, foreign block)
    return np.bincount(p[pairs // k], minlength=k)


def boundary_vertices(graph, parts):
    """Number of vertices with at least one neighbour in another block."""
    rows, indices, p = _host_csr(graph, parts)
    return int(np.unique(rows[p[indices] != p[rows]]).shape[0])


def pieces_per_block(graph, parts, k):
    """Connected components of the subgraph each block induces (0 for an empty block).

    The components of the graph without its cut edges each lie inside one block.
    """
    rows, indices, p = _host_csr(graph, parts)
    keep = (p[rows] == p[indices]) & (rows < indices)
    root = component_roots(graph.n, rows[keep], indices[keep])
    return np.bincount(p[np.flatnonzero(root == np.arange(graph.n))], minlength=k)


def component_roots(n, u, v):
    """For each of n vertices, the smallest vertex of its connected component in the graph of
    edges (u[i], v[i]).

    numpy only (scipy's connected_components would import scipy.sparse, a fifth of the CLI's
    start-up): every edge hooks the larger of its two roots under the smaller, then pointer
    jumping makes every vertex point at its root; edges inside one tree drop out. Each round
    joins at least one pair of trees and in practice most of them, so a few rounds suffice.
    """
    parent = np.arange(n)
    while u.shape[0]:
        ru, rv = parent[u], parent[v]
        apart = ru != rv
        u, v, ru, rv = u[apart], v[apart], ru[apart], rv[apart]
        parent[np.maximum(ru, rv)] = np.minimum(ru, rv)   # parent[x] <= x: always a forest
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
    return parent


def summary(g, parts, k, eps=0.03, target_weights=None):
    """Everything the CLI and ``compare`` report about a partition of Graph ``g``, as a
    JSON-friendly dict; with ``target_weights`` the bounds and the imbalance are per block
    (block_bounds, imbalance_from_weights).
    """
    k = int(k)
    bounds = block_bounds(g.total_vwgt, k, eps, target_weights)
    lmax = bounds if target_weights is not None else bounds[0]
    bw = np.asarray(g.backend.to_host(block_weights(g, parts, k)))
    volumes = communication_volumes(g, parts, k)
    _, _, p = _host_csr(g, parts)
    pieces = pieces_per_block(g, parts, k)
    return {
        "n": g.n, "m": g.m, "k": k, "eps": float(eps),
        "cut": _plain(edge_cut(g, parts)),
        "imbalance": imbalance_from_weights(bw, g.total_vwgt, k, target_weights),
        "feasible": bool((bw <= bounds).all()),
        "max_block_weight": _plain(lmax),
        "block_weights": [_plain(w) for w in bw],
        "total_comm_volume": int(volumes.sum()),
        "max_comm_volume": int(volumes.max()) if k else 0,
        "boundary_vertices": boundary_vertices(g, parts),
        "empty_blocks": int(k - np.unique(p).shape[0]),
        "pieces": [int(x) for x in pieces],
        "disconnected_blocks": int((pieces > 1).sum()),
    }


def _plain(x):
    """A Python number (or list) from numpy scalars/arrays, for JSON."""
    if isinstance(x, np.ndarray):
        return [_plain(v) for v in x.tolist()]
    return x.item() if hasattr(x, "item") else x


def fill(graph, perm):
    """nnz of the Cholesky factor L and the flop count of ordering ``perm`` (perm[i]: the vertex
    eliminated i-th, as pymetis.nested_dissection's perm): a FillResult (``nnz``, ``flops``,
    column counts, elimination tree); see matchpart.order.fill.fill."""
    from .order.fill import fill as _fill
    return _fill(graph, perm)
