"""Vertex separators, minimum covers, nested dissection, fill (matchpart.order)."""
import itertools
from array import array

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_matching

import matchpart
from matchpart import metrics
from matchpart.compat import nested_dissection
from matchpart.errors import GraphError
from matchpart.order.compress import identical_groups
from matchpart.order.cover import konig_cover, max_matching_nb, min_vertex_cover
from matchpart.order.fill import fill
from matchpart.order.flow import flow_separator
from matchpart.locality import bfs_relabel_arrays
from matchpart.order.locality import median_spread, renumber_for_locality
from matchpart.order.mindegree import halo_min_degree_order, min_degree_order
from matchpart.order.ndkernel import with_halo as _with_halo
from matchpart.order.nested import order
from matchpart.order.separator import (ml_separator_best, ml_separator_nb, separator_from_bisection,
                                       separator_from_bisection_nb, thin_separator, vertex_separator)
from matchpart.order.sepfm import side_weights

from conftest import shared_graph as shared_path


def load_shared(name):
    return matchpart.load_graph(str(shared_path(name + ".graph")))


def random_graph(n, p, seed, components=1):
    rng = np.random.default_rng(seed)
    R = sp.random(n, n, density=p, random_state=int(rng.integers(1 << 30)))
    A = ((R + R.T) != 0).astype(np.int64).tolil()
    A.setdiag(0)
    A = sp.csr_matrix(A)
    A.eliminate_zeros()
    if components > 1:
        A = sp.block_diag([A] * components, format="csr")
    return matchpart.Graph.from_scipy(A)


def assert_separator(g, labels, eps):
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    assert set(np.unique(labels)) <= {0, 1, 2}
    assert not ((labels[rows] == 0) & (labels[g.indices] == 1)).any(), "edge between side 0 and side 1"
    w = np.asarray(g.vwgt, dtype=np.float64)
    bound = 0.5 * (1 + eps) * w.sum()
    assert w[labels == 0].sum() <= bound and w[labels == 1].sum() <= bound


def dense_symbolic(g, perm):
    """nnz(L), flops of the Cholesky factor by eliminating the permuted pattern densely."""
    n = g.n
    M = g.to_scipy().toarray()[np.ix_(perm, perm)] != 0
    np.fill_diagonal(M, True)
    nnz = flops = 0
    for k in range(n):
        below = np.flatnonzero(M[k + 1:, k]) + k + 1
        M[np.ix_(below, below)] = True
        nnz += 1 + below.size
        flops += (1 + below.size) ** 2
    return nnz, flops


def assert_ordering(n, perm, iperm):
    perm, iperm = np.asarray(perm), np.asarray(iperm)
    assert sorted(perm.tolist()) == list(range(n))
    assert (iperm[perm] == np.arange(n)).all()


# ---- minimum vertex cover ---------------------------------------------------------------------
def brute_force_cover(B):
    r, c = B.shape
    edges = list(zip(*B.nonzero()))
    for size in range(r + c + 1):
        for chosen in itertools.combinations(range(r + c), size):
            s = set(chosen)
            if all(i in s or r + j in s for i, j in edges):
                return size
    return r + c


@pytest.mark.parametrize("seed", range(25))
def test_min_cover_is_a_cover_of_minimum_size(seed):
    rng = np.random.default_rng(seed)
    r, c = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    B = sp.csr_matrix((rng.random((r, c)) < 0.45).astype(np.int8))
    for method in ("apfb", "apsb"):
        rows, cols = min_vertex_cover(B, method=method, device="cpu")
        for i, j in zip(*B.nonzero()):
            assert rows[i] or cols[j]
        assert rows.sum() + cols.sum() == brute_force_cover(B)


@pytest.mark.parametrize("seed", range(10))
def test_compiled_matcher_is_maximum_and_its_cover_minimum(seed):
    rng = np.random.default_rng(seed)
    r, c = int(rng.integers(1, 60)), int(rng.integers(1, 60))
    B = sp.csr_matrix((rng.random((r, c)) < 0.08).astype(np.int8))
    ptr, adj = B.indptr.astype(np.int64), B.indices.astype(np.int64)
    lmate, rmate = max_matching_nb(r, c, ptr, adj)
    matched = np.flatnonzero(lmate >= 0)
    assert (rmate[lmate[matched]] == matched).all()
    assert all(B[i, lmate[i]] for i in matched)
    size = int((scipy_matching(B, perm_type="column") >= 0).sum())
    assert matched.size == size
    cl, cr = konig_cover(r, c, ptr, adj, lmate, rmate)
    assert cl.sum() + cr.sum() == size            # Konig: |min cover| = |max matching|
    for i, j in zip(*B.nonzero()):
        assert cl[i] or cr[j]


def test_separator_from_bisection_covers_every_cut_edge():
    g = matchpart.generate("grid:8x8")
    side = (np.arange(64) % 8 >= 4).astype(np.int64)   # columns 0-3 | 4-7: 8 cut edges
    where = separator_from_bisection(g.indptr, g.indices, side, device="cpu")
    assert_separator(g, where, eps=1.0)
    assert (where == 2).sum() == 8


# ---- separators ------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, best", [("grid:20x20", 20), ("grid:9x31", 9)])
def test_separator_of_grids_is_a_grid_line(spec, best):
    g = matchpart.generate(spec)
    r = vertex_separator(g, seed=1)
    assert_separator(g, r.labels, 0.2)
    assert r.balanced and r.weight == (r.labels == 2).sum()
    assert best <= r.weight <= best + 2


@pytest.mark.parametrize("name", ["4elt", "rgg2d", "example_weighted", "celegans_metabolic"])
def test_separator_of_shared_graphs(name):
    g = load_shared(name)
    for eps in (0.2, 0.05):
        r = vertex_separator(g, eps=eps, seed=0, method="apsb")
        assert_separator(g, r.labels, eps)
        assert r.weight == pytest.approx(float(np.asarray(g.vwgt)[r.labels == 2].sum()))
    if name == "4elt":
        assert r.weight < 120   # METIS's ordering has a top separator of ~70 vertices


def test_separator_is_deterministic_and_rejects_bad_options():
    g = matchpart.generate("delaunay:3000")
    a, b = vertex_separator(g, seed=3), vertex_separator(g, seed=3)
    assert (a.labels == b.labels).all()
    with pytest.raises(GraphError):
        vertex_separator(g, eps=-1)
    with pytest.raises(GraphError):
        vertex_separator(g, method="hopcroft")
    with pytest.raises(ValueError):
        vertex_separator(g, matcher="no_such_matcher")


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 400), st.floats(0.002, 0.05), st.integers(0, 10**6), st.integers(1, 3))
def test_compiled_separator_is_valid_on_random_graphs(n, p, seed, comps):
    g = random_graph(n, p, seed, comps)
    where = ml_separator_nb(g.indptr.astype(np.int64), g.indices, np.ones(g.indices.size, dtype=np.int64),
                            np.ones(g.n, dtype=np.int64), 0.2, 4)
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    assert not ((where[rows] == 0) & (where[g.indices] == 1)).any()
    total = g.n
    w0, w1 = (where == 0).sum(), (where == 1).sum()
    # balance is reached whenever FM can reach it; it always can once a side may hold >= 1 vertex
    assert max(w0, w1) <= 0.6 * total or g.m == 0 or n < 10


# ---- fill ------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 35), st.floats(0.0, 0.4), st.integers(0, 10**6))
def test_fill_equals_dense_symbolic_factorization(n, p, seed):
    g = random_graph(n, p, seed)
    perm = np.random.default_rng(seed).permutation(n)
    f = fill(g, perm)
    assert (f.nnz, f.flops) == dense_symbolic(g, perm)
    assert f.colcounts.sum() == f.nnz
    assert metrics.fill(g, perm).nnz == f.nnz


def test_fill_of_known_orderings():
    path = matchpart.generate("grid:1x50")
    assert fill(path, np.arange(50)).nnz == 99              # a path in order: no fill
    assert fill(path, np.arange(50)).height == 50
    star = matchpart.Graph.from_scipy(sp.csr_matrix(np.eye(6, k=1)[:, :] * 0 + np.pad(np.ones((1, 5)), ((0, 5), (1, 0)))
                                                    + np.pad(np.ones((5, 1)), ((1, 0), (0, 5)))))
    assert fill(star, [1, 2, 3, 4, 5, 0]).nnz == 11         # leaves first: no fill
    assert fill(star, [0, 1, 2, 3, 4, 5]).nnz == 21         # hub first: L is full
    with pytest.raises(GraphError):
        fill(path, np.zeros(50, dtype=np.int64))
    with pytest.raises(GraphError):
        fill(path, np.arange(49))


# ---- minimum degree and compression ----------------------------------------------------------
def test_thin_separator_cuts_a_thick_band_to_one_line():
    # a band three lines thick across a 10 x 10 grid: the smallest separator inside band and
    # boundary is one line of 10 (every path from side 0 to side 1 crosses each line)
    g = matchpart.generate("grid:10x10")
    line = np.arange(100) // 10
    where = np.where(line < 4, 0, np.where(line < 7, 2, 1)).astype(np.int64)
    assert_separator(g, where, 0.2)
    thin = thin_separator(g.indptr.astype(np.int64), g.indices, np.ones(100, dtype=np.int64), where, 60.0)
    assert_separator(g, thin, 0.2)
    assert (thin == 2).sum() == 10
    # nothing lighter within the bound: unchanged
    again = thin_separator(g.indptr.astype(np.int64), g.indices, np.ones(100, dtype=np.int64), thin, 60.0)
    assert (again == thin).all()


def test_flow_separator_straightens_a_staircase():
    # a staircase separator across a 12 x 12 grid (one step per row pair, 18+ vertices): the
    # band of 3 steps around it holds a straight column of 12, the lightest cut there
    g = matchpart.generate("grid:12x12")
    row, col = np.arange(144) // 12, np.arange(144) % 12
    edge = 4 + row // 3
    where = np.where(col < edge, 0, np.where(col == edge, 2, 1)).astype(np.int64)
    where[(col == edge - 1) & (row % 3 == 0) & (row > 0)] = 2   # the steps' corners
    assert_separator(g, where, 0.5)
    got = flow_separator(g.indptr.astype(np.int64), g.indices, np.ones(144, dtype=np.int64), where, 100.0, 3)
    assert_separator(g, got, 0.5)
    assert (got == 2).sum() == 12


@settings(max_examples=40, deadline=None)
@given(st.integers(10, 300), st.floats(0.005, 0.08), st.integers(0, 10**6), st.integers(1, 4), st.floats(0.5, 0.9))
def test_flow_separator_is_a_lighter_balanced_separator(n, p, seed, depth, share):
    g = random_graph(n, p, seed)
    rng = np.random.default_rng(seed)
    indptr = g.indptr.astype(np.int64)
    vwgt = rng.integers(1, 4, g.n).astype(np.int64)
    where = ml_separator_nb(indptr, g.indices, np.ones(g.indices.size, dtype=np.int64), vwgt, 0.3, 2)
    maxside = share * vwgt.sum()
    got = flow_separator(indptr, g.indices, vwgt, where, maxside, depth)
    rows = np.repeat(np.arange(g.n), np.diff(indptr))
    assert not ((got[rows] == 0) & (got[g.indices] == 1)).any()
    old, new = side_weights(where, vwgt), side_weights(got, vwgt)
    assert new[2] <= old[2]
    if (got != where).any():
        assert new[2] < old[2] or abs(new[0] - new[1]) < abs(old[0] - old[1])
        assert new[0] <= maxside and new[1] <= maxside


def thin_by_whole_cut(indptr, indices, vwgt, where, maxside):
    """thin_separator's reference: each candidate from the whole relabelled bisection's cut
    (separator_from_bisection_nb), as the separator was thinned before thin.py."""
    best, best_sep = where, side_weights(where, vwgt)[2]
    for s in range(2):
        side = where.copy()
        side[side == 2] = s
        cand = separator_from_bisection_nb(indptr, indices, side)
        cw = side_weights(cand, vwgt)
        if cw[2] < best_sep and cw[0] <= maxside and cw[1] <= maxside:
            best, best_sep = cand, cw[2]
    return best


@settings(max_examples=40, deadline=None)
@given(st.integers(10, 300), st.floats(0.005, 0.08), st.integers(0, 10**6), st.floats(0.0, 0.7), st.floats(0.5, 0.9))
def test_thin_separator_equals_the_whole_cut_construction(n, p, seed, thicken, share):
    # a separator thickened by random neighbours (still a separator), random vertex weights
    g = random_graph(n, p, seed)
    rng = np.random.default_rng(seed)
    indptr = g.indptr.astype(np.int64)
    vwgt = rng.integers(1, 4, g.n).astype(np.int64)
    where = ml_separator_nb(indptr, g.indices, np.ones(g.indices.size, dtype=np.int64), vwgt, 0.3, 2)
    rows = np.repeat(np.arange(g.n), np.diff(indptr))
    near = g.indices[(where[rows] == 2) & (rng.random(rows.size) < thicken)]
    where[near] = 2
    maxside = share * vwgt.sum()
    got = thin_separator(indptr, g.indices, vwgt, where, maxside)
    assert (got == thin_by_whole_cut(indptr, g.indices, vwgt, where, maxside)).all()


def test_multi_run_separators_are_valid_and_whole_runs_match_one_run():
    g = load_shared("4elt")
    args = (g.indptr.astype(np.int64), g.indices, np.ones(g.indices.size, dtype=np.int64), np.ones(g.n, dtype=np.int64))
    for runs, shared, window in ((1, 0, 0), (3, 0, 0), (3, 1, 0), (2, 2, 64), (1, 0, 1000)):
        where = ml_separator_best(*args, 0.3, 3, runs, shared, window)
        assert_separator(g, where, 0.3)
    # runs = 1 ignores the sharing; one run is the single-run kernel's, for the same generator state
    seed_numba(5)
    a = ml_separator_best(*args, 0.3, 3, 1, 2, 0)
    seed_numba(5)
    b = ml_separator_nb(*args, 0.3, 3)
    assert (a == b).all()


def seed_numba(seed):
    import numba

    @numba.njit
    def _seed(s):
        np.random.seed(s)
    _seed(seed)


def test_locality_renumbering_is_an_isomorphism():
    g = matchpart.generate("delaunay:30000")           # randomly numbered: renumbered
    indptr = g.indptr.astype(np.int64)
    assert median_spread(indptr, g.indices, 4096) > 0.05 * g.n
    old, ptr, idx, _ = bfs_relabel_arrays(indptr, g.indices, g.ewgt)
    assert sorted(old.tolist()) == list(range(g.n))
    vw = np.arange(g.n, dtype=np.int64)
    w = renumber_for_locality(indptr, g.indices, vw)[2]
    A = g.to_scipy().tocsr()
    B = A[old][:, old].tocsr()
    B.sort_indices()
    assert (ptr == B.indptr).all() and (idx == B.indices).all() and (w == old).all()
    assert median_spread(ptr, idx, 4096) < 0.05 * g.n
    assert renumber_for_locality(indptr, g.indices, vw)[3] is not None
    grid = matchpart.generate("grid:150x150")          # numbered by rows: kept
    assert renumber_for_locality(grid.indptr.astype(np.int64), grid.indices, np.ones(grid.n, dtype=np.int64))[3] is None
    perm, iperm = order(g)
    assert_ordering(g.n, perm, iperm)
    # order renumbers g to exactly B (which it keeps as numbered) and maps the numbers back
    _, iperm_b = order(matchpart.Graph.from_scipy(B))
    assert (np.asarray(iperm)[old] == np.asarray(iperm_b)).all()


def test_min_degree_gives_no_fill_on_trees():
    # exact minimum degree (no multiple elimination: delta 0) never creates fill on a tree
    def md(g):
        return halo_min_degree_order(g.indptr.astype(np.int64), g.indices, np.ones(g.n, dtype=np.int64), g.n, 0)
    g = matchpart.generate("grid:1x40")
    o = md(g)
    assert sorted(o.tolist()) == list(range(g.n))
    assert fill(g, o).nnz == 2 * g.n - 1
    rng = np.random.default_rng(0)
    parent = [int(rng.integers(0, i)) for i in range(1, 80)]
    A = sp.coo_matrix((np.ones(79), (np.arange(1, 80), parent)), shape=(80, 80))
    tree = matchpart.Graph.from_scipy(sp.csr_matrix(A + A.T))
    assert fill(tree, md(tree)).nnz == 80 + 79
    o = min_degree_order(tree.indptr.astype(np.int64), tree.indices, np.ones(80, dtype=np.int64))
    assert sorted(o.tolist()) == list(range(80))


def test_min_degree_merges_indistinguishable_vertices_without_fill():
    # a clique with a pendant path: the clique's vertices become indistinguishable and are
    # eliminated together; exact MD of a chordal graph like this one gives no fill
    A = np.zeros((9, 9), dtype=np.int64)
    A[:5, :5] = 1
    for a, b in ((4, 5), (5, 6), (6, 7), (7, 8)):
        A[a, b] = A[b, a] = 1
    np.fill_diagonal(A, 0)
    g = matchpart.Graph.from_scipy(sp.csr_matrix(A))
    for delta in (0, 1, 2):
        o = halo_min_degree_order(g.indptr.astype(np.int64), g.indices, np.ones(9, dtype=np.int64), 9, delta)
        assert sorted(o.tolist()) == list(range(9))
        if delta == 0:
            assert fill(g, o).nnz == 9 + (A.sum() // 2)


@pytest.mark.parametrize("seed", range(6))
def test_halo_counts_in_degrees_and_is_never_eliminated(seed):
    # reference: networkx-free brute force on the dense matrix: the first vertex eliminated
    # is the piece vertex of least degree counting its halo neighbours (lowest id on ties)
    g = random_graph(14, 0.3, seed)
    rng = np.random.default_rng(seed)
    piece = np.sort(rng.choice(14, size=8, replace=False)).astype(np.int64)
    local = np.full(14, -1, dtype=np.int64)
    ptr, idx, vw = _with_halo(g.indptr.astype(np.int64), g.indices, np.ones(14, dtype=np.int64), piece, local)
    assert (local == -1).all()
    M = g.to_scipy().toarray() != 0
    outside = []                                  # halo ids in order of discovery
    for v in piece:
        outside += [int(u) for u in g.indices[g.indptr[v]:g.indptr[v + 1]] if u not in piece and u not in outside]
    assert ptr.shape[0] - 1 == 8 + len(outside)
    ids = np.concatenate([piece, np.array(outside, dtype=np.int64)])
    S = sp.csr_matrix((np.ones(idx.shape[0]), idx, ptr), shape=(len(ids), len(ids))).toarray() != 0
    want = M[np.ix_(ids, ids)].copy()
    want[8:, 8:] = False                          # halo-halo edges are left out
    assert (S == want).all()
    o = halo_min_degree_order(ptr, idx, vw, 8, 0)
    assert sorted(o.tolist()) == list(range(8))
    degrees = want[:8].sum(axis=1)
    assert o[0] == int(np.flatnonzero(degrees == degrees.min())[0])


def test_compression_merges_identical_vertices_and_numbers_them_together():
    base = matchpart.generate("grid:12x12").to_scipy()
    dofs = 3                                     # three unknowns per mesh node
    A = sp.kron(base + sp.eye(144), np.ones((dofs, dofs))).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    g = matchpart.Graph.from_scipy(A)
    cmap, nc = identical_groups(g.indptr.astype(np.int64), g.indices)
    assert nc == 144 and (cmap == np.repeat(np.arange(144), dofs)).all()
    r = order(g, leaf_size=20)
    assert r.compressed_n == 144
    assert_ordering(g.n, *r)
    node_of_position = np.asarray(r.perm) // dofs
    assert (node_of_position.reshape(-1, dofs) == node_of_position[::dofs, None]).all()
    # compressing changes nothing the ordering could not do, and costs no fill
    plain = order(g, leaf_size=20, compress=False)
    assert fill(g, r.perm).nnz <= 1.15 * fill(g, plain.perm).nnz


# ---- nested dissection -----------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(st.integers(1, 600), st.floats(0.001, 0.03), st.integers(0, 10**6), st.integers(1, 3),
       st.sampled_from([4, 30, 120]))
def test_order_is_a_permutation_on_random_graphs(n, p, seed, comps, leaf):
    g = random_graph(n, p, seed, comps)
    perm, iperm = order(g, seed=seed % 1000, leaf_size=leaf)
    assert_ordering(g.n, perm, iperm)


def test_order_separators_are_numbered_last():
    g = matchpart.generate("grid:40x40")
    r = order(g, leaf_size=30)
    assert_ordering(g.n, *r)
    top = r.separators[0]
    assert top[0] == 0 and 40 <= top[2] <= 44
    last = np.asarray(r.perm)[g.n - int(top[1]):]
    labels = np.zeros(g.n, dtype=np.int64)
    labels[last] = 2
    # removing the last-numbered block splits the grid
    from scipy.sparse.csgraph import connected_components
    keep = np.flatnonzero(labels != 2)
    assert connected_components(g.to_scipy()[keep][:, keep])[0] >= 2


def test_order_beats_natural_and_is_deterministic():
    g = matchpart.generate("grid:60x60")
    a = order(g, seed=5)
    b = order(g, seed=5)
    assert (np.asarray(a.perm) == np.asarray(b.perm)).all()
    nd = fill(g, a.perm)
    natural = fill(g, np.arange(g.n))
    assert nd.nnz < 0.5 * natural.nnz and nd.flops < 0.2 * natural.flops


_THREADS_SCRIPT = r"""
import json
import numpy as np
import matchpart
specs = ["delaunay:12000", "grid:30x30x12"]   # pieces of MULTI_SEP_MIN+ (several runs) and the threads' pieces
out = {}
for t in (1, 2):
    out[t] = [np.asarray(matchpart.order(matchpart.generate(s), threads=t, seed=3).perm).tolist() for s in specs]
comps = matchpart.Graph.from_scipy(__import__("scipy.sparse", fromlist=["x"]).block_diag(
    [matchpart.generate("grid:50x50").to_scipy()] * 3, format="csr"))
same_comps = np.array_equal(matchpart.order(comps, threads=1).perm, matchpart.order(comps, threads=2).perm)
print(json.dumps({"same": out[1] == out[2], "same_comps": bool(same_comps)}))
"""


def test_order_is_the_same_for_1_and_2_threads():
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ, NUMBA_NUM_THREADS="2", PYTHONPATH=root)
    r = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], capture_output=True, text=True, env=env, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {"same": True, "same_comps": True}
    with pytest.raises(ValueError, match="threads"):
        order(matchpart.generate("grid:5x5"), threads=0)


def test_order_of_disconnected_graphs_and_empty_graph():
    g = random_graph(300, 0.01, 1, components=3)
    assert_ordering(g.n, *order(g))
    e = matchpart.Graph(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32))
    perm, iperm = order(e)
    assert len(perm) == 0 and len(iperm) == 0
    iso = matchpart.Graph(np.zeros(6, dtype=np.int64), np.zeros(0, dtype=np.int32))
    assert_ordering(5, *order(iso))


def test_order_on_a_shared_mesh_is_near_metis():
    g = load_shared("4elt")
    perm, iperm = matchpart.order(g)
    assert_ordering(g.n, perm, iperm)
    f = metrics.fill(g, perm)
    # METIS 5.1 (pymetis): nnz(L) 344654; natural order: ~5.7e6
    assert f.nnz < 1.25 * 344654


def test_compat_nested_dissection_has_pymetis_shape():
    adj = [[1, 3], [0, 2, 4], [1, 5], [0, 4], [1, 3, 5], [2, 4]]
    perm, iperm = nested_dissection(adjacency=adj)
    assert isinstance(perm, array) and isinstance(iperm, array) and perm.typecode == "q"
    assert_ordering(6, perm, iperm)
    g = matchpart.generate("grid:5x7")
    perm2, iperm2 = nested_dissection(xadj=g.indptr, adjncy=g.indices, options={"seed": 2, "ufactor": 100})
    assert_ordering(35, perm2, iperm2)
    pymetis = pytest.importorskip("pymetis")
    mp = pymetis.nested_dissection(adjacency=adj)
    assert type(mp) is tuple and len(mp) == 2
    assert [type(x) for x in mp] == [type(perm), type(iperm)] and mp[0].typecode == perm.typecode
    # same meaning: both are orderings of the same matrix whose fill fill() measures
    assert_ordering(6, *mp)
