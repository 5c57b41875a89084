"""Distributed contraction: a matching on a DistGraph becomes the distributed coarse graph.

Coarse ids are numbered in the order of each pair's smaller fine id (the leader), as
coarsen.contract.mapping_from_matching does, by a prefix sum of the leaders over ranks; the
coarse graph is again block distributed, in equal ranges of coarse ids.
Coarse edges go to their owner's rank (one all-to-all), which merges duplicates.
"""
from __future__ import annotations

import numpy as np

from ..coarsen.contract import contract_arrays
from . import contract_kernels as ck
from .dgraph import ROW_COST, DistGraph, even_vtxdist


def coarse_ids(g, mate):
    """(global coarse id of every own vertex, coarse vtxdist) from ``mate`` (global ids, -1)."""
    c = g.comm
    count = ck.count_leaders(mate, g.first)
    cid, far = ck.pair_ids(mate, g.first, c.exscan(count))
    _ask_far_leaders(g, mate, cid, far)
    return cid, _even_ranges(c, count)


def _coarse_ids_xp(g, mate):
    """coarse_ids by whole-array operations (the reference of the kernels)."""
    c = g.comm
    gv = np.arange(g.first, g.last, dtype=np.int64)
    leader = np.where(mate >= 0, np.minimum(gv, mate), gv)
    is_leader = leader == gv
    count = int(is_leader.sum())
    offset = c.exscan(count)
    cid = np.full(g.n_local, -1, dtype=np.int64)
    cid[is_leader] = offset + np.arange(count, dtype=np.int64)
    follower = np.flatnonzero(~is_leader)
    m = mate[follower]
    own = (m >= g.first) & (m < g.last)
    cid[follower[own]] = cid[m[own] - g.first]
    _ask_far_leaders(g, mate, cid, follower[~own])
    return cid, _even_ranges(c, count)


def _ask_far_leaders(g, mate, cid, far):
    # a follower's leader is its mate: an own vertex, or another rank's (a neighbour, or any
    # vertex after two-hop pairing), which is asked for the leader's coarse id
    c = g.comm
    if c.allreduce(int(far.shape[0])):
        owner = g.owner(mate[far])
        order = c.by_dest(owner)
        far = far[order]
        asked, counts = c.alltoallv(mate[far], np.bincount(owner, minlength=c.size))
        answer, _ = c.alltoallv(cid[asked - g.first], counts)
        cid[far] = answer


def _even_ranges(c, count):
    # the coarse graph's ranges: equal shares of the coarse ids, not each rank's leaders (a
    # pair's leader is its smaller id, on the lower rank, so leader ranges drift towards rank
    # 0 level after level: delaunay 2^20 at P = 4 ended with 4257 of 4260 vertices on rank 0).
    # Pairs merge at most two rows, so shares of the ids are shares of the entries.
    return even_vtxdist(c.allreduce(count), c.size)


def coarse_ranges(g, cid, nc):
    """Coarse vtxdist for ``nc`` clusters (``cid``: the global coarse id of every own vertex):
    contiguous ranges of coarse ids, each with about a 1 / P share of the fine entries merged
    into its rows plus ROW_COST per member (dgraph.balanced_vtxdist's cost), every range
    non-empty while nc >= P. Equal shares of the ids put the clusters of R-MAT's hubs on rank
    0: R-MAT 2^18 at P = 2, its first clustered levels merged 4.33M / 3.28M and 3.32M / 1.55M
    entries on ranks 0 / 1. Costs one exchange of the own vertices (delaunay 2^20's matching
    levels at P = 2: 59 ms a run for nothing, so coarse_ids keeps even ranges)."""
    c = g.comm
    even = even_vtxdist(nc, c.size)
    if c.size == 1 or nc < c.size:
        return even
    first = int(even[c.rank])
    _, at, cost = c.exchange_packed(np.searchsorted(even, cid, side="right") - 1, cid,
                                    np.diff(g.indptr) + ROW_COST)
    per_id = np.zeros(int(even[c.rank + 1]) - first, dtype=np.int64)
    ck.add_at(per_id, at - first, cost)
    prefix = np.cumsum(per_id) + c.exscan(int(per_id.sum()))     # global, inclusive
    total = c.allreduce(int(per_id.sum()))
    targets = (np.arange(1, c.size, dtype=np.int64) * total) // c.size
    # the ids whose prefix is within the r-th target, counted over every rank's range
    cuts = c.allreduce(np.searchsorted(prefix, targets, side="right").astype(np.int64))
    # strictly increasing and within (0, nc): cut r - r non-decreasing in [0, nc - P]
    lower = np.arange(1, c.size, dtype=np.int64)
    cuts = lower + np.minimum(np.maximum.accumulate(np.maximum(cuts - lower, 0)), nc - c.size)
    return np.concatenate([[0], cuts, [nc]]).astype(np.int64)


def contract(g, mate, *, method="numba"):
    """(coarse DistGraph, coarse id of every own fine vertex). ``method``: "numba" (the
    compiled passes of contract_kernels.py) or "xp" (whole-array sorts); the same graph."""
    if method == "xp":
        return _contract_xp(g, mate)
    if method != "numba":
        raise ValueError(f"method must be 'numba' or 'xp', got {method!r}")
    cid, vtxdist = coarse_ids(g, mate)
    return contract_ids(g, cid, vtxdist), cid


def contract_ids(g, cid, vtxdist):
    """The coarse DistGraph of any grouping: ``cid`` the global coarse id of every own vertex,
    ``vtxdist`` the coarse ranges (a matching's contract, or clusters).

    On one rank the rank's rows are the whole graph, and the single process's contraction
    (coarsen.contract.contract_arrays, threaded) builds the same coarse graph: sorted rows,
    duplicates summed in fine CSR order as merge_rows sums them. Delaunay 2^20 (random ids),
    k = 32, one thread: the run's contraction 0.51 -> 0.28 s, the same partition."""
    c = g.comm
    if c.size == 1:
        indptr, cols, ewgt, vwgt = contract_arrays((g.indptr, g.adj, g.ewgt, g.vwgt), cid, int(vtxdist[-1]))
        return DistGraph(c, vtxdist, indptr, cols, ewgt.astype(g.ewgt.dtype, copy=False),
                         vwgt.astype(g.vwgt.dtype, copy=False))
    coarse_owner = np.searchsorted(vtxdist, cid, side="right") - 1
    cid_ext = g.extended(cid)
    first = int(vtxdist[c.rank])
    nc = int(vtxdist[c.rank + 1]) - first
    vwgt = _vertex_weights(g, cid, coarse_owner, first, nc)
    # edges: (coarse row, coarse col, weight) to the row's owner, diagonal dropped here; the
    # rows this rank owns stay in place (merge_rows reads them from the fine rows)
    counts, cr, cc, w = ck.coarse_entries(g.indptr, g.adj, g.ewgt, cid_ext, coarse_owner, c.size, c.rank)
    if c.size > 1:
        cr, rcounts = c.alltoallv(cr, counts)
        cc, _ = c.alltoallv(cc, counts)
        w, _ = c.alltoallv(w, counts)
    else:
        rcounts = counts
    n_own = g.indptr[-1]
    indptr, cols, ewgt = ck.merge_rows(g.indptr, g.adj, g.ewgt, cid_ext, coarse_owner, c.rank, first, nc, cr, cc, w,
                                       int(rcounts[:c.rank].sum()), np.empty(n_own + cr.shape[0], dtype=np.int64),
                                       np.empty(n_own + cr.shape[0], dtype=g.ewgt.dtype),
                                       np.empty(n_own, dtype=np.int64), _merge_slots(vtxdist[-1], n_own + cr.shape[0]))
    return DistGraph(c, vtxdist, indptr, cols, ewgt.astype(g.ewgt.dtype, copy=False), vwgt)


def _vertex_weights(g, cid, coarse_owner, first, nc):
    """The own coarse vertices' weights: members owned here are added in place, the others'
    weights travel to their coarse vertex's owner (delaunay 2^20 at P = 2: sending every
    member's cost 26 ms a run). Summed in rank order (lower ranks, own, higher), as the
    whole-array version sums them, so float weights come out the same."""
    c = g.comm
    far = ck.foreign(coarse_owner, c.rank)
    dest = coarse_owner[far]
    order = c.by_dest(dest)
    far = far[order]
    counts = np.bincount(dest, minlength=c.size)
    to, rcounts = c.alltoallv(cid[far], counts)
    w, _ = c.alltoallv(g.vwgt[far], counts)
    before = int(rcounts[:c.rank].sum())
    vwgt = np.zeros(nc, dtype=g.vwgt.dtype)
    ck.add_at(vwgt, to[:before] - first, w[:before])
    ck.add_own(vwgt, cid, g.vwgt, coarse_owner, c.rank, first)
    ck.add_at(vwgt, to[before:] - first, w[before:])
    return vwgt


def _merge_slots(n_coarse, entries):
    """merge_rows' slot row: one per global coarse vertex while they are at most the rank's
    entries to merge (memory of the rank's own size; at scale the first levels sort their
    long rows instead), else an empty array."""
    n_coarse = int(n_coarse)
    return np.full(n_coarse, -1, dtype=np.int64) if n_coarse <= entries else np.empty(0, dtype=np.int64)


def _contract_xp(g, mate):
    c = g.comm
    cid, vtxdist = _coarse_ids_xp(g, mate)
    coarse_owner = np.searchsorted(vtxdist, cid, side="right") - 1
    cid_ext = g.extended(cid)
    first = int(vtxdist[c.rank])
    nc = int(vtxdist[c.rank + 1]) - first
    # vertex weights: every member's weight goes to its coarse vertex's owner
    to, w = c.exchange(coarse_owner, cid, g.vwgt)
    vwgt = np.zeros(nc, dtype=g.vwgt.dtype)
    np.add.at(vwgt, to - first, w)
    # edges: (coarse row, coarse col, weight) to the row's owner, diagonal dropped there
    cr, cc = cid_ext[g.rows], cid_ext[g.adj]
    off = cr != cc
    dest = np.searchsorted(vtxdist, cr[off], side="right") - 1
    cr, cc, w = c.exchange(dest, cr[off], cc[off], g.ewgt[off])
    key = (cr - first) * max(int(vtxdist[-1]), 1) + cc
    order = np.argsort(key, kind="stable")
    key, w = key[order], w[order]
    if key.shape[0]:
        starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
        ewgt = np.add.reduceat(w, starts)
        key = key[starts]
    else:
        ewgt = w
    ncols = max(int(vtxdist[-1]), 1)
    rows, cols = key // ncols, key % ncols
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=nc))]).astype(np.int64)
    return DistGraph(c, vtxdist, indptr, cols, ewgt.astype(g.ewgt.dtype, copy=False), vwgt), cid


def project(coarse, cid, coarse_values):
    """Per own fine vertex, the value of its coarse vertex (``coarse_values`` per own coarse
    vertex of ``coarse``): local lookups, plus one request/reply for pairs split over ranks."""
    c = coarse.comm
    out = np.empty(cid.shape[0], dtype=coarse_values.dtype)
    owner = coarse.owner(cid)
    mine = owner == c.rank
    out[mine] = coarse_values[cid[mine] - coarse.first]
    far = np.flatnonzero(~mine)
    if c.allreduce(int(far.shape[0])):
        order = c.by_dest(owner[far])
        far = far[order]
        counts = np.bincount(owner[far], minlength=c.size)
        asked, asked_counts = c.alltoallv(cid[far], counts)
        answer, _ = c.alltoallv(coarse_values[asked - coarse.first], asked_counts)
        out[far] = answer
    return out
