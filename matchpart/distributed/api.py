"""The distributed V-cycle and matching entry points: ``partition`` and ``match``.

Coarsen distributed (local max + contraction) until the graph is small, gather it on every
rank, run the single-process ``matchpart.partition`` on it with a per-rank seed (the best
cut wins), then project and refine level by level with distributed Jet.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from .. import metrics
from ..backend import get as get_backend
from ..coarsen.hierarchy import (CAP_FACTOR, MAX_LEVELS, MIN_SHRINK, UNMATCHED_FOR_TWO_HOP, clusters_from_start,
                                 level_seed_of, matching_keeps_edges)
from ..graph import Graph
from ..pipeline import PartitionResult, _check_k_eps
from ..presets import get_preset
from ..refine.jet import new_workspace as new_jet_workspace
from ..refine.parallel_fm import new_workspace
from ..threads import available as available_threads
from ..threads import check as check_threads
from ..threads import limit
from ..uncoarsen import localized_stall, refine_level, refined_levels
from . import refine
from .comm import DistributedError, as_comm
from .cluster import cluster
from .contract import contract, contract_ids, project
from .fm import local_fm
from .matching import local_max
from .read import load
from .twohop import two_hop

# Coarsening stops once the graph has at most max(GATHER_MIN, coarsen_to * P) vertices, and
# every rank then holds a copy of it. coarsen_to * P (the rule) keeps the replicated
# graph proportional to the machine; the floor lets the single-process V-cycle, with its
# FM refinement, do the coarse levels where Jet alone loses most (a few thousand vertices
# cost each rank little memory and well under a second).
GATHER_MIN = 4000
# Seeds of the ranks' coarse solves: seed + RANK_SEED_STRIDE * rank (a prime, so the
# ranks' level seeds do not collide with the single-process run's cycle seeds).
RANK_SEED_STRIDE = 1_000_003
MATCHERS = ("local_max", "karp_sipser")
DISTRIBUTIONS = {"local_max": ("1d",), "karp_sipser": ("1d", "2d")}
COARSENING_MATCHERS = ("local_max",)   # karp_sipser ignores weights: no use for coarsening


@dataclass
class DistributedResult(PartitionResult):
    """PartitionResult of a distributed run (``parts`` only on rank 0, None elsewhere) plus
    ``local_parts`` (the blocks of this rank's own vertices), ``local_ids`` (their input ids:
    a range, unless the graph was renumbered breadth-first), ``bytes_sent`` (this rank's
    bytes per phase), ``collectives`` (this rank's collective operations per phase: each
    costs a network latency) and ``ranks``."""

    local_parts: np.ndarray = None
    local_ids: np.ndarray = None
    bytes_sent: dict = field(default_factory=dict)
    collectives: dict = field(default_factory=dict)
    ranks: int = 1


def _check_matcher(matcher, allowed=MATCHERS):
    if matcher not in allowed:
        raise ValueError(f"matcher {matcher!r} has no distributed version here; choose one of {', '.join(allowed)}")


def match(source, matcher="local_max", *, rating="weight", seed=0, distribution="1d", comm=None, root=0):
    """A matching of the distributed graph (path, spec, Graph on rank 0, or DistGraph).

    Returns the whole mate array (numpy int64, -1 = unmatched) on ``root``, None elsewhere.
    Matchers: "local_max" (seed 001; equals ``matchpart.match(graph, "local_max",
    rating=rating, seed=seed).mate`` for any number of ranks) and "karp_sipser" (seed 002's
    BSP supersteps; ignores ``rating``). ``distribution``: "1d" (rows whole on their owner;
    karp_sipser then equals the shared-memory karp_sipser) or, for karp_sipser, "2d" (the
    edges spread over a pr x pc grid of ranks, ``EdgeDist``; a valid maximal matching of
    about the same cardinality, not the same one).
    """
    c = as_comm(comm)
    with c.collectively():
        _check_matcher(matcher)
        if distribution not in DISTRIBUTIONS[matcher]:
            raise ValueError(f"distribution {distribution!r} is not available for {matcher}; choose one of "
                             f"{', '.join(DISTRIBUTIONS[matcher])}")
    g = load(source, c)
    with c.phase("matching"):
        if matcher == "karp_sipser" and distribution == "2d":
            from .karp_sipser2d import karp_sipser_2d
            mate, _ = karp_sipser_2d(g, seed=seed)
        elif matcher == "karp_sipser":
            from .karp_sipser import karp_sipser
            mate, _ = karp_sipser(g, seed=seed)
        else:
            mate, _ = local_max(g, rating=rating, seed=seed)
    return g.gather_values(mate, root)


def _coarsen(g, k, pre, rating, seed, timings, levels):
    """The distributed hierarchy: [(graph, coarse id per own vertex or None)], finest first.
    Levels match (local max, two-hop pairing) or, by the single process's rules, cluster
    (cluster.py): from the first level on graphs of high mean degree, and from a matching
    level on that kept most of the edges."""
    c = g.comm
    coarsen_to = pre.coarsen_to(k)
    gather_at = max(GATHER_MIN, coarsen_to * c.size)
    cap = CAP_FACTOR * g.total_vwgt / max(coarsen_to, 1)
    clustering = clusters_from_start(g)
    hierarchy = [[g, None]]
    for depth in range(MAX_LEVELS):
        if g.n <= gather_at:
            break
        t0 = t_level = time.perf_counter()
        level_seed = level_seed_of(seed, depth)
        st = {"rounds": 0, "matched_fraction": [0.0]}
        two_hop_fraction = 0.0
        if not clustering:
            with c.phase("matching"):
                mate, st = local_max(g, rating=rating, seed=level_seed, cap=cap)
                # two-hop pairing when the matching left many vertices free (the single-process
                # match_level's rule, and the same pairs)
                matched = c.allreduce(int((mate >= 0).sum()))
                if g.n - matched > UNMATCHED_FOR_TWO_HOP * g.n:
                    mate = two_hop(g, mate, cap, seed=level_seed)
                    two_hop_fraction = (c.allreduce(int((mate >= 0).sum())) - matched) / g.n
            t1 = time.perf_counter()
            with c.phase("contraction"):
                coarse, cid = contract(g, mate)
            t2 = time.perf_counter()
            timings["matching"] += t1 - t0
            timings["contraction"] += t2 - t1
            clustering = matching_keeps_edges(g, coarse)   # this level again, and every later one
            t0 = time.perf_counter()
        if clustering:
            with c.phase("matching"):
                cid, vtxdist = cluster(g, cap, seed=level_seed)
            t1 = time.perf_counter()
            with c.phase("contraction"):
                coarse = contract_ids(g, cid, vtxdist)
            t2 = time.perf_counter()
            timings["matching"] += t1 - t0
            timings["contraction"] += t2 - t1
        levels.append({"n": g.n, "m": g.m, "rounds": st["rounds"],
                       "matched_fraction": st["matched_fraction"][-1] if st["matched_fraction"] else 0.0,
                       "two_hop_fraction": two_hop_fraction, "clustered": clustering, "time": t2 - t_level})
        hierarchy[-1][1] = cid
        hierarchy.append([coarse, None])
        stalled = coarse.n > MIN_SHRINK * g.n
        g = coarse
        if stalled:
            break
    levels.append({"n": g.n, "m": g.m, "rounds": 0, "matched_fraction": 0.0, "two_hop_fraction": 0.0,
                   "clustered": False, "time": 0.0})
    return hierarchy


def _solve_coarsest(g, k, eps, lmax, pre, rating, seed, threads):
    """Every rank partitions the gathered coarsest graph with its own seed; the best
    (balanced first, then lowest cut, then lowest rank) is broadcast from its rank."""
    from .. import partition as single_partition
    c = g.comm
    whole = g.gather_graph()
    result = None
    with c.collectively():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # balance is judged on the finest graph
            result = single_partition(whole, k, eps=eps, seed=seed + RANK_SEED_STRIDE * c.rank, preset=pre,
                                      rating=rating, device="cpu", threads=threads)
    scores = c.allgather((not result.feasible, result.cut, c.rank))
    winner = min(scores)[2]
    parts = c.bcast(result.parts if c.rank == winner else None, root=winner)
    return parts[g.first:g.last]


def _power_law(g):
    """relabel.power_law on a DistGraph (the same rule: max degree against the mean)."""
    from ..relabel import heavy_tailed
    if g.m == 0:
        return False
    max_degree = g.comm.allreduce(int(np.diff(g.indptr).max()) if g.n_local else 0, op="max")
    return heavy_tailed(max_degree, g.n, g.m)


def partition(source, k, *, eps=0.03, seed=0, rating="expansion_star2", preset="default", matcher="local_max",
              comm=None, root=0, use_fm=True, threads=None):
    """Partition a graph on all ranks of ``comm`` (default COMM_WORLD) into ``k`` blocks of
    weight <= (1 + eps) * ceil(W / k). ``source``: a path (METIS files are read in parallel),
    a generator spec, a Graph on rank 0, or a DistGraph. A graph whose ids have no locality
    is numbered breadth-first first: by rank 0 when it scatters the graph (a Graph, a spec
    the ranks cannot generate themselves, a compressed file; dgraph.scatter_graph), by the
    ranks together when they read a METIS file (renumber.py). Returns a
    DistributedResult on every rank; ``parts`` (numpy int64, the whole partition, in the
    input's vertex order) only on ``root``.

    ``threads``: CPU threads of each rank's kernels; None: the node's cores shared among
    its ranks (rank_threads). The partition does not depend on it. ``use_fm``: k-way FM
    after Jet where it pays (every refined level of a mesh or geometric graph; on a
    power-law graph the finest level on one rank only, see _partition); False: Jet alone."""
    c = as_comm(comm)
    count = rank_threads(c, threads)
    with limit(count):
        result = _partition(source, k, eps, seed, rating, preset, matcher, c, root, use_fm, count)
    result.threads = count
    return result


def rank_threads(c, threads=None):
    """Threads per rank: ``threads`` (checked as threads.check does), or for None the cores
    numba sees divided among the ranks on this node, at least 1. Every rank asked for all
    the cores: two ranks of two threads each on a 2-core machine ran R-MAT 2^18's coarsest
    graph's initial partitioning 5 x slower than of one thread each (1.3 s against 0.28 s),
    the threads of each waiting for cores the other held."""
    on_node = c.ranks_on_node()       # collective: every rank asks, whatever it was given
    if threads is not None:
        return check_threads(threads)
    return max(1, available_threads() // on_node)


def _partition(source, k, eps, seed, rating, preset, matcher, c, root, use_fm, threads):
    t_start = time.perf_counter()
    with c.collectively():
        _check_matcher(matcher, COARSENING_MATCHERS)
        pre = get_preset(preset)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    with c.phase("input"):
        g = load(source, c, renumber=True)
    with c.collectively():
        k, eps = _check_k_eps(k, eps, g.n)
        if g.total_vwgt == 0 and k > 1:
            raise ValueError("every vertex weight is 0, so blocks cannot be balanced")
    t_read = time.perf_counter()
    timings = {"input": t_read - t_start, "matching": 0.0, "contraction": 0.0, "initial": 0.0,
               "refinement": 0.0}
    lmax = metrics.max_block_weight(g.total_vwgt, k, eps)
    levels = []
    hierarchy = _coarsen(g, k, pre, rating, seed, timings, levels)
    t0 = time.perf_counter()
    with c.phase("initial"):
        parts = _solve_coarsest(hierarchy[-1][0], k, eps, lmax, pre, rating, seed, threads)
    t1 = time.perf_counter()
    # on a power-law graph FM refines the finest level only, as the single process does
    # (uncoarsen.uncoarsen): R-MAT 2^18, k = 32, P = 1 spent 13.5 s in FM over 11 levels.
    # On more ranks not even that: there nearly every vertex has a neighbour on another rank,
    # so FM runs as grouped sweeps (fm.grouped_sweeps), each rank moving between 1 / P of
    # the blocks; R-MAT 2^18, k = 32, P = 2: its two sweeps took 0.79-0.94 s, 1.6-1.9 x Jet's
    # time, for 0.58% of cut (the single process's FM: 1.1% for 1.35 x its Jet's)
    power_law = k > 2 and _power_law(g)
    fm_coarse = use_fm and not power_law
    fm_finest = use_fm and (c.size == 1 or not power_law)
    # the single process's rule (uncoarsen.refined_levels): dense coarse levels, and those
    # that kept most of the last refined level's edges, are projected through unrefined
    # (R-MAT 2^18, k = 32, P = 1: 7 levels of 1.0-3.8M entries)
    refined = refined_levels([lv[0] for lv in hierarchy], pre.refine_edge_shrink)
    pre = pre.for_blocks(k)     # the levels are refined as a flat single-process run's
    cut = None   # of the finest level's partition, when Jet and FM tracked it
    workspace = None   # rank-local FM's scratch, for every level
    with c.phase("refinement"):
        for depth in range(len(hierarchy) - 2, -1, -1):
            fine, cid = hierarchy[depth]
            parts = project(hierarchy[depth + 1][0], cid, parts)
            if not refined[depth]:
                cut = None
                continue
            fm_here = fm_finest if depth == 0 else fm_coarse
            if c.size == 1:
                if workspace is None:       # the single process's scratch, for every level
                    workspace = (new_workspace(g.n_local), new_jet_workspace(g.n_local, g.ewgt.dtype))
                parts, cut = _refine_one_rank(fine, hierarchy[0][0], parts, k, lmax, pre, seed + depth, fm_here,
                                              workspace)
                continue
            parts, cut, boundary = refine.jet(fine, parts, k, lmax, seed=seed + depth, patience=pre.jet_patience,
                                              negative_gain_factor=pre.jet_negative_gain,
                                              min_improvement=pre.jet_min_improvement, state=True)
            if fm_here:
                if workspace is None:       # sized for the finest level's own vertices and ghosts
                    workspace = new_workspace(g.n_local + g.ghosts.shape[0])
                parts, cut = local_fm(fine, parts, k, lmax, seed=seed + depth, passes=pre.fm_passes,
                                      localized=pre.fm_localized, cut=cut, boundary=boundary, workspace=workspace)
        bw = refine.block_weights(g, parts, k)
        if (bw > lmax).any():
            parts = refine.rebalance(g, parts, k, lmax, seed=seed)
            bw = refine.block_weights(g, parts, k)
            cut = None
        if cut is None or g.ewgt.dtype.kind not in "iu":   # float sums: the cut of the final parts, exactly
            cut = refine.edge_cut(g, g.extended(parts))
    t2 = time.perf_counter()
    timings["initial"] = t1 - t0
    timings["refinement"] = t2 - t1
    full = g.gather_in_input_order(parts, root)
    feasible = bool((bw <= lmax).all())
    vwgt_all = None if feasible else g.gather_values(g.vwgt, root)  # collective: every rank or none
    if vwgt_all is not None:
        why = metrics.infeasibility_proof(vwgt_all, k, lmax) or "no balanced partition was found"
        warnings.warn(f"partition is not balanced: {why}; the result has feasible=False", stacklevel=2)
    timings["total"] = time.perf_counter() - t_start
    return DistributedResult(parts=full, mapping=None, cut=cut,
                             imbalance=float(bw.max()) / np.ceil(g.total_vwgt / k) - 1.0 if g.total_vwgt else 0.0,
                             block_weights=bw, feasible=feasible, levels=levels, timings=timings, k=k, eps=eps,
                             max_block_weight=lmax, local_parts=parts, local_ids=g.local_input_ids(),
                             bytes_sent=dict(c.sent),
                             collectives=dict(c.calls), ranks=c.size)


def _refine_one_rank(fine, finest, parts, k, lmax, pre, seed, fm_here, workspace):
    """One rank's level refined by the single process's refiners (uncoarsen.refine_level:
    compiled Jet with its gain cache, rebalancing and k-way FM, on the rank's threads): its
    rows are the whole level, with no ghosts, so no boundary data need travel between the
    kernels' rounds. k = 32, one thread, the distributed rounds before: delaunay 2^20
    refinement 0.57 -> 0.34 s (cut 18035 -> 17807), R-MAT 2^18 1.62 -> 1.55 s (the single
    process, which numbers R-MAT by degree first, refines it in 1.07 s). Returns (parts, cut
    or None). ``workspace``: FM's and Jet's scratch (uncoarsen.refine_level's), for every level."""
    be = get_backend("cpu")
    level = Graph._trusted(fine.indptr, fine.adj, fine.ewgt, fine.vwgt, be)
    whole = Graph._trusted(finest.indptr, finest.adj, finest.ewgt, finest.vwgt, be)
    level_preset = pre if fm_here else replace(pre, fm_passes=0)
    parts, cut, _ = refine_level(level, np.asarray(parts, dtype=np.int64), k, lmax, level_preset, seed,
                                 local_stall=localized_stall(level_preset, level, whole, k), workspace=workspace[0],
                                 jet_workspace=workspace[1])
    return np.asarray(parts, dtype=np.int64), cut


__all__ = ["partition", "match", "DistributedResult", "DistributedError"]
