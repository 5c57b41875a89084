"""contiguous=True holds the balance too: subtree moves (refine.subtree_moves, subtree_balance)
keep every block connected, their cut changes match a recomputation, and on graphs where a
balanced connected partition provably exists the result is both connected and balanced.
Connectivity is checked with networkx, apart from matchpart's own union-find."""
import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import metrics
from matchpart.graph import Graph
from matchpart.refine import subtree_balance, subtree_moves

from conftest import shared_graph


def _nx(g):
    G = nx.Graph()
    G.add_nodes_from(range(g.n))
    indptr, indices = np.asarray(g.indptr), np.asarray(g.indices)
    for u in range(g.n):
        G.add_edges_from((u, int(v)) for v in indices[indptr[u]:indptr[u + 1]])
    return G


def _blocks_connected(G, parts, k):
    """Every block's part of each connected component of G is connected (networkx)."""
    for comp in nx.connected_components(G):
        comp = list(comp)
        for b in np.unique(parts[comp]):
            members = [v for v in comp if parts[v] == b]
            if not nx.is_connected(G.subgraph(members)):
                return False
    return True


def _path_graph(seed, n, extra):
    """A random graph with a Hamiltonian path (a shuffled path plus random edges), weights 1..2:
    cutting the path into k runs gives a connected partition, balanced when W/k >= 10 and
    eps = 0.1 (each run filled to the bound less one weighs at least W/k)."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    eu = np.concatenate([perm[:-1], rng.integers(0, n, extra)])
    ev = np.concatenate([perm[1:], rng.integers(0, n, extra)])
    keep = eu != ev
    return Graph.from_edges(eu[keep], ev[keep], rng.integers(1, 5, int(keep.sum())), n=n,
                            vwgt=rng.integers(1, 3, n), merge_duplicates=True)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 12), per_block=st.integers(12, 40),
       density=st.floats(0.0, 3.0))
def test_connected_and_balanced_where_a_path_partition_exists(seed, k, per_block, density):
    n = k * per_block
    g = _path_graph(seed, n, int(density * n))
    r = matchpart.partition(g, k, contiguous=True, eps=0.1, seed=seed % 5)
    assert _blocks_connected(_nx(g), r.parts, k)
    assert r.feasible and metrics.is_balanced(g, r.parts, k, 0.1)
    assert r.cut == metrics.edge_cut(g, r.parts)


def _tree_and_parts(seed, n, extra, k):
    """A random connected graph and a partition whose blocks are connected (grown by BFS)."""
    rng = np.random.default_rng(seed)
    u = np.arange(1, n)
    eu = np.concatenate([u, rng.integers(0, n, extra)])
    ev = np.concatenate([rng.integers(0, u), rng.integers(0, n, extra)])
    keep = eu != ev
    g = Graph.from_edges(eu[keep], ev[keep], rng.integers(1, 4, int(keep.sum())), n=n,
                         vwgt=rng.integers(1, 4, n), merge_duplicates=True)
    parts = np.full(n, -1, dtype=np.int64)
    G = _nx(g)
    seeds = rng.choice(n, size=k, replace=False)
    frontier = [[int(s)] for s in seeds]
    parts[seeds] = np.arange(k)
    while (parts < 0).any():                   # grow the blocks in turn: each stays connected
        grew = False
        for b in range(k):
            nxt = []
            for x in frontier[b]:
                for y in G[x]:
                    if parts[y] < 0:
                        parts[y] = b
                        nxt.append(y)
                        grew = True
            frontier[b] = nxt
        assert grew
    return g, parts, G


def _subtree(parent, members, v):
    children = {x: [] for x in members}
    for x in members:
        if parent[x] >= 0:
            children[parent[x]].append(x)
    sub, stack = [], [v]
    while stack:
        x = stack.pop()
        sub.append(x)
        stack += children[x]
    return sub


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(8, 120), extra=st.integers(0, 250), k=st.integers(2, 5))
def test_each_subtree_move_keeps_blocks_connected_and_its_loss_is_exact(seed, n, extra, k):
    g, parts, G = _tree_and_parts(seed, n, extra, k)
    indptr, indices = np.asarray(g.indptr), np.asarray(g.indices)
    ewgt, vwgt = np.asarray(g.ewgt, dtype=np.float64), np.asarray(g.vwgt, dtype=np.float64)
    room = np.full(k, np.inf)
    ws = subtree_moves.workspace(parts, k)
    ints, floats = ws[0], ws[1]
    floor = np.empty(k)
    cut = metrics.edge_cut(g, parts)
    for src in range(k):
        nv, pieces = subtree_moves._forest(src, indptr, indices, vwgt, parts, ws)
        subtree_moves._edges_out(src, nv, indptr, indices, ewgt, parts, ws)
        subtree_moves._best_targets(src, nv, pieces, indptr, indices, ewgt, parts, room, np.ones(k, dtype=np.bool_),
                                    k, ws, floor)
        members = np.flatnonzero(parts == src)
        for v in members:
            to = ints[5][v]
            if to < 0:
                continue
            p = parts.copy()
            p[_subtree(ints[0], members, v)] = to
            assert _blocks_connected(G, p, k)
            assert metrics.edge_cut(g, p) - cut == pytest.approx(floats[3][v])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(8, 150), extra=st.integers(0, 300), k=st.integers(2, 6))
def test_move_subtrees_keeps_blocks_connected_and_within_room(seed, n, extra, k):
    g, parts, G = _tree_and_parts(seed, n, extra, k)
    indptr, indices = np.asarray(g.indptr), np.asarray(g.indices)
    ewgt, vwgt = np.asarray(g.ewgt, dtype=np.float64), np.asarray(g.vwgt, dtype=np.float64)
    bw = np.bincount(parts, vwgt, k)
    maxw = bw + np.random.default_rng(seed).integers(0, 30, k)         # some room everywhere
    floor = np.empty(k)
    for src in range(k):
        for need in (1.0, 10.0, np.inf):
            p, b = parts.copy(), bw.copy()
            ws = subtree_moves.workspace(p, k)
            moved = subtree_moves.move_subtrees(src, need, np.inf if need < np.inf else -1e-9, indptr, indices,
                                                ewgt, vwgt, p, b, maxw, np.ones(k, dtype=np.bool_), ws, floor)
            assert _blocks_connected(G, p, k)
            assert np.allclose(b, np.bincount(p, vwgt, k)) and (b[np.arange(k) != src] <= maxw[np.arange(k) != src]).all()
            assert moved == pytest.approx(bw[src] - b[src])
            if need == np.inf:
                assert metrics.edge_cut(g, p) <= metrics.edge_cut(g, parts)


def test_edges_out_matches_a_recomputation():
    g, parts, G = _tree_and_parts(3, 120, 200, 3)
    indptr, indices = np.asarray(g.indptr), np.asarray(g.indices)
    ewgt, vwgt = np.asarray(g.ewgt, dtype=np.float64), np.asarray(g.vwgt, dtype=np.float64)
    ws = subtree_moves.workspace(parts, 3)
    ints, floats = ws[0], ws[1]
    for src in range(3):
        nv, pieces = subtree_moves._forest(src, indptr, indices, vwgt, parts, ws)
        assert pieces == 1 and nv == int((parts == src).sum())
        subtree_moves._edges_out(src, nv, indptr, indices, ewgt, parts, ws)
        parent = ints[0]
        members = np.flatnonzero(parts == src)
        children = {v: [] for v in members}
        for v in members:
            if parent[v] >= 0:
                children[parent[v]].append(v)
        for v in members:
            sub, stack = set(), [v]
            while stack:
                x = stack.pop()
                sub.add(x)
                stack += children[x]
            want = sum(ewgt[e] for x in sub for e in range(indptr[x], indptr[x + 1])
                       if parts[indices[e]] == src and indices[e] not in sub)
            assert floats[1][v] == pytest.approx(want)
            assert floats[0][v] == pytest.approx(vwgt[list(sub)].sum())
            assert len(sub) == len(members) or nx.is_connected(G.subgraph(set(members) - sub))


@pytest.mark.parametrize("name,k", [("PGPgiantcompo.graph", 8), ("PGPgiantcompo.graph", 32),
                                    ("celegans_metabolic.graph", 32), ("example_weighted.graph", 8)])
def test_shared_graphs_that_were_unbalanced_are_now_balanced(name, k):
    g = matchpart.load_graph(str(shared_graph(name)))
    r = matchpart.partition(g, k, contiguous=True)
    assert _blocks_connected(_nx(g), r.parts, k)
    assert r.feasible and (r.block_weights <= r.max_block_weight).all()


def test_balance_subtrees_moves_whole_arms_of_a_hub():
    # a hub with 6 arms of 5 vertices in block 0 (31), block 1 one vertex joined to each
    # arm's tip; bounds 16: three whole arms must move (single-vertex moves of the connected
    # kind would take the tips one by one, at a cost of an O(n) pass each)
    arms, length = 6, 5
    n = 1 + arms * length
    eu, ev = [], []
    for a in range(arms):
        prev = 0
        for j in range(length):
            v = 1 + a * length + j
            eu.append(prev)
            ev.append(v)
            prev = v
        eu.append(prev)
        ev.append(n)
    g = Graph.from_edges(np.array(eu), np.array(ev), n=n + 1)
    parts = np.zeros(n + 1, dtype=np.int64)
    parts[n] = 1
    ok = subtree_balance.balance_subtrees(np.asarray(g.indptr), np.asarray(g.indices),
                                          np.asarray(g.ewgt, dtype=np.float64), np.ones(n + 1), parts, 2,
                                          np.array([16.0, 16.0]))
    assert ok and (np.bincount(parts, minlength=2) == 16).all()
    assert _blocks_connected(_nx(g), parts, 2)


def test_infeasible_connected_balance_is_reported():
    # a star: a block without the centre is a single leaf, so the centre's block holds
    # n - k + 1 vertices, far above the bound; the result says so (feasible False, a warning)
    n, k = 40, 4
    g = Graph.from_edges(np.zeros(n - 1, dtype=np.int64), np.arange(1, n), n=n)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = matchpart.partition(g, k, contiguous=True)
    assert not r.feasible
    assert any("connected" in str(w.message) for w in caught)
    assert _blocks_connected(_nx(g), r.parts, k)


def _brute_force_feasible(g, k, lmax):
    """Whether some partition into k blocks has every block connected and <= lmax (tiny graphs)."""
    import itertools
    G = _nx(g)
    vw = np.asarray(g.vwgt, dtype=np.float64)
    for labels in itertools.product(range(k), repeat=g.n):
        parts = np.array(labels)
        if (np.bincount(parts, vw, k) <= lmax).all() and _blocks_connected(G, parts, k):
            return True
    return False


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 8), extra=st.integers(0, 4), k=st.integers(2, 3),
       lmax=st.integers(2, 8))
def test_connected_infeasibility_proof_is_sound(seed, n, extra, k, lmax):
    from matchpart.refine.contig_bound import connected_infeasibility_proof
    rng = np.random.default_rng(seed)
    u = np.arange(1, n)
    eu = np.concatenate([u, rng.integers(0, n, extra)])
    ev = np.concatenate([rng.integers(0, u), rng.integers(0, n, extra)])
    keep = (eu != ev) & (rng.random(eu.shape[0]) < 0.9)       # sometimes disconnected
    g = Graph.from_edges(eu[keep], ev[keep], n=n, vwgt=rng.integers(1, 3, n), merge_duplicates=True)
    proof = connected_infeasibility_proof(g.indptr, g.indices, g.vwgt, k, float(lmax))
    if proof is not None:
        assert not _brute_force_feasible(g, k, float(lmax))


def test_connected_infeasibility_proof_finds_the_star_centre():
    from matchpart.refine.contig_bound import connected_infeasibility_proof
    n = 40
    g = Graph.from_edges(np.zeros(n - 1, dtype=np.int64), np.arange(1, n), n=n)
    assert "at least 37" in connected_infeasibility_proof(g.indptr, g.indices, g.vwgt, 4, 10.0)
    path = Graph.from_edges(np.arange(n - 1), np.arange(1, n), n=n)
    assert connected_infeasibility_proof(path.indptr, path.indices, path.vwgt, 4, 10.0) is None
