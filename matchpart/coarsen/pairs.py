"""CPU kernels for a level's pairing bookkeeping: the weight cap on pairs and the coarse ids.

On delaunay 2^20 the whole-array versions (hierarchy.drop_heavy_pairs plus a count of the
matched vertices, contract.mapping_from_matching) took ~40 ms of the ~1 s coarsening, in
about ten passes over the vertices with temporaries; each is one pass here. The whole-array
versions stay the GPU's formulation, and tests hold the two equal.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit


def drop_heavy_pairs_host(vwgt, mate, cap):
    """(mate with every pair heavier than ``cap`` unpaired (a new int64 array), number of
    paired vertices left): hierarchy.drop_heavy_pairs and its count, on host arrays."""
    out = np.empty(mate.shape[0], dtype=np.int64)   # numpy's allocation: huge pages
    return out, int(_drop_heavy_kernel(vwgt, mate, float(cap), out))


@njit(cache=True)
def _drop_heavy_kernel(vwgt, mate, cap, out):
    # the same comparison as the whole-array version: the pair's summed weight (in vwgt's
    # dtype) against the float cap
    paired = 0
    for v in range(mate.shape[0]):
        p = mate[v]
        if p >= 0 and vwgt[v] + vwgt[p] > cap:
            p = -1
        out[v] = p
        paired += p >= 0
    return paired


def mapping_from_matching_host(mate):
    """contract.mapping_from_matching on a host mate array: (mapping int64, n_coarse)."""
    mapping = np.empty(mate.shape[0], dtype=np.int64)
    return mapping, int(_leader_mapping_kernel(np.ascontiguousarray(mate), mapping))


@njit(cache=True)
def _leader_mapping_kernel(mate, mapping):
    # v leads its pair when it is the smaller end (or unpaired); leaders are numbered in id
    # order, and the other end, being larger, finds its leader's id already set
    nc = 0
    for v in range(mate.shape[0]):
        p = mate[v]
        if p < 0 or p > v:
            mapping[v] = nc
            nc += 1
        else:
            mapping[v] = mapping[p]
    return nc
