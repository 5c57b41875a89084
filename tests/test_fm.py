"""Tests for matchpart.refine.fm: k-way FM, 2-way FM and the rebalancer (cut never worse, balance kept)."""
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from matchpart import metrics
from matchpart.errors import MatchpartError
from matchpart.graph import Graph
from matchpart.refine.fm import fm_bisection, kway_fm, pairwise_fm, rebalance

from conftest import shared_graph
from test_initial import load_metis, random_graphs


def balanced_random_parts(g, k, rng):
    """A random assignment that is balanced for unit vertex weights (round robin over a permutation)."""
    return (rng.permutation(g.n) % k).astype(np.int64)


def overload(g, parts, k, lmax):
    bw = np.asarray(metrics.block_weights(g, parts, k), dtype=np.float64)
    return np.maximum(bw - lmax, 0).sum()


@settings(max_examples=60, deadline=None)
@given(g=random_graphs(max_n=60), k=st.integers(2, 7), seed=st.integers(0, 1000),
       eps=st.sampled_from([0.0, 0.03, 0.2]), localized=st.booleans())
def test_never_worse_on_any_input(g, k, seed, eps, localized):
    rng = np.random.default_rng(seed)
    parts = rng.integers(0, k, g.n)
    lmax = metrics.max_block_weight(g.total_vwgt, k, eps)
    out, stats = kway_fm(g, parts, k, lmax, seed=seed, localized=localized, return_stats=True)
    assert out.shape == (g.n,) and out.min() >= 0 and out.max() < k
    before, after = overload(g, parts, k, lmax), overload(g, out, k, lmax)
    assert after <= before + 1e-9
    if before == 0:  # balanced input: stays balanced and the cut cannot grow
        assert metrics.edge_cut(g, out) <= metrics.edge_cut(g, parts)
    # the cut the kernel tracked through every move and rollback equals the real one
    assert stats["cut"] == metrics.edge_cut(g, out)
    assert stats["initial_cut"] == metrics.edge_cut(g, parts)
    assert stats["overload"] == pytest.approx(after)


@settings(max_examples=30, deadline=None)
@given(g=random_graphs(max_n=50, float_weights=True), k=st.integers(2, 5), seed=st.integers(0, 1000))
def test_float_weights_bookkeeping(g, k, seed):
    rng = np.random.default_rng(seed)
    parts = rng.integers(0, k, g.n)
    lmax = metrics.max_block_weight(g.total_vwgt, k, 0.5)
    out, stats = kway_fm(g, parts, k, lmax, seed=seed, return_stats=True)
    assert stats["cut"] == pytest.approx(metrics.edge_cut(g, out), rel=1e-9, abs=1e-9)
    assert overload(g, out, k, lmax) <= overload(g, parts, k, lmax) + 1e-9
    if overload(g, parts, k, lmax) == 0:
        assert metrics.edge_cut(g, out) <= metrics.edge_cut(g, parts) + 1e-9


def test_input_not_modified_and_deterministic():
    g = Graph.from_networkx(nx.grid_2d_graph(15, 15))
    rng = np.random.default_rng(0)
    parts = balanced_random_parts(g, 3, rng)
    copy = parts.copy()
    lmax = metrics.max_block_weight(g.total_vwgt, 3, 0.03)
    a = kway_fm(g, parts, 3, lmax, seed=5)
    b = kway_fm(g, parts, 3, lmax, seed=5)
    assert np.array_equal(parts, copy)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("k", [2, 4])
def test_improves_random_partition_on_mesh(k):
    g = load_metis(shared_graph("4elt.graph"))
    rng = np.random.default_rng(1)
    parts = balanced_random_parts(g, k, rng)
    lmax = metrics.max_block_weight(g.total_vwgt, k, 0.03)
    out = kway_fm(g, parts, k, lmax, passes=8)
    assert metrics.is_balanced(g, out, k, 0.03)
    # a random 4-way assignment of 4elt cuts ~34000 edges; FM alone must get far below that
    assert metrics.edge_cut(g, out) < 0.1 * metrics.edge_cut(g, parts)


def test_keeps_optimum_and_finds_obvious_moves():
    # two 5-cliques joined by one edge; start from the optimum with two vertices swapped
    g = Graph.from_networkx(nx.barbell_graph(5, 0))
    opt = np.r_[np.zeros(5, np.int64), np.ones(5, np.int64)]
    assert np.array_equal(kway_fm(g, opt, 2, 5), opt)
    bad = opt.copy()
    bad[[0, 9]] = bad[[9, 0]]
    out = kway_fm(g, bad, 2, 5)
    assert metrics.edge_cut(g, out) == 1


def test_kway_reaches_local_optimum_on_grid():
    # three horizontal stripes of a 9x9 grid with a few vertices pushed across: FM repairs them
    g = Graph.from_networkx(nx.grid_2d_graph(9, 9))
    parts = (np.arange(81) // 27).astype(np.int64)
    best = metrics.edge_cut(g, parts)  # 18
    noisy = parts.copy()
    noisy[[10, 40, 60]] = [1, 2, 0]
    noisy[[30, 55, 5]] = [0, 1, 2]
    # k-way FM only moves into blocks with room, so it needs some slack (eps 0.03 would give none here)
    lmax = metrics.max_block_weight(81, 3, 0.1)
    out = kway_fm(g, noisy, 3, lmax, passes=8)
    assert metrics.edge_cut(g, out) <= best


def test_rebalances_overweight_input():
    g = Graph.from_networkx(nx.grid_2d_graph(20, 20))
    parts = np.zeros(400, np.int64)
    parts[:40] = 1
    lmax = metrics.max_block_weight(400, 4, 0.03)
    out = kway_fm(g, parts, 4, lmax)
    assert metrics.is_balanced(g, out, 4, 0.03)
    out2 = rebalance(g, parts, 4, lmax)
    assert metrics.is_balanced(g, out2, 4, 0.03)


def test_rebalance_impossible_raises():
    g = Graph.from_edges([0, 1], [1, 2], vwgt=[10, 1, 1])
    with pytest.raises(MatchpartError):
        rebalance(g, np.array([0, 0, 1]), 2, 6)


def test_per_block_bounds_and_bisection():
    g = Graph.from_networkx(nx.grid_2d_graph(10, 10))
    side = (np.arange(100) % 2).astype(np.int64)  # checkerboard-ish columns: a terrible cut
    out, cut = fm_bisection(g, side, (30, 75))
    bw = metrics.block_weights(g, out, 2)
    assert bw[0] <= 30 and bw[1] <= 75
    assert cut == metrics.edge_cut(g, out)
    assert cut < metrics.edge_cut(g, side)


@pytest.mark.parametrize("args, msg", [
    (dict(parts=np.zeros(5, np.int64)), "length"),
    (dict(parts=np.full(10, 3)), "0..k-1"),
    (dict(parts=np.zeros(10)), "integers"),
    (dict(k=0), "k must"),
    (dict(max_block_weight=np.nan), "finite"),
])
def test_bad_arguments(args, msg):
    g = Graph.from_networkx(nx.path_graph(10))
    call = dict(parts=np.zeros(10, np.int64), k=2, max_block_weight=6)
    call.update(args)
    with pytest.raises(ValueError, match=msg):
        kway_fm(g, call["parts"], call["k"], call["max_block_weight"])


def positive_feasible_moves(g, parts, k, lmax):
    """Brute force: (vertex, block, gain) of every single move with positive gain into a block with room."""
    A = g.to_scipy()
    vw = np.asarray(g.vwgt)
    bw = np.bincount(parts, weights=vw, minlength=k)
    found = []
    for v in range(g.n):
        nb, w = A.indices[A.indptr[v]:A.indptr[v + 1]], A.data[A.indptr[v]:A.indptr[v + 1]]
        conn = np.bincount(parts[nb], weights=w, minlength=k)
        for b in range(k):
            if b != parts[v] and bw[b] + vw[v] <= lmax and conn[b] - conn[parts[v]] > 0:
                found.append((v, b, conn[b] - conn[parts[v]]))
    return found


@settings(max_examples=40, deadline=None)
@given(g=random_graphs(max_n=40), k=st.integers(3, 6), seed=st.integers(0, 1000), localized=st.booleans())
def test_kway_result_is_a_local_optimum(g, k, seed, localized):
    # once a pass keeps no move, no single move into a block with room can reduce the cut
    parts = balanced_random_parts(g, k, np.random.default_rng(seed))
    lmax = metrics.max_block_weight(g.total_vwgt, k, 0.2)
    out, stats = kway_fm(g, parts, k, lmax, seed=seed, passes=50, localized=localized, return_stats=True)
    if stats["passes"] < 50 and metrics.is_balanced(g, out, k, 0.2):
        assert positive_feasible_moves(g, out, k, lmax) == []


def test_pairwise_swaps_between_full_blocks():
    # the noisy stripes of test_kway_reaches_local_optimum_on_grid with zero slack (Lmax = 27 =
    # W / k): k-way FM cannot move anything, pairwise 2-way FM swaps the strays back
    g = Graph.from_networkx(nx.grid_2d_graph(9, 9))
    parts = (np.arange(81) // 27).astype(np.int64)
    noisy = parts.copy()
    noisy[[10, 40, 60]] = [1, 2, 0]
    noisy[[30, 55, 5]] = [0, 1, 2]
    lmax = metrics.max_block_weight(81, 3, 0.03)
    assert lmax == 27
    assert np.array_equal(kway_fm(g, noisy, 3, lmax), noisy)
    out = pairwise_fm(g, noisy, 3, lmax, rounds=3)
    assert metrics.is_balanced(g, out, 3, 0.03)
    assert metrics.edge_cut(g, out) <= metrics.edge_cut(g, parts)


@settings(max_examples=40, deadline=None)
@given(g=random_graphs(max_n=60), k=st.integers(2, 7), seed=st.integers(0, 1000),
       eps=st.sampled_from([0.0, 0.03, 0.2]))
def test_pairwise_never_worse(g, k, seed, eps):
    parts = np.random.default_rng(seed).integers(0, k, g.n)
    lmax = metrics.max_block_weight(g.total_vwgt, k, eps)
    out = pairwise_fm(g, parts, k, lmax, seed=seed)
    assert out.shape == (g.n,) and out.min() >= 0 and out.max() < k
    before, after = overload(g, parts, k, lmax), overload(g, out, k, lmax)
    assert after <= before + 1e-9
    if before == 0:
        assert metrics.edge_cut(g, out) <= metrics.edge_cut(g, parts)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(2, 12), npairs=st.integers(0, 40), seed=st.integers(0, 10**6))
def test_pairwise_classes_share_no_block_and_keep_each_blocks_order(k, npairs, seed):
    # pairs of one class run at once: they must share no block, and a block's pairs must run
    # in the given order (class after class), which makes the result that of the serial order
    from matchpart.refine.pairwise import _block_disjoint_classes
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k - 1, npairs) if k > 1 else np.zeros(npairs, np.int64)
    pairs = np.stack([a, a + 1 + rng.integers(0, k - 1 - a)], axis=1).astype(np.int64) if npairs else \
        np.empty((0, 2), np.int64)
    order = rng.permutation(npairs)
    start, grouped = _block_disjoint_classes(pairs, order, k)
    assert start[0] == 0 and start[-1] == npairs and sorted(grouped) == list(range(npairs))
    class_of = np.empty(npairs, np.int64)
    for c in range(start.shape[0] - 1):
        members = grouped[start[c]:start[c + 1]]
        assert list(members) == sorted(members)            # pair order kept within a class
        blocks = pairs[order[members]].ravel()
        assert len(set(blocks.tolist())) == blocks.shape[0]   # no block twice in a class
        class_of[members] = c
    for blk in range(k):
        mine = [t for t in range(npairs) if blk in pairs[order[t]]]
        assert list(class_of[mine]) == sorted(class_of[mine]) and len(set(class_of[mine])) == len(mine)


_PAIRWISE_SCRIPT = """
import hashlib, json
import numpy as np
import matchpart
from matchpart import metrics, threads
from matchpart.refine.fm import pairwise_fm
out = {}
graphs = [matchpart.load_graph("delaunay:3000"), matchpart.load_graph("ba:1500:3")]
for count in (1, 2, 3, 4):
    with threads.limit(count):
        h = hashlib.sha1()
        for g in graphs:
            for k in (4, 16, 48):
                parts = np.random.default_rng(k).integers(0, k, g.n)
                lmax = metrics.max_block_weight(g.total_vwgt, k, 0.1)
                h.update(pairwise_fm(g, parts, k, lmax, seed=3, rounds=2).tobytes())
        out[count] = h.hexdigest()
print(json.dumps(out))
"""


def test_pairwise_is_the_same_for_1_to_4_threads():
    # the block-disjoint pairs of a class run side by side (refine/pairwise.py)
    from test_threads import assert_same_digest_for_1_to_4_threads
    assert_same_digest_for_1_to_4_threads(_PAIRWISE_SCRIPT)


def test_accepts_networkx_and_scipy_inputs():
    G = nx.grid_2d_graph(6, 6)
    parts = np.arange(36) % 2
    out, stats = kway_fm(G, parts, 2, 18, return_stats=True)
    assert stats["cut"] == metrics.edge_cut(Graph.from_networkx(G), out)
    A = nx.to_scipy_sparse_array(G, format="csr")
    assert np.array_equal(kway_fm(A, parts, 2, 18), out)


@pytest.mark.gpu
def test_gpu_graph_and_parts_are_accepted():
    g = Graph.from_networkx(nx.grid_2d_graph(8, 8))
    parts = (np.arange(64) % 4).astype(np.int64)
    lmax = metrics.max_block_weight(64, 4, 0.03)
    gg = g.to("gpu")
    out = kway_fm(gg, gg.backend.xp.asarray(parts), 4, lmax, seed=2)
    assert isinstance(out, np.ndarray)
    assert np.array_equal(out, kway_fm(g, parts, 4, lmax, seed=2))


def _graph_with_hubs(seed, hubs):
    """A ring of 400 vertices with random chords (mean degree ~5) and ``hubs`` vertices
    joined to 150-250 random others each: only those are above kway_fm's hub degree."""
    rng = np.random.default_rng(seed)
    n = 400
    a = [np.arange(n), rng.integers(0, n, 200)]
    b = [(np.arange(n) + 1) % n, rng.integers(0, n, 200)]
    for h in range(hubs):
        others = rng.choice(np.delete(np.arange(n), h * 97), size=int(rng.integers(150, 251)), replace=False)
        a.append(np.full(others.shape[0], h * 97))
        b.append(others)
    a, b = np.concatenate(a), np.concatenate(b)
    keep = a != b
    return Graph.from_edges(a[keep], b[keep], np.ones(int(keep.sum()), dtype=np.int64), n=n)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), hubs=st.integers(1, 3), k=st.integers(3, 8), localized=st.booleans(),
       grouped=st.booleans())
def test_kway_passes_never_move_a_hub(seed, hubs, k, localized, grouped):
    """k-way FM (global, localized and grouped passes) leaves the vertices above the hub degree
    (HUB_DEGREE_FACTOR x the mean, at least HUB_MIN_DEGREE) in their blocks and moves others."""
    from matchpart.refine import grouped_fm, parallel_fm
    from matchpart.refine.kway_fm import HUB_DEGREE_FACTOR, HUB_MIN_DEGREE, hub_flags
    g = _graph_with_hubs(seed, hubs)
    indptr = np.asarray(g.indptr)
    degree = np.diff(indptr)
    cap = max(HUB_DEGREE_FACTOR * degree.mean(), HUB_MIN_DEGREE)
    hub = hub_flags(indptr)
    assert hub.tolist() == (degree > cap).tolist() and hub.sum() == hubs
    parts = balanced_random_parts(g, k, np.random.default_rng(seed))
    lmax = metrics.max_block_weight(g.total_vwgt, k, 0.03)
    saved = parallel_fm.PARALLEL_FM_MIN_VERTICES, parallel_fm.MAX_BOUNDARY_SHARE, grouped_fm.MIN_BLOCKS
    if grouped:     # the grouped rounds on this small graph
        parallel_fm.PARALLEL_FM_MIN_VERTICES, parallel_fm.MAX_BOUNDARY_SHARE, grouped_fm.MIN_BLOCKS = 0, 0.0, 3
    try:
        out = np.asarray(kway_fm(g, parts, k, lmax, seed=seed, passes=2, localized=localized))
    finally:
        parallel_fm.PARALLEL_FM_MIN_VERTICES, parallel_fm.MAX_BOUNDARY_SHARE, grouped_fm.MIN_BLOCKS = saved
    assert (out[hub] == parts[hub]).all()
    assert (out != parts).any() and metrics.edge_cut(g, out) < metrics.edge_cut(g, parts)
