"""Communication-volume gains (numba): what moving one vertex to another block does to the
total volume, read from the FM gain cache (gain_cache.py).

The volume (METIS's objtype=vol) is V = sum over v of s(v) * |B(v) - {p(v)}|, where B(v) is
the set of blocks of v's neighbours, p(v) v's block and s(v) its size (1 without sizes).
Moving v from block a to block t changes two kinds of terms (c(u, x): u's neighbours in
block x, the cache's ``count``):
- v's own: B(v) does not change, p(v) does: V changes by s(v) * ([a in B(v)] - [t in B(v)]);
- each neighbour u's: a leaves B(u) when v was u's only neighbour in a (c(u, a) = 1), which
  lowers V by s(u) unless a = p(u); t joins B(u) when c(u, t) = 0, which raises V by s(u)
  unless t = p(u).
So the gain (the fall of V) is
    g(v, t) = s(v) ([t in B(v)] - [a in B(v)])
              + sum_u s(u) [p(u) != a, c(u, a) = 1] - sum_u s(u) [p(u) != t, c(u, t) = 0],
and with have(t) = sum_u s(u) [t = p(u) or c(u, t) > 0] the last sum is S - have(t), S the
neighbours' total size: one scan of the neighbours' cache entries gives have() for every
candidate t at once. A move changes the counts of v's neighbours only, so it changes the gains
of v's neighbours and of their neighbours (see volume.requeue_after).
"""
from __future__ import annotations

from ..jit import njit
from . import gain_cache as gc


@njit(cache=True, internal=True)
def best_volume_move(v, indptr, indices, ewgt, vwgt, vsize, parts, bw, maxw, cache, have):
    """(volume gain, cut gain, target) of v's best move to an adjacent block with room:
    most volume gained, then most cut gained, then the lighter block, then the lower id (the
    answer depends on the state only). (0, 0, -1) when no adjacent block has room.

    Builds the cache entries of v and its neighbours. ``have``: k zeros (scratch), zeros again
    on return.
    """
    block, conn, count, nb, _, start, _ = cache
    # calls only for unbuilt entries: a call passes the cache's seven arrays (reference counts
    # and all), which cost 20 x the scan itself when made for every neighbour
    if nb[v] < 0:
        gc.build(v, indptr, indices, ewgt, parts, cache)
    a = parts[v]
    total = 0.0        # S: the neighbours' sizes
    leaves = 0.0       # sizes of the neighbours for which v is the only one in block a
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if nb[u] < 0:
            gc.build(u, indptr, indices, ewgt, parts, cache)
        su = vsize[u]
        pu = parts[u]
        total += su
        have[pu] += su
        for s in range(start[u], start[u] + nb[u]):
            x = block[s]
            if x != pu:
                have[x] += su
                if x == a and count[s] == 1:
                    leaves += su
    base = start[v]
    end = base + nb[v]
    inside = 0.0
    own_term = 0.0       # s(v) [a in B(v)]
    for s in range(base, end):
        if block[s] == a:
            inside = conn[s]
            own_term = vsize[v]
    best_vol = 0.0
    best_cut = 0.0
    best = -1
    w = vwgt[v]
    for s in range(base, end):
        t = block[s]
        if t == a or bw[t] + w > maxw[t]:
            continue
        g = vsize[v] - own_term + leaves - total + have[t]
        c = conn[s] - inside
        if best < 0 or g > best_vol or (g == best_vol and (c > best_cut or (c == best_cut and (
                bw[t] < bw[best] or (bw[t] == bw[best] and t < best))))):
            best_vol = g
            best_cut = c
            best = t
    for e in range(indptr[v], indptr[v + 1]):    # clear the scratch
        u = indices[e]
        have[parts[u]] = 0.0
        for s in range(start[u], start[u] + nb[u]):
            have[block[s]] = 0.0
    return best_vol, best_cut, best


@njit(cache=True, internal=True)
def volume_gain_to(v, t, indptr, indices, vsize, parts, cache):
    """The volume gain of moving v to block t (any block, adjacent or not; entries of v and its
    neighbours built): the formula of the module text, term by term (tests and checks)."""
    a = parts[v]
    if t == a:
        return 0.0
    g = 0.0
    if gc.entry_count(v, t, cache) > 0:
        g += vsize[v]
    if gc.entry_count(v, a, cache) > 0:
        g -= vsize[v]
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        pu = parts[u]
        if pu != a and gc.entry_count(u, a, cache) == 1:
            g += vsize[u]
        if pu != t and gc.entry_count(u, t, cache) == 0:
            g -= vsize[u]
    return g

