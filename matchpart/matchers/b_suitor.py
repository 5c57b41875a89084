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
the host once per batch. On the CPU the rounds run as one compiled kernel
(``_b_suitor_kernel``: the same rounds, so the same b-matching and stats).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from ..jit import njit

from .. import backend as _backend
from .ratings import edge_priority
from .suitor import (INITIAL_WINDOW, WINDOW_GROWTH, advance_windows, in_current_windows, sorted_adjacency,
                     window_entries)
from .prioritised_rows import ASYMMETRIC, prioritised_rows

# Rounds between host syncs (the test whether anyone still searches): free on the CPU, a
# device round trip on the GPU. The b-matching does not depend on it.
ROUNDS_PER_CHECK = {"cpu": 1, "gpu": 4}
# On the CPU the rounds run as one compiled kernel; tests switch this off to run the
# whole-array rounds on numpy and compare.
CPU_KERNEL = True


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
    if CPU_KERNEL and not be.is_gpu:
        return _b_matching_cpu(g, cap_host, rating)
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


def _b_matching_cpu(g, cap, rating):
    """``b_matching``'s rounds as one compiled kernel (host arrays): the same b-matching,
    its edges in the same (rank) order and its weight summed in that order."""
    nbr, key, order = prioritised_rows(g, rating)
    twin = reverse_entries(g.indptr, nbr, key)
    rounds, lo, entry = _b_suitor_kernel(g.indptr, nbr, key, twin, cap, INITIAL_WINDOW, WINDOW_GROWTH)
    hi = nbr[entry].astype(np.int64)
    by_rank = np.lexsort((hi, lo, ~key[entry]))  # decreasing rating, then the smaller (lo, hi)
    w = g.ewgt[order[entry[by_rank]]].sum()
    weight = w.item() if g.ewgt.dtype.kind in "iu" else float(w.item())
    return BMatching(np.stack([lo[by_rank], hi[by_rank]], axis=1), weight, cap, {"rounds": rounds})


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


@njit(cache=True)
def _b_suitor_kernel(indptr, nbr, key, twin, cap, window0, growth):
    """b-Suitor's rounds on rows sorted by ``prioritised_rows`` (``twin``: sorted position of
    each entry's reverse). Returns (rounds, the b-matching's edges as their smaller end
    and the sorted position of their (smaller -> larger end) entry).

    A round, as the whole-array one: every searching vertex u proposes to the first
    cap[u] - count[u] entries of its window whose target would take it (against the
    targets' worst kept suitors at the round's start) and resumes after the last, or skips
    the window, which doubles; then each target keeps its best cap suitors along its own
    sorted row (held marks on its entries) and the dropped ones search again.
    """
    n = indptr.shape[0] - 1
    m = nbr.shape[0]
    held = np.zeros(m, dtype=np.bool_)   # entry (v -> u) of v's row: u is one of v's kept suitors
    count = np.zeros(n, dtype=np.int64)  # how many vertices u is a kept suitor of
    full = np.zeros(n, dtype=np.bool_)   # v holds cap[v] suitors: (wkey, wid) is the worst
    wkey = np.zeros(n, dtype=np.uint64)
    wid = np.zeros(n, dtype=np.int64)
    ptr = indptr[:-1].copy()
    window = np.full(n, window0, dtype=np.int64)
    stamp = np.zeros(n, dtype=np.int64)  # round that listed a vertex (as a target or a searcher)
    touched = np.empty(n, dtype=np.int64)
    rows = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    ns = 0
    for v in range(n):
        if cap[v] > 0 and indptr[v + 1] > indptr[v]:
            rows[ns] = v
            ns += 1
    rounds = 0
    while ns > 0:
        rounds += 1
        nt = 0
        for j in range(ns):
            u = rows[j]
            need = cap[u] - count[u]
            p = ptr[u]
            hi = min(p + window[u], indptr[u + 1])
            taken, last = 0, -1
            for e in range(p, hi):
                t = nbr[e]
                if cap[t] == 0 or (full[t] and not (key[e] > wkey[t] or (key[e] == wkey[t] and u < wid[t]))):
                    continue
                held[twin[e]] = True
                if stamp[t] != rounds:
                    stamp[t] = rounds
                    touched[nt] = t
                    nt += 1
                taken += 1
                last = e
                if taken == need:
                    break
            count[u] += taken
            if taken == need:
                ptr[u] = last + 1
            else:
                ptr[u] = hi
                window[u] *= growth
        # next searchers (stamped -rounds): this round's that still search, and dropped suitors
        nn = 0
        for j in range(ns):
            u = rows[j]
            if count[u] < cap[u] and ptr[u] < indptr[u + 1]:
                stamp[u] = -rounds
                nxt[nn] = u
                nn += 1
        for i in range(nt):
            v = touched[i]
            place = 0
            for e in range(indptr[v], indptr[v + 1]):
                if not held[e]:
                    continue
                place += 1
                if place == cap[v]:
                    full[v] = True
                    wkey[v] = key[e]
                    wid[v] = nbr[e]
                elif place > cap[v]:
                    held[e] = False
                    w = nbr[e]
                    count[w] -= 1
                    if stamp[w] != -rounds and ptr[w] < indptr[w + 1]:
                        stamp[w] = -rounds
                        nxt[nn] = w
                        nn += 1
        rows, nxt = nxt, rows
        ns = nn
    lo = np.empty(m, dtype=np.int64)
    entry = np.empty(m, dtype=np.int64)
    k = 0
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            if nbr[e] > u and held[e] and held[twin[e]]:
                lo[k] = u
                entry[k] = e
                k += 1
    return rounds, lo[:k], entry[:k]


@njit(cache=True)
def reverse_entries(indptr, nbr, key):
    """For rows from ``prioritised_rows``: the position of each entry's reverse (v -> u for
    u -> v), found by binary search in row v, which is sorted by (key descending, neighbour)."""
    twin = np.empty(nbr.shape[0], dtype=np.int64)
    for u in range(indptr.shape[0] - 1):
        for s in range(indptr[u], indptr[u + 1]):
            v = nbr[s]
            if v < u:
                continue
            lo, hi = indptr[v], indptr[v + 1]
            while lo < hi:  # the first position not before (key[s], u)
                mid = (lo + hi) // 2
                if key[mid] > key[s] or (key[mid] == key[s] and nbr[mid] < u):
                    lo = mid + 1
                else:
                    hi = mid
            if lo == indptr[v + 1] or nbr[lo] != u:
                raise ValueError(ASYMMETRIC)
            twin[s] = lo
            twin[lo] = s
    return twin
