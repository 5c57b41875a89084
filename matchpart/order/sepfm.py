"""Compiled separator refinement (two-sided node FM): move separator vertices into a side,
pulling their neighbours on the other side into the separator."""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..refine.heap import heap_pop, heap_remove, heap_set

# A pass stops after this many moves without a new best state (METIS bounds its node FM
# passes the same way); at least SEP_STALL_MIN, else this fraction of the vertices.
SEP_STALL_MIN = 50
SEP_STALL_FRACTION = 0.02
SEP_STALL_MAX = 300
# Passes per level (a pass that keeps no move ends them early): METIS's niter is 10 too.
SEP_PASSES = 10


@njit(cache=True, internal=True)
def side_weights(where, vwgt):
    """Weights of side 0, side 1 and the separator (2)."""
    pw = np.zeros(3, dtype=np.float64)
    for v in range(where.shape[0]):
        pw[where[v]] += vwgt[v]
    return pw


@njit(cache=True, internal=True)
def _overload(pw, maxside):
    return max(pw[0] - maxside, 0.0) + max(pw[1] - maxside, 0.0)


@njit(cache=True, internal=True)
def _pull(indptr, indices, vwgt, where, v, s):
    """Weight of v's neighbours on side 1 - s: what moving v into side s pulls into the separator."""
    w = 0.0
    for e in range(indptr[v], indptr[v + 1]):
        if where[indices[e]] == 1 - s:
            w += vwgt[indices[e]]
    return w


@njit(cache=True, internal=True)
def _better(over, sep, diff, best_over, best_sep, best_diff):
    """The order of separator states: less overload, then a lighter separator, then balance."""
    return over < best_over or (over == best_over and (sep < best_sep or (sep == best_sep and diff < best_diff)))


@njit(cache=True, internal=True)
def sep_fm_pass(indptr, indices, vwgt, where, pw, maxside, stall, order):
    """One two-sided FM pass over the separator ``where`` (0 / 1 / 2 per vertex) in place.

    Every separator vertex v sits in two max-heaps, one per side s, keyed by the gain of
    moving v into s: vwgt[v] minus the weight of its neighbours on side 1 - s (those join the
    separator). The best move whose side stays within ``maxside`` is made (the lighter side on
    ties); moved vertices are locked for the pass. The pass is rolled back to its best prefix
    by (overload, separator weight, side difference); ``pw`` (side weights) follows.
    Returns the number of moves kept.
    """
    n = indptr.shape[0] - 1
    keys = np.empty((2, n), dtype=np.float64)
    verts = np.empty((2, n), dtype=np.int64)
    pos = np.full((2, n), -1, dtype=np.int64)
    sizes = np.zeros((2, 1), dtype=np.int64)
    locked = np.zeros(n, dtype=np.bool_)
    cap = n + indices.shape[0] + 1          # a move changes its vertex once and pulls along its edges
    log_v = np.empty(cap, dtype=np.int64)   # every label change, in order, with the old label
    log_old = np.empty(cap, dtype=np.int64)
    nlog = 0
    for i in range(order.shape[0]):
        v = order[i]
        if where[v] == 2:
            for s in range(2):
                heap_set(keys[s], verts[s], pos[s], sizes[s], v, vwgt[v] - _pull(indptr, indices, vwgt, where, v, s))
    best_over = _overload(pw, maxside)
    best_sep = pw[2]
    best_diff = abs(pw[0] - pw[1])
    best_log = 0
    moves = 0
    best_moves = 0
    since = 0
    while since < stall:
        s = -1
        for t in range(2):
            # tops that no longer fit their side cannot move into it this pass
            while sizes[t, 0] > 0 and pw[t] + vwgt[verts[t, 0]] > maxside:
                heap_remove(keys[t], verts[t], pos[t], sizes[t], verts[t, 0])
            if sizes[t, 0] > 0:
                if s < 0 or keys[t, 0] > keys[s, 0] or (keys[t, 0] == keys[s, 0] and pw[t] < pw[s]):
                    s = t
        if s < 0:
            break
        v, _ = heap_pop(keys[s], verts[s], pos[s], sizes[s])
        heap_remove(keys[1 - s], verts[1 - s], pos[1 - s], sizes[1 - s], v)
        locked[v] = True
        log_v[nlog] = v
        log_old[nlog] = 2
        nlog += 1
        moves += 1
        where[v] = s
        pw[2] -= vwgt[v]
        pw[s] += vwgt[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if where[u] == 2:
                if pos[1 - s, u] >= 0:   # v now on side s: moving u into 1 - s pulls v too
                    heap_set(keys[1 - s], verts[1 - s], pos[1 - s], sizes[1 - s], u,
                             keys[1 - s, pos[1 - s, u]] - vwgt[v])
            elif where[u] == 1 - s:      # u joins the separator
                log_v[nlog] = u
                log_old[nlog] = 1 - s
                nlog += 1
                where[u] = 2
                pw[1 - s] -= vwgt[u]
                pw[2] += vwgt[u]
                for f in range(indptr[u], indptr[u + 1]):
                    x = indices[f]
                    if where[x] == 2 and pos[s, x] >= 0:
                        # x lost a neighbour on side 1 - s: moving x into s pulls less
                        heap_set(keys[s], verts[s], pos[s], sizes[s], x, keys[s, pos[s, x]] + vwgt[u])
                if not locked[u]:
                    for t in range(2):
                        heap_set(keys[t], verts[t], pos[t], sizes[t], u,
                                 vwgt[u] - _pull(indptr, indices, vwgt, where, u, t))
        over = _overload(pw, maxside)
        diff = abs(pw[0] - pw[1])
        if _better(over, pw[2], diff, best_over, best_sep, best_diff):
            best_over, best_sep, best_diff = over, pw[2], diff
            best_log = nlog
            best_moves = moves
            since = 0
        else:
            since += 1
    for i in range(nlog - 1, best_log - 1, -1):   # roll back to the best prefix
        v = log_v[i]
        pw[where[v]] -= vwgt[v]
        pw[log_old[i]] += vwgt[v]
        where[v] = log_old[i]
    return best_moves


@njit(cache=True, internal=True)
def refine_separator(indptr, indices, vwgt, where, maxside, passes, seed):
    """Up to ``passes`` FM passes (sep_fm_pass) on the separator ``where`` in place, each from
    a random order of numba's generator seeded with ``seed``; stops after a pass that kept no
    move. Returns the side weights (side 0, side 1, separator)."""
    n = indptr.shape[0] - 1
    np.random.seed(seed)
    stall = min(max(SEP_STALL_MIN, int(SEP_STALL_FRACTION * n)), SEP_STALL_MAX)
    pw = side_weights(where, vwgt)
    for _ in range(passes):
        order = np.random.permutation(n)
        if sep_fm_pass(indptr, indices, vwgt, where, pw, maxside, stall, order) == 0:
            break
    return pw
