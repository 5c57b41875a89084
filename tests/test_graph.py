"""Tests of matchpart.graph.Graph: constructors, validation, repairs, conversions."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from matchpart.errors import GraphError
from matchpart.graph import Graph
from matchpart.io import as_graph


def triangle_plus_tail():
    # 0-1-2 triangle, 2-3 tail, vertex 4 isolated
    return Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3], [1, 2, 3, 4], n=5)


def test_from_edges_basic():
    g = triangle_plus_tail()
    assert (g.n, g.m) == (5, 4)
    assert g.total_ewgt == 10 and g.total_vwgt == 5
    assert g.indptr.tolist() == [0, 2, 4, 7, 8, 8]
    assert g.indices.tolist() == [1, 2, 0, 2, 0, 1, 3, 2]
    assert g.ewgt.tolist() == [1, 3, 1, 2, 3, 2, 4, 4]
    assert g.degree.tolist() == [2, 2, 3, 1, 0]
    assert g.indices.dtype == np.int32 and g.indptr.dtype == np.int64
    assert g.ewgt.dtype == np.int64


def test_float_weights_stay_float_and_integral_floats_become_int():
    g = Graph.from_edges([0], [1], [2.5])
    assert g.ewgt.dtype == np.float64 and g.total_ewgt == 2.5
    g = Graph.from_edges([0], [1], [2.0])
    assert g.ewgt.dtype == np.int64


def test_both_directions_with_equal_weight_is_one_edge():
    g = Graph.from_edges([0, 1], [1, 0], [5, 5])
    assert g.m == 1 and g.total_ewgt == 5


@pytest.mark.parametrize("u,v,w,kw,match", [
    ([0], [0], None, {}, "self-loop"),
    ([0], [5], None, {"n": 3}, "out of range"),
    ([0], [-1], None, {"n": 3}, "out of range"),
    ([0], [1], [0], {}, "positive"),
    ([0], [1], [-2], {}, "positive"),
    ([0], [1], [np.nan], {}, "finite"),
    ([0, 1], [1, 0], [1, 2], {}, "more than once"),
])
def test_from_edges_rejects(u, v, w, kw, match):
    with pytest.raises(GraphError, match=match):
        Graph.from_edges(u, v, w, **kw)


def test_repairs():
    g = Graph.from_edges([0, 1, 1], [1, 1, 2], drop_self_loops=True)
    assert g.m == 2
    g = Graph.from_edges([0, 1], [1, 0], [1, 2], merge_duplicates=True)
    assert g.m == 1 and g.total_ewgt == 3


def test_csr_validation_errors():
    # asymmetric: 0 -> 1 without 1 -> 0
    with pytest.raises(GraphError, match="no reverse") as e:
        Graph([0, 1, 1], [1])
    assert (e.value.vertex, e.value.neighbor) == (0, 1)
    with pytest.raises(GraphError, match="out of range"):
        Graph([0, 1, 2], [1, 2])
    with pytest.raises(GraphError, match="self-loop"):
        Graph([0, 1, 1], [0])
    with pytest.raises(GraphError, match="more than once"):
        Graph([0, 2, 4], [1, 1, 0, 0])
    with pytest.raises(GraphError, match="weight"):
        Graph([0, 1, 2], [1, 0], [1, 2])
    with pytest.raises(GraphError, match="negative"):
        Graph([0, 1, 2], [1, 0], None, [1, -1])
    with pytest.raises(GraphError, match="indptr"):
        Graph([0, 3, 2], [1, 0])


def test_csr_rows_get_sorted():
    g = Graph([0, 2, 3, 4], [2, 1, 0, 0])
    assert g.indices.tolist() == [1, 2, 0, 0]


def test_immutable():
    g = triangle_plus_tail()
    with pytest.raises(AttributeError):
        g.n = 3


def test_scipy_round_trip_and_symmetrize():
    g = triangle_plus_tail()
    A = g.to_scipy()
    assert (A != A.T).nnz == 0
    h = Graph.from_scipy(A, vwgt=np.arange(1, 6))
    assert h.indices.tolist() == g.indices.tolist() and h.ewgt.tolist() == g.ewgt.tolist()
    assert h.total_vwgt == 15
    upper = sp.triu(A).tocsr()
    with pytest.raises(GraphError, match="symmetri"):
        Graph.from_scipy(upper)
    s = Graph.from_scipy(upper, symmetrize=True)
    assert s.to_scipy().toarray().tolist() == A.toarray().tolist()
    with pytest.raises(GraphError, match="self-loop"):
        Graph.from_scipy(sp.eye(3) + sp.csr_matrix(A[:3, :3]))
    assert Graph.from_scipy(sp.eye(3), drop_self_loops=True).m == 0
    with pytest.raises(GraphError, match="square"):
        Graph.from_scipy(sp.csr_matrix((2, 3)))


def test_networkx_round_trip_keeps_labels_and_weights():
    G = nx.Graph()
    G.add_node("iso", weight=3)
    G.add_edge("a", "b", weight=4)
    G.add_edge("b", "c", weight=1)
    G.nodes["a"]["weight"] = 2
    g = Graph.from_networkx(G, node_weight="weight")
    assert g.labels == ["iso", "a", "b", "c"]
    assert g.vwgt.tolist() == [3, 2, 1, 1]
    H = g.to_networkx()
    assert set(H.nodes) == set(G.nodes)
    assert H["a"]["b"]["weight"] == 4 and H["b"]["c"]["weight"] == 1
    assert H.nodes["iso"]["weight"] == 3
    with pytest.raises(GraphError, match="directed"):
        Graph.from_networkx(nx.DiGraph([(0, 1)]))


def test_as_graph_dispatch(tmp_path):
    g = triangle_plus_tail()
    assert as_graph(g) is g
    assert as_graph(g.to_scipy()).m == 4
    assert as_graph(nx.path_graph(4)).m == 3
    assert as_graph("grid:2x3").n == 6
    with pytest.raises(GraphError, match="cannot make a graph"):
        as_graph(12)


@st.composite
def random_edges(draw):
    n = draw(st.integers(1, 25))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60))
    pairs = {(min(a, b), max(a, b)) for a, b in pairs if a != b}
    weights = draw(st.lists(st.integers(1, 9), min_size=len(pairs), max_size=len(pairs)))
    return n, sorted(pairs), weights


@settings(max_examples=60, deadline=None)
@given(random_edges())
def test_hypothesis_round_trips_match_networkx(data):
    n, pairs, weights = data
    u = [a for a, _ in pairs]
    v = [b for _, b in pairs]
    g = Graph.from_edges(u, v, weights if pairs else None, n=n)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from((a, b, w) for (a, b), w in zip(pairs, weights))
    assert g.n == n and g.m == G.number_of_edges()
    assert g.total_ewgt == G.size(weight="weight")
    assert g.degree.tolist() == [G.degree[x] for x in range(n)]
    # the CSR must agree with networkx adjacency entry by entry
    A = nx.to_scipy_sparse_array(G, nodelist=range(n), weight="weight", format="csr")
    assert (abs(g.to_scipy() - A)).sum() == 0
    # and conversions round trip
    h = Graph.from_networkx(g.to_networkx())
    assert h.indices.tolist() == g.indices.tolist() and h.ewgt.tolist() == g.ewgt.tolist()
    k = Graph.from_scipy(g.to_scipy())
    assert k.indptr.tolist() == g.indptr.tolist()
    # validation agrees: rebuilding from the CSR arrays succeeds and changes nothing
    r = Graph(g.indptr, g.indices, g.ewgt, g.vwgt)
    assert r.indices.tolist() == g.indices.tolist()


def test_to_device_cpu_is_identity():
    g = triangle_plus_tail()
    assert g.to("cpu") is g and g.device == "cpu"


def test_unvalidated_graph_gets_unit_weights_like_the_validated_one():
    import numpy as np
    from matchpart.graph import Graph
    a = Graph(np.array([0, 1, 2]), np.array([1, 0]), validate=False)
    b = Graph(np.array([0, 1, 2]), np.array([1, 0]))
    assert np.array_equal(a.ewgt, b.ewgt) and np.array_equal(a.vwgt, b.vwgt)
    assert a.total_vwgt == b.total_vwgt == 2 and a.total_ewgt == b.total_ewgt == 1
