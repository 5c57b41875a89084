"""Refinement with several weights per vertex (METIS's ncon): greedy k-way moves that keep every
block within its bound in every constraint, and rebalancing that removes overload.

A vertex weighs ``vw[v, j]`` in constraint j and block b may hold at most ``maxw[b, j]``. Both
passes work in rounds: a parallel scan (fixed chunks, threads.CHUNK) proposes each vertex's
best move against the round's start; a serial pass then takes the proposals in order (best
first, ties by a hash of the vertex) and re-evaluates each against the current partition
before moving it, so no move is made on stale gains and the result does not depend on the
thread count.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..backend.rng import hash32_at, stream_key_at
from ..jit import njit
from ..threads import PRANGE_ONLY

# Greedy rounds per level: a round moves every vertex with a positive gain once; METIS's
# greedy k-way refinement runs up to 10 such passes. Rounds stop early when one gains less
# than MIN_ROUND_GAIN of the cut.
GREEDY_ROUNDS = 10
MIN_ROUND_GAIN = 1e-4
# Rebalancing rounds: a round usually removes all overload; each one removes some or stops.
REBALANCE_ROUNDS = 64
# Exchanges tried when no single move lowers the overload: each overloaded block's SWAP_WIDTH
# heaviest vertices (in its overloaded constraints) against each other block's SWAP_WIDTH
# lightest (swap_round).
SWAP_WIDTH = 32
# Smallest decrease of the normalised overload that counts as progress (float sums).
_TINY = 1e-12
_STREAM_ORDER = 0x3C01      # hash stream for the order of equally good proposals


@njit(cache=True, internal=True)
def _fits(bw, maxw, vw, v, b):
    for j in range(vw.shape[1]):
        if bw[b, j] + vw[v, j] > maxw[b, j]:
            return False
    return True


@njit(cache=True, internal=True)
def _load(bw, maxw, vw, v, b, sign):
    """Largest fill ratio of block b over the constraints, with sign * vw[v] added."""
    worst = 0.0
    for j in range(vw.shape[1]):
        x = bw[b, j] + sign * vw[v, j]
        r = x / maxw[b, j] if maxw[b, j] > 0 else (np.inf if x > 0 else 0.0)
        worst = max(worst, r)
    return worst


@njit(cache=True, internal=True)
def _excess(bw, maxw, inv, vw, v, b, sign):
    """Overload of block b summed over constraints (each in units of its ideal block weight),
    with sign * vw[v] added."""
    total = 0.0
    for j in range(vw.shape[1]):
        x = bw[b, j] + sign * vw[v, j] - maxw[b, j]
        if x > 0:
            total += x * inv[j]
    return total


@njit(cache=True, internal=True)
def _connect(v, indptr, indices, ewgt, parts, conn, seen, touched):
    """conn[b] = edge weight from v into each adjacent block b (listed in touched[:nt])."""
    nt = 0
    for e in range(indptr[v], indptr[v + 1]):
        b = parts[indices[e]]
        if not seen[b]:
            seen[b] = True
            conn[b] = 0.0
            touched[nt] = b
            nt += 1
        conn[b] += ewgt[e]
    return nt


@njit(cache=True, internal=True)
def _forget(nt, seen, touched):
    for t in range(nt):
        seen[touched[t]] = False


@njit(cache=True, internal=True)
def best_move(v, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched):
    """(block, gain) of v's best move, or (-1, 0): the adjacent block with the largest cut gain
    that fits in every constraint; a zero-gain move only when it lowers the larger fill ratio
    of the two blocks; ties go to the block left less full."""
    a = parts[v]
    nt = _connect(v, indptr, indices, ewgt, parts, conn, seen, touched)
    own = conn[a] if seen[a] else 0.0
    best, best_gain, best_load = -1, 0.0, 0.0
    if nt > 1 or (nt == 1 and touched[0] != a):
        for t in range(nt):
            b = touched[t]
            if b == a:
                continue
            g = conn[b] - own
            if g < 0 or not _fits(bw, maxw, vw, v, b):
                continue
            lb = _load(bw, maxw, vw, v, b, 1.0)
            if g == 0:
                before = max(_load(bw, maxw, vw, v, a, 0.0), _load(bw, maxw, vw, v, b, 0.0))
                if max(_load(bw, maxw, vw, v, a, -1.0), lb) >= before:
                    continue
            if best < 0 or g > best_gain or (g == best_gain and lb < best_load):
                best, best_gain, best_load = b, g, lb
    _forget(nt, seen, touched)
    return best, best_gain


@njit(cache=True, internal=True)
def best_relief(v, indptr, indices, ewgt, vw, parts, bw, maxw, inv, conn, seen, touched, anywhere):
    """(block, score) of v's best move out of an overloaded block, or (-1, 0): the destination
    that lowers the summed overload of the two blocks, at the least cut loss per unit of
    overload removed; among adjacent blocks, or (``anywhere``) any block when none of those
    helps."""
    a = parts[v]
    k = bw.shape[0]
    if _excess(bw, maxw, inv, vw, v, a, 0.0) <= 0:
        return -1, 0.0
    nt = _connect(v, indptr, indices, ewgt, parts, conn, seen, touched)
    own = conn[a] if seen[a] else 0.0
    drop_a = _excess(bw, maxw, inv, vw, v, a, 0.0) - _excess(bw, maxw, inv, vw, v, a, -1.0)
    best, best_score = -1, 0.0
    for sweep in range(2 if anywhere else 1):
        count = nt if sweep == 0 else k
        for t in range(count):
            b = touched[t] if sweep == 0 else t
            if b == a or (sweep == 1 and seen[b]):
                continue
            relief = drop_a - (_excess(bw, maxw, inv, vw, v, b, 1.0) - _excess(bw, maxw, inv, vw, v, b, 0.0))
            if relief <= _TINY:
                continue
            loss = own - (conn[b] if seen[b] else 0.0)
            score = loss / relief
            if best < 0 or score < best_score:
                best, best_score = b, score
        if best >= 0:
            break
    _forget(nt, seen, touched)
    return best, best_score


@njit(cache=True, internal=True)
def _propose_chunk(c, chunk, relieve, anywhere, indptr, indices, ewgt, vw, parts, bw, maxw, inv, dest, score):
    n = parts.shape[0]
    k = bw.shape[0]
    conn = np.zeros(k, dtype=np.float64)
    seen = np.zeros(k, dtype=np.bool_)
    touched = np.empty(k, dtype=np.int64)
    for v in range(c * chunk, min(n, (c + 1) * chunk)):
        if relieve:
            b, s = best_relief(v, indptr, indices, ewgt, vw, parts, bw, maxw, inv, conn, seen, touched, anywhere)
        else:
            b, g = best_move(v, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched)
            s = -g
        dest[v] = b
        score[v] = s


@njit(cache=True, parallel=PRANGE_ONLY)
def propose(relieve, anywhere, indptr, indices, ewgt, vw, parts, bw, maxw, inv, dest, score, chunk, parallel_min):
    """Every vertex's proposal against the current state (dest -1: none); score: lower is better
    (minus the gain, or loss per overload removed). Chunks write only their own vertices."""
    n = parts.shape[0]
    chunks = (n + chunk - 1) // chunk
    if n >= parallel_min:
        for c in prange(chunks):
            _propose_chunk(np.int64(c), chunk, relieve, anywhere, indptr, indices, ewgt, vw, parts, bw, maxw, inv,
                           dest, score)
    else:
        for c in range(chunks):
            _propose_chunk(c, chunk, relieve, anywhere, indptr, indices, ewgt, vw, parts, bw, maxw, inv, dest, score)


@njit(cache=True, internal=True)
def _ordered(dest, score, key):
    """The proposing vertices, best score first, equal scores in hash order."""
    cand = np.flatnonzero(dest >= 0)
    h = np.empty(cand.shape[0], dtype=np.int64)
    for i in range(cand.shape[0]):
        h[i] = hash32_at(cand[i], key)
    cand = cand[np.argsort(h, kind="mergesort")]
    return cand[np.argsort(score[cand], kind="mergesort")]


@njit(cache=True, internal=True)
def _move(v, b, vw, parts, bw):
    a = parts[v]
    for j in range(vw.shape[1]):
        bw[a, j] -= vw[v, j]
        bw[b, j] += vw[v, j]
    parts[v] = b


@njit(cache=True, internal=True)
def _take_proposals(relieve, anywhere, key, indptr, indices, ewgt, vw, parts, bw, maxw, inv, dest, score, conn, seen,
                    touched):
    """A round's serial half: the proposals in _ordered's order, each re-evaluated against the
    current partition (best_relief when ``relieve``, else best_move, as propose made them) and
    made when a move is left. Returns (moves made, their summed gain or score)."""
    moved = 0
    total = 0.0
    for v in _ordered(dest, score, key):
        if relieve:
            b, g = best_relief(v, indptr, indices, ewgt, vw, parts, bw, maxw, inv, conn, seen, touched, anywhere)
        else:
            b, g = best_move(v, indptr, indices, ewgt, vw, parts, bw, maxw, conn, seen, touched)
        if b >= 0:
            _move(v, b, vw, parts, bw)
            moved += 1
            total += g
    return moved, total


@njit(cache=True)
def greedy_nb(indptr, indices, ewgt, vw, parts, bw, maxw, inv, seed, rounds, cut, chunk, parallel_min):
    """Greedy rounds (see the module text); parts and bw are updated in place. Returns the cut
    weight gained. ``cut``: the current cut, for the early stop."""
    n = parts.shape[0]
    k = bw.shape[0]
    dest = np.empty(n, dtype=np.int64)
    score = np.empty(n, dtype=np.float64)
    conn = np.zeros(k, dtype=np.float64)
    seen = np.zeros(k, dtype=np.bool_)
    touched = np.empty(k, dtype=np.int64)
    gained = 0.0
    for r in range(rounds):
        propose(False, False, indptr, indices, ewgt, vw, parts, bw, maxw, inv, dest, score, chunk, parallel_min)
        round_gain = _take_proposals(False, False, np.uint64(stream_key_nb(seed, r)), indptr, indices, ewgt, vw,
                                     parts, bw, maxw, inv, dest, score, conn, seen, touched)[1]
        gained += round_gain
        if round_gain <= MIN_ROUND_GAIN * max(cut - gained, 1.0):
            break
    return gained


@njit(cache=True)
def rebalance_nb(indptr, indices, ewgt, vw, parts, bw, maxw, inv, seed, rounds, chunk, parallel_min):
    """Rebalancing rounds: moves out of overloaded blocks that lower the summed overload, the
    cheapest per unit of overload first; to adjacent blocks while such moves exist (a move
    elsewhere adds all of the vertex's edges to the cut), then to any block, then exchanges
    (swap_round). Returns the overload left (0: balanced)."""
    n = parts.shape[0]
    k = bw.shape[0]
    dest = np.empty(n, dtype=np.int64)
    score = np.empty(n, dtype=np.float64)
    conn = np.zeros(k, dtype=np.float64)
    seen = np.zeros(k, dtype=np.bool_)
    touched = np.empty(k, dtype=np.int64)
    anywhere = False
    for r in range(rounds):
        if total_overload(bw, maxw, inv) <= 0:
            break
        propose(True, anywhere, indptr, indices, ewgt, vw, parts, bw, maxw, inv, dest, score, chunk, parallel_min)
        moved = _take_proposals(True, anywhere, np.uint64(stream_key_nb(seed, 0x8000 + r)), indptr, indices, ewgt, vw,
                                parts, bw, maxw, inv, dest, score, conn, seen, touched)[0]
        if moved == 0:
            if not anywhere:
                anywhere = True
            elif swap_round(vw, parts, bw, maxw, inv, SWAP_WIDTH) == 0:
                break
        else:
            anywhere = False
    return total_overload(bw, maxw, inv)


@njit(cache=True, internal=True)
def _pair_excess(bw, maxw, inv, vw, a, b, v, u):
    """Summed overload of blocks a and b with v moved a -> b and u moved b -> a (u = -1: none)."""
    total = 0.0
    for j in range(vw.shape[1]):
        d = vw[v, j] - (vw[u, j] if u >= 0 else 0.0)
        xa = bw[a, j] - d - maxw[a, j]
        xb = bw[b, j] + d - maxw[b, j]
        if xa > 0:
            total += xa * inv[j]
        if xb > 0:
            total += xb * inv[j]
    return total


@njit(cache=True)
def swap_round(vw, parts, bw, maxw, inv, width):
    """Exchanges for what single moves cannot fix: a block over its bound in one constraint
    while the blocks with room there are full in another (a block full of vertices but light in
    a sparse weight). For each overloaded block a and each other block b, tries the pairs of
    a's ``width`` vertices heaviest in a's overloaded constraints with b's ``width`` lightest
    there, and makes the exchange that lowers the two blocks' overload most. Returns the
    number of exchanges made."""
    n = parts.shape[0]
    k = bw.shape[0]
    c = vw.shape[1]
    swaps = 0
    key = np.empty(n, dtype=np.float64)
    for a in range(k):
        over = np.zeros(c, dtype=np.bool_)
        for j in range(c):
            over[j] = bw[a, j] > maxw[a, j]
        if not over.any():
            continue
        for v in range(n):
            s = 0.0
            for j in range(c):
                if over[j]:
                    s += vw[v, j] * inv[j]
            key[v] = s
        order = np.argsort(key, kind="mergesort")
        heavy = np.empty(width, dtype=np.int64)
        nh = 0
        for i in range(n - 1, -1, -1):
            if nh == width:
                break
            if parts[order[i]] == a:
                heavy[nh] = order[i]
                nh += 1
        for b in range(k):
            if b == a:
                continue
            light = np.empty(width, dtype=np.int64)
            nl = 0
            for i in range(n):
                if nl == width:
                    break
                if parts[order[i]] == b:
                    light[nl] = order[i]
                    nl += 1
            now = _pair_excess(bw, maxw, inv, vw, a, b, heavy[0], heavy[0]) if nh else 0.0   # (v, v): as it is
            best, bv, bu = now - _TINY, -1, -1
            for x in range(nh):
                for y in range(-1, nl):
                    u = light[y] if y >= 0 else -1
                    e = _pair_excess(bw, maxw, inv, vw, a, b, heavy[x], u)
                    if e < best:
                        best, bv, bu = e, heavy[x], u
            if bv >= 0:
                _move(bv, b, vw, parts, bw)
                if bu >= 0:
                    _move(bu, a, vw, parts, bw)
                swaps += 1
                break
    return swaps


@njit(cache=True, internal=True)
def stream_key_nb(seed, r):
    return stream_key_at(seed, _STREAM_ORDER + r)


@njit(cache=True)
def total_overload(bw, maxw, inv):
    """Summed overload of all blocks, each constraint in units of its ideal block weight."""
    total = 0.0
    for b in range(bw.shape[0]):
        for j in range(bw.shape[1]):
            x = bw[b, j] - maxw[b, j]
            if x > 0:
                total += x * inv[j]
    return total
