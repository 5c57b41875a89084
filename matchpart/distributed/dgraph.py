"""DistGraph: one rank's piece of a graph under a 1-D block distribution (own rows + ghost map).

Rank r owns the contiguous global vertex range ``vtxdist[r] .. vtxdist[r+1]-1`` (ParMETIS's
vtxdist), stores those rows with global neighbour ids, and knows the remote neighbours
(ghosts) and which of its own vertices each other rank sees as ghosts, so that per-vertex
values (matched flags, coarse ids, blocks) reach the ghosts in one all-to-all.
"""
from __future__ import annotations

import numpy as np

from .. import backend, locality, relabel
from ..graph import Graph
from ..jit import njit
from .comm import as_comm

# A graph scattered from rank 0 whose ids have no locality (generated in random order) is
# numbered breadth-first first: with random ids nearly every neighbour of a rank's vertices
# lies on another rank. delaunay 2^18 at P = 2: 128k ghosts per 131k own vertices, and the
# partition took 1.10 x P = 1's time; numbered by locality 0.63 x (RCM order, same graph).
RENUMBER_MIN_VERTICES = 4096
# Scatter from rank 0 balances vertices + entries per rank (a row costs its length plus
# a constant for the per-vertex work), so that low- and high-degree regions cost alike.
ROW_COST = 1


def local_columns(cols, first, last, n=None):
    """(local index of every column: own v -> v - first, ghost j -> n_local + j, int32 while
    they fit (as the single process's indices: half the bytes every kernel reads); the
    sorted ghosts). ``n``: the global vertex count, when known: while the other ranks' ids
    are at most as many as this rank's entries, the ghosts are found by marking them in a
    table of those ids (memory of the rank's own size) instead of sorting the remote columns
    (R-MAT 2^18, P = 2: 0.35 s a rank for the sort on the four levels)."""
    small = (last - first) + cols.shape[0] < 2**31   # there are at most as many ghosts as entries
    adj = np.empty(cols.shape[0], dtype=np.int32 if small else np.int64)
    if n is not None and n - (last - first) <= cols.shape[0]:
        return _local_columns_by_table(cols, first, last, int(n), adj)
    return _local_columns(cols, first, last, adj)


@njit(cache=True)
def _local_columns_by_table(cols, first, last, n, adj):
    """_local_columns through a table of the n - (last - first) other ranks' ids: mark the
    remote columns, number the marked ids in increasing order, look each column up (the
    same ghosts, in the same order)."""
    nl = last - first
    slot = np.full(n - nl, -1, dtype=np.int64)   # remote id c at c (below first) or c - nl
    for e in range(cols.shape[0]):
        c = cols[e]
        if c < first:
            slot[c] = 0
        elif c >= last:
            slot[c - nl] = 0
    ng = 0
    for j in range(n - nl):
        if slot[j] == 0:
            slot[j] = ng
            ng += 1
    ghosts = np.empty(ng, dtype=np.int64)
    for j in range(n - nl):
        if slot[j] >= 0:
            ghosts[slot[j]] = j if j < first else j + nl
    for e in range(cols.shape[0]):
        c = cols[e]
        if c < first:
            adj[e] = nl + slot[c]
        elif c >= last:
            adj[e] = nl + slot[c - nl]
        else:
            adj[e] = c - first
    return adj, ghosts


@njit(cache=True)
def _local_columns(cols, first, last, adj):
    # one sort of the remote columns: np.unique then searchsorted took 1.4 s + 0.5 s of a
    # 12 s run on delaunay 2^20 at P = 2, where half of all entries are remote
    nl = last - first
    nr = 0
    for e in range(cols.shape[0]):
        nr += cols[e] < first or cols[e] >= last
    pos = np.empty(nr, dtype=np.int64)
    vals = np.empty(nr, dtype=np.int64)
    i = 0
    for e in range(cols.shape[0]):
        c = cols[e]
        if c < first or c >= last:
            pos[i], vals[i] = e, c
            i += 1
        else:
            adj[e] = c - first
    order = np.argsort(vals)
    ghosts = np.empty(nr, dtype=np.int64)
    ng = 0
    for t in range(nr):
        c = vals[order[t]]
        if ng == 0 or ghosts[ng - 1] != c:
            ghosts[ng] = c
            ng += 1
        adj[pos[order[t]]] = nl + ng - 1
    return adj, ghosts[:ng].copy()


class DistGraph:
    """This rank's rows of an undirected graph distributed by contiguous vertex ranges.

    Attributes: ``comm`` (a Comm), ``vtxdist`` (int64, P+1), ``n`` and ``m`` (global),
    ``first``/``n_local`` (own range), ``indptr``/``cols`` (own rows, global ids, int64),
    ``ewgt``, ``vwgt`` (own), ``ghosts`` (sorted global ids of remote neighbours),
    ``adj`` (columns as local indices: own i -> i, ghost j -> n_local + j), ``gid`` (global
    id of each local index: own vertices, then ghosts),
    ``total_vwgt`` (global).
    """

    def __init__(self, comm, vtxdist, indptr, cols, ewgt, vwgt):
        self.comm = as_comm(comm)
        self.vtxdist = np.asarray(vtxdist, dtype=np.int64)
        r = self.comm.rank
        self.first, self.last = int(self.vtxdist[r]), int(self.vtxdist[r + 1])
        self.n_local = self.last - self.first
        self.n = int(self.vtxdist[-1])
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.cols = np.asarray(cols, dtype=np.int64)
        self.ewgt = np.asarray(ewgt)
        self.vwgt = np.asarray(vwgt)
        self._rows = None
        self.adj, self.ghosts = local_columns(self.cols, self.first, self.last, self.n)
        self.gid = np.concatenate([np.arange(self.first, self.last, dtype=np.int64), self.ghosts])
        self._build_ghost_exchange()
        totals = self.comm.allreduce(np.array([self.cols.shape[0], self.vwgt.sum()], dtype=self.vwgt.dtype
                                              if self.vwgt.dtype.kind == "f" else np.int64))
        self.m = int(totals[0]) // 2
        self.total_vwgt = totals[1].item()
        self.input_ids = None   # input id of each own vertex when scatter_graph renumbered the graph

    @property
    def rows(self):
        """The own row (local index) of every entry, for the whole-array formulations; made
        on first use (the compiled kernels walk indptr: 8 bytes per entry and a pass saved)."""
        if self._rows is None:
            self._rows = np.repeat(np.arange(self.n_local, dtype=np.int64), np.diff(self.indptr))
        return self._rows

    def _build_ghost_exchange(self):
        # ghosts are sorted, so they are grouped by owner in rank order: exactly the order in
        # which an all-to-all delivers the owners' answers
        owner = self.owner(self.ghosts)
        self.ghost_counts = np.bincount(owner, minlength=self.comm.size)
        wanted, self.send_counts = self.comm.alltoallv(self.ghosts, self.ghost_counts)
        self.send_idx = wanted - self.first
        self._sends_to = np.repeat(np.arange(self.comm.size), self.send_counts)  # rank of each slot

    def owner(self, gids):
        """Rank owning each global vertex id."""
        return np.searchsorted(self.vtxdist, gids, side="right") - 1

    def ghost_values(self, values):
        """Values of the ghosts from their owners' per-own-vertex array ``values``."""
        recv, _ = self.comm.alltoallv(np.asarray(values)[self.send_idx], self.send_counts)
        return recv

    def ghost_updates(self, changed, *columns):
        """Send the values of the own vertices flagged in ``changed`` (bool per own vertex) to
        the ranks holding them as ghosts; returns (local indices of the updated ghosts,
        n_local + j, then the received columns). Cost: the changed boundary vertices only."""
        slots = np.flatnonzero(changed[self.send_idx])
        local = self.send_idx[slots]
        # one all-to-all for every column (8-byte columns travel as their int64 bits): Jet's
        # rounds sent three columns as three all-to-alls, each a wait for the slowest rank
        cols = [np.asarray(col)[local] for col in columns]
        packed = [col.view(np.int64) if col.dtype.itemsize == 8 else col.astype(np.int64) for col in cols]
        got = self.comm.exchange_packed(self._sends_to[slots], local + self.first, *packed)
        out = [g.view(col.dtype) if col.dtype.itemsize == 8 else g.astype(col.dtype) for g, col in zip(got[2:], cols)]
        return (self.n_local + np.searchsorted(self.ghosts, got[1]), *out)

    def extended(self, values):
        """``values`` of the own vertices followed by those of the ghosts (index by ``adj``)."""
        return np.concatenate([values, self.ghost_values(values)])

    def gather_graph(self, root=None):
        """The whole graph as a matchpart Graph on every rank (``root=None``) or on ``root``
        only (None elsewhere). Only for small (coarse) graphs: it holds all of them."""
        c = self.comm
        deg = np.diff(self.indptr)
        if root is None:
            parts = [c.allgatherv(a) for a in (deg, self.cols, self.ewgt, self.vwgt)]
        else:
            parts = [c.gatherv(a, root) for a in (deg, self.cols, self.ewgt, self.vwgt)]
            if c.rank != root:
                return None
        deg, cols, ewgt, vwgt = parts
        indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
        index_type = np.int32 if self.n < 2**31 - 1 else np.int64
        return Graph._trusted(indptr, cols.astype(index_type), ewgt, vwgt, backend.get("cpu"))

    def gather_values(self, values, root=0):
        """Concatenation of every rank's per-own-vertex ``values`` on ``root`` (None elsewhere)."""
        return self.comm.gatherv(np.asarray(values), root)

    def local_input_ids(self):
        """The input ids of this rank's own vertices (first..last - 1 unless renumbered)."""
        return np.arange(self.first, self.last, dtype=np.int64) if self.input_ids is None else self.input_ids

    def gather_in_input_order(self, values, root=0):
        """``gather_values`` with the values in the input's vertex order (where scatter_graph
        renumbered the graph) on ``root``, None elsewhere."""
        gathered = self.gather_values(values, root)
        if self.input_ids is None:
            return gathered
        ids = self.gather_values(self.input_ids, root)
        if gathered is None:
            return None
        out = np.empty_like(gathered)
        out[ids] = gathered
        return out

    def __repr__(self):
        return (f"DistGraph(n={self.n}, m={self.m}, rank={self.comm.rank}/{self.comm.size}, "
                f"own={self.first}..{self.last - 1}, ghosts={self.ghosts.shape[0]})")


def even_vtxdist(n, size):
    """Contiguous ranges of ``n`` vertices with equal counts (to one) for ``size`` ranks."""
    return (np.arange(size + 1, dtype=np.int64) * n) // size


def balanced_vtxdist(indptr, size):
    """Contiguous ranges of about equal cost (entries + ROW_COST per vertex) for ``size`` ranks."""
    n = indptr.shape[0] - 1
    cost = indptr + ROW_COST * np.arange(n + 1, dtype=np.int64)
    targets = cost[-1] * np.arange(size + 1, dtype=np.float64) / size
    cuts = np.searchsorted(cost, targets, side="left")
    cuts[0], cuts[-1] = 0, n
    return np.maximum.accumulate(np.minimum(cuts, n)).astype(np.int64)


def _renumbers(graph):
    """Whether scatter_graph numbers ``graph`` breadth-first: ids without locality, and not
    power-law (relabel.heavy_tailed). A breadth-first search of a graph of small diameter
    puts neighbours in every layer: R-MAT 2^18 at P = 2 sent 0.8 x the bytes in contraction
    and gave 1.18 x the cut."""
    if not locality.scattered(graph, RENUMBER_MIN_VERTICES):
        return False
    return not relabel.heavy_tailed(int(np.diff(np.asarray(graph.indptr)).max()), graph.n, graph.m)


def scatter_graph(graph, comm=None, renumber=False):
    """Distribute a matchpart Graph held on rank 0 (``graph`` is ignored elsewhere).

    ``renumber``: a graph numbered with no locality (_renumbers) is first numbered
    breadth-first, on one rank too (as the single process relabels it), and each rank's
    ``input_ids`` keep its vertices' input ids (see gather_in_input_order)."""
    c = as_comm(comm)
    pieces = None
    if c.rank == 0:
        g = graph.to("cpu")
        order = None
        if renumber and _renumbers(g):
            order, g = locality.bfs_relabel(g)
        indptr = np.asarray(g.indptr, dtype=np.int64)
        vtxdist = balanced_vtxdist(indptr, c.size)
        pieces = []
        for r in range(c.size):
            a, b = int(vtxdist[r]), int(vtxdist[r + 1])
            lo, hi = int(indptr[a]), int(indptr[b])
            pieces.append((vtxdist, indptr[a:b + 1] - lo, g.indices[lo:hi].astype(np.int64), g.ewgt[lo:hi],
                           g.vwgt[a:b], None if order is None else order[a:b].astype(np.int64)))
        c._count(sum(sum(a.nbytes for a in p[1:] if a is not None) for p in pieces[1:]))
    vtxdist, indptr, cols, ewgt, vwgt, input_ids = c.comm.scatter(pieces, root=0)
    dg = DistGraph(c, vtxdist, indptr, cols, ewgt, vwgt)
    dg.input_ids = input_ids
    return dg
