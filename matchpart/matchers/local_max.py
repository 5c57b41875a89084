"""Local max matching (Birn et al.): match every edge that beats all incident alive edges; repeat."""
from __future__ import annotations

import numpy as np

from ..backend import get as get_backend
from ..backend import rng as _rng
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from .base import Matching
from .ratings import edge_ratings, upper_edge_ratings
from .registry import register

# Hash-RNG stream of round r is STREAM_BASE + r; a base of its own keeps local max's
# tie-break numbers unrelated to other matchers that use small stream ids for seed 0.
STREAM_BASE = 0x10CA1000
# The packed key is (rating_rank << RANK_SHIFT) | random32 in uint64: cupyx.scatter_max /
# scatter_min accept int32, uint32, uint64 and floats but not int64.
RANK_SHIFT = 32
# When the alive edges touch fewer than 1/RELABEL_SHRINK of the current vertex ids, the
# ids are compacted, so a round costs O(alive edges) rather than O(n): the paper's linear
# total work, and no O(n)-per-round tail on inputs that need many rounds (a path with
# increasing weights matches one edge per round). No round cap is needed: every round
# matches at least the globally heaviest alive edge.
RELABEL_SHRINK = 4
# After this many rounds the remaining edges are matched in one sequential pass, greedily
# by the last round's keys: local max with the perturbation frozen is exactly greedy in
# key order, so the result is still a local max matching (maximal, 1/2-approximate).
# Why: rounds can be Theta(m) (a path with increasing weights matches one edge per round,
# 100k rounds and ~6 minutes for 200k vertices), while the paper reports <= ~10 rounds on
# partitioning instances and we see 4-6 on rgg/delaunay, so 50 is never reached there.
GREEDY_TAIL_AFTER = 50
# Rounds run in batches between compactions of the alive edge list; the compaction's size
# is the termination test, a host sync on the GPU, so there it happens once a batch. On
# the CPU a sync is free and compacting every round saves work. The matching does not
# depend on the batch size (same keys, same winners), only the work does.
ROUNDS_PER_CHECK = {"cpu": 1, "gpu": 4}
# On the CPU the rounds run as one compiled kernel (_local_max_kernel: the same rounds, keys
# and tie-breaks, so the same matching and stats); the whole-array rounds are the GPU's
# formulation. Tests switch this off to run the whole-array rounds on numpy and compare.
CPU_KERNEL = True


def undirected_edges(graph, be):
    """(u, v, entry) for every undirected edge u < v, with ``entry`` its CSR position u->v."""
    xp = be.xp
    rows = be.row_ids(graph.indptr, graph.indices.shape[0])
    cols = graph.indices.astype(xp.int64)
    entry = xp.flatnonzero(rows < cols)
    return rows[entry], cols[entry], entry


def rating_ranks(ratings, xp):
    """Dense integer rank of each rating (equal ratings -> equal rank, higher = heavier)."""
    if ratings.shape[0] == 0:
        return xp.zeros(0, dtype=xp.int64)
    _, inverse = xp.unique(ratings, return_inverse=True)
    return inverse.reshape(-1).astype(xp.int64)


def local_max_rounds(n, eu, ev, rank, *, seed, be):
    """Run local max on the undirected edge list (eu[i], ev[i]) with integer ranks.

    Returns (mate, stats). Each round every alive edge gets the key
    (rank << 32) | hash32(seed, round, edge id); an edge whose key is the maximum at both
    endpoints is locally dominant and matched. Equal keys (a 32-bit hash collision) are
    resolved by the smaller edge id, so at most one edge per vertex is ever chosen.
    Then every edge with a matched endpoint is dropped: masked out within a batch of
    rounds, removed by a compaction after it. Rounds work on local vertex ids (``orig``
    maps them back); the result depends neither on the relabelling nor on the batch size.
    """
    xp = be.xp
    m = eu.shape[0]
    # slot n of mate (and of matched) is a trash slot: masked-out writes go there, so a
    # round needs no boolean compaction (a host sync on the GPU)
    mate_ext = xp.full(n + 1, -1, dtype=xp.int64)
    u64 = xp.uint64
    eid = xp.arange(m, dtype=u64)  # stable edge id for the hash, same for both directions
    shifted = rank.astype(u64) << u64(RANK_SHIFT)
    matched_counts, alive_counts = [], []  # per round, device scalars: read once at the end
    orig = None  # local vertex id -> graph vertex id (None: identity)
    nv = n
    batch = ROUNDS_PER_CHECK[be.name]
    rounds = 0
    tail = 0
    while eu.shape[0] > 0:
        if eu.shape[0] * 2 * RELABEL_SHRINK < nv:
            ids = xp.unique(xp.concatenate([eu, ev]))
            eu, ev = xp.searchsorted(ids, eu), xp.searchsorted(ids, ev)
            orig = ids if orig is None else orig[ids]
            nv = ids.shape[0]
        if rounds >= GREEDY_TAIL_AFTER:
            rounds += 1
            key = shifted | be.hash32(seed, STREAM_BASE + rounds, eid).astype(u64)
            tail = eu.shape[0]
            wu, wv = _greedy_tail(eu, ev, key, eid, nv, be)
            gu, gv = (wu, wv) if orig is None else (orig[wu], orig[wv])
            mate_ext[gu] = gv
            mate_ext[gv] = gu
            matched_counts.append(xp.asarray(2 * wu.shape[0]))
            alive_counts.append(xp.asarray(0))
            break
        matched = xp.zeros(nv + 1, dtype=bool)  # every endpoint of an alive edge is unmatched
        alive = xp.ones(eu.shape[0], dtype=bool)
        ends = xp.concatenate([eu, ev])
        for i in range(min(batch, GREEDY_TAIL_AFTER - rounds)):
            rounds += 1
            key = shifted | be.hash32(seed, STREAM_BASE + rounds, eid).astype(u64)
            if i:  # after the first round of a batch some edges are dead: mask them out
                key = xp.where(alive, key, u64(0))
            best = xp.zeros(nv, dtype=u64)
            be.scatter_max(best, ends, xp.concatenate([key, key]))
            cand = (key == best[eu]) & (key == best[ev])
            if i:
                cand &= alive
            # resolve key collisions: per vertex, only the candidate with the smallest edge id
            first = xp.full(nv, m, dtype=u64)
            # the CPU's scatter costs per element and its compaction nothing: scatter the
            # candidates only; the GPU scatters all edges (non-candidates send m), no sync
            c = slice(None) if be.is_gpu else xp.flatnonzero(cand)
            ce = xp.where(cand[c], eid[c], u64(m))
            be.scatter_min(first, xp.concatenate([eu[c], ev[c]]), xp.concatenate([ce, ce]))
            win = cand & (first[eu] == eid) & (first[ev] == eid)
            wu, wv = xp.where(win, eu, nv), xp.where(win, ev, nv)
            matched[wu] = True
            matched[wv] = True
            gu = xp.where(win, eu if orig is None else orig[eu], n)
            gv = xp.where(win, ev if orig is None else orig[ev], n)
            mate_ext[gu] = gv
            mate_ext[gv] = gu
            mate_ext[n] = -1
            matched[nv] = False
            alive &= ~matched[eu] & ~matched[ev]
            matched_counts.append(2 * win.sum())
            alive_counts.append(alive.sum())
        # compaction: keep the alive edges (its size is the termination test)
        keep = xp.flatnonzero(alive)
        eu, ev, eid, shifted = eu[keep], ev[keep], eid[keep], shifted[keep]
    counts = be.to_host(xp.stack(matched_counts)) if matched_counts else np.zeros(0, dtype=np.int64)
    left = be.to_host(xp.stack(alive_counts)) if alive_counts else np.zeros(0, dtype=np.int64)
    return mate_ext[:n], _round_stats(counts, left, n, m, tail)


def _round_stats(counts, left, n, m, tail):
    """Stats from the per-round numbers of matched vertices and of edges left alive."""
    # rounds that started with alive edges; trailing no-op rounds of the last batch don't count
    used = int(np.flatnonzero(counts > 0).max() + 1) if (counts > 0).any() else 0
    fractions = (np.cumsum(counts[:used]) / n).tolist() if n else []
    edges_left = (left[:used] / m).tolist() if m else []
    return {"rounds": used, "matched_fraction": fractions, "edges_left": edges_left,
            "greedy_tail_edges": tail}


def local_max_rounds_cpu(n, eu, ev, rating, *, seed, overwrite=False):
    """``local_max_rounds`` as one compiled kernel (host arrays): the same rounds, keys and
    tie-breaks, so the same mate and stats. ``rating`` may be the ratings themselves: the
    kernel only compares them, and comparing ratings is comparing their dense ranks.
    ``overwrite``: eu and ev may be used as the kernel's working copies (they are left
    scrambled) when they already have its index dtype."""
    m = eu.shape[0]
    keys = _rng.stream_keys(seed, STREAM_BASE + 1, GREEDY_TAIL_AFTER)
    mate = np.full(n, -1, dtype=np.int64)
    # the rounds stream their edge arrays through memory: 32-bit ids halve the traffic
    ids = np.int32 if max(n, m) < 2**31 else np.int64
    # the kernel's working arrays come from numpy, not from allocations inside the kernel:
    # numpy asks the kernel for transparent huge pages on large arrays (>= 4 MiB), numba's
    # allocator does not, and the rounds' random record updates then miss the TLB far less
    # (delaunay 2^20, first round's keying pass: 68 ms instead of 125 ms)
    working = np.asarray if overwrite else np.array   # the rounds compact them in place
    eu, ev = working(eu, dtype=ids), working(ev, dtype=ids)
    order = order_keys(rating)          # a new array: compacted in place too
    scratch = (np.arange(m, dtype=ids), np.zeros(2 * n, dtype=np.uint64), np.zeros(n, dtype=np.uint8))
    rounds, counts, left, eu, ev, eid, order = _local_max_kernel(eu, ev, order, keys, mate, *scratch)
    counts, left = counts[:rounds], left[:rounds]
    tail = 0
    if eu.shape[0]:  # GREEDY_TAIL_AFTER rounds were not enough: finish greedily (see there)
        tail = eu.shape[0]
        key = (rating_ranks(order, np).astype(np.uint64) << np.uint64(RANK_SHIFT)) \
            | _rng.hash32(np, seed, STREAM_BASE + rounds + 1, eid).astype(np.uint64)
        wu, wv = _greedy_tail(eu, ev, key, eid.astype(np.uint64), n, get_backend("cpu"))
        mate[wu] = wv
        mate[wv] = wu
        counts = np.append(counts, 2 * wu.shape[0])
        left = np.append(left, 0)
    return mate, _round_stats(counts, left, n, m, tail)


def order_keys(values):
    """uint64 keys that order like ``values`` (equal values, equal keys), so a kernel compares
    one integer type: the IEEE bit pattern of a float with its sign handled (-0.0 becomes
    +0.0 first); ranks of the values when they hold NaN (as the whole-array rounds use)."""
    values = np.asarray(values)
    if values.dtype.kind == "f":
        keys, has_nan = _float_order_keys(np.ascontiguousarray(values, dtype=np.float64))
        return rating_ranks(values, np).astype(np.uint64) if has_nan else keys
    return values.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)


@njit(cache=True)
def _float_order_keys(values):
    # one pass (the whole-array version took five over the edge list); no array expression
    # (`values + 0.0`): numba's ufunc machinery costs compile time and start-up imports
    sign = np.uint64(1 << 63)
    bits = values.view(np.uint64)
    keys = np.empty(values.shape[0], dtype=np.uint64)
    for i in range(values.shape[0]):
        if np.isnan(values[i]):
            return keys, True
        b = bits[i] if values[i] != 0.0 else np.uint64(0)   # -0.0 orders as +0.0
        keys[i] = ~b if b & sign else b | sign
    return keys, False


# The kernel's per-vertex record is two uint64: the best key of the round so far, and
# (its hash << 32) | state, state = the round + 1 that set it, or _CANDIDATE once an edge of
# the vertex was a candidate in the round's matching pass. A round touches each endpoint's
# record a few times, and on large graphs each touch of a random endpoint is a cache miss:
# one 16-byte record per vertex makes it one miss. Whether a vertex is matched lives in a
# byte per vertex beside it (a million vertices: 1 MiB, within the L2 cache): most edges
# the next round drops have a matched endpoint, and testing that then costs no miss.
_CANDIDATE = np.uint64(0xFFFFFFFF)   # never a round's state: rounds are at most GREEDY_TAIL_AFTER
_LOW32 = np.uint64(0xFFFFFFFF)


@njit(cache=True, internal=True)
def _offer(rec, x, o, hi, stamp):
    """Make edge key (o, hi) the best of vertex x if it beats the best of this round
    (``stamp``) so far.

    Written without branches: the outcome is a coin flip, and a mispredicted branch would
    also stall the next edges' record loads, which are cache misses on large graphs.
    """
    hi = np.uint64(hi)
    bk, bs = rec[2 * x], rec[2 * x + 1]
    better = ((bs & _LOW32) != stamp) | (o > bk) | ((o == bk) & (hi > (bs >> np.uint64(32))))
    rec[2 * x] = o if better else bk
    rec[2 * x + 1] = ((hi if better else bs >> np.uint64(32)) << np.uint64(32)) | stamp


@njit(cache=True)
def _local_max_kernel(eu, ev, order, round_keys, mate, eid, rec, matched):
    """Rounds 1..len(round_keys) of local max on the edge list (eu, ev) with uint64 ``order``
    keys of the ratings; fills ``mate``. Returns (rounds run, matched vertices per round,
    edges alive after each round, and the edges still alive: eu, ev, edge id, order).

    A round keys every alive edge by (order, hash32(edge id)) compared lexicographically,
    as the whole-array rounds compare (rank << 32) | hash; then keeps the edges whose key
    is the maximum at both endpoints (candidates), resolves equal keys by the smallest edge
    id per vertex, and matches the winners. The next round's first pass drops the edges of
    matched vertices while it keys the rest, so a round costs O(alive edges), never O(n).

    The edges stay in increasing edge id (compaction keeps their order), so the candidate
    with the smallest id at a vertex is the first one the matching pass meets there: a
    candidate wins iff neither endpoint has met a candidate before it in this pass. That is
    the whole-array rounds' rule (per vertex the smallest candidate id, a winner smallest
    at both ends) in one pass; two candidates at a vertex need a 32-bit hash collision.

    eu, ev and order are compacted in place. Scratch, from the caller (see there): ``eid``
    = arange(m) in eu's dtype (ids of the alive edges, compacted alongside), ``rec`` =
    zeros(2n) uint64 (the vertex records above), ``matched`` = zeros(n) uint8. The matching
    pass hashes the edge ids again rather than reading them back: a few multiplications
    per edge cost less than storing and streaming a hash array (12 MiB on delaunay 2^20).
    """
    m = eu.shape[0]
    max_rounds = round_keys.shape[0]
    counts = np.zeros(max_rounds, dtype=np.int64)
    left = np.zeros(max_rounds, dtype=np.int64)
    alive = m
    rounds = 0
    while True:
        # drop edges with a matched endpoint; key the others and keep each endpoint's best
        key = round_keys[min(rounds, max_rounds - 1)] if max_rounds else np.uint64(0)
        stamp = np.uint64(rounds + 1)
        kept = 0
        ahead = alive - PREFETCH_DISTANCE
        for i in range(alive):
            if i < ahead:   # ev ahead is not yet overwritten: the compaction writes at <= i
                prefetch(rec, 2 * np.int64(ev[i + PREFETCH_DISTANCE]))
            u, v = eu[i], ev[i]
            if matched[u] | matched[v]:
                continue
            o = order[i]
            hi = _rng.hash32_at(np.int64(eid[i]), key)   # int64 like every caller: one compile
            if kept != i:  # nothing moves until an edge is dropped: skip those writes
                eu[kept], ev[kept], eid[kept], order[kept] = u, v, eid[i], o
            kept += 1
            _offer(rec, u, o, hi, stamp)
            _offer(rec, v, o, hi, stamp)
        alive = kept
        if rounds:
            left[rounds - 1] = alive
        if alive == 0 or rounds == max_rounds:
            break
        won = 0
        ahead = alive - PREFETCH_DISTANCE
        for i in range(alive):  # candidates (best at both ends) in edge id order; winners
            if i < ahead:
                prefetch(rec, 2 * np.int64(ev[i + PREFETCH_DISTANCE]))
            u, v = eu[i], ev[i]
            o, hs = order[i], np.uint64(_rng.hash32_at(np.int64(eid[i]), key)) << np.uint64(32)
            # u first: the edges are sorted by u, so u's record is at hand, and few edges are
            # u's best; only those read v's record (a cache miss on large graphs)
            if o == rec[2 * u] and hs == (rec[2 * u + 1] & ~_LOW32) \
                    and o == rec[2 * v] and hs == (rec[2 * v + 1] & ~_LOW32):
                first = (rec[2 * u + 1] & _LOW32) != _CANDIDATE and (rec[2 * v + 1] & _LOW32) != _CANDIDATE
                rec[2 * u + 1] |= _CANDIDATE   # the state bits only: keys stay comparable
                rec[2 * v + 1] |= _CANDIDATE
                if first:
                    mate[u] = v
                    mate[v] = u
                    matched[u] = 1
                    matched[v] = 1
                    won += 2
        counts[rounds] = won
        rounds += 1
    return rounds, counts, left, eu[:alive], ev[:alive], eid[:alive], order[:alive]


def _greedy_tail(eu, ev, key, eid, nv, be):
    """Match the remaining edges greedily by decreasing key (ties: smaller edge id), on the
    host with the serial greedy scan; returns the matched pairs (local ids) on ``be``."""
    from .serial import _greedy_scan  # numba kernel; imported here to keep import light
    h = be.to_host
    eu_h, ev_h, key_h, eid_h = h(eu), h(ev), h(key), h(eid)
    order = np.lexsort((eid_h, ~key_h))  # primary: key descending (~ reverses uint64)
    mate = np.full(nv, -1, dtype=np.int64)
    _greedy_scan(eu_h[order], ev_h[order], mate)
    u = np.flatnonzero(mate > np.arange(nv))
    return be.to_device(u), be.to_device(mate[u])


def _check_edge_count(ratings):
    if ratings.shape[0] >= 2 ** 32:
        raise ValueError("local_max supports fewer than 2**32 undirected edges")


@register("local_max",
          description="local max: match edges heavier than all incident alive edges, repeat (maximal, 1/2-approx)",
          paper="001_bd35ca2a1a8d7ddc (Birn et al., local max)",
          weighted=True, backends=("cpu", "gpu"), serial=False)
def local_max(graph, *, rating="weight", seed=0, backend=None):
    """Local max matching: every round, each alive edge that is the heaviest (ties by a fresh
    random perturbation) at both endpoints is matched and its endpoints' edges removed."""
    be = backend or graph.backend
    xp = be.xp
    if CPU_KERNEL and not be.is_gpu:
        eu, ev, ratings = upper_edge_ratings(graph, rating)
        _check_edge_count(ratings)
        mate, stats = local_max_rounds_cpu(graph.n, eu, ev, ratings, seed=seed, overwrite=True)
    else:
        eu, ev, entry = undirected_edges(graph, be)
        ratings = edge_ratings(graph, rating)[entry]
        _check_edge_count(ratings)
        mate, stats = local_max_rounds(graph.n, eu, ev, rating_ranks(ratings, xp), seed=seed, be=be)
    return Matching.from_mate(graph, mate, stats=stats)
