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


def test_repeated_index_assignment_keeps_the_first_write():
    a = cupy.zeros(3, dtype=np.int64)
    a[cupy.asarray([1, 1])] = cupy.asarray([5, 6])
    assert a.get().tolist() == [0, 5, 0]  # numpy would keep 6: code relying on it differs


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
        # two per batch (the compactions), about eight for setup and result; one sync per
        # round would add at least another eight
        assert SyncCounter.count <= 2 * batches + 10, name


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
    # a compaction and at most one relabelling per batch, plus setup, tail and result; one
    # sync per round would add another fifty
    assert SyncCounter.count <= 2 * batches + 15


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
    # their window entries (LD needs only the last two); setup and result. One sync per
    # round would add another sixteen or more.
    assert SyncCounter.count <= 3 * batches + 10


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
    # and result; the CPU's incremental rounds sync about ten times a round
    assert SyncCounter.count <= 3 * batches + 10


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
    assert SyncCounter.count <= 5 * levels + 6 * got[1]["phases"] + 40


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
    # can end one batch early, plus one check per admitted group
    groups = MCVITIE_WILSON_GROUPS if method == "mcvitie_wilson" else 1
    batches = -(-rounds // ROUNDS_PER_CHECK["gpu"]) + groups + 1
    assert SyncCounter.count <= 2 * batches + groups + 8


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
    # per batch: who searches, who may search, their window entries; setup and result.
    # The compacting rounds took about fourteen a round.
    assert SyncCounter.count <= 3 * batches + 8
