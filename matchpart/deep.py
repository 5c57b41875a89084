"""Deep multilevel partitioning for many blocks (the scheme of KaMinPar's deep multilevel graph
partitioning, Gottesbueren et al. 2021): the hierarchy is coarsened to a few hundred vertices
whatever k is; the coarsest graph is bisected a few times, and on the way back up every level
that has room for more blocks splits each of its blocks further before it is refined.

The blocks of a level are the nodes of recursive bisection's tree at one depth (a
``Frontier``): node (first, ks) stands for the final blocks first .. first + ks - 1 and splits
into (first, ks // 2) and (first + ks // 2, ks - ks // 2), as bisection_levels splits its
tasks; so the finest level's nodes are the k blocks themselves. A level gets the deepest
frontier with at least ``coarsen_per_block`` vertices per node, the flat pipeline's vertices
per block at its coarsest graph; splitting is recursive_bisection started from the level's
nodes. The refiners then see the whole level with its nodes as blocks: a split made on a
coarse level is refined on every finer one, where the flat pipeline bisects a graph of
coarsen_per_block * k vertices at once and refines only the few levels above it.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .bisection_levels import recursive_bisection
from .refine.state import host_arrays

# Deep partitioning runs from DEEP_MIN_K blocks on, on graphs that coarsening clusters (mean
# degree >= coarsen.hierarchy.CLUSTER_WHEN_MEAN_DEGREE, or heavy-tailed: relabel.power_law) or
# when asked to cluster. Default preset, 2 threads, 2 seeds, deep / flat: R-MAT 2^16 k = 256
# 0.28 x the time at 1.007 x the cut, R-MAT 2^18 k = 1024 0.19 x at 1.002 x, Barabasi-Albert
# 2^16 k = 256 0.44 x at 1.002 x, rgg 2^16 and 2^20 k = 256-1024 0.49-0.90 x at 0.97-0.98 x
# (k = 8192: 0.75 x at 0.953 x), Watts-Strogatz 2^16 k = 128 0.75 x at 0.96 x. On
# matching hierarchies (meshes, grids) the flat pipeline's cut stays ahead: delaunay 2^16 and
# 2^20, k = 256-8192, 1.01-1.03 x the cut for 0.8-0.9 x the time; grid 256 x 256 k = 512 1.002 x.
# Below 128 blocks the seeds' noise decides the cut (k = 32, 4 seeds: rgg 2^16 1.04 x,
# Watts-Strogatz 0.98 x, PGPgiantcompo 1.03 x), except on heavy-tailed graphs clustered from
# the start, from DEEP_MIN_K_DENSE_POWER_LAW blocks on: their coarsest graphs are nearly
# complete, and the flat pipeline's recursive bisection of 20 k such vertices is what deep
# saves (k = 32: R-MAT 2^16 0.89 x the time at 0.998 x the cut, Barabasi-Albert 2^16 0.92 x at
# 0.997 x, 4 seeds; R-MAT 2^20 0.87 x at 1.0004 x).
DEEP_MIN_K = 128
DEEP_MIN_K_DENSE_POWER_LAW = 32


def applies(graph, k, coarsening="matching", cluster_fallback=True):
    """Whether ``partition`` runs deep on ``graph`` with k blocks (see DEEP_MIN_K)."""
    from .coarsen.hierarchy import clusters_from_start
    from .relabel import power_law
    if k < min(DEEP_MIN_K, DEEP_MIN_K_DENSE_POWER_LAW):
        return False
    clustered = coarsening == "cluster" or clusters_from_start(graph, cluster_fallback)
    heavy = power_law(graph)
    if clustered and heavy:
        return k >= DEEP_MIN_K_DENSE_POWER_LAW
    return (clustered or heavy) and k >= DEEP_MIN_K


@dataclass(frozen=True)
class Frontier:
    """The nodes of the bisection tree at ``depth`` (and the one-block leaves above it), by
    first block: ``first``, ``ks`` and each node's own ``node_depth`` (int64 arrays)."""

    depth: int
    first: np.ndarray
    ks: np.ndarray
    node_depth: np.ndarray

    @property
    def size(self):
        return int(self.first.shape[0])


def full_depth(k):
    """Depth of the tree's deepest leaf: ceil(log2 k)."""
    return max(0, math.ceil(math.log2(k))) if k > 1 else 0


def frontier(k, depth):
    """The Frontier of k blocks at ``depth`` (0: the root)."""
    first = np.zeros(1, dtype=np.int64)
    ks = np.full(1, k, dtype=np.int64)
    node_depth = np.zeros(1, dtype=np.int64)
    for _ in range(depth):
        split = ks > 1
        k1 = ks // 2
        # each splitting node becomes two, in place: (first, k1), (first + k1, ks - k1)
        reps = np.where(split, 2, 1)
        first2 = np.repeat(first, reps)
        ks2 = np.repeat(ks, reps)
        nd2 = np.repeat(node_depth, reps)
        at = np.cumsum(reps) - reps                  # each node's first slot
        left = at[split]
        ks2[left] = k1[split]
        ks2[left + 1] = ks[split] - k1[split]
        first2[left + 1] = first[split] + k1[split]
        nd2[left] += 1
        nd2[left + 1] += 1
        first, ks, node_depth = first2, ks2, nd2
    return Frontier(depth, first, ks, node_depth)


def depth_for(n, k, per_block, finest):
    """The frontier depth of a level of n vertices: the deepest with at least per_block
    vertices per node (at least 1), and the full depth on the finest level."""
    top = full_depth(k)
    if finest:
        return top
    depth = 1
    while depth < top and frontier_size(k, depth + 1) * per_block <= n:
        depth += 1
    return min(depth, top)


def frontier_size(k, depth):
    """Number of nodes at ``depth``: the leaves of the first levels are counted once."""
    return frontier(k, depth).size


def node_bounds(fr, total_vwgt, bounds, eps_level, targets):
    """Weight bound per node of ``fr``: a one-block node its block's bound (``bounds``, the k
    final ones); a larger node (1 + eps_level)^(its depth) x its target share of the total,
    recursive bisection's bound for it (so that the splits below it multiply to 1 + eps),
    and at most the sum of its blocks' bounds."""
    bounds = np.asarray(bounds)
    cum_bounds = np.concatenate(([0.0], np.cumsum(bounds, dtype=np.float64)))
    cum_targets = np.concatenate(([0.0], np.cumsum(targets, dtype=np.float64)))
    last = fr.first + fr.ks
    share = (cum_targets[last] - cum_targets[fr.first]) / cum_targets[-1]
    ideal = (1.0 + eps_level) ** fr.node_depth * share * float(total_vwgt)
    out = np.minimum(ideal, cum_bounds[last] - cum_bounds[fr.first])
    one = fr.ks == 1
    out[one] = bounds[fr.first[one]]
    if bounds.dtype.kind in "iu":
        return np.floor(out + 1e-9).astype(np.int64)
    return out


class Grower:
    """uncoarsen's ``grow`` hook for a deep run: called on each level (coarsest first) with its
    projected partition (None on the coarsest), returns (parts in the level's nodes, number of
    nodes, their bounds, whether the blocks changed)."""

    def __init__(self, k, eps, bounds, targets, preset, seed, coarsest):
        self.k = int(k)
        self.bounds = np.asarray(bounds)
        self.maxw = np.asarray(bounds, dtype=np.float64)
        self.targets = np.ones(self.k) if targets is None else np.asarray(targets, dtype=np.float64)
        self.eps_level = (1.0 + eps) ** (1.0 / full_depth(self.k)) - 1.0 if self.k > 1 else 0.0
        self.preset = preset
        self.seed = int(seed)
        self.coarsest = coarsest                  # the coarsest level's index
        self.fr = None
        self.node_bounds = None
        self.seconds = 0.0                        # spent splitting (the run's initial partitioning)

    def __call__(self, i, graph, parts):
        depth = depth_for(graph.n, self.k, self.preset.coarsen_per_block, finest=i == 0)
        if parts is not None and depth <= self.fr.depth:
            return parts, self.fr.size, self.node_bounds, False
        t0 = time.perf_counter()
        new = frontier(self.k, depth)
        be = graph.backend
        arrays = host_arrays(graph)
        n = arrays[0].shape[0] - 1
        if parts is None:
            start_first = np.empty(0, dtype=np.int64)
            start_ks = np.empty(0, dtype=np.int64)
            splits = depth
        else:
            start_first = self.fr.first[np.asarray(be.to_host(parts), dtype=np.int64)]
            start_ks = np.zeros(self.k, dtype=np.int64)
            start_ks[self.fr.first] = self.fr.ks
            splits = depth - self.fr.depth
        p = self.preset
        firsts = recursive_bisection(*arrays, self.maxw, self.targets, self.eps_level,
                                     (self.seed * 1_000_003 + self.coarsest - i) % (2**31 - 1),
                                     int(p.initial_tries), int(p.initial_fm_passes), int(p.initial_hierarchies),
                                     start_first, start_ks, int(splits)) if n else np.zeros(0, dtype=np.int64)
        node_of_first = np.zeros(self.k, dtype=np.int64)
        node_of_first[new.first] = np.arange(new.size)
        self.fr = new
        self.node_bounds = node_bounds(new, graph.total_vwgt, self.bounds, self.eps_level, self.targets)
        parts = be.to_device(node_of_first[firsts])
        self.seconds += time.perf_counter() - t0
        return parts, new.size, self.node_bounds, True
