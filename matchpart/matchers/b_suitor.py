"""b-Suitor b-matching (Naim's thesis, seed 004): each vertex v is matched to at most b[v] neighbours.

Every vertex u proposes to its heaviest neighbours (by the contract's edge rank) that
prefer u to their current worst suitor, until it is a suitor of b[u] vertices or runs out
of neighbours; a vertex keeps its best b[v] proposals and the displaced suitors propose
again. The result is exactly the greedy b-matching (edges by decreasing rating, taken
while both ends have capacity left).

Rounds of whole-array operations on the backend's ``xp`` (numpy or cupy): proposals are
found with the same forward-only windowed pointer scan as Suitor. A vertex's suitors are
marks on the entries of its own adjacency row, which is sorted best first, so keeping the
best b[v] of the held and the new suitors is a prefix count along the row, no sort. As
in Suitor, the GPU runs the rounds as masked fixed-shape steps in batches and syncs with
the host once per batch; the CPU runs one-round batches over compacted lists.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import backend as _backend
from .ratings import edge_priority
from .suitor import INITIAL_WINDOW, advance_windows, in_current_windows, sorted_adjacency, window_entries

# Rounds between host syncs (the test whether anyone still searches): free on the CPU, a
# device round trip on the GPU. The b-matching does not depend on it.
ROUNDS_PER_CHECK = {"cpu": 1, "gpu": 4}


@dataclass
class BMatching:
    """A b-matching: ``edges`` (E x 2 numpy int64, u < v, by increasing rank), ``weight`` (sum of
    their edge weights), ``b`` (per-vertex capacities, numpy int64), ``stats`` (``rounds``)."""

    edges: np.ndarray
    weight: float
    b: np.ndarray
    stats: dict = field(default_factory=dict)

    @property
    def cardinality(self):
        return int(self.edges.shape[0])

    def degrees(self):
        """Number of matched edges at each vertex (numpy)."""
        return np.bincount(self.edges.ravel(), minlength=self.b.shape[0])


def _capacities(b, n):
    """Per-vertex capacities as a numpy int64 array (b may be an int or a length-n array)."""
    arr = np.asarray(b.get() if hasattr(b, "get") and not isinstance(b, np.ndarray) else b)
    if arr.ndim == 0:
        arr = np.full(n, arr)
    if arr.shape != (n,):
        raise ValueError(f"b must be an integer or an array of length n={n}, got shape {arr.shape}")
    if arr.size and (arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.array_equal(arr, np.round(arr)))):
        raise ValueError(f"b must hold non-negative integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if (arr < 0).any():
        v = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"b must be non-negative; b[{v}] = {arr[v]}")
    return arr


def b_matching(graph, b, *, seed=0, device="auto", rating="weight") -> BMatching:
    """Greedy-equivalent b-matching of ``graph`` by b-Suitor.

    graph: anything ``matchpart.graph.as_graph`` accepts; b: an int (same capacity for every
    vertex) or a length-n array of non-negative ints; device: "auto", "cpu", "gpu";
    rating: which edges count as heavy (see ``matchpart.matchers.RATINGS``). ``seed`` is
    accepted for API symmetry; the result is deterministic.
    """
    from ..io import as_graph
    be = _backend.get(device)
    g = as_graph(graph).to(be)
    xp = be.xp
    n = g.n
    cap_host = _capacities(b, n)
    cap = be.to_device(cap_host)
    rank = edge_priority(g, rating)
    nbr, srank, order = sorted_adjacency(g, rank)
    srow = be.row_ids(g.indptr, g.indices.shape[0])  # rows are unchanged by the per-row sort
    twin = _twin_entries(be, srank)
    none = xp.iinfo(xp.int64).max
    # rank of v's worst kept suitor when v is full (a proposal must beat it); -1 when b[v] == 0
    worst = xp.full(n + 1, none, dtype=xp.int64)  # slot n: trash of masked writes
    worst[:n] = xp.where(cap == 0, -1, none)
    # held[e] for the entry e = (v -> u) of v's sorted row: u is one of v's kept suitors.
    # v's row is sorted best first, so "keep the best cap[v]" is a prefix count along it.
    held = xp.zeros(g.indices.shape[0] + 1, dtype=bool)  # last slot: trash
    count = xp.zeros(n, dtype=xp.int64)          # how many vertices u is currently a suitor of
    ptr = g.indptr[:-1].astype(xp.int64)
    end = g.indptr[1:]
    window = xp.full(n, INITIAL_WINDOW, dtype=xp.int64)
    batch = ROUNDS_PER_CHECK[be.name]
    proposing = []                               # per round, device scalars: read once at the end
    while True:
        searching = xp.flatnonzero((count < cap) & (ptr < end))
        if searching.shape[0] == 0:
            break
        rows = searching
        if batch > 1:  # a suitor that loses a place searches again within the batch
            rows = xp.flatnonzero(((count < cap) | (count > 0)) & (ptr < end))
        pos, seg = window_entries(be, rows, ptr, end, window, batch)
        if be.is_gpu:  # seg is sorted: its row starts by binary search (CuPy's bincount syncs twice)
            offs = xp.searchsorted(seg, xp.arange(rows.shape[0] + 1, dtype=xp.int64))
        else:
            offs = be.exclusive_cumsum(xp.bincount(seg, minlength=rows.shape[0]))
        for _ in range(batch):
            act = (count[rows] < cap[rows]) & (ptr[rows] < end[rows])
            new = _propose(be, rows, act, cap[rows] - count[rows], pos, seg, offs, ptr, end, window,
                           srank[pos] < worst[nbr[pos]], held.shape[0] - 1, whole_buffer=batch == 1)
            held[twin[new]] = True
            held[-1] = False
            _keep_best(be, new, g.indptr, srow, twin, srank, cap, held, worst, count)
            proposing.append(act.sum())
    counts = be.to_host(xp.stack(proposing)) if proposing else np.zeros(0, dtype=np.int64)
    rounds = int(np.count_nonzero(counts))
    # an edge is in the b-matching when each end holds the other
    mine = xp.flatnonzero(held[:-1] & held[twin[:-1]] & (srow < nbr))
    mine = mine[xp.argsort(srank[mine])]
    edges = xp.stack([srow[mine], nbr[mine]], axis=1)
    w = g.ewgt[order[mine]].sum()
    weight = w.item() if g.ewgt.dtype.kind in "iu" else float(w.item())
    return BMatching(be.to_host(edges).astype(np.int64), weight, cap_host, {"rounds": rounds})


def _twin_entries(be, srank):
    """For each sorted-adjacency entry (u -> v), the position of (v -> u): the other entry
    with the same rank (ranks are unique per undirected edge, so each occurs twice)."""
    xp = be.xp
    by_rank = xp.argsort(srank)
    twin = xp.empty(srank.shape[0] + 1, dtype=xp.int64)
    twin[by_rank[0::2]] = by_rank[1::2]
    twin[by_rank[1::2]] = by_rank[0::2]
    twin[-1] = srank.shape[0]                    # the trash entry is its own twin
    return twin


def _propose(be, rows, act, need, pos, seg, offs, ptr, end, window, usable, trash, *, whole_buffer):
    """Each searching row u finds up to ``need[u]`` targets in its window that would accept it.

    ``pos``/``seg``/``offs`` are the batch's window entries and each row's offset into them;
    advances ``ptr``/``window`` in place; returns the sorted-adjacency positions (u -> v)
    proposed (on the GPU with the others as the position ``trash``).
    """
    xp = be.xp
    ok = in_current_windows(be, rows, act, pos, seg, usable, ptr, end, window, whole_buffer=whole_buffer)
    # the first ``need`` usable entries of each window: a running count along the row
    csum = be.exclusive_cumsum(ok.astype(xp.int64))
    upto = csum[1:] - csum[offs[:-1]][seg]
    take = ok & (upto <= need[seg])
    total = csum[offs[1:]] - csum[offs[:-1]]
    filled = act & (total >= need)
    last = xp.zeros(rows.shape[0] + 1, dtype=xp.int64)
    last[xp.where(take & (upto == need[seg]), seg, rows.shape[0])] = pos
    # a searcher that got all it needed resumes after its last proposal, the others after the window
    advance_windows(be, rows, act, xp.where(filled, last[:-1] + 1, -1), ptr, end, window)
    if be.is_gpu:  # no compaction: the others propose to the trash entry
        return xp.where(take, pos, trash)
    return pos[xp.flatnonzero(take)]


def _keep_best(be, proposed, indptr, srow, twin, srank, cap, held, worst, count):
    """Each vertex keeps its best ``cap[v]`` suitors: the held ones and the new ones, whose
    entries (v -> u) are ``twin[proposed]`` and already marked in ``held``.

    A prefix count along each sorted row (best first) decides; updates ``held``, ``worst``
    (of full vertices) and ``count`` in place. The GPU recounts every row (fixed shapes,
    no host sync); the CPU only the rows of vertices that got proposals.
    """
    xp = be.xp
    n = cap.shape[0]
    if be.is_gpu:
        pos, row, offs = xp.arange(srow.shape[0], dtype=xp.int64), srow, indptr
        first = offs[:-1][row]
    else:
        targets = xp.unique(srow[twin[proposed]])
        pos, seg = be.ranges(indptr[targets], indptr[targets + 1] - indptr[targets])
        row, offs = targets[seg], be.exclusive_cumsum(indptr[targets + 1] - indptr[targets])
        first = offs[:-1][seg]
    mark = held[pos]
    csum = be.exclusive_cumsum(mark.astype(xp.int64))
    place = csum[1:] - csum[first]                # 1-based place among v's suitors, best first
    limit = cap[row]
    keep = mark & (place <= limit)
    held[pos] = keep
    worst[xp.where(keep & (place == limit), row, n)] = srank[pos]
    worst[n] = xp.iinfo(xp.int64).max
    if be.is_gpu:  # u's count: the entries (u -> v) whose twin (v -> u) is held
        count[:] = be.segment_sum(held[twin[:-1]].astype(xp.int64), indptr)
    else:
        count += xp.bincount(srow[proposed], minlength=n)
        count -= xp.bincount(srow[twin[pos[mark & ~keep]]], minlength=n)
