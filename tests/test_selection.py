"""The cheapest covering prefix equals a full sort's prefix (the heap, the quickselects and the
dispatch between them); sorting.lexsort_rows equals numpy's lexsort."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchpart.refine.selection import _heap_covering, _selecting_covering, cheapest_covering

COVERINGS = [_heap_covering, _selecting_covering, cheapest_covering]
from matchpart.sorting import lexsort_rows


def _prefix_by_sorting(keys, items, weight, amount):
    order = sorted(items, key=lambda i: (tuple(keys[:, i]), i))
    taken, out = 0.0, []
    for i in order:
        if taken < amount:
            out.append(i)
        taken += weight[i]
    return sorted(out)


@pytest.mark.parametrize("covering", COVERINGS)
@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60), st.integers(0, 2**31 - 1), st.floats(0.5, 80.0))
def test_cheapest_covering_is_the_sorted_prefix(covering, m, seed, amount):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 4, size=(3, m)).astype(np.float64)     # few values: many ties
    weight = rng.integers(1, 6, size=m).astype(np.float64)
    items = rng.permutation(m).astype(np.int64)
    lo = int(rng.integers(0, m))
    out = np.empty(m, dtype=np.int64)
    got = covering(keys, items, lo, m, weight, amount, out, 0)
    assert sorted(out[:got].tolist()) == _prefix_by_sorting(keys, items[lo:].tolist(), weight, amount)


@pytest.mark.parametrize("covering", COVERINGS)
@settings(max_examples=100, deadline=None)
@given(st.integers(1, 400), st.integers(0, 2**31 - 1), st.floats(0.0, 1.0))
def test_covering_small_and_zero_amounts(covering, m, seed, share):
    """Amounts of a small share of the weight (the rebalancer's usual case), zero included."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 4, size=(3, m)).astype(np.float64)
    weight = rng.integers(1, 6, size=m).astype(np.float64)
    items = rng.permutation(m).astype(np.int64)
    amount = share * weight.sum() / 20
    out = np.empty(m, dtype=np.int64)
    got = covering(keys, items, 0, m, weight, amount, out, 0)
    assert sorted(out[:got].tolist()) == _prefix_by_sorting(keys, items.tolist(), weight, amount)


@pytest.mark.parametrize("rows, values", [(4, 2), (4, 50), (2, 1000)])
@pytest.mark.parametrize("share", [0.0, 0.004, 0.04, 0.5, 1.2])
def test_large_lists_take_the_sorted_prefix(rows, values, share):
    """Lists beyond the heap's (HEAP_MAX_ITEMS): the rebalancer's key shape (a 0/1 flag, a loss
    with many ties, a hash, the vertex), unit and mixed weights, amounts of none to more than all."""
    rng = np.random.default_rng(rows * values)
    m = 40000
    keys = rng.integers(0, values, size=(rows, m)).astype(np.float64)
    keys[0] = rng.random(m) < 0.01
    for weight in (np.ones(m), rng.integers(1, 9, size=m).astype(np.float64)):
        items = rng.permutation(m).astype(np.int64)
        amount = share * weight.sum()
        out = np.empty(m, dtype=np.int64)
        got = cheapest_covering(keys, items, 100, m, weight, amount, out, 0)
        order = np.lexsort(np.vstack([items[100:][None, :], keys[::-1][:, items[100:]]]))
        walk = items[100:][order]
        before = np.cumsum(weight[walk]) - weight[walk]
        assert sorted(out[:got].tolist()) == sorted(walk[before < amount].tolist())


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 300), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_lexsort_matches_numpy(m, rows, seed):
    keys = np.random.default_rng(seed).integers(0, 3, size=(rows, m)).astype(np.float64)
    assert lexsort_rows(keys).tolist() == np.lexsort(keys[::-1]).tolist()
