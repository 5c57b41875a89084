"""Compiled rounds of the distributed rebalancer (refine.rebalance) on one rank's rows, with
ghosts as extra columns.

A round picks, per overweight source block, the movers of least loss per weight up to this
rank's share of the excess (``select``), then, after the one allreduce of the weight each
destination is asked for, per destination the movers of least loss up to this rank's share
of the room (``admit``), and after one more allreduce (the admitted weights and the weight
left over) the rest into its share of the room left anywhere (``pack``). The numpy round built masks and arrays of every own vertex and
lexsorted the movers: on delaunay 2^18, k = 32, P = 1 the 40 calls took 0.32 s of a 1.5 s
run (destinations 0.14 s, the two prefix selections 0.07 s, the rest whole-array numpy),
against nothing for the single process, whose Jet rebalances inside its kernel. Same moves
as the numpy round (refine.rebalance(method="xp") is the reference; integer weights make
the running sums exact, so the prefixes are the same too).
"""
from __future__ import annotations

import numpy as np

from ..jit import njit
from ..refine.destinations import vertex_destination
from ..refine.packing import rooms_end_to_end


@njit(cache=True, internal=True)
def _prefix(group, order_key, weight, limit, at_least_one):
    """refine._prefix_up_to: per group, items in increasing (order_key, index) while the
    weight of the group's earlier items plus their own stays within limit[group] (with
    ``at_least_one`` the item crossing the limit too). Returns a keep flag per item."""
    n = group.shape[0]
    o1 = np.argsort(order_key, kind="mergesort")        # stable: ties keep the index order
    # then a stable counting sort by group (k of them) instead of a second mergesort
    start = np.zeros(limit.shape[0] + 1, dtype=np.int64)
    for i in range(n):
        start[group[i] + 1] += 1
    for b in range(limit.shape[0]):
        start[b + 1] += start[b]
    order = np.empty(n, dtype=np.int64)
    for t in range(n):
        i = o1[t]
        order[start[group[i]]] = i
        start[group[i]] += 1
    keep = np.zeros(n, dtype=np.bool_)
    before = 0.0
    for t in range(n):
        i = order[t]
        if t == 0 or group[i] != group[order[t - 1]]:
            before = 0.0
        lim = limit[group[i]]
        keep[i] = (before + weight[i] <= lim) or (at_least_one and before < lim)
        before += weight[i]
    return keep


@njit(cache=True)
def loss_floor(indptr, ewgt, vw, wdeg):
    """Fill wdeg with every own vertex's weighted degree (rows summed in order, as a score
    sums them: an interior vertex of an overweight block loses exactly that) and return the
    least loss per weight an interior vertex can have in ``select``, min wdeg / max(weight,
    1e-12); +inf without vertices; -inf (no list first) with a vertex of weight 0: a prefix
    that ends exactly at its limit would take such a vertex after it, listed or not."""
    lo = np.inf
    for v in range(indptr.shape[0] - 1):
        s = ewgt.dtype.type(0)
        for e in range(indptr[v], indptr[v + 1]):
            s += ewgt[e]
        wdeg[v] = s
        if vw[v] <= 0:
            lo = -np.inf
        lo = min(lo, np.float64(s) / max(vw[v], 1e-12))
    return lo


@njit(cache=True, internal=True)
def _scored(cand, n, indptr, adj, ewgt, ext, k, allowed, key, lightest, known, kd, kcd, kco, dest, cd, co):
    """Scores the candidates cand[:n] (own vertices of overweight blocks) into dest, cd, co
    (kept in kd, kcd, kco between rounds) and drops those whose best block is their own;
    returns how many remain (at the front)."""
    acc = np.zeros(k, dtype=ewgt.dtype)
    touched = np.empty(k, dtype=np.int64)
    m = 0
    for i in range(n):
        v = cand[i]
        if not known[v] or (kd[v] >= 0 and not allowed[kd[v]]):
            kd[v], kcd[v], kco[v], _ = vertex_destination(v, indptr, adj, ewgt, ext, k, True, allowed, key, acc,
                                                          touched)
            known[v] = True
        d, c_d, c_o = kd[v], kcd[v], kco[v]
        if d < 0:
            d, c_d = lightest, 0   # no adjacent room: loses all its connectivity
        if d == ext[v]:
            continue
        cand[m], dest[m], cd[m], co[m] = v, d, c_d, c_o
        m += 1
    return m


@njit(cache=True)
def select(indptr, adj, ewgt, ext, vw, k, over, allowed, key, lightest, shed, known, kd, kcd, kco, listed, in_list,
           wdeg, floor):
    """The own vertices of overweight blocks with their destination (the best allowed
    adjacent block, else ``lightest``) and loss; of those, per source block, the least
    loss per weight up to shed[block]. Returns (movers, their destinations, their losses
    as float64, weight asked per destination block).

    ``listed`` (flags ``in_list``): own vertices including every boundary one (Jet's list),
    scored first when ``floor`` (loss_floor, which filled ``wdeg``) is finite. An unlisted
    vertex is interior: it goes to ``lightest`` losing its whole weighted degree, so its
    score needs no scan. Where a block's listed prefix reaches its shed with losses per
    weight below the floor, no interior vertex can enter; elsewhere only the interior ones
    at most as costly as the prefix's last item can, and join it. The same movers as
    scoring every member (delaunay 2^20, k = 32, P = 1, finest level: 5 rounds scoring
    ~34k members each took 137 ms to move 20 vertices); with an empty list, every member
    is scored.

    A vertex's best adjacent block and connectivities are kept between the rounds of a call
    (kd, kcd, kco; known[v] while valid; ``invalidate`` clears it around moves): a round
    rescored every row of the overweight blocks (R-MAT 2^18, k = 32, P = 1: 196 rounds in
    27 calls, 8.1 s CPU of 28). A kept block that is no longer allowed is rescored; the
    caller clears every vertex when a block becomes allowed."""
    nl = indptr.shape[0] - 1
    if listed.shape[0] and -np.inf < floor < np.inf:
        count = 0
        for i in range(listed.shape[0]):
            count += over[ext[listed[i]]]
        cand = np.empty(count, dtype=np.int64)
        count = 0
        for i in range(listed.shape[0]):
            if over[ext[listed[i]]]:
                cand[count] = listed[i]
                count += 1
        cand.sort()   # the full pass's order (ties in loss per weight go by vertex order)
        dest = np.empty(count, dtype=np.int64)
        cd = np.empty(count, dtype=ewgt.dtype)
        co = np.empty(count, dtype=ewgt.dtype)
        n = _scored(cand, count, indptr, adj, ewgt, ext, k, allowed, key, lightest, known, kd, kcd, kco, dest,
                    cd, co)
        out = _chosen(cand, dest, cd, co, n, ext, vw, k, shed)
        reach = out[4]
        enough = True
        for b in range(k):
            enough = enough and (not over[b] or reach[b] < floor)
        if enough:
            return out[0], out[1], out[2], out[3]
        return _with_interior(cand, dest, cd, co, n, ext, vw, k, over, shed, lightest, in_list, wdeg, reach)
    count = 0
    for v in range(nl):
        count += over[ext[v]]
    cand = np.empty(count, dtype=np.int64)
    count = 0
    for v in range(nl):
        if over[ext[v]]:
            cand[count] = v
            count += 1
    dest = np.empty(count, dtype=np.int64)
    cd = np.empty(count, dtype=ewgt.dtype)   # the numpy round's dtype: int weights subtract exactly
    co = np.empty(count, dtype=ewgt.dtype)
    n = _scored(cand, count, indptr, adj, ewgt, ext, k, allowed, key, lightest, known, kd, kcd, kco, dest, cd, co)
    out = _chosen(cand, dest, cd, co, n, ext, vw, k, shed)
    return out[0], out[1], out[2], out[3]


@njit(cache=True, internal=True)
def _with_interior(cand, dest, cd, co, n, ext, vw, k, over, shed, lightest, in_list, wdeg, reach):
    """select's merge of the scored listed candidates cand[:n] (increasing) with the interior
    members of the overweight blocks whose loss per weight is at most reach[their block]."""
    nl = in_list.shape[0]
    extra = 0
    for v in range(nl):
        b = ext[v]
        extra += over[b] and not in_list[v] and b != lightest and wdeg[v] / max(vw[v], 1e-12) <= reach[b]
    m = n + extra
    mc = np.empty(m, dtype=np.int64)
    md = np.empty(m, dtype=np.int64)
    mcd = np.empty(m, dtype=cd.dtype)
    mco = np.empty(m, dtype=co.dtype)
    i = 0
    j = 0
    for v in range(nl):   # both lists in increasing vertex order
        b = ext[v]
        if i < n and cand[i] == v:
            mc[j], md[j], mcd[j], mco[j] = v, dest[i], cd[i], co[i]
            i += 1
            j += 1
        elif over[b] and not in_list[v] and b != lightest and wdeg[v] / max(vw[v], 1e-12) <= reach[b]:
            mc[j], md[j], mcd[j], mco[j] = v, lightest, 0, wdeg[v]
            j += 1
    out = _chosen(mc, md, mcd, mco, m, ext, vw, k, shed)
    return out[0], out[1], out[2], out[3]


@njit(cache=True, internal=True)
def _chosen(cand, dest, cd, co, n, ext, vw, k, shed):
    """select's prefix of the scored cand[:n]: (movers, destinations, losses, weight asked
    per destination, and per block how far the prefix reached: the loss per weight of its
    last item where it covers shed[block], +inf where it does not, -inf with nothing to
    shed). Writes new arrays: the inputs stay as they were."""
    group = np.empty(n, dtype=np.int64)
    per_w = np.empty(n, dtype=np.float64)
    w = np.empty(n, dtype=np.float64)
    loss = np.empty(n, dtype=np.float64)
    for i in range(n):
        v = cand[i]
        group[i] = ext[v]
        loss[i] = co[i] - cd[i]
        w[i] = vw[v]
        per_w[i] = loss[i] / max(vw[v], 1e-12)
    keep = _prefix(group, per_w, w, shed, True)
    taken = np.zeros(k, dtype=np.float64)
    reach = np.full(k, -np.inf)
    asked = np.zeros(k, dtype=np.float64)
    m = 0
    for i in range(n):
        m += keep[i]
    movers = np.empty(m, dtype=np.int64)
    to = np.empty(m, dtype=np.int64)
    lost = np.empty(m, dtype=np.float64)
    m = 0
    for i in range(n):
        if keep[i]:
            taken[group[i]] += w[i]
            reach[group[i]] = max(reach[group[i]], per_w[i])
            movers[m], to[m], lost[m] = cand[i], dest[i], loss[i]
            asked[dest[i]] += w[i]
            m += 1
    for b in range(k):
        if shed[b] > 0 and taken[b] < shed[b]:
            reach[b] = np.inf   # the prefix ran out of candidates: any interior vertex may follow
    return movers, to, lost, asked, reach


@njit(cache=True)
def invalidate(indptr, adj, moved, nm, gptr, gnbr, ghost_at, known):
    """Clear ``known`` of the vertices whose connectivities moves changed: the own vertices
    moved[:nm], their own neighbours, and the own neighbours of the ghosts whose block
    changed (``ghost_at``: local indices n_local + j)."""
    nl = indptr.shape[0] - 1
    for i in range(nm):
        v = moved[i]
        known[v] = False
        for e in range(indptr[v], indptr[v + 1]):
            if adj[e] < nl:
                known[adj[e]] = False
    for t in range(ghost_at.shape[0]):
        j = ghost_at[t] - nl
        for e in range(gptr[j], gptr[j + 1]):
            known[gnbr[e]] = False


@njit(cache=True)
def admit(movers, dest, loss, vw, room, at_least_one, parts, ext, now, changed, moved, nmoved, local):
    """Per destination, the movers of least loss up to room[dest]; moves them (parts, own
    slots of ext, their weights in the local block weights ``local``), flags them in
    ``now`` (this round) and ``changed`` (this call), listing the newly changed in
    moved[nmoved:]. Returns the new length of ``moved``."""
    n = movers.shape[0]
    w = np.empty(n, dtype=np.float64)
    for i in range(n):
        w[i] = vw[movers[i]]
    keep = _prefix(dest, loss, w, room, at_least_one)
    for i in range(n):
        if keep[i]:
            nmoved = _move(movers[i], dest[i], vw, parts, ext, now, changed, moved, nmoved, local)
    return nmoved


@njit(cache=True, internal=True)
def _move(v, b, vw, parts, ext, now, changed, moved, nmoved, local):
    """Move own vertex v to block b (parts, its slot of ext, the local block weights), flag
    it in ``now`` and ``changed``, listing it in moved[nmoved:] when newly changed; returns
    the new length of ``moved``."""
    local[parts[v]] -= vw[v]
    local[b] += vw[v]
    parts[v] = b
    ext[v] = b
    now[v] = True
    if not changed[v]:
        changed[v] = True
        moved[nmoved] = v
        nmoved += 1
    return nmoved


@njit(cache=True)
def admitted_weights(movers, dest, vw, now, k):
    """(weight admitted per destination block this round, weight of the movers left over):
    the movers flagged in ``now`` were admitted."""
    admitted = np.zeros(k, dtype=np.float64)
    rest = 0.0
    for i in range(movers.shape[0]):
        v = movers[i]
        if now[v]:
            admitted[dest[i]] += vw[v]
        else:
            rest += vw[v]
    return admitted, rest


@njit(cache=True)
def pack(movers, loss, vw, left, parts, ext, now, changed, moved, nmoved, local):
    """Move the movers not admitted (not in ``now``) into the room left, ``left`` per block:
    in increasing loss per weight (ties by their order), each where it lies wholly inside
    one receiver's room when the receivers' rooms are laid end to end in block order (the
    single process's packing, refine.rebalance_kernel). Flags and lists them as ``admit``
    does; returns the new length of ``moved``."""
    n = movers.shape[0]
    idx = np.empty(n, dtype=np.int64)
    nr = 0
    for i in range(n):
        if not now[movers[i]]:
            idx[nr] = i
            nr += 1
    if nr == 0:
        return nmoved
    per_w = np.empty(nr, dtype=np.float64)
    for t in range(nr):
        v = movers[idx[t]]
        per_w[t] = loss[idx[t]] / max(vw[v], 1e-12)
    order = np.argsort(per_w, kind="mergesort")
    ordered_w = np.empty(nr, dtype=np.float64)
    for t in range(nr):
        ordered_w[t] = vw[movers[idx[order[t]]]]
    into = rooms_end_to_end(ordered_w, left)
    for t in range(nr):
        if into[t] >= 0:
            nmoved = _move(movers[idx[order[t]]], into[t], vw, parts, ext, now, changed, moved, nmoved, local)
    return nmoved
