"""Distributed size-constrained label propagation: the coarsening of power-law graphs, whose
matching levels keep most of the edges (R-MAT 2^18 at P = 1: 8 levels of 1.0-3.8M entries,
where the single process clusters 262144 vertices into 22186 in one level).

A cluster is named by a global vertex id (its label) and lives on that id's owner rank,
which keeps its weight and member count. A round:
1. each rank asks the owners for the weights of the clusters its own vertices and ghosts
   belong to;
2. every active own vertex (half of them, by a hash of the round and its id) sums its edge
   weight per neighbouring cluster and picks the best one with room for it under those
   weights (ties: the larger hash of (vertex, cluster), then the smaller label); it
   proposes to move when that beats its own cluster's connection (``decide``);
3. each owner accepts the proposals into its clusters in vertex id order while the weight
   stays within the cap (leaving vertices are not counted as room, so no cluster exceeds
   it), and the accepted vertices' old clusters lose their weight;
4. moved vertices' labels go to the ranks that hold them as ghosts.
The labels are the same for any number of ranks (every decision is a function of global
ids and the previous round's weights; with float vertex weights, up to the rounding of the
weight sums, which arrive in rank order), but not those of the single process's
coarsen/lp_cluster.py, which re-evaluates only the vertices near a move. ``cluster`` then
groups the vertices left alone and numbers the non-empty clusters on their owners.
"""
from __future__ import annotations

import numpy as np

from ..backend.rng import hash32_at, stream_key
from ..coarsen.lp_cluster import TABLE_MIX
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from .contract import coarse_ranges
from .twohop import two_hop

# Rounds of label propagation per level (the single process's coarsen/cluster.py: 8).
ROUNDS = 8
# Hash streams: which vertices are active in round r (ACTIVE_STREAM + r) and the tie-break
# between equally connected clusters (TIE_STREAM + r); distinct from the single process's.
ACTIVE_STREAM = 0xD1C1000
TIE_STREAM = 0xD1C2000


def _ask(c, owner, keys, answer):
    """Per key, ``answer(keys received)`` evaluated on the key's owner rank: one request and
    one reply all-to-all; the answers come back in the order of ``keys``."""
    order = c.by_dest(owner)
    asked, counts = c.alltoallv(keys[order], np.bincount(owner, minlength=c.size))
    got, _ = c.alltoallv(answer(asked), counts)
    out = np.empty_like(got)
    out[order] = got
    return out


def cluster_labels(g, cap, *, seed=0, rounds=ROUNDS):
    """(Cluster label, a global vertex id, of every own vertex of DistGraph ``g``; member
    count of every cluster named by an own vertex); every cluster weighs at most ``cap``
    (or is one vertex)."""
    c = g.comm
    nl = g.n_local
    vw = g.vwgt.astype(np.float64)
    labels = np.arange(g.first, g.last, dtype=np.int64)
    ext = g.extended(labels)
    weight = vw.copy()                          # of the clusters this rank owns (label - first)
    members = np.ones(nl, dtype=np.int64)
    for r in range(rounds):
        names, at = distinct_labels(ext)
        cw = _ask(c, g.owner(names), names, lambda asked: weight[asked - g.first])
        target = decide(g.indptr, g.adj, g.ewgt, vw, at, names, cw, float(cap), g.gid,
                        np.uint64(stream_key(seed, ACTIVE_STREAM + r)), np.uint64(stream_key(seed, TIE_STREAM + r)))
        movers = np.flatnonzero(target >= 0)
        moved_any = c.allreduce(int(movers.shape[0]))
        if not moved_any:
            break
        to = target[movers]
        # the owners accept in vertex id order while the cluster has room
        owner = g.owner(to)
        order = c.by_dest(owner)
        sent = movers[order]
        counts = np.bincount(owner, minlength=c.size)
        got_to, rcounts = c.alltoallv(to[order], counts)
        got_v, _ = c.alltoallv(g.gid[sent], counts)
        got_w, _ = c.alltoallv(vw[sent], counts)
        ok = accept(got_to - g.first, got_v, got_w, weight, members, float(cap))
        ok_back, _ = c.alltoallv(ok, rcounts)
        accepted = np.zeros(nl, dtype=np.bool_)
        accepted[sent[ok_back.astype(np.bool_)]] = True
        moved = np.flatnonzero(accepted)
        # the old clusters lose the accepted vertices
        old = labels[moved]
        leave_to, leave_w = c.exchange(g.owner(old), old, vw[moved])
        leave(leave_to - g.first, leave_w, weight, members)
        labels[moved] = target[moved]
        ext[:nl] = labels
        gat, glab = g.ghost_updates(accepted, labels)
        ext[gat] = glab
    return labels, members


@njit(cache=True)
def distinct_labels(ext):
    """(names, at): the distinct values of ``ext`` (int64 labels >= 0) in order of first
    appearance, and each entry's index among them, through an open-addressing hash table
    (multiplicative hashing by lp_cluster.TABLE_MIX, as the single process's cluster tables).
    A round's decide reads labels only through these (its ties go by the label values), so
    the order of names changes no result. np.unique's sort for the same took 0.11 s of a
    P = 2 run's 24 rounds on the R-MAT 2^18 file (rank 0, cProfile), this 0.055 s."""
    n = ext.shape[0]
    bits = 4
    while (1 << bits) < 2 * n:
        bits += 1
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    keys = np.full(1 << bits, -1, dtype=np.int64)
    index = np.empty(1 << bits, dtype=np.int64)
    names = np.empty(n, dtype=np.int64)
    at = np.empty(n, dtype=np.int64)
    u = 0
    for i in range(n):
        x = ext[i]
        h = np.int64((np.uint64(x) * TABLE_MIX) >> shift)
        while keys[h] >= 0 and keys[h] != x:
            h = (h + 1) & mask
        if keys[h] < 0:
            keys[h] = x
            index[h] = u
            names[u] = x
            u += 1
        at[i] = index[h]
    return names[:u].copy(), at


@njit(cache=True)
def decide(indptr, adj, ewgt, vw, at, names, cw, cap, gid, active_key, tie_key):
    """Per own vertex, the label of the cluster it proposes to join, or -1: among the
    clusters of its neighbours (at: compact cluster index per local index; names: their
    labels; cw: their weights), the best connected one with room (weight + its own <= cap),
    ties by the larger hash of (vertex, label) then the smaller label, when its connection
    beats the vertex's own cluster's. Only active vertices (hash bit of the round) decide."""
    nl = indptr.shape[0] - 1
    last = indptr[nl] - 2 * PREFETCH_DISTANCE
    target = np.full(nl, -1, dtype=np.int64)
    conn = np.zeros(names.shape[0], dtype=np.float64)
    seen = np.empty(names.shape[0] + 1, dtype=np.int64)   # + 1: written before it counts
    for v in range(nl):
        if (hash32_at(gid[v], active_key) & np.uint32(1)) == 0:
            continue
        own = at[v]
        ns = 0
        for e in range(indptr[v], indptr[v + 1]):
            if e < last:
                # two dependent random reads per entry (a file's ids lie anywhere): the
                # cluster index of the neighbour two distances on, and the sum of the one a
                # distance on, whose index that prefetch brought (R-MAT 2^18, P = 1, the
                # first level's round: 275 -> 137 ms; the index alone: 202 ms)
                prefetch(at, adj[e + 2 * PREFETCH_DISTANCE])
                prefetch(conn, at[adj[e + PREFETCH_DISTANCE]])
            cl = at[adj[e]]
            seen[ns] = cl                # without a branch: a coin flip in the first rounds
            ns += conn[cl] == 0
            conn[cl] += ewgt[e]
        best = -1
        best_conn = 0.0
        best_hash = np.uint32(0)
        hashed = False                   # best_hash is computed at the first tie only
        for i in range(ns):
            cl = seen[i]
            c = conn[cl]
            # only a cluster that can beat the best so far reads its weight (a random access)
            if cl == own or (best >= 0 and c < best_conn) or cw[cl] + vw[v] > cap:
                continue
            if best < 0 or c > best_conn:
                best, best_conn, hashed = cl, c, False
                continue
            if not hashed:
                best_hash = hash32_at(gid[v] * np.int64(2654435761) + names[best], tie_key)
                hashed = True
            h = hash32_at(gid[v] * np.int64(2654435761) + names[cl], tie_key)
            if h > best_hash or (h == best_hash and names[cl] < names[best]):
                best, best_hash = cl, h
        if best >= 0 and best_conn > conn[own]:
            target[v] = names[best]
        for i in range(ns):
            conn[seen[i]] = 0.0
    return target


@njit(cache=True)
def accept(slot, vertex, w, weight, members, cap):
    """The proposals (own cluster slot, global vertex id, weight) accepted in order of (slot,
    vertex id) while the cluster's weight plus the arrivals stays within ``cap``; updates
    weight and members. Returns 1 / 0 per proposal, in the given order."""
    by_id = np.argsort(vertex, kind="mergesort")
    order = by_id[np.argsort(slot[by_id], kind="mergesort")]
    ok = np.zeros(slot.shape[0], dtype=np.int64)
    for t in range(slot.shape[0]):
        i = order[t]
        s = slot[i]
        if weight[s] + w[i] <= cap:
            weight[s] += w[i]
            members[s] += 1
            ok[i] = 1
    return ok


@njit(cache=True)
def leave(slot, w, weight, members):
    """The accepted vertices leave their old clusters (own slots)."""
    for i in range(slot.shape[0]):
        weight[slot[i]] -= w[i]
        members[slot[i]] -= 1


def cluster_ids(g, labels):
    """(global coarse id of every own vertex, coarse vtxdist) from any labels: a global
    vertex id, or n + a vertex id for the pairs ``cluster`` adds; each label's clusters are
    numbered on the owner of its vertex, in label order."""
    c = g.comm
    names, at = np.unique(labels, return_inverse=True)
    home = g.owner(np.where(names >= g.n, names - g.n, names))

    def number(asked):
        distinct = np.unique(asked)
        numbered[0] = distinct.shape[0]
        return c.exscan(distinct.shape[0]) + np.searchsorted(distinct, asked)

    numbered = [0]
    ids = _ask(c, home, names, number)
    cid = ids[at.reshape(-1)]
    return cid, coarse_ranges(g, cid, c.allreduce(int(numbered[0])))


def cluster(g, cap, *, seed=0, rounds=ROUNDS):
    """(global coarse id of every own vertex, coarse vtxdist): the clusters of
    ``cluster_labels``; the vertices it leaves alone (isolated ones, degree-1 ones whose
    neighbour's cluster is full: R-MAT 2^18 has 88201 and 35028 of 262144) are paired
    two-hop style (twohop.py: leaves of one hub, isolated vertices among themselves), as the
    single process's coarsen/cluster.py does, so the hierarchy does not stall on them."""
    labels, members = cluster_labels(g, cap, seed=seed, rounds=rounds)
    alone = _ask(g.comm, g.owner(labels), labels, lambda asked: members[asked - g.first]) == 1
    own = np.arange(g.first, g.last, dtype=np.int64)
    # isolated vertices: runs of a rank's own ones up to the cap, without messages (pairing
    # them halved their number per level: 44k of R-MAT 2^18's 64k vertices after level 1)
    isolated = np.flatnonzero(alone & (g.indptr[1:] == g.indptr[:-1]))
    labels[isolated] = g.n + own[isolated[runs_within(g.vwgt[isolated].astype(np.float64), float(cap))]]
    alone[isolated] = False
    mate = two_hop(g, np.where(alone, -1, own), cap, seed=seed)
    paired = alone & (mate >= 0)
    labels = np.where(paired, g.n + np.minimum(own, mate), labels)
    return cluster_ids(g, labels)


@njit(cache=True)
def runs_within(w, cap):
    """Per item, the index of the first item of its run: consecutive items grouped while
    their weights add up to at most ``cap`` (an item heavier than cap is a run alone)."""
    out = np.empty(w.shape[0], dtype=np.int64)
    start = 0
    acc = 0.0
    for i in range(w.shape[0]):
        if i > start and acc + w[i] > cap:
            start = i
            acc = 0.0
        acc += w[i]
        out[i] = start
    return out
