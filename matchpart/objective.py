"""The objective partition() minimises: the edge cut (METIS's objtype=cut) or the total
communication volume (objtype=vol, with METIS's vertex sizes); what the pipeline asks of it.

For the volume, the multilevel run is the cut's (coarsening, initial partitioning, Jet and
FM on every level: a low cut is most of a low volume), and every refined level then gets
volume FM passes (refine/volume.py) with the level's vertex sizes, the sums of the fine
sizes each coarse vertex stands for (as METIS coarsens vsize). Runs and V-cycles are
compared by volume. The volume refiner runs on the CPU only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import metrics
from .errors import UnsupportedOptionError

OBJTYPES = ("cut", "vol")
# Volume FM passes per refined level. Measured with the default preset over the shared graphs
# and 2^16 families (k = 8, 32): see VOLUME_AFTER_CUT_FM.
VOLUME_PASSES = 2
# Whether the cut's FM pass still runs on each level before the volume passes (True), or the
# volume passes replace it (False: Jet, then volume FM).
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


def refine_level(graph, parts, k, lmax, sizes, seed, boundary):
    """Volume FM on one level (host int64 ``parts``, changed in place); returns the boundary
    flags, extended to cover the result (or None when none were given)."""
    from .refine.state import bounds_array, host_arrays
    from .refine.volume import volume_refine_arrays
    volume_refine_arrays(host_arrays(graph), parts, bounds_array(lmax, k), sizes, seed=seed, passes=VOLUME_PASSES,
                         boundary_hint=boundary)
    return boundary


def value(graph, parts, volume):
    """The total communication volume of ``parts`` with the objective's sizes."""
    return metrics.communication_volume(graph, parts, volume.sizes)
