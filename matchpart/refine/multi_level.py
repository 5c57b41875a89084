"""One level's refinement with several weights per vertex: rebalance when a block is over a
bound, then refine/multi.py's greedy rounds and refine/multi_fm.py's FM passes."""
from __future__ import annotations

import numpy as np

from .. import threads
from .multi import GREEDY_ROUNDS, REBALANCE_ROUNDS, greedy_nb, rebalance_nb, total_overload
from . import multi_fm


def _inverse_ideal(maxw):
    """1 / the mean bound of each constraint: overload in comparable units across constraints."""
    mean = np.asarray(maxw, dtype=np.float64).mean(axis=0)
    return np.where(mean > 0, 1.0 / np.maximum(mean, 1e-300), 1.0)


def block_weights_nc(parts, vw, k):
    """(k, c) float64 block weights of host arrays."""
    bw = np.zeros((k, vw.shape[1]), dtype=np.float64)
    for j in range(vw.shape[1]):
        bw[:, j] = np.bincount(parts, weights=vw[:, j], minlength=k)
    return bw


def refine_nc(indptr, indices, ewgt, vw, parts, maxw, *, seed=0, rounds=GREEDY_ROUNDS, fm_passes=0, cut=None,
              chunk=None, parallel_min=None):
    """Rebalance (when a block is over a bound), ``rounds`` greedy rounds, then ``fm_passes``
    FM passes, on host arrays: vw (n, c) vertex weights, maxw (k, c) bounds; ``parts`` (int64)
    is changed in place. ``chunk``/``parallel_min``: threads.CHUNK / PARALLEL_MIN_ITEMS at
    call time by default (tests shrink them). Returns the overload left (0 when every block
    is within every bound)."""
    chunk = threads.CHUNK if chunk is None else chunk
    parallel_min = threads.PARALLEL_MIN_ITEMS if parallel_min is None else parallel_min
    k = maxw.shape[0]
    vwf = np.ascontiguousarray(vw, dtype=np.float64)
    maxf = np.ascontiguousarray(maxw, dtype=np.float64)
    ewf = ewgt.astype(np.float64, copy=False)
    inv = _inverse_ideal(maxf)
    bw = block_weights_nc(parts, vwf, k)
    over = total_overload(bw, maxf, inv)
    if over > 0:
        over = rebalance_nb(indptr, indices, ewf, vwf, parts, bw, maxf, inv, int(seed), REBALANCE_ROUNDS,
                            int(chunk), int(parallel_min))
    if rounds:
        c = float(ewf.sum()) if cut is None else float(cut)
        greedy_nb(indptr, indices, ewf, vwf, parts, bw, maxf, inv, int(seed), int(rounds), c, int(chunk),
                  int(parallel_min))
    if fm_passes:
        multi_fm.fm_nb(indptr, indices, ewf, vwf, parts, bw, maxf, int(fm_passes), multi_fm.STALL_MOVES,
                       multi_fm.hub_degree(indptr, k))
    return over
