"""Addressable binary max-heap over vertex ids (numba), the priority queue of every FM variant.

keys[i], verts[i] for heap slot i; pos[v] is v's slot or -1. The size lives in size[0] so
the helpers can change it in place. Callers allocate the arrays once per pass.

Unlike gain_cache's per-neighbour helpers these stay calls: inlined (numba's inline="always"),
they saved about 5% of a grouped FM pass, and one such build crashed in kway_fm.locked_pass
(numba 0.68.1; not reproduced after a clean rebuild). A later crash of the same kind came from
two processes writing one tree's numba cache at once, and cleared with the cache: likely this
one's cause too, so the 5% is worth measuring again on a clean cache.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit


@njit(cache=True, internal=True)
def new_heap(n):
    """(keys, verts, pos, size) of an empty heap for vertex ids 0..n-1."""
    return (np.empty(n, dtype=np.float64), np.empty(n, dtype=np.int64), np.full(n, -1, dtype=np.int64),
            np.zeros(1, dtype=np.int64))


@njit(cache=True, internal=True)
def _sift_up(keys, verts, pos, i):
    key = keys[i]
    v = verts[i]
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] >= key:
            break
        keys[i] = keys[parent]
        verts[i] = verts[parent]
        pos[verts[i]] = i
        i = parent
    keys[i] = key
    verts[i] = v
    pos[v] = i


@njit(cache=True, internal=True)
def _sift_down(keys, verts, pos, size, i):
    key = keys[i]
    v = verts[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] > keys[child]:
            child += 1
        if keys[child] <= key:
            break
        keys[i] = keys[child]
        verts[i] = verts[child]
        pos[verts[i]] = i
        i = child
    keys[i] = key
    verts[i] = v
    pos[v] = i


@njit(cache=True, internal=True)
def heap_set(keys, verts, pos, size, v, key):
    """Insert v with key, or change its key if it is already in the heap."""
    i = pos[v]
    if i < 0:
        i = size[0]
        size[0] += 1
        keys[i] = key
        verts[i] = v
        pos[v] = i
        _sift_up(keys, verts, pos, i)
    else:
        old = keys[i]
        keys[i] = key
        if key > old:
            _sift_up(keys, verts, pos, i)
        else:
            _sift_down(keys, verts, pos, size[0], i)


@njit(cache=True, internal=True)
def heap_remove(keys, verts, pos, size, v):
    i = pos[v]
    if i < 0:
        return
    pos[v] = -1
    size[0] -= 1
    last = size[0]
    if i == last:
        return
    keys[i] = keys[last]
    verts[i] = verts[last]
    u = verts[i]
    pos[u] = i
    _sift_up(keys, verts, pos, i)
    _sift_down(keys, verts, pos, size[0], pos[u])


@njit(cache=True, internal=True)
def heap_pop(keys, verts, pos, size):
    """Remove and return (vertex, key) of the maximum."""
    v = verts[0]
    key = keys[0]
    heap_remove(keys, verts, pos, size, v)
    return v, key
