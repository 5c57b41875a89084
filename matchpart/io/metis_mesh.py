"""METIS mesh files (mpmetis's input): a header ``ne [ncon]``, then one line per element with
its ncon weights (when ncon > 0) and its 1-based node ids; lines starting with % are comments."""
from __future__ import annotations

import numpy as np

from ..errors import GraphFormatError
from .source import read_bytes


def read_mesh(path):
    """(eptr, eind, weights) of a METIS mesh file: 0-based node ids, element offsets, and the
    element weights (shape (ne, ncon)) or None when the header has no ncon."""
    text = read_bytes(path).decode("ascii", errors="replace")
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if not ln.lstrip().startswith("%")]
    while lines and not lines[-1][1].strip():
        lines.pop()
    if not lines:
        raise GraphFormatError("the file is empty: a METIS mesh starts with a line 'ne [ncon]'", path, kind="parse")
    head_line, head = lines[0]
    tokens = head.split()
    if not 1 <= len(tokens) <= 2 or not all(t.isdigit() for t in tokens):
        raise GraphFormatError(f"the header must be 'ne [ncon]' (non-negative integers), got {head.strip()!r}",
                               path, head_line, kind="parse")
    ne = int(tokens[0])
    ncon = int(tokens[1]) if len(tokens) == 2 else 0
    body = lines[1:]
    if len(body) != ne:
        raise GraphFormatError(f"the header says {ne} elements, but the file has {len(body)} element lines",
                               path, head_line, kind="size")
    counts = np.empty(ne, dtype=np.int64)
    values = []
    for e, (line_no, ln) in enumerate(body):
        parts = ln.split()
        try:
            row = np.array(parts, dtype=np.int64)
        except ValueError:
            bad = next(t for t in parts if not t.lstrip("-").isdigit())
            raise GraphFormatError(f"token {bad!r} is not an integer", path, line_no, kind="parse") from None
        if row.shape[0] <= ncon:
            raise GraphFormatError(f"element {e + 1} lists no nodes after its {ncon} weight(s)", path, line_no,
                                   kind="size")
        if (row[ncon:] < 1).any():
            raise GraphFormatError(f"element {e + 1} has node id {int(row[ncon:].min())}: ids start at 1", path,
                                   line_no, kind="out_of_range")
        if ncon and (row[:ncon] < 0).any():
            raise GraphFormatError(f"element {e + 1} has a negative weight", path, line_no, kind="bad_weight")
        counts[e] = row.shape[0]
        values.append(row)
    flat = np.concatenate(values) if values else np.zeros(0, dtype=np.int64)
    starts = np.zeros(ne + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    weight_pos = (starts[:-1, None] + np.arange(ncon)).reshape(-1)
    weights = flat[weight_pos].reshape(ne, ncon) if ncon else None
    keep = np.ones(flat.shape[0], dtype=bool)
    keep[weight_pos] = False
    eind = flat[keep] - 1
    eptr = np.zeros(ne + 1, dtype=np.int64)
    np.cumsum(counts - ncon, out=eptr[1:])
    return eptr, eind, weights


def write_mesh(path, eptr, eind, weights=None):
    """Write a METIS mesh file (1-based node ids; ``weights``: (ne, ncon) or (ne,) integers)."""
    ne = eptr.shape[0] - 1
    w = None if weights is None else np.asarray(weights).reshape(ne, -1)
    with open(path, "w") as f:
        f.write(f"{ne}\n" if w is None else f"{ne} {w.shape[1]}\n")
        for e in range(ne):
            nodes = " ".join(map(str, (eind[eptr[e]:eptr[e + 1]] + 1).tolist()))
            f.write(nodes + "\n" if w is None else " ".join(map(str, w[e].tolist())) + " " + nodes + "\n")
