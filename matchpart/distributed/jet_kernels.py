"""Compiled per-rank passes of distributed Jet: the own vertices' rows with ghosts as extra
columns (local index n_local + j for ghost j), on a boundary list of own vertices.

The scan itself is the single process's (refine/jet_passes.scan_boundary runs unchanged on
the local rows: its ``parts`` is the blocks of own vertices then ghosts). What differs is
that the afterburner must order a cross edge's two candidates the same way on both ranks,
so priorities hash global ids, and that the list grows around moved ghosts too, through the
ghosts' own neighbours (``ghost_rows``).
"""
from __future__ import annotations

import numpy as np

from ..backend.rng import hash64_at
from ..jit import njit
from ..refine.destinations import vertex_destination

# The empty flag array that the kernels taking optional per-vertex flags read as "none"
# (extend_list's rescan, the local FM sweep's boundary hint).
NO_FLAGS = np.zeros(0, dtype=np.bool_)


@njit(cache=True)
def boundary_list(indptr, adj, ext, listed, in_list):
    """List the own vertices with a neighbour (own or ghost) in another block; returns how many."""
    nl = indptr.shape[0] - 1
    nb = 0
    for v in range(nl):
        own = ext[v]
        in_list[v] = False
        for e in range(indptr[v], indptr[v + 1]):
            if ext[adj[e]] != own:
                in_list[v] = True
                break
        if in_list[v]:
            listed[nb] = v
            nb += 1
    return nb


@njit(cache=True)
def candidates(bnd, nb, dest, conn_dest, conn_own, factor, cand, dest_ext, gain_ext, evicted):
    """Jet's candidate rule on the listed own vertices: cand[v], and for candidates their
    destination and gain (float64) in the own slots of dest_ext / gain_ext. Returns how many.
    No vertex is a candidate for the block in evicted[v] (refine.jet.FLOODED; an empty array:
    none)."""
    count = 0
    every = evicted.shape[0] == 0
    for i in range(nb):
        v = bnd[i]
        co = conn_own[v]
        ok = dest[v] >= 0 and (every or dest[v] != evicted[v]) and -(conn_dest[v] - co) < np.floor(factor * co)
        cand[v] = ok
        if ok:
            dest_ext[v] = dest[v]
            gain_ext[v] = np.float64(conn_dest[v]) - np.float64(co)
            count += 1
    return count


@njit(cache=True)
def afterburner(indptr, adj, ewgt, ext, bnd, nb, cand_ext, dest_ext, gain_ext, gid, prio_key, moved):
    """Fill ``moved`` with the listed candidates whose gain stays positive when every
    neighbouring candidate (own or ghost) of higher priority has moved first; priority: larger
    gain, then smaller hash64 of the global id, then smaller global id (both ranks of a cross
    edge decide alike). Returns how many, in list order."""
    nm = 0
    for i in range(nb):
        v = bnd[i]
        if not cand_ext[v]:
            continue
        gv = gain_ext[v]
        hv = hash64_at(gid[v], prio_key)
        dv = dest_ext[v]
        pv = ext[v]
        new_gain = 0.0
        for e in range(indptr[v], indptr[v + 1]):
            u = adj[e]
            where_u = ext[u]
            if cand_ext[u]:
                gu = gain_ext[u]
                if gu > gv:
                    where_u = dest_ext[u]
                elif gu == gv:
                    hu = hash64_at(gid[u], prio_key)
                    if hu < hv or (hu == hv and gid[u] < gid[v]):
                        where_u = dest_ext[u]
            # without branches, as jet_passes._afterburner_chunk (dv != pv)
            new_gain += ewgt[e] * (np.int64(where_u == dv) - np.int64(where_u == pv))
        if new_gain > 0:
            moved[nm] = v
            nm += 1
    return nm


@njit(cache=True)
def clear_candidates(bnd, nb, cand_ext, ghost_at):
    """Reset the candidate flags of the listed own vertices and of the ghosts in ``ghost_at``."""
    for i in range(nb):
        cand_ext[bnd[i]] = False
    for j in ghost_at:
        cand_ext[j] = False


@njit(cache=True)
def apply_moves(moved, nm, prev, nprev, dest, parts, ext, vwgt, local_bw, locked):
    """Move moved[:nm] to their destinations (parts, own slots of ext, local block weights);
    the previous round's movers are unlocked and these locked (Jet's one-round lock)."""
    for i in range(nprev):
        locked[prev[i]] = False
    for i in range(nm):
        v = moved[i]
        b = dest[v]
        local_bw[parts[v]] -= vwgt[v]
        local_bw[b] += vwgt[v]
        parts[v] = b
        ext[v] = b
        locked[v] = True


@njit(cache=True)
def extend_list(indptr, adj, moved, nm, gptr, gnbr, ghost_at, listed, nb, in_list, rescan):
    """Add the moved own vertices, their own neighbours and the own neighbours of the moved
    ghosts (``ghost_at``: local indices n_local + j) to the list, and flag them all in
    ``rescan`` (NO_FLAGS: no flags): their scan values are out of date
    (refine/jet_passes.py). Returns the list's new length."""
    nl = indptr.shape[0] - 1
    flag = rescan.shape[0] > 0
    for i in range(nm):
        v = moved[i]
        nb = _flag_and_list(v, listed, nb, in_list, rescan, flag)
        for e in range(indptr[v], indptr[v + 1]):
            if adj[e] < nl:
                nb = _flag_and_list(adj[e], listed, nb, in_list, rescan, flag)
    for t in range(ghost_at.shape[0]):
        j = ghost_at[t] - nl
        for e in range(gptr[j], gptr[j + 1]):
            nb = _flag_and_list(gnbr[e], listed, nb, in_list, rescan, flag)
    return nb


@njit(cache=True, internal=True)
def _flag_and_list(v, listed, nb, in_list, rescan, flag):
    if flag:
        rescan[v] = True
    if not in_list[v]:
        in_list[v] = True
        listed[nb] = v
        nb += 1
    return nb


@njit(cache=True)
def note_moved(moved, nm, noted, listed, n):
    """Flag and list the vertices moved[:nm] not yet ``noted``; returns the list's new length."""
    for i in range(nm):
        v = moved[i]
        if not noted[v]:
            noted[v] = True
            listed[n] = v
            n += 1
    return n


@njit(cache=True)
def ghost_rows(indptr, adj, nl, ng):
    """Per ghost j, the own vertices adjacent to it, in row order (CSR: gptr, gnbr), and the
    entry of each in the own rows (gent: its weight is ewgt[gent])."""
    gptr = np.zeros(ng + 1, dtype=np.int64)
    if ng == 0:   # one rank: no pass over the entries
        return gptr, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    for e in range(indptr[nl]):
        u = adj[e]
        if u >= nl:
            gptr[u - nl + 1] += 1
    for j in range(ng):
        gptr[j + 1] += gptr[j]
    fill = gptr[:-1].copy()
    gnbr = np.empty(gptr[ng], dtype=np.int64)
    gent = np.empty(gptr[ng], dtype=np.int64)
    for v in range(nl):
        for e in range(indptr[v], indptr[v + 1]):
            u = adj[e]
            if u >= nl:
                gnbr[fill[u - nl]] = v
                gent[fill[u - nl]] = e
                fill[u - nl] += 1
    return gptr, gnbr, gent


@njit(cache=True)
def destinations_of(vertices, indptr, adj, ewgt, ext, k, allowed, key):
    """refine/destinations._best_destinations_nb for the listed own vertices only (dest -1 and
    connectivities 0 elsewhere): rebalancing moves vertices out of overweight blocks, and
    scanning every row for them cost 50 s of 79 on R-MAT 2^18, k = 32, P = 1 (199 scans)."""
    nl = indptr.shape[0] - 1
    dest = np.full(nl, -1, dtype=np.int64)
    conn_dest = np.zeros(nl, dtype=ewgt.dtype)
    conn_own = np.zeros(nl, dtype=ewgt.dtype)
    acc = np.zeros(k, dtype=ewgt.dtype)
    touched = np.empty(k, dtype=np.int64)
    for v in vertices:
        dest[v], conn_dest[v], conn_own[v], _ = vertex_destination(v, indptr, adj, ewgt, ext, k, True, allowed, key,
                                                                   acc, touched)
    return dest, conn_dest, conn_own
