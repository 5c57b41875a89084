"""Breadth-first renumbering of graphs whose numbering has no locality.

Every phase reads per-vertex arrays (cluster ids, blocks, weights) at the neighbours of the
vertex it works on. When the ids of neighbours lie anywhere in 0..n-1 (graphs generated or
stored in random order), each of those reads is a cache miss: on rgg 2^20 (k = 32, default, one
thread) the first clustering level took 90% of the run at ~36 ns per entry. Numbered
breadth-first, a vertex's neighbours lie in the layers before and after its own, a few
thousand ids away: the partition itself took 0.4-0.5 x the time (5.3 s -> 2.1-2.8 s, CPU) at 0.97 x
the cut. The renumbering cost ~1-1.5 s there at one thread then (0.35 s now, one pass). The
pipeline applies it to graphs clustered from the first level (eight label-propagation rounds
per level read every neighbour's cluster) and to graphs coarsened by matching from
MATCHING_MIN_K blocks on (``pays``). Graphs whose numbering already keeps most neighbours close
(meshes from files, generated grids) keep it, and so do graphs below relabel.RELABEL_MIN_VERTICES.

The order is a pure function of the graph: a breadth-first search from each not yet reached
vertex in id order (so components come by their smallest vertex), neighbours queued in row
order; a vertex's new id is its place in the queue. Same order on the host (compiled passes
that also write the renumbered rows: level by level on the threads, one queue on one thread)
and on ``xp`` (the GPU's: minimum-label components, then every component's search at once,
level by level).
"""
from __future__ import annotations

import numba
import numpy as np
from numba import prange

from . import numbering, relabel
from .coarsen.rowsort import RANK_SORT_MAX, _rank_sort_row, _sort_row
from .graph import Graph
from .jit import njit
from .prefetch import PREFETCH_DISTANCE, prefetch
from .threads import PRANGE_ONLY

# A graph coarsened by matching is renumbered from this many blocks on: there the refiners
# and the initial partitioning, which read every neighbour's block on every level, are most of
# the run and the renumbering's one pass (0.28 s on delaunay 2^20, 2 threads) repays itself.
# Default preset, 2 threads, delaunay 2^20 (random ids), renumbered / as given: k = 8192
# 0.80 x the time, k = 256 0.84 x, k = 1024 0.92 x, 2^19 k = 512 and 4096 0.91 x and 0.85 x,
# cuts -0.5% to +0.6%; k = 32 1.10 x and k = 128 1.01 x (one pass more than the matching
# levels save), delaunay 2^18 k = 1024 1.02 x.
MATCHING_MIN_K = 256


def scattered(graph, min_vertices=None) -> bool:
    """Whether ``graph`` has at least ``min_vertices`` vertices (default
    relabel.RELABEL_MIN_VERTICES) and is numbered so that few neighbours lie close in id
    (numbering.scattered_ids)."""
    if graph.n < (relabel.RELABEL_MIN_VERTICES if min_vertices is None else min_vertices):
        return False
    return numbering.scattered_ids(graph)


def pays(graph, k, clustered) -> bool:
    """Whether ``partition`` renumbers ``graph`` breadth-first for k blocks: a scattered graph
    that coarsening clusters from its first level (``clustered``) or, coarsened by matching,
    split into MATCHING_MIN_K blocks or more."""
    return (bool(clustered) or k >= MATCHING_MIN_K) and scattered(graph)


def bfs_relabel(graph):
    """(order, the graph renumbered): order[i] = the old id of new vertex i in breadth-first
    discovery order (see the module's text); the graph as ``relabel.relabel(graph, order)``
    gives it, on the same device."""
    be = graph.backend
    if be.is_gpu:
        order = bfs_order(graph)
        return order, relabel.relabel(graph, order)
    order, new_indptr, new_indices, new_ewgt = bfs_relabel_arrays(graph.indptr, graph.indices, graph.ewgt)
    return order, Graph._trusted(new_indptr, new_indices, new_ewgt, graph.vwgt[order], be)


def bfs_relabel_arrays(indptr, indices, ewgt):
    """bfs_relabel on host CSR arrays: (order, indptr, indices, ewgt) of the renumbered graph
    (the ordering's renumbering, order/locality.py, uses it too); the level-by-level kernel on
    the threads, the queue on one thread (the same result)."""
    indptr, indices, ewgt = np.asarray(indptr, dtype=np.int64), np.asarray(indices), np.asarray(ewgt)
    if numba.get_num_threads() == 1:
        return _bfs_queue_nb(indptr, indices, ewgt)
    return bfs_levels(indptr, indices, ewgt, LEVEL_CHUNK, LEVEL_PARALLEL_MIN)


def bfs_levels(indptr, indices, ewgt, chunk, parallel_min):
    """_bfs_relabel_nb with its arrays from numpy, which asks for transparent huge pages on
    arrays of 4 MiB and more (numba's allocator does not): rgg 2^20, 2 threads, a process's
    first partition 321 -> 278 ms, 48k page faults -> 4k (later runs reuse freed memory: ~226 ms)."""
    n = indptr.shape[0] - 1
    out = (np.full(n, -1, dtype=indices.dtype), np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64),
           np.empty_like(indices), np.empty_like(ewgt), np.empty(n, dtype=np.int64))
    return _bfs_relabel_nb(indptr, indices, ewgt, chunk, parallel_min, *out)


def bfs_order(graph):
    """The order of bfs_relabel alone (a device array)."""
    be = graph.backend
    if not be.is_gpu:
        return bfs_relabel(graph)[0]
    return _bfs_order_xp(be, graph)


# On the threads the search runs level by level: a vertex of the next level is numbered by
# the first entry that reaches it in the rows of this level, in their order, which is the
# queue's order, so the numbering is the one queue's. A level's rows are renamed on the threads
# in chunks of LEVEL_CHUNK places (a level of fewer than LEVEL_PARALLEL_MIN entries on one
# thread); only numbering the next level is serial, a walk over the entries that reach it
# (a third of them on rgg). rgg 2^20 (13.8M entries, 590 levels): 0.29-0.31 s with the queue,
# 0.25 s on 2 threads (0.38 s on one, where the queue stays: _bfs_queue_nb).
LEVEL_CHUNK = 256
LEVEL_PARALLEL_MIN = 1 << 14
# Rows are visited in the search's order, one random jump each, and every entry reads the place
# of a random vertex: both kernels prefetch the row start of the vertex 2 x ROW_PREFETCH_AHEAD
# places on, the row (first and last line) ROW_PREFETCH_AHEAD on, and the places of the
# neighbours POS_PREFETCH_AHEAD on, each load's address known by then (rgg 2^20, the queue:
# 0.54 -> 0.35 s; the row alone 4 places ahead was the 0.54 s). The lines are written out in
# both: as one shared function they cost the queue 7-10% (0.30 -> 0.33 s).
ROW_PREFETCH_AHEAD = 8
POS_PREFETCH_AHEAD = 4


@njit(cache=True, parallel=PRANGE_ONLY)
def _bfs_relabel_nb(indptr, indices, ewgt, chunk, parallel_min, pos, order, new_indptr, new_indices, new_ewgt, split):
    """Breadth-first search from each unvisited vertex in id order, level by level; a
    vertex's new id is its place in the search. Returns (order, indptr, indices, ewgt) of the
    renumbered graph (rows sorted), the same for any number of threads and as _bfs_queue_nb's:
    every write has its place fixed by the data, and only the numbering is serial. Arrays from
    bfs_levels (pos all -1; split: where a place's row's entries to unnumbered vertices start)."""
    n = indptr.shape[0] - 1
    new_indptr[0] = 0
    mean_degree = indices.shape[0] / max(n, 1)
    tail = 0
    root = 0
    while tail < n:
        while pos[root] >= 0:
            root += 1
        pos[root] = tail
        order[tail] = root
        tail += 1
        done = tail - 1     # the places before done have their rows finished, those up to lo but their sort
        lo = tail - 1
        while lo < tail:
            hi = tail
            # the level's row lengths (a random read each), then their ends
            chunks = (hi - lo + chunk - 1) // chunk
            if (hi - lo) * mean_degree >= parallel_min:
                for c in prange(chunks):
                    _level_row_lengths(np.int64(c), lo, hi, chunk, indptr, order, new_indptr)
            else:
                for c in range(chunks):
                    _level_row_lengths(c, lo, hi, chunk, indptr, order, new_indptr)
            for h in range(lo, hi):
                new_indptr[h + 1] += new_indptr[h]
            # one pass: sort the entries the last numbering renamed, rename this level's rows
            sorts = (lo - done + chunk - 1) // chunk
            if new_indptr[hi] - new_indptr[done] >= parallel_min:
                for c in prange(sorts + chunks):
                    _level_chunk(np.int64(c), sorts, done, lo, hi, chunk, indptr, indices, ewgt, pos, order,
                                 new_indptr, new_indices, new_ewgt, split)
            else:
                for c in range(sorts + chunks):
                    _level_chunk(c, sorts, done, lo, hi, chunk, indptr, indices, ewgt, pos, order, new_indptr,
                                 new_indices, new_ewgt, split)
            tail = _number_next_level(lo, hi, tail, pos, order, new_indptr, new_indices, split)
            done = lo
            lo = hi
        for c in range((lo - done + chunk - 1) // chunk):       # the last level's sort
            _sort_level_tails(c, done, lo, chunk, new_indptr, new_indices, new_ewgt, split)
    return order, new_indptr, new_indices, new_ewgt


@njit(cache=True, internal=True)
def _level_chunk(c, sorts, done, lo, hi, chunk, indptr, indices, ewgt, pos, order, new_indptr, new_indices, new_ewgt,
                 split):
    """Chunk c of a level's pass: the first ``sorts`` chunks sort places done..lo-1, the others
    rename the rows of places lo..hi-1."""
    if c < sorts:
        _sort_level_tails(c, done, lo, chunk, new_indptr, new_indices, new_ewgt, split)
    else:
        _rename_level_rows(c - sorts, lo, hi, chunk, indptr, indices, ewgt, pos, order, new_indptr, new_indices,
                           new_ewgt, split)


@njit(cache=True, internal=True)
def _rename_level_rows(c, lo, hi, chunk, indptr, indices, ewgt, pos, order, new_indptr, new_indices, new_ewgt,
                       split):
    """The renamed rows of places lo + c * chunk ... (at most chunk of them, before hi): the
    entries to numbered vertices first, sorted, then those to unnumbered ones backwards from
    the row's end, as -1 - old id (the next level's numbering names them)."""
    first = lo + c * chunk
    last = min(first + chunk, hi)
    tc = np.empty(RANK_SORT_MAX, dtype=indices.dtype)
    tw = np.empty(RANK_SORT_MAX, dtype=ewgt.dtype)
    for h in range(first, last):
        if h + 2 * ROW_PREFETCH_AHEAD < last:
            prefetch(indptr, order[h + 2 * ROW_PREFETCH_AHEAD])
        if h + ROW_PREFETCH_AHEAD < last:
            w = order[h + ROW_PREFETCH_AHEAD]
            prefetch(indices, indptr[w])
            prefetch(indices, indptr[w + 1] - 1)
            prefetch(ewgt, indptr[w])
            prefetch(ewgt, indptr[w + 1] - 1)
        if h + POS_PREFETCH_AHEAD < last:
            w = order[h + POS_PREFETCH_AHEAD]
            for e in range(indptr[w], indptr[w + 1]):
                prefetch(pos, indices[e])
        v = order[h]
        s = new_indptr[h]
        f = s
        b = new_indptr[h + 1]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            p = pos[u]
            if p >= 0:
                new_indices[f] = p
                new_ewgt[f] = ewgt[e]
                f += 1
            else:
                b -= 1
                new_indices[b] = -1 - u
                new_ewgt[b] = ewgt[e]
        split[h] = f
        if f - s <= RANK_SORT_MAX:
            _rank_sort_row(new_indices, new_ewgt, s, f, tc, tw)
        else:
            _sort_row(new_indices, new_ewgt, s, f)


@njit(cache=True, internal=True)
def _level_row_lengths(c, lo, hi, chunk, indptr, order, new_indptr):
    """new_indptr[h + 1] = the row length of the vertex at place h, for the places
    lo + c * chunk ... (at most chunk of them, before hi)."""
    first = lo + c * chunk
    last = min(first + chunk, hi)
    for h in range(first, last):
        if h + PREFETCH_DISTANCE < last:
            prefetch(indptr, order[h + PREFETCH_DISTANCE])
        v = order[h]
        new_indptr[h + 1] = indptr[v + 1] - indptr[v]


@njit(cache=True, internal=True)
def _number_next_level(lo, hi, tail, pos, order, new_indptr, new_indices, split):
    """Number the vertices that the rows of places lo..hi-1 reach unnumbered, in the order of
    their first entries (the queue's order; a row keeps them backwards from its end), and
    rename those entries; returns the new tail."""
    for h in range(lo, hi):
        if h + POS_PREFETCH_AHEAD < hi:     # rows keep ~4 such entries: prefetch whole rows ahead
            for e in range(split[h + POS_PREFETCH_AHEAD], new_indptr[h + POS_PREFETCH_AHEAD + 1]):
                prefetch(pos, -1 - new_indices[e])
        f = split[h]
        for e in range(new_indptr[h + 1] - 1, f - 1, -1):
            u = -1 - new_indices[e]
            p = pos[u]
            if p < 0:
                p = tail
                pos[u] = p
                order[tail] = u
                tail += 1
            new_indices[e] = p
    return tail


@njit(cache=True, internal=True)
def _sort_level_tails(c, lo, hi, chunk, new_indptr, new_indices, new_ewgt, split):
    """Sort the entries that _number_next_level renamed (all above the row's other ids)."""
    first = lo + c * chunk
    last = min(first + chunk, hi)
    tc = np.empty(RANK_SORT_MAX, dtype=new_indices.dtype)
    tw = np.empty(RANK_SORT_MAX, dtype=new_ewgt.dtype)
    for h in range(first, last):
        s, f = split[h], new_indptr[h + 1]
        if f - s <= RANK_SORT_MAX:
            _rank_sort_row(new_indices, new_ewgt, s, f, tc, tw)
        else:
            _sort_row(new_indices, new_ewgt, s, f)


@njit(cache=True)
def _bfs_queue_nb(indptr, indices, ewgt):
    """_bfs_relabel_nb on one thread, with one queue: a vertex's new id is its place in the
    queue, known for all its neighbours once its row is scanned, so its renamed row is written
    (and sorted) right then: one random read per entry, where a search and then relabel.relabel
    took three (rgg 2^20, one thread: 0.45 + 1.0 s). The neighbours it queues get the next ids
    in row order, above every id given before, so only the row's other entries need sorting:
    they go first, the queued ones after them (the sort was 0.35 of 1.2 s)."""
    n = indptr.shape[0] - 1
    pos = np.full(n, -1, dtype=indices.dtype)
    order = np.empty(n, dtype=np.int64)
    new_indptr = np.empty(n + 1, dtype=np.int64)
    new_indices = np.empty_like(indices)
    new_ewgt = np.empty_like(ewgt)
    tc = np.empty(RANK_SORT_MAX, dtype=indices.dtype)
    tw = np.empty(RANK_SORT_MAX, dtype=ewgt.dtype)
    max_degree = 0
    for v in range(n):
        max_degree = max(max_degree, indptr[v + 1] - indptr[v])
    queued_w = np.empty(max_degree, dtype=ewgt.dtype)
    new_indptr[0] = 0
    head = 0
    tail = 0
    for root in range(n):
        if pos[root] >= 0:
            continue
        pos[root] = tail
        order[tail] = root
        tail += 1
        while head < tail:
            v = order[head]
            if head + 2 * ROW_PREFETCH_AHEAD < tail:
                prefetch(indptr, order[head + 2 * ROW_PREFETCH_AHEAD])
            if head + ROW_PREFETCH_AHEAD < tail:
                w = order[head + ROW_PREFETCH_AHEAD]
                prefetch(indices, indptr[w])
                prefetch(indices, indptr[w + 1] - 1)
                prefetch(ewgt, indptr[w])
                prefetch(ewgt, indptr[w + 1] - 1)
            if head + POS_PREFETCH_AHEAD < tail:
                w = order[head + POS_PREFETCH_AHEAD]
                for e in range(indptr[w], indptr[w + 1]):
                    prefetch(pos, indices[e])
            a = indptr[v]
            s = new_indptr[head]
            d = indptr[v + 1] - a
            f = s                   # end of the entries numbered before v's scan
            first = tail            # the first id v's scan gives
            for i in range(d):
                u = indices[a + i]
                p = pos[u]
                if p < 0:
                    pos[u] = tail
                    order[tail] = u
                    queued_w[tail - first] = ewgt[a + i]
                    tail += 1
                else:
                    new_indices[f] = p
                    new_ewgt[f] = ewgt[a + i]
                    f += 1
            for j in range(tail - first):
                new_indices[f + j] = first + j
                new_ewgt[f + j] = queued_w[j]
            if f - s <= RANK_SORT_MAX:
                _rank_sort_row(new_indices, new_ewgt, s, f, tc, tw)
            else:
                _sort_row(new_indices, new_ewgt, s, f)
            new_indptr[head + 1] = s + d
            head += 1
    return order, new_indptr, new_indices, new_ewgt


def _bfs_order_xp(be, graph):
    """Every component's search at once, level by level: a vertex reached on a level is
    ordered by the first entry that reaches it in the rows of the level before (in their
    order), which is the queue's order; then (component, level, that place)."""
    xp = be.xp
    n = graph.n
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cols = graph.indices.astype(xp.int64)
    # components: every vertex takes the smallest label among itself and its neighbours until
    # nothing changes; the label is then the component's smallest vertex
    root = xp.arange(n, dtype=xp.int64)
    while True:
        new = root.copy()
        be.scatter_min(new, rows, root[cols])
        if bool((new == root).all()):
            break
        root = new
    level = xp.full(n, -1, dtype=xp.int64)
    place = xp.zeros(n, dtype=xp.int64)
    frontier = xp.flatnonzero(root == xp.arange(n, dtype=xp.int64))    # the roots, in id order
    level[frontier] = 0
    depth = 0
    while frontier.shape[0]:
        start = graph.indptr[frontier].astype(xp.int64)
        entries, _ = be.ranges(start, graph.indptr[frontier + 1].astype(xp.int64) - start)
        reached = cols[entries]
        fresh = level[reached] < 0
        first = xp.full(n, entries.shape[0], dtype=xp.int64)
        be.scatter_min(first, reached[fresh], xp.flatnonzero(fresh))
        found = xp.unique(reached[fresh])
        frontier = found[xp.argsort(first[found])]
        depth += 1
        level[frontier] = depth
        place[frontier] = xp.arange(frontier.shape[0], dtype=xp.int64)
    return xp.lexsort(xp.stack([place, level, root]))
