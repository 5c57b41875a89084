"""karp_sipser's incremental rounds (touched vertices only) give exactly the matching of the plain
O(n)-per-round formulation, on the CPU and on the GPU code path."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import shared_graph
from matchpart import backend, load_graph
from matchpart.graph import Graph
from matchpart.matchers import karp_sipser as ks_module
from matchpart.matchers.base import matching_problems
from matchpart.matchers.karp_sipser import karp_sipser
from test_matchers_basic import random_graphs

CPU = backend.get("cpu")


def reference_karp_sipser(g, seed):
    """The rounds recomputed from scratch over all n vertices each time (the formulation
    before the incremental one), with the same hash streams: (mate, stats)."""
    be, n = CPU, g.n
    indptr, indices = g.indptr, g.indices.astype(np.int64)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    deg = np.diff(indptr).astype(np.int64)
    idsum = np.zeros(n, dtype=np.int64)
    np.add.at(idsum, rows, indices)
    mate = np.full(n, -1, dtype=np.int64)
    rounds = d1 = rand = matched = 0
    fractions = []
    while True:
        free = mate < 0
        singles = np.flatnonzero(free & (deg == 1))
        if singles.size:
            requester, target = singles, idsum[singles]
            d1 += 1
        else:
            open_ = np.flatnonzero(free & (deg > 0))
            if open_.size == 0:
                break
            rand += 1
            open_ = open_[deg[open_] == deg[open_].min()]  # the min-degree rule
            u = be.uniform(seed, 3 * rounds + ks_module._STREAM_REQUESTER, open_)
            pick = u < ks_module.RANDOM_REQUEST_FRACTION
            requester = open_[pick] if pick.any() else open_[:1]
            target = ks_module._random_free_neighbour(be, g, indices, requester, mate, seed, rounds)
        rounds += 1
        asks = np.full(n, -1, dtype=np.int64)
        asks[requester] = target
        ok = (asks[target] < 0) | (asks[target] == requester)
        h = (be.hash64(seed, 3 * rounds + ks_module._STREAM_ACCEPT, requester) >> np.uint64(33)).astype(np.int64)
        key = (h << 32) | requester
        best = np.full(n, np.iinfo(np.int64).max)
        np.minimum.at(best, target[ok], key[ok])
        acc = ok & (best[target] == key)
        pu, pv = requester[acc], target[acc]
        mate[pu] = pv
        mate[pv] = pu
        newly = np.union1d(pu, pv)
        matched += newly.size
        fractions.append(matched / n)
        for u in newly:  # plain loops: this is the slow, obviously right reference
            for w in indices[indptr[u]:indptr[u + 1]]:
                deg[w] -= 1
                idsum[w] -= u
    return mate, {"rounds": rounds, "matched_fraction": fractions, "degree_one_rounds": d1, "random_rounds": rand}


def _tree(n, seed):
    rng = np.random.default_rng(seed)
    parent = np.array([rng.integers(0, v) for v in range(1, n)])
    return Graph.from_edges(np.arange(1, n), parent, n=n)


def _cycle(n):
    c = np.arange(n)
    return Graph.from_edges(c, (c + 1) % n, n=n)


def _clique(k):
    u, v = np.triu_indices(k, 1)
    return Graph.from_edges(u, v, n=k)


GRAPHS = {
    "single_edge": lambda: Graph.from_edges(np.array([0]), np.array([1]), n=2),  # a mutual request
    "isolated": lambda: Graph.from_edges(np.array([0, 3, 4]), np.array([1, 4, 5]), n=8),
    "no_edges": lambda: Graph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64), n=4),
    "star": lambda: Graph.from_edges(np.zeros(9, dtype=np.int64), np.arange(1, 10), n=10),
    "path": lambda: load_graph("grid:1x301"),
    "tree": lambda: _tree(400, 5),
    "cycle": lambda: _cycle(300),
    "clique": lambda: _clique(9),
    "grid": lambda: load_graph("grid:30x40"),
    "er_sparse": lambda: load_graph("er:1500:1.5"),
    "er": lambda: load_graph("er:1500:6"),
    "delaunay": lambda: load_graph("delaunay:2000"),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_matching_and_stats_as_full_rounds(name, seed):
    g = GRAPHS[name]()
    M = karp_sipser(g, seed=seed)
    mate, stats = reference_karp_sipser(g, seed)
    assert not matching_problems(g, M.mate)
    assert np.array_equal(M.mate, mate)
    assert M.stats == stats


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("batch", [2, 8])
def test_batched_masked_rounds_same_as_full_rounds(name, batch, monkeypatch):
    # the GPU's formulation (fixed-shape masked rounds, a sync per batch) run on numpy, with
    # batches that end before, at and after the last round
    monkeypatch.setitem(ks_module.ROUNDS_PER_CHECK, "cpu", batch)
    g = GRAPHS[name]()
    for seed in (0, 1):
        M = karp_sipser(g, seed=seed)
        mate, stats = reference_karp_sipser(g, seed)
        assert np.array_equal(M.mate, mate)
        assert M.stats == stats


def test_same_matching_as_full_rounds_on_a_shared_mesh():
    g = load_graph(shared_graph("4elt.graph"))
    M = karp_sipser(g, seed=3)
    mate, stats = reference_karp_sipser(g, 3)
    assert np.array_equal(M.mate, mate) and M.stats == stats
    assert M.stats["random_rounds"] > 0 and M.stats["degree_one_rounds"] > 0


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["single_edge", "isolated", "star", "tree", "cycle", "clique", "er_sparse",
                                  "delaunay"])
def test_gpu_path_same_as_cpu(name):
    g = GRAPHS[name]()
    for seed in (0, 1):
        cpu = karp_sipser(g, seed=seed)
        gpu = karp_sipser(g.to("gpu"), seed=seed)
        assert np.array_equal(gpu.to_host(), cpu.mate)
        assert gpu.stats == cpu.stats


@pytest.mark.parametrize("spec", ["delaunay:3000", "rmat:11", "ba:2000:3", "grid:30x30", "grid:50x1", "er:500:3"])
@pytest.mark.parametrize("seed", [0, 5])
def test_compiled_rounds_equal_the_whole_array_rounds(spec, seed, monkeypatch):
    """The CPU's compiled kernel (karp_sipser_kernel.py) gives the whole-array rounds'
    matching and stats (singles, min-degree rule, the same hash streams)."""
    g = load_graph(spec)
    kernel = karp_sipser(g, seed=seed)
    monkeypatch.setattr(ks_module, "CPU_KERNEL", False)
    whole = karp_sipser(g, seed=seed)
    assert np.array_equal(np.asarray(kernel.mate), np.asarray(whole.mate))
    assert kernel.stats == whole.stats


@settings(max_examples=60, deadline=None)
@given(g=random_graphs(max_n=40), seed=st.integers(0, 1000))
def test_compiled_rounds_equal_the_whole_array_rounds_on_random_graphs(g, seed):
    kernel = karp_sipser(g, seed=seed)
    ks_module.CPU_KERNEL = False
    try:
        whole = karp_sipser(g, seed=seed)
    finally:
        ks_module.CPU_KERNEL = True
    assert np.array_equal(np.asarray(kernel.mate), np.asarray(whole.mate)) and kernel.stats == whole.stats
