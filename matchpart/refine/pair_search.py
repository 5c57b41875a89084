"""2-way FM on one pair of blocks of a k-way partition (numba): the unit of work that
parallel_fm.py runs for all pairs of a quotient-graph matching at the same time.

A move between blocks a and b changes only the weights of a and b, the cut edges at the moved
vertex and the a/b connectivities of its neighbours, so searches on disjoint pairs cannot
change each other's gains, room or state order: each pair's task reads and writes only the
entries of its own vertices (parts, gains, stamps, heap positions) and blocks (weights,
vertex counts). Other tasks' vertices are read (their parts), but they stay outside {a, b}
whatever their task does, so what a task computes does not depend on when it runs.

Per vertex v of the pair, gain[v] = (edge weight into the other block) - (into its own),
valid while stamp_gain[v] == the round's epoch; a move of x from one side to the other adds
+-2w to each valid neighbour gain (the classic 2-way update, O(deg x)), and rollbacks apply
the reverse moves the same way, so gains stay valid for the whole round.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from .heap import heap_pop, heap_remove, heap_set


@njit(cache=True, internal=True)
def _pair_gain(v, a, b, indptr, indices, ewgt, parts):
    """Gain of moving v (in a or b) to the other block of the pair, from its row."""
    own = parts[v]
    other = b if own == a else a
    g = 0.0
    for e in range(indptr[v], indptr[v + 1]):
        p = parts[indices[e]]
        if p == other:
            g += ewgt[e]
        elif p == own:
            g -= ewgt[e]
    return g


@njit(cache=True, internal=True)
def _valid_gain(v, a, b, epoch, indptr, indices, ewgt, parts, gain, gain_epoch):
    if gain_epoch[v] != epoch:
        gain[v] = _pair_gain(v, a, b, indptr, indices, ewgt, parts)
        gain_epoch[v] = epoch
    return gain[v]


@njit(cache=True, internal=True)
def _flip(v, a, b, epoch, indptr, indices, ewgt, vwgt, parts, bw, counts, gain, gain_epoch):
    """Move v to the other block of the pair: parts, block weights and counts, and the valid
    gains of v and of its neighbours in the pair."""
    frm = parts[v]
    to = b if frm == a else a
    parts[v] = to
    bw[frm] -= vwgt[v]
    bw[to] += vwgt[v]
    counts[frm] -= 1
    counts[to] += 1
    gain[v] = -gain[v]
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        pu = parts[u]
        if (pu != frm and pu != to) or gain_epoch[u] != epoch:
            continue
        if pu == frm:          # its edge to v now leads into its other block
            gain[u] += 2.0 * ewgt[e]
        elif pu == to:         # its edge to v now stays inside
            gain[u] -= 2.0 * ewgt[e]


@njit(cache=True, internal=True)
def _has_room(v, a, b, vwgt, parts, bw, maxw):
    to = b if parts[v] == a else a
    return bw[to] + vwgt[v] <= maxw[to]


@njit(cache=True, internal=True)
def _overload(a, b, bw, maxw):
    return max(bw[a] - maxw[a], 0.0) + max(bw[b] - maxw[b], 0.0)


@njit(cache=True, internal=True)
def pair_search(a, b, seeds, mark_seeds, stall, epoch, done_mark, indptr, indices, ewgt, vwgt, parts, bw, maxw,
                counts, gain, gain_epoch, done, keys, verts, pos, size, log_v, log_at):
    """One FM search on the pair (a, b) from ``seeds`` (vertices of a or b), in place:
    moves go to the other block when it has room, each vertex at most once per
    ``done_mark`` (done[v] == done_mark: moved, or seeded when mark_seeds); the search stops
    after ``stall`` moves without a new best (lowest pair overload, then highest gain) and
    rolls back to its best prefix. Moves are logged in log_v from log_at on; the kept ones
    stay there. Returns (gain kept, moves kept). keys/verts: this task's heap slots; pos:
    every vertex's slot (-1 outside, and again on return)."""
    size[0] = 0
    for i in range(seeds.shape[0]):
        s = seeds[i]
        if done[s] == done_mark:
            continue
        if mark_seeds:
            done[s] = done_mark
        if _has_room(s, a, b, vwgt, parts, bw, maxw):
            heap_set(keys, verts, pos, size, s,
                     _valid_gain(s, a, b, epoch, indptr, indices, ewgt, parts, gain, gain_epoch))
    over = _overload(a, b, bw, maxw)
    best_over = over
    cur = 0.0
    best = 0.0
    nm = 0
    best_len = 0
    since_best = 0
    while since_best < stall and size[0] > 0:
        v, g = heap_pop(keys, verts, pos, size)
        if not _has_room(v, a, b, vwgt, parts, bw, maxw):
            continue       # its target filled up since it was queued
        _flip(v, a, b, epoch, indptr, indices, ewgt, vwgt, parts, bw, counts, gain, gain_epoch)
        done[v] = done_mark
        log_v[log_at + nm] = v
        nm += 1
        cur += g
        over = _overload(a, b, bw, maxw)
        if over < best_over or (over == best_over and cur > best):
            best_over = over
            best = cur
            best_len = nm
            since_best = 0
        else:
            since_best += 1
        for e in range(indptr[v], indptr[v + 1]):      # requeue its neighbours in the pair
            u = indices[e]
            pu = parts[u]
            if (pu != a and pu != b) or done[u] == done_mark:
                continue
            if _has_room(u, a, b, vwgt, parts, bw, maxw):
                heap_set(keys, verts, pos, size, u,
                         _valid_gain(u, a, b, epoch, indptr, indices, ewgt, parts, gain, gain_epoch))
            else:
                heap_remove(keys, verts, pos, size, u)
    while size[0] > 0:     # leave pos at -1 for the next search
        heap_pop(keys, verts, pos, size)
    for i in range(nm - 1, best_len - 1, -1):
        _flip(log_v[log_at + i], a, b, epoch, indptr, indices, ewgt, vwgt, parts, bw, counts, gain, gain_epoch)
    return best, best_len


@njit(cache=True, internal=True)
def pair_task(a, b, seeds, stall, local_stall, epoch, indptr, indices, ewgt, vwgt, parts, bw, maxw, counts, gain,
              gain_epoch, done, keys, verts, pos, size, log_v, log_at):
    """The pair's share of a round: a global 2-way pass from all its seeds, then (local_stall
    > 0) localized searches from each seed still untouched (KaFFPa's multi-try FM, a vertex
    moved at most once by them). ``done`` marks 2 * epoch and 2 * epoch + 1 are this round's.
    Returns (gain, moves kept); the kept moves are log_v[log_at : log_at + moves]."""
    total, kept = pair_search(a, b, seeds, False, stall, epoch, 2 * epoch, indptr, indices, ewgt, vwgt, parts, bw,
                              maxw, counts, gain, gain_epoch, done, keys, verts, pos, size, log_v, log_at)
    if local_stall > 0:
        one = np.empty(1, dtype=np.int64)
        for i in range(seeds.shape[0]):
            s = seeds[i]
            if done[s] == 2 * epoch + 1:
                continue
            pu = parts[s]
            other = b if pu == a else a
            touches = False
            for e in range(indptr[s], indptr[s + 1]):
                if parts[indices[e]] == other:
                    touches = True
                    break
            if not touches:
                continue
            one[0] = s
            g, m = pair_search(a, b, one, True, local_stall, epoch, 2 * epoch + 1, indptr, indices, ewgt, vwgt,
                               parts, bw, maxw, counts, gain, gain_epoch, done, keys, verts, pos, size, log_v,
                               log_at + kept)
            total += g
            kept += m
    return total, kept
