"""Distributed local max (seed 001, section 3.2): rounds of locally dominant edges on a DistGraph.

Each rank stores all edges incident to its own vertices, so an edge between two ranks is
seen by both. Each vertex's top edge is the single-process matcher's: the largest
(rating, hash32(seed, round, pair id)), then the smallest pair id, where the pair id of
{u, v} is min(u, v) * n + max(u, v) in global ids, which every rank computes alone; so the
matching is the same as ``matchers.local_max`` for the same seed on any number of ranks.
Per round only cross-rank data travels: the cross edges that are the top at the sender's
end (proposals) and newly matched boundary vertices (what ghosts need to drop dead edges).
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ..matchers.local_max import GREEDY_TAIL_AFTER, STREAM_BASE
from ..backend.rng import stream_keys
from ..matchers.ratings import RATINGS
from . import local_max_kernels as lmk

_CPU = backend.get("cpu")
# The rounds run as compiled per-rank kernels; tests switch this off to run the whole-array
# rounds (whose hashes go through Backend.hash32, which a test replaces) and compare.
CPU_KERNEL = True


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
    if rating.startswith("expansion_star") and CPU_KERNEL:
        c = g.extended(np.maximum(g.vwgt.astype(np.float64), 1.0))
        return lmk.expansion_ratings(g.indptr, g.adj, g.ewgt, c, rating == "expansion_star2")
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


def pair_ids(g):
    """uint64 pair id of every local entry's undirected edge: min(u, v) * n + max(u, v)."""
    grow = (g.rows + g.first).astype(np.uint64)
    gcol = g.cols.astype(np.uint64)
    return np.minimum(grow, gcol) * np.uint64(g.n) + np.maximum(grow, gcol)


def local_max(g, *, rating="weight", seed=0, cap=None):
    """Distributed local max on DistGraph ``g``; returns (mate of own vertices as global ids,
    stats). ``cap``: afterwards unmatch pairs heavier than it (coarsening's weight cap, as
    coarsen.hierarchy.drop_heavy_pairs does). The rounds run compiled (local_max_kernels.py)
    unless CPU_KERNEL is off (the whole-array rounds; the same matching and stats)."""
    rate = entry_ratings(g, rating)
    mate, rounds, fractions = (_rounds_kernel if CPU_KERNEL else _rounds_xp)(g, rate, seed)
    if cap is not None:
        mate = (lmk.drop_heavy(mate, g.extended(g.vwgt), g.ghosts, g.first, cap) if CPU_KERNEL
                else _drop_heavy_pairs(g, mate, cap))
    return mate, {"rounds": rounds, "matched_fraction": fractions}


def _rounds_kernel(g, rate, seed):
    """The rounds on the compiled per-rank kernels: per round one scan of the active rows,
    then only the proposals across ranks and the newly matched boundary vertices travel."""
    c = g.comm
    nl = g.n_local
    mate = np.full(nl, -1, dtype=np.int64)
    matched = np.zeros(nl + g.ghosts.shape[0], dtype=np.uint8)   # own vertices, then ghosts
    top = np.full(nl, -1, dtype=np.int64)
    newly = np.zeros(nl, dtype=np.bool_)
    won = np.empty(nl, dtype=np.int64)
    active, deg = lmk.start_rounds(g.indptr)
    nbr, rt = g.adj.copy(), rate.copy()   # the rows' alive prefixes, compacted by the scans
    keys = stream_keys(seed, STREAM_BASE + 1, GREEDY_TAIL_AFTER + 1)   # round r's key: keys[r - 1]
    rounds = 0
    mine = 0   # own vertices matched so far
    fractions = []
    while True:
        alive = lmk.scan(active, g.indptr, deg, nbr, rt, g.gid, g.n, keys[rounds], matched, top)
        left, paired = c.allreduce(np.array([alive, mine], dtype=np.int64))
        if rounds:
            fractions.append(int(paired) / max(g.n, 1))
        if left == 0:
            break
        if rounds >= GREEDY_TAIL_AFTER:
            rounds += 1
            rows, cols, rates = lmk.alive_entries(active, g.indptr, deg, nbr, rt)
            _greedy_tail(g, rows, g.gid[cols], rates, seed, rounds, mate, matched)
            fractions.append(c.allreduce(int((mate >= 0).sum())) / max(g.n, 1))
            break
        rounds += 1
        to, frm = lmk.proposals(active, top, nl, g.gid)
        got_to, got_from = c.exchange(g.owner(to), to, frm)
        nw = lmk.local_wins(active, top, nl, g.gid, mate, matched, newly, won)
        nw = lmk.cross_wins(got_to - g.first, nl + np.searchsorted(g.ghosts, got_from), top, g.gid, mate, matched,
                            newly, won, nw)
        (hit,) = g.ghost_updates(newly)
        matched[hit] = 1
        newly[won[:nw]] = False
        mine += nw
        active = lmk.next_active(active, top, matched)
    return mate, rounds, fractions


def _rounds_xp(g, rate, seed):
    """The whole-array rounds (every live entry's keys, per-row reductions by reduceat)."""
    c = g.comm
    nl = g.n_local
    pid = pair_ids(g)
    cross = g.adj >= nl
    mate = np.full(nl, -1, dtype=np.int64)
    matched = np.zeros(nl + g.ghosts.shape[0], dtype=bool)   # own vertices, then ghosts
    live = np.arange(g.cols.shape[0], dtype=np.int64)        # alive entries, row-sorted
    rounds = 0
    fractions = []
    none = np.uint64(0xFFFFFFFFFFFFFFFF)
    while True:
        left, paired = c.allreduce(np.array([live.shape[0], (mate >= 0).sum()], dtype=np.int64))
        if rounds:
            fractions.append(int(paired) / max(g.n, 1))
        if left == 0:
            break
        if rounds >= GREEDY_TAIL_AFTER:
            rounds += 1
            _greedy_tail(g, g.rows[live], g.cols[live], rate[live], seed, rounds, mate, matched)
            fractions.append(c.allreduce(int((mate >= 0).sum())) / max(g.n, 1))
            break
        rounds += 1
        rows, adj, p = g.rows[live], g.adj[live], pid[live]
        r = rate[live]
        h = _CPU.hash32(seed, STREAM_BASE + rounds, p)
        starts = _segments(rows)
        at_best = r == _per_row(np.maximum, r, rows, starts)
        hb = np.where(at_best, h, np.uint32(0))
        at_key = at_best & (h == _per_row(np.maximum, hb, rows, starts))
        top = at_key & (p == _per_row(np.minimum, np.where(at_key, p, none), rows, starts))
        # an edge is matched when it is the top at both ends: between own vertices the other
        # end's top is here; across ranks the other end's owner proposes it
        top_nbr = np.full(nl, -1, dtype=np.int64)
        top_nbr[rows[top]] = adj[top]
        is_cross = cross[live]
        win = top & ~is_cross & (top_nbr[np.where(is_cross, 0, adj)] == rows)
        send = np.flatnonzero(top & is_cross)
        (proposed,) = c.exchange(g.owner(g.gid[adj[send]]), p[send])
        xs = np.flatnonzero(top & is_cross)
        win[xs] = np.isin(p[xs], proposed)
        w = np.flatnonzero(win)
        mate[rows[w]] = g.gid[adj[w]]
        matched[rows[w]] = True
        matched[adj[w]] = True   # a cross winner is known at both ends
        newly = np.zeros(nl, dtype=bool)
        newly[rows[w]] = True
        (hit,) = g.ghost_updates(newly)
        matched[hit] = True
        live = live[~matched[rows] & ~matched[adj]]
    return mate, rounds, fractions


def _greedy_tail(g, rows, gcol, rates, seed, rounds, mate, matched):
    """Match what is left greedily by (rating, hash, -pair id), as local_max's _greedy_tail,
    on every rank from the allgathered remaining edges (own row, global column, rating; few:
    this runs after 50 rounds)."""
    from ..matchers.serial import _greedy_scan
    c = g.comm
    grow = rows + g.first
    up = grow < gcol
    e = grow[up].astype(np.uint64) * np.uint64(g.n) + gcol[up].astype(np.uint64)
    eu, ev = c.allgatherv(grow[up]), c.allgatherv(gcol[up])
    r, ids = c.allgatherv(rates[up]), c.allgatherv(e)
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
