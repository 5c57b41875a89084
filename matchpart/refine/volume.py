"""k-way FM for the communication volume (METIS's objtype=vol), compiled: one call per level.

The passes of kway_fm.py with the volume as the objective: a global queue of boundary
vertices keyed by the volume gain of their best move (volume_gain.py), the cut gain
breaking ties; moves only go to blocks with room, each vertex moves at most once per pass,
and a pass rolls back to its best prefix, best meaning lowest (overload, volume, cut). A move
changes the gains of the mover's neighbours and, where a neighbour's count of edges into
the source or target block crosses 0, 1 or 2, of that neighbour's neighbours: the first and
those of the second whose gains rose are queued again (only vertices of degree <=
RESCORE_MAX_DEGREE); a key that is too high is caught when it is popped, since every move
is re-scored before it is made.
An overweight input is first rebalanced by least_loss.py's least cut loss moves.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from . import gain_cache as gc
from .boundary import cover_changes, shuffled_boundary
from .heap import heap_pop, heap_remove, heap_set, new_heap
from .kway_fm import STALL_MOVES_MIN, _overload_after, apply_move, default_stall
from .least_loss import rebalance_if_over
from .state import host_block_weights, host_overload, host_weighted_degree
from .volume_gain import best_volume_move

# Vertices of higher degree are not re-scored after a neighbour's move (scoring one costs
# the sum of its neighbours' adjacent blocks; a hub of a power-law graph is a neighbour of
# most moves), and neither are the neighbours of such a vertex when its counts cross a
# threshold. A stale key is caught when it is popped. On Barabasi-Albert 2^16, k = 8, one
# pass took 23 s re-scoring hubs after every move.
RESCORE_MAX_DEGREE = 64
# Whether the second-hop vertices are re-scored at all (see requeue_after).
TWO_HOP_RESCORE = True
# Passes end after one that lowers the volume by at most this fraction of the volume
# gained so far plus one (the same local optimum again).
MIN_PASS_GAIN = 1e-3


@njit(cache=True, internal=True)
def _better(over, vol, cut, best_over, best_vol, best_cut):
    """Less overload first, then less volume, then less cut (vol, cut: changes since the start)."""
    if over != best_over:
        return over < best_over
    if vol != best_vol:
        return vol < best_vol
    return cut < best_cut


@njit(cache=True, internal=True)
def _queue(x, indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, cache, have, scale, heap):
    keys, verts, pos, size = heap
    gv, gcut, t = best_volume_move(x, indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, cache, have)
    if t >= 0:
        heap_set(keys, verts, pos, size, x, gv * scale + gcut)
    else:
        heap_remove(keys, verts, pos, size, x)


@njit(cache=True, internal=True)
def requeue_after(v, a, b, tick, indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, cache, have, scale, heap,
                  locked, stamp):
    """After v moved from block a to block b: queue its neighbours under their new gains, and
    the second-hop vertices x (neighbours of a neighbour u) whose gains rose, since a key that
    is too high is caught when it is popped but one too low is not. Their gains read u's
    counts (module volume_gain: terms with p(u) != a read c(u, a), with p(u) != b c(u, b)):
    - c(u, b) rose to 1: x's gain to b (x with a neighbour in b) loses its s(u) penalty;
    - c(u, a) fell to 1: the last neighbour x of u in a would now take a out of B(u).
    (c(u, a) falling to 0 and c(u, b) rising to 2 only lower gains.) Only queued vertices
    are re-scored there: the rest are locked, interior or without a block with room.
    Against re-scoring every neighbour of such a u: the same volume (geometric mean over
    Barabasi-Albert, Watts-Strogatz, delaunay 2^16 and four shared graphs, k = 8, 32) in
    0.6 x the time (Barabasi-Albert k = 32: 0.32 x). ``stamp``/``tick`` queue each vertex
    once per move."""
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if not locked[u] and stamp[u] != tick and indptr[u + 1] - indptr[u] <= RESCORE_MAX_DEGREE:
            stamp[u] = tick
            _queue(u, indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, cache, have, scale, heap)
    if not TWO_HOP_RESCORE:
        return
    pos = heap[2]
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if indptr[u + 1] - indptr[u] > RESCORE_MAX_DEGREE:
            continue
        pu = parts[u]
        ca = gc.entry_count(u, a, cache) if pu != a else 2      # 2: no indicator of u's changed
        cb = gc.entry_count(u, b, cache) if pu != b else 2
        if ca != 1 and cb != 1:
            continue
        for f in range(indptr[u], indptr[u + 1]):
            x = indices[f]
            if pos[x] < 0 or stamp[x] == tick or indptr[x + 1] - indptr[x] > RESCORE_MAX_DEGREE:
                continue
            if (cb == 1 and gc.entry_count(x, b, cache) > 0) or (ca == 1 and parts[x] == a):
                stamp[x] = tick
                _queue(x, indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, cache, have, scale, heap)


@njit(cache=True, internal=True)
def volume_pass(indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, order, stall, scale, cache, have):
    """One global volume FM pass in place from the vertices of ``order`` (the boundary, in a
    random order that decides ties); returns (volume gained, cut gained, moves kept)."""
    n = indptr.shape[0] - 1
    heap = new_heap(n)
    keys, verts, pos, size = heap
    locked = np.zeros(n, dtype=np.bool_)
    stamp = np.full(n, -1, dtype=np.int64)
    log_v = np.empty(n, dtype=np.int64)
    log_from = np.empty(n, dtype=np.int64)
    for i in range(order.shape[0]):
        _queue(order[i], indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, cache, have, scale, heap)
    cur_over = host_overload(bw, maxw)
    cur_vol = 0.0            # volume and cut relative to the start of the pass
    cur_cut = 0.0
    best_over, best_vol, best_cut = cur_over, 0.0, 0.0
    best_len = 0
    nmoves = 0
    since_best = 0
    while since_best < stall and size[0] > 0:
        v, key = heap_pop(keys, verts, pos, size)
        gv, gcut, t = best_volume_move(v, indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, cache, have)
        if t < 0:
            continue
        if gv * scale + gcut < key:          # its gain fell since it was queued: back in line
            heap_set(keys, verts, pos, size, v, gv * scale + gcut)
            continue
        a = parts[v]
        cur_over = _overload_after(bw, maxw, a, t, vwgt[v], cur_over)
        apply_move(v, t, indptr, indices, ewgt, vwgt, parts, bw, cache)
        cur_vol -= gv
        cur_cut -= gcut
        locked[v] = True
        log_v[nmoves] = v
        log_from[nmoves] = a
        nmoves += 1
        if _better(cur_over, cur_vol, cur_cut, best_over, best_vol, best_cut):
            best_over, best_vol, best_cut = cur_over, cur_vol, cur_cut
            best_len = nmoves
            since_best = 0
        else:
            since_best += 1
        requeue_after(v, a, t, nmoves, indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, cache, have, scale,
                      heap, locked, stamp)
    for i in range(nmoves - 1, best_len - 1, -1):     # roll back to the best prefix
        apply_move(log_v[i], log_from[i], indptr, indices, ewgt, vwgt, parts, bw, cache)
    return -best_vol, -best_cut, best_len


@njit(cache=True)
def volume_refine_nb(indptr, indices, ewgt, vwgt, vsize, parts, maxw, passes, seed, stall, hint):
    """Rebalance if overweight, then up to ``passes`` volume FM passes; in place.

    ``hint``: flags of a superset of the input's boundary, or an empty array (every vertex is
    tested); when given, it is extended to cover the result's boundary too.
    Returns (volume gained, cut gained by the passes, moves, passes done, rebalance moves,
    overload); the gains are exact for integer sizes and weights.
    """
    n = indptr.shape[0] - 1
    k = maxw.shape[0]
    bw = host_block_weights(parts, vwgt, k)
    cache = gc.new_cache(n, indices.shape[0], k)
    have = np.zeros(k, dtype=np.float64)
    before = parts.copy() if hint.shape[0] else parts[:0].copy()
    # cut gains break ties between equal volume gains in the queue's keys
    wdeg = host_weighted_degree(indptr, ewgt)
    scale = 2.0 * (wdeg.max() if n else 0.0) + 1.0
    rb_moves = rebalance_if_over(indptr, indices, ewgt, vwgt, parts, bw, maxw, seed, cache)
    np.random.seed(seed)
    no_hint = np.empty(0, dtype=np.bool_)
    vol_gain = 0.0
    cut_gain = 0.0
    moves = 0
    done = 0
    for p in range(passes):
        before_over = host_overload(bw, maxw)
        order = shuffled_boundary(indptr, indices, parts, hint if p == 0 and rb_moves == 0 else no_hint)
        gv, gcut, kept = volume_pass(indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, order, stall, scale,
                                     cache, have)
        vol_gain += gv
        cut_gain += gcut
        moves += kept
        done += 1
        if kept == 0 or (host_overload(bw, maxw) >= before_over and gv <= MIN_PASS_GAIN * (vol_gain + 1.0)):
            break
    if hint.shape[0]:
        cover_changes(indptr, indices, before, parts, hint)
    return vol_gain, cut_gain, moves, done, rb_moves, host_overload(bw, maxw)


def volume_refine_arrays(arrays, parts, maxw, vsize, *, seed=0, passes=2, stall=None, boundary_hint=None):
    """Volume FM on host arrays (state.host_arrays) with per-block bounds ``maxw`` and vertex
    sizes ``vsize`` (host float64, one per vertex); ``parts`` (int64) is changed in place.
    ``boundary_hint``: as fm.refine_arrays's. Returns a dict: volume_gain, cut_gain, moves,
    passes, rebalance_moves, overload (0 means balanced)."""
    indptr, indices, ewgt, vwgt = arrays
    n = indptr.shape[0] - 1
    stall = default_stall(n, STALL_MOVES_MIN) if stall is None else int(stall)
    gv, gcut, moves, done, rb, over = volume_refine_nb(
        indptr, indices, ewgt, vwgt, vsize, parts, maxw, int(passes), int(seed) % 2**31, stall,
        np.empty(0, dtype=np.bool_) if boundary_hint is None else boundary_hint)
    return {"volume_gain": gv, "cut_gain": gcut, "moves": int(moves), "passes": int(done),
            "rebalance_moves": int(rb), "overload": float(over)}


def volume_fm(graph, parts, k, max_block_weight, *, vsize=None, seed=0, passes=2, return_stats=False):
    """Volume FM refinement (CPU, compiled); returns new int64 parts (the input is unchanged).

    Lowers the total communication volume (metrics.communication_volume, with vertex sizes
    ``vsize`` when given) of a k-way partition, never making it less balanced; an overweight
    input is rebalanced first. max_block_weight: one bound or k per-block bounds.
    return_stats: also return volume_refine_arrays's dict.
    """
    from .. import metrics
    from .fm import _check_parts
    from .state import bounds_array, host_arrays
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if passes < 0:
        raise ValueError(f"passes must be >= 0, got {passes}")
    arrays = host_arrays(graph)
    n = arrays[0].shape[0] - 1
    p = _check_parts(parts, n, k)
    sizes = metrics.check_vertex_sizes(vsize, n)
    stats = volume_refine_arrays(arrays, p, bounds_array(max_block_weight, k), sizes, seed=seed, passes=passes)
    return (p, stats) if return_stats else p
