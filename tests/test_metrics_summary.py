"""metrics.summary against brute force with networkx on small graphs."""
import networkx as nx
import numpy as np
import pytest

from matchpart import metrics
from matchpart.graph import Graph


def brute_force(G, parts, k):
    block = dict(enumerate(parts))
    foreign = {v: {block[u] for u in G[v]} - {block[v]} for v in G}
    volume = [sum(len(foreign[v]) for v in G if block[v] == b) for b in range(k)]
    pieces = [nx.number_connected_components(G.subgraph([v for v in G if block[v] == b])) for b in range(k)]
    return {
        "cut": sum(d.get("weight", 1) for u, v, d in G.edges(data=True) if block[u] != block[v]),
        "total_comm_volume": sum(volume),
        "max_comm_volume": max(volume),
        "boundary_vertices": sum(bool(foreign[v]) for v in G),
        "empty_blocks": sum(b not in set(parts) for b in range(k)),
        "pieces": pieces,
        "disconnected_blocks": sum(p > 1 for p in pieces),
    }


@pytest.mark.parametrize("seed", range(6))
def test_summary_matches_networkx(seed):
    rng = np.random.default_rng(seed)
    G = nx.gnm_random_graph(int(rng.integers(5, 40)), int(rng.integers(0, 80)), seed=seed)
    for u, v in G.edges:
        G[u][v]["weight"] = int(rng.integers(1, 5))
    k = int(rng.integers(1, 7))
    parts = rng.integers(0, k, G.number_of_nodes())
    g = Graph.from_networkx(G)
    got = metrics.summary(g, parts, k, eps=0.03)
    want = brute_force(G, parts.tolist(), k)
    for key, value in want.items():
        assert got[key] == value, key
    assert got["block_weights"] == np.bincount(parts, minlength=k).tolist()
    assert got["feasible"] == metrics.is_balanced(g, parts, k, 0.03)
    assert got["imbalance"] == pytest.approx(metrics.imbalance(g, parts, k))


def test_summary_with_target_weights():
    g = Graph.from_networkx(nx.path_graph(6))
    parts = np.array([0, 0, 0, 0, 1, 1])
    report = metrics.summary(g, parts, 2, target_weights=[2 / 3, 1 / 3])
    assert report["feasible"] and report["max_block_weight"] == [4, 2] and report["imbalance"] == 0
    assert not metrics.summary(g, parts, 2)["feasible"]  # 4 > 1.03 * 3


@pytest.mark.parametrize("weighted", ["int", "float"])
@pytest.mark.parametrize("seed", range(4))
def test_edge_cut_equals_networkx_cut_size(weighted, seed):
    rng = np.random.default_rng(seed)
    G = nx.gnm_random_graph(60, 200, seed=seed)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = int(rng.integers(1, 9)) if weighted == "int" else float(rng.random())
    parts = rng.integers(0, 5, 60)
    from matchpart.io import as_graph
    g = as_graph(G)
    cut = metrics.edge_cut(g, parts)
    ref = sum(d["weight"] for u, v, d in G.edges(data=True) if parts[u] != parts[v])
    assert isinstance(cut, int if weighted == "int" else float)
    assert cut == ref if weighted == "int" else cut == pytest.approx(ref, rel=1e-12)
