"""ParMETIS's call shape: ``part_kway`` (ParMETIS_V3_PartKway) on every rank with its own rows.

    edgecut, part = part_kway(vtxdist, xadj, adjncy, nparts, comm=comm)

Rank r passes the rows of its vertices vtxdist[r] .. vtxdist[r + 1] - 1 in CSR form with
0-based global neighbour ids (ParMETIS with numflag = 0), as ParMETIS takes them, and gets
back the total edge cut and the blocks of its own vertices. The partition is
``matchpart.distributed.partition``'s for the same graph and seed.
"""
from __future__ import annotations

import numpy as np

from .. import csrcheck
from ..errors import GraphError, UnsupportedOptionError
from .api import partition
from .comm import as_comm
from .dgraph import DistGraph
from .read import _check_symmetry

# tpwgts whose entries all lie within this of 1 / nparts are the uniform targets (ParMETIS
# users pass 1.0 / nparts, which does not sum to exactly 1 in floating point).
UNIFORM_TOLERANCE = 1e-9


def part_kway(vtxdist, xadj, adjncy, nparts, vwgt=None, adjwgt=None, tpwgts=None, ubvec=None, seed=0,
              comm=None, preset="default"):
    """k-way partition of a distributed graph, called on every rank of ``comm``.

    vtxdist: P + 1 non-decreasing vertex offsets (the same on every rank); xadj, adjncy: this
    rank's rows (xadj[0] = 0, 0-based global ids, symmetric over the whole graph, no
    self-loops or repeated neighbours); vwgt, adjwgt: vertex and edge weights (default 1);
    nparts: the number of blocks; tpwgts: target block fractions (uniform only: blocks of
    other sizes need the single-process ``target_weights``); ubvec: [1 + eps] (one
    constraint; default 1.03, ParMETIS's recommendation is 1.05); seed and preset as in
    ``partition``. Returns (edgecut, part) on every rank: part = int64 blocks of this rank's
    vertices. Errors (bad input on any rank) are raised on every rank as DistributedError.
    """
    c = as_comm(comm)
    arrays = None
    with c.collectively():
        arrays = _local_arrays(c.size, c.rank, vtxdist, xadj, adjncy, vwgt, adjwgt)
        eps = _eps_from(ubvec)
        _check_tpwgts(tpwgts, nparts)
    vtxdist, indptr, cols, ewgt, vw = arrays
    with c.collectively():
        if not all(np.array_equal(vtxdist, other) for other in c.allgather(vtxdist)):
            raise GraphError("vtxdist differs between ranks: every rank must pass the same offsets", kind="size")
    _check_symmetry(c, vtxdist, indptr, cols, ewgt, None, None, True)
    g = DistGraph(c, vtxdist, indptr, cols, ewgt, vw)
    result = partition(g, nparts, eps=eps, seed=seed, preset=preset, comm=c)
    return result.cut, result.local_parts


def _integers(name, values, length=None):
    a = np.asarray(values)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise GraphError(f"{name} must be a 1-D array of integers, got shape {a.shape} dtype {a.dtype}", kind="size")
    if length is not None and a.shape[0] != length:
        raise GraphError(f"{name} has {a.shape[0]} entries, expected {length}", kind="size")
    return a.astype(np.int64)


def _local_arrays(size, rank, vtxdist, xadj, adjncy, vwgt, adjwgt):
    """This rank's checked arrays: (vtxdist, indptr, cols, ewgt, vwgt) with rows sorted."""
    vtxdist = _integers("vtxdist", vtxdist, size + 1)
    if vtxdist[0] != 0 or (np.diff(vtxdist) < 0).any():
        raise GraphError(f"vtxdist must start at 0 and never decrease, got {vtxdist.tolist()}", kind="size")
    n, first, n_local = int(vtxdist[-1]), int(vtxdist[rank]), int(vtxdist[rank + 1] - vtxdist[rank])
    indptr = _integers("xadj", xadj, n_local + 1)
    if indptr[0] != 0 or (np.diff(indptr) < 0).any():
        raise GraphError("xadj must start at 0 and never decrease (this rank's rows)", kind="size")
    cols = _integers("adjncy", adjncy, int(indptr[-1]))
    bad = np.flatnonzero((cols < 0) | (cols >= n))
    if bad.shape[0]:
        u = int(np.searchsorted(indptr, bad[0], side="right") - 1) + first
        raise GraphError(f"vertex {u} lists neighbour {int(cols[bad[0]])}, outside 0..{n - 1}", u,
                         int(cols[bad[0]]), kind="out_of_range")
    ewgt = np.ones(cols.shape[0], dtype=np.int64) if adjwgt is None else _weights("adjwgt", adjwgt, cols.shape[0])
    if (ewgt <= 0).any():
        raise GraphError("adjwgt must be positive", kind="bad_weight")
    vw = np.ones(n_local, dtype=np.int64) if vwgt is None else _weights("vwgt", vwgt, n_local)
    if (vw < 0).any():
        raise GraphError("vwgt must be non-negative", kind="bad_weight")
    rows = np.repeat(np.arange(n_local, dtype=np.int64), np.diff(indptr)) + first
    loops = np.flatnonzero(cols == rows)
    if loops.shape[0]:
        u = int(rows[loops[0]])
        raise GraphError(f"vertex {u} lists itself as a neighbour (self-loop)", u, u, kind="self_loop")
    indptr, cols, ewgt = indptr.copy(), cols.copy(), ewgt.copy()
    csrcheck.sort_rows(indptr, cols, ewgt)
    k = csrcheck.first_duplicate(indptr, cols)
    if k >= 0:
        u = int(np.searchsorted(indptr, k, side="right") - 1) + first
        raise GraphError(f"vertex {u} lists neighbour {int(cols[k])} more than once", u, int(cols[k]),
                         kind="duplicate")
    return vtxdist, indptr, cols, ewgt, vw


def _weights(name, values, length):
    a = np.asarray(values)
    if a.ndim == 2 and a.shape[0] == length and name == "vwgt":
        raise UnsupportedOptionError("several weights per vertex (ncon > 1) are not supported by part_kway yet",
                                     option="ncon")
    if a.ndim != 1 or a.shape[0] != length or (a.size and a.dtype.kind not in "iu"):
        raise GraphError(f"{name} must hold {length} integers for this rank, got shape {a.shape} dtype {a.dtype}",
                         kind="size")
    return a.astype(np.int64)


def _eps_from(ubvec):
    if ubvec is None:
        return 0.03
    u = np.atleast_1d(np.asarray(ubvec, dtype=np.float64))
    if u.shape[0] != 1:
        raise UnsupportedOptionError(f"ubvec has {u.shape[0]} entries: one balance constraint (ncon = 1) is "
                                     "supported", option="ubvec")
    if not np.isfinite(u[0]) or u[0] < 1.0:
        raise ValueError(f"ubvec must be >= 1 (1 + the allowed imbalance), got {u[0]}")
    return float(u[0]) - 1.0


def _check_tpwgts(tpwgts, nparts):
    if tpwgts is None:
        return
    t = np.asarray(tpwgts, dtype=np.float64).reshape(-1)
    if isinstance(nparts, (int, np.integer)) and nparts > 0 and t.shape[0] != nparts:
        raise ValueError(f"tpwgts has {t.shape[0]} entries for nparts={nparts}")
    if t.shape[0] and np.abs(t - 1.0 / t.shape[0]).max() > UNIFORM_TOLERANCE:
        raise UnsupportedOptionError("non-uniform tpwgts are not supported by the distributed partitioner; "
                                     "matchpart.partition(..., target_weights=...) takes them on one process",
                                     option="tpwgts")
