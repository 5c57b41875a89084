"""The boundary of a partition on the CPU (numba): a vertex test, and the vertices around moves.

A move changes the boundary (and every vertex's view of the blocks) only at the moved
vertex and its neighbours, so the refiners track those instead of rescanning the graph:
``extend_boundary`` appends them to a list (flags keep anything from being listed twice),
``flag_neighbourhoods`` only flags them.
"""
from __future__ import annotations

from numba import njit


@njit(cache=True)
def on_boundary(v, indptr, indices, parts):
    """True when v has a neighbour in another block."""
    own = parts[v]
    for e in range(indptr[v], indptr[v + 1]):
        if parts[indices[e]] != own:
            return True
    return False


@njit(cache=True)
def extend_boundary(indptr, indices, moved, start, stop, listed, nb, in_list):
    """Append moved[start:stop] and their neighbours to listed unless in_list flags them
    already (and flag them); returns the list's new length."""
    for i in range(start, stop):
        v = moved[i]
        if not in_list[v]:
            in_list[v] = True
            listed[nb] = v
            nb += 1
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if not in_list[u]:
                in_list[u] = True
                listed[nb] = u
                nb += 1
    return nb


@njit(cache=True)
def flag_neighbourhoods(indptr, indices, verts, start, stop, flag):
    """Flag verts[start:stop] and their neighbours."""
    for i in range(start, stop):
        v = verts[i]
        flag[v] = True
        for e in range(indptr[v], indptr[v + 1]):
            flag[indices[e]] = True
