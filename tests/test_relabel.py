"""Degree-bucket relabelling (matchpart/relabel.py): the order against a plain sort, the
relabelled graph against SciPy's permutation, the compiled rows == the whole-array form (on
threads in tiny chunks too), and partition() on a power-law graph answers for the original
vertices."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import backend, metrics, relabel, threads
from matchpart.graph import Graph


def _random_graph(seed, n, p, float_weights):
    rng = np.random.default_rng(seed)
    a = np.triu(rng.random((n, n)) < p * rng.random(n)[:, None] * 2, 1)   # uneven degrees
    u, v = np.nonzero(a)
    w = rng.random(u.shape[0]) + 0.5 if float_weights else rng.integers(1, 9, size=u.shape[0])
    return Graph.from_edges(u, v, w, n, vwgt=rng.integers(1, 4, size=n))


def _reference_order(g):
    bits = [int(d).bit_length() for d in np.diff(g.indptr)]
    return np.array(sorted(range(g.n), key=lambda v: (-bits[v], v)), dtype=np.int64)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 90), p=st.floats(0.0, 0.4), float_weights=st.booleans(),
       chunk=st.integers(1, 30))
def test_relabelled_graph_is_scipys_permutation_and_kernel_equals_whole_array(seed, n, p, float_weights, chunk):
    g = _random_graph(seed, n, p, float_weights)
    order = relabel.degree_order(g)
    assert np.array_equal(order, _reference_order(g))
    saved = threads.CHUNK, threads.PARALLEL_MIN_ITEMS
    threads.CHUNK, threads.PARALLEL_MIN_ITEMS = chunk, 0       # the threaded path, in tiny chunks
    try:
        h = relabel.relabel(g, order)
    finally:
        threads.CHUNK, threads.PARALLEL_MIN_ITEMS = saved
    a = g.to_scipy()
    b = a[order][:, order].tocsr()
    b.sort_indices()
    assert np.array_equal(h.indptr, b.indptr) and np.array_equal(h.indices, b.indices)
    assert np.array_equal(h.ewgt, b.data) and np.array_equal(h.vwgt, g.vwgt[order])
    assert h.indices.dtype == g.indices.dtype and h.ewgt.dtype == g.ewgt.dtype
    indptr, indices, ewgt = relabel._relabel_xp(backend.get("cpu"), g.indptr, g.indices, g.ewgt, order)
    assert np.array_equal(indptr, h.indptr) and np.array_equal(indices, h.indices)
    assert np.array_equal(ewgt, h.ewgt) and indices.dtype == h.indices.dtype
    # relabelled once, a graph is in bucket order: relabelling again changes nothing
    assert np.array_equal(relabel.degree_order(h), np.arange(n))
    parts = np.random.default_rng(seed).integers(0, 4, size=n)
    assert np.array_equal(relabel.restore(parts[order], order), parts)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 120), p=st.floats(0.05, 0.6), runs=st.integers(1, 80),
       float_weights=st.booleans())
def test_rows_sorted_by_runs_equal_scipys_permutation(seed, n, p, runs, float_weights):
    # an order made of ``runs`` increasing runs (relabel.RUNS_MAX or fewer: rows sorted by
    # counting per run; more: by comparisons), every row long enough for either path
    g = _random_graph(seed, n, p, float_weights)
    rng = np.random.default_rng(seed)
    group = rng.integers(0, runs, size=n)
    order = np.concatenate([np.flatnonzero(group == r) for r in range(runs)]).astype(np.int64)
    assert relabel.increasing_runs(order).shape[0] - 1 <= runs
    h = relabel.relabel(g, order)
    b = g.to_scipy()[order][:, order].tocsr()
    b.sort_indices()
    assert np.array_equal(h.indptr, b.indptr) and np.array_equal(h.indices, b.indices)
    assert np.array_equal(h.ewgt, b.data)


def test_increasing_runs():
    assert relabel.increasing_runs(np.array([3, 5, 0, 1, 4, 2], dtype=np.int64)).tolist() == [0, 2, 5, 6]
    assert relabel.increasing_runs(np.arange(4, dtype=np.int64)).tolist() == [0, 4]


def test_only_big_heavy_tailed_graphs_are_relabelled():
    assert not relabel.skewed(matchpart.generate("rmat:12"))          # too small
    assert relabel.power_law(matchpart.generate("rmat:12"))           # ... but heavy-tailed
    assert not relabel.power_law(matchpart.generate("delaunay:4096"))
    assert relabel.skewed(matchpart.generate("rmat:17:8"))
    assert not relabel.skewed(matchpart.generate("delaunay:140000"))  # no hubs
    assert not relabel.skewed(matchpart.generate("er:140000:8"))


@pytest.fixture
def small_threshold(monkeypatch):
    monkeypatch.setattr(relabel, "RELABEL_MIN_VERTICES", 500)


@pytest.mark.parametrize("preset", ["fast", "default"])
def test_partition_of_a_power_law_graph_is_for_the_original_vertices(small_threshold, preset):
    g = matchpart.generate("rmat:11:8")
    assert relabel.skewed(g)
    r = matchpart.partition(g, 8, preset=preset, seed=3)
    assert r.feasible and r.cut == metrics.edge_cut(g, r.parts)
    assert np.array_equal(r.block_weights, metrics.block_weights(g, r.parts, 8))
    # the same run as on the relabelled graph (which is already in order), mapped back
    order = relabel.degree_order(g)
    h = matchpart.partition(relabel.relabel(g, order), 8, preset=preset, seed=3)
    assert np.array_equal(relabel.restore(h.parts, order), r.parts) and h.cut == r.cut


def test_networkx_labels_map_to_the_original_vertices(small_threshold, monkeypatch):
    import networkx as nx
    monkeypatch.setattr(relabel, "RELABEL_MIN_SKEW", 4)
    G = nx.barabasi_albert_graph(800, 2, seed=1)
    G = nx.relabel_nodes(G, {v: f"v{v}" for v in G})
    assert relabel.skewed(matchpart.io.as_graph(G))
    r = matchpart.partition(G, 4, seed=2)
    cut = sum(1 for u, v in G.edges if r.mapping[u] != r.mapping[v])
    assert r.cut == cut and r.feasible


@pytest.mark.gpu
def test_relabelling_on_the_gpu_equals_the_cpu(small_threshold):
    g = matchpart.generate("rmat:11:8")
    d = g.to("gpu")
    to_host = backend.get("gpu").to_host
    order = relabel.degree_order(d)
    assert np.array_equal(to_host(order), relabel.degree_order(g))
    h, hd = relabel.relabel(g, relabel.degree_order(g)), relabel.relabel(d, order)
    for name in ("indptr", "indices", "ewgt", "vwgt"):
        assert np.array_equal(to_host(getattr(hd, name)), getattr(h, name)), name
    cpu = matchpart.partition(g, 4, preset="fast", seed=1, device="cpu")
    gpu = matchpart.partition(g, 4, preset="fast", seed=1, device="gpu")
    assert np.array_equal(gpu.parts, cpu.parts) and gpu.cut == cpu.cut   # integer weights: exact
