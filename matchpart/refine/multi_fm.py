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
# Vertices of degree above max(HUB_MIN_DEGREE, k, HUB_DEGREE_FACTOR x the average) keep their
# edge weight into every block cached (k numbers each, at most 2m in all), so that a
# neighbour's move updates their gain in O(k c) rather than O(degree). On R-MAT 2^16 (k = 8,
# unit + train mask), where most moves touch a hub, recomputing every neighbour made the finest
# level's FM 29 s; bounding hubs' keys instead (not recomputed until popped) took 3.5 s but lost
# most of FM's gain there (cut 646k against 476k).
HUB_DEGREE_FACTOR = 4
HUB_MIN_DEGREE = 32


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


@njit(cache=True, internal=True)
def _cached_move(u, row, vw, parts, bw, maxw):
    """fm_move of a hub from its cached connectivity ``row`` (edge weight into each block): O(k c)
    instead of O(degree)."""
    a = parts[u]
    best, best_gain, best_load = -1, 0.0, 0.0
    for b in range(row.shape[0]):
        if b == a or row[b] <= 0 or not _fits(bw, maxw, vw, u, b):
            continue
        g = row[b] - row[a]
        lb = _load(bw, maxw, vw, u, b, 1.0)
        if best < 0 or g > best_gain or (g == best_gain and lb < best_load):
            best, best_gain, best_load = b, g, lb
    return best, best_gain


@njit(cache=True, internal=True)
def _best(u, hid, cache, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched):
    if hid[u] >= 0:
        return _cached_move(u, cache[hid[u]], vw, parts, bw, maxw)
    return fm_move(u, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched)


@njit(cache=True)
def fm_nb(indptr, indices, ewgt, vw, parts, bw, maxw, passes, stall, hub):
    """FM passes on host arrays (parts, bw changed in place); returns the cut weight gained.
    ``hub``: vertices of a larger degree keep their connectivity to every block cached
    (hub_degree), so a neighbour's move updates their gain in O(k c), not O(degree)."""
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
    hid = np.full(n, -1, dtype=np.int64)
    hubs = 0
    for v in range(n):
        if indptr[v + 1] - indptr[v] > hub:
            hid[v] = hubs
            hubs += 1
    cache = np.zeros((hubs, k), dtype=np.float64)
    gained = 0.0
    for _ in range(passes):
        cache[:, :] = 0.0
        for v in range(n):
            if hid[v] >= 0:
                for e in range(indptr[v], indptr[v + 1]):
                    cache[hid[v], parts[indices[e]]] += ewgt[e]
        for v in range(n):
            if _on_boundary(v, indptr, indices, parts):
                b, g = _best(v, hid, cache, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched)
                if b >= 0:
                    dest[v] = b
                    heap_set(keys, verts, pos, size, v, g)
        total, best, best_count, count, since = 0.0, 0.0, 0, 0, 0
        while size[0] > 0 and since < stall:
            v, g = heap_pop(keys, verts, pos, size)
            # its key may be stale (a destination filled up, or a block emptied enough for a
            # better move): look again, and queue it again when it got worse
            b, g2 = _best(v, hid, cache, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched)
            if b < 0:
                continue
            if g2 < g:
                dest[v] = b
                heap_set(keys, verts, pos, size, v, g2)
                continue
            g = g2
            a = parts[v]
            moved[count] = v
            came_from[count] = a
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
                if hid[u] >= 0:
                    cache[hid[u], a] -= ewgt[e]
                    cache[hid[u], b] += ewgt[e]
                if locked[u]:
                    continue
                bu, gu = _best(u, hid, cache, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched)
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


def hub_degree(indptr, k):
    """Degree above which fm_nb caches a vertex's connectivity to every block."""
    n = indptr.shape[0] - 1
    return float(max(HUB_MIN_DEGREE, k, HUB_DEGREE_FACTOR * int(indptr[-1]) / max(n, 1)))
