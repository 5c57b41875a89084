"""Each row of the adjacency sorted by the matching contract's priority, on the CPU's threads:
the input of the Suitor, LD and b-Suitor kernels (suitor_kernel.py, b_suitor.py).

Where the whole-array version ranks every edge globally (``edge_priority``: two sorts over
the edges, then a third for the sorted adjacency), the kernels never need a global rank:
every comparison the rounds make is between two edges at one vertex t (a proposal against
t's current suitor, proposals to t against each other, a row's own entries), and there the
contract's order -- decreasing rating, then the smaller (min id, max id) pair -- is the
decreasing rating then the smaller other end. So each row is sorted by (rating key
descending, neighbour ascending) on its own, and the rounds compare (key, other end).

Every pass works on fixed chunks of rows: a row sorted by neighbour, its upper entries' keys
taken in CSR order (the chunks' counts offset in chunk order), each lower entry's key copied
from its reverse entry (found by binary search in the neighbour's sorted row), then the
row sorted by key. On one thread the keys come from one sequential pass instead (no search). The result does not depend on the
number of threads.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .. import threads
from ..jit import njit
from ..threads import PRANGE_ONLY
from .ratings import _float_order_keys, upper_edge_ratings

# rows up to this long are sorted by insertion, longer ones by radix (a merge sort between
# was no faster on rmat's coarse levels)
_SHORT_ROW = 24
_U64_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)
# trusted arrays (Graph(validate=False)) that break the kernels' assumptions
ASYMMETRIC = "adjacency is not symmetric or has a self-loop"


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
    parallel_min = threads.PARALLEL_MIN_ITEMS if numba.get_num_threads() > 1 else graph.n + 1
    nbr, key, order, bad = _prioritised_rows(graph.indptr, graph.indices, priority_keys(ratings), threads.CHUNK,
                                             parallel_min)
    if bad:
        raise ValueError(ASYMMETRIC)
    return nbr, key, order


@njit(cache=True, internal=True)
def _row_scratch(indptr, lo, hi):
    """Sort scratch for the rows lo..hi-1: keys and positions (two each) and byte counts."""
    longest = 0
    for u in range(lo, hi):
        longest = max(longest, indptr[u + 1] - indptr[u])
    return (np.empty(longest, dtype=np.uint64), np.empty(longest, dtype=np.uint64),
            np.empty(longest, dtype=np.int64), np.empty(longest, dtype=np.int64), np.zeros((8, 256), dtype=np.int64))


@njit(cache=True, internal=True)
def _unsorted_chunk(c, chunk, n, indptr, indices, flags):
    """Whether some row of the chunk is not by increasing neighbour (rows usually are)."""
    for u in range(c * chunk, min(n, (c + 1) * chunk)):
        for e in range(indptr[u] + 1, indptr[u + 1]):
            if indices[e] < indices[e - 1]:
                flags[c] = True
                return


@njit(cache=True, internal=True)
def _by_neighbour_chunk(c, chunk, n, indptr, indices, order, desc):
    """Sort the chunk's rows by increasing neighbour (``desc``: keys that sort them so)."""
    lo, hi = c * chunk, min(n, (c + 1) * chunk)
    ka, kb, ia, ib, count = _row_scratch(indptr, lo, hi)
    for u in range(lo, hi):
        a, b = indptr[u], indptr[u + 1]
        for e in range(a + 1, b):
            if indices[e] < indices[e - 1]:
                _sort_desc(order, a, b, desc, ka, kb, ia, ib, count)
                break


@njit(cache=True, internal=True)
def _count_upper_chunk(c, chunk, n, indptr, indices, counts):
    k = 0
    for u in range(c * chunk, min(n, (c + 1) * chunk)):
        for e in range(indptr[u], indptr[u + 1]):
            k += indices[e] > u
    counts[c] = k


@njit(cache=True, internal=True)
def _find(indptr, indices, order, identity, w, u):
    """The sorted position of u in row w (sorted by neighbour; ``identity``: in CSR order
    already, which saves an indirection), or -1."""
    lo, hi = indptr[w], indptr[w + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        x = indices[mid] if identity else indices[order[mid]]
        if x < u:
            lo = mid + 1
        elif x > u:
            hi = mid
        else:
            return mid
    return -1


@njit(cache=True, internal=True)
def _upper_keys_chunk(c, chunk, n, indptr, indices, upper_keys, at, key, bad):
    """The chunk's upper entries take the next upper keys in CSR order from ``at``; a
    self-loop marks the chunk bad."""
    k = at
    for u in range(c * chunk, min(n, (c + 1) * chunk)):
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if v > u:
                key[e] = upper_keys[k]
                k += 1
            elif v == u:
                bad[c] = True


@njit(cache=True, internal=True)
def _lower_keys_chunk(c, chunk, n, indptr, indices, order, identity, key, bad, counts):
    """The chunk's lower entries u -> w (w < u) take the key of their reverse w -> u (found
    by binary search); one without a reverse marks the chunk bad. counts[c]: lower entries
    (the caller checks that they are as many as the upper ones). (Searching the shorter of
    the two rows instead, so that no hub's row is searched, gained nothing measurable on
    R-MAT 2^18.)"""
    k = 0
    for u in range(c * chunk, min(n, (c + 1) * chunk)):
        for e in range(indptr[u], indptr[u + 1]):
            w = indices[e]
            if w < u:
                k += 1
                s = _find(indptr, indices, order, identity, w, u)
                if s < 0:
                    bad[c] = True
                else:
                    key[e] = key[s] if identity else key[order[s]]
    counts[c] = k


@njit(cache=True, internal=True)
def _keys_by_cursor(indptr, indices, order, upper_keys, key):
    """Step 2 on one thread: an upper entry u -> v takes the next upper key, and so does its
    reverse v -> u, the next entry of row v by neighbour (the lower entries of row v are met
    in increasing u). O(m) with no search: R-MAT 2^18 0.41 s for the rows against 0.49 s
    with the chunks' binary searches. Returns whether the adjacency is asymmetric."""
    n = indptr.shape[0] - 1
    cursor = indptr[:-1].copy()
    k = 0
    for u in range(n):
        # the earlier rows filled u's entries by neighbour up to cursor[u]: exactly those below
        # u if every key is to be written (a check of counts, not that the pairs match)
        c = cursor[u]
        if (c > indptr[u] and indices[order[c - 1]] > u) or (c < indptr[u + 1] and indices[order[c]] <= u):
            return True
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if v > u:
                if cursor[v] == indptr[v + 1] or k == upper_keys.shape[0]:
                    return True
                key[e] = upper_keys[k]
                key[order[cursor[v]]] = upper_keys[k]
                cursor[v] += 1
                k += 1
    return k != upper_keys.shape[0]


@njit(cache=True, internal=True)
def _key_unsorted(indptr, order, key, u):
    for e in range(indptr[u] + 1, indptr[u + 1]):
        if key[order[e]] > key[order[e - 1]]:
            return True
    return False


@njit(cache=True, internal=True)
def _by_key_chunk(c, chunk, n, indptr, order, key, nbr, skey, indices):
    """Sort the chunk's rows by decreasing key (stable: increasing neighbours among ties) and
    write them out. (Most rows of a graph with unit weights are in order already; the sort's
    scratch is made only for a chunk that needs it: kept alive over the loop, it cost 300 ns
    a row on delaunay 2^20.)"""
    lo, hi = c * chunk, min(n, (c + 1) * chunk)
    first = lo
    while first < hi and not _key_unsorted(indptr, order, key, first):
        first += 1
    if first < hi:
        ka, kb, ia, ib, count = _row_scratch(indptr, first, hi)
        for u in range(first, hi):
            if _key_unsorted(indptr, order, key, u):
                _sort_desc(order, indptr[u], indptr[u + 1], key, ka, kb, ia, ib, count)
    for s in range(indptr[lo], indptr[hi]):
        nbr[s] = indices[order[s]]
        skey[s] = key[order[s]]


@njit(cache=True, parallel=PRANGE_ONLY)
def _prioritised_rows(indptr, indices, upper_keys, chunk, parallel_min):
    """(neighbours, keys, CSR positions) of the rows sorted by priority, and whether the
    adjacency was found asymmetric or with a self-loop (then the rest is undefined)."""
    n = indptr.shape[0] - 1
    m = indices.shape[0]
    chunks = (n + chunk - 1) // chunk
    threaded = n >= parallel_min
    order = np.arange(m)
    key = np.empty(m, dtype=np.uint64)
    counts = np.zeros(chunks, dtype=np.int64)
    bad = np.zeros(chunks, dtype=np.bool_)
    nbr = np.empty(m, dtype=indices.dtype)
    skey = np.empty(m, dtype=np.uint64)
    # 1. CSR positions with every row by increasing neighbour
    if threaded:
        for c in prange(chunks):
            _unsorted_chunk(np.int64(c), chunk, n, indptr, indices, bad)
    else:
        for c in range(chunks):
            _unsorted_chunk(c, chunk, n, indptr, indices, bad)
    identity = not bad.any()
    if not identity:
        desc = np.empty(m, dtype=np.uint64)
        for f in range(m):
            desc[f] = _U64_MAX - np.uint64(indices[f])
        if threaded:
            for c in prange(chunks):
                if bad[c]:
                    _by_neighbour_chunk(np.int64(c), chunk, n, indptr, indices, order, desc)
        else:
            for c in range(chunks):
                if bad[c]:
                    _by_neighbour_chunk(c, chunk, n, indptr, indices, order, desc)
        bad[:] = False
    # 2. keys: the upper entries' in CSR order, each lower entry its reverse's
    if not threaded:
        if _keys_by_cursor(indptr, indices, order, upper_keys, key):
            return nbr, skey, order, True
    else:
        for c in prange(chunks):
            _count_upper_chunk(np.int64(c), chunk, n, indptr, indices, counts)
        at = 0
        for c in range(chunks):     # counts become the chunks' first upper key
            at, counts[c] = at + counts[c], at
        if at != upper_keys.shape[0]:
            return nbr, skey, order, True
        for c in prange(chunks):
            _upper_keys_chunk(np.int64(c), chunk, n, indptr, indices, upper_keys, counts[c], key, bad)
        for c in prange(chunks):
            _lower_keys_chunk(np.int64(c), chunk, n, indptr, indices, order, identity, key, bad, counts)
        # every lower entry found its reverse, and there are as many as upper entries: each
        # upper entry has its reverse too (the adjacency has no repeated entries)
        if bad.any() or counts.sum() != at:
            return nbr, skey, order, True
    # 3. within each row, a stable sort by decreasing key keeps increasing neighbours among ties
    if threaded:
        for c in prange(chunks):
            _by_key_chunk(np.int64(c), chunk, n, indptr, order, key, nbr, skey, indices)
    else:
        for c in range(chunks):
            _by_key_chunk(c, chunk, n, indptr, order, key, nbr, skey, indices)
    return nbr, skey, order, False


# Row sorts written out rather than numba's np.argsort, whose quicksort and merge sort took
# seconds to compile: more than all the rest of the matcher.
@njit(cache=True, internal=True)
def _sort_desc(order, a, b, key, ka, kb, ia, ib, count):
    """Stable sort of order[a:b] by decreasing key[order]: insertion sort for short rows
    (in cache, no passes), radix sort for the others (linear: hubs of power-law graphs)."""
    if b - a <= _SHORT_ROW:
        _insertion_sort_desc(order, a, b, key)
    else:
        _radix_sort_desc(order, a, b, key, ka, kb, ia, ib, count)


@njit(cache=True, internal=True)
def _insertion_sort_desc(order, a, b, key):
    for i in range(a + 1, b):
        x = order[i]
        kx = key[x]
        j = i - 1
        while j >= a and key[order[j]] < kx:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x


@njit(cache=True, internal=True)
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
