"""Rebalancing's parallel rounds as compiled kernels (the CPU's): the same moves as
rebalance._rebalance_round, the whole-array formulation, for the same seed. A round is one call
(``rebalance_round_nb``); its candidates are scored in fixed chunks on the threads.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..backend.rng import hash32_at, stream_key_at
from ..chunks import kernel_list_chunks
from ..jit import njit
from ..sorting import lexsort_rows
from ..threads import PRANGE_ONLY
from .boundary import ROWS_AHEAD, extend_and_flag_chunked, prefetch_row_blocks
from .destinations import vertex_destination
from .packing import largest_rooms, rooms_end_to_end
from .selection import cheapest_covering
from .rebalance_members import interior_loss_floor, walk_members
from .state import host_block_weights, host_overload, relink

# Tunables
LIST_WALK_MAX_SHARE = 4    # candidates come from the overweight blocks' member lists while those
                           # blocks are fewer than k / 4, else from a pass over all vertices: a
                           # list visits vertices in scattered order (a cache miss each), which
                           # cost more than the pass when the blocks hold much of the graph
                           # (ba 2^16, k = 8: Jet 1.26 -> 1.43 s with lists only)
LISTED_FIRST_MAX_RATIO = 3  # a round tries the boundary list before the member lists while the list
                            # has at most 3 x the overweight blocks' members (an entry costs one
                            # cache miss, a member about three). Delaunay 2^20, k = 8192, 2 threads,
                            # seeds 0-2: refinement 3.47 s before the list was tried, 3.95 s when
                            # always tried, 3.27 s with this bound
MIN_PROGRESS = 0.003      # rounds stop once one lowers the total overload by less than this
                          # fraction: they crawl on, a vertex a round, where the room left lies in
                          # blocks with less room than a vertex weighs. Delaunay 2^20, k = 8192
                          # (2 threads, 2 seeds): without, 256 rounds per call on the coarsest
                          # levels and refinement 4.7 s; 0.003: 3.2 s, the same partitions;
                          # 0.01: 3.0 s, 0.8% more cut
STREAM_TIES = 0x5EB1      # hash stream for ties between equally connected destination blocks
STREAM_ORDER = 0x5EB2     # hash stream for the order of equally good movers in rebalancing


@njit(cache=True, internal=True)
def _score_chunk(c, starts, cand, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list, wdeg,
                 dest_key, order_key, dest, weight, keys, acc, touched):
    k = maxw.shape[0]
    stop = starts[c + 1]
    for i in range(starts[c], stop):
        v = cand[i]
        if i + ROWS_AHEAD < stop and in_list[cand[i + ROWS_AHEAD]]:
            prefetch_row_blocks(cand[i + ROWS_AHEAD], indptr, indices, parts)
        if in_list[v]:
            d, cd, co, _ = vertex_destination(v, indptr, indices, ewgt, parts, k, True, receivers, dest_key,
                                              acc, touched)
        else:
            if wdeg[v] < 0:          # not needed before: the row's sum, in row order
                s = 0.0
                for e in range(indptr[v], indptr[v + 1]):
                    s += ewgt[e]
                wdeg[v] = s
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
    ``chunk`` candidates, split where their rows are long (chunks.list_chunk_starts), on
    threads from ``parallel_min`` up: a chunk writes only its own slots, so the keys are the
    same for any number of threads."""
    k = maxw.shape[0]
    threaded = nc >= parallel_min
    starts = kernel_list_chunks(cand, nc, indptr, indices.shape[0], chunk, threaded)
    chunks = starts.shape[0] - 1
    if threaded:
        for c in prange(chunks):
            _score_chunk(np.int64(c), starts, cand, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers,
                         in_list, wdeg, dest_key, order_key, dest, weight, keys, np.zeros(k, dtype=ewgt.dtype),
                         np.empty(k, dtype=np.int64))
    else:
        acc = np.zeros(k, dtype=ewgt.dtype)
        touched = np.empty(k, dtype=np.int64)
        for c in range(chunks):
            _score_chunk(c, starts, cand, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list,
                         wdeg, dest_key, order_key, dest, weight, keys, acc, touched)


@njit(cache=True, internal=True)
def _scored(cand, nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list, wdeg, seed, rnd, chunk,
            parallel_min):
    """(destination, weight, sort keys) of the candidates cand[:nc] (_score_candidates)."""
    dest = np.empty(nc, dtype=np.int64)
    weight = np.empty(nc, dtype=np.float64)
    keys = np.empty((4, nc), dtype=np.float64)      # overshoots, loss per weight, tie, vertex
    _score_candidates(cand, nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list, wdeg,
                      stream_key_at(seed, STREAM_TIES + 2 * rnd), stream_key_at(seed, STREAM_ORDER + 2 * rnd),
                      dest, weight, keys, chunk, parallel_min)
    return dest, weight, keys


@njit(cache=True, internal=True)
def _joined(dest, weight, keys, more_dest, more_weight, more_keys):
    """The scores of two candidate lists, one after the other."""
    a, b = dest.shape[0], more_dest.shape[0]
    d = np.empty(a + b, dtype=np.int64)
    w = np.empty(a + b, dtype=np.float64)
    kk = np.empty((4, a + b), dtype=np.float64)
    d[:a], d[a:] = dest, more_dest
    w[:a], w[a:] = weight, more_weight
    for r in range(4):
        kk[r, :a], kk[r, a:] = keys[r], more_keys[r]
    return d, w, kk


@njit(cache=True, internal=True)
def _cheapest_sets(cand, nc, parts, maxw, bw, weight, keys, floor, inexact):
    """Each overweight block's cheapest covering set of the candidates cand[:nc] (positions
    into them, appended block by block) and how many. A block's set is exact when it covers
    the block's overload and precedes any unlisted vertex (key 0 is 0 and the loss per weight
    below ``floor``, interior_loss_floor): adding the block's unlisted members as candidates
    would take the same set. inexact[b] is set for the overweight blocks whose set is not
    (left as it is for the others); returns (sel, count, every set exact)."""
    k = maxw.shape[0]
    below = np.zeros(k, dtype=np.float64)
    if floor < np.inf:
        # cheap test first: a block's candidates below the floor must cover its overload
        for i in range(nc):
            if keys[0, i] == 0.0 and keys[1, i] < floor:
                below[parts[cand[i]]] += weight[i]
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
    sel = np.empty(nc, dtype=np.int64)
    m = 0
    exact = True
    for b in range(k):
        if bw[b] > maxw[b]:
            if floor < np.inf and below[b] < bw[b] - maxw[b]:
                inexact[b] = True
                exact = False
                continue
            start = m
            m = cheapest_covering(keys, grouped, first[b], first[b + 1], weight, bw[b] - maxw[b], sel, m)
            taken = 0.0
            block_exact = True
            for j in range(start, m):
                i = sel[j]
                taken += weight[i]
                block_exact = block_exact and keys[0, i] == 0.0 and keys[1, i] < floor
            if not (block_exact and taken >= bw[b] - maxw[b]):
                inexact[b] = True
                exact = False
    return sel, m, exact


@njit(cache=True, internal=True)
def _movable(v, parts, bw, maxw, vwgt, max_room):
    """v is a candidate: in an overweight block, of positive weight that some room can take."""
    b = parts[v]
    return bw[b] > maxw[b] and vwgt[v] > 0 and vwgt[v] <= max_room


@njit(cache=True, internal=True)
def rebalance_round_nb(indptr, indices, ewgt, vwgt, parts, maxw, bw, seed, rnd, log, nlog, logged, wdeg, listed,
                       nlisted, in_list, members, chunk, parallel_min, floor, origin):
    """One round of _rebalance_round as one kernel; parts, bw and members change in place;
    returns the number of moves.

    Candidates are found through ``members`` (state.block_members): the lists of the
    overweight blocks only, not a pass over all n vertices (k = 32: 1/32 of them, and Jet
    rebalances a few rounds in nearly every iteration). Before walking those lists (a cache
    miss per member), the round tries the overweight blocks' vertices in listed[:nlisted]
    (the boundary list, flagged in ``in_list``) alone: their cheapest sets stand when they
    cover the overloads below ``floor`` (interior_loss_floor: no unlisted vertex is cheaper),
    the same selection as from every member; else the unlisted members of the blocks whose
    sets fall short join them.

    Vertices not flagged in ``in_list`` are known to be interior: their loss is their whole
    weighted degree ``wdeg`` and they have no adjacent destination, so their rows are only
    summed, once: wdeg holds -1 for a vertex not summed yet (filled as candidates need it,
    or all at once with ``floor[0]``, NaN until the list is first tried). The movers are chosen
    by selection.cheapest_covering (a heap, or quickselects for long lists), not a sort of
    every candidate: a block's overload after a Jet iteration is a few vertices' worth while
    it holds tens of thousands. Moved vertices not yet
    ``logged`` are flagged and appended to log (log[nlog[0]], ...), so callers can update
    what depends on their blocks without a full pass; log needs room for n. ``origin``
    (empty: not kept): origin[v] = v's block when it was logged, before its first move.
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
    sel = np.empty(0, dtype=np.int64)
    m = 0
    # the overweight blocks' members, estimated from their weight (unit weights: exact)
    total = 0.0
    heavy_weight = 0.0
    for b in range(k):
        total += bw[b]
        if bw[b] > maxw[b]:
            heavy_weight += bw[b]
    members_est = heavy_weight / total * n if total > 0 else 0.0
    if heavy * LIST_WALK_MAX_SHARE < k and nlisted < n and nlisted <= LISTED_FIRST_MAX_RATIO * members_est:
        if np.isnan(floor[0]):
            floor[0] = interior_loss_floor(indptr, ewgt, vwgt, wdeg)
        # few overweight blocks: first their listed vertices alone; their sets stand when
        # they end below every unlisted vertex's loss (_cheapest_sets), else the unlisted
        # members join them (a walk of the blocks' member lists)
        for t in range(nlisted):
            if _movable(listed[t], parts, bw, maxw, vwgt, max_room):
                cand[nc] = listed[t]
                nc += 1
        dest, weight, keys = _scored(cand, nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list, wdeg,
                                     seed, rnd, chunk, parallel_min)
        inexact = np.zeros(k, dtype=np.bool_)
        sel, m, exact = _cheapest_sets(cand, nc, parts, maxw, bw, weight, keys, floor[0], inexact)
        if exact:
            nc = 0                               # done: nothing to add
        else:
            # the unlisted members join only in the blocks whose sets are not exact (delaunay
            # 2^20, k = 8192, finest level: ~1200 overweight blocks a round, each shedding a
            # vertex or two; one inexact block made every block's members candidates)
            listed_nc = nc
            nc = walk_members(members, bw, maxw, vwgt, max_room, in_list, True, cand, listed_nc, inexact)
            more = _scored(cand[listed_nc:], nc - listed_nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers,
                           in_list, wdeg, seed, rnd, chunk, parallel_min)
            dest, weight, keys = _joined(dest, weight, keys, more[0], more[1], more[2])
    else:
        if heavy * LIST_WALK_MAX_SHARE < k:
            nc = walk_members(members, bw, maxw, vwgt, max_room, in_list, False, cand, 0, np.ones(k, dtype=np.bool_))
        else:
            # they hold a large share of the graph: a pass in id order reads rows in memory order
            for v in range(n):
                if _movable(v, parts, bw, maxw, vwgt, max_room):
                    cand[nc] = v
                    nc += 1
        dest, weight, keys = _scored(cand, nc, indptr, indices, ewgt, vwgt, parts, maxw, bw, receivers, in_list, wdeg,
                                     seed, rnd, chunk, parallel_min)
    if nc:
        # 1. each overweight block offers its cheapest vertices until its overload is covered
        sel, m, _ = _cheapest_sets(cand, nc, parts, maxw, bw, weight, keys, np.inf, np.zeros(k, dtype=np.bool_))
    if m == 0:
        return 0
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
    # 3. the rest are packed into the room left anywhere (packing.rooms_end_to_end, largest_rooms)
    nr = 0
    left = room.copy()
    any_room = False
    for j in range(m):
        if new_block[j] < 0:
            nr += 1
        else:
            left[new_block[j]] -= weight[sel[j]]
    for b in range(k):
        any_room = any_room or left[b] > 0
    if nr and any_room:
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
        ordered_w = np.empty(nr, dtype=np.float64)
        for t in range(nr):
            ordered_w[t] = weight[sel[rest[o3[t]]]]
        into = largest_rooms(ordered_w, rooms_end_to_end(ordered_w, left), left)
        any_moved = nr < m
        for t in range(nr):
            if into[t] >= 0:
                new_block[rest[o3[t]]] = into[t]
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
            if not logged[v]:
                logged[v] = True
                log[nlog[0]] = v
                nlog[0] += 1
                if origin.shape[0]:
                    origin[v] = parts[v]
            bw[parts[v]] -= vwgt[v]
            bw[b] += vwgt[v]
            relink(v, parts[v], b, members)
            parts[v] = b
            moved += 1
    return moved


@njit(cache=True, internal=True)
def rebalance_nb(indptr, indices, ewgt, vwgt, parts, maxw, seed, max_rounds, log, nlog, logged, wdeg, listed,
                 nlisted, in_list, members, chunk, parallel_min, floor, origin):
    """Parallel rounds until balanced, stuck or crawling (MIN_PROGRESS; the compiled loop of
    ``rebalance``); in place.

    listed[:nlisted] (flags in_list) must hold every boundary vertex; the moved vertices'
    neighbourhoods are added to it after each round, so it still does on return. Returns the
    block weights and the list's new length; moved vertices are logged as in
    rebalance_round_nb, with their blocks before the call in ``origin`` unless it is empty.
    ``floor``: a 1-element array, NaN until a round first needs interior_loss_floor (+inf
    when every vertex is listed).
    """
    bw = host_block_weights(parts, vwgt, maxw.shape[0])
    for rnd in range(max_rounds):
        over = host_overload(bw, maxw)
        if over == 0:
            break
        before = nlog[0]
        moved = rebalance_round_nb(indptr, indices, ewgt, vwgt, parts, maxw, bw, seed, rnd, log, nlog, logged,
                                   wdeg, listed, nlisted, in_list, members, chunk, parallel_min, floor, origin)
        if moved == 0:
            break
        nlisted = extend_and_flag_chunked(indptr, indices, log, before, nlog[0], listed, nlisted, in_list,
                                          np.empty(0, dtype=np.bool_), chunk, parallel_min)
        if host_overload(bw, maxw) > (1.0 - MIN_PROGRESS) * over:
            break
    return bw, nlisted
