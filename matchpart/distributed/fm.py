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

Where most vertices have neighbours on other ranks (power-law graphs), those sweeps run one
rank at a time: on R-MAT 2^18 at P = 2 rank 0 had nearly all its vertices to move in sweep 0
and rank 1 nearly none, and the other way round in sweep 1. There the sweeps are grouped
instead (grouped_sweeps decides): in each of max(2, P) sweeps the blocks are dealt at random
to P groups (the same on every rank), and rank r moves its vertices of group r's blocks
between those blocks only. A move between blocks a and b changes a neighbour's connection
to a and b only, so no other rank's gain changes (refine/grouped_fm.py makes the same
argument for groups on threads): every rank works in every sweep, and the cut still falls
by exactly the sum of the gains. Each rank then moves between 1 / P of the blocks, so the
sweeps win less than one FM pass: on power-law graphs at P > 1 the pipeline runs no FM at
all (api._partition: R-MAT 2^18, P = 2, 0.58% of cut for 1.6-1.9 x Jet's time); grouped
sweeps remain for the other graphs whose ranks share most of their boundary (a file's
random ids).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..refine.fm import refine_arrays
from .jet import ghost_adjacency
from .jet_kernels import NO_FLAGS
from .refine import block_weights

SWEEPS = 2
# Sweeps are grouped when the ranks' sweeps by rank order would take more than this many
# times the ideal (each rank's movable entries over both sweeps, the slowest rank's):
# R-MAT 2^18 at P = 2 has about 2, delaunay 2^20 numbered breadth-first about 1.
GROUPED_IMBALANCE = 1.5


def local_fm(g, parts, k, lmax, *, seed=0, passes=1, localized=False, cut=None, boundary=None, workspace=None):
    """FM on the own vertices of ``g`` (in ``SWEEPS`` sweeps); returns the new parts of the
    own vertices. A partition that is not balanced is returned unchanged (the rebalancer's
    job: FM here only trades cut within each rank's share of the free room).

    ``cut`` (the global cut of ``parts``) and ``boundary`` (flags of a superset of its
    boundary among the own vertices), as distributed Jet returns them, spare FM a pass over
    the rows for each (the single process's FM takes them from its Jet alike; delaunay
    2^20, k = 32, P = 1, profiled: FM's rounds 0.81 -> 0.38 s). With ``cut`` given, returns
    (parts, the new global cut): the old one less every rank's gains (exact: see the
    module's text), so that the partition needs no final cut pass (0.27 s there).
    ``workspace``: FM's scratch for the levels of a hierarchy (refine.fm.refine_arrays; a
    fresh one per level and sweep cost delaunay 2^20 at P = 2 16 ms over its levels)."""
    c = g.comm
    nl = g.n_local
    parts = np.asarray(parts, dtype=np.int64).copy()
    if passes <= 0:
        return parts if cut is None else (parts, cut)
    gained = 0.0
    arrays, ghost_owner_lo, ghost_owner_hi = _local_arrays(g)
    grouped = grouped_sweeps(c, np.diff(arrays[0][:nl + 1]), ghost_owner_lo, ghost_owner_hi)
    for sweep in range(max(SWEEPS, c.size) if grouped else SWEEPS):
        closed = None
        if grouped:
            closed = _block_groups(k, c.size, seed, sweep) != c.rank
            own_movable = ~closed[parts]
        else:
            own_movable = ~ghost_owner_lo if sweep == 0 else ghost_owner_lo & ~ghost_owner_hi
            if sweep and not c.allreduce(int(own_movable.sum())):
                break
        bw = block_weights(g, parts, k).astype(np.float64)
        if (bw > lmax).any():
            break
        local = g.extended(parts)
        big = float(lmax) + 1.0                  # heavier than any block's room: never moves
        # FM lists only what the hint flags, and the hint need not flag vertices that cannot
        # move: listing the frozen ones built their gain-cache entries for nothing (R-MAT 2^18,
        # P = 2: 0.45 -> 0.20 s a sweep on rank 0). The boundary hint holds for the first sweep
        # only (the second starts from other ranks' moves).
        vw, room, n_frozen, hint, n_movable = _sweep_arrays(
            local, own_movable, arrays[3], boundary if sweep == 0 and boundary is not None else NO_FLAGS, big, k)
        if not n_movable:        # nothing here can move: FM would only build its arrays
            continue
        frozen = big * n_frozen
        maxw = room + np.floor((lmax - bw) / c.size) + frozen
        if closed is not None:       # no room at all, even for a vertex of weight 0
            maxw[closed] = frozen[closed] - 0.5
        known = cut if sweep == 0 and c.size == 1 else None
        if known is None and passes == 1:
            # the local graph's cut is not known, and one pass needs none: FM reads its cut only
            # to end a pass that gained too little of it, and the gains sum the same from any
            # baseline (an O(m) pass per sweep and level saved)
            known = 0.0
        out = refine_arrays((*arrays[:3], vw), local, maxw, seed=seed + 7919 * sweep + 104729 * c.rank,
                            passes=passes, rebalance=False, localized=localized, cut=known, boundary_hint=hint,
                            workspace=workspace)
        gained += out["initial_cut"] - out["cut"]
        parts = local[:nl]
    if cut is None:
        return parts
    total = c.allreduce(np.array([gained], dtype=np.float64))[0]
    return parts, (cut - int(round(total)) if isinstance(cut, (int, np.integer)) else cut - total)


@njit(cache=True)
def _sweep_arrays(local, own_movable, vwgt, boundary, big, k):
    """A sweep's FM input in one pass over the own vertices and ghosts (``local`` their
    blocks): (vertex weights, ``big`` for the frozen ones; the movable ones' weight per block;
    the frozen ones' count per block; the hint: movable and, when ``boundary`` is not empty,
    flagged in it; the number of movable vertices). Delaunay 2^20 at P = 2: the numpy
    expressions' dozen passes took 12-15 ms of the finest level's sweeps' 40-60 ms."""
    n, nl = local.shape[0], own_movable.shape[0]
    vw = np.empty(n, dtype=np.float64)
    hint = np.zeros(n, dtype=np.bool_)
    room = np.zeros(k, dtype=np.float64)
    n_frozen = np.zeros(k, dtype=np.int64)
    n_movable = 0
    for v in range(n):
        if v < nl and own_movable[v]:
            vw[v] = vwgt[v]
            room[local[v]] += vwgt[v]
            hint[v] = boundary.shape[0] == 0 or boundary[v]
            n_movable += 1
        else:
            vw[v] = big
            n_frozen[local[v]] += 1
    return vw, room, n_frozen, hint, n_movable


def grouped_sweeps(c, degrees, lo, hi):
    """Whether local_fm groups its sweeps by blocks (same answer on every rank): on more than
    one rank, when the sweeps by rank order, each as slow as its slowest rank, would take
    more than GROUPED_IMBALANCE x the most entries any rank has to move in both."""
    if c.size == 1:
        return False
    work = np.zeros((c.size, 2), dtype=np.float64)      # movable entries per rank and sweep
    work[c.rank] = degrees[~lo].sum(), degrees[lo & ~hi].sum()
    work = c.allreduce(work)
    return bool(work.max(axis=0).sum() > GROUPED_IMBALANCE * work.sum(axis=1).max())


def _block_groups(k, size, seed, sweep):
    """Block -> group in 0..size-1 for a grouped sweep: a random permutation of the blocks
    dealt round-robin, the same on every rank (drawn from the seed and the sweep alone)."""
    perm = np.random.default_rng([int(seed) % 2**32, sweep, 0x6F4D]).permutation(k)
    group = np.empty(k, dtype=np.int64)
    group[perm] = np.arange(k) % size
    return group


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
