"""Serial least-loss rebalancing (numba): the rebalancer FM runs before its passes.

Vertices leave overweight blocks one at a time from a priority queue keyed by KaMinPar's
relative gain (least loss per unit of weight first), to an adjacent block with room if any,
else to the block with most room; gains come from the FM gain cache (gain_cache.py).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from . import gain_cache as gc
from .heap import heap_pop, heap_remove, heap_set, new_heap
from .state import host_overload


@njit(cache=True, internal=True)
def _serial_key(gain, w):
    # KaMinPar-style relative gain: among losing moves prefer little loss per unit of weight moved
    return gain * w if gain >= 0 else gain / w


@njit(cache=True, internal=True)
def _least_loss_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache):
    """(gain, target) of v's least-loss move to a block with room: an adjacent block if any, else the lightest."""
    if not gc.built(v, cache):
        gc.build(v, indptr, indices, ewgt, parts, cache)
    own = parts[v]
    g, t = gc.best_move(v, own, vwgt[v], bw, maxw, cache)
    if t >= 0:
        return g, t
    light = -1
    for b in range(bw.shape[0]):
        if b != own and bw[b] + vwgt[v] <= maxw[b] and (light < 0 or bw[b] - maxw[b] < bw[light] - maxw[light]):
            light = b
    if light < 0:
        return -np.inf, -1
    return -gc.inside(v, own, cache), light


@njit(cache=True, internal=True)
def serial_rebalance(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, cache):
    """Move vertices out of overweight blocks, least loss per weight first; returns vertices moved."""
    n = indptr.shape[0] - 1
    keys, verts, pos, size = new_heap(n)
    locked = np.zeros(n, dtype=np.bool_)
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
        gc.move(v, frm, t, indptr, indices, ewgt, cache)
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


@njit(cache=True, internal=True)
def rebalance_if_over(indptr, indices, ewgt, vwgt, parts, bw, maxw, seed, cache):
    """serial_rebalance in a random order drawn from ``seed`` when a block is over its bound
    (the refiners' first step); returns the vertices moved."""
    if host_overload(bw, maxw) <= 0:
        return 0
    np.random.seed(seed ^ 0x5EED)
    order = np.random.permutation(indptr.shape[0] - 1)
    return serial_rebalance(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, cache)
