"""Connected blocks (METIS's -contig): every block's part of each connected component of the
graph becomes connected, the balance is restored and the cut refined without breaking that.

1. Pieces: the components of the graph without its cut edges. In each (block, graph
   component) pair the heaviest piece is the block's core there; every other piece is a
   fragment and moves, whole, to the adjacent block it is most strongly connected to
   through that block's core (one with room for it if any; the fragment then belongs to
   that core). A fragment that touches only fragments waits for the next round.
2. Moves of single vertices then restore the balance (out of overweight blocks, least loss
   first, then along chains of blocks towards one with room) and lower the cut (positive gain), each only when the vertex's block stays
   connected without it: its neighbours in the block must reach each other within the
   block in a small breadth-first search (at most SAFE_SEARCH_VISITS vertices, else the
   move is refused: a conservative test, O(1) per move instead of a pass over the block).

On a disconnected graph a block may hold pieces of several components (the components do
not fit into k connected blocks in general); within each component it is connected.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..metrics import _find   # union-find with path halving, as pieces_per_block uses

# Vertices a move's connectivity test may visit before it refuses the move. On delaunay 2^16
# at k = 32, 64 refused 0.3% of the safe moves that 4096 allowed, for the same cut.
SAFE_SEARCH_VISITS = 64
# Passes of cut-lowering single-vertex moves after the fragments have moved.
REFINE_PASSES = 3
# Rebalancing scans an overweight block's vertices at most this often (each scan ranks all
# its possible moves; later moves open room for the ones refused before).
BALANCE_ATTEMPTS = 4
# Chains of moves tried to relieve overweight blocks (each an O(m) pass); a tail of
# failures ends earlier when no chain is left.
MAX_CHAIN_PUSHES = 200
# ... and it stops after this many in a row that did not lower the total overload.
CHAIN_STALL = 8
# Rounds of fragment moves: a fragment that touches only other fragments waits a round, so
# chains of fragments need several; on the shared graphs and 2^16 families 3 were enough.
MAX_FRAGMENT_ROUNDS = 100


def connect_blocks(indptr, indices, ewgt, vwgt, parts, k, maxw, *, seed=0, final=True):
    """Host arrays in, new parts out (int64): see the module's text. ``maxw``: per-block bounds.
    ``final`` False (a coarser level, whose refiners come next): the fragments and the local
    rebalancing only; the chains and the cut moves cost O(m) passes that the finer levels'
    refiners make up (rmat 2^16, k = 8: 9 levels took 7.6 s with them)."""
    parts = np.array(parts, dtype=np.int64)
    maxw = np.asarray(maxw, dtype=np.float64)
    gcomp = _components(indptr, indices, np.zeros_like(parts))
    for _ in range(MAX_FRAGMENT_ROUNDS):
        if not _move_fragments(indptr, indices, ewgt, vwgt, parts, gcomp, k, maxw):
            break
    _restore_balance(indptr, indices, ewgt, vwgt, parts, k, maxw, SAFE_SEARCH_VISITS)
    if not final:
        return parts
    order = np.random.default_rng(seed).permutation(parts.shape[0])
    _push_chains(indptr, indices, ewgt, vwgt, parts, k, maxw, SAFE_SEARCH_VISITS)
    _refine(indptr, indices, ewgt, vwgt, parts, k, maxw, order, REFINE_PASSES, SAFE_SEARCH_VISITS)
    return parts


@njit(cache=True)
def _components(indptr, indices, parts):
    """Label (the smallest vertex) of each vertex's component over the edges inside blocks."""
    n = parts.shape[0]
    parent = np.arange(n)
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if v > u and parts[v] == parts[u]:
                ru, rv = _find(parent, u), _find(parent, v)
                if ru != rv:
                    parent[max(ru, rv)] = min(ru, rv)
    for v in range(n):
        parent[v] = _find(parent, v)
    return parent


@njit(cache=True, internal=True)
def _block_totals(parts, vwgt, k):
    """(weight, vertex count) of each block."""
    bw = np.zeros(k, dtype=np.float64)
    size = np.zeros(k, dtype=np.int64)
    for v in range(parts.shape[0]):
        bw[parts[v]] += vwgt[v]
        size[parts[v]] += 1
    return bw, size


@njit(cache=True)
def _move_fragments(indptr, indices, ewgt, vwgt, parts, gcomp, k, maxw):
    """One round of step 1; returns whether a fragment moved or joined a core."""
    n = parts.shape[0]
    piece = _components(indptr, indices, parts)
    pw = np.zeros(n, dtype=np.float64)            # weight of each piece (at its label)
    for v in range(n):
        pw[piece[v]] += vwgt[v]
    # core of each (block, graph component): the heaviest piece, ties to the smaller label;
    # pieces are visited by label, so a dict keyed by (component, block) is not needed:
    # best[label] marks the winning piece per (gcomp, block) found through a sorted scan
    keys = np.empty(n, dtype=np.int64)
    labels = np.empty(n, dtype=np.int64)
    count = 0
    for v in range(n):
        if piece[v] == v:
            keys[count] = gcomp[v] * k + parts[v]
            labels[count] = v
            count += 1
    order = np.argsort(keys[:count], kind="mergesort")
    core = np.zeros(n, dtype=np.bool_)            # at piece labels, then spread to vertices
    i = 0
    fragments = 0
    while i < count:
        j = i
        best = labels[order[i]]
        while j < count and keys[order[j]] == keys[order[i]]:
            lab = labels[order[j]]
            if pw[lab] > pw[best] or (pw[lab] == pw[best] and lab < best):
                best = lab
            j += 1
        core[best] = True
        fragments += j - i - 1
        i = j
    if fragments == 0:
        return False
    is_core = np.empty(n, dtype=np.bool_)
    for v in range(n):
        is_core[v] = core[piece[v]]
    # members of each fragment, grouped by piece label (a counting sort)
    start = np.zeros(n + 1, dtype=np.int64)
    for v in range(n):
        if not is_core[v]:
            start[piece[v] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    members = np.empty(start[n], dtype=np.int64)
    fill = start[:-1].copy()
    for v in range(n):
        if not is_core[v]:
            members[fill[piece[v]]] = v
            fill[piece[v]] += 1
    bw = _block_totals(parts, vwgt, k)[0]
    frag = np.empty(fragments, dtype=np.int64)    # fragment labels, lightest first
    f = 0
    for v in range(n):
        if piece[v] == v and not core[v]:
            frag[f] = v
            f += 1
    frag = frag[np.argsort(pw[frag], kind="mergesort")]
    conn = np.zeros(k, dtype=np.float64)
    progress = False
    for lab in frag:
        own = parts[lab]
        joined = False
        for i in range(start[lab], start[lab + 1]):
            v = members[i]
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if is_core[u]:
                    if parts[u] == own:
                        joined = True     # a fragment of this block moved next to it: now one piece
                    else:
                        conn[parts[u]] += ewgt[e]
        target = -1
        if not joined:
            for b in range(k):            # strongest connection with room, else strongest
                if conn[b] > 0 and (target < 0 or _better(b, target, conn, bw, maxw, pw[lab])):
                    target = b
        for b in range(k):
            conn[b] = 0.0
        if joined or target >= 0:
            progress = True
            for i in range(start[lab], start[lab + 1]):
                v = members[i]
                is_core[v] = True
                if target >= 0:
                    parts[v] = target
            if target >= 0:
                bw[own] -= pw[lab]
                bw[target] += pw[lab]
    return progress


@njit(cache=True, internal=True)
def _better(b, c, conn, bw, maxw, w):
    fits_b, fits_c = bw[b] + w <= maxw[b], bw[c] + w <= maxw[c]
    if fits_b != fits_c:
        return fits_b
    return conn[b] > conn[c]


@njit(cache=True, internal=True)
def _safe_to_leave(v, indptr, indices, parts, mark, queue, stamp, limit):
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
def _restore_balance(indptr, indices, ewgt, vwgt, parts, k, maxw, limit):
    """Move vertices out of overweight blocks, least loss first (gains from the start of each
    attempt, each move re-checked when its turn comes), keeping blocks connected."""
    n = parts.shape[0]
    bw, size = _block_totals(parts, vwgt, k)
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
                if to < 0 or not _safe_to_leave(v, indptr, indices, parts, mark, queue, stamp, limit):
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
def _push_chains(indptr, indices, ewgt, vwgt, parts, k, maxw, limit):
    """Relieve overweight blocks through chains of blocks: a breadth-first search on the
    block graph finds the nearest block with room, and vertices then move hop by hop from
    its end (each hop into a block that the hop after it just made room in), best gain first,
    each keeping its block connected. A hop that cannot move anything is not tried again."""
    n = parts.shape[0]
    bw = _block_totals(parts, vwgt, k)[0]
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
                if not _safe_to_leave(v, indptr, indices, parts, mark, queue, stamp, limit):
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
def _refine(indptr, indices, ewgt, vwgt, parts, k, maxw, order, passes, limit):
    """Greedy passes of positive-gain moves that keep every block connected and within bounds."""
    n = parts.shape[0]
    bw, size = _block_totals(parts, vwgt, k)
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
            if not _safe_to_leave(v, indptr, indices, parts, mark, queue, stamp, limit):
                continue
            parts[v] = to
            bw[own] -= vwgt[v]
            bw[to] += vwgt[v]
            size[own] -= 1
            size[to] += 1
            moved += 1
        if moved == 0:
            break
