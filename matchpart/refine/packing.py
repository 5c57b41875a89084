"""Packing vertices into blocks: heaviest first, the balanced start of last resort
(``pack_decreasing``), and rebalancing's packing of its leftover movers into the rooms left
(``rooms_end_to_end``, then ``largest_rooms`` for those that straddled two rooms).

The first is used when least-loss moves cannot reach balance (a few heavy vertices against little slack,
e.g. coarse graphs or example_weighted with k = 32): greedy refinement is then a
bin-packing heuristic it was not built to be, while packing heaviest first (LPT) often meets
the bound. The refiners keep a packing balanced while they win back cut.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit


@njit(cache=True)
def pack_decreasing(indptr, indices, ewgt, vwgt, order, preferred, maxw, use_edges):
    """Block per vertex by packing vertices in `order` (heaviest first); returns (parts, fits).

    Each vertex goes to preferred[v] when that fits (preferred[v] >= 0), else (use_edges) to
    the block with room it has most edge weight to among its packed neighbours, else to the
    block with the most room (LPT, which also decides ties). ``fits``: every block ended
    within its bound maxw.
    """
    k = maxw.shape[0]
    n = vwgt.shape[0]
    bw = np.zeros(k, dtype=np.float64)
    conn = np.zeros(k, dtype=np.float64)
    parts = np.full(n, -1, dtype=np.int64)
    fits = True
    for i in range(order.shape[0]):
        v = order[i]
        b = preferred[v]
        if b < 0 or bw[b] + vwgt[v] > maxw[b]:
            b = 0
            for c in range(1, k):
                if maxw[c] - bw[c] > maxw[b] - bw[b]:
                    b = c
            if use_edges:
                for e in range(indptr[v], indptr[v + 1]):
                    if parts[indices[e]] >= 0:
                        conn[parts[indices[e]]] += ewgt[e]
                for e in range(indptr[v], indptr[v + 1]):
                    c = parts[indices[e]]
                    if c >= 0 and bw[c] + vwgt[v] <= maxw[c] and conn[c] > conn[b]:
                        b = c
                for e in range(indptr[v], indptr[v + 1]):
                    if parts[indices[e]] >= 0:
                        conn[parts[indices[e]]] = 0.0
            if bw[b] + vwgt[v] > maxw[b]:
                fits = False
        parts[v] = b
        bw[b] += vwgt[v]
    return parts, fits


def heaviest_first(vwgt, tie=None):
    """Vertex order for packing: heaviest first, equal weights by ``tie`` (then by id)."""
    if tie is None:
        return np.argsort(-vwgt, kind="stable")
    return np.lexsort((tie, -vwgt))


@njit(cache=True)
def rooms_end_to_end(weights, left):
    """Receiving block per item: the items, in the given order with these weights, laid end
    to end over the rooms left[b] > 0 of the blocks in id order; an item goes to the block
    whose room holds it wholly, -1 where it straddles two rooms or runs past the last.
    Rebalancing's last step for the movers that found no room next to them (the single
    process's rounds and the distributed ones)."""
    k = left.shape[0]
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
    out = np.full(weights.shape[0], -1, dtype=np.int64)
    end = 0.0
    r = 0                  # receivers whose room ends at or before the item's start are passed
    for t in range(weights.shape[0]):
        start = end
        end += weights[t]
        while r < nrecv and cap[r] <= start:
            r += 1
        if r < nrecv and end <= cap[r]:
            out[t] = recv[r]
    return out


@njit(cache=True)
def largest_rooms(weights, into, left):
    """A second chance for the items ``rooms_end_to_end`` left out (into[t] == -1): the t-th
    of them, in the given order, is paired with the receiver of the t-th largest room still
    left (ties: the smaller block id) and goes there when it fits; into is changed in place.

    End to end, an item that straddles two rooms stays out, and where the rooms are about one
    vertex wide most do: delaunay 2^20, k = 8192, the level of 314586 vertices placed 22% of
    them, and rebalancing crawled on for 79 rounds a call. Pairs, not a first fit, so that the
    whole-array formulation (rebalance._rebalance_round) places the same items."""
    k = left.shape[0]
    rem = left.copy()
    for t in range(weights.shape[0]):
        if into[t] >= 0:
            rem[into[t]] -= weights[t]
    nrecv = 0
    for b in range(k):
        nrecv += rem[b] > 0
    recv = np.empty(nrecv, dtype=np.int64)
    neg = np.empty(nrecv, dtype=np.float64)
    j = 0
    for b in range(k):
        if rem[b] > 0:
            recv[j] = b
            neg[j] = -rem[b]
            j += 1
    recv = recv[np.argsort(neg, kind="mergesort")]     # stable: equal rooms by block id
    j = 0
    for t in range(weights.shape[0]):
        if into[t] >= 0:
            continue
        if j == nrecv:
            break
        b = recv[j]
        j += 1
        if weights[t] <= rem[b]:
            into[t] = b
    return into
