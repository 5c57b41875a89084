"""Karp-Sipser's rounds (karp_sipser.py) as one compiled kernel on the CPU.

The same rounds as the whole-array formulation ``_incremental_rounds`` (which stays for the
GPU and for tests): the same singles, the min-degree rule, the same hash streams for the
requesters, their random neighbours and the targets' choices, so the same matching and
stats. Rounds are many and small (1686 on delaunay 2^20, most of a few vertices), so they
run on one thread: the whole-array rounds paid a dozen numpy calls each (2.1 s on that graph).
The free-neighbour id sums are exact int64 here (float64 there, exact below 2^53).
"""
from __future__ import annotations

import numpy as np

from ..backend.rng import hash64_at, stream_key_at
from ..jit import njit
from .suitor_kernel import grown

_NONE = np.uint64(0xFFFFFFFFFFFFFFFF)
_UNIT = 1.0 / 9007199254740992.0          # 2^-53: uniform() from the top 53 bits of hash64


@njit(cache=True, internal=True)
def _push(head, link, item, pushed, d, v):
    item[pushed] = v
    link[pushed] = head[d]
    head[d] = pushed
    return pushed + 1


@njit(cache=True, internal=True)
def _valid_head(head, link, item, d, deg, mate):
    """Drop the stale entries (matched, or of another degree now) of list d; whether any is left."""
    prev = -1
    x = head[d]
    while x >= 0:
        v = item[x]
        if mate[v] < 0 and deg[v] == d:
            prev = x
        elif prev < 0:
            head[d] = link[x]
        else:
            link[prev] = link[x]
        x = link[x]
    return head[d] >= 0


@njit(cache=True)
def karp_sipser_kernel(indptr, indices, seed, fraction, s_accept, s_requester, s_neighbour):
    """Returns (mate, matched vertices after each round, degree-one rounds, random rounds)."""
    n = indptr.shape[0] - 1
    deg = np.empty(n, dtype=np.int64)           # free neighbours
    idsum = np.zeros(n, dtype=np.int64)         # sum of the free neighbours' ids
    for v in range(n):
        deg[v] = indptr[v + 1] - indptr[v]
        for e in range(indptr[v], indptr[v + 1]):
            idsum[v] += indices[e]
    mate = np.full(n, -1, dtype=np.int64)
    asks = np.full(n, -1, dtype=np.int64)       # request scratch, -1 between rounds
    offer = np.full(n, _NONE, dtype=np.uint64)  # per target: the best request key, empty between rounds
    stamp = np.zeros(n, dtype=np.int64)         # round in which a vertex was touched
    singles = np.empty(n, dtype=np.int64)       # free vertices of degree one
    # free vertices by free degree for the min-degree rule: a list per degree, pushed to
    # when a vertex reaches that degree (degrees only fall), stale entries dropped when read;
    # a random round then costs its requesters, not a pass over the open vertices
    maxdeg = 0
    for v in range(n):
        maxdeg = max(maxdeg, indptr[v + 1] - indptr[v])
    head = np.full(maxdeg + 1, -1, dtype=np.int64)
    link = np.empty(n + indices.shape[0], dtype=np.int64)
    item = np.empty(n + indices.shape[0], dtype=np.int64)
    pushed = 0
    requester = np.empty(n, dtype=np.int64)
    target = np.empty(n, dtype=np.int64)
    keys = np.empty(n, dtype=np.uint64)
    gone = np.empty(n, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    ns = 0
    for v in range(n - 1, -1, -1):
        if deg[v] == 1:
            singles[ns] = v
            ns += 1
        if deg[v] > 0:
            pushed = _push(head, link, item, pushed, deg[v], v)
    matched = np.zeros(64, dtype=np.int64)
    rounds = d1_rounds = rand_rounds = total = 0
    while True:
        if ns > 0:
            nr = ns
            for i in range(ns):
                requester[i] = singles[i]
                target[i] = idsum[singles[i]]   # the one free neighbour
            d1_rounds += 1
        else:
            low = 1                             # the min-degree rule: the lowest degree held
            while low <= maxdeg and not _valid_head(head, link, item, low, deg, mate):
                low += 1
            if low > maxdeg:
                break
            rand_rounds += 1
            key_r = stream_key_at(seed, 3 * rounds + s_requester)
            nr = 0
            first = n
            x = head[low]
            while x >= 0:                       # _valid_head left the list with valid entries only
                v = item[x]
                if mate[v] < 0 and deg[v] == low:
                    first = min(first, v)
                    if np.float64(hash64_at(v, key_r) >> np.uint64(11)) * _UNIT < fraction:
                        requester[nr] = v
                        nr += 1
                x = link[x]
            if nr == 0:                         # tiny graphs: the smallest open vertex asks
                requester[0] = first
                nr = 1
            key_n = stream_key_at(seed, 3 * rounds + s_neighbour)
            for i in range(nr):                 # a random free neighbour: smallest hash, then largest id
                r = requester[i]
                best_h, best = _NONE, -1
                for e in range(indptr[r], indptr[r + 1]):
                    nb = indices[e]
                    if mate[nb] < 0:
                        h = hash64_at(e, key_n) >> np.uint64(1)
                        if h < best_h or (h == best_h and nb > best):
                            best_h, best = h, nb
                target[i] = best
        rounds += 1
        # requests: a requesting target declines others; of two vertices asking each other
        # the smaller one's request stands; each target accepts its smallest key
        for i in range(nr):
            asks[requester[i]] = target[i]
        key_a = stream_key_at(seed, 3 * rounds + s_accept)
        for i in range(nr):
            r, t = requester[i], target[i]
            theirs = asks[t]
            mutual = theirs == r
            if (theirs < 0 or mutual) and not (mutual and r > t):
                h = np.int64(hash64_at(r, key_a) >> np.uint64(33))
                keys[i] = np.uint64((h << 32) | r)
                offer[t] = min(offer[t], keys[i])
            else:
                keys[i] = _NONE
        for i in range(nr):
            asks[requester[i]] = -1
        ng = 0
        for i in range(nr):
            t = target[i]
            if keys[i] != _NONE and offer[t] == keys[i]:
                gone[ng] = requester[i]
                gone[ng + 1] = t
                ng += 2
        for i in range(nr):
            offer[target[i]] = _NONE
        for i in range(0, ng, 2):
            mate[gone[i]] = gone[i + 1]
            mate[gone[i + 1]] = gone[i]
        total += ng
        matched = grown(matched, rounds)
        matched[rounds - 1] = total
        # the free neighbours of the newly matched lose them
        nt = 0
        for i in range(ng):
            g = gone[i]
            for e in range(indptr[g], indptr[g + 1]):
                nb = indices[e]
                if mate[nb] < 0:
                    deg[nb] -= 1
                    idsum[nb] -= g
                    if deg[nb] > 0:
                        pushed = _push(head, link, item, pushed, deg[nb], nb)
                    if stamp[nb] != rounds:
                        stamp[nb] = rounds
                        touched[nt] = nb
                        nt += 1
        # a free vertex has degree one now if it had at the round's start (a single, not
        # touched) or dropped to one in this round (touched, degree >= 2 before): disjoint
        k = 0
        for i in range(ns):
            v = singles[i]
            if mate[v] < 0 and deg[v] == 1:
                singles[k] = v
                k += 1
        for i in range(nt):
            if deg[touched[i]] == 1:
                singles[k] = touched[i]
                k += 1
        ns = k
    return mate, matched[:rounds], d1_rounds, rand_rounds
