"""Edge lists: one ``u v`` or ``u v w`` line per edge, read with the compiled tokeniser.

Every check names the file line and happens here, once; the graph is then built from the
checked arrays without validating them again (Graph._from_checked_edges).
"""
from __future__ import annotations

import logging

import numpy as np

from ..errors import GraphError, GraphFormatError
from ..graph import Graph
from .source import read_bytes
from .text import (bad_token_error, check_sparse_ids, first, integral_as_int, pairs_bytes, real_values, scan,
                   weight_trouble)

log = logging.getLogger("matchpart")

# First line written by save_graph for edge lists: it records n and the id base, so that
# isolated vertices (id 0 or the largest ids) survive a round trip. Other readers see a comment.
EDGELIST_MARK = "# matchpart edge list:"


def read_edgelist(path, *, symmetrize=False, drop_self_loops=False, merge_duplicates=False) -> Graph:
    """Read an edge list: one ``u v`` or ``u v w`` line per edge; ``#`` and ``%`` start comments.

    Ids are 0-based, or 1-based when the smallest id is 1 and no 0 appears (logged at INFO
    on the "matchpart" logger); n = largest id + 1 (0-based) or largest id (1-based).
    An edge may be listed in one or both directions; repeats must agree in weight unless
    ``merge_duplicates=True`` (which sums every copy). Weights may be real numbers (finite).
    ``symmetrize`` has no further effect: an edge list is undirected by nature.
    A file without edges is an error unless its first line is the mark written by
    ``save_graph`` (which gives n).
    """
    return parse_edgelist(read_bytes(path), path, drop_self_loops=drop_self_loops,
                          merge_duplicates=merge_duplicates)


def parse_edgelist(raw, path, *, drop_self_loops=False, merge_duplicates=False) -> Graph:
    """The graph in ``raw``, the bytes of an edge list file (``path`` names it in errors)."""
    n_hint, base_hint = _edgelist_mark(raw)
    # real-valued weights are "bad" integer tokens: collect them all (up to one per edge)
    values, per_line, comment, bad = scan(raw, b"#%", max_bad=len(raw) + 1)
    used = np.flatnonzero(~comment & (per_line > 0))
    if used.size == 0:
        if n_hint is None:  # an empty graph is only credible when save_graph wrote it
            raise GraphFormatError("no edges: expected lines 'u v' or 'u v w'", path, 1)
        check_sparse_ids(n_hint, 0, path, 1)
        log.info("%s: no edges", path)
        return Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=n_hint)
    counts = per_line[used]
    ncols = int(counts[0])
    if ncols not in (2, 3) or (counts != ncols).any():
        i = first((counts != ncols) | (counts < 2) | (counts > 3)) if ncols in (2, 3) else 0
        raise GraphFormatError(f"edge lines must all be 'u v' or all 'u v w'; this line has {counts[i]} "
                               f"tokens, the first edge line has {ncols}", path, int(used[i]) + 1)
    table = values.reshape(-1, ncols)
    u, v = table[:, 0].copy(), table[:, 1].copy()
    w = table[:, 2].copy() if ncols == 3 else None
    if bad.shape[0]:
        column = bad[:, 0] % ncols
        if ncols != 3 or (column != 2).any():
            k = first(column != 2) if ncols == 3 else 0
            raise bad_token_error(path, raw, bad[k], "an integer vertex id")
        w = w.astype(np.float64)
        w[bad[:, 0] // 3] = real_values(path, raw, bad)
    neg = (u < 0) | (v < 0)
    if neg.any():
        i = first(neg)
        raise GraphFormatError(f"negative vertex id in edge ({u[i]}, {v[i]})", path, int(used[i]) + 1,
                               kind="out_of_range")
    lo = int(min(u.min(), v.min()))
    one_based = lo == 1 if base_hint is None else base_hint == 1
    if one_based:
        if lo < 1:
            i = first((u < 1) | (v < 1))
            raise GraphFormatError("vertex id 0 in a 1-based edge list", path, int(used[i]) + 1,
                                   kind="out_of_range")
        u -= 1
        v -= 1
    top = int(max(u.max(), v.max()))
    n = None
    if n_hint is not None:
        n = n_hint
        check_sparse_ids(n, u.shape[0], path, 1)
        if top >= n:
            i = first((u >= n) | (v >= n))
            raise GraphFormatError(f"vertex id {top + one_based} is out of range for n={n} from the first line",
                                   path, int(used[i]) + 1, kind="out_of_range")
    else:
        check_sparse_ids(top + 1, u.shape[0], path, int(used[first((u == top) | (v == top))]) + 1)
    if w is not None and (w <= 0).any():
        i = first(w <= 0)
        raise GraphFormatError(f"edge weight {w[i]} must be positive", path, int(used[i]) + 1, kind="bad_weight")
    trouble = weight_trouble(w, copies=2) if w is not None else None
    if trouble:
        raise GraphFormatError(trouble[1], path, int(used[trouble[0]]) + 1, kind="bad_weight")
    loops = u == v
    if loops.any():
        if not drop_self_loops:
            i = first(loops)
            raise GraphFormatError(f"self-loop on vertex {u[i] + one_based} (drop_self_loops=True removes it)",
                                   path, int(used[i]) + 1, kind="self_loop")
        keep = ~loops
        u, v, used = u[keep], v[keep], used[keep]
        w = w[keep] if w is not None else None
    n = top + 1 if n is None else n
    w = np.ones(u.shape[0], dtype=np.int64) if w is None else integral_as_int(w)
    try:
        g = Graph._from_checked_edges(u, v, w, n, np.ones(n, dtype=np.int64), merge_duplicates)
    except GraphError as exc:
        if exc.kind != "duplicate":
            raise GraphFormatError(str(exc), path, kind=exc.kind) from None
        a, b = exc.vertex, exc.neighbor
        hits = np.flatnonzero(((u == a) & (v == b)) | ((u == b) & (v == a)))
        line = int(used[hits[-1]]) + 1 if hits.size else None
        raise GraphFormatError(f"edge ({a + one_based}, {b + one_based}) is listed more than once with "
                               "different weights (merge_duplicates=True sums them)", path, line,
                               kind="duplicate", vertex=a, neighbor=b) from None
    # only now, so that a file with an error gets the error alone
    log.info("%s: vertex ids are %s-based%s", path, 1 if one_based else 0,
             "" if base_hint is not None else " (detected: smallest id is 1)" if one_based
             else " (detected: smallest id is not 1)")
    return g


def _edgelist_mark(raw):
    """(n, base) from a first line written by save_graph, else (None, None)."""
    mark = EDGELIST_MARK.encode()
    if not raw.startswith(mark):
        return None, None
    line = raw[:raw.find(b"\n")] if b"\n" in raw else raw
    words = line[len(mark):].split()
    n = base = None
    for wd in words:
        if wd.startswith(b"n=") and wd[2:].isdigit():
            n = int(wd[2:])
        elif wd in (b"0-based", b"1-based"):
            base = int(wd[:1])
    return n, base


def edgelist_bytes(n, m, u, v, w, weighted):
    """Edge list text: the mark line (n, id base), then ``u v [w]`` per edge (0-based ids)."""
    header = f"{EDGELIST_MARK} n={n} m={m} 0-based\n"
    return header.encode() + pairs_bytes(u, v, w if weighted else None)
