"""The multilevel V-cycle behind ``partition()``: coarsen, partition the coarsest graph, uncoarsen + refine."""
from __future__ import annotations

import math
import numbers
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import backend as _backend
from . import deep, locality, metrics, relabel
from . import objective as _objective
from .coarsen import cluster_mapping, coarsen, level_summaries
from .coarsen.hierarchy import clusters_from_start
from .errors import UnsupportedOptionError
from .io import as_graph
from .matchers import RATINGS, resolve
from .presets import get_preset
from .uncoarsen import balanced, connected_blocks, refine_level, uncoarsen

COARSENINGS = ("matching", "cluster")
# Largest accepted imbalance; any eps >= k - 1 already puts no limit on a block.
MAX_EPS = 1e9
# Hash-RNG stream for the tie order of equally heavy vertices in the packing fallback.
PACKING_STREAM = 0x9AC4


@dataclass
class PartitionResult:
    """A k-way partition and how it was made.

    parts: block per vertex (numpy int64); mapping: {node: block} for networkx input, else
    None; cut, imbalance, block_weights (numpy); feasible: every block <= Lmax; levels: one
    dict per hierarchy level (n, m, rounds, matched_fraction, two_hop_fraction, time,
    clustered);
    timings: seconds for coarsening, initial, refinement, total; max_block_weight: the bound
    (k bounds with target_weights, the fractions given); threads: CPU threads it ran with;
    objtype: the objective minimised ("cut" or "vol"); volume: the total communication volume
    (with the vertex sizes given) when objtype is "vol", else None (metrics.communication_volume).
    With c weights per vertex: block_weights and max_block_weight have a column per
    constraint (k x c bounds with target_weights, else c), eps is c tolerances,
    constraint_imbalance gives each constraint's imbalance and imbalance the largest.
    """

    parts: np.ndarray
    mapping: Any
    cut: Any
    imbalance: float
    block_weights: np.ndarray
    feasible: bool
    levels: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    k: int = 1
    eps: float = 0.03
    max_block_weight: Any = None
    target_weights: Any = None
    threads: int = 1
    constraint_imbalance: Any = None
    objtype: str = "cut"
    volume: Any = None


def _check_k_eps(k, eps, n):
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"k must be an integer between 1 and the number of vertices ({n}), got {k!r}")
    k = int(k)
    if not 1 <= k <= max(n, 1):
        raise ValueError(f"k must be between 1 and the number of vertices ({n}), got {k}")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0 (e.g. 0.03 for 3% imbalance), got {eps!r}")
    if eps > MAX_EPS:
        # beyond this the bound (1 + eps) * ceil(W / k) stops being a number for large W
        raise ValueError(f"eps must be at most {MAX_EPS:g} (eps >= k - 1 already allows any partition), got {eps!r}")
    return k, float(eps)


def _packing_fallback(graph, k, lmax, preset, seed, parts=None):
    """A balanced start for hard bin-packing cases (few heavy vertices per block), then refined.

    The multilevel run can miss balance when blocks hold only a handful of heavy vertices
    (e.g. example_weighted with k=32); see refine/packing.py. The run's partition ``parts``
    is packed first (each vertex kept in its block where it fits), then none: the heaviest
    first, into the block of most edges or else the most room.
    """
    from .refine.packing import heaviest_first, pack_decreasing
    from .refine.state import bounds_array, host_arrays
    be = graph.backend
    arrays = host_arrays(graph)
    tie = be.to_host(be.hash32(seed, PACKING_STREAM, be.xp.arange(graph.n))).astype(np.float64)
    order = heaviest_first(arrays[3], tie)
    none = np.full(graph.n, -1, dtype=np.int64)
    starts = [none] if parts is None else [np.asarray(be.to_host(parts), dtype=np.int64), none]
    maxw = bounds_array(lmax, k)
    best = None
    for preferred in starts:
        for use_edges in (True, False):  # connectivity-aware packing first, plain LPT second
            packed, fits = pack_decreasing(*arrays, order, preferred, maxw, use_edges)
            if not fits:
                continue
            refined, cut, _ = refine_level(graph, be.to_device(packed), k, lmax, preset, seed)
            cut = metrics.edge_cut(graph, refined) if cut is None else cut
            if best is None or cut < best[0]:
                best = (cut, refined)
        if best is not None:
            break
    return None if best is None else best[1]


def _vcycle(graph, k, eps, lmax, *, matcher, rating, seed, preset, coarsening, timings, target_weights=None,
            progress=None, contiguous=False, cluster_fallback=True, volume=None):
    """One multilevel run; returns (parts on the graph's backend, level summaries, cut or None:
    see _refine_level)."""
    from .initial import initial_partition
    be = graph.backend
    clusterer = cluster_mapping if coarsening == "cluster" else None
    say = progress or (lambda step: None)
    say(f"coarsening {graph.n} vertices")
    # deep (deep.py): coarsen as for two blocks and let the levels split their blocks on the way up;
    # the connected-blocks and volume steps work on the k blocks of every level, so they run flat
    run_deep = not contiguous and volume is None and deep.applies(graph, k, coarsening, cluster_fallback)
    t0 = time.perf_counter()
    levels = coarsen(graph, matcher=matcher, rating=rating, seed=seed,
                     coarsen_to=preset.coarsen_to(2 if run_deep else k), clusterer=clusterer,
                     cluster_fallback=cluster_fallback)
    be.synchronize()
    t1 = time.perf_counter()
    coarsest = levels[-1].graph
    grow = None
    if run_deep:
        say(f"deep multilevel from {coarsest.n} vertices ({len(levels) - 1} levels)")
        parts = None
        grow = deep.Grower(k, eps, metrics.block_bounds(graph.total_vwgt, k, eps, target_weights), target_weights,
                           preset, seed, len(levels) - 1)
    else:
        say(f"initial partitioning of {coarsest.n} vertices ({len(levels) - 1} levels)")
        parts = initial_partition(coarsest.to("cpu"), k, eps, seed=seed, tries=preset.initial_tries,
                                  fm_passes=preset.initial_fm_passes, hierarchies=preset.initial_hierarchies,
                                  pairwise_rounds=preset.initial_pairwise_rounds, target_weights=target_weights)
        parts = be.to_device(np.asarray(parts, dtype=np.int64))
    t2 = time.perf_counter()
    parts, cut = uncoarsen(levels, parts, k, lmax, preset if run_deep else preset.for_blocks(k), seed, say,
                           contiguous, volume, grow)
    be.synchronize()
    t3 = time.perf_counter()
    splitting = 0.0 if grow is None else grow.seconds    # a deep run's initial partitioning
    timings["coarsening"] += t1 - t0
    timings["initial"] += t2 - t1 + splitting
    timings["refinement"] += t3 - t2 - splitting
    return parts, level_summaries(levels), cut


def _iterated_vcycle(graph, parts, k, lmax, *, matcher, rating, seed, preset, coarsening, timings,
                     contiguous=False, cluster_fallback=True, volume=None):
    """Re-coarsen inside the blocks of ``parts``, then refine its exact projection back up.

    Contracting only within blocks lets the refiners see the partition on coarse graphs,
    where a move shifts whole regions at once; the caller keeps the result when it is better.
    Returns (parts, cut or None: see _refine_level).
    """
    be = graph.backend
    clusterer = cluster_mapping if coarsening == "cluster" else None
    t0 = time.perf_counter()
    levels = coarsen(graph, matcher=matcher, rating=rating, seed=seed, coarsen_to=preset.coarsen_to(k),
                     clusterer=clusterer, parts=parts, cluster_fallback=cluster_fallback)
    be.synchronize()
    t1 = time.perf_counter()
    p, cut = uncoarsen(levels, levels[-1].parts, k, lmax, preset.for_blocks(k), seed, contiguous=contiguous,
                       volume=volume)
    be.synchronize()
    timings["coarsening"] += t1 - t0
    timings["refinement"] += time.perf_counter() - t1
    return p, cut


def partition(graph, k, *, matcher="local_max", rating="expansion_star2", eps=0.03, seed=0,
              device="auto", preset="default", coarsening="matching", edge_weight="weight",
              node_weight=None, target_weights=None, progress=None, threads=None, contiguous=False,
              cluster_fallback=True, balance=None, objtype="cut", vsize=None):
    """Partition ``graph`` into ``k`` blocks of weight <= (1 + eps) * ceil(W / k), minimising the edge
    cut or (objtype="vol") the total communication volume.

    graph: a matchpart Graph, SciPy sparse matrix, networkx graph, file path or generator
    spec ("delaunay:1000"); ``edge_weight``/``node_weight`` name networkx attributes.
    device: "cpu", "gpu", or "auto" (default): where the graph is, i.e. the GPU for a Graph or
    arrays already on it (CuPy, DLPack), else the CPU (with integer weights, the same partition).
    matcher: a registered matcher name (see ``matchpart.matchers.available()``) or a
    callable; rating: edge rating used by weighted matchers; coarsening: "matching" or
    "cluster" (size-constrained label propagation); with "matching", ``cluster_fallback``
    (default True) clusters every level of a graph of mean degree 7 or more
    (coarsen.hierarchy.CLUSTER_WHEN_MEAN_DEGREE) and lets clustering take over from the
    first matching level that removes few edges on others (power-law graphs;
    CLUSTER_WHEN_EDGES_KEPT); False keeps the matcher on every level; preset: "fast",
    "default", "strong". With many blocks on a graph that coarsening clusters (k >= 128, or
    k >= 32 on a heavy-tailed one clustered from the start) the run is deep multilevel
    (deep.py: the coarsest graph is bisected and every level on the way up splits its blocks).
    target_weights: k fractions summing to 1 (METIS's tpwgts); block i is then bounded by
    (1 + eps) * ceil(t_i * W). progress: called with a short text at each step (coarsening,
    initial partitioning, each refined level), e.g. to show progress on long runs.
    threads: CPU threads for the parallel kernels (default None: every core); the partition
    does not depend on it. contiguous: every block connected (METIS's -contig) on a connected
    graph; on a disconnected one, every block's part of each component is connected
    (refine.contiguity). objtype: "cut" (default) or "vol", METIS's total communication volume
    (metrics.communication_volume): every vertex counts once per other block among its
    neighbours, ``vsize[v]`` times when vertex sizes are given (METIS's vsize, n numbers >= 0);
    CPU only (device="gpu" raises UnsupportedOptionError, "auto" runs on the CPU).
    Same inputs and seed give the same partition. Returns a PartitionResult; when no
    balanced partition exists (e.g. a vertex heavier than the bound) or none was found,
    ``feasible`` is False and a warning says why.
    """
    from .threads import limit
    with limit(threads) as count:
        result = _partition(graph, k, matcher=matcher, rating=rating, eps=eps, seed=seed, device=device,
                            preset=preset, coarsening=coarsening, edge_weight=edge_weight,
                            node_weight=node_weight, target_weights=target_weights, progress=progress,
                            contiguous=contiguous, cluster_fallback=cluster_fallback, balance=balance,
                            objtype=objtype, vsize=vsize)
    result.threads = count
    return result


def _partition(graph, k, *, matcher, rating, eps, seed, device, preset, coarsening, edge_weight, node_weight,
               target_weights, progress, contiguous, cluster_fallback=True, balance=None, objtype="cut",
               vsize=None):
    t_start = time.perf_counter()
    g0 = as_graph(graph, edge_weight=edge_weight, node_weight=node_weight)
    if balance is not None:
        from .constraints import balance_weights
        g0 = g0.with_vertex_weights(balance_weights(g0, balance, g0.labels, graph))
    if g0.ncon > 1 or (not isinstance(eps, (numbers.Real, str)) and hasattr(eps, "__len__")):
        from .constraints import check_eps
        eps = check_eps(eps, g0.ncon)      # one tolerance per constraint
        k, _ = _check_k_eps(k, min(eps), g0.n)
        if g0.ncon == 1:
            eps = eps[0]
    else:
        k, eps = _check_k_eps(k, eps, g0.n)
    volume = _objective.check_objtype(objtype, vsize, g0.n)
    if volume is not None and g0.ncon > 1:
        raise UnsupportedOptionError("objtype='vol' with several weights per vertex is not supported", "objtype")
    device = _objective.device_for(volume, device)
    pre = get_preset(preset)
    if coarsening not in COARSENINGS:
        raise ValueError(f"unknown coarsening {coarsening!r}; choose one of {', '.join(COARSENINGS)}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    resolve(matcher)  # unknown names fail now, not only once a graph is big enough to coarsen
    if not callable(rating) and rating not in RATINGS:
        raise ValueError(f"unknown rating {rating!r}; choose one of {', '.join(RATINGS)}")
    if g0.ncon > 1:
        return _partition_nc(g0, k, eps, target_weights, matcher=matcher, rating=rating, seed=seed, device=device,
                             preset=pre, coarsening=coarsening, cluster_fallback=cluster_fallback,
                             progress=progress, contiguous=contiguous)
    if device == "auto":
        # where the graph is: the GPU for a graph already there, else the CPU, whose threads
        # beat the GPU pipeline where both were measured (an H200 machine, delaunay 2^20,
        # k = 32: 16 CPU threads 0.60 s, the GPU 1.45 s); integer weights: the same partition
        device = "gpu" if g0.backend.is_gpu else "cpu"
    be = _backend.get(device)
    g = g0.to(be)
    # a power-law graph is partitioned relabelled by degree (relabel.py); a large graph without
    # locality in its numbering breadth-first when it is clustered from the first level or has
    # many blocks (locality.pays)
    order, volume0 = None, volume
    clustered = coarsening == "cluster" or clusters_from_start(g, cluster_fallback)
    numbering = None if k == 1 else "by degree" if relabel.skewed(g) else \
        "breadth-first" if locality.pays(g, k, clustered) else None
    if numbering is not None:
        if progress is not None:
            progress(f"numbering the vertices {numbering}")
        if numbering == "by degree":
            order = relabel.degree_order(g)
            g = relabel.relabel(g, order)
        else:
            order, g = locality.bfs_relabel(g)
        if volume is not None:
            volume = _objective.Volume(volume.sizes[be.to_host(order)])
    weighted = g                         # the input's edge weights, for the reported cut
    g = _objective.run_graph(g, volume)
    bounds = metrics.block_bounds(g.total_vwgt, k, eps, target_weights)
    lmax = bounds if target_weights is not None else bounds[0].item()   # one number when all blocks share it
    timings = {"coarsening": 0.0, "initial": 0.0, "refinement": 0.0}
    levels = []
    cut = None
    if k == 1 or g.n == 0:
        parts = be.xp.zeros(g.n, dtype=be.xp.int64)
    else:
        best = None
        # a run's cut comes from its refiners when they tracked it exactly; otherwise it is
        # computed (an O(m) pass: 5% of a default run on delaunay 2^20) only to compare runs.
        # Either way the result reuses it
        compare = pre.cycles > 1 or pre.vcycles > 0
        if volume is not None:     # runs are compared by volume: the cut is computed at the end
            score_of = lambda p, _cut: _objective.value(g, p, volume)    # noqa: E731
        else:
            score_of = lambda p, run_cut: metrics.edge_cut(g, p) if run_cut is None else run_cut    # noqa: E731
        for cycle in range(pre.cycles):
            cycle_seed = int(seed) + 7919 * cycle
            p, lv, run_cut = _vcycle(g, k, eps, lmax, matcher=matcher, rating=rating, seed=cycle_seed,
                                     preset=pre, coarsening=coarsening, timings=timings,
                                     target_weights=target_weights, progress=progress, contiguous=contiguous,
                                     cluster_fallback=cluster_fallback, volume=volume)
            if compare:
                run_cut = score_of(p, run_cut)
            score = (not balanced(g, p, k, lmax), run_cut)
            if best is None or score < best[0]:
                best = (score, p, lv)
        (unbalanced, cut), parts, levels = best
        for v in range(pre.vcycles):
            v_seed = int(seed) + 104729 * (v + 1)
            p, run_cut = _iterated_vcycle(g, parts, k, lmax, matcher=matcher, rating=rating, seed=v_seed,
                                          preset=pre, coarsening=coarsening, timings=timings, contiguous=contiguous,
                                          cluster_fallback=cluster_fallback, volume=volume)
            score = (not balanced(g, p, k, lmax), score_of(p, run_cut))
            if score < best[0]:
                best = (score, p, levels)
                parts = p
        (unbalanced, cut) = best[0]
        if volume is not None:
            cut = None          # best[0] held volumes
        if unbalanced and metrics.infeasibility_proof(be.to_host(g.vwgt), k, lmax) is None:
            p = _packing_fallback(g, k, lmax, pre, seed, parts)
            if p is not None and balanced(g, p, k, lmax):
                parts = p
                cut = None
    if contiguous and k > 1 and g.n:
        parts = be.to_device(connected_blocks(g, parts, k, bounds, seed, progress))
        cut = None
    if order is not None:
        parts = relabel.restore(parts, order, be.xp)
        g = weighted = g0.to(be)
        volume = volume0
    host_parts = be.to_host(parts).astype(np.int64)
    bw = be.to_host(metrics.block_weights(g, parts, k))
    feasible = bool((bw <= bounds).all())
    if not feasible:
        why = metrics.infeasibility_proof(be.to_host(g.vwgt), k, lmax)
        if why is None and contiguous:
            why = _connected_infeasibility(g, k, lmax, bw)
        why = why or f"no partition with every block <= Lmax={lmax} was found (heaviest block {bw.max()})"
        warnings.warn(f"partition is not balanced: {why}; the result has feasible=False", stacklevel=2)
    mapping = None
    if g0.labels is not None:
        mapping = dict(zip(g0.labels, host_parts.tolist()))
    if cut is None:
        cut = metrics.edge_cut(weighted, parts)
    vol = None if volume is None else _objective.value(g, parts, volume)
    timings["total"] = time.perf_counter() - t_start
    return PartitionResult(parts=host_parts, mapping=mapping, cut=cut,
                           imbalance=metrics.imbalance_from_weights(bw, g.total_vwgt, k, target_weights),
                           block_weights=bw,
                           feasible=feasible, levels=levels, timings=timings, k=k, eps=eps,
                           max_block_weight=lmax, objtype=objtype, volume=vol,
                           target_weights=None if target_weights is None else
                           metrics.check_target_weights(target_weights, k))


def _connected_infeasibility(g, k, lmax, bw):
    """The warning's reason when contiguous=True left a block over its bound: a proof that no
    connected balanced partition exists (refine.contig_bound), else what was found."""
    from .refine.contig_bound import connected_infeasibility_proof
    h = g.backend.to_host
    proof = connected_infeasibility_proof(h(g.indptr), h(g.indices), h(g.vwgt), k, lmax)
    if proof is not None:
        return f"contiguous=True: {proof}"
    over = int((bw > np.asarray(lmax)).sum())
    return (f"contiguous=True: no partition with every block connected and <= Lmax={lmax} was found "
            f"({over} blocks over it, heaviest {bw.max()}); one may still exist")


def _partition_nc(g0, k, eps, target_weights, **options):
    """partition() for c > 1 weights per vertex (checked k and c tolerances): pipeline_ncon's run
    as a PartitionResult."""
    from .pipeline_ncon import partition_nc
    out = partition_nc(g0, k, eps, target_weights, **options)
    parts, bounds, tw = out["parts"], out["bounds"], out["target_weights"]
    return PartitionResult(parts=parts, mapping=dict(zip(g0.labels, parts.tolist())) if g0.labels is not None else None,
                           cut=out["cut"], imbalance=max(out["imbalance"]), block_weights=out["block_weights"],
                           feasible=out["feasible"], levels=out["levels"], timings=out["timings"], k=k, eps=eps,
                           max_block_weight=bounds if tw is not None else bounds[0], target_weights=tw,
                           constraint_imbalance=out["imbalance"])
