"""Synthetic graph generators (Delaunay, random geometric, grids, Erdős–Rényi, R-MAT, Barabási–Albert) and spec strings.

A spec string names a generator and its sizes, e.g. ``delaunay:65536``, ``grid:10x20``,
``er:1000:8``, ``rmat:16:16``, ``ba:10000:3``, optionally with ``:seed=S``. Generators
use numpy's ``default_rng(seed)``: they make inputs, they are not part of an algorithm,
so they need not match the counter-based RNG of the GPU code.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np

from .generator_models import RGG_RADIUS_FACTOR, RMAT_A, RMAT_B, RMAT_C, _from_pairs  # noqa: F401
from .graph import Graph

RMAT_EDGEFACTOR = 16
# Largest sizes accepted from a spec, so a typo cannot ask for terabytes.
MAX_SPEC_VERTICES = 1 << 31
MAX_RMAT_SCALE = 30
# fullmatch only: plain ASCII digits, so "+5", "1e5", "100.5", "1_000" or non-ASCII digits are
# refused instead of being read as some other number
_UINT = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")  # no sign, inf or nan

SPEC_FORMS = (
    "delaunay:N            Delaunay triangulation of N random points in the unit square",
    "rgg:N                 random geometric graph, radius 0.55*sqrt(ln N / N)",
    "grid:AxB[xC]          2D or 3D grid",
    "er:N:AVGDEG           Erdős–Rényi G(N, p) with p = AVGDEG/(N-1), so 0 <= AVGDEG <= N-1",
    "rmat:SCALE[:EF]       R-MAT with 2^SCALE vertices and EF*2^SCALE edges (default EF 16)",
    "ba:N:M                Barabási–Albert, each new vertex attaches M edges (M < N)",
    "prgg:N                rgg from hashed points, numbered by cell: the same graph for any number of MPI ranks",
    "prmat:SCALE[:EF]      rmat in fixed chunks of counter-based draws: the same graph for any number of MPI ranks",
)


def _check_count(name, value, minimum=1):
    if not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def delaunay(n, seed=0) -> Graph:
    """Delaunay triangulation of ``n`` uniform random points in the unit square (n >= 3)."""
    from scipy.spatial import Delaunay
    n = _check_count("n", n, 3)
    pts = np.random.default_rng(seed).random((n, 2))
    tri = Delaunay(pts).simplices.astype(np.int64)
    # each triangle contributes its three sides; shared sides appear twice and are merged
    u = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]])
    v = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]])
    return _from_pairs(u, v, n)


def rgg(n, seed=0, radius=None) -> Graph:
    """Random geometric graph: ``n`` uniform points in the unit square, edges closer than
    ``radius`` (default RGG_RADIUS_FACTOR * sqrt(ln n / n))."""
    from scipy.spatial import cKDTree
    n = _check_count("n", n, 1)
    if radius is None:
        radius = RGG_RADIUS_FACTOR * math.sqrt(math.log(max(n, 2)) / n)
    pts = np.random.default_rng(seed).random((n, 2))
    pairs = cKDTree(pts).query_pairs(radius, output_type="ndarray")
    return _from_pairs(pairs[:, 0], pairs[:, 1], n)


def grid(shape) -> Graph:
    """2D or 3D grid graph; ``shape`` is "AxB", "AxBxC" or a tuple of 2-3 positive ints.
    Vertex (i, j[, k]) has id in row-major order."""
    if isinstance(shape, str):
        parts = [p.strip() for p in shape.lower().split("x")]
        if not 2 <= len(parts) <= 3 or not all(_UINT.fullmatch(p) for p in parts):
            raise ValueError(f"grid shape must look like '10x20' or '10x20x30', got {shape!r}")
        shape = tuple(int(p) for p in parts)
    if not 2 <= len(shape) <= 3:
        raise ValueError(f"grid shape must have 2 or 3 positive sizes, got {shape}")
    shape = tuple(_check_count("each grid size", s, 1) for s in shape)
    n = math.prod(shape)  # Python ints: np.prod would overflow silently on huge shapes
    ids = np.arange(n, dtype=np.int64).reshape(shape)
    us, vs = [], []
    for axis in range(len(shape)):  # one slice pair per dimension, not per vertex
        lo = [slice(None)] * len(shape)
        hi = [slice(None)] * len(shape)
        lo[axis] = slice(0, -1)
        hi[axis] = slice(1, None)
        us.append(ids[tuple(lo)].ravel())
        vs.append(ids[tuple(hi)].ravel())
    return Graph.from_edges(np.concatenate(us), np.concatenate(vs), n=n)


def _pair_from_index(k, n):
    """Pair (i, j), i < j, with index ``k`` in the order (0,1), (0,2) .. (0,n-1), (1,2) ..."""
    # Counted from the end, the last t rows hold T(t) = t(t+1)/2 pairs; solving for t with a
    # float sqrt of the distance from the end stays within one of the truth even for n near
    # 2^31 (solving from the front cancels catastrophically there), and is then fixed exactly.
    back = (n * (n - 1) // 2 - 1) - np.asarray(k, dtype=np.int64)
    t = np.floor((np.sqrt(8.0 * back + 1) - 1) / 2).astype(np.int64) + 1  # row i holds t = n-1-i pairs
    t = np.where(t * (t - 1) // 2 > back, t - 1, t)
    t = np.where(t * (t + 1) // 2 <= back, t + 1, t)
    return n - 1 - t, n - 1 - (back - t * (t - 1) // 2)


def er(n, avgdeg, seed=0) -> Graph:
    """Erdős–Rényi G(n, p) with p = avgdeg / (n - 1), in O(n + m).

    The number of edges is drawn from Binomial(n(n-1)/2, p); that many distinct pairs are
    then drawn uniformly (rejecting repeats), which is exactly G(n, p).
    """
    n = _check_count("n", n, 1)
    if not (math.isfinite(avgdeg) and 0 <= avgdeg <= n - 1):  # p = avgdeg/(n-1) must be a probability
        raise ValueError(f"avgdeg must be a finite number from 0 to n-1 = {n - 1}, got {avgdeg!r}")
    pairs = n * (n - 1) // 2
    if n < 2 or avgdeg == 0:
        return Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=n)
    p = avgdeg / (n - 1)
    rng = np.random.default_rng(seed)
    m = int(rng.binomial(pairs, p))
    if m > pairs // 2:
        # dense: choose the pairs directly (no rejection), pairs is small here
        chosen = rng.choice(pairs, size=m, replace=False)
    else:
        chosen = np.zeros(0, dtype=np.int64)
        while chosen.shape[0] < m:  # a few rounds: each round draws what is still missing
            extra = rng.integers(0, pairs, size=int((m - chosen.shape[0]) * 1.1) + 16)
            chosen = np.unique(np.concatenate([chosen, extra]))
        chosen = rng.permutation(chosen)[:m]
    i, j = _pair_from_index(chosen, n)
    return Graph.from_edges(i, j, n=n)


def rmat(scale, edgefactor=RMAT_EDGEFACTOR, seed=0, a=RMAT_A, b=RMAT_B, c=RMAT_C) -> Graph:
    """R-MAT graph with 2**scale vertices from edgefactor * 2**scale sampled edges
    (Graph500 parameters a, b, c); self-loops and duplicate edges are removed, so the
    final edge count is somewhat lower."""
    scale = _check_count("scale", scale, 1)
    edgefactor = _check_count("edgefactor", edgefactor, 1)
    if scale > MAX_RMAT_SCALE:
        raise ValueError(f"rmat scale must be <= {MAX_RMAT_SCALE}, got {scale}")
    n = 1 << scale
    m = edgefactor * n
    rng = np.random.default_rng(seed)
    u = np.zeros(m, dtype=np.int64)
    v = np.zeros(m, dtype=np.int64)
    ab = a + b
    c_norm = c / (1 - ab)
    a_norm = a / ab
    for bit in range(scale):  # one vectorised draw per bit level
        ii = rng.random(m) > ab
        jj = rng.random(m) > np.where(ii, c_norm, a_norm)
        u |= ii.astype(np.int64) << bit
        v |= jj.astype(np.int64) << bit
    # shuffle ids so high-degree vertices are not clustered at small ids
    perm = rng.permutation(n)
    return _from_pairs(perm[u], perm[v], n)


def ba(n, m, seed=0) -> Graph:
    """Barabási–Albert preferential attachment: start from a star on m+1 vertices; each
    new vertex links to m distinct existing vertices chosen proportionally to degree.

    Vectorised by batches: vertices arriving in one batch choose targets from the
    degree list as it was at the start of the batch (batch size grows with the graph, so
    the approximation is negligible); duplicates within a vertex are redrawn uniformly.
    """
    n = _check_count("n", n, 1)
    m = _check_count("m", m, 1)
    if m >= n:
        raise ValueError(f"ba needs m < n, got n={n}, m={m}")
    rng = np.random.default_rng(seed)
    # star on vertices 0..m: vertex m linked to 0..m-1 (networkx's convention)
    src = [np.full(m, m, dtype=np.int64)]
    dst = [np.arange(m, dtype=np.int64)]
    ends = np.concatenate([src[0], dst[0]])  # every edge endpoint once: degree-proportional pool
    v = m + 1
    while v < n:
        batch = min(n - v, max(1, v // 8))  # at most 1/8 new vertices per batch
        new = np.arange(v, v + batch, dtype=np.int64)
        targets = ends[rng.integers(0, ends.shape[0], size=(batch, m))]
        # redraw repeated targets within a row uniformly among earlier vertices
        for _ in range(32):
            srt = np.sort(targets, axis=1)
            dup_rows = (srt[:, 1:] == srt[:, :-1]).any(axis=1) if m > 1 else np.zeros(batch, bool)
            if not dup_rows.any():
                break
            rows = np.flatnonzero(dup_rows)
            repeated = np.zeros(targets[rows].shape, dtype=bool)
            order = np.argsort(targets[rows], axis=1, kind="stable")
            st = np.take_along_axis(targets[rows], order, axis=1)
            repeat = np.zeros_like(repeated)
            repeat[:, 1:] = st[:, 1:] == st[:, :-1]
            np.put_along_axis(repeated, order, repeat, axis=1)
            redraw = rng.integers(0, v, size=int(repeated.sum()))
            sub = targets[rows]
            sub[repeated] = redraw
            targets[rows] = sub
        s = np.repeat(new, m)
        t = targets.ravel()
        src.append(s)
        dst.append(t)
        ends = np.concatenate([ends, s, t])
        v += batch
    return _from_pairs(np.concatenate(src), np.concatenate(dst), n)


# ---- spec strings ----------------------------------------------------------------------
USAGE = {form.split(":")[0]: form.split()[0] for form in SPEC_FORMS}
_ARGS = {"delaunay": (1, 1), "rgg": (1, 1), "grid": (1, 1), "er": (2, 2), "rmat": (1, 2), "ba": (2, 2),
         "prgg": (1, 1), "prmat": (1, 2)}
OPTIONS = ("seed",)
# Peak memory measured while generating is 110-280 bytes per vertex plus edge, so this lower
# bound only refuses sizes that cannot fit, but refuses them at once instead of after minutes
# of swapping or an out-of-memory kill.
SPEC_BYTES_PER_ITEM = 100


def _spec_error(spec, why):
    forms = ", ".join(USAGE.values())
    return ValueError(f"bad generator spec {spec!r}: {why}; valid forms: {forms} (append :seed=S for a seed)")


def _physical_memory():
    """Bytes of RAM, or None where the platform does not say (then sizes are not checked)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _check_memory(spec, n, edges):
    need = SPEC_BYTES_PER_ITEM * (n + int(edges))
    have = _physical_memory()
    if have and need > have:
        raise _spec_error(spec, f"too large: {n} vertices and about {int(edges)} edges need at least "
                                f"{need / 2**30:.1f} GiB of memory, this machine has {have / 2**30:.1f} GiB")


def _count(spec, what, text, minimum, maximum=MAX_SPEC_VERTICES):
    if not _UINT.fullmatch(text):
        raise _spec_error(spec, f"{what} must be a whole number written in digits only "
                                f"(no sign, decimal point or exponent), got {text!r}")
    value = int(text)
    if value < minimum:
        need = "positive" if minimum == 1 else f"at least {minimum}"
        raise _spec_error(spec, f"{what} must be {need}, got {value}")
    if value > maximum:
        raise _spec_error(spec, f"{what} must be at most {maximum}, got {value}")
    return value


def _parse(spec):
    """Split a spec into (generator name, positional fields, {option: value})."""
    name, *fields = [field.strip() for field in spec.strip().split(":")]
    name = name.lower()
    if name not in USAGE:
        raise _spec_error(spec, f"unknown generator {name!r}")
    args, options = [], {}
    for field in fields:
        if not field:
            raise _spec_error(spec, "empty field (a doubled or trailing ':')")
        key, eq, value = field.partition("=")
        if not eq:
            args.append(field)
            continue
        key, value = key.strip().lower(), value.strip()
        if key not in OPTIONS:
            raise _spec_error(spec, f"unknown option {key!r} (the only option is seed=S)")
        if key in options:  # silently keeping one of them would hide a typo
            raise _spec_error(spec, f"option {key!r} is given more than once")
        if not _UINT.fullmatch(value):
            raise _spec_error(spec, f"option {key!r} needs a non-negative whole number, got {value!r}")
        options[key] = int(value)
    return name, args, options


def from_spec(spec, seed=0) -> Graph:
    """Graph from a spec string such as ``delaunay:1000``, ``grid:10x20``, ``er:1000:8``,
    ``rmat:16[:16]``, ``ba:1000:3``, ``rgg:1000``; ``:seed=S`` overrides ``seed``.

    Sizes are plain decimal integers; ``er``'s AVGDEG is a finite decimal number from 0 to
    N-1 (N-1 gives the complete graph). Anything else, a repeated or unknown option, or a
    size that cannot fit in this machine's memory raises ValueError naming the problem.
    """
    if not isinstance(spec, str):
        raise _spec_error(spec, "a spec is a string")
    name, args, options = _parse(spec)
    seed = options.get("seed", seed)
    lo, hi = _ARGS[name]
    if not lo <= len(args) <= hi:
        want = lo if lo == hi else f"{lo} or {hi}"
        raise _spec_error(spec, f"{name} takes {want} argument(s) ({USAGE[name]}), got {len(args)}")

    if name == "delaunay":
        n = _count(spec, "N", args[0], 3)
        _check_memory(spec, n, 3 * n)
        return delaunay(n, seed)
    if name in ("rgg", "prgg"):
        n = _count(spec, "N", args[0], 1)
        _check_memory(spec, n, 0.5 * math.pi * RGG_RADIUS_FACTOR**2 * math.log(max(n, 2)) * n)
        if name == "prgg":
            from .generators_counter import prgg
            return prgg(n, seed)
        return rgg(n, seed)
    if name == "grid":
        parts = args[0].lower().split("x")
        if not 2 <= len(parts) <= 3:
            raise _spec_error(spec, f"grid shape must look like 10x20 or 10x20x30, got {args[0]!r}")
        shape = tuple(_count(spec, "each grid size", p.strip(), 1) for p in parts)
        n = math.prod(shape)
        if n > MAX_SPEC_VERTICES:
            raise _spec_error(spec, f"the grid has {n} vertices, at most {MAX_SPEC_VERTICES} are allowed")
        _check_memory(spec, n, len(shape) * n)
        return grid(shape)
    if name == "er":
        n = _count(spec, "N", args[0], 1)
        if not _DECIMAL.fullmatch(args[1]):
            raise _spec_error(spec, f"AVGDEG must be a finite, non-negative decimal number such as 8 or 2.5, "
                                    f"got {args[1]!r}")
        avg = float(args[1])
        if avg > n - 1:  # p = AVGDEG/(N-1) would exceed 1: no G(N, p) has that mean degree
            raise _spec_error(spec, f"AVGDEG must be at most N-1 = {n - 1} (the complete graph), got {args[1]}")
        _check_memory(spec, n, n * avg / 2)
        return er(n, avg, seed)
    if name in ("rmat", "prmat"):
        scale = _count(spec, "SCALE", args[0], 1, MAX_RMAT_SCALE)
        ef = _count(spec, "EF", args[1], 1) if len(args) > 1 else RMAT_EDGEFACTOR
        _check_memory(spec, 1 << scale, ef << scale)  # every sampled edge is held until merged
        if name == "prmat":
            from .generators_counter import prmat
            return prmat(scale, ef, seed=seed)
        return rmat(scale, ef, seed=seed)
    n, m = _count(spec, "N", args[0], 1), _count(spec, "M", args[1], 1)  # ba
    if m >= n:
        raise _spec_error(spec, f"M must be less than N (each new vertex links to M earlier ones), got N={n}, M={m}")
    _check_memory(spec, n, n * m)
    return ba(n, m, seed)


def generate(spec, seed=0) -> Graph:
    """Alias of ``from_spec`` (exported as ``matchpart.generate``)."""
    return from_spec(spec, seed=seed)


def is_spec(text) -> bool:
    """True when ``text`` names a known generator (``name:...``)."""
    return isinstance(text, str) and ":" in text and text.split(":")[0].strip().lower() in (
        "delaunay", "rgg", "grid", "er", "rmat", "ba", "prgg", "prmat")
