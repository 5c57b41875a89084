"""Partition quality measures: edge cut, block weights, balance bound, imbalance, communication volume."""
from __future__ import annotations

import math

import numpy as np


def max_block_weight(total_vwgt, k, eps):
    """Lmax = (1 + eps) * ceil(W / k), the KaHIP/KaMinPar balance bound (floored for integer weights)."""
    if isinstance(total_vwgt, (int, np.integer)):
        return int(math.floor((1.0 + eps) * math.ceil(total_vwgt / k) + 1e-9))
    return (1.0 + eps) * math.ceil(total_vwgt / k)


def infeasibility_proof(vwgt, k, lmax):
    """Why no k-way partition with every block <= lmax can exist, or None when none of the
    simple proofs applies (it may still be infeasible: bin packing is NP-hard).

    Proofs: a vertex heavier than lmax; more than k vertices heavier than lmax / 2 (no two of
    them fit together, so each needs a block of its own).
    """
    vw = np.asarray(vwgt)
    if vw.shape[0] == 0:
        return None
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
    xp = be.xp
    parts = be.to_device(parts)
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cut = graph.ewgt[parts[rows] != parts[graph.indices]].sum().item()
    return cut // 2 if graph.ewgt.dtype.kind in "iu" else cut / 2


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


def is_balanced(graph, parts, k, eps):
    """True when every block weight is <= max_block_weight(W, k, eps)."""
    bw = block_weights(graph, parts, k)
    return bool((bw <= max_block_weight(graph.total_vwgt, k, eps)).all().item())
