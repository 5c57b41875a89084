"""Distributed local max (seed 001, section 3.2): rounds of locally dominant edges on a DistGraph.

Each rank stores all edges incident to its own vertices, so an edge between two ranks is
seen by both. Keys are the single-process matcher's: (rating, hash32(seed, round, edge id))
compared lexicographically, with edge ids numbered as in the single-process edge list, so
the matching is the same as ``matchers.local_max`` for the same seed on any number of ranks.
Per round only cross-rank data travels: the cross edges that are heaviest at the sender's
end (candidates), the rare rejections of equal-key collisions, and newly matched boundary
vertices (what ghosts need to drop dead edges).
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ..matchers.local_max import GREEDY_TAIL_AFTER, STREAM_BASE
from ..matchers.ratings import RATINGS

_CPU = backend.get("cpu")


def _segments(rows):
    """Start of each run of equal values in the sorted ``rows``."""
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))


def _per_row(op, values, rows, starts):
    """``op``-reduction of ``values`` over the runs of ``rows``, spread back to every entry."""
    if values.shape[0] == 0:
        return values
    red = op.reduceat(values, starts)
    return np.repeat(red, np.diff(np.concatenate([starts, [values.shape[0]]])))


def entry_ratings(g, rating):
    """float64 rating per local entry, computed with the same expression as ratings.edge_ratings."""
    if rating not in RATINGS:
        raise ValueError(f"unknown rating {rating!r}; choose one of {', '.join(RATINGS)}")
    w = g.ewgt.astype(np.float64)
    if rating == "weight":
        return w
    if rating == "inner_outer":
        out = g.extended(_CPU.segment_sum(w, g.indptr))
        denom = out[g.rows] + out[g.adj] - 2.0 * w
        return np.where(denom > 0, w / np.where(denom > 0, denom, 1.0), np.inf)
    c = g.extended(np.maximum(g.vwgt.astype(np.float64), 1.0))
    cc = c[g.rows] * c[g.adj]
    return w / cc if rating == "expansion_star" else w * w / cc


def edge_ids(g, mirror):
    """Global id of every local entry's undirected edge: the position of (u, v), u < v, in the
    row-major list of upper entries of the whole graph (local_max.undirected_edges)."""
    c = g.comm
    grow = g.rows + g.first
    upper = grow < g.cols
    eid = np.full(g.cols.shape[0], -1, dtype=np.int64)
    eid[upper] = c.exscan(int(upper.sum())) + np.arange(int(upper.sum()), dtype=np.int64)
    # a lower entry (u, v), u > v, takes the id of its mirror (v, u): here, or from v's owner
    lower_local = np.flatnonzero(~upper & (mirror >= 0))
    eid[lower_local] = eid[mirror[lower_local]]
    up_remote = upper & (g.adj >= g.n_local)
    v, u, e = c.exchange(g.owner(g.cols[up_remote]), g.cols[up_remote], grow[up_remote], eid[up_remote])
    order = np.argsort(u * g.n + v)  # (lo, hi) keys of the mirrors of our remote lower entries
    keys, ids = (u * g.n + v)[order], e[order]
    lower = np.flatnonzero(~upper & (mirror < 0))
    eid[lower] = ids[np.searchsorted(keys, g.cols[lower] * g.n + grow[lower])]
    return eid


def _mirrors(g):
    """For entries whose both ends are own vertices, the index of the reverse entry (else -1).

    Sorting the entries by (row, column) and by (column, row) lists the same pairs in the
    same order (the local adjacency is symmetric), so the two orders pair every entry with
    its mirror: two sorts instead of a search per entry.
    """
    nl = max(g.n_local, 1)
    mirror = np.full(g.cols.shape[0], -1, dtype=np.int64)
    local = np.flatnonzero(g.adj < g.n_local)
    r, col = g.rows[local], g.adj[local]
    by_row = local[np.argsort(r * nl + col, kind="stable")]
    by_col = local[np.argsort(col * nl + r, kind="stable")]
    mirror[by_row] = by_col
    return mirror


def local_max(g, *, rating="weight", seed=0, cap=None):
    """Distributed local max on DistGraph ``g``; returns (mate of own vertices as global ids,
    stats). ``cap``: afterwards unmatch pairs heavier than it (coarsening's weight cap, as
    coarsen.hierarchy.drop_heavy_pairs does)."""
    c = g.comm
    nl = g.n_local
    rate = entry_ratings(g, rating)
    mirror = _mirrors(g)
    eid = edge_ids(g, mirror)
    cross = g.adj >= nl
    mate = np.full(nl, -1, dtype=np.int64)
    matched = np.zeros(nl + g.ghosts.shape[0], dtype=bool)   # own vertices, then ghosts
    live = np.arange(g.cols.shape[0], dtype=np.int64)        # alive entries, row-sorted
    rounds = 0
    fractions = []
    while True:
        left, paired = c.allreduce(np.array([live.shape[0], (mate >= 0).sum()], dtype=np.int64))
        if rounds:
            fractions.append(int(paired) / max(g.n, 1))
        if left == 0:
            break
        if rounds >= GREEDY_TAIL_AFTER:
            rounds += 1
            _greedy_tail(g, live, rate, eid, seed, rounds, mate, matched)
            fractions.append(c.allreduce(int((mate >= 0).sum())) / max(g.n, 1))
            break
        rounds += 1
        rows, adj, e = g.rows[live], g.adj[live], eid[live]
        r = rate[live]
        h = _CPU.hash32(seed, STREAM_BASE + rounds, e)
        starts = _segments(rows)
        at_best = r == _per_row(np.maximum, r, rows, starts)
        hb = np.where(at_best, h, np.uint32(0))
        top = at_best & (h == _per_row(np.maximum, hb, rows, starts))
        # a cross edge is a candidate when it is top at both ends: tell the other end's owner
        cand = np.zeros(live.shape[0], dtype=bool)
        is_cross = cross[live]
        pos = np.full(g.cols.shape[0], -1, dtype=np.int64)
        pos[live] = np.arange(live.shape[0])
        loc = ~is_cross
        cand[loc] = top[loc] & top[np.maximum(pos[mirror[live[loc]]], 0)] & (pos[mirror[live[loc]]] >= 0)
        send = np.flatnonzero(top & is_cross)
        (proposed,) = c.exchange(g.owner(g.gid[adj[send]]), e[send])
        xs = np.flatnonzero(is_cross)
        cand[xs] = top[xs] & np.isin(e[xs], proposed)
        # equal keys at one vertex (a 32-bit hash collision): the smallest edge id wins there
        big = np.int64(np.iinfo(np.int64).max)
        first = _per_row(np.minimum, np.where(cand, e, big), rows, starts)
        win = cand & (first == e)
        collisions = c.allreduce(int((cand & ~win).sum()))
        if collisions:
            mloc = pos[mirror[live[loc]]]
            win[loc] &= win[np.maximum(mloc, 0)]
            rej = np.flatnonzero(cand & ~win & is_cross)
            (rejected,) = c.exchange(g.owner(g.gid[adj[rej]]), e[rej])
            win[xs] &= ~np.isin(e[xs], rejected)
        w = np.flatnonzero(win)
        mate[rows[w]] = g.gid[adj[w]]
        matched[rows[w]] = True
        matched[adj[w]] = True   # a cross winner is known at both ends
        newly = np.zeros(nl, dtype=bool)
        newly[rows[w]] = True
        (hit,) = g.ghost_updates(newly)
        matched[hit] = True
        live = live[~matched[rows] & ~matched[adj]]
    if cap is not None:
        mate = _drop_heavy_pairs(g, mate, cap)
    return mate, {"rounds": rounds, "matched_fraction": fractions}


def _greedy_tail(g, live, rate, eid, seed, rounds, mate, matched):
    """Match what is left greedily by (rating, hash, -edge id), as local_max's _greedy_tail,
    on every rank from the allgathered remaining edges (few: this runs after 50 rounds)."""
    from ..matchers.serial import _greedy_scan
    c = g.comm
    grow = g.rows[live] + g.first
    gcol = g.cols[live]
    up = grow < gcol
    e = eid[live][up]
    eu, ev = c.allgatherv(grow[up]), c.allgatherv(gcol[up])
    r, ids = c.allgatherv(rate[live][up]), c.allgatherv(e)
    h = _CPU.hash32(seed, STREAM_BASE + rounds, ids).astype(np.int64)
    order = np.lexsort((ids, -h, -r))
    verts, inv = np.unique(np.concatenate([eu, ev]), return_inverse=True)
    k = eu.shape[0]
    m = np.full(verts.shape[0], -1, dtype=np.int64)
    _greedy_scan(inv[:k][order], inv[k:][order], m)
    own = np.flatnonzero((verts >= g.first) & (verts < g.last) & (m >= 0))
    mate[verts[own] - g.first] = verts[m[own]]
    matched[verts[own] - g.first] = True


def _drop_heavy_pairs(g, mate, cap):
    """Unmatch pairs whose combined vertex weight exceeds ``cap`` (both ends decide alike)."""
    vw = g.extended(g.vwgt)
    partner = np.full(mate.shape[0], 0, dtype=np.int64)
    m = mate >= 0
    own = m & (mate >= g.first) & (mate < g.last)
    partner[own] = mate[own] - g.first
    ghost = m & ~own
    partner[ghost] = g.n_local + np.searchsorted(g.ghosts, mate[ghost])
    heavy = m & (g.vwgt + vw[partner] > cap)
    mate = mate.copy()
    mate[heavy] = -1
    return mate


def gather_mate(g, mate, root=0):
    """The whole mate array on ``root`` (None elsewhere)."""
    return g.gather_values(mate, root)
