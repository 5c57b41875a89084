"""Distributed refinement: Jet-style label propagation and rebalancing on a DistGraph.

Every round each rank scans its own vertices' rows (the compiled per-row destination scan
of refine/destinations.py, run on the rows with ghosts as extra columns), filters its
candidate moves against the higher-priority moves of its neighbours, ghosts included (the
afterburner of the Jet paper), applies them, exchanges the ghosts' new blocks and keeps the
block weights by allreduce (only moved vertices' blocks and candidates' moves travel).
Overweight blocks are then emptied by least-loss moves, each
rank shedding its share of every block's excess; a vertex thrown out of a block that Jet
flooded does not move back into it on that level (refine.jet.FLOODED).
"""
from __future__ import annotations

import numpy as np

from ..backend.rng import stream_key
from ..metrics import rows_cut_weight
from ..refine.destinations import _best_destinations_nb
from ..refine.jet import FLOODED, MIN_IMPROVEMENT, NEGATIVE_GAIN_FACTOR, patience_step

# Jet's negative-gain factor c on every level (the single-process refiner's measured value)
# and patience (iterations without improvement).
PATIENCE = 12
MAX_ROUNDS = 60
# Rebalancing rounds per call: each moves at most its share of every excess (more can be
# needed when destination blocks fill up or a rank's share rounds to too little).
REBALANCE_ROUNDS = 20
# Hash streams (distinct from the single-process refiners', whose tie orders are unrelated).
STREAM_DEST = 0xD15700
STREAM_PRIORITY = 0xD15800
# Destination ties in rebalancing: one key for all rounds of a call, so that a vertex's best
# block can be kept from round to round (rebalance_kernels.select); it was one per round.
STREAM_REBALANCE = STREAM_DEST + 997


def block_sums(blocks, weights, k):
    """Per block, the sum of ``weights`` (float64). np.bincount returns int64 zeros for an
    empty input even with weights: a rank without vertices would then reduce int64 bits
    with the others' float64 ones, get garbage, and take another branch than they do."""
    return np.bincount(blocks, weights=weights, minlength=k).astype(np.float64, copy=False)


def block_weights(g, parts, k):
    """Global block weights (allreduce of the local ones)."""
    local = block_sums(parts, g.vwgt, k)
    out = g.comm.allreduce(local)
    return out.astype(g.vwgt.dtype) if g.vwgt.dtype.kind in "iu" else out


def edge_cut(g, parts_ext):
    """Global edge cut from the blocks of own vertices and ghosts."""
    # one pass over the rows (Jet computes the cut every round: the numpy expression made
    # five temporaries of the entries' size and cost a fifth of the refinement)
    local = rows_cut_weight(g.indptr, g.adj, g.ewgt, parts_ext)
    total = g.comm.allreduce(np.array([local], dtype=np.float64))[0]
    return int(total) // 2 if g.ewgt.dtype.kind in "iu" else total / 2


def _destinations(g, parts_ext, k, active, allowed, seed, stream):
    return _best_destinations_nb(g.indptr, g.adj, g.ewgt, parts_ext, k, active, allowed,
                                 np.uint64(stream_key(seed, stream)))


def jet(g, parts, k, lmax, *, seed=0, patience=PATIENCE, max_rounds=MAX_ROUNDS,
        negative_gain_factor=NEGATIVE_GAIN_FACTOR, min_improvement=MIN_IMPROVEMENT, method="numba", state=False):
    """Refine ``parts`` (blocks of own vertices); returns the best balanced partition seen
    (or the least overloaded one when balance was never reached). ``method``: "numba" (the
    compiled passes on a boundary list, distributed/jet.py) or "xp" (whole-array rounds over
    every row); both make the same moves, so they return the same partition. With ``state``
    returns (partition, its global cut, flags of a superset of its boundary among the own
    vertices or None), for local_fm."""
    if method == "numba":
        from .jet import jet_rounds
        out = jet_rounds(g, parts, k, lmax, seed=seed, patience=patience, max_rounds=max_rounds,
                         negative_gain_factor=negative_gain_factor, min_improvement=min_improvement,
                         stream_dest=STREAM_DEST, stream_priority=STREAM_PRIORITY, rebalance=rebalance_tracked,
                         rebalance_scratch=rebalance_scratch, block_sums=block_sums)
        return out if state else out[0]
    if method != "xp":
        raise ValueError(f"method must be 'numba' or 'xp', got {method!r}")
    c = g.comm
    nl = g.n_local
    cfac = negative_gain_factor
    parts = np.asarray(parts, dtype=np.int64).copy()
    everywhere = np.ones(k, dtype=np.bool_)
    locked = np.zeros(nl, dtype=np.bool_)
    best, best_key, stale = parts.copy(), None, 0
    prio = _priority(seed, g.gid)   # keyed by global id: both ends of a cross edge agree
    ext = None
    evicted = np.full(nl, -1, dtype=np.int64)   # see refine.jet.FLOODED
    for it in range(max_rounds + 1):
        bw = block_weights(g, parts, k)
        if (bw > lmax).any():
            balanced = rebalance(g, parts.copy(), k, lmax, seed=seed + 7919 * it)   # in place
            flooded = bw > FLOODED * lmax
            evicted = np.where((balanced != parts) & flooded[parts], parts, evicted)
            parts = balanced
            bw = block_weights(g, parts, k)
            ext = None
        if ext is None:   # blocks of own vertices and ghosts; afterwards only moves travel
            ext = g.extended(parts)
        cut = edge_cut(g, ext)
        over = float(np.maximum(bw - lmax, 0).sum())
        key = (over, cut)
        is_best, stale = patience_step(key, best_key, stale, min_improvement)
        if is_best:
            best, best_key = parts.copy(), key
        if stale >= patience or it == max_rounds:
            break
        dest, cd, co = _destinations(g, ext, k, ~locked, everywhere, seed, STREAM_DEST)
        gain = cd - co
        cand = (dest >= 0) & (dest != evicted) & (-gain < np.floor(cfac * co))
        moved = _afterburner(g, ext, cand, dest, gain, prio)
        if not c.allreduce(int(moved.shape[0])):
            break
        parts[moved] = dest[moved]
        locked[:] = False
        locked[moved] = True
        ext[:nl] = parts
        at, blocks = g.ghost_updates(locked, parts)
        ext[at] = blocks
    return (best, best_key[1], None) if state else best


def _priority(seed, gids):
    from ..backend import get
    return get("cpu").hash64(seed, STREAM_PRIORITY, gids)


def _afterburner(g, ext, cand, dest, gain, prio):
    """The candidates whose gain stays positive when every neighbour candidate of higher
    priority (larger gain; ties by hash, then by global id) has moved first."""
    nl = g.n_local
    # the neighbours' candidacy, destination and gain; of the ghosts only candidates travel
    d_ext = np.concatenate([np.where(cand, dest, -1), np.full(g.ghosts.shape[0], -1, dtype=np.int64)])
    g_ext = np.concatenate([np.where(cand, gain, 0).astype(np.float64), np.zeros(g.ghosts.shape[0])])
    at, d_at, g_at = g.ghost_updates(cand, dest, gain.astype(np.float64))
    d_ext[at], g_ext[at] = d_at, g_at
    rows_c = np.flatnonzero(cand)
    if rows_c.shape[0] == 0:
        return rows_c
    sel = np.flatnonzero(cand[g.rows])
    v, u, w = g.rows[sel], g.adj[sel], g.ewgt[sel]
    gv, gu = g_ext[v], g_ext[u]
    first = (gu > gv) | ((gu == gv) & ((prio[u] < prio[v]) | ((prio[u] == prio[v]) & (g.gid[u] < g.gid[v]))))
    where_u = np.where((d_ext[u] >= 0) & first, d_ext[u], ext[u])
    delta = np.where(where_u == d_ext[v], w, np.where(where_u == ext[v], -w, 0)).astype(np.float64)
    new_gain = np.bincount(v, weights=delta, minlength=nl)
    return rows_c[new_gain[rows_c] > 0]


def _round_head(g, parts, vw, k, lmax, local=None):
    """A rebalancing round's start, shared by both methods: (this rank's block weights, the
    global ones, the overweight blocks, the blocks that may receive), or None when no block
    is over lmax. ``local``: this rank's block weights when the caller keeps them."""
    if local is None:
        local = block_sums(parts, vw, k)
    bw = g.comm.allreduce(local)
    over = bw > lmax
    if not over.any():
        return None
    allowed = (bw < lmax) & _destination_blocks(g, bw, k)
    if not allowed.any():
        allowed = bw < lmax
    return local, bw, over, allowed


def _destination_blocks(g, bw, k):
    """Blocks that may receive: at most average weight (they exist, and have room for more
    than a sliver that would be split between the ranks down to nothing), else any below lmax."""
    return bw <= g.total_vwgt / k


def rebalance(g, parts, k, lmax, *, seed=0, rounds=REBALANCE_ROUNDS, method="numba"):
    """Move least-loss vertices out of overweight blocks until every block is <= lmax (or the
    rounds run out). Each rank sheds the share of a block's excess proportional to its own
    weight in that block, into destinations whose free room is shared the same way.
    ``method``: "numba" (rebalance_kernels.py) or "xp" (numpy); the same moves."""
    parts = np.asarray(parts, dtype=np.int64).copy()
    if method == "numba":
        return rebalance_tracked(g, parts, g.extended(parts), k, lmax, seed=seed, rounds=rounds)[0]
    if method != "xp":
        raise ValueError(f"method must be 'numba' or 'xp', got {method!r}")
    c = g.comm
    vw = g.vwgt.astype(np.float64)
    for rnd in range(rounds):
        head = _round_head(g, parts, vw, k, lmax)
        if head is None:
            break
        local, bw, over, allowed = head
        ext = g.extended(parts)
        active = over[parts]
        dest, cd, co = _destinations(g, ext, k, active, allowed, seed, STREAM_REBALANCE)
        # a vertex with no adjacent room goes to the lightest block (loses all its connectivity)
        nowhere = active & (dest < 0)
        dest[nowhere] = int(np.argmin(bw))
        loss = np.where(nowhere, co, co - cd)
        movers = np.flatnonzero(active & (dest != parts))
        # shed: per source block, the least loss per weight first, up to this rank's share
        share = (bw - lmax) * np.divide(local, bw, out=np.zeros(k), where=bw > 0)
        pick = _prefix_up_to(parts[movers], loss[movers] / np.maximum(vw[movers], 1e-12), vw[movers],
                             np.ceil(share))
        movers = movers[pick]
        # room: per destination block, this rank's share of the free room
        asked = block_sums(dest[movers], vw[movers], k)
        total_asked = c.allreduce(asked)
        room = np.maximum(lmax - bw, 0) * np.divide(asked, total_asked, out=np.zeros(k), where=total_asked > 0)
        keep = np.zeros(movers.shape[0], dtype=np.bool_)
        keep[_prefix_up_to(dest[movers], loss[movers], vw[movers], np.floor(room), at_least_one=rnd > 0)] = True
        admitted = block_sums(dest[movers[keep]], vw[movers[keep]], k)
        rest = movers[~keep]
        left = _room_left(c, lmax, bw, allowed, admitted, float(vw[rest].sum()))
        parts[movers[keep]] = dest[movers[keep]]
        if rest.shape[0]:
            # the rest into the room left: least loss per weight first, each where it lies
            # wholly inside one receiver's room (rooms end to end in block order)
            order = np.argsort(loss[rest] / np.maximum(vw[rest], 1e-12), kind="stable")
            rv = rest[order]
            end = np.cumsum(vw[rv])
            start = np.concatenate([[0.0], end[:-1]])
            recv = np.flatnonzero(left > 0)
            if recv.shape[0]:
                cap = np.cumsum(left[recv])
                j = np.searchsorted(cap, start, side="right")
                fits = (j < recv.shape[0]) & (end <= cap[np.minimum(j, recv.shape[0] - 1)])
                parts[rv[fits]] = recv[j[fits]]
    return parts


def _room_left(c, lmax, bw, allowed, admitted, rest_weight):
    """This rank's share of each allowed block's room left after the round's admissions,
    in proportion to the weight of the movers it has left over (one allreduce of the k
    admitted weights and that weight), rounded down. Without it a flooded block shed its
    excess over ~10 rounds, the movers that their best block had no room for waiting for
    the next (R-MAT 2^18, k = 32, P = 1: 31 rounds of select in 6 calls, 1.2 s)."""
    tot = c.allreduce(np.append(admitted, rest_weight))
    if tot[-1] <= 0:
        return np.zeros(bw.shape[0])
    free = np.where(allowed, np.maximum(lmax - bw - tot[:-1], 0), 0)
    return np.floor(free * (rest_weight / tot[-1]))


def rebalance_scratch(g):
    """Per-vertex working arrays of rebalance_tracked, for all the calls on one graph (Jet
    makes one per level). Written through once (np.full): a call writes a few hundred random
    slots, and in unmapped pages each costs a page fault (delaunay 2^20, k = 32, P = 1: 45
    ms for a call on the finest level, 1 ms with the pages mapped). The loss floor and the
    weighted degrees (rebalance_kernels.loss_floor) are filled on first use."""
    nl = g.n_local
    return {"now": np.full(nl, False), "changed": np.full(nl, False), "moved": np.full(nl, -1, dtype=np.int64),
            "known": np.full(nl, False), "kd": np.full(nl, -1, dtype=np.int64),
            "kcd": np.full(nl, 0, dtype=g.ewgt.dtype), "kco": np.full(nl, 0, dtype=g.ewgt.dtype),
            "wdeg": None, "floor": None}


def rebalance_tracked(g, parts, ext, k, lmax, *, seed=0, rounds=REBALANCE_ROUNDS, listed=None, local=None,
                      scratch=None):
    """rebalance's rounds on the compiled kernels, in place on ``parts`` (int64) and ``ext``
    (their blocks with the ghosts', current). Returns (parts, ext, own vertices moved, local
    indices of ghosts whose block changed, the list's length, this rank's block weights).
    ``listed``: Jet's (list, its length, in-list flags, rescan flags), a superset of the own
    boundary vertices: each round tries them first (rk.select) and extends the list around
    its moves, flagging them for Jet's rescan (in place; the new length is returned), so that
    Jet neither rebuilds the list (a full pass over the rows: 0.09 s over 47 calls on
    delaunay 2^18, k = 32, P = 1) nor walks the moves again. ``local``: this rank's block
    weights of ``parts`` when the caller keeps them (integer weights). ``scratch``:
    rebalance_scratch(g), when the caller keeps it."""
    from . import rebalance_kernels as rk
    from .jet import ghost_adjacency
    from .jet_kernels import extend_list
    c = g.comm
    nl = g.n_local
    vw = g.vwgt.astype(np.float64)
    sc = rebalance_scratch(g) if scratch is None else scratch
    # now: moved this round (cleared after each); changed, moved: this call; known, kd, kcd,
    # kco: each vertex's best allowed adjacent block, kept between rounds (rk.select)
    now, changed, moved, known = sc["now"], sc["changed"], sc["moved"], sc["known"]
    kd, kcd, kco = sc["kd"], sc["kcd"], sc["kco"]
    changed[:] = False
    known[:] = False
    nmoved = 0
    ghosts_at = []
    was_allowed = np.ones(k, dtype=np.bool_)
    gptr, gnbr, _ = ghost_adjacency(g)
    key = np.uint64(stream_key(seed, STREAM_REBALANCE))
    if listed is None:
        bnd, nb, in_list, wdeg, floor = np.zeros(0, dtype=np.int64), 0, None, np.zeros(0), np.inf
    else:
        bnd, nb, in_list, rescan = listed
        if sc["wdeg"] is None:   # once per scratch (one pass over the rows)
            sc["wdeg"] = np.empty(nl, dtype=np.float64)
            sc["floor"] = rk.loss_floor(g.indptr, g.ewgt, vw, sc["wdeg"])
        floor, wdeg = sc["floor"], sc["wdeg"]
    # this rank's block weights, kept through the moves where the sums are exact (integer
    # weights; float ones are summed afresh in index order, as the numpy rounds sum them)
    exact = g.vwgt.dtype.kind in "iub"
    local = local.copy() if exact and local is not None else block_sums(parts, vw, k)
    for rnd in range(rounds):
        head = _round_head(g, parts, vw, k, lmax, local)
        if head is None:
            break
        local, bw, over, allowed = head
        if (allowed & ~was_allowed).any():
            known[:] = False   # a newly allowed block may be some vertex's best
        was_allowed[:] = allowed
        share = (bw - lmax) * np.divide(local, bw, out=np.zeros(k), where=bw > 0)
        movers, dest, loss, asked = rk.select(g.indptr, g.adj, g.ewgt, ext, vw, k, over, allowed, key,
                                              int(np.argmin(bw)), np.ceil(share), known, kd, kcd, kco, bnd[:nb],
                                              now if in_list is None else in_list, wdeg, floor)
        total_asked = c.allreduce(asked)
        room = np.maximum(lmax - bw, 0) * np.divide(asked, total_asked, out=np.zeros(k), where=total_asked > 0)
        nmoved = rk.admit(movers, dest, loss, vw, np.floor(room), rnd > 0, parts, ext, now, changed, moved, nmoved,
                          local)
        admitted, rest_weight = rk.admitted_weights(movers, dest, vw, now, k)
        left = _room_left(c, lmax, bw, allowed, admitted, rest_weight)
        nmoved = rk.pack(movers, loss, vw, left, parts, ext, now, changed, moved, nmoved, local)
        if not exact:
            local = block_sums(parts, vw, k)
        at, blocks = g.ghost_updates(now, parts)
        ext[at] = blocks
        ghosts_at.append(at)
        movers = movers[now[movers]]
        rk.invalidate(g.indptr, g.adj, movers, movers.shape[0], gptr, gnbr, at, known)
        if in_list is not None:
            nb = extend_list(g.indptr, g.adj, movers, movers.shape[0], gptr, gnbr, at, bnd, nb, in_list, rescan)
        now[movers] = False
    at = np.unique(np.concatenate(ghosts_at)) if ghosts_at else np.zeros(0, dtype=np.int64)
    return parts, ext, moved[:nmoved].copy(), at, nb, local


def _prefix_up_to(group, order_key, weight, limit, at_least_one=True):
    """Indices (into the inputs) of, per group, the items in increasing ``order_key`` whose
    running weight stays within limit[group]; with ``at_least_one`` the item that crosses the
    limit is taken too (so that heavy vertices still move)."""
    if group.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((order_key, group))
    g, w = group[order], weight[order]
    run = np.cumsum(w)
    starts = np.flatnonzero(np.concatenate([[True], g[1:] != g[:-1]]))
    base = np.repeat(run[starts] - w[starts], np.diff(np.concatenate([starts, [g.shape[0]]])))
    before = run - w - base          # weight of the group's earlier items
    ok = (before + w <= limit[g]) | (at_least_one & (before < limit[g]))
    return np.sort(order[ok])
