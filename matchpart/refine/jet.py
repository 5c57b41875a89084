"""Jet-style parallel label-propagation refinement (Gilbert, Rajamanickam et al.): compiled on the CPU, whole-array on numpy or cupy.

One iteration:
1. if a block is over the bound, rebalance (rebalance.py) first;
2. score the current partition (cut, overload) and keep the best one seen;
3. "lp": every unlocked boundary vertex picks its most connected adjacent block; it becomes
   a candidate when the gain is positive or the loss is small, -gain < floor(c * conn_own)
   (negative moves let the search leave local minima; the afterburner filters them), unless
   that block is one rebalancing threw it out of after Jet flooded it (FLOODED);
4. "afterburner": each candidate recomputes its gain as if every higher-priority neighbouring
   candidate (higher gain, ties by hash) had already moved; it moves only if that gain > 0;
5. moved vertices are locked for the next iteration (stops two neighbours swapping forever).
The loop stops after ``patience`` iterations without a relative improvement of more than
``min_improvement`` and returns the best balanced partition seen (the input counts).
"""
from __future__ import annotations

import math

import numpy as np

from .. import threads
from ..backend.rng import stream_key_at
from ..jit import njit
from .boundary import boundary_from_scratch, extend_and_flag_chunked, flag_around_chunked
from .destinations import best_destinations
from .jet_passes import lp_moves_nb, scan_boundary
from .rebalance import MAX_ROUNDS as _REBALANCE_ROUNDS
from .rebalance import rebalance
from .rebalance_kernel import rebalance_nb
from .state import (block_weights, bounds_array, cast_like, check_partition, device_bounds, host_arrays,
                    block_members, host_block_weights, host_overload, overload, relink)

# Tunables (defaults follow the Jet paper where it gives one)
MAX_ITERATIONS = 200           # hard cap; patience normally ends the loop far earlier
PATIENCE = 12                  # Jet: stop after 12 iterations without improving the best cut
MIN_IMPROVEMENT = 0.001        # Jet: an iteration counts as improving when cut < 0.999 * best
NEGATIVE_GAIN_FACTOR = 0.75    # Jet's c: admit moves losing < floor(c * conn_own), on every level.
                               # Default pipeline, shared graphs (k = 2, 8, 32) + rmat/ba/delaunay 2^13
                               # (k = 8, 32): c on the finest level 0.75 -> 0.9073 x METIS's cut,
                               # 0.5 -> 0.9089, 0.25 -> 0.9091
# A vertex that rebalancing moved out of a flooded block, one that Jet's moves had filled to
# more than FLOODED x its bound, does not move back into it by Jet's moves on that level (it
# may still leave for any other block). On power-law graphs Jet's moves pile into the block of
# a hub and rebalancing throws as many out again, every iteration: R-MAT 2^16, k = 32, finest
# level: 15-23k of 65k vertices each way, iteration after iteration; staying out, that
# level's Jet took 0.69 x the time (307 -> 212 ms) to a lower cut (599949 -> 599054), and
# whole runs 0.7-0.9 x the refinement time (R-MAT 2^13-2^17, k = 4-64, 3 seeds: cut within
# +-0.2%). Evictions from blocks barely over their bound stay free: keeping those out
# too cost the shared meshes 0.7-2% of cut (a few vertices that a later iteration wanted back).
FLOODED = 2.0

_STREAM_DEST = 0x1E70          # hash streams: ties between destination blocks (one stream for every
                               # iteration, so that an unchanged vertex keeps its destination),
_STREAM_PRIORITY = 0x2E70      # ... and between equal-gain candidates in the afterburner


def jet_refine(graph, parts, k, max_block_weight, *, seed=0, max_iterations=MAX_ITERATIONS,
               patience=PATIENCE, negative_gain_factor=NEGATIVE_GAIN_FACTOR,
               min_improvement=MIN_IMPROVEMENT, method="auto"):
    """Refine a k-way partition in parallel rounds; returns the best partition found.

    ``parts``: block id per vertex (0..k-1), numpy or the graph's device array; the result is a
    new array on the graph's backend in the same integer dtype. ``max_block_weight``: Lmax,
    e.g. ``metrics.max_block_weight(graph.total_vwgt, k, eps)``, or k per-block bounds
    (``metrics.block_bounds``). The result is balanced
    whenever the input is (or rebalancing reached balance) and its cut is never above the
    input's when the input is balanced. If balance is never reached (infeasible bound) the
    least overloaded partition seen is returned. ``negative_gain_factor`` is Jet's c (see
    NEGATIVE_GAIN_FACTOR). ``method``: "auto" (numba on the CPU, xp on the GPU), "numba"
    (the whole loop as one compiled call, CPU) or "xp" (whole-array rounds, numpy or cupy);
    both give the same partition for the same seed (exactly, for integer weights).
    """
    p = check_partition(graph, parts, k, max_block_weight)
    be = graph.backend
    if max_iterations < 0 or patience < 1:
        raise ValueError(f"need max_iterations >= 0 and patience >= 1, got {max_iterations}, {patience}")
    if not 0 <= negative_gain_factor:
        raise ValueError(f"negative_gain_factor must be >= 0, got {negative_gain_factor}")
    if method == "auto":
        method = "xp" if be.is_gpu else "numba"
    if method not in ("numba", "xp"):
        raise ValueError(f"method must be 'auto', 'numba' or 'xp', got {method!r}")
    if method == "numba" and be.is_gpu:
        raise ValueError("method='numba' runs on the CPU only; use method='xp' for a GPU graph")
    if graph.n == 0 or k == 1:
        return cast_like(parts, p, be)
    if method == "numba":
        maxw = bounds_array(max_block_weight, k)
        best, _, _ = jet_arrays(host_arrays(graph), p, maxw, seed=seed, max_iterations=max_iterations,
                                patience=patience, negative_gain_factor=negative_gain_factor,
                                min_improvement=min_improvement)
        return cast_like(parts, best, be)
    lmax = device_bounds(be, max_block_weight, k)
    return cast_like(parts, _jet_xp(graph, p, k, lmax, seed, max_iterations, patience, negative_gain_factor,
                                    min_improvement), be)


def new_workspace(n, ewgt_dtype):
    """Jet's per-vertex scratch for graphs of up to n vertices (jet_nb's arrays, see there), to
    be shared by the levels of a hierarchy: fresh pages cost more than the work on them. jet_nb
    took 19 ms on delaunay 2^20's finest level before its first move, 10.5 of them allocating
    sixteen arrays of n; allocated here by numpy, whose large arrays get transparent huge pages.
    (current, best, locked, listed flags, candidate gains, boundary list, moved, verdicts,
    destinations, their connections, own connections, rebalancing log, logged, changed,
    changed list, rescan flags, weights to other blocks)."""
    return (np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.bool_),
            np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.float64), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=ewgt_dtype), np.empty(n, dtype=ewgt_dtype), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.float64))


def jet_arrays(arrays, parts, maxw, *, seed=0, max_iterations=MAX_ITERATIONS, patience=PATIENCE,
               negative_gain_factor=NEGATIVE_GAIN_FACTOR, min_improvement=MIN_IMPROVEMENT, boundary_hint=None,
               workspace=None):
    """Jet on host arrays (see fm.host_arrays) with per-block bounds maxw; parts is not modified.

    The pipeline's entry: no validation (the caller owns the arrays), one compiled call.
    Returns (best partition, its cut as a float, flags of a superset of its boundary): the
    next refiner starts from that cut and boundary rather than O(m) passes of its own.
    ``boundary_hint``: flags of a superset of the boundary of ``parts`` (the coarser level's,
    projected), so the first list is built without testing every vertex. ``workspace``: a
    new_workspace of at least n vertices and the edge weights' dtype, or None (a fresh one);
    the partition and flags returned lie in it, valid until its next use.
    """
    indptr, indices, ewgt, vwgt = arrays
    n = indptr.shape[0] - 1
    if workspace is None or workspace[0].shape[0] < n or workspace[9].dtype != ewgt.dtype:
        workspace = new_workspace(n, ewgt.dtype)
    hint = np.empty(0, dtype=np.bool_) if boundary_hint is None else boundary_hint
    chunk, parallel_min = threads.scaled_chunk(threads.CHUNK, threads.PARALLEL_MIN_ITEMS, n, indices.shape[0])
    return jet_nb(indptr, indices, ewgt, vwgt, parts, maxw, int(seed), int(max_iterations), int(patience),
                  float(negative_gain_factor), float(min_improvement), hint, chunk, parallel_min, workspace)


# ---- compiled formulation (CPU) ----------------------------------------------------------------
@njit(cache=True)
def jet_nb(indptr, indices, ewgt, vwgt, parts, maxw, seed, max_iterations, patience, c, min_improvement, hint,
           chunk, parallel_min, workspace):
    """The loop of _jet_xp as one kernel (parts is not changed); returns the best partition
    seen, its cut (float; exact for integer weights) and bool flags of a superset of its
    boundary, both in ``workspace`` (new_workspace: the per-vertex arrays, of n or more).
    ``hint``: flags of a superset of p's boundary, or an empty array. The boundary scans run
    in chunks of ``chunk`` list entries, on threads from ``parallel_min`` entries up
    (threads.CHUNK, threads.PARALLEL_MIN_ITEMS).

    Each iteration scans the boundary vertices only (interior ones have no move), kept in a
    list that the moved vertices' neighbourhoods extend: O(boundary) instead of O(m) work.
    Of those it recomputes only the ones flagged for a rescan (moved, unlocked, or next to a
    move); the others' destinations, connectivities and cut weight are those of their last scan.
    """
    n = parts.shape[0]
    k = maxw.shape[0]
    (p, best, locked, in_list, cand_gain, bnd, moved, keep, dest, conn_dest, conn_own, log, logged, changed,
     changed_list, rescan, out_w) = workspace
    p, best, locked, in_list, cand_gain, bnd = p[:n], best[:n], locked[:n], in_list[:n], cand_gain[:n], bnd[:n]
    moved, keep, dest, conn_dest, conn_own, log = moved[:n], keep[:n], dest[:n], conn_dest[:n], conn_own[:n], log[:n]
    logged, changed, changed_list, rescan, out_w = logged[:n], changed[:n], changed_list[:n], rescan[:n], out_w[:n]
    for v in range(n):
        p[v] = parts[v]
        best[v] = parts[v]
        locked[v] = False
        in_list[v] = False
        cand_gain[v] = -np.inf               # lp_moves_nb's candidates' gains (-inf: none)
        logged[v] = False                    # vertices moved by rebalancing: log, logged
        changed[v] = False
        rescan[v] = True                     # see jet_passes: whose scan values are out of date
    # keep: per list entry, the chunked scans' verdicts; dest, conn_dest, conn_own, out_w (per
    # scanned vertex, its weight to other blocks) are read only for listed vertices, which
    # every scan_boundary writes first
    acc = np.zeros(k, dtype=ewgt.dtype)
    touched = np.empty(k, dtype=np.int64)
    everywhere = np.ones(k, dtype=np.bool_)
    nlog = np.zeros(1, dtype=np.int64)
    wdeg = np.empty(0, dtype=np.float64)     # weighted degrees, summed when first needed
    # vertices whose block changed since ``best`` was last taken (changed, changed_list): a
    # new best copies only these (a full copy per improving iteration was O(n) each time)
    nchanged = 0
    dest_key = stream_key_at(seed, _STREAM_DEST)
    # block member lists: built when first rebalancing (many levels never do), then kept up to date
    members = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    have_members = False
    loss_floor = np.full(1, np.nan)          # rebalance_members.interior_loss_floor, when first needed
    # the flooded block rebalancing last moved each vertex out of, where Jet may not move it
    # back (see FLOODED); -1: none. Made, with ``origin`` (blocks before a rebalancing call), when
    # a block is first flooded.
    evicted = np.empty(0, dtype=np.int32)
    origin = np.empty(0, dtype=np.int32)
    no_origin = origin
    flooded = np.zeros(k, dtype=np.bool_)
    nb = boundary_from_scratch(indptr, indices, p, bnd, in_list, hint)
    bw = host_block_weights(p, vwgt, k)
    nm = 0                                   # vertices moved (and locked) by the last iteration
    best_over = np.inf
    best_cut = np.inf
    stale = 0
    for it in range(max_iterations + 1):
        if host_overload(bw, maxw) > 0:
            if not have_members:
                wdeg = np.full(n, -1.0)    # filled in as rebalancing needs it
                members = block_members(p, k)
                have_members = True
            any_flooded = False
            for b in range(k):
                flooded[b] = bw[b] > FLOODED * maxw[b]
                any_flooded = any_flooded or flooded[b]
            if any_flooded and evicted.shape[0] == 0:
                evicted = np.full(n, -1, dtype=np.int32)
                origin = np.empty(n, dtype=np.int32)
            bw, nb = rebalance_nb(indptr, indices, ewgt, vwgt, p, maxw, seed + 7919 * it, _REBALANCE_ROUNDS,
                                  log, nlog, logged, wdeg, bnd, nb, in_list, members, chunk, parallel_min,
                                  loss_floor, origin if any_flooded else no_origin)
            flag_around_chunked(indptr, indices, log, 0, nlog[0], rescan, chunk, parallel_min)
            for i in range(nlog[0]):
                v = log[i]
                logged[v] = False
                if any_flooded and p[v] != origin[v] and flooded[origin[v]]:
                    evicted[v] = origin[v]
                if not changed[v]:
                    changed[v] = True
                    changed_list[nchanged] = v
                    nchanged += 1
            nlog[0] = 0
        nb, two_cut = scan_boundary(indptr, indices, ewgt, p, k, bnd, nb, in_list, locked,
                            dest_key, dest, conn_dest, conn_own, acc, touched,
                            everywhere, keep, chunk, parallel_min, rescan, out_w)
        cut = two_cut / 2
        over = host_overload(bw, maxw)
        if over < best_over or (over == best_over and cut < best_cut):
            improved = over < best_over or cut < (1.0 - min_improvement) * best_cut
            for i in range(nchanged):
                v = changed_list[i]
                best[v] = p[v]
                changed[v] = False
            nchanged = 0
            best_over = over
            best_cut = cut
            stale = 0 if improved else stale + 1
        else:
            stale += 1
        if stale >= patience or it == max_iterations:
            break
        for i in range(nm):
            locked[moved[i]] = False
            rescan[moved[i]] = True
        nm_new = lp_moves_nb(indptr, indices, ewgt, p, bnd, nb, dest, conn_dest, conn_own, c,
                              stream_key_at(seed, _STREAM_PRIORITY + it), cand_gain, moved, keep, chunk, parallel_min,
                              evicted)
        if nm_new == 0 and nm == 0:
            break                            # nothing left to try: a local optimum of this search
        nm = nm_new
        for i in range(nm):
            v = moved[i]
            bw[p[v]] -= vwgt[v]
            bw[dest[v]] += vwgt[v]
            if have_members:
                relink(v, p[v], dest[v], members)
            p[v] = dest[v]
            locked[v] = True
            if not changed[v]:
                changed[v] = True
                changed_list[nchanged] = v
                nchanged += 1
        nb = extend_and_flag_chunked(indptr, indices, moved, 0, nm, bnd, nb, in_list, rescan, chunk, parallel_min)
    # the list covers p's boundary; best differs from p only on the vertices changed since it
    # was taken, so those and their neighbours cover the rest of best's boundary
    extend_and_flag_chunked(indptr, indices, changed_list, 0, nchanged, bnd, nb, in_list, np.empty(0, dtype=np.bool_),
                            chunk, parallel_min)
    return best, best_cut, in_list


# ---- whole-array formulation (numpy or cupy; the GPU's) ---------------------------------------
def patience_step(score, best_score, stale, min_improvement=MIN_IMPROVEMENT):
    """Jet's stopping rule for one iteration: (new best?, iterations without improvement).

    score, best_score: (overload, cut) tuples, balanced states first. A new best resets the
    count only when it lowers the overload or the cut by more than ``min_improvement``.
    jet_nb applies the same rule inside its kernel.
    """
    if best_score is not None and not score < best_score:
        return False, stale + 1
    improved = (best_score is None or score[0] < best_score[0]
                or score[1] < (1.0 - min_improvement) * best_score[1])
    return True, 0 if improved else stale + 1


def _jet_xp(graph, p, k, lmax, seed, max_iterations, patience, negative_gain_factor, min_improvement):
    be = graph.backend
    xp = be.xp
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    two_total = graph.ewgt.sum()            # every edge stored twice
    locked = xp.zeros(graph.n, dtype=bool)
    everywhere = xp.ones(k, dtype=bool)
    best = p.copy()
    best_score = (math.inf, math.inf)       # (overload, cut): balanced partitions first
    stale = 0
    evicted = None                          # as in jet_nb
    for it in range(max_iterations + 1):
        bw = block_weights(graph, p, k)
        if bool((bw > lmax).any()):
            balanced_p = be.to_device(rebalance(graph, p, k, lmax, seed=seed + 7919 * it, method="xp"))
            flooded = bw > FLOODED * lmax
            if bool(flooded.any()):
                evicted = xp.full(graph.n, -1, dtype=p.dtype) if evicted is None else evicted
                evicted = xp.where((balanced_p != p) & flooded[p], p, evicted)
            p = balanced_p
            bw = block_weights(graph, p, k)
        dest, conn_dest, conn_own = best_destinations(
            graph, p, k, ~locked, everywhere, seed=seed, stream=_STREAM_DEST, rows=rows,
            method="xp")
        cut = (two_total - conn_own.sum()) / 2
        score = (float(overload(bw, lmax)), float(cut))
        is_best, stale = patience_step(score, best_score, stale, min_improvement)
        if is_best:
            best, best_score = p.copy(), score
        if stale >= patience or it == max_iterations:
            break
        moved = _lp_moves(graph, p, dest, conn_dest, conn_own, negative_gain_factor, seed, it, evicted)
        if moved.shape[0] == 0 and not bool(locked.any()):
            break                            # nothing left to try: a local optimum of this search
        p[moved] = dest[moved]
        locked[:] = False
        locked[moved] = True
    return best

def _lp_moves(graph, parts, dest, conn_dest, conn_own, c, seed, it, evicted=None):
    """Vertices that move this iteration: candidates that survive the afterburner (none into
    the block rebalancing last moved it out of, ``evicted``, when given)."""
    be = graph.backend
    xp = be.xp
    gain = conn_dest - conn_own
    limit = xp.floor(c * conn_own) if conn_own.dtype.kind == "f" else \
        xp.floor(c * conn_own.astype(xp.float64)).astype(conn_own.dtype)
    cand = (dest >= 0) & (-gain < limit)     # includes every positive gain
    if evicted is not None:
        cand &= dest != evicted
    cv = xp.flatnonzero(cand)
    if cv.shape[0] == 0:
        return cv
    # afterburner: recompute each candidate's gain against higher-priority neighbour moves
    entries, local = be.ranges(graph.indptr[cv], graph.indptr[cv + 1] - graph.indptr[cv])   # cv's rows
    v = cv[local]
    u = graph.indices[entries].astype(xp.int64)
    prio = be.hash64(seed, _STREAM_PRIORITY + it, xp.arange(graph.n, dtype=xp.int64))
    gu, gv = gain[u], gain[v]
    first = cand[u] & ((gu > gv) | ((gu == gv) & ((prio[u] < prio[v]) | ((prio[u] == prio[v]) & (u < v)))))
    where_u = xp.where(first, dest[u], parts[u])
    w = graph.ewgt[entries]
    zero = xp.zeros((), dtype=w.dtype)
    delta = xp.where(where_u == dest[v], w, zero) - xp.where(where_u == parts[v], w, zero)
    offsets = xp.zeros(cv.shape[0] + 1, dtype=xp.int64)
    xp.cumsum(graph.indptr[cv + 1] - graph.indptr[cv], out=offsets[1:])
    new_gain = be.segment_sum(delta, offsets)
    return cv[new_gain > 0]
