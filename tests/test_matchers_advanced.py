"""Tests for suitor, locally_dominant, karp_sipser, gpa and b-Suitor b-matching against independent references."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from conftest import shared_graph
from matchpart.backend import Backend
from matchpart.graph import Graph
from matchpart.io import load_graph
from matchpart.matchers.b_suitor import b_matching
from matchpart.matchers.base import is_maximal, matching_problems
from matchpart.matchers.gpa import gpa
from matchpart.matchers.karp_sipser import karp_sipser
from matchpart.matchers.ratings import RATINGS, edge_priority
from matchpart.matchers.suitor import locally_dominant, suitor

HALF_APPROX = (suitor, locally_dominant, gpa)
ALL = (suitor, locally_dominant, gpa, karp_sipser)


# ---- references -----------------------------------------------------------------------
def edges_by_rank(g, rating="weight"):
    """Undirected edges (u < v) with weights, heaviest first under the contract tie-break."""
    rank = edge_priority(g, rating)
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    upper = rows < g.indices
    order = np.argsort(rank[upper], kind="stable")
    return rows[upper][order], g.indices[upper][order].astype(np.int64), g.ewgt[upper][order]


def reference_greedy(g, rating="weight"):
    """Greedy matching by a plain Python scan of the rank-sorted edges."""
    mate = np.full(g.n, -1, dtype=np.int64)
    for a, c, _ in zip(*edges_by_rank(g, rating)):
        if mate[a] < 0 and mate[c] < 0:
            mate[a], mate[c] = c, a
    return mate


def reference_greedy_b(g, b, rating="weight"):
    """Greedy b-matching: rank-sorted edges taken while both ends have capacity."""
    cap = np.broadcast_to(np.asarray(b, dtype=np.int64), (g.n,)).copy()
    edges, weight = [], 0
    for a, c, w in zip(*edges_by_rank(g, rating)):
        if cap[a] > 0 and cap[c] > 0:
            cap[a] -= 1
            cap[c] -= 1
            edges.append((a, c))
            weight += w
    return np.array(edges, dtype=np.int64).reshape(-1, 2), weight


def nx_max_weight(g):
    G = g.to_networkx()
    return sum(G[a][c]["weight"] for a, c in nx.max_weight_matching(G))


def load_shared(name):
    return load_graph(shared_graph(name))


# ---- random graphs --------------------------------------------------------------------
@st.composite
def graphs(draw, max_n=40, weights=("int", "equal", "float")):
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(0, 4 * n))
    seed = draw(st.integers(0, 2**31))
    kind = draw(st.sampled_from(weights))
    rng = np.random.default_rng(seed)
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    w = {"int": lambda: rng.integers(1, 6, m), "equal": lambda: np.full(m, 3),
         "float": lambda: rng.random(m) + 0.01}[kind]()
    vw = rng.integers(1, 4, n)
    # merging duplicates sums their weights; drop self-loops; vertices may be isolated
    return Graph.from_edges(u, v, w, n, vwgt=vw, drop_self_loops=True, merge_duplicates=True)


def check_valid(g, M, maximal=True):
    assert matching_problems(g, M.mate) == []
    if maximal:
        assert is_maximal(g, M.mate)
    # one matched fraction after each round, rising to the matching's; no edges, no rounds (gpa: one)
    rounds, fractions = M.stats["rounds"], M.stats["matched_fraction"]
    assert len(fractions) == rounds and rounds >= (g.m > 0)
    assert fractions == sorted(fractions)
    if rounds:
        assert fractions[-1] == pytest.approx(2 * M.cardinality / g.n)


@settings(max_examples=60, deadline=None)
@given(graphs(), st.integers(0, 5))
def test_valid_and_maximal(g, seed):
    for f in ALL:
        M = f(g, seed=seed)
        check_valid(g, M)
        assert M.cardinality == int((np.asarray(M.mate) >= 0).sum()) // 2


@settings(max_examples=80, deadline=None)
@given(graphs(), st.sampled_from(RATINGS))
def test_suitor_and_ld_equal_greedy(g, rating):
    ref = reference_greedy(g, rating)
    assert np.array_equal(suitor(g, rating=rating).mate, ref)
    assert np.array_equal(locally_dominant(g, rating=rating).mate, ref)


def test_suitor_and_ld_equal_greedy_all_equal_weights():
    # with one weight everywhere only the tie-break decides: a long chain of dependencies
    g = Graph.from_networkx(nx.grid_2d_graph(15, 17))
    ref = reference_greedy(g)
    assert np.array_equal(suitor(g).mate, ref)
    assert np.array_equal(locally_dominant(g).mate, ref)


def test_equal_to_registered_greedy():
    from matchpart.matchers import resolve
    rng = np.random.default_rng(7)
    for _ in range(5):
        n, m = 300, 1200
        g = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 4, m), n,
                             drop_self_loops=True, merge_duplicates=True)
        ref = resolve("greedy").func(g, rating="weight", seed=0, backend=g.backend).mate
        assert np.array_equal(suitor(g).mate, ref)
        assert np.array_equal(locally_dominant(g).mate, ref)


@settings(max_examples=40, deadline=None)
@given(graphs(max_n=14))
def test_half_approximation(g):
    opt = nx_max_weight(g)
    for f in HALF_APPROX:
        w = f(g).weight
        assert 2 * w >= opt - 1e-9 * max(opt, 1)
        assert w <= opt + 1e-9 * max(opt, 1)


def test_registry_entries():
    from matchpart.matchers import describe
    for name, weighted, backends, serial in [("suitor", True, ("cpu", "gpu"), False),
                                             ("locally_dominant", True, ("cpu", "gpu"), False),
                                             ("karp_sipser", False, ("cpu", "gpu"), False),
                                             ("gpa", True, ("cpu",), True)]:
        info = describe(name)
        assert (info.weighted, info.backends, info.serial) == (weighted, backends, serial)
        assert info.paper and info.description


def test_rounds_stats_track_progress():
    g = Graph.from_networkx(nx.random_regular_graph(3, 200, seed=1))
    for f in (suitor, locally_dominant, karp_sipser):
        M = f(g)
        frac = M.stats["matched_fraction"]
        assert len(frac) == M.stats["rounds"] >= 1
        assert frac[-1] == pytest.approx(2 * M.cardinality / g.n)


# ---- karp-sipser ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(12))
def test_karp_sipser_optimal_on_trees(seed):
    n = 5 + 37 * seed
    rng = np.random.default_rng(seed)
    parent = np.array([rng.integers(0, v) for v in range(1, n)])  # random recursive tree
    g = Graph.from_edges(np.arange(1, n), parent, n=n)
    M = karp_sipser(g, seed=seed)
    check_valid(g, M)
    assert M.stats["random_rounds"] == 0  # a forest always has a degree-one vertex
    assert M.cardinality == len(nx.max_weight_matching(g.to_networkx(), maxcardinality=True, weight=None))


def test_karp_sipser_near_maximum_on_bipartite():
    rng = np.random.default_rng(3)
    nl, nr, m = 400, 400, 1000
    B = sp.csr_matrix((np.ones(m), (rng.integers(0, nl, m), rng.integers(0, nr, m))), shape=(nl, nr))
    B.data[:] = 1
    best = int((maximum_bipartite_matching(B, perm_type="column") >= 0).sum())
    A = sp.bmat([[None, B], [B.T, None]]).tocsr()
    g = Graph.from_scipy(A)
    M = karp_sipser(g, seed=0)
    check_valid(g, M)
    # maximality alone guarantees 1/2; Karp-Sipser is far better on sparse random graphs
    assert M.cardinality <= best
    assert M.cardinality >= 0.95 * best


@pytest.mark.parametrize("name", ["jazz.graph", "celegans_metabolic.graph", "rgg2d.graph"])
def test_karp_sipser_near_maximum_on_shared_graphs(name):
    g = load_shared(name)
    best = len(nx.max_weight_matching(g.to_networkx(), maxcardinality=True, weight=None))
    M = karp_sipser(g, seed=0)
    check_valid(g, M)
    # measured 0.94 (celegans_metabolic), 0.98 (jazz), 0.96 (rgg2d); serial Karp-Sipser is within 2% of these
    assert 0.92 * best <= M.cardinality <= best


def test_karp_sipser_ignores_weights_and_depends_on_seed_only():
    g = Graph.from_networkx(nx.random_regular_graph(3, 300, seed=2))
    assert np.array_equal(karp_sipser(g, seed=4).mate, karp_sipser(g, seed=4).mate)


# ---- gpa --------------------------------------------------------------------------------
def test_gpa_heavier_than_greedy_on_average():
    rng = np.random.default_rng(11)
    ratios = []
    for _ in range(30):
        n, m = 200, 600
        g = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 1000, m), n,
                             drop_self_loops=True, merge_duplicates=True)
        ref = reference_greedy(g)
        rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
        greedy_w = g.ewgt[ref[rows] == g.indices].sum() // 2
        ratios.append(gpa(g).weight / greedy_w)
    assert np.mean(ratios) > 1.0
    assert min(ratios) > 0.9


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 30), st.booleans(), st.integers(0, 2**31))
def test_gpa_optimal_on_paths_and_even_cycles(n, cycle, seed):
    # the whole graph is one path / even cycle, so the dynamic program sees all of it
    rng = np.random.default_rng(seed)
    if cycle:
        n += n % 2
        n = max(n, 4)
    u = np.arange(n - 1 + cycle)
    g = Graph.from_edges(u, (u + 1) % n, rng.integers(1, 50, u.shape[0]), n)
    assert gpa(g).weight == nx_max_weight(g)


# ---- b-matching -------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(graphs(), st.integers(0, 4), st.booleans(), st.sampled_from(RATINGS))
def test_b_matching_equals_greedy(g, b, per_vertex, rating):
    if per_vertex:
        b = np.random.default_rng(b).integers(0, 4, g.n)
    B = b_matching(g, b, device="cpu", rating=rating)
    ref, w = reference_greedy_b(g, b, rating)
    assert np.array_equal(B.edges, ref)
    assert B.weight == pytest.approx(w)
    # validity: graph edges, u < v, no duplicates, degree <= b
    cap = np.broadcast_to(np.asarray(b), (g.n,))
    assert B.edges.dtype == np.int64 and (B.edges[:, 0] < B.edges[:, 1]).all()
    assert len({tuple(e) for e in B.edges.tolist()}) == B.edges.shape[0]
    A = g.to_scipy()
    assert all(A[a, c] != 0 for a, c in B.edges.tolist())
    assert (B.degrees() <= cap).all()
    assert np.array_equal(B.b, cap)


def test_b_matching_one_equals_suitor():
    g = Graph.from_networkx(nx.random_regular_graph(4, 100, seed=5))
    M = suitor(g)
    B = b_matching(g, 1, device="cpu")
    assert {tuple(e) for e in B.edges.tolist()} == {tuple(e) for e in M.pairs().tolist()}
    assert B.weight == M.weight


def test_b_matching_accepts_networkx_and_rejects_bad_b():
    G = nx.path_graph(5)
    B = b_matching(G, 2, device="cpu")
    assert B.edges.tolist() == [[0, 1], [1, 2], [2, 3], [3, 4]]
    with pytest.raises(ValueError, match="non-negative"):
        b_matching(G, -1, device="cpu")
    with pytest.raises(ValueError, match="length n=5"):
        b_matching(G, [1, 2], device="cpu")
    with pytest.raises(ValueError, match="integers"):
        b_matching(G, np.full(5, 1.5), device="cpu")


# ---- shared graphs ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["rgg2d.graph", "example_weighted.graph", "jazz.graph", "4elt.graph",
                                  "PGPgiantcompo.graph", "delaunay_n15.graph"])
def test_shared_graphs(name):
    g = load_shared(name)
    ref = reference_greedy(g)
    for f in ALL:
        check_valid(g, f(g))
    assert np.array_equal(suitor(g).mate, ref)
    assert np.array_equal(locally_dominant(g).mate, ref)
    for b in (2, 3):
        ref_b, w = reference_greedy_b(g, b)
        B = b_matching(g, b, device="cpu")
        assert np.array_equal(B.edges, ref_b) and B.weight == w


# ---- GPU portability checked on the CPU --------------------------------------------------
class _CupyDtypeBackend(Backend):
    """The CPU backend, but scatter ops refuse the dtypes cupyx.scatter_* refuses (e.g. int64)."""

    SUPPORTED = (np.int32, np.uint32, np.uint64, np.float32, np.float64)

    def __init__(self):
        super().__init__("cpu", np, sp)

    def _check(self, target):
        if target.dtype.type not in self.SUPPORTED:
            raise TypeError(f"cupyx scatter does not support {target.dtype}")

    def scatter_min(self, target, index, values):
        self._check(target)
        return super().scatter_min(target, index, values)

    def scatter_max(self, target, index, values):
        self._check(target)
        return super().scatter_max(target, index, values)

    def scatter_add(self, target, index, values):
        self._check(target)
        return super().scatter_add(target, index, values)


def test_scatter_dtypes_are_ones_cupy_supports(monkeypatch):
    from matchpart.matchers import b_suitor as b_suitor_module
    from matchpart.matchers import suitor as suitor_module
    for module in (suitor_module, b_suitor_module):  # the whole-array rounds, not the CPU kernels
        monkeypatch.setattr(module, "CPU_KERNEL", False)
    strict = _CupyDtypeBackend()
    rng = np.random.default_rng(9)
    n, m = 300, 1000
    g = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 4, m), n,
                         drop_self_loops=True, merge_duplicates=True)
    gs = Graph._trusted(g.indptr, g.indices, g.ewgt, g.vwgt, strict)
    for f in (suitor, locally_dominant, karp_sipser):
        assert np.array_equal(f(gs, seed=1).mate, f(g, seed=1).mate)
    assert np.array_equal(b_matching(gs, 2, device=strict).edges, b_matching(g, 2, device="cpu").edges)


# ---- GPU == CPU -------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("rating", ["weight", "expansion_star2"])
def test_gpu_equals_cpu(rating):
    rng = np.random.default_rng(2)
    n, m = 3000, 12000
    for w in (rng.integers(1, 5, m), np.ones(m, dtype=np.int64)):
        g = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), w, n, vwgt=rng.integers(1, 3, n),
                             drop_self_loops=True, merge_duplicates=True)
        gg = g.to("gpu")
        for f in (suitor, locally_dominant, karp_sipser):
            cpu = f(g, rating=rating, seed=3)
            gpu = f(gg, rating=rating, seed=3)
            assert np.array_equal(cpu.mate, gpu.to_host()), f.__name__
            assert cpu.stats["rounds"] == gpu.stats["rounds"]
        for b in (1, 3):
            bc = b_matching(g, b, device="cpu", rating=rating)
            bg = b_matching(g, b, device="gpu", rating=rating)
            assert np.array_equal(bc.edges, bg.edges) and bc.weight == bg.weight


@pytest.mark.gpu
def test_gpu_shared_graph():
    g = load_shared("delaunay_n15.graph")
    gg = g.to("gpu")
    ref = reference_greedy(g)
    assert np.array_equal(suitor(gg).to_host(), ref)
    assert np.array_equal(locally_dominant(gg).to_host(), ref)
    M = karp_sipser(gg)
    check_valid(gg, M)
    assert np.array_equal(M.to_host(), karp_sipser(g).mate)
    # gpa is CPU-only: given a GPU graph it runs on a host copy and returns mate on the GPU
    G = gpa(gg)
    assert not isinstance(G.mate, np.ndarray)
    assert np.array_equal(G.to_host(), gpa(g).mate)
