"""Synthetic graph generators (Delaunay, random geometric, grids, Erdős–Rényi, R-MAT, Barabási–Albert) and spec strings.

A spec string names a generator and its sizes, e.g. ``delaunay:65536``, ``grid:10x20``,
``er:1000:8``, ``rmat:16:16``, ``ba:10000:3``, optionally with ``:seed=S``. Generators
use numpy's ``default_rng(seed)``: they make inputs, they are not part of an algorithm,
so they need not match the counter-based RNG of the GPU code.
"""
from __future__ import annotations

import math
import re

import numpy as np

from .graph import Graph

# Radius factor for random geometric graphs: r = RGG_RADIUS_FACTOR * sqrt(ln n / n) is the
# DIMACS10 / KaHIP convention and makes the graph connected with high probability.
RGG_RADIUS_FACTOR = 0.55
# Graph500 R-MAT quadrant probabilities (d = 1 - a - b - c = 0.05).
RMAT_A, RMAT_B, RMAT_C = 0.57, 0.19, 0.19
RMAT_EDGEFACTOR = 16
# Largest sizes accepted from a spec, so a typo cannot ask for terabytes.
MAX_SPEC_VERTICES = 1 << 31
MAX_RMAT_SCALE = 30

SPEC_FORMS = (
    "delaunay:N            Delaunay triangulation of N random points in the unit square",
    "rgg:N                 random geometric graph, radius 0.55*sqrt(ln N / N)",
    "grid:AxB[xC]          2D or 3D grid",
    "er:N:AVGDEG           Erdős–Rényi G(N, p) with p = AVGDEG/(N-1)",
    "rmat:SCALE[:EF]       R-MAT with 2^SCALE vertices and EF*2^SCALE edges (default EF 16)",
    "ba:N:M                Barabási–Albert, each new vertex attaches M edges",
)


def _from_pairs(u, v, n):
    """Graph from undirected pairs that may contain self-loops and duplicates (removed).

    Built directly as a symmetric CSR (scipy's counting-sort conversion merges the
    duplicates), which is valid by construction, so the O(m log m) validation is skipped.
    """
    import scipy.sparse as sp
    from . import backend
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    keep = u != v
    u, v = u[keep], v[keep]
    rows = np.concatenate([u, v])
    cols = np.concatenate([v, u])
    A = sp.csr_matrix((np.ones(rows.shape[0], dtype=np.int64), (rows, cols)), shape=(n, n))
    A.sum_duplicates()  # also sorts each row
    indices = A.indices.astype(np.int32 if n < 2**31 - 1 else np.int64)
    ones = np.ones(indices.shape[0], dtype=np.int64)
    return Graph._trusted(A.indptr.astype(np.int64), indices, ones, np.ones(n, dtype=np.int64),
                          backend.get("cpu"))


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
        parts = shape.lower().split("x")
        if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
            raise ValueError(f"grid shape must look like '10x20' or '10x20x30', got {shape!r}")
        shape = tuple(int(p) for p in parts)
    shape = tuple(int(s) for s in shape)
    if not 2 <= len(shape) <= 3 or min(shape) < 1:
        raise ValueError(f"grid shape must have 2 or 3 positive sizes, got {shape}")
    n = int(np.prod(shape))
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


def er(n, avgdeg, seed=0) -> Graph:
    """Erdős–Rényi G(n, p) with p = avgdeg / (n - 1), in O(n + m).

    The number of edges is drawn from Binomial(n(n-1)/2, p); that many distinct pairs are
    then drawn uniformly (rejecting repeats), which is exactly G(n, p).
    """
    n = _check_count("n", n, 1)
    if not avgdeg >= 0:
        raise ValueError(f"avgdeg must be >= 0, got {avgdeg!r}")
    pairs = n * (n - 1) // 2
    if n < 2 or avgdeg == 0:
        return Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=n)
    p = min(1.0, avgdeg / (n - 1))
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
    # pair index k -> (i, j), i < j, in the order (0,1), (0,2) .. (0,n-1), (1,2) ...
    k = chosen.astype(np.int64)
    # row i starts at s(i) = i*(2n - i - 1)/2; solve for i with float sqrt, then fix rounding
    i = np.floor((2 * n - 1 - np.sqrt((2.0 * n - 1) ** 2 - 8.0 * k)) / 2).astype(np.int64)
    start = i * (2 * n - i - 1) // 2
    i = np.where(start > k, i - 1, i)
    start = i * (2 * n - i - 1) // 2
    nxt = (i + 1) * (2 * n - i - 2) // 2
    i = np.where(k >= nxt, i + 1, i)
    start = i * (2 * n - i - 1) // 2
    j = k - start + i + 1
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
_INT = re.compile(r"^\d+$")


def _spec_error(spec, why):
    forms = ", ".join(f.split()[0] for f in SPEC_FORMS)
    return ValueError(f"bad generator spec {spec!r}: {why}; valid forms: {forms} (append :seed=S for a seed)")


def from_spec(spec, seed=0) -> Graph:
    """Graph from a spec string such as ``delaunay:1000``, ``grid:10x20``, ``er:1000:8``,
    ``rmat:16[:16]``, ``ba:1000:3``, ``rgg:1000``; ``:seed=S`` overrides ``seed``."""
    if not isinstance(spec, str):
        raise _spec_error(spec, "a spec is a string")
    parts = [p.strip() for p in spec.strip().split(":")]
    name, args = parts[0].lower(), []
    for p in parts[1:]:
        if p.lower().startswith("seed="):
            value = p[5:]
            if not _INT.match(value):
                raise _spec_error(spec, f"seed must be a non-negative integer, got {value!r}")
            seed = int(value)
        else:
            args.append(p)

    def ints(count_min, count_max):
        if not count_min <= len(args) <= count_max or not all(_INT.match(a) for a in args):
            want = count_min if count_min == count_max else f"{count_min} to {count_max}"
            raise _spec_error(spec, f"{name} takes {want} positive integer argument(s)")
        vals = [int(a) for a in args]
        if any(x > MAX_SPEC_VERTICES for x in vals):
            raise _spec_error(spec, f"sizes must be <= {MAX_SPEC_VERTICES}")
        return vals

    if name == "delaunay":
        (n,) = ints(1, 1)
        if n < 3:
            raise _spec_error(spec, "delaunay needs N >= 3")
        return delaunay(n, seed)
    if name == "rgg":
        (n,) = ints(1, 1)
        if n < 1:
            raise _spec_error(spec, "rgg needs N >= 1")
        return rgg(n, seed)
    if name == "grid":
        if len(args) != 1:
            raise _spec_error(spec, "grid takes one argument like 10x20 or 10x20x30")
        try:
            return grid(args[0])
        except ValueError as exc:
            raise _spec_error(spec, str(exc)) from None
    if name == "er":
        if len(args) != 2 or not _INT.match(args[0]):
            raise _spec_error(spec, "er takes N and AVGDEG")
        try:
            avg = float(args[1])
        except ValueError:
            raise _spec_error(spec, f"AVGDEG must be a number, got {args[1]!r}") from None
        n = int(args[0])
        if n < 1 or not avg >= 0 or n > MAX_SPEC_VERTICES:
            raise _spec_error(spec, "er needs N >= 1 and AVGDEG >= 0")
        return er(n, avg, seed)
    if name == "rmat":
        vals = ints(1, 2)
        if vals[0] < 1 or vals[0] > MAX_RMAT_SCALE or (len(vals) > 1 and vals[1] < 1):
            raise _spec_error(spec, f"rmat needs 1 <= SCALE <= {MAX_RMAT_SCALE} and EF >= 1")
        return rmat(*vals, seed=seed)
    if name == "ba":
        n, m = ints(2, 2)
        if not 1 <= m < n:
            raise _spec_error(spec, "ba needs 1 <= M < N")
        return ba(n, m, seed)
    raise _spec_error(spec, f"unknown generator {name!r}")


def generate(spec, seed=0) -> Graph:
    """Alias of ``from_spec`` (exported as ``matchpart.generate``)."""
    return from_spec(spec, seed=seed)


def is_spec(text) -> bool:
    """True when ``text`` names a known generator (``name:...``)."""
    return isinstance(text, str) and ":" in text and text.split(":")[0].strip().lower() in (
        "delaunay", "rgg", "grid", "er", "rmat", "ba")
