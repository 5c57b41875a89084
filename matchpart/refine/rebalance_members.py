"""Rebalancing's candidates beyond the boundary list: the overweight blocks' members
(state.block_members) and the bound that tells when the interior ones cannot be cheaper
than the listed ones (rebalance_kernel.rebalance_round_nb)."""
from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from ..threads import PRANGE_ONLY

_FLOOR_CHUNK = 4096       # vertices per chunk of interior_loss_floor


@njit(cache=True, parallel=PRANGE_ONLY)
def interior_loss_floor(indptr, ewgt, vwgt, wdeg):
    """Fill wdeg with every vertex's weighted degree (rows summed in order, in fixed chunks
    on the threads: the same sums as the lazy ones in rebalance_kernel._score_chunk) and
    return the least loss per weight an interior vertex can have in rebalancing,
    min wdeg(v) / w(v) over the vertices of positive weight (+inf if none).
    One pass over the m entries per level that rebalances; without the bound each round
    walked the overweight blocks' member lists (delaunay 2^20, k = 32, finest level: ~6
    calls moved ~35 vertices in 60 ms at one thread, walking 32k members each)."""
    n = indptr.shape[0] - 1
    chunks = (n + _FLOOR_CHUNK - 1) // _FLOOR_CHUNK
    lowest = np.full(max(chunks, 1), np.inf)
    for c in prange(chunks):
        lo = np.inf
        for v in range(c * _FLOOR_CHUNK, min(n, (c + 1) * _FLOOR_CHUNK)):
            s = 0.0
            for e in range(indptr[v], indptr[v + 1]):
                s += ewgt[e]
            wdeg[v] = s
            w = np.float64(vwgt[v])
            if w > 0 and s / w < lo:
                lo = s / w
        lowest[c] = lo
    return lowest.min()


@njit(cache=True, internal=True)
def walk_members(members, bw, maxw, vwgt, max_room, in_list, unlisted_only, cand, nc, blocks):
    """Append the movable members of the overweight blocks flagged in ``blocks`` (only the
    unlisted ones when ``unlisted_only``) to cand[nc:]; returns the new count."""
    head, nxt = members[0], members[1]
    for b in range(maxw.shape[0]):
        if bw[b] <= maxw[b] or not blocks[b]:
            continue
        v = head[b]
        while v >= 0:
            if vwgt[v] > 0 and vwgt[v] <= max_room and not (unlisted_only and in_list[v]):
                cand[nc] = v
                nc += 1
            v = nxt[v]
    return nc
