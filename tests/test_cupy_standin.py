"""The CuPy stand-in enforces the CuPy rules it claims, and the backend's GPU primitives are exact on it."""
import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from matchpart import backend
from cupy_standin import CupyRuleError, DeviceArray, cupy, standin_backend

GPU = standin_backend()
CPU = backend.get("cpu")


def test_no_implicit_host_conversion():
    a = cupy.arange(5)
    with pytest.raises(TypeError):
        np.asarray(a)
    with pytest.raises(TypeError):
        a + np.arange(5)  # a numpy array mixed into a device computation
    with pytest.raises(TypeError):
        cupy.concatenate([a, np.arange(3)])
    assert np.array_equal(a.get(), np.arange(5)) and np.array_equal(cupy.asnumpy(a), np.arange(5))


def test_numba_kernels_refuse_device_arrays():
    @numba.njit
    def total(x):
        return x.sum()
    with pytest.raises(Exception):
        total(cupy.arange(5))


def test_host_to_device_copies():
    h = np.zeros(3)
    d = cupy.asarray(h)
    d[0] = 7
    assert h[0] == 0


def test_scalars_are_device_arrays_without_index():
    a = cupy.arange(5)
    s = a.sum()
    assert isinstance(s, DeviceArray) and s.ndim == 0
    assert int(s) == 10 and s.item() == 10
    with pytest.raises(TypeError):
        range(s)
    with pytest.raises(TypeError):
        hash(s)


def test_names_and_keywords_are_cupys():
    with pytest.raises(AttributeError):
        cupy.nanargmax_of_nothing
    with pytest.raises(AttributeError):
        cupy.arange(3).tofile_of_nothing
    with pytest.raises(TypeError, match="keyword"):
        cupy.unique(cupy.arange(3), sorted=True)  # numpy 2 has it, cupy 14 does not
    assert cupy.int64 is np.int64  # dtypes are numpy's, as in CuPy


def test_sorts_are_stable_and_lexsort_takes_a_stacked_array():
    keys = cupy.asarray(np.array([1, 0, 1, 0, 1] * 20))
    assert np.array_equal(cupy.argsort(keys).get(), np.argsort(keys.get(), kind="stable"))
    with pytest.raises(TypeError, match="kind"):
        cupy.argsort(keys, kind="quicksort")
    with pytest.raises(TypeError, match="stack"):
        cupy.lexsort((keys, keys))
    assert np.array_equal(cupy.lexsort(cupy.stack([keys, keys])).get(), np.lexsort([keys.get()] * 2))


def test_scatter_refuses_what_cuda_atomics_lack():
    from cupy_standin import _StandinCupyx
    cupyx = _StandinCupyx()
    for f in (cupyx.scatter_add, cupyx.scatter_max, cupyx.scatter_min):
        with pytest.raises(TypeError, match="int64"):
            f(cupy.zeros(3, dtype=np.int64), cupy.asarray([0, 1]), cupy.asarray([1, 2], dtype=np.int64))
    t = cupy.zeros(3, dtype=np.int32)
    cupyx.scatter_add(t, cupy.asarray([0, 0, 2]), cupy.asarray([1, 2, 5], dtype=np.int32))
    assert t.get().tolist() == [3, 0, 5]


def test_repeated_index_assignment_picks_a_random_winner_per_call():
    from cupy_standin import reseed

    def winners(seed):
        reseed(seed)
        out = []
        for _ in range(40):
            a = cupy.zeros(3, dtype=np.int64)
            a[cupy.asarray([1, 1, 1])] = cupy.asarray([5, 6, 7])
            b = cupy.zeros((2, 2), dtype=np.int64)  # a tuple of index arrays into a 2-d array
            b[cupy.asarray([0, 0]), cupy.asarray([1, 1])] = cupy.asarray([8, 9])
            c = cupy.zeros((2, 2), dtype=np.int64)  # whole rows
            c[cupy.asarray([1, 1])] = cupy.asarray([[1, 2], [3, 4]])
            out.append((int(a[1]), int(b[0, 1]), tuple(c.get()[1])))
        return out
    w = winners(0)
    assert {x[0] for x in w} == {5, 6, 7} and {x[1] for x in w} == {8, 9}
    # each element picks its own winner, as a GPU's elementwise scatter: rows can be torn
    assert {x[2] for x in w} == {(1, 2), (3, 4), (1, 4), (3, 2)}
    assert winners(0) == w  # seeded: a failure reproduces
    a = cupy.zeros(4, dtype=np.int64)
    a[cupy.asarray([3, 0])] = cupy.asarray([1, 2])  # no repeats: as numpy
    assert a.get().tolist() == [2, 0, 0, 1]


def test_repeat_refuses_a_device_array_of_counts():
    a, counts = cupy.arange(3), cupy.asarray([1, 0, 2])
    with pytest.raises(ValueError, match="repeats"):
        cupy.repeat(a, counts)
    with pytest.raises(ValueError, match="repeats"):
        a.repeat(counts)
    assert cupy.repeat(a, [1, 0, 2]).get().tolist() == [0, 2, 2]  # host counts are fine
    assert a.repeat(2).get().tolist() == [0, 0, 1, 1, 2, 2]


def test_bincount_syncs_twice_and_refuses_what_cupy_does():
    from cupy_standin import SyncCounter
    x = cupy.asarray([0, 2, 2])
    SyncCounter.count = 0
    assert cupy.bincount(x, minlength=5).get().tolist() == [1, 0, 2, 0, 0]
    assert SyncCounter.count == 2 + 1  # the input check, the output size; and .get()
    SyncCounter.count = 0
    cupy.bincount(x, minlength=x.sum())  # a device minlength is read on the host as well
    assert SyncCounter.count == 3
    with pytest.raises(ValueError, match="zero-size"):
        cupy.bincount(cupy.zeros(0, dtype=np.int64), minlength=4)  # CuPy's max() of nothing
    with pytest.raises(TypeError, match="int"):
        cupy.bincount(cupy.asarray([0.0, 1.0]))
    assert cupy.bincount(x, weights=cupy.asarray([1, 2, 3])).dtype == np.float64


def test_float_sums_run_in_an_unspecified_order():
    from cupy_standin import _StandinCupyx, reseed
    reseed(4)
    rng = np.random.default_rng(0)
    h = rng.random(2000) * 10.0 ** rng.integers(-8, 8, 2000)
    d = cupy.asarray(h)
    sums = {float(cupy.sum(d)) for _ in range(20)} | {float(d.sum()) for _ in range(20)}
    assert len(sums) > 1 and all(s == pytest.approx(h.sum(), rel=1e-12) for s in sums)
    last = {float(cupy.cumsum(d)[-1]) for _ in range(20)}
    assert len(last) > 1 and all(s == pytest.approx(h.sum(), rel=1e-12) for s in last)
    index = cupy.asarray(rng.integers(0, 3, 2000))
    adds = set()
    for _ in range(20):
        t = cupy.zeros(3)
        _StandinCupyx().scatter_add(t, index, d)
        adds.add(tuple(t.get()))
    assert len(adds) > 1
    assert len({tuple(cupy.bincount(index, weights=d).get()) for _ in range(20)}) > 1
    # integer sums are exact in any order: the same every time
    i = cupy.asarray(rng.integers(0, 2**40, 2000))
    assert {int(cupy.sum(i)) for _ in range(5)} == {int(i.get().sum())}


def test_a_device_scalar_is_no_size():
    n = cupy.arange(5).sum()
    for make in (cupy.zeros, cupy.ones, cupy.empty, cupy.arange):
        with pytest.raises(TypeError, match="int"):
            make(n)
    with pytest.raises(TypeError):
        cupy.full((n,), 1)
    assert cupy.zeros(int(n)).shape == (10,)


def test_method_keywords_that_cupy_lacks():
    a = cupy.arange(5)
    with pytest.raises(TypeError, match="initial"):
        a.max(initial=0)
    with pytest.raises(TypeError, match="where"):
        a.sum(where=a > 2)
    with pytest.raises(TypeError):
        a.argsort(kind="stable")  # the method has no kind= in CuPy 13 (the function has)
    with pytest.raises(TypeError, match="copy"):
        cupy.asarray(a, copy=True)  # asarray(copy=) came with CuPy 14
    with pytest.raises(AttributeError):
        a.mT  # not in CuPy 13
    assert int(a.max(axis=0, keepdims=False)) == 4 and int(a.sum(dtype=np.int64)) == 10


def test_in_place_sort_of_a_non_contiguous_view_raises():
    a = cupy.asarray([3, 1, 2, 0])
    with pytest.raises(NotImplementedError, match="non-contiguous"):
        a[::2].sort()
    b = a[1:]  # a contiguous view sorts in place
    b.sort()
    assert a.get().tolist() == [3, 0, 1, 2]


def test_promotion_where_numpy2_and_cupy13_differ_raises():
    i32 = cupy.arange(4, dtype=np.int32)
    with pytest.raises(TypeError, match="CuPy 13"):
        i32 + np.int64(1)  # NumPy 2, CuPy 14: int64; CuPy 13 (value-based): int32
    with pytest.raises(TypeError, match="CuPy 13"):
        cupy.arange(4) * np.uint64(3)  # NumPy 2: float64; CuPy 13: int64
    assert (i32 + 1).dtype == np.int32  # Python scalars are weak in both
    assert (i32 + np.int32(1)).dtype == np.int32
    assert (cupy.arange(4, dtype=np.uint64) ^ np.uint64(7)).dtype == np.uint64
    assert bool((i32 < np.int64(2)).any())  # comparisons give bool either way
    assert (i32 + i32.sum()).dtype == i32.sum().dtype  # 0-d device arrays are arrays in both


def test_row_ids_and_ranges_on_the_gpu_path_equal_the_cpu():
    from cupy_standin import SyncCounter
    indptr = np.array([0, 0, 3, 3, 4, 7, 7], dtype=np.int64)  # empty rows first, between, last
    want = CPU.row_ids(indptr)
    SyncCounter.count = 0
    got = GPU.row_ids(GPU.to_device(indptr), 7)
    assert SyncCounter.count == 0  # no repeat, no size read when nnz is passed
    assert np.array_equal(GPU.to_host(got), want) and want.tolist() == [1, 1, 1, 3, 4, 4, 4]
    assert np.array_equal(GPU.to_host(GPU.row_ids(GPU.to_device(indptr))), want)
    start, length = np.array([5, 0, 9, 2]), np.array([2, 0, 1, 3])
    pos, seg = GPU.ranges(GPU.to_device(start), GPU.to_device(length))
    cpos, cseg = CPU.ranges(start, length)
    assert np.array_equal(GPU.to_host(pos), cpos) and np.array_equal(GPU.to_host(seg), cseg)
    assert cpos.tolist() == [5, 6, 9, 2, 3, 4]
    empty = GPU.ranges(GPU.to_device(start[:0]), GPU.to_device(length[:0]))
    assert empty[0].shape == (0,)


int64s = st.integers(-2**63, 2**63 - 1)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.int64, st.integers(1, 8), elements=int64s),
       st.data())
def test_int64_scatters_on_the_gpu_path_equal_numpy(target, data):
    m = data.draw(st.integers(0, 30))
    index = np.asarray(data.draw(st.lists(st.integers(0, target.shape[0] - 1), min_size=m, max_size=m)), np.int64)
    values = np.asarray(data.draw(st.lists(int64s, min_size=m, max_size=m)), np.int64)
    for op in ("scatter_min", "scatter_max", "scatter_add"):
        want = getattr(CPU, op)(target.copy(), index, values)
        got = getattr(GPU, op)(GPU.to_device(target), GPU.to_device(index), GPU.to_device(values))
        assert np.array_equal(GPU.to_host(got), want), op


def test_sync_counter_counts_host_reads_and_data_sized_results():
    from cupy_standin import SyncCounter
    a = cupy.arange(10)
    SyncCounter.count = 0
    a.sum().item()
    a[a > 3]
    cupy.flatnonzero(a)
    a.get()
    assert SyncCounter.count == 4


def test_red_blue_checks_termination_once_a_batch_on_the_gpu():
    # DESIGN: no host sync every round on the GPU; red-blue's rounds use masks and compact
    # (the termination test) once per ROUNDS_PER_CHECK["gpu"] rounds
    from cupy_standin import SyncCounter
    from matchpart.graph import Graph
    from matchpart.matchers import run_matcher
    from matchpart.matchers.red_blue import ROUNDS_PER_CHECK
    rng = np.random.default_rng(3)
    n, m = 4000, 16000
    g = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 5, m), n,
                         drop_self_loops=True, merge_duplicates=True).to(GPU)
    for name in ("red_blue", "red_blue_random"):
        SyncCounter.count = 0
        res = run_matcher(name, g, seed=2)
        batches = -(-res.stats["rounds"] // ROUNDS_PER_CHECK["gpu"])
        assert res.stats["rounds"] >= 8
        # two per batch (the compactions), six for setup and result (11 and 12 counted for 9
        # rounds); one sync per round would add at least another eight
        assert SyncCounter.count <= 2 * batches + 6, name


def test_local_max_checks_termination_once_a_batch_on_the_gpu():
    # a path with increasing weights matches one edge per round: 50 rounds, then the greedy tail
    from cupy_standin import SyncCounter
    from matchpart.graph import Graph
    from matchpart.matchers import run_matcher
    from matchpart.matchers.local_max import GREEDY_TAIL_AFTER, ROUNDS_PER_CHECK
    n = 400
    g = Graph.from_edges(np.arange(n - 1), np.arange(1, n), np.arange(1, n), n)
    cpu = run_matcher("local_max", g, seed=1)
    SyncCounter.count = 0
    gpu = run_matcher("local_max", g.to(GPU), seed=1)
    assert gpu.stats == cpu.stats and gpu.stats["rounds"] == GREEDY_TAIL_AFTER + 1
    batches = -(-GREEDY_TAIL_AFTER // ROUNDS_PER_CHECK["gpu"])
    # at most a compaction per batch, plus setup, tail and result (24 counted for 51 rounds
    # in 13 batches); one sync per round would add another fifty
    assert SyncCounter.count <= batches + 11


@pytest.mark.parametrize("name", ["suitor", "locally_dominant"])
def test_suitor_and_ld_check_termination_once_a_batch_on_the_gpu(name):
    # hubs (30 vertices with ~100 extra edges each): windows must grow to cross long runs
    # of taken entries, where the batch's precomputed window reach matters; and a path
    # with increasing weights, which matches about two vertices per round (20 rounds)
    from cupy_standin import SyncCounter
    from matchpart.graph import Graph
    from matchpart.matchers import run_matcher
    from matchpart.matchers.suitor import ROUNDS_PER_CHECK
    rng = np.random.default_rng(5)
    n, m, p = 3000, 9000, 40
    u = np.concatenate([rng.integers(0, n, m), rng.integers(0, 30, 3000), np.arange(n, n + p - 1)])
    v = np.concatenate([rng.integers(0, n, m + 3000), np.arange(n + 1, n + p)])
    w = np.concatenate([rng.integers(1, 20, m + 3000), np.arange(1, p)])
    g = Graph.from_edges(u, v, w, n + p, drop_self_loops=True, merge_duplicates=True)
    cpu = run_matcher(name, g)
    SyncCounter.count = 0
    gpu = run_matcher(name, g.to(GPU))
    assert np.array_equal(GPU.to_host(gpu.mate), cpu.mate) and gpu.stats == cpu.stats
    assert gpu.stats["rounds"] >= 16
    batches = -(-gpu.stats["rounds"] // ROUNDS_PER_CHECK["gpu"]) + 1  # the last one finds no searcher
    # per batch: the termination test, the list of vertices that may search, the size of
    # their window entries (LD needs only the last two); setup and result (suitor: 21 counted
    # for 20 rounds in 6 batches, LD 16, with the copy of the result). One sync per round would add another sixteen or more.
    assert SyncCounter.count <= 3 * batches + 3


def test_karp_sipser_syncs_once_a_batch_on_the_gpu():
    from cupy_standin import SyncCounter
    from matchpart import load_graph
    from matchpart.matchers import run_matcher
    from matchpart.matchers.karp_sipser import ROUNDS_PER_CHECK
    g = load_graph("delaunay:3000")
    cpu = run_matcher("karp_sipser", g, seed=4)
    SyncCounter.count = 0
    gpu = run_matcher("karp_sipser", g.to(GPU), seed=4)
    assert np.array_equal(GPU.to_host(gpu.mate), cpu.mate) and gpu.stats == cpu.stats
    assert gpu.stats["rounds"] >= 40
    batches = -(-gpu.stats["rounds"] // ROUNDS_PER_CHECK["gpu"]) + 1
    # three per batch (open vertices, their entries, the entries to free neighbours), setup
    # and result (45 counted for 103 rounds in 14 batches, with the copy of the result); the CPU's incremental rounds
    # sync about ten times a round
    assert SyncCounter.count <= 3 * batches + 3


@pytest.mark.parametrize("method", ["apfb", "apsb"])
def test_bipartite_bfs_levels_sync_twice_on_the_gpu(method, monkeypatch):
    # GPUBFS-WR checks its frontier on the host once a level, as the paper's host loop
    # does; a level's claims and writes are masked, so a level costs two syncs (its
    # entries, the next frontier) rather than one per compaction (about 18 before)
    import scipy.sparse as sp
    from cupy_standin import SyncCounter
    from matchpart.backend import core
    from matchpart.matchers.bipartite import maximum_bipartite_matching
    monkeypatch.setattr(core, "_cupy_or_reason", lambda: (cupy, None))  # the stand-in, even beside a GPU
    monkeypatch.setattr(core, "_GPU", GPU)
    B = sp.random(3000, 3000, density=2.5 / 3000, format="csr", random_state=5)
    want = maximum_bipartite_matching(B, method=method, device="cpu", return_stats=True)
    SyncCounter.count = 0
    got = maximum_bipartite_matching(B, method=method, device="gpu", return_stats=True)
    assert np.array_equal(got[0], want[0]) and got[1] == want[1]
    levels = sum(got[1]["bfs_levels"])
    assert levels >= 30
    # ALTERNATE's lockstep steps (two syncs each, at most one step per level of the
    # phase's BFS) and a few syncs per phase and for the initial matching come on top
    # (apfb: 275 counted for 68 levels in 5 phases; apsb: 827 for 177 in 21)
    assert SyncCounter.count <= 4 * levels + 6 * got[1]["phases"] + 10


@pytest.mark.parametrize("method", ["gale_shapley", "mcvitie_wilson"])
def test_stable_marriage_syncs_once_a_batch_on_the_gpu(method, monkeypatch):
    from cupy_standin import SyncCounter
    from matchpart import load_graph
    from matchpart.backend import core
    from matchpart.matchers.stable_marriage import (MCVITIE_WILSON_GROUPS, ROUNDS_PER_CHECK, smi_from_graph,
                                                    stable_marriage)
    monkeypatch.setattr(core, "_cupy_or_reason", lambda: (cupy, None))
    monkeypatch.setattr(core, "_GPU", GPU)
    P, R = smi_from_graph(load_graph("delaunay:3000"))
    want = stable_marriage(P, R, method=method, device="cpu", return_stats=True)
    SyncCounter.count = 0
    got = stable_marriage(P, R, method=method, device="gpu", return_stats=True)
    assert np.array_equal(got[0], want[0]) and got[1] == want[1]
    rounds = got[1]["rounds"]
    assert rounds >= 8
    # a batch costs two syncs (who is free, who may propose) and each McVitie-Wilson group
    # can end one batch early, plus one check per admitted group (gale_shapley: 12 counted
    # for 14 rounds; mcvitie_wilson: 89 for 114 rounds in 16 groups)
    groups = MCVITIE_WILSON_GROUPS if method == "mcvitie_wilson" else 1
    batches = -(-rounds // ROUNDS_PER_CHECK["gpu"]) + groups + 1
    assert SyncCounter.count <= 2 * batches + groups


def test_b_suitor_syncs_once_a_batch_on_the_gpu(monkeypatch):
    from cupy_standin import SyncCounter
    from matchpart import load_graph
    from matchpart.backend import core
    from matchpart.matchers.b_suitor import ROUNDS_PER_CHECK, b_matching
    monkeypatch.setattr(core, "_cupy_or_reason", lambda: (cupy, None))
    monkeypatch.setattr(core, "_GPU", GPU)
    g = load_graph("ba:3000:4")
    want = b_matching(g, 2, device="cpu")
    SyncCounter.count = 0
    got = b_matching(g, 2, device="gpu")
    assert np.array_equal(got.edges, want.edges) and got.stats == want.stats
    rounds = got.stats["rounds"]
    assert rounds >= 5
    batches = -(-rounds // ROUNDS_PER_CHECK["gpu"]) + 1
    # per batch: who searches, who may search, their window entries; setup and result (14
    # counted for 9 rounds in 4 batches; 20 while each batch's offsets came from bincount,
    # which syncs twice on CuPy). The compacting rounds took about fourteen a round.
    assert SyncCounter.count <= 3 * batches + 2


def test_contraction_and_clustering_syncs_on_the_gpu(monkeypatch):
    # bincount syncs twice on CuPy (and refuses an empty input): contraction and the
    # clustering rounds find their row starts by binary search instead
    from cupy_standin import SyncCounter
    from matchpart import load_graph
    from matchpart.backend import core
    from matchpart.coarsen.cluster import cluster_labels
    from matchpart.coarsen.contract import contract, mapping_from_matching
    from matchpart.matchers import run_matcher
    monkeypatch.setattr(core, "_cupy_or_reason", lambda: (cupy, None))
    monkeypatch.setattr(core, "_GPU", GPU)
    g = load_graph("delaunay:3000")
    mapping, nc = mapping_from_matching(run_matcher("local_max", g, seed=1).mate, CPU)
    want = contract(g, mapping, nc)
    SyncCounter.count = 0
    got = contract(g.to(GPU), GPU.to_device(mapping), nc)
    # the off-diagonal entries and the distinct coarse edges (2 data-sized results); the
    # bincount of coarse rows cost two more, and the repeat of row ids one
    assert SyncCounter.count <= 6
    for a in ("indptr", "indices", "ewgt", "vwgt"):
        assert np.array_equal(GPU.to_host(getattr(got, a)), getattr(want, a)), a
    for rounds in (2, 4):
        SyncCounter.count = 0
        labels = cluster_labels(g.to(GPU), 50, seed=1, rounds=rounds)
        # seven a round (the rounds' data-sized results); the bincount cost two more a round
        assert SyncCounter.count <= 7 * rounds
        assert np.array_equal(GPU.to_host(labels), cluster_labels(g, 50, seed=1, rounds=rounds))
    # a level whose edges all contract leaves an empty coarse edge list (bincount raised here)
    pair = load_graph("grid:1x2")
    one = contract(pair.to(GPU), GPU.to_device(np.zeros(2, dtype=np.int64)), 1)
    assert GPU.to_host(one.indptr).tolist() == [0, 0] and GPU.to_host(one.vwgt).tolist() == [2]
