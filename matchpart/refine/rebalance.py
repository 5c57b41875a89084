"""Rebalancing: moves out of overweight blocks until every block fits.

Parallel rounds (Jet-style weak rebalancing, used by Jet on every backend): each overweight
block offers its vertices in order of least cut loss per unit of weight until its overload
is covered; each mover goes to its best adjacent block with room (capacity checked by prefix
sums), and movers that find no adjacent room are packed into the remaining room of any
block. Receivers never exceed the bound and sources only lose weight, so the total overload
strictly falls every round that moves anything. A round is one compiled call on the CPU
(``rebalance_round_nb``) and whole-array steps on ``be.xp`` (``_rebalance_round``, the
GPU's); both move the same vertices for the same seed. FM's serial rebalancer is
least_loss.py.
"""
from __future__ import annotations

import numpy as np

from ..backend.rng import hash32_at, stream_key_at
from numba import prange

from .. import threads
from ..jit import njit
from ..threads import PRANGE_ONLY
from ..sorting import lexsort_rows
from .boundary import extend_boundary
from .destinations import best_destinations, row_ids, vertex_destination
from .selection import cheapest_covering
from .state import (block_members, block_weights, bounds_array, cast_like, check_partition, device_bounds,
                    host_arrays, host_block_weights, host_overload, relink)

# Tunables
MAX_ROUNDS = 256           # a round usually fixes every overweight block (a handful of rounds in
                           # practice); more are needed only for capacity conflicts. Every round
                           # moves at least one vertex or stops, so this cap only bounds worst cases.
LIST_WALK_MAX_SHARE = 4    # candidates come from the overweight blocks' member lists while those
                           # blocks are fewer than k / 4, else from a pass over all vertices: a
                           # list visits vertices in scattered order (a cache miss each), which
                           # cost more than the pass when the blocks hold much of the graph
                           # (ba 2^16, k = 8: Jet 1.26 -> 1.43 s with lists only)
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
@njit(cache=True, internal=True)
def _score_chunk(c, chunk, cand, nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list, wdeg,
                 dest_key, order_key, dest, weight, keys, acc, touched):
    k = maxw.shape[0]
    for i in range(c * chunk, min(nc, (c + 1) * chunk)):
        v = cand[i]
        if in_list[v]:
            d, cd, co, _ = vertex_destination(v, indptr, indices, ewgt, parts, k, True, receivers, dest_key,
                                              acc, touched)
        else:
            d, cd, co = -1, 0.0, wdeg[v]
        dest[i] = d
        w = np.float64(vwgt[v])
        weight[i] = w
        keys[0, i] = 1.0 if w > bw[parts[v]] - maxw[parts[v]] else 0.0   # alone heavier: last resort
        keys[1, i] = np.float64(co - cd) / w
        keys[2, i] = np.float64(hash32_at(v, order_key))
        keys[3, i] = v


@njit(cache=True, parallel=PRANGE_ONLY)
def _score_candidates(cand, nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list, wdeg, dest_key,
                      order_key, dest, weight, keys, chunk, parallel_min):
    """Each candidate's destination (best adjacent receiver) and sort keys, in chunks of
    ``chunk`` candidates (on threads from ``parallel_min`` up): a chunk writes only its own
    slots, so the keys are the same for any number of threads."""
    k = maxw.shape[0]
    chunks = (nc + chunk - 1) // chunk
    if nc >= parallel_min:
        for c in prange(chunks):
            _score_chunk(np.int64(c), chunk, cand, nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers,
                         in_list, wdeg, dest_key, order_key, dest, weight, keys, np.zeros(k, dtype=ewgt.dtype),
                         np.empty(k, dtype=np.int64))
    else:
        acc = np.zeros(k, dtype=ewgt.dtype)
        touched = np.empty(k, dtype=np.int64)
        for c in range(chunks):
            _score_chunk(c, chunk, cand, nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list,
                         wdeg, dest_key, order_key, dest, weight, keys, acc, touched)


@njit(cache=True, internal=True)
def rebalance_round_nb(indptr, indices, ewgt, vwgt, parts, maxw, bw, seed, rnd, log, nlog, logged, wdeg, in_list,
                       members, chunk, parallel_min):
    """One round of _rebalance_round as one kernel; parts, bw and members change in place;
    returns the number of moves.

    Candidates are found through ``members`` (state.block_members): the lists of the
    overweight blocks only, not a pass over all n vertices (k = 32: 1/32 of them, and Jet
    rebalances a few rounds in nearly every iteration).

    Vertices not flagged in ``in_list`` are known to be interior: their loss is their whole
    weighted degree ``wdeg`` and they have no adjacent destination, so their rows are not
    scanned (most candidates, on meshes). Selecting the movers takes
    O(candidates x log(movers)) (selection.cheapest_covering), not a sort of every
    candidate: a block's overload after a Jet iteration is a few vertices' worth while it
    holds tens of thousands. Moved vertices not yet
    ``logged`` are flagged and appended to log (log[nlog[0]], ...), so callers can update
    what depends on their blocks without a full pass; log needs room for n.
    """
    n = parts.shape[0]
    k = maxw.shape[0]
    room = np.empty(k, dtype=np.float64)
    receivers = np.empty(k, dtype=np.bool_)
    max_room = -np.inf
    for b in range(k):
        room[b] = maxw[b] - bw[b]
        receivers[b] = room[b] > 0
        max_room = max(max_room, room[b])
    if max_room <= 0:
        return 0
    cand = np.empty(n, dtype=np.int64)
    nc = 0
    heavy = 0
    for b in range(k):
        heavy += bw[b] > maxw[b]
    if heavy * LIST_WALK_MAX_SHARE < k:
        # few overweight blocks: walk their member lists
        head, nxt = members[0], members[1]
        for b in range(k):
            if bw[b] <= maxw[b]:
                continue
            v = head[b]
            while v >= 0:
                if vwgt[v] > 0 and vwgt[v] <= max_room:
                    cand[nc] = v
                    nc += 1
                v = nxt[v]
    else:
        # they hold a large share of the graph: a pass in id order reads rows in memory order
        for v in range(n):
            b = parts[v]
            if bw[b] > maxw[b] and vwgt[v] > 0 and vwgt[v] <= max_room:
                cand[nc] = v
                nc += 1
    if nc == 0:
        return 0
    # per candidate (position i): destination, and its sort keys
    dest = np.empty(nc, dtype=np.int64)
    weight = np.empty(nc, dtype=np.float64)
    keys = np.empty((4, nc), dtype=np.float64)      # overshoots, loss per weight, tie, vertex
    _score_candidates(cand, nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list, wdeg,
                      stream_key_at(seed, _STREAM_TIES + 2 * rnd), stream_key_at(seed, _STREAM_ORDER + 2 * rnd),
                      dest, weight, keys, chunk, parallel_min)
    first = np.zeros(k + 1, dtype=np.int64)        # candidates grouped by block: counting sort
    for i in range(nc):
        first[parts[cand[i]] + 1] += 1
    for b in range(k):
        first[b + 1] += first[b]
    grouped = np.empty(nc, dtype=np.int64)
    fill = first[:k].copy()
    for i in range(nc):
        b = parts[cand[i]]
        grouped[fill[b]] = i
        fill[b] += 1
    # 1. each overweight block offers its cheapest vertices until its overload is covered
    sel = np.empty(nc, dtype=np.int64)
    m = 0
    for b in range(k):
        if bw[b] > maxw[b]:
            m = cheapest_covering(keys, grouped, first[b], first[b + 1], weight, bw[b] - maxw[b], sel, m)
    new_block = np.full(m, -1, dtype=np.int64)
    # 2. movers with an adjacent receiver: accept in priority order while the receiver has room
    na = 0
    for j in range(m):
        if dest[sel[j]] >= 0:
            na += 1
    if na:
        adj = np.empty(na, dtype=np.int64)
        akeys = np.empty((4, na), dtype=np.float64)  # destination, loss per weight, tie, vertex
        a = 0
        for j in range(m):
            i = sel[j]
            if dest[i] >= 0:
                adj[a] = j
                akeys[0, a] = dest[i]
                akeys[1, a] = keys[1, i]
                akeys[2, a] = keys[2, i]
                akeys[3, a] = cand[i]
                a += 1
        o2 = lexsort_rows(akeys)
        run = 0.0
        for t in range(na):
            j = adj[o2[t]]
            d = dest[sel[j]]
            if t > 0 and akeys[0, o2[t - 1]] != d:
                run = 0.0
            w = weight[sel[j]]
            if run + w <= room[d]:
                new_block[j] = d
            run += w
    # 3. the rest are packed into the room left anywhere (receivers in id order, prefix sums)
    nr = 0
    left = room.copy()
    for j in range(m):
        if new_block[j] < 0:
            nr += 1
        else:
            left[new_block[j]] -= weight[sel[j]]
    if nr:
        recv = np.empty(k, dtype=np.int64)
        cap = np.empty(k, dtype=np.float64)
        nrecv = 0
        total = 0.0
        for b in range(k):
            if left[b] > 0:
                total += left[b]
                recv[nrecv] = b
                cap[nrecv] = total
                nrecv += 1
        if nrecv:
            rest = np.empty(nr, dtype=np.int64)
            rkeys = np.empty((3, nr), dtype=np.float64)   # loss per weight, tie, vertex
            a = 0
            for j in range(m):
                if new_block[j] < 0:
                    i = sel[j]
                    rest[a] = j
                    rkeys[0, a] = keys[1, i]
                    rkeys[1, a] = keys[2, i]
                    rkeys[2, a] = cand[i]
                    a += 1
            o3 = lexsort_rows(rkeys)
            any_moved = nr < m
            cw = 0.0
            r = 0                                     # receivers whose room ends at or before start
            for t in range(nr):
                j = rest[o3[t]]
                start = cw
                cw += weight[sel[j]]
                while r < nrecv and cap[r] <= start:
                    r += 1
                if r < nrecv and cw <= cap[r]:        # lies wholly inside receiver r's room
                    new_block[j] = recv[r]
                    any_moved = True
            if not any_moved:
                # every mover straddled two rooms: move the first one into the largest room
                best_room = 0
                for b in range(1, k):
                    if left[b] > left[best_room]:
                        best_room = b
                j = rest[o3[0]]
                if weight[sel[j]] <= left[best_room]:
                    new_block[j] = best_room
    moved = 0
    for j in range(m):
        b = new_block[j]
        if b >= 0:
            v = cand[sel[j]]
            bw[parts[v]] -= vwgt[v]
            bw[b] += vwgt[v]
            relink(v, parts[v], b, members)
            parts[v] = b
            moved += 1
            if not logged[v]:
                logged[v] = True
                log[nlog[0]] = v
                nlog[0] += 1
    return moved


@njit(cache=True, internal=True)
def rebalance_nb(indptr, indices, ewgt, vwgt, parts, maxw, seed, max_rounds, log, nlog, logged, wdeg, listed,
                 nlisted, in_list, members, chunk, parallel_min):
    """Parallel rounds until balanced or stuck (the compiled loop of ``rebalance``); in place.

    listed[:nlisted] (flags in_list) must hold every boundary vertex; the moved vertices'
    neighbourhoods are added to it after each round, so it still does on return. Returns the
    block weights and the list's new length; moved vertices are logged as in
    rebalance_round_nb.
    """
    bw = host_block_weights(parts, vwgt, maxw.shape[0])
    for rnd in range(max_rounds):
        if host_overload(bw, maxw) == 0:
            break
        before = nlog[0]
        moved = rebalance_round_nb(indptr, indices, ewgt, vwgt, parts, maxw, bw, seed, rnd, log, nlog, logged,
                                   wdeg, in_list, members, chunk, parallel_min)
        if moved == 0:
            break
        nlisted = extend_boundary(indptr, indices, log, before, nlog[0], listed, nlisted, in_list)
    return bw, nlisted


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
        n = p.shape[0]
        rebalance_nb(indptr, indices, ewgt, vwgt, p, maxw, int(seed), int(max_rounds), np.empty(n, np.int64),
                     np.zeros(1, np.int64), np.zeros(n, np.bool_), np.zeros(n), np.arange(n), n, np.ones(n, np.bool_),
                     block_members(p, k), threads.CHUNK, threads.PARALLEL_MIN_ITEMS)
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
