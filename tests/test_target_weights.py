"""Per-block target weights (METIS's tpwgts) and float weights end to end."""
import math
import warnings

import networkx as nx
import numpy as np
import pytest

import matchpart
from matchpart import metrics
from matchpart.initial import bisection_bounds


def test_block_bounds_formula():
    b = metrics.block_bounds(1000, 4, 0.03, [0.1, 0.2, 0.3, 0.4])
    assert b.tolist() == [math.floor(1.03 * 100), math.floor(1.03 * 200), math.floor(1.03 * 300),
                          math.floor(1.03 * 400)]
    assert metrics.block_bounds(1000, 4, 0.03).tolist() == [metrics.max_block_weight(1000, 4, 0.03)] * 4
    assert metrics.block_bounds(8, 4, 0.0, [0.25] * 4).tolist() == [2, 2, 2, 2]   # no float round-up
    f = metrics.block_bounds(10.0, 2, 0.1, [0.5, 0.5])
    assert f.dtype == np.float64 and np.allclose(f, [5.5, 5.5])


@pytest.mark.parametrize("bad, why", [([0.5, 0.5], "one fraction per block"), ([0.5, 0.6, -0.1], ">= 0"),
                                      ([0.3, 0.3, 0.3], "sum to 1"), (["a", 1, 2], "numbers")])
def test_bad_target_weights_are_refused(bad, why):
    with pytest.raises(ValueError, match=why):
        matchpart.partition("grid:10x10", 3, target_weights=bad)


@pytest.mark.parametrize("targets", [[0.1, 0.2, 0.3, 0.4], [0.5, 0.125, 0.125, 0.125, 0.125], [0.7, 0.3]])
def test_partition_meets_per_block_bounds(targets):
    g = matchpart.load_graph("delaunay:3000")
    k = len(targets)
    r = matchpart.partition(g, k, target_weights=targets)
    bounds = metrics.block_bounds(g.total_vwgt, k, 0.03, targets)
    assert r.feasible and (r.block_weights <= bounds).all()
    assert np.array_equal(r.max_block_weight, bounds)
    # blocks end near their targets, not all equal
    assert (r.block_weights >= 0.8 * np.asarray(targets) * g.total_vwgt).all()
    assert r.imbalance <= 0.03 + 1e-12
    assert r.cut == metrics.edge_cut(g, r.parts)


def test_bisection_bounds_with_targets_reduce_to_the_equal_case():
    eq = bisection_bounds(100.0, 2, 3, 22.0, 0.01)
    same = bisection_bounds(100.0, 2, 3, np.full(5, 22.0), 0.01, targets=np.full(5, 0.2))
    assert np.allclose(eq, same)
    skew = bisection_bounds(100.0, 1, 2, np.array([70.0, 20.0, 20.0]), 0.01, targets=np.array([0.6, 0.2, 0.2]))
    assert np.allclose(skew, [70.0, min(40.0 * 1.01, 40.0)])


def test_float_weights_end_to_end_with_targets():
    G = nx.random_geometric_graph(400, 0.09, seed=3)
    rng = np.random.default_rng(3)
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.random() + 0.1)
    for u in G.nodes:
        G.nodes[u]["w"] = float(rng.random() * 2 + 0.5)
    t = [0.4, 0.2, 0.2, 0.2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = matchpart.partition(G, 4, node_weight="w", target_weights=t)
    W = sum(d["w"] for _, d in G.nodes(data=True))
    bounds = metrics.block_bounds(W, 4, 0.03, t)
    assert r.feasible and (r.block_weights <= bounds + 1e-9).all()
    cut = sum(d["weight"] for u, v, d in G.edges(data=True) if r.mapping[u] != r.mapping[v])
    assert r.cut == pytest.approx(cut)


@pytest.mark.gpu
def test_gpu_path_meets_per_block_bounds():
    g = matchpart.load_graph("delaunay:2000")
    t = [0.1, 0.2, 0.3, 0.4]
    r = matchpart.partition(g, 4, target_weights=t, device="gpu", preset="fast")
    assert r.feasible and (r.block_weights <= metrics.block_bounds(g.total_vwgt, 4, 0.03, t)).all()

