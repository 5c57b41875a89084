"""The cheapest prefix covering an amount, for rebalancing (numba), without sorting every item.

Keys are rows of a float64 array (row 0 most significant), one column per item, in the
order of ``matchpart.sorting.lexsort_rows``.
"""
from __future__ import annotations

import numpy as np

from ..jit import njit

# Tunables
HEAP_MAX_ITEMS = 1 << 14    # a heap's keys (4 x 8 bytes an item) fit in the core's cache up to here
_SMALL = 24                 # quickselect ranges of at most this many values are sorted outright


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
def _heap_covering(keys, items, start, stop, weight, amount, out, nout):
    """cheapest_covering with a max-heap of the items taken so far, in O(items x log(taken)):
    an item joins while the taken ones do not cover the amount or when it precedes the worst
    taken one, and the worst leaves while the others cover the amount without it."""
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


@njit(cache=True, internal=True)
def _covering_value(vals, wts, need):
    """The least value L with weight(vals <= L) >= need, for 0 < need <= wts.sum(); a weighted
    quickselect (three-way partitions about a median of three), so vals and wts are permuted."""
    lo, hi = 0, vals.shape[0]
    while hi - lo > _SMALL:
        a, b, c = vals[lo], vals[(lo + hi) >> 1], vals[hi - 1]
        pivot = max(min(a, b), min(max(a, b), c))
        lt, i, gt = lo, lo, hi
        below = 0.0
        equal = 0.0
        while i < gt:
            x = vals[i]
            if x < pivot:
                w = wts[i]
                vals[i], wts[i] = vals[lt], wts[lt]
                vals[lt], wts[lt] = x, w
                below += w
                lt += 1
                i += 1
            elif x > pivot:
                gt -= 1
                w = wts[i]
                vals[i], wts[i] = vals[gt], wts[gt]
                vals[gt], wts[gt] = x, w
            else:
                equal += wts[i]
                i += 1
        if below >= need:
            hi = lt
        elif below + equal >= need:
            return pivot
        else:
            need -= below + equal
            lo = gt
    for i in range(lo + 1, hi):            # a few left: insertion sort, then walk
        x, w = vals[i], wts[i]
        j = i
        while j > lo and vals[j - 1] > x:
            vals[j], wts[j] = vals[j - 1], wts[j - 1]
            j -= 1
        vals[j], wts[j] = x, w
    for i in range(lo, hi):
        need -= wts[i]
        if need <= 0:
            return vals[i]
    return vals[hi - 1]


@njit(cache=True, internal=True)
def _selecting_covering(keys, items, start, stop, weight, amount, out, nout):
    """cheapest_covering by weighted quickselects, key row by key row (_covering_value)."""
    n = stop - start
    if amount <= 0 or n == 0:
        return nout
    group = items[start:stop].copy()
    vals = np.empty(n, dtype=np.float64)
    wts = np.empty(n, dtype=np.float64)
    need = np.float64(amount)
    for r in range(keys.shape[0]):
        total = 0.0
        first = keys[r, group[0]]
        same = True
        for t in range(n):
            i = group[t]
            vals[t] = keys[r, i]
            wts[t] = weight[i]
            total += weight[i]
            same = same and vals[t] == first
        if same and total >= need:         # one value (the overshoot flag, usually): next row
            continue
        if total < need:                   # all of them do not cover it: the walk takes all
            for t in range(n):
                out[nout] = group[t]
                nout += 1
            return nout
        stop_value = _covering_value(vals[:n], wts[:n], need)
        ties = 0
        for t in range(n):
            i = group[t]
            x = keys[r, i]
            if x < stop_value:
                out[nout] = i
                nout += 1
                need -= weight[i]
            elif x == stop_value:
                group[ties] = i
                ties += 1
        n = ties
    group = np.sort(group[:n])             # equal in every key: by item
    for t in range(n):
        if need <= 0:
            break
        out[nout] = group[t]
        nout += 1
        need -= weight[group[t]]
    return nout


@njit(cache=True, internal=True)
def cheapest_covering(keys, items, start, stop, weight, amount, out, nout):
    """Append to out[nout:] the items[start:stop] that sorting them by keys (ties by item) and
    taking them in order while the weight taken so far is below ``amount`` would take; returns
    the new nout. Weights must be >= 0.

    The same set as a full sort followed by that prefix walk, without the sort. Up to
    HEAP_MAX_ITEMS items: a max-heap of the taken items (_heap_covering). Beyond, key row by key
    row, a weighted quickselect finds the value at which the walk stops; every item below it is
    taken and only the items equal to it go on to the next row (ties by item id last), O(items)
    expected: the heap's comparisons read the keys at random columns, and on Barabasi-Albert
    2^20 (k = 8) a round choosing 37k of 982k candidates spent 110 ms in them (27 ms this way),
    as long as scoring the candidates on two threads.
    The order of the appended items is unspecified.
    """
    if stop - start <= HEAP_MAX_ITEMS:
        return _heap_covering(keys, items, start, stop, weight, amount, out, nout)
    return _selecting_covering(keys, items, start, stop, weight, amount, out, nout)
