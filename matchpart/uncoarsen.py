"""Uncoarsening: project a partition level by level to the finest graph, refining the levels
that pay (Jet, then k-way FM on the CPU; whole-array Jet and rebalancing on the GPU), with
the connected-blocks and volume steps when asked for. pipeline.py orders the phases; this
module owns what happens on each level on the way back up.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import metrics, relabel
from . import objective as _objective
from .coarsen.hierarchy import MIN_SHRINK

# FM adds localized rounds (kway_fm.localized_round) on the levels where they pay even when
# the preset leaves them off: levels of at least LOCALIZED_MIN_VERTICES vertices (there one
# global pass, which stalls after kway_fm.STALL_MOVES_MAX moves, reaches little of a
# boundary of tens of thousands of vertices), at most LOCALIZED_MAX_SHARE of the finest
# level's (the finest levels cost most), and of average degree at most
# LOCALIZED_MAX_DEGREE (a search pays O(degree) per move); their searches stop after
# LOCALIZED_STALL_MOVES moves without a new best. Measured with the default preset and
# kway_fm's 40 stall moves, 2 seeds: delaunay 2^20 k = 32 1.6% less cut, k = 8 2.5%, rgg 2^20
# k = 32 1.8%; R-MAT 2^19 (such levels of average degree 178) 0.03% for 1.36 x the time,
# hence the degree bound; Barabasi-Albert 600k (degree 40) unchanged. Graphs below 200k
# vertices have no such level. delaunay 2^20 k = 32, process CPU, one thread, median of 4:
# 40 stall moves 1.14 x the time for 1.5% less cut, 10 moves 1.08 x for 1.2%, 5 moves
# 1.035 x for 1.1%. Localized rounds on every level of delaunay 2^20: 4.6% for 1.8 x; on the
# levels below a quarter of the finest of 2^16 graphs: 0.2-0.5% for 1.2-1.45 x.
LOCALIZED_MIN_VERTICES = 50_000
LOCALIZED_MAX_SHARE = 0.25
LOCALIZED_MAX_DEGREE = 12.0
LOCALIZED_STALL_MOVES = 5
# ... and only while the level has at least LOCALIZED_MIN_BLOCK_VERTICES vertices per block:
# a block of a few dozen vertices is boundary nearly whole, and the global pass reaches it.
# Delaunay 2^20, k = 8192 (the coarsest level has 156724 vertices, 19 a block): localized
# rounds there took 0.26 s to win 0.2% of that level's cut, and the final cut was no lower.
LOCALIZED_MIN_BLOCK_VERTICES = 32
# On graphs whose finest level has mean degree at most SPARSE_LOCALIZED_MAX_DEGREE (dual graphs
# of triangle and tetrahedral meshes: <= 3 and 4; 2D grids) every refined level gets localized
# rounds of SPARSE_LOCALIZED_STALL_MOVES: there one search move costs little and a global pass
# leaves long zero-gain plateaus. Dual graphs of delaunay meshes of 2^14 and 2^16 points,
# k = 8, 32, 3 seeds, one thread: 0.904 x mpmetis's cut instead of 0.955 for 1.5 x the CPU
# time (5 moves: 0.915; 40: 0.906 for 1.7 x); on delaunay / 4elt (degree 6) only 1-3% for
# 1.3-1.6 x, hence the degree bound.
SPARSE_LOCALIZED_MAX_DEGREE = 4.0
SPARSE_LOCALIZED_STALL_MOVES = 10
# Coarse levels of mean degree above COARSE_MAX_DEGREE are not refined at all: on the dense
# clustered levels of power-law graphs (R-MAT 2^16: mean degree 82-232) no single move pays,
# and Jet and FM there left the cut unchanged (R-MAT 2^16, k = 8: 699827 on four levels, -0.8%
# on the fifth, for 96 of 536 ms) while the finer levels find the same moves. Default preset,
# peers instances (2^16 families and shared graphs, k = 8, 32, 3 seeds, 2 threads): R-MAT
# 0.86-0.90 x the time, Barabasi-Albert 0.78-0.92 x, SBM 0.90-0.97 x, cut within +0.3%; meshes
# and geometric graphs (coarse degrees 5-14) unchanged. Barabasi-Albert 2^20, k = 8: the same
# time at 0.97 x the cut. (FM alone skipping these levels, the rule before: R-MAT k = 8 0.87 x.)
COARSE_MAX_DEGREE = 40.0
# The level above a stalled coarsest graph (one whose contraction kept more than MIN_SHRINK of
# the vertices, which is where coarsening stops) is not refined when it has at least
# STALLED_MIN_VERTICES vertices: the coarsest graph's refinement has just made its moves.
# Delaunay 2^20, k = 8192 (156724 of 171038 vertices kept): Jet there moved nothing and FM won
# 0.33% of cut for 0.59 s; without it the run took 4.7-5.0 s instead of 5.0-5.6 s at 0.1% more
# cut (2 threads). Below the bound refining costs little: on delaunay_n15, k = 32 (640 of 653
# kept) skipping lost 0.9% of cut for no time.
STALLED_MIN_VERTICES = 50_000


def refine_level(graph, parts, k, lmax, preset, seed, boundary=None, local_stall=None, workspace=None,
                 jet_workspace=None):
    """Jet (rebalancing when overweight), then k-way FM on the CPU: a few compiled calls per level.

    Returns (parts, cut, boundary): the cut as the refiners tracked it when it is exact
    (integer weights, CPU), else None; bool flags of a superset of the result's boundary
    (CPU), else None. ``boundary``: such flags for the input (the coarser level's, projected).
    ``local_stall``: FM's localized rounds stop their searches after this many moves without
    a new best, 0 runs none (default: the preset's choice, see localized_stall). ``workspace``:
    FM's scratch for the levels of a hierarchy (see refine.fm.refine_arrays), or None;
    ``jet_workspace`` Jet's (refine.jet.new_workspace), which then holds the parts returned.
    Handing these on saves O(m) passes: on delaunay 2^20 each took ~20 ms on the finest level.
    """
    from .refine.fm import refine_arrays
    from .refine.jet import jet_arrays
    from .refine.state import bounds_array, host_arrays
    be = graph.backend
    stall = localized_stall(preset) if local_stall is None else local_stall
    if be.is_gpu:
        return _refine_level_gpu(graph, parts, k, lmax, preset, seed, stall), None, None
    arrays = host_arrays(graph)               # one host copy of the level for every refiner
    maxw = bounds_array(lmax, k)
    parts, cut, boundary = jet_arrays(arrays, parts, maxw, seed=seed, patience=preset.jet_patience,
                                      negative_gain_factor=preset.jet_negative_gain,
                                      min_improvement=preset.jet_min_improvement, boundary_hint=boundary,
                                      workspace=jet_workspace)
    if preset.fm_passes:
        cut = refine_arrays(arrays, parts, maxw, seed=seed, passes=preset.fm_passes,   # rebalances first if needed
                            localized=stall > 0, local_stall=stall, cut=cut, boundary_hint=boundary,
                            workspace=workspace)["cut"]
    # float sums of integer weights are exact (below 2^53); float weights are summed again
    # by metrics.edge_cut, the owner of the reported cut
    return parts, (int(round(cut)) if arrays[2].dtype.kind in "iu" else None), boundary


def localized_stall(preset, graph=None, finest=None, k=1):
    """Stall moves of FM's localized searches on ``graph``, a level of the hierarchy whose
    finest graph is ``finest``, in k blocks (0: no localized rounds): the preset's rounds when
    it asks for them, else short ones on every level of a sparse graph
    (SPARSE_LOCALIZED_MAX_DEGREE) and on large low-degree levels (see LOCALIZED_MIN_VERTICES)."""
    from .refine.fm import LOCAL_STALL_MOVES
    if preset.fm_localized:
        return LOCAL_STALL_MOVES
    if graph is None or finest is None:
        return 0
    if 2 * finest.m <= SPARSE_LOCALIZED_MAX_DEGREE * finest.n:
        return SPARSE_LOCALIZED_STALL_MOVES
    finest_n = finest.n
    if LOCALIZED_MIN_VERTICES <= graph.n <= LOCALIZED_MAX_SHARE * finest_n \
            and 2 * graph.m <= LOCALIZED_MAX_DEGREE * graph.n and graph.n >= LOCALIZED_MIN_BLOCK_VERTICES * k:
        return LOCALIZED_STALL_MOVES
    return 0


def uncoarsen(levels, parts, k, lmax, preset, seed, say=None, contiguous=False, volume=None, grow=None):
    """Refine the coarsest level's partition ``parts``, then project it level by level to the
    finest, refining the levels that refined_levels picks; returns (parts, cut or None).
    ``contiguous``: after each refined level's refiners, make its blocks connected
    (refine.contiguity): a block split on a coarse level is mended where moving a piece is
    cheap, and the finer levels' refiners then repair its balance and cut. ``volume``: an
    objective.Volume to minimise the communication volume (volume FM after the cut refiners).
    ``grow``: a deep run's hook (deep.Grower): on each level, before its refiners, it may split
    the blocks further and names the level's blocks and bounds (``parts`` is then None: the
    hook partitions the coarsest level); the finest level's are the k blocks and ``lmax``.

    A projection keeps the cut (contraction sums the weights of the edges it merges) and
    maps boundary flags along with the blocks (a fine vertex on the boundary belongs to a
    coarse one on it).
    """
    from .refine import jet, parallel_fm
    refine = refined_levels([lv.graph for lv in levels], preset.refine_edge_shrink)
    depth = len(levels) - 1
    finest_n = levels[0].graph.n
    cut = boundary = workspace = None
    sizes = None if volume is None else _objective.level_sizes(levels, volume.sizes)
    base_preset = preset if volume is None else _objective.cut_preset(preset)
    # on a power-law graph k-way FM runs on the finest level only: its coarse levels are dense
    # (R-MAT 2^18: mean degree 142 on the first) and FM there took 1.1 s for a final cut 0.2%
    # higher; BA 2^16, k = 8, 32, seeds 1-3: 0.84-1.0 x the time at 0.998-1.001 x the cut.
    # 2-way FM keeps them: BA 2^16, k = 2, lost 0.6-0.8% of cut without it
    coarse_preset = replace(base_preset, fm_passes=0) if k > 2 and relabel.power_law(levels[0].graph) \
        else base_preset
    if preset.fm_passes and not levels[0].graph.backend.is_gpu and k > 2 \
            and finest_n >= parallel_fm.PARALLEL_FM_MIN_VERTICES:
        workspace = parallel_fm.new_workspace(finest_n)     # FM's scratch for every level
    # ... and Jet's (delaunay 2^20, k = 32: ~10 ms a run of fresh pages on the finest level alone)
    jet_workspace = None if levels[0].graph.backend.is_gpu else jet.new_workspace(finest_n, levels[0].graph.ewgt.dtype)
    level_k, level_lmax = k, lmax
    for i in range(depth, -1, -1):
        if i < depth:
            mapping = levels[i].mapping
            parts = parts[mapping]                # a fine vertex joins its coarse vertex's block
            boundary = None if boundary is None else boundary[mapping]
        if grow is not None:
            parts, level_k, level_lmax, split = grow(i, levels[i].graph, parts)
            if split:
                boundary = None
        if refine[i]:
            if say is not None and (i < depth or grow is not None):
                blocks = "" if grow is None else f" in {level_k} of {k} blocks"
                say(f"refining level {i} ({levels[i].graph.n} vertices){blocks}")
            g = levels[i].graph
            level_preset = base_preset if i == 0 else coarse_preset
            parts, cut, boundary = refine_level(g, parts, level_k, level_lmax, level_preset, seed + i, boundary,
                                                 localized_stall(level_preset, g, levels[0].graph, level_k),
                                                 workspace, jet_workspace)
            if volume is not None:
                boundary = _objective.refine_level(g, parts, k, lmax, sizes[i], seed + i, boundary, finest_n)
                cut = None
            if contiguous:
                parts = g.backend.to_device(connected_blocks(g, parts, k, lmax, seed + i, None, final=i == 0))
                cut = boundary = None
    return parts, cut


def _refine_level_gpu(graph, parts, k, lmax, preset, seed, local_stall):
    """The same steps on the device (whole-array Jet and rebalancing), then the CPU's k-way FM
    with the same localized rounds on a host copy of the level when the preset runs FM on
    GPU graphs: with integer weights the partition is the CPU's."""
    from .refine import jet_refine, rebalance
    from .refine.fm import refine_arrays
    from .refine.state import bounds_array, host_arrays
    be = graph.backend
    parts = jet_refine(graph, parts, k, lmax, seed=seed, patience=preset.jet_patience,
                       negative_gain_factor=preset.jet_negative_gain, min_improvement=preset.jet_min_improvement,
                       method="xp")
    if not balanced(graph, parts, k, lmax):
        parts = rebalance(graph, parts, k, lmax, seed=seed, method="xp")
    if preset.fm_passes and preset.fm_on_gpu:
        host = np.array(be.to_host(parts), dtype=np.int64)      # refine_arrays moves in place
        refine_arrays(host_arrays(graph.to("cpu")), host, bounds_array(lmax, k), seed=seed,
                      passes=preset.fm_passes, localized=local_stall > 0, local_stall=local_stall)
        parts = be.to_device(host)
    return be.xp.asarray(parts).astype(be.xp.int64, copy=False)


def refined_levels(graphs, edge_shrink):
    """Per graph of a hierarchy (finest first; anything with n and m, single-process or
    distributed): whether uncoarsening refines it.

    The finest level always is. A coarser level is refined when its mean degree is at most
    COARSE_MAX_DEGREE and, unless it is the coarsest, it has at most ``edge_shrink`` times
    the edges of the last refined (finer) level, and it is not a large level above a stalled
    coarsest graph (STALLED_MIN_VERTICES). Matching halves n on every level, but on
    power-law graphs m falls ~10% per level (ba 2^16: 262k, 233k, 216k, 206k, ... edges), so
    refining every level paid about 6 x the finest level's O(m) work for moves that the next
    refined level sees as well. Measured over the peers instances (default preset, 2 seeds,
    one run): 0.85 gave 0.934 x the time at 1.0008 x the cut (rmat, ba 2^16: 0.66-0.69 x the
    time, cut within +0.9%); 0.7 gave 0.90 x at 1.0024 x (ba k = 8: +4%). Meshes shrink m by
    about half per level: every level is refined.
    """
    depth = len(graphs) - 1
    keep = [True] * (depth + 1)
    last_m = graphs[0].m
    for i in range(1, depth + 1):
        g = graphs[i]
        keep[i] = 2 * g.m <= COARSE_MAX_DEGREE * g.n and (i == depth or g.m <= edge_shrink * last_m)
        if keep[i]:
            last_m = g.m
    if depth >= 2 and graphs[depth - 1].n >= STALLED_MIN_VERTICES \
            and graphs[depth].n > MIN_SHRINK * graphs[depth - 1].n:
        keep[depth - 1] = False
    return keep


def balanced(graph, parts, k, lmax):
    """Every block within its bound (lmax: one bound or k host bounds)."""
    be = graph.backend
    return bool((be.to_host(metrics.block_weights(graph, parts, k)) <= lmax).all())


def connected_blocks(g, parts, k, bounds, seed, progress, final=True):
    """refine.contiguity on the host (one pass after the multilevel run, O(m) per round)."""
    from .refine.contiguity import connect_blocks
    if progress is not None:
        progress("connecting blocks")
    h = g.backend.to_host
    bounds = np.broadcast_to(np.asarray(h(bounds) if hasattr(bounds, "shape") else bounds, dtype=np.float64), (k,))
    return connect_blocks(h(g.indptr), h(g.indices), h(g.ewgt), h(g.vwgt), h(parts), k, bounds, seed=seed,
                          final=final)
