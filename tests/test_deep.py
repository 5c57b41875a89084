"""Tests for matchpart.deep: the bisection tree's frontiers, their bounds, recursive bisection
continued from a frontier, and deep multilevel partitions (balance, every block, threads)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import matchpart
from matchpart import deep, metrics
from matchpart.bisection_levels import recursive_bisection
from matchpart.graph import Graph
from matchpart.refine.state import host_arrays

NONE = np.empty(0, dtype=np.int64)


def tree_nodes(k):
    """{depth: sorted [(first, ks)]} of recursive bisection's tree, built by the split rule
    written out here (the left child takes ks // 2 blocks), one-block leaves kept below."""
    out, level, depth = {}, [(0, k)], 0
    while True:
        out[depth] = sorted(level)
        if all(ks == 1 for _, ks in level):
            return out
        level = [child for first, ks in level
                 for child in (((first, ks // 2), (first + ks // 2, ks - ks // 2)) if ks > 1 else ((first, ks),))]
        depth += 1


@given(k=st.integers(1, 300))
@settings(max_examples=60, deadline=None)
def test_frontiers_are_the_levels_of_the_bisection_tree(k):
    nodes = tree_nodes(k)
    assert max(nodes) == deep.full_depth(k)
    for depth, expected in nodes.items():
        fr = deep.frontier(k, depth)
        assert list(zip(fr.first.tolist(), fr.ks.tolist())) == expected
        assert fr.size == deep.frontier_size(k, depth) <= 2 ** depth
        # consecutive ranges covering the k blocks
        assert fr.first[0] == 0 and np.array_equal(fr.first[1:], (fr.first + fr.ks)[:-1]) and fr.ks.sum() == k
        # a node's own depth: the splits that made it (a leaf stops splitting)
        assert (fr.node_depth <= depth).all() and (fr.node_depth[fr.ks > 1] == depth).all()
    assert (deep.frontier(k, deep.full_depth(k)).ks == 1).all()


def test_depth_for_is_the_deepest_frontier_with_room():
    k, per_block = 1000, 20
    depths = [deep.depth_for(n, k, per_block, finest=False) for n in (1, 40, 79, 80, 160, 5000, 10**6)]
    assert depths[:4] == [1, 1, 1, 2] and depths == sorted(depths)
    assert depths[-1] == deep.full_depth(k)
    for n, d in zip((160, 5000), depths[4:6]):
        assert deep.frontier_size(k, d) * per_block <= n < deep.frontier_size(k, d + 1) * per_block
    assert deep.depth_for(3, k, per_block, finest=True) == deep.full_depth(k)


def test_node_bounds_give_leaves_their_bound_and_nodes_their_share():
    k, total, eps = 11, 1000, 0.03
    bounds = metrics.block_bounds(total, k, eps)
    eps_level = (1 + eps) ** (1 / deep.full_depth(k)) - 1
    for depth in range(deep.full_depth(k) + 1):
        fr = deep.frontier(k, depth)
        nb = deep.node_bounds(fr, total, bounds, eps_level, np.ones(k))
        assert nb.dtype == np.int64
        leaves = fr.ks == 1
        assert np.array_equal(nb[leaves], bounds[fr.first[leaves]])
        share = total * fr.ks / k
        assert (nb[~leaves] >= np.floor(share[~leaves])).all()
        assert (nb <= np.add.reduceat(bounds, fr.first)).all()
    # target weights: a node's share is the sum of its blocks' targets
    targets = np.arange(1, k + 1, dtype=np.float64)
    fr = deep.frontier(k, 1)
    nb = deep.node_bounds(fr, 1000.0, metrics.block_bounds(1000.0, k, eps, targets / targets.sum()),
                          eps_level, targets)
    assert nb[0] < nb[1] and nb.dtype == np.float64


@pytest.mark.parametrize("spec,k,weighted", [("delaunay:3000", 12, False), ("delaunay:3000", 37, True),
                                             ("ba:1500:3", 20, False)])
def test_recursive_bisection_continued_from_a_frontier_is_the_same_as_in_one_call(spec, k, weighted):
    # every item's generator is seeded by its node (first, ks) and hierarchy: stopping at a
    # depth and starting again from that frontier's nodes makes the same splits
    g = matchpart.load_graph(spec)
    if weighted:
        g = Graph(g.indptr, g.indices, ewgt=g.ewgt, vwgt=np.arange(g.n) % 5 + 1)
    arrays = host_arrays(g)
    maxw = metrics.block_bounds(g.total_vwgt, k, 0.03).astype(np.float64)
    eps_level = 1.03 ** (1 / deep.full_depth(k)) - 1
    args = (maxw, np.ones(k), eps_level, 7, 2, 2, 2)
    whole = recursive_bisection(*arrays, *args, NONE, NONE, -1)
    assert sorted(set(whole.tolist())) == list(range(k))
    for depth in (1, 2, 3):
        fr = deep.frontier(k, depth)
        partial = recursive_bisection(*arrays, *args, NONE, NONE, depth)
        assert set(partial.tolist()) <= set(fr.first.tolist())
        for first, ks in zip(fr.first, fr.ks):      # each node holds the vertices of its blocks
            assert np.array_equal(partial == first, (whole >= first) & (whole < first + ks))
        start_ks = np.zeros(k, dtype=np.int64)
        start_ks[fr.first] = fr.ks
        assert np.array_equal(recursive_bisection(*arrays, *args, partial, start_ks, -1), whole)
        one_more = recursive_bisection(*arrays, *args, partial, start_ks, 1)
        assert np.array_equal(one_more, recursive_bisection(*arrays, *args, NONE, NONE, depth + 1))


@pytest.mark.parametrize("spec", ["rgg:20000", "rmat:13", "ba:20000:4"])
def test_deep_partitions_are_balanced_use_every_block_and_cut_like_the_flat_pipeline(spec, monkeypatch):
    k = 300                                   # above DEEP_MIN_K and not a power of two
    g = matchpart.load_graph(spec)
    assert deep.applies(g, k)
    r = matchpart.partition(g, k, seed=3, threads=2)
    assert r.feasible and r.cut == metrics.edge_cut(g, r.parts)
    assert np.array_equal(np.unique(r.parts), np.arange(k))
    monkeypatch.setattr(deep, "DEEP_MIN_K", 10**9)
    monkeypatch.setattr(deep, "DEEP_MIN_K_DENSE_POWER_LAW", 10**9)
    flat = matchpart.partition(g, k, seed=3, threads=2)
    assert r.cut <= 1.05 * flat.cut
    assert not np.array_equal(r.parts, flat.parts)


def test_deep_runs_on_clustered_and_heavy_tailed_graphs_with_many_blocks():
    rgg, mesh, rmat = (matchpart.load_graph(s) for s in ("rgg:3000", "delaunay:3000", "rmat:12"))
    k = deep.DEEP_MIN_K
    assert deep.applies(rgg, k) and deep.applies(rmat, k) and not deep.applies(rgg, k - 1)
    assert not deep.applies(mesh, k) and deep.applies(mesh, k, coarsening="cluster")
    assert not deep.applies(rgg, k, cluster_fallback=False) and deep.applies(rmat, k, cluster_fallback=False)
    # dense heavy-tailed graphs from fewer blocks on; the others wait for DEEP_MIN_K
    few = deep.DEEP_MIN_K_DENSE_POWER_LAW
    assert deep.applies(rmat, few) and not deep.applies(rmat, few - 1)
    assert not deep.applies(rmat, few, cluster_fallback=False) and not deep.applies(rgg, few)


def test_deep_partitions_keep_target_weights_and_tiny_graphs():
    k = deep.DEEP_MIN_K + 3
    targets = np.arange(1, k + 1, dtype=np.float64)
    targets /= targets.sum()
    g = matchpart.load_graph("rgg:30000")
    r = matchpart.partition(g, k, target_weights=targets, seed=1)
    assert r.feasible
    assert (metrics.block_weights(g, r.parts, k) <= metrics.block_bounds(g.total_vwgt, k, 0.03, targets)).all()
    # about one vertex per block (bound 2): the coarsest graph is the input, every level splits
    small = matchpart.partition("grid:12x12", k, coarsening="cluster")
    assert small.feasible and np.bincount(small.parts, minlength=k).max() <= 2


def test_deep_partitions_are_the_same_for_1_to_4_threads():
    from test_threads import assert_same_digest_for_1_to_4_threads, partition_digest_script
    assert_same_digest_for_1_to_4_threads(partition_digest_script(
        "", '[matchpart.load_graph("rgg:4000"), float_weighted("rgg:4000"), matchpart.load_graph("rmat:11")]',
        [deep.DEEP_MIN_K + 5]))


@pytest.mark.gpu
@pytest.mark.parametrize("spec,k", [("rgg:3000", 130), ("rmat:12", 40)])
def test_deep_partitions_on_the_gpu_are_the_cpus(spec, k):
    # integer weights: the levels' splits run on a host copy, the refiners as the flat pipeline's
    g = matchpart.load_graph(spec)
    assert deep.applies(g, k)
    cpu = matchpart.partition(g, k, seed=1, device="cpu")
    gpu = matchpart.partition(g, k, seed=1, device="gpu")
    assert gpu.feasible and np.array_equal(gpu.parts, cpu.parts) and gpu.cut == cpu.cut


def test_deep_progress_names_each_levels_blocks():
    steps = []
    k = deep.DEEP_MIN_K + 2
    matchpart.partition("rgg:5000", k, progress=steps.append)
    assert steps[1].startswith("deep multilevel from ")
    counts = [int(s.split(" in ")[1].split(" of ")[0]) for s in steps if s.startswith("refining level")]
    assert len(counts) >= 2 and counts == sorted(counts) and counts[0] < k and counts[-1] == k
    assert steps[-1].startswith("refining level 0 (5000 vertices) in ")


@st.composite
def weighted_graphs(draw):
    """Random graphs (often disconnected, isolated vertices): unit, integer or float weights."""
    n = draw(st.integers(2, 150))
    p = draw(st.floats(0.0, 0.3))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    a, b = np.triu_indices(n, 1)
    keep = rng.random(a.shape[0]) < p
    a, b = a[keep], b[keep]
    kind = draw(st.sampled_from(["unit", "int", "float"]))
    if kind == "float":
        return Graph.from_edges(a, b, rng.uniform(0.5, 3.0, a.shape[0]), n=n, vwgt=rng.uniform(0.5, 2.0, n))
    if kind == "int":
        return Graph.from_edges(a, b, rng.integers(1, 6, a.shape[0]), n=n, vwgt=rng.integers(1, 4, n))
    return Graph.from_edges(a, b, np.ones(a.shape[0], dtype=np.int64), n=n)


@settings(max_examples=40, deadline=None)
@given(g=weighted_graphs(), k=st.integers(2, 40), seed=st.integers(0, 1000),
       preset=st.sampled_from(["fast", "default"]))
def test_deep_runs_on_random_graphs_are_complete_and_balanced(g, k, seed, preset):
    # deep forced on every graph and k (coarsening="cluster", DEEP_MIN_K = 2): the result keeps
    # the flat pipeline's contract; with unit weights a balanced partition always exists
    k = min(k, g.n)
    keep = deep.DEEP_MIN_K
    deep.DEEP_MIN_K = 2
    try:
        r = matchpart.partition(g, k, seed=seed, preset=preset, coarsening="cluster", device="cpu")
    finally:
        deep.DEEP_MIN_K = keep
    assert r.parts.shape == (g.n,) and r.parts.min() >= 0 and r.parts.max() < k
    assert r.cut == pytest.approx(metrics.edge_cut(g, r.parts), rel=1e-9)
    lmax = metrics.max_block_weight(g.total_vwgt, k, 0.03)
    assert r.feasible == bool((metrics.block_weights(g, r.parts, k) <= lmax).all())
    if np.all(np.asarray(g.vwgt) == 1):
        assert r.feasible


def test_the_packing_fallback_starts_from_the_runs_partition():
    # an overloaded 2-way split of a grid (the left 20 columns of 32, 5% over Lmax): packed
    # from it, the fallback keeps most vertices where they were, balanced
    from matchpart.pipeline import _packing_fallback
    from matchpart.presets import PRESETS
    g = matchpart.load_graph("grid:32x32")
    lmax = metrics.max_block_weight(g.total_vwgt, 2, 0.03)
    parts = (np.arange(g.n) % 32 >= 18).astype(np.int64)
    assert metrics.block_weights(g, parts, 2).max() > lmax
    out = _packing_fallback(g, 2, lmax, PRESETS["default"], 0, parts)
    assert metrics.block_weights(g, out, 2).max() <= lmax
    assert (out == parts).mean() >= 0.9 and metrics.edge_cut(g, out) <= 2 * 32


@pytest.mark.gpu
def test_deep_partitions_on_the_gpu_with_float_weights_are_balanced():
    # float sums may order differently on the device: balanced and near the CPU's cut
    g = matchpart.load_graph("rgg:3000")
    src = np.repeat(np.arange(g.n), np.diff(g.indptr))
    w = np.random.default_rng(5).random(g.indices.shape[0]) + 0.5
    w = (w + w[np.lexsort((src, g.indices))]) / 2          # symmetric
    fg = Graph(g.indptr, g.indices, ewgt=w, vwgt=g.vwgt)
    cpu = matchpart.partition(fg, 130, seed=1, device="cpu")
    gpu = matchpart.partition(fg, 130, seed=1, device="gpu")
    assert cpu.feasible and gpu.feasible
    assert gpu.cut == pytest.approx(metrics.edge_cut(fg, gpu.parts), rel=1e-9)
    assert gpu.cut <= 1.05 * cpu.cut
