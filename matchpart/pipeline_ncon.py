"""The multilevel V-cycle for several weights per vertex (METIS's ncon > 1): coarsen a one-weight
stand-in of the graph under a cap per constraint, partition the coarsest level (bisection_nc's
multi-constraint bisections and the stand-in's, the best kept), then project
and refine with every constraint's bound on every level (refine/multi.py)."""
from __future__ import annotations

import time
import warnings

import numpy as np

from . import backend, constraints, metrics
from .coarsen import cluster_mapping, coarsen, level_summaries
from .coarsen.hierarchy import CAP_FACTOR
from .errors import UnsupportedOptionError
from .graph import Graph
from .refine.multi import total_overload
from .refine.multi_level import _inverse_ideal, block_weights_nc, refine_nc
from .refine.multi_fm import FM_PASSES
from .bisection_nc import initial_partition_nc
from .refine.multi_pairwise import PAIRWISE_NC_PASSES, PAIRWISE_NC_ROUNDS, pairwise_nc

# Initial partitions tried on the coarsest level (each a recursive bisection, of the kind
# INITIAL picks, then rebalanced and refined under every constraint); the best feasible one
# is kept. Measured with the stand-in's bisections: benchmarks/ncon.py subset (4elt,
# fe_4elt2, delaunay and rgg 2^16; the three sets; k = 8, 32), cut / gpmetis's, geomean:
# 1 run 0.935, 2 runs 0.928 for ~1.1 x the time.
INITIAL_RUNS = 2
# The initial runs take turns with these stand-ins (constraints.balance_standin): neither is
# better everywhere (shared graphs, three constraint sets, k = 8, 32: PGPgiantcompo unit +
# degree k = 32 6263 with the sum, 5594 with l2; rgg2d unit + mask k = 8 175 against 327).
STANDIN_NORMS = ("sum", "l2")
# Graphs of at most SMALL_GRAPH vertices get SMALL_GRAPH_RUNS: there blocks hold few vertices,
# the bounds leave little room, and rebalancing the stand-in's partition costs most of the cut
# (rgg2d, 1024 vertices, unit + degree, k = 8: 352 with 2 runs, 261 with 8), for little time.
SMALL_GRAPH = 5000
SMALL_GRAPH_RUNS = 8
# Greedy rounds per level before FM: 2 instead of 10 gave the same cut (FM follows) in 0.85 x
# the time on that subset.
GREEDY_ROUNDS = 2
# Which initial partitions the runs are: "mix" alternates bisection_nc's (each constraint
# balanced on its own, even runs) with the stand-in's (odd runs, STANDIN_NORMS in turn); "nc"
# and "standin" use one kind only. benchmarks/ncon.py, 102 instances, 1 run, cut / gpmetis's
# geomean: standin 0.966 (issue 24), nc 0.948, mix 0.929 (nc wins on skewed graphs,
# PGPgiantcompo unit + degree k = 8 1903 -> 1719; the stand-in on 0/1 masks, rgg2d k = 32
# 863 with nc against 784 mixed) at 1.50 x gpmetis's CPU time.
INITIAL = "mix"
# Levels of at most PAIRWISE_MAX_N vertices, and every initial run on the coarsest level,
# get pairwise multi-constraint 2-way FM (refine/multi_pairwise.py) after their k-way
# refinement. On that module's subset, cut against none (2 rounds): the coarsest level only
# 0.994 at 1.10 x the CPU time, levels <= 5000 vertices 0.978 at 1.14 x, <= 20000 0.973 at
# 1.31 x, every level 0.972 at 1.53 x (the finest levels of 2^16 graphs cost most).
PAIRWISE_MAX_N = 5000
PAIRWISE_COARSEST = True
# Seed stream offsets: cycles and the initial runs of one cycle get distinct seeds.
_CYCLE_STEP = 7919
_INITIAL_STEP = 15485863


def partition_nc(g, k, eps, target_weights, *, matcher, rating, seed, device, preset, coarsening, cluster_fallback,
                 progress, contiguous):
    """Partition Graph ``g`` with (n, c) vertex weights into ``k`` blocks (k, seed, matcher, rating,
    coarsening checked by the caller; ``preset`` a Preset); returns the result's fields as a
    dict (parts, cut, block_weights, bounds, target_weights, feasible, levels, timings,
    imbalance per constraint). ``eps``: c tolerances (constraints.check_eps);
    ``target_weights``: k fractions or k x c. CPU only, no ``contiguous`` yet."""
    t_start = time.perf_counter()
    c = g.ncon
    if contiguous:
        raise UnsupportedOptionError("contiguous=True with several weights per vertex is not supported yet",
                                     "contiguous")
    if device != "auto" and backend.get(device).is_gpu:    # "auto" means the best available: the CPU here
        raise UnsupportedOptionError(f"several weights per vertex (ncon={c}) run on the CPU only; "
                                     "pass device='cpu'", "device")
    g = g.to("cpu")
    target_weights = None if target_weights is None else metrics.check_constraint_targets(target_weights, k, c)
    vw = np.asarray(g.vwgt)
    totals = g.total_vwgt
    if g.n:
        constraints.check_totals(totals)
    bounds = metrics.constraint_bounds(totals, k, eps, target_weights) if g.n else np.zeros((k, c))
    timings = {"coarsening": 0.0, "initial": 0.0, "refinement": 0.0}
    if k == 1 or g.n == 0:
        parts = np.zeros(g.n, dtype=np.int64)
        bw = _block_weights(parts, vw, k) if g.n else np.zeros((k, c))
        timings["total"] = time.perf_counter() - t_start
        return {"parts": parts, "cut": 0, "block_weights": bw, "bounds": bounds, "target_weights": target_weights,
                "feasible": bool((bw <= bounds).all()), "levels": [], "timings": timings, "imbalance": [0.0] * c}
    say = progress or (lambda step: None)
    best = None
    for cycle in range(preset.cycles):
        cycle_seed = int(seed) + _CYCLE_STEP * cycle
        parts, levels, over = _vcycle(g, vw, k, eps, bounds, target_weights, matcher=matcher, rating=rating,
                                      seed=cycle_seed, preset=preset, coarsening=coarsening,
                                      cluster_fallback=cluster_fallback, timings=timings, say=say)
        score = (over > 0, metrics.edge_cut(g, parts))
        if best is None or score < best[0]:
            best = (score, parts, levels)
    (_, cut), parts, levels = best
    bw = _block_weights(parts, vw, k)
    feasible = bool((bw <= bounds).all())
    if not feasible:
        heavy = _heavy_vertex(vw, bounds)
        why = heavy or "no partition with every block within every constraint's bound was found"
        warnings.warn(f"partition is not balanced: {why}; the result has feasible=False", stacklevel=3)
    timings["total"] = time.perf_counter() - t_start
    return {"parts": parts, "cut": cut, "block_weights": bw, "bounds": bounds, "target_weights": target_weights,
            "feasible": feasible,
            "levels": level_summaries(levels), "timings": timings,
            "imbalance": metrics.constraint_imbalance(bw, totals, k, target_weights)}


def _vcycle(g, vw, k, eps, bounds, target_weights, *, matcher, rating, seed, preset, coarsening,
            cluster_fallback, timings, say):
    """One multilevel run: (parts, hierarchy levels, overload left)."""
    t0 = time.perf_counter()
    say(f"coarsening {g.n} vertices ({g.ncon} weights per vertex)")
    standin = Graph._trusted(g.indptr, g.indices, g.ewgt, constraints.cap_standin(vw), g.backend)
    coarsen_to = preset.coarsen_to(k)
    # each constraint's share of a coarse vertex stays below CAP_FACTOR / coarsen_to of its total
    cap = CAP_FACTOR * constraints.STANDIN_UNITS * g.n / max(coarsen_to, 1)
    levels = coarsen(standin, matcher=matcher, rating=rating, seed=seed, coarsen_to=coarsen_to,
                     max_vertex_weight=cap, clusterer=cluster_mapping if coarsening == "cluster" else None,
                     cluster_fallback=cluster_fallback)
    weights = [vw]
    for lv in levels[:-1]:
        mapping = np.asarray(lv.mapping, dtype=np.int64)
        n_coarse = int(mapping.max()) + 1 if mapping.shape[0] else 0
        weights.append(np.stack([np.bincount(mapping, weights=weights[-1][:, j], minlength=n_coarse)
                                 for j in range(vw.shape[1])], axis=1).astype(vw.dtype))
    t1 = time.perf_counter()
    coarsest = levels[-1].graph
    say(f"initial partitioning of {coarsest.n} vertices ({len(levels) - 1} levels)")
    parts, over = _initial(coarsest, weights[-1], k, eps, bounds, target_weights, seed, preset, g.n)
    t2 = time.perf_counter()
    for i in range(len(levels) - 2, -1, -1):
        parts = parts[np.asarray(levels[i].mapping, dtype=np.int64)]
        lg = levels[i].graph
        if i < len(levels) - 2:
            say(f"refining level {i} ({lg.n} vertices)")
        over = refine_nc(lg.indptr, lg.indices, lg.ewgt, weights[i], parts, bounds, seed=seed + i,
                         rounds=GREEDY_ROUNDS, fm_passes=FM_PASSES)
        if lg.n <= PAIRWISE_MAX_N:
            _pairwise(lg, weights[i], parts, bounds, seed + i)
    timings["coarsening"] += t1 - t0
    timings["initial"] += t2 - t1
    timings["refinement"] += time.perf_counter() - t2
    return parts, levels, over


def _initial(coarsest, vw, k, eps, bounds, target_weights, seed, preset, finest_n):
    """The best of INITIAL_RUNS (SMALL_GRAPH_RUNS when the finest level has ``finest_n`` <=
    SMALL_GRAPH vertices) partitions of the coarsest level: (parts, overload left)."""
    from .initial import initial_partition
    targets = constraints.mean_targets(target_weights)
    best = None
    for run in range(SMALL_GRAPH_RUNS if finest_n <= SMALL_GRAPH else INITIAL_RUNS):
        s = int(seed) + _INITIAL_STEP * run
        norm = _standin_norm(run)
        if norm is None:
            parts = initial_partition_nc(coarsest.indptr, coarsest.indices, coarsest.ewgt, vw, bounds, eps,
                                         target_weights, seed=s)
        else:
            standin = Graph._trusted(coarsest.indptr, coarsest.indices, coarsest.ewgt,
                                     constraints.balance_standin(vw, norm),
                                     coarsest.backend)
            parts = np.asarray(initial_partition(standin, k, min(eps), seed=s, tries=preset.initial_tries,
                                                 fm_passes=preset.initial_fm_passes,
                                                 hierarchies=preset.initial_hierarchies,
                                                 pairwise_rounds=preset.initial_pairwise_rounds,
                                                 target_weights=targets), dtype=np.int64)
        over = refine_nc(coarsest.indptr, coarsest.indices, coarsest.ewgt, vw, parts, bounds, seed=s,
                         rounds=GREEDY_ROUNDS, fm_passes=FM_PASSES)
        if PAIRWISE_COARSEST:
            over = _pairwise(coarsest, vw, parts, bounds, s)
        score = (over > 0, over, metrics.edge_cut(coarsest, parts))
        if best is None or score < best[0]:
            best = (score, parts, over)
    return best[1], best[2]


def _pairwise(lg, vw, parts, bounds, seed):
    """pairwise_nc on level graph ``lg`` (parts changed in place); returns the overload left."""
    vwf = np.ascontiguousarray(vw, dtype=np.float64)
    maxf = np.ascontiguousarray(bounds, dtype=np.float64)
    pairwise_nc(np.asarray(lg.indptr, dtype=np.int64), np.asarray(lg.indices, dtype=np.int64),
                np.asarray(lg.ewgt, dtype=np.float64), vwf, parts, maxf, int(seed) & 0x7FFFFFFF,
                PAIRWISE_NC_ROUNDS, PAIRWISE_NC_PASSES)
    bw = block_weights_nc(parts, vwf, maxf.shape[0])
    return total_overload(bw, maxf, _inverse_ideal(maxf))


def _standin_norm(run):
    """The stand-in norm of initial run ``run``, or None for a bisection_nc run (see INITIAL)."""
    if INITIAL == "nc" or (INITIAL == "mix" and run % 2 == 0):
        return None
    return STANDIN_NORMS[(run // 2 if INITIAL == "mix" else run) % len(STANDIN_NORMS)]


def _block_weights(parts, vw, k):
    bw = np.zeros((k, vw.shape[1]), dtype=vw.dtype)
    for j in range(vw.shape[1]):
        bw[:, j] = np.bincount(parts, weights=vw[:, j], minlength=k).astype(vw.dtype)
    return bw


def _heavy_vertex(vw, bounds):
    """Why no balanced partition exists when a vertex outweighs every block's bound in some
    constraint, else None."""
    over = vw > bounds.max(axis=0)
    if over.any():
        v, j = np.argwhere(over)[0]
        return f"vertex {v} weighs {vw[v, j]} in constraint {j}, above every block's bound {bounds[:, j].max()}"
    return None
