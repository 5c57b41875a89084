"""Matrix Market files (coordinate; pattern, integer, real, complex; any symmetry).

The compiled tokeniser checks every entry line first (it catches what scipy would accept
silently); pattern and integer files are then built from its integers directly, real and
complex ones through ``scipy.io.mmread`` (compiled, and it parses floats exactly). Errors
name the file line.
"""
from __future__ import annotations

import io
import logging
import re
import warnings

import numpy as np

from .. import backend, csrcheck
from ..errors import GraphError, GraphFormatError
from ..graph import Graph
from .source import UTF8_BOM, read_bytes
from .text import (bad_token_error, check_sparse_ids, first, first_non_decimal, integral_as_int, line_starts,
                   pairs_bytes, scan, weight_trouble)

log = logging.getLogger("matchpart")


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
    return parse_mtx(read_bytes(path, keep_bom=True), path, symmetrize=symmetrize,
                     merge_duplicates=merge_duplicates)


def parse_mtx(raw, path, *, symmetrize=False, merge_duplicates=False) -> Graph:
    """The graph in ``raw``, the bytes of a Matrix Market file (``path`` names it in errors)."""
    header_lines, banner = _mtx_header(raw, path)
    field, symmetry = banner[3], banner[4]
    values, per_line = _mtx_check_tokens(path, raw, field, header_lines)
    if field in ("pattern", "integer"):  # every token is an integer the tokeniser has read already
        (r, c), i, j, data = _mtx_from_tokens(raw, path, header_lines, field, symmetry, values, per_line)
    else:  # real numbers: scipy's compiled reader
        (r, c), i, j, data = _mtx_from_scipy(raw, path, header_lines)
    data = integral_as_int(np.abs(data))
    nz = data != 0
    i, j, data = i[nz], j[nz], data[nz]
    symmetric = symmetry != "general"
    check_sparse_ids(r + c if r != c else r, data.shape[0], path, header_lines)

    def check_values(copies):
        trouble = weight_trouble(data, copies, what="entry value")
        if trouble:
            k = trouble[0]
            raise GraphFormatError(trouble[1], path, kind="bad_weight",
                                   line=_mtx_find_line(raw, i[k] + 1, j[k] + 1, symmetric))

    if r != c:
        check_values(copies=2)
        warnings.warn(f"{path}: {r} x {c} matrix read as a bipartite graph: rows are vertices 0..{r - 1}, "
                      f"columns are vertices {r}..{r + c - 1}", stacklevel=3)
        try:
            return Graph.from_edges(i, j + r, data, n=r + c, merge_duplicates=merge_duplicates)
        except GraphError as exc:
            raise GraphFormatError(f"{exc} (0-based ids; columns shifted by {r})", path, kind=exc.kind) from None
    diag = i == j
    if diag.any():
        log.info("%s: ignoring %d diagonal entries", path, int(diag.sum()))
        i, j, data = i[~diag], j[~diag], data[~diag]
    check_values(copies=1)  # after dropping the diagonal: its values do not matter
    import scipy.sparse as sp   # here, not at the top: only Matrix Market input needs it
    B = sp.csr_matrix((data, (i, j)), shape=(r, r))  # sums repeated coordinates
    if not merge_duplicates and B.nnz != i.shape[0]:  # some coordinates were summed
        key = i * r + j
        order = np.argsort(key, kind="stable")
        dup = order[1:][key[order][1:] == key[order][:-1]]
        k = int(dup[0])
        raise GraphFormatError(f"entry ({i[k] + 1}, {j[k] + 1}) appears more than once "
                               "(merge_duplicates=True sums them)", path, kind="duplicate",
                               line=_mtx_find_line(raw, i[k] + 1, j[k] + 1, symmetric, nth=2))
    if symmetrize:
        return Graph.from_scipy(B, symmetrize=True)
    B.sort_indices()
    index_type = np.int32 if r < 2**31 - 1 else np.int64
    indptr, indices = B.indptr.astype(np.int64), B.indices.astype(index_type)
    if not symmetric:  # a symmetric file's entries were mirrored: symmetric by construction
        code, a, b, k, p = csrcheck.first_asymmetry(indptr, indices, B.data)
        if code == csrcheck.ASYMMETRIC:
            raise GraphFormatError(f"general matrix is not structurally symmetric: entry ({a + 1}, {b + 1}) has "
                                   f"no mirror ({b + 1}, {a + 1}) (symmetrize=True adds it)", path,
                                   kind="asymmetric", line=_mtx_find_line(raw, a + 1, b + 1, symmetric))
        if code == csrcheck.WEIGHT_MISMATCH:
            raise GraphFormatError(f"entries ({a + 1}, {b + 1}) and ({b + 1}, {a + 1}) differ in absolute value "
                                   "(symmetrize=True uses the larger)", path, kind="weight_mismatch",
                                   line=_mtx_find_line(raw, a + 1, b + 1, symmetric))
    # checked above: no diagonal, no repeats, symmetric, |values| > 0, rows sorted
    return Graph._trusted(indptr, indices, B.data, np.ones(r, dtype=np.int64), backend.get("cpu"))


def _mtx_from_scipy(raw, path, header_lines):
    """((rows, cols), i, j, values) of the entries as scipy reads them (symmetric files mirrored)."""
    import scipy.io
    try:
        M = scipy.io.mmread(io.BytesIO(raw))
    except Exception as exc:  # locate the problem line on this (rare) path
        raise _mtx_diagnose(raw, path, header_lines, exc) from None
    import scipy.sparse as sp
    A = sp.coo_matrix(M)
    return A.shape, A.row.astype(np.int64), A.col.astype(np.int64), A.data


def _mtx_from_tokens(raw, path, header_lines, field, symmetry, values, per_line):
    """((rows, cols), i, j, values) from the tokeniser's integers (as scipy would give them: 0-based,
    the off-diagonal entries of a symmetric file mirrored). Any inconsistency (size line, an
    index out of bounds, the entry count) is located by the line-by-line diagnosis."""
    if header_lines > per_line.shape[0]:  # no size line
        raise _mtx_diagnose(raw, path, header_lines, ValueError("no size line"))
    starts = line_starts(per_line)
    size = values[starts[header_lines - 1]:starts[header_lines]]
    per = 2 if field == "pattern" else 3
    table = values[starts[header_lines]:]
    if size.shape[0] != 3 or (size < 0).any() or table.shape[0] != per * size[2]:
        raise _mtx_diagnose(raw, path, header_lines, ValueError("inconsistent entries"))
    table = table.reshape(-1, per)
    i, j = table[:, 0] - 1, table[:, 1] - 1
    if ((i < 0) | (i >= size[0]) | (j < 0) | (j >= size[1])).any():
        raise _mtx_diagnose(raw, path, header_lines, ValueError("index out of bounds"))
    data = table[:, 2].copy() if per == 3 else np.ones(i.shape[0], dtype=np.int64)
    if symmetry != "general":
        off = i != j
        i, j, data = np.concatenate([i, j[off]]), np.concatenate([j, i[off]]), np.concatenate([data, data[off]])
    return (int(size[0]), int(size[1])), i, j, data


def _mtx_header(raw, path):
    """(number of lines before the first entry, banner words); checks the banner."""
    if not raw:
        raise GraphFormatError("empty file: expected a '%%MatrixMarket matrix coordinate ...' banner", path, 1)
    if raw.startswith(UTF8_BOM):
        raise GraphFormatError("the file starts with a UTF-8 byte order mark before '%%MatrixMarket'; "
                               "remove it (scipy cannot read such files)", path, 1)
    end = raw.find(b"\n")
    end = len(raw) if end < 0 else end
    words = raw[:end].decode("ascii", "replace").lower().split()
    if len(words) < 5 or words[0] != "%%matrixmarket" or words[1] != "matrix":
        raise GraphFormatError("first line must be '%%MatrixMarket matrix coordinate <field> <symmetry>'", path, 1)
    if words[2] != "coordinate":
        raise GraphFormatError(f"'{words[2]}' Matrix Market files are not graphs; only 'coordinate' is read",
                               path, 1, kind="unsupported")
    if words[3] not in ("real", "integer", "complex", "pattern", "double"):
        raise GraphFormatError(f"unknown field '{words[3]}'", path, 1)
    if words[4] not in ("general", "symmetric", "skew-symmetric", "hermitian"):
        raise GraphFormatError(f"unknown symmetry '{words[4]}'", path, 1)
    count = 1  # lines up to and including the size line (the first non-comment line after the banner)
    while end < len(raw):
        start = end + 1
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        count += 1
        text = raw[start:end].strip()
        if text and not text.startswith(b"%"):
            break
    return count, words


def _mtx_check_tokens(path, raw, field, header_lines):
    """Check the entry lines token by token: scipy's reader takes '2.5' and '2e3' in an
    'integer' file for 2, '2x' for 2.0, and ignores a value in a 'pattern' file. Returns the
    tokeniser's (integer values, tokens per line)."""
    values, per_line, comment, bad = scan(raw, b"%", max_bad=len(raw) + 1)
    entries = np.arange(per_line.shape[0]) >= header_lines  # the lines after the size line
    if (entries & comment).any():
        raise GraphFormatError("comment among the entries: Matrix Market allows comments only before the "
                               "size line", path, first(entries & comment) + 1)
    per = {"pattern": 2, "complex": 4}.get(field, 3)
    wrong = entries & (per_line > 0) & (per_line != per)
    if wrong.any():
        k = first(wrong)
        raise GraphFormatError(f"entry line has {per_line[k]} tokens, expected {per} for field '{field}'",
                               path, k + 1)
    if (bad[:, 1] == header_lines - 1).any():  # the size line
        raise _mtx_diagnose(raw, path, header_lines, ValueError("bad size line"))
    bad = bad[bad[:, 1] >= header_lines]  # non-integer tokens on entry lines
    if bad.shape[0] == 0:
        return values, per_line
    column = bad[:, 0] - line_starts(per_line)[bad[:, 1]]
    if (column < 2).any():
        raise bad_token_error(path, raw, bad[first(column < 2)],
                               "an integer (row and column indices must be positive integers)")
    if field == "integer":
        raise bad_token_error(path, raw, bad[0], "an integer (the banner says 'integer')")
    buf = np.frombuffer(raw, dtype=np.uint8)
    k = first_non_decimal(buf, bad[:, 2], bad[:, 3], 0)
    while k >= 0:  # inf and nan are numbers here; the reader refuses them later, more precisely
        if raw[bad[k, 2]:bad[k, 3]].lstrip(b"+-").lower() not in (b"inf", b"infinity", b"nan"):
            raise bad_token_error(path, raw, bad[k], "a number")
        k = first_non_decimal(buf, bad[:, 2], bad[:, 3], k + 1)
    return values, per_line


def _mtx_find_line(raw, row, col, symmetric, nth=1):
    """File line of the ``nth`` entry at (row, col) (1-based; either orientation when the matrix
    is symmetric), or None. A Python loop over the lines: for error messages only."""
    want = {(row, col), (col, row)} if symmetric else {(row, col)}
    seen_size = False
    for number, text in enumerate(raw.split(b"\n"), start=1):
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


def _mtx_diagnose(raw, path, header_lines, exc):
    """Find the line behind a Matrix Market parse failure (Python loop: error path only)."""
    lines = raw.splitlines()
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
            return GraphFormatError(f"entry ({a}, {b}) is outside the {size[0]} x {size[1]} matrix", path, k,
                                    kind="out_of_range")
        for t in toks[2:]:
            try:
                float(t)
            except ValueError:
                return GraphFormatError(f"value {t.decode('utf-8', 'replace')!r} is not a number", path, k)
    if size is None:
        return GraphFormatError("missing size line 'rows cols entries'", path, header_lines)
    if count != want:
        return GraphFormatError(f"size line announces {want} entries, found {count}", path, len(lines),
                                kind="size")
    found = re.match(r"Line (\d+): (.*)", str(exc))  # scipy's own words, when they name a line
    if found:
        return GraphFormatError(f"cannot read Matrix Market file: {found.group(2)}", path, int(found.group(1)))
    return GraphFormatError(f"cannot read Matrix Market file: {exc}", path)


def mtx_bytes(n, rows, cols, w, weighted):
    """Matrix Market text of a graph's lower triangle (``rows > cols``, 0-based): ``coordinate
    integer|real symmetric``, or ``pattern`` when every edge weight is 1."""
    field = "pattern" if not weighted else ("integer" if w.dtype.kind in "iu" else "real")
    header = f"%%MatrixMarket matrix coordinate {field} symmetric\n{n} {n} {rows.shape[0]}\n"
    return header.encode() + pairs_bytes(rows + 1, cols + 1, w if weighted else None)
