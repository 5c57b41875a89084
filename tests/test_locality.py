"""Breadth-first renumbering (matchpart/locality.py): the order against a plain search (and
networkx's distances), the compiled pass's graph against relabel.relabel, the compiled order ==
the whole-array form (and on the GPU stand-in), the level-by-level kernel == the queue for any
thread count, which graphs count as scattered, when partition() renumbers (clustered graphs,
or many blocks) and that it then answers for the original vertices."""
import collections

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import backend, locality, metrics, relabel, threads
from matchpart.graph import Graph


def _random_graph(seed, n, p):
    rng = np.random.default_rng(seed)
    u, v = np.nonzero(np.triu(rng.random((n, n)) < p, 1))
    return Graph.from_edges(u, v, rng.integers(1, 9, size=u.shape[0]), n, vwgt=rng.integers(1, 4, size=n))


def _reference_order(g):
    """A plain breadth-first search from each unreached vertex in id order, neighbours queued
    in row order; networkx checks that each component's order is by distance from its root."""
    seen, order = set(), []
    for root in range(g.n):
        if root in seen:
            continue
        seen.add(root)
        queue = collections.deque([root])
        while queue:
            v = queue.popleft()
            order.append(v)
            for u in g.indices[g.indptr[v]:g.indptr[v + 1]].tolist():
                if u not in seen:
                    seen.add(u)
                    queue.append(u)
    G = nx.from_scipy_sparse_array(g.to_scipy())
    where = {v: i for i, v in enumerate(order)}
    for comp in nx.connected_components(G):
        dist = nx.single_source_shortest_path_length(G, min(comp))
        by_place = sorted(comp, key=where.__getitem__)
        assert [dist[v] for v in by_place] == sorted(dist[v] for v in by_place)
    return np.array(order, dtype=np.int64)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 80), p=st.floats(0.0, 0.2))
def test_bfs_order_is_the_reference_order_and_kernel_equals_whole_array(seed, n, p):
    g = _random_graph(seed, n, p)
    order, h = locality.bfs_relabel(g)
    assert np.array_equal(order, _reference_order(g))
    assert np.array_equal(locality._bfs_order_xp(backend.get("cpu"), g), order)
    r = relabel.relabel(g, order)
    for name in ("indptr", "indices", "ewgt", "vwgt"):
        assert np.array_equal(getattr(h, name), getattr(r, name)), name
    assert h.indices.dtype == g.indices.dtype and h.ewgt.dtype == g.ewgt.dtype


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 120), p=st.floats(0.0, 0.15), chunk=st.integers(1, 9),
       float_weights=st.booleans())
def test_level_by_level_kernel_on_threads_equals_the_queue(seed, n, p, chunk, float_weights):
    """The level-by-level kernel (tiny chunks, every level on the threads) gives the queue's
    graph for 1 and 2 threads, and so does the public entry (the queue on one thread)."""
    g = _random_graph(seed, n, p)
    ewgt = g.ewgt + 0.25 if float_weights else g.ewgt
    args = (np.asarray(g.indptr, dtype=np.int64), g.indices, ewgt)
    expected = locality._bfs_queue_nb(*args)
    assert np.array_equal(expected[0], _reference_order(g))
    for count in (1, 2):
        with threads.limit(count):
            got = locality.bfs_levels(*args, chunk, 0)
            public = locality.bfs_relabel_arrays(*args)
        for a, b, c in zip(expected, got, public):
            assert np.array_equal(a, b) and np.array_equal(a, c) and a.dtype == b.dtype == c.dtype


@pytest.fixture
def small_threshold(monkeypatch):
    monkeypatch.setattr(relabel, "RELABEL_MIN_VERTICES", 500)


def _shuffled(g, seed=0):
    perm = np.random.default_rng(seed).permutation(g.n)
    return relabel.relabel(g, perm)


def test_only_large_scattered_graphs_count(small_threshold):
    grid = matchpart.generate("grid:40x40")
    assert not locality.scattered(grid)                     # row-major: neighbours close
    shuffled = _shuffled(grid)
    assert locality.scattered(shuffled)
    assert not locality.scattered(locality.bfs_relabel(shuffled)[1])
    assert not locality.scattered(_shuffled(matchpart.generate("grid:20x20")))   # below the threshold
    assert not locality.scattered(Graph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64),
                                                   None, 1000))


def test_partition_of_a_scattered_clustered_graph_is_for_the_original_vertices(small_threshold):
    g = _shuffled(matchpart.generate("rgg:3000"), seed=4)
    assert locality.scattered(g) and 2 * g.m >= 7 * g.n      # clustered from the first level
    said = []
    r = matchpart.partition(g, 8, seed=3, progress=said.append)
    assert any("breadth-first" in s for s in said)
    assert r.feasible and r.cut == metrics.edge_cut(g, r.parts)
    assert np.array_equal(r.block_weights, metrics.block_weights(g, r.parts, 8))
    # the same run as on the renumbered graph (already in BFS order), mapped back
    order, renumbered = locality.bfs_relabel(g)
    h = matchpart.partition(renumbered, 8, seed=3)
    assert np.array_equal(relabel.restore(h.parts, order), r.parts) and h.cut == r.cut
    # matching levels keep the numbering
    said.clear()
    matchpart.partition(g, 8, seed=3, progress=said.append, cluster_fallback=False)
    assert not any("breadth-first" in s for s in said)


def test_matching_coarsened_graphs_are_renumbered_for_many_blocks(small_threshold, monkeypatch):
    g = _shuffled(matchpart.generate("delaunay:3000"), seed=2)
    assert locality.scattered(g) and 2 * g.m < 7 * g.n       # coarsened by matching
    assert not locality.pays(g, locality.MATCHING_MIN_K - 1, False)
    assert locality.pays(g, locality.MATCHING_MIN_K, False)
    assert not locality.pays(locality.bfs_relabel(g)[1], 4096, True)     # numbered with locality
    monkeypatch.setattr(locality, "MATCHING_MIN_K", 16)
    said = []
    r = matchpart.partition(g, 16, seed=1, progress=said.append)
    assert any("breadth-first" in s for s in said)
    assert r.feasible and r.cut == metrics.edge_cut(g, r.parts)
    order, renumbered = locality.bfs_relabel(g)
    h = matchpart.partition(renumbered, 16, seed=1)
    assert np.array_equal(relabel.restore(h.parts, order), r.parts) and h.cut == r.cut
    said.clear()
    matchpart.partition(g, 15, seed=1, progress=said.append)
    assert not any("breadth-first" in s for s in said)


@pytest.mark.gpu
def test_bfs_order_on_the_gpu_equals_the_cpu(small_threshold):
    g = _shuffled(matchpart.generate("rgg:3000"), seed=4)
    d = g.to("gpu")
    assert locality.scattered(d) == locality.scattered(g)
    assert np.array_equal(backend.get("gpu").to_host(locality.bfs_order(d)), locality.bfs_order(g))
