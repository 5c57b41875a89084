"""The cheapest prefix covering an amount, for rebalancing (numba), without sorting every item.

Keys are rows of a float64 array (row 0 most significant), one column per item, in the
order of ``matchpart.sorting.lexsort_rows``.
"""
from __future__ import annotations

from ..jit import njit


@njit(cache=True, internal=True)
def precedes(keys, a, b):
    """Column a before column b: keys compared most significant first, then by position."""
    for r in range(keys.shape[0]):
        if keys[r, a] != keys[r, b]:
            return keys[r, a] < keys[r, b]
    return a < b


@njit(cache=True, internal=True)
def _sift_up(heap, i, keys):
    x = heap[i]
    while i > 0:
        parent = (i - 1) >> 1
        if not precedes(keys, heap[parent], x):
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = x


@njit(cache=True, internal=True)
def _sift_down(heap, size, keys):
    x = heap[0]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and precedes(keys, heap[child], heap[child + 1]):
            child += 1
        if not precedes(keys, x, heap[child]):
            break
        heap[i] = heap[child]
        i = child
    heap[i] = x


@njit(cache=True, internal=True)
def cheapest_covering(keys, items, start, stop, weight, amount, out, nout):
    """Append to out[nout:] the items[start:stop] that sorting them by keys and taking them in
    order while the weight taken so far is below ``amount`` would take; returns the new nout.

    The same set as a full sort (e.g. lexsort) followed by that prefix walk, in
    O(items * log(taken)) with a max-heap of the items taken so far: an item joins when the
    taken ones do not cover the amount yet or when it precedes the worst taken one, and the
    worst leaves while the others cover the amount without it. Rebalancing takes a few
    hundred vertices out of tens of thousands of candidates, so sorting them all was most of
    its time. The order of the appended items is unspecified.
    """
    heap = out[nout:]
    size = 0
    taken = 0.0
    for t in range(start, stop):
        i = items[t]
        if taken >= amount and (size == 0 or not precedes(keys, i, heap[0])):   # nothing to cover: take none
            continue
        heap[size] = i
        _sift_up(heap, size, keys)
        size += 1
        taken += weight[i]
        while size > 1 and taken - weight[heap[0]] >= amount:
            taken -= weight[heap[0]]
            size -= 1
            heap[0] = heap[size]
            _sift_down(heap, size, keys)
    return nout + size
