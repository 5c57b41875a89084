"""k-way FM with several weights per vertex: hill-climbing passes (negative gains allowed, the
best prefix of moves kept) in which every move keeps its destination within its bound in every
constraint. Serial (one priority queue), compiled; runs after refine/multi.py's greedy rounds,
which leave it few vertices with positive gain, so its passes explore from a local optimum."""
from __future__ import annotations

import numpy as np

from ..jit import njit
from .heap import heap_pop, heap_remove, heap_set, new_heap
from .multi import _connect, _fits, _forget, _load, _move

# Passes per level; a pass stops after STALL_MOVES moves without a new best cut and the next
# one runs only when the pass gained. On the benchmarks/ncon.py subset (see pipeline_ncon)
# a stall of 50 gave 0.947 x gpmetis's cut, 150 0.933, 200 0.933 at 1.05 x the time of 50,
# 400 0.928 at 1.25 x; 3 or 4 passes instead of 2 changed the cut by < 0.1%.
FM_PASSES = 3
STALL_MOVES = 200


@njit(cache=True, internal=True)
def fm_move(v, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched):
    """(block, gain) of v's best move to an adjacent block that fits every constraint, negative
    gains included (ties to the block left less full), or (-1, 0) when none fits."""
    a = parts[v]
    nt = _connect(v, indptr, indices, ewgt, parts, conn, seen, touched)
    own = conn[a] if seen[a] else 0.0
    best, best_gain, best_load = -1, 0.0, 0.0
    for t in range(nt):
        b = touched[t]
        if b == a or not _fits(bw, maxw, vw, v, b):
            continue
        g = conn[b] - own
        lb = _load(bw, maxw, vw, v, b, 1.0)
        if best < 0 or g > best_gain or (g == best_gain and lb < best_load):
            best, best_gain, best_load = b, g, lb
    _forget(nt, seen, touched)
    return best, best_gain


@njit(cache=True, internal=True)
def _on_boundary(v, indptr, indices, parts):
    for e in range(indptr[v], indptr[v + 1]):
        if parts[indices[e]] != parts[v]:
            return True
    return False


@njit(cache=True)
def fm_nb(indptr, indices, ewgt, vw, parts, bw, maxw, passes, stall):
    """FM passes on host arrays (parts, bw changed in place); returns the cut weight gained."""
    n = parts.shape[0]
    k = bw.shape[0]
    keys, verts, pos, size = new_heap(n)
    dest = np.full(n, -1, dtype=np.int64)
    locked = np.zeros(n, dtype=np.bool_)
    moved = np.empty(n, dtype=np.int64)
    came_from = np.empty(n, dtype=np.int64)
    conn = np.zeros(k, dtype=np.float64)
    seen = np.zeros(k, dtype=np.bool_)
    touched = np.empty(k, dtype=np.int64)
    gained = 0.0
    for _ in range(passes):
        for v in range(n):
            if _on_boundary(v, indptr, indices, parts):
                b, g = fm_move(v, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched)
                if b >= 0:
                    dest[v] = b
                    heap_set(keys, verts, pos, size, v, g)
        total, best, best_count, count, since = 0.0, 0.0, 0, 0, 0
        while size[0] > 0 and since < stall:
            v, g = heap_pop(keys, verts, pos, size)
            b = dest[v]
            if not _fits(bw, maxw, vw, v, b):      # its destination filled up since: look again
                b, g2 = fm_move(v, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched)
                if b < 0:
                    continue
                if g2 < g:
                    dest[v] = b
                    heap_set(keys, verts, pos, size, v, g2)
                    continue
                g = g2
            moved[count] = v
            came_from[count] = parts[v]
            count += 1
            _move(v, b, vw, parts, bw)
            locked[v] = True
            total += g
            if total > best:
                best, best_count, since = total, count, 0
            else:
                since += 1
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if locked[u]:
                    continue
                bu, gu = fm_move(u, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched)
                if bu >= 0:
                    dest[u] = bu
                    heap_set(keys, verts, pos, size, u, gu)
                else:
                    heap_remove(keys, verts, pos, size, u)
        for i in range(count - 1, best_count - 1, -1):     # undo the moves after the best prefix
            _move(moved[i], came_from[i], vw, parts, bw)
        for i in range(count):
            locked[moved[i]] = False
        while size[0] > 0:
            heap_pop(keys, verts, pos, size)
        gained += best
        if best <= 0:
            break
    return gained
