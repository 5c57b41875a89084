"""Connected blocks (METIS's -contig): every block's part of each connected component of the
graph becomes connected, the balance is restored and the cut refined without breaking that.

1. Pieces: the components of the graph without its cut edges. In each (block, graph
   component) pair the heaviest piece is the block's core there; every other piece is a
   fragment and moves, whole, to the adjacent block it is most strongly connected to
   through that block's core (one with room for it if any; the fragment then belongs to
   that core). A fragment that touches only fragments waits for the next round.
2. Rebalancing: single-vertex moves out of overweight blocks, least loss first, each only
   when the vertex's block stays connected without it (its neighbours in the block reach
   each other in a small breadth-first search of at most SAFE_SEARCH_VISITS vertices, else
   the move is refused: O(1) per move; connected_moves.py); then moves of whole subtrees of
   a spanning tree of the block, directly or along chains of blocks (subtree_balance.py),
   which relieve what single vertices cannot (a hub with its leaves, a chain).
   A graph component lying whole in a block may move whole to any block with room.
3. On the finest level: chains of single-vertex moves, passes of cut-lowering single-vertex
   moves and of cut-lowering subtree moves, all keeping blocks connected and within bounds.

On a disconnected graph a block may hold pieces of several components (the components do
not fit into k connected blocks in general); within each component it is connected.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..metrics import _find, _host_rows   # _find: union-find with path halving, as pieces_per_block uses
from .connected_moves import SAFE_SEARCH_VISITS, block_totals, push_chains, refine_cut, restore_balance
from .subtree_balance import balance_subtrees, lower_cut_by_subtrees

# Passes of cut-lowering single-vertex moves after the fragments have moved.
REFINE_PASSES = 3
# Rounds of fragment moves: a fragment that touches only other fragments waits a round, so
# chains of fragments need several; on the shared graphs and 2^16 families 3 were enough.
MAX_FRAGMENT_ROUNDS = 100


def connect_blocks(indptr, indices, ewgt, vwgt, parts, k, maxw, *, seed=0, final=True):
    """Host arrays in, new parts out (int64): see the module's text. ``maxw``: per-block bounds.
    ``final`` False (a coarser level, whose refiners come next): the fragments and the local
    rebalancing only; the chains and the cut moves cost O(m) passes that the finer levels'
    refiners make up (rmat 2^16, k = 8: 9 levels took 7.6 s with them)."""
    parts = np.array(parts, dtype=np.int64)
    maxw = np.asarray(maxw, dtype=np.float64)
    gcomp = _components(indptr, indices, np.zeros_like(parts))
    for _ in range(MAX_FRAGMENT_ROUNDS):
        if not _move_fragments(indptr, indices, ewgt, vwgt, parts, gcomp, k, maxw):
            break
    restore_balance(indptr, indices, ewgt, vwgt, parts, k, maxw, SAFE_SEARCH_VISITS)
    balance_subtrees(indptr, indices, ewgt, vwgt, parts, k, maxw)
    if not final:
        return parts
    order = np.random.default_rng(seed).permutation(parts.shape[0])
    push_chains(indptr, indices, ewgt, vwgt, parts, k, maxw, SAFE_SEARCH_VISITS)
    refine_cut(indptr, indices, ewgt, vwgt, parts, k, maxw, order, REFINE_PASSES, SAFE_SEARCH_VISITS)
    lower_cut_by_subtrees(indptr, indices, ewgt, vwgt, parts, k, maxw, REFINE_PASSES)
    return parts


def max_pieces_per_component(graph, parts):
    """The most pieces (connected parts) any block has inside one connected component of the
    Graph ``graph``: 1 when every block is connected within each component, as connect_blocks
    makes them (0 for an empty graph). Computed with scipy's connected_components, apart from
    the union-find that connect_blocks uses, so that tests and benchmarks check it."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components
    indptr, indices, p = _host_rows(graph, parts)
    n = p.shape[0]
    if n == 0:
        return 0
    rows = np.repeat(np.arange(n), np.diff(indptr))
    _, comp = connected_components(sp.csr_matrix((np.ones(indices.shape[0]), indices, indptr), shape=(n, n)),
                                   directed=False)
    keep = p[rows] == p[indices]
    inside = sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], indices[keep])), shape=(n, n))
    _, piece = connected_components(inside, directed=False)
    triples = np.unique(np.stack([p, comp, piece]), axis=1)       # distinct (block, component, piece)
    _, pieces = np.unique(triples[0] * (comp.max() + 1) + triples[1], return_counts=True)
    return int(pieces.max())


@njit(cache=True)
def _components(indptr, indices, parts):
    """Label (the smallest vertex) of each vertex's component over the edges inside blocks."""
    n = parts.shape[0]
    parent = np.arange(n)
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if v > u and parts[v] == parts[u]:
                ru, rv = _find(parent, u), _find(parent, v)
                if ru != rv:
                    parent[max(ru, rv)] = min(ru, rv)
    for v in range(n):
        parent[v] = _find(parent, v)
    return parent


@njit(cache=True)
def _move_fragments(indptr, indices, ewgt, vwgt, parts, gcomp, k, maxw):
    """One round of step 1; returns whether a fragment moved or joined a core."""
    n = parts.shape[0]
    piece = _components(indptr, indices, parts)
    pw = np.zeros(n, dtype=np.float64)            # weight of each piece (at its label)
    for v in range(n):
        pw[piece[v]] += vwgt[v]
    # core of each (block, graph component): the heaviest piece, ties to the smaller label;
    # pieces are visited by label, so a dict keyed by (component, block) is not needed:
    # best[label] marks the winning piece per (gcomp, block) found through a sorted scan
    keys = np.empty(n, dtype=np.int64)
    labels = np.empty(n, dtype=np.int64)
    count = 0
    for v in range(n):
        if piece[v] == v:
            keys[count] = gcomp[v] * k + parts[v]
            labels[count] = v
            count += 1
    order = np.argsort(keys[:count], kind="mergesort")
    core = np.zeros(n, dtype=np.bool_)            # at piece labels, then spread to vertices
    i = 0
    fragments = 0
    while i < count:
        j = i
        best = labels[order[i]]
        while j < count and keys[order[j]] == keys[order[i]]:
            lab = labels[order[j]]
            if pw[lab] > pw[best] or (pw[lab] == pw[best] and lab < best):
                best = lab
            j += 1
        core[best] = True
        fragments += j - i - 1
        i = j
    if fragments == 0:
        return False
    is_core = np.empty(n, dtype=np.bool_)
    for v in range(n):
        is_core[v] = core[piece[v]]
    # members of each fragment, grouped by piece label (a counting sort)
    start = np.zeros(n + 1, dtype=np.int64)
    for v in range(n):
        if not is_core[v]:
            start[piece[v] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    members = np.empty(start[n], dtype=np.int64)
    fill = start[:-1].copy()
    for v in range(n):
        if not is_core[v]:
            members[fill[piece[v]]] = v
            fill[piece[v]] += 1
    bw = block_totals(parts, vwgt, k)[0]
    frag = np.empty(fragments, dtype=np.int64)    # fragment labels, lightest first
    f = 0
    for v in range(n):
        if piece[v] == v and not core[v]:
            frag[f] = v
            f += 1
    frag = frag[np.argsort(pw[frag], kind="mergesort")]
    conn = np.zeros(k, dtype=np.float64)
    progress = False
    for lab in frag:
        own = parts[lab]
        joined = False
        for i in range(start[lab], start[lab + 1]):
            v = members[i]
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if is_core[u]:
                    if parts[u] == own:
                        joined = True     # a fragment of this block moved next to it: now one piece
                    else:
                        conn[parts[u]] += ewgt[e]
        target = -1
        if not joined:
            for b in range(k):            # strongest connection with room, else strongest
                if conn[b] > 0 and (target < 0 or _better(b, target, conn, bw, maxw, pw[lab])):
                    target = b
        for b in range(k):
            conn[b] = 0.0
        if joined or target >= 0:
            progress = True
            for i in range(start[lab], start[lab + 1]):
                v = members[i]
                is_core[v] = True
                if target >= 0:
                    parts[v] = target
            if target >= 0:
                bw[own] -= pw[lab]
                bw[target] += pw[lab]
    return progress


@njit(cache=True, internal=True)
def _better(b, c, conn, bw, maxw, w):
    fits_b, fits_c = bw[b] + w <= maxw[b], bw[c] + w <= maxw[c]
    if fits_b != fits_c:
        return fits_b
    return conn[b] > conn[c]
