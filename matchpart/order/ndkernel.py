"""The compiled nested dissection: the large pieces one depth at a time, every separator run of
a depth on the threads, then the remaining pieces' whole recursions on the threads; minimum
degree on the leaves. Results do not depend on the thread count: every separator run and
every piece handed to a thread seeds numba's generator from its own position and the seed."""
from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from ..refine.state import host_induced
from ..threads import PRANGE_ONLY
from .flow import flow_separator
from .mindegree import MAX_DENSE_VERTICES, MD_DELTA, halo_min_degree_order
from .separator import ml_separator_best
from .sepfm import side_weights

# ---- tunables -------------------------------------------------------------------------
# Pieces of at least this many vertices get MULTI_SEPS separators, the lightest kept (METIS's
# nseps): their separators make most of the flops. 5 graphs x 2 seeds: flops 1.120 -> 1.084 x
# METIS's (rgg_n_2_15_s0 1.094 -> 0.997 x) for 1 -> 3 runs.
MULTI_SEP_MIN = 8000
# The pieces of depth 0 (the graph, or its components) get TOP_SEPS runs instead: the top
# separator makes most of the flops, and 4 runs on 2 threads take the wall time of 3 (a
# single piece: 2 rounds), so the runs go there rather than to the deeper pieces. 9 ordering
# graphs x seeds 0 and 1 against METIS (nnz, flops geomean): 3 / 3 runs 0.976, 0.988 x;
# 4 / 3 0.974, 0.980 x; 4 / 2 0.973, 0.980 x (grid27:40 1.37 -> 1.21 x flops, seed 0) for
# 2/3 of the deeper pieces' separator runs; 3 / 2 in the commit message.
TOP_SEPS = 4
MULTI_SEPS = 2
_MOD = 2**31 - 1


@njit(cache=True, internal=True)
def _seed_of(seed, lo, hi, run):
    """The generator seed of separator run ``run`` of the piece verts[lo:hi] (or of the whole
    recursion of that piece, run -1): a hash of the position, independent of the threads."""
    h = (seed * 1_000_003 + lo) % _MOD
    h = (h * 1_000_033 + hi) % _MOD
    return (h * 998_244 + run + 7) % _MOD


@njit(cache=True, internal=True)
def _components(indptr, indices):
    """(label per vertex, count) of the connected components (breadth-first search)."""
    n = indptr.shape[0] - 1
    comp = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    nc = 0
    for s in range(n):
        if comp[s] >= 0:
            continue
        comp[s] = nc
        queue[0] = s
        head, tail = 0, 1
        while head < tail:
            v = queue[head]
            head += 1
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if comp[u] < 0:
                    comp[u] = nc
                    queue[tail] = u
                    tail += 1
        nc += 1
    return comp, nc


@njit(cache=True, internal=True)
def _regroup(verts, lo, labels, nlabels):
    """Stable reorder of verts[lo:lo + len(labels)] by label; returns the label offsets."""
    ns = labels.shape[0]
    start = np.zeros(nlabels + 1, dtype=np.int64)
    for i in range(ns):
        start[labels[i] + 1] += 1
    for c in range(nlabels):
        start[c + 1] += start[c]
    at = start.copy()
    moved = np.empty(ns, dtype=np.int64)
    for i in range(ns):
        moved[at[labels[i]]] = verts[lo + i]
        at[labels[i]] += 1
    for i in range(ns):
        verts[lo + i] = moved[i]
    return start


@njit(cache=True, internal=True)
def _split(indptr, indices, vwgt, verts, iperm, local, lo, hi, where, seps, nseps, depth, out, nout):
    """Apply the separator ``where`` of verts[lo:hi]: regroup (side 0, side 1, separator),
    number the separator last, log it in seps[nseps]; the two sides go to out[nout:nout + 2].
    A piece that no separator splits is ordered here (minimum degree, or natural order).
    Returns (nseps, nout) after."""
    size = hi - lo
    start = _regroup(verts, lo, where, 3)
    n0, n1 = start[1], start[2] - start[1]
    if n0 == 0 or n1 == 0:       # no split: a dense piece
        if size <= MAX_DENSE_VERTICES:
            number_by_min_degree(indptr, indices, vwgt, verts, lo, hi, iperm, local)
            return nseps, nout
        if start[2] == size or start[2] == 0:   # nothing separated at all: natural order
            for p in range(lo, hi):
                iperm[verts[p]] = p
            return nseps, nout
    w = 0.0
    for p in range(lo + start[2], hi):
        iperm[verts[p]] = p
        w += vwgt[verts[p]]
    seps[nseps, 0], seps[nseps, 1], seps[nseps, 2] = depth, size - start[2], w
    out[nout, 0], out[nout, 1], out[nout, 2] = lo, lo + n0, depth + 1
    out[nout + 1, 0], out[nout + 1, 1], out[nout + 1, 2] = lo + n0, lo + n0 + n1, depth + 1
    return nseps + 1, nout + 2


@njit(cache=True, internal=True)
def dissect_piece(indptr, indices, ewgt, vwgt, verts, iperm, lo, hi, depth, eps, leaf_size, passes, runs, shared,
                  window, local, seps, at, flow_depth, flow_min):
    """The whole recursion of the piece verts[lo:hi] (depth ``depth``), serial, drawing on the
    generator as seeded by the caller; separators logged from seps[at] on (at most hi - lo of
    them). ``local``: -1 everywhere before and after. Returns the number logged."""
    n = hi - lo
    stack = np.empty((2 * n + 2, 3), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2] = lo, hi, depth
    top = 1
    nseps = at
    while top > 0:
        top -= 1
        lo, hi, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        size = hi - lo
        if size == 0:
            continue
        if size <= leaf_size:
            number_by_min_degree(indptr, indices, vwgt, verts, lo, hi, iperm, local)
            continue
        sub = host_induced(indptr, indices, ewgt, vwgt, verts[lo:hi], local)
        comp, ncomp = _components(sub[0], sub[1])
        if ncomp > 1:
            start = _regroup(verts, lo, comp, ncomp)
            for c in range(ncomp):
                stack[top, 0], stack[top, 1], stack[top, 2] = lo + start[c], lo + start[c + 1], depth
                top += 1
            continue
        where = ml_separator_best(sub[0], sub[1], sub[2], sub[3], eps, passes,
                                  runs if size >= MULTI_SEP_MIN else 1, shared, window)
        if flow_depth > 0 and size >= flow_min:
            where = flow_separator(sub[0], sub[1], sub[3], where, 0.5 * (1.0 + eps) * sub[3].sum(), flow_depth)
        nseps, top = _split(indptr, indices, vwgt, verts, iperm, local, lo, hi, where, seps, nseps, depth, stack, top)
    return nseps - at


@njit(cache=True, parallel=PRANGE_ONLY)
def nd_kernel(indptr, indices, ewgt, vwgt, verts, iperm, tasks, eps, seed, leaf_size, passes, runs, shared, window,
              split_min, flow_depth, flow_min, top_runs):
    """Nested dissection of the pieces ``tasks`` (rows lo, hi, depth: the vertices verts[lo:hi],
    numbered lo..hi-1) in one compiled call; fills ``iperm`` (new number per vertex) and
    returns the separators found as rows (depth, vertices, weight), in an order fixed by the
    input. Pieces of more than ``split_min`` vertices are split one depth at a time, each
    depth's separator runs (``runs`` on pieces of MULTI_SEP_MIN+ vertices, whole runs unless
    ``shared``) on the threads; the smaller pieces' recursions (dissect_piece) then run on
    the threads, largest first. ``passes``: separator FM passes per level. Separators of
    pieces of ``flow_min``+ vertices are improved by flow.flow_separator (band of
    ``flow_depth`` steps; 0: off) once the lightest run is chosen, on the threads. Pieces of
    depth 0 get ``top_runs`` runs instead of ``runs`` (ndkernel.TOP_SEPS)."""
    n = verts.shape[0]
    nv = indptr.shape[0] - 1
    local = np.full(nv, -1, dtype=np.int64)
    seps = np.empty((n + 1, 3), dtype=np.float64)
    nseps = 0
    pend = tasks.copy()
    small = np.empty((n + tasks.shape[0] + 1, 3), dtype=np.int64)
    nsmall = 0
    while pend.shape[0] > 0:
        # ---- this depth's big connected pieces; components re-queued, small pieces put aside
        nxt = np.empty((2 * pend.shape[0] + n // max(split_min, 1) + 2, 3), dtype=np.int64)
        nnxt = 0
        plist = np.empty(pend.shape[0], dtype=np.int64)
        np_ = 0
        # the connected pieces' subgraphs, one after another: rows j of voff / eoff locate them
        fptr = np.empty(n + pend.shape[0] + 1, dtype=np.int64)
        fidx = np.empty(indices.shape[0], dtype=indices.dtype)
        few = np.empty(indices.shape[0], dtype=ewgt.dtype)
        fvw = np.empty(n, dtype=vwgt.dtype)
        voff = np.zeros(pend.shape[0] + 1, dtype=np.int64)
        eoff = np.zeros(pend.shape[0] + 1, dtype=np.int64)
        for i in range(pend.shape[0]):
            lo, hi = pend[i, 0], pend[i, 1]
            if hi - lo <= max(split_min, leaf_size):
                if hi > lo:
                    small[nsmall] = pend[i]
                    nsmall += 1
                continue
            sub = host_induced(indptr, indices, ewgt, vwgt, verts[lo:hi], local)
            comp, ncomp = _components(sub[0], sub[1])
            if ncomp > 1:
                start = _regroup(verts, lo, comp, ncomp)
                if nnxt + ncomp > nxt.shape[0]:
                    grown = np.empty((nnxt + ncomp + nxt.shape[0], 3), dtype=np.int64)
                    grown[:nnxt] = nxt[:nnxt]
                    nxt = grown
                for c in range(ncomp):
                    nxt[nnxt, 0], nxt[nnxt, 1], nxt[nnxt, 2] = lo + start[c], lo + start[c + 1], pend[i, 2]
                    nnxt += 1
                continue
            plist[np_] = i
            ns, ms = hi - lo, sub[1].shape[0]
            fptr[voff[np_] + np_:voff[np_] + np_ + ns + 1] = sub[0]
            fidx[eoff[np_]:eoff[np_] + ms] = sub[1]
            few[eoff[np_]:eoff[np_] + ms] = sub[2]
            fvw[voff[np_]:voff[np_] + ns] = sub[3]
            voff[np_ + 1] = voff[np_] + ns
            eoff[np_ + 1] = eoff[np_] + ms
            np_ += 1
        # ---- the separator runs of all of them, on the threads
        nruns = np.empty(np_, dtype=np.int64)
        for j in range(np_):
            size = pend[plist[j], 1] - pend[plist[j], 0]
            nruns[j] = (top_runs if pend[plist[j], 2] == 0 else runs) if size >= MULTI_SEP_MIN and shared == 0 else 1
        item_at = np.zeros(np_ + 1, dtype=np.int64)
        for j in range(np_):
            item_at[j + 1] = item_at[j] + nruns[j]
        nitems = item_at[np_]
        item_piece = np.empty(nitems, dtype=np.int64)
        item_run = np.empty(nitems, dtype=np.int64)
        item_off = np.zeros(nitems + 1, dtype=np.int64)
        for j in range(np_):
            for r in range(nruns[j]):
                k = item_at[j] + r
                item_piece[k] = j
                item_run[k] = r
                item_off[k + 1] = item_off[k] + pend[plist[j], 1] - pend[plist[j], 0]
        wbuf = np.empty(item_off[nitems], dtype=np.int64)
        score = np.empty((nitems, 2), dtype=np.float64)
        for k in prange(nitems):
            pj = item_piece[k]
            plo, phi = pend[plist[pj], 0], pend[plist[pj], 1]
            sptr = fptr[voff[pj] + pj:voff[pj + 1] + pj + 1]
            sidx = fidx[eoff[pj]:eoff[pj + 1]]
            sew = few[eoff[pj]:eoff[pj + 1]]
            svw = fvw[voff[pj]:voff[pj + 1]]
            np.random.seed(_seed_of(seed, plo, phi, item_run[k]))
            r_eff = 1 if nruns[pj] > 1 or phi - plo < MULTI_SEP_MIN else runs
            pwhere = ml_separator_best(sptr, sidx, sew, svw, eps, passes, r_eff, shared, window)
            wbuf[item_off[k]:item_off[k + 1]] = pwhere
            ppw = side_weights(pwhere, svw)
            pmax = 0.5 * (1.0 + eps) * (ppw[0] + ppw[1] + ppw[2])
            score[k, 0] = max(ppw[0] - pmax, 0.0) + max(ppw[1] - pmax, 0.0)
            score[k, 1] = ppw[2]
        # ---- the lightest run of each piece splits it (ties: the first run)
        best_of = np.empty(np_, dtype=np.int64)
        for j in range(np_):
            best = item_at[j]
            for k in range(item_at[j] + 1, item_at[j + 1]):
                if score[k, 0] < score[best, 0] or (score[k, 0] == score[best, 0] and score[k, 1] < score[best, 1]):
                    best = k
            best_of[j] = best
        if flow_depth > 0:   # the winner's separator improved by a minimum cut (flow.py)
            for j in prange(np_):
                if pend[plist[j], 1] - pend[plist[j], 0] >= flow_min:
                    k = best_of[j]
                    svw = fvw[voff[j]:voff[j + 1]]
                    wbuf[item_off[k]:item_off[k + 1]] = flow_separator(
                        fptr[voff[j] + j:voff[j + 1] + j + 1], fidx[eoff[j]:eoff[j + 1]], svw,
                        wbuf[item_off[k]:item_off[k + 1]], 0.5 * (1.0 + eps) * svw.sum(), flow_depth)
        for j in range(np_):
            best = best_of[j]
            i = plist[j]
            if nnxt + 2 > nxt.shape[0]:
                grown = np.empty((2 * nxt.shape[0] + 2, 3), dtype=np.int64)
                grown[:nnxt] = nxt[:nnxt]
                nxt = grown
            nseps, nnxt = _split(indptr, indices, vwgt, verts, iperm, local, pend[i, 0], pend[i, 1],
                                 wbuf[item_off[best]:item_off[best + 1]], seps, nseps, pend[i, 2], nxt, nnxt)
        pend = nxt[:nnxt].copy()
    # ---- the small pieces' whole recursions on the threads, largest first
    sizes = small[:nsmall, 1] - small[:nsmall, 0]
    order = np.argsort(-sizes, kind="mergesort")
    pseps = np.empty((n + 1, 3), dtype=np.float64)
    pcount = np.zeros(nsmall, dtype=np.int64)
    for t in prange(nsmall):
        tlo, thi, tdepth = small[order[t], 0], small[order[t], 1], small[order[t], 2]
        np.random.seed(_seed_of(seed, tlo, thi, -1))
        mine = np.full(nv, -1, dtype=np.int64)
        pcount[t] = dissect_piece(indptr, indices, ewgt, vwgt, verts, iperm, tlo, thi, tdepth, eps, leaf_size,
                                  passes, runs, shared, window, mine, pseps, tlo, flow_depth, flow_min)
    for t in range(nsmall):
        for r in range(pcount[t]):
            seps[nseps] = pseps[small[order[t], 0] + r]
            nseps += 1
    return seps[:nseps]


@njit(cache=True, internal=True)
def with_halo(indptr, indices, vwgt, piece, local):
    """CSR (indptr, indices, vwgt) of the piece's vertices (0..p-1, as in ``piece``) followed by
    its halo: the outside neighbours (all in ancestor separators), with the piece-halo edges
    only. ``local`` is -1 everywhere before and after."""
    p = piece.shape[0]
    for i in range(p):
        local[piece[i]] = i
    nh = 0
    halo = np.empty(p + 1, dtype=np.int64)
    m = 0
    for i in range(p):
        v = piece[i]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if local[u] < 0:
                if nh == halo.shape[0]:
                    grown = np.empty(2 * nh, dtype=np.int64)
                    grown[:nh] = halo
                    halo = grown
                local[u] = p + nh
                halo[nh] = u
                nh += 1
            m += 1
    deg = np.zeros(p + nh + 1, dtype=np.int64)
    for i in range(p):
        v = piece[i]
        deg[i + 1] += indptr[v + 1] - indptr[v]
        for e in range(indptr[v], indptr[v + 1]):
            if local[indices[e]] >= p:
                deg[local[indices[e]] + 1] += 1
    for i in range(p + nh):
        deg[i + 1] += deg[i]
    sub_indices = np.empty(2 * m, dtype=np.int64)
    at = deg[:-1].copy()
    for i in range(p):
        v = piece[i]
        for e in range(indptr[v], indptr[v + 1]):
            u = local[indices[e]]
            sub_indices[at[i]] = u
            at[i] += 1
            if u >= p:
                sub_indices[at[u]] = i
                at[u] += 1
    sub_vwgt = np.empty(p + nh, dtype=vwgt.dtype)
    for i in range(p):
        sub_vwgt[i] = vwgt[piece[i]]
        local[piece[i]] = -1
    for j in range(nh):
        sub_vwgt[p + j] = vwgt[halo[j]]
        local[halo[j]] = -1
    return deg, sub_indices[:deg[p + nh]], sub_vwgt


@njit(cache=True, internal=True)
def number_by_min_degree(indptr, indices, vwgt, verts, lo, hi, iperm, local):
    """Number verts[lo:hi] lo..hi-1 by multiple minimum degree, their halo of ancestor
    separator vertices counted in the degrees where piece and halo fit the dense kernel."""
    sub = with_halo(indptr, indices, vwgt, verts[lo:hi], local)
    size = hi - lo
    if sub[0].shape[0] - 1 > MAX_DENSE_VERTICES:
        ptr, idx = sub[0], sub[1]
        # drop the halo: keep the piece's own rows and their in-piece entries
        keep = np.empty(idx.shape[0], dtype=np.int64)
        nptr = np.zeros(size + 1, dtype=np.int64)
        k = 0
        for i in range(size):
            for e in range(ptr[i], ptr[i + 1]):
                if idx[e] < size:
                    keep[k] = idx[e]
                    k += 1
            nptr[i + 1] = k
        order = halo_min_degree_order(nptr, keep[:k], sub[2][:size], size, MD_DELTA)
    else:
        order = halo_min_degree_order(sub[0], sub[1], sub[2], size, MD_DELTA)
    for k in range(size):
        iperm[verts[lo + order[k]]] = lo + k
