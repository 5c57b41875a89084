"""Partition quality measures: edge cut, block weights, balance bound, imbalance, communication volume."""
from __future__ import annotations

import math

import numpy as np


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
