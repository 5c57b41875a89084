"""Renumbering a distributed graph read in parallel: breadth-first where its ids have no
locality, by degree where it is power-law (degree_renumbered).

A METIS file read in parallel keeps its numbering, and with ids in random order (graphs
generated or stored that way) nearly every neighbour of a rank's vertices lies on another
rank: delaunay 2^20 at P = 2 had 512k ghosts per 524k own vertices, and its partition took
1.33 x P = 1's time. Here the ranks number such a graph breadth-first together and move
every row to the rank that owns its new id, as rank 0 does before scattering a graph
(dgraph.scatter_graph): each rank then holds a band of consecutive levels, whose ghosts are
the levels at its band's ends.

The order is a function of the graph, not of the number of ranks: a search from the
smallest vertex not yet reached, level by level, at most MAX_SEARCHES of them (the vertices
none reached keep their input order after the others); a vertex's new id orders it by
(its level, counted on across searches, then its input id). Within a level the order is
the input's, so neighbours lie within the three levels around their own, a few thousand ids
on meshes. Each level costs the ranks one exchange of the ghosts it reached and one sum.
"""
from __future__ import annotations

import numpy as np

from .. import numbering, relabel
from ..coarsen.rowsort import sort_rows_distinct
from ..jit import njit
from .dgraph import RENUMBER_MIN_VERTICES, DistGraph, even_vtxdist

# Searches from the smallest unreached vertex before the rest keep their input order: each
# costs a global minimum and a pass over the own vertices, and graphs of many components
# (isolated vertices, small pieces) would otherwise pay one search each.
MAX_SEARCHES = 16


def scattered(dg) -> bool:
    """Collective: whether ``dg`` has RENUMBER_MIN_VERTICES vertices or more, is not
    power-law (relabel.heavy_tailed: a search of a graph of small diameter puts neighbours in
    every level) and its numbering keeps few neighbours close (numbering.scattered_ids' test on
    the same sample of rows, whatever the number of ranks)."""
    c = dg.comm
    degrees = np.diff(dg.indptr)
    most = c.allreduce(int(degrees.max()) if degrees.shape[0] else 0, op="max")
    if dg.n < RENUMBER_MIN_VERTICES or dg.m == 0 or relabel.heavy_tailed(most, dg.n, dg.m):
        return False
    step = max(1, dg.n // numbering.SAMPLE_ROWS)
    rows = np.arange(-(-dg.first // step) * step, dg.last, step, dtype=np.int64)
    window = min(numbering.LOCAL_WINDOW_MAX, dg.n // numbering.LOCAL_WINDOW_SHARE)
    near = _near_entries(rows - dg.first, rows, dg.indptr, dg.cols, window)
    counts = c.allreduce(np.array([near, int((dg.indptr[rows - dg.first + 1] - dg.indptr[rows - dg.first]).sum())],
                                  dtype=np.int64))
    return counts[1] > 0 and counts[0] <= numbering.SCATTERED_MAX_LOCAL * counts[1]


@njit(cache=True)
def _near_entries(local_rows, rows, indptr, cols, window):
    near = 0
    for i in range(local_rows.shape[0]):
        v = local_rows[i]
        for e in range(indptr[v], indptr[v + 1]):
            near += abs(cols[e] - rows[i]) <= window
    return near


def bfs_renumbered(dg) -> DistGraph:
    """Collective: ``dg`` numbered breadth-first (see the module's text), its rows moved to
    the ranks that own their new ids (n / P vertices each); ``input_ids`` keep every own
    vertex's input id (see DistGraph.gather_in_input_order)."""
    c = dg.comm
    return _moved(dg, _new_ids(c, _levels(dg)), even_vtxdist(dg.n, c.size))


def skewed(dg) -> bool:
    """Collective: whether ``dg`` is numbered by degree (degree_renumbered): the single
    process's rule for relabelling (relabel.skewed), on the global graph."""
    c = dg.comm
    degrees = np.diff(dg.indptr)
    most = c.allreduce(int(degrees.max()) if degrees.shape[0] else 0, op="max")
    return dg.n >= relabel.RELABEL_MIN_VERTICES and relabel.heavy_tailed(most, dg.n, dg.m)


def degree_renumbered(dg) -> DistGraph:
    """Collective: ``dg`` in the single process's degree order (relabel.degree_order: degree
    buckets from the highest, input ids increasing within a bucket), dealt round-robin to the
    ranks: place i of that order goes to rank i mod P, which keeps its share in that order.

    On a power-law graph most entries of every row point at the few hubs; numbered first,
    their per-vertex data shares a few hot cache lines (relabel.py). Dealt, every rank holds
    an equal share of every bucket: given to rank 0 whole, the hubs put nearly every edge
    across the ranks (R-MAT 2^18, k = 32, P = 2: 1.32 x the cut). R-MAT 2^18 read from a file
    in the generator's order, one thread per rank (benchmarks/distributed.py, two runs against
    the three before): partition time P = 1 4.19-4.73 -> 2.71-2.82 s, P = 2 2.31-2.72 ->
    1.86-2.02 s, the cut within 0.3%. ``input_ids`` as for bfs_renumbered."""
    c = dg.comm
    bucket = relabel.degree_bucket(np, np.diff(dg.indptr))
    top = c.allreduce(int(bucket.max()) if bucket.shape[0] else 0, op="max")
    place = _new_ids(c, top - bucket)           # place in the global degree order
    sizes = (dg.n - np.arange(c.size, dtype=np.int64) + c.size - 1) // c.size   # rank r: places r, r + P, ...
    vtxdist = np.concatenate([[0], np.cumsum(sizes)])
    return _moved(dg, vtxdist[place % c.size] + place // c.size, vtxdist)


def _moved(dg, new_id, vtxdist) -> DistGraph:
    """Collective: ``dg`` renamed by ``new_id`` (of every own vertex; a permutation of 0..n-1
    over the ranks), each row moved to the rank that owns its new id under ``vtxdist``."""
    c = dg.comm
    ghost_new = dg.ghost_values(new_id)
    with c.collectively():
        order = np.argsort(new_id, kind="stable")     # by new id, so grouped by the new owner
        dest = np.searchsorted(vtxdist, new_id[order], side="right") - 1
        renamed = np.concatenate([new_id, ghost_new])[dg.adj]
        deg, cols, ewgt = _rows_in_order(dg.indptr, renamed, dg.ewgt, order)
        per_rank = np.bincount(dest, minlength=c.size)
        entries = np.bincount(dest, weights=deg, minlength=c.size).astype(np.int64)
    ids, _ = c.alltoallv(new_id[order], per_rank)
    input_ids, _ = c.alltoallv(dg.local_input_ids()[order], per_rank)
    vwgt, _ = c.alltoallv(dg.vwgt[order], per_rank)
    deg, _ = c.alltoallv(deg, per_rank)
    cols, _ = c.alltoallv(cols, entries)
    ewgt, _ = c.alltoallv(ewgt, entries)
    del order, dest, ghost_new, renamed
    with c.collectively():
        # every source sent its rows in new-id order: one stable sort puts them in place
        order = np.argsort(ids, kind="stable")
        first, last = int(vtxdist[c.rank]), int(vtxdist[c.rank + 1])
        if not np.array_equal(ids[order], np.arange(first, last)):
            raise RuntimeError("renumbering lost vertices")     # a bug, not an input error
        indptr = np.zeros(deg.shape[0] + 1, dtype=np.int64)
        np.cumsum(deg, out=indptr[1:])
        deg, cols, ewgt = _rows_in_order(indptr, cols, ewgt, order)
        indptr[1:] = np.cumsum(deg)
        sort_rows_distinct(indptr, cols, ewgt)
    out = DistGraph(c, vtxdist, indptr, cols, ewgt, vwgt[order])
    out.input_ids = input_ids[order]
    return out


def _levels(dg):
    """Collective: each own vertex's level in the searches (see the module's text)."""
    c = dg.comm
    level = np.full(dg.n_local, -1, dtype=np.int64)
    ghost_reached = np.zeros(dg.ghosts.shape[0], dtype=np.bool_)
    depth = 0
    for search in range(MAX_SEARCHES + 1):
        unreached = np.flatnonzero(level < 0)
        root = c.allreduce(int(unreached[0]) + dg.first if unreached.shape[0] else dg.n, op="min")
        if root >= dg.n:
            break
        if search == MAX_SEARCHES:      # the rest: one more level, in input order
            level[unreached] = depth
            break
        frontier = np.array([root - dg.first] if dg.first <= root < dg.last else [], dtype=np.int64)
        level[frontier] = depth
        while True:
            own, ghosts = _expand(frontier, dg.indptr, dg.adj, level, ghost_reached, depth + 1, dg.n_local)
            gids = dg.ghosts[ghosts]
            (got,) = c.exchange(dg.owner(gids), gids)
            frontier = np.concatenate([own, _reach(got - dg.first, level, depth + 1)])
            depth += 1
            if c.allreduce(frontier.shape[0]) == 0:
                break
    return level


@njit(cache=True)
def _expand(frontier, indptr, adj, level, ghost_reached, next_level, n_local):
    """The own vertices that the rows of ``frontier`` reach first (their level set to
    next_level) and the ghosts they reach that no earlier level sent (ghost indices)."""
    bound = 0
    for v in frontier:
        bound += indptr[v + 1] - indptr[v]
    own = np.empty(bound, dtype=np.int64)
    ghosts = np.empty(bound, dtype=np.int64)
    n_own = n_ghosts = 0
    for v in frontier:
        for e in range(indptr[v], indptr[v + 1]):
            u = adj[e]
            if u < n_local:
                if level[u] < 0:
                    level[u] = next_level
                    own[n_own] = u
                    n_own += 1
            elif not ghost_reached[u - n_local]:
                ghost_reached[u - n_local] = True
                ghosts[n_ghosts] = u - n_local
                n_ghosts += 1
    return own[:n_own], np.sort(ghosts[:n_ghosts])


@njit(cache=True)
def _reach(local, level, next_level):
    """The vertices of ``local`` (own indices) not reached before, their level set."""
    out = np.empty(local.shape[0], dtype=np.int64)
    count = 0
    for u in local:
        if level[u] < 0:
            level[u] = next_level
            out[count] = u
            count += 1
    return out[:count]


def _new_ids(c, level):
    """New id of each own vertex: by (level, input id) over all ranks."""
    levels = c.allreduce(int(level.max()) + 1 if level.shape[0] else 0, op="max")
    counts = np.bincount(level, minlength=levels)
    every = c.allgatherv(counts).reshape(c.size, levels)
    start = np.concatenate([[0], np.cumsum(every.sum(axis=0))[:-1]]) + every[:c.rank].sum(axis=0)
    order = np.argsort(level, kind="stable")
    first_of_level = np.concatenate([[0], np.cumsum(counts)[:-1]])
    new_id = np.empty(level.shape[0], dtype=np.int64)
    sorted_levels = level[order]
    new_id[order] = start[sorted_levels] + np.arange(level.shape[0]) - first_of_level[sorted_levels]
    return new_id


@njit(cache=True)
def _rows_in_order(indptr, cols, ewgt, order):
    """(degrees, cols, ewgt) of the rows ``order``, in that order."""
    deg = np.empty(order.shape[0], dtype=np.int64)
    total = 0
    for i in range(order.shape[0]):
        deg[i] = indptr[order[i] + 1] - indptr[order[i]]
        total += deg[i]
    out_cols = np.empty(total, dtype=np.int64)
    out_w = np.empty(total, dtype=ewgt.dtype)
    at = 0
    for i in range(order.shape[0]):
        for e in range(indptr[order[i]], indptr[order[i] + 1]):
            out_cols[at] = cols[e]
            out_w[at] = ewgt[e]
            at += 1
    return deg, out_cols, out_w
