"""Building a DistGraph: a METIS file read in parallel (each rank parses a byte range), the
generator specs prgg, prmat and grid generated in parallel (generate.py), any other input
(formats, compressed files, other specs, Graph objects) read on rank 0 and scattered."""
from __future__ import annotations

import os

import numpy as np
from ..jit import njit

from .. import csrcheck
from ..errors import GraphError, GraphFormatError
from ..io import metis
from ..io.source import COMPRESSED_SUFFIXES, plain_suffix
from ..io.text import token_error
from . import renumber as renumber_mod
from .comm import as_comm
from .dgraph import DistGraph, scatter_graph
from .generate import generate, parallel_spec

# Bytes read at a time while looking for the header or a line end (headers and lines are short).
PROBE_BYTES = 1 << 16
# Magic bytes of compressed files (read on rank 0: a compressed stream has no byte ranges).
COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ")


def load(source, comm=None, renumber=False):
    """A DistGraph from a path, a generator spec, a matchpart Graph (on rank 0) or a DistGraph.
    ``renumber``: a graph whose ids have no locality is numbered breadth-first, on one rank
    too (random ids made delaunay 2^20's partition 1.36 x slower there), by rank 0 before it
    scatters the graph (dgraph.scatter_graph) or, read in parallel from a METIS file, by the
    ranks together (renumber.py); a power-law graph is numbered by degree on any number of
    ranks (renumber.degree_renumbered, as the single process relabels it; R-MAT 2^18 scattered
    from rank 0, k = 32, P = 1: partition 5.0-5.4 -> 4.0 s, the single process's 3.9-4.1 s);
    its ``input_ids`` then map back."""
    c = as_comm(comm)
    if isinstance(source, DistGraph):
        return source
    if parallel_spec(source):   # a pure test of the string: every rank takes the same branch
        return generate(source, c)
    parallel = None
    with c.collectively():
        parallel = isinstance(source, (str, os.PathLike)) and _is_plain_metis(source)
    if parallel:
        dg = read_metis(source, c)
        if renumber and renumber_mod.scattered(dg):
            return renumber_mod.bfs_renumbered(dg)
        if renumber and renumber_mod.skewed(dg):
            return renumber_mod.degree_renumbered(dg)
        return dg
    graph = None
    with c.collectively():
        if c.rank == 0:
            from ..io import as_graph
            graph = as_graph(source)
    dg = scatter_graph(graph, c, renumber)
    if renumber and dg.input_ids is None and renumber_mod.skewed(dg):
        return renumber_mod.degree_renumbered(dg)
    return dg


def _is_plain_metis(path):
    path = os.fspath(path)
    if not os.path.isfile(path) or os.path.splitext(path)[1].lower() in COMPRESSED_SUFFIXES:
        return False
    if plain_suffix(path) not in (".graph", ".metis"):
        return False
    with open(path, "rb") as f:
        return not f.read(6).startswith(COMPRESSED_MAGIC)


def _header(path):
    """metis._header on a growing prefix of the file (the header sits after a few comments)."""
    size = os.path.getsize(path)
    probe = PROBE_BYTES
    with open(path, "rb") as f:
        while True:
            f.seek(0)
            raw = f.read(probe)
            end = raw.rfind(b"\n")
            try:
                n, m, fmt, ncon, line, after = metis._header(raw if len(raw) == size else raw[:end + 1], path)
            except GraphFormatError:
                if len(raw) == size:
                    raise
                probe *= 4
                continue
            if ncon > 1:
                raise GraphFormatError(f"ncon={ncon}: several weights per vertex are not supported by the "
                                       "distributed pipeline (use matchpart.partition)", path, line,
                                       kind="unsupported")
            return n, m, fmt, line, after


def _aligned_start(f, pos, after, size):
    """First byte of the first line starting at or after ``pos`` (vertex lines start at ``after``)."""
    if pos <= after:
        return after
    f.seek(pos - 1)
    while True:
        chunk = f.read(PROBE_BYTES)
        if not chunk:
            return size
        i = chunk.find(b"\n")
        if i >= 0:
            return pos + i
        pos += len(chunk)


def read_metis(path, comm=None):
    """Read a METIS file in parallel: rank r parses the lines in its share of the bytes.

    Lines are assigned to ranks by byte ranges aligned to line starts; vertex ids come from
    a prefix count of each range's vertex lines (comment lines, which the parser skips, do
    not count) and error lines from a prefix count of newlines. Every check of the
    single-process reader is made: tokens, counts, ids, self-loops, repeats, weights, 2m,
    and symmetry across ranks (each cross-rank entry is confirmed by its mirror's owner).
    """
    c = as_comm(comm)
    path = os.fspath(path)
    header = None
    with c.collectively():
        if c.rank == 0:
            header = _header(path)
    n, m, fmt, hline, after = c.bcast(header)
    has_vsize, has_vwgt, has_ewgt = (f"{fmt:03d}"[d] == "1" for d in range(3))
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        start = _aligned_start(f, after + (size - after) * c.rank // c.size, after, size)
    starts = c.allgather(start) + [size]
    stop = starts[c.rank + 1]
    with open(path, "rb") as f:
        f.seek(start)
        raw = f.read(stop - start)
    buf = np.frombuffer(raw, dtype=np.uint8)
    line0 = hline + 1 + c.exscan(int(np.count_nonzero(buf == 10)))
    result = None
    with c.collectively():
        result = _parse_range(buf, raw, path, line0, n, has_vsize, has_vwgt, has_ewgt)
    indptr, cols, ewgt, vwgt, vline, in_order, info, outcome = result
    count = indptr.shape[0] - 1
    first = c.exscan(count)
    total = c.allreduce(count)
    with c.collectively():
        _check_token_count(outcome, info, buf, line0, first, n, path)
        info[metis._P_VERTEX] += first  # the kernel numbered this range's vertices from 0
        metis._check_entry(info, path, n)
        indptr, cols, ewgt, vwgt, vline = _trim_trailing_blank_lines(first, n, total, indptr, cols, ewgt, vwgt,
                                                                     vline, path, hline)
        _check_rows(first, indptr, cols, ewgt, vline, in_order, has_ewgt, path)
    nnz = c.allreduce(int(cols.shape[0]))
    with c.collectively():
        if nnz != 2 * m:
            raise GraphFormatError(f"header says m={m} edges, so {2 * m} adjacency entries are expected, "
                                   f"but the vertex lines hold {nnz}", path, hline, kind="size")
    vtxdist = np.asarray(c.allgather(min(first + indptr.shape[0] - 1, n)), dtype=np.int64)
    vtxdist = np.concatenate([[0], vtxdist])
    if not has_vwgt:
        vwgt = np.ones(indptr.shape[0] - 1, dtype=np.int64)
    if not has_ewgt:
        ewgt = np.ones(cols.shape[0], dtype=np.int64)
    _check_symmetry(c, vtxdist, indptr, cols, ewgt, vline, path, has_ewgt)
    return DistGraph(c, vtxdist, indptr, cols, ewgt, vwgt)


def _parse_range(buf, raw, path, line0, n, has_vsize, has_vwgt, has_ewgt):
    """Parse this rank's lines with the single-process reader's compiled kernel.

    The kernel numbers vertices from 0 within the range, so self-loops (which need the
    global id) are checked afterwards, and it is asked to allow them here.
    """
    lead = int(has_vsize) + int(has_vwgt)
    lines = int(np.count_nonzero(buf == 10)) + 1
    capacity = buf.shape[0] // 2 + 1
    indptr = np.zeros(lines + 1, dtype=np.int64)
    cols = np.empty(capacity, dtype=np.int64)
    ewgt = np.empty(capacity if has_ewgt else 0, dtype=np.int64)
    vwgt = np.empty(lines if has_vwgt else 0, dtype=np.int64)
    vline = np.zeros(lines, dtype=np.int64)
    info = np.zeros(metis._INFO_SIZE, dtype=np.int64)
    outcome, nv, nnz, in_order = metis._parse_vertex_lines(buf, 0, line0, n, lead, has_vwgt, has_ewgt, True,
                                                           True, indptr, cols, ewgt, vwgt, vline, info, 1)
    if outcome == metis._BAD_TOKEN:
        raise token_error(path, int(info[metis._LINE]), raw[info[metis._START]:info[metis._END]])
    if outcome == metis._EXTRA_LINE:
        raise GraphFormatError(f"more vertex lines than n={n} from the header", path, int(info[metis._LINE]),
                               kind="size")
    return (indptr[:nv + 1], cols[:nnz], ewgt[:nnz], vwgt[:nv], vline[:nv], in_order, info, outcome)


def _check_token_count(outcome, info, buf, line0, first, n, path):
    """A vertex line with the wrong token count is an error, unless it lies past the n-th
    vertex and everything after it is blank or comments (a file's trailing blank lines,
    which this rank could not tell from empty vertex lines before the prefix count)."""
    if outcome != metis._TOKEN_COUNT:
        return True
    line = int(info[metis._LINE])
    if first + int(info[metis._VERTEX]) >= n:
        ends = np.flatnonzero(buf == 10)
        start = int(ends[line - line0 - 1]) + 1 if line > line0 else 0
        rest = bytes(buf[start:]).split(b"\n")
        if all(not ln.strip() or ln.strip().startswith(b"%") for ln in rest):
            return False
    raise GraphFormatError(f"vertex {first + int(info[metis._VERTEX]) + 1} has {info[metis._TOKENS]} tokens, "
                           "which does not fit the header's fmt", path, line)


def _trim_trailing_blank_lines(first, n, total, indptr, cols, ewgt, vwgt, vline, path, hline):
    """Vertex lines past the n-th must be blank (the whole-file reader's rule); drop them."""
    if total < n:
        raise GraphFormatError(f"file ends after {total} vertex lines, but the header says n={n}", path,
                               kind="size")
    keep = max(0, min(indptr.shape[0] - 1, n - first))
    if indptr[-1] != indptr[keep]:
        extra = keep + int(np.flatnonzero(np.diff(indptr)[keep:])[0])
        raise GraphFormatError(f"more vertex lines than n={n} from the header", path, int(vline[extra]),
                               kind="size")
    e = int(indptr[keep])
    return indptr[:keep + 1], cols[:e], ewgt[:e], vwgt[:keep], vline[:keep]


def _check_rows(first, indptr, cols, ewgt, vline, in_order, has_ewgt, path):
    """Self-loops (global ids) and repeated neighbours (after sorting unsorted rows)."""
    rows = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64), np.diff(indptr))
    loops = np.flatnonzero(cols == rows + first)
    if loops.shape[0]:
        v = int(rows[loops[0]])
        raise GraphFormatError(f"vertex {first + v + 1} lists itself as a neighbour (self-loop; "
                               "drop_self_loops=True removes it)", path, int(vline[v]), kind="self_loop")
    if not in_order:
        csrcheck.sort_rows(indptr, cols, ewgt if has_ewgt else ewgt[:0])
        k = csrcheck.first_duplicate(indptr, cols)
        if k >= 0:
            u = int(np.searchsorted(indptr, k, side="right") - 1)
            raise GraphFormatError(f"vertex {first + u + 1} lists neighbour {int(cols[k]) + 1} more than once "
                                   "(merge_duplicates=True sums them)", path, int(vline[u]), kind="duplicate")


def _check_symmetry(c, vtxdist, indptr, cols, ewgt, vline, path, has_ewgt):
    """Every entry (u, v, w) must have its mirror (v, u, w): each entry is sent to v's owner,
    which looks it up in its row v (O(entries) messages, once per read). ``vline``: the
    file line of each own vertex, or None for arrays (part_kway's input)."""
    first = int(vtxdist[c.rank])
    rows = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64), np.diff(indptr)) + first
    dest = np.searchsorted(vtxdist, cols, side="right") - 1
    line_of = vline[rows - first] if vline is not None else np.zeros(rows.shape[0], dtype=np.int64)
    _, v, u, w, line = c.exchange_packed(dest, cols, rows, ewgt, line_of)
    with c.collectively():
        pos = _find_entries(indptr, cols, first, v, u)
        bad = np.flatnonzero(pos < 0)
        if bad.shape[0]:
            i = bad[np.argmin(line[bad])]
            a, b = int(u[i]) + 1, int(v[i]) + 1
            at = f" (line {line[i]})" if vline is not None else ""
            raise _graph_error(f"vertex {b} does not list neighbour {a}, but vertex {a}{at} lists {b}: the "
                               "adjacency must be symmetric (symmetrize=True adds the missing entries)", path,
                               None if vline is None else int(vline[v[i] - first]), "asymmetric", b - 1, a - 1)
        if has_ewgt:
            bad = np.flatnonzero(ewgt[pos] != w)
            if bad.shape[0]:
                i = bad[0]
                a, b = int(u[i]) + 1, int(v[i]) + 1
                at = f" (line {vline[v[i] - first]})" if vline is not None else ""
                raise _graph_error(f"edge ({a}, {b}) has weight {w[i]} but edge ({b}, {a}){at} has weight "
                                   f"{ewgt[pos[i]]}: the two directions have different weights", path,
                                   None if vline is None else int(line[i]), "weight_mismatch", a - 1, b - 1)


def _graph_error(message, path, line, kind, vertex, neighbor):
    """A GraphFormatError naming the file and line; for arrays (no path) a GraphError."""
    if path is None:
        return GraphError(message, vertex, neighbor, kind=kind)
    return GraphFormatError(message, path, line, kind=kind, vertex=vertex, neighbor=neighbor)


@njit(cache=True)
def _find_entries(indptr, cols, first, v, u):
    # position of entry (v, u) in the own rows (sorted), -1 when absent: a binary search in
    # one short row per entry (a search over all own entries cost a third of the read)
    out = np.empty(v.shape[0], dtype=np.int64)
    for i in range(v.shape[0]):
        lo, hi = indptr[v[i] - first], indptr[v[i] - first + 1]
        while lo < hi:
            mid = (lo + hi) // 2
            if cols[mid] < u[i]:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo if lo < indptr[v[i] - first + 1] and cols[lo] == u[i] else -1
    return out
