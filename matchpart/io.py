"""Reading and writing graph files (METIS, Matrix Market, edge lists) and partition files.

Readers tokenise the whole file in one compiled pass (numba) and build the graph with
whole-array numpy operations, so a multi-million-edge file loads in about a second.
Every problem in a file raises ``GraphFormatError`` naming the file, the line and what
is wrong; problems that only show once the graph is assembled (an asymmetric adjacency,
a duplicate neighbour) are translated back to the file line of the vertex concerned.
"""
from __future__ import annotations

import logging
import os
import re
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit

from .errors import GraphError, GraphFormatError
from .graph import Graph

log = logging.getLogger("matchpart")

# File extensions -> format name. Anything else is sniffed from the first line.
EXTENSIONS = {
    ".graph": "metis", ".metis": "metis", ".chaco": "metis",
    ".mtx": "mtx", ".mm": "mtx",
    ".edges": "edgelist", ".txt": "edgelist", ".el": "edgelist", ".edgelist": "edgelist",
}
FORMATS = ("metis", "mtx", "edgelist")
# First line written by save_graph for edge lists: it records n and the id base, so that
# isolated vertices (id 0 or the largest ids) survive a round trip. Other readers see a comment.
EDGELIST_MARK = "# matchpart edge list:"
# The largest integer token accepted: 18 decimal digits always fit in int64.
MAX_DIGITS = 18
# Cuts, block weights and totals are int64 sums of weights: readers refuse weights whose
# total would come near overflow instead of returning a graph with wrapped-around totals.
MAX_WEIGHT_TOTAL = 2**62
# Ids as large as this in a file with few edges are a mistake (n = largest id + 1 would make
# arrays of petabytes): reported as such rather than as an allocation failure.
MAX_SPARSE_IDS = 2**31
UTF8_BOM = b"\xef\xbb\xbf"

# byte codes used by the compiled kernels
_NL, _CR, _SPACE, _TAB, _PERCENT, _HASH, _MINUS, _PLUS = 10, 13, 32, 9, 37, 35, 45, 43


# ---------------------------------------------------------------------------------------
# compiled tokeniser / formatter (inherently sequential byte scanning)
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True)
def _tokenize(buf, comment1, comment2, max_bad):
    """Integer tokens of a text buffer, line by line.

    Returns (values, tokens per line, comment-line flags, bad tokens, their lines, their
    byte starts, their byte ends). Lines end at '\\n'; text after the last '\\n' is a line
    only when non-empty. A line whose first non-blank byte is ``comment1`` or ``comment2``
    is a comment. A token that is not an optionally signed integer of at most MAX_DIGITS
    digits is "bad": it counts as a token with value 0 and is reported; the scan stops
    after ``max_bad`` bad tokens (the per-line counts are then incomplete).
    """
    n = buf.shape[0]
    nlines = 0
    for i in range(n):
        if buf[i] == 10:
            nlines += 1
    if n > 0 and buf[n - 1] != 10:
        nlines += 1
    values = np.empty(n // 2 + 1, np.int64)
    per_line = np.zeros(nlines, np.int64)
    comment = np.zeros(nlines, np.bool_)
    bad = np.empty((16, 4), np.int64)  # token index, line, start, end; grown on demand
    nbad = 0
    line = 0
    ntok = 0
    i = 0
    line_start = True
    while i < n:
        c = buf[i]
        if c == 10:
            line += 1
            line_start = True
            i += 1
            continue
        if _is_space(c):
            i += 1
            continue
        if line_start and (c == comment1 or c == comment2):
            comment[line] = True
            while i < n and buf[i] != 10:
                i += 1
            continue
        line_start = False
        start = i
        neg = False
        if c == 45 or c == 43:
            neg = c == 45
            i += 1
        v = 0
        digits = 0
        while i < n and buf[i] >= 48 and buf[i] <= 57:
            v = v * 10 + (buf[i] - 48)
            digits += 1
            i += 1
        if digits == 0 or digits > 18 or (i < n and not _is_space(buf[i]) and buf[i] != 10):
            while i < n and not _is_space(buf[i]) and buf[i] != 10:
                i += 1
            if nbad == bad.shape[0]:
                grown = np.empty((2 * nbad, 4), np.int64)
                grown[:nbad] = bad
                bad = grown
            bad[nbad, 0] = ntok
            bad[nbad, 1] = line
            bad[nbad, 2] = start
            bad[nbad, 3] = i
            nbad += 1
            v = 0
        values[ntok] = -v if neg else v
        ntok += 1
        per_line[line] += 1
        if nbad >= max_bad and nbad > 0:
            break
    return values[:ntok], per_line, comment, bad[:nbad]


@njit(cache=True)
def _first_non_decimal(buf, starts, ends, begin):
    """Index k >= begin of the first token buf[starts[k]:ends[k]] that is not a decimal
    number [+-]digits[.digits][(e|E)[+-]digits] (digits may be missing on one side of the
    point, not on both), or -1."""
    for k in range(begin, starts.shape[0]):
        i = starts[k]
        end = ends[k]
        if i < end and (buf[i] == 43 or buf[i] == 45):
            i += 1
        mantissa = 0
        while i < end and 48 <= buf[i] <= 57:
            i += 1
            mantissa += 1
        if i < end and buf[i] == 46:
            i += 1
            while i < end and 48 <= buf[i] <= 57:
                i += 1
                mantissa += 1
        ok = mantissa > 0
        if ok and i < end and (buf[i] == 101 or buf[i] == 69):
            i += 1
            if i < end and (buf[i] == 43 or buf[i] == 45):
                i += 1
            exponent = 0
            while i < end and 48 <= buf[i] <= 57:
                i += 1
                exponent += 1
            ok = exponent > 0
        if not ok or i != end:
            return k
    return -1


@njit(cache=True)
def _format_int_lines(values, per_line):
    """Bytes of ``values`` written ``per_line[i]`` to line i, space separated, '\\n' ended."""
    size = 0
    for i in range(values.shape[0]):
        v = values[i]
        size += 2 if v < 0 else 1
        a = abs(v)
        while a >= 10:
            a //= 10
            size += 1
    for line in range(per_line.shape[0]):  # separators: spaces between tokens + one newline
        size += per_line[line] if per_line[line] > 0 else 1
    out = np.empty(size, np.uint8)
    pos = 0
    k = 0
    digits = np.empty(20, np.uint8)
    for line in range(per_line.shape[0]):
        for t in range(per_line[line]):
            if t > 0:
                out[pos] = 32
                pos += 1
            v = values[k]
            k += 1
            if v < 0:
                out[pos] = 45
                pos += 1
                v = -v
            nd = 0
            while True:
                digits[nd] = 48 + v % 10
                nd += 1
                v //= 10
                if v == 0:
                    break
            for d in range(nd - 1, -1, -1):
                out[pos] = digits[d]
                pos += 1
        out[pos] = 10
        pos += 1
    return out[:pos]


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
def _read_bytes(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except IsADirectoryError:
        raise GraphFormatError("is a directory, not a graph file", path) from None
    # without this, a binary file fails on its first "token", a screenful of escaped bytes
    nul = raw.find(b"\0")
    if nul >= 0:
        raise GraphFormatError("contains a NUL byte: this is a binary file, not a text graph file",
                               path, raw.count(b"\n", 0, nul) + 1)
    if raw.startswith(UTF8_BOM):  # written by some Windows editors; not part of the first token
        raw = raw[len(UTF8_BOM):]
    return raw


def _scan(raw, comments=b"%", max_bad=1):
    """Run the tokeniser: (values, tokens per line, comment flags, bad tokens (k, 4))."""
    buf = np.frombuffer(raw, dtype=np.uint8)
    c1 = comments[0]
    c2 = comments[1] if len(comments) > 1 else comments[0]
    return _tokenize(buf, c1, c2, max_bad)


def _bad_token_error(path, raw, bad_row, what="an integer"):
    _, line, start, end = (int(x) for x in bad_row)
    text = raw[start:end].decode("utf-8", "replace")
    if len(text) > 40:
        text = text[:40] + "..."
    digits = text.lstrip("+-")
    if digits.isdigit() and len(digits) > MAX_DIGITS:
        return GraphFormatError(f"number {text!r} is too large (at most {MAX_DIGITS} digits)", path, line + 1)
    return GraphFormatError(f"token {text!r} is not {what}", path, line + 1)


def _line_starts(per_line):
    """Index of each line's first token in the flat token array."""
    starts = np.zeros(per_line.shape[0] + 1, dtype=np.int64)
    np.cumsum(per_line, out=starts[1:])
    return starts


def _first(mask):
    return int(np.flatnonzero(mask)[0])


def _weight_trouble(weights, copies=1, what="edge weight"):
    """(index, reason) of the first weight that is not finite or that takes the running total
    past what the int64 (or float64) sums of the pipeline can hold; None when all is well.
    ``copies``: how often the graph stores each weight (2 for edges listed in one direction)."""
    if weights.size == 0:
        return None
    if weights.dtype.kind == "f":
        bad = ~np.isfinite(weights)
        if bad.any():
            i = _first(bad)
            return i, f"{what} {weights[i]} is not a finite number"
        with np.errstate(over="ignore"):  # overflow is what is being looked for
            if np.isfinite(weights.sum()):
                return None
            return _first(~np.isfinite(np.cumsum(weights))), "the weights add up to infinity (float64 overflow)"
    limit = MAX_WEIGHT_TOTAL // copies
    if int(weights.max()) * weights.shape[0] < limit:  # no sum needed
        return None
    over = np.cumsum(weights, dtype=np.float64) >= limit
    if not over.any():
        return None
    return _first(over), ("weights too large: their running total passes 2^62 at this line, and cuts "
                          "and totals are 64-bit integers")


def _check_sparse_ids(n, entries, path, line):
    """Refuse an n that would allocate absurd arrays for a handful of edges."""
    if n > MAX_SPARSE_IDS and n > 16 * entries:
        raise GraphFormatError(f"n={n} vertices with only {entries} edge entr{'y' if entries == 1 else 'ies'}: "
                               "vertex ids must be 0..n-1 (or 1..n), not arbitrary labels", path, line)


def _detect_format(path, fmt):
    if fmt is not None:
        fmt = str(fmt).lower()
        aliases = {"graph": "metis", "mm": "mtx", "matrixmarket": "mtx", "edges": "edgelist",
                   "el": "edgelist", "txt": "edgelist"}
        fmt = aliases.get(fmt, fmt)
        if fmt not in FORMATS:
            raise ValueError(f"unknown graph format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    ext = Path(path).suffix.lower()
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    # sniff: Matrix Market has a banner; '#' comments mean an edge list; a METIS file has a
    # header "n m [fmt [ncon]]" followed by exactly n vertex lines; anything else is an edge list
    with open(path, "rb") as f:
        raw = f.read()
    if raw.startswith(b"%%MatrixMarket"):
        return "mtx"
    if raw.startswith(b"#") or b"\n#" in raw[:1 << 16]:
        return "edgelist"
    lines = raw.split(b"\n")
    if raw.endswith(b"\n"):
        lines.pop()  # the newline ending the last line does not start another line
    lines = [ln for ln in lines if not ln.lstrip().startswith(b"%")]
    while lines and not lines[0].strip():
        lines.pop(0)
    head = lines[0].split() if lines else []
    if 2 <= len(head) <= 4 and all(t.isdigit() for t in head):
        n = int(head[0])
        fmt_ok = len(head) < 3 or set(head[2].decode()) <= {"0", "1"}
        extra_blank = all(not ln.strip() for ln in lines[n + 1:])
        if fmt_ok and n >= 1 and len(lines) - 1 >= n and extra_blank:
            return "metis"
    return "edgelist"


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------
def load_graph(path_or_spec, *, fmt=None, symmetrize=False, drop_self_loops=False,
               merge_duplicates=False, device="cpu", seed=0) -> Graph:
    """Load a graph file, or build a graph from a generator spec.

    ``path_or_spec``: a path to a METIS (``.graph``/``.metis``), Matrix Market (``.mtx``)
    or edge list (``.edges``/``.txt``/``.el``) file (other extensions are sniffed), or,
    when it is not an existing file, a generator spec such as ``"delaunay:100000"`` or
    ``"grid:10x20"`` (see ``matchpart.generators.from_spec``; ``seed`` applies to specs).

    Repairs, all off by default so that bad input is reported rather than changed:
    ``symmetrize`` adds missing reverse edges (weight max(w(u,v), w(v,u))),
    ``drop_self_loops`` removes self-loops, ``merge_duplicates`` sums repeated edges.
    ``device`` is where the returned graph lives ("cpu", "gpu", "auto").
    """
    p = os.fspath(path_or_spec)
    if not os.path.exists(p):
        if isinstance(path_or_spec, str) and ":" in p and not os.path.dirname(p.split(":")[0]):
            from .generators import from_spec
            return from_spec(p, seed=seed).to(device)
        raise FileNotFoundError(f"no such graph file: {p!r} (nor a generator spec like 'delaunay:1000')")
    if os.path.isdir(p):
        raise GraphFormatError("is a directory, not a graph file", p)
    if not os.path.isfile(p):
        # format sniffing and the readers open the file more than once: a pipe would read empty
        raise GraphFormatError("is not a regular file (a pipe or a device?); save the graph to a file first", p)
    kind = _detect_format(p, fmt)
    opts = dict(symmetrize=symmetrize, drop_self_loops=drop_self_loops, merge_duplicates=merge_duplicates)
    if kind == "metis":
        g = read_metis(p, **opts)
    elif kind == "mtx":
        g = read_mtx(p, **opts)
    else:
        g = read_edgelist(p, **opts)
    return g.to(device)


def save_graph(graph, path, fmt=None):
    """Write ``graph`` to ``path`` as METIS, Matrix Market or an edge list (by extension or ``fmt``).

    METIS: fmt 0/1/10/11 depending on whether edge and vertex weights are all 1
    (weights must be integers). Matrix Market: ``coordinate integer|real symmetric``
    (lower triangle, 1-based) or ``pattern`` when all edge weights are 1; vertex weights
    are not stored. Edge list: one ``u v [w]`` line per undirected edge (u < v, 0-based),
    weights only when some weight is not 1; vertex weights are not stored.
    """
    from .graph import as_graph
    g = as_graph(graph)
    p = os.fspath(path)
    kind = output_format(p, fmt)
    h = g.backend.to_host
    indptr, indices, ewgt, vwgt = h(g.indptr), h(g.indices).astype(np.int64), h(g.ewgt), h(g.vwgt)
    if kind == "metis":
        data = _metis_bytes(g.n, g.m, indptr, indices, ewgt, vwgt)
    else:
        rows = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(indptr))
        if kind == "mtx":
            keep = rows > indices  # lower triangle, as the symmetric Matrix Market convention wants
        else:
            keep = rows < indices
        u, v, w = rows[keep], indices[keep], ewgt[keep]
        weighted = bool((w != 1).any())
        if kind == "mtx":
            field = "pattern" if not weighted else ("integer" if w.dtype.kind in "iu" else "real")
            header = f"%%MatrixMarket matrix coordinate {field} symmetric\n{g.n} {g.n} {u.shape[0]}\n"
            data = header.encode() + _pairs_bytes(u + 1, v + 1, w if weighted else None)
        else:
            header = f"{EDGELIST_MARK} n={g.n} m={g.m} 0-based\n"
            data = header.encode() + _pairs_bytes(u, v, w if weighted else None)
    with open(p, "wb") as f:
        f.write(data)


def output_format(path, fmt=None):
    """The format ``save_graph`` writes ``path`` in: ``fmt`` when given, else by extension."""
    if fmt is not None:
        return _detect_format(path, fmt)
    ext = Path(path).suffix.lower()
    if ext not in EXTENSIONS:
        raise ValueError(f"cannot tell the format of {os.fspath(path)!r} from its extension; pass fmt= one of "
                         f"{', '.join(FORMATS)} or use one of {', '.join(sorted(EXTENSIONS))}")
    return EXTENSIONS[ext]


def _pairs_bytes(u, v, w):
    """'u v [w]' lines; integers through the compiled formatter, floats with repr precision."""
    if w is None or w.dtype.kind in "iu":
        cols = [u, v] if w is None else [u, v, w.astype(np.int64)]
        flat = np.stack(cols, axis=1).reshape(-1)
        return bytes(_format_int_lines(flat, np.full(u.shape[0], len(cols), dtype=np.int64)))
    ints = _format_int_lines(np.stack([u, v], axis=1).reshape(-1), np.full(u.shape[0], 2, dtype=np.int64))
    left = bytes(ints).split(b"\n")[:-1]
    weights = map(repr, w.tolist())  # shortest text that reads back to the same float
    return ("\n".join(a.decode() + " " + b for a, b in zip(left, weights)) + "\n").encode() \
        if u.shape[0] else b""


def _metis_bytes(n, m, indptr, indices, ewgt, vwgt):
    if ewgt.dtype.kind not in "iu" or vwgt.dtype.kind not in "iu":
        raise ValueError("the METIS format stores integer weights only; this graph has non-integer "
                         "weights (save it as .mtx or as an edge list instead)")
    has_e = bool((ewgt != 1).any())
    has_v = bool((vwgt != 1).any())
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
        per_line = per_vertex + 1
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(per_line, out=starts[1:])
        flat = np.empty(int(starts[-1]), dtype=np.int64)
        is_w = np.zeros(flat.shape[0], dtype=bool)
        is_w[starts[:-1]] = True
        flat[is_w] = vwgt
        flat[~is_w] = nbr
    else:
        per_line = per_vertex
        flat = nbr
    header = f"{n} {m}" + (f" {fmt}" if fmt != "0" else "") + "\n"
    return header.encode() + bytes(_format_int_lines(flat.astype(np.int64, copy=False), per_line))


# ---------------------------------------------------------------------------------------
# METIS
# ---------------------------------------------------------------------------------------
def read_metis(path, *, symmetrize=False, drop_self_loops=False, merge_duplicates=False) -> Graph:
    """Read a METIS graph file.

    Header ``n m [fmt [ncon]]`` (after any ``%`` comment lines), then one line per vertex
    listing its 1-based neighbours; an empty line is a vertex without neighbours (the
    newline ending the last line does not start another vertex). ``fmt`` has up to three
    binary digits: hundreds = vertex sizes (read and ignored: they only matter for the
    communication volume objective, which matchpart does not optimise), tens = vertex
    weights, ones = edge weights (each neighbour is followed by its weight). ``ncon > 1``
    (multi-constraint weights) is not supported. Checked: vertex line count == n, 2*m ==
    stored adjacency entries, indices in 1..n, token counts, integer tokens, symmetry.
    """
    raw = _read_bytes(path)
    values, per_line, comment, bad = _scan(raw, b"%")
    if bad.shape[0]:
        raise _bad_token_error(path, raw, bad[0])
    real = np.flatnonzero(~comment)  # line indices that are header or vertex lines
    if not (per_line[real] > 0).any():
        raise GraphFormatError("empty file: expected a header line 'n m [fmt [ncon]]'", path, 1)
    # header: first non-comment line with tokens (blank lines before it are skipped)
    nonblank = real[per_line[real] > 0]
    hline = int(nonblank[0])
    starts = _line_starts(per_line)
    head = values[starts[hline]:starts[hline + 1]].tolist()
    if not 2 <= len(head) <= 4:
        raise GraphFormatError(f"header must be 'n m [fmt [ncon]]' (2 to 4 integers), found {len(head)} tokens",
                               path, hline + 1)
    n, m = head[0], head[1]
    fmt = head[2] if len(head) > 2 else 0
    ncon = head[3] if len(head) > 3 else None
    if n < 0 or m < 0:
        raise GraphFormatError(f"header has negative n={n} or m={m}", path, hline + 1)
    digits = f"{fmt:03d}" if fmt >= 0 else "bad"
    if fmt < 0 or fmt > 111 or any(d not in "01" for d in digits):
        raise GraphFormatError(f"header fmt {fmt} is not one of 0, 1, 10, 11, 100, 101, 110, 111",
                               path, hline + 1)
    has_vsize, has_vwgt, has_ewgt = digits[0] == "1", digits[1] == "1", digits[2] == "1"
    if ncon is not None and ncon > 1:
        raise GraphFormatError(f"ncon={ncon}: multi-constraint vertex weights are not supported "
                               "(only one weight per vertex)", path, hline + 1)
    if ncon == 0 and has_vwgt:
        raise GraphFormatError("ncon=0 contradicts fmt with vertex weights", path, hline + 1)
    lead = int(has_vsize) + int(has_vwgt)

    vlines = real[real > hline]
    # blank lines after the n-th vertex line (e.g. a trailing empty line) are not vertices
    if vlines.size > n:
        extra = vlines[n:]
        if (per_line[extra] > 0).any():
            ln = int(extra[per_line[extra] > 0][0])
            raise GraphFormatError(f"more vertex lines than n={n} from the header", path, ln + 1)
        vlines = vlines[:n]
    if vlines.size < n:
        last = int(vlines[-1]) + 2 if vlines.size else hline + 2
        raise GraphFormatError(f"file ends after {vlines.size} vertex lines, but the header says n={n}",
                               path, last)
    lineno = vlines + 1  # file line number of each vertex (1-based)

    counts = per_line[vlines]
    tok0 = starts[hline + 1]
    toks = values[tok0:]  # vertex tokens are contiguous after the header (comments have none)
    short = counts < lead
    rest = counts - lead
    if short.any() or (has_ewgt and (rest % 2).any()):
        v = _first(short | ((rest % 2 == 1) if has_ewgt else short))
        want = []
        if has_vsize:
            want.append("a vertex size")
        if has_vwgt:
            want.append("a vertex weight")
        want.append("(neighbour, edge weight) pairs" if has_ewgt else "neighbours")
        raise GraphFormatError(f"vertex {v + 1} has {counts[v]} tokens; fmt {fmt} expects "
                               f"{' then '.join(want)}", path, int(lineno[v]))
    vstart = _line_starts(counts)[:-1]
    vwgt = toks[vstart + int(has_vsize)] if has_vwgt else None
    # position of every adjacency token: skip the leading tokens of each line
    adj_count = rest // 2 if has_ewgt else rest
    nnz = int(adj_count.sum())
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(adj_count, out=indptr[1:])
    rows = np.repeat(np.arange(n, dtype=np.int64), adj_count)
    if lead == 0 and not has_ewgt:  # plain fmt 0: the tokens are the adjacency
        cols = toks[:nnz].copy()
        ewgt = np.ones(nnz, dtype=np.int64)
    else:
        within = np.arange(nnz, dtype=np.int64) - indptr[rows]
        stride = 2 if has_ewgt else 1
        pos = vstart[rows] + lead + stride * within
        cols = toks[pos]
        ewgt = toks[pos + 1] if has_ewgt else np.ones(nnz, dtype=np.int64)
        del pos, within

    # the edge count is checked before the entries: a wrong m usually means a truncated or
    # hand-edited file, and saying so is more useful than the first asymmetric pair
    loops = rows == cols - 1
    n_loops = int(loops.sum()) if drop_self_loops else 0
    if 2 * m not in (nnz, nnz - n_loops) and not symmetrize:
        raise GraphFormatError(f"header says m={m} edges, so {2 * m} adjacency entries are expected, "
                               f"but the vertex lines hold {nnz}", path, hline + 1)
    bad_idx = (cols < 1) | (cols > n)
    if bad_idx.any():
        i = _first(bad_idx)
        raise GraphFormatError(f"vertex {rows[i] + 1} has neighbour {cols[i]}; neighbours must be in 1..{n}",
                               path, int(lineno[rows[i]]))
    cols -= 1
    if has_ewgt and (ewgt <= 0).any():
        i = _first(ewgt <= 0)
        raise GraphFormatError(f"edge ({rows[i] + 1}, {cols[i] + 1}) has weight {ewgt[i]}; edge weights "
                               "must be positive", path, int(lineno[rows[i]]))
    if has_vwgt and (vwgt < 0).any():
        v = _first(vwgt < 0)
        raise GraphFormatError(f"vertex {v + 1} has negative weight {vwgt[v]}", path, int(lineno[v]))
    trouble = _weight_trouble(ewgt) if has_ewgt else None
    if trouble:
        raise GraphFormatError(trouble[1], path, int(lineno[rows[trouble[0]]]))
    trouble = _weight_trouble(vwgt) if has_vwgt else None
    if trouble:
        raise GraphFormatError(trouble[1], path, int(lineno[trouble[0]]))
    if loops.any() and not drop_self_loops:
        i = _first(loops)
        raise GraphFormatError(f"vertex {rows[i] + 1} lists itself as a neighbour (self-loop; "
                               "drop_self_loops=True removes it)", path, int(lineno[rows[i]]))
    if nnz != 2 * m:
        log.info("%s: header says m=%d but %d adjacency entries found; symmetrizing", path, m, nnz)
    try:
        if symmetrize or drop_self_loops or merge_duplicates:
            A = sp.csr_matrix((ewgt, cols.astype(np.int32) if n < 2**31 else cols, indptr), shape=(n, n))
            return Graph.from_scipy(A, vwgt, symmetrize=symmetrize, drop_self_loops=drop_self_loops,
                                    merge_duplicates=merge_duplicates)
        return _checked_graph(indptr, cols, ewgt, vwgt, path, lineno)
    except GraphFormatError:
        raise
    except GraphError as exc:
        raise _located(exc, path, lineno) from None


def _checked_graph(indptr, cols, ewgt, vwgt, path, lineno):
    """Graph from file CSR arrays, checked in O(nnz) with 1-based messages naming file lines.

    Entries are already known to be in range, loop-free and positive. What is left: rows
    sorted (sorted here if not), no repeated neighbour, and symmetry of entries and weights,
    checked against the transpose built by scipy's counting sort rather than by the
    O(nnz log nnz) sort that general validation needs.
    """
    n = indptr.shape[0] - 1
    index_type = np.int32 if n < 2**31 - 1 else np.int64
    A = sp.csr_matrix((ewgt, cols.astype(index_type, copy=False), indptr), shape=(n, n))
    if not A.has_sorted_indices:
        A.sort_indices()
    rows_start = np.zeros(A.indices.shape[0], dtype=bool)
    rows_start[A.indptr[:-1][A.indptr[:-1] < A.indptr[1:]]] = True
    repeat = (A.indices[1:] == A.indices[:-1]) & ~rows_start[1:]
    if repeat.any():
        k = _first(repeat) + 1
        u = int(np.searchsorted(A.indptr, k, side="right") - 1)
        raise GraphFormatError(f"vertex {u + 1} lists neighbour {A.indices[k] + 1} more than once "
                               "(merge_duplicates=True sums them)", path, int(lineno[u]))
    T = A.T.tocsr()  # counting sort: rows of T come out sorted
    if not (np.array_equal(A.indptr, T.indptr) and np.array_equal(A.indices, T.indices)):
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(A.indptr))
        key = rows * n + A.indices
        mirror = A.indices.astype(np.int64) * n + rows
        k = _first(~np.isin(mirror, key))  # error path: a sort is fine here
        u, v = int(rows[k]), int(A.indices[k])
        raise GraphFormatError(f"vertex {v + 1} does not list neighbour {u + 1}, but vertex {u + 1} "
                               f"(line {lineno[u]}) lists {v + 1}: the adjacency must be symmetric "
                               "(symmetrize=True adds the missing entries)", path, int(lineno[v]))
    if not np.array_equal(A.data, T.data):
        k = _first(A.data != T.data)
        u, v = int(np.searchsorted(A.indptr, k, side="right") - 1), int(A.indices[k])
        raise GraphFormatError(f"edge ({u + 1}, {v + 1}) has weight {A.data[k]} but edge ({v + 1}, {u + 1}) "
                               f"(line {lineno[v]}) has weight {T.data[k]}: the two directions have different weights",
                               path, int(lineno[u]))
    if vwgt is None:
        vwgt = np.ones(n, dtype=np.int64)
    from . import backend
    return Graph._trusted(A.indptr.astype(np.int64, copy=False), A.indices, A.data.astype(np.int64, copy=False),
                          vwgt.astype(np.int64, copy=False), backend.get("cpu"))


def _located(exc, path, lineno):
    """A GraphError about 0-based vertices, restated with 1-based ids and the file line."""
    u, v = exc.vertex, exc.neighbor
    msg = str(exc)
    if u is None:
        return GraphFormatError(msg, path)
    if v is not None and "no reverse" in msg:
        return GraphFormatError(f"vertex {v + 1} does not list neighbour {u + 1}, but vertex {u + 1} "
                                f"(line {lineno[u]}) lists {v + 1}: the adjacency must be symmetric "
                                "(symmetrize=True adds the missing entries)", path, int(lineno[v]))
    if v is not None and "more than once" in msg:
        return GraphFormatError(f"vertex {u + 1} lists neighbour {v + 1} more than once "
                                "(merge_duplicates=True sums them)", path, int(lineno[u]))
    if v is not None and "has weight" in msg:
        return GraphFormatError(f"edge ({u + 1}, {v + 1}) and edge ({v + 1}, {u + 1}) (line {lineno[v]}) "
                                "have different weights", path, int(lineno[u]))
    return GraphFormatError(f"vertex {u + 1}: {msg} (0-based ids in this message)", path, int(lineno[u]))


# ---------------------------------------------------------------------------------------
# edge lists
# ---------------------------------------------------------------------------------------
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
    raw = _read_bytes(path)
    n_hint, base_hint = _edgelist_mark(raw)
    # real-valued weights are "bad" integer tokens: collect them all (up to one per edge)
    values, per_line, comment, bad = _scan(raw, b"#%", max_bad=len(raw) + 1)
    used = np.flatnonzero(~comment & (per_line > 0))
    if used.size == 0:
        if n_hint is None:  # an empty graph is only credible when save_graph wrote it
            raise GraphFormatError("no edges: expected lines 'u v' or 'u v w'", path, 1)
        _check_sparse_ids(n_hint, 0, path, 1)
        log.info("%s: no edges", path)
        return Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=n_hint)
    counts = per_line[used]
    ncols = int(counts[0])
    if ncols not in (2, 3) or (counts != ncols).any():
        i = _first((counts != ncols) | (counts < 2) | (counts > 3)) if ncols in (2, 3) else 0
        raise GraphFormatError(f"edge lines must all be 'u v' or all 'u v w'; this line has {counts[i]} "
                               f"tokens, the first edge line has {ncols}", path, int(used[i]) + 1)
    table = values.reshape(-1, ncols)
    u, v = table[:, 0].copy(), table[:, 1].copy()
    w = table[:, 2].copy() if ncols == 3 else None
    if bad.shape[0]:
        column = bad[:, 0] % ncols
        if ncols != 3 or (column != 2).any():
            k = _first(column != 2) if ncols == 3 else 0
            raise _bad_token_error(path, raw, bad[k], "an integer vertex id")
        texts = [raw[a:b] for a, b in bad[:, 2:4].tolist()]  # only the non-integer weights
        try:
            reals = np.array(texts, dtype=np.float64)
        except ValueError:
            k = next(k for k, t in enumerate(texts) if not _is_float(t))
            raise _bad_token_error(path, raw, bad[k], "a number") from None
        w = w.astype(np.float64)
        w[bad[:, 0] // 3] = reals
    neg = (u < 0) | (v < 0)
    if neg.any():
        i = _first(neg)
        raise GraphFormatError(f"negative vertex id in edge ({u[i]}, {v[i]})", path, int(used[i]) + 1)
    lo = int(min(u.min(), v.min()))
    one_based = lo == 1 if base_hint is None else base_hint == 1
    if one_based:
        if lo < 1:
            i = _first((u < 1) | (v < 1))
            raise GraphFormatError("vertex id 0 in a 1-based edge list", path, int(used[i]) + 1)
        u -= 1
        v -= 1
    top = int(max(u.max(), v.max()))
    n = None
    if n_hint is not None:
        n = n_hint
        _check_sparse_ids(n, u.shape[0], path, 1)
        if top >= n:
            i = _first((u >= n) | (v >= n))
            raise GraphFormatError(f"vertex id {top + one_based} is out of range for n={n} from the first line",
                                   path, int(used[i]) + 1)
    else:
        _check_sparse_ids(top + 1, u.shape[0], path, int(used[_first((u == top) | (v == top))]) + 1)
    if w is not None and (w <= 0).any():
        i = _first(w <= 0)
        raise GraphFormatError(f"edge weight {w[i]} must be positive", path, int(used[i]) + 1)
    trouble = _weight_trouble(w, copies=2) if w is not None else None
    if trouble:
        raise GraphFormatError(trouble[1], path, int(used[trouble[0]]) + 1)
    loops = u == v
    if loops.any() and not drop_self_loops:
        i = _first(loops)
        raise GraphFormatError(f"self-loop on vertex {u[i] + one_based} (drop_self_loops=True removes it)",
                               path, int(used[i]) + 1)
    try:
        g = Graph.from_edges(u, v, w, n, drop_self_loops=drop_self_loops, merge_duplicates=merge_duplicates)
    except GraphError as exc:
        if exc.vertex is None or exc.neighbor is None:
            raise GraphFormatError(str(exc), path) from None
        a, b = exc.vertex, exc.neighbor
        hits = np.flatnonzero(((u == a) & (v == b)) | ((u == b) & (v == a)))
        line = int(used[hits[-1]]) + 1 if hits.size else None
        raise GraphFormatError(f"edge ({a + one_based}, {b + one_based}) is listed more than once with "
                               "different weights (merge_duplicates=True sums them)", path, line) from None
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
    first = raw[:raw.find(b"\n")] if b"\n" in raw else raw
    words = first[len(mark):].split()
    n = base = None
    for wd in words:
        if wd.startswith(b"n=") and wd[2:].isdigit():
            n = int(wd[2:])
        elif wd in (b"0-based", b"1-based"):
            base = int(wd[:1])
    return n, base


def _is_float(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


# ---------------------------------------------------------------------------------------
# Matrix Market
# ---------------------------------------------------------------------------------------
def read_mtx(path, *, symmetrize=False, drop_self_loops=False, merge_duplicates=False) -> Graph:
    """Read a Matrix Market file (coordinate; real/integer/complex/pattern; general/symmetric).

    Edge weights are the absolute values of the entries (complex: the modulus); explicit
    zeros are dropped, pattern entries weigh 1. The diagonal is ignored: a matrix's graph
    has no self-loops (logged at INFO). A square ``general`` matrix must be structurally
    symmetric with equal |values| in mirrored positions unless ``symmetrize=True`` (which
    uses max(|a_ij|, |a_ji|)). A non-square r x c matrix is read as its bipartite graph:
    rows are vertices 0..r-1, columns are vertices r..r+c-1 (a warning says so).
    Repeated coordinates are an error unless ``merge_duplicates=True`` (sums them);
    ``drop_self_loops`` has no effect (the diagonal is always ignored).
    """
    import scipy.io
    header_lines, banner = _mtx_header(path)
    _mtx_check_tokens(path, _read_bytes(path), banner[3], header_lines)
    try:
        M = scipy.io.mmread(path)
    except Exception as exc:  # locate the problem line on this (rare) path
        raise _mtx_diagnose(path, header_lines, exc) from None
    if not sp.issparse(M):
        raise GraphFormatError("dense 'array' Matrix Market files are not graphs; use 'coordinate'", path, 1)
    A = sp.coo_matrix(M)
    data = np.abs(A.data)
    if data.dtype.kind == "f" and data.size and np.array_equal(data, np.round(data)) and data.max() < 2**53:
        data = data.astype(np.int64)
    r, c = A.shape
    i, j = A.row.astype(np.int64), A.col.astype(np.int64)
    nz = data != 0
    i, j, data = i[nz], j[nz], data[nz]
    symmetric = banner[4] != "general"
    _check_sparse_ids(r + c if r != c else r, data.shape[0], path, header_lines)

    def check_values(copies):
        trouble = _weight_trouble(data, copies, what="entry value")
        if trouble:
            k = trouble[0]
            raise GraphFormatError(trouble[1], path, _mtx_find_line(path, i[k] + 1, j[k] + 1, symmetric))

    if r != c:
        check_values(copies=2)
        warnings.warn(f"{path}: {r} x {c} matrix read as a bipartite graph: rows are vertices 0..{r - 1}, "
                      f"columns are vertices {r}..{r + c - 1}", stacklevel=3)
        try:
            return Graph.from_edges(i, j + r, data, n=r + c, merge_duplicates=merge_duplicates)
        except GraphError as exc:
            raise GraphFormatError(f"{exc} (0-based ids; columns shifted by {r})", path) from None
    diag = i == j
    if diag.any():
        log.info("%s: ignoring %d diagonal entries", path, int(diag.sum()))
        i, j, data = i[~diag], j[~diag], data[~diag]
    check_values(copies=1)  # after dropping the diagonal: its values do not matter
    B = sp.csr_matrix((data, (i, j)), shape=(r, r))  # sums repeated coordinates
    if not merge_duplicates:
        if B.nnz != i.shape[0]:  # csr construction summed repeated coordinates
            key = i * r + j
            order = np.argsort(key, kind="stable")
            dup = order[1:][key[order][1:] == key[order][:-1]]
            k = int(dup[0])
            raise GraphFormatError(f"entry ({i[k] + 1}, {j[k] + 1}) appears more than once "
                                   "(merge_duplicates=True sums them)", path,
                                   _mtx_find_line(path, i[k] + 1, j[k] + 1, symmetric, nth=2))
    if symmetrize:
        return Graph.from_scipy(B, symmetrize=True)
    T = B.T.tocsr()
    T.sort_indices()
    B.sort_indices()
    if not (np.array_equal(B.indptr, T.indptr) and np.array_equal(B.indices, T.indices)):
        Bc = B.tocoo()
        keys = Bc.row.astype(np.int64) * r + Bc.col
        mirror = Bc.col.astype(np.int64) * r + Bc.row
        missing = ~np.isin(mirror, keys)
        k0 = _first(missing)
        a, b = int(Bc.row[k0]), int(Bc.col[k0])
        raise GraphFormatError(f"general matrix is not structurally symmetric: entry ({a + 1}, {b + 1}) has "
                               f"no mirror ({b + 1}, {a + 1}) (symmetrize=True adds it)", path,
                               _mtx_find_line(path, a + 1, b + 1, symmetric))
    if not np.array_equal(B.data, T.data):
        k0 = _first(B.data != T.data)
        a = int(np.searchsorted(B.indptr, k0, side="right") - 1)
        b = int(B.indices[k0])
        raise GraphFormatError(f"entries ({a + 1}, {b + 1}) and ({b + 1}, {a + 1}) differ in absolute value "
                               "(symmetrize=True uses the larger)", path,
                               _mtx_find_line(path, a + 1, b + 1, symmetric))
    # checked above: no diagonal, no repeats, symmetric, |values| > 0, rows sorted
    from . import backend
    index_type = np.int32 if r < 2**31 - 1 else np.int64
    return Graph._trusted(B.indptr.astype(np.int64), B.indices.astype(index_type), B.data,
                          np.ones(r, dtype=np.int64), backend.get("cpu"))


def _mtx_header(path):
    """(number of lines before the first entry, banner words); checks the banner."""
    with open(path, "rb") as f:
        first = f.readline()
        if not first:
            raise GraphFormatError("empty file: expected a '%%MatrixMarket matrix coordinate ...' banner", path, 1)
        if first.startswith(UTF8_BOM):
            raise GraphFormatError("the file starts with a UTF-8 byte order mark before '%%MatrixMarket'; "
                                   "remove it (scipy cannot read such files)", path, 1)
        words = first.decode("ascii", "replace").lower().split()
        if len(words) < 5 or words[0] != "%%matrixmarket" or words[1] != "matrix":
            raise GraphFormatError("first line must be '%%MatrixMarket matrix coordinate <field> <symmetry>'",
                                   path, 1)
        if words[2] != "coordinate":
            raise GraphFormatError(f"'{words[2]}' Matrix Market files are not graphs; only 'coordinate' is read",
                                   path, 1)
        if words[3] not in ("real", "integer", "complex", "pattern", "double"):
            raise GraphFormatError(f"unknown field '{words[3]}'", path, 1)
        if words[4] not in ("general", "symmetric", "skew-symmetric", "hermitian"):
            raise GraphFormatError(f"unknown symmetry '{words[4]}'", path, 1)
        count = 1
        for ln in f:
            count += 1
            s = ln.strip()
            if s and not s.startswith(b"%"):
                break
    return count, words


def _mtx_check_tokens(path, raw, field, header_lines):
    """Check the entry lines token by token: scipy's reader takes '2.5' and '2e3' in an
    'integer' file for 2, '2x' for 2.0, and ignores a value in a 'pattern' file."""
    values, per_line, comment, bad = _scan(raw, b"%", max_bad=len(raw) + 1)
    entries = np.arange(per_line.shape[0]) >= header_lines  # the lines after the size line
    if (entries & comment).any():
        raise GraphFormatError("comment among the entries: Matrix Market allows comments only before the "
                               "size line", path, _first(entries & comment) + 1)
    per = {"pattern": 2, "complex": 4}.get(field, 3)
    wrong = entries & (per_line > 0) & (per_line != per)
    if wrong.any():
        k = _first(wrong)
        raise GraphFormatError(f"entry line has {per_line[k]} tokens, expected {per} for field '{field}'",
                               path, k + 1)
    bad = bad[bad[:, 1] >= header_lines]  # non-integer tokens on entry lines
    if bad.shape[0] == 0:
        return
    column = bad[:, 0] - _line_starts(per_line)[bad[:, 1]]
    if (column < 2).any():
        raise _bad_token_error(path, raw, bad[_first(column < 2)],
                               "an integer (row and column indices must be positive integers)")
    if field == "integer":
        raise _bad_token_error(path, raw, bad[0], "an integer (the banner says 'integer')")
    buf = np.frombuffer(raw, dtype=np.uint8)
    k = _first_non_decimal(buf, bad[:, 2], bad[:, 3], 0)
    while k >= 0:  # inf and nan are numbers here; the reader refuses them later, more precisely
        if raw[bad[k, 2]:bad[k, 3]].lstrip(b"+-").lower() not in (b"inf", b"infinity", b"nan"):
            raise _bad_token_error(path, raw, bad[k], "a number")
        k = _first_non_decimal(buf, bad[:, 2], bad[:, 3], k + 1)


def _mtx_find_line(path, row, col, symmetric, nth=1):
    """File line of the ``nth`` entry at (row, col) (1-based; either orientation when the matrix
    is symmetric), or None. A Python loop over the file: for error messages only."""
    want = {(row, col), (col, row)} if symmetric else {(row, col)}
    seen_size = False
    with open(path, "rb") as f:
        for number, text in enumerate(f, start=1):
            toks = text.split()
            if number == 1 or not toks or toks[0].startswith(b"%"):
                continue
            if not seen_size:
                seen_size = True
                continue
            if len(toks) >= 2 and toks[0].isdigit() and toks[1].isdigit() and (int(toks[0]), int(toks[1])) in want:
                nth -= 1
                if nth == 0:
                    return number
    return None


def _mtx_diagnose(path, header_lines, exc):
    """Find the line behind a Matrix Market parse failure (Python loop: error path only)."""
    with open(path, "rb") as f:
        lines = f.read().splitlines()
    size = None
    want = None
    field = lines[0].decode("ascii", "replace").lower().split()[3]
    per = {"pattern": 2, "complex": 4}.get(field, 3)
    count = 0
    for k, ln in enumerate(lines[1:], start=2):
        s = ln.strip()
        if not s or s.startswith(b"%"):
            continue
        toks = s.split()
        if size is None:
            if len(toks) != 3 or not all(t.isdigit() for t in toks):
                return GraphFormatError("size line must be 'rows cols entries'", path, k)
            size = [int(t) for t in toks]
            want = size[2]
            continue
        count += 1
        if len(toks) != per:
            return GraphFormatError(f"entry line has {len(toks)} tokens, expected {per} for field '{field}'", path, k)
        if not (toks[0].isdigit() and toks[1].isdigit()):
            return GraphFormatError("row and column indices must be positive integers", path, k)
        a, b = int(toks[0]), int(toks[1])
        if not (1 <= a <= size[0] and 1 <= b <= size[1]):
            return GraphFormatError(f"entry ({a}, {b}) is outside the {size[0]} x {size[1]} matrix", path, k)
        for t in toks[2:]:
            try:
                float(t)
            except ValueError:
                return GraphFormatError(f"value {t.decode('utf-8', 'replace')!r} is not a number", path, k)
    if size is None:
        return GraphFormatError("missing size line 'rows cols entries'", path, header_lines)
    if count != want:
        return GraphFormatError(f"size line announces {want} entries, found {count}", path, len(lines))
    found = re.match(r"Line (\d+): (.*)", str(exc))  # scipy's own words, when they name a line
    if found:
        return GraphFormatError(f"cannot read Matrix Market file: {found.group(2)}", path, int(found.group(1)))
    return GraphFormatError(f"cannot read Matrix Market file: {exc}", path)


# ---------------------------------------------------------------------------------------
# partition files
# ---------------------------------------------------------------------------------------
def write_partition(parts, path):
    """Write one block id per line (the METIS partition file convention)."""
    p = np.asarray(parts.get() if hasattr(parts, "get") and not isinstance(parts, np.ndarray) else parts)
    if p.ndim != 1 or (p.size and p.dtype.kind not in "iu"):
        raise ValueError("parts must be a 1-d integer array of block ids")
    data = _format_int_lines(p.astype(np.int64), np.ones(p.shape[0], dtype=np.int64))
    with open(path, "wb") as f:
        f.write(bytes(data))


def read_partition(path, n=None):
    """Read a partition file (one non-negative block id per line) as an int64 array.

    ``n``, when given, is the number of vertices the file must cover.
    """
    raw = _read_bytes(path)
    values, per_line, comment, bad = _scan(raw, b"%#")
    if bad.shape[0]:
        raise _bad_token_error(path, raw, bad[0], "an integer block id")
    used = ~comment
    many = used & (per_line > 1)
    if many.any():
        raise GraphFormatError("expected one block id per line", path, _first(many) + 1)
    lines = np.flatnonzero(used & (per_line == 1))
    blank = np.flatnonzero(used & (per_line == 0))
    if blank.size and lines.size and blank[0] < lines[-1]:
        raise GraphFormatError("empty line inside a partition file (one block id per line)", path,
                               int(blank[0]) + 1)
    if (values < 0).any():
        i = _first(values < 0)
        raise GraphFormatError(f"block id {values[i]} is negative", path, int(lines[i]) + 1)
    if n is not None and values.shape[0] != n:
        raise GraphFormatError(f"partition has {values.shape[0]} entries, the graph has {n} vertices",
                               path, int(lines[-1]) + 2 if lines.size else 1)
    return values.astype(np.int64)
