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
from matchpart.matchers import b_suitor as b_suitor_module
from matchpart.matchers import suitor as suitor_module
from test_matchers_basic import random_graphs

KERNELS = {"local_max": local_max_module, "red_blue": red_blue_module, "red_blue_random": red_blue_module,
           "suitor": suitor_module, "locally_dominant": suitor_module}
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


@pytest.mark.parametrize("hub_first", [True, False])
def test_local_max_kernel_equals_whole_array_rounds_on_a_hash_collision(hub_first, monkeypatch):
    # two edges with equal rating and equal 32-bit hash in round 1, the heaviest at their
    # common hub: both are the hub's best key, and the smaller pair id must be its top.
    # The hub is the lower endpoint (hub_first) or the higher one of every edge.
    from matchpart.backend import rng
    seed, leaves = 5, 1 << 18
    n = leaves + 1
    hub = 0 if hub_first else leaves
    leaf = np.arange(leaves) + (1 if hub_first else 0)   # edge t joins the hub and leaf[t]
    pid = np.minimum(hub, leaf) * n + np.maximum(hub, leaf)
    h = rng.hash32(np, seed, local_max_module.STREAM_BASE + 1, pid)
    order = np.argsort(h, kind="stable")
    same = np.flatnonzero(h[order][1:] == h[order][:-1])
    assert same.size, "no 32-bit collision among the pair ids: use more leaves"
    i, j = sorted(order[same[0]:same[0] + 2])   # pid grows with t: edge i has the smaller pair id
    w = np.ones(leaves, dtype=np.int64)
    w[[i, j]] = 2
    g = Graph.from_edges(np.full(leaves, hub), leaf, w, n=n)
    kernel, whole_array = _both("local_max", g, seed, "weight", monkeypatch)
    _assert_same(kernel, whole_array)
    assert kernel.mate[hub] == leaf[i] and kernel.mate[leaf[j]] == -1


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


@pytest.mark.parametrize("spec", ["delaunay:3000", "rmat:11", "ba:2000:3"])
def test_red_blue_kernel_threaded_chunks_equal_the_whole_array_rounds(spec, monkeypatch):
    """Tiny chunks on the threads (parallel_min 0) at 1 and 2 threads: the same mate and
    per-round counts as the whole-array rounds."""
    from matchpart import threads
    from matchpart.matchers.red_blue_kernel import red_blue_kernel
    g = _weighted(spec, 3)
    consts = (np.array(red_blue_module._MD5_INIT, dtype=np.uint32), np.array(red_blue_module._MD5_K, dtype=np.uint32),
              np.array(red_blue_module._MD5_S[:16], dtype=np.uint32))
    threshold = int(red_blue_module.BLUE_PROBABILITY * 2 ** 32)
    for weighted in (True, False):
        monkeypatch.setattr(red_blue_module, "CPU_KERNEL", False)
        whole, stats = red_blue_module.red_blue_rounds(g, g.backend, seed=7, weighted=weighted)
        monkeypatch.setattr(red_blue_module, "CPU_KERNEL", True)
        order = red_blue_module.order_keys(red_blue_module.edge_ratings(g, "weight")) if weighted \
            else np.zeros(0, dtype=np.uint64)
        for count, chunk in ((1, 7), (2, 7), (2, 64)):
            mate = np.full(g.n, -1, dtype=np.int64)
            with threads.limit(count):
                matched, live = red_blue_kernel(g.indptr, g.indices, order, weighted, mate, 7,
                                                red_blue_module.MAX_ROUNDS, threshold, *consts, red_blue_module.R_STREAM,
                                                red_blue_module.PROPOSE_STREAM, red_blue_module.RESPOND_STREAM,
                                                chunk, 0)
            assert np.array_equal(mate, whole)
            assert [c / g.n for c in matched[:stats["rounds"]]] == stats["matched_fraction"]


@pytest.mark.parametrize("spec", ["delaunay:3000", "rmat:11", "ba:2000:3"])
def test_ld_dense_rounds_on_the_threads_equal_the_serial_rounds(spec):
    """LD's dense rounds (tiny chunks, parallel_min 0, 1 and 2 threads) give the serial
    rounds' matching and per-round counts."""
    from matchpart import threads
    from matchpart.matchers.prioritised_rows import prioritised_rows
    from matchpart.matchers.suitor import INITIAL_WINDOW, WINDOW_GROWTH
    from matchpart.matchers.locally_dominant_kernel import locally_dominant_kernel
    for g in (load_graph(spec), _weighted(spec, 4)):
        nbr, key, _ = prioritised_rows(g, "weight")
        ld_want = locally_dominant_kernel(g.indptr, nbr, INITIAL_WINDOW, WINDOW_GROWTH, 2048, g.n + 1)
        for count in (1, 2):
            with threads.limit(count):
                ld_got = locally_dominant_kernel(g.indptr, nbr, INITIAL_WINDOW, WINDOW_GROWTH, 7, 0)
            assert all(np.array_equal(a, b) for a, b in zip(ld_got, ld_want))


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


# ---- Suitor, LD and b-Suitor: kernels without a global edge rank ---------------------------
def _b_both(g, b, rating, monkeypatch):
    kernel = b_suitor_module.b_matching(g, b, device="cpu", rating=rating)
    with monkeypatch.context() as mp:
        mp.setattr(b_suitor_module, "CPU_KERNEL", False)
        whole_array = b_suitor_module.b_matching(g, b, device="cpu", rating=rating)
    return kernel, whole_array


def _assert_same_b(a, b):
    assert np.array_equal(a.edges, b.edges) and a.edges.dtype == b.edges.dtype == np.int64
    assert a.edges.shape == b.edges.shape
    assert a.weight == b.weight and type(a.weight) is type(b.weight)
    assert a.stats == b.stats and np.array_equal(a.b, b.b)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(g=random_graphs(max_n=30), b=st.integers(0, 4), per_vertex=st.booleans(), rating=st.sampled_from(RATINGS))
def test_b_suitor_kernel_equals_whole_array_rounds_on_random_graphs(g, b, per_vertex, rating, monkeypatch):
    if per_vertex:
        b = np.random.default_rng(b).integers(0, 4, g.n)
    _assert_same_b(*_b_both(g, b, rating, monkeypatch))


@pytest.mark.parametrize("spec", ["delaunay:3000", "ba:2000:4", "rmat:11"])
@pytest.mark.parametrize("rating", ["weight", "expansion_star2"])
def test_b_suitor_kernel_equals_whole_array_rounds_on_generated_graphs(spec, rating, monkeypatch):
    for g in (load_graph(spec), _weighted(spec, 3)):
        for b in (1, 2, 5, np.random.default_rng(1).integers(0, 4, g.n)):
            _assert_same_b(*_b_both(g, b, rating, monkeypatch))


def _scrambled(g, seed, jitter):
    """``g`` as trusted arrays with every row shuffled and, with ``jitter``, the float
    weight of each edge's (max id -> min id) entry nudged by an ulp: the whole-array
    rank reads the (min -> max) entry's rating, and so must the kernels."""
    rng = np.random.default_rng(seed)
    indices, ewgt = g.indices.copy(), g.ewgt.astype(np.float64)
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    if jitter:
        lower = rows > indices
        ewgt[lower] = np.nextafter(ewgt[lower], np.inf if seed % 2 else -np.inf)
    for u in range(g.n):
        a, b = g.indptr[u], g.indptr[u + 1]
        p = a + rng.permutation(b - a)
        indices[a:b], ewgt[a:b] = indices[p], ewgt[p]
    return Graph(g.indptr, indices, ewgt, g.vwgt, validate=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(g=random_graphs(max_n=30), seed=st.integers(0, 1000), jitter=st.booleans(),
       rating=st.sampled_from(RATINGS))
def test_suitor_kernels_on_unsorted_rows_and_asymmetric_ratings(g, seed, jitter, rating, monkeypatch):
    g = _scrambled(g, seed, jitter)
    for name in ("suitor", "locally_dominant"):
        _assert_same(*_both(name, g, seed, rating, monkeypatch))
    _assert_same_b(*_b_both(g, 2, rating, monkeypatch))


def test_suitor_kernels_refuse_trusted_arrays_that_are_not_symmetric():
    """Rows whose entries could not all get a key: an entry without its reverse (either
    way round), a self-loop. (Pairs that do not match with the right counts go unnoticed.)"""
    from matchpart.matchers.b_suitor import b_matching
    for indptr, indices in (([0, 1, 1], [1]), ([0, 0, 1], [0]), ([0, 2, 3], [0, 1, 0]),
                            ([0, 1, 3, 3], [1, 0, 2])):
        g = Graph(np.array(indptr), np.array(indices), validate=False)
        for f in (lambda: run_matcher("suitor", g), lambda: run_matcher("locally_dominant", g),
                  lambda: b_matching(g, 2, device="cpu")):
            with pytest.raises(ValueError, match="not symmetric or has a self-loop"):
                f()


def test_suitor_kernels_on_a_path_with_increasing_weights(monkeypatch):
    """A pair or two matched a round (n/2 rounds): the kernels' rounds touch only the
    vertices with work, so the same rounds and stats come at linear total cost."""
    n = 400
    g = Graph.from_edges(np.arange(n - 1), np.arange(1, n), np.arange(1, n), n=n)
    for name in ("suitor", "locally_dominant"):
        kernel, whole_array = _both(name, g, 0, "weight", monkeypatch)
        _assert_same(kernel, whole_array)
        assert kernel.stats["rounds"] >= n // 4
    _assert_same_b(*_b_both(g, 1, "weight", monkeypatch))


def test_suitor_kernels_with_negative_nan_and_infinite_ratings(monkeypatch):
    """Callable ratings may be negative, -0.0, +-inf or NaN: ``edge_priority`` puts NaN last
    (its sort of -r does), equal ratings (0.0 == -0.0) tie on the (min, max) pair."""
    n = 7
    g = Graph.from_edges([0, 1, 2, 3, 4, 5, 0, 2, 1, 3], [1, 2, 3, 4, 5, 6, 6, 5, 4, 6], n=n)
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    lo, hi = np.minimum(rows, g.indices), np.maximum(rows, g.indices)
    rng = np.random.default_rng(0)
    pool = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -2.5, 3.0, 3.0, np.nan])
    for trial in range(40):
        values = rng.choice(pool, size=(n, n))
        rating = lambda graph, values=values: values[lo, hi]  # noqa: E731
        for name in ("suitor", "locally_dominant"):
            _assert_same(*_both(name, g, 0, rating, monkeypatch))
        for b in (1, 2):
            _assert_same_b(*_b_both(g, b, rating, monkeypatch))


@pytest.mark.parametrize("spec", ["delaunay:2000", "ba:2000:4", "rmat:10"])
@pytest.mark.parametrize("rating", ["weight", "expansion_star2", "inner_outer"])
def test_prioritised_rows_equal_the_rank_sorted_adjacency(spec, rating):
    """The kernels' rows (sorted by key, then neighbour; no global rank) are the whole-array
    formulation's rows sorted by ``edge_priority``; twins are the reverse entries."""
    from matchpart.matchers.ratings import edge_priority
    from matchpart.matchers.suitor import sorted_adjacency
    from matchpart.matchers.b_suitor import reverse_entries
    from matchpart import threads
    from matchpart.matchers.prioritised_rows import _prioritised_rows, prioritised_rows, priority_keys
    from matchpart.matchers.ratings import upper_edge_ratings
    for g in (load_graph(spec), _weighted(spec, 2), _scrambled(_weighted(spec, 2), 5, True)):
        want_nbr, _, want_order = sorted_adjacency(g, edge_priority(g, rating))
        nbr, key, order = prioritised_rows(g, rating)
        twin = reverse_entries(g.indptr, nbr, key)
        assert np.array_equal(nbr, want_nbr) and np.array_equal(order, want_order)
        srow = np.repeat(np.arange(g.n), np.diff(g.indptr))
        assert np.array_equal(srow[twin], nbr) and np.array_equal(nbr[twin], srow)
        assert np.array_equal(key[twin], key) and np.array_equal(twin[twin], np.arange(twin.shape[0]))
        _, _, ratings = upper_edge_ratings(g, rating)
        for count in (1, 2):        # tiny chunks on the threads: the same rows
            with threads.limit(count):
                got = _prioritised_rows(g.indptr, g.indices, priority_keys(ratings), 7, 0)
            assert not got[3] and all(np.array_equal(a, b) for a, b in zip(got[:3], (nbr, key, order)))


def _greedy_by_python_sort(g):
    """Greedy matching from Python's own sort of the (min, max) edges by (-weight, min, max):
    no edge_priority, no numpy sort."""
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr)).tolist()
    edges = sorted((-float(w), int(u), int(v)) for u, v, w in zip(rows, g.indices.tolist(), g.ewgt.tolist())
                   if u < v)
    mate = np.full(g.n, -1, dtype=np.int64)
    for _, u, v in edges:
        if mate[u] < 0 and mate[v] < 0:
            mate[u], mate[v] = v, u
    return mate


@settings(max_examples=60, deadline=None)
@given(g=random_graphs(max_n=30))
def test_suitor_kernels_equal_an_independent_greedy_and_are_half_approximate(g):
    import networkx as nx
    from matchpart.matchers.b_suitor import b_matching
    ref = _greedy_by_python_sort(g)
    for name in ("suitor", "locally_dominant"):
        M = run_matcher(name, g)
        assert np.array_equal(M.mate, ref), name
    B = b_matching(g, 1, device="cpu")
    mine = {tuple(e) for e in B.edges.tolist()}
    assert mine == {(u, int(ref[u])) for u in range(g.n) if ref[u] > u}
    G = nx.Graph()
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    G.add_weighted_edges_from((int(u), int(v), float(w)) for u, v, w in zip(rows, g.indices, g.ewgt) if u < v)
    opt = sum(G[u][v]["weight"] for u, v in nx.max_weight_matching(G))
    assert 2 * B.weight >= opt - 1e-9 * max(opt, 1) and B.weight <= opt + 1e-9 * max(opt, 1)
