"""Threads: results do not depend on the thread count, the threaded paths are the ones taken,
concurrent calls from several Python threads are safe, and threads= / --threads behave."""
import concurrent.futures
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import metrics, threads
from matchpart.graph import Graph
from matchpart.refine.jet import jet_arrays
from matchpart.refine.state import host_arrays

from conftest import SHARED_GRAPHS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _random_graph(seed, n, p, float_weights=False):
    rng = np.random.default_rng(seed)
    a = np.triu(rng.random((n, n)) < p, 1)
    u, v = np.nonzero(a)
    w = rng.random(u.shape[0]) + 0.5 if float_weights else rng.integers(1, 6, size=u.shape[0])
    rows, cols, ww = np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([w, w])
    order = np.lexsort((cols, rows))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return Graph(indptr, cols[order], ewgt=ww[order], vwgt=rng.integers(1, 3, size=n).astype(np.int64))


class _Threaded:
    """Every parallel kernel takes its prange path in chunks of ``chunk`` items, however
    small its input (a context manager: hypothesis runs tests outside function fixtures)."""

    def __init__(self, chunk):
        self.chunk = chunk

    def __enter__(self):
        self.saved = threads.CHUNK, threads.PARALLEL_MIN_ITEMS
        threads.CHUNK, threads.PARALLEL_MIN_ITEMS = self.chunk, 0

    def __exit__(self, *exc):
        threads.CHUNK, threads.PARALLEL_MIN_ITEMS = self.saved


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 120), p=st.floats(0.02, 0.3), k=st.integers(2, 9),
       float_weights=st.booleans(), chunk=st.integers(1, 40))
def test_jet_is_the_same_for_one_and_two_threads(seed, n, p, k, float_weights, chunk):
    g = _random_graph(seed, n, p, float_weights)
    k = min(k, n)
    maxw = np.full(k, metrics.max_block_weight(g.total_vwgt, k, 0.03), dtype=np.float64)
    parts = np.random.default_rng(seed).integers(0, k, size=n)
    arrays = host_arrays(g)
    runs = []
    for count in (1, 2):
        with _Threaded(chunk), threads.limit(count):
            best, cut, flags = jet_arrays(arrays, parts, maxw, seed=seed, patience=3)
        runs.append((best.tobytes(), cut, flags.tobytes()))
    assert runs[0] == runs[1]          # the same chunks give the same result on any threads
    if not float_weights:              # integer sums are exact: any chunk size gives it too
        best, cut, flags = jet_arrays(arrays, parts, maxw, seed=seed, patience=3)
        assert runs[0] == (best.tobytes(), cut, flags.tobytes())


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 90), p=st.floats(0.0, 0.4), vw=st.integers(1, 4),
       chunk=st.integers(1, 30))
def test_upper_edge_ratings_in_chunks_on_threads_equal_the_serial_kernel(seed, n, p, vw, chunk):
    from matchpart.matchers.ratings import RATINGS, upper_edge_ratings
    g = _random_graph(seed, n, p, float_weights=seed % 2 == 1)
    g = Graph(g.indptr, g.indices, ewgt=g.ewgt, vwgt=np.random.default_rng(seed).integers(0, vw + 1, size=n))
    for rating in RATINGS:
        with threads.limit(1):
            serial = upper_edge_ratings(g, rating)
        with _Threaded(chunk), threads.limit(2):
            chunked = upper_edge_ratings(g, rating)
        for a, b in zip(serial, chunked):
            assert a.dtype == b.dtype and np.array_equal(a, b)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 120), p=st.floats(0.0, 0.4), chunk=st.integers(1, 30),
       rating=st.sampled_from(["weight", "expansion_star2", "inner_outer"]))
def test_local_max_rounds_on_threads_equal_the_serial_rounds_and_the_whole_array_rounds(seed, n, p, chunk, rating):
    from matchpart.matchers import local_max as lm
    g = _random_graph(seed, n, p, float_weights=seed % 2 == 1)
    with threads.limit(1):
        serial = lm.local_max(g, rating=rating, seed=seed)
    with _Threaded(chunk), threads.limit(2):
        chunked = lm.local_max(g, rating=rating, seed=seed)
    assert np.array_equal(serial.mate, chunked.mate) and serial.stats == chunked.stats
    saved, lm.CPU_KERNEL = lm.CPU_KERNEL, False
    try:
        whole_array = lm.local_max(g, rating=rating, seed=seed)
    finally:
        lm.CPU_KERNEL = saved
    assert np.array_equal(serial.mate, whole_array.mate) and serial.stats == whole_array.stats


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 90), p=st.floats(0.0, 0.4), vw=st.integers(0, 4),
       chunk=st.integers(1, 30))
def test_entry_order_keys_on_threads_equal_the_keys_of_edge_ratings(seed, n, p, vw, chunk):
    from matchpart.matchers.ratings import RATINGS, edge_ratings, entry_order_keys, order_keys
    g = _random_graph(seed, n, p, float_weights=seed % 2 == 1)
    g = Graph(g.indptr, g.indices, ewgt=g.ewgt, vwgt=np.random.default_rng(seed).integers(0, vw + 1, size=n))
    for rating in RATINGS:
        expected = order_keys(edge_ratings(g, rating))
        with threads.limit(1):
            assert np.array_equal(entry_order_keys(g, rating), expected)
        with _Threaded(chunk), threads.limit(2):
            assert np.array_equal(entry_order_keys(g, rating), expected)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 120), p=st.floats(0.02, 0.3), k=st.integers(2, 9),
       c=st.integers(2, 3), chunk=st.integers(1, 40), eps=st.floats(0.0, 0.3))
def test_multi_constraint_refinement_is_the_same_for_one_and_two_threads(seed, n, p, k, c, chunk, eps):
    from matchpart.refine.multi_level import refine_nc
    g = _random_graph(seed, n, p)
    k = min(k, n)
    rng = np.random.default_rng(seed)
    vw = rng.integers(0, 6, size=(n, c))
    vw[:, 0] = 1
    maxw = metrics.constraint_bounds(tuple(int(x) for x in vw.sum(axis=0)), k, [eps] * c).astype(np.float64)
    start = rng.integers(0, k, size=n)
    runs = []
    for count in (1, 2):
        parts = start.copy()
        with _Threaded(chunk), threads.limit(count):
            over = refine_nc(g.indptr, g.indices, g.ewgt, vw, parts, maxw, seed=seed, rounds=3, fm_passes=1)
        runs.append((parts.tobytes(), over))
    assert runs[0] == runs[1]



@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 150), p=st.floats(0.0, 0.2), chunk=st.integers(1, 40),
       bucket=st.integers(1, 64), blocks=st.integers(0, 3), cap=st.integers(2, 8))
def test_two_hop_pairs_are_the_same_for_one_and_two_threads_and_the_whole_array_pairs(seed, n, p, chunk, bucket,
                                                                                      blocks, cap):
    from matchpart.coarsen import twohop
    from matchpart.matchers import run_matcher
    g = _random_graph(seed, n, p)      # p near 0 leaves isolated vertices: the virtual hubs
    mate = run_matcher("local_max", g, seed=seed).mate
    block = np.random.default_rng(seed).integers(0, blocks, n) if blocks else None
    runs = []
    saved = twohop.CHUNK, twohop.BUCKET_HUBS
    twohop.CHUNK, twohop.BUCKET_HUBS = chunk, bucket     # many chunks and buckets on tiny graphs
    try:
        for count in (1, 2):
            with threads.limit(count):
                runs.append(twohop.two_hop_pairs(g, mate, cap, seed=seed, block=block, method="kernel"))
    finally:
        twohop.CHUNK, twohop.BUCKET_HUBS = saved
    assert np.array_equal(runs[0], runs[1])
    assert np.array_equal(runs[0], twohop.two_hop_pairs(g, mate, cap, seed=seed, block=block, method="xp"))

_SCRIPT = r"""
import hashlib, json, sys, warnings
import numpy as np
import matchpart
from matchpart import threads
from matchpart.graph import Graph
threads.CHUNK, threads.PARALLEL_MIN_ITEMS = 64, 0     # small graphs take the threaded paths too
from matchpart import relabel
relabel.RELABEL_MIN_VERTICES, relabel.RELABEL_MIN_SKEW = 1000, 8   # rmat and ba are relabelled
assert relabel.skewed(matchpart.load_graph("rmat:11")) and relabel.skewed(matchpart.load_graph("ba:1500:3"))
graphs = {"rmat:11": "rmat:11", "delaunay:3000": "delaunay:3000", "ba:1500:3": "ba:1500:3"}
import scipy.sparse as sp
g = matchpart.load_graph("delaunay:2000")
upper = sp.triu(sp.csr_matrix((np.ones(g.indices.shape[0]), g.indices, g.indptr), shape=(g.n, g.n)), 1).tocoo()
upper.data = np.random.default_rng(7).random(upper.nnz) + 0.5     # float weights
a = (upper + upper.T).tocsr()
a.sort_indices()
graphs["delaunay:2000 float"] = Graph(a.indptr.astype(np.int64), a.indices, ewgt=a.data, vwgt=g.vwgt)
ncon = np.stack([np.ones(g.n), np.diff(g.indptr), np.arange(g.n) % 7 == 0], axis=1).astype(np.int64)
graphs["delaunay:2000 ncon=3"] = g.with_vertex_weights(ncon)      # the multi-constraint V-cycle
from scipy.spatial import Delaunay
from matchpart.mesh import dual_graph
triangles = Delaunay(np.random.default_rng(5).random((1500, 2))).simplices
graphs["dual mesh"] = dual_graph(triangles, 2)     # mean degree < 4: localized FM on every level
for name in sys.argv[1:]:
    graphs[name] = name
out = {}
warnings.simplefilter("ignore")
for count in (1, 2, 3, 4):
    with threads.limit(count):
        h = hashlib.sha1()
        for label, graph in graphs.items():
            for preset in ("fast", "default", "strong"):
                r = matchpart.partition(graph, 8, preset=preset, seed=1)
                h.update(r.parts.tobytes()); h.update(repr(r.cut).encode())
            for matcher in ("local_max", "suitor", "red_blue", "heavy_edge"):
                if not label.endswith("ncon=3"):      # matchers take one weight per vertex
                    h.update(matchpart.match(graph, matcher, seed=2).mate.tobytes())
        rows = matchpart.compare({"d": "delaunay:1500"}, 4, ["local_max", "suitor"], repeats=2)
        h.update(json.dumps([[r["cuts"], r["matcher"]] for r in rows]).encode())
    out[count] = h.hexdigest()
print(json.dumps(out))
"""


def partition_digest_script(setup, graphs, ks):
    """A script for assert_same_digest_for_1_to_4_threads: ``setup`` (lines that force a path),
    then the partitions of ``graphs`` (a Python list expression; ``float_weighted(spec)`` is a
    generated graph with symmetric float edge weights) at each k of ``ks``, hashed per count."""
    return f"""
import hashlib, json, warnings
import numpy as np
import matchpart
from matchpart import threads
from matchpart.graph import Graph
warnings.simplefilter("ignore")
threads.CHUNK, threads.PARALLEL_MIN_ITEMS = 64, 0         # small graphs take the threaded paths too
def float_weighted(spec):
    g = matchpart.load_graph(spec)
    src = np.repeat(np.arange(g.n), np.diff(g.indptr))
    w = np.random.default_rng(5).random(g.indices.shape[0]) + 0.5
    w = (w + w[np.lexsort((src, g.indices))]) / 2
    return Graph(g.indptr, g.indices, ewgt=w, vwgt=g.vwgt)
{setup}
graphs = {graphs}
out = {{}}
for count in (1, 2, 3, 4):
    with threads.limit(count):
        h = hashlib.sha1()
        for graph in graphs:
            for k in {tuple(ks)!r}:
                r = matchpart.partition(graph, k, seed=1)
                h.update(r.parts.tobytes()); h.update(repr(r.cut).encode())
    out[count] = h.hexdigest()
print(json.dumps(out))
"""


def assert_same_digest_for_1_to_4_threads(script, *args):
    """Run ``script`` (it prints {thread count: digest} for 1-4 threads as its last line) under
    NUMBA_NUM_THREADS=4, more threads than this machine's cores, and check one digest."""
    env = dict(os.environ, NUMBA_NUM_THREADS="4", PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env,
                       timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    digests = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(digests) == {"1", "2", "3", "4"}
    assert len(set(digests.values())) == 1, digests


@pytest.mark.slow
def test_match_partition_compare_are_the_same_for_1_to_4_threads():
    extra = [str(SHARED_GRAPHS / name) for name in ("4elt.graph", "example_weighted.graph")
             if (SHARED_GRAPHS / name).exists()]
    assert_same_digest_for_1_to_4_threads(_SCRIPT, *extra)


def test_concurrent_calls_from_python_threads_are_safe_and_unchanged():
    specs = ["delaunay:4000", "rmat:11", "rgg:3000", "delaunay:4000:seed=3"]
    alone = [matchpart.partition(s, 8, threads=2).parts for s in specs]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda s: matchpart.partition(s, 8, threads=2).parts, specs * 2))
    for i, parts in enumerate(together):
        assert np.array_equal(parts, alone[i % len(specs)])
    assert threads.layer() in ("tbb", "omp") or threads._state["serialise"]


_CONCURRENT = r"""
import concurrent.futures, json
import numpy as np
import matchpart
from matchpart import threads
specs = ["delaunay:3000", "rmat:10", "rgg:2000"]
alone = [matchpart.partition(s, 4, threads=2).parts for s in specs]
with concurrent.futures.ThreadPoolExecutor(3) as pool:
    together = list(pool.map(lambda s: matchpart.partition(s, 4, threads=2).parts, specs * 3))
same = all(np.array_equal(p, alone[i % 3]) for i, p in enumerate(together))
print(json.dumps({"same": same, "layer": threads.layer(), "serialise": threads._state["serialise"]}))
"""


def test_concurrent_calls_on_numbas_workqueue_layer_are_serialised():
    # workqueue aborts the process when two Python threads run parallel kernels at once
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="2", PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", _CONCURRENT], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {"same": True, "layer": "workqueue", "serialise": True}


def test_threads_argument_is_checked_and_reported():
    r = matchpart.partition("delaunay:500", 4, threads=1)
    assert r.threads == 1
    assert matchpart.partition("delaunay:500", 4).threads == threads.available()
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="threads"):
            matchpart.partition("delaunay:500", 4, threads=bad)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        r = matchpart.partition("delaunay:500", 4, threads=threads.available() + 1)
    assert r.threads == threads.available()
    assert any("lowered" in str(w.message) for w in seen)


def test_limit_restores_the_callers_thread_count():
    import numba
    before = numba.get_num_threads()
    with threads.limit(1) as count:
        assert count == 1 and numba.get_num_threads() == 1
    assert numba.get_num_threads() == before


def test_cli_threads_flag_reaches_the_report(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "matchpart", "partition", "delaunay:800", "4", "--threads", "1",
                        "--json", "-o", str(tmp_path / "p")], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["threads"] == 1
    bad = subprocess.run([sys.executable, "-m", "matchpart", "partition", "delaunay:800", "4", "--threads", "0"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert bad.returncode == 2 and "--threads" in bad.stderr


def test_limit_hands_out_chunks_one_at_a_time_and_restores_numbas_settings():
    import numba
    before = (numba.get_num_threads(), numba.get_parallel_chunksize())
    with threads.limit(1) as count:
        assert count == 1 and numba.get_num_threads() == 1
        assert numba.get_parallel_chunksize() == threads.CHUNKS_PER_TAKE
    assert (numba.get_num_threads(), numba.get_parallel_chunksize()) == before


def _parfor_gufuncs(dispatcher):
    import re
    return [len(set(re.findall(r"numba_parfor_gufunc_0x[0-9a-f]+", str(cres.library._final_module))))
            for cres in dispatcher.overloads.values()]


def test_prange_only_holds_for_every_kernel_compiled_after_others():
    # numba pops the keys of a parallel=dict as it reads them: a shared dict would leave the
    # second compilation in a process with all of numba's conversions (np.zeros, array
    # expressions and sums as thread-pool launches)
    from matchpart.jit import njit
    from numba import prange

    g = matchpart.generate("delaunay:3000", seed=1)
    matchpart.partition(g, 4, seed=0)              # the package's parallel kernels compile first
    assert threads.PRANGE_ONLY["numpy"] is False and threads.PRANGE_ONLY["prange"] is True

    def body(x):
        y = np.zeros(x.size)                       # numba's "numpy" conversion: a parfor
        z = x * 2                                  # an array expression: a parfor
        for i in prange(x.size):
            y[i] = z[i] + x.sum()                  # a reduction inside: a parfor
        return y

    kernel = njit(parallel=threads.PRANGE_ONLY)(body)
    kernel(np.ones(10))
    kernel(np.ones(10, dtype=np.float32))          # a second signature of the same kernel
    assert _parfor_gufuncs(kernel) == [1, 1]
    everything = njit(parallel=True)(body)         # the check can fail: all conversions on
    everything(np.ones(10))
    assert _parfor_gufuncs(everything)[0] > 1


def test_scaled_chunks_shrink_with_the_mean_degree_and_leave_results_alone(monkeypatch):
    """Dense graphs get chunks of fewer vertices (about CHUNK x CHUNK_MEAN_DEGREE entries);
    Jet's and the clustering's results do not depend on the chunks."""
    assert threads.scaled_chunk(2048, 4096, 1000, 16000) == (2048, 4096)
    assert threads.scaled_chunk(2048, 4096, 1000, 64000) == (512, 1024)
    assert threads.scaled_chunk(3, 0, 10, 10**6) == (1, 0)
    from matchpart.coarsen.cluster import cluster_mapping
    g = matchpart.load_graph("rmat:11")          # mean degree ~ 28
    k = 8
    lmax = metrics.max_block_weight(g.total_vwgt, k, 0.03)
    parts = np.random.default_rng(1).integers(0, k, g.n).astype(np.int64)
    maxw = np.full(k, lmax)
    results = []
    for mean in (1, 16, 10**6):
        monkeypatch.setattr(threads, "CHUNK_MEAN_DEGREE", mean)
        with _Threaded(64):
            best, cut, _ = jet_arrays(host_arrays(g), parts, maxw, seed=3)
            mapping, nc, _ = cluster_mapping(g, lmax / 4, 5)
        results.append((best.tobytes(), cut, np.asarray(mapping).tobytes(), nc))
    assert results[0] == results[1] == results[2]
