"""Recursive bisection of the coarsest graph, one level of the recursion at a time, the
bisections of a level side by side on the threads (initial partitioning's core).

A task is a set of vertices to split into its blocks first .. first + ks - 1: k1 = ks // 2
blocks against ks - k1, side bounds by bisection.bisection_bounds_nb. The tasks of one level
of the recursion share no vertex, so they are independent; so are the heavy-edge hierarchies
of one task (bisection.multilevel_bisection), the best of which wins. Each such item runs in
``prange`` with numba's generator seeded from (seed, first, ks, hierarchy): the result is the
same for every number of threads, and the whole recursion is one compiled call (as Python
loops around compiled calls, call overhead was half of initial partitioning's time at k = 32).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from .backend.rng import hash64_at, stream_key_at
from .bisection import (BISECT_COARSEST, DEEP_BISECTION_HIERARCHIES, _grow_and_refine, _stall,
                        bisection_bounds_nb, coarse_vertex_cap, multilevel_bisection, split_by_side)
from .jit import njit
from .refine.state import host_induced_labelled
from .threads import PRANGE_ONLY

_STREAM_BISECTION = 0xB15E    # hash stream of the items' generator seeds


@njit(cache=True, internal=True)
def _items(tasks, ntasks, k, hierarchies):
    """Items per task (its hierarchies; one for a task grown flat), as offsets (ntasks + 1)."""
    start = np.zeros(ntasks + 1, dtype=np.int64)
    for t in range(ntasks):
        size, ks = tasks[t, 1] - tasks[t, 0], tasks[t, 2]
        if size <= BISECT_COARSEST:
            count = 1
        elif 2 * ks >= k:
            count = hierarchies
        else:
            count = min(hierarchies, DEEP_BISECTION_HIERARCHIES)
        start[t + 1] = start[t] + count
    return start


@njit(cache=True, parallel=PRANGE_ONLY)
def recursive_bisection(indptr, indices, ewgt, vwgt, maxw, targets, eps_level, seed, tries, passes, hierarchies,
                        start_first, start_ks, max_depth):
    """Block per vertex (0..k-1, k = maxw.shape[0]) by recursive bisection, each split the
    best by (overload, cut, hierarchy) of its items. ``targets``: the blocks' target weight
    fractions (ones for equal blocks). Host arrays as refine.state.host_arrays gives them.

    The recursion starts from the root (all k blocks) when ``start_first`` is empty, else
    from the nodes of its tree that start_first names: vertex v in the node of the blocks
    start_first[v] .. start_first[v] + start_ks[start_first[v]] - 1 (deep.py's frontiers).
    It stops after ``max_depth`` levels of splits (-1: none); a vertex of a node still open
    then gets the node's first block."""
    n = indptr.shape[0] - 1
    k = maxw.shape[0]
    key = stream_key_at(seed, _STREAM_BISECTION)
    parts = np.zeros(n, dtype=np.int64)
    verts = np.arange(n)          # each open task's vertices: a range of this array, ascending
    local = np.empty(n, dtype=np.int64)
    task_of = np.full(n, -1, dtype=np.int64)   # -1 once a vertex has its block
    tasks = np.empty((k, 4), dtype=np.int64)     # lo, hi, ks, first of this level's open tasks
    if start_first.shape[0] == 0:
        tasks[0, 0], tasks[0, 1], tasks[0, 2], tasks[0, 3] = 0, n, k, 0
        ntasks = 1 if k > 1 and n > 0 else 0
    else:
        ntasks = _start_tasks(start_first, start_ks, verts, tasks, parts)
    depth = 0
    while ntasks > 0 and depth != max_depth:
        depth += 1
        for t in prange(ntasks):
            for i in range(tasks[t, 0], tasks[t, 1]):
                local[verts[i]] = i - tasks[t, 0]
                task_of[verts[i]] = t
        start = _items(tasks, ntasks, k, hierarchies)
        nitems = start[ntasks]
        item_task = np.empty(nitems, dtype=np.int64)
        side_at = np.zeros(nitems + 1, dtype=np.int64)   # each item's sides in ``sides``
        for t in range(ntasks):
            for j in range(start[t], start[t + 1]):
                item_task[j] = t
                side_at[j + 1] = side_at[j] + tasks[t, 1] - tasks[t, 0]
        sides = np.empty(side_at[nitems], dtype=np.int64)
        over = np.empty(nitems, dtype=np.float64)
        cut = np.empty(nitems, dtype=np.float64)
        for j in prange(nitems):
            t = item_task[j]
            lo, hi, ks, first = tasks[t, 0], tasks[t, 1], tasks[t, 2], tasks[t, 3]
            sub = host_induced_labelled(indptr, indices, ewgt, vwgt, verts[lo:hi], local, task_of, t, t)
            sub_weight = 0.0
            for i in range(hi - lo):
                sub_weight += sub[3][i]
            bounds = bisection_bounds_nb(sub_weight, ks // 2, ks - ks // 2, maxw[first:first + ks],
                                         targets[first:first + ks], eps_level)
            counter = ((first * (k + 1) + ks) << 16) + j - start[t]   # (task, hierarchy)
            np.random.seed(np.int64(hash64_at(counter, key) >> np.uint64(33)))
            if hi - lo <= BISECT_COARSEST:
                side, item_over, item_cut = _grow_and_refine(sub[0], sub[1], sub[2], sub[3], sub_weight * bounds[2],
                                                             bounds[:2], tries, passes,
                                                             _stall(hi - lo, ks == k, sub[1].shape[0]))
            else:
                side, item_over, item_cut = multilevel_bisection(sub, sub_weight * bounds[2], bounds[:2], tries, passes,
                                                                 ks == k, coarse_vertex_cap(sub[3]))
            sides[side_at[j]:side_at[j + 1]] = side
            over[j], cut[j] = item_over, item_cut
        children = np.empty((2 * ntasks, 4), dtype=np.int64)
        for t in prange(ntasks):
            best = start[t]
            for j in range(start[t] + 1, start[t + 1]):
                if over[j] < over[best] or (over[j] == over[best] and cut[j] < cut[best]):
                    best = j
            _split(verts, tasks[t], sides[side_at[best]:side_at[best + 1]], children, np.int64(t))
        nchildren = 2 * ntasks
        ntasks = 0
        for c in range(nchildren):
            lo, hi, ks, first = children[c, 0], children[c, 1], children[c, 2], children[c, 3]
            if ks == 1 or hi == lo:
                for i in range(lo, hi):
                    parts[verts[i]] = first
                    task_of[verts[i]] = -1
            else:
                tasks[ntasks] = children[c]
                ntasks += 1
    for t in range(ntasks):           # nodes left open by max_depth
        for i in range(tasks[t, 0], tasks[t, 1]):
            parts[verts[i]] = tasks[t, 3]
    return parts


@njit(cache=True, internal=True)
def _start_tasks(start_first, start_ks, verts, tasks, parts):
    """The open tasks of the nodes that start_first names (vertices grouped by node, in
    ascending order within each: a counting sort); a vertex of a one-block node gets that
    block now. Returns the number of tasks."""
    k = start_ks.shape[0]
    count = np.zeros(k + 1, dtype=np.int64)
    for v in range(start_first.shape[0]):
        count[start_first[v] + 1] += 1
    for b in range(k):
        count[b + 1] += count[b]
    at = count[:k].copy()
    for v in range(start_first.shape[0]):
        b = start_first[v]
        verts[at[b]] = v
        at[b] += 1
    ntasks = 0
    for b in range(k):
        lo, hi = count[b], count[b + 1]
        if hi == lo:
            continue
        if start_ks[b] <= 1:
            for i in range(lo, hi):
                parts[verts[i]] = b
        else:
            tasks[ntasks, 0], tasks[ntasks, 1], tasks[ntasks, 2], tasks[ntasks, 3] = lo, hi, start_ks[b], b
            ntasks += 1
    return ntasks


@njit(cache=True, internal=True)
def _split(verts, task, side, children, t):
    """Split the task by ``side`` (bisection.split_by_side) into children 2t (k1 blocks from
    ``first``) and 2t + 1 (ks - k1 blocks after them)."""
    lo, hi, ks, first = task[0], task[1], task[2], task[3]
    mid = split_by_side(verts, lo, hi, side)
    k1 = ks // 2
    children[2 * t, 0], children[2 * t, 1], children[2 * t, 2], children[2 * t, 3] = lo, mid, k1, first
    children[2 * t + 1, 0], children[2 * t + 1, 1] = mid, hi
    children[2 * t + 1, 2], children[2 * t + 1, 3] = ks - k1, first + k1
