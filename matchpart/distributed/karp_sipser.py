"""Karp-Sipser in BSP supersteps on the vertex-based (1-D) distribution (seed 002, Patwary,
Bisseling & Manne), giving the same matching as the shared-memory ``karp_sipser`` for any P.

A superstep: the free degree-one vertices request their only free neighbour (or, when no
rank has one, the free vertices of minimum free degree request a random free neighbour);
requests to another rank's vertex travel as match requests (the paper's smr / rmr) to the
target's owner, which accepts one per target with the shared-memory rule and answers with
confirmations (cf); then every newly matched vertex is announced to the ranks that hold it
as a ghost (unavailability, u), which lower their vertices' free degrees. In 1-D a vertex's
row is held whole by its owner, so the paper's handover, give-up and criticality messages
(needed when a row is split over processors) never arise. Words sent are counted per message
type, for comparison with SpMV's volume on the same distribution.
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ..matchers import karp_sipser as shared

_CPU = backend.get("cpu")
_BIG = np.iinfo(np.int64).max


def spmv_volume(g):
    """Words a 1-D row-distributed SpMV y = A x sends: every x_j to each other rank whose rows
    have a nonzero in column j (the fan-out; a row distribution needs no fan-in)."""
    return g.comm.allreduce(int(g.ghosts.shape[0]))


def karp_sipser(g, *, seed=0):
    """(mate of own vertices as global ids, stats); stats has rounds, degree_one_rounds,
    random_rounds, matched_fraction and ``words`` sent by all ranks per message type."""
    c = g.comm
    nl = g.n_local
    words = {"request": 0, "confirmation": 0, "unavailability": 0}
    entry0 = c.exscan(int(g.cols.shape[0]))          # global CSR position of the first own entry
    deg = np.diff(g.indptr).astype(np.int64)
    idsum = np.bincount(g.rows, weights=g.cols.astype(np.float64), minlength=nl)
    mate = np.full(nl, -1, dtype=np.int64)
    free_ext = np.ones(nl + g.ghosts.shape[0], dtype=bool)   # own vertices, then ghosts
    # own vertices next to each ghost (the ghosts' rows restricted to own columns)
    ghost_entries = np.flatnonzero(g.adj >= nl)
    by_ghost = ghost_entries[np.argsort(g.adj[ghost_entries], kind="stable")]
    ghost_ptr = np.searchsorted(g.adj[by_ghost], np.arange(nl, nl + g.ghosts.shape[0] + 1))
    asks = np.full(nl, -1, dtype=np.int64)
    rounds = d1 = rand = 0
    fractions = []
    while True:
        free = mate < 0
        singles = np.flatnonzero(free & (deg == 1))
        open_ = np.flatnonzero(free & (deg > 0))
        counts = c.allreduce(np.array([singles.shape[0], open_.shape[0]], dtype=np.int64))
        if counts[0]:
            requester, target = singles, idsum[singles].astype(np.int64)
            d1 += 1
        elif counts[1]:
            rand += 1
            dmin = c.allreduce(int(deg[open_].min()) if open_.shape[0] else _BIG, op="min")
            low = open_[deg[open_] == dmin]
            pick = _CPU.uniform(seed, 3 * rounds + shared._STREAM_REQUESTER, low + g.first) \
                < shared.RANDOM_REQUEST_FRACTION
            requester = low[pick]
            if not c.allreduce(int(requester.shape[0])):   # tiny graphs: the smallest one asks
                smallest = c.allreduce(int(low[0]) + g.first if low.shape[0] else _BIG, op="min")
                requester = low[:1] if low.shape[0] and low[0] + g.first == smallest else low[:0]
            target = _random_free_neighbour(g, requester, free_ext, entry0, seed, rounds)
        else:
            break
        rounds += 1
        newly, partner = _resolve(g, asks, requester, target, seed, rounds, words)
        mate[newly] = partner
        free_ext[newly] = False
        # unavailability: newly matched own vertices to the ranks that hold them as ghosts
        announced = np.zeros(nl, dtype=bool)
        announced[newly] = True
        words["unavailability"] += int(announced[g.send_idx].sum())   # send lists hold other ranks only
        (gone,) = g.ghost_updates(announced)
        free_ext[gone] = False
        ghost_gone = gone - nl
        # every own neighbour y of a newly matched x (own or ghost) loses x as a free neighbour
        pos, _ = _CPU.ranges(g.indptr[newly], g.indptr[newly + 1] - g.indptr[newly])
        pos = pos[g.adj[pos] < nl]
        gpos, _ = _CPU.ranges(ghost_ptr[ghost_gone], ghost_ptr[ghost_gone + 1] - ghost_ptr[ghost_gone])
        gpos = by_ghost[gpos]
        y = np.concatenate([g.adj[pos], g.rows[gpos]])
        x = np.concatenate([g.rows[pos] + g.first, g.cols[gpos]])
        np.subtract.at(deg, y, 1)
        np.subtract.at(idsum, y, x.astype(np.float64))
        fractions.append(c.allreduce(int((mate >= 0).sum())) / max(g.n, 1))
    total_words = {k: c.allreduce(v) for k, v in words.items()}
    return mate, {"rounds": rounds, "degree_one_rounds": d1, "random_rounds": rand,
                  "matched_fraction": fractions, "words": total_words}


def _random_free_neighbour(g, requester, free_ext, entry0, seed, rnd):
    """For each requester, its free neighbour with the smallest hash of the global entry
    position (ties: the largest id), as shared.karp_sipser._random_free_neighbour."""
    pos, seg = _CPU.ranges(g.indptr[requester], g.indptr[requester + 1] - g.indptr[requester])
    h = (_CPU.hash64(seed, 3 * rnd + shared._STREAM_NEIGHBOUR, pos + entry0) >> np.uint64(1)).astype(np.int64)
    ok = free_ext[g.adj[pos]]
    best = np.full(requester.shape[0], _BIG, dtype=np.int64)
    np.minimum.at(best, seg[ok], h[ok])
    hit = ok & (h == best[seg])
    out = np.full(requester.shape[0], -1, dtype=np.int64)
    np.maximum.at(out, seg[hit], g.cols[pos[hit]])
    return out


def _resolve(g, asks, requester, target, seed, rnd, words):
    """Match requests at the targets' owners (shared._resolve_requests's rule); returns the
    own vertices matched here (local ids) and their partners (global ids)."""
    c = g.comm
    asks[requester] = target
    dest = g.owner(target)
    words["request"] += 2 * int((dest != c.rank).sum())
    u, v = c.exchange(dest, requester + g.first, target)     # (requester, target) at owner(target)
    theirs = asks[v - g.first]
    mutual = theirs == u
    ok = ((theirs < 0) | mutual) & ~(mutual & (u > v))
    asks[requester] = -1
    u, v = u[ok], v[ok]
    h = (_CPU.hash64(seed, 3 * rnd + shared._STREAM_ACCEPT, u) >> np.uint64(33)).astype(np.int64)
    key = (h << 32) | u
    best = np.full(g.n_local, _BIG, dtype=np.int64)
    np.minimum.at(best, v - g.first, key)
    acc = best[v - g.first] == key
    u, v = u[acc], v[acc]
    # confirmations: the requester's owner learns its vertex is matched
    back = g.owner(u)
    words["confirmation"] += 2 * int((back != c.rank).sum())
    cu, cv = c.exchange(back, u, v)
    return np.concatenate([v - g.first, cu - g.first]), np.concatenate([u, cv])
