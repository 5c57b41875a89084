"""Tests of matchpart.backend: hash RNG, permutations, segmented and scatter primitives, device selection."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from matchpart import backend
from matchpart.errors import DeviceError

be = backend.get("cpu")


def test_get_cpu_and_unknown_device():
    assert be.name == "cpu" and be.xp is np and not be.is_gpu
    assert backend.get(be) is be
    with pytest.raises(DeviceError, match="unknown device"):
        backend.get("tpu")


def test_gpu_request_without_gpu_is_a_clear_error():
    if backend.gpu_available():
        pytest.skip("a GPU is available here")
    with pytest.raises(DeviceError, match="gpu"):
        backend.get("gpu")
    assert backend.get("auto").name == "cpu"


def test_hash_is_deterministic_and_depends_on_seed_and_stream():
    c = np.arange(1000, dtype=np.uint64)
    a = be.hash64(7, 3, c)
    assert a.dtype == np.uint64
    assert np.array_equal(a, be.hash64(7, 3, c))
    assert not np.array_equal(a, be.hash64(8, 3, c))
    assert not np.array_equal(a, be.hash64(7, 4, c))
    assert np.unique(a).shape[0] == 1000  # a bijective mixer: distinct counters, distinct hashes
    # evaluation order does not matter: a counter's value does not depend on its neighbours
    assert np.array_equal(be.hash64(7, 3, c[::-1])[::-1], a)
    assert be.hash32(7, 3, c).dtype == np.uint32


def test_uniform_sanity():
    u = be.uniform(1, 0, np.arange(200_000))
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.005
    hist = np.bincount((u * 10).astype(int), minlength=10)
    assert hist.min() > 19_000 and hist.max() < 21_000
    # consecutive values are not correlated
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01
    # each of the 32 bits of hash32 is set about half the time
    h = be.hash32(1, 0, np.arange(50_000))
    bits = (h[:, None] >> np.arange(32, dtype=np.uint32)) & 1
    assert np.all(np.abs(bits.mean(axis=0) - 0.5) < 0.02)


@pytest.mark.parametrize("n", [0, 1, 2, 17, 1000])
def test_permutation_is_a_permutation(n):
    p = be.permutation(5, 1, n)
    assert sorted(p.tolist()) == list(range(n))
    assert np.array_equal(p, be.permutation(5, 1, n))
    if n >= 17:
        assert not np.array_equal(p, be.permutation(6, 1, n))


def test_row_ids_and_exclusive_cumsum():
    indptr = np.array([0, 2, 2, 5])
    assert be.row_ids(indptr).tolist() == [0, 0, 2, 2, 2]
    assert be.exclusive_cumsum(np.array([3, 0, 2])).tolist() == [0, 3, 3, 5]


@st.composite
def csr_values(draw, floats=False):
    counts = draw(st.lists(st.integers(0, 5), min_size=1, max_size=12))
    nnz = sum(counts)
    elems = st.floats(-100, 100, allow_nan=False) if floats else st.integers(-50, 50)
    vals = draw(st.lists(elems, min_size=nnz, max_size=nnz))
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return indptr, np.array(vals, dtype=np.float64 if floats else np.int64)


@settings(max_examples=80, deadline=None)
@given(csr_values(), st.booleans())
def test_segment_ops_match_brute_force(data, as_float):
    indptr, vals = data
    if as_float:
        vals = vals.astype(np.float64) / 4
    n = indptr.shape[0] - 1
    rows = [vals[indptr[i]:indptr[i + 1]] for i in range(n)]
    sums = be.segment_sum(vals, indptr)
    assert np.allclose(sums, [r.sum() for r in rows])
    mx = be.segment_max(vals, indptr, -999)
    assert mx.tolist() == [r.max() if r.size else -999 for r in rows]
    am = be.segment_argmax(vals, indptr)
    want = [int(indptr[i] + np.argmax(r)) if r.size else -1 for i, r in enumerate(rows)]
    assert am.tolist() == want


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 10).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(-1000, 1000)), max_size=40))))
def test_scatter_ops_match_brute_force(data):
    n, pairs = data
    index = np.array([i for i, _ in pairs], dtype=np.int64)
    values = np.array([v for _, v in pairs], dtype=np.int64)
    lo = np.full(n, 10**6, dtype=np.int64)
    hi = np.full(n, -10**6, dtype=np.int64)
    total = np.zeros(n, dtype=np.int64)
    be.scatter_min(lo, index, values)
    be.scatter_max(hi, index, values)
    be.scatter_add(total, index, values)
    want_lo, want_hi, want_sum = [10**6] * n, [-10**6] * n, [0] * n
    for i, v in pairs:
        want_lo[i] = min(want_lo[i], v)
        want_hi[i] = max(want_hi[i], v)
        want_sum[i] += v
    assert lo.tolist() == want_lo and hi.tolist() == want_hi and total.tolist() == want_sum
    ftotal = np.zeros(n)
    be.scatter_add(ftotal, index, values.astype(np.float64) / 2)
    assert np.allclose(ftotal, np.array(want_sum) / 2)


def test_scatter_add_is_exact_for_large_ints():
    t = np.zeros(1, dtype=np.int64)
    be.scatter_add(t, np.array([0, 0]), np.array([2**60, 1], dtype=np.int64))
    assert t[0] == 2**60 + 1


@pytest.mark.gpu
def test_numpy_and_cupy_rng_streams_are_identical():
    gpu = backend.get("gpu")
    c = np.arange(100_000, dtype=np.uint64)
    for seed, stream in [(0, 0), (7, 3), (2**40, 11)]:
        assert np.array_equal(be.hash64(seed, stream, c), gpu.to_host(gpu.hash64(seed, stream, gpu.to_device(c))))
        assert np.array_equal(be.uniform(seed, stream, c), gpu.to_host(gpu.uniform(seed, stream, gpu.to_device(c))))
    assert np.array_equal(be.permutation(3, 1, 5000), gpu.to_host(gpu.permutation(3, 1, 5000)))


@pytest.mark.gpu
@settings(max_examples=30, deadline=None)
@given(csr_values())
def test_gpu_segment_ops_match_cpu(data):
    gpu = backend.get("gpu")
    indptr, vals = data
    d_ptr, d_vals = gpu.to_device(indptr), gpu.to_device(vals)
    assert np.array_equal(gpu.to_host(gpu.segment_sum(d_vals, d_ptr)), be.segment_sum(vals, indptr))
    assert np.array_equal(gpu.to_host(gpu.segment_max(d_vals, d_ptr, -999)), be.segment_max(vals, indptr, -999))
    assert np.array_equal(gpu.to_host(gpu.segment_argmax(d_vals, d_ptr)), be.segment_argmax(vals, indptr))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 6)), max_size=12))
def test_ranges_lists_every_position_with_its_range(spans):
    start = np.array([s for s, _ in spans], dtype=np.int64)
    length = np.array([n for _, n in spans], dtype=np.int64)
    pos, seg = be.ranges(start, length)
    want = [(s + j, i) for i, (s, n) in enumerate(spans) for j in range(n)]
    assert list(zip(pos.tolist(), seg.tolist())) == want


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=0, max_value=2**62), st.integers(min_value=0, max_value=2**40),
       st.integers(min_value=0, max_value=80))
def test_stream_keys_equal_stream_key_one_by_one(seed, first, count):
    from matchpart.backend.rng import stream_key, stream_keys
    keys = stream_keys(seed, first, count)
    assert keys.dtype == np.uint64
    assert keys.tolist() == [stream_key(seed, first + i) for i in range(count)]


def test_gpu_scatter_primitives_are_ufunc_at():
    """The GPU backend's scatters are CuPy's ufunc.at (cupyx.scatter_* is deprecated in CuPy
    14); numpy's ufuncs stand in for CuPy's here: repeated indices accumulate."""
    from matchpart.backend.core import _UfuncAt
    at = _UfuncAt(np)
    target = np.array([0, 5, 9], dtype=np.uint64)
    at.scatter_add(target, np.array([0, 2, 0]), np.array([1, 2, 3], dtype=np.uint64))
    at.scatter_max(target, np.array([1, 1]), np.array([7, 6], dtype=np.uint64))
    at.scatter_min(target, np.array([2, 2]), np.array([8, 4], dtype=np.uint64))
    assert target.tolist() == [4, 7, 4]
