"""Tests for coarsening: mapping, contraction invariants, two-hop pairing, hierarchy, cluster coarsening."""
import importlib
from pathlib import Path

import networkx as nx
import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchpart import backend, metrics
from matchpart import threads as thread_control
from matchpart.coarsen import (coarsen, contract, mapping_from_labels, mapping_from_matching,
                               max_coarse_vertex_weight, two_hop_pairs)
from matchpart.coarsen.cluster import cluster_labels, cluster_mapping
from matchpart.coarsen.kept import sampled_edges_kept, sampled_edges_kept_xp
from matchpart.graph import Graph
from matchpart.io import load_graph
from matchpart.matchers import run_matcher
from matchpart.matchers.base import Matching, matching_problems

from conftest import FORCE_PARALLEL_CONTRACTION, shared_graph

CPU = backend.get("cpu")


@st.composite
def weighted_graphs(draw, max_n=30):
    n = draw(st.integers(1, max_n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4 * n))
    pairs = sorted({(min(a, b), max(a, b)) for a, b in pairs if a != b})
    u = np.array([p[0] for p in pairs], dtype=np.int64)
    v = np.array([p[1] for p in pairs], dtype=np.int64)
    w = np.array(draw(st.lists(st.integers(1, 9), min_size=len(pairs), max_size=len(pairs))), dtype=np.int64)
    vw = np.array(draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)), dtype=np.int64)
    return Graph.from_edges(u, v, w if len(pairs) else None, n, vwgt=vw)


def greedy_mate(g, seed):
    """An independent, simple matching: edges in a seeded random order, take if both free."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    mate = np.full(g.n, -1, dtype=np.int64)
    for e in rng.permutation(len(rows)):
        a, b = rows[e], g.indices[e]
        if mate[a] < 0 and mate[b] < 0:
            mate[a], mate[b] = b, a
    return mate


def revalidate(c):
    """Rebuild the coarse graph through the validating constructor (raises when invalid)."""
    return Graph(c.indptr, c.indices, c.ewgt, c.vwgt)


def reference_contract(g, mapping, nc):
    """C = P^T A P with scipy sparse, diagonal dropped (independent reference)."""
    import scipy.sparse as sp
    P = sp.csr_matrix((np.ones(g.n), (np.arange(g.n), mapping)), shape=(g.n, nc))
    C = (P.T @ g.to_scipy() @ P).tolil()
    C.setdiag(0)
    C = C.tocsr()
    C.eliminate_zeros()
    return C


@settings(max_examples=60, deadline=None)
@given(weighted_graphs(), st.integers(0, 2**16))
def test_contraction_invariants(g, seed):
    mate = greedy_mate(g, seed)
    mapping, nc = mapping_from_matching(mate, CPU)
    assert nc == g.n - int((mate >= 0).sum()) // 2
    c = contract(g, mapping, nc)
    revalidate(c)  # symmetric, sorted, no self-loops, positive weights
    assert c.indices.dtype == np.int32 and c.indptr.dtype == np.int64
    assert c.total_vwgt == g.total_vwgt
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    inside = int(g.ewgt[mate[rows] == g.indices].sum()) // 2
    assert c.total_ewgt == g.total_ewgt - inside
    ref = reference_contract(g, mapping, nc)
    assert np.array_equal(c.to_scipy().toarray(), ref.toarray())
    # the cut of a coarse partition equals the cut of its projection
    k = 3
    coarse_parts = np.random.default_rng(seed).integers(0, k, nc)
    assert metrics.edge_cut(c, coarse_parts) == metrics.edge_cut(g, coarse_parts[mapping])
    assert np.array_equal(metrics.block_weights(c, coarse_parts, k),
                          metrics.block_weights(g, coarse_parts[mapping], k))


def test_mapping_orders_groups_by_smallest_member():
    mate = np.array([3, -1, 4, 0, 2, -1])
    mapping, nc = mapping_from_matching(mate, CPU)
    assert nc == 4
    assert mapping.tolist() == [0, 1, 2, 0, 2, 3]
    mapping, nc = mapping_from_labels(np.array([7, 2, 7, 9]), CPU)
    assert nc == 3 and mapping.tolist() == [1, 0, 1, 2]


def test_contract_float_weights_and_empty():
    g = Graph.from_edges([0, 1, 2], [1, 2, 3], [0.5, 1.25, 2.0], vwgt=[0.5, 1.0, 1.5, 2.0])
    c = contract(g, np.array([0, 0, 1, 1]), 2)
    assert c.ewgt.dtype == np.float64 and c.to_scipy().toarray().tolist() == [[0, 1.25], [1.25, 0]]
    assert c.vwgt.tolist() == [1.5, 3.5]
    e = Graph.from_edges([], [], n=3)
    c = contract(e, np.array([0, 0, 1]), 2)
    assert c.n == 2 and c.m == 0 and c.vwgt.tolist() == [2, 1]


def assert_same_graph(a, b):
    for name in ("indptr", "indices", "ewgt", "vwgt"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


@settings(max_examples=80, deadline=None)
@given(weighted_graphs(), st.data())
def test_contraction_kernel_equals_whole_array_formulation(g, data):
    """The CPU's compiled contraction == the GPU's sort + segmented sum (run on numpy), for
    any mapping (groups need not be matched pairs; coarse vertices may have no members)."""
    nc = data.draw(st.integers(1, g.n + 2))
    mapping = np.array(data.draw(st.lists(st.integers(0, nc - 1), min_size=g.n, max_size=g.n)),
                       dtype=np.int64)
    assert_same_graph(contract(g, mapping, nc, method="kernel"), contract(g, mapping, nc, method="xp"))


def record_parallel_calls(monkeypatch, contract_module):
    """(chunks, numba's threads) of each call of the parallel contraction kernel, from now on."""
    calls, kernel = [], contract_module._contract_parallel

    def recording(*args):
        calls.append((args[-1], numba.get_num_threads()))
        return kernel(*args)
    monkeypatch.setattr(contract_module, "_contract_parallel", recording)
    return calls


@pytest.mark.parametrize("spec", ["delaunay:5000", "ba:3000:4"])
@pytest.mark.parametrize("float_weights", [False, True])
def test_contraction_kernels_are_equal(spec, float_weights, monkeypatch):
    # small graphs take contract_by_gathering; with the thresholds at 0 the bucket kernels,
    # serial or parallel (ba: hubs, whose coarse rows are longer than the insertion-sort limit)
    contract_module = importlib.import_module("matchpart.coarsen.contract")  # not the function
    parallel_kernel = contract_module._contract_parallel
    parallel_calls = record_parallel_calls(monkeypatch, contract_module)
    g = load_graph(spec)
    if float_weights:
        g = Graph(g.indptr, g.indices, ewgt=g.ewgt / 3.0, vwgt=g.vwgt)

    def contract_with(mapping, nc, gather_max_vertices, parallel_min_threads):
        monkeypatch.setattr(contract_module, "GATHER_MAX_VERTICES", gather_max_vertices)
        monkeypatch.setattr(contract_module, "PARALLEL_MIN_ENTRIES", 0)
        monkeypatch.setattr(contract_module, "PARALLEL_MIN_THREADS", parallel_min_threads)
        return contract(g, mapping, nc, method="kernel")
    for nc in (g.n // 2, g.n // 8):
        mapping = np.random.default_rng(nc).integers(0, nc, g.n)
        gathered = contract_with(mapping, nc, 10**9, 0)
        serial = contract_with(mapping, nc, 0, 10**6)
        assert parallel_calls == []
        parallel = contract_with(mapping, nc, 0, 0)
        # the parallel kernel ran, in the data's chunks, on every thread
        assert parallel_calls == [(contract_module.parallel_chunks(g.indices.shape[0]), numba.get_num_threads())]
        parallel_calls.clear()
        # float sums too: all three add in fine CSR order (the segmented sum adds in another)
        assert_same_graph(gathered, serial)
        assert_same_graph(parallel, serial)
        if not float_weights:
            assert_same_graph(parallel, contract(g, mapping, nc, method="xp"))
        # more chunks than threads: each chunk's bounds and scratch, whatever the machine
        arrays = (g.indptr, g.indices.astype(np.int32), g.ewgt, g.vwgt, mapping.astype(np.int32), nc)
        for chunks in (1, 3, 7):
            assert_same_graph(Graph._trusted(*parallel_kernel(*arrays, chunks), CPU), serial)


_THREADS_SCRIPT = FORCE_PARALLEL_CONTRACTION + """
import hashlib, json, numba, numpy as np
from matchpart.io import load_graph
g = load_graph("ba:4000:5")
mapping = np.random.default_rng(1).integers(0, 900, g.n)
arrays = (g.indptr, g.indices, g.ewgt.astype(np.float64) / 3, g.vwgt)
h = hashlib.sha256()
for out in (_parallel_kernel(*arrays, mapping, 900, 3), contract_module.contract_arrays(arrays, mapping, 900)):
    for a in out:
        h.update(a.tobytes())
# threading_layer() raises unless a parallel region ran in this process
print(json.dumps({"hash": h.hexdigest(), "calls": parallel_calls, "layer": numba.threading_layer()}))
"""


def test_parallel_contraction_does_not_depend_on_the_thread_count():
    import json
    import os
    import subprocess
    import sys
    root = str(Path(__file__).resolve().parent.parent)
    hashes = []
    for threads in (1, 2):
        env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), PYTHONPATH=root)
        run = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True,
                             text=True, check=True)
        out = json.loads(run.stdout.splitlines()[-1])
        # contract_arrays ran the threaded kernel on `threads` threads, in chunks fixed by the data
        assert out["calls"] == [[2, threads]] and out["layer"]
        hashes.append(out["hash"])
    assert hashes[0] == hashes[1]


@settings(max_examples=40, deadline=None)
@given(weighted_graphs(), st.integers(0, 100), st.integers(2, 12))
def test_two_hop_pairs_share_a_neighbour_and_respect_cap(g, seed, cap):
    mate = greedy_mate(g, seed)
    new = two_hop_pairs(g, mate, cap, seed=seed)
    assert np.array_equal(new[mate >= 0], mate[mate >= 0])  # existing pairs untouched
    added = np.flatnonzero((mate < 0) & (new >= 0))
    assert np.array_equal(new[new[added]], added)  # symmetric
    A = g.to_scipy()
    for a in added:
        b = new[a]
        assert g.vwgt[a] + g.vwgt[b] <= cap
        na, nb = set(A[a].indices), set(A[b].indices)
        assert (na & nb) or (not na and not nb)  # common neighbour, or both isolated
    mapping, nc = mapping_from_matching(new, CPU)
    revalidate(contract(g, mapping, nc))


@settings(max_examples=60, deadline=None)
@given(weighted_graphs(), st.integers(0, 100), st.integers(2, 12), st.integers(0, 3))
def test_two_hop_kernel_equals_whole_array_formulation(g, seed, cap, blocks):
    mate = greedy_mate(g, seed)
    block = np.random.default_rng(seed).integers(0, blocks, g.n) if blocks else None
    got = two_hop_pairs(g, mate, cap, seed=seed, block=block, method="kernel")
    want = two_hop_pairs(g, mate, cap, seed=seed, block=block, method="xp")
    assert np.array_equal(got, want)


def test_two_hop_kernel_equals_whole_array_formulation_on_hubs():
    g = load_graph("ba:3000:2")
    mate = run_matcher("local_max", g, seed=1).mate
    for seed in range(3):
        assert np.array_equal(two_hop_pairs(g, mate, 40, seed=seed, method="kernel"),
                              two_hop_pairs(g, mate, 40, seed=seed, method="xp"))


@pytest.mark.parametrize("free_every", [1, 3, 40])
def test_two_hop_kernel_sorts_many_or_few_free_vertices_alike(free_every):
    # the kernel sorts by hub by counting where the free vertices are many (every vertex, a
    # third) and by merge sort where they are few (1 in 40: below 1 / COUNTING_SHARE)
    g = load_graph("ba:3000:2")
    vid = np.arange(g.n)
    mate = np.where(vid % free_every == 0, -1, vid)
    for block in (None, vid % 3):
        for seed in range(2):
            assert np.array_equal(two_hop_pairs(g, mate, 40, seed=seed, block=block, method="kernel"),
                                  two_hop_pairs(g, mate, 40, seed=seed, block=block, method="xp"))


def test_star_graph_coarsens_past_the_stall():
    g = Graph.from_networkx(nx.star_graph(999))
    levels = coarsen(g, matcher="local_max", rating="weight", coarsen_to=50, max_vertex_weight=10**9)
    assert levels[-1].graph.n <= 50
    # without two-hop, a matching could only remove one vertex from a star
    first = levels[0].stats
    assert first["two_hop_fraction"] > 0.9


def test_power_law_graph_coarsens():
    g = Graph.from_networkx(nx.barabasi_albert_graph(3000, 2, seed=1))
    levels = coarsen(g, coarsen_to=100, seed=3)
    sizes = [lv.graph.n for lv in levels]
    assert sizes[-1] <= 0.1 * sizes[0]
    assert all(b < a for a, b in zip(sizes, sizes[1:]))


def test_hierarchy_shrinks_and_respects_cap():
    g = load_graph(shared_graph("4elt.graph"))
    levels = coarsen(g, coarsen_to=300, seed=1)
    cap = max_coarse_vertex_weight(g, 300)
    for fine, coarse in zip(levels, levels[1:]):
        assert coarse.graph.n < fine.graph.n
        assert coarse.graph.total_vwgt == g.total_vwgt
        assert int(coarse.graph.vwgt.max()) <= max(cap, int(fine.graph.vwgt.max()))
        assert fine.mapping.shape == (fine.graph.n,) and int(fine.mapping.max()) == coarse.graph.n - 1
    assert levels[-1].graph.n <= 300 or levels[-1].graph.n > 0.9 * levels[-2].graph.n
    assert int(levels[-1].graph.vwgt.max()) <= cap
    stats = levels[0].stats
    assert stats["rounds"] >= 1 and 0.5 < stats["matched_fraction"] <= 1


def test_hierarchy_deterministic_and_seeded():
    g = Graph.from_networkx(nx.random_regular_graph(4, 400, seed=2))
    a = coarsen(g, coarsen_to=40, seed=5)
    b = coarsen(g, coarsen_to=40, seed=5)
    assert [lv.graph.n for lv in a] == [lv.graph.n for lv in b]
    assert all(np.array_equal(x.mapping, y.mapping) for x, y in zip(a[:-1], b[:-1]))


def test_hierarchy_bad_arguments():
    g = Graph.from_edges([0], [1])
    with pytest.raises(ValueError, match="coarsen_to"):
        coarsen(g, coarsen_to=0)
    with pytest.raises(ValueError, match="min_shrink"):
        coarsen(g, min_shrink=0)


def test_hierarchy_with_a_custom_matcher_callable():
    calls = []

    def first_edge_only(graph, *, rating, seed, backend):
        calls.append(graph.n)
        mate = np.full(graph.n, -1, dtype=np.int64)
        if graph.m:
            a = int(np.flatnonzero(np.diff(graph.indptr))[0])
            b = int(graph.indices[graph.indptr[a]])
            mate[a], mate[b] = b, a
        return Matching.from_mate(graph, mate)

    g = Graph.from_networkx(nx.path_graph(10))
    levels = coarsen(g, matcher=first_edge_only, coarsen_to=2, min_shrink=1.0)
    assert calls and levels[-1].graph.n < 10


@settings(max_examples=30, deadline=None)
@given(weighted_graphs(max_n=40), st.integers(0, 1000), st.integers(2, 15))
def test_cluster_labels_within_cap(g, seed, cap):
    labels = cluster_labels(g, cap, seed=seed)
    sizes = np.bincount(labels, weights=g.vwgt, minlength=g.n)
    counts = np.bincount(labels, minlength=g.n)
    assert ((sizes <= cap) | (counts == 1)).all()
    mapping, nc, stats = cluster_mapping(g, cap, seed)
    c = revalidate(contract(g, mapping, nc))
    assert c.total_vwgt == g.total_vwgt
    heavy = np.bincount(mapping, weights=g.vwgt)
    single = np.bincount(mapping) == 1
    assert ((heavy <= cap) | single).all()


def test_cluster_coarsening_shrinks_a_mesh():
    g = load_graph(shared_graph("airfoil1.graph"))
    levels = coarsen(g, coarsen_to=200, clusterer=cluster_mapping, seed=2)
    assert levels[-1].graph.n <= 200
    assert len(levels) <= 6  # clustering shrinks much faster than matching
    cap = max_coarse_vertex_weight(g, 200)
    assert int(levels[-1].graph.vwgt.max()) <= cap
    assert levels[-1].graph.total_vwgt == g.total_vwgt


def test_matching_from_registered_matcher_is_valid_after_cap():
    from matchpart.coarsen.hierarchy import drop_heavy_pairs
    g = Graph.from_networkx(nx.grid_2d_graph(10, 10))
    vw = np.arange(1, 101)
    g = Graph(g.indptr, g.indices, g.ewgt, vw)
    m = run_matcher("local_max", g, rating="weight", seed=1)
    mate = drop_heavy_pairs(g, m.mate, 60)
    assert matching_problems(g, mate) == []
    paired = mate >= 0
    assert (g.vwgt[paired] + g.vwgt[mate[paired]] <= 60).all()


@pytest.mark.gpu
def test_contract_gpu_equals_cpu():
    g = load_graph(shared_graph("4elt.graph"))
    mate = run_matcher("local_max", g, seed=3).mate
    mapping, nc = mapping_from_matching(mate, CPU)
    c = contract(g, mapping, nc)
    gg = g.to("gpu")
    gm, gnc = mapping_from_matching(gg.backend.to_device(mate), gg.backend)
    cg = contract(gg, gm, gnc)
    assert gnc == nc
    for a, b in ((c.indptr, cg.indptr), (c.indices, cg.indices), (c.ewgt, cg.ewgt), (c.vwgt, cg.vwgt)):
        assert np.array_equal(a, gg.backend.to_host(b))
    labels_cpu = cluster_labels(g, 40, seed=1)
    labels_gpu = gg.backend.to_host(cluster_labels(gg, 40, seed=1))
    assert np.array_equal(labels_cpu, labels_gpu)
    p_cpu = two_hop_pairs(g, np.full(g.n, -1), 10, seed=1)
    p_gpu = gg.backend.to_host(two_hop_pairs(gg, gg.backend.xp.full(g.n, -1), 10, seed=1))
    assert np.array_equal(p_cpu, p_gpu)


@pytest.mark.parametrize("clustered", [False, True])
def test_coarsening_inside_blocks_keeps_the_partition(clustered):
    g = load_graph(shared_graph("PGPgiantcompo.graph"))  # skewed degrees: two-hop pairs happen
    k = 5
    parts = np.asarray(CPU.hash32(7, 1, np.arange(g.n)) % k, dtype=np.int64)
    levels = coarsen(g, coarsen_to=100, seed=2, parts=parts,
                     clusterer=cluster_mapping if clustered else None)
    assert len(levels) > 2
    assert np.array_equal(levels[0].parts, parts)
    for fine, coarse in zip(levels, levels[1:]):
        # every coarse vertex lies inside one block, so the projection is exact
        assert np.array_equal(coarse.parts[fine.mapping], fine.parts)
        assert metrics.edge_cut(coarse.graph, coarse.parts) == metrics.edge_cut(fine.graph, fine.parts)
        assert np.array_equal(metrics.block_weights(coarse.graph, coarse.parts, k),
                              metrics.block_weights(fine.graph, fine.parts, k))


@settings(max_examples=60, deadline=None)
@given(g=weighted_graphs(), seed=st.integers(0, 1000), cap=st.floats(0, 12), float_w=st.booleans())
def test_pair_kernels_equal_whole_array_versions(g, seed, cap, float_w):
    """The CPU's one-pass weight cap and coarse ids (coarsen/pairs.py) are the whole-array
    versions' (the GPU's), on matchings plus two-hop pairs (pairs that are not edges)."""
    from matchpart.coarsen.contract import mapping_from_matching_xp
    from matchpart.coarsen.hierarchy import drop_heavy_pairs
    from matchpart.coarsen.pairs import drop_heavy_pairs_host
    if float_w:
        g = Graph(g.indptr, g.indices, g.ewgt, g.vwgt.astype(np.float64) + 0.5)
    mate = two_hop_pairs(g, run_matcher("local_max", g, seed=seed).mate, 1e9, seed=seed)
    kept, paired = drop_heavy_pairs_host(g.vwgt, mate, cap)
    expected = drop_heavy_pairs(g, mate, cap)
    assert np.array_equal(kept, expected) and paired == int((expected >= 0).sum())
    mapping, nc = mapping_from_matching(kept, CPU)
    xp_mapping, xp_nc = mapping_from_matching_xp(np.asarray(kept, dtype=np.int64), CPU)
    assert nc == xp_nc and mapping.dtype == xp_mapping.dtype and np.array_equal(mapping, xp_mapping)
    # the chunked passes on the threads (chunks of 3 vertices here): the same output
    from matchpart.coarsen.pairs import _drop_heavy_kernel, _leader_mapping_kernel
    out = np.empty(g.n, dtype=np.int64)
    assert _drop_heavy_kernel(g.vwgt, mate, float(cap), out, 3) == paired and np.array_equal(out, kept)
    chunked = np.empty(g.n, dtype=np.int64)
    assert _leader_mapping_kernel(kept, chunked, 3) == nc and np.array_equal(chunked, mapping)


def test_upper_edge_ratings_of_an_unchecked_graph_with_a_self_loop():
    # the compiled ratings size their outputs as nnz / 2 (true of every valid graph) and
    # redo a graph built without checks at its own size
    from matchpart.matchers.ratings import upper_edge_ratings
    g = Graph._trusted(np.array([0, 2, 3, 4]), np.array([0, 1, 0, 2], dtype=np.int32),
                       np.ones(4, dtype=np.int64), np.ones(3, dtype=np.int64), CPU)
    eu, ev, r = upper_edge_ratings(g, "weight")
    assert eu.tolist() == [0] and ev.tolist() == [1] and r.tolist() == [1.0]


@settings(max_examples=60, deadline=None)
@given(weighted_graphs(max_n=60), st.integers(0, 2**16), st.integers(1, 5))
def test_sampled_edges_kept_kernel_equals_whole_array_and_is_exact_when_every_vertex_is_sampled(g, seed, stride):
    mate = greedy_mate(g, seed)
    mapping, nc = mapping_from_matching(mate, g.backend)
    got = sampled_edges_kept(g, mate, mapping, nc, stride)
    assert got == sampled_edges_kept_xp(g, mate, mapping, nc, stride)
    if stride == 1:                           # the whole contraction: its entries against the graph's
        coarse = contract(g, mapping, nc)
        assert got == (coarse.indices.shape[0], g.indices.shape[0], nc)



@settings(max_examples=60, deadline=None)
@given(weighted_graphs(max_n=60), st.integers(0, 2**16), st.sampled_from([1, 2, 3, 7, 4096]), st.booleans())
def test_threaded_gathering_equals_the_serial_gathering(g, seed, chunk, float_weights):
    from matchpart.coarsen import gather
    mapping, nc = mapping_from_matching(greedy_mate(g, seed), g.backend)
    mapping = mapping.astype(g.indices.dtype)
    ewgt = g.ewgt.astype(np.float64) / 3 if float_weights else g.ewgt
    by_transpose = not float_weights
    m = g.indices.shape[0]
    serial = gather.contract_by_gathering(g.indptr, g.indices, ewgt, g.vwgt, mapping, nc, np.empty(m, g.indices.dtype),
                                          np.empty(m, ewgt.dtype), by_transpose)
    for entries in (1, 5, 1 << 17):      # transposed in many chunks, and in one
        threaded = gather.contract_by_gathering_parallel(g.indptr, g.indices, ewgt, g.vwgt, mapping, nc,
                                                         by_transpose, chunk, entries)
        for a, b in zip(serial, threaded):
            assert a.dtype == b.dtype and np.array_equal(a, b)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=40), st.integers(1, 120))
def test_row_chunks_close_each_chunk_at_its_share_of_entries(degrees, entries):
    from matchpart.coarsen.gather import row_chunks
    bound = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    rows = row_chunks(bound, entries)
    n = len(degrees)
    assert rows[0] == 0 and rows[-1] == n and (np.diff(rows) > 0).all() or (n == 0 and list(rows) == [0])
    for a, b in zip(rows[:-2], rows[1:-1]):      # every chunk but the last reaches the share ...
        assert bound[b] - bound[a] >= entries
        assert bound[b - 1] - bound[a] < entries     # ... and closes at the first row that does
    if len(rows) > 1:
        a, b = rows[-2], rows[-1]
        assert bound[b - 1] - bound[a] < entries


@settings(max_examples=40, deadline=None)
@given(labels=st.lists(st.integers(0, 400), min_size=1, max_size=300), chunk=st.integers(1, 50))
def test_mapping_from_labels_by_counting_equals_the_sorted_labels(labels, chunk):
    from matchpart.coarsen import pairs
    labels = np.array(labels, dtype=np.int64)
    uniq, inverse = np.unique(labels, return_inverse=True)
    mapping, nc = mapping_from_labels(labels, CPU)      # counted where the labels lie below 4 n
    assert nc == uniq.shape[0] and np.array_equal(mapping, inverse)
    id_of, out = np.zeros(labels.max() + 2, dtype=np.int64), np.empty(labels.shape[0], dtype=np.int64)
    for count in (1, 2):                                # any chunk, any thread count
        with thread_control.limit(count):
            assert pairs._mapping_by_counting_kernel(labels, id_of.copy(), out, chunk) == nc
        assert np.array_equal(out, inverse)
