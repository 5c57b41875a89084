"""Tests of matchpart.generators: sizes, validity, determinism, spec parsing."""
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import connected_components

from matchpart import generators
from matchpart.generators import ba, delaunay, er, from_spec, generate, grid, rgg, rmat
from matchpart.graph import Graph


def revalidate(g):
    """Rebuild through the validating constructor: symmetric, sorted, no loops, no duplicates."""
    return Graph(g.indptr, g.indices, g.ewgt, g.vwgt)


def same(a, b):
    return a.indptr.tolist() == b.indptr.tolist() and a.indices.tolist() == b.indices.tolist()


def test_grid_matches_networkx():
    for shape in [(3, 4), (1, 5), (2, 3, 4)]:
        g = grid("x".join(map(str, shape)))
        G = nx.grid_graph(dim=list(reversed(shape)))  # networkx orders dims the other way round
        assert g.n == G.number_of_nodes() and g.m == G.number_of_edges()
        H = nx.convert_node_labels_to_integers(G, ordering="sorted")
        assert nx.is_isomorphic(g.to_networkx(), H)
    g = grid((3, 4))
    assert g.neighbors(5).tolist() == [1, 4, 6, 9]  # row-major ids


def test_delaunay_is_planar_triangulation():
    g = delaunay(500, seed=1)
    revalidate(g)
    assert g.n == 500
    # a planar triangulation of n points with h hull points has 3n - 3 - h edges
    assert 2 * 500 < g.m <= 3 * 500 - 6
    assert nx.check_planarity(g.to_networkx())[0]
    assert connected_components(g.to_scipy())[0] == 1


def test_rgg_edges_are_short():
    n = 400
    g = rgg(n, seed=2)
    revalidate(g)
    pts = np.random.default_rng(2).random((n, 2))
    r = generators.RGG_RADIUS_FACTOR * np.sqrt(np.log(n) / n)
    d = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    want = int(((d < r) & (np.triu(np.ones((n, n)), 1) > 0)).sum())
    assert g.m == want  # exactly the pairs closer than r (brute force)


def test_er_edge_count_and_uniformity():
    n, avg = 2000, 6
    g = er(n, avg, seed=3)
    revalidate(g)
    expected = n * avg / 2
    assert abs(g.m - expected) < 5 * np.sqrt(expected)
    # degrees are Binomial(n-1, p): mean avg, variance about avg
    deg = g.degree
    assert abs(deg.mean() - avg) < 0.3 and abs(deg.var() - avg) < 1.5
    # pair decoding covers the whole triangle: the dense case gives the complete graph
    full = er(30, 29, seed=0)
    assert full.m == 30 * 29 // 2
    assert er(1, 3).n == 1 and er(10, 0).m == 0


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 60), st.floats(0.1, 10), st.integers(0, 1000))
def test_er_always_valid(n, avg, seed):
    g = er(n, avg, seed)
    revalidate(g)
    assert g.n == n and g.m <= n * (n - 1) // 2


def test_rmat_is_skewed_and_simple():
    g = rmat(12, 8, seed=4)
    revalidate(g)
    assert g.n == 4096 and 0 < g.m <= 8 * 4096
    deg = g.degree
    assert deg.max() > 10 * deg.mean()  # heavy tail


def test_ba_matches_networkx_edge_count():
    for n, m in [(10, 1), (100, 3), (5000, 4)]:
        g = ba(n, m, seed=5)
        revalidate(g)
        want = nx.barabasi_albert_graph(n, m, seed=5).number_of_edges()
        assert g.m == want
        assert connected_components(g.to_scipy())[0] == 1
    g = ba(20000, 2, seed=0)
    assert g.degree.max() > 20 * 2  # preferential attachment makes hubs


@pytest.mark.parametrize("spec", ["delaunay:300", "rgg:300", "er:300:5", "rmat:8", "rmat:8:4", "ba:300:2",
                                  "grid:5x6", "grid:2x3x4"])
def test_specs_are_deterministic_and_seeded(spec):
    a, b = from_spec(spec), from_spec(spec)
    assert same(a, b)
    revalidate(a)
    c = from_spec(spec + ":seed=9")
    assert same(c, from_spec(spec, seed=9))
    if not spec.startswith("grid"):
        assert not same(a, c)
    assert same(generate(spec), a)


def test_spec_sizes():
    assert from_spec("grid:5x6").n == 30
    assert from_spec("grid:2x3x4").m == (1 * 3 * 4) + (2 * 2 * 4) + (2 * 3 * 3)
    assert from_spec("rmat:8").n == 256
    assert from_spec(" Delaunay:100 ").n == 100


@pytest.mark.parametrize("spec", ["", "delaunay", "delaunay:", "delaunay:abc", "delaunay:2", "delaunay:10:20",
                                  "grid:10", "grid:axb", "grid:1x2x3x4", "er:10", "er:10:x", "rmat:0", "rmat:99",
                                  "ba:10:10", "ba:10", "foo:10", "delaunay:100:seed=x", "rgg:-5"])
def test_bad_specs_list_valid_forms(spec):
    with pytest.raises(ValueError) as e:
        from_spec(spec)
    msg = str(e.value)
    assert "valid forms" in msg and "delaunay:N" in msg and "grid:AxB[xC]" in msg
    assert "\n" not in msg


def test_bad_function_arguments():
    with pytest.raises(ValueError, match="n must be"):
        delaunay(2)
    with pytest.raises(ValueError, match="m < n"):
        ba(5, 5)
    with pytest.raises(ValueError, match="avgdeg"):
        er(10, -1)
    with pytest.raises(ValueError, match="grid shape"):
        grid("3")
