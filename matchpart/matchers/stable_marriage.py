"""Stable marriage with incomplete lists (SMI) by data-parallel proposal rounds, and its link to greedy matching.

Naim's thesis, paper IV (Manne, Naim, Lerring, Halappanavar: "On stable marriages and
greedy matchings"). Every proposal round is whole-array work on ``be.xp``:

  each free proposer proposes to the next receiver on its (mutually acceptable) list;
  each receiver keeps the best of its current suitor and the new proposals (a scatter-min
  of the receiver's rank of the proposer); rejected and displaced proposers advance their
  list pointer and are free again.

The two methods differ, as in the paper, only in *when* a rejected proposer proposes again:

  gale_shapley    all proposers start at once; a proposer rejected or displaced in round t
                  proposes in round t + 1 (the paper's queue: everyone rejected in round t
                  proposes before anyone rejected later);
  mcvitie_wilson  proposers enter in index order, a group at a time, and the chain of
                  displacements a group causes is settled completely (every proposer who
                  has entered is engaged or has exhausted its list) before the next group
                  enters (the paper's stack/recursion: "a solution where each man considered
                  so far is matched before including a new man"). The serial algorithm is
                  the case of groups of one; larger groups keep the rounds data-parallel.

Both give the proposer-optimal stable matching, which is unique, so the results agree.

Lemma 3.1: for a weighted graph G build the SMI instance where proposer i and receiver i
both rank the neighbours of vertex i by decreasing edge weight; its stable matching is
exactly the greedy matching of G (``smi_from_graph``, ``matching_from_stable``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import backend as _backend

METHODS = ("gale_shapley", "mcvitie_wilson")

# Number of index-ordered groups in which McVitie-Wilson admits proposers. One group is
# Gale-Shapley's schedule; n groups is the serial algorithm but costs at least n rounds
# (one host check each), so a small constant keeps the stack-like order at round cost.
MCVITIE_WILSON_GROUPS = 16
# Proposal rounds between host syncs (the test whether anyone is still free): free on the
# CPU, a device round trip on the GPU.
ROUNDS_PER_CHECK = {"cpu": 1, "gpu": 4}


def stable_marriage(proposer_prefs, receiver_prefs, *, method="gale_shapley", device="auto",
                    return_stats=False):
    """The proposer-optimal stable matching of an SMI instance.

    Preference lists, one per proposer (receiver), best first, in any of these forms:
      - a scipy sparse matrix: row p lists p's acceptable receivers (columns), the stored
        values are ranks (1 = best; distinct within a row; only their order matters);
      - a tuple ``(indptr, indices)``: CSR lists of ids in order of preference;
      - a list of lists of ids in order of preference.
    ``proposer_prefs`` lists receivers, ``receiver_prefs`` lists proposers. Only mutually
    acceptable pairs (each on the other's list) can match.

    Returns a numpy int64 array: each proposer's receiver, -1 if unmatched. With
    ``return_stats=True`` returns ``(partner, stats)``, stats with ``rounds`` and
    ``proposals``.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    n_p, p_cols, p_ptr, p_idx = _preference_lists(proposer_prefs, "proposer_prefs")
    n_r, r_cols, r_ptr, r_idx = _preference_lists(receiver_prefs, "receiver_prefs")
    for name, cols, idx, other, what in (("proposer_prefs", p_cols, p_idx, n_r, "receivers"),
                                         ("receiver_prefs", r_cols, r_idx, n_p, "proposers")):
        if cols is not None and cols != other:
            raise ValueError(f"{name} has {cols} columns but there are {other} {what}")
        if idx.shape[0] and idx.max() >= other:
            raise ValueError(f"{name} lists id {int(idx.max())} but there are only {other} {what} "
                             f"(ids 0..{other - 1})")
    ptr, recv, recv_rank = _mutual_lists(n_p, p_ptr, p_idx, n_r, r_ptr, r_idx)

    be = _backend.get(device)
    ptr, recv, recv_rank = be.to_device(ptr), be.to_device(recv), be.to_device(recv_rank)
    group = n_p if method == "gale_shapley" else -(-n_p // MCVITIE_WILSON_GROUPS)
    suitor, stats = _propose_in_rounds(be, n_p, n_r, ptr, recv, recv_rank, group)

    suitor = be.to_host(suitor)
    partner = np.full(n_p, -1, dtype=np.int64)
    held = np.flatnonzero(suitor >= 0)
    partner[suitor[held]] = held
    return (partner, stats) if return_stats else partner


# ---- input --------------------------------------------------------------------------

def _preference_lists(prefs, name):
    """(rows, columns or None, indptr, indices): host int64 CSR lists in preference order."""
    if sp.issparse(prefs):
        if len(prefs.shape) != 2:
            raise ValueError(f"{name} must be a 2-d sparse matrix, got shape {prefs.shape}")
        m = sp.coo_matrix(prefs)
        m.sum_duplicates()
        if m.dtype.kind not in "iuf":
            raise ValueError(f"{name}: ranks must be numbers, got dtype {m.dtype}")
        rank = m.data
        if rank.shape[0] and (not np.isfinite(rank).all() or rank.min() < 1):
            raise ValueError(f"{name}: stored ranks must be finite and >= 1 (1 = best)")
        order = np.lexsort((rank, m.row))
        rows, cols, rank = m.row[order].astype(np.int64), m.col[order].astype(np.int64), rank[order]
        tie = (rows[1:] == rows[:-1]) & (rank[1:] == rank[:-1])
        if tie.any():
            i = int(np.flatnonzero(tie)[0])
            raise ValueError(f"{name}: row {rows[i]} gives rank {rank[i]} to both {cols[i]} and "
                             f"{cols[i + 1]}; ranks within a row must be distinct")
        indptr = np.zeros(m.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=m.shape[0]), out=indptr[1:])
        return m.shape[0], m.shape[1], indptr, cols
    if isinstance(prefs, tuple):
        if len(prefs) != 2:
            raise ValueError(f"{name} as a tuple must be (indptr, indices), got {len(prefs)} items")
        indptr, indices = (np.asarray(a.get() if hasattr(a, "__cuda_array_interface__") else a)
                           for a in prefs)
        if indptr.ndim != 1 or indices.ndim != 1 or indptr.shape[0] < 1:
            raise ValueError(f"{name}: indptr and indices must be 1-d arrays (indptr non-empty)")
        if indptr.dtype.kind not in "iu" or (indices.shape[0] and indices.dtype.kind not in "iu"):
            raise ValueError(f"{name}: indptr and indices must be integer arrays")
        indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
        if indptr[0] != 0 or indptr[-1] != indices.shape[0] or (np.diff(indptr) < 0).any():
            raise ValueError(f"{name}: indptr must start at 0, never decrease and end at "
                             f"len(indices) = {indices.shape[0]}")
    else:
        try:
            lists = [np.asarray(list(row)) for row in prefs]
        except TypeError as exc:
            raise ValueError(f"{name} must be a scipy sparse matrix, a tuple (indptr, indices) "
                             f"or a list of lists of integer ids ({exc})") from exc
        for i, a in enumerate(lists):
            if a.ndim != 1 or (a.shape[0] and a.dtype.kind not in "iu"):
                raise ValueError(f"{name} must be a list of lists of integer ids; row {i} is "
                                 f"{a.tolist()!r}")
        lists = [a.astype(np.int64) for a in lists]
        indptr = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum([a.shape[0] for a in lists], out=indptr[1:])
        indices = np.concatenate(lists) if lists else np.zeros(0, dtype=np.int64)
    if indices.shape[0] and indices.min() < 0:
        raise ValueError(f"{name}: ids must be >= 0, got {int(indices.min())}")
    rows = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64), np.diff(indptr))
    width = int(indices.max()) + 1 if indices.shape[0] else 1
    keys = np.sort(rows * width + indices)        # (row, id) pairs; equal neighbours = repeats
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if dup.shape[0]:
        row, rid = divmod(int(keys[dup[0]]), width)
        raise ValueError(f"{name}: row {row} lists {rid} more than once")
    return indptr.shape[0] - 1, None, indptr, indices


def _mutual_lists(n_p, p_ptr, p_idx, n_r, r_ptr, r_idx):
    """Proposer lists cut to mutually acceptable receivers, with each receiver's rank of the
    proposer (0 = best): ``(indptr, receivers, receiver_rank)``, host int64 arrays."""
    p_rows = np.repeat(np.arange(n_p, dtype=np.int64), np.diff(p_ptr))
    r_rows = np.repeat(np.arange(n_r, dtype=np.int64), np.diff(r_ptr))
    r_pos = np.arange(r_idx.shape[0], dtype=np.int64) - r_ptr[r_rows]   # rank within the list
    # look each (proposer, receiver) pair up among the receivers' (proposer, receiver) pairs
    r_keys = r_idx * n_r + r_rows
    order = np.argsort(r_keys, kind="stable")
    r_keys, r_pos = r_keys[order], r_pos[order]
    keys = p_rows * n_r + p_idx
    at = np.minimum(np.searchsorted(r_keys, keys), max(r_keys.shape[0] - 1, 0))
    mutual = (r_keys[at] == keys) if r_keys.shape[0] else np.zeros(keys.shape[0], dtype=bool)
    indptr = np.zeros(n_p + 1, dtype=np.int64)
    np.cumsum(np.bincount(p_rows[mutual], minlength=n_p), out=indptr[1:])
    return indptr, p_idx[mutual], r_pos[at[mutual]]


# ---- the proposal rounds ------------------------------------------------------------

def _propose_in_rounds(be, n_p, n_r, indptr, recv, recv_rank, group):
    """Run proposal rounds; proposers enter ``group`` at a time (in index order), each group
    once everyone admitted before it is settled. Returns (suitor per receiver, stats).

    On the GPU the rounds run ROUNDS_PER_CHECK["gpu"] at a time over every admitted
    proposer that has receivers left (the free ones and the engaged ones, who may be
    displaced), with masks, and masked-out writes going to a trash slot (index n_p or
    n_r); a group that settles within a batch leaves idle rounds, which change nothing
    and are not counted. On the CPU a batch is one round over the free proposers only.
    """
    xp = be.xp
    no_rank = np.iinfo(np.int64).max
    nxt = xp.zeros(n_p + 1, dtype=xp.int64)   # position of each proposer's next (or current) receiver
    nxt[:n_p] = indptr[:-1]
    end = indptr[1:]
    suitor = xp.full(n_r + 1, -1, dtype=xp.int64)
    held_rank = xp.full(n_r + 1, no_rank, dtype=xp.int64)  # rank of the suitor held
    free = xp.zeros(n_p + 1, dtype=bool)
    batch = ROUNDS_PER_CHECK[be.name]
    admitted = 0
    proposing = []                            # per round, device scalars: read once at the end
    while True:
        free[:n_p] &= nxt[:n_p] < end         # exhausted lists stay single
        searching = xp.flatnonzero(free[:n_p])
        if searching.shape[0] == 0:
            if admitted == n_p:
                break
            free[admitted:min(admitted + group, n_p)] = True
            admitted = min(admitted + group, n_p)
            continue
        rows = searching
        if batch > 1:  # the engaged may be displaced and propose within the batch
            rows = xp.flatnonzero(nxt[:admitted] < end[:admitted])
        row_end = end[rows]
        for _ in range(batch):
            at = nxt[rows]
            act = free[rows] & (at < row_end)
            at = xp.where(act, at, 0)            # someone has a receiver left, so recv is not empty
            target = xp.where(act, recv[at], n_r)
            rank = xp.where(act, recv_rank[at], no_rank)
            previous = suitor[target]
            be.scatter_min(held_rank, target, rank)
            # ranks are distinct per receiver, so at most one proposal wins each receiver
            won = act & (held_rank[target] == rank)
            held_rank[n_r] = no_rank
            suitor[xp.where(won, target, n_r)] = rows
            suitor[n_r] = -1
            # rejected here or displaced there: move down the list, free again
            rejected = act & ~won
            free[rows] = rejected
            nxt[rows] += rejected.astype(xp.int64)
            displaced = xp.where(won & (previous >= 0), previous, n_p)
            free[displaced] = True
            nxt[displaced] += 1
            free[n_p], nxt[n_p] = False, 0
            proposing.append(act.sum())
    counts = be.to_host(xp.stack(proposing)) if proposing else np.zeros(0, dtype=np.int64)
    return suitor[:n_r], {"rounds": int(np.count_nonzero(counts)), "proposals": int(counts.sum())}


# ---- Lemma 3.1: greedy matching as stable marriage ----------------------------------

def smi_from_graph(graph, rating="weight"):
    """The SMI instance of Lemma 3.1 for a weighted graph: ``(proposer_prefs, receiver_prefs)``.

    Proposer i and receiver i both stand for vertex i and rank i's neighbours by
    decreasing rating, ties by the contract's order (the lexicographically smaller
    (min id, max id) pair first; ``matchers.ratings.edge_priority``). Both sides are the
    same lists, returned as ``(indptr, indices)`` numpy tuples.
    """
    from ..io import as_graph
    from .ratings import edge_priority
    g = as_graph(graph)
    be = g.backend
    priority = be.to_host(edge_priority(g, rating))
    indptr = be.to_host(g.indptr).astype(np.int64)
    indices = be.to_host(g.indices).astype(np.int64)
    rows = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(indptr))
    order = np.lexsort((priority, rows))       # within each row, best (lowest priority) first
    ranked = indices[order]
    return (indptr, ranked), (indptr.copy(), ranked.copy())


def matching_from_stable(graph, partner):
    """The graph matching (a ``Matching``) from the stable solution of ``smi_from_graph(graph)``.

    By Lemma 3.1 the solution pairs proposer i with receiver j exactly when it pairs
    proposer j with receiver i, so ``partner`` is the mate array; this is checked.
    """
    from ..io import as_graph
    from .base import Matching, matching_problems
    g = as_graph(graph)
    mate = np.asarray(partner, dtype=np.int64)
    problems = matching_problems(g, mate)
    if problems:
        raise ValueError("partner is not a matching of the graph (was it solved from "
                         f"smi_from_graph(graph)?): {problems[0]}")
    return Matching.from_mate(g, g.backend.to_device(mate), stats={"rounds": 1})


def greedy_by_stable_marriage(graph, rating="weight", *, method="mcvitie_wilson", device="auto"):
    """The greedy matching of ``graph`` computed as a stable marriage (Lemma 3.1)."""
    proposer_prefs, receiver_prefs = smi_from_graph(graph, rating)
    partner, stats = stable_marriage(proposer_prefs, receiver_prefs, method=method,
                                     device=device, return_stats=True)
    result = matching_from_stable(graph, partner)
    result.stats.update(stats)
    return result
