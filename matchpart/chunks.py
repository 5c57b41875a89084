"""The chunks of the parallel kernels over rows, bounded by entries as well as by vertices.

threads.py gives every kernel fixed chunks of ``chunk`` vertices or list entries, which the
threads take one at a time. On a power-law graph numbered by degree (relabel.py) the hubs come
first, and equal vertex counts leave one chunk with a large share of the work: on R-MAT 2^20's
finest level the first 2048 vertices hold 26% of the entries, so a pass over it could never run
more than 1 / 0.26 = 3.8 x faster than on one thread, however many threads there are (two
threads do not reach that cap, and on this 2-core machine the pieces change no time). Here a
chunk whose rows hold more than ``max_entries`` entries is split into pieces of at most that
many (or of one row): R-MAT's largest piece then holds 0.4% of the entries. The pieces depend on
the rows only, so the kernels' results stay the same for any number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from .jit import njit
from .threads import CHUNK_MEAN_DEGREE, PRANGE_ONLY

# A chunk is split above this many times the entries it holds on average
# (chunk x max(CHUNK_MEAN_DEGREE, mean degree), the size threads.scaled_chunk aims at): the
# pieces of a hub's chunk are then about as large as an ordinary chunk, and ordinary chunks
# stay whole.
SPLIT_FACTOR = 2


@njit(cache=True, internal=True)
def max_chunk_entries(chunk, n, entries):
    """The entries above which a chunk of ``chunk`` vertices of a graph of n vertices and
    ``entries`` row entries is split (SPLIT_FACTOR)."""
    mean = entries // max(n, 1)
    return SPLIT_FACTOR * chunk * max(CHUNK_MEAN_DEGREE, mean)


@njit(cache=True)
def row_chunk_starts(indptr, max_vertices, max_entries):
    """Chunk c of a kernel over all rows is vertices starts[c] .. starts[c + 1] - 1: runs of
    at most ``max_vertices`` rows holding at most ``max_entries`` entries (or one longer row),
    taken greedily in vertex order."""
    n = indptr.shape[0] - 1
    starts = np.empty(n + 1, dtype=np.int64)
    starts[0] = 0
    c = 0
    v = 0
    while v < n:
        first = v
        base = indptr[v]
        v += 1
        while v < n and v - first < max_vertices and indptr[v + 1] - base <= max_entries:
            v += 1
        c += 1
        starts[c] = v
    return starts[:c + 1].copy()


@njit(cache=True, internal=True)
def _entries_of(items, indptr, lo, hi):
    total = 0
    for i in range(lo, hi):
        v = items[i]
        total += indptr[v + 1] - indptr[v]
    return total


@njit(cache=True, parallel=PRANGE_ONLY)
def list_chunk_starts(items, count, indptr, chunk, max_entries, threaded):
    """Chunk c of a kernel over the list items[:count] (vertices) is list entries starts[c] ..
    starts[c + 1] - 1: the list's fixed chunks of ``chunk`` entries, each one whose rows hold
    more than ``max_entries`` entries split greedily into pieces of at most that many (or one
    row). The rows are summed per fixed chunk on the threads when ``threaded``; only the heavy
    chunks are walked again."""
    fixed = (count + chunk - 1) // chunk
    held = np.empty(fixed, dtype=np.int64)
    if threaded:
        for c in prange(fixed):
            held[c] = _entries_of(items, indptr, c * chunk, min(count, (c + 1) * chunk))
    else:
        for c in range(fixed):
            held[c] = _entries_of(items, indptr, c * chunk, min(count, (c + 1) * chunk))
    # two consecutive pieces of a split chunk hold more than max_entries together
    bound = 1
    for c in range(fixed):
        bound += 1 if held[c] <= max_entries else 2 * (held[c] // max(max_entries, 1)) + 2
    starts = np.empty(bound, dtype=np.int64)
    starts[0] = 0
    s = 0
    for c in range(fixed):
        hi = min(count, (c + 1) * chunk)
        if held[c] > max_entries:
            i = c * chunk
            while i < hi:
                v = items[i]
                piece = indptr[v + 1] - indptr[v]
                i += 1
                while i < hi:
                    v = items[i]
                    d = indptr[v + 1] - indptr[v]
                    if piece + d > max_entries:
                        break
                    piece += d
                    i += 1
                s += 1
                starts[s] = i
        else:
            s += 1
            starts[s] = hi
    return starts[:s + 1].copy()


@njit(cache=True, internal=True)
def kernel_list_chunks(items, count, indptr, entries, chunk, threaded):
    """list_chunk_starts for a kernel over items[:count] of a graph with ``entries`` row
    entries, split above max_chunk_entries: the one call of every list kernel."""
    return list_chunk_starts(items, count, indptr, chunk,
                             max_chunk_entries(chunk, indptr.shape[0] - 1, entries), threaded)


@njit(cache=True, internal=True)
def bucket_starts(count):
    """A counting sort's buckets, filled by fixed chunks: count[t, b] = the items chunk t puts
    in bucket b. Returns where each bucket starts (length buckets + 1); count[t, b] becomes
    chunk t's first place in bucket b, after the earlier chunks' (a bucket keeps the items'
    order, whichever thread fills a chunk)."""
    chunks, buckets = count.shape
    start = np.zeros(buckets + 1, dtype=np.int64)
    for b in range(buckets):
        at = start[b]
        for t in range(chunks):
            k = count[t, b]
            count[t, b] = at
            at += k
        start[b + 1] = at
    return start
