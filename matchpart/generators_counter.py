"""Generators whose graph does not depend on how many pieces build it (``prgg``, ``prmat``).

Every random number is a function of (seed, index): a point's coordinates hash its index, an
R-MAT chunk of edges draws from a Philox stream keyed by (seed, chunk). So any process can
make any share of the graph on its own, and the pieces of ``matchpart.distributed`` on P
ranks add up to exactly the graph ``prgg(n)`` / ``prmat(scale)`` builds in one process.
The functions here hold no MPI: ``distributed/generate.py`` routes their output to ranks.
"""
from __future__ import annotations

import math

import numpy as np

from .generator_models import RGG_RADIUS_FACTOR, RMAT_A, RMAT_B, RMAT_C, _from_pairs

# Edges per R-MAT chunk: each chunk is one Philox stream, so this fixes the graph (changing it
# changes every prmat graph); 2^16 keeps a chunk's temporaries small and chunks many.
RMAT_CHUNK = 1 << 16
# Pairs within this factor of the radius are found by the k-d tree and then decided exactly
# (dx*dx + dy*dy <= r*r), so that a pair is in or out identically on every rank that sees it.
TREE_SLACK = 1 + 1e-9
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MASK64 = (1 << 64) - 1


def _mix64(x):
    """splitmix64's finaliser on uint64 arrays (a bijection with good avalanche)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _uniform(seed, stream, idx):
    """A float64 in [0, 1) for each index, a pure function of (seed, stream, index)."""
    key = _mix64(np.array([(seed * 4 + stream) & _MASK64], dtype=np.uint64) + _GOLDEN)
    h = _mix64(np.asarray(idx, dtype=np.uint64) * _GOLDEN + key)
    return (h >> np.uint64(11)).astype(np.float64) * 2.0**-53


# ---- random geometric graph -------------------------------------------------------------
def rgg_radius(n):
    return RGG_RADIUS_FACTOR * math.sqrt(math.log(max(n, 2)) / n)


def rgg_cells(n):
    """Cells per side: cells at least as wide as the radius, so a point's neighbours lie in
    its own cell row and the two next to it (what a rank must see of its neighbours)."""
    return max(1, int(1.0 / rgg_radius(n)))


def rgg_points(n, seed, lo, hi):
    """(x, y) of points lo..hi-1 (the points' draw order, not their vertex ids)."""
    idx = np.arange(lo, hi, dtype=np.uint64)
    return _uniform(seed, 0, idx), _uniform(seed, 1, idx)


def cell_row(y, cells):
    return np.minimum((y * cells).astype(np.int64), cells - 1)


def cell_key(x, y, cells):
    """Row-major cell index: vertex ids follow it, so a rank's rows are whole cell rows."""
    return cell_row(y, cells) * cells + np.minimum((x * cells).astype(np.int64), cells - 1)


def rgg_order(x, y, index, cells):
    """Order of points by (cell, draw index): the vertex numbering, independent of P."""
    return np.lexsort((index, cell_key(x, y, cells)))


def rgg_pairs(x, y, radius):
    """Pairs (i, j), i < j, of points at distance <= radius, decided exactly (TREE_SLACK)."""
    from scipy.spatial import cKDTree
    if x.shape[0] < 2:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = cKDTree(np.column_stack([x, y])).query_pairs(radius * TREE_SLACK, output_type="ndarray")
    dx = x[pairs[:, 0]] - x[pairs[:, 1]]
    dy = y[pairs[:, 0]] - y[pairs[:, 1]]
    return pairs[dx * dx + dy * dy <= radius * radius].astype(np.int64)


def prgg(n, seed=0):
    """Random geometric graph of ``n`` points (radius as ``generators.rgg``) whose points
    hash their index and whose vertices are numbered by cell: the graph that
    ``matchpart.distributed`` generates on any number of ranks."""
    x, y = rgg_points(n, seed, 0, n)
    order = rgg_order(x, y, np.arange(n), rgg_cells(n))
    x, y = x[order], y[order]
    pairs = rgg_pairs(x, y, rgg_radius(n))
    return _from_pairs(pairs[:, 0], pairs[:, 1], n)


# ---- R-MAT ------------------------------------------------------------------------------
def rmat_chunks(scale, edgefactor):
    return -(-(edgefactor << scale) // RMAT_CHUNK)


def rmat_chunk(scale, edgefactor, seed, chunk, a=RMAT_A, b=RMAT_B, c=RMAT_C):
    """Edges (u, v) of chunk ``chunk`` (ids already scrambled), drawn from Philox keyed by
    (seed, chunk): the same bit-by-bit quadrant choice as ``generators.rmat``."""
    m = edgefactor << scale
    count = min(RMAT_CHUNK, m - chunk * RMAT_CHUNK)
    rng = np.random.Generator(np.random.Philox(key=np.array([seed & _MASK64, chunk], dtype=np.uint64)))
    u = np.zeros(count, dtype=np.int64)
    v = np.zeros(count, dtype=np.int64)
    ab = a + b
    c_norm, a_norm = c / (1 - ab), a / ab
    for bit in range(scale):
        ii = rng.random(count) > ab
        jj = rng.random(count) > np.where(ii, c_norm, a_norm)
        u |= ii.astype(np.int64) << bit
        v |= jj.astype(np.int64) << bit
    return scramble(u, scale, seed), scramble(v, scale, seed)


def scramble(ids, scale, seed):
    """A bijection of 0..2^scale-1 (odd multiply, add, xorshift, twice), so that the
    high-degree vertices are not clustered at small ids; unlike a permutation array it
    needs no O(n) table on every rank."""
    mask = np.uint64((1 << scale) - 1)
    x = np.asarray(ids, dtype=np.uint64)
    keys = _mix64(np.array([(seed * 2 + 1) & _MASK64, (seed * 2 + 2) & _MASK64], dtype=np.uint64) + _GOLDEN)
    shift = np.uint64(max(1, (scale + 1) // 2))
    for key in keys:
        x = (x * (key | np.uint64(1)) + (key >> np.uint64(32))) & mask
        x ^= x >> shift
    return x.astype(np.int64)


def prmat(scale, edgefactor=16, seed=0):
    """R-MAT with 2^scale vertices from edgefactor * 2^scale sampled edges in fixed chunks
    (self-loops and repeats removed): the graph ``matchpart.distributed`` generates on any
    number of ranks. Same parameters as ``generators.rmat``, other random numbers."""
    chunks = [rmat_chunk(scale, edgefactor, seed, i) for i in range(rmat_chunks(scale, edgefactor))]
    u = np.concatenate([ch[0] for ch in chunks])
    v = np.concatenate([ch[1] for ch in chunks])
    return _from_pairs(u, v, 1 << scale)
