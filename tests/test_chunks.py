"""The chunks of the parallel kernels (matchpart/chunks.py): they cover the rows or the list in
order, keep within both bounds, and split only what is heavy, the same on one thread or more."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from matchpart.chunks import list_chunk_starts, row_chunk_starts


@settings(max_examples=60, deadline=None)
@given(degrees=st.lists(st.integers(0, 50), max_size=80), most=st.integers(1, 12), entries=st.integers(1, 60))
def test_row_chunks_cover_the_rows_within_both_bounds(degrees, most, entries):
    indptr = np.concatenate([[0], np.cumsum(degrees, dtype=np.int64)]).astype(np.int64)
    starts = row_chunk_starts(indptr, most, entries)
    n = len(degrees)
    assert starts[0] == 0 and starts[-1] == n and (np.diff(starts) > 0).all()
    for a, b in zip(starts[:-1], starts[1:]):
        assert b - a <= most
        assert b - a == 1 or indptr[b] - indptr[a] <= entries
        # greedy: the next row would have broken a bound
        if b < n:
            assert b - a == most or indptr[b + 1] - indptr[a] > entries


@settings(max_examples=60, deadline=None)
@given(degrees=st.lists(st.integers(0, 50), min_size=1, max_size=80), data=st.data(), chunk=st.integers(1, 12),
       entries=st.integers(1, 60), threaded=st.booleans())
def test_list_chunks_split_only_the_heavy_fixed_chunks(degrees, data, chunk, entries, threaded):
    indptr = np.concatenate([[0], np.cumsum(degrees, dtype=np.int64)]).astype(np.int64)
    n = len(degrees)
    items = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=60)), dtype=np.int64)
    count = data.draw(st.integers(0, items.shape[0]))
    starts = list_chunk_starts(items, count, indptr, chunk, entries, threaded)
    assert np.array_equal(starts, list_chunk_starts(items, count, indptr, chunk, entries, not threaded))
    assert starts[0] == 0 and starts[-1] == count and (np.diff(starts) > 0).all()
    rows = np.diff(indptr)[items[:count]]
    fixed = list(range(0, count, chunk)) + [count]
    assert set(fixed) <= set(starts.tolist())                 # the fixed chunks' ends stay
    for a, b in zip(fixed[:-1], fixed[1:]):
        inside = [s for s in starts.tolist() if a <= s <= b]
        if rows[a:b].sum() <= entries:
            assert inside == [a, b]                           # a light chunk stays whole
        else:
            for x, y in zip(inside[:-1], inside[1:]):
                assert y - x == 1 or rows[x:y].sum() <= entries
                if y < b:
                    assert rows[x:y + 1].sum() > entries      # greedy: the next row did not fit
