"""The coarsening hierarchy: match (or cluster), contract, repeat until the graph is small."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..graph import Graph
from ..matchers import run_matcher
from .cluster import cluster_mapping
from .contract import contract, mapping_from_matching
from .kept import SAMPLE_STRIDE, sampled_edges_kept
from .pairs import drop_heavy_pairs_host
from .twohop import two_hop_pairs

# A level that keeps more than this fraction of its vertices counts as stalled (METIS's
# COARSEN_FRACTION is 0.85-0.9): further levels would cost time without helping.
MIN_SHRINK = 0.9
# Two-hop pairing runs when the matching leaves more than this fraction of vertices
# unmatched (METIS's UNMATCHEDFOR2HOP = 0.10).
UNMATCHED_FOR_TWO_HOP = 0.10
# Coarse vertex weight cap = CAP_FACTOR * W / coarsen_to (METIS uses 1.5): keeps coarse
# vertices light enough that the coarsest graph can still be balanced.
CAP_FACTOR = 1.5
# Hard stop on the number of levels (each level at least removes a few vertices).
MAX_LEVELS = 64
# A matching level that keeps more than this fraction of the edges while it keeps at most
# CLUSTER_WHEN_VERTICES_KEPT of the vertices is redone by clustering, as are all later
# levels (cluster_fallback): on the first levels power-law graphs keep 0.89-0.97 of their
# edges (rmat, ba, sbm 2^16; R-MAT 2^20 0.96), meshes, rgg and the shared graphs at most
# 0.78 (PGPgiantcompo; delaunay and 4elt 0.55) on levels that keep <= 0.75 of the vertices.
CLUSTER_WHEN_EDGES_KEPT = 0.85
# A level that keeps more vertices than this has stalled on the vertex weight cap (the last
# levels of meshes keep up to 0.99 of both): clustering would not help it either.
CLUSTER_WHEN_VERTICES_KEPT = 0.75
# A graph of at least this mean degree is clustered from its first level on
# (cluster_fallback): a matching contracts one edge per two vertices, while label
# propagation gathers a dense neighbourhood whole. Default preset, one thread, clustering
# against matching: rgg and Watts-Strogatz graphs (mean degree 7.9-10.5) 0.67-0.92 x the
# cut in 0.6-1.2 x the time; a 27-point grid (24) and random graphs (6-8) 0.98-1.02 x;
# meshes (5.8-6.0) 1.00-1.10 x and PGPgiantcompo (4.6) 0.95-1.03 x, which stay below.
CLUSTER_WHEN_MEAN_DEGREE = 7.0
# Before contracting the first matching level, the share of edges it keeps is estimated
# from a sample (kept.py); at CLUSTER_WHEN_EDGES_KEPT + ESTIMATE_MARGIN or more the level is
# clustered at once, and the matching's contraction is never built (R-MAT 2^19: 0.6 s of a
# 6 s run on 2 threads). Below, with fewer than ESTIMATE_MIN_SAMPLES coarse vertices
# sampled, and on later levels, the exact test after contracting decides, as before: the
# power-law graphs measured all switch on their first level, and an estimate on every level
# of a mesh cost delaunay 2^20 4% of its run for nothing. With 2000 or more samples the
# estimate was within 0.004 of the exact share on the first three levels of the peers' 2^16
# families and R-MAT 2^19 (power-law 0.89-0.95, meshes 0.41-0.75): the margin is several
# times that. One coarse vertex in max(kept.SAMPLE_STRIDE, n / ESTIMATE_SAMPLE_VERTICES)
# is sampled: ~9000 of them on graphs of 2^18 vertices and more.
ESTIMATE_MARGIN = 0.03
ESTIMATE_MIN_SAMPLES = 2000
ESTIMATE_SAMPLE_VERTICES = 16384


@dataclass
class Level:
    """One level of the hierarchy: ``graph``, ``mapping`` (its vertex -> coarse id; None at the
    coarsest) and, when coarsening respected a partition, that partition's projection ``parts``."""

    graph: Graph
    mapping: Any = None
    stats: dict = field(default_factory=dict)
    parts: Any = None


def level_seed_of(seed, depth):
    """A distinct, non-negative 31-bit seed per level (matchers may pass it to compiled code)."""
    return (int(seed) * 1_000_003 + depth) % (2**31 - 1)


def max_coarse_vertex_weight(graph, coarsen_to):
    """Cap on the weight of any coarse vertex built by pairing/clustering (METIS rule)."""
    return CAP_FACTOR * graph.total_vwgt / max(int(coarsen_to), 1)


def drop_heavy_pairs(graph, mate, cap):
    """Unmatch every pair whose combined vertex weight exceeds ``cap`` (a new mate array)."""
    xp = graph.backend.xp
    mate = mate.astype(xp.int64, copy=True)
    matched = mate >= 0
    partner_w = graph.vwgt[xp.where(matched, mate, 0)]
    heavy = matched & ((graph.vwgt + partner_w) > cap)
    mate[heavy] = -1
    return mate


def match_level(graph, *, matcher, rating, seed, cap, block=None):
    """Pair the vertices of one level: matcher, weight cap, two-hop when stalled.

    Returns (mate, stats) with stats rounds / matched_fraction / two_hop_fraction.
    """
    result = run_matcher(matcher, graph, rating=rating, seed=seed)
    n = max(graph.n, 1)
    if graph.backend.is_gpu:
        mate = drop_heavy_pairs(graph, result.mate, cap)
        matched = int((mate >= 0).sum().item())
    else:
        mate, matched = drop_heavy_pairs_host(graph.vwgt, result.mate, cap)
    stats = {"rounds": int(result.stats.get("rounds", 1)), "matched_fraction": matched / n,
             "two_hop_fraction": 0.0, "matcher_time": result.time}
    if (n - matched) > UNMATCHED_FOR_TWO_HOP * n:
        mate = two_hop_pairs(graph, mate, cap, seed=seed, block=block)
        now = int((mate >= 0).sum().item())
        stats["two_hop_fraction"] = (now - matched) / n
    return mate, stats


def intra_block_graph(graph, parts):
    """The same vertices with only the edges inside blocks of ``parts`` (what may be contracted)."""
    be = graph.backend
    xp = be.xp
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    keep = parts[rows] == parts[graph.indices]
    counts = be.segment_sum(keep.astype(xp.int64), graph.indptr)
    return Graph._trusted(be.exclusive_cumsum(counts), graph.indices[keep], graph.ewgt[keep],
                          graph.vwgt, be)


def estimated_edges_kept(graph, mate, mapping, n_coarse):
    """The share of edges that contracting the pairing ``mate`` would keep, estimated from a
    sample (kept.sampled_edges_kept); 0 when the sample is too small to rely on."""
    stride = max(SAMPLE_STRIDE, graph.n // ESTIMATE_SAMPLE_VERTICES)
    distinct, entries, samples = sampled_edges_kept(graph, mate, mapping, n_coarse, stride)
    return distinct / entries if samples >= ESTIMATE_MIN_SAMPLES and entries else 0.0


def matching_keeps_edges(graph, coarse):
    """True when contracting a matching of ``graph`` into ``coarse`` removed few edges although
    it removed many vertices (see CLUSTER_WHEN_EDGES_KEPT): the sign of a power-law graph."""
    return (coarse.m > CLUSTER_WHEN_EDGES_KEPT * graph.m and
            coarse.n <= CLUSTER_WHEN_VERTICES_KEPT * graph.n)


def clusters_from_start(graph, cluster_fallback=True):
    """Whether ``coarsen`` clusters ``graph`` from its first level (the mean-degree rule)."""
    return bool(cluster_fallback) and 2 * graph.m >= CLUSTER_WHEN_MEAN_DEGREE * graph.n > 0


def coarsen(graph, *, matcher="local_max", rating="expansion_star2", seed=0, coarsen_to=2000,
            max_vertex_weight=None, min_shrink=MIN_SHRINK, max_levels=MAX_LEVELS, clusterer=None,
            parts=None, cluster_fallback=True):
    """Build the hierarchy; returns a list of Levels, finest first, the coarsest last.

    Stops when a graph has at most ``coarsen_to`` vertices, when a level keeps more than
    ``min_shrink`` of its vertices (stalled even after two-hop pairing), or after
    ``max_levels``. ``max_vertex_weight`` caps coarse vertex weights (default
    1.5 * W / coarsen_to). ``clusterer(graph, cap, seed) -> (mapping, n_coarse, stats)``
    replaces matching when given (cluster coarsening). ``cluster_fallback``: cluster every
    level with ``cluster_mapping`` when the graph has a mean degree of at least
    CLUSTER_WHEN_MEAN_DEGREE, and otherwise from the first matching level that removes few
    edges (``matching_keeps_edges``) on; False keeps the matcher on every level. Each level's
    stats say whether it was ``clustered``.

    ``parts`` (block per vertex, optional): contract only vertices of the same block, so the
    partition projects exactly onto every coarse graph (the next V-cycle of an iterated
    multilevel run); each Level then carries its projection in ``parts``.
    """
    if coarsen_to < 1:
        raise ValueError(f"coarsen_to must be >= 1, got {coarsen_to}")
    if not 0 < min_shrink <= 1:
        raise ValueError(f"min_shrink must be in (0, 1], got {min_shrink}")
    be = graph.backend
    cap = max_coarse_vertex_weight(graph, coarsen_to) if max_vertex_weight is None else max_vertex_weight
    xp = be.xp
    if parts is not None:
        parts = be.to_device(parts).astype(xp.int64)
    levels = [Level(graph, parts=parts)]
    g = graph
    if clusterer is None and clusters_from_start(graph, cluster_fallback):
        clusterer = cluster_mapping
    for depth in range(max_levels):
        if g.n <= coarsen_to:
            break
        t0 = time.perf_counter()
        level_seed = level_seed_of(seed, depth)
        view = g if parts is None else intra_block_graph(g, parts)
        if clusterer is None:
            mate, stats = match_level(view, matcher=matcher, rating=rating, seed=level_seed, cap=cap,
                                      block=parts)
            mapping, n_coarse = mapping_from_matching(mate, be)
        else:
            mapping, n_coarse, stats = _cluster_level(clusterer, view, cap, level_seed, parts)
        if n_coarse >= g.n:  # nothing contracted: the hierarchy has stalled
            break
        tried_clusters = False
        if depth == 0 and clusterer is None and cluster_fallback and n_coarse <= CLUSTER_WHEN_VERTICES_KEPT * g.n:
            kept = estimated_edges_kept(g, mate, mapping, n_coarse)
            if kept >= CLUSTER_WHEN_EDGES_KEPT + ESTIMATE_MARGIN:
                tried_clusters = True
                c_mapping, c_n, c_stats = _cluster_level(cluster_mapping, view, cap, level_seed, parts)
                if c_n < g.n:
                    clusterer = cluster_mapping    # this level and every later one
                    mapping, n_coarse, stats = c_mapping, c_n, c_stats
                    stats["matching_edges_kept"] = kept
        coarse = contract(g, mapping, n_coarse)
        if clusterer is None and cluster_fallback and not tried_clusters and matching_keeps_edges(g, coarse):
            kept = coarse.m / max(g.m, 1)
            c_mapping, c_n, c_stats = _cluster_level(cluster_mapping, view, cap, level_seed, parts)
            if c_n < g.n:
                clusterer = cluster_mapping    # this level and every later one
                mapping, n_coarse, stats = c_mapping, c_n, c_stats
                stats["matching_edges_kept"] = kept
                coarse = contract(g, mapping, n_coarse)
        be.synchronize()
        stats["clustered"] = clusterer is not None
        stats.update(n=g.n, m=g.m, n_coarse=n_coarse, time=time.perf_counter() - t0)
        levels[-1].mapping = mapping
        levels[-1].stats = stats
        if parts is not None:
            coarse_parts = xp.zeros(n_coarse, dtype=xp.int64)
            coarse_parts[mapping] = parts  # all members of a coarse vertex share the block
            parts = coarse_parts
        levels.append(Level(coarse, parts=parts))
        g = coarse
        if n_coarse > min_shrink * stats["n"]:
            break
    return levels


def _cluster_level(clusterer, view, cap, level_seed, parts):
    if parts is None:
        return clusterer(view, cap, level_seed)
    return clusterer(view, cap, level_seed, block=parts)


def level_summaries(levels):
    """One dict per contraction step (n, m, rounds, matched_fraction, two_hop_fraction, time,
    clustered: made by clustering rather than the matcher)."""
    out = []
    for lv in levels[:-1]:
        s = lv.stats
        out.append({"n": s["n"], "m": s["m"], "rounds": s.get("rounds", 0),
                    "matched_fraction": s.get("matched_fraction", 0.0),
                    "two_hop_fraction": s.get("two_hop_fraction", 0.0), "time": s["time"],
                    "clustered": bool(s.get("clustered", False))})
    c = levels[-1].graph
    out.append({"n": c.n, "m": c.m, "rounds": 0, "matched_fraction": 0.0, "two_hop_fraction": 0.0,
                "time": 0.0, "clustered": False})
    return out
