"""Rebalancing (Jet-style weak rebalancing) and the per-vertex best-destination kernel it shares with jet.py.

``rebalance`` moves vertices out of overweight blocks into blocks with room, in parallel
rounds: each overweight block offers its vertices in order of least cut loss per unit of
weight until its overload is covered; each mover goes to its best adjacent block with room
(capacity checked by prefix sums), and movers that find no adjacent room are packed into
the remaining room of any block. Receivers never exceed the bound and sources only lose
weight, so the total overload strictly falls every round that moves anything: no
oscillation, and the number of rounds is capped.

``best_destinations`` computes, per vertex, the connectivity to its own block and the
adjacent block it is most connected to. It has two implementations with one signature: a
numba kernel (CPU; one pass over the adjacency with a dense per-block accumulator) and a
whole-array version on ``be.xp`` (sort-based, no atomics) that runs on numpy and cupy.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..backend import rng as _rng

# Tunables
MAX_ROUNDS = 256           # a round usually fixes every overweight block (a handful of rounds in
                           # practice); more are needed only for capacity conflicts. Every round
                           # moves at least one vertex or stops, so this cap only bounds worst cases.
_STREAM_TIES = 0x5EB1      # hash stream for ties between equally connected destination blocks
_STREAM_ORDER = 0x5EB2     # hash stream for the order of equally good movers in rebalancing

_PACK_BITS = 31            # block ids fit in 31 bits (k < 2**31)


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------
def row_ids(graph):
    """The row (source vertex) of each stored CSR entry, int64.

    Built with ``searchsorted`` rather than ``repeat`` because older CuPy rejects array-valued
    repeat counts; empty rows are handled because ``side='right'`` picks the last row start.
    """
    xp = graph.backend.xp
    e = xp.arange(graph.indices.shape[0], dtype=xp.int64)
    return xp.searchsorted(graph.indptr, e, side="right").astype(xp.int64) - 1


def gather_rows(graph, vertices):
    """Stored entries of the given vertices' rows: (entry index, position of its row in ``vertices``)."""
    xp = graph.backend.xp
    lens = graph.indptr[vertices + 1] - graph.indptr[vertices]
    offsets = xp.zeros(vertices.shape[0] + 1, dtype=xp.int64)
    xp.cumsum(lens, out=offsets[1:])
    total = int(offsets[-1])
    e = xp.arange(total, dtype=xp.int64)
    local = xp.searchsorted(offsets[1:], e, side="right").astype(xp.int64)
    entries = graph.indptr[vertices][local] + (e - offsets[local])
    return entries, local


def block_weights(graph, parts, k):
    """Weight of each block; bincount (no atomics on integer types, exact below 2**53)."""
    xp = graph.backend.xp
    bw = xp.bincount(parts, weights=graph.vwgt, minlength=k)
    if graph.vwgt.dtype.kind in "iu":
        bw = xp.rint(bw).astype(xp.int64)
    return bw


def check_partition(graph, parts, k, max_block_weight):
    """Validated int64 copy of ``parts`` on the graph's backend (raises ValueError on bad input)."""
    be = graph.backend
    xp = be.xp
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if not np.isfinite(float(max_block_weight)) or float(max_block_weight) <= 0:
        raise ValueError(f"max_block_weight must be a positive finite number, got {max_block_weight!r}")
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


# ---------------------------------------------------------------------------------------------
# best_destinations: numba kernel (CPU) and whole-array version (numpy or cupy)
# ---------------------------------------------------------------------------------------------
_GOLDEN = np.uint64(_rng._GOLDEN)
_MIX1 = np.uint64(_rng._MIX1)
_MIX2 = np.uint64(_rng._MIX2)


def _hash_key(seed, stream):
    """The per-(seed, stream) key of ``backend.rng.hash64``, so the kernel hashes identically."""
    m = _rng._M64
    return np.uint64(_rng._mix64_int((_rng._mix64_int((int(seed) + 1) * _rng._GOLDEN & m)
                                      + (int(stream) + 1) * _rng._STREAM) & m))


@njit(cache=True)
def _hash32_nb(counter, key):
    x = np.uint64(counter) * _GOLDEN + key
    x = x ^ (x >> np.uint64(30))
    x = x * _MIX1
    x = x ^ (x >> np.uint64(27))
    x = x * _MIX2
    x = x ^ (x >> np.uint64(31))
    return x >> np.uint64(32)


@njit(cache=True)
def _best_destinations_nb(indptr, indices, ewgt, parts, k, active, allowed, key):
    n = indptr.shape[0] - 1
    dest = np.full(n, -1, dtype=np.int64)
    conn_dest = np.zeros(n, dtype=ewgt.dtype)
    conn_own = np.zeros(n, dtype=ewgt.dtype)
    acc = np.zeros(k, dtype=ewgt.dtype)       # connectivity per block, reset after each vertex
    touched = np.empty(k, dtype=np.int64)     # blocks with acc != 0 (edge weights are positive)
    for v in range(n):
        own = parts[v]
        act = active[v]
        nt = 0
        for e in range(indptr[v], indptr[v + 1]):
            b = parts[indices[e]]
            w = ewgt[e]
            if b == own:
                conn_own[v] += w
            elif act and allowed[b]:
                if acc[b] == 0:
                    touched[nt] = b
                    nt += 1
                acc[b] += w
        if nt == 0:
            continue
        best = touched[0]
        best_c = acc[best]
        best_h = _hash32_nb(v * k + best, key)
        acc[best] = 0
        for t in range(1, nt):
            b = touched[t]
            c = acc[b]
            acc[b] = 0
            if c < best_c:
                continue
            h = _hash32_nb(v * k + b, key)
            if c > best_c or h < best_h or (h == best_h and b < best):
                best, best_c, best_h = b, c, h
        dest[v] = best
        conn_dest[v] = best_c
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
    xp on GPU). ``rows`` may pass precomputed ``row_ids(graph)`` for the xp version.
    """
    be = graph.backend
    if method == "auto":
        method = "xp" if be.is_gpu else "numba"
    if method == "numba":
        if be.is_gpu:
            raise ValueError("method='numba' runs on the CPU only; use method='xp' for a GPU graph")
        return _best_destinations_nb(graph.indptr, graph.indices, graph.ewgt, parts, int(k),
                                     active, allowed, _hash_key(seed, stream))
    if method != "xp":
        raise ValueError(f"method must be 'auto', 'numba' or 'xp', got {method!r}")
    if rows is None:
        rows = row_ids(graph)
    return _best_destinations_xp(graph, parts, int(k), active, allowed, seed, stream, rows)


# ---------------------------------------------------------------------------------------------
# rebalance
# ---------------------------------------------------------------------------------------------
def _lexsort(xp, keys):
    """Indices sorting by the last key first (as numpy.lexsort); keys are exact in float64.

    Callers pass a vertex id as the first (least significant) key, so the order is total and
    the same on numpy and cupy whatever their sort stability.
    """
    return xp.lexsort(xp.stack([a.astype(xp.float64) for a in keys]))


def _prefix_within_groups(xp, group, weights):
    """For arrays sorted by ``group``: the weight of earlier elements of the same group."""
    cum = xp.cumsum(weights)
    before = cum - weights
    first = xp.searchsorted(group, group, side="left")
    return before - before[first]


def _rebalance_round(graph, parts, k, lmax, bw, seed, rnd, rows, method):
    """One parallel round of moves out of overweight blocks; returns the number of vertices moved."""
    be = graph.backend
    xp = be.xp
    vw = graph.vwgt
    over = bw - lmax                                   # > 0: overweight by that much
    room = lmax - bw                                   # > 0: can receive that much
    receivers = room > 0
    if not bool(receivers.any()):
        return 0
    max_room = room.max()
    movable = (over[parts] > 0) & (vw > 0) & (vw <= max_room)
    cand = xp.flatnonzero(movable)
    if cand.shape[0] == 0:
        return 0
    dest, conn_dest, conn_own = best_destinations(graph, parts, k, movable, receivers, seed=seed,
                                                  stream=_STREAM_TIES + 2 * rnd, rows=rows,
                                                  method=method)
    src = parts[cand]
    w = vw[cand]
    loss_per_weight = (conn_own[cand] - conn_dest[cand]).astype(xp.float64) / w.astype(xp.float64)
    tie = be.hash32(seed, _STREAM_ORDER + 2 * rnd, cand)
    overshoots = w > over[src]                         # alone heavier than the overload: last resort

    # 1. each overweight block offers its cheapest vertices until its overload is covered
    o = _lexsort(xp, [cand, tie, loss_per_weight, overshoots, src])
    taken = _prefix_within_groups(xp, src[o], w[o]) < over[src[o]]
    movers = cand[o][taken]
    m_dest = dest[movers]
    m_w = vw[movers]
    m_lpw = loss_per_weight[o][taken]
    m_tie = tie[o][taken]

    # 2. movers with an adjacent receiver: accept in priority order while the receiver has room
    new_block = xp.full(movers.shape[0], -1, dtype=xp.int64)
    adj = xp.flatnonzero(m_dest >= 0)
    if adj.shape[0]:
        d = m_dest[adj]
        o2 = _lexsort(xp, [movers[adj], m_tie[adj], m_lpw[adj], d])
        ds = d[o2]
        fits = _prefix_within_groups(xp, ds, m_w[adj][o2]) + m_w[adj][o2] <= room[ds]
        new_block[adj[o2][fits]] = ds[fits]
    # 3. the rest are packed into the room left anywhere (receivers in id order, prefix sums)
    rest = xp.flatnonzero(new_block < 0)
    if rest.shape[0]:
        accepted = new_block >= 0
        left = room - _weights_per_block(xp, new_block[accepted], m_w[accepted], k, room.dtype)
        recv = xp.flatnonzero(left > 0)
        if recv.shape[0]:
            o3 = _lexsort(xp, [movers[rest], m_tie[rest], m_lpw[rest]])
            r = rest[o3]
            cw = xp.cumsum(m_w[r])
            start = cw - m_w[r]
            cap = xp.cumsum(left[recv])
            j = xp.searchsorted(cap, start, side="right")
            jc = xp.minimum(j, recv.shape[0] - 1)
            ok = (j < recv.shape[0]) & (cw <= cap[jc])   # lies wholly inside receiver j's room
            new_block[r[ok]] = recv[jc[ok]]
            if not bool((new_block >= 0).any()):
                # every mover straddled two rooms: move the first one into the largest room
                # (it fits, since movers are no heavier than the largest room), so each round
                # makes progress and the loop cannot stall while balance is reachable
                best_room = xp.argmax(left)
                if bool(m_w[r[0]] <= left[best_room]):
                    new_block[r[0]] = best_room
    moved = new_block >= 0
    parts[movers[moved]] = new_block[moved]
    return int(moved.sum())


def _weights_per_block(xp, blocks, weights, k, dtype):
    """Total of ``weights`` per block id in ``blocks`` (length k), in ``dtype``."""
    s = xp.bincount(blocks, weights=weights, minlength=k)
    return xp.rint(s).astype(dtype) if xp.dtype(dtype).kind in "iu" else s.astype(dtype)


def overload(bw, lmax):
    """Total weight above the bound over all blocks (0 when balanced)."""
    return (bw - lmax).clip(0).sum()


def rebalance(graph, parts, k, max_block_weight, *, seed=0, max_rounds=MAX_ROUNDS, method="auto"):
    """A partition with every block weight <= ``max_block_weight`` when reachable by moves.

    Vertices leave overweight blocks in order of least cut loss (conn to own block minus
    conn to destination) per unit weight, preferring adjacent destinations with room; see the
    module docstring. Returns a new parts array (the input is not modified) on the graph's
    backend, in the input's integer dtype. When the bound cannot be met (e.g. a vertex heavier
    than every block's room), the result has the least overload this procedure reached;
    check it with ``matchpart.metrics.is_balanced``.
    """
    p = check_partition(graph, parts, k, max_block_weight)
    be = graph.backend
    rows = None if not (method == "xp" or (method == "auto" and be.is_gpu)) else row_ids(graph)
    lmax = max_block_weight
    for rnd in range(max_rounds):
        bw = block_weights(graph, p, k)
        if not bool((bw > lmax).any()):
            break
        if _rebalance_round(graph, p, k, lmax, bw, seed, rnd, rows, method) == 0:
            break
    return cast_like(parts, p, be)
