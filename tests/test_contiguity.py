"""Connected blocks (contiguous=True / --contig): every block's part of each connected
component is connected, balance held where the graph allows it, the cut recomputes."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import metrics
from matchpart.graph import Graph
from matchpart.refine import connected_moves, contiguity

from conftest import SHARED_GRAPHS


def test_max_pieces_per_component_counts_within_each_component():
    path = Graph.from_edges(np.arange(3), np.arange(1, 4), n=4)               # 0-1-2-3
    assert contiguity.max_pieces_per_component(path, np.array([0, 1, 0, 0])) == 2
    assert contiguity.max_pieces_per_component(path, np.array([0, 0, 1, 1])) == 1
    two = Graph.from_edges(np.array([0, 2]), np.array([1, 3]), n=4)           # 0-1 and 2-3
    assert contiguity.max_pieces_per_component(two, np.zeros(4, dtype=np.int64)) == 1
    assert contiguity.max_pieces_per_component(two, np.array([0, 1, 0, 0])) == 1


def _random_connected(seed, n, extra):
    rng = np.random.default_rng(seed)
    u = np.arange(1, n)
    v = rng.integers(0, u)                       # a random tree keeps it connected
    eu = np.concatenate([u, rng.integers(0, n, extra)])
    ev = np.concatenate([v, rng.integers(0, n, extra)])
    keep = eu != ev
    return Graph.from_edges(eu[keep], ev[keep], rng.integers(1, 4, int(keep.sum())), n=n,
                            vwgt=rng.integers(1, 3, n), merge_duplicates=True)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 300), extra=st.integers(0, 600), k=st.integers(2, 8))
def test_blocks_are_connected_on_random_connected_graphs(seed, n, extra, k):
    g = _random_connected(seed, n, extra)
    k = min(k, n)
    r = matchpart.partition(g, k, contiguous=True, eps=0.1, seed=seed % 7)
    assert metrics.pieces_per_block(g, r.parts, k).max() <= 1
    assert r.cut == metrics.edge_cut(g, r.parts)
    if r.feasible:
        assert metrics.is_balanced(g, r.parts, k, 0.1)


def test_disconnected_graphs_are_connected_within_each_component():
    g = matchpart.load_graph(str(SHARED_GRAPHS / "rgg_n_2_15_s0.graph")) if SHARED_GRAPHS.is_dir() \
        else matchpart.generate("rgg:20000")
    for k in (8, 32):
        r = matchpart.partition(g, k, contiguous=True)
        assert contiguity.max_pieces_per_component(g, r.parts) == 1 and r.feasible


@pytest.mark.parametrize("spec", ["delaunay:20000", "rgg:20000", "grid:60x60"])
def test_meshes_keep_balance_and_their_cut(spec):
    g = matchpart.load_graph(spec)
    for k in (8, 32):
        plain = matchpart.partition(g, k)
        r = matchpart.partition(g, k, contiguous=True)
        assert contiguity.max_pieces_per_component(g, r.parts) == 1 and r.feasible
        if spec != "rgg:20000":   # connected meshes; rgg:20000's small components each join one block
            assert r.cut <= 1.1 * plain.cut


def test_safe_moves_keep_a_cycle_connected():
    # a cycle of 8 in one block: no single vertex disconnects it; a path: inner vertices do
    n = 8
    cyc = Graph.from_edges(np.arange(n), (np.arange(n) + 1) % n, n=n)
    path = Graph.from_edges(np.arange(n - 1), np.arange(1, n), n=n)
    parts = np.zeros(n, dtype=np.int64)
    mark = np.zeros(n, dtype=np.int64)
    queue = np.empty(64, dtype=np.int64)
    for v in range(n):
        assert connected_moves.safe_to_leave(v, cyc.indptr, cyc.indices, parts, mark, queue, 2 * v + 1, 64)
        expect = v in (0, n - 1)
        assert connected_moves.safe_to_leave(v, path.indptr, path.indices, parts, mark, queue, 2 * v + 101, 64) == expect


def test_cli_contig_flag(tmp_path):
    from matchpart.cli import main
    out = tmp_path / "p"
    assert main(["partition", "delaunay:5000", "8", "--contig", "-o", str(out), "-q"]) == 0
    parts = np.array(out.read_text().split(), dtype=np.int64)
    g = matchpart.load_graph("delaunay:5000")
    assert metrics.pieces_per_block(g, parts, 8).max() == 1
