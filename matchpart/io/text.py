"""Text shared by the readers and writers: a compiled integer tokeniser and formatter, and the
checks and error messages every format needs (bad tokens, weight totals, absurd ids).

The tokeniser reads a whole buffer in one compiled pass (no Python-level token lists); the
METIS reader has its own fused parser (metis.py), the other formats use this one.
"""
from __future__ import annotations

import io

import numpy as np

from ..errors import GraphFormatError
from ..jit import njit

# The largest integer token accepted: 18 decimal digits always fit in int64.
MAX_DIGITS = 18
# Cuts, block weights and totals are int64 sums of weights: readers refuse weights whose
# total would come near overflow instead of returning a graph with wrapped-around totals.
MAX_WEIGHT_TOTAL = 2**62
# Ids as large as this in a file with few edges are a mistake (n = largest id + 1 would make
# arrays of petabytes): reported as such rather than as an allocation failure.
MAX_SPARSE_IDS = 2**31


@njit(cache=True, internal=True)
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
def first_non_decimal(buf, starts, ends, begin):
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
def _join_lines(buf, starts, ends):
    """The tokens buf[starts[k]:ends[k]] one per line, each without a leading '+'."""
    size = 0
    for k in range(starts.shape[0]):
        size += ends[k] - starts[k] + 1
    out = np.empty(size, dtype=np.uint8)
    pos = 0
    for k in range(starts.shape[0]):
        i = starts[k] + (1 if buf[starts[k]] == 43 else 0)
        for c in range(i, ends[k]):
            out[pos] = buf[c]
            pos += 1
        out[pos] = 10
        pos += 1
    return out[:pos]


@njit(cache=True)
def format_int_lines(values, per_line):
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


def scan(raw, comments=b"%", max_bad=1):
    """Run the tokeniser: (values, tokens per line, comment flags, bad tokens (k, 4))."""
    buf = np.frombuffer(raw, dtype=np.uint8)
    c1 = comments[0]
    c2 = comments[1] if len(comments) > 1 else comments[0]
    return _tokenize(buf, c1, c2, max_bad)


def bad_token_error(path, raw, bad_row, what="an integer"):
    """The error for a bad token found by the tokeniser (a row of its ``bad`` table)."""
    _, line, start, end = (int(x) for x in bad_row)
    return token_error(path, line + 1, raw[start:end], what)


def token_error(path, line, token, what="an integer"):
    """The error for ``token`` (bytes) on file line ``line`` (1-based), which is not ``what``."""
    text = token.decode("utf-8", "replace")
    if len(text) > 40:
        text = text[:40] + "..."
    digits = text.lstrip("+-")
    if digits.isdigit() and len(digits) > MAX_DIGITS:
        return GraphFormatError(f"number {text!r} is too large (at most {MAX_DIGITS} digits)", path, line)
    return GraphFormatError(f"token {text!r} is not {what}", path, line)


def real_values(path, raw, bad):
    """float64 values of the tokeniser's non-integer tokens (its ``bad`` rows), as Python's
    float() reads them; the first token that is not a number raises.

    The decimal tokens are parsed by scipy's compiled Matrix Market reader, given them as a
    one-column 'array' file: it is the correctly rounded float parser at hand, and about
    thirty times faster than float() on each token. It would read some non-numbers (like
    '1.5.5') too, hence the syntax check first; inf, nan and the like go to float()."""
    import scipy.io
    buf = np.frombuffer(raw, dtype=np.uint8)
    starts, ends = bad[:, 2].copy(), bad[:, 3].copy()
    values = np.empty(starts.shape[0], dtype=np.float64)
    decimal = np.ones(starts.shape[0], dtype=bool)
    k = first_non_decimal(buf, starts, ends, 0)
    while k >= 0:
        try:
            values[k] = float(raw[starts[k]:ends[k]])
        except ValueError:
            raise bad_token_error(path, raw, bad[k], "a number") from None
        decimal[k] = False
        k = first_non_decimal(buf, starts, ends, k + 1)
    if decimal.any():
        body = bytes(_join_lines(buf, starts[decimal], ends[decimal]))
        header = b"%%%%MatrixMarket matrix array real general\n%d 1\n" % int(decimal.sum())
        values[decimal] = scipy.io.mmread(io.BytesIO(header + body))[:, 0]
    return values


def line_starts(per_line):
    """Index of each line's first token in the flat token array."""
    starts = np.zeros(per_line.shape[0] + 1, dtype=np.int64)
    np.cumsum(per_line, out=starts[1:])
    return starts


def first(mask):
    return int(np.flatnonzero(mask)[0])


def weight_trouble(weights, copies=1, what="edge weight"):
    """(index, reason) of the first weight that is not finite or that takes the running total
    past what the int64 (or float64) sums of the pipeline can hold; None when all is well.
    ``copies``: how often the graph stores each weight (2 for edges listed in one direction)."""
    if weights.size == 0:
        return None
    if weights.dtype.kind == "f":
        bad = ~np.isfinite(weights)
        if bad.any():
            i = first(bad)
            return i, f"{what} {weights[i]} is not a finite number"
        with np.errstate(over="ignore"):  # overflow is what is being looked for
            if np.isfinite(weights.sum() * copies):
                return None
            # the line where the running total overflows, else where the stored copies' does
            total = np.cumsum(weights)
            over = ~np.isfinite(total) if not np.isfinite(total[-1]) else ~np.isfinite(total * copies)
            return first(over), "the weights add up to infinity (float64 overflow)"
    limit = MAX_WEIGHT_TOTAL // copies
    if int(weights.max()) * weights.shape[0] < limit:  # no sum needed
        return None
    over = np.cumsum(weights, dtype=np.float64) >= limit
    if not over.any():
        return None
    return first(over), ("weights too large: their running total passes 2^62 at this line, and cuts "
                          "and totals are 64-bit integers")


def check_sparse_ids(n, entries, path, line):
    """Refuse an n that would allocate absurd arrays for a handful of edges."""
    if n > MAX_SPARSE_IDS and n > 16 * entries:
        raise GraphFormatError(f"n={n} vertices with only {entries} edge entr{'y' if entries == 1 else 'ies'}: "
                               "vertex ids must be 0..n-1 (or 1..n), not arbitrary labels", path, line,
                               kind="size")


def pairs_bytes(u, v, w):
    """'u v [w]' lines; integers through the compiled formatter, floats with repr precision."""
    if w is None or w.dtype.kind in "iu":
        cols = [u, v] if w is None else [u, v, w.astype(np.int64)]
        flat = np.stack(cols, axis=1).reshape(-1)
        return bytes(format_int_lines(flat, np.full(u.shape[0], len(cols), dtype=np.int64)))
    ints = format_int_lines(np.stack([u, v], axis=1).reshape(-1), np.full(u.shape[0], 2, dtype=np.int64))
    left = bytes(ints).split(b"\n")[:-1]
    weights = map(repr, w.tolist())  # shortest text that reads back to the same float
    return ("\n".join(a.decode() + " " + b for a, b in zip(left, weights)) + "\n").encode() \
        if u.shape[0] else b""


def integral_as_int(w):
    """Weights as int64 when they are all whole numbers that float64 holds exactly, else unchanged
    (the Graph convention: integer weights unless some weight has a fraction)."""
    if w.dtype.kind == "f" and w.size and np.array_equal(w, np.round(w)) and np.abs(w).max() < 2**53:
        return w.astype(np.int64)
    return w
