"""Suitor and locally dominant (LD) rounds as compiled kernels on the CPU, and the rows
sorted by priority that they and b-Suitor's kernel (in ``b_suitor.py``) scan.

The same rounds as the whole-array formulations in ``suitor.py`` and ``b_suitor.py`` (which
stay for the GPU): the same windows, pointers and proposals, so the same matching and the
same per-round stats. No random numbers are involved: the contract's tie-break decides.

Where the whole-array version ranks every edge globally (``edge_priority``: two sorts over
the edges, then a third for the sorted adjacency), the kernels never need a global rank:
every comparison the rounds make is between two edges at one vertex t (a proposal against
t's current suitor, proposals to t against each other, a row's own entries), and there the
contract's order -- decreasing rating, then the smaller (min id, max id) pair -- is the
decreasing rating then the smaller other end. So each row is sorted by (rating key
descending, neighbour ascending) on its own, and the rounds compare (key, other end).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from .ratings import _float_order_keys, upper_edge_ratings

# rows up to this long are sorted by insertion, longer ones by radix (a merge sort between
# was no faster on rmat's coarse levels)
_SHORT_ROW = 24
_U64_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)
# trusted arrays (Graph(validate=False)) that break the kernels' assumptions
ASYMMETRIC = "adjacency is not symmetric or has a self-loop"
# LD finds its next affected vertices by a pass over the alive ones until a round scans
# fewer than 1/_SPARSE_SHARE of them, then from the few it touched (see the kernel)
_SPARSE_SHARE = 16


def priority_keys(ratings):
    """uint64 keys of float64 ``ratings``: higher rating, higher key; equal ratings (0.0 and
    -0.0 included), equal keys; NaN lowest, below -inf, as ``edge_priority``'s sort of -r
    puts it."""
    ratings = np.ascontiguousarray(ratings, dtype=np.float64)
    keys, has_nan = _float_order_keys(ratings)
    if has_nan:
        nan = np.isnan(ratings)
        keys = _float_order_keys(np.where(nan, 0.0, ratings))[0]
        keys[nan] = 0  # every non-NaN key is above 0: -inf's is 0x000FFFFFFFFFFFFF
    return keys


def prioritised_rows(graph, rating):
    """Each row's entries by the contract's priority, heaviest first (see the module doc):
    (neighbour, key, CSR position of each sorted entry). Both entries of an edge get the
    key of its (min id -> max id) entry's rating, as ``edge_priority`` ranks them."""
    _, _, ratings = upper_edge_ratings(graph, rating)
    return _prioritised_rows(graph.indptr, graph.indices, priority_keys(ratings))


@njit(cache=True)
def _prioritised_rows(indptr, indices, upper_keys):
    n = indptr.shape[0] - 1
    m = indices.shape[0]
    longest = 0
    for u in range(n):
        longest = max(longest, indptr[u + 1] - indptr[u])
    # sort scratch: keys and positions (two each), byte counts
    ka, kb = np.empty(longest, dtype=np.uint64), np.empty(longest, dtype=np.uint64)
    ia, ib = np.empty(longest, dtype=np.int64), np.empty(longest, dtype=np.int64)
    count = np.zeros((8, 256), dtype=np.int64)
    # 1. CSR positions with every row by increasing neighbour (rows usually are already)
    order = np.arange(m)
    desc = np.empty(0, dtype=np.uint64)  # keys that sort neighbours ascending, if a row needs it
    for u in range(n):
        a, b = indptr[u], indptr[u + 1]
        for e in range(a + 1, b):
            if indices[e] < indices[e - 1]:
                if desc.shape[0] == 0:
                    desc = np.empty(m, dtype=np.uint64)
                    for f in range(m):
                        desc[f] = _U64_MAX - np.uint64(indices[f])
                _sort_desc(order, a, b, desc, ka, kb, ia, ib, count)
                break
    # 2. keys: an upper entry u -> v (u < v) takes the next upper key (upper_edge_ratings'
    # order); its reverse v -> u is the next entry of row v by neighbour, because the lower
    # entries of row v are met in increasing u here
    key = np.empty(m, dtype=np.uint64)
    cursor = indptr[:-1].copy()
    k = 0
    for u in range(n):
        # the earlier rows filled u's entries by neighbour up to cursor[u]: exactly those below
        # u if every key is to be written (a check of counts, not that the pairs match)
        c = cursor[u]
        if (c > indptr[u] and indices[order[c - 1]] > u) or (c < indptr[u + 1] and indices[order[c]] <= u):
            raise ValueError(ASYMMETRIC)
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if v > u:
                if cursor[v] == indptr[v + 1]:
                    raise ValueError(ASYMMETRIC)
                key[e] = upper_keys[k]
                key[order[cursor[v]]] = upper_keys[k]
                cursor[v] += 1
                k += 1
    # 3. within each row, a stable sort by decreasing key keeps increasing neighbours among ties
    for u in range(n):
        a, b = indptr[u], indptr[u + 1]
        for e in range(a + 1, b):  # most rows of a graph with unit weights are in order already
            if key[order[e]] > key[order[e - 1]]:
                _sort_desc(order, a, b, key, ka, kb, ia, ib, count)
                break
    nbr = np.empty(m, dtype=indices.dtype)
    skey = np.empty(m, dtype=np.uint64)
    for s in range(m):
        nbr[s] = indices[order[s]]
        skey[s] = key[order[s]]
    return nbr, skey, order


# Row sorts written out rather than numba's np.argsort, whose quicksort and merge sort took
# seconds to compile: more than all the rest of the matcher.
@njit(cache=True)
def _sort_desc(order, a, b, key, ka, kb, ia, ib, count):
    """Stable sort of order[a:b] by decreasing key[order]: insertion sort for short rows
    (in cache, no passes), radix sort for the others (linear: hubs of power-law graphs)."""
    if b - a <= _SHORT_ROW:
        _insertion_sort_desc(order, a, b, key)
    else:
        _radix_sort_desc(order, a, b, key, ka, kb, ia, ib, count)


@njit(cache=True)
def _insertion_sort_desc(order, a, b, key):
    for i in range(a + 1, b):
        x = order[i]
        kx = key[x]
        j = i - 1
        while j >= a and key[order[j]] < kx:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x


@njit(cache=True)
def _radix_sort_desc(order, a, b, key, ka, kb, ia, ib, count):
    """LSD radix sort of the inverted keys, a byte a pass, skipping the bytes all keys share
    (stable, as every pass is). ka, kb, ia, ib: scratch of b - a entries or more."""
    d = b - a
    count[:] = 0
    for i in range(d):
        x = _U64_MAX - key[order[a + i]]
        ka[i] = x
        ia[i] = order[a + i]
        for byte in range(8):
            count[byte, (x >> np.uint64(8 * byte)) & np.uint64(255)] += 1
    src_k, src_i, dst_k, dst_i = ka, ia, kb, ib
    for byte in range(8):
        shift = np.uint64(8 * byte)
        c = count[byte]
        if c[(src_k[0] >> shift) & np.uint64(255)] == d:
            continue
        total = 0
        for j in range(256):
            total, c[j] = total + c[j], total
        for i in range(d):
            x = src_k[i]
            j = (x >> shift) & np.uint64(255)
            dst_k[c[j]] = x
            dst_i[c[j]] = src_i[i]
            c[j] += 1
        src_k, dst_k = dst_k, src_k
        src_i, dst_i = dst_i, src_i
    for i in range(d):
        order[a + i] = src_i[i]


@njit(cache=True)
def _grown(a, size):
    """``a`` (int64) with room for at least ``size`` entries (doubling)."""
    if size <= a.shape[0]:
        return a
    b = np.zeros(2 * a.shape[0] + size, dtype=np.int64)
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


@njit(cache=True)
def suitor_kernel(indptr, nbr, key, window0, growth):
    """Suitor's rounds on rows sorted by ``prioritised_rows``. Returns (mate, searching
    vertices per round, matched vertices after each round).

    A round, as the whole-array one: every searching vertex u takes the first entry of its
    window that beats the target's current suitor, each target keeps its best proposal,
    winners displace the old suitor, which searches again; losers search again from the
    lost entry (which then fails), vertices whose window held nothing skip it and double it.
    Proposals are read against the suitors of the round's start and applied after all of
    them, as the whole-array round does.
    """
    n = indptr.shape[0] - 1
    sid = np.full(n, -1, dtype=np.int64)          # current suitor
    skey = np.zeros(n, dtype=np.uint64)           # key of the current suitor's edge
    pid = np.full(n, -1, dtype=np.int64)          # best proposal of this round
    pkey = np.zeros(n, dtype=np.uint64)
    ptr = indptr[:-1].copy()
    window = np.full(n, window0, dtype=np.int64)
    rows = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    found = np.empty(n, dtype=np.int64)
    ns = 0
    for v in range(n):
        if indptr[v + 1] > indptr[v]:
            rows[ns] = v
            ns += 1
    active = np.zeros(64, dtype=np.int64)
    matched = np.zeros(64, dtype=np.int64)
    mutual = 0  # vertices whose suitor is also the vertex they are the suitor of
    rounds = 0
    while ns > 0:
        for j in range(ns):
            u = rows[j]
            p, end = ptr[u], indptr[u + 1]
            hi = min(p + window[u], end)
            f = -1
            for e in range(p, hi):
                t = nbr[e]
                s = sid[t]
                if s < 0 or key[e] > skey[t] or (key[e] == skey[t] and u < s):
                    f = e
                    break
            if f >= 0:
                ptr[u] = f
                t = nbr[f]
                q = pid[t]
                if q < 0 or key[f] > pkey[t] or (key[f] == pkey[t] and u < q):
                    pid[t] = u
                    pkey[t] = key[f]
            else:
                ptr[u] = hi
                window[u] *= growth
            found[j] = f
        nn = 0
        for j in range(ns):
            u = rows[j]
            f = found[j]
            if f < 0:
                if ptr[u] < indptr[u + 1]:
                    nxt[nn] = u
                    nn += 1
                continue
            t = nbr[f]
            if pid[t] != u:  # lost: searches again
                nxt[nn] = u
                nn += 1
                continue
            pid[t] = -1
            d = sid[t]
            if d >= 0:  # displaced (never a searcher of this round): searches again
                mutual -= 2 if sid[d] == t else 0
                nxt[nn] = d
                nn += 1
            sid[t] = u
            skey[t] = key[f]
            mutual += 2 if sid[u] == t else 0
        active = _grown(active, rounds + 1)
        matched = _grown(matched, rounds + 1)
        active[rounds] = ns
        matched[rounds] = mutual
        rounds += 1
        rows, nxt = nxt, rows
        ns = nn
    mate = np.full(n, -1, dtype=np.int64)
    for v in range(n):
        s = sid[v]
        if s >= 0 and sid[s] == v:
            mate[v] = s
    return mate, active[:rounds], matched[:rounds]


@njit(cache=True)
def locally_dominant_kernel(indptr, nbr, window0, growth):
    """LD's rounds on rows sorted by ``prioritised_rows``. Returns (mate, alive vertices per
    round, matched vertices after each round).

    A round, as the whole-array one: every affected vertex (candidate unknown or taken)
    takes the first free neighbour in its window as its candidate (or skips the window,
    which doubles); mutual candidates match; vertices without entries left drop out.
    Freeness is read at the round's start, matches are applied after all candidates are
    known, and the next round's affected vertices after all matches.

    The next affected vertices come from a pass over the alive ones (in vertex order, which
    keeps the next scan's reads local) while the affected are a fair share of them; after
    a round with few, from the affected and the neighbours of the vertices just matched
    (among whom are all that chose one of them), so that a round costs its work, not
    O(alive): no quadratic total on inputs that match a pair a round (a path with
    increasing weights).
    """
    n = indptr.shape[0] - 1
    mate = np.full(n, -1, dtype=np.int64)
    cand = np.full(n, -1, dtype=np.int64)
    ptr = indptr[:-1].copy()
    window = np.full(n, window0, dtype=np.int64)
    listed = np.zeros(n, dtype=np.int64)  # the round whose next scan list holds a vertex
    alive = np.empty(n, dtype=np.int64)   # (kept while passing over it pays)
    scan = np.empty(n, dtype=np.int64)    # this round's affected vertices
    nxt = np.empty(n, dtype=np.int64)
    pairs = np.empty(n, dtype=np.int64)   # one end of each pair matched in this round
    na = 0
    for v in range(n):
        if indptr[v + 1] > indptr[v]:
            alive[na] = scan[na] = v
            na += 1
    ns = na
    dense = True
    counts = np.zeros(64, dtype=np.int64)
    matched = np.zeros(64, dtype=np.int64)
    total = 0
    rounds = 0
    while na > 0 and ns > 0:
        for j in range(ns):
            x = scan[j]
            p = ptr[x]
            hi = min(p + window[x], indptr[x + 1])
            f = -1
            for e in range(p, hi):
                if mate[nbr[e]] < 0:
                    f = e
                    break
            if f >= 0:
                ptr[x] = f
                cand[x] = nbr[f]
            else:
                ptr[x] = hi
                window[x] *= growth
                cand[x] = -1
        # a new mutual pair has a member that chose its candidate in this round
        npairs = 0
        for j in range(ns):
            x = scan[j]
            c = cand[x]
            if c >= 0 and cand[c] == x and mate[x] < 0:
                mate[x] = c
                mate[c] = x
                pairs[npairs] = x
                npairs += 1
        total += 2 * npairs
        counts = _grown(counts, rounds + 1)
        matched = _grown(matched, rounds + 1)
        counts[rounds] = na
        matched[rounds] = total
        rounds += 1
        dense = dense and ns * _SPARSE_SHARE >= na
        nn = 0
        if dense:  # a pass over the alive: drop the matched and exhausted, list the affected
            k = 0
            for j in range(na):
                x = alive[j]
                if mate[x] >= 0 or ptr[x] >= indptr[x + 1]:
                    continue
                alive[k] = x
                k += 1
                c = cand[x]
                if c < 0 or mate[c] >= 0:
                    nxt[nn] = x
                    nn += 1
            na = k
        else:  # the scanned vertices still alive, and those whose candidate was just matched
            na -= 2 * npairs
            for j in range(ns):
                x = scan[j]
                if mate[x] >= 0:
                    continue
                if ptr[x] >= indptr[x + 1]:  # no entries left: never matched
                    na -= 1
                    continue
                c = cand[x]
                if c < 0 or mate[c] >= 0:
                    listed[x] = rounds
                    nxt[nn] = x
                    nn += 1
            for i in range(2 * npairs):
                c = pairs[i // 2] if i % 2 == 0 else mate[pairs[i // 2]]
                for e in range(indptr[c], indptr[c + 1]):
                    y = nbr[e]
                    if cand[y] == c and mate[y] < 0 and listed[y] != rounds:
                        listed[y] = rounds
                        nxt[nn] = y
                        nn += 1
        scan, nxt = nxt, scan
        ns = nn
    return mate, counts[:rounds], matched[:rounds]
