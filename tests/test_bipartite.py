"""Tests for the exact maximum bipartite matching (APFB / APsB) against SciPy and brute force."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_matching

import matchpart
from matchpart.matchers.bipartite import maximum_bipartite_matching

METHODS = ["apfb", "apsb"]


def scipy_cardinality(B):
    return int((scipy_matching(sp.csr_matrix(B), perm_type="column") >= 0).sum())


def assert_valid(B, match):
    """Length r, each column used once, every pair a nonzero of B."""
    B = sp.csr_matrix(B)
    B.eliminate_zeros()
    assert match.dtype == np.int64
    assert match.shape == (B.shape[0],)
    assert ((match >= -1) & (match < B.shape[1])).all()
    rows = np.flatnonzero(match >= 0)
    cols = match[rows]
    assert np.unique(cols).shape[0] == cols.shape[0], "a column is matched twice"
    coo = B.tocoo()
    nonzeros = set(zip(coo.row.tolist(), coo.col.tolist()))
    assert all(pair in nonzeros for pair in zip(rows.tolist(), cols.tolist())), \
        "a matched pair is not a nonzero of B"


def random_matrix(seed, r, c, density):
    rng = np.random.default_rng(seed)
    dense = rng.random((r, c)) < density
    # sometimes force whole empty rows / columns
    if r and rng.random() < 0.3:
        dense[rng.integers(0, r)] = False
    if c and rng.random() < 0.3:
        dense[:, rng.integers(0, c)] = False
    return sp.csr_matrix(dense.astype(np.float64))


def chain(n):
    """Rows r0..r{n-1}, columns c0..c{n-1}, edges (ri, ci) and (r{i+1}, ci).

    The perfect matching is ri-ci; the "bad" matching r{i+1}-ci (n-1 pairs) leaves c{n-1}
    and r0 unmatched, joined only by the augmenting path through the whole chain.
    """
    i = np.arange(n)
    rows = np.concatenate([i, i[:-1] + 1])
    cols = np.concatenate([i, i[:-1]])
    B = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, n))
    bad = np.full(n, -1, dtype=np.int64)
    bad[1:] = np.arange(n - 1)
    return B, bad


# ---- exactness against SciPy -------------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), r=st.integers(0, 40), c=st.integers(0, 40),
       density=st.sampled_from([0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]),
       method=st.sampled_from(METHODS), initial=st.sampled_from(["greedy", "none"]))
def test_cardinality_equals_scipy(seed, r, c, density, method, initial):
    B = random_matrix(seed, r, c, density)
    match = maximum_bipartite_matching(B, method=method, initial=initial, device="cpu")
    assert_valid(B, match)
    assert int((match >= 0).sum()) == scipy_cardinality(B)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(300, 40), (40, 300), (200, 200)]),
       avg_degree=st.sampled_from([1.0, 1.5, 2.0, 3.0]))
def test_tall_wide_sparse_near_threshold(seed, shape, avg_degree):
    # average degree around 1-3 is where greedy leaves the most work for the phases
    r, c = shape
    rng = np.random.default_rng(seed)
    nnz = int(avg_degree * max(r, c))
    B = sp.csr_matrix((np.ones(nnz), (rng.integers(0, r, nnz), rng.integers(0, c, nnz))), shape=shape)
    for method in METHODS:
        match = maximum_bipartite_matching(B, method=method, device="cpu")
        assert_valid(B, match)
        assert int((match >= 0).sum()) == scipy_cardinality(B)


def brute_force_cardinality(dense):
    r, c = dense.shape
    best = 0
    for k in range(min(r, c), 0, -1):
        for rows in itertools.combinations(range(r), k):
            for cols in itertools.permutations(range(c), k):
                if all(dense[i, j] for i, j in zip(rows, cols)):
                    return k
    return best


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), r=st.integers(0, 4), c=st.integers(0, 4),
       method=st.sampled_from(METHODS))
def test_tiny_against_brute_force(seed, r, c, method):
    dense = np.random.default_rng(seed).random((r, c)) < 0.4
    match = maximum_bipartite_matching(dense, method=method)
    assert_valid(dense.astype(float), match)
    assert int((match >= 0).sum()) == brute_force_cardinality(dense)


# ---- structured hard cases -----------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [2, 7, 200])
def test_chain_needs_one_long_augmenting_path(method, n):
    B, bad = chain(n)
    match, stats = maximum_bipartite_matching(B, method=method, initial=bad, return_stats=True)
    assert_valid(B, match)
    assert (match == np.arange(n)).all()          # the only perfect matching
    assert stats["initial_cardinality"] == n - 1
    assert stats["phases"] == 2                   # one augmentation, then a BFS that finds none
    assert stats["bfs_levels"][0] == n            # the path visits every column


@pytest.mark.parametrize("method", METHODS)
def test_permuted_chains_from_bad_start(method):
    # several chains, rows and columns shuffled: many long paths found in parallel
    rng = np.random.default_rng(7)
    blocks, bads = zip(*(chain(n) for n in (50, 80, 13, 1, 120)))
    B = sp.block_diag(blocks, format="csr")
    offsets = np.cumsum([0] + [b.shape[1] for b in blocks[:-1]])
    bad = np.concatenate([np.where(b >= 0, b + o, -1) for b, o in zip(bads, offsets)])
    pr, pc = rng.permutation(B.shape[0]), rng.permutation(B.shape[1])
    Bp = B[pr][:, pc]
    inv_c = np.argsort(pc)
    bad_p = np.where(bad[pr] >= 0, inv_c[np.maximum(bad[pr], 0)], -1)
    match = maximum_bipartite_matching(Bp, method=method, initial=bad_p)
    assert_valid(Bp, match)
    assert int((match >= 0).sum()) == B.shape[0]


@pytest.mark.parametrize("method", METHODS)
def test_shared_tree_with_many_path_ends(method):
    # One unmatched column whose BFS tree reaches many unmatched rows at once: APFB starts a
    # walk from each and they collide on the shared columns (FIXMATCHING must clean up).
    # Column 0 -> rows 1..k (all matched to columns 1..k) -> every column i also reaches
    # unmatched rows k+1.. (shared), so many path ends hang off one root.
    k = 30
    rows, cols = [], []
    for i in range(1, k + 1):
        rows += [i, i]
        cols += [0, i]            # column 0 and column i both see row i
        for extra in range(k + 1, 2 * k + 1):
            if (i + extra) % 3 == 0:
                rows.append(extra)
                cols.append(i)
    B = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(2 * k + 1, k + 1))
    start = np.full(2 * k + 1, -1, dtype=np.int64)
    start[1:k + 1] = np.arange(1, k + 1)
    match = maximum_bipartite_matching(B, method=method, initial=start)
    assert_valid(B, match)
    assert int((match >= 0).sum()) == scipy_cardinality(B) == k + 1


def test_greedy_start_is_a_valid_matching_and_phases_finish_it():
    rng = np.random.default_rng(3)
    n, nnz = 3000, 6000
    B = sp.csr_matrix((np.ones(nnz), (rng.integers(0, n, nnz), rng.integers(0, n, nnz))), shape=(n, n))
    for method in METHODS:
        match, stats = maximum_bipartite_matching(B, method=method, return_stats=True)
        assert_valid(B, match)
        assert stats["cardinality"] == scipy_cardinality(B)
        assert 0 < stats["initial_cardinality"] <= stats["cardinality"]
        assert stats["bfs_levels"][-1] >= 1 or stats["cardinality"] == stats["initial_cardinality"]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 300), avg_degree=st.sampled_from([1.0, 2.0, 4.0]))
def test_apsb_augments_along_shortest_paths_only(seed, n, avg_degree):
    # Augmenting along vertex-disjoint shortest paths never shortens the shortest augmenting
    # path, so the BFS depth of APsB's successful phases never decreases.
    rng = np.random.default_rng(seed)
    nnz = int(avg_degree * n)
    B = sp.csr_matrix((np.ones(nnz), (rng.integers(0, n, nnz), rng.integers(0, n, nnz))), shape=(n, n))
    match, stats = maximum_bipartite_matching(B, method="apsb", initial="none", return_stats=True)
    depths = stats["bfs_levels"][:-1]
    assert depths == sorted(depths)
    assert stats["phases"] == len(stats["bfs_levels"])
    assert stats["cardinality"] == scipy_cardinality(B)


def test_gpu_style_expansion_matches_cpu():
    # _expand's GPU branch (searchsorted instead of repeat) run with numpy arrays
    from matchpart.backend import Backend, get
    from matchpart.matchers.bipartite import _expand
    ptr = np.array([0, 3, 3, 5, 9, 10], dtype=np.int64)
    verts = np.array([4, 0, 1, 3], dtype=np.int64)
    cpu_pos, cpu_owner = _expand(get("cpu"), ptr, verts)
    gpu_pos, gpu_owner = _expand(Backend("gpu", np, sp), ptr, verts)
    assert cpu_pos.tolist() == gpu_pos.tolist() == [9, 0, 1, 2, 5, 6, 7, 8]
    assert cpu_owner.tolist() == gpu_owner.tolist() == [4, 0, 0, 0, 3, 3, 3, 3]


# ---- inputs ---------------------------------------------------------------------------

def test_accepts_dense_lists_and_sparse_formats():
    dense = [[1, 0, 1], [1, 0, 0], [0, 0, 0], [0, 1, 1]]
    expected = 3
    for B in (dense, np.array(dense, dtype=bool), sp.coo_matrix(dense), sp.csc_array(np.array(dense)),
              sp.lil_matrix(dense)):
        match = maximum_bipartite_matching(B)
        assert int((match >= 0).sum()) == expected
        assert_valid(np.array(dense), match)


def test_explicit_zeros_are_not_edges():
    B = sp.csr_matrix((np.array([0.0, 1.0]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    match = maximum_bipartite_matching(B)
    assert match.tolist() == [-1, 1]


def test_empty_shapes():
    assert maximum_bipartite_matching(sp.csr_matrix((0, 5))).shape == (0,)
    assert maximum_bipartite_matching(sp.csr_matrix((4, 0))).tolist() == [-1] * 4
    assert maximum_bipartite_matching(np.zeros((3, 3))).tolist() == [-1] * 3


def test_top_level_name():
    assert matchpart.maximum_bipartite_matching is maximum_bipartite_matching


@pytest.mark.parametrize("bad, message", [
    (np.ones(3), "2-d"),
    (np.ones((2, 2, 2)), "2-d"),
    (np.array([["a", "b"]]), "numeric"),
])
def test_rejects_bad_matrices(bad, message):
    with pytest.raises(ValueError, match=message):
        maximum_bipartite_matching(bad)


def test_rejects_bad_options_and_initial_matchings():
    B = sp.csr_matrix(np.eye(3))
    with pytest.raises(ValueError, match="method"):
        maximum_bipartite_matching(B, method="hk")
    with pytest.raises(ValueError, match="initial"):
        maximum_bipartite_matching(B, initial="karp_sipser")
    with pytest.raises(ValueError, match="length 3"):
        maximum_bipartite_matching(B, initial=np.array([0, 1]))
    with pytest.raises(ValueError, match="more than one row"):
        maximum_bipartite_matching(np.ones((3, 3)), initial=np.array([0, 0, -1]))
    with pytest.raises(ValueError, match="not a nonzero"):
        maximum_bipartite_matching(B, initial=np.array([1, -1, -1]))
    with pytest.raises(ValueError, match="outside"):
        maximum_bipartite_matching(B, initial=np.array([3, -1, -1]))


# ---- GPU ------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("method", METHODS)
def test_gpu_equals_cpu(method):
    rng = np.random.default_rng(11)
    for r, c, nnz in [(500, 400, 900), (2000, 2000, 5000), (300, 3000, 4000)]:
        B = sp.csr_matrix((np.ones(nnz), (rng.integers(0, r, nnz), rng.integers(0, c, nnz))), shape=(r, c))
        cpu = maximum_bipartite_matching(B, method=method, device="cpu")
        gpu = maximum_bipartite_matching(B, method=method, device="gpu")
        assert_valid(B, gpu)
        assert int((gpu >= 0).sum()) == int((cpu >= 0).sum()) == scipy_cardinality(B)
        # every race is resolved by a scatter-min, so the matchings themselves agree
        assert (gpu == cpu).all()


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["csr_matrix", "csc_matrix"])
def test_gpu_accepts_cupyx_matrix(fmt):
    # cupyx.scipy.sparse on a GPU, the stand-in's device matrices without one: the input
    # path (a device matrix, device="auto" picks the GPU) is the same
    from matchpart import backend
    csp = backend.get("gpu").sparse
    B, bad = chain(64)
    match, stats = maximum_bipartite_matching(getattr(csp, fmt)(B), initial=bad, return_stats=True)
    assert isinstance(match, np.ndarray)
    assert (match == np.arange(64)).all()
    assert stats == maximum_bipartite_matching(B, initial=bad, device="cpu", return_stats=True)[1]
