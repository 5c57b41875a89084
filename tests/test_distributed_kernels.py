"""The compiled per-rank kernels of matchpart.distributed against numpy references, in one
process (no MPI): local columns, coarse entries and row merging, ghost rows, the boundary
list and its extension. tests/mpi_worker.py checks the rounds built on them against the
whole-array rounds under mpiexec."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from matchpart.distributed import contract_kernels as ck
from matchpart.distributed import jet_kernels as jk
from matchpart.distributed.dgraph import local_columns


def _rows(draw, nl, n, max_deg=6):
    deg = draw(st.lists(st.integers(0, max_deg), min_size=nl, max_size=nl))
    indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    cols = np.array(draw(st.lists(st.integers(0, n - 1), min_size=int(indptr[-1]), max_size=int(indptr[-1]))),
                    dtype=np.int64)
    return indptr, cols


@st.composite
def local_rows(draw):
    """Own rows first..last-1 of an n-vertex graph with arbitrary global columns."""
    n = draw(st.integers(1, 40))
    first = draw(st.integers(0, n - 1))
    last = draw(st.integers(first, n))
    indptr, cols = _rows(draw, last - first, n)
    return n, first, last, indptr, cols


@settings(max_examples=60, deadline=None)
@given(local_rows())
def test_local_columns_match_unique_and_searchsorted(case):
    n, first, last, indptr, cols = case
    adj, ghosts = local_columns(cols, first, last)
    remote = (cols < first) | (cols >= last)
    ref_ghosts = np.unique(cols[remote])
    ref = cols - first
    ref[remote] = (last - first) + np.searchsorted(ref_ghosts, cols[remote])
    assert np.array_equal(ghosts, ref_ghosts) and np.array_equal(adj, ref)


@settings(max_examples=60, deadline=None)
@given(local_rows(), st.integers(1, 4), st.booleans())
def test_coarse_entries_and_merge_match_sorts(case, size, floats):
    n, first, last, indptr, cols = case
    nl = last - first
    adj, ghosts = local_columns(cols, first, last)
    rng = np.random.default_rng(int(indptr[-1]) + n)
    cid_ext = rng.integers(0, max(n // 2, 1), nl + ghosts.shape[0])
    owner = rng.integers(0, size, nl)
    w = rng.random(cols.shape[0]) if floats else rng.integers(1, 9, cols.shape[0])
    counts, cr, cc, cw = ck.coarse_entries(indptr, adj, w, cid_ext, owner, size)
    # reference: the off-diagonal entries, stably sorted by the row's owner
    rows = np.repeat(np.arange(nl), np.diff(indptr))
    off = np.flatnonzero(cid_ext[rows] != cid_ext[adj])
    order = np.argsort(owner[rows[off]], kind="stable")
    sel = off[order]
    assert np.array_equal(counts, np.bincount(owner[rows[off]], minlength=size))
    assert np.array_equal(cr, cid_ext[rows[sel]]) and np.array_equal(cc, cid_ext[adj[sel]])
    assert np.array_equal(cw, w[sel])
    # merge: per row, columns ascending with duplicates summed in arrival order
    nc = int(cr.max()) + 1 if cr.shape[0] else 0
    ptr, mc, mw = ck.merge_rows(cr, cc, cw, nc)
    key = cr * max(n, 1) + cc
    o = np.argsort(key, kind="stable")
    ks = key[o]
    starts = np.flatnonzero(np.concatenate([[True], ks[1:] != ks[:-1]])) if ks.shape[0] else ks
    ref_w = np.zeros(starts.shape[0], dtype=cw.dtype)   # summed one by one in arrival order
    run = np.cumsum(np.concatenate([[True], ks[1:] != ks[:-1]])) - 1 if ks.shape[0] else ks
    for i, x in zip(run, cw[o]):
        ref_w[i] = x if ref_w[i] == 0 else ref_w[i] + x
    assert np.array_equal(mc, ks[starts] % max(n, 1) if ks.shape[0] else mc)
    assert np.array_equal(mw, ref_w)
    assert np.array_equal(ptr, np.concatenate([[0], np.cumsum(np.bincount(ks[starts] // max(n, 1), minlength=nc))]))


def test_merge_rows_long_rows_take_the_sorting_path():
    rng = np.random.default_rng(3)
    rows = np.repeat(np.arange(3), [ck.INSERTION_MAX * 4, 1, ck.INSERTION_MAX + 1])
    cols = rng.integers(0, 20, rows.shape[0])
    w = rng.random(rows.shape[0])
    ptr, mc, mw = ck.merge_rows(rows, cols, w, 3)
    for r in range(3):
        sel = rows == r
        u = np.unique(cols[sel])
        assert np.array_equal(mc[ptr[r]:ptr[r + 1]], u)
        assert np.allclose(mw[ptr[r]:ptr[r + 1]], [w[sel][cols[sel] == x].sum() for x in u])


@settings(max_examples=60, deadline=None)
@given(local_rows(), st.integers(1, 4))
def test_ghost_rows_boundary_and_extension(case, k):
    n, first, last, indptr, cols = case
    nl = last - first
    adj, ghosts = local_columns(cols, first, last)
    ng = ghosts.shape[0]
    gptr, gnbr, gent = jk.ghost_rows(indptr, adj, nl, ng)
    rows = np.repeat(np.arange(nl), np.diff(indptr))
    cross = np.flatnonzero(adj >= nl)
    order = np.argsort(adj[cross], kind="stable")
    assert np.array_equal(gent, cross[order]) and np.array_equal(gnbr, rows[cross[order]])
    assert np.array_equal(gptr, np.concatenate([[0], np.cumsum(np.bincount(adj[cross] - nl, minlength=ng))]))
    # the boundary list: own vertices with a neighbour in another block
    rng = np.random.default_rng(nl + ng)
    ext = rng.integers(0, k, nl + ng)
    listed = np.empty(nl, dtype=np.int64)
    in_list = np.zeros(nl, dtype=np.bool_)
    nb = jk.boundary_list(indptr, adj, ext, listed, in_list)
    ref = np.unique(rows[ext[rows] != ext[adj]])
    assert np.array_equal(listed[:nb], ref) and np.array_equal(np.flatnonzero(in_list), ref)
    # extension: moved own vertices, their own neighbours, own neighbours of moved ghosts
    moved = np.unique(rng.integers(0, max(nl, 1), 2)) if nl else np.zeros(0, dtype=np.int64)
    ghost_at = nl + np.unique(rng.integers(0, ng, 2)) if ng else np.zeros(0, dtype=np.int64)
    nb2 = jk.extend_list(indptr, adj, moved, moved.shape[0], gptr, gnbr, ghost_at, listed, nb, in_list)
    want = set(ref.tolist()) | set(moved.tolist())
    for v in moved:
        want |= {int(u) for u in adj[indptr[v]:indptr[v + 1]] if u < nl}
    for j in ghost_at:
        want |= set(rows[adj == j].tolist())
    assert sorted(listed[:nb2].tolist()) == sorted(want) and nb2 == len(want)
    assert set(np.flatnonzero(in_list).tolist()) == want
