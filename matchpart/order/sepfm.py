"""Compiled separator refinement (two-sided node FM): move separator vertices into a side,
pulling their neighbours on the other side into the separator."""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..refine.heap import heap_pop, heap_remove, heap_set

# A pass stops after this many moves without a new best state (METIS bounds its node FM
# passes the same way); at least SEP_STALL_MIN, else this fraction of the vertices, at most
# SEP_STALL_MAX. On 3-D stencils a move pulls up to 9 vertices into the separator, so a
# better state lies many moves away: (150, 5%, 1000) against (50, 2%, 300) took flops from
# 1.302 x to 1.254 x METIS's (grid27:24, grid:20x20x40, 4elt, delaunay_n15, rgg_n_2_15_s0).
SEP_STALL_MIN = 150
SEP_STALL_FRACTION = 0.05
SEP_STALL_MAX = 1000
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
def separator_vertices(where):
    """The separator's vertices (where == 2) in increasing order."""
    return np.flatnonzero(where == 2)


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
def _workspace(n, m):
    """Arrays of sep_fm_pass, allocated once per refinement: heap keys, vertices and slots
    (one heap per side), the heap sizes, move locks, and the log of label changes."""
    return (np.empty((2, n), dtype=np.float64), np.empty((2, n), dtype=np.int64), np.full((2, n), -1, dtype=np.int64),
            np.zeros((2, 1), dtype=np.int64), np.zeros(n, dtype=np.bool_),
            np.empty(n + m + 1, dtype=np.int64), np.empty(n + m + 1, dtype=np.int64))


@njit(cache=True, internal=True)
def sep_fm_pass(indptr, indices, vwgt, where, pw, maxside, stall, sep, ws):
    """One two-sided FM pass over the separator ``where`` (0 / 1 / 2 per vertex) in place.

    Every separator vertex v (``sep``, in the order given) sits in two max-heaps, one per
    side s, keyed by the gain of moving v into s: vwgt[v] minus the weight of its neighbours
    on side 1 - s (those join the separator). The best move whose side stays within
    ``maxside`` is made (the lighter side on ties); moved vertices are locked for the pass.
    The pass is rolled back to its best prefix by (overload, separator weight, side
    difference); ``pw`` (side weights) follows. Work is proportional to the separator and
    its neighbourhood: ``ws`` (_workspace) is left clean for the next pass.
    Returns (moves kept, label changes logged: log_v[:count] holds every vertex touched).
    """
    keys, verts, pos, sizes, locked, log_v, log_old = ws
    nlog = 0
    for i in range(sep.shape[0]):
        v = sep[i]
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
    for t in range(2):                            # empty the heaps, unlock: ws clean again
        for i in range(sizes[t, 0]):
            pos[t, verts[t, i]] = -1
        sizes[t, 0] = 0
    for i in range(nlog):
        locked[log_v[i]] = False
    return best_moves, nlog


@njit(cache=True, internal=True)
def _next_separator(where, sep, log_v, nlog, mark, stamp):
    """The separator after a pass: the old separator vertices and the touched ones that carry
    label 2 now, each once (``mark`` holds ``stamp`` for those already taken)."""
    out = np.empty(sep.shape[0] + nlog, dtype=np.int64)
    k = 0
    for i in range(sep.shape[0] + nlog):
        v = sep[i] if i < sep.shape[0] else log_v[i - sep.shape[0]]
        if where[v] == 2 and mark[v] != stamp:
            mark[v] = stamp
            out[k] = v
            k += 1
    return out[:k]


@njit(cache=True, internal=True)
def refine_separator(indptr, indices, vwgt, where, maxside, passes, seed):
    """Up to ``passes`` FM passes (sep_fm_pass) on the separator ``where`` in place, each over
    the separator in a random order of numba's generator seeded with ``seed``; stops after a
    pass that kept no move. Returns the side weights (side 0, side 1, separator)."""
    n = indptr.shape[0] - 1
    np.random.seed(seed)
    stall = min(max(SEP_STALL_MIN, int(SEP_STALL_FRACTION * n)), SEP_STALL_MAX)
    pw = side_weights(where, vwgt)
    sep = separator_vertices(where)
    ws = _workspace(n, indices.shape[0])
    mark = np.full(n, -1, dtype=np.int64)
    for p in range(passes):
        np.random.shuffle(sep)
        kept, nlog = sep_fm_pass(indptr, indices, vwgt, where, pw, maxside, stall, sep, ws)
        if kept == 0:
            break
        sep = _next_separator(where, sep, ws[5], nlog, mark, p)
    return pw
