"""Rebalancing: moves out of overweight blocks until every block fits.

Two procedures:
- parallel rounds (Jet-style weak rebalancing, used by Jet on every backend): each
  overweight block offers its vertices in order of least cut loss per unit of weight until
  its overload is covered; each mover goes to its best adjacent block with room (capacity
  checked by prefix sums), and movers that find no adjacent room are packed into the
  remaining room of any block. Receivers never exceed the bound and sources only lose
  weight, so the total overload strictly falls every round that moves anything. A round is
  one compiled call on the CPU (``rebalance_round_nb``) and whole-array steps on
  ``be.xp`` (``_rebalance_round``, the GPU's); both move the same vertices for the same seed.
- a serial least-loss rebalancer with a priority queue (``serial_rebalance``), which FM
  runs before its passes.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import gain_cache as gc
from .destinations import best_destinations, hash32_nb, hash_key_nb, row_ids, vertex_destination
from .heap import heap_pop, heap_remove, heap_set
from .state import host_arrays, bounds_array, device_bounds, block_weights, cast_like, check_partition, host_block_weights

# Tunables
MAX_ROUNDS = 256           # a round usually fixes every overweight block (a handful of rounds in
                           # practice); more are needed only for capacity conflicts. Every round
                           # moves at least one vertex or stops, so this cap only bounds worst cases.
_STREAM_TIES = 0x5EB1      # hash stream for ties between equally connected destination blocks
_STREAM_ORDER = 0x5EB2     # hash stream for the order of equally good movers in rebalancing


# ---- parallel rounds: whole-array formulation (numpy or cupy) -------------------------------
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
        # scatter-add, not bincount: CuPy's bincount syncs and raises on an empty list of blocks
        left = room - be.scatter_add(xp.zeros(k, dtype=room.dtype), new_block[accepted],
                                     m_w[accepted].astype(room.dtype))
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


# ---- parallel rounds: compiled formulation (CPU), same moves as _rebalance_round ------------
@njit(cache=True)
def _sort_by(order, key):
    """order re-sorted stably by key[order] (one step of a least-significant-first lexsort)."""
    return order[np.argsort(key[order], kind="mergesort")]


@njit(cache=True)
def _group_prefix(groups, weights):
    """For a sequence sorted by group: the weight of the earlier elements of the same group."""
    out = np.empty(weights.shape[0], dtype=np.float64)
    run = 0.0
    for i in range(weights.shape[0]):
        if i > 0 and groups[i] != groups[i - 1]:
            run = 0.0
        out[i] = run
        run += weights[i]
    return out


@njit(cache=True)
def rebalance_round_nb(indptr, indices, ewgt, vwgt, parts, maxw, bw, seed, rnd, log, nlog, logged):
    """One round of _rebalance_round as one kernel; parts and bw change in place; returns moves.

    Moved vertices not yet ``logged`` are flagged and appended to log (log[nlog[0]], ...), so
    callers can update what depends on their blocks without a full pass; log needs room for n.
    """
    n = parts.shape[0]
    k = maxw.shape[0]
    room = maxw - bw
    max_room = room.max()
    if max_room <= 0:
        return 0
    receivers = room > 0
    nc = 0
    cand = np.empty(n, dtype=np.int64)
    for v in range(n):
        if bw[parts[v]] > maxw[parts[v]] and vwgt[v] > 0 and vwgt[v] <= max_room:
            cand[nc] = v
            nc += 1
    if nc == 0:
        return 0
    cand = cand[:nc]
    # destinations of the candidates only (best_destinations with active = candidates)
    dest = np.empty(nc, dtype=np.int64)
    lpw = np.empty(nc, dtype=np.float64)
    acc = np.zeros(k, dtype=ewgt.dtype)
    touched = np.empty(k, dtype=np.int64)
    dest_key = hash_key_nb(seed, _STREAM_TIES + 2 * rnd)
    for i in range(nc):
        d, cd, co, _ = vertex_destination(cand[i], indptr, indices, ewgt, parts, k, True, receivers, dest_key,
                                          acc, touched)
        dest[i] = d
        lpw[i] = np.float64(co - cd) / np.float64(vwgt[cand[i]])
    src = parts[cand]
    w = vwgt[cand].astype(np.float64)
    order_key = hash_key_nb(seed, _STREAM_ORDER + 2 * rnd)
    tie = np.empty(nc, dtype=np.float64)
    over_src = np.empty(nc, dtype=np.float64)
    for i in range(nc):
        tie[i] = np.float64(hash32_nb(cand[i], order_key))
        over_src[i] = bw[src[i]] - maxw[src[i]]
    overshoots = (w > over_src).astype(np.float64)
    # 1. each overweight block offers its cheapest vertices until its overload is covered
    o = np.arange(nc)                                  # cand is ascending: the last key is free
    for key in (tie, lpw, overshoots, src.astype(np.float64)):
        o = _sort_by(o, key)
    taken = _group_prefix(src[o], w[o]) < over_src[o]
    sel = o[taken]
    m = sel.shape[0]
    movers = cand[sel]
    m_dest = dest[sel]
    m_w = w[sel]
    m_lpw = lpw[sel]
    m_tie = tie[sel]
    # 2. movers with an adjacent receiver: accept in priority order while the receiver has room
    new_block = np.full(m, -1, dtype=np.int64)
    adj = np.flatnonzero(m_dest >= 0)
    if adj.shape[0]:
        o2 = np.arange(adj.shape[0])
        for key in (movers[adj].astype(np.float64), m_tie[adj], m_lpw[adj], m_dest[adj].astype(np.float64)):
            o2 = _sort_by(o2, key)
        ds = m_dest[adj][o2]
        ws = m_w[adj][o2]
        before = _group_prefix(ds, ws)
        for i in range(o2.shape[0]):
            if before[i] + ws[i] <= room[ds[i]]:
                new_block[adj[o2[i]]] = ds[i]
    # 3. the rest are packed into the room left anywhere (receivers in id order, prefix sums)
    rest = np.flatnonzero(new_block < 0)
    if rest.shape[0]:
        left = room.copy()
        for i in range(m):
            if new_block[i] >= 0:
                left[new_block[i]] -= m_w[i]
        recv = np.flatnonzero(left > 0)
        if recv.shape[0]:
            o3 = np.arange(rest.shape[0])
            for key in (movers[rest].astype(np.float64), m_tie[rest], m_lpw[rest]):
                o3 = _sort_by(o3, key)
            r = rest[o3]
            cap = np.cumsum(left[recv])
            cw = 0.0
            any_moved = False
            for i in range(m):
                any_moved = any_moved or new_block[i] >= 0
            for i in range(r.shape[0]):
                start = cw
                cw += m_w[r[i]]
                j = np.searchsorted(cap, start, side="right")
                if j < recv.shape[0] and cw <= cap[j]:    # lies wholly inside receiver j's room
                    new_block[r[i]] = recv[j]
                    any_moved = True
            if not any_moved:
                # every mover straddled two rooms: move the first one into the largest room
                best_room = np.argmax(left)
                if m_w[r[0]] <= left[best_room]:
                    new_block[r[0]] = best_room
    moved = 0
    for i in range(m):
        b = new_block[i]
        if b >= 0:
            v = movers[i]
            bw[parts[v]] -= vwgt[v]
            bw[b] += vwgt[v]
            parts[v] = b
            moved += 1
            if not logged[v]:
                logged[v] = True
                log[nlog[0]] = v
                nlog[0] += 1
    return moved


@njit(cache=True)
def rebalance_nb(indptr, indices, ewgt, vwgt, parts, maxw, seed, max_rounds, log, nlog, logged):
    """Parallel rounds until balanced or stuck (the compiled loop of ``rebalance``); in place.

    Returns the block weights; moved vertices are logged as in rebalance_round_nb.
    """
    bw = host_block_weights(parts, vwgt, maxw.shape[0])
    for rnd in range(max_rounds):
        if not (bw > maxw).any():
            break
        if rebalance_round_nb(indptr, indices, ewgt, vwgt, parts, maxw, bw, seed, rnd, log, nlog, logged) == 0:
            break
    return bw


# ---- serial least-loss rebalancing (before FM) ---------------------------------------------
@njit(cache=True)
def _serial_key(gain, w):
    # KaMinPar-style relative gain: among losing moves prefer little loss per unit of weight moved
    return gain * w if gain >= 0 else gain / w


@njit(cache=True)
def _least_loss_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache):
    """(gain, target) of v's least-loss move to a block with room: an adjacent block if any, else the lightest."""
    block, conn, count, nb, scratch = cache
    gc.build(v, indptr, indices, ewgt, parts, block, conn, count, nb, scratch)
    own = parts[v]
    g, t = gc.best_move(v, own, vwgt[v], bw, maxw, indptr, block, conn, nb)
    if t >= 0:
        return g, t
    light = -1
    for b in range(bw.shape[0]):
        if b != own and bw[b] + vwgt[v] <= maxw[b] and (light < 0 or bw[b] - maxw[b] < bw[light] - maxw[light]):
            light = b
    if light < 0:
        return -np.inf, -1
    return -gc.inside(v, own, indptr, block, conn, nb), light


@njit(cache=True)
def serial_rebalance(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, cache):
    """Move vertices out of overweight blocks, least loss per weight first; returns vertices moved."""
    n = indptr.shape[0] - 1
    keys = np.empty(n, dtype=np.float64)
    verts = np.empty(n, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    locked = np.zeros(n, dtype=np.bool_)
    block, conn, count, nb, scratch = cache
    for i in range(order.shape[0]):
        v = order[i]
        if bw[parts[v]] > maxw[parts[v]] and vwgt[v] > 0:  # moving a weightless vertex cannot help
            g, t = _least_loss_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache)
            if t >= 0:
                heap_set(keys, verts, pos, size, v, _serial_key(g, vwgt[v]))
    moved = 0
    while size[0] > 0:
        v, key = heap_pop(keys, verts, pos, size)
        frm = parts[v]
        if bw[frm] <= maxw[frm]:
            continue
        g, t = _least_loss_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache)
        if t < 0:
            continue
        nk = _serial_key(g, vwgt[v])
        if nk < key:
            heap_set(keys, verts, pos, size, v, nk)
            continue
        parts[v] = t
        bw[frm] -= vwgt[v]
        bw[t] += vwgt[v]
        gc.move(v, frm, t, indptr, indices, ewgt, block, conn, count, nb)
        locked[v] = True
        moved += 1
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if locked[u] or bw[parts[u]] <= maxw[parts[u]] or vwgt[u] <= 0:
                continue
            gu, tu = _least_loss_move(u, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache)
            if tu >= 0:
                heap_set(keys, verts, pos, size, u, _serial_key(gu, vwgt[u]))
            else:
                heap_remove(keys, verts, pos, size, u)
    return moved


# ---- public entry point -----------------------------------------------------------------------
def rebalance(graph, parts, k, max_block_weight, *, seed=0, max_rounds=MAX_ROUNDS, method="auto"):
    """A partition with every block weight <= ``max_block_weight`` when reachable by moves.

    Vertices leave overweight blocks in order of least cut loss (conn to own block minus
    conn to destination) per unit weight, preferring adjacent destinations with room; see the
    module docstring. Returns a new parts array (the input is not modified) on the graph's
    backend, in the input's integer dtype. When the bound cannot be met (e.g. a vertex heavier
    than every block's room), the result has the least overload this procedure reached;
    check it with ``matchpart.metrics.is_balanced``. ``method``: "auto" (compiled rounds on
    the CPU, whole-array rounds on the GPU), "numba" or "xp".
    """
    p = check_partition(graph, parts, k, max_block_weight)
    be = graph.backend
    if method == "auto":
        method = "xp" if be.is_gpu else "numba"
    if method not in ("numba", "xp"):
        raise ValueError(f"method must be 'auto', 'numba' or 'xp', got {method!r}")
    if method == "numba":
        if be.is_gpu:
            raise ValueError("method='numba' runs on the CPU only; use method='xp' for a GPU graph")
        indptr, indices, ewgt, vwgt = host_arrays(graph)
        maxw = bounds_array(max_block_weight, k)
        rebalance_nb(indptr, indices, ewgt, vwgt, p, maxw, int(seed), int(max_rounds), np.empty(p.shape[0], np.int64),
                     np.zeros(1, np.int64), np.zeros(p.shape[0], np.bool_))
        return cast_like(parts, p, be)
    rows = row_ids(graph)
    lmax = device_bounds(be, max_block_weight, k)
    for rnd in range(max_rounds):
        bw = block_weights(graph, p, k)
        if not bool((bw > lmax).any()):
            break
        if _rebalance_round(graph, p, k, lmax, bw, seed, rnd, rows, "xp") == 0:
            break
    return cast_like(parts, p, be)
