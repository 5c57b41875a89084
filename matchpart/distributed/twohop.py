"""Distributed two-hop pairing (coarsen/twohop.py's rule on a DistGraph): unmatched vertices
that share a heaviest neighbour (their hub) are paired, so that coarsening does not stall on
power-law graphs, where a maximal matching leaves most leaves of a hub unmatched.

The pairs are those of the single-process ``two_hop_pairs`` for the same seed, for any
number of ranks: each free vertex picks its hub with the same hash of its global CSR entry
position, sends (hub, id, weight) to the hub's owner (isolated vertices to rank 0, their one
virtual hub), which sorts its groups by (weight, id) and pairs them consecutively within
the weight cap; the pairs go back to both members' owners.
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ..coarsen.twohop import HUB_STREAM

_CPU = backend.get("cpu")


def two_hop(g, mate, cap, *, seed=0):
    """``mate`` (global ids, -1 free) extended by two-hop pairs (pairs need not be edges)."""
    c = g.comm
    mate = np.asarray(mate, dtype=np.int64).copy()
    free = np.flatnonzero(mate < 0)
    entry0 = c.exscan(int(g.cols.shape[0]))
    deg = g.indptr[free + 1] - g.indptr[free]
    pos, seg = _CPU.ranges(g.indptr[free], deg)
    # hub: the neighbour across the first entry of maximal (weight, hash >> 1), as the kernel
    h = (_CPU.hash32(seed, HUB_STREAM, pos + entry0) >> np.uint32(1)).astype(np.int64)
    w = g.ewgt[pos]
    order = np.lexsort((pos, -h, -w, seg))
    firsts = order[np.flatnonzero(np.concatenate([[True], seg[order][1:] != seg[order][:-1]]))] \
        if order.shape[0] else order
    hub = np.full(free.shape[0], g.n, dtype=np.int64)         # g.n: the isolated vertices' hub
    hub[seg[firsts]] = g.cols[pos[firsts]]
    dest = np.where(hub < g.n, g.owner(np.minimum(hub, g.n - 1)), 0)
    vw = g.vwgt[free].astype(np.float64)
    _, hubs, ids, wbits = c.exchange_packed(dest, hub, free + g.first, vw.view(np.int64))
    weights = wbits.view(np.float64)
    # groups by hub, each in order of (weight, id); pairs (0, 1), (2, 3), ... within the cap
    order = np.lexsort((ids, weights, hubs))
    hubs, ids, weights = hubs[order], ids[order], weights[order]
    idx = np.arange(hubs.shape[0])
    starts = np.flatnonzero(np.concatenate([[True], hubs[1:] != hubs[:-1]])) if hubs.shape[0] else idx
    pos_in = idx - starts[np.searchsorted(starts, idx, side="right") - 1] if hubs.shape[0] else idx
    a = idx[(pos_in % 2 == 0) & (idx + 1 < hubs.shape[0])]
    a = a[hubs[a] == hubs[a + 1]]
    a = a[weights[a] + weights[a + 1] <= cap]
    u, v = ids[a], ids[a + 1]
    _, x, y = c.exchange_packed(g.owner(np.concatenate([u, v])), np.concatenate([u, v]), np.concatenate([v, u]))
    mate[x - g.first] = y
    return mate
