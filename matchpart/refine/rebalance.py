"""Rebalancing: moves out of overweight blocks until every block fits.

Parallel rounds (Jet-style weak rebalancing, used by Jet on every backend): each overweight
block offers its vertices in order of least cut loss per unit of weight until its overload
is covered; each mover goes to its best adjacent block with room (capacity checked by prefix
sums), and movers that find no adjacent room are packed into the remaining room of any
block. Receivers never exceed the bound and sources only lose weight, so the total overload
strictly falls every round that moves anything. A round is one compiled call on the CPU
(``rebalance_kernel.rebalance_round_nb``) and whole-array steps on ``be.xp`` (``_rebalance_round``, the
GPU's); both move the same vertices for the same seed. FM's serial rebalancer is
least_loss.py.
"""
from __future__ import annotations

import numpy as np

from .. import threads
from .destinations import best_destinations
from .rebalance_kernel import MIN_PROGRESS, STREAM_ORDER, STREAM_TIES, rebalance_nb
from .state import (block_members, block_weights, bounds_array, cast_like, check_partition, device_bounds, host_arrays,
                    overload)

# Tunables
MAX_ROUNDS = 256           # a round usually fixes every overweight block (a handful of rounds in
                           # practice); more are needed only for capacity conflicts. Every round
                           # moves at least one vertex or stops, so this cap only bounds worst cases.


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
                                                  stream=STREAM_TIES + 2 * rnd, rows=rows,
                                                  method=method)
    src = parts[cand]
    w = vw[cand]
    loss_per_weight = (conn_own[cand] - conn_dest[cand]).astype(xp.float64) / w.astype(xp.float64)
    tie = be.hash32(seed, STREAM_ORDER + 2 * rnd, cand)
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
            # packing.largest_rooms: the t-th left out to the t-th largest room left, if it fits
            miss = r[~ok]
            left2 = left - be.scatter_add(xp.zeros(k, dtype=left.dtype), recv[jc[ok]], m_w[r[ok]].astype(left.dtype))
            recv2 = xp.flatnonzero(left2 > 0)
            pairs = min(miss.shape[0], recv2.shape[0])
            if pairs:
                recv2 = recv2[_lexsort(xp, [recv2, -left2[recv2]])][:pairs]
                miss = miss[:pairs]
                fit = m_w[miss] <= left2[recv2]
                new_block[miss[fit]] = recv2[fit]
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


# ---- public entry point -----------------------------------------------------------------------
def rebalance(graph, parts, k, max_block_weight, *, seed=0, max_rounds=MAX_ROUNDS, method="auto"):
    """A partition with every block weight <= ``max_block_weight`` when reachable by moves.

    Vertices leave overweight blocks in order of least cut loss (conn to own block minus
    conn to destination) per unit weight, preferring adjacent destinations with room; see the
    module docstring. Returns a new parts array (the input is not modified) on the graph's
    backend, in the input's integer dtype. When the bound cannot be met (e.g. a vertex heavier
    than every block's room, or rounds that lower the overload by less than MIN_PROGRESS,
    where the room left is scattered in pieces smaller than the vertices), the result has
    the least overload this procedure reached;
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
        n = p.shape[0]
        rebalance_nb(indptr, indices, ewgt, vwgt, p, maxw, int(seed), int(max_rounds), np.empty(n, np.int64),
                     np.zeros(1, np.int64), np.zeros(n, np.bool_), np.zeros(n), np.arange(n), n, np.ones(n, np.bool_),
                     block_members(p, k), threads.CHUNK, threads.PARALLEL_MIN_ITEMS,
                     np.full(1, np.inf), np.empty(0, np.int32))
        return cast_like(parts, p, be)
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    lmax = device_bounds(be, max_block_weight, k)
    bw = block_weights(graph, p, k)
    for rnd in range(max_rounds):
        if not bool((bw > lmax).any()):
            break
        over = float(overload(bw, lmax))
        if _rebalance_round(graph, p, k, lmax, bw, seed, rnd, rows, "xp") == 0:
            break
        bw = block_weights(graph, p, k)
        if float(overload(bw, lmax)) > (1.0 - MIN_PROGRESS) * over:
            break
    return cast_like(parts, p, be)
