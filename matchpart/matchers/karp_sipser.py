"""Karp-Sipser maximum-cardinality heuristic in synchronous rounds (Patwary, Bisseling & Manne, seed 002).

Degree-one vertices are matched first with their only free neighbour: that choice is
always part of some maximum matching. When no degree-one vertex is left, the free
vertices of minimum free degree request a random free neighbour, which creates new
degree-one vertices.

Rounds follow the paper's BSP scheme with whole-array operations: requesters send a
request to one neighbour; a target that is not itself requesting (or that requested the
sender back) accepts the request with the smallest hash. Current degrees (free
neighbours) and the sum of free neighbour ids are kept with scatter-add decrements, so a
degree-one vertex finds its neighbour without scanning its row.

A round costs O(work on the vertices it touches), not O(n): rounds are many (about 250
on a 400k-vertex Delaunay mesh), so O(n) passes per round dominated the run time. Only
the setup scans all vertices; afterwards the degree-one candidates come from the
neighbours of the vertices just matched, the open vertices are a sorted list filtered in
random rounds, and per-round sums go into buffers over the distinct touched vertices.
Those lists have data-dependent sizes, each a host sync on a GPU, so the GPU runs the
same rounds as fixed-shape masked arrays over the open vertices and syncs once per batch
of rounds (``_batched_rounds``); both formulations give the same matching and stats.
"""
from __future__ import annotations

import numpy as np

from .base import Matching
from .karp_sipser_kernel import karp_sipser_kernel
from .registry import register
from .suitor import NO_VALUE, scatter_max_nonneg, scatter_min_nonneg

# Fraction of the free vertices of minimum free degree that send a random request in a round
# without degree-one vertices. Restricting random requests to minimum-degree vertices (the
# min-degree rule) lifted 4elt from 7499 (96% of the maximum 7803) to 7752 (99.3%; gpa, the
# best other heuristic, finds 7681); asking with all of them costs about 775 rounds on 4elt
# (0.5 s) where a twentieth took 5500 rounds for 7796, and 1.9 s on delaunay 2^18.
RANDOM_REQUEST_FRACTION = 1.0

# On the CPU the rounds run as one compiled kernel (karp_sipser_kernel.py: the same matching
# and stats); tests switch this off to run the whole-array rounds on numpy and compare.
CPU_KERNEL = True
# Rounds between host syncs. The CPU compacts every round (a sync is free there, and its
# lists keep a round at O(touched)); the GPU runs masked fixed-shape rounds in batches
# (``_batched_rounds``), whose size is a guess until measured on a GPU: rounds are many
# (hundreds on large meshes) and each batch starts with three syncs.
ROUNDS_PER_CHECK = {"cpu": 1, "gpu": 8}

# hash streams (stream = 3 * round + kind), so that each use of the seed draws independent numbers
_STREAM_ACCEPT = 0
_STREAM_REQUESTER = 1
_STREAM_NEIGHBOUR = 2


@register("karp_sipser", description="Karp-Sipser: match degree-one vertices first, else random edges "
          "(maximum-cardinality heuristic, ignores weights)",
          paper="Patwary, Bisseling & Manne, parallel Karp-Sipser (seed 002)", weighted=False,
          backends=("cpu", "gpu"), serial=False)
def karp_sipser(graph, *, rating="weight", seed=0, backend=None) -> Matching:
    """Karp-Sipser matching in rounds; ``rating`` is ignored (cardinality is what counts).

    stats: ``rounds``, ``matched_fraction`` per round, ``degree_one_rounds``, ``random_rounds``.
    """
    be = backend or graph.backend
    if be is not graph.backend:
        graph = graph.to(be)
    if CPU_KERNEL and not be.is_gpu:
        mate, stats = _kernel_rounds(graph, seed)
        return Matching.from_mate(graph, mate, stats=stats)
    batch = ROUNDS_PER_CHECK[be.name]
    rounds_fn = _incremental_rounds if batch == 1 else _batched_rounds
    mate, stats = rounds_fn(be, graph, seed, batch)
    return Matching.from_mate(graph, mate, stats=stats)


def _kernel_rounds(graph, seed):
    """The rounds as one compiled kernel on the host arrays (karp_sipser_kernel.py). (mate, stats)"""
    n = graph.n
    mate, matched, d1, rand = karp_sipser_kernel(graph.indptr, graph.indices, seed, RANDOM_REQUEST_FRACTION,
                                                 _STREAM_ACCEPT, _STREAM_REQUESTER, _STREAM_NEIGHBOUR)
    fractions = [float(c) / n for c in matched] if n else [0.0] * matched.shape[0]
    return mate, {"rounds": int(matched.shape[0]), "matched_fraction": fractions, "degree_one_rounds": int(d1),
                  "random_rounds": int(rand)}


def _incremental_rounds(be, graph, seed, batch):
    """The rounds on lists of the vertices each one touches: O(touched) work, but several
    data-sized compactions (host syncs on a GPU) per round. (mate, stats)"""
    xp = be.xp
    n = graph.n
    indptr = graph.indptr
    indices = graph.indices.astype(xp.int64)
    # free neighbours of each vertex
    deg = graph.degree.astype(xp.int32)
    # sum of free neighbours' ids, exact in float64 while n * max degree < 2**53
    idsum = be.segment_sum(indices.astype(xp.float64), indptr)
    mate = xp.full(n, -1, dtype=xp.int64)
    # request scratch for _resolve_requests: -1 outside a call, reset only where it was set
    asks = xp.full(n, -1, dtype=xp.int64)
    rounds = d1_rounds = rand_rounds = matched = 0
    fractions = []
    # free vertices of degree one (unique; order does not matter: nothing below depends on it)
    singles = xp.flatnonzero(deg == 1)
    # free vertices with free neighbours, sorted, possibly stale: filtered when a random round needs them
    open_ = xp.flatnonzero(deg > 0)
    while True:
        if singles.shape[0]:
            requester, target = singles, idsum[singles].astype(xp.int64)
            d1_rounds += 1
        else:
            # drop the vertices matched or left without free neighbours since the last random
            # round; filtering keeps open_ sorted, so open_[:1] is still the smallest open id
            open_ = open_[(mate[open_] < 0) & (deg[open_] > 0)]
            if open_.shape[0] == 0:
                break
            rand_rounds += 1
            # only vertices of minimum free degree ask (the min-degree rule): they are the
            # likeliest to end unmatched, and matching them leaves the most choice elsewhere
            low = open_[deg[open_] == deg[open_].min()]
            pick = be.uniform(seed, 3 * rounds + _STREAM_REQUESTER, low) < RANDOM_REQUEST_FRACTION
            requester = low[pick]
            if requester.shape[0] == 0:  # tiny graphs: make sure someone asks
                requester = low[:1]
            target = _random_free_neighbour(be, graph, indices, requester, mate, seed, rounds)
        rounds += 1
        pu, pv = _resolve_requests(be, asks, requester, target, seed, rounds)
        mate[pu] = pv
        mate[pv] = pu
        newly = xp.concatenate([pu, pv])
        matched += newly.shape[0]
        fractions.append(matched / n if n else 0.0)
        touched = _remove_vertices(be, indptr, indices, newly, mate, deg, idsum)
        # A free vertex has degree one now only if it had at the start of the round (then it
        # is in singles and was not touched) or dropped to one in this round (then it is in
        # touched and had degree >= 2 before): the two parts are disjoint, no dedup needed.
        singles = singles[(mate[singles] < 0) & (deg[singles] == 1)]
        singles = xp.concatenate([singles, touched[deg[touched] == 1]])
    return mate, {"rounds": rounds, "matched_fraction": fractions,
                  "degree_one_rounds": d1_rounds, "random_rounds": rand_rounds}


def _batched_rounds(be, graph, seed, batch):
    """The same rounds as ``_incremental_rounds`` (same streams, same matching and stats) on
    fixed-shape masked arrays, with a host sync only between batches of ``batch`` rounds.

    A batch works on the open vertices at its start (free, with free neighbours: every
    vertex that can request, be asked or lose a neighbour during the batch is one) and on
    their entries towards free neighbours. Both branches of a round (degree-one requests
    and random requests) are computed and one is selected on the device; masked-out writes
    go to a trash slot n. A round costs O(open vertices + their entries) instead of
    O(touched), which a GPU does in the time of a few kernel launches. (mate, stats)
    """
    xp = be.xp
    n = graph.n
    indptr = graph.indptr
    indices = graph.indices.astype(xp.int64)
    u64 = xp.uint64
    deg = graph.degree.astype(xp.int32)
    idsum = be.segment_sum(indices.astype(xp.float64), indptr)
    mate = xp.full(n + 1, -1, dtype=xp.int64)      # slot n: the trash slot of masked writes
    asks = xp.full(n + 1, -1, dtype=xp.int64)      # the request scratch, -1 between rounds
    offer = xp.full(n + 1, NO_VALUE, dtype=u64)    # per-target best request key, empty between rounds
    newly = xp.zeros(n + 1, dtype=bool)            # matched in this round, cleared after it
    matched = xp.zeros((), dtype=xp.int64)
    rounds = 0  # rounds run, counting the idle ones that end the last batch: they change nothing
    per_round = []  # device scalars: (degree-one round, any open vertex, matched so far)
    while True:
        open_ = xp.flatnonzero((mate[:n] < 0) & (deg > 0))
        if open_.shape[0] == 0:
            break
        f = open_.shape[0]
        pos, seg = be.ranges(indptr[open_], indptr[open_ + 1] - indptr[open_])
        free_entry = xp.flatnonzero(mate[indices[pos]] < 0)
        pos, seg = pos[free_entry], seg[free_entry]
        nb = indices[pos]
        local = xp.arange(f, dtype=xp.int64)
        for _ in range(batch):
            free = mate[open_] < 0
            d = deg[open_]
            single, can_ask = free & (d == 1), free & (d > 0)
            any_single, any_open = single.any(), can_ask.any()
            # the min-degree rule, as in _incremental_rounds
            low = can_ask & (d == xp.min(xp.where(can_ask, d, xp.iinfo(d.dtype).max)))
            pick = low & (be.uniform(seed, 3 * rounds + _STREAM_REQUESTER, open_) < RANDOM_REQUEST_FRACTION)
            # tiny graphs: when nobody picks, the smallest open vertex asks (open_ is sorted)
            smallest = xp.min(xp.where(low, local, f))
            pick |= ~pick.any() & (local == smallest)
            random_target = _random_free_neighbour_masked(be, f, pos, seg, nb, pick, mate, seed, rounds)
            requester = xp.where(any_single, single, pick)
            target = xp.where(any_single, idsum[open_].astype(xp.int64), random_target)
            rounds += 1
            # requests, as in _resolve_requests, with every vertex of open_ in place
            asks_at = xp.where(requester, open_, n)
            target = xp.where(requester, target, n)
            asks[asks_at] = target
            theirs = asks[target]
            asks[asks_at] = -1
            mutual = theirs == open_
            ok = requester & ((theirs < 0) | mutual) & ~(mutual & (open_ > target))
            h = (be.hash64(seed, 3 * rounds + _STREAM_ACCEPT, open_) >> u64(33)).astype(xp.int64)
            key = xp.where(ok, ((h << 32) | open_).astype(u64), NO_VALUE)
            at = xp.where(ok, target, n)
            be.scatter_min(offer, at, key)
            acc = ok & (offer[at] == key)
            offer[at] = NO_VALUE
            pu, pv = xp.where(acc, open_, n), xp.where(acc, target, n)
            mate[pu] = pv
            mate[pv] = pu
            mate[n] = -1
            matched = matched + 2 * acc.sum()
            # free neighbours of the newly matched lose one free neighbour each
            newly[pu] = True
            newly[pv] = True
            newly[n] = False
            lost = newly[nb]
            lost_count = xp.zeros(f, dtype=xp.int32)
            be.scatter_add(lost_count, seg, lost.astype(xp.int32))
            lost_ids = xp.zeros(f, dtype=xp.float64)
            be.scatter_add(lost_ids, seg, xp.where(lost, nb, 0).astype(xp.float64))
            deg[open_] -= lost_count
            idsum[open_] -= lost_ids
            newly[pu] = False
            newly[pv] = False
            per_round.append(xp.stack([any_single.astype(xp.int64), any_open.astype(xp.int64), matched]))
    if not per_round:
        return mate[:n], {"rounds": 0, "matched_fraction": [], "degree_one_rounds": 0, "random_rounds": 0}
    table = be.to_host(xp.stack(per_round))
    ran = (table[:, 0] > 0) | (table[:, 1] > 0)
    used = int(np.count_nonzero(ran))  # idle rounds come only after the last real one
    d1 = int(np.count_nonzero(table[:used, 0]))
    return mate[:n], {"rounds": used, "matched_fraction": (table[:used, 2] / n).tolist(),
                      "degree_one_rounds": d1, "random_rounds": used - d1}


def _random_free_neighbour_masked(be, f, pos, seg, nb, pick, mate, seed, rnd):
    """``_random_free_neighbour`` for the rows of ``pick`` among ``f`` rows whose entries are
    (pos, seg, nb), computed without compaction; rows not picked get -1."""
    xp = be.xp
    u64 = xp.uint64
    h = be.hash64(seed, 3 * rnd + _STREAM_NEIGHBOUR, pos) >> u64(1)
    usable = pick[seg] & (mate[nb] < 0)
    best = xp.full(f, NO_VALUE, dtype=u64)
    be.scatter_min(best, seg, xp.where(usable, h, NO_VALUE))
    hit = usable & (h == best[seg])
    # equal hashes (astronomically rare) pick the largest id among them
    top = xp.zeros(f, dtype=u64)
    be.scatter_max(top, seg, xp.where(hit, nb + 1, 0).astype(u64))
    return top.astype(xp.int64) - 1


def _resolve_requests(be, asks, requester, target, seed, rnd):
    """Pairs (u, v) accepted among requests u -> v: disjoint, each target accepts at most one.

    A target that is itself requesting someone else declines (its own request is pending);
    two vertices requesting each other accept each other, and that pair is returned once
    (as u < v), so every vertex occurs at most once in the result. ``requester`` holds
    distinct vertices; ``asks`` is a length-n scratch of -1 that is left as it was found.
    """
    xp = be.xp
    asks[requester] = target
    theirs = asks[target]
    asks[requester] = -1
    mutual = theirs == requester
    ok = (theirs < 0) | mutual
    # of two vertices requesting each other, only the smaller one's request is kept: each
    # declines everyone else, so both requests would be accepted and give the same pair twice
    ok &= ~(mutual & (requester > target))
    requester, target = requester[ok], target[ok]
    # key: 31 random bits above the requester id, so the minimum is unique per target
    h = (be.hash64(seed, 3 * rnd + _STREAM_ACCEPT, requester) >> xp.uint64(33)).astype(xp.int64)
    key = (h << 32) | requester
    # minimum per distinct target, in a buffer as long as the requests rather than n
    targets, slot = xp.unique(target, return_inverse=True)
    slot = slot.reshape(-1)
    best = scatter_min_nonneg(be, targets.shape[0], slot, key)
    acc = best[slot] == key
    return requester[acc], target[acc]


def _random_free_neighbour(be, graph, indices, requester, mate, seed, rnd):
    """For each requester, a uniformly random free neighbour (smallest hash of the stored entry)."""
    xp = be.xp
    start = graph.indptr[requester]
    pos, seg = be.ranges(start, graph.indptr[requester + 1] - start)
    nb = indices[pos]
    h = (be.hash64(seed, 3 * rnd + _STREAM_NEIGHBOUR, pos) >> xp.uint64(1)).astype(xp.int64)
    free = mate[nb] < 0
    best = scatter_min_nonneg(be, requester.shape[0], seg[free], h[free])
    hit = free & (h == best[seg])
    # equal hashes (astronomically rare) pick the largest id among them
    return scatter_max_nonneg(be, requester.shape[0], seg[hit], nb[hit])


def _remove_vertices(be, indptr, indices, gone, mate, deg, idsum):
    """Update free degrees and free-neighbour id sums of the free neighbours of newly matched vertices.

    Returns those neighbours (sorted, distinct). Matched neighbours are skipped: their
    degrees and sums are never read again.
    """
    xp = be.xp
    start = indptr[gone]
    pos, seg = be.ranges(start, indptr[gone + 1] - start)
    nb = indices[pos]
    free = mate[nb] < 0
    nb, lost_id = nb[free], gone[seg[free]].astype(xp.float64)
    # sums per distinct neighbour in a buffer as long as the touched list (a scatter into a
    # length-n array costs O(n) on the CPU), then one assignment with distinct indices;
    # float64: exact for these integer sums, and a dtype CuPy's scatter_add takes
    touched, slot, lost = xp.unique(nb, return_inverse=True, return_counts=True)
    lost_sum = xp.zeros(touched.shape[0], dtype=xp.float64)
    be.scatter_add(lost_sum, slot.reshape(-1), lost_id)
    deg[touched] -= lost.astype(xp.int32)
    idsum[touched] -= lost_sum
    return touched
