"""Jet-style parallel label-propagation refinement (Gilbert, Rajamanickam et al.), on numpy or cupy.

One iteration:
1. if a block is over the bound, rebalance (balance.py) first;
2. score the current partition (cut, overload) and keep the best one seen;
3. "lp": every unlocked boundary vertex picks its most connected adjacent block; it becomes
   a candidate when the gain is positive or the loss is small, -gain < floor(c * conn_own)
   (negative moves let the search leave local minima; the afterburner filters them);
4. "afterburner": each candidate recomputes its gain as if every higher-priority neighbouring
   candidate (higher gain, ties by hash) had already moved; it moves only if that gain > 0;
5. moved vertices are locked for the next iteration (stops two neighbours swapping forever).
The loop stops after ``patience`` iterations without a relative improvement of more than
``min_improvement`` and returns the best balanced partition seen (the input counts).
"""
from __future__ import annotations

import math

from .balance import (best_destinations, block_weights, check_partition, gather_rows, overload,
                      rebalance, row_ids, cast_like)

# Tunables (defaults follow the Jet paper where it gives one)
MAX_ITERATIONS = 200           # hard cap; patience normally ends the loop far earlier
PATIENCE = 12                  # Jet: stop after 12 iterations without improving the best cut
MIN_IMPROVEMENT = 0.001        # Jet: an iteration counts as improving when cut < 0.999 * best
NEGATIVE_GAIN_FACTOR = 0.75    # Jet's c: admit moves losing < floor(c * conn_own). In the pipeline
                               # (Jet only), 0.75 on the finest level beat 0.25 on 9 of 10 graph/k pairs
                               # (up to 2%); 0.25 and 0.5 were 1-5% worse in a flat multilevel test

_STREAM_DEST = 0x1E70          # hash streams: ties between destination blocks,
_STREAM_PRIORITY = 0x2E70      # ... and between equal-gain candidates in the afterburner


def jet_refine(graph, parts, k, max_block_weight, *, seed=0, max_iterations=MAX_ITERATIONS,
               patience=PATIENCE, negative_gain_factor=NEGATIVE_GAIN_FACTOR,
               min_improvement=MIN_IMPROVEMENT, method="auto"):
    """Refine a k-way partition in parallel rounds; returns the best partition found.

    ``parts``: block id per vertex (0..k-1), numpy or the graph's device array; the result is a
    new array on the graph's backend in the same integer dtype. ``max_block_weight``: Lmax,
    e.g. ``metrics.max_block_weight(graph.total_vwgt, k, eps)``. The result is balanced
    whenever the input is (or rebalancing reached balance) and its cut is never above the
    input's when the input is balanced. If balance is never reached (infeasible bound) the
    least overloaded partition seen is returned. ``negative_gain_factor`` is Jet's c (see
    NEGATIVE_GAIN_FACTOR). ``method``: "auto", "numba" (CPU kernel for the connectivity scan)
    or "xp" (whole-array, numpy or cupy; used on the GPU).
    """
    p = check_partition(graph, parts, k, max_block_weight)
    be = graph.backend
    xp = be.xp
    if max_iterations < 0 or patience < 1:
        raise ValueError(f"need max_iterations >= 0 and patience >= 1, got {max_iterations}, {patience}")
    if not 0 <= negative_gain_factor:
        raise ValueError(f"negative_gain_factor must be >= 0, got {negative_gain_factor}")
    if graph.n == 0 or k == 1:
        return cast_like(parts, p, be)
    lmax = max_block_weight
    rows = row_ids(graph) if method == "xp" or (method == "auto" and be.is_gpu) else None
    two_total = graph.ewgt.sum()            # every edge stored twice
    locked = xp.zeros(graph.n, dtype=bool)
    everywhere = xp.ones(k, dtype=bool)

    best = p.copy()
    best_score = (math.inf, math.inf)       # (overload, cut): balanced partitions first
    stale = 0
    for it in range(max_iterations + 1):
        bw = block_weights(graph, p, k)
        if bool((bw > lmax).any()):
            p = be.to_device(rebalance(graph, p, k, lmax, seed=seed + 7919 * it, method=method))
            bw = block_weights(graph, p, k)
        dest, conn_dest, conn_own = best_destinations(
            graph, p, k, ~locked, everywhere, seed=seed, stream=_STREAM_DEST + it, rows=rows,
            method=method)
        cut = (two_total - conn_own.sum()) / 2
        score = (float(overload(bw, lmax)), float(cut))
        if score < best_score:
            improved = score[0] < best_score[0] or score[1] < (1.0 - min_improvement) * best_score[1]
            best, best_score = p.copy(), score
            stale = 0 if improved else stale + 1
        else:
            stale += 1
        if stale >= patience or it == max_iterations:
            break
        moved = _lp_moves(graph, p, dest, conn_dest, conn_own, negative_gain_factor, seed, it)
        if moved.shape[0] == 0 and not bool(locked.any()):
            break                            # nothing left to try: a local optimum of this search
        p[moved] = dest[moved]
        locked[:] = False
        locked[moved] = True
    return cast_like(parts, best, be)


def _lp_moves(graph, parts, dest, conn_dest, conn_own, c, seed, it):
    """Vertices that move this iteration: candidates that survive the afterburner."""
    be = graph.backend
    xp = be.xp
    gain = conn_dest - conn_own
    limit = xp.floor(c * conn_own) if conn_own.dtype.kind == "f" else \
        xp.floor(c * conn_own.astype(xp.float64)).astype(conn_own.dtype)
    cand = (dest >= 0) & (-gain < limit)     # includes every positive gain
    cv = xp.flatnonzero(cand)
    if cv.shape[0] == 0:
        return cv
    # afterburner: recompute each candidate's gain against higher-priority neighbour moves
    entries, local = gather_rows(graph, cv)
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
