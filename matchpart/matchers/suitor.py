"""Suitor and locally dominant (LD) half-approximate weighted matching in data-parallel rounds.

Both come from Naim's thesis (seed 004). With the contract's tie-break (``edge_priority``:
a unique rank per undirected edge) both return exactly the matching of the serial greedy
algorithm (edges by decreasing rating, match if both ends free).

Each vertex walks its adjacency sorted by rank (heaviest first) with a pointer that only
moves forward: an entry skipped once can never become usable again (Suitor: a vertex's
suitor only gets heavier; LD: a matched neighbour stays matched). A round lets every
searching vertex inspect a window of entries from its pointer at once (a ragged gather),
so the Python loop is over rounds, never over vertices or edges.
"""
from __future__ import annotations

import numpy as np

from .base import Matching
from .ratings import edge_priority
from .registry import register

# Entries a searching vertex inspects in its first round: most vertices find their partner
# among their few heaviest neighbours, and a small window keeps the per-round work near |active|.
INITIAL_WINDOW = 4
# A vertex whose whole window was unusable doubles it, so a high-degree vertex needs only
# O(log degree) rounds to cross a long run of unusable entries.
WINDOW_GROWTH = 2

_PAPER = "Naim, GPU matching (seed 004)"
NO_VALUE = np.uint64(0xFFFFFFFFFFFFFFFF)  # empty slot of a uint64 scatter-min buffer


def sorted_adjacency(graph, rank):
    """Each row's entries sorted by rank (heaviest first): (neighbour int64, rank, order).

    ``order`` maps sorted positions back to stored CSR positions (to read edge weights).
    """
    be = graph.backend
    xp = be.xp
    rows = be.row_ids(graph.indptr)
    # one int64 key (row major, rank minor) sorts faster than a two-key lexsort
    key = rows * max(graph.m, 1) + rank
    order = xp.argsort(key)
    return graph.indices[order].astype(xp.int64), rank[order], order


def scan_windows(be, start, end, window, usable):
    """Inspect entries ``start[i] .. start[i]+window[i]-1`` (clipped to ``end[i]``) of each searcher.

    ``usable(pos)`` says, for flat positions into the sorted adjacency, whether an entry can
    be taken. Returns (pos, seg, ok, length): the flat positions inspected, the searcher each
    belongs to, the usable flags, and the number of entries inspected per searcher.
    """
    xp = be.xp
    length = xp.minimum(window, end - start)
    pos, seg = be.ranges(start, length)
    return pos, seg, usable(pos), length


def first_usable(be, start, end, window, usable):
    """First usable position per searcher within its window (-1 if none), and the entries inspected."""
    pos, seg, ok, length = scan_windows(be, start, end, window, usable)
    return scatter_min_nonneg(be, start.shape[0], seg[ok], pos[ok]), length


# CuPy's scatter_min/max/add accept (u)int32, uint64 and floats but not int64, so the
# non-negative int64 keys used here (ranks, positions, packed hashes) are scattered as uint64.
def scatter_min_nonneg(be, size, index, values):
    """Per slot 0..size-1, the minimum of the non-negative int64 ``values`` sent to it; -1 if none."""
    xp = be.xp
    buf = xp.full(size, NO_VALUE, dtype=xp.uint64)
    be.scatter_min(buf, index, values.astype(xp.uint64))
    return xp.where(buf == NO_VALUE, -1, buf.astype(xp.int64))


def scatter_max_nonneg(be, size, index, values):
    """Per slot 0..size-1, the maximum of the non-negative int64 ``values`` sent to it; -1 if none."""
    xp = be.xp
    buf = xp.zeros(size, dtype=xp.uint64)
    be.scatter_max(buf, index, values.astype(xp.uint64) + xp.uint64(1))
    return buf.astype(xp.int64) - 1


def count_per_slot(be, size, index):
    """How many times each slot 0..size-1 occurs in ``index`` (int64)."""
    xp = be.xp
    counts = xp.zeros(size, dtype=xp.int32)
    be.scatter_add(counts, index, xp.ones(index.shape[0], dtype=xp.int32))
    return counts.astype(xp.int64)


def _on_backend(graph, backend):
    be = backend or graph.backend
    if be is not graph.backend:
        graph = graph.to(be)
    return graph, be


@register("suitor", description="Suitor: vertices propose to their best neighbour that prefers them; "
          "displaced suitors propose again (= greedy matching)", paper=_PAPER, weighted=True,
          backends=("cpu", "gpu"), serial=False)
def suitor(graph, *, rating="weight", seed=0, backend=None) -> Matching:
    """Suitor matching in rounds: proposals, per-target best proposal wins, displaced vertices retry.

    ``seed`` is unused (the result is deterministic and equals the greedy matching).
    """
    graph, be = _on_backend(graph, backend)
    xp = be.xp
    n = graph.n
    rank = edge_priority(graph, rating)
    nbr, srank, _ = sorted_adjacency(graph, rank)
    none = xp.iinfo(xp.int64).max
    best = xp.full(n, none, dtype=xp.int64)      # rank of v's current suitor's edge
    suitor_of = xp.full(n, -1, dtype=xp.int64)   # v's current suitor
    ptr = graph.indptr[:-1].astype(xp.int64)     # copy: next entry each vertex considers
    end = graph.indptr[1:]
    window = xp.full(n, INITIAL_WINDOW, dtype=xp.int64)
    proposal = xp.full(n, NO_VALUE, dtype=xp.uint64)  # scatter-min buffer: per-target best proposal
    ids = xp.arange(n, dtype=xp.int64)
    active = xp.flatnonzero(graph.degree > 0)    # vertices that are nobody's suitor and may still find one
    rounds, fractions = 0, []
    while active.shape[0]:
        rounds += 1
        u = active
        # usable: the edge is heavier (lower rank) than the target's current suitor edge
        first, length = first_usable(be, ptr[u], end[u], window[u], lambda pos: srank[pos] < best[nbr[pos]])
        found = first >= 0
        ptr[u] = xp.where(found, first, ptr[u] + length)
        window[u] = xp.where(found, window[u], window[u] * WINDOW_GROWTH)
        proposer, entry = u[found], first[found]
        target, r = nbr[entry], srank[entry]
        # ranks are unique per edge, so exactly one proposer per target wins
        r64 = r.astype(xp.uint64)
        be.scatter_min(proposal, target, r64)
        win = proposal[target] == r64
        proposal[target] = NO_VALUE
        wv = target[win]
        displaced = suitor_of[wv]
        displaced = displaced[displaced >= 0]
        suitor_of[wv] = proposer[win]
        best[wv] = r[win]
        # losers keep their pointer on the lost entry; it fails the test next round and is skipped
        searching = u[~found & (ptr[u] < end[u])]
        active = xp.concatenate([searching, proposer[~win], displaced])
        mutual = (suitor_of >= 0) & (suitor_of[xp.maximum(suitor_of, 0)] == ids)
        fractions.append(float(mutual.sum().item()) / n if n else 0.0)
    mate = xp.where(suitor_of >= 0, suitor_of, -1)
    mate = xp.where((mate >= 0) & (suitor_of[xp.maximum(mate, 0)] == ids), mate, -1)
    return Matching.from_mate(graph, mate, stats={"rounds": rounds, "matched_fraction": fractions})


@register("locally_dominant", description="Locally dominant: every vertex points at its heaviest free "
          "neighbour; mutual pointers match; vertices whose candidate got matched re-point "
          "(= greedy matching)", paper=_PAPER, weighted=True, backends=("cpu", "gpu"), serial=False)
def locally_dominant(graph, *, rating="weight", seed=0, backend=None) -> Matching:
    """LD matching with candidate pointers and a queue of affected vertices, in rounds.

    ``seed`` is unused (the result is deterministic and equals the greedy matching).
    """
    graph, be = _on_backend(graph, backend)
    xp = be.xp
    n = graph.n
    rank = edge_priority(graph, rating)
    nbr, _, _ = sorted_adjacency(graph, rank)
    mate = xp.full(n, -1, dtype=xp.int64)
    cand = xp.full(n, -1, dtype=xp.int64)        # heaviest free neighbour known so far (-1: unknown)
    ptr = graph.indptr[:-1].astype(xp.int64)
    end = graph.indptr[1:]
    window = xp.full(n, INITIAL_WINDOW, dtype=xp.int64)
    alive = xp.flatnonzero(graph.degree > 0)     # free vertices that may still be matched
    affected = alive                             # free vertices whose candidate is unknown or taken
    rounds, fractions, matched = 0, [], 0
    while alive.shape[0]:
        rounds += 1
        if affected.shape[0]:
            a = affected
            first, length = first_usable(be, ptr[a], end[a], window[a], lambda pos: mate[nbr[pos]] < 0)
            found = first >= 0
            ptr[a] = xp.where(found, first, ptr[a] + length)
            window[a] = xp.where(found, window[a], window[a] * WINDOW_GROWTH)
            cand[a] = xp.where(found, nbr[xp.maximum(first, 0)], -1)
        c = cand[alive]
        mutual = (c >= 0) & (cand[xp.maximum(c, 0)] == alive)
        mate[alive[mutual]] = c[mutual]
        matched += int(mutual.sum().item())
        fractions.append(matched / n if n else 0.0)
        rest = alive[~mutual]
        rest = rest[ptr[rest] < end[rest]]       # exhausted rows can never be matched
        alive = rest
        c = cand[rest]
        affected = rest[(c < 0) | (mate[xp.maximum(c, 0)] >= 0)]
    return Matching.from_mate(graph, mate, stats={"rounds": rounds, "matched_fraction": fractions})
