"""Moves of whole subtrees that keep every block connected: contiguity's rebalancing where
single-vertex moves cannot restore the balance (a hub whose leaves hang on it, a chain
whose inner vertices each disconnect it), and cut-lowering moves of the same kind.

Why subtrees: in a spanning tree of a block, the tree minus a subtree is still a tree, so
the block minus the subtree stays connected, and the subtree is connected itself; moved to
a block it touches, it keeps that block connected too. Subtrees disjoint in the tree can
move together (each to a block it touches). Each piece of a block (its part of one graph
component) gets a breadth-first tree rooted at a weighted centroid of a first such tree,
so that subtrees are cones reaching out from the middle (compact on meshes, the branches
of a hub on social graphs).

The cut change of every subtree's move is found in O(m_block * depth): weights of the
edges to the target block summed over the subtree, less the edges from the subtree to the
rest of its block (the sum over the subtree of each vertex's internal degree, minus twice
each internal edge at its endpoints' lowest common ancestor, where both ends are inside).
Moves chosen together are scored as the sum of their own changes: exact for moves into
different blocks, pessimistic for moves into one block (edges between them stop being cut).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from .connected_moves import block_totals


@njit(cache=True)
def workspace(parts, k):
    """Scratch for move_subtrees on ``parts`` (which only move_subtrees may change from then
    on): int64 rows parent, depth, order, dest, verts, target, state; float64 rows sw, out,
    conn, loss; and each block's vertices as a doubly linked list (head per block, next and
    previous per vertex), so that a call costs O(block) rather than a scan of every vertex."""
    n = parts.shape[0]
    ints = np.full((7, n), -1, dtype=np.int64)
    floats = np.zeros((4, n), dtype=np.float64)
    head = np.full(k, -1, dtype=np.int64)
    links = np.full((2, n), -1, dtype=np.int64)
    for v in range(n - 1, -1, -1):
        _link(v, parts[v], head, links)
    return ints, floats, head, links


@njit(cache=True, internal=True)
def _link(v, b, head, links):
    links[0, v] = head[b]
    links[1, v] = -1
    if head[b] >= 0:
        links[1, head[b]] = v
    head[b] = v


@njit(cache=True, internal=True)
def _unlink(v, b, head, links):
    nxt, prv = links[0, v], links[1, v]
    if prv >= 0:
        links[0, prv] = nxt
    else:
        head[b] = nxt
    if nxt >= 0:
        links[1, nxt] = prv


@njit(cache=True, internal=True)
def _bfs_tree(root, src, indptr, indices, parts, parent, depth, order, count, visited, stamp):
    """Append root's piece of block src to ``order`` as a breadth-first tree; returns the new count."""
    parent[root] = -1
    depth[root] = 0
    visited[root] = stamp
    head = count
    order[count] = root
    count += 1
    while head < count:
        x = order[head]
        head += 1
        for e in range(indptr[x], indptr[x + 1]):
            u = indices[e]
            if parts[u] == src and visited[u] != stamp:
                visited[u] = stamp
                parent[u] = x
                depth[u] = depth[x] + 1
                order[count] = u
                count += 1
    return count


@njit(cache=True, internal=True)
def _subtree_weights(order, start, count, parent, vwgt, sw):
    """sw[x] = weight of x's subtree for the tree listed in BFS order in order[start:count]
    (its root first): children before parents, walking the list backwards."""
    for j in range(count - 1, start - 1, -1):
        x = order[j]
        sw[x] = vwgt[x]
    for j in range(count - 1, start, -1):
        x = order[j]
        sw[parent[x]] += sw[x]


@njit(cache=True, internal=True)
def _forest(src, indptr, indices, vwgt, parts, ws):
    """Centroid-rooted breadth-first trees of block src's pieces in ws (parent, depth, order,
    sw: subtree weights); returns (vertex count, piece count)."""
    ints, floats, head, links = ws
    parent, depth, order, verts, state = ints[0], ints[1], ints[2], ints[4], ints[6]
    sw = floats[0]
    nv = 0
    v = head[src]
    while v >= 0:
        verts[nv] = v
        state[v] = 0
        nv += 1
        v = links[0, v]
    count = 0
    pieces = 0
    for i in range(nv):
        v = verts[i]
        if state[v] != 0:
            continue
        start = count
        count = _bfs_tree(v, src, indptr, indices, parts, parent, depth, order, count, state, 1)
        _subtree_weights(order, start, count, parent, vwgt, sw)
        # walk to the weighted centroid: down into a child heavier than half the piece
        total = sw[v]
        c = v
        moved = True
        while moved:
            moved = False
            for e in range(indptr[c], indptr[c + 1]):
                u = indices[e]
                if parts[u] == src and parent[u] == c and 2 * sw[u] > total:
                    c = u
                    moved = True
                    break
        count = _bfs_tree(c, src, indptr, indices, parts, parent, depth, order, start, state, 2)
        _subtree_weights(order, start, count, parent, vwgt, sw)
        pieces += 1
    return nv, pieces


@njit(cache=True, internal=True)
def _edges_out(src, nv, indptr, indices, ewgt, parts, ws):
    """ws out[v]: weight of the edges from subtree(v) to the rest of its piece."""
    ints, floats = ws[0], ws[1]
    parent, depth, order = ints[0], ints[1], ints[2]
    out = floats[1]
    for i in range(nv):
        out[order[i]] = 0.0
    for i in range(nv):
        u = order[i]
        for e in range(indptr[u], indptr[u + 1]):
            w = indices[e]
            if parts[w] == src:
                out[u] += ewgt[e]
                if w > u:
                    a, b = u, w
                    while a != b:
                        if depth[a] >= depth[b]:
                            a = parent[a]
                        else:
                            b = parent[b]
                    out[a] -= 2.0 * ewgt[e]
    for i in range(nv - 1, 0, -1):
        x = order[i]
        if parent[x] >= 0:
            out[parent[x]] += out[x]


@njit(cache=True, internal=True)
def _best_targets(src, nv, pieces, indptr, indices, ewgt, parts, room, allowed, k, ws, floor):
    """Per vertex v of src: the allowed block with room for subtree(v) that it touches, with
    the least cut loss (ws target, loss); target -1 when none. A root moves only when src
    keeps another piece; a piece touching no other block (a whole graph component) may move
    to any allowed block with room, at no loss. ``floor[c]``: the lightest subtree that could
    move to c were there room (inf: none), for every block c (chains need it)."""
    ints, floats = ws[0], ws[1]
    parent, order, target = ints[0], ints[2], ints[5]
    sw, out, conn, loss = floats[0], floats[1], floats[2], floats[3]
    floor[:] = np.inf
    touched = np.empty(k, dtype=np.int64)       # the blocks src touches, each once
    count = 0
    for i in range(nv):
        u = order[i]
        target[u] = -1
        for e in range(indptr[u], indptr[u + 1]):
            c = parts[indices[e]]
            if c != src and floor[c] == np.inf:
                floor[c] = -1.0                 # marks c as listed until the loop below
                touched[count] = c
                count += 1
    for t in range(count):
        c = touched[t]
        floor[c] = np.inf
        for i in range(nv):
            u = order[i]
            conn[u] = 0.0
            for e in range(indptr[u], indptr[u + 1]):
                if parts[indices[e]] == c:
                    conn[u] += ewgt[e]
        for i in range(nv - 1, -1, -1):
            u = order[i]
            if parent[u] >= 0:
                conn[parent[u]] += conn[u]
            elif pieces == 1:
                continue
            if conn[u] > 0 and 0 < sw[u] < floor[c]:
                floor[c] = sw[u]
            if conn[u] > 0 and sw[u] <= room[c] and allowed[c]:
                lo = out[u] - conn[u]
                if target[u] < 0 or lo < loss[u]:
                    target[u], loss[u] = c, lo
    for i in range(nv):
        u = order[i]
        if parent[u] < 0 and out[u] == 0.0:
            alone = True                 # no edge leaves the piece: a whole component
            for j in range(i, nv):
                x = order[j]
                if j > i and parent[x] < 0:
                    break
                for e in range(indptr[x], indptr[x + 1]):
                    if parts[indices[e]] != src:
                        alone = False
                        break
                if not alone:
                    break
            if alone:
                best = -1
                for c in range(k):
                    if c != src and allowed[c] and sw[u] <= room[c] and (best < 0 or room[c] > room[best]):
                        best = c
                if best >= 0:
                    target[u], loss[u] = best, 0.0
                for c in range(k):
                    if c != src:
                        floor[c] = min(floor[c], sw[u])


@njit(cache=True, internal=True)
def _free(v, parent, state, stamp):
    """Whether subtree(v) is disjoint from the subtrees chosen so far (state: stamp chosen,
    stamp + 1 an ancestor of a chosen one)."""
    if state[v] == stamp + 1:
        return False
    x = v
    while x >= 0:
        if state[x] == stamp:
            return False
        x = parent[x]
    return True


@njit(cache=True, internal=True)
def _choose(v, parent, state, stamp):
    state[v] = stamp
    x = parent[v]
    while x >= 0 and state[x] != stamp + 1:
        state[x] = stamp + 1
        x = parent[x]


@njit(cache=True)
def move_subtrees(src, need, max_loss, indptr, indices, ewgt, vwgt, parts, bw, maxw, allowed, ws, floor):
    """Move disjoint subtrees of block src to allowed blocks with room, keeping every block
    connected; returns the weight moved. need > 0: at least ``need`` (or as much as found)
    at the least loss, one subtree when it costs no more than a greedy set of smaller ones
    (taken by loss per weight); ``max_loss``: only moves that lose at most this much
    (-> 0 and need = inf: the cut-lowering moves). Updates parts and bw; fills ``floor``
    (see _best_targets) as src was before the moves."""
    ints, floats = ws[0], ws[1]
    parent, order, target, state = ints[0], ints[2], ints[5], ints[6]
    sw, loss = floats[0], floats[3]
    k = bw.shape[0]
    room = maxw - bw
    nv, pieces = _forest(src, indptr, indices, vwgt, parts, ws)
    _edges_out(src, nv, indptr, indices, ewgt, parts, ws)
    _best_targets(src, nv, pieces, indptr, indices, ewgt, parts, room, allowed, k, ws, floor)
    single, small = -1, 0
    cand = np.empty(nv, dtype=np.int64)
    key = np.empty(nv, dtype=np.float64)
    for i in range(nv):
        u = order[i]
        state[u] = 0
        if target[u] < 0 or loss[u] > max_loss or sw[u] <= 0 or sw[u] >= bw[src]:
            continue
        if sw[u] >= need:
            if single < 0 or loss[u] < loss[single] or (loss[u] == loss[single] and sw[u] < sw[single]):
                single = u
        else:
            cand[small] = u
            key[small] = loss[u] / sw[u]
            small += 1
    stamp = 1
    got, cost, chosen = 0.0, 0.0, 0
    left = room.copy()
    for i in np.argsort(key[:small], kind="mergesort"):
        if got >= need:
            break
        u = cand[i]
        c = target[u]
        if sw[u] > left[c] or not _free(u, parent, state, stamp):
            continue
        _choose(u, parent, state, stamp)
        left[c] -= sw[u]
        got += sw[u]
        cost += loss[u]
        chosen += 1
    if single >= 0 and (got < need or loss[single] <= cost):
        for i in range(nv):
            state[order[i]] = 0
        state[single] = stamp
        chosen = 1
    if chosen == 0:
        return 0.0
    dest = ints[3]
    moved = 0.0
    for i in range(nv):           # parents before children: a subtree follows its chosen root
        u = order[i]
        p = parent[u]
        if state[u] == stamp:
            dest[u] = target[u]
        elif p >= 0:
            dest[u] = dest[p]
        else:
            dest[u] = -1
    for i in range(nv):
        u = order[i]
        c = dest[u]
        if c >= 0:
            parts[u] = c
            _unlink(u, src, ws[2], ws[3])
            _link(u, c, ws[2], ws[3])
            bw[src] -= vwgt[u]
            bw[c] += vwgt[u]
            moved += vwgt[u]
    return moved

