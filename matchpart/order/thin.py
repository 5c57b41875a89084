"""Thinning a vertex separator by minimum vertex covers, in time proportional to the separator
and its neighbourhood (the projected separator on every uncoarsening level)."""
from __future__ import annotations

import numpy as np

from ..jit import njit
from .cover import konig_cover, max_matching_nb
from .sepfm import separator_vertices, side_weights


@njit(cache=True, internal=True)
def _joined_cut(indptr, indices, where, sep, s, mark):
    """The bipartite graph of the cut edges once the separator ``sep`` (its vertices in
    increasing order) joins side s: left the boundary of side 0, right that of side 1, each
    in increasing vertex order, a left vertex's edges in its row's order (the graph
    separator.cut_bipartite builds from the whole labelling, found from ``sep`` alone).
    Returns (nl, nr, ptr, adj, left, right); ``mark`` is -1 everywhere before and after."""
    # X: separator vertices with a neighbour on side 1 - s; Y: those neighbours
    nx = 0
    xs = np.empty(sep.shape[0], dtype=np.int64)
    ny = 0
    ys = np.empty(16, dtype=np.int64)
    for v in sep:
        touches = False
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if where[u] == 1 - s:
                touches = True
                if mark[u] < 0:
                    mark[u] = 0
                    if ny == ys.shape[0]:
                        grown = np.empty(2 * ny, dtype=np.int64)
                        grown[:ny] = ys
                        ys = grown
                    ys[ny] = u
                    ny += 1
        if touches:
            xs[nx] = v
            nx += 1
    ys = np.sort(ys[:ny])
    for u in ys:
        mark[u] = -1
    xs = xs[:nx]
    left, right = (xs, ys) if s == 0 else (ys, xs)
    for i in range(right.shape[0]):
        mark[right[i]] = i
    ptr = np.zeros(left.shape[0] + 1, dtype=np.int64)
    for i in range(left.shape[0]):
        v = left[i]
        c = 0
        for e in range(indptr[v], indptr[v + 1]):
            if mark[indices[e]] >= 0:
                c += 1
        ptr[i + 1] = ptr[i] + c
    adj = np.empty(ptr[left.shape[0]], dtype=np.int64)
    for i in range(left.shape[0]):
        v = left[i]
        at = ptr[i]
        for e in range(indptr[v], indptr[v + 1]):
            if mark[indices[e]] >= 0:
                adj[at] = mark[indices[e]]
                at += 1
    for i in range(right.shape[0]):
        mark[right[i]] = -1
    return left.shape[0], right.shape[0], ptr, adj, left, right


@njit(cache=True, internal=True)
def thin_separator(indptr, indices, vwgt, where, maxside):
    """The separator ``where`` thinned by minimum vertex covers: with the separator joined to
    side s, the cut edges are those between it and side 1 - s, and a minimum cover of them
    is a separator too, never larger than the old one's vertices on that boundary. The
    lighter of the two (s = 0, 1) is returned (a new array) if it is lighter and both its
    sides fit ``maxside``, else ``where`` itself. A projected separator is as thick as a
    coarse vertex; FM thins it one move at a time, a 3-D stencil's only through moves that
    first pull more vertices in. Only the separator's rows and its neighbours' are read
    beyond one pass over ``where``."""
    n = where.shape[0]
    pw = side_weights(where, vwgt)
    sep = separator_vertices(where)
    mark = np.full(n, -1, dtype=np.int64)
    best_sep = pw[2]
    best_s = -1
    best_cover = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    for s in range(2):
        nl, nr, ptr, adj, left, right = _joined_cut(indptr, indices, where, sep, s, mark)
        lmate, rmate = max_matching_nb(nl, nr, ptr, adj)
        cover_l, cover_r = konig_cover(nl, nr, ptr, adj, lmate, rmate)
        xs, ys = (left, right) if s == 0 else (right, left)
        cover_x, cover_y = (cover_l, cover_r) if s == 0 else (cover_r, cover_l)
        # weights after the move: the separator joins side s, then the covered vertices leave
        cw = pw.copy()
        cw[s] += cw[2]
        cw[2] = 0.0
        for i in range(xs.shape[0]):
            if cover_x[i]:
                cw[s] -= vwgt[xs[i]]
                cw[2] += vwgt[xs[i]]
        for i in range(ys.shape[0]):
            if cover_y[i]:
                cw[1 - s] -= vwgt[ys[i]]
                cw[2] += vwgt[ys[i]]
        if cw[2] < best_sep and cw[0] <= maxside and cw[1] <= maxside:
            best_sep, best_s = cw[2], s
            best_cover = (xs[cover_x], ys[cover_y])
    if best_s < 0:
        return where
    out = where.copy()
    for v in sep:
        out[v] = best_s
    for v in best_cover[0]:
        out[v] = 2
    for v in best_cover[1]:
        out[v] = 2
    return out
