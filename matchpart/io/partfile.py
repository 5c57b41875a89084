"""Partition files: one block id per line (the METIS convention)."""
from __future__ import annotations

import numpy as np

from ..errors import GraphFormatError
from .source import read_bytes, write_bytes
from .text import bad_token_error, first, format_int_lines, scan


def write_partition(parts, path):
    """Write one block id per line (the METIS partition file convention)."""
    write_bytes(path, partition_bytes(parts))


def partition_bytes(parts):
    """The text of a partition file: one block id per line."""
    p = np.asarray(parts.get() if hasattr(parts, "get") and not isinstance(parts, np.ndarray) else parts)
    if p.ndim != 1 or (p.size and p.dtype.kind not in "iu"):
        raise ValueError("parts must be a 1-d integer array of block ids")
    p = p.astype(np.int64)
    if p.size and p.min() < 0:
        return bytes(format_int_lines(p, np.ones(p.shape[0], dtype=np.int64)))
    return _block_id_lines(p)


def _block_id_lines(p):
    """One non-negative id per line, in whole-array numpy steps (one per digit: block ids have
    a few): no compiled kernel, so the first run after installing does not compile one (half
    a second) just to write its partition."""
    if p.size == 0:
        return b""
    digits = np.ones(p.shape[0], dtype=np.int64)
    rest = p // 10
    while rest.any():
        digits += rest > 0
        rest //= 10
    ends = np.cumsum(digits + 1)                       # one past each line's newline
    buf = np.full(int(ends[-1]), ord("\n"), dtype=np.uint8)
    last = ends - 2                                    # each line's last digit
    value = p.copy()
    for j in range(int(digits.max())):
        more = digits > j
        buf[last[more] - j] = ord("0") + value[more] % 10
        value //= 10
    return buf.tobytes()


def read_partition(path, n=None):
    """Read a partition file (one non-negative block id per line) as an int64 array.

    ``n``, when given, is the number of vertices the file must cover.
    """
    raw = read_bytes(path)
    values, per_line, comment, bad = scan(raw, b"%#")
    if bad.shape[0]:
        raise bad_token_error(path, raw, bad[0], "an integer block id")
    used = ~comment
    many = used & (per_line > 1)
    if many.any():
        raise GraphFormatError("expected one block id per line", path, first(many) + 1)
    lines = np.flatnonzero(used & (per_line == 1))
    blank = np.flatnonzero(used & (per_line == 0))
    if blank.size and lines.size and blank[0] < lines[-1]:
        raise GraphFormatError("empty line inside a partition file (one block id per line)", path,
                               int(blank[0]) + 1)
    if (values < 0).any():
        i = first(values < 0)
        raise GraphFormatError(f"block id {values[i]} is negative", path, int(lines[i]) + 1, kind="invalid")
    if n is not None and values.shape[0] != n:
        raise GraphFormatError(f"partition has {values.shape[0]} entries, the graph has {n} vertices",
                               path, int(lines[-1]) + 2 if lines.size else 1, kind="size")
    return values.astype(np.int64)
