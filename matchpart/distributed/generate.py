"""Generator specs built in parallel: each rank makes its own rows, no rank holds the graph.

``prgg:N`` (random geometric, points hashed from their index), ``prmat:SCALE[:EF]``
(R-MAT in counter-based chunks) and ``grid:AxB[xC]`` give the same graph for every number
of ranks, equal to ``matchpart.generate`` of the same spec in one process. Other specs
(delaunay, rgg, rmat, er, ba: sequential draws) are generated on rank 0 and scattered.
"""
from __future__ import annotations

import math

import numpy as np

from .. import generators as gen
from .. import generators_counter as ctr
from .comm import as_comm
from .dgraph import DistGraph, even_vtxdist

PARALLEL_SPECS = ("prgg", "prmat", "grid")


def parallel_spec(source):
    """The generator name when ``source`` is a spec this module builds in parallel, else None."""
    if not isinstance(source, str) or not gen.is_spec(source):
        return None
    name = source.split(":")[0].strip().lower()
    return name if name in PARALLEL_SPECS else None


def generate(spec, comm=None, seed=0):
    """This rank's DistGraph of ``spec`` (one of PARALLEL_SPECS; ``:seed=S`` as everywhere)."""
    c = as_comm(comm)
    parsed = None
    with c.collectively():
        parsed = _parse(spec, c.size, seed)
    name, sizes, seed = parsed
    if name == "prgg":
        return _rgg(sizes[0], seed, c)
    if name == "prmat":
        return _rmat(sizes[0], sizes[1], seed, c)
    return _grid(sizes, c)


def _parse(spec, ranks, seed):
    """(name, sizes, seed) with generators.from_spec's checks; memory is checked per rank."""
    name, args, options = gen._parse(spec)
    seed = options.get("seed", seed)
    lo, hi = gen._ARGS[name]
    if not lo <= len(args) <= hi:
        raise gen._spec_error(spec, f"{name} takes {lo if lo == hi else f'{lo} or {hi}'} argument(s) "
                                    f"({gen.USAGE[name]}), got {len(args)}")
    if name == "prgg":
        n = gen._count(spec, "N", args[0], 1)
        gen._check_memory(spec, n / ranks, n / ranks * math.pi * gen.RGG_RADIUS_FACTOR**2 * math.log(max(n, 2)))
        return name, (n,), seed
    if name == "prmat":
        scale = gen._count(spec, "SCALE", args[0], 1, gen.MAX_RMAT_SCALE)
        ef = gen._count(spec, "EF", args[1], 1) if len(args) > 1 else gen.RMAT_EDGEFACTOR
        gen._check_memory(spec, (1 << scale) / ranks, 2 * (ef << scale) / ranks)
        return name, (scale, ef), seed
    parts = args[0].lower().split("x")
    if not 2 <= len(parts) <= 3:
        raise gen._spec_error(spec, f"grid shape must look like 10x20 or 10x20x30, got {args[0]!r}")
    shape = tuple(gen._count(spec, "each grid size", p.strip(), 1) for p in parts)
    n = math.prod(shape)
    if n > gen.MAX_SPEC_VERTICES:
        raise gen._spec_error(spec, f"the grid has {n} vertices, at most {gen.MAX_SPEC_VERTICES} are allowed")
    gen._check_memory(spec, n / ranks, len(shape) * n / ranks)
    return name, shape, seed


def _rows_from_entries(c, vtxdist, src, dst):
    """DistGraph from this rank's entries (own global row, global column), repeats and
    self-loops allowed (removed here): rows sorted, unit weights, as generators._from_pairs."""
    first, last = int(vtxdist[c.rank]), int(vtxdist[c.rank + 1])
    n = int(vtxdist[-1])
    keep = src != dst
    key = np.unique((src[keep] - first) * n + dst[keep])   # sorts by row, then column
    rows, cols = np.divmod(key, n)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=last - first))]).astype(np.int64)
    return DistGraph(c, vtxdist, indptr, cols, np.ones(cols.shape[0], dtype=np.int64),
                     np.ones(last - first, dtype=np.int64))


def _rgg(n, seed, c):
    """Points are drawn in equal shares of their indices, sent to the owner of their cell row
    (rows of cells split evenly over the ranks), numbered there by (cell, index); each rank
    then sees the next cell rows' points (the halo: cells are as wide as the radius) and
    keeps the pairs with an own end."""
    cells, radius = ctr.rgg_cells(n), ctr.rgg_radius(n)
    row_first = np.array([cells * r // c.size for r in range(c.size + 1)], dtype=np.int64)
    lo, hi = n * c.rank // c.size, n * (c.rank + 1) // c.size
    x, y = ctr.rgg_points(n, seed, lo, hi)
    owner = np.searchsorted(row_first, ctr.cell_row(y, cells), side="right") - 1
    _, idx, xb, yb = c.exchange_packed(owner, np.arange(lo, hi), x.view(np.int64), y.view(np.int64))
    x, y = xb.view(np.float64), yb.view(np.float64)
    order = ctr.rgg_order(x, y, idx, cells)
    x, y = x[order], y[order]
    first = c.exscan(x.shape[0])
    vtxdist = np.concatenate([[0], np.cumsum(c.allgather(x.shape[0]))]).astype(np.int64)
    gid = np.arange(first, first + x.shape[0], dtype=np.int64)
    # every point goes to the owners of the cell rows above and below its own, when other ranks
    row = ctr.cell_row(y, cells)
    dests, sel = [], []
    for step in (-1, 1):
        nb = row + step
        ok = (nb >= 0) & (nb < cells)
        q = np.searchsorted(row_first, nb[ok], side="right") - 1
        other = q != c.rank
        dests.append(q[other])
        sel.append(np.flatnonzero(ok)[other])
    sel = np.concatenate(sel)
    _, hid, hxb, hyb = c.exchange_packed(np.concatenate(dests), gid[sel], x[sel].view(np.int64),
                                         y[sel].view(np.int64))
    hid, uniq = np.unique(hid, return_index=True)   # a point of a one-row rank may come twice
    allx = np.concatenate([x, hxb[uniq].view(np.float64)])
    ally = np.concatenate([y, hyb[uniq].view(np.float64)])
    allg = np.concatenate([gid, hid])
    pairs = ctr.rgg_pairs(allx, ally, radius)
    nl = x.shape[0]
    a, b = pairs[:, 0], pairs[:, 1]
    own_a, own_b = a < nl, b < nl
    src = np.concatenate([allg[a[own_a]], allg[b[own_b]]])
    dst = np.concatenate([allg[b[own_a]], allg[a[own_b]]])
    return _rows_from_entries(c, vtxdist, src, dst)


def _rmat(scale, ef, seed, c):
    """Rank r draws chunks r*C/P .. (r+1)*C/P-1 and sends each edge to the owners of both
    ends (vertices split evenly: the scrambled ids spread the high degrees)."""
    n = 1 << scale
    vtxdist = even_vtxdist(n, c.size)
    chunks = ctr.rmat_chunks(scale, ef)
    us, vs = [], []
    for i in range(chunks * c.rank // c.size, chunks * (c.rank + 1) // c.size):
        u, v = ctr.rmat_chunk(scale, ef, seed, i)
        keep = u != v
        us.append(u[keep])
        vs.append(v[keep])
    u = np.concatenate(us) if us else np.zeros(0, dtype=np.int64)
    v = np.concatenate(vs) if vs else np.zeros(0, dtype=np.int64)
    src, dst = np.concatenate([u, v]), np.concatenate([v, u])
    del u, v, us, vs
    owner = np.searchsorted(vtxdist, src, side="right") - 1
    _, src, dst = c.exchange_packed(owner, src, dst)
    return _rows_from_entries(c, vtxdist, src, dst)


def _grid(shape, c):
    """Row-major grid: a vertex's neighbours are +-1 along each axis, computed from its id."""
    n = math.prod(shape)
    vtxdist = even_vtxdist(n, c.size)
    ids = np.arange(vtxdist[c.rank], vtxdist[c.rank + 1], dtype=np.int64)
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    src, dst = [], []
    for d, s in enumerate(strides):
        coord = (ids // s) % shape[d]
        for step, ok in ((-s, coord > 0), (s, coord < shape[d] - 1)):
            src.append(ids[ok])
            dst.append(ids[ok] + step)
    return _rows_from_entries(c, vtxdist, np.concatenate(src), np.concatenate(dst))
