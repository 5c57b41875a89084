"""Compiled k-way FM passes on host arrays: a global pass and localized multi-try rounds.

Both read moves from the gain cache (gain_cache.py): a move costs O(sum over v's neighbours
of the blocks they touch) instead of O(sum of their degrees), which is what made FM slow on
power-law and community graphs. Best state = lowest (overload, cut): moves only go into
blocks with room, so overload never grows and an unbalanced input drifts towards balance
while the cut is minimised. Every pass or search rolls back to its best prefix.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..prefetch import prefetch
from . import gain_cache as gc
from .boundary import on_boundary
from .heap import heap_pop, heap_remove, heap_set, new_heap
from .state import better_state, host_overload

# ---- tunables -------------------------------------------------------------------------
# A pass stops after this many moves in a row that did not give a new best state: FM's
# hill climbing needs room to cross a valley of negative moves, but long fruitless tails
# cost time and almost never pay off (KaFFPa stops after ~1% of n; METIS uses 15..100).
# 50, not 200: the same cut over the peers instances (2 seeds) in 0.95 x the time.
STALL_MOVES_MIN = 50
STALL_MOVES_FRACTION = 0.01
# ... and never more than this many: on a million vertices 1% is ~10^4 moves, each with its
# neighbourhood's updates and its rollback, that never paid off (delaunay 2^20, k = 32, 3
# seeds: the same cuts with 500, 1000 or 2000 as with ~10^4; the pipeline 0.92 x its time).
STALL_MOVES_MAX = 1000
# A k-way pass (global, grouped or localized) never moves a hub, a vertex of degree above
# HUB_DEGREE_FACTOR x the mean degree and above HUB_MIN_DEGREE: its move and its cache entries
# cost O(degree), and such moves rarely pay. R-MAT 2^16 (mean degree 28), finest level's FM after Jet, 2 threads:
# k = 8 134 -> 56 ms, k = 32 287 -> 132 ms, the same or more cut won. Meshes, geometric
# graphs and the coarsest graphs have no such vertex.
HUB_DEGREE_FACTOR = 8.0
HUB_MIN_DEGREE = 100
# Localized multi-try FM (k > 2): a local search stops after this many moves without a new
# best. Local searches are many and short; a long tail just wanders away from the seed.
LOCAL_STALL_MOVES = 40


@njit(cache=True)
def default_stall(n, minimum):
    """Moves without improvement after which a pass stops (see STALL_MOVES_*)."""
    return max(minimum, min(int(STALL_MOVES_FRACTION * n), STALL_MOVES_MAX))


@njit(cache=True, internal=True)
def hub_flags(indptr):
    """Per vertex: whether it is a hub that k-way passes never move (see HUB_DEGREE_FACTOR)."""
    n = indptr.shape[0] - 1
    hub = np.zeros(n, dtype=np.bool_)
    if n == 0:
        return hub
    cap = max(float(HUB_MIN_DEGREE), HUB_DEGREE_FACTOR * indptr[n] / n)
    for v in range(n):
        hub[v] = indptr[v + 1] - indptr[v] > cap
    return hub


@njit(cache=True, internal=True, inline="always")
def _best(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache):
    """(gain, target) of v's best move to an adjacent block with room, from its (built) entries."""
    if not gc.built(v, cache):     # build's own test, without the call
        gc.build(v, indptr, indices, ewgt, parts, cache)
    return gc.best_move(v, parts[v], vwgt[v], bw, maxw, cache)


@njit(cache=True, internal=True)
def apply_move(v, to, indptr, indices, ewgt, vwgt, parts, bw, cache):
    """Move v to block ``to``: parts, block weights and the neighbours' cache entries."""
    frm = parts[v]
    parts[v] = to
    bw[frm] -= vwgt[v]
    bw[to] += vwgt[v]
    gc.move(v, frm, to, indptr, indices, ewgt, cache)


@njit(cache=True, internal=True)
def _next_move(indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, keys, verts, pos, size):
    """Pop the queue until a vertex whose move is still as good as its key: (v, gain, target),
    or v = -1 when the queue runs empty. A vertex with no block with room left is dropped; one
    whose best gain fell (a block filled up) goes back under its new gain."""
    while size[0] > 0:
        v, key = heap_pop(keys, verts, pos, size)
        g, t = _best(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache)
        if t < 0:
            continue
        if g < key:
            heap_set(keys, verts, pos, size, v, g)
            continue
        return v, g, t
    return -1, 0.0, -1


@njit(cache=True, internal=True)
def _move_and_requeue(v, to, skip, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, keys, verts, pos, size):
    """apply_move(v, to), then queue each neighbour not in ``skip`` under its new best gain
    (or drop it from the queue when it has no move left), in one walk over v's row.

    A neighbour's best move depends on its own entries and the block weights only, so
    updating its entries and requeueing it at once gives the same heap as two walks; one
    walk touches each neighbour's entries while they are still in the cache (a hub's row
    evicts them before a second walk reaches them).
    """
    frm = parts[v]
    parts[v] = to
    bw[frm] -= vwgt[v]
    bw[to] += vwgt[v]
    nb = cache[3]
    end = indptr[v + 1]
    for e in range(indptr[v], end):
        # the neighbours a few entries on: their cache entries (as gain_cache.move), heap slot
        # and, nearer, heap key; each is a cache miss on large graphs
        gc.prefetch_entries_ahead(e, end, indices, cache)
        if e + gc.SLOTS_AHEAD < end:
            ahead = indices[e + gc.SLOTS_AHEAD]
            prefetch(pos, ahead)
            prefetch(skip, ahead)
        if e + gc.ENTRIES_AHEAD < end:
            i = pos[indices[e + gc.ENTRIES_AHEAD]]
            if i >= 0:
                prefetch(keys, i)
        u = indices[e]
        if nb[u] >= 0:
            w = ewgt[e]
            gc.shift(u, frm, -w, -1, cache)
            gc.shift(u, to, w, 1, cache)
        if skip[u]:
            continue
        gu, tu = _best(u, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache)
        if tu >= 0:
            i = pos[u]
            if i < 0 or keys[i] != gu:     # an unchanged key leaves the heap as it is
                heap_set(keys, verts, pos, size, u, gu)
        else:
            heap_remove(keys, verts, pos, size, u)


@njit(cache=True, internal=True)
def _overload_after(bw, maxw, frm, to, w, cur_over):
    """Total overload after moving weight w from frm to to (cur_over before)."""
    old = max(bw[frm] - maxw[frm], 0.0) + max(bw[to] - maxw[to], 0.0)
    new = max(bw[frm] - w - maxw[frm], 0.0) + max(bw[to] + w - maxw[to], 0.0)
    over = cur_over + new - old
    return 0.0 if over < 1e-9 * w else over   # float residue of a block that is exactly full


@njit(cache=True, internal=True)
def fm_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, stall, cut, cache, chunk, parallel_min):
    """One global FM pass in place; returns (cut, moves kept). ``order``: distinct vertices, the
    queue's insertion order; the queue's entries are built on the threads (gain_cache.build_best,
    in chunks of ``chunk`` from ``parallel_min`` vertices up)."""
    return locked_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, hub_flags(indptr), stall, cut, cache,
                       chunk, parallel_min)


@njit(cache=True, internal=True)
def locked_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, locked, stall, cut, cache, chunk,
                parallel_min):
    """fm_pass in which the vertices flagged in ``locked`` (hubs, grouped_fm's other groups)
    never move and are never built in the cache; ``locked`` is changed."""
    n = indptr.shape[0] - 1
    free = np.empty(order.shape[0], dtype=np.int64)    # the listed vertices that may move
    nfree = 0
    for i in range(order.shape[0]):
        if not locked[order[i]]:
            free[nfree] = order[i]
            nfree += 1
    order = free[:nfree]
    keys, verts, pos, size = new_heap(n)
    log_v = np.empty(n, dtype=np.int64)
    log_from = np.empty(n, dtype=np.int64)

    gain = np.empty(n, dtype=np.float64)
    target = np.empty(n, dtype=np.int64)
    gc.build_best(np.sort(order), indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, gain, target, chunk,
                  parallel_min)
    for i in range(order.shape[0]):  # boundary vertices, inserted in random order for tie-breaking
        v = order[i]
        if target[v] >= 0:
            heap_set(keys, verts, pos, size, v, gain[v])

    cur_cut = cut
    cur_over = host_overload(bw, maxw)
    best_cut = cur_cut
    best_over = cur_over
    best_len = 0
    nmoves = 0
    since_best = 0
    while since_best < stall:
        v, g, t = _next_move(indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, keys, verts, pos, size)
        if v < 0:
            break
        frm = parts[v]
        cur_over = _overload_after(bw, maxw, frm, t, vwgt[v], cur_over)
        cur_cut -= g
        locked[v] = True
        log_v[nmoves] = v
        log_from[nmoves] = frm
        nmoves += 1
        if better_state(cur_over, cur_cut, best_over, best_cut):
            best_over = cur_over
            best_cut = cur_cut
            best_len = nmoves
            since_best = 0
        else:
            since_best += 1
        _move_and_requeue(v, t, locked, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, keys, verts, pos, size)

    for i in range(nmoves - 1, best_len - 1, -1):  # roll back to the best prefix
        apply_move(log_v[i], log_from[i], indptr, indices, ewgt, vwgt, parts, bw, cache)
    return best_cut, best_len


@njit(cache=True, internal=True)
def localized_round(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, stall, cut, cache):
    """One round of localized multi-try FM (KaFFPa) in place; returns (cut, moves kept).

    Each search starts from one boundary vertex not yet touched in this round, grows through
    the neighbours of moved vertices only, stops after `stall` moves without a new best and
    rolls back to its best prefix. Many small searches find improvements that one global
    pass stalls on. A vertex moves at most once per round, kept or rolled back (KaMinPar's
    rule): a round then costs O(m), where letting later searches move rolled-back vertices
    again cost 50-100x the global pass on power-law graphs (hubs are every search's
    neighbour) for under 1% of cut.
    """
    n = indptr.shape[0] - 1
    keys, verts, pos, size = new_heap(n)
    done = hub_flags(indptr)  # seeded a search or moved (or a hub): not touched again this round
    log_v = np.empty(n, dtype=np.int64)
    log_from = np.empty(n, dtype=np.int64)
    kept_total = 0
    over = host_overload(bw, maxw)
    for i in range(order.shape[0]):
        s = order[i]
        if done[s]:
            continue
        done[s] = True
        if not on_boundary(s, indptr, indices, parts):
            continue
        g, t = _best(s, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache)
        if t < 0:
            continue
        heap_set(keys, verts, pos, size, s, g)
        cur_gain = 0.0
        best_gain = 0.0
        cur_over = over
        best_over = over
        nm = 0
        best_len = 0
        since_best = 0
        while since_best < stall:
            v, g, t = _next_move(indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, keys, verts, pos, size)
            if v < 0:
                break
            frm = parts[v]
            cur_over = _overload_after(bw, maxw, frm, t, vwgt[v], cur_over)
            cur_gain += g
            done[v] = True
            log_v[nm] = v
            log_from[nm] = frm
            nm += 1
            if better_state(cur_over, -cur_gain, best_over, -best_gain):
                best_over = cur_over
                best_gain = cur_gain
                best_len = nm
                since_best = 0
            else:
                since_best += 1
            _move_and_requeue(v, t, done, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, keys, verts, pos,
                              size)
        while size[0] > 0:  # empty the queue for the next search
            heap_pop(keys, verts, pos, size)
        for j in range(nm - 1, best_len - 1, -1):
            apply_move(log_v[j], log_from[j], indptr, indices, ewgt, vwgt, parts, bw, cache)
        cut -= best_gain
        over = best_over
        kept_total += best_len
    return cut, kept_total
