"""Tests for partition(): completeness, balance, inputs, presets, matchers, determinism, errors."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import metrics
from matchpart.graph import Graph
from matchpart.io import load_graph
from matchpart.pipeline import PartitionResult, partition
from matchpart.presets import PRESETS, Preset, get_preset

from conftest import shared_graph


def check_result(g, res, k, eps=0.03):
    """The result's numbers agree with an independent recomputation."""
    assert isinstance(res, PartitionResult)
    parts = res.parts
    assert parts.dtype == np.int64 and parts.shape == (g.n,)
    assert parts.min() >= 0 and parts.max() < k
    A = g.to_scipy().tocoo()
    cut = A.data[parts[A.row] != parts[A.col]].sum() / 2
    assert res.cut == pytest.approx(cut, rel=1e-12)
    bw = np.bincount(parts, weights=g.vwgt, minlength=k)
    assert np.allclose(res.block_weights, bw, rtol=1e-12)
    assert res.imbalance == pytest.approx(bw.max() / np.ceil(g.total_vwgt / k) - 1)
    lmax = metrics.max_block_weight(g.total_vwgt, k, eps)
    assert res.feasible == bool((bw <= lmax).all())
    assert res.k == k and res.eps == eps


@st.composite
def random_graphs(draw):
    n = draw(st.integers(2, 60))
    p = draw(st.floats(0.02, 0.4))
    seed = draw(st.integers(0, 10**6))
    G = nx.gnp_random_graph(n, p, seed=seed)
    return Graph.from_networkx(G)


@settings(max_examples=25, deadline=None)
@given(random_graphs(), st.integers(1, 8), st.integers(0, 1000))
def test_random_graphs_complete_and_balanced(g, k, seed):
    k = min(k, g.n)
    res = partition(g, k, seed=seed, device="cpu", preset="fast")
    check_result(g, res, k)
    assert res.feasible  # unit weights: a balanced partition always exists


def test_shared_mesh_quality_and_levels():
    g = load_graph(shared_graph("4elt.graph"))
    res = partition(g, 8, device="cpu")
    check_result(g, res, 8)
    assert res.feasible
    # METIS gets 670 here (graphs README); a broken pipeline is far worse than this bound
    assert res.cut < 1.3 * 670
    assert res.levels[0]["n"] == g.n and res.levels[-1]["n"] <= PRESETS["default"].coarsen_to(8)
    assert all(b["n"] < a["n"] for a, b in zip(res.levels, res.levels[1:]))
    assert set(res.timings) == {"coarsening", "initial", "refinement", "total"}


@pytest.mark.parametrize("matcher", matchpart.matchers.available())
def test_every_registered_matcher_works_in_partition(matcher):
    g = Graph.from_networkx(nx.grid_2d_graph(24, 24))
    res = partition(g, 4, matcher=matcher, device="cpu", preset="fast", seed=1)
    check_result(g, res, 4)
    assert res.feasible
    assert res.cut <= 3 * 48  # an optimal 4-way cut of a 24x24 grid is 48


@pytest.mark.parametrize("coarsening", ["matching", "cluster"])
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_presets_and_coarsenings(preset, coarsening):
    g = load_graph(shared_graph("airfoil1.graph"))
    res = partition(g, 4, preset=preset, coarsening=coarsening, device="cpu")
    check_result(g, res, 4)
    assert res.feasible and res.cut < 1.5 * 185  # METIS: 185


def test_networkx_mapping_round_trip():
    G = nx.relabel_nodes(nx.karate_club_graph(), {i: f"v{i}" for i in range(34)})
    res = partition(G, 2, device="cpu", edge_weight=None)
    assert set(res.mapping) == set(G.nodes)
    labels = list(G.nodes)
    assert all(res.mapping[labels[i]] == res.parts[i] for i in range(34))
    cut = sum(1 for a, b in G.edges if res.mapping[a] != res.mapping[b])
    assert cut == res.cut


def test_other_inputs_scipy_and_node_weights():
    A = nx.to_scipy_sparse_array(nx.cycle_graph(20), format="csr")
    res = partition(sp.csr_matrix(A), 2, device="cpu")
    assert res.mapping is None and res.cut == 2 and res.feasible
    G = nx.path_graph(6)
    for v in G:
        G.nodes[v]["w"] = 5 if v == 0 else 1
    res = partition(G, 2, node_weight="w", device="cpu", eps=0.0)
    assert res.block_weights.tolist() == [5, 5]
    assert res.feasible and res.cut == 1


def test_k1_and_k_equals_n():
    g = Graph.from_networkx(nx.petersen_graph())
    r1 = partition(g, 1, device="cpu")
    assert (r1.parts == 0).all() and r1.cut == 0 and r1.feasible and r1.imbalance == 0
    rn = partition(g, g.n, device="cpu")
    assert sorted(rn.parts.tolist()) == list(range(g.n)) and rn.cut == g.m and rn.feasible


def test_isolated_vertices_and_disconnected_graph():
    G = nx.disjoint_union_all([nx.grid_2d_graph(8, 8), nx.complete_graph(10), nx.empty_graph(30)])
    g = Graph.from_networkx(G)
    for k in (2, 3, 8):
        res = partition(g, k, device="cpu", seed=k)
        check_result(g, res, k)
        assert res.feasible
    # two equal components and k=2: the perfect answer cuts nothing
    g2 = Graph.from_networkx(nx.disjoint_union(nx.grid_2d_graph(6, 6), nx.grid_2d_graph(6, 6)))
    assert partition(g2, 2, device="cpu").cut == 0
    only_isolated = Graph.from_edges([], [], n=40)
    res = partition(only_isolated, 4, device="cpu")
    assert res.cut == 0 and res.feasible


def test_weighted_vertices_and_edges():
    g = load_graph(shared_graph("example_weighted.graph"))
    for k in (2, 4, 8):
        res = partition(g, k, device="cpu")
        check_result(g, res, k)
        assert res.feasible


def test_infeasible_warns_and_reports():
    g = Graph.from_edges([0, 1, 2], [1, 2, 3], vwgt=[100, 1, 1, 1])
    with pytest.warns(UserWarning, match="exceeds"):
        res = partition(g, 2, device="cpu")
    assert not res.feasible
    check_result(g, res, 2)


def test_pigeonhole_infeasibility_is_explained():
    # a path of 5 vertices of weight 10, k = 4: Lmax = floor(1.03 * ceil(50 / 4)) = 13, and no
    # two vertices fit in one block, so 5 vertices need 5 blocks
    g = Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 4], n=5, vwgt=[10] * 5)
    with pytest.warns(UserWarning, match="more than Lmax/2"):
        res = partition(g, 4)
    assert not res.feasible and sorted(set(res.parts.tolist())) == [0, 1, 2, 3]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=6), st.integers(1, 3),
       st.integers(1, 15))
def test_infeasibility_proof_is_sound(vwgt, k, lmax):
    """Whenever a proof is given, brute force over all k^n assignments finds no balanced one."""
    import itertools
    vw = np.array(vwgt)
    if metrics.infeasibility_proof(vw, k, lmax) is None:
        return
    for assign in itertools.product(range(k), repeat=len(vwgt)):
        assert np.bincount(assign, weights=vw, minlength=k).max() > lmax


@pytest.mark.parametrize("k", [0, -1, 11, 2.5, "2", True, None])
def test_bad_k(k):
    g = Graph.from_networkx(nx.path_graph(10))
    with pytest.raises(ValueError, match="k must be"):
        partition(g, k)


@pytest.mark.parametrize("eps", [-0.1, float("nan"), float("inf"), "0.03", 1e308])
def test_bad_eps(eps):
    g = Graph.from_networkx(nx.path_graph(10))
    with pytest.raises(ValueError, match="eps must be"):
        partition(g, 2, eps=eps)


def test_bad_options():
    g = Graph.from_networkx(nx.path_graph(10))
    with pytest.raises(ValueError, match="preset"):
        partition(g, 2, preset="turbo")
    with pytest.raises(ValueError, match="coarsening"):
        partition(g, 2, coarsening="magic")
    with pytest.raises(ValueError, match="seed"):
        partition(g, 2, seed=-1)
    with pytest.raises(Exception, match="no_such_matcher"):
        partition(g, 2, matcher="no_such_matcher")
    with pytest.raises(ValueError, match="rating"):
        partition(g, 2, rating="bogus")
    assert get_preset(PRESETS["fast"]) is PRESETS["fast"]
    assert isinstance(get_preset("strong"), Preset)


def test_deterministic_per_seed():
    g = load_graph(shared_graph("PGPgiantcompo.graph"))
    a = partition(g, 8, seed=3, device="cpu")
    b = partition(g, 8, seed=3, device="cpu")
    assert np.array_equal(a.parts, b.parts) and a.cut == b.cut
    c = partition(g, 8, seed=4, device="cpu")
    assert c.feasible


@pytest.mark.gpu
@pytest.mark.parametrize("coarsening", ["matching", "cluster"])
def test_gpu_equals_cpu_for_integer_weights(coarsening):
    g = load_graph(shared_graph("4elt.graph"))
    cpu = partition(g, 8, seed=2, device="cpu", preset="fast", coarsening=coarsening)
    gpu = partition(g, 8, seed=2, device="gpu", preset="fast", coarsening=coarsening)
    assert gpu.feasible and cpu.feasible
    assert np.array_equal(cpu.parts, gpu.parts)
    assert cpu.cut == gpu.cut


def test_packing_kernel_is_lpt_without_bound():
    from matchpart.refine.packing import heaviest_first, pack_decreasing
    vw = np.array([5.0, 4.0, 3.0, 3.0, 3.0])
    order = heaviest_first(vw)
    empty = (np.zeros(6, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    parts, fits = pack_decreasing(*empty, vw, order, np.full(5, -1), np.zeros(2), False)
    assert not fits
    # LPT: 5 -> A, 4 -> B, 3 -> B (7), 3 -> A (8), 3 -> B (10)
    assert np.bincount(parts, weights=vw).tolist() == [8.0, 10.0]


def test_bin_packing_case_is_made_feasible():
    # about 4 heavy vertices per block: the multilevel run alone misses the bound here;
    # the packing fallback must find a balanced partition (no peer in the README does)
    g = load_graph(shared_graph("example_weighted.graph"))
    res = partition(g, 32, device="cpu")
    check_result(g, res, 32)
    assert res.feasible


@pytest.mark.parametrize("coarsening", ["matching", "cluster"])
def test_float_edge_weights_and_star(coarsening):
    G = nx.random_geometric_graph(1500, 0.06, seed=1)
    rng = np.random.default_rng(0)
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.random()) + 0.1
    res = partition(G, 8, device="cpu", coarsening=coarsening, preset="fast")
    check_result(Graph.from_networkx(G), res, 8)
    assert res.feasible and isinstance(res.cut, float)
    star = Graph.from_networkx(nx.star_graph(3000))
    res = partition(star, 4, device="cpu", coarsening=coarsening, preset="fast")
    check_result(star, res, 4)
    # optimum: the centre's block holds ceil-bound - 1 leaves, every other leaf is cut
    lmax = metrics.max_block_weight(star.total_vwgt, 4, 0.03)
    assert res.feasible and res.cut <= 3000 - (lmax - 1) + 30


def test_iterated_vcycles_never_worsen_the_cut():
    from dataclasses import replace
    g = load_graph(shared_graph("airfoil1.graph"))
    once = replace(PRESETS["fast"], cycles=1, vcycles=0)
    again = replace(once, vcycles=2)
    a = partition(g, 8, preset=once, device="cpu", seed=5)
    b = partition(g, 8, preset=again, device="cpu", seed=5)
    assert b.feasible and b.cut <= a.cut
    check_result(g, b, 8)



def test_many_blocks_refine_flat_runs_with_their_jet_settings():
    """A flat run into many_blocks_k blocks or more refines as the preset with the
    many-blocks Jet c and patience would; fewer blocks, and deep runs, keep the preset's own."""
    from dataclasses import replace

    from matchpart import deep
    base = replace(PRESETS["default"], many_blocks_k=0)
    assert PRESETS["default"].for_blocks(2047) is PRESETS["default"]
    assert PRESETS["default"].for_blocks(2048).jet_negative_gain == PRESETS["default"].many_blocks_jet_negative_gain
    assert PRESETS["fast"].for_blocks(10**6) is PRESETS["fast"]
    explicit = replace(base, jet_negative_gain=base.many_blocks_jet_negative_gain,
                       jet_patience=base.many_blocks_jet_patience)
    assert explicit != base
    g = matchpart.as_graph("delaunay:6000")
    many = partition(g, 16, preset=replace(base, many_blocks_k=16), seed=3)
    assert np.array_equal(many.parts, partition(g, 16, preset=explicit, seed=3).parts)
    check_result(g, many, 16)
    fewer = partition(g, 16, preset=replace(base, many_blocks_k=17), seed=3)
    assert np.array_equal(fewer.parts, partition(g, 16, preset=base, seed=3).parts)
    assert not np.array_equal(many.parts, fewer.parts)     # the settings reach the refiners
    heavy = matchpart.as_graph("rmat:12")
    assert deep.applies(heavy, 64)
    assert np.array_equal(partition(heavy, 64, preset=replace(base, many_blocks_k=2)).parts,
                          partition(heavy, 64, preset=base).parts)


@pytest.mark.gpu
@pytest.mark.parametrize("preset", ["default", "strong"])
def test_gpu_presets_give_complete_balanced_partitions(preset):
    g = load_graph(shared_graph("4elt.graph"))
    gpu = partition(g, 8, seed=2, device="gpu", preset=preset)
    check_result(g, gpu, 8)
    assert gpu.feasible
    cpu = partition(g, 8, seed=2, device="cpu", preset=preset)
    assert np.array_equal(cpu.parts, gpu.parts)      # the same refiners on both devices


@pytest.mark.gpu
@pytest.mark.parametrize("preset", ["fast", "default", "strong"])
def test_gpu_equals_cpu_for_every_preset_on_generated_graphs(preset):
    """Integer weights: the GPU's partition is the CPU's for every preset (the default once
    skipped FM on the GPU: delaunay 2^20 k = 32 on an H200 cut 18749 against the CPU's 18245),
    also on a mesh's dual graph, where the CPU runs localized FM rounds on every level."""
    from scipy.spatial import Delaunay
    from matchpart.mesh import dual_graph
    dual = dual_graph(Delaunay(np.random.default_rng(5).random((3000, 2))).simplices, 2)
    for g in (load_graph("delaunay:6000"), dual):
        cpu = partition(g, 16, seed=1, device="cpu", preset=preset)
        gpu = partition(g, 16, seed=1, device="gpu", preset=preset)
        assert gpu.feasible and cpu.feasible
        assert np.array_equal(cpu.parts, gpu.parts) and cpu.cut == gpu.cut


@pytest.mark.gpu
def test_gpu_weighted_networkx_input_and_every_matcher():
    G = nx.grid_2d_graph(30, 30)
    for i, (u, v) in enumerate(G.edges):
        G.edges[u, v]["weight"] = 1 + i % 5
    for matcher in ("red_blue", "karp_sipser", "suitor", "heavy_edge"):
        res = partition(G, 4, matcher=matcher, seed=1, device="gpu", preset="fast")
        assert set(res.mapping) == set(G.nodes) and res.feasible


def test_progress_is_told_every_step():
    steps = []
    matchpart.partition("delaunay:3000", 4, progress=steps.append)
    assert steps[0].startswith("coarsening 3000 vertices")
    assert any(s.startswith("initial partitioning") for s in steps)
    assert steps[-1].startswith("refining level 0 (3000 vertices)")


def test_refined_levels_skip_levels_whose_edges_barely_shrink():
    from types import SimpleNamespace
    from matchpart.uncoarsen import refined_levels
    shrink = get_preset("default").refine_edge_shrink

    def levels(ms, n=10**6):
        return [SimpleNamespace(n=n >> i, m=m) for i, m in enumerate(ms)]
    # a mesh: m halves per level, every level refined
    assert refined_levels(levels([1000, 500, 250, 120]), shrink) == [True] * 4
    # power-law: a level is refined once m fell below the fraction of the last refined one
    ms = [1000, 950, 900, 840, 800, 700]
    keep = refined_levels(levels(ms), 0.85)
    assert keep == [True, False, False, True, False, True]
    last = ms[0]
    for m, k in zip(ms[1:-1], keep[1:-1]):
        assert k == (m <= 0.85 * last)
        last = m if k else last
    assert refined_levels(levels([10]), shrink) == [True]
    assert refined_levels(levels(ms), 1.0) == [True] * len(ms)


def test_refined_levels_skip_a_large_level_above_a_stalled_coarsest_graph():
    # the last contraction kept more than coarsen.hierarchy.MIN_SHRINK of the vertices: the level above
    # the coarsest graph is skipped when large, refined when small; the others are untouched
    from types import SimpleNamespace
    from matchpart import uncoarsen
    shrink = get_preset("default").refine_edge_shrink

    def levels(ns):
        return [SimpleNamespace(n=n, m=3 * n) for n in ns]
    big = uncoarsen.STALLED_MIN_VERTICES
    assert uncoarsen.refined_levels(levels([8 * big, 4 * big, 2 * big, int(1.95 * big)]), shrink) == \
        [True, True, False, True]
    assert uncoarsen.refined_levels(levels([8 * big, 4 * big, 2 * big, int(1.6 * big)]), shrink) == [True] * 4
    small = big // 4
    assert uncoarsen.refined_levels(levels([8 * small, 4 * small, 2 * small, int(1.95 * small)]), shrink) == \
        [True] * 4
    # two levels: the finest is always refined
    assert uncoarsen.refined_levels(levels([2 * big, int(1.95 * big)]), shrink) == [True, True]


def test_refined_levels_skip_dense_coarse_levels():
    # mean degree above uncoarsen.COARSE_MAX_DEGREE: coarse levels (the coarsest too) are not
    # refined, the finest always is; a skipped level does not reset the edge-shrink reference
    from types import SimpleNamespace
    from matchpart.uncoarsen import COARSE_MAX_DEGREE, refined_levels
    dense = int(COARSE_MAX_DEGREE) + 2           # mean degree of a level of n vertices, m = dense * n / 2

    def level(n, degree):
        return SimpleNamespace(n=n, m=degree * n // 2)
    hierarchy = [level(1000, dense), level(400, dense), level(300, 8), level(100, dense)]
    assert refined_levels(hierarchy, 1.0) == [True, False, True, False]
    # level 2 has 1200 edges: against the finest's 21000 it shrank enough, against level 1's not
    assert refined_levels(hierarchy, 0.1) == [True, False, True, False]
    assert refined_levels(hierarchy, 0.05) == [True, False, False, False]


def test_power_law_partition_is_balanced_with_skipped_levels(monkeypatch):
    import matchpart.uncoarsen as uncoarsen
    picked, real = [], uncoarsen.refined_levels

    def spy(levels, edge_shrink):
        picked.append(real(levels, edge_shrink))
        return picked[-1]
    monkeypatch.setattr(uncoarsen, "refined_levels", spy)
    g = load_graph("ba:3000:4")
    res = partition(g, 8, seed=1, cluster_fallback=False)   # matching levels keep ~0.9 of the edges
    assert res.feasible and res.parts.shape == (g.n,)
    assert res.cut == metrics.edge_cut(g, res.parts)
    assert len(picked) == 1 and not all(picked[0])   # some level's edges barely shrank: not refined


def test_localized_rounds_on_large_low_degree_levels(monkeypatch):
    # the levels picked by uncoarsen.LOCALIZED_* get the localized rounds: with bounds that
    # pick every level (and the preset's search length) the default preset partitions as with
    # fm_localized on; with bounds that pick none (a degree bound below the graph's), as before
    from dataclasses import replace
    import matchpart.uncoarsen as uncoarsen
    g = load_graph("delaunay:3000")
    on = replace(PRESETS["default"], fm_localized=True)
    plain = partition(g, 8, seed=4)
    localized = partition(g, 8, seed=4, preset=on)
    assert not np.array_equal(plain.parts, localized.parts)   # else the test shows nothing
    from matchpart.refine.fm import LOCAL_STALL_MOVES
    monkeypatch.setattr(uncoarsen, "LOCALIZED_MIN_VERTICES", 0)
    monkeypatch.setattr(uncoarsen, "LOCALIZED_MAX_SHARE", 1.0)
    monkeypatch.setattr(uncoarsen, "LOCALIZED_MIN_BLOCK_VERTICES", 0)
    short = partition(g, 8, seed=4)              # shorter searches than the preset's rounds
    check_result(g, short, 8)
    monkeypatch.setattr(uncoarsen, "LOCALIZED_STALL_MOVES", LOCAL_STALL_MOVES)
    every = partition(g, 8, seed=4)
    assert np.array_equal(every.parts, localized.parts) and every.cut == localized.cut
    monkeypatch.setattr(uncoarsen, "LOCALIZED_MIN_BLOCK_VERTICES", g.n // 8 + 1)   # no level has as many a block
    assert np.array_equal(partition(g, 8, seed=4).parts, plain.parts)
    monkeypatch.setattr(uncoarsen, "LOCALIZED_MIN_BLOCK_VERTICES", 0)
    monkeypatch.setattr(uncoarsen, "LOCALIZED_MAX_DEGREE", 2.0)   # delaunay levels: ~6
    assert np.array_equal(partition(g, 8, seed=4).parts, plain.parts)
    check_result(g, every, 8)


def test_sparse_graphs_get_localized_rounds_on_every_level(monkeypatch):
    """A graph of mean degree <= uncoarsen.SPARSE_LOCALIZED_MAX_DEGREE (a mesh's dual graph)
    gets FM's short localized rounds on every refined level; delaunay (degree 6) on none of
    its small levels."""
    from matchpart import uncoarsen
    from matchpart.mesh import dual_graph
    from scipy.spatial import Delaunay
    tri = Delaunay(np.random.default_rng(3).random((3000, 2))).simplices
    dual = dual_graph(tri, 2)
    assert 2 * dual.m <= 3 * dual.n
    stalls = []
    real = uncoarsen.refine_level

    def spy(graph, parts, k, lmax, preset, seed, boundary=None, local_stall=None, *workspaces):
        stalls.append(local_stall)
        return real(graph, parts, k, lmax, preset, seed, boundary, local_stall, *workspaces)

    monkeypatch.setattr(uncoarsen, "refine_level", spy)
    res = partition(dual, 8, seed=2)
    check_result(dual, res, 8)
    assert len(stalls) > 1 and set(stalls) == {uncoarsen.SPARSE_LOCALIZED_STALL_MOVES}
    stalls.clear()
    partition(load_graph("delaunay:3000"), 8, seed=2)
    assert stalls and set(stalls) == {0}
    monkeypatch.setattr(uncoarsen, "SPARSE_LOCALIZED_MAX_DEGREE", 2.0)
    stalls.clear()
    off = partition(dual, 8, seed=2)
    assert set(stalls) == {0} and not np.array_equal(off.parts, res.parts)


def test_dense_coarse_levels_are_not_refined(monkeypatch):
    """Coarse levels of mean degree above uncoarsen.COARSE_MAX_DEGREE get no refiner; the
    finest level and the sparser coarse levels do, and the result stays balanced."""
    from matchpart import uncoarsen
    g = matchpart.generate("rmat:12:16")
    calls = []
    real = uncoarsen.refine_level

    def spy(graph, parts, k, lmax, preset, *args, **kwargs):
        calls.append((graph.n, 2 * graph.m / graph.n))
        return real(graph, parts, k, lmax, preset, *args, **kwargs)

    monkeypatch.setattr(uncoarsen, "refine_level", spy)
    monkeypatch.setattr(uncoarsen, "COARSE_MAX_DEGREE", float("inf"))
    partition(g, 8, seed=1)
    coarse = sorted(d for n, d in calls if n < g.n)
    assert len(coarse) >= 2 and coarse[0] < coarse[-1]
    threshold = (coarse[0] + coarse[-1]) / 2
    calls.clear()
    monkeypatch.setattr(uncoarsen, "COARSE_MAX_DEGREE", threshold)
    res = partition(g, 8, seed=1)
    check_result(g, res, 8)
    assert any(n == g.n for n, d in calls)
    assert all(d <= threshold for n, d in calls if n < g.n)
    assert any(n < g.n for n, d in calls)


@pytest.mark.gpu
def test_auto_partitions_where_the_graph_is(monkeypatch):
    """device="auto": a host graph runs on the CPU (faster than the GPU pipeline where both were
    measured), a graph already on the GPU stays there; the partition is the same."""
    import matchpart.pipeline as pipeline
    chosen, get = [], pipeline._backend.get

    def spy(device="auto"):
        chosen.append(device)
        return get(device)
    monkeypatch.setattr(pipeline._backend, "get", spy)
    g = load_graph("delaunay:3000")
    host = partition(g, 8, device="auto")
    assert "cpu" in chosen and "gpu" not in chosen and "auto" not in chosen
    chosen.clear()
    on_gpu = partition(g.to("gpu"), 8, device="auto")
    assert "gpu" in chosen
    assert np.array_equal(host.parts, on_gpu.parts)
