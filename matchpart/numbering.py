"""How local a graph's numbering is: whether the ends of its edges lie close in id.

Kernels that read per-vertex arrays at the neighbours of a vertex run at memory speed when
neighbours have nearby ids and wait on a cache miss per entry when they do not. Two places
ask: the pipeline (renumber breadth-first, locality.py) and label propagation (prefetch the
neighbours' labels, coarsen/lp_cluster.py). One sample of rows answers both.
"""
from __future__ import annotations

SAMPLE_ROWS = 4096          # rows sampled (evenly spaced) to judge the numbering
LOCAL_WINDOW_MAX = 1 << 14  # an entry is local when |u - v| <= min(this, n / LOCAL_WINDOW_SHARE):
LOCAL_WINDOW_SHARE = 32     # 128 KB of int64 per-vertex data; a random numbering has ~2/32 local
SCATTERED_MAX_LOCAL = 0.5   # scattered when at most this share of the sampled entries is local:
                            # random orders (rgg, delaunay generators) have < 0.07, mesh files and
                            # grids most of theirs (4elt 0.99)


def scattered_ids(graph) -> bool:
    """Whether few of ``graph``'s neighbours lie close in id (any backend; False without edges)."""
    n = graph.n
    if n == 0 or graph.m == 0:
        return False
    be = graph.backend
    xp = be.xp
    rows = xp.arange(0, n, max(1, n // SAMPLE_ROWS), dtype=xp.int64)
    start = graph.indptr[rows].astype(xp.int64)
    entries, local = be.ranges(start, graph.indptr[rows + 1].astype(xp.int64) - start)
    if entries.shape[0] == 0:
        return False
    window = min(LOCAL_WINDOW_MAX, n // LOCAL_WINDOW_SHARE)
    near = xp.abs(graph.indices[entries].astype(xp.int64) - rows[local]) <= window
    return float(near.mean().item()) <= SCATTERED_MAX_LOCAL
