"""The state every refiner shares: validated block arrays, block weights, cut, overload.

``block_weights`` is the one owner of block weights on a graph's backend (exact int64 for
integer vertex weights, through ``metrics.block_weights``). The compiled helpers below are
the host-array form the numba refiners keep incrementally: float64, which is exact for
integer weights whose total stays below 2**53.
"""
from __future__ import annotations

import numpy as np

from .. import metrics
from ..io import as_graph
from ..jit import njit


def block_weights(graph, parts, k):
    """Weight of each block on the graph's backend (exact for integer weights)."""
    return metrics.block_weights(graph, parts, k)


def overload(bw, lmax):
    """Total weight above the bound over all blocks (0 when balanced)."""
    return (bw - lmax).clip(0).sum()


def bounds_array(max_block_weight, k):
    """Host float64 array of the k block bounds from one bound or k of them (host or device)."""
    mbw = max_block_weight.get() if hasattr(max_block_weight, "get") else max_block_weight
    try:
        b = np.broadcast_to(np.asarray(mbw, dtype=np.float64), (int(k),)).copy()
    except (TypeError, ValueError):
        raise ValueError(f"max_block_weight must be a number or {k} numbers, got {max_block_weight!r}") from None
    if not np.isfinite(b).all() or (b < 0).any() or not (b > 0).any():
        raise ValueError(f"max_block_weight must be positive finite numbers, got {max_block_weight!r}")
    return b


def device_bounds(be, max_block_weight, k):
    """The bounds as the whole-array code compares them: the scalar when all blocks share
    it, else a device array of k (per-block targets)."""
    b = np.asarray(max_block_weight.get() if hasattr(max_block_weight, "get") else max_block_weight)
    if b.ndim == 0 or (b == b.flat[0]).all():
        return b.flat[0].item()
    return be.to_device(b)


def check_partition(graph, parts, k, max_block_weight):
    """Validated int64 copy of ``parts`` on the graph's backend (raises ValueError on bad input)."""
    be = graph.backend
    xp = be.xp
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    bounds_array(max_block_weight, k)
    p = be.to_device(parts)
    if p.ndim != 1 or p.shape[0] != graph.n:
        raise ValueError(f"parts must be a 1-d array of length n={graph.n}, got shape {tuple(p.shape)}")
    if p.dtype.kind not in "iu":
        raise ValueError(f"parts must be an integer array, got dtype {p.dtype}")
    p = p.astype(xp.int64, copy=True)
    if graph.n and (int(p.min()) < 0 or int(p.max()) >= k):
        raise ValueError(f"block ids must lie in 0..{k - 1}, got range {int(p.min())}..{int(p.max())}")
    return p


def cast_like(parts_in, parts, be):
    """Result in the caller's integer dtype (int32 stays int32), on the graph's backend."""
    dtype = getattr(parts_in, "dtype", None)
    if dtype is not None and dtype.kind in "iu" and dtype != parts.dtype:
        return parts.astype(dtype)
    return parts


def host_arrays(graph):
    """(indptr int64, indices, ewgt, vwgt) host arrays the kernels take, in the Graph's own
    dtypes (int32 or int64 ids, int64 or float64 weights): no copy of a level per refiner,
    and the kernels share their signatures with coarsening's (one compilation each).

    Accepts anything matchpart.graph.as_graph does (a Graph on any device, scipy, networkx).
    """
    g = as_graph(graph).to("cpu")
    return (np.ascontiguousarray(g.indptr, dtype=np.int64), np.ascontiguousarray(g.indices),
            np.ascontiguousarray(g.ewgt), np.ascontiguousarray(g.vwgt))


@njit(cache=True, internal=True)
def host_block_weights(parts, vwgt, k):
    bw = np.zeros(k, dtype=np.float64)
    for v in range(parts.shape[0]):
        bw[parts[v]] += vwgt[v]
    return bw


@njit(cache=True)
def block_members(parts, k):
    """(head, nxt, prv): each block's vertices as a doubly linked list, so that rebalancing
    visits the vertices of the overweight blocks only, and a move relinks in O(1)."""
    n = parts.shape[0]
    head = np.full(k, -1, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    prv = np.full(n, -1, dtype=np.int64)
    for v in range(n - 1, -1, -1):
        b = parts[v]
        nxt[v] = head[b]
        if head[b] >= 0:
            prv[head[b]] = v
        head[b] = v
    return head, nxt, prv


@njit(cache=True, internal=True, inline="always")
def relink(v, frm, to, members):
    """Move v from block frm's list to block to's (see block_members); inlined, as the gain
    cache's helpers are (gain_cache.py): called once per move, with a tuple of three arrays."""
    head, nxt, prv = members
    if prv[v] >= 0:
        nxt[prv[v]] = nxt[v]
    else:
        head[frm] = nxt[v]
    if nxt[v] >= 0:
        prv[nxt[v]] = prv[v]
    prv[v] = -1
    nxt[v] = head[to]
    if head[to] >= 0:
        prv[head[to]] = v
    head[to] = v


@njit(cache=True, internal=True)
def host_weighted_degree(indptr, ewgt):
    """Edge weight at each vertex, summed in row order (so equal to a row scan's sum)."""
    n = indptr.shape[0] - 1
    wdeg = np.zeros(n, dtype=np.float64)
    for v in range(n):
        s = 0.0
        for e in range(indptr[v], indptr[v + 1]):
            s += ewgt[e]
        wdeg[v] = s
    return wdeg


@njit(cache=True, internal=True)
def host_overload(bw, maxw):
    s = 0.0
    for b in range(bw.shape[0]):
        if bw[b] > maxw[b]:
            s += bw[b] - maxw[b]
    return s


@njit(cache=True, internal=True)
def host_cut(indptr, indices, ewgt, parts):
    c = 0.0
    for v in range(indptr.shape[0] - 1):
        for e in range(indptr[v], indptr[v + 1]):
            if parts[indices[e]] != parts[v]:
                c += ewgt[e]
    return c / 2.0


@njit(cache=True, internal=True)
def better_state(over, cut, best_over, best_cut):
    """The refiners' order of states: less overload first, then a lower cut (balance beats cut)."""
    return over < best_over or (over == best_over and cut < best_cut)


@njit(cache=True, internal=True)
def _member(u, local, label, a, b):
    """u is a vertex of the induced subgraph: by its label when ``label`` is given, else by
    its local index."""
    if label.shape[0]:
        return label[u] == a or label[u] == b
    return local[u] >= 0


@njit(cache=True, internal=True)
def _induced_arrays(indptr, indices, ewgt, vwgt, verts, local, label, a, b):
    """The rows of ``verts`` restricted to the members (_member), renamed by ``local``."""
    ns = verts.shape[0]
    m = 0
    for i in range(ns):
        v = verts[i]
        for e in range(indptr[v], indptr[v + 1]):
            if _member(indices[e], local, label, a, b):
                m += 1
    sindptr = np.zeros(ns + 1, dtype=np.int64)
    sindices = np.empty(m, dtype=indices.dtype)
    sewgt = np.empty(m, dtype=ewgt.dtype)
    svwgt = np.empty(ns, dtype=vwgt.dtype)
    at = 0
    for i in range(ns):
        v = verts[i]
        svwgt[i] = vwgt[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if _member(u, local, label, a, b):
                sindices[at] = local[u]
                sewgt[at] = ewgt[e]
                at += 1
        sindptr[i + 1] = at
    return sindptr, sindices, sewgt, svwgt


@njit(cache=True, internal=True)
def host_induced_labelled(indptr, indices, ewgt, vwgt, verts, local, label, a, b):
    """Host arrays of the subgraph induced by ``verts``, which are the vertices u with
    label[u] == a or label[u] == b (a == b for one label); local[v]: v's index there, for v
    in verts. It only reads, and tells members by their label, not by ``local``: threads
    may build the subgraphs of other labels side by side (their vertices never take a or b)."""
    return _induced_arrays(indptr, indices, ewgt, vwgt, verts, local, label, a, b)


@njit(cache=True, internal=True)
def host_induced(indptr, indices, ewgt, vwgt, verts, local):
    """Host arrays of the subgraph induced by `verts` (vertex i of it is verts[i]; rows stay
    sorted if verts is). ``local``: -1 for every vertex, and again on return."""
    ns = verts.shape[0]
    for i in range(ns):
        local[verts[i]] = i
    sub = _induced_arrays(indptr, indices, ewgt, vwgt, verts, local, np.empty(0, dtype=np.int64), 0, 0)
    for i in range(ns):
        local[verts[i]] = -1
    return sub
