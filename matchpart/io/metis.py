"""METIS graph files: a single-pass compiled reader (bytes -> checked CSR) and the writer.

The reader parses the vertex lines in one compiled pass that writes the CSR arrays directly
and checks every entry as it goes (token syntax and counts, ids in 1..n, self-loops,
weights, rows sorted, repeats, weight totals); symmetry is then one compiled O(nnz) pass
(csrcheck). Errors name the file line; errors about vertices are restated with the line of
the vertex concerned by the error's kind, never by its wording.
"""
from __future__ import annotations

import logging

import numpy as np

from .. import backend, csrcheck
from ..errors import GraphError, GraphFormatError
from ..graph import Graph
from ..jit import njit
from .source import read_bytes
from .text import MAX_DIGITS, MAX_WEIGHT_TOTAL, format_int_lines, token_error

log = logging.getLogger("matchpart")

# parser outcomes
_DONE, _BAD_TOKEN, _TOKEN_COUNT, _EXTRA_LINE, _FULL = 0, 1, 2, 3, 4
# problems with one entry: the first (in file order) is kept and parsing goes on, so that a
# wrong header m (a truncated or hand-edited file) is reported before it
_NO_PROBLEM, _RANGE, _LOOP, _EDGE_WEIGHT, _VERTEX_WEIGHT, _REPEAT, _EDGE_TOTAL, _VERTEX_TOTAL = range(8)
# slots of the parser's ``info`` array
_LINE, _START, _END, _VERTEX, _TOKENS, _LOOPS = 0, 1, 2, 3, 4, 5
_P_CODE, _P_LINE, _P_VERTEX, _P_VALUE, _P_OTHER = 6, 7, 8, 9, 10
_INFO_SIZE = 11


@njit(cache=True, internal=True)
def _is_blank(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, internal=True)
def _record(info, code, line, vertex, value, other):
    if info[_P_CODE] == _NO_PROBLEM:
        info[_P_CODE] = code
        info[_P_LINE] = line
        info[_P_VERTEX] = vertex
        info[_P_VALUE] = value
        info[_P_OTHER] = other


@njit(cache=True)
def _parse_vertex_lines(buf, i, line, n, lead, has_vwgt, has_ewgt, allow_loops, check_repeats,
                        indptr, cols, ewgt, vwgt, vline, info, ncon):
    """Parse the vertex lines of a METIS file, starting at byte ``i`` (file line ``line``).

    Line v (comments skipped) fills indptr[v + 1], its neighbours cols[indptr[v]:...] (0-based),
    their weights ewgt[...] when ``has_ewgt``, vwgt[v * ncon:(v + 1) * ncon] when ``has_vwgt``
    (the ``lead`` tokens before the neighbours are the optional vertex size, ignored, then
    the ``ncon`` vertex weights), and
    vline[v] = its file line. Returns (outcome, vertex lines read, entries, rows sorted);
    details (lines, byte ranges of a bad token, the first entry problem) go to ``info``.

    Symmetry is left to a separate pass (csrcheck.first_asymmetry): checked here, with the
    rows read so far, it made this loop more than twice as slow (its random reads of
    earlier rows stall the byte scanning), measured on a 2^20-vertex Delaunay graph.
    """
    size = buf.shape[0]
    capacity = cols.shape[0]
    v = 0
    k = 0
    loops = 0
    in_order = True
    edge_total = 0.0  # float: passes the limit instead of wrapping around
    vertex_total = 0.0
    while i < size:
        j = i
        while j < size and _is_blank(buf[j]):
            j += 1
        if j < size and buf[j] == 37:  # '%' comment line
            while j < size and buf[j] != 10:
                j += 1
            i = j + 1
            line += 1
            continue
        if v == n:  # lines after the last vertex must be blank
            if j < size and buf[j] != 10:
                info[_LINE] = line
                return _EXTRA_LINE, v, k, in_order
            i = j + 1
            line += 1
            continue
        vline[v] = line
        t = 0
        prev = -1
        while True:
            while j < size and _is_blank(buf[j]):
                j += 1
            if j >= size or buf[j] == 10:
                break
            start = j
            negative = buf[j] == 45
            if negative or buf[j] == 43:
                j += 1
            x = 0
            digits = 0
            while j < size and buf[j] >= 48 and buf[j] <= 57:
                x = x * 10 + (buf[j] - 48)
                digits += 1
                j += 1
            if digits == 0 or digits > 18 or (j < size and buf[j] != 10 and not _is_blank(buf[j])):
                while j < size and buf[j] != 10 and not _is_blank(buf[j]):
                    j += 1
                info[_LINE] = line
                info[_START] = start
                info[_END] = j
                return _BAD_TOKEN, v, k, in_order
            if negative:
                x = -x
            r = t - lead
            t += 1
            if r < 0:
                if has_vwgt and r >= -ncon:  # the vertex weights are the last leading tokens
                    vwgt[v * ncon + ncon + r] = x
                    if x < 0:
                        _record(info, _VERTEX_WEIGHT, line, v, x, 0)
                    vertex_total += x
                    if vertex_total >= MAX_WEIGHT_TOTAL:
                        _record(info, _VERTEX_TOTAL, line, v, x, 0)
            elif has_ewgt and r % 2 == 1:
                ewgt[k - 1] = x
                if x <= 0:
                    _record(info, _EDGE_WEIGHT, line, v, x, cols[k - 1])
                edge_total += x
                if edge_total >= MAX_WEIGHT_TOTAL:
                    _record(info, _EDGE_TOTAL, line, v, x, 0)
            else:
                if k == capacity:
                    return _FULL, v, k, in_order
                c = x - 1
                if x < 1 or x > n:
                    _record(info, _RANGE, line, v, x, 0)
                    c = 0  # keeps the stored index in range of its type; the file is refused anyway
                elif c == v:
                    loops += 1
                    if not allow_loops:
                        _record(info, _LOOP, line, v, x, 0)
                if c <= prev:
                    if c == prev and check_repeats:
                        _record(info, _REPEAT, line, v, x, 0)
                    in_order = False
                prev = c
                cols[k] = c
                k += 1
        if t < lead or (has_ewgt and (t - lead) % 2 == 1):
            info[_LINE] = line
            info[_VERTEX] = v
            info[_TOKENS] = t
            return _TOKEN_COUNT, v, k, in_order
        indptr[v + 1] = k
        v += 1
        line += 1
        i = j + 1
    info[_LOOPS] = loops
    return _DONE, v, k, in_order


def read_metis(path, *, symmetrize=False, drop_self_loops=False, merge_duplicates=False) -> Graph:
    """Read a METIS graph file (plain or gzip/bz2/xz compressed).

    Header ``n m [fmt [ncon]]`` (after any ``%`` comment lines), then one line per vertex
    listing its 1-based neighbours; an empty line is a vertex without neighbours (the
    newline ending the last line does not start another vertex). ``fmt`` has up to three
    binary digits: hundreds = vertex sizes (read and ignored: they only matter for the
    communication volume objective, which matchpart does not optimise), tens = vertex
    weights (``ncon`` of them per vertex, default 1; the graph's vwgt is then (n, ncon)),
    ones = edge weights (each neighbour is followed by its weight). Checked: vertex line count == n, 2*m ==
    stored adjacency entries, indices in 1..n, token counts, integer tokens, symmetry.
    """
    return parse_metis(read_bytes(path), path, symmetrize=symmetrize, drop_self_loops=drop_self_loops,
                       merge_duplicates=merge_duplicates)


def parse_metis(raw, path, *, symmetrize=False, drop_self_loops=False, merge_duplicates=False) -> Graph:
    """The graph in ``raw``, the bytes of a METIS file (``path`` names it in errors)."""
    n, m, fmt, ncon, hline, after = _header(raw, path)
    has_vsize, has_vwgt, has_ewgt = (f"{fmt:03d}"[d] == "1" for d in range(3))
    lead = int(has_vsize) + int(has_vwgt) * ncon
    buf = np.frombuffer(raw, dtype=np.uint8)
    # a file cannot hold more vertex lines than lines, nor more tokens than half its bytes:
    # a wrong header then gives an error, not a huge allocation
    vertices = min(n, len(raw) - after + 1)
    capacity = min(2 * m, (len(raw) - after) // 2 + 1)
    index_type = np.int32 if n < 2**31 - 1 else np.int64
    while True:
        indptr = np.zeros(vertices + 1, dtype=np.int64)
        cols = np.empty(capacity, dtype=index_type)
        ewgt = np.empty(capacity if has_ewgt else 0, dtype=np.int64)
        vwgt = np.empty(vertices * ncon if has_vwgt else 0, dtype=np.int64)
        vline = np.zeros(vertices, dtype=np.int64)
        info = np.zeros(_INFO_SIZE, dtype=np.int64)
        outcome, nv, nnz, in_order = _parse_vertex_lines(
            buf, after, hline + 1, n, lead, bool(has_vwgt), bool(has_ewgt), bool(drop_self_loops),
            not merge_duplicates, indptr, cols, ewgt, vwgt, vline, info, ncon)
        if outcome != _FULL:
            break
        capacity = (len(raw) - after) // 2 + 1  # the header's m is wrong: room for every token
    _check_structure(outcome, info, raw, path, n, m, fmt, has_vsize, has_vwgt, has_ewgt, nv, nnz, hline,
                     vline, symmetrize, drop_self_loops, ncon)
    _check_entry(info, path, n)
    cols, ewgt = cols[:nnz], (ewgt[:nnz] if has_ewgt else np.ones(nnz, dtype=np.int64))
    vwgt = (vwgt if ncon == 1 else vwgt.reshape(n, ncon)) if has_vwgt else np.ones(n, dtype=np.int64)
    if nnz != 2 * m:
        log.info("%s: header says m=%d but %d adjacency entries found; symmetrizing", path, m, nnz)
    if symmetrize or drop_self_loops or merge_duplicates:
        import scipy.sparse as sp
        A = sp.csr_matrix((ewgt, cols, indptr), shape=(n, n))
        try:
            return Graph.from_scipy(A, vwgt, symmetrize=symmetrize, drop_self_loops=drop_self_loops,
                                    merge_duplicates=merge_duplicates)
        except GraphError as exc:
            raise located(exc, path, vline) from None
    weights = ewgt if has_ewgt else ewgt[:0]  # unit weights need no comparing
    if not in_order:  # repeats in sorted rows were found by the parser
        csrcheck.sort_rows(indptr, cols, weights)
        k = csrcheck.first_duplicate(indptr, cols)
        if k >= 0:
            u = int(np.searchsorted(indptr, k, side="right") - 1)
            raise vertex_error("duplicate", u, int(cols[k]), path, vline)
    code, u, v, k, p = csrcheck.first_asymmetry(indptr, cols, weights)
    if code == csrcheck.ASYMMETRIC:
        raise vertex_error("asymmetric", u, v, path, vline)
    if code == csrcheck.WEIGHT_MISMATCH:
        raise vertex_error("weight_mismatch", u, v, path, vline, weights=(ewgt[k], ewgt[p]))
    return Graph._trusted(indptr, cols, ewgt, vwgt, backend.get("cpu"))


def _header(raw, path):
    """(n, m, fmt, ncon, header line (1-based), byte offset after the header line); checks it."""
    pos, line = 0, 1
    while pos < len(raw):  # skip comment and blank lines (a handful in practice)
        end = raw.find(b"\n", pos)
        end = len(raw) if end < 0 else end
        words = raw[pos:end].split()
        if words and not words[0].startswith(b"%"):
            break
        pos, line = end + 1, line + 1
    else:
        raise GraphFormatError("empty file: expected a header line 'n m [fmt [ncon]]'", path, 1)
    head = []
    for word in words:
        digits = word.lstrip(b"+-")
        if not digits.isdigit() or len(digits) > MAX_DIGITS or len(word) - len(digits) > 1:
            raise token_error(path, line, word)
        head.append(int(word))
    if not 2 <= len(head) <= 4:
        raise GraphFormatError(f"header must be 'n m [fmt [ncon]]' (2 to 4 integers), found {len(head)} tokens",
                               path, line)
    n, m = head[0], head[1]
    fmt = head[2] if len(head) > 2 else 0
    ncon = head[3] if len(head) > 3 else None
    if n < 0 or m < 0:
        raise GraphFormatError(f"header has negative n={n} or m={m}", path, line)
    if fmt < 0 or fmt > 111 or any(d not in "01" for d in f"{fmt:03d}"):
        raise GraphFormatError(f"header fmt {fmt} is not one of 0, 1, 10, 11, 100, 101, 110, 111", path, line)
    if ncon is not None and ncon > 1 and f"{fmt:03d}"[1] != "1":
        raise GraphFormatError(f"ncon={ncon} needs vertex weights in fmt (10, 11, 110 or 111), got fmt {fmt}",
                               path, line)
    if ncon is not None and ncon < 0:
        raise GraphFormatError(f"header has negative ncon={ncon}", path, line)
    if ncon == 0 and f"{fmt:03d}"[1] == "1":
        raise GraphFormatError("ncon=0 contradicts fmt with vertex weights", path, line)
    return n, m, fmt, max(ncon or 1, 1), line, end + 1


def _check_structure(outcome, info, raw, path, n, m, fmt, has_vsize, has_vwgt, has_ewgt, nv, nnz, hline,
                     vline, symmetrize, drop_self_loops, ncon=1):
    """Raise for a parse failure, a vertex line count other than n, or an entry count other than 2m."""
    if outcome == _BAD_TOKEN:
        raise token_error(path, int(info[_LINE]), raw[info[_START]:info[_END]])
    if outcome == _TOKEN_COUNT:
        weights = "a vertex weight" if ncon == 1 else f"{ncon} vertex weights"
        want = [w for w, on in (("a vertex size", has_vsize), (weights, has_vwgt)) if on]
        want.append("(neighbour, edge weight) pairs" if has_ewgt else "neighbours")
        raise GraphFormatError(f"vertex {info[_VERTEX] + 1} has {info[_TOKENS]} tokens; fmt {fmt} expects "
                               f"{' then '.join(want)}", path, int(info[_LINE]))
    if outcome == _EXTRA_LINE:
        raise GraphFormatError(f"more vertex lines than n={n} from the header", path, int(info[_LINE]),
                               kind="size")
    if nv < n:
        raise GraphFormatError(f"file ends after {nv} vertex lines, but the header says n={n}", path,
                               int(vline[nv - 1]) + 1 if nv else hline + 1, kind="size")
    loops = int(info[_LOOPS]) if drop_self_loops else 0
    if 2 * m not in (nnz, nnz - loops) and not symmetrize:
        raise GraphFormatError(f"header says m={m} edges, so {2 * m} adjacency entries are expected, "
                               f"but the vertex lines hold {nnz}", path, hline, kind="size")


def _check_entry(info, path, n):
    """Raise for the first problem the parser found with one entry, if any."""
    code = info[_P_CODE]
    if code == _NO_PROBLEM:
        return
    line, v, x, other = (int(info[s]) for s in (_P_LINE, _P_VERTEX, _P_VALUE, _P_OTHER))
    if code == _RANGE:
        msg, kind = f"vertex {v + 1} has neighbour {x}; neighbours must be in 1..{n}", "out_of_range"
    elif code == _LOOP:
        msg, kind = (f"vertex {v + 1} lists itself as a neighbour (self-loop; drop_self_loops=True removes it)",
                     "self_loop")
    elif code == _EDGE_WEIGHT:
        msg, kind = f"edge ({v + 1}, {other + 1}) has weight {x}; edge weights must be positive", "bad_weight"
    elif code == _VERTEX_WEIGHT:
        msg, kind = f"vertex {v + 1} has negative weight {x}", "bad_weight"
    elif code == _REPEAT:
        msg, kind = f"vertex {v + 1} lists neighbour {x} more than once (merge_duplicates=True sums them)", \
            "duplicate"
    else:
        msg, kind = ("weights too large: their running total passes 2^62 at this line, and cuts and totals "
                     "are 64-bit integers"), "bad_weight"
    raise GraphFormatError(msg, path, line, kind=kind, vertex=v)


def located(exc, path, vline):
    """``exc``, a GraphError about 0-based vertices (from Graph's validation), restated with
    1-based ids and the file line of the vertex concerned."""
    if exc.vertex is None:
        return GraphFormatError(str(exc), path, kind=exc.kind)
    return vertex_error(exc.kind, exc.vertex, exc.neighbor, path, vline, detail=str(exc))


def vertex_error(kind, u, v, path, vline, weights=None, detail=None):
    """The error of ``kind`` about entry (u, v) (0-based; v may be None), worded for a METIS
    file: 1-based ids, at the file line of the vertex whose line needs fixing (``vline[v]``
    is vertex v's line). ``weights``: the two directions' weights of a weight mismatch;
    ``detail``: the 0-based message of a kind without a wording of its own."""
    a = u + 1
    if v is None:
        return GraphFormatError(f"vertex {a}: {detail} (0-based ids in this message)", path, int(vline[u]),
                                kind=kind, vertex=u)
    b = v + 1
    if kind == "asymmetric":  # u lists v; the line to fix is v's
        msg = (f"vertex {b} does not list neighbour {a}, but vertex {a} (line {vline[u]}) lists {b}: the "
               "adjacency must be symmetric (symmetrize=True adds the missing entries)")
        return GraphFormatError(msg, path, int(vline[v]), kind=kind, vertex=v, neighbor=u)
    if kind == "duplicate":
        msg = f"vertex {a} lists neighbour {b} more than once (merge_duplicates=True sums them)"
    elif kind == "weight_mismatch" and weights is not None:
        msg = (f"edge ({a}, {b}) has weight {weights[0]} but edge ({b}, {a}) (line {vline[v]}) has weight "
               f"{weights[1]}: the two directions have different weights")
    elif kind == "weight_mismatch":
        msg = f"edge ({a}, {b}) and edge ({b}, {a}) (line {vline[v]}) have different weights"
    else:
        msg = f"vertex {a}: {detail} (0-based ids in this message)"
    return GraphFormatError(msg, path, int(vline[u]), kind=kind, vertex=u, neighbor=v)


def metis_bytes(n, m, indptr, indices, ewgt, vwgt):
    """The METIS text of a graph: fmt 0/1/10/11 depending on which weights are not all 1; (n, c)
    vertex weights are written as c weights per vertex with ncon = c in the header."""
    if ewgt.dtype.kind not in "iu" or vwgt.dtype.kind not in "iu":
        raise ValueError("the METIS format stores integer weights only; this graph has non-integer "
                         "weights (save it as .mtx or as an edge list instead)")
    has_e = bool((ewgt != 1).any())
    ncon = 1 if vwgt.ndim == 1 else vwgt.shape[1]
    has_v = bool((vwgt != 1).any()) or ncon > 1
    fmt = ("1" if has_e else "0") if not has_v else ("11" if has_e else "10")
    deg = np.diff(indptr)
    # per vertex line: [vwgt] then neighbours (each followed by its weight when has_e)
    if has_e:
        nbr = np.stack([indices + 1, ewgt.astype(np.int64)], axis=1).reshape(-1)
        per_vertex = 2 * deg
    else:
        nbr = indices + 1
        per_vertex = deg.copy()
    if has_v:
        # interleave one vertex weight before each line's neighbour tokens
        per_line = per_vertex + ncon
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(per_line, out=starts[1:])
        flat = np.empty(int(starts[-1]), dtype=np.int64)
        is_w = np.zeros(flat.shape[0], dtype=bool)
        for j in range(ncon):
            is_w[starts[:-1] + j] = True
        flat[is_w] = vwgt.reshape(-1)
        flat[~is_w] = nbr
    else:
        per_line = per_vertex
        flat = nbr
    header = f"{n} {m}" + (f" {fmt}" if fmt != "0" else "") + (f" {ncon}" if ncon > 1 else "") + "\n"
    return header.encode() + bytes(format_int_lines(flat.astype(np.int64, copy=False), per_line))
