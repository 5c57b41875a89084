"""Size-constrained label propagation (coarsen/lp_cluster.py, coarsen/cluster.py): the compiled
kernel and the whole-array formulation agree, the result does not depend on the threads, no
cluster exceeds the cap, and coarsen() switches to clustering on power-law graphs only."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import backend, threads
from matchpart.coarsen import coarsen, contract, max_coarse_vertex_weight
from matchpart.coarsen.cluster import cluster_labels, cluster_mapping, leaf_groups
from matchpart.coarsen import hierarchy
from matchpart.coarsen.hierarchy import CLUSTER_WHEN_EDGES_KEPT
from matchpart.graph import Graph
from matchpart.io import load_graph

from conftest import shared_graph

CPU = backend.get("cpu")


class _Threaded:
    """Every parallel kernel takes its prange path in chunks of ``chunk`` vertices."""

    def __init__(self, chunk):
        self.chunk = chunk

    def __enter__(self):
        self.saved = threads.CHUNK, threads.PARALLEL_MIN_ITEMS
        threads.CHUNK, threads.PARALLEL_MIN_ITEMS = self.chunk, 0

    def __exit__(self, *exc):
        threads.CHUNK, threads.PARALLEL_MIN_ITEMS = self.saved


@st.composite
def graphs(draw, max_n=60, dyadic=False):
    """Random graphs with isolated and degree-1 vertices, integer (or dyadic float) edge
    weights: weights whose sums are exact, so any summation order gives the same sums."""
    n = draw(st.integers(1, max_n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4 * n))
    pairs = sorted({(min(a, b), max(a, b)) for a, b in pairs if a != b})
    u = np.array([p[0] for p in pairs], dtype=np.int64)
    v = np.array([p[1] for p in pairs], dtype=np.int64)
    w = np.array(draw(st.lists(st.integers(1, 4), min_size=len(pairs), max_size=len(pairs))), dtype=np.int64)
    w = w * 0.25 if dyadic else w
    vw = np.array(draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)), dtype=np.int64)
    return Graph.from_edges(u, v, w if len(pairs) else None, n, vwgt=vw)


def _within_cap(g, labels, cap):
    weight = np.bincount(labels, weights=g.vwgt, minlength=labels.max() + 1 if labels.size else 0)
    count = np.bincount(labels, minlength=weight.shape[0])
    return bool(((weight <= cap) | (count <= 1)).all())


@settings(max_examples=60, deadline=None)
@given(g=graphs(), seed=st.integers(0, 10**6), cap=st.integers(1, 30), rounds=st.integers(1, 9),
       dyadic=st.booleans())
def test_kernel_labels_equal_the_whole_array_labels(g, seed, cap, rounds, dyadic):
    if dyadic and g.m:
        g = Graph(g.indptr, g.indices, ewgt=g.ewgt * 0.25, vwgt=g.vwgt)
    kernel = cluster_labels(g, cap, seed=seed, rounds=rounds, method="kernel")
    xp = cluster_labels(g, cap, seed=seed, rounds=rounds, method="xp")
    assert np.array_equal(kernel, xp)
    assert _within_cap(g, kernel, cap)


def test_rounds_end_once_few_vertices_move_the_same_in_both_formulations():
    # power-law graphs of a few thousand vertices; a share of 5% ends some runs early there
    stopped = 0
    for spec in ("rmat:11", "ba:3000:4"):
        g = load_graph(spec)
        cap = max_coarse_vertex_weight(g, 40)
        for seed in (1, 2, 3):
            assert np.array_equal(cluster_labels(g, cap, seed=seed, method="kernel"),
                                  cluster_labels(g, cap, seed=seed, method="xp"))
            kernel = cluster_labels(g, cap, seed=seed, method="kernel", converged_share=0.05)
            assert np.array_equal(kernel, cluster_labels(g, cap, seed=seed, method="xp", converged_share=0.05))
            every = cluster_labels(g, cap, seed=seed, method="kernel", converged_share=0.0)
            assert np.array_equal(every, cluster_labels(g, cap, seed=seed, method="xp", converged_share=0.0))
            stopped += not np.array_equal(kernel, every)
            # a share above every round's moves stops after the first round
            first = cluster_labels(g, cap, seed=seed, method="kernel", converged_share=2.0)
            assert np.array_equal(first, cluster_labels(g, cap, seed=seed, rounds=1, converged_share=0.0))
    assert stopped                      # the rule did end some run early


def test_prefetching_the_labels_leaves_them_unchanged(monkeypatch):
    # graphs below PREFETCH_MIN_VERTICES never prefetch: lower the bar so these do
    from matchpart import numbering
    from matchpart.coarsen import cluster
    for spec in ("rmat:12", "ba:4000:4"):
        g = load_graph(spec)
        assert numbering.scattered_ids(g)
        cap = max_coarse_vertex_weight(g, 40)
        plain = cluster_labels(g, cap, seed=3, method="kernel")
        monkeypatch.setattr(cluster, "PREFETCH_MIN_VERTICES", 0)
        assert np.array_equal(cluster_labels(g, cap, seed=3, method="kernel"), plain)
        assert np.array_equal(cluster_labels(g, cap, seed=3, method="xp"), plain)
        monkeypatch.undo()


@settings(max_examples=25, deadline=None)
@given(g=graphs(max_n=90), seed=st.integers(0, 10**6), cap=st.integers(2, 40), chunk=st.integers(1, 20))
def test_labels_do_not_depend_on_the_threads(g, seed, cap, chunk):
    with threads.limit(1):
        serial = cluster_labels(g, cap, seed=seed)
    runs = []
    for count in (1, 2):
        with _Threaded(chunk), threads.limit(count):
            runs.append(cluster_labels(g, cap, seed=seed))
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], serial)


@settings(max_examples=40, deadline=None)
@given(g=graphs(), seed=st.integers(0, 1000), cap=st.integers(1, 25))
def test_no_cluster_or_group_exceeds_the_cap(g, seed, cap):
    labels = cluster_labels(g, cap, seed=seed)
    assert _within_cap(g, labels, cap)
    grouped = leaf_groups(g, labels, cap)
    assert _within_cap(g, grouped, cap)
    mapping, nc, _ = cluster_mapping(g, cap, seed)
    assert _within_cap(g, mapping, cap)
    assert contract(g, mapping, nc).total_vwgt == g.total_vwgt


@settings(max_examples=60, deadline=None)
@given(g=graphs(max_n=80), seed=st.integers(0, 10**6), cap=st.integers(1, 30), blocks=st.integers(0, 3),
       fractional=st.booleans(), data=st.data())
def test_compiled_grouping_and_pairing_equal_the_whole_array_steps(g, seed, cap, blocks, fractional, data):
    # cluster_host.py against cluster.py's whole-array steps (the GPU's): leaf groups (with
    # and without blocks; fractional vertex weights, whose runs split by a float sum),
    # singletons paired two hops apart, coarse ids and the stats
    if fractional:
        g = Graph(g.indptr, g.indices, ewgt=g.ewgt, vwgt=g.vwgt * 0.3)
    block = None if blocks == 0 else np.array(data.draw(st.lists(st.integers(0, blocks - 1), min_size=g.n,
                                                                 max_size=g.n)), dtype=np.int64)
    rounds = data.draw(st.integers(0, 3))      # 0: every vertex alone, so most leaves group
    kernel = cluster_mapping(g, cap, seed, rounds=rounds, block=block, method="kernel")
    xp = cluster_mapping(g, cap, seed, rounds=rounds, block=block, method="xp")
    assert np.array_equal(kernel[0], xp[0]) and kernel[1] == xp[1] and kernel[2] == xp[2]
    assert _within_cap(g, kernel[0], cap)


def test_leaf_groups_keep_blocks_apart_and_group_leaves_of_one_hub():
    # a star: leaves 1..12 of hub 0, and 8 isolated vertices in two blocks
    n = 21
    g = Graph.from_edges(np.zeros(12, dtype=np.int64), np.arange(1, 13), None, n)
    block = np.array([0] * 13 + [0, 1] * 4)
    labels = leaf_groups(g, np.arange(n), 8, block=block)
    assert _within_cap(g, labels, 8)
    assert len(np.unique(labels[1:13])) == 3          # 12 leaves of weight 1: runs of 4 (cap / 2)
    for a in range(13, n):
        for b in range(13, n):
            if labels[a] == labels[b]:
                assert block[a] == block[b]


def test_clustering_is_deterministic_and_seeded():
    g = load_graph("rmat:11")
    cap = max_coarse_vertex_weight(g, 100)
    a = cluster_mapping(g, cap, 5)[0]
    assert np.array_equal(a, cluster_mapping(g, cap, 5)[0])
    assert not np.array_equal(cluster_labels(g, cap, seed=5), cluster_labels(g, cap, seed=6))


@pytest.mark.gpu
def test_gpu_labels_and_mapping_equal_the_kernels():
    for spec in ("rmat:10", "ba:800:3", "delaunay:600"):
        g = load_graph(spec)
        gg = g.to("gpu")
        be = gg.backend
        cap = max_coarse_vertex_weight(g, 60)
        assert np.array_equal(be.to_host(cluster_labels(gg, cap, seed=3)), cluster_labels(g, cap, seed=3))
        m_gpu, nc_gpu, _ = cluster_mapping(gg, cap, 3)
        m_cpu, nc_cpu, _ = cluster_mapping(g, cap, 3)
        assert nc_gpu == nc_cpu and np.array_equal(be.to_host(m_gpu), m_cpu)


def _clustered(levels):
    return [lv.stats.get("clustered", False) for lv in levels[:-1]]


@pytest.fixture
def edges_kept_rule_alone(monkeypatch):
    # the mean-degree rule would cluster these power-law graphs from the start
    monkeypatch.setattr(hierarchy, "CLUSTER_WHEN_MEAN_DEGREE", float("inf"))


def test_power_law_levels_switch_to_clustering(edges_kept_rule_alone):
    g = load_graph("rmat:13")
    levels = coarsen(g, coarsen_to=200, seed=1)
    flags = _clustered(levels)
    assert flags[0] and all(flags)                    # the first level is redone, the rest follow
    assert levels[0].stats["matching_edges_kept"] > CLUSTER_WHEN_EDGES_KEPT
    assert levels[1].graph.m < 0.7 * g.m              # clustering removes edges
    assert not any(_clustered(coarsen(g, coarsen_to=200, seed=1, cluster_fallback=False)))
    res = matchpart.partition(g, 8, seed=1)
    assert res.feasible and res.levels[0]["clustered"]
    assert not any(lv["clustered"] for lv in matchpart.partition(g, 8, seed=1, cluster_fallback=False).levels)


@pytest.mark.parametrize("graph", ["rgg:4000", "rmat:12", "er:3000:9"])
def test_graphs_of_high_mean_degree_are_clustered_from_the_first_level(graph):
    g = load_graph(graph)
    assert 2 * g.m >= hierarchy.CLUSTER_WHEN_MEAN_DEGREE * g.n
    levels = coarsen(g, coarsen_to=100, seed=2)
    assert len(levels) > 2 and all(_clustered(levels))
    assert "matching_edges_kept" not in levels[0].stats     # no matching was computed
    assert not any(_clustered(coarsen(g, coarsen_to=100, seed=2, cluster_fallback=False)))
    on = matchpart.partition(g, 8, seed=2)
    assert on.feasible and all(lv["clustered"] for lv in on.levels[:-1])
    off = matchpart.partition(g, 8, seed=2, cluster_fallback=False)
    assert off.feasible and not any(lv["clustered"] for lv in off.levels)


@pytest.mark.parametrize("graph", ["delaunay:4000", "grid:60x60", "4elt.graph", "PGPgiantcompo.graph"])
def test_meshes_and_shared_graphs_keep_their_matchings(graph):
    g = load_graph(shared_graph(graph) if graph.endswith(".graph") else graph)
    for coarsen_to in (100, 500):
        assert not any(_clustered(coarsen(g, coarsen_to=coarsen_to, seed=2)))
    on = matchpart.partition(g, 8, seed=2)
    off = matchpart.partition(g, 8, seed=2, cluster_fallback=False)
    assert np.array_equal(on.parts, off.parts)


def test_the_estimate_skips_only_the_contraction_the_fallback_throws_away(monkeypatch, edges_kept_rule_alone):
    g = load_graph("rmat:16")                 # 2^16 vertices: enough samples for the estimate
    built = []
    real = hierarchy.contract
    monkeypatch.setattr(hierarchy, "contract", lambda graph, m, nc: built.append(nc) or real(graph, m, nc))
    levels = coarsen(g, coarsen_to=2000, seed=1)
    assert all(_clustered(levels))
    assert levels[0].stats["matching_edges_kept"] >= CLUSTER_WHEN_EDGES_KEPT + hierarchy.ESTIMATE_MARGIN
    assert built == [lv.graph.n for lv in levels[1:]]  # one contraction per level: none thrown away
    monkeypatch.setattr(hierarchy, "ESTIMATE_MIN_SAMPLES", 10**9)   # the exact test alone
    built.clear()
    exact = coarsen(g, coarsen_to=2000, seed=1)
    assert len(built) == len(exact)           # the first level's matching was contracted too
    assert [lv.graph.n for lv in exact] == [lv.graph.n for lv in levels]
    for a, b in zip(exact[:-1], levels[:-1]):
        assert np.array_equal(a.mapping, b.mapping)


@pytest.mark.gpu
def test_gpu_estimate_of_the_edges_kept_equals_the_kernels():
    from matchpart.coarsen.contract import mapping_from_matching
    from matchpart.coarsen.kept import sampled_edges_kept
    for spec in ("rmat:12", "delaunay:3000"):
        g = load_graph(spec)
        mate = matchpart.match(g, seed=2).mate
        mapping, nc = mapping_from_matching(mate, g.backend)
        gg = g.to("gpu")
        on_gpu = sampled_edges_kept(gg, gg.backend.to_device(mate), gg.backend.to_device(mapping), nc, 3)
        assert on_gpu == sampled_edges_kept(g, mate, mapping, nc, 3)
