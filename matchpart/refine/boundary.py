"""The boundary of a partition on the CPU (numba): a vertex test and a list kept up to date.

Jet and rebalancing only ever look at boundary vertices (a vertex without a neighbour in
another block has no move worth scoring), so they keep a list that holds every boundary
vertex, and possibly some vertices that have become interior since: the list grows around
moved vertices (the boundary only changes there) and its users drop interior entries as they
meet them. ``in_list`` flags the listed vertices, so nothing is listed twice.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from ..threads import PRANGE_ONLY

# The list walks below and in Jet, rebalancing and FM's set-up read every neighbour's block:
# a cache miss each once the blocks outgrow the caches. They prefetch the blocks of the row
# ROWS_AHEAD list entries on (BA 2^20's finest level, FM's set-up: 0.8 -> 0.29 s with the
# in-row prefetch of long rows).
ROWS_AHEAD = 2


@njit(cache=True, internal=True)
def on_boundary(v, indptr, indices, parts):
    """True when v has a neighbour in another block."""
    own = parts[v]
    for e in range(indptr[v], indptr[v + 1]):
        if parts[indices[e]] != own:
            return True
    return False


@njit(cache=True, internal=True)
def prefetch_row_blocks(w, indptr, indices, values):
    """Prefetch values[u] for w's first PREFETCH_DISTANCE neighbours u (e.g. their blocks; see prefetch.py)."""
    for e in range(indptr[w], min(indptr[w + 1], indptr[w] + PREFETCH_DISTANCE)):
        prefetch(values, indices[e])


@njit(cache=True, internal=True)
def shuffled_boundary(indptr, indices, parts, hint):
    """The boundary vertices in a random order (numba's generator): FM's queue order, which
    decides ties between equal gains. ``hint``: flags of a superset of the boundary that the
    previous refiner kept (jet_nb returns its list's flags), or an empty array; only flagged
    vertices are tested, so a pass over n flags replaces most of a pass over all m entries
    (delaunay 2^20: 19000 boundary vertices of a million). One scan in id order, then a
    shuffle: the same queue either way, and a scan in random order costs a cache miss per row."""
    n = indptr.shape[0] - 1
    every = hint.shape[0] == 0
    found = np.empty(n, dtype=np.int64)
    nb = 0
    for v in range(n):
        if (every or hint[v]) and on_boundary(v, indptr, indices, parts):
            found[nb] = v
            nb += 1
    return found[np.random.permutation(nb)]


@njit(cache=True, internal=True)
def boundary_from_scratch(indptr, indices, parts, listed, in_list, hint):
    """List every boundary vertex in id order; returns how many. ``hint``: flags of a superset
    of the boundary (only those vertices are tested), or an empty array (all are)."""
    every = hint.shape[0] == 0
    nb = 0
    for v in range(parts.shape[0]):
        in_list[v] = (every or hint[v]) and on_boundary(v, indptr, indices, parts)
        if in_list[v]:
            listed[nb] = v
            nb += 1
    return nb


@njit(cache=True, internal=True)
def cover_changes(indptr, indices, before, after, flags):
    """Flag every vertex whose block differs between ``before`` and ``after``, and its
    neighbours: flags that covered the boundary of ``before`` then cover that of ``after``."""
    for v in range(after.shape[0]):
        if after[v] != before[v]:
            flags[v] = True
            for e in range(indptr[v], indptr[v + 1]):
                flags[indices[e]] = True


@njit(cache=True, internal=True)
def _list(u, listed, nb, in_list):
    """Append u to the list unless it is on it; returns the list's new length."""
    if not in_list[u]:
        in_list[u] = True
        listed[nb] = u
        nb += 1
    return nb


@njit(cache=True, internal=True)
def extend_boundary(indptr, indices, moved, start, stop, listed, nb, in_list):
    """Add moved[start:stop] and their neighbours to the list; returns its new length."""
    for i in range(start, stop):
        v = moved[i]
        nb = _list(v, listed, nb, in_list)
        for e in range(indptr[v], indptr[v + 1]):
            nb = _list(np.int64(indices[e]), listed, nb, in_list)
    return nb


@njit(cache=True, internal=True)
def extend_and_flag(indptr, indices, moved, start, stop, listed, nb, in_list, flags):
    """extend_boundary and flag_around in one walk over the moved vertices' rows (Jet after
    its moves: on Barabasi-Albert 2^20 the two walks were 16-40 ms an iteration)."""
    for i in range(start, stop):
        v = moved[i]
        flags[v] = True
        nb = _list(v, listed, nb, in_list)
        for e in range(indptr[v], indptr[v + 1]):
            u = np.int64(indices[e])
            flags[u] = True
            nb = _list(u, listed, nb, in_list)
    return nb


@njit(cache=True, internal=True)
def flag_around(indptr, indices, vertices, start, stop, flags):
    """Flag vertices[start:stop] and their neighbours."""
    for i in range(start, stop):
        v = vertices[i]
        flags[v] = True
        for e in range(indptr[v], indptr[v + 1]):
            flags[indices[e]] = True


@njit(cache=True, internal=True)
def _walk_new(indptr, indices, moved, lo, hi, in_list, flags, out, at):
    """Walk moved[lo:hi] and their rows in extend_boundary's order: set ``flags`` (unless
    empty) and count the vertices met that are not listed; with ``out`` non-empty, also
    write them there from ``at`` on. Returns the count."""
    with_flags = flags.shape[0] > 0
    write = out.shape[0] > 0
    count = 0
    for i in range(lo, hi):
        v = moved[i]
        if with_flags:
            flags[v] = True         # every writer writes True: the same flags in any order
        if not in_list[v]:
            if write:
                out[at + count] = v
            count += 1
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if with_flags:
                flags[u] = True
            if not in_list[u]:
                if write:
                    out[at + count] = u
                count += 1
    return count


@njit(cache=True, parallel=PRANGE_ONLY)
def extend_and_flag_chunked(indptr, indices, moved, start, stop, listed, nb, in_list, flags, chunk, parallel_min):
    """extend_and_flag (extend_boundary when ``flags`` is empty) on the threads, with the
    serial walk's list for any number of them: fixed chunks of ``chunk`` moved vertices set
    the flags and count the unlisted vertices they meet; the chunks that met some write them
    out (in walk order, repeats included) at their offsets, and one serial pass over those
    appends each at its first appearance, as the serial walk does. From ``parallel_min``
    moved vertices up. (Barabasi-Albert 2^18, k = 8, finest level: the walks took 86 of
    Jet's 866 ms on two threads, now 22.)"""
    count = stop - start
    if count < parallel_min:
        if flags.shape[0]:
            return extend_and_flag(indptr, indices, moved, start, stop, listed, nb, in_list, flags)
        return extend_boundary(indptr, indices, moved, start, stop, listed, nb, in_list)
    chunks = (count + chunk - 1) // chunk
    found = np.empty(chunks + 1, dtype=np.int64)
    nothing = moved[:0]
    for c in prange(chunks):
        found[c + 1] = _walk_new(indptr, indices, moved, start + c * chunk, min(stop, start + (c + 1) * chunk),
                                 in_list, flags, nothing, 0)
    found[0] = 0
    for c in range(chunks):
        found[c + 1] += found[c]
    if found[chunks] == 0:
        return nb
    met = np.empty(found[chunks], dtype=moved.dtype)
    no_flags = flags[:0]
    for c in prange(chunks):
        if found[c + 1] > found[c]:
            _walk_new(indptr, indices, moved, start + c * chunk, min(stop, start + (c + 1) * chunk), in_list,
                      no_flags, met, found[c])
    for i in range(met.shape[0]):
        nb = _list(np.int64(met[i]), listed, nb, in_list)
    return nb


@njit(cache=True, parallel=PRANGE_ONLY)
def flag_around_chunked(indptr, indices, vertices, start, stop, flags, chunk, parallel_min):
    """flag_around on the threads (fixed chunks of ``chunk`` vertices) from ``parallel_min``
    vertices up; the flags are the same in any order."""
    count = stop - start
    if count < parallel_min:
        flag_around(indptr, indices, vertices, start, stop, flags)
        return
    chunks = (count + chunk - 1) // chunk
    for c in prange(chunks):
        flag_around(indptr, indices, vertices, start + c * chunk, min(stop, start + (c + 1) * chunk), flags)
