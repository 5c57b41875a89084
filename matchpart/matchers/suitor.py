"""Suitor and locally dominant (LD) half-approximate weighted matching in data-parallel rounds.

Both come from Naim's thesis (seed 004). With the contract's tie-break (``edge_priority``:
a unique rank per undirected edge) both return exactly the matching of the serial greedy
algorithm (edges by decreasing rating, match if both ends free).

Each vertex walks its adjacency sorted by rank (heaviest first) with a pointer that only
moves forward: an entry skipped once can never become usable again (Suitor: a vertex's
suitor only gets heavier; LD: a matched neighbour stays matched). A round lets every
searching vertex inspect a window of entries from its pointer at once (a ragged gather),
so the Python loop is over rounds, never over vertices or edges.

On the GPU, rounds run in batches: the state lives in length-n arrays and masks, each
round works on a list of every vertex that may search during the batch, and masked-out
work goes to a trash slot (index n), so only the list's rebuild between batches (the
termination test) waits for the device. On the CPU a batch is one round, where the list
is exactly the searching vertices. The batch size changes neither the matching nor the
per-round stats.

On the CPU both matchers run as one compiled kernel each (``suitor_kernel.py``: the same
rounds, so the same matching and stats); the whole-array rounds are the GPU's formulation.
"""
from __future__ import annotations

import numba
import numpy as np

from .. import threads
from .base import Matching
from .prioritised_rows import prioritised_rows
from .ratings import edge_priority
from .registry import register
from .locally_dominant_kernel import locally_dominant_kernel
from .suitor_kernel import suitor_kernel

# Entries a searching vertex inspects in its first round: most vertices find their partner
# among their few heaviest neighbours, and a small window keeps the per-round work near |active|.
INITIAL_WINDOW = 4
# A vertex whose whole window was unusable doubles it, so a high-degree vertex needs only
# O(log degree) rounds to cross a long run of unusable entries.
WINDOW_GROWTH = 2

_PAPER = "Naim, GPU matching (seed 004)"
NO_VALUE = np.uint64(0xFFFFFFFFFFFFFFFF)  # empty slot of a uint64 scatter-min buffer
# Rounds between rebuilds of the searcher list: a rebuild is a host sync on the GPU and
# costs nothing on the CPU, where a one-round batch keeps each round's work to the searchers.
ROUNDS_PER_CHECK = {"cpu": 1, "gpu": 4}
# On the CPU the rounds run as one compiled kernel per matching (suitor_kernel.py); tests
# switch this off to run the whole-array rounds on numpy and compare.
CPU_KERNEL = True


def sorted_adjacency(graph, rank):
    """Each row's entries sorted by rank (heaviest first): (neighbour int64, rank, order).

    ``order`` maps sorted positions back to stored CSR positions (to read edge weights).
    """
    be = graph.backend
    xp = be.xp
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    # one int64 key (row major, rank minor) sorts faster than a two-key lexsort
    key = rows * max(graph.m, 1) + rank
    order = xp.argsort(key)
    return graph.indices[order].astype(xp.int64), rank[order], order


def window_entries(be, rows, ptr, end, window, rounds):
    """The sorted-adjacency entries that ``rows`` can inspect in the next ``rounds`` rounds.

    A window only grows by WINDOW_GROWTH and the pointer moves at most one window per
    round, so ``rounds`` windows from ``ptr`` bound the reach. Returns (pos, seg) as
    ``Backend.ranges``: flat positions and the index into ``rows`` each belongs to.
    """
    xp = be.xp
    reach = window[rows] * ((WINDOW_GROWTH ** rounds - 1) // (WINDOW_GROWTH - 1))
    start = ptr[rows]
    return be.ranges(start, xp.minimum(reach, end[rows] - start))


def window_step(be, rows, searching, pos, seg, usable, ptr, end, window, *, whole_buffer):
    """One round of the windowed scan for the ``searching`` members of ``rows``: each row's
    first usable position in its current window (-1 if none). ``ptr`` moves there, or past
    an unusable window, whose size then grows. Arguments as in ``in_current_windows``."""
    ok = in_current_windows(be, rows, searching, pos, seg, usable, ptr, end, window, whole_buffer=whole_buffer)
    first = first_marked(be, rows.shape[0], seg, pos, ok)
    advance_windows(be, rows, searching, first, ptr, end, window)
    return first


def in_current_windows(be, rows, searching, pos, seg, usable, ptr, end, window, *, whole_buffer):
    """``usable`` restricted to the current windows of the ``searching`` members of ``rows``.

    ``pos``/``seg`` come from ``window_entries`` for ``rows``, ``usable`` flags the entries
    that can be taken now; ``whole_buffer`` says the entries are exactly this round's
    windows (a one-round batch of searchers only), so there is nothing to mask.
    """
    if whole_buffer:
        return usable
    xp = be.xp
    lo = ptr[rows][seg]
    hi = xp.minimum(lo + window[rows][seg], end[rows][seg])
    return usable & searching[seg] & (pos >= lo) & (pos < hi)


def advance_windows(be, rows, searching, resume, ptr, end, window):
    """Searching rows with ``resume >= 0`` continue from there; the other searching rows
    skip their whole window, which grows. In place."""
    xp = be.xp
    p, w = ptr[rows], window[rows]
    found = resume >= 0
    ptr[rows] = xp.where(found, resume, xp.where(searching, xp.minimum(p + w, end[rows]), p))
    window[rows] = xp.where(searching & ~found, w * WINDOW_GROWTH, w)


def first_marked(be, size, seg, pos, ok):
    """Per slot 0..size-1, the smallest non-negative ``pos`` of an entry with ``ok`` set; -1 if none."""
    xp = be.xp
    if be.is_gpu:  # scatter every entry, unmarked ones as the empty value: no data-sized compaction
        buf = xp.full(size, NO_VALUE, dtype=xp.uint64)
        be.scatter_min(buf, seg, xp.where(ok, pos.astype(xp.uint64), NO_VALUE))
        return xp.where(buf == NO_VALUE, -1, buf.astype(xp.int64))
    keep = xp.flatnonzero(ok)
    return scatter_min_nonneg(be, size, seg[keep], pos[keep])


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
    if CPU_KERNEL and not be.is_gpu:
        nbr, key, _ = prioritised_rows(graph, rating)
        mate, active, matched = suitor_kernel(graph.indptr, nbr, key, INITIAL_WINDOW, WINDOW_GROWTH)
        return Matching.from_mate(graph, mate, stats=_kernel_stats(matched, graph.n))
    xp = be.xp
    n = graph.n
    rank = edge_priority(graph, rating)
    nbr, srank, _ = sorted_adjacency(graph, rank)
    none = xp.iinfo(xp.int64).max
    # length n + 1: slot n is the trash slot that masked-out writes go to
    best = xp.full(n + 1, none, dtype=xp.int64)       # rank of v's current suitor's edge
    suitor_of = xp.full(n + 1, -1, dtype=xp.int64)    # v's current suitor
    proposal = xp.full(n + 1, NO_VALUE, dtype=xp.uint64)  # scatter-min buffer: per-target best proposal
    # searching: nobody's suitor and entries left (only suitors get displaced, only searchers propose)
    searching = xp.zeros(n + 1, dtype=bool)
    searching[:n] = graph.degree > 0
    ptr = graph.indptr[:-1].astype(xp.int64)          # copy: next entry each vertex considers
    end = graph.indptr[1:]
    window = xp.full(n, INITIAL_WINDOW, dtype=xp.int64)
    ids = xp.arange(n, dtype=xp.int64)
    batch = ROUNDS_PER_CHECK[be.name]
    active_counts, matched_counts = [], []            # per round, device scalars: read once at the end
    while True:
        rows = xp.flatnonzero(searching[:n])
        if rows.shape[0] == 0:
            break
        if batch > 1:  # current suitors may be displaced and search within the batch
            is_suitor = xp.zeros(n + 1, dtype=bool)
            is_suitor[suitor_of[:n]] = True           # -1 marks slot n, ignored below
            rows = xp.flatnonzero(searching[:n] | is_suitor[:n])
        pos, seg = window_entries(be, rows, ptr, end, window, batch)
        nbr_at, srank_at = nbr[pos], srank[pos]
        for _ in range(batch):
            act = searching[rows]
            # usable: the edge is heavier (lower rank) than the target's current suitor edge
            first = window_step(be, rows, act, pos, seg, srank_at < best[nbr_at], ptr, end, window,
                                whole_buffer=batch == 1)
            found = first >= 0
            at = xp.maximum(first, 0)
            target = xp.where(found, nbr[at], n)
            r = xp.where(found, srank[at], none)
            # ranks are unique per edge, so exactly one proposer per target wins
            r64 = xp.where(found, r.astype(xp.uint64), NO_VALUE)
            be.scatter_min(proposal, target, r64)
            win = found & (proposal[target] == r64)
            proposal[target] = NO_VALUE
            won = xp.where(win, target, n)
            displaced = suitor_of[won]
            suitor_of[won] = rows
            best[won] = r
            suitor_of[n], best[n] = -1, none
            # losers keep their pointer on the lost entry; it fails the test next round and is skipped
            searching[rows] = (act & ~found & (ptr[rows] < end[rows])) | (found & ~win)
            searching[xp.where(displaced >= 0, displaced, n)] = True
            searching[n] = False
            mine = suitor_of[:n]
            active_counts.append(act.sum())
            matched_counts.append(((mine >= 0) & (suitor_of[xp.maximum(mine, 0)] == ids)).sum())
    rounds, fractions = _round_stats(be, active_counts, matched_counts, n)
    mate = suitor_of[:n]
    mate = xp.where((mate >= 0) & (suitor_of[xp.maximum(mate, 0)] == ids), mate, -1)
    return Matching.from_mate(graph, mate, stats={"rounds": rounds, "matched_fraction": fractions})


def _kernel_stats(matched, n):
    """``_round_stats`` of a kernel's rounds: every round it ran had an active vertex."""
    return {"rounds": int(matched.shape[0]), "matched_fraction": (matched / n).tolist()}


def _round_stats(be, active_counts, matched_counts, n):
    """(rounds, matched fraction after each) from per-round device scalars, read in one transfer.

    A round counts when some vertex was active in it; the last batch may end with idle rounds.
    """
    if not active_counts:
        return 0, []
    xp = be.xp
    counts = be.to_host(xp.stack([xp.stack(active_counts), xp.stack(matched_counts)]))
    rounds = int(np.count_nonzero(counts[0]))
    return rounds, (counts[1, :rounds] / n).tolist()


@register("locally_dominant", description="Locally dominant: every vertex points at its heaviest free "
          "neighbour; mutual pointers match; vertices whose candidate got matched re-point "
          "(= greedy matching)", paper=_PAPER, weighted=True, backends=("cpu", "gpu"), serial=False)
def locally_dominant(graph, *, rating="weight", seed=0, backend=None) -> Matching:
    """LD matching with candidate pointers and a queue of affected vertices, in rounds.

    ``seed`` is unused (the result is deterministic and equals the greedy matching).
    """
    graph, be = _on_backend(graph, backend)
    if CPU_KERNEL and not be.is_gpu:
        nbr, _, _ = prioritised_rows(graph, rating)
        parallel_min = threads.PARALLEL_MIN_ITEMS if numba.get_num_threads() > 1 else graph.n + 1
        mate, alive, matched = locally_dominant_kernel(graph.indptr, nbr, INITIAL_WINDOW, WINDOW_GROWTH,
                                                       threads.CHUNK, parallel_min)
        return Matching.from_mate(graph, mate, stats=_kernel_stats(matched, graph.n))
    xp = be.xp
    n = graph.n
    rank = edge_priority(graph, rating)
    nbr, _, _ = sorted_adjacency(graph, rank)
    mate = xp.full(n + 1, -1, dtype=xp.int64)         # slot n: trash slot for masked-out writes
    cand = xp.full(n, -1, dtype=xp.int64)             # heaviest free neighbour known so far (-1: unknown)
    ptr = graph.indptr[:-1].astype(xp.int64)
    end = graph.indptr[1:]
    window = xp.full(n, INITIAL_WINDOW, dtype=xp.int64)
    alive = graph.degree > 0                          # free vertices that may still be matched
    affected = alive.copy()                           # free vertices whose candidate is unknown or taken
    batch = ROUNDS_PER_CHECK[be.name]
    alive_counts, matched_counts = [], []
    matched = xp.zeros((), dtype=xp.int64)            # device scalar: vertices matched so far
    while True:
        rows = xp.flatnonzero(alive)                  # alive only shrinks: they are all a batch needs
        if rows.shape[0] == 0:
            break
        # a one-round batch scans the affected vertices only; longer ones mask them among the alive
        scan = xp.flatnonzero(affected) if batch == 1 else rows
        pos, seg = window_entries(be, scan, ptr, end, window, batch)
        nbr_at = nbr[pos]
        for _ in range(batch):
            aff = affected[scan]
            first = window_step(be, scan, aff, pos, seg, mate[nbr_at] < 0, ptr, end, window,
                                whole_buffer=batch == 1)
            cand[scan] = xp.where(first >= 0, nbr[xp.maximum(first, 0)], xp.where(aff, -1, cand[scan]))
            al = alive[rows]
            c = cand[rows]
            mutual = al & (c >= 0) & (cand[xp.maximum(c, 0)] == rows)
            mate[xp.where(mutual, rows, n)] = c
            mate[n] = -1
            rest = al & ~mutual & (ptr[rows] < end[rows])  # exhausted rows can never be matched
            alive[rows] = rest
            c = cand[rows]
            affected[rows] = rest & ((c < 0) | (mate[xp.maximum(c, 0)] >= 0))
            matched = matched + mutual.sum()
            alive_counts.append(al.sum())
            matched_counts.append(matched)
    rounds, fractions = _round_stats(be, alive_counts, matched_counts, n)
    return Matching.from_mate(graph, mate[:n], stats={"rounds": rounds, "matched_fraction": fractions})
