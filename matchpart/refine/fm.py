"""Compiled (numba) Fiduccia-Mattheyses refinement: k-way FM, 2-way FM for bisection, and a min-loss rebalancer."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import MatchpartError
from ..io import as_graph

# ---- tunables -------------------------------------------------------------------------
# A pass stops after this many moves in a row that did not give a new best state: FM's
# hill climbing needs room to cross a valley of negative moves, but long fruitless tails
# cost time and almost never pay off (KaFFPa stops after ~1% of n; METIS uses 15..100).
STALL_MOVES_MIN = 200
STALL_MOVES_FRACTION = 0.01
# Stop early when a whole pass improved the cut by less than this fraction: further passes
# on the same local optimum only repeat the same moves.
MIN_PASS_IMPROVEMENT = 1e-4
# Localized multi-try FM (k > 2): a local search stops after this many moves without a new
# best. Local searches are many and short; a long tail just wanders away from the seed.
LOCAL_STALL_MOVES = 40


# ---- addressable binary max-heap over vertex ids ------------------------------------------
# keys[i], verts[i] for heap slot i; pos[v] is v's slot or -1. size lives in size[0] so the
# helpers can change it in place.

@njit(cache=True)
def _sift_up(keys, verts, pos, i):
    key = keys[i]
    v = verts[i]
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] >= key:
            break
        keys[i] = keys[parent]
        verts[i] = verts[parent]
        pos[verts[i]] = i
        i = parent
    keys[i] = key
    verts[i] = v
    pos[v] = i


@njit(cache=True)
def _sift_down(keys, verts, pos, size, i):
    key = keys[i]
    v = verts[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] > keys[child]:
            child += 1
        if keys[child] <= key:
            break
        keys[i] = keys[child]
        verts[i] = verts[child]
        pos[verts[i]] = i
        i = child
    keys[i] = key
    verts[i] = v
    pos[v] = i


@njit(cache=True)
def heap_set(keys, verts, pos, size, v, key):
    """Insert v with key, or change its key if it is already in the heap."""
    i = pos[v]
    if i < 0:
        i = size[0]
        size[0] += 1
        keys[i] = key
        verts[i] = v
        pos[v] = i
        _sift_up(keys, verts, pos, i)
    else:
        old = keys[i]
        keys[i] = key
        if key > old:
            _sift_up(keys, verts, pos, i)
        else:
            _sift_down(keys, verts, pos, size[0], i)


@njit(cache=True)
def heap_remove(keys, verts, pos, size, v):
    i = pos[v]
    if i < 0:
        return
    pos[v] = -1
    size[0] -= 1
    last = size[0]
    if i == last:
        return
    keys[i] = keys[last]
    verts[i] = verts[last]
    u = verts[i]
    pos[u] = i
    _sift_up(keys, verts, pos, i)
    _sift_down(keys, verts, pos, size[0], pos[u])


@njit(cache=True)
def heap_pop(keys, verts, pos, size):
    """Remove and return (vertex, key) of the maximum."""
    v = verts[0]
    key = keys[0]
    heap_remove(keys, verts, pos, size, v)
    return v, key


# ---- gains --------------------------------------------------------------------------------

@njit(cache=True)
def _connectivity(v, indptr, indices, ewgt, parts, conn, touched):
    """Fill conn[b] with v's edge weight into each adjacent block b; return how many blocks (listed in touched)."""
    nt = 0
    for e in range(indptr[v], indptr[v + 1]):
        b = parts[indices[e]]
        if conn[b] == 0.0:
            touched[nt] = b
            nt += 1
        conn[b] += ewgt[e]
    return nt


@njit(cache=True)
def _clear(conn, touched, nt):
    for i in range(nt):
        conn[touched[i]] = 0.0


@njit(cache=True)
def _best_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched):
    """Best (gain, target) for moving v to an adjacent block with room; target -1 when none.

    Ties on gain go to the lighter block, which keeps the partition balanced for free.
    """
    own = parts[v]
    nt = _connectivity(v, indptr, indices, ewgt, parts, conn, touched)
    inside = conn[own]
    best_gain = -np.inf
    best = -1
    for i in range(nt):
        b = touched[i]
        if b == own or bw[b] + vwgt[v] > maxw[b]:
            continue
        g = conn[b] - inside
        if g > best_gain or (g == best_gain and bw[b] < bw[best]):
            best_gain = g
            best = b
    _clear(conn, touched, nt)
    return best_gain, best


@njit(cache=True)
def _overload(bw, maxw):
    s = 0.0
    for b in range(bw.shape[0]):
        if bw[b] > maxw[b]:
            s += bw[b] - maxw[b]
    return s


@njit(cache=True)
def _cut(indptr, indices, ewgt, parts):
    c = 0.0
    for v in range(indptr.shape[0] - 1):
        for e in range(indptr[v], indptr[v + 1]):
            if parts[indices[e]] != parts[v]:
                c += ewgt[e]
    return c / 2.0


# ---- FM -----------------------------------------------------------------------------------

@njit(cache=True)
def _fm_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, stall, cut):
    """One FM pass in place; returns (cut, moves kept) after rolling back to the best prefix.

    Best state = lowest (overload, cut): moves only go into blocks with room, so overload
    never grows and an unbalanced input drifts towards balance while the cut is minimised.
    """
    n = indptr.shape[0] - 1
    k = bw.shape[0]
    keys = np.empty(n, dtype=np.float64)
    verts = np.empty(n, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    conn = np.zeros(k, dtype=np.float64)
    touched = np.empty(k, dtype=np.int64)
    locked = np.zeros(n, dtype=np.bool_)
    log_v = np.empty(n, dtype=np.int64)
    log_from = np.empty(n, dtype=np.int64)

    for i in range(order.shape[0]):  # boundary vertices, inserted in random order for tie-breaking
        v = order[i]
        own = parts[v]
        boundary = False
        for e in range(indptr[v], indptr[v + 1]):
            if parts[indices[e]] != own:
                boundary = True
                break
        if boundary:
            g, t = _best_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
            if t >= 0:
                heap_set(keys, verts, pos, size, v, g)

    cur_cut = cut
    cur_over = _overload(bw, maxw)
    best_cut = cur_cut
    best_over = cur_over
    best_len = 0
    nmoves = 0
    since_best = 0
    while size[0] > 0 and since_best < stall:
        v, key = heap_pop(keys, verts, pos, size)
        g, t = _best_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
        if t < 0:
            continue  # no block with room next to v any more
        if g < key:
            heap_set(keys, verts, pos, size, v, g)  # stale key (a block filled up); try again later
            continue
        frm = parts[v]
        w = vwgt[v]
        old_over = max(bw[frm] - maxw[frm], 0.0) + max(bw[t] - maxw[t], 0.0)
        parts[v] = t
        bw[frm] -= w
        bw[t] += w
        cur_over += max(bw[frm] - maxw[frm], 0.0) + max(bw[t] - maxw[t], 0.0) - old_over
        if cur_over < 1e-9 * w:
            cur_over = 0.0  # float residue of a block that is exactly full
        cur_cut -= g
        locked[v] = True
        log_v[nmoves] = v
        log_from[nmoves] = frm
        nmoves += 1
        if cur_over < best_over or (cur_over == best_over and cur_cut < best_cut):
            best_over = cur_over
            best_cut = cur_cut
            best_len = nmoves
            since_best = 0
        else:
            since_best += 1
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if locked[u]:
                continue
            gu, tu = _best_move(u, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
            if tu >= 0:
                heap_set(keys, verts, pos, size, u, gu)
            else:
                heap_remove(keys, verts, pos, size, u)

    for i in range(nmoves - 1, best_len - 1, -1):  # roll back to the best prefix
        v = log_v[i]
        t = parts[v]
        frm = log_from[i]
        parts[v] = frm
        bw[t] -= vwgt[v]
        bw[frm] += vwgt[v]
    return best_cut, best_len


@njit(cache=True)
def _localized_round(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, stall, cut):
    """One round of localized multi-try FM (KaFFPa) in place; returns (cut, moves kept).

    Each search starts from one boundary vertex not yet touched in this round, grows through
    the neighbours of moved vertices only, stops after `stall` moves without a new best and
    rolls back to its best prefix. Kept moves lock their vertices for the rest of the round;
    many small searches find improvements that one global pass stalls on.
    """
    n = indptr.shape[0] - 1
    k = bw.shape[0]
    keys = np.empty(n, dtype=np.float64)
    verts = np.empty(n, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    conn = np.zeros(k, dtype=np.float64)
    touched = np.empty(k, dtype=np.int64)
    done = np.zeros(n, dtype=np.bool_)  # seeded a search or kept a move: not touched again this round
    search_of = np.full(n, -1, dtype=np.int64)  # id of the last search that moved the vertex
    log_v = np.empty(n, dtype=np.int64)
    log_from = np.empty(n, dtype=np.int64)
    kept_total = 0
    over = _overload(bw, maxw)
    for i in range(order.shape[0]):
        s = order[i]
        if done[s]:
            continue
        done[s] = True
        g, t = _best_move(s, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
        if t < 0:
            continue
        heap_set(keys, verts, pos, size, s, g)
        cur_gain = 0.0
        best_gain = 0.0
        cur_over = over
        best_over = over
        nm = 0
        best_len = 0
        since_best = 0
        while size[0] > 0 and since_best < stall:
            v, key = heap_pop(keys, verts, pos, size)
            g, t = _best_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
            if t < 0:
                continue
            if g < key:
                heap_set(keys, verts, pos, size, v, g)
                continue
            frm = parts[v]
            w = vwgt[v]
            old_over = max(bw[frm] - maxw[frm], 0.0) + max(bw[t] - maxw[t], 0.0)
            parts[v] = t
            bw[frm] -= w
            bw[t] += w
            cur_over += max(bw[frm] - maxw[frm], 0.0) + max(bw[t] - maxw[t], 0.0) - old_over
            if cur_over < 1e-9 * w:
                cur_over = 0.0
            cur_gain += g
            search_of[v] = i
            log_v[nm] = v
            log_from[nm] = frm
            nm += 1
            if cur_over < best_over or (cur_over == best_over and cur_gain > best_gain):
                best_over = cur_over
                best_gain = cur_gain
                best_len = nm
                since_best = 0
            else:
                since_best += 1
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if done[u] or search_of[u] == i:
                    continue
                gu, tu = _best_move(u, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
                if tu >= 0:
                    heap_set(keys, verts, pos, size, u, gu)
                else:
                    heap_remove(keys, verts, pos, size, u)
        while size[0] > 0:  # empty the queue for the next search
            heap_pop(keys, verts, pos, size)
        for j in range(nm - 1, best_len - 1, -1):
            v = log_v[j]
            t = parts[v]
            parts[v] = log_from[j]
            bw[t] -= vwgt[v]
            bw[log_from[j]] += vwgt[v]
        for j in range(best_len):
            done[log_v[j]] = True
        cut -= best_gain
        over = best_over
        kept_total += best_len
    return cut, kept_total


@njit(cache=True)
def _fm2_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, order, stall, cut, boundary_only):
    """One 2-way FM pass (one queue per side) in place; same contract as _fm_pass.

    Unlike the k-way pass, a move may overfill the other side when no top move fits: with
    little or no slack (a bisection of unit weights into exact halves) FM then still swaps
    vertices, one move out and one back, and the rollback keeps only balanced best states.
    With boundary_only=False interior and isolated vertices are queued too, so balance can
    also be restored with them (needed on small disconnected graphs).
    """
    n = indptr.shape[0] - 1
    keys = np.empty((2, n), dtype=np.float64)
    verts = np.empty((2, n), dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)  # slot in the heap of the vertex's current side
    sizes = np.zeros((2, 1), dtype=np.int64)
    gain = np.zeros(n, dtype=np.float64)  # edge weight to the other side minus to its own
    locked = np.zeros(n, dtype=np.bool_)
    log_v = np.empty(n, dtype=np.int64)
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            gain[v] += ewgt[e] if parts[indices[e]] != parts[v] else -ewgt[e]
    for i in range(order.shape[0]):  # boundary vertices, in random order for tie-breaking
        v = order[i]
        if not boundary_only:
            heap_set(keys[parts[v]], verts[parts[v]], pos, sizes[parts[v]], v, gain[v])
            continue
        for e in range(indptr[v], indptr[v + 1]):
            if parts[indices[e]] != parts[v]:
                s = parts[v]
                heap_set(keys[s], verts[s], pos, sizes[s], v, gain[v])
                break

    cur_cut = cut
    cur_over = _overload(bw, maxw)
    best_cut = cur_cut
    best_over = cur_over
    best_len = 0
    nmoves = 0
    since_best = 0
    while since_best < stall:
        fits0 = sizes[0, 0] > 0 and bw[1] + vwgt[verts[0, 0]] <= maxw[1]
        fits1 = sizes[1, 0] > 0 and bw[0] + vwgt[verts[1, 0]] <= maxw[0]
        if fits0 and fits1:
            s = 0 if keys[0, 0] >= keys[1, 0] else 1
        elif fits0:
            s = 0
        elif fits1:
            s = 1
        elif sizes[0, 0] > 0 and sizes[1, 0] > 0:
            s = 0 if bw[0] * maxw[1] >= bw[1] * maxw[0] else 1  # nothing fits: unload the fuller side
        elif sizes[0, 0] > 0:
            s = 0
        elif sizes[1, 0] > 0:
            s = 1
        else:
            break
        v, g = heap_pop(keys[s], verts[s], pos, sizes[s])
        t = 1 - s
        w = vwgt[v]
        parts[v] = t
        bw[s] -= w
        bw[t] += w
        cur_over = max(bw[0] - maxw[0], 0.0) + max(bw[1] - maxw[1], 0.0)
        cur_cut -= g
        locked[v] = True
        log_v[nmoves] = v
        nmoves += 1
        if cur_over < best_over or (cur_over == best_over and cur_cut < best_cut):
            best_over = cur_over
            best_cut = cur_cut
            best_len = nmoves
            since_best = 0
        else:
            since_best += 1
        gain[v] = -gain[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            su = parts[u]
            # v left side s for side t: u on s lost an inside edge, u on t gained one
            gain[u] += 2.0 * ewgt[e] if su == s else -2.0 * ewgt[e]
            if locked[u]:
                continue
            boundary = su == s or not boundary_only
            for f in range(indptr[u], indptr[u + 1]):
                if boundary:
                    break
                if parts[indices[f]] != su:
                    boundary = True
                    break
            if boundary:
                heap_set(keys[su], verts[su], pos, sizes[su], u, gain[u])
            else:
                heap_remove(keys[su], verts[su], pos, sizes[su], u)

    for i in range(nmoves - 1, best_len - 1, -1):  # roll back to the best prefix
        v = log_v[i]
        t = parts[v]
        parts[v] = 1 - t
        bw[t] -= vwgt[v]
        bw[1 - t] += vwgt[v]
    return best_cut, best_len


@njit(cache=True)
def _fm(indptr, indices, ewgt, vwgt, parts, bw, maxw, orders, stall, min_gain, boundary_only,
        local_stall):
    """Up to orders.shape[0] FM passes (one random vertex order each); returns (cut, moves, passes).

    A k-way pass (k > 2) is a global pass followed, when local_stall > 0, by a round of
    localized multi-try searches; a 2-way pass is the two-queue pass.
    """
    cut = _cut(indptr, indices, ewgt, parts)
    moves = 0
    done = 0
    for p in range(orders.shape[0]):
        before_cut = cut
        before_over = _overload(bw, maxw)
        if bw.shape[0] == 2:
            cut, kept = _fm2_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, orders[p], stall, cut,
                                  boundary_only)
        else:
            cut, kept = _fm_pass(indptr, indices, ewgt, vwgt, parts, bw, maxw, orders[p], stall, cut)
            if local_stall > 0:
                cut, kept_local = _localized_round(indptr, indices, ewgt, vwgt, parts, bw, maxw, orders[p],
                                                   local_stall, cut)
                kept += kept_local
        moves += kept
        done += 1
        if kept == 0:
            break
        if _overload(bw, maxw) >= before_over and before_cut - cut <= min_gain * max(before_cut, 1.0):
            break
    return cut, moves, done


# ---- rebalancing ----------------------------------------------------------------------------

@njit(cache=True)
def _rebalance_key(gain, w):
    # KaMinPar-style relative gain: among losing moves prefer little loss per unit of weight moved
    return gain * w if gain >= 0 else gain / w


@njit(cache=True)
def _rebalance_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched):
    """(gain, target) of v's least-loss move to a block with room: an adjacent block if any, else the lightest."""
    g, t = _best_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
    if t >= 0:
        return g, t
    own = parts[v]
    k = bw.shape[0]
    light = -1
    for b in range(k):
        if b != own and bw[b] + vwgt[v] <= maxw[b] and (light < 0 or bw[b] - maxw[b] < bw[light] - maxw[light]):
            light = b
    if light < 0:
        return -np.inf, -1
    inside = 0.0
    for e in range(indptr[v], indptr[v + 1]):
        if parts[indices[e]] == own:
            inside += ewgt[e]
    return -inside, light


@njit(cache=True)
def _rebalance(indptr, indices, ewgt, vwgt, parts, bw, maxw, order):
    """Move vertices out of overweight blocks, least loss per weight first; returns vertices moved."""
    n = indptr.shape[0] - 1
    k = bw.shape[0]
    keys = np.empty(n, dtype=np.float64)
    verts = np.empty(n, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    conn = np.zeros(k, dtype=np.float64)
    touched = np.empty(k, dtype=np.int64)
    locked = np.zeros(n, dtype=np.bool_)
    for i in range(order.shape[0]):
        v = order[i]
        if bw[parts[v]] > maxw[parts[v]] and vwgt[v] > 0:  # moving a weightless vertex cannot help
            g, t = _rebalance_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
            if t >= 0:
                heap_set(keys, verts, pos, size, v, _rebalance_key(g, vwgt[v]))
    moved = 0
    while size[0] > 0:
        v, key = heap_pop(keys, verts, pos, size)
        frm = parts[v]
        if bw[frm] <= maxw[frm]:
            continue
        g, t = _rebalance_move(v, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
        if t < 0:
            continue
        nk = _rebalance_key(g, vwgt[v])
        if nk < key:
            heap_set(keys, verts, pos, size, v, nk)
            continue
        parts[v] = t
        bw[frm] -= vwgt[v]
        bw[t] += vwgt[v]
        locked[v] = True
        moved += 1
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if locked[u] or bw[parts[u]] <= maxw[parts[u]] or vwgt[u] <= 0:
                continue
            gu, tu = _rebalance_move(u, indptr, indices, ewgt, vwgt, parts, bw, maxw, conn, touched)
            if tu >= 0:
                heap_set(keys, verts, pos, size, u, _rebalance_key(gu, vwgt[u]))
            else:
                heap_remove(keys, verts, pos, size, u)
    return moved


# ---- Python entry points ---------------------------------------------------------------------

def host_arrays(graph):
    """(indptr int64, indices int64, ewgt float64, vwgt float64) host arrays the kernels take.

    Accepts anything matchpart.graph.as_graph does (a Graph on any device, scipy, networkx).
    """
    g = as_graph(graph).to("cpu")
    return (np.ascontiguousarray(g.indptr, dtype=np.int64), np.ascontiguousarray(g.indices, dtype=np.int64),
            np.ascontiguousarray(g.ewgt, dtype=np.float64), np.ascontiguousarray(g.vwgt, dtype=np.float64))


def default_stall(n):
    """Moves without improvement after which a pass stops (see STALL_MOVES_*)."""
    return max(STALL_MOVES_MIN, int(STALL_MOVES_FRACTION * n))


def _orders(n, passes, seed):
    """One random vertex order per pass (queue insertion order decides ties between equal gains)."""
    rng = np.random.default_rng(seed)
    return rng.permuted(np.broadcast_to(np.arange(n, dtype=np.int64), (passes, n)), axis=1)


def _check_parts(parts, n, k):
    """A fresh host int64 copy of a block array (numpy or cupy), validated against n and k."""
    p = parts.get() if hasattr(parts, "get") and not isinstance(parts, np.ndarray) else np.asarray(parts)
    if p.ndim != 1 or p.shape[0] != n:
        raise ValueError(f"parts must be a 1-d array of length n={n}, got shape {p.shape}")
    if p.dtype.kind not in "iu":
        raise ValueError(f"parts must be integers, got dtype {p.dtype}")
    if n and (p.min() < 0 or p.max() >= k):
        raise ValueError(f"parts must lie in 0..k-1 = 0..{k - 1}, got range {p.min()}..{p.max()}")
    return np.array(p, dtype=np.int64)


def refine_arrays(arrays, parts, maxw, *, seed=0, passes=4, stall=None, rebalance=True, boundary_only=True,
                  localized=True):
    """FM on host arrays (see host_arrays) with per-block bounds ``maxw``; parts is changed in place.

    boundary_only=False queues every vertex in 2-way FM (for small, possibly disconnected graphs);
    localized adds localized multi-try rounds to k-way passes (k > 2).
    Returns a dict: cut, initial_cut, moves, passes, rebalance_moves, overload (sum over blocks of
    weight above its bound; 0 means balanced).
    """
    indptr, indices, ewgt, vwgt = arrays
    n = indptr.shape[0] - 1
    k = maxw.shape[0]
    bw = np.bincount(parts, weights=vwgt, minlength=k).astype(np.float64)
    initial_cut = _cut(indptr, indices, ewgt, parts)
    rb_moves = 0
    if rebalance and (bw > maxw).any():
        rb_moves = int(_rebalance(indptr, indices, ewgt, vwgt, parts, bw, maxw,
                                  np.random.default_rng(seed ^ 0x5EED).permutation(n)))
    stall = default_stall(n) if stall is None else int(stall)
    cut, moves, done = _fm(indptr, indices, ewgt, vwgt, parts, bw, maxw, _orders(n, passes, seed), stall,
                           MIN_PASS_IMPROVEMENT, boundary_only, LOCAL_STALL_MOVES if localized else 0)
    return {"cut": cut, "initial_cut": initial_cut, "moves": int(moves), "passes": int(done),
            "rebalance_moves": rb_moves, "overload": float(_overload(bw, maxw))}


def induced_subgraph(arrays, verts):
    """Host arrays of the subgraph induced by `verts` (vertex i of it is verts[i]); rows stay sorted if verts is."""
    indptr, indices, ewgt, vwgt = arrays
    n = indptr.shape[0] - 1
    local = np.full(n, -1, dtype=np.int64)
    local[verts] = np.arange(verts.shape[0])
    starts = indptr[verts]
    lens = indptr[verts + 1] - starts
    total = int(lens.sum())
    first = np.cumsum(lens) - lens
    entries = np.repeat(starts - first, lens) + np.arange(total)
    nbr = local[indices[entries]]
    keep = nbr >= 0
    rows = np.repeat(np.arange(verts.shape[0]), lens)[keep]
    sub_indptr = np.zeros(verts.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=verts.shape[0]), out=sub_indptr[1:])
    return sub_indptr, nbr[keep], ewgt[entries[keep]], vwgt[verts]


def pairwise_arrays(arrays, parts, maxw, *, seed=0, rounds=2, passes=4):
    """2-way FM on every pair of adjacent blocks, in place; returns the total cut reduction.

    Moving a vertex between blocks A and B leaves its edges to other blocks cut, so FM on the
    subgraph induced by A and B (bounds maxw[A], maxw[B]) changes the global cut by exactly
    its own cut change. The 2-way pass can swap vertices when both blocks are full, which the
    k-way pass cannot: this is what refines tightly packed partitions of heavy vertices.
    Up to `rounds` rounds over the pairs (in random order), stopping when a round gains nothing.
    """
    indptr, indices = arrays[0], arrays[1]
    n = indptr.shape[0] - 1
    k = maxw.shape[0]
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    total = 0.0
    for _ in range(rounds):  # Python loops over rounds and block pairs, never over vertices
        a, b = parts[rows], parts[indices]
        cross = a < b
        pairs = np.unique(a[cross] * k + b[cross])
        by_block = np.argsort(parts, kind="stable")
        bounds = np.searchsorted(parts[by_block], np.arange(k + 1))
        members = [by_block[bounds[i]:bounds[i + 1]] for i in range(k)]
        gained = 0.0
        for key in pairs[rng.permutation(pairs.shape[0])]:
            A, B = divmod(int(key), k)
            verts = np.sort(np.concatenate((members[A], members[B])))
            side = (parts[verts] == B).astype(np.int64)
            stats = refine_arrays(induced_subgraph(arrays, verts), side, maxw[[A, B]],
                                  seed=int(rng.integers(2**31)), passes=passes)
            gained += stats["initial_cut"] - stats["cut"]
            members[A], members[B] = verts[side == 0], verts[side == 1]
            parts[verts] = np.where(side == 1, B, A)
        total += gained
        if gained <= 0:
            break
    return total


def pairwise_fm(graph, parts, k, max_block_weight, *, seed=0, rounds=2, passes=4):
    """2-way FM between every pair of adjacent blocks (see pairwise_arrays); returns new int64 parts.

    Complements kway_fm where the balance bound leaves no room to move a vertex (heavy coarse
    vertices, exactly full blocks): swaps between two blocks still work there. Never raises
    the cut of a balanced input, never makes it less balanced.
    """
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    arrays = host_arrays(graph)
    p = _check_parts(parts, arrays[0].shape[0] - 1, k)
    maxw = np.broadcast_to(np.asarray(max_block_weight, dtype=np.float64), (k,)).copy()
    if (maxw < 0).any() or not np.isfinite(maxw).all():
        raise ValueError("max_block_weight must be finite and >= 0")
    pairwise_arrays(arrays, p, maxw, seed=seed, rounds=rounds, passes=passes)
    return p


def _cast_cut(value, graph):
    return int(round(value)) if graph.ewgt.dtype.kind in "iu" else float(value)


def kway_fm(graph, parts, k, max_block_weight, *, seed=0, passes=4, max_moves_without_improvement=None,
            localized=True, return_stats=False):
    """k-way FM refinement (CPU, compiled); returns new int64 parts (the input is not modified).

    A global priority queue holds boundary vertices keyed by the best gain of a move to an
    adjacent block with room (weight + vertex weight <= max_block_weight); each vertex moves at
    most once per pass and every pass is rolled back to its best prefix (lowest overload, then
    lowest cut). An overweight input is first rebalanced by least-loss moves out of overweight
    blocks. The result never has a higher cut than the input unless the input was overweight,
    and is never less balanced. For k = 2 the two-queue pass of fm_bisection is used instead,
    which may overfill a side in the middle of a pass (never in the result) so that it can
    also swap vertices when the bound leaves no slack.

    max_block_weight: one bound for every block, or an array of k per-block bounds.
    max_moves_without_improvement: a pass stops after this many moves without a new best
    state (default max(STALL_MOVES_MIN, STALL_MOVES_FRACTION * n)).
    localized: after each global pass (k > 2), run a round of localized multi-try FM (KaFFPa):
    short searches from every boundary vertex; better cuts (~3-5% on meshes) for ~10x the time.
    return_stats: also return the dict of refine_arrays (cut as tracked by the kernel, moves...).
    """
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if passes < 0:
        raise ValueError(f"passes must be >= 0, got {passes}")
    graph = as_graph(graph)
    arrays = host_arrays(graph)
    n = arrays[0].shape[0] - 1
    p = _check_parts(parts, n, k)
    maxw = np.broadcast_to(np.asarray(max_block_weight, dtype=np.float64), (k,)).copy()
    if (maxw < 0).any() or not np.isfinite(maxw).all():
        raise ValueError("max_block_weight must be finite and >= 0")
    stats = refine_arrays(arrays, p, maxw, seed=seed, passes=passes, stall=max_moves_without_improvement,
                          localized=localized)
    if return_stats:
        stats["cut"] = _cast_cut(stats["cut"], graph)
        stats["initial_cut"] = _cast_cut(stats["initial_cut"], graph)
        return p, stats
    return p


def fm_bisection(graph, side, max_weights, *, seed=0, passes=4, max_moves_without_improvement=None):
    """2-way FM on a bisection ``side`` (0/1 per vertex) with bounds max_weights = (max0, max1).

    Same engine as kway_fm with k = 2; returns (new side array, cut).
    """
    mw = np.asarray(max_weights, dtype=np.float64)
    if mw.shape != (2,):
        raise ValueError(f"max_weights must be a pair (max0, max1), got shape {mw.shape}")
    p, stats = kway_fm(graph, side, 2, mw, seed=seed, passes=passes,
                       max_moves_without_improvement=max_moves_without_improvement, return_stats=True)
    return p, stats["cut"]


def rebalance(graph, parts, k, max_block_weight, *, seed=0):
    """Least-loss moves out of overweight blocks until every block fits (when possible); new parts.

    Raises MatchpartError when a block is still overweight afterwards (e.g. a vertex heavier
    than the bound, or no room anywhere).
    """
    arrays = host_arrays(graph)
    n = arrays[0].shape[0] - 1
    p = _check_parts(parts, n, int(k))
    maxw = np.broadcast_to(np.asarray(max_block_weight, dtype=np.float64), (int(k),)).copy()
    bw = np.bincount(p, weights=arrays[3], minlength=int(k)).astype(np.float64)
    _rebalance(*arrays, p, bw, maxw, np.random.default_rng(seed).permutation(n))
    if (bw > maxw).any():
        b = int(np.argmax(bw - maxw))
        raise MatchpartError(f"cannot balance: block {b} weighs {bw[b]:g} > bound {maxw[b]:g} after rebalancing")
    return p
