"""Parallel k-way FM (refine/parallel_fm.py, refine/pair_search.py): the same result for any
number of threads and on the serial path, the refiners' guarantees, and its quotient pairs
and matching rounds against a plain-Python reference."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from matchpart import metrics, threads
from matchpart.refine import fm
from matchpart.refine import parallel_fm as pf
from matchpart.refine.state import host_arrays

from test_threads import _random_graph, _Threaded, assert_same_digest_for_1_to_4_threads, partition_digest_script


class _PairRounds:
    """refine_arrays takes parallel_fm's rounds on every graph, whatever its boundary (a context manager, as
    _Threaded: hypothesis runs tests outside function fixtures)."""

    def __enter__(self):
        self.saved = pf.PARALLEL_FM_MIN_VERTICES, pf.MAX_BOUNDARY_SHARE
        pf.PARALLEL_FM_MIN_VERTICES, pf.MAX_BOUNDARY_SHARE = 0, 1.0

    def __exit__(self, *exc):
        pf.PARALLEL_FM_MIN_VERTICES, pf.MAX_BOUNDARY_SHARE = self.saved


def _boundary(g, parts):
    src = np.repeat(np.arange(g.n), np.diff(g.indptr))
    flags = np.zeros(g.n, dtype=bool)
    flags[src[parts[src] != parts[g.indices]]] = True
    return flags


def _refine(g, parts, k, maxw, *, seed=0, localized=False, workspace=None, hint=True):
    p = np.array(parts, dtype=np.int64)
    flags = _boundary(g, p) if hint else None
    with _PairRounds():
        stats = fm.refine_arrays(host_arrays(g), p, maxw, seed=seed, passes=2, localized=localized, local_stall=5,
                                 boundary_hint=flags, workspace=workspace)
    return p, stats, flags


def _case(seed, n, p, k, float_weights):
    g = _random_graph(seed, n, p, float_weights)
    k = min(k, n)
    maxw = np.full(k, metrics.max_block_weight(g.total_vwgt, k, 0.03), dtype=np.float64)
    parts = np.random.default_rng(seed).integers(0, k, size=n)
    return g, k, maxw, parts


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 150), p=st.floats(0.02, 0.3), k=st.integers(3, 9),
       float_weights=st.booleans(), localized=st.booleans(), chunk=st.integers(1, 40))
def test_same_result_for_one_and_two_threads_and_the_serial_path(seed, n, p, k, float_weights, localized, chunk):
    g, k, maxw, parts = _case(seed, n, p, k, float_weights)
    runs = []
    for count in (1, 2):       # 1: the serial path (no prange); 2: every round on the threads
        with _Threaded(chunk), threads.limit(count):
            out, stats, flags = _refine(g, parts, k, maxw, seed=seed, localized=localized)
        runs.append((out.tobytes(), stats["cut"], stats["moves"], flags.tobytes()))
    assert runs[0] == runs[1]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 150), p=st.floats(0.02, 0.3), k=st.integers(3, 9),
       float_weights=st.booleans(), localized=st.booleans(), eps=st.sampled_from([0.0, 0.03, 0.3]))
def test_balance_held_cut_tracked_never_worse(seed, n, p, k, float_weights, localized, eps):
    g, k, _, parts = _case(seed, n, p, k, float_weights)
    maxw = np.full(k, metrics.max_block_weight(g.total_vwgt, k, eps), dtype=np.float64)
    with _Threaded(7), threads.limit(2):
        out, stats, flags = _refine(g, parts, k, maxw, seed=seed, localized=localized)
    bw_in = np.bincount(parts, weights=g.vwgt, minlength=k)
    bw_out = np.bincount(out, weights=g.vwgt, minlength=k)
    over_in, over_out = np.maximum(bw_in - maxw, 0).sum(), np.maximum(bw_out - maxw, 0).sum()
    assert over_out <= over_in + 1e-9
    cut_in, cut_out = metrics.edge_cut(g, parts), metrics.edge_cut(g, out)
    if over_in == 0:       # a balanced input: every block stays within its bound, the cut cannot grow
        assert (bw_out <= maxw).all()
        assert cut_out <= cut_in + 1e-9
    if float_weights:
        assert abs(stats["cut"] - cut_out) <= 1e-9 * max(1.0, cut_in)
    else:
        assert stats["cut"] == cut_out
    assert stats["overload"] == np.float64(over_out) or abs(stats["overload"] - over_out) < 1e-9
    assert not (_boundary(g, out) & ~flags).any()      # the hint covers the result's boundary


def test_a_shared_workspace_gives_what_fresh_ones_give():
    ws = pf.new_workspace(400)
    for seed in range(6):
        g, k, maxw, parts = _case(seed, 300 - 40 * seed, 0.03, 4 + seed, seed % 2 == 1)
        shared = _refine(g, parts, k, maxw, seed=seed, localized=seed % 3 == 0, workspace=ws)
        fresh = _refine(g, parts, k, maxw, seed=seed, localized=seed % 3 == 0)
        assert shared[0].tobytes() == fresh[0].tobytes() and shared[1] == fresh[1]
    gain, gain_epoch, done, keys, verts, pos, *_ = ws
    assert (pos == -1).all()           # every heap left empty


def _assert_rounds_decline(g, parts, maxw):
    """refine_arrays with the rounds tried (on any size) gives what the k-way passes give."""
    results = []
    for min_vertices in (0, 1 << 62):
        p = parts.astype(np.int64).copy()
        saved = pf.PARALLEL_FM_MIN_VERTICES
        pf.PARALLEL_FM_MIN_VERTICES = min_vertices
        try:
            with threads.limit(1):
                stats = fm.refine_arrays(host_arrays(g), p, maxw, seed=3, passes=2, localized=False,
                                         workspace=pf.new_workspace(g.n))
        finally:
            pf.PARALLEL_FM_MIN_VERTICES = saved
        results.append((p.tobytes(), stats))
    assert results[0] == results[1]


def test_declines_a_boundary_of_most_vertices_and_runs_the_kway_passes():
    g, k, maxw, parts = _case(3, 120, 0.3, 6, False)        # dense: nearly every vertex on the boundary
    _assert_rounds_decline(g, parts, maxw)


def _reference_pairs(g, parts):
    """Adjacent block pairs (a < b), heaviest cut first, ties by (a, b)."""
    src = np.repeat(np.arange(g.n), np.diff(g.indptr))
    weight = {}
    for v, u, w in zip(src, g.indices, g.ewgt):
        a, b = int(parts[v]), int(parts[u])
        if a < b:
            weight[(a, b)] = weight.get((a, b), 0.0) + float(w)
    return sorted(weight, key=lambda ab: (-weight[ab], ab))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 120), p=st.floats(0.02, 0.4), k=st.integers(2, 12),
       max_rounds=st.integers(1, 12))
def test_quotient_pairs_and_matching_rounds_against_a_reference(seed, n, p, k, max_rounds):
    g, k, _, parts = _case(seed, n, p, k, False)
    listed = np.arange(g.n, dtype=np.int64)
    pa, pb = pf._quotient_pairs(g.indptr, g.indices, g.ewgt, parts.astype(np.int64), listed, g.n)
    expected = _reference_pairs(g, parts)
    assert list(zip(pa.tolist(), pb.tolist())) == expected
    rnd, rounds = pf._matching_rounds(pa, pb, k, max_rounds)
    want, taken = [-1] * len(expected), []
    for r in range(max_rounds):           # greedy matchings over the pairs in order
        used = set()
        for i, (a, b) in enumerate(expected):
            if want[i] < 0 and a not in used and b not in used:
                want[i] = r
                used.update((a, b))
        if not used:
            break
        taken.append(r)
    assert rnd.tolist() == want and rounds == len(taken)


_SCRIPT = partition_digest_script(
    "from matchpart.refine import parallel_fm\n"
    "parallel_fm.PARALLEL_FM_MIN_VERTICES, parallel_fm.MAX_BOUNDARY_SHARE = 0, 1.0   # pair rounds on every level",
    '["delaunay:3000", "rmat:11", "rgg:3000", float_weighted("delaunay:3000")]', (4, 16))


def test_partitions_with_pair_rounds_are_the_same_for_1_to_4_threads():
    assert_same_digest_for_1_to_4_threads(_SCRIPT)


def test_isolated_vertices_do_not_count_towards_the_boundary_share():
    """A dense graph with twice as many isolated vertices: a third of all vertices, but nearly
    all of those with an edge, are on the boundary; the rounds decline as without them."""
    from matchpart.graph import Graph
    g, k, maxw, parts = _case(3, 120, 0.3, 6, False)
    n = 3 * g.n
    indptr = np.concatenate([g.indptr, np.full(n - g.n, g.indptr[-1])])
    h = Graph(indptr, g.indices, ewgt=g.ewgt, vwgt=np.concatenate([g.vwgt, np.ones(n - g.n, np.int64)]))
    hp = np.concatenate([parts, np.arange(n - g.n) % k]).astype(np.int64)
    maxw = np.full(k, metrics.max_block_weight(h.total_vwgt, k, 0.03))
    _assert_rounds_decline(h, hp, maxw)
    assert _boundary(h, hp).mean() < pf.MAX_BOUNDARY_SHARE
