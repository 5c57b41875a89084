"""Jet's passes over the boundary list on the CPU: the scan (each listed vertex's best
destination, and the cut) and the move selection (candidates, then the afterburner), each in
fixed chunks on the threads (matchpart/threads.py).

The scan recomputes only the listed vertices flagged ``rescan``: a vertex's destination and
connectivities depend on its neighbours' blocks, its own and whether it is locked, so they
stay valid until one of those changes (the caller flags the vertices around each move). On
power-law graphs every vertex is on the boundary while few move (BA 2^16, k = 8, finest
level: 64k listed, of which 32k, 18k, 9k, 6k to rescan in the first iterations)."""
from __future__ import annotations

import numpy as np
from numba import prange

from ..backend.rng import hash64_at
from ..chunks import kernel_list_chunks
from ..jit import njit
from ..prefetch import PREFETCH_DISTANCE, prefetch
from ..threads import PRANGE_ONLY
from .boundary import ROWS_AHEAD, on_boundary, prefetch_row_blocks
from .destinations import vertex_destination


# The list is scanned in chunks of ``chunk`` entries (threads.CHUNK; split where their rows are
# long, chunks.list_chunk_starts): a chunk writes only its own vertices' slots, keep flags and
# partial cut; the list is compacted and the partial cuts summed in chunk order after, so the
# result is the same for any number of threads.
@njit(cache=True, internal=True)
def _scan_chunk(c, starts, indptr, indices, ewgt, parts, k, bnd, in_list, locked, key, dest, conn_dest, conn_own,
                acc, touched, everywhere, keep, chunk_cut, rescan, out_w):
    """best_destinations for list entries starts[c] ..: keep[i] = still on the boundary,
    chunk_cut[c] = twice their cut weight. Interior vertices have no destination, so this is
    _best_destinations_nb restricted to the boundary: same dest / connectivities, same ties.
    With ``rescan`` flags (else an empty array: every entry is recomputed) an unflagged entry
    keeps its values and its weight to other blocks, out_w[v]; a flagged one is recomputed
    and unflagged."""
    two_cut = 0.0
    every = rescan.shape[0] == 0
    stop = starts[c + 1]
    for i in range(starts[c], stop):
        v = bnd[i]
        if not every and not rescan[v]:
            keep[i] = True           # on the boundary when last scanned, and nothing changed since
            two_cut += out_w[v]
            continue
        if i + ROWS_AHEAD < stop and (every or rescan[bnd[i + ROWS_AHEAD]]):
            prefetch_row_blocks(bnd[i + ROWS_AHEAD], indptr, indices, parts)
        d, cd, co, out = vertex_destination(v, indptr, indices, ewgt, parts, k, not locked[v], everywhere,
                                            key, acc, touched)
        dest[v] = d
        conn_dest[v] = cd
        conn_own[v] = co
        keep[i] = out != 0 or on_boundary(v, indptr, indices, parts)
        if not keep[i]:
            in_list[v] = False       # interior now: leaves the list
        if not every:
            rescan[v] = False
            out_w[v] = out
        two_cut += out
    chunk_cut[c] = two_cut


@njit(cache=True, parallel=PRANGE_ONLY)
def scan_boundary(indptr, indices, ewgt, parts, k, bnd, nb, in_list, locked, key, dest, conn_dest, conn_own, acc,
                  touched, everywhere, keep, chunk, parallel_min, rescan, out_w):
    """Scan the listed vertices (_scan_chunk), dropping those no longer on the boundary.
    Returns (vertices kept, 2 * cut). ``rescan``, ``out_w``: see _scan_chunk (empty arrays:
    recompute every entry). The list's chunks of ``chunk`` entries are split where their rows
    are long (chunks.list_chunk_starts)."""
    threaded = nb >= parallel_min
    starts = kernel_list_chunks(bnd, nb, indptr, indices.shape[0], chunk, threaded)
    chunks = starts.shape[0] - 1
    chunk_cut = np.empty(chunks, dtype=np.float64)
    if threaded:
        for c in prange(chunks):
            _scan_chunk(np.int64(c), starts, indptr, indices, ewgt, parts, k, bnd, in_list, locked, key, dest,
                        conn_dest, conn_own, np.zeros(k, dtype=ewgt.dtype), np.empty(k, dtype=np.int64), everywhere,
                        keep, chunk_cut, rescan, out_w)
    else:
        for c in range(chunks):
            _scan_chunk(c, starts, indptr, indices, ewgt, parts, k, bnd, in_list, locked, key, dest, conn_dest,
                        conn_own, acc, touched, everywhere, keep, chunk_cut, rescan, out_w)
    two_cut = 0.0
    for c in range(chunks):
        two_cut += chunk_cut[c]
    return _compact(bnd, nb, keep), two_cut


@njit(cache=True, internal=True)
def _compact(listed, nb, keep):
    """Keep the entries listed[i] with keep[i], in order; returns how many."""
    kept = 0
    for i in range(nb):
        if keep[i]:
            listed[kept] = listed[i]
            kept += 1
    return kept


@njit(cache=True, internal=True)
def _candidates_chunk(c, starts, bnd, dest, conn_dest, conn_own, factor, cand_gain, evicted):
    every = evicted.shape[0] == 0
    for i in range(starts[c], starts[c + 1]):
        v = bnd[i]
        gain = conn_dest[v] - conn_own[v]
        is_cand = dest[v] >= 0 and (every or dest[v] != evicted[v]) and -gain < np.floor(factor * conn_own[v])
        cand_gain[v] = np.float64(gain) if is_cand else -np.inf


@njit(cache=True, internal=True)
def _afterburner_chunk(c, starts, indptr, indices, ewgt, parts, bnd, dest, prio_key, cand_gain, keep):
    """keep[i] = list entry i is a candidate whose gain, recomputed as if every
    higher-priority neighbouring candidate had moved first, is positive."""
    stop = starts[c + 1]
    for i in range(starts[c], stop):
        v = bnd[i]
        keep[i] = False
        if i + ROWS_AHEAD < stop and cand_gain[bnd[i + ROWS_AHEAD]] > -np.inf:
            w = bnd[i + ROWS_AHEAD]      # its first neighbours' blocks and gains
            for e in range(indptr[w], min(indptr[w + 1], indptr[w] + PREFETCH_DISTANCE)):
                prefetch(parts, indices[e])
                prefetch(cand_gain, indices[e])
        gv = cand_gain[v]
        if gv == -np.inf:
            continue
        hv = np.uint64(0)
        hashed = False
        dv = dest[v]
        pv = parts[v]
        new_gain = 0.0
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            where_u = parts[u]
            gu = cand_gain[u]          # -inf unless a candidate: one read decides most entries
            if gu >= gv:
                if gu > gv:
                    where_u = dest[u]
                else:                  # equal gains: the smaller hash, then the smaller id, first
                    if not hashed:
                        hv = hash64_at(v, prio_key)
                        hashed = True
                    hu = hash64_at(u, prio_key)
                    if hu < hv or (hu == hv and u < v):
                        where_u = dest[u]
            # without branches: the sign is a coin flip (where_u is never both)
            new_gain += ewgt[e] * (np.int64(where_u == dv) - np.int64(where_u == pv))
        keep[i] = new_gain > 0


@njit(cache=True, parallel=PRANGE_ONLY)
def lp_moves_nb(indptr, indices, ewgt, parts, bnd, nb, dest, conn_dest, conn_own, factor, prio_key, cand_gain, moved,
                keep, chunk, parallel_min, evicted):
    """Fill moved with the listed vertices that move this iteration (candidates that survive
    the afterburner), in list order; returns how many. A vertex whose destination is
    evicted[v] (the block rebalancing last moved it out of; an empty array: none) is no
    candidate. ``cand_gain``: -inf for every vertex on entry and on return; in between, a
    candidate's gain (float64, exact for integer weights below 2^53), so that the
    afterburner reads one array per neighbour where a flag and two connectivities cost three
    random reads."""
    threaded = nb >= parallel_min
    starts = kernel_list_chunks(bnd, nb, indptr, indices.shape[0], chunk, threaded)
    chunks = starts.shape[0] - 1
    if threaded:
        for c in prange(chunks):
            _candidates_chunk(np.int64(c), starts, bnd, dest, conn_dest, conn_own, factor, cand_gain, evicted)
        for c in prange(chunks):
            _afterburner_chunk(np.int64(c), starts, indptr, indices, ewgt, parts, bnd, dest, prio_key, cand_gain,
                               keep)
    else:
        for c in range(chunks):
            _candidates_chunk(c, starts, bnd, dest, conn_dest, conn_own, factor, cand_gain, evicted)
        for c in range(chunks):
            _afterburner_chunk(c, starts, indptr, indices, ewgt, parts, bnd, dest, prio_key, cand_gain, keep)
    nm = 0
    for i in range(nb):
        cand_gain[bnd[i]] = -np.inf
        if keep[i]:
            moved[nm] = bnd[i]
            nm += 1
    return nm
