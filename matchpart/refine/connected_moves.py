"""Single-vertex moves that keep every block connected (step 2 of contiguity.connect_blocks):
rebalancing out of overweight blocks, chains of moves towards a block with room, and passes
of cut-lowering moves. A vertex moves only when its block stays connected without it, by a
breadth-first search among its neighbours in the block (safe_to_leave).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit

# Vertices a move's connectivity test may visit before it refuses the move. On delaunay 2^16
# at k = 32, 64 refused 0.3% of the safe moves that 4096 allowed, for the same cut.
SAFE_SEARCH_VISITS = 64
# Rebalancing scans an overweight block's vertices at most this often (each scan ranks all
# its possible moves; later moves open room for the ones refused before).
BALANCE_ATTEMPTS = 4
# Chains of moves tried to relieve overweight blocks (each an O(m) pass); a tail of
# failures ends earlier when no chain is left.
MAX_CHAIN_PUSHES = 200
# ... and it stops after this many in a row that did not lower the total overload.
CHAIN_STALL = 8


@njit(cache=True, internal=True)
def block_totals(parts, vwgt, k):
    """(weight, vertex count) of each block."""
    bw = np.zeros(k, dtype=np.float64)
    size = np.zeros(k, dtype=np.int64)
    for v in range(parts.shape[0]):
        bw[parts[v]] += vwgt[v]
        size[parts[v]] += 1
    return bw, size


@njit(cache=True, internal=True)
def safe_to_leave(v, indptr, indices, parts, mark, queue, stamp, limit):
    """Whether v's block stays connected without v: its neighbours in the block reach each
    other inside the block, avoiding v, within ``limit`` visited vertices. ``mark`` holds
    visit stamps (``stamp`` is new for each call)."""
    b = parts[v]
    first = -1
    need = 0
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if parts[u] == b:
            if first < 0:
                first = u
            need += 1
    if need <= 1:
        return True
    mark[v] = stamp
    # neighbours to reach are marked stamp + 1 (found: stamp)
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if parts[u] == b and u != first:
            mark[u] = stamp + 1
    need -= 1
    mark[first] = stamp
    head, tail = 0, 1
    queue[0] = first
    while head < tail and tail < limit:
        x = queue[head]
        head += 1
        for e in range(indptr[x], indptr[x + 1]):
            u = indices[e]
            if parts[u] == b and mark[u] != stamp:
                if mark[u] == stamp + 1:
                    need -= 1
                    if need == 0:
                        return True
                mark[u] = stamp
                if tail < limit:
                    queue[tail] = u
                    tail += 1
    return False


@njit(cache=True, internal=True)
def _best_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn):
    """(gain, block) of v's best move to an adjacent block with room; block -1 when none."""
    own = parts[v]
    inside = 0.0
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if parts[u] == own:
            inside += ewgt[e]
        else:
            conn[parts[u]] += ewgt[e]
    best, gain = -1, 0.0
    for e in range(indptr[v], indptr[v + 1]):
        b = parts[indices[e]]
        if b != own and conn[b] > 0:
            g = conn[b] - inside
            if bw[b] + vwgt[v] <= maxw[b] and (best < 0 or g > gain or (g == gain and b < best)):
                best, gain = b, g
    for e in range(indptr[v], indptr[v + 1]):
        conn[parts[indices[e]]] = 0.0
    return gain, best


@njit(cache=True)
def restore_balance(indptr, indices, ewgt, vwgt, parts, k, maxw, limit):
    """Move vertices out of overweight blocks, least loss first (gains from the start of each
    attempt, each move re-checked when its turn comes), keeping blocks connected."""
    n = parts.shape[0]
    bw, size = block_totals(parts, vwgt, k)
    conn = np.zeros(k, dtype=np.float64)
    mark = np.zeros(n, dtype=np.int64)
    queue = np.empty(limit, dtype=np.int64)
    stamp = 1
    for b in range(k):
        for _ in range(BALANCE_ATTEMPTS):
            if bw[b] <= maxw[b] or size[b] <= 1:
                break
            cand = np.empty(size[b], dtype=np.int64)
            key = np.empty(size[b], dtype=np.float64)
            c = 0
            for v in range(n):
                if parts[v] == b and vwgt[v] > 0:
                    gain, to = _best_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn)
                    if to >= 0:
                        cand[c], key[c] = v, -gain
                        c += 1
            moved = 0
            for i in np.argsort(key[:c], kind="mergesort"):
                if bw[b] <= maxw[b] or size[b] <= 1:
                    break
                v = cand[i]
                gain, to = _best_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn)
                stamp += 2
                if to < 0 or not safe_to_leave(v, indptr, indices, parts, mark, queue, stamp, limit):
                    continue
                parts[v] = to
                bw[b] -= vwgt[v]
                bw[to] += vwgt[v]
                size[b] -= 1
                size[to] += 1
                moved += 1
            if moved == 0:
                break                   # no connected-safe move: the block stays overweight


@njit(cache=True)
def push_chains(indptr, indices, ewgt, vwgt, parts, k, maxw, limit):
    """Relieve overweight blocks through chains of blocks: a breadth-first search on the
    block graph finds the nearest block with room, and vertices then move hop by hop from
    its end (each hop into a block that the hop after it just made room in), best gain first,
    each keeping its block connected. A hop that cannot move anything is not tried again."""
    n = parts.shape[0]
    bw = block_totals(parts, vwgt, k)[0]
    blocked = np.zeros((k, k), dtype=np.bool_)
    mark = np.zeros(n, dtype=np.int64)
    queue = np.empty(limit, dtype=np.int64)
    conn = np.zeros(k, dtype=np.float64)
    stamp = 1
    best_over, stalled = np.inf, 0
    for _ in range(MAX_CHAIN_PUSHES):
        over = np.argmax(bw - maxw)
        need = bw[over] - maxw[over]
        if need <= 0:
            return
        total = 0.0
        for b in range(k):
            total += max(bw[b] - maxw[b], 0.0)
        if total < best_over:
            best_over, stalled = total, 0
        else:
            stalled += 1
            if stalled == CHAIN_STALL:
                return
        adj = np.zeros((k, k), dtype=np.bool_)
        for u in range(n):
            for e in range(indptr[u], indptr[u + 1]):
                adj[parts[u], parts[indices[e]]] = True
        parent = np.full(k, -1, dtype=np.int64)
        parent[over] = over
        order = np.empty(k, dtype=np.int64)
        order[0] = over
        head, tail, target = 0, 1, -1
        while head < tail and target < 0:
            c = order[head]
            head += 1
            for d in range(k):
                if d != c and adj[c, d] and not blocked[c, d] and parent[d] < 0:
                    parent[d] = c
                    order[tail] = d
                    tail += 1
                    if bw[d] < maxw[d]:
                        target = d
                        break
        if target < 0:
            return                      # no chain left: the balance cannot be restored this way
        dst = target
        while dst != over:
            src = parent[dst]
            cand = np.empty(n, dtype=np.int64)
            key = np.empty(n, dtype=np.float64)
            c = 0
            for v in range(n):
                if parts[v] == src and vwgt[v] > 0:
                    for e in range(indptr[v], indptr[v + 1]):
                        if parts[indices[e]] == dst:
                            cand[c], key[c] = v, -_gain_to(v, dst, indptr, indices, ewgt, parts, conn)
                            c += 1
                            break
            moved = 0.0
            for i in np.argsort(key[:c], kind="mergesort"):
                v = cand[i]
                if moved >= need:
                    break
                if bw[dst] + vwgt[v] > maxw[dst]:
                    continue
                stamp += 2
                if not safe_to_leave(v, indptr, indices, parts, mark, queue, stamp, limit):
                    continue
                parts[v] = dst
                bw[src] -= vwgt[v]
                bw[dst] += vwgt[v]
                moved += vwgt[v]
            if moved == 0:
                blocked[src, dst] = True
                break
            need = min(need, moved)
            dst = src


@njit(cache=True, internal=True)
def _gain_to(v, to, indptr, indices, ewgt, parts, conn):
    """Cut change of moving v to block ``to`` (positive: lower cut)."""
    gain = 0.0
    for e in range(indptr[v], indptr[v + 1]):
        b = parts[indices[e]]
        if b == to:
            gain += ewgt[e]
        elif b == parts[v]:
            gain -= ewgt[e]
    return gain


@njit(cache=True)
def refine_cut(indptr, indices, ewgt, vwgt, parts, k, maxw, order, passes, limit):
    """Greedy passes of positive-gain moves that keep every block connected and within bounds."""
    n = parts.shape[0]
    bw, size = block_totals(parts, vwgt, k)
    conn = np.zeros(k, dtype=np.float64)
    mark = np.zeros(n, dtype=np.int64)
    queue = np.empty(limit, dtype=np.int64)
    stamp = 1
    for _ in range(passes):
        moved = 0
        for v in order:
            own = parts[v]
            if size[own] <= 1:
                continue
            gain, to = _best_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn)
            if to < 0 or gain <= 0:
                continue
            stamp += 2
            if not safe_to_leave(v, indptr, indices, parts, mark, queue, stamp, limit):
                continue
            parts[v] = to
            bw[own] -= vwgt[v]
            bw[to] += vwgt[v]
            size[own] -= 1
            size[to] += 1
            moved += 1
        if moved == 0:
            break
