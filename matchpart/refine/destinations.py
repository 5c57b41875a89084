"""Per vertex, the adjacent block it is most connected to: the scan Jet and rebalancing share.

``best_destinations`` has two implementations with one signature: a numba kernel (CPU; one
pass over the adjacency with a dense per-block accumulator) and a whole-array version on
``be.xp`` (sort-based, no atomics) that runs on numpy and cupy. Ties between equally
connected blocks are broken by a hash of (seed, stream, v * k + b), the same on both.
"""
from __future__ import annotations

import numpy as np

from ..backend.rng import hash32_at, stream_key
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch

_STREAM_TIES = 0x5EB1      # default hash stream for ties between equally connected destination blocks


@njit(cache=True, internal=True)
def vertex_destination(v, indptr, indices, ewgt, parts, k, act, allowed, key, acc, touched):
    """One row of best_destinations: (dest, conn_dest, conn_own, weight to other blocks) of v.

    ``acc`` (k zeros) and ``touched`` (k) are scratch; acc is left all zero again.
    """
    own = parts[v]
    co = 0.0
    out = 0.0
    nt = 0
    last = indptr[v + 1] - PREFETCH_DISTANCE
    for e in range(indptr[v], indptr[v + 1]):
        if e < last:     # the first entries were asked for ahead of the row (boundary.ROWS_AHEAD)
            prefetch(parts, indices[e + PREFETCH_DISTANCE])
        b = parts[indices[e]]
        w = ewgt[e]
        # without branches: whether a neighbour is in v's block is a coin flip on the boundary
        inside = b == own
        co += w * inside
        out += w * (not inside)
        counted = act and allowed[b] and not inside
        touched[nt] = b
        nt += counted and acc[b] == 0
        acc[b] += w * counted
    if nt == 0:
        return -1, 0.0, co, out
    best = touched[0]
    best_c = acc[best]
    best_h = np.uint32(0)
    hashed = False                 # best_h is computed at the first tie only
    acc[best] = 0
    for t in range(1, nt):
        b = touched[t]
        c = acc[b]
        acc[b] = 0
        if c < best_c:
            continue
        if c > best_c:
            best, best_c, hashed = b, c, False
            continue
        if not hashed:
            best_h = hash32_at(v * k + best, key)
            hashed = True
        h = hash32_at(v * k + b, key)
        if h < best_h or (h == best_h and b < best):
            best, best_h = b, h
    return best, best_c, co, out


@njit(cache=True)
def _best_destinations_nb(indptr, indices, ewgt, parts, k, active, allowed, key):
    n = indptr.shape[0] - 1
    dest = np.full(n, -1, dtype=np.int64)
    conn_dest = np.zeros(n, dtype=ewgt.dtype)
    conn_own = np.zeros(n, dtype=ewgt.dtype)
    acc = np.zeros(k, dtype=ewgt.dtype)       # connectivity per block, reset after each vertex
    touched = np.empty(k, dtype=np.int64)     # blocks with acc != 0 (edge weights are positive)
    for v in range(n):
        dest[v], conn_dest[v], conn_own[v], _ = vertex_destination(v, indptr, indices, ewgt, parts, k, active[v],
                                                                   allowed, key, acc, touched)
    return dest, conn_dest, conn_own


def _best_destinations_xp(graph, parts, k, active, allowed, seed, stream, rows):
    be = graph.backend
    xp = be.xp
    n = graph.n
    nb = parts[graph.indices]
    same = nb == parts[rows]
    zero = xp.zeros((), dtype=graph.ewgt.dtype)
    conn_own = be.segment_sum(xp.where(same, graph.ewgt, zero), graph.indptr).astype(graph.ewgt.dtype)
    dest = xp.full(n, -1, dtype=xp.int64)
    conn_dest = xp.zeros(n, dtype=graph.ewgt.dtype)
    sel = ~same & active[rows] & allowed[nb]
    ev = rows[sel]
    if ev.shape[0] == 0:
        return dest, conn_dest, conn_own
    # connectivity of each (vertex, block) pair: sort pair keys, sum the runs
    key = ev * k + nb[sel]
    order = xp.argsort(key)
    ks = key[order]
    ws = graph.ewgt[sel][order]
    start = xp.ones(ks.shape[0], dtype=bool)
    start[1:] = ks[1:] != ks[:-1]
    starts = xp.flatnonzero(start)
    csum = xp.zeros(ws.shape[0] + 1, dtype=ws.dtype)
    xp.cumsum(ws, out=csum[1:])
    ends = xp.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1] = ws.shape[0]
    conn = csum[ends] - csum[starts]
    pair = ks[starts]
    pv = pair // k
    pb = pair % k
    # per vertex, the pair with (max connectivity, min hash, min block): first after a lexsort
    h = be.hash32(seed, stream, pair)
    keys = xp.stack([pb.astype(xp.float64), h.astype(xp.float64),
                     -conn.astype(xp.float64), pv.astype(xp.float64)])
    o = xp.lexsort(keys)
    sv = pv[o]
    first = xp.ones(sv.shape[0], dtype=bool)
    first[1:] = sv[1:] != sv[:-1]
    winners = o[first]
    dest[pv[winners]] = pb[winners]
    conn_dest[pv[winners]] = conn[winners]
    return dest, conn_dest, conn_own


def best_destinations(graph, parts, k, active, allowed, *, seed=0, stream=_STREAM_TIES,
                      rows=None, method="auto"):
    """Per vertex: the best adjacent destination block and the connectivities that rate it.

    Returns ``(dest, conn_dest, conn_own)`` on the graph's backend: ``conn_own[v]`` is the
    weight of v's edges into its own block (every vertex); for ``active`` vertices, ``dest[v]``
    is the block ``b != parts[v]`` with ``allowed[b]`` that v has the most edge weight to
    (ties by a hash of (seed, stream, v*k+b), then lower id) and ``conn_dest[v]`` that weight;
    ``dest = -1`` / ``conn_dest = 0`` for inactive vertices and those with no such neighbour.

    ``method``: "numba" (CPU kernel), "xp" (whole-array, any backend) or "auto" (numba on CPU,
    xp on GPU). ``rows`` may pass the entries' rows (``Backend.row_ids``) for the xp version.
    """
    be = graph.backend
    if method == "auto":
        method = "xp" if be.is_gpu else "numba"
    if method == "numba":
        if be.is_gpu:
            raise ValueError("method='numba' runs on the CPU only; use method='xp' for a GPU graph")
        return _best_destinations_nb(graph.indptr, graph.indices, graph.ewgt, parts, int(k),
                                     active, allowed, np.uint64(stream_key(seed, stream)))
    if method != "xp":
        raise ValueError(f"method must be 'auto', 'numba' or 'xp', got {method!r}")
    if rows is None:
        rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    return _best_destinations_xp(graph, parts, int(k), active, allowed, seed, stream, rows)
