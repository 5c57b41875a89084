"""Grouped parallel k-way FM (refine/grouped_fm.py): the groups' passes are independent (run
one after the other they give the same result), their gains are the true cut change, moves
stay inside a group and into blocks with room, and the result is the same for 1-4 threads."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import metrics, threads
from matchpart.refine import fm
from matchpart.refine import gain_cache as gc
from matchpart.refine import grouped_fm
from matchpart.refine import parallel_fm as pf
from matchpart.refine.kway_fm import hub_flags, locked_pass
from matchpart.refine.state import host_arrays, host_block_weights, host_cut

from test_threads import _random_graph, assert_same_digest_for_1_to_4_threads, partition_digest_script


def _case(seed, n, p, k, float_weights):
    g = _random_graph(seed, n, p, float_weights)
    k = min(k, n)
    maxw = np.full(k, metrics.max_block_weight(g.total_vwgt, k, 0.03), dtype=np.float64)
    parts = np.random.default_rng(seed).integers(0, k, size=n).astype(np.int64)
    return g, k, maxw, parts


def _one_after_another(arrays, parts, bw, maxw, order, group, ngroups, stall):
    """The reference: each group's pass in turn, in group order, on the state the earlier ones left."""
    indptr, indices, ewgt, vwgt = arrays
    n, k = indptr.shape[0] - 1, maxw.shape[0]
    gain, kept = 0.0, 0
    for g in range(ngroups):
        own_bw = np.where(group == g, bw, 0.0)
        own_maxw = np.where(group == g, maxw, -1.0)
        listed = np.array([v for v in order if group[parts[v]] == g], dtype=np.int64)
        locked = (group[parts] != g) | hub_flags(indptr)
        cut, moved = locked_pass(indptr, indices, ewgt, vwgt, parts, own_bw, own_maxw, listed, locked, stall, 0.0,
                                 gc.new_cache(n, indices.shape[0], k), 64, 1 << 62)
        gain -= cut
        kept += moved
        bw[group == g] = own_bw[group == g]
    return gain, kept


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 150), p=st.floats(0.02, 0.4), k=st.integers(3, 12),
       ngroups=st.integers(2, 5), float_weights=st.booleans(), stall=st.integers(1, 30))
def test_a_round_equals_its_groups_one_after_another_and_keeps_its_promises(seed, n, p, k, ngroups, float_weights,
                                                                           stall):
    g, k, maxw, parts = _case(seed, n, p, k, float_weights)
    arrays = host_arrays(g)
    rng = np.random.default_rng(seed + 1)
    group = rng.permutation(k) % ngroups
    order = rng.permutation(n).astype(np.int64)
    bw0 = host_block_weights(parts, arrays[3], k)
    cut0 = host_cut(*arrays[:3], parts)

    want_parts, want_bw = parts.copy(), bw0.copy()
    want = _one_after_another(arrays, want_parts, want_bw, maxw, order, group, ngroups, stall)
    for count in (1, 2):
        got_parts, got_bw = parts.copy(), bw0.copy()
        with threads.limit(count):
            gain, kept = grouped_fm.grouped_round(*arrays, got_parts, got_bw, maxw, order, group, ngroups, stall, 64)
        assert got_parts.tobytes() == want_parts.tobytes() and got_bw.tobytes() == want_bw.tobytes()
        assert (gain, kept) == want

    moved = parts != got_parts
    assert kept >= moved.sum()                                   # a vertex moves at most once per pass
    assert (group[parts[moved]] == group[got_parts[moved]]).all()  # inside its group
    assert np.allclose(got_bw, host_block_weights(got_parts, arrays[3], k))
    assert np.isclose(cut0 - host_cut(*arrays[:3], got_parts), gain)  # the gains are the true cut change
    over0, over = np.maximum(bw0 - maxw, 0), np.maximum(got_bw - maxw, 0)
    assert over.sum() <= over0.sum() + 1e-9                       # moves only go into blocks with room
    assert (over[over0 == 0] == 0).all()
    if over.sum() >= over0.sum() - 1e-9:
        assert gain >= -1e-9      # each pass keeps its best (overload, cut) prefix


def test_refine_arrays_runs_grouped_rounds_on_a_boundary_of_most_vertices():
    """Where the pair rounds decline (k >= MIN_BLOCKS), the passes are the grouped rounds: the
    same partition as grouped_pass called directly, better than the input, balanced."""
    g = matchpart.load_graph("rmat:12")
    k = 16
    arrays = host_arrays(g)
    maxw = np.full(k, metrics.max_block_weight(g.total_vwgt, k, 0.03))
    parts = (np.arange(g.n) * 7919 % k).astype(np.int64)
    saved = pf.PARALLEL_FM_MIN_VERTICES
    pf.PARALLEL_FM_MIN_VERTICES = 0
    try:
        p = parts.copy()
        stats = fm.refine_arrays(arrays, p, maxw, seed=3, passes=1, localized=False)
        q = parts.copy()
        grouped_fm.ROUNDS, saved_rounds = 0, grouped_fm.ROUNDS
        try:
            fm.refine_arrays(arrays, q, maxw, seed=3, passes=1, localized=False)
        finally:
            grouped_fm.ROUNDS = saved_rounds
    finally:
        pf.PARALLEL_FM_MIN_VERTICES = saved
    assert stats["cut"] == host_cut(*arrays[:3], p) < host_cut(*arrays[:3], parts)
    assert stats["overload"] == 0 and (host_block_weights(p, arrays[3], k) <= maxw).all()
    assert p.tobytes() != q.tobytes()           # not the global pass's partition


_SCRIPT = partition_digest_script(
    "from matchpart.refine import grouped_fm, parallel_fm\n"
    "parallel_fm.PARALLEL_FM_MIN_VERTICES, parallel_fm.MAX_BOUNDARY_SHARE = 0, 0.0   # grouped rounds everywhere\n"
    "grouped_fm.GROUP_BLOCKS = 4                                                      # 4 groups at k = 16",
    '["rmat:11", "ba:3000:4", float_weighted("ba:3000:4")]', (8, 16))


def test_partitions_with_grouped_rounds_are_the_same_for_1_to_4_threads():
    assert_same_digest_for_1_to_4_threads(_SCRIPT)


def test_group_count_keeps_between_two_and_max_groups():
    assert grouped_fm.group_count(8, 16, 8) == 2
    assert grouped_fm.group_count(32, 16, 8) == 2
    assert grouped_fm.group_count(64, 16, 8) == 4
    assert grouped_fm.group_count(8192, 16, 8) == 8
    assert grouped_fm.group_count(8192, 16, 2) == 2
