"""On the CPU the parallel matchers run their rounds as compiled kernels; the whole-array
rounds (the GPU's formulation) run on numpy here and must give the same matching and the
same stats (rounds, matched fraction per round, ...) for the same seed."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from matchpart import load_graph
from matchpart.graph import Graph
from matchpart.matchers import run_matcher
from matchpart.matchers import local_max as local_max_module
from matchpart.matchers import red_blue as red_blue_module
from test_matchers_basic import random_graphs

KERNELS = {"local_max": local_max_module, "red_blue": red_blue_module, "red_blue_random": red_blue_module}
RATINGS = ["weight", "expansion_star", "expansion_star2", "inner_outer"]


def _both(name, g, seed, rating, monkeypatch):
    module = KERNELS[name]
    kernel = run_matcher(name, g, seed=seed, rating=rating)
    with monkeypatch.context() as mp:
        mp.setattr(module, "CPU_KERNEL", False)
        whole_array = run_matcher(name, g, seed=seed, rating=rating)
    return kernel, whole_array


def _assert_same(a, b):
    assert np.array_equal(a.mate, b.mate)
    assert a.stats == b.stats
    assert (a.weight, a.cardinality) == (b.weight, b.cardinality)


@pytest.mark.parametrize("name", sorted(KERNELS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(g=random_graphs(max_n=30), seed=st.integers(0, 2**31 - 2), rating=st.sampled_from(RATINGS))
def test_kernel_equals_whole_array_rounds_on_random_graphs(name, g, seed, rating, monkeypatch):
    _assert_same(*_both(name, g, seed, rating, monkeypatch))


def _weighted(spec, seed):
    """A generated graph with integer edge weights (many ties) and vertex weights."""
    g = load_graph(spec)
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    upper = rows < g.indices
    return Graph.from_edges(rows[upper], g.indices[upper], rng.integers(1, 4, int(upper.sum())), n=g.n,
                            vwgt=rng.integers(1, 3, g.n))


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("spec", ["delaunay:3000", "er:2000:6", "ba:2000:4", "rgg:3000"])
@pytest.mark.parametrize("rating", ["weight", "expansion_star2"])
def test_kernel_equals_whole_array_rounds_on_generated_graphs(name, spec, rating, monkeypatch):
    for g in (load_graph(spec), _weighted(spec, 1)):
        _assert_same(*_both(name, g, 7, rating, monkeypatch))


def test_local_max_kernel_greedy_tail_and_negative_or_nan_ratings(monkeypatch):
    # a path with increasing weights needs a round per edge: the tail after GREEDY_TAIL_AFTER
    n = 300
    g = Graph.from_edges(np.arange(n - 1), np.arange(1, n), np.arange(1, n), n=n)
    kernel, whole_array = _both("local_max", g, 0, "weight", monkeypatch)
    _assert_same(kernel, whole_array)
    assert kernel.stats["greedy_tail_edges"] > 0
    # callable ratings may be negative (order keys handle the sign) or NaN (ranks are used)
    for values in ([-2.5, -0.0, 0.0, 3.0, -7.0], [np.nan, 1.0, np.nan, 2.0, 1.0]):
        g = Graph.from_edges([0, 1, 2, 3, 4], [1, 2, 3, 4, 5], n=6)
        rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
        lo = np.minimum(rows, g.indices)
        rating = lambda graph, lo=lo, values=values: np.asarray(values)[lo]  # noqa: E731
        _assert_same(*_both("local_max", g, 3, rating, monkeypatch))


@settings(max_examples=60, deadline=None)
@given(g=random_graphs(max_n=30), rating=st.sampled_from(RATINGS), vw=st.integers(0, 3))
def test_upper_edge_ratings_equal_edge_ratings(g, rating, vw):
    """The compiled upper-edge ratings are the whole-array ratings' u -> v entries, bit for bit
    (float weights included; vertex weights 0 count as 1)."""
    from matchpart.matchers.ratings import edge_ratings, upper_edge_ratings
    if vw:
        g = Graph(g.indptr, g.indices, g.ewgt, np.random.default_rng(vw).integers(0, 4, g.n))
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    upper = np.flatnonzero(rows < g.indices)
    eu, ev, r = upper_edge_ratings(g, rating)
    assert eu.dtype == ev.dtype == g.indices.dtype
    assert np.array_equal(eu, rows[upper]) and np.array_equal(ev, g.indices[upper])
    assert np.array_equal(r, edge_ratings(g, rating)[upper])


def test_quarter_md5_kernel_equals_whole_array_version():
    v = np.arange(1, 3000, dtype=np.int64)
    consts = (np.array(red_blue_module._MD5_INIT, dtype=np.uint32), np.array(red_blue_module._MD5_K, dtype=np.uint32),
              np.array(red_blue_module._MD5_S[:16], dtype=np.uint32))
    for r in (1, 12345, 2**32 - 1, 0xDEADBEEF):
        got = [red_blue_module._quarter_md5_at(np.uint32(x), np.uint32(r), *consts) for x in v]
        assert np.array_equal(np.array(got, dtype=np.uint32), red_blue_module.quarter_md5(np, v, r))


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_red_blue_kernel_equals_whole_array_rounds_for_any_blue_probability(p, monkeypatch):
    g = _weighted("delaunay:2000", 2)
    for weighted in (True, False):
        kernel = red_blue_module.red_blue_rounds(g, g.backend, seed=4, weighted=weighted, p=p, max_rounds=30)
        monkeypatch.setattr(red_blue_module, "CPU_KERNEL", False)
        whole = red_blue_module.red_blue_rounds(g, g.backend, seed=4, weighted=weighted, p=p, max_rounds=30)
        monkeypatch.setattr(red_blue_module, "CPU_KERNEL", True)
        assert np.array_equal(kernel[0], whole[0]) and kernel[1] == whole[1]


@settings(max_examples=40, deadline=None)
@given(g=random_graphs(max_n=30), seed=st.integers(0, 1000))
def test_matching_weight_equals_whole_array_sum(g, seed):
    """Matching.from_mate's compiled gather sums the same entries in the same order."""
    from matchpart.matchers.base import Matching
    mate = np.asarray(run_matcher("local_max", g, seed=seed).mate)
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    w = g.ewgt[mate[rows] == g.indices].sum()
    want = w.item() // 2 if g.ewgt.dtype.kind in "iu" else w.item() / 2
    assert Matching.from_mate(g, mate).weight == want
