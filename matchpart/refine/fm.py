"""FM refinement on the CPU (compiled): k-way FM, 2-way FM for bisection, pairwise FM, least-loss rebalancing.

The entry points of the FM family; the passes live in kway_fm.py (k > 2, with the gain
cache of gain_cache.py) and fm2.py (two blocks), the least-loss rebalancer in least_loss.py,
the pairwise rounds in pairwise.py.
"""
from __future__ import annotations

import numpy as np

from .. import threads
from ..errors import MatchpartError
from ..io import as_graph
from ..jit import njit
from . import gain_cache as gc
from .boundary import cover_changes, shuffled_boundary
from .fm2 import MIN_PASS_IMPROVEMENT, fm2_passes, passes_end
from .grouped_fm import grouped_pass
from .kway_fm import (LOCAL_STALL_MOVES, STALL_MOVES_FRACTION, STALL_MOVES_MIN, default_stall,
                      fm_pass, localized_round)
from .least_loss import rebalance_if_over, serial_rebalance
from .pairwise import pairwise_nb
from . import grouped_fm, parallel_fm
from .state import host_arrays, host_block_weights, host_cut, host_overload

__all__ = ["kway_fm", "fm_bisection", "pairwise_fm", "rebalance", "refine_arrays", "host_arrays",
           "pairwise_arrays", "default_stall", "STALL_MOVES_MIN", "STALL_MOVES_FRACTION",
           "LOCAL_STALL_MOVES"]


@njit(cache=True, internal=True)
def _fm(indptr, indices, ewgt, vwgt, parts, bw, maxw, passes, seed, stall, min_gain, boundary_only,
        local_stall, cache, cut, hint, chunk, parallel_min, group_rounds, group_blocks, max_groups):
    """Up to ``passes`` FM passes from a partition of cut ``cut``; returns (cut, moves, passes done).

    Each pass queues the boundary vertices (every vertex for a 2-way pass with
    boundary_only=False) in a random order (it decides ties between equal gains), drawn here
    from numba's generator seeded with ``seed``: one compiled call, no per-pass arrays from
    Python. A k-way pass (k > 2) is a global pass, or ``group_rounds`` > 0 rounds of
    grouped_fm's parallel passes with groups of at most ``group_blocks`` blocks (unless that
    makes more than ``max_groups`` groups), followed, when local_stall > 0, by a round of
    localized multi-try searches; two blocks get fm2's passes.
    ``hint``: flags of a superset of the boundary of ``parts`` for the first pass (see
    boundary.shuffled_boundary), or an empty array.
    """
    np.random.seed(seed)
    if bw.shape[0] == 2:
        return fm2_passes(indptr, indices, ewgt, vwgt, parts, bw, maxw, passes, stall, min_gain, boundary_only, cut)
    moves = 0
    done = 0
    no_hint = np.empty(0, dtype=np.bool_)
    for p in range(passes):
        before_cut = cut
        before_over = host_overload(bw, maxw)
        queue = shuffled_boundary(indptr, indices, parts, hint if p == 0 else no_hint)
        if group_rounds > 0:
            cut, kept = grouped_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, queue, group_rounds, group_blocks,
                                     max_groups, stall, cut, chunk)
            gc.reset(cache)     # the rounds moved vertices without it: its built entries are stale
        else:
            cut, kept = fm_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, queue, stall, cut, cache, chunk,
                                parallel_min)
        if local_stall > 0:
            cut, kept_local = localized_round(indptr, indices, ewgt, vwgt, parts, bw, maxw,
                                              shuffled_boundary(indptr, indices, parts, no_hint), local_stall, cut,
                                              cache)
            kept += kept_local
        moves += kept
        done += 1
        if passes_end(kept, bw, maxw, before_over, before_cut, cut, min_gain):
            break
    return cut, moves, done



def _check_parts(parts, n, k):
    """A fresh host int64 copy of a block array (numpy or cupy), validated against n and k."""
    p = parts.get() if hasattr(parts, "get") and not isinstance(parts, np.ndarray) else np.asarray(parts)
    if p.ndim != 1 or p.shape[0] != n:
        raise ValueError(f"parts must be a 1-d array of length n={n}, got shape {p.shape}")
    if p.dtype.kind not in "iu":
        raise ValueError(f"parts must be integers, got dtype {p.dtype}")
    if n and (p.min() < 0 or p.max() >= k):
        raise ValueError(f"parts must lie in 0..k-1 = 0..{k - 1}, got range {p.min()}..{p.max()}")
    return np.array(p, dtype=np.int64)


@njit(cache=True)
def refine_nb(indptr, indices, ewgt, vwgt, parts, maxw, passes, seed, stall, rebalance, boundary_only,
              local_stall, cache, known_cut, hint, chunk, parallel_min, group_rounds, group_blocks, max_groups):
    """refine_arrays as one compiled call: rebalance if overweight, then FM passes; in place.

    ``cache``: a gain cache (gain_cache.new_cache) whose entries are all unbuilt; they are left
    unbuilt again on return, so a caller may reuse it for the next call on the same graph.
    ``known_cut``: the input's cut when the caller has it (>= 0), else -1 (computed here).
    ``hint``: flags of a superset of the input's boundary, or an empty array (see _fm); when
    given, it is extended in place to cover the boundary of the result too. ``chunk``,
    ``parallel_min``: the threads' split of the passes' set-up (threads.CHUNK, PARALLEL_MIN_ITEMS);
    ``group_rounds``, ``group_blocks``, ``max_groups``: see _fm (0 rounds: global k-way passes).
    Returns (initial cut, cut, moves, passes done, rebalance moves, overload).
    """
    bw = host_block_weights(parts, vwgt, maxw.shape[0])
    before = parts.copy() if hint.shape[0] else parts[:0].copy()
    initial_cut = known_cut if known_cut >= 0 else host_cut(indptr, indices, ewgt, parts)
    rb_moves = rebalance_if_over(indptr, indices, ewgt, vwgt, parts, bw, maxw, seed, cache) if rebalance else 0
    cut = initial_cut if rb_moves == 0 else host_cut(indptr, indices, ewgt, parts)
    # rebalancing moved vertices whose neighbourhoods the hint may miss
    first_hint = hint if rb_moves == 0 else np.empty(0, dtype=np.bool_)
    cut, moves, done = _fm(indptr, indices, ewgt, vwgt, parts, bw, maxw, passes, seed, stall,
                           MIN_PASS_IMPROVEMENT, boundary_only, local_stall, cache, cut, first_hint, chunk,
                           parallel_min, group_rounds, group_blocks, max_groups)
    if hint.shape[0]:
        cover_changes(indptr, indices, before, parts, hint)
    gc.reset(cache)
    return initial_cut, cut, moves, done, rb_moves, host_overload(bw, maxw)


def refine_arrays(arrays, parts, maxw, *, seed=0, passes=4, stall=None, rebalance=True, boundary_only=True,
                  localized=True, cut=None, boundary_hint=None, local_stall=LOCAL_STALL_MOVES, workspace=None):
    """FM on host arrays (see host_arrays) with per-block bounds ``maxw``; parts is changed in place.

    boundary_only=False queues every vertex in 2-way FM (for small, possibly disconnected graphs);
    localized adds localized multi-try rounds to k-way passes (k > 2), whose searches stop
    after ``local_stall`` moves without a new best. ``cut``: the cut of
    ``parts`` when known (Jet returns it), which saves an O(m) pass; ``boundary_hint``: bool
    flags of a superset of its boundary (Jet returns them too), which saves most of another;
    they are extended in place to cover the result's boundary (for the next finer level).
    The first pass lists only flagged vertices: the flags may leave out vertices that cannot
    move (distributed.fm's frozen ones), whose entries that pass then does not build.
    From parallel_fm.PARALLEL_FM_MIN_VERTICES vertices up (k > 2), the passes are parallel_fm's
    matching rounds; ``workspace``: a parallel_fm.new_workspace of at least n vertices for
    them (shared by the levels of a hierarchy), or None (a fresh one). Where they decline (most
    vertices with an edge on the boundary), the k-way passes are grouped_fm's rounds (from MIN_BLOCKS blocks).
    Returns a dict: cut, initial_cut, moves, passes, rebalance_moves, overload (sum over blocks of
    weight above its bound; 0 means balanced).
    """
    indptr, indices, ewgt, vwgt = arrays
    n = indptr.shape[0] - 1
    stall = default_stall(n, STALL_MOVES_MIN) if stall is None else int(stall)
    first = None
    if maxw.shape[0] > 2 and n >= parallel_fm.PARALLEL_FM_MIN_VERTICES:
        first = _pair_rounds(arrays, parts, maxw, seed, passes, stall, rebalance, localized, local_stall, cut,
                             boundary_hint, workspace if workspace is not None and workspace[0].shape[0] >= n
                             else parallel_fm.new_workspace(n))     # the kernel does not check bounds
        if first["passes"] >= 0:
            return first
        cut = first["cut"]          # declined (a boundary of most vertices): the k-way passes below
    # on such a graph the k-way passes run as grouped_fm's parallel rounds
    group_rounds = grouped_fm.ROUNDS if first is not None and maxw.shape[0] >= grouped_fm.MIN_BLOCKS else 0
    cache = gc.new_cache(n, indices.shape[0], maxw.shape[0])   # shared by the rebalancer and every pass
    chunk, parallel_min = threads.scaled_chunk(threads.CHUNK, _parallel_min(), n, indices.shape[0])
    initial_cut, cut, moves, done, rb_moves, over = refine_nb(
        indptr, indices, ewgt, vwgt, parts, maxw, int(passes), int(seed) % 2**31, stall, bool(rebalance),
        bool(boundary_only), int(local_stall) if localized else 0, cache, -1.0 if cut is None else float(cut),
        np.empty(0, dtype=np.bool_) if boundary_hint is None else boundary_hint, chunk, parallel_min,
        group_rounds, grouped_fm.GROUP_BLOCKS, grouped_fm.MAX_GROUPS)
    if first is not None:
        initial_cut, rb_moves = first["initial_cut"], rb_moves + first["rebalance_moves"]
    return {"cut": cut, "initial_cut": initial_cut, "moves": int(moves), "passes": int(done),
            "rebalance_moves": int(rb_moves), "overload": float(over)}


def _parallel_min():
    """Items from which the kernels use the threads: never on one thread (see threads.py)."""
    import numba
    return threads.PARALLEL_MIN_ITEMS if numba.get_num_threads() > 1 else np.iinfo(np.int64).max


def _pair_rounds(arrays, parts, maxw, seed, passes, stall, rebalance, localized, local_stall, cut, boundary_hint,
                 workspace):
    """refine_arrays by parallel_fm's matching rounds (same arguments and result)."""
    import warnings

    import numba
    parallel_min = _parallel_min()
    with warnings.catch_warnings():
        # compiling it, numba says that _run_round has no parallel loop: its prange loops do
        # run on the threads (each pair's task on one of them), the warning comes from a
        # nested compile of its loop bodies
        warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
        initial_cut, cut, moves, done, rb_moves, over = parallel_fm.parallel_refine_nb(
            *arrays, parts, maxw, int(passes), int(seed) % 2**31, min(stall, parallel_fm.PAIR_STALL_MOVES),
            bool(rebalance), int(local_stall) if localized else 0, -1.0 if cut is None else float(cut),
            np.empty(0, dtype=np.bool_) if boundary_hint is None else boundary_hint, workspace,
            float(parallel_fm.MAX_BOUNDARY_SHARE), threads.CHUNK, parallel_min)
    return {"cut": cut, "initial_cut": initial_cut, "moves": int(moves), "passes": int(done),
            "rebalance_moves": int(rb_moves), "overload": float(over)}


def pairwise_arrays(arrays, parts, maxw, *, seed=0, rounds=2, passes=4):
    """2-way FM on the heaviest pairs of adjacent blocks (refine/pairwise.py), in place;
    returns the total cut reduction. Up to `rounds` rounds, stopping when one gains nothing."""
    return pairwise_nb(*arrays, parts, maxw, int(seed) % 2**31, int(rounds), int(passes))


def pairwise_fm(graph, parts, k, max_block_weight, *, seed=0, rounds=2, passes=4):
    """2-way FM between every pair of adjacent blocks (see pairwise_arrays); returns new int64 parts.

    Complements kway_fm where the balance bound leaves no room to move a vertex (heavy coarse
    vertices, exactly full blocks): swaps between two blocks still work there. Never raises
    the cut of a balanced input, never makes it less balanced.
    """
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    arrays = host_arrays(graph)
    p = _check_parts(parts, arrays[0].shape[0] - 1, k)
    maxw = np.broadcast_to(np.asarray(max_block_weight, dtype=np.float64), (k,)).copy()
    if (maxw < 0).any() or not np.isfinite(maxw).all():
        raise ValueError("max_block_weight must be finite and >= 0")
    pairwise_arrays(arrays, p, maxw, seed=seed, rounds=rounds, passes=passes)
    return p


def _cast_cut(value, graph):
    return int(round(value)) if graph.ewgt.dtype.kind in "iu" else float(value)


def kway_fm(graph, parts, k, max_block_weight, *, seed=0, passes=4, max_moves_without_improvement=None,
            localized=True, return_stats=False):
    """k-way FM refinement (CPU, compiled); returns new int64 parts (the input is not modified).

    A global priority queue holds boundary vertices keyed by the best gain of a move to an
    adjacent block with room (weight + vertex weight <= max_block_weight); each vertex moves at
    most once per pass and every pass is rolled back to its best prefix (lowest overload, then
    lowest cut). An overweight input is first rebalanced by least-loss moves out of overweight
    blocks. The result never has a higher cut than the input unless the input was overweight,
    and is never less balanced. For k = 2 the two-queue pass of fm_bisection is used instead,
    which may overfill a side in the middle of a pass (never in the result) so that it can
    also swap vertices when the bound leaves no slack. From parallel_fm.PARALLEL_FM_MIN_VERTICES
    vertices up (k > 2, at most half of them on the boundary) the passes are parallel_fm's
    instead: 2-way FM on the block pairs of quotient-graph matchings, on the threads, with the
    same guarantees (localized: localized searches inside each pair).

    max_block_weight: one bound for every block, or an array of k per-block bounds.
    max_moves_without_improvement: a pass stops after this many moves without a new best
    state (default max(STALL_MOVES_MIN, min(STALL_MOVES_FRACTION * n, STALL_MOVES_MAX))).
    localized: after each global pass (k > 2), run a round of localized multi-try FM (KaFFPa):
    short searches from every boundary vertex; better cuts (~3-5% on meshes) for ~10x the time.
    return_stats: also return the dict of refine_arrays (cut as tracked by the kernel, moves...).
    """
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if passes < 0:
        raise ValueError(f"passes must be >= 0, got {passes}")
    graph = as_graph(graph)
    arrays = host_arrays(graph)
    n = arrays[0].shape[0] - 1
    p = _check_parts(parts, n, k)
    maxw = np.broadcast_to(np.asarray(max_block_weight, dtype=np.float64), (k,)).copy()
    if (maxw < 0).any() or not np.isfinite(maxw).all():
        raise ValueError("max_block_weight must be finite and >= 0")
    stats = refine_arrays(arrays, p, maxw, seed=seed, passes=passes, stall=max_moves_without_improvement,
                          localized=localized)
    if return_stats:
        stats["cut"] = _cast_cut(stats["cut"], graph)
        stats["initial_cut"] = _cast_cut(stats["initial_cut"], graph)
        return p, stats
    return p


def fm_bisection(graph, side, max_weights, *, seed=0, passes=4, max_moves_without_improvement=None):
    """2-way FM on a bisection ``side`` (0/1 per vertex) with bounds max_weights = (max0, max1).

    Same engine as kway_fm with k = 2; returns (new side array, cut).
    """
    mw = np.asarray(max_weights, dtype=np.float64)
    if mw.shape != (2,):
        raise ValueError(f"max_weights must be a pair (max0, max1), got shape {mw.shape}")
    p, stats = kway_fm(graph, side, 2, mw, seed=seed, passes=passes,
                       max_moves_without_improvement=max_moves_without_improvement, return_stats=True)
    return p, stats["cut"]


def rebalance(graph, parts, k, max_block_weight, *, seed=0):
    """Least-loss moves out of overweight blocks until every block fits (when possible); new parts.

    Raises MatchpartError when a block is still overweight afterwards (e.g. a vertex heavier
    than the bound, or no room anywhere).
    """
    arrays = host_arrays(graph)
    n = arrays[0].shape[0] - 1
    p = _check_parts(parts, n, int(k))
    maxw = np.broadcast_to(np.asarray(max_block_weight, dtype=np.float64), (int(k),)).copy()
    bw = host_block_weights(p, arrays[3], int(k))
    cache = gc.new_cache(n, arrays[1].shape[0], int(k))
    serial_rebalance(*arrays, p, bw, maxw, np.random.default_rng(seed).permutation(n), cache)
    if (bw > maxw).any():
        b = int(np.argmax(bw - maxw))
        raise MatchpartError(f"cannot balance: block {b} weighs {bw[b]:g} > bound {maxw[b]:g} after rebalancing")
    return p
