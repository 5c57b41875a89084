"""The objective partition() minimises: the edge cut (METIS's objtype=cut) or the total
communication volume (objtype=vol, with METIS's vertex sizes); what the pipeline asks of it.

For the volume, the multilevel run is the cut's on the graph with unit edge weights
(coarsening, initial partitioning, Jet and FM on every level: a low unweighted cut is most
of a low volume), and the finest level then gets volume FM passes (refine/volume.py) with
the level's vertex sizes, the sums of the fine sizes each coarse vertex stands for (as
METIS coarsens vsize: they matter where VOLUME_MIN_LEVEL_SHARE admits coarse levels).
Runs and V-cycles are compared by volume. The volume refiner runs on the CPU only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import metrics
from .errors import UnsupportedOptionError

OBJTYPES = ("cut", "vol")
# Volume FM on the levels of at least VOLUME_MIN_LEVEL_SHARE of the finest level's vertices
# (1.0: the finest only), VOLUME_PASSES passes each, a pass stopping after VOLUME_STALL_MOVES
# moves without a new best (None: kway_fm's default_stall, 1% of n within 50..1000).
# A coarse level's volume, with summed sizes, is a loose proxy for the fine one. Measured on
# 4elt, PGPgiantcompo, rgg_n_2_15_s0, jazz and the ws, delaunay, rgg, grid3d_w 2^16 families,
# k = 8, 32, one run each, volume and time as geometric means over the cut objective's
# (loaded 2-core machine, so times are rough): every level, 2 passes: 0.965 x the volume in
# 2.4 x the time (ws 2^16 3-9% worse than the cut objective); levels >= 0.4 n: 2 passes,
# default stall 0.937 x in 1.86 x; 1 pass 0.949 x in 1.63 x; stall 50 0.941 x in 1.77 x;
# finest only, 2 passes, stall 100: 0.942 x in 1.54 x; 1 pass, stall 50: 0.955 x in 1.31 x.
VOLUME_PASSES = 2
VOLUME_STALL_MOVES = 100
VOLUME_MIN_LEVEL_SHARE = 1.0
# Whether the cut's FM pass still runs on each level before the volume passes (True), or the
# volume passes replace it (False: Jet, then volume FM). Same instances as above: False gave
# 1.005 x the volume in 0.91 x the time.
VOLUME_AFTER_CUT_FM = True


@dataclass(frozen=True)
class Volume:
    """The volume objective on a graph: ``sizes``, host float64 vertex sizes (ones by default)."""
    sizes: np.ndarray


def check_objtype(objtype, vsize, n):
    """None for the cut, a Volume for objtype "vol"; ValueError for anything else. ``vsize``
    (n sizes >= 0, METIS's vsize) only matters for the volume."""
    if not isinstance(objtype, str) or objtype not in OBJTYPES:
        raise ValueError(f"objtype must be one of {', '.join(map(repr, OBJTYPES))} (edge cut or total "
                         f"communication volume), got {objtype!r}")
    if objtype == "cut" and vsize is None:
        return None
    sizes = metrics.check_vertex_sizes(vsize, n)      # checked either way: a bad vsize is an error
    return Volume(sizes) if objtype == "vol" else None


def device_for(volume, device):
    """The device to run on: the volume refiner is CPU code, so "auto" means the CPU for it and
    an explicit "gpu" is an UnsupportedOptionError (the GPU's whole-array refiners minimise the
    cut only)."""
    if volume is None:
        return device
    if device == "gpu":
        raise UnsupportedOptionError("objtype='vol' runs on the CPU only: the GPU refiners (Jet, rebalancing) "
                                     "minimise the edge cut; pass device='cpu' or 'auto'", "objtype")
    return "cpu" if device == "auto" else device


def run_graph(graph, volume):
    """The graph the multilevel run partitions: ``graph`` for the cut; for the volume, the same
    graph with unit edge weights, since the volume does not depend on them and the cut
    refiners' proxy should not either (grid3d_w 2^16, whose weights are random: 0.87 x the
    volume with unit weights at k = 8 and 32; unweighted graphs are unchanged)."""
    if volume is None or graph.ewgt.dtype.kind in "iu" and graph.m and bool((graph.ewgt == 1).all()):
        return graph
    from .graph import Graph
    xp = graph.backend.xp
    return Graph._trusted(graph.indptr, graph.indices, xp.ones(graph.indices.shape[0], dtype=xp.int64), graph.vwgt,
                          graph.backend)


def level_sizes(levels, sizes):
    """Vertex sizes of every level of a hierarchy (finest first): a coarse vertex's size is the
    sum of its fine vertices' sizes."""
    out = [sizes]
    for i in range(len(levels) - 1):
        out.append(np.bincount(np.asarray(levels[i].mapping), weights=out[-1], minlength=levels[i + 1].graph.n))
    return out


def cut_preset(preset):
    """The preset the cut refiners run with under the volume objective (see VOLUME_AFTER_CUT_FM)."""
    import dataclasses
    return preset if VOLUME_AFTER_CUT_FM else dataclasses.replace(preset, fm_passes=0)


def refine_level(graph, parts, k, lmax, sizes, seed, boundary, finest_n):
    """Volume FM on one level (host int64 ``parts``, changed in place) when it has at least
    VOLUME_MIN_LEVEL_SHARE of ``finest_n`` vertices; returns the boundary flags, extended to
    cover the result (or None when none were given)."""
    if graph.n < VOLUME_MIN_LEVEL_SHARE * finest_n:
        return boundary
    from .refine.state import bounds_array, host_arrays
    from .refine.volume import volume_refine_arrays
    volume_refine_arrays(host_arrays(graph), parts, bounds_array(lmax, k), sizes, seed=seed, passes=VOLUME_PASSES,
                         stall=VOLUME_STALL_MOVES, boundary_hint=boundary)
    return boundary


def value(graph, parts, volume):
    """The total communication volume of ``parts`` with the objective's sizes."""
    return metrics.communication_volume(graph, parts, volume.sizes)
