"""Exact maximum cardinality bipartite matching by GPU-style augmenting-path phases (APFB / APsB).

Deveci, Kaya, Ucar and Catalyurek (Euro-Par 2013): a cheap greedy initial matching,
then phases of

  GPUBFS-WR    level-synchronous BFS from all unmatched columns at once over alternating
               paths; ``root`` tells which search tree a column belongs to, and a tree stops
               growing as soon as an augmenting path has been found for its root;
  ALTERNATE    every path end (an unmatched row reached by the BFS) walks back along the
               predecessor arrays, flipping matched and unmatched edges; walks that meet a
               column another walk already took stop there, half done;
  FIXMATCHING  rows left pointing at a column that no longer points back are unmatched,
               so the matching is valid again (a half-done walk changes nothing in size).

APFB (HKDW-like) keeps growing the BFS until no level adds a column and walks back from
every path end found. APsB (HK-like) stops the BFS at the first level that finds an
augmenting path (shortest paths only) and, with the paper's root trick, walks back from
one path end per root only, so its walks never meet. Phases repeat until a BFS finds no
augmenting path: by Berge's theorem the matching is then maximum.

Every step is a round of whole-array operations on ``be.xp`` (numpy or cupy). Where the
GPU code races (two columns reaching one row, two walks entering one column), a round
here picks the lowest id with a scatter-min, so the result is the same on both backends.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import backend as _backend

METHODS = ("apfb", "apsb")
INITIALS = ("greedy", "none")

# Rounds of the cheap initial matching. Every round matches at least one pair per row
# that was proposed to, and the phases finish whatever the rounds leave, so a cap only
# bounds time spent on a heuristic start (random matrices converge in under 10).
GREEDY_MAX_ROUNDS = 32
# Seed of the hash that spreads the columns' initial proposals over their rows (fixed:
# the result must not depend on a caller's seed, and CPU and GPU must agree).
GREEDY_HASH_SEED = 0x5EED

_NONE = -1        # unmatched / no predecessor / column not reached by the BFS
_PATH_END = -2    # rmatch marker of an unmatched row that ends an augmenting path (paper)


def maximum_bipartite_matching(B, *, method="apfb", device="auto", initial="greedy",
                               return_stats=False):
    """Maximum cardinality matching of the bipartite graph of the r x c matrix ``B``.

    ``B``: a scipy sparse matrix/array, a cupyx sparse matrix, or anything that converts to
    a 2-d numeric array; rows and columns are the two vertex sets and every stored nonzero
    an edge (explicit zeros are not edges). ``method``: "apfb" or "apsb" (see the module
    docstring). ``device``: "auto", "cpu" or "gpu" ("auto" picks the GPU for a cupyx
    matrix, else as ``matchpart.backend.get``). ``initial``: "greedy" (the paper's cheap
    matching), "none" (start empty), or a valid matching to start from (an int array of
    length r in the output format).

    Returns a numpy int64 array of length r: the column matched to each row, -1 if the row
    is unmatched (like ``scipy.sparse.csgraph.maximum_bipartite_matching(B,
    perm_type="column")``; the cardinality is the same, the pairs may differ). With
    ``return_stats=True`` returns ``(matching, stats)`` where stats has ``phases``,
    ``bfs_levels`` (per phase), ``initial_cardinality`` and ``cardinality``.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    by_name = isinstance(initial, str)
    if by_name and initial not in INITIALS:
        raise ValueError(f"unknown initial matching {initial!r}; choose one of "
                         f"{', '.join(INITIALS)} or pass an array")
    be, nr, nc, col_ptr, col_rows = _column_lists(B, device)
    xp = be.xp

    rmatch = xp.full(nr, _NONE, dtype=xp.int64)
    cmatch = xp.full(nc, _NONE, dtype=xp.int64)
    if not by_name:
        _initial_from_array(be, initial, col_ptr, col_rows, rmatch, cmatch)
    elif initial == "greedy" and col_rows.shape[0]:
        _cheap_matching(be, col_ptr, col_rows, rmatch, cmatch)
    stats = {"initial_cardinality": int((rmatch >= 0).sum()), "phases": 0, "bfs_levels": []}

    # Scratch arrays reused across levels and phases; every user resets what it touched,
    # so no level costs O(rows + columns). The last slot is the trash of masked claims.
    row_claim = xp.full(nr + 1, nc, dtype=xp.int64)
    col_claim = xp.full(nc + 1, nr, dtype=xp.int64)
    matched = stats["initial_cardinality"]
    while col_rows.shape[0]:
        pred, path_ends, levels = _bfs_wr(be, col_ptr, col_rows, rmatch, cmatch, row_claim,
                                          shortest_only=(method == "apsb"))
        stats["phases"] += 1
        stats["bfs_levels"].append(levels)
        if path_ends.shape[0] == 0:
            break  # no augmenting path: maximum (Berge)
        _alternate(be, pred, path_ends, rmatch, cmatch, col_claim)
        _fix_matching(be, rmatch, cmatch)
        # Each phase completes at least one path (the walk that reaches its root first);
        # a phase that does not grow the matching would loop forever, so say so instead.
        now = int((rmatch >= 0).sum())
        if now <= matched:
            raise RuntimeError(f"bipartite matching phase {stats['phases']} found augmenting "
                               f"paths but the matching did not grow ({matched} pairs); "
                               "this is a bug, please report it")
        matched = now

    result = be.to_host(rmatch).astype(np.int64, copy=False)
    stats["cardinality"] = int((result >= 0).sum())
    return (result, stats) if return_stats else result


# ---- input --------------------------------------------------------------------------

def _column_lists(B, device):
    """(backend, rows, cols, col_ptr, col_rows): B's pattern as column -> row lists on the backend.

    The pattern is prepared on the host with scipy (a cupyx matrix is copied over once):
    validation and format conversion are setup, not the algorithm.
    """
    if _is_cupy_sparse(B):
        be = _backend.get("gpu" if device == "auto" else device)
        B = B.get()
    else:
        be = _backend.get(device)
    if sp.issparse(B):
        if len(B.shape) != 2:
            raise ValueError(f"B must be a 2-d sparse matrix, got shape {B.shape}")
        csc = sp.csc_matrix(B, copy=True)
    else:
        if hasattr(B, "get") and hasattr(B, "__cuda_array_interface__"):
            B = B.get()  # a dense cupy array
        try:
            dense = np.asarray(B)
        except Exception as exc:
            raise ValueError(f"B must be a 2-d sparse or dense matrix; cannot convert "
                             f"{type(B).__name__}: {exc}") from exc
        if dense.ndim != 2:
            raise ValueError(f"B must be 2-d (rows x columns), got an array of shape {dense.shape}")
        if dense.dtype.kind not in "biufc":
            raise ValueError(f"B must be numeric or boolean, got dtype {dense.dtype}")
        csc = sp.csc_matrix(dense)
    if csc.dtype.kind not in "biufc":
        raise ValueError(f"B must be numeric or boolean, got dtype {csc.dtype}")
    csc.sum_duplicates()   # also sorts the rows of each column
    csc.eliminate_zeros()
    if csc.nnz >= 2**32:   # the cheap matching packs entry positions into 32 bits
        raise ValueError(f"B has {csc.nnz} nonzeros; at most 2**32 - 1 are supported")
    nr, nc = csc.shape
    return (be, nr, nc, be.to_device(csc.indptr.astype(np.int64)),
            be.to_device(csc.indices.astype(np.int64)))


def _initial_from_array(be, initial, col_ptr, col_rows, rmatch, cmatch):
    """Load a caller's starting matching (column per row, -1 = unmatched) after checking it."""
    nr, nc = rmatch.shape[0], cmatch.shape[0]
    init = np.asarray(be.to_host(initial))
    if init.shape != (nr,) or init.dtype.kind not in "iu":
        raise ValueError(f"initial matching must be an integer array of length {nr} "
                         f"(the column of each row, -1 if unmatched), got shape {init.shape} "
                         f"and dtype {init.dtype}")
    init = init.astype(np.int64)
    if ((init < -1) | (init >= nc)).any():
        raise ValueError(f"initial matching has entries outside -1..{nc - 1}")
    rows = np.flatnonzero(init >= 0)
    cols = init[rows]
    if np.unique(cols).shape[0] != cols.shape[0]:
        raise ValueError("initial matching uses a column for more than one row")
    # (column, row) keys of B's entries are sorted: columns in order, rows sorted per column.
    ptr, crows = be.to_host(col_ptr), be.to_host(col_rows)
    entry_keys = np.repeat(np.arange(nc, dtype=np.int64), np.diff(ptr)) * nr + crows
    keys = cols * nr + rows
    at = np.searchsorted(entry_keys, keys)
    ok = at < entry_keys.shape[0]
    ok[ok] = entry_keys[at[ok]] == keys[ok]
    if not ok.all():
        r = int(rows[~ok][0])
        raise ValueError(f"initial matching pairs row {r} with column {int(init[r])}, "
                         "which is not a nonzero of B")
    rmatch[be.to_device(rows)] = be.to_device(cols)
    cmatch[be.to_device(cols)] = be.to_device(rows)


def _is_cupy_sparse(B):
    mod = type(B).__module__
    return mod.startswith("cupyx.") and hasattr(B, "tocsc")


# ---- shared whole-array helpers -----------------------------------------------------

def _expand(be, ptr, verts):
    """The CSR entries of ``verts``: (entry positions, owning vertex per entry)."""
    start = ptr[verts]
    pos, which = be.ranges(start, ptr[verts + 1] - start)
    return pos, verts[which]


def _claim_lowest(be, claim, targets, claimants):
    """Mask of the (target, claimant) pairs where the claimant is the lowest for its target.

    ``claim`` is a scratch array filled with a value above every claimant.
    Pairs must be distinct, so exactly one pair wins per target. The caller resets
    ``claim[targets]`` afterwards (it knows the fill value).
    """
    be.scatter_min(claim, targets, claimants)
    return claim[targets] == claimants


# ---- the cheap initial matching -----------------------------------------------------

def _cheap_matching(be, col_ptr, col_rows, rmatch, cmatch):
    """The paper's cheap initial matching, in parallel rounds: every unmatched column
    proposes to one unmatched neighbour row (a hashed choice, so that columns spread out),
    every row accepts its lowest proposing column. Maximal once no column has a free row
    left (or after GREEDY_MAX_ROUNDS). In place."""
    xp = be.xp
    nr, nc = rmatch.shape[0], cmatch.shape[0]
    no_choice = np.iinfo(np.int64).max
    cols = xp.flatnonzero(col_ptr[1:] > col_ptr[:-1]).astype(xp.int64)
    best_entry = xp.full(nc, no_choice, dtype=xp.int64)
    row_claim = xp.full(nr, nc, dtype=xp.int64)
    low32 = xp.int64(0xFFFFFFFF)
    for rnd in range(GREEDY_MAX_ROUNDS):
        if cols.shape[0] == 0:
            break
        pos, owner = _expand(be, col_ptr, cols)
        rows = col_rows[pos]
        free = rmatch[rows] == _NONE
        pos, owner = pos[free], owner[free]
        # key = (random 31-bit priority, entry position): the minimum per column is a
        # random free neighbour, and the position in the low bits makes it unique.
        key = (be.hash32(GREEDY_HASH_SEED, rnd, pos).astype(xp.int64) >> 1 << 32) | pos
        be.scatter_min(best_entry, owner, key)
        has_choice = best_entry[cols] != no_choice
        choice = best_entry[cols] & low32
        best_entry[cols] = no_choice
        cols, choice = cols[has_choice], choice[has_choice]   # others have no free row left
        target = col_rows[choice]
        won = _claim_lowest(be, row_claim, target, cols)
        row_claim[target] = nc
        rmatch[target[won]] = cols[won]
        cmatch[cols[won]] = target[won]
        cols = cols[~won]


# ---- one phase: GPUBFS-WR, ALTERNATE, FIXMATCHING -----------------------------------

def _bfs_wr(be, col_ptr, col_rows, rmatch, cmatch, row_claim, *, shortest_only):
    """Level-synchronous BFS from all unmatched columns (GPUBFS-WR).

    Returns ``(pred, path_ends, levels)``: ``pred[row]`` is the column that reached the row
    (-1 if none), ``path_ends`` the unmatched rows where ALTERNATE starts (their rmatch is
    set to the paper's -2 marker), ``levels`` the number of BFS levels expanded.

    A level works on the entries of its frontier with masks; writes that a mask turns off
    go to a trash slot (index nr of row arrays, nc of column arrays). The only data-sized
    results are the frontier's entries and the next frontier (the paper's host check of
    its per-level flag), so a level costs two host syncs on a GPU.
    """
    xp = be.xp
    nr, nc = rmatch.shape[0], cmatch.shape[0]
    col_ids = xp.arange(nc, dtype=xp.int64)
    reached = xp.ones(nc + 1, dtype=bool)          # unmatched columns are level 0; slot nc: trash
    reached[:nc] = cmatch == _NONE
    root = xp.full(nc + 1, _NONE, dtype=xp.int64)  # search tree of each reached column
    root[:nc] = xp.where(reached[:nc], col_ids, _NONE)
    root_done = xp.zeros(nc + 1, dtype=bool)       # WR: an augmenting path is known for this root
    pred = xp.full(nr + 1, _NONE, dtype=xp.int64)
    is_end = xp.zeros(nr + 1, dtype=bool)          # rows that end an augmenting path
    frontier = col_ids[reached[:nc] & (col_ptr[1:] > col_ptr[:-1])]
    levels = 0
    while frontier.shape[0]:
        levels += 1
        pos, src = _expand(be, col_ptr, frontier)
        rows = col_rows[pos]
        mate = rmatch[rows]

        # Unmatched rows end augmenting paths; a row reached from several columns keeps
        # the lowest (the GPU kernel keeps whichever write lands last).
        hit = (mate == _NONE) & ~is_end[rows]
        won = _claim_lowest_masked(be, row_claim, hit, rows, src, nc)
        src_root = root[src]
        _put(be, pred, won, rows, src)
        _put(be, is_end, won, rows, True)
        _put(be, root_done, won, src_root, True)
        pred[nr], is_end[nr], root_done[nc] = _NONE, False, False

        # Matched rows lead on to their column, if no tree has it yet; APsB stops at the
        # first level that ends a path (shortest augmenting paths only)
        step = mate >= 0
        fresh = step & ~reached[xp.where(step, mate, nc)]
        if shortest_only:
            fresh &= ~won.any()
        won = _claim_lowest_masked(be, row_claim, fresh, rows, src, nc)
        _put(be, pred, won, rows, src)
        _put(be, reached, won, mate, True)
        _put(be, root, won, mate, src_root)
        pred[nr], reached[nc], root[nc] = _NONE, True, _NONE
        # early exit of finished trees: their columns are reached but not expanded
        frontier = mate[won & ~root_done[src_root]]

    path_ends = xp.flatnonzero(is_end[:nr])
    if shortest_only and path_ends.shape[0]:
        # The paper's APsB root trick: one path end per root, so the walks are disjoint.
        owner_root = root[pred[path_ends]]
        first = xp.full(nc, nr, dtype=xp.int64)
        be.scatter_min(first, owner_root, path_ends)
        path_ends = path_ends[first[owner_root] == path_ends]
    rmatch[path_ends] = _PATH_END
    return pred[:nr], path_ends, levels


def _claim_lowest_masked(be, claim, mask, targets, claimants, fill):
    """``_claim_lowest`` for the pairs where ``mask`` is set, without compacting them.

    ``claim`` (filled with ``fill``, above every claimant) has a trash slot at its end that
    the masked-out pairs use; it is left filled as found. Returns the winning pairs' mask.
    """
    xp = be.xp
    if not be.is_gpu:  # the CPU's scatter costs per element and its compaction nothing
        k = xp.flatnonzero(mask)
        won = xp.zeros(mask.shape[0], dtype=bool)
        won[k] = _claim_lowest(be, claim, targets[k], claimants[k])
        claim[targets[k]] = fill
        return won
    at = xp.where(mask, targets, claim.shape[0] - 1)
    be.scatter_min(claim, at, claimants)
    won = mask & (claim[at] == claimants)
    claim[at] = fill
    return won


def _put(be, arr, mask, index, values):
    """``arr[index[mask]] = values[mask]`` (``values`` may be a scalar). On the GPU without a
    compaction: masked-out writes go to ``arr``'s last slot, a trash slot the caller resets;
    on the CPU by compaction, which costs nothing there, while every write costs."""
    xp = be.xp
    if be.is_gpu:
        arr[xp.where(mask, index, arr.shape[0] - 1)] = values
        return
    k = xp.flatnonzero(mask)
    arr[index[k]] = values[k] if getattr(values, "ndim", 0) else values


def _alternate(be, pred, path_ends, rmatch, cmatch, col_claim):
    """Flip the edges of the augmenting paths, walking back from their ends in lockstep.

    A walk stops at a column that an earlier walk already flipped (the paper's check
    ``pred[cmatch[col]] == col``) or that a lower row enters in the same step; the row it
    stops at is left inconsistent and FIXMATCHING unmatches it. ``col_claim`` has a
    trash slot at index nc; a step costs two host syncs on a GPU.
    """
    xp = be.xp
    nr = rmatch.shape[0]
    walkers = path_ends
    while walkers.shape[0]:
        col = pred[walkers]
        old_row = cmatch[col]
        taken = (old_row >= 0) & (pred[xp.maximum(old_row, 0)] == col)
        won = xp.flatnonzero(_claim_lowest_masked(be, col_claim, ~taken, col, walkers, nr))
        walkers, col, old_row = walkers[won], col[won], old_row[won]
        cmatch[col] = walkers
        rmatch[walkers] = col
        walkers = old_row[old_row >= 0]   # a root column had no row: that path is done


def _fix_matching(be, rmatch, cmatch):
    """FIXMATCHING: rmatch[r] = -1 wherever cmatch[rmatch[r]] != r (and clear -2 markers)."""
    xp = be.xp
    rows = xp.flatnonzero(rmatch >= 0)
    bad = rows[cmatch[rmatch[rows]] != rows]
    rmatch[bad] = _NONE
    rmatch[rmatch == _PATH_END] = _NONE
