"""The boundary list's walks (refine/boundary.py): the chunked, threaded walks against a
plain Python reference of the serial walk, for any chunk size and thread count."""
import numba
import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from matchpart.refine.boundary import (extend_and_flag, extend_and_flag_chunked, extend_boundary, flag_around,
                                       flag_around_chunked)


def random_csr(seed, n, p):
    r = np.random.default_rng(seed)
    a = sp.random(n, n, density=p, random_state=r, format="csr")
    a = ((a + a.T) > 0).astype(np.int64)
    a.setdiag(0)
    a.eliminate_zeros()
    a = a.tocsr()
    a.sort_indices()
    return a.indptr.astype(np.int64), a.indices.astype(np.int32)


def reference_walk(indptr, indices, moved, start, stop, listed, nb, in_list, flags):
    """The serial walk in Python: moved vertices and their neighbours, in order, appended
    at their first appearance when not listed; all of them flagged (when flags is given)."""
    listed, in_list, flags = listed.copy(), in_list.copy(), flags.copy()
    for v in moved[start:stop]:
        for u in [v] + list(indices[indptr[v]:indptr[v + 1]]):
            if flags.shape[0]:
                flags[u] = True
            if not in_list[u]:
                in_list[u] = True
                listed[nb] = u
                nb += 1
    return listed[:nb], in_list, flags


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 60), p=st.floats(0.0, 0.4), chunk=st.integers(1, 9),
       with_flags=st.booleans(), threads=st.sampled_from([1, 2, 3]))
def test_chunked_walks_match_the_serial_walk(seed, n, p, chunk, with_flags, threads):
    indptr, indices = random_csr(seed, n, p)
    r = np.random.default_rng(seed + 1)
    in_list = r.random(n) < 0.5
    nb = int(in_list.sum())
    listed = np.zeros(n, dtype=np.int64)
    listed[:nb] = np.flatnonzero(in_list)
    moved = r.integers(0, n, size=int(r.integers(0, 2 * n + 1))).astype(np.int64)   # repeats too
    start = int(r.integers(0, moved.shape[0] + 1))
    stop = int(r.integers(start, moved.shape[0] + 1))
    flags = (r.random(n) < 0.3) if with_flags else np.empty(0, dtype=np.bool_)
    want = reference_walk(indptr, indices, moved, start, stop, listed, nb, in_list, flags)
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        for parallel_min in (0, 10**9):            # the chunked walk, and its serial fallback
            got_listed, got_in, got_flags = listed.copy(), in_list.copy(), flags.copy()
            got_nb = extend_and_flag_chunked(indptr, indices, moved, start, stop, got_listed, nb, got_in, got_flags,
                                             chunk, parallel_min)
            assert np.array_equal(got_listed[:got_nb], want[0])
            assert np.array_equal(got_in, want[1]) and np.array_equal(got_flags, want[2])
            around = np.zeros(n, dtype=np.bool_)
            flag_around_chunked(indptr, indices, moved, start, stop, around, chunk, parallel_min)
            serial = np.zeros(n, dtype=np.bool_)
            flag_around(indptr, indices, moved, start, stop, serial)
            assert np.array_equal(around, serial)
    finally:
        numba.set_num_threads(before)
    # the serial walks the chunked one falls back on agree with the reference too
    got_listed, got_in, got_flags = listed.copy(), in_list.copy(), flags.copy()
    if with_flags:
        got_nb = extend_and_flag(indptr, indices, moved, start, stop, got_listed, nb, got_in, got_flags)
    else:
        got_nb = extend_boundary(indptr, indices, moved, start, stop, got_listed, nb, got_in)
    assert np.array_equal(got_listed[:got_nb], want[0]) and np.array_equal(got_flags, want[2])
