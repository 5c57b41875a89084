"""The FM gain cache stays equal to a recomputation under moves; compiled Jet / rebalancing equal
their whole-array (xp) formulation; partitions do not depend on the number of threads."""
import json
import os
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import matchpart
from conftest import FORCE_PARALLEL_CONTRACTION
from matchpart import metrics
from matchpart.graph import Graph
from matchpart.refine import gain_cache as gc
from matchpart.refine import jet_refine, rebalance
from matchpart.refine.state import host_arrays


def random_graph(seed, n, p, max_ew=5, max_vw=1):
    rng = np.random.default_rng(seed)
    a = np.triu(rng.random((n, n)) < p, 1)
    u, v = np.nonzero(a)
    w = rng.integers(1, max_ew + 1, size=u.shape[0])
    rows = np.concatenate([u, v])
    cols = np.concatenate([v, u])
    ww = np.concatenate([w, w])
    order = np.lexsort((cols, rows))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    vw = rng.integers(1, max_vw + 1, size=n)
    return Graph(indptr, cols[order], ewgt=ww[order].astype(np.int64), vwgt=vw.astype(np.int64))


@njit(cache=True)
def _apply_moves(indptr, indices, ewgt, parts, moves_v, moves_to, build_first, k):
    """Build some entries, then apply the moves through the cache; returns the cache arrays."""
    cache = gc.new_cache(parts.shape[0], indices.shape[0], k)
    for v in build_first:
        gc.build(v, indptr, indices, ewgt, parts, cache)
    for i in range(moves_v.shape[0]):
        v = moves_v[i]
        frm = parts[v]
        parts[v] = moves_to[i]
        gc.move(v, frm, moves_to[i], indptr, indices, ewgt, cache)
        gc.build(moves_v[(i * 7) % moves_v.shape[0]], indptr, indices, ewgt, parts, cache)   # built midway: exact too
    block, conn, count, nb, _, start, top = cache
    return block, conn, count, nb, start, top[0]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 40), k=st.integers(2, 6), p=st.floats(0.05, 0.7),
       moves=st.integers(1, 60))
def test_gain_cache_equals_recomputation_after_moves(seed, n, k, p, moves):
    g = random_graph(seed, n, p)
    indptr, indices, ewgt, _ = host_arrays(g)
    rng = np.random.default_rng(seed)
    parts = rng.integers(0, k, size=n)
    mv = rng.integers(0, n, size=moves)
    to = rng.integers(0, k, size=moves)
    build_first = rng.choice(n, size=n // 2, replace=False)
    block, conn, count, nb, start, used = _apply_moves(indptr, indices, ewgt, parts, mv, to, build_first, k)
    assert used == sum(indptr[v + 1] - indptr[v] for v in range(n) if nb[v] >= 0)   # deg(v) slots per built vertex
    for v in range(n):
        if nb[v] < 0:
            continue
        expect = {}
        for e in range(indptr[v], indptr[v + 1]):
            b = int(parts[indices[e]])
            w, c = expect.get(b, (0.0, 0))
            expect[b] = (w + ewgt[e], c + 1)
        got = {int(block[s]): (conn[s], int(count[s])) for s in range(start[v], start[v] + nb[v])}
        assert got == expect, (v, got, expect)


@njit(cache=True)
def _build_one_by_one(indptr, indices, ewgt, vwgt, parts, bw, maxw, vs, prebuilt, k):
    """What FM's queue set-up did before build_best: build, test and score each vertex in turn."""
    cache = gc.new_cache(parts.shape[0], indices.shape[0], k)
    for v in prebuilt:
        gc.build(v, indptr, indices, ewgt, parts, cache)
    gain = np.zeros(parts.shape[0])
    target = np.full(parts.shape[0], -3, dtype=np.int64)
    for v in vs:
        gc.build(v, indptr, indices, ewgt, parts, cache)
        if gc.is_boundary(v, parts[v], cache):
            gain[v], target[v] = gc.best_move(v, parts[v], vwgt[v], bw, maxw, cache)
        else:
            target[v] = -2
    return gain, target, cache


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 60), k=st.integers(2, 6), p=st.floats(0.03, 0.6),
       chunk=st.integers(1, 9), threaded=st.booleans())
def test_build_best_equals_building_one_vertex_at_a_time(seed, n, k, p, chunk, threaded):
    g = random_graph(seed, n, p, max_vw=3)
    indptr, indices, ewgt, vwgt = host_arrays(g)
    rng = np.random.default_rng(seed)
    parts = rng.integers(0, k, size=n)
    bw = np.bincount(parts, weights=vwgt, minlength=k).astype(np.float64)
    maxw = bw.max() * rng.uniform(0.8, 1.3, size=k)
    vs = np.sort(rng.choice(n, size=rng.integers(0, n + 1), replace=False))
    prebuilt = rng.choice(n, size=n // 3, replace=False)
    gain, target, ref = _build_one_by_one(indptr, indices, ewgt, vwgt, parts, bw, maxw, vs, prebuilt, k)
    cache = gc.new_cache(n, indices.shape[0], k)
    for v in prebuilt:
        gc.build(v, indptr, indices, ewgt, parts, cache)
    got_gain = np.zeros(n)
    got_target = np.full(n, -3, dtype=np.int64)
    gc.build_best(vs, indptr, indices, ewgt, vwgt, parts, bw, maxw, cache, got_gain, got_target, chunk,
                  0 if threaded else n + 1)
    assert np.array_equal(got_target, target)
    assert np.array_equal(got_gain[target >= 0], gain[target >= 0])
    block, conn, count, nb, _, start, top = cache
    assert np.array_equal(nb, ref[3]) and top[0] == ref[6][0]
    for v in np.flatnonzero(nb >= 0):       # the same entries in the same slots
        assert start[v] == ref[5][v]
        at = slice(start[v], start[v] + nb[v])
        assert np.array_equal(block[at], ref[0][at]) and np.array_equal(conn[at], ref[1][at])
        assert np.array_equal(count[at], ref[2][at])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 60), k=st.integers(2, 6), p=st.floats(0.03, 0.5),
       max_vw=st.integers(1, 4), eps=st.sampled_from([0.0, 0.03, 0.3]))
def test_compiled_jet_and_rebalance_equal_xp(seed, n, k, p, max_vw, eps):
    g = random_graph(seed, n, p, max_vw=max_vw)
    k = min(k, n)
    lmax = metrics.max_block_weight(g.total_vwgt, k, eps)
    parts = np.random.default_rng(seed).integers(0, k, size=n)
    a = jet_refine(g, parts, k, lmax, seed=seed, method="numba")
    b = jet_refine(g, parts, k, lmax, seed=seed, method="xp")
    assert np.array_equal(a, b)
    ra = rebalance(g, parts, k, lmax, seed=seed, method="numba")
    rb = rebalance(g, parts, k, lmax, seed=seed, method="xp")
    assert np.array_equal(ra, rb)


def test_partition_does_not_depend_on_thread_count():
    # the contraction is the pipeline's threaded kernel: forced onto these small graphs, it
    # runs with one thread, then two
    code = FORCE_PARALLEL_CONTRACTION + (
        "import hashlib, json, matchpart\n"
        "r = matchpart.partition('rmat:11', 8); s = matchpart.partition('delaunay:3000', 16)\n"
        "print(json.dumps({'partitions': hashlib.sha1(r.parts.tobytes() + s.parts.tobytes()).hexdigest(),\n"
        "                  'cuts': [r.cut, s.cut], 'threads': sorted({t for _, t in parallel_calls})}))\n")
    outs = []
    for threads in (1, 2):
        env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout.strip().splitlines()[-1])
        assert out.pop("threads") == [threads]   # every contraction ran the parallel kernel on `threads` threads
        outs.append(out)
    assert outs[0] == outs[1]
