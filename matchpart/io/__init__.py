"""Graph input and output: METIS, Matrix Market and edge list files, partition files, and
``as_graph`` (anything a user passes -> Graph).

One module per format (metis, mtx, edgelist, partfile); this module picks the format (by
``fmt``, by extension, else by sniffing the text) and reads the file once, decompressing
gzip/bz2/xz transparently. Every problem in a file raises ``GraphFormatError`` naming the
file, the line and what is wrong, with a ``kind`` (see ``matchpart.errors``).
"""
from __future__ import annotations

import os

import numpy as np

from ..errors import GraphFormatError
from ..graph import Graph
from .convert import as_graph
from .edgelist import EDGELIST_MARK, edgelist_bytes, parse_edgelist, read_edgelist
from .metis import metis_bytes, parse_metis, read_metis
from .mtx import mtx_bytes, parse_mtx, read_mtx
from .partfile import read_partition, write_partition
from .source import COMPRESSED_SUFFIXES, UTF8_BOM, plain_suffix, read_bytes, write_bytes

__all__ = ["load_graph", "save_graph", "output_format", "detect_format", "as_graph", "read_metis", "read_mtx",
           "read_edgelist", "read_partition", "write_partition", "EXTENSIONS", "FORMATS", "EDGELIST_MARK"]

# File extensions -> format name (after any compression suffix: g.graph.gz is METIS).
# Anything else is sniffed from the text.
EXTENSIONS = {
    ".graph": "metis", ".metis": "metis", ".chaco": "metis",
    ".mtx": "mtx", ".mm": "mtx",
    ".edges": "edgelist", ".txt": "edgelist", ".el": "edgelist", ".edgelist": "edgelist",
}
FORMATS = ("metis", "mtx", "edgelist")
_ALIASES = {"graph": "metis", "mm": "mtx", "matrixmarket": "mtx", "edges": "edgelist", "el": "edgelist",
            "txt": "edgelist"}


def load_graph(path_or_spec, *, fmt=None, symmetrize=False, drop_self_loops=False,
               merge_duplicates=False, device="cpu", seed=0) -> Graph:
    """Load a graph file, or build a graph from a generator spec.

    ``path_or_spec``: a path to a METIS (``.graph``/``.metis``), Matrix Market (``.mtx``)
    or edge list (``.edges``/``.txt``/``.el``) file, possibly gzip/bz2/xz compressed
    (``g.graph.gz``; other extensions are sniffed), or, when it is not an existing file, a
    generator spec such as ``"delaunay:100000"`` or ``"grid:10x20"`` (see
    ``matchpart.generators.from_spec``; ``seed`` applies to specs).

    Repairs, all off by default so that bad input is reported rather than changed:
    ``symmetrize`` adds missing reverse edges (weight max(w(u,v), w(v,u))),
    ``drop_self_loops`` removes self-loops, ``merge_duplicates`` sums repeated edges.
    ``device`` is where the returned graph lives ("cpu", "gpu", "auto").
    """
    p = os.fspath(path_or_spec)
    if not os.path.exists(p):
        if isinstance(path_or_spec, str) and ":" in p and not os.path.dirname(p.split(":")[0]):
            from ..generators import from_spec
            return from_spec(p, seed=seed).to(device)
        raise FileNotFoundError(f"no such graph file: {p!r} (nor a generator spec like 'delaunay:1000')")
    if os.path.isdir(p):
        raise GraphFormatError("is a directory, not a graph file", p, kind="invalid")
    if not os.path.isfile(p):
        # a pipe could be read once only, and a device may never end
        raise GraphFormatError("is not a regular file (a pipe or a device?); save the graph to a file first", p,
                               kind="invalid")
    raw = read_bytes(p, keep_bom=True)  # the Matrix Market reader reports a BOM; the others skip it
    text = raw[len(UTF8_BOM):] if raw.startswith(UTF8_BOM) else raw
    kind = detect_format(p, fmt, text)
    if kind == "metis":
        g = parse_metis(text, p, symmetrize=symmetrize, drop_self_loops=drop_self_loops,
                        merge_duplicates=merge_duplicates)
    elif kind == "mtx":
        g = parse_mtx(raw, p, symmetrize=symmetrize, merge_duplicates=merge_duplicates)
    else:
        g = parse_edgelist(text, p, drop_self_loops=drop_self_loops, merge_duplicates=merge_duplicates)
    return g.to(device)


def save_graph(graph, path, fmt=None):
    """Write ``graph`` to ``path`` as METIS, Matrix Market or an edge list (by extension or ``fmt``);
    a ``.gz``, ``.bz2`` or ``.xz`` suffix compresses the file.

    METIS: fmt 0/1/10/11 depending on whether edge and vertex weights are all 1
    (weights must be integers). Matrix Market: ``coordinate integer|real symmetric``
    (lower triangle, 1-based) or ``pattern`` when all edge weights are 1; vertex weights
    are not stored. Edge list: one ``u v [w]`` line per undirected edge (u < v, 0-based),
    weights only when some weight is not 1; vertex weights are not stored.
    """
    g = as_graph(graph)
    p = os.fspath(path)
    kind = output_format(p, fmt)
    h = g.backend.to_host
    indptr, indices, ewgt, vwgt = h(g.indptr), h(g.indices).astype(np.int64), h(g.ewgt), h(g.vwgt)
    if kind == "metis":
        data = metis_bytes(g.n, g.m, indptr, indices, ewgt, vwgt)
    else:
        rows = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(indptr))
        # each edge once: the lower triangle for Matrix Market's symmetric convention, u < v in edge lists
        keep = rows > indices if kind == "mtx" else rows < indices
        u, v, w = rows[keep], indices[keep], ewgt[keep]
        weighted = bool((w != 1).any())
        if kind == "mtx":
            data = mtx_bytes(g.n, u, v, w, weighted)
        else:
            data = edgelist_bytes(g.n, g.m, u, v, w, weighted)
    write_bytes(p, data)


def output_format(path, fmt=None):
    """The format ``save_graph`` writes ``path`` in: ``fmt`` when given, else by extension."""
    if fmt is not None:
        return _named_format(fmt)
    ext = plain_suffix(path)
    if ext not in EXTENSIONS:
        raise ValueError(f"cannot tell the format of {os.fspath(path)!r} from its extension; pass fmt= one of "
                         f"{', '.join(FORMATS)} or use one of {', '.join(sorted(EXTENSIONS))} (optionally followed "
                         f"by {', '.join(sorted(COMPRESSED_SUFFIXES))})")
    return EXTENSIONS[ext]


def detect_format(path, fmt=None, text=None):
    """The format to read ``path`` as: ``fmt`` when given, else by extension (a compression
    suffix set aside), else sniffed from ``text`` (the file's decompressed bytes; read when None)."""
    if fmt is not None:
        return _named_format(fmt)
    ext = plain_suffix(path)
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    return _sniff(read_bytes(path) if text is None else text)


def _named_format(fmt):
    name = _ALIASES.get(str(fmt).lower(), str(fmt).lower())
    if name not in FORMATS:
        raise ValueError(f"unknown graph format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return name


def _sniff(raw):
    """Matrix Market has a banner; '#' comments mean an edge list; a METIS file has a header
    "n m [fmt [ncon]]" followed by exactly n vertex lines; anything else is an edge list."""
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
