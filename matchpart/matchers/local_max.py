"""Local max matching (Birn et al.): match every edge that beats all incident alive edges; repeat."""
from __future__ import annotations

import numba
import numpy as np

from .. import threads
from ..backend import get as get_backend
from ..backend import rng as _rng
from .base import Matching
from .local_max_kernel import local_max_vertex_rounds, remaining_upper_entries
from .ratings import edge_ratings, entry_order_keys, rating_ranks
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
# On the CPU the rounds run as one compiled kernel (local_max_kernel: the same rounds, keys
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


def local_max_rounds(n, eu, ev, rank, *, seed, be):
    """Run local max on the undirected edge list (eu[i] < ev[i]) with integer ranks.

    Returns (mate, stats). Each round every alive edge gets the key
    (rank << 32) | hash32(seed, round, pair id), pair id = eu * n + ev; each vertex's top
    edge is its maximum key, equal keys (a 32-bit hash collision) resolved by the smaller
    pair id; an edge that is the top at both endpoints is locally dominant and matched.
    Then every edge with a matched endpoint is dropped: masked out within a batch of
    rounds, removed by a compaction after it. Rounds work on local vertex ids (``orig``
    maps them back); the result depends neither on the relabelling nor on the batch size.
    local_max_kernel runs the same rounds vertex by vertex on the CPU.
    """
    xp = be.xp
    m = eu.shape[0]
    # slot n of mate (and of matched) is a trash slot: masked-out writes go there, so a
    # round needs no boolean compaction (a host sync on the GPU)
    mate_ext = xp.full(n + 1, -1, dtype=xp.int64)
    u64 = xp.uint64
    # the pair id orders and hashes an edge the same from both ends and in any CSR order
    pid = eu.astype(u64) * u64(n) + ev.astype(u64)
    none = u64(0xFFFFFFFFFFFFFFFF)
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
            key = shifted | be.hash32(seed, STREAM_BASE + rounds, pid).astype(u64)
            tail = eu.shape[0]
            wu, wv = _greedy_tail(eu, ev, key, pid, nv, be)
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
            key = shifted | be.hash32(seed, STREAM_BASE + rounds, pid).astype(u64)
            if i:  # after the first round of a batch some edges are dead: mask them out
                key = xp.where(alive, key, u64(0))
            best = xp.zeros(nv, dtype=u64)
            be.scatter_max(best, ends, xp.concatenate([key, key]))
            at_u, at_v = key == best[eu], key == best[ev]
            if i:
                at_u &= alive
                at_v &= alive
            # each vertex's top: the smallest pair id among its edges of the best key. The
            # CPU's scatter costs per element and its compaction nothing: scatter those edges
            # only; the GPU scatters all edges (the others send ``none``), no sync
            top = xp.full(nv, none, dtype=u64)
            if be.is_gpu:
                be.scatter_min(top, ends, xp.concatenate([xp.where(at_u, pid, none), xp.where(at_v, pid, none)]))
            else:
                cu, cv = xp.flatnonzero(at_u), xp.flatnonzero(at_v)
                be.scatter_min(top, xp.concatenate([eu[cu], ev[cv]]), xp.concatenate([pid[cu], pid[cv]]))
            win = at_u & at_v & (top[eu] == pid) & (top[ev] == pid)
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
        eu, ev, pid, shifted = eu[keep], ev[keep], pid[keep], shifted[keep]
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


def local_max_rounds_cpu(graph, rating, *, seed):
    """``local_max_rounds`` on the CPU: the rounds of local_max_kernel on the graph's
    adjacency (same keys and tie-breaks, so the same mate and stats), then the greedy tail."""
    n = graph.n
    order = entry_order_keys(graph, rating)   # a new array: the rounds compact it in place
    ids = np.int32 if n < 2**31 else np.int64   # the rounds stream the neighbour ids: 32 bits halve that
    nbr = graph.indices.astype(ids, copy=True)
    keys = _rng.stream_keys(seed, STREAM_BASE + 1, GREEDY_TAIL_AFTER)
    mate = np.full(n, -1, dtype=np.int64)
    parallel_min = threads.PARALLEL_MIN_ITEMS if numba.get_num_threads() > 1 else n + 1
    rounds, counts, left, active, deg = local_max_vertex_rounds(graph.indptr, nbr, order, keys, mate,
                                                                threads.CHUNK, parallel_min)
    counts, left = counts[:rounds], left[:rounds]
    tail = 0
    if active.shape[0]:  # GREEDY_TAIL_AFTER rounds were not enough: finish greedily (see there)
        eu, ev, eo = remaining_upper_entries(graph.indptr, nbr, order, active, deg)
        tail = eu.shape[0]
        pid = eu.astype(np.uint64) * np.uint64(n) + ev.astype(np.uint64)
        key = (rating_ranks(eo, np).astype(np.uint64) << np.uint64(RANK_SHIFT)) \
            | _rng.hash32(np, seed, STREAM_BASE + rounds + 1, pid).astype(np.uint64)
        wu, wv = _greedy_tail(eu, ev, key, pid, n, get_backend("cpu"))
        mate[wu] = wv
        mate[wv] = wu
        counts = np.append(counts, 2 * wu.shape[0])
        left = np.append(left, 0)
    return mate, _round_stats(counts, left, n, graph.indices.shape[0] // 2, tail)


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


def _check_edge_count(m):
    if m >= 2 ** 32:
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
        _check_edge_count(graph.indices.shape[0] // 2)
        mate, stats = local_max_rounds_cpu(graph, rating, seed=seed)
    else:
        eu, ev, entry = undirected_edges(graph, be)
        ratings = edge_ratings(graph, rating)[entry]
        _check_edge_count(ratings.shape[0])
        mate, stats = local_max_rounds(graph.n, eu, ev, rating_ranks(ratings, xp), seed=seed, be=be)
    return Matching.from_mate(graph, mate, stats=stats)
