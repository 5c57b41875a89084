"""Per-phase profile of matchpart.order: the compiled nested-dissection kernel replayed from
Python, one phase per call, so its time splits into phases (cProfile sees one call only).

    python3 benchmarks/ordering_profile.py [delaunay:131072 grid:40x40x40 ...]

The replay draws other random numbers than the kernel (its results differ in detail, its
phases cost the same). Per call, Python adds a few microseconds: the small pieces' rows show
it (calls and us per call are printed). Also times the real order() for comparison.
"""
from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import matchpart  # noqa: E402
from matchpart.bisection import contract, heavy_edge_hierarchy, project_labels  # noqa: E402
from matchpart.order import ndkernel, nested, separator  # noqa: E402
from matchpart.order.compress import MIN_COMPRESSION, identical_groups  # noqa: E402
from matchpart.order.locality import renumber_for_locality  # noqa: E402
from matchpart.order.sepfm import refine_separator, side_weights  # noqa: E402
from matchpart.order.thin import thin_separator  # noqa: E402
from matchpart.refine.state import host_induced  # noqa: E402
from ordering import load  # noqa: E402

T = defaultdict(float)
C = defaultdict(int)
clock = time.process_time   # CPU time: a process stopped (SIGSTOP) by a neighbour's timing does not count


def bucket(size):
    return "S" if size < 1000 else ("M" if size < ndkernel.MULTI_SEP_MIN else "L")


def timed(key, f, *a):
    t = clock()
    r = f(*a)
    T[key] += clock() - t
    C[key] += 1
    return r


def ml_once(b, g, maxside, cap, passes, window):
    graphs, cmaps = timed(b + " coarsen", heavy_edge_hierarchy, g, separator.KERNEL_COARSEST, cap,
                          separator.KERNEL_MIN_SHRINK, True, 1 << 30, window)
    cur = graphs[-1]
    where = timed(b + " coarsest sep", separator.coarsest_separator, cur[0], cur[1], cur[2], cur[3], maxside,
                  separator.KERNEL_TRIES, passes)
    return uncoarsen(b, graphs, cmaps, where, maxside, passes)


def uncoarsen(b, graphs, cmaps, where, maxside, passes):
    for level in range(len(graphs) - 2, -1, -1):
        fine = graphs[level]
        where = timed(b + " project", project_labels, where, cmaps[level + 1], fine[0].shape[0] - 1)
        where = timed(b + " thin", thin_separator, fine[0], fine[1], fine[3], where, maxside)
        timed(b + " sep FM", refine_separator, fine[0], fine[1], fine[3], where, maxside, passes,
              np.random.randint(0, 2**31))
    return where


def ml_best(b, sub, eps, passes, runs, window):
    vw = sub[3]
    total, heaviest = float(vw.sum()), float(vw.max())
    maxside = 0.5 * (1.0 + eps) * total
    cap = max(1.5 * total / separator.KERNEL_COARSEST, heaviest)
    best, best_key = None, None
    for _ in range(runs):
        w = ml_once(b, sub, maxside, cap, passes, window)
        pw = side_weights(w, vw)
        key = (max(pw[0] - maxside, 0) + max(pw[1] - maxside, 0), pw[2])
        if best_key is None or key < best_key:
            best, best_key = w, key
    return best


def replay(indptr, indices, vwgt, eps, leaf_size):
    nv = indptr.shape[0] - 1
    ewgt = np.ones(indices.shape[0], dtype=np.int64)
    verts = np.arange(nv, dtype=np.int64)
    iperm = np.full(nv, -1, dtype=np.int64)
    local = np.full(nv, -1, dtype=np.int64)
    stack = [(0, nv, 0)]
    while stack:
        lo, hi, depth = stack.pop()
        size = hi - lo
        if size == 0:
            continue
        if size <= leaf_size:
            timed("leaves (min degree)", ndkernel.number_by_min_degree, indptr, indices, vwgt, verts, lo, hi, iperm,
                  local)
            continue
        b = bucket(size)
        sub = timed(b + " induce", host_induced, indptr, indices, ewgt, vwgt, verts[lo:hi], local)
        comp, ncomp = timed(b + " components", ndkernel._components, sub[0], sub[1])
        if ncomp > 1:
            start = ndkernel._regroup(verts, lo, comp, ncomp)
            stack.extend((lo + start[c], lo + start[c + 1], depth) for c in range(ncomp))
            continue
        C[b + " pieces"] += 1
        runs = (ndkernel.TOP_SEPS if depth == 0 else ndkernel.MULTI_SEPS) if size >= ndkernel.MULTI_SEP_MIN else 1
        where = ml_best(b, sub, eps, nested.ND_SEP_PASSES, runs, nested.MATCH_WINDOW)
        start = timed(b + " regroup", ndkernel._regroup, verts, lo, where, 3)
        n0, n1 = start[1], start[2] - start[1]
        if n0 == 0 or n1 == 0:
            ndkernel.number_by_min_degree(indptr, indices, vwgt, verts, lo, hi, iperm, local)
            continue
        for p in range(lo + start[2], hi):
            iperm[verts[p]] = p
        stack.append((lo, lo + n0, depth + 1))
        stack.append((lo + n0, lo + n0 + n1, depth + 1))
    return iperm


def profile(name):
    g = load(name)
    host = g.to("cpu")
    indptr = np.ascontiguousarray(host.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(host.indices)
    vwgt = np.ascontiguousarray(host.vwgt)
    matchpart.order(g, threads=1)   # compile / warm
    t_order = []
    for _ in range(2):
        t = clock()
        matchpart.order(g, threads=1)
        t_order.append(clock() - t)
    t_order = min(t_order)
    T.clear()
    C.clear()
    t0 = clock()
    cmap, nc = timed("compress", identical_groups, indptr, indices)
    if nc <= (1.0 - MIN_COMPRESSION) * (indptr.shape[0] - 1):
        indptr, indices, _, vwgt = timed("compress", contract, indptr, indices,
                                         np.ones(indices.shape[0], dtype=np.int64), vwgt, cmap, nc)
        indptr = indptr.astype(np.int64)
    indptr, indices, vwgt, _ = timed("locality", renumber_for_locality, indptr, indices, vwgt)
    np.random.seed(1)
    replay(indptr, indices, vwgt, nested.ORDER_EPS, nested.LEAF_SIZE)
    total = clock() - t0
    if name == "delaunay:3000":
        return
    print(f"\n{name}: order(threads=1) {t_order:.3f} s CPU; replay {total:.3f} s (phases below, share of the replay)")
    for k in sorted(T, key=T.get, reverse=True):
        print(f"  {k:24s} {T[k]:8.3f} s {100 * T[k] / total:5.1f}%  calls {C[k]:7d}  {1e6 * T[k] / C[k]:9.1f} us/call")
    for k in sorted(C):
        if k.endswith("pieces"):
            print(f"  {k:24s} {C[k]}")


if __name__ == "__main__":
    profile("delaunay:3000")   # the replay's kernels compiled (their Python-callable twins)
    for nm in sys.argv[1:] or ["delaunay:131072", "grid:40x40x40", "grid27:40"]:
        profile(nm)
