"""Partition quality measures: edge cut, block weights, balance bound, imbalance, communication volume;
and the fill of an ordering (``fill``, computed in order/fill.py)."""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from .jit import njit
from .threads import PRANGE_ONLY


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


def constraint_bounds(totals, k, eps, target_weights=None):
    """Per-block, per-constraint bounds ((k, c) numpy array): column j is block_bounds of
    constraint j's total with its tolerance eps[j] and, when ``target_weights`` is k x c, its
    own column of fractions (k fractions: the same for every constraint)."""
    c = len(totals)
    t = None if target_weights is None else check_constraint_targets(target_weights, k, c)
    cols = [block_bounds(totals[j], k, float(eps[j]), None if t is None else t[:, j]) for j in range(c)]
    dtype = np.int64 if all(col.dtype.kind == "i" for col in cols) else np.float64
    return np.stack([col.astype(dtype) for col in cols], axis=1)


def check_constraint_targets(target_weights, k, c):
    """Target weights for c constraints as a (k, c) float array: k fractions (shared) or k x c,
    each column summing to 1; ValueError otherwise."""
    try:
        t = np.asarray(target_weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"target_weights must be {k} numbers or a {k} x {c} table, got {target_weights!r}") from None
    if t.ndim == 2 and t.shape == (k, c):
        for j in range(c):
            check_target_weights(t[:, j], k)
        return t
    if t.ndim == 2:
        raise ValueError(f"target_weights must be {k} fractions or a {k} x {c} table (one column per "
                         f"constraint), got shape {t.shape}")
    return np.repeat(check_target_weights(t, k)[:, None], c, axis=1)


def constraint_imbalance(bw, totals, k, target_weights=None):
    """Per constraint, max over blocks of weight / ideal weight - 1 (imbalance_from_weights of
    each column of the (k, c) host block weights); a list of c floats."""
    bw = np.asarray(bw)
    t = None if target_weights is None else check_constraint_targets(target_weights, k, len(totals))
    return [imbalance_from_weights(bw[:, j], totals[j], k, None if t is None else t[:, j])
            for j in range(len(totals))]


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
    """Weight of each block (array of length k on the graph's backend; (k, c) for c weights per
    vertex)."""
    be = graph.backend
    xp = be.xp
    parts = be.to_device(parts)
    if graph.vwgt.ndim == 2:
        idx = parts.astype(xp.int64)
        return xp.stack([be.scatter_add(xp.zeros(k, dtype=graph.vwgt.dtype), idx,
                                        xp.ascontiguousarray(graph.vwgt[:, j])) for j in range(graph.ncon)], axis=1)
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
    """max block weight / ceil(W / k) - 1 (0 is perfect; <= eps means balanced); with c weights
    per vertex, the largest over the constraints."""
    if graph.ncon > 1:
        bw = np.asarray(graph.backend.to_host(block_weights(graph, parts, k)))
        return max(constraint_imbalance(bw, graph.total_vwgt, k))
    if graph.total_vwgt == 0:
        return 0.0
    bw = block_weights(graph, parts, k)
    return float(bw.max().item()) / math.ceil(graph.total_vwgt / k) - 1.0


def communication_volume(graph, parts, vsize=None):
    """METIS's total communication volume: the sum over vertices of the number of other blocks
    among its neighbours, each vertex counted ``vsize[v]`` times when sizes are given (METIS's
    vsize: the data a vertex sends to each neighbouring block); an int for integer sizes."""
    be = graph.backend
    if not be.is_gpu:
        indptr, indices, p = _host_rows(graph, parts)
        k = int(p.max()) + 1 if p.shape[0] else 1
        return _weighted_total(_foreign_blocks(indptr, indices, p, k), vsize, graph.n)
    xp = be.xp
    parts = be.to_device(parts).astype(xp.int64)
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    other = parts[graph.indices] != parts[rows]
    # distinct (vertex, block) pairs with block != own
    k = int(parts.max().item()) + 1 if parts.shape[0] else 1
    keys = xp.unique(rows[other] * k + parts[graph.indices][other])
    if vsize is None:
        return int(keys.shape[0])
    per_vertex = be.to_host(be.scatter_add(xp.zeros(graph.n, dtype=xp.int64), keys // k,
                                           xp.ones(keys.shape[0], dtype=xp.int64)))
    return _weighted_total(per_vertex, vsize, graph.n)


def check_vertex_sizes(vsize, n):
    """Vertex sizes (METIS's vsize) as a host float64 array of n finite values >= 0 (all ones
    for None); ValueError naming what is wrong otherwise."""
    if vsize is None:
        return np.ones(n, dtype=np.float64)
    s = vsize.get() if hasattr(vsize, "get") and not isinstance(vsize, np.ndarray) else vsize
    try:
        s = np.asarray(s, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"vsize must be {n} numbers (one size per vertex), got {vsize!r}") from None
    if s.ndim != 1 or s.shape[0] != n:
        raise ValueError(f"vsize must have one size per vertex (n={n}), got shape {s.shape}")
    if not np.isfinite(s).all() or (s < 0).any():
        raise ValueError("vsize must be finite numbers >= 0")
    return np.ascontiguousarray(s)


def _weighted_total(foreign, vsize, n):
    """Sum of per-vertex foreign block counts, times the sizes when given (an int when exact)."""
    if vsize is None:
        return int(foreign.sum())
    s = check_vertex_sizes(vsize, n)
    total = float(np.dot(np.asarray(foreign, dtype=np.float64), s))
    return int(round(total)) if (s == np.round(s)).all() and total < 2.0 ** 53 else total


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
    """True when every block weight is <= max_block_weight(W, k, eps); with c weights per vertex,
    in every constraint j with its bound (eps: one tolerance or c of them)."""
    bw = block_weights(graph, parts, k)
    if graph.ncon > 1:
        from .constraints import check_eps
        bounds = constraint_bounds(graph.total_vwgt, k, check_eps(eps, graph.ncon))
        return bool((np.asarray(graph.backend.to_host(bw)) <= bounds).all())
    return bool((bw <= max_block_weight(graph.total_vwgt, k, eps)).all().item())


def _host_rows(graph, parts):
    """Host (indptr int64, indices, parts int64) for the reporting measures below."""
    h = graph.backend.to_host
    return (np.ascontiguousarray(h(graph.indptr), dtype=np.int64), np.ascontiguousarray(h(graph.indices)),
            np.ascontiguousarray(h(graph.backend.to_device(parts)), dtype=np.int64))


def communication_volumes(graph, parts, k):
    """Per block: the sum over its vertices of the number of other blocks among their neighbours
    (the data a block sends when every vertex is sent once to each neighbouring block)."""
    indptr, indices, p = _host_rows(graph, parts)
    return _block_sums(p, _foreign_blocks(indptr, indices, p, k), k)


def boundary_vertices(graph, parts):
    """Number of vertices with at least one neighbour in another block."""
    indptr, indices, p = _host_rows(graph, parts)
    k = int(p.max()) + 1 if p.shape[0] else 1
    return int(np.count_nonzero(_foreign_blocks(indptr, indices, p, k)))


def _foreign_blocks(indptr, indices, p, k):
    from . import threads
    return _foreign_blocks_nb(indptr, indices, p, int(k), threads.CHUNK, threads.PARALLEL_MIN_ITEMS)


def _block_sums(p, per_vertex, k):
    sums = np.bincount(p, weights=per_vertex, minlength=k)
    return sums.astype(np.int64) if (sums == np.round(sums)).all() else sums   # exact below 2^53


@njit(cache=True, internal=True)
def _foreign_chunk(c, chunk, indptr, indices, parts, mark, out):
    for v in range(c * chunk, min(parts.shape[0], (c + 1) * chunk)):
        own = parts[v]
        count = 0
        for e in range(indptr[v], indptr[v + 1]):
            b = parts[indices[e]]
            if b != own and mark[b] != v:      # a block met for the first time at v
                mark[b] = v
                count += 1
        out[v] = count


@njit(cache=True, parallel=PRANGE_ONLY)
def _foreign_blocks_nb(indptr, indices, parts, k, chunk, parallel_min):
    """Per vertex, the number of other blocks among its neighbours, in chunks of ``chunk``
    vertices (threads from ``parallel_min`` vertices up)."""
    n = parts.shape[0]
    out = np.empty(n, dtype=np.int64)
    chunks = (n + chunk - 1) // chunk
    if n >= parallel_min:
        for c in prange(chunks):
            _foreign_chunk(np.int64(c), chunk, indptr, indices, parts, np.full(k, -1, dtype=np.int64), out)
    else:
        mark = np.full(k, -1, dtype=np.int64)   # marks are vertex ids: chunks may share it in turn
        for c in range(chunks):
            _foreign_chunk(c, chunk, indptr, indices, parts, mark, out)
    return out


def pieces_per_block(graph, parts, k):
    """Connected components of the subgraph each block induces (0 for an empty block).

    The components of the graph without its cut edges each lie inside one block.
    """
    indptr, indices, p = _host_rows(graph, parts)
    return _pieces_nb(indptr, indices, p, int(k))


@njit(cache=True)
def _pieces_nb(indptr, indices, parts, k):
    # union-find over the uncut edges (each root the smallest vertex of its tree; paths
    # halved on every find), then one count per root: O(m) in practice
    n = parts.shape[0]
    parent = np.arange(n)
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if v > u and parts[v] == parts[u]:
                ru = _find(parent, u)
                rv = _find(parent, v)
                if ru != rv:
                    parent[max(ru, rv)] = min(ru, rv)
    pieces = np.zeros(k, dtype=np.int64)
    for v in range(n):
        if parent[v] == v:
            pieces[parts[v]] += 1
    return pieces


@njit(cache=True, internal=True)
def _find(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def summary(g, parts, k, eps=0.03, target_weights=None, vsize=None):
    """Everything the CLI and ``compare`` report about a partition of Graph ``g``, as a
    JSON-friendly dict; with ``target_weights`` the bounds and the imbalance are per block
    (block_bounds, imbalance_from_weights); with ``vsize`` the volumes count each vertex
    vsize[v] times (communication_volume).
    """
    k = int(k)
    bw = np.asarray(g.backend.to_host(block_weights(g, parts, k)))
    per_constraint = {}
    if g.ncon > 1:     # several weights per vertex: bounds (k, c), imbalance the largest of c
        from .constraints import check_eps
        eps = check_eps(eps, g.ncon)
        bounds = constraint_bounds(g.total_vwgt, k, eps, target_weights)
        lmax = bounds if target_weights is not None else bounds[0]
        per_constraint["constraint_imbalance"] = constraint_imbalance(bw, g.total_vwgt, k, target_weights)
        imbalance_value = max(per_constraint["constraint_imbalance"])
    else:
        bounds = block_bounds(g.total_vwgt, k, eps, target_weights)
        lmax = bounds if target_weights is not None else bounds[0]
        imbalance_value = imbalance_from_weights(bw, g.total_vwgt, k, target_weights)
    indptr, indices, p = _host_rows(g, parts)
    foreign = _foreign_blocks(indptr, indices, p, k)
    volumes = _block_sums(p, foreign if vsize is None else foreign * check_vertex_sizes(vsize, g.n), k)
    pieces = _pieces_nb(indptr, indices, p, k)
    return {
        "n": g.n, "m": g.m, "k": k, "eps": [float(e) for e in eps] if g.ncon > 1 else float(eps),
        "cut": _plain(edge_cut(g, parts)),
        "imbalance": imbalance_value, **per_constraint,
        "feasible": bool((bw <= bounds).all()),
        "max_block_weight": _plain(lmax),
        "block_weights": [_plain(w) for w in bw],     # a list of c weights per block when c > 1
        "total_comm_volume": _plain(volumes.sum()),
        "max_comm_volume": _plain(volumes.max()) if k else 0,
        "boundary_vertices": int(np.count_nonzero(foreign)),
        "empty_blocks": int(np.count_nonzero(np.bincount(p, minlength=k) == 0)),
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
