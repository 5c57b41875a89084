"""Rank-local k-way FM after distributed Jet: matchpart's compiled FM (refine/fm.py, with its
gain cache) on each rank's own vertices, with everything another rank may touch frozen.

FM moves own vertices only. Its gains are exact when no neighbour changes block meanwhile,
so in each of two sweeps a cross edge has one movable end at most: in sweep 0 an own vertex
may move when no neighbour lies on a lower rank, in sweep 1 when one does and none lies on a
higher one (a vertex with neighbours on both sides never moves). Interior vertices move in
sweep 0 only: a second run over them was half of local FM's time (R-MAT 2^18, k = 32, P = 1:
16 s of FM for 2 x 9 runs), and on one rank sweep 1 has nothing to move and is skipped. The
ghosts and the own vertices not movable in a sweep stay in the local graph with their
blocks, so the gains of the movable ones see every edge; they are frozen by giving them a
weight no block has room for. Each rank may add to a block only its share of the block's
free room (lmax minus the global weight, split evenly), so the sums of the local moves keep
the partition balanced, and the cut falls by exactly the sum of the local gains.
"""
from __future__ import annotations

import numpy as np

from ..refine.fm import refine_arrays
from .jet import ghost_adjacency
from .refine import block_sums, block_weights

SWEEPS = 2


def local_fm(g, parts, k, lmax, *, seed=0, passes=1, localized=False, cut=None, boundary=None):
    """FM on the own vertices of ``g`` (in ``SWEEPS`` sweeps); returns the new parts of the
    own vertices. A partition that is not balanced is returned unchanged (the rebalancer's
    job: FM here only trades cut within each rank's share of the free room).

    ``cut`` (the global cut of ``parts``) and ``boundary`` (flags of a superset of its
    boundary among the own vertices), as distributed Jet returns them, spare FM a pass over
    the rows for each (the single process's FM takes them from its Jet alike; delaunay
    2^20, k = 32, P = 1, profiled: FM's rounds 0.81 -> 0.38 s). With ``cut`` given, returns
    (parts, the new global cut): the old one less every rank's gains (exact: see the
    module's text), so that the partition needs no final cut pass (0.27 s there)."""
    c = g.comm
    nl = g.n_local
    parts = np.asarray(parts, dtype=np.int64).copy()
    if passes <= 0:
        return parts if cut is None else (parts, cut)
    gained = 0.0
    arrays, ghost_owner_lo, ghost_owner_hi = _local_arrays(g)
    for sweep in range(SWEEPS):
        own_movable = ~ghost_owner_lo if sweep == 0 else ghost_owner_lo & ~ghost_owner_hi
        if sweep and not c.allreduce(int(own_movable.sum())):
            break
        bw = block_weights(g, parts, k).astype(np.float64)
        if (bw > lmax).any():
            break
        ext = g.extended(parts)
        movable = np.concatenate([own_movable, np.zeros(g.ghosts.shape[0], dtype=bool)])
        vw = arrays[3].copy()
        share = np.floor((lmax - bw) / c.size)
        room = block_sums(ext[movable], vw[movable], k) + share
        big = float(lmax) + 1.0                  # heavier than any block's room: never moves
        vw[~movable] = big
        maxw = room + big * np.bincount(ext[~movable], minlength=k)
        local = ext.copy()
        # the hints hold for the first sweep only (the second starts from other ranks' moves);
        # on one rank the local graph is the whole graph, so its cut is the global one
        hint = None
        if sweep == 0 and boundary is not None:
            hint = np.concatenate([boundary, np.ones(g.ghosts.shape[0], dtype=np.bool_)])
        known = cut if sweep == 0 and c.size == 1 else None
        out = refine_arrays((*arrays[:3], vw), local, maxw, seed=seed + 7919 * sweep + 104729 * c.rank,
                            passes=passes, rebalance=False, localized=localized, cut=known, boundary_hint=hint)
        gained += out["initial_cut"] - out["cut"]
        parts = local[:nl]
    if cut is None:
        return parts
    total = c.allreduce(np.array([gained], dtype=np.float64))[0]
    return parts, (cut - int(round(total)) if isinstance(cut, (int, np.integer)) else cut - total)


def _local_arrays(g):
    """Host arrays (indptr, indices, ewgt, vwgt) of own vertices then ghosts (each ghost's row
    holds its edges to own vertices, in row order), and per own vertex whether it has a
    neighbour on a lower / higher rank. The ghosts' rows are the transposed cross entries
    (jet.ghost_adjacency): appended without the stable sort of all entries that took 1.0 s
    of a 12 s run on delaunay 2^20 at P = 2."""
    nl, ng = g.n_local, g.ghosts.shape[0]
    gptr, gnbr, gent = ghost_adjacency(g)
    if ng:
        indptr = np.concatenate([g.indptr, g.indptr[-1] + gptr[1:]])
        cols = np.concatenate([g.adj, gnbr])
        w = np.concatenate([g.ewgt, g.ewgt[gent]], dtype=np.float64)
    else:   # FM only reads the rows: no copies of them (O(m) each, per level)
        indptr, cols, w = g.indptr, g.adj, g.ewgt.astype(np.float64, copy=False)
    vw = np.concatenate([g.vwgt.astype(np.float64), np.zeros(ng)])
    owner = np.repeat(g.owner(g.ghosts), np.diff(gptr))   # per ghost entry, the ghost's rank
    lo = np.zeros(nl, dtype=bool)
    hi = np.zeros(nl, dtype=bool)
    lo[gnbr[owner < g.comm.rank]] = True
    hi[gnbr[owner > g.comm.rank]] = True
    return (indptr, cols, w, vw), lo, hi
