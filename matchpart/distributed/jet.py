"""Distributed Jet on the compiled passes (jet_kernels.py, refine/jet_passes.scan_boundary):
the rounds of refine._jet_xp, on a boundary list of own vertices instead of every row.

The whole-array rounds scanned every own row (destinations and cut) each round: on delaunay
2^20, k = 32, P = 1 that was 102 scans of 3.7 s and 70 cut passes of 1.3 s, for ~19000
boundary vertices of 10^6. Here a round rescans the listed vertices flagged around the last
moves (own ones, and ghosts through the ghost adjacency; as the single process's Jet does:
delaunay 2^20, P = 2: the refinement 0.55 -> 0.43 s a run), and only boundary data travels:
candidates (destination, gain) and moved vertices' blocks to the ranks that hold them as
ghosts, and k block weights. Same moves as refine._jet_xp, so the same partition.
"""
from __future__ import annotations

import numpy as np

from .. import threads
from ..backend.rng import stream_key
from ..refine.jet import FLOODED, patience_step
from ..refine.jet_passes import scan_boundary
from . import jet_kernels as kn


def ghost_adjacency(g):
    """(gptr, gnbr, gent): per ghost, its own neighbours and their entries (jet_kernels.ghost_rows;
    built once per graph, kept on it: Jet and FM both use it)."""
    if getattr(g, "_ghost_rows", None) is None:
        g._ghost_rows = kn.ghost_rows(g.indptr, g.adj, g.n_local, g.ghosts.shape[0])
    return g._ghost_rows


def jet_rounds(g, parts, k, lmax, *, seed, patience, max_rounds, negative_gain_factor, min_improvement,
               stream_dest, stream_priority, rebalance, rebalance_scratch, block_sums):
    """refine.jet's loop on the compiled passes; returns (the best partition seen, its global
    cut, bool flags of a superset of its boundary among the own vertices): FM then starts
    from them instead of a pass over every row for each (as the single process's Jet hands
    them to its FM)."""
    c = g.comm
    nl, ng = g.n_local, g.ghosts.shape[0]
    parts = np.asarray(parts, dtype=np.int64).copy()
    vw = g.vwgt.astype(np.float64)
    gptr, gnbr, _ = ghost_adjacency(g)
    everywhere = np.ones(k, dtype=np.bool_)
    locked = np.zeros(nl, dtype=np.bool_)
    in_list = np.zeros(nl, dtype=np.bool_)
    bnd = np.empty(nl, dtype=np.int64)
    keep = np.empty(nl, dtype=np.bool_)
    chunk, parallel_min = threads.CHUNK, threads.PARALLEL_MIN_ITEMS
    # a listed vertex is rescanned only when flagged (refine/jet_passes.py): it, an own
    # neighbour or (through the ghost adjacency) a ghost neighbour moved, or it was unlocked
    rescan = np.ones(nl, dtype=np.bool_)
    out_w = np.zeros(nl, dtype=np.float64)
    dest = np.empty(nl, dtype=np.int64)
    conn_dest = np.empty(nl, dtype=g.ewgt.dtype)
    conn_own = np.empty(nl, dtype=g.ewgt.dtype)
    acc = np.zeros(k, dtype=g.ewgt.dtype)
    touched = np.empty(k, dtype=np.int64)
    cand_ext = np.zeros(nl + ng, dtype=np.bool_)
    dest_ext = np.full(nl + ng, -1, dtype=np.int64)
    gain_ext = np.zeros(nl + ng, dtype=np.float64)
    moved = np.empty(nl, dtype=np.int64)
    prev = np.empty(nl, dtype=np.int64)
    nprev = 0
    prio_key = np.uint64(stream_key(seed, stream_priority))
    # one tie stream for every round, so that an unflagged vertex keeps its destination
    dest_key = np.uint64(stream_key(seed, stream_dest))
    integral = g.ewgt.dtype.kind in "iu"
    best, best_key, stale = parts.copy(), None, 0
    # own vertices moved since best was taken, and ghosts whose block changed since: with
    # their neighbours they cover the part of best's boundary the list no longer does
    since = np.zeros(nl, dtype=np.bool_)
    since_list = np.empty(nl, dtype=np.int64)
    nsince = 0
    ghosts_since = []
    ext = None
    local_bw = block_sums(parts, vw, k)
    scratch = None   # rebalancing's working arrays, made at its first call on this level
    evicted = np.empty(0, dtype=np.int64)   # as in refine.jet.jet_nb (FLOODED); made when first needed
    nb = 0
    bw = c.allreduce(local_bw)
    for it in range(max_rounds + 1):
        if ext is None:   # blocks of own vertices and ghosts; afterwards only moves travel
            ext = g.extended(parts)
            nb = kn.boundary_list(g.indptr, g.adj, ext, bnd, in_list)
        if (bw > lmax).any():
            # in place on parts and ext; the list grows around the moves, flagged for rescanning
            # (rebuilding it after each of the 40 calls on delaunay 2^18, k = 32, P = 1 cost
            # 0.09 s), which rebalancing tries first
            if scratch is None:
                scratch = rebalance_scratch(g)
            flooded = bw > FLOODED * lmax
            before = parts.copy() if flooded.any() else None
            parts, ext, mv, ghost_at, nb, local_bw = rebalance(g, parts, ext, k, lmax, seed=seed + 7919 * it,
                                                               listed=(bnd, nb, in_list, rescan), local=local_bw,
                                                               scratch=scratch)
            if before is not None:
                if evicted.shape[0] == 0:
                    evicted = np.full(nl, -1, dtype=np.int64)
                out = mv[(parts[mv] != before[mv]) & flooded[before[mv]]]
                evicted[out] = before[out]
            bw = c.allreduce(local_bw)
            nsince = kn.note_moved(mv, mv.shape[0], since, since_list, nsince)
            ghosts_since.append(ghost_at)
        nb, two_cut = scan_boundary(g.indptr, g.adj, g.ewgt, ext, k, bnd, nb, in_list, locked,
                                    dest_key, dest, conn_dest, conn_own, acc,
                                    touched, everywhere, keep, chunk, parallel_min, rescan, out_w)
        total = c.allreduce(np.array([two_cut], dtype=np.float64))[0]
        cut = int(total) // 2 if integral else total / 2
        if g.vwgt.dtype.kind in "iu":
            bw = bw.astype(g.vwgt.dtype)   # refine.block_weights' dtype: the same overload sums
        over = float(np.maximum(bw - lmax, 0).sum())
        key = (over, cut)
        is_best, stale = patience_step(key, best_key, stale, min_improvement)
        if is_best:
            # best differs from parts only on the own vertices moved since it was taken
            best[since_list[:nsince]] = parts[since_list[:nsince]]
            best_key = key
            since[since_list[:nsince]] = False
            nsince = 0
            ghosts_since = []
        if stale >= patience or it == max_rounds:
            break
        kn.candidates(bnd, nb, dest, conn_dest, conn_own, negative_gain_factor, cand_ext, dest_ext, gain_ext,
                      evicted)
        at, d_at, g_at = g.ghost_updates(cand_ext[:nl], dest_ext[:nl], gain_ext[:nl])
        cand_ext[at], dest_ext[at], gain_ext[at] = True, d_at, g_at
        nm = kn.afterburner(g.indptr, g.adj, g.ewgt, ext, bnd, nb, cand_ext, dest_ext, gain_ext, g.gid, prio_key,
                            moved)
        kn.clear_candidates(bnd, nb, cand_ext, at)
        kn.apply_moves(moved, nm, prev, nprev, dest, parts, ext, vw, local_bw, locked)
        rescan[prev[:nprev]] = True     # unlocked: they may move again
        moved, prev, nprev = prev, moved, nm
        # the moves' count and the next round's block weights in one allreduce (one wait for
        # the slowest rank instead of two); with no moves anywhere nothing changed: stop
        tot = c.allreduce(np.append(local_bw, float(nm)))
        if tot[-1] == 0:
            break
        bw = tot[:-1]
        at, blocks = g.ghost_updates(locked, parts)
        ext[at] = blocks
        nb = kn.extend_list(g.indptr, g.adj, prev, nprev, gptr, gnbr, at, bnd, nb, in_list, rescan)
        nsince = kn.note_moved(prev, nprev, since, since_list, nsince)
        ghosts_since.append(at)
    if ext is None or best_key is None:
        return best, None, None
    # in_list covers the boundary of the last partition (parts); best differs from it on the
    # vertices noted since, so those and their neighbours cover the rest of best's boundary
    at = np.unique(np.concatenate(ghosts_since)) if ghosts_since else np.zeros(0, dtype=np.int64)
    kn.extend_list(g.indptr, g.adj, since_list, nsince, gptr, gnbr, at, bnd, nb, in_list, kn.NO_FLAGS)
    return best, best_key[1], in_list
