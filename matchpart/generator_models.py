"""What the sequential generators (generators.py) and the counter-based ones that MPI ranks
run (generators_counter.py) share: the random models' parameters and the build of a graph
from undirected pairs."""
from __future__ import annotations

import numpy as np

from .graph import Graph

# Radius factor for random geometric graphs: r = RGG_RADIUS_FACTOR * sqrt(ln n / n) is the
# DIMACS10 / KaHIP convention and makes the graph connected with high probability.
RGG_RADIUS_FACTOR = 0.55
# Graph500 R-MAT quadrant probabilities (d = 1 - a - b - c = 0.05).
RMAT_A, RMAT_B, RMAT_C = 0.57, 0.19, 0.19


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
