"""The compiled per-rank kernels of matchpart.distributed against numpy references, in one
process (no MPI): local columns, coarse entries and row merging, ghost rows, the boundary
list and its extension. tests/mpi_worker.py checks the rounds built on them against the
whole-array rounds under mpiexec."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from matchpart.distributed import contract_kernels as ck
from matchpart.distributed import jet_kernels as jk
from matchpart.distributed import rebalance_kernels as rk
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
    """Both ways (the sort of the remote columns, and the table of remote ids where the
    global n is given and small enough) give np.unique's ghosts and searchsorted's indices."""
    n, first, last, indptr, cols = case
    remote = (cols < first) | (cols >= last)
    ref_ghosts = np.unique(cols[remote])
    ref = cols - first
    ref[remote] = (last - first) + np.searchsorted(ref_ghosts, cols[remote])
    for given_n in (None, n):
        adj, ghosts = local_columns(cols, first, last, given_n)
        assert np.array_equal(ghosts, ref_ghosts) and np.array_equal(adj, ref)
    if n - (last - first) <= cols.shape[0]:        # the table is used
        adj, ghosts = local_columns(cols, first, last, n)
        assert adj.dtype == np.int32


def _merged_reference(cr, cc, cw, n, nc, first):
    """Per row, columns ascending with duplicates summed one by one in arrival order."""
    key = (cr - first) * max(n, 1) + cc
    o = np.argsort(key, kind="stable")
    ks = key[o]
    new = np.concatenate([[True], ks[1:] != ks[:-1]]) if ks.shape[0] else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new)
    ref_w = np.zeros(starts.shape[0], dtype=cw.dtype)
    for i, x in zip(np.cumsum(new) - 1, cw[o]):
        ref_w[i] = x if ref_w[i] == 0 else ref_w[i] + x
    ptr = np.concatenate([[0], np.cumsum(np.bincount(ks[starts] // max(n, 1), minlength=nc))])
    return ptr, ks[starts] % max(n, 1), ref_w


@settings(max_examples=60, deadline=None)
@given(local_rows(), st.integers(1, 4), st.booleans(), st.data())
def test_coarse_entries_and_merge_match_sorts(case, size, floats, data):
    n, first, last, indptr, cols = case
    nl = last - first
    adj, ghosts = local_columns(cols, first, last)
    rng = np.random.default_rng(int(indptr[-1]) + n)
    nc_all = max(n // 2, 1)
    cid_ext = rng.integers(0, nc_all, nl + ghosts.shape[0])
    owner = rng.integers(0, size, nl)
    w = rng.random(cols.shape[0]) if floats else rng.integers(1, 9, cols.shape[0])
    counts, cr, cc, cw = ck.coarse_entries(indptr, adj, w, cid_ext, owner, size, -1)
    # reference: the off-diagonal entries, stably sorted by the row's owner
    rows = np.repeat(np.arange(nl), np.diff(indptr))
    off = np.flatnonzero(cid_ext[rows] != cid_ext[adj])
    order = np.argsort(owner[rows[off]], kind="stable")
    sel = off[order]
    assert np.array_equal(counts, np.bincount(owner[rows[off]], minlength=size))
    assert np.array_equal(cr, cid_ext[rows[sel]]) and np.array_equal(cc, cid_ext[adj[sel]])
    assert np.array_equal(cw, w[sel])
    # skipping a rank's group leaves the others as they were
    rank = data.draw(st.integers(0, size - 1))
    scounts, scr, scc, scw = ck.coarse_entries(indptr, adj, w, cid_ext, owner, size, rank)
    kept = np.repeat(np.arange(size), counts) != rank
    assert scounts[rank] == 0 and np.array_equal(np.delete(scounts, rank), np.delete(counts, rank))
    assert np.array_equal(scr, cr[kept]) and np.array_equal(scc, cc[kept]) and np.array_equal(scw, cw[kept])
    # merge on ``rank``: its own rows in place between the entries received from lower and
    # higher ranks, as if every entry had been listed and merged in arrival order
    rown = owner.copy()
    rown[rng.random(nl) < 0.5] = rank      # rows of rank's coarse vertices, whatever the draw
    own_rows = rown == rank
    cid_ext[:nl][own_rows] = rng.integers(0, nc_all, int(own_rows.sum()))
    nr = data.draw(st.integers(0, 12))
    rr = rng.integers(0, nc_all, nr)
    rc = rng.integers(0, nc_all, nr)
    rw = rng.random(nr) if floats else rng.integers(1, 9, nr)
    before = data.draw(st.integers(0, nr))
    lc, lcr, lcc, lcw = ck.coarse_entries(indptr, adj, w, cid_ext, rown, size, -1)
    at = int(lc[:rank].sum())
    mine = slice(at, at + int(lc[rank]))
    all_r = np.concatenate([rr[:before], lcr[mine], rr[before:]])
    all_c = np.concatenate([rc[:before], lcc[mine], rc[before:]])
    all_w = np.concatenate([rw[:before], lcw[mine], rw[before:]]).astype(w.dtype)
    ne = indptr[-1] + nr
    ref_ptr, ref_c, ref_w = _merged_reference(all_r, all_c, all_w, n, nc_all, 0)
    for slot in (np.empty(0, dtype=np.int64), np.full(nc_all, -1, dtype=np.int64)):
        ptr, mc, mw = ck.merge_rows(indptr, adj, w, cid_ext, rown, rank, 0, nc_all, rr, rc, rw.astype(w.dtype),
                                    before, np.empty(ne, dtype=np.int64), np.empty(ne, dtype=w.dtype),
                                    np.empty(indptr[-1], dtype=np.int64), slot)
        assert np.array_equal(ptr, ref_ptr) and np.array_equal(mc, ref_c) and np.array_equal(mw, ref_w)


def test_merge_rows_long_rows_take_every_sorting_path():
    rng = np.random.default_rng(3)
    rows = np.repeat(np.arange(4), [ck.INSERTION_SORT_MAX * 4, 1, ck.RANK_SORT_MAX + 1, ck.INSERTION_SORT_MAX + 1])
    cols = rng.integers(0, 20, rows.shape[0])
    w = rng.random(rows.shape[0])
    empty = np.zeros(1, dtype=np.int64)   # no own rows: every entry was received
    merged = []
    for slot in (empty[:0], np.full(20, -1, dtype=np.int64)):   # long rows sorted, or merged by slots
        ptr, mc, mw = ck.merge_rows(empty, empty[:0], w[:0], empty[:0], empty[:0], 0, 0, 4, rows, cols, w, 0,
                                    np.empty_like(cols), np.empty_like(w), empty[:0], slot)
        for r in range(4):
            sel = rows == r
            u = np.unique(cols[sel])
            assert np.array_equal(mc[ptr[r]:ptr[r + 1]], u)
            assert np.allclose(mw[ptr[r]:ptr[r + 1]], [w[sel][cols[sel] == x].sum() for x in u])
        merged.append((ptr, mc, mw))
        assert slot.shape[0] == 0 or (slot == -1).all()
    # the same sums in the same (arrival) order: equal to the last bit
    assert all(np.array_equal(a, b) for a, b in zip(*merged))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 2**40), max_size=300))
def test_distinct_labels_in_order_of_first_appearance(values):
    from matchpart.distributed.cluster import distinct_labels
    ext = np.array(values, dtype=np.int64)
    names, at = distinct_labels(ext)
    _, first = np.unique(ext, return_index=True)
    assert np.array_equal(names, ext[np.sort(first)])      # each once, by first appearance
    assert np.array_equal(names[at], ext) and at.dtype == np.int64


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=40, unique=True), min_size=1, max_size=8), st.data())
def test_sort_rows_by_counting_sorts_the_chosen_rows_only(row_cols, data):
    from matchpart.coarsen.rowsort import sort_rows_by_counting
    ptr = np.concatenate([[0], np.cumsum([len(r) for r in row_cols])]).astype(np.int64)
    cols = np.array([c for r in row_cols for c in r], dtype=np.int64)
    w = np.arange(cols.shape[0], dtype=np.float64) + 0.5      # each weight names its entry
    chosen = np.array(sorted(data.draw(st.sets(st.integers(0, len(row_cols) - 1)))), dtype=np.int64)
    c2, w2 = cols.copy(), w.copy()
    sort_rows_by_counting(c2, w2, ptr[chosen], ptr[chosen + 1], 31)
    for r in range(len(row_cols)):
        lo, hi = ptr[r], ptr[r + 1]
        order = np.argsort(cols[lo:hi], kind="stable") if r in chosen else np.arange(hi - lo)
        assert np.array_equal(c2[lo:hi], cols[lo:hi][order]) and np.array_equal(w2[lo:hi], w[lo:hi][order])


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
    rescan = np.zeros(nl, dtype=np.bool_)
    nb2 = jk.extend_list(indptr, adj, moved, moved.shape[0], gptr, gnbr, ghost_at, listed, nb, in_list, rescan)
    around = set(moved.tolist())
    for v in moved:
        around |= {int(u) for u in adj[indptr[v]:indptr[v + 1]] if u < nl}
    for j in ghost_at:
        around |= set(rows[adj == j].tolist())
    want = set(ref.tolist()) | around
    assert sorted(listed[:nb2].tolist()) == sorted(want) and nb2 == len(want)
    assert set(np.flatnonzero(in_list).tolist()) == want
    # the flags for Jet's scan: exactly the vertices around the moves (listed before or not)
    assert set(np.flatnonzero(rescan).tolist()) == around


@settings(max_examples=80, deadline=None)
@given(local_rows(), st.integers(2, 4), st.booleans(), st.data())
def test_select_from_the_boundary_list_equals_scoring_every_member(case, k, floats, data):
    n, first, last, indptr, cols = case
    nl = last - first
    adj, ghosts = local_columns(cols, first, last)
    rng = np.random.default_rng(int(indptr[-1]) * 7 + n + k)
    ext = rng.integers(0, k, nl + ghosts.shape[0])
    w = rng.random(cols.shape[0]) if floats else rng.integers(1, 9, cols.shape[0])
    vw = rng.integers(1, 4, nl).astype(np.float64)
    over = rng.random(k) < 0.5
    allowed = ~over & (rng.random(k) < 0.8)
    shed = np.where(over, rng.integers(0, 8, k), -1).astype(np.float64)
    key = np.uint64(data.draw(st.integers(0, 2**32)))
    lightest = int(np.flatnonzero(allowed)[0]) if allowed.any() else 0
    # every boundary vertex, plus some interior ones, in any order
    rows = np.repeat(np.arange(nl), np.diff(indptr))
    boundary = np.unique(rows[ext[rows] != ext[adj]])
    extra = np.flatnonzero(rng.random(nl) < 0.2)
    listed = rng.permutation(np.union1d(boundary, extra)).astype(np.int64)
    wdeg = np.empty(nl)
    floor = rk.loss_floor(indptr, w, vw, wdeg)
    in_list = np.zeros(nl, dtype=np.bool_)
    in_list[listed] = True

    def run(lst, fl):
        known, kd = np.zeros(nl, dtype=np.bool_), np.empty(nl, dtype=np.int64)
        kcd, kco = np.empty(nl, dtype=w.dtype), np.empty(nl, dtype=w.dtype)
        return rk.select(indptr, adj, w, ext, vw, k, over, allowed, key, lightest, shed, known, kd, kcd, kco,
                         lst, in_list, wdeg, fl)

    full = run(np.zeros(0, dtype=np.int64), np.inf)
    first_listed = run(listed, floor)
    for a, b in zip(full, first_listed):
        assert np.array_equal(a, b)
