"""Tests for matchpart.bisection_nc: multi-constraint bisection (balance in every constraint,
quality against brute force on tiny graphs, determinism), its recursive k-way driver, and
refine/multi_pairwise.py, which runs its FM on pairs of blocks."""
import itertools

import numba
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import matchpart
from matchpart import bisection_nc, metrics
from matchpart.graph import Graph
from matchpart.refine.multi_pairwise import pairwise_nc


def _random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    a, b = np.triu_indices(n, 1)
    keep = rng.random(a.shape[0]) < p
    a, b = a[keep], b[keep]
    ew = rng.integers(1, 6, a.shape[0])
    g = Graph.from_edges(a, b, ew, n=n)
    return np.asarray(g.indptr, dtype=np.int64), np.asarray(g.indices, dtype=np.int64), \
        np.asarray(g.ewgt, dtype=np.float64)


def _weights(n, c, seed):
    rng = np.random.default_rng(seed + 1)
    cols = [np.ones(n), rng.integers(1, 11, n), (rng.random(n) < 0.3) + 0.0, rng.integers(0, 4, n)]
    vw = np.stack(cols[:c], axis=1).astype(np.float64)
    vw[0, :] += 1.0                                   # no constraint sums to 0
    return vw


def _bounds(vw, eps):
    total = vw.sum(axis=0)
    target = np.stack([total / 2, total / 2])
    return target, target * (1 + eps)


def _side_cut(indptr, indices, ewgt, side):
    src = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    return ewgt[side[src] != side[indices]].sum() / 2


def _fits(vw, side, maxw):
    bw = np.stack([vw[side == s].sum(axis=0) for s in (0, 1)])
    return bool((bw <= maxw + 1e-9).all())


@settings(max_examples=25, deadline=None)
@given(n=st.integers(60, 400), c=st.integers(2, 4), seed=st.integers(0, 10**6), eps=st.sampled_from([0.05, 0.1, 0.3]))
def test_bisection_is_within_every_constraints_bound(n, c, seed, eps):
    indptr, indices, ewgt = _random_graph(n, 6.0 / n, seed)
    vw = _weights(n, c, seed)
    target, maxw = _bounds(vw, eps)
    maxw = np.maximum(maxw, target + vw.max(axis=0))      # room for one vertex: always reachable
    np.random.seed(seed % 1000)
    side = bisection_nc.bisect_ml_nc(indptr, indices, ewgt, vw, target, maxw, 4, 4, 2)
    assert set(np.unique(side)) <= {0, 1}
    assert _fits(vw, side, maxw)


def test_tiny_bisections_against_brute_force():
    # the best feasible cut over all 2^n sides: ours must be feasible and, summed over the
    # instances, within 10% of optimal (each can miss: FM is a heuristic)
    ours_total, best_total = 0.0, 0.0
    for seed in range(30):
        n = 8 + seed % 7
        indptr, indices, ewgt = _random_graph(n, 0.35, seed)
        vw = _weights(n, 2 + seed % 2, seed)
        target, maxw = _bounds(vw, 0.25)
        best = np.inf
        for bits in itertools.product((0, 1), repeat=n):
            side = np.array(bits, dtype=np.int64)
            if _fits(vw, side, maxw):
                best = min(best, _side_cut(indptr, indices, ewgt, side))
        if not np.isfinite(best):
            continue
        np.random.seed(seed)
        side = bisection_nc.bisect_nc(indptr, indices, ewgt, vw, target, maxw, 8, 4)
        assert _fits(vw, side, maxw), seed
        cut = _side_cut(indptr, indices, ewgt, side)
        assert cut >= best - 1e-9
        ours_total += cut
        best_total += best
    assert best_total > 0 and ours_total <= 1.1 * best_total


def test_balancing_pass_removes_overload():
    indptr, indices, ewgt = _random_graph(300, 0.02, 5)
    vw = _weights(300, 3, 5)
    target, maxw = _bounds(vw, 0.05)
    side = np.zeros(300, dtype=np.int64)                # everything on side 0: far over
    inv = 1.0 / vw.sum(axis=0)
    bw = np.stack([vw[side == s].sum(axis=0) for s in (0, 1)])
    qnum = bisection_nc._dominant(vw, inv)
    cut = bisection_nc._refine(indptr, indices, ewgt, vw, qnum, side, bw, maxw, inv, 0.0, True, 300,
                               np.random.permutation(300))
    assert _fits(vw, side, maxw)
    assert np.allclose(bw, np.stack([vw[side == s].sum(axis=0) for s in (0, 1)]))
    assert cut == pytest.approx(_side_cut(indptr, indices, ewgt, side))


@pytest.mark.parametrize("k", [2, 3, 8])
def test_recursive_bisection_covers_every_block_and_is_seeded(k):
    g = matchpart.load_graph("delaunay:600:seed=3")
    rng = np.random.default_rng(0)
    vw = np.stack([np.ones(g.n), np.diff(np.asarray(g.indptr)), rng.integers(1, 11, g.n)], axis=1)
    bounds = metrics.constraint_bounds(tuple(vw.sum(axis=0)), k, [0.1] * 3).astype(np.float64)
    a = bisection_nc.initial_partition_nc(g.indptr, g.indices, g.ewgt, vw, bounds, [0.1] * 3, seed=4)
    b = bisection_nc.initial_partition_nc(g.indptr, g.indices, g.ewgt, vw, bounds, [0.1] * 3, seed=4)
    assert np.array_equal(a, b)
    assert np.array_equal(np.unique(a), np.arange(k))
    bw = np.stack([np.bincount(a, weights=vw[:, j], minlength=k) for j in range(3)], axis=1)
    assert (bw <= bounds * 1.05).all()          # before k-way refinement: close to the bounds


def test_ncon_partition_does_not_depend_on_the_thread_count():
    g = matchpart.load_graph("delaunay:3000:seed=2")
    vw = np.stack([np.ones(g.n), np.diff(np.asarray(g.indptr))], axis=1).astype(np.int64)
    gw = g.with_vertex_weights(vw)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = matchpart.partition(gw, 8, device="cpu").parts
    finally:
        numba.set_num_threads(before)
    many = matchpart.partition(gw, 8, device="cpu").parts
    assert np.array_equal(one, many)


# ---- pairwise multi-constraint FM (refine/multi_pairwise.py) ------------------------------------
def _block_weights(vw, parts, k):
    return np.stack([np.bincount(parts, weights=vw[:, j], minlength=k) for j in range(vw.shape[1])], axis=1)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(20, 300), c=st.integers(2, 3), k=st.integers(2, 7), seed=st.integers(0, 10**6),
       slack=st.sampled_from([0.0, 0.05, 0.3]))
def test_pairwise_nc_keeps_every_bound_and_never_raises_the_cut(n, c, k, seed, slack):
    indptr, indices, ewgt = _random_graph(n, 5.0 / n, seed)
    vw = _weights(n, c, seed)
    parts = np.random.default_rng(seed).integers(0, k, n).astype(np.int64)
    maxw = _block_weights(vw, parts, k).max(axis=0)[None, :] * (1 + slack) * np.ones((k, 1))
    before = _side_cut(indptr, indices, ewgt, parts)
    gained = pairwise_nc(indptr, indices, ewgt, vw, parts, maxw, seed % 1000, 2, 2)
    after = _side_cut(indptr, indices, ewgt, parts)
    assert (_block_weights(vw, parts, k) <= maxw + 1e-9).all()
    assert after <= before and gained == pytest.approx(before - after)
    assert parts.min() >= 0 and parts.max() < k


def test_pairwise_nc_exchanges_between_full_blocks():
    # two blocks, each exactly at its bound in both constraints: no single move fits, so only
    # an exchange (a move that overloads a side, then one back) can lower the cut
    g = matchpart.load_graph("delaunay:400:seed=1")
    indptr, indices, ewgt = (np.asarray(g.indptr, dtype=np.int64), np.asarray(g.indices, dtype=np.int64),
                             np.asarray(g.ewgt, dtype=np.float64))
    vw = np.ones((g.n, 2))
    parts = (np.arange(g.n) % 2).astype(np.int64)          # a bad, exactly balanced split
    maxw = _block_weights(vw, parts, 2)
    before = _side_cut(indptr, indices, ewgt, parts)
    gain = pairwise_nc(indptr, indices, ewgt, vw, parts, maxw, 0, 2, 4)
    assert gain > 0.3 * before
    assert np.array_equal(_block_weights(vw, parts, 2), maxw)
