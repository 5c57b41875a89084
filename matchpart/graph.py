"""Graph: an immutable undirected CSR graph with vertex and edge weights on one backend."""
from __future__ import annotations

import numpy as np

# scipy.sparse is imported by the methods that use it: partitioning a METIS file needs none of
# it, and importing it is a fifth of the command's start-up
from . import backend as _backend
from . import csrcheck
from .errors import GraphError

INT32_MAX = np.iinfo(np.int32).max


def _weights(values, count, what, columns=False):
    """Validated weight array: int64 when integral, float64 otherwise (None -> all ones).
    ``columns``: an (n, c) array of c weights per item is accepted too (vertex weights with
    several constraints); (n, 1) becomes 1-d, so one constraint always has the 1-d form."""
    if values is None:
        return np.ones(count, dtype=np.int64)
    w = np.asarray(values)
    if columns and w.ndim == 2 and w.shape[0] == count and w.shape[1] >= 1:
        w = w[:, 0] if w.shape[1] == 1 else np.ascontiguousarray(w)
    elif w.ndim != 1 or w.shape[0] != count:
        shapes = f"a 1-d array of length {count}" + (f" or an ({count}, c) array" if columns else "")
        raise GraphError(f"{what} weights must be {shapes}, got shape {w.shape}")
    if w.dtype.kind == "b":
        w = w.astype(np.int64)
    if w.dtype.kind not in "iuf":
        raise GraphError(f"{what} weights must be numeric, got dtype {w.dtype}")
    if w.dtype.kind == "f":
        bad = ~np.isfinite(w)
        if bad.any():
            i = int(np.flatnonzero(bad.reshape(-1))[0])
            raise GraphError(f"{what} weight #{i} is {w.reshape(-1)[i]} (must be finite)", kind="bad_weight")
        if np.array_equal(w, np.round(w)) and (w.size == 0 or np.abs(w).max() < 2**53):
            w = w.astype(np.int64)
        else:
            w = w.astype(np.float64)
    else:
        w = w.astype(np.int64)
    return w


class Graph:
    """Undirected graph in CSR form; every edge is stored in both directions, no self-loops.

    Attributes (arrays live on ``backend``; treat them as read-only):
      indptr (int64, n+1), indices (int32 while n < 2**31), ewgt (per stored entry),
      vwgt (per vertex: a 1-d array, or (n, c) for c > 1 weights per vertex, METIS's ncon);
      ``n`` vertices, ``m`` undirected edges, ``total_vwgt`` (a tuple of c totals when
      c > 1), ``total_ewgt`` (each undirected edge counted once), ``ncon`` (c), ``labels`` (original node labels
      from networkx input, else None).

    Build with ``Graph(indptr, indices, ewgt, vwgt)`` (validated), ``from_edges``,
    ``from_scipy`` or ``from_networkx``. Validation never changes the input silently; the
    repair options (``symmetrize``, ``drop_self_loops``, ``merge_duplicates``) do, when asked.
    """

    __slots__ = ("indptr", "indices", "ewgt", "vwgt", "n", "m", "total_vwgt", "total_ewgt",
                 "labels", "backend", "_degree", "__weakref__")

    def __init__(self, indptr, indices, ewgt=None, vwgt=None, *, labels=None, validate=True,
                 device="cpu"):
        be = _backend.get(device)
        if validate:
            indptr, indices, ewgt, vwgt = _validated_csr(indptr, indices, ewgt, vwgt)
        else:   # trusted arrays; unit weights where none are given, as the validated path
            ewgt = np.ones(indices.shape[0], dtype=np.int64) if ewgt is None else ewgt
            vwgt = np.ones(indptr.shape[0] - 1, dtype=np.int64) if vwgt is None else vwgt
        self._set(indptr, indices, ewgt, vwgt, labels, be)

    def _set(self, indptr, indices, ewgt, vwgt, labels, be):
        set_ = object.__setattr__
        set_(self, "backend", be)
        set_(self, "indptr", be.to_device(indptr))
        set_(self, "indices", be.to_device(indices))
        set_(self, "ewgt", be.to_device(ewgt))
        set_(self, "vwgt", be.to_device(vwgt))
        set_(self, "n", int(indptr.shape[0] - 1))
        set_(self, "m", int(indices.shape[0] // 2))
        if vwgt.ndim == 2:     # c > 1 constraints: one total each
            set_(self, "total_vwgt", tuple(_py(x) for x in vwgt.sum(axis=0)))
        else:
            set_(self, "total_vwgt", _py(vwgt.sum()) if vwgt.shape[0] else 0)
        set_(self, "total_ewgt", _py(ewgt.sum()) // 2 if ewgt.dtype.kind in "iu" else _py(ewgt.sum()) / 2)
        set_(self, "labels", labels)
        set_(self, "_degree", None)

    def __setattr__(self, name, value):
        raise AttributeError("Graph is immutable")

    @classmethod
    def _trusted(cls, indptr, indices, ewgt, vwgt, backend, labels=None):
        """Internal: wrap arrays already known to be valid (e.g. from contraction), no copy."""
        g = object.__new__(cls)
        g._set(indptr, indices, ewgt, vwgt, labels, backend)
        return g

    # ---- derived ---------------------------------------------------------------
    @property
    def device(self):
        return self.backend.name

    @property
    def ncon(self):
        """Number of weights per vertex (METIS's ncon): 1, or c for (n, c) vertex weights."""
        return 1 if self.vwgt.ndim == 1 else int(self.vwgt.shape[1])

    @property
    def degree(self):
        """Number of neighbours per vertex (int64 array on the graph's backend)."""
        if self._degree is None:
            object.__setattr__(self, "_degree", self.backend.xp.diff(self.indptr))
        return self._degree

    @property
    def has_unit_weights(self):
        xp = self.backend.xp
        return bool((self.ewgt == 1).all()) and bool((self.vwgt == 1).all()) if self.n else True

    def neighbors(self, v):
        """Neighbours of vertex ``v`` (a view)."""
        return self.indices[int(self.indptr[v]):int(self.indptr[v + 1])]

    def __repr__(self):
        return f"Graph(n={self.n}, m={self.m}, device={self.device!r})"

    def with_vertex_weights(self, vwgt):
        """The same graph (same backend, labels) with validated new vertex weights: n values, or
        an (n, c) array of c weights per vertex."""
        h = self.backend.to_host
        return Graph._trusted(h(self.indptr), h(self.indices), h(self.ewgt), _vertex_weights(h(vwgt), self.n),
                              self.backend, self.labels)

    # ---- conversions -----------------------------------------------------------
    def to(self, device):
        """This graph on another device ("cpu", "gpu", "auto" or a Backend); self if already there."""
        be = _backend.get(device)
        if be is self.backend:
            return self
        h = self.backend.to_host
        return Graph._trusted(h(self.indptr), h(self.indices), h(self.ewgt), h(self.vwgt), be, self.labels)

    def to_scipy(self):
        """Symmetric scipy.sparse.csr_matrix of edge weights (host copy)."""
        import scipy.sparse as sp
        h = self.backend.to_host
        return sp.csr_matrix((h(self.ewgt), h(self.indices), h(self.indptr)), shape=(self.n, self.n))

    def to_networkx(self):
        """networkx.Graph with ``weight`` edge and ``weight`` node attributes (original labels if any)."""
        import networkx as nx
        h = self.backend.to_host
        indptr, indices, ewgt, vwgt = h(self.indptr), h(self.indices), h(self.ewgt), h(self.vwgt)
        labels = self.labels if self.labels is not None else list(range(self.n))
        G = nx.Graph()
        vw = vwgt.tolist()       # a list per vertex when it has several weights
        G.add_nodes_from((labels[v], {"weight": vw[v]}) for v in range(self.n))
        rows = np.repeat(np.arange(self.n), np.diff(indptr))
        keep = rows < indices
        G.add_edges_from((labels[u], labels[v], {"weight": w})
                         for u, v, w in zip(rows[keep].tolist(), indices[keep].tolist(), ewgt[keep].tolist()))
        return G

    # ---- constructors ----------------------------------------------------------
    @classmethod
    def from_edges(cls, u, v, w=None, n=None, *, vwgt=None, drop_self_loops=False,
                   merge_duplicates=False, device="cpu"):
        """Graph from an edge list.

        Each undirected edge is given once, as (u, v) or (v, u), or in both directions with
        equal weights. Listing an edge twice otherwise (same direction twice, or both
        directions with different weights) is an error unless ``merge_duplicates=True``,
        which sums the weights of all copies.
        """
        u = np.asarray(u)
        v = np.asarray(v)
        if u.shape != v.shape or u.ndim != 1:
            raise GraphError(f"u and v must be 1-d arrays of equal length, got {u.shape} and {v.shape}")
        for name, a in (("u", u), ("v", v)):
            if a.size and a.dtype.kind not in "iu":
                if a.dtype.kind == "f" and np.array_equal(a, np.round(a)):
                    continue
                raise GraphError(f"edge endpoints {name} must be integers, got dtype {a.dtype}")
        u = u.astype(np.int64)
        v = v.astype(np.int64)
        if n is None:
            n = int(max(u.max(initial=-1), v.max(initial=-1)) + 1)
        n = int(n)
        for name, a in (("u", u), ("v", v)):
            bad = (a < 0) | (a >= n)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise GraphError(f"edge #{i} ({u[i]}, {v[i]}): vertex {a[i]} out of range 0..{n - 1}",
                                 vertex=int(u[i]), neighbor=int(v[i]), kind="out_of_range")
        w = _edge_weights(w, u.shape[0])
        loops = u == v
        if loops.any():
            if not drop_self_loops:
                i = int(np.flatnonzero(loops)[0])
                raise GraphError(f"edge #{i} is a self-loop on vertex {u[i]} (use drop_self_loops=True)",
                                 vertex=int(u[i]), neighbor=int(v[i]), kind="self_loop")
            u, v, w = u[~loops], v[~loops], w[~loops]
        return cls._from_checked_edges(u, v, w, n, _vertex_weights(vwgt, n), merge_duplicates, device)

    @classmethod
    def _from_checked_edges(cls, u, v, w, n, vwgt, merge_duplicates=False, device="cpu"):
        """Internal: Graph from int64 edge arrays already checked for range, self-loops and
        weights (by from_edges, or by a file reader that names the line); what is left to
        check is repeated edges. The CSR is built symmetric and sorted, valid by construction."""
        import scipy.sparse as sp
        a, b = np.minimum(u, v), np.maximum(u, v)  # an edge may be listed in either direction
        A = sp.csr_matrix((w, (a, b)), shape=(n, n))  # counting sort; sums repeated pairs
        if A.nnz != a.shape[0] and not merge_duplicates:
            A = _without_symmetric_repeats(u, v, w, a, b, n)
        A.sort_indices()
        S = (A + A.T).tocsr()
        S.sort_indices()
        index_type = np.int32 if n < INT32_MAX else np.int64
        be = _backend.get(device)
        return cls._trusted(S.indptr.astype(np.int64), S.indices.astype(index_type), S.data, vwgt, be)

    @classmethod
    def from_scipy(cls, matrix, vwgt=None, *, symmetrize=False, drop_self_loops=False,
                   merge_duplicates=True, device="cpu"):
        """Graph from a square scipy.sparse matrix (or array) of edge weights.

        The matrix must be symmetric (``symmetrize=True`` uses max(A, A^T)); a nonzero
        diagonal is an error unless ``drop_self_loops=True``. Explicit zeros are dropped.
        """
        import scipy.sparse as sp
        if not sp.issparse(matrix):
            matrix = sp.csr_matrix(np.asarray(matrix))
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise GraphError(f"adjacency matrix must be square, got shape {matrix.shape}")
        A = sp.csr_matrix(matrix, copy=True)
        if merge_duplicates:
            A.sum_duplicates()
        A.eliminate_zeros()
        if A.data.size and A.data.dtype.kind == "b":
            A = A.astype(np.int64)
        diag = A.diagonal()
        if np.any(diag != 0):
            if not drop_self_loops:
                i = int(np.flatnonzero(diag)[0])
                raise GraphError(f"vertex {i} has a self-loop (diagonal entry {diag[i]}); use drop_self_loops=True",
                                 vertex=i, neighbor=i, kind="self_loop")
            A.setdiag(0)
            A.eliminate_zeros()
        if symmetrize:
            A = A.maximum(A.T).tocsr()
        A.sort_indices()
        return cls(A.indptr, A.indices, A.data, vwgt, device=device)

    @classmethod
    def from_networkx(cls, G, edge_weight="weight", node_weight=None, *, device="cpu"):
        """Graph from a networkx graph; node labels are kept in ``labels`` (order of ``G.nodes``).

        ``edge_weight``/``node_weight`` name attributes (missing -> 1; None -> all 1).
        Directed graphs are rejected; self-loops are an error.
        """
        import networkx as nx
        if G.is_directed():
            raise GraphError("directed networkx graphs are not supported; use G.to_undirected()")
        if G.is_multigraph():
            raise GraphError("networkx multigraphs are not supported; merge parallel edges first")
        labels = list(G.nodes)
        index = {x: i for i, x in enumerate(labels)}
        n = len(labels)
        if G.number_of_edges():
            edges = list(G.edges(data=edge_weight, default=1)) if edge_weight else \
                [(a, b, 1) for a, b in G.edges()]
            u = np.fromiter((index[e[0]] for e in edges), dtype=np.int64, count=len(edges))
            v = np.fromiter((index[e[1]] for e in edges), dtype=np.int64, count=len(edges))
            w = np.asarray([e[2] for e in edges])
        else:
            u = v = np.zeros(0, dtype=np.int64)
            w = None
        vw = None
        if node_weight is not None:
            vw = np.asarray([G.nodes[x].get(node_weight, 1) for x in labels])
        g = cls.from_edges(u, v, w, n, vwgt=vw, device=device)
        object.__setattr__(g, "labels", labels)
        return g


def _py(x):
    return x.item() if hasattr(x, "item") else x


def _edge_weights(w, count):
    w = _weights(w, count, "edge")
    if w.size and (w <= 0).any():
        i = int(np.flatnonzero(w <= 0)[0])
        raise GraphError(f"edge weight #{i} is {w[i]}; edge weights must be positive", kind="bad_weight")
    return w


def _vertex_weights(vwgt, n):
    vwgt = _weights(vwgt, n, "vertex", columns=True)
    if vwgt.size and (vwgt < 0).any():
        i, j = divmod(int(np.flatnonzero(vwgt.reshape(-1) < 0)[0]), vwgt.shape[1] if vwgt.ndim == 2 else 1)
        which = f" (constraint {j})" if vwgt.ndim == 2 else ""
        raise GraphError(f"vertex {i} has negative weight {vwgt.reshape(-1)[i * (vwgt.size // n) + j]}{which}",
                         vertex=i, kind="bad_weight")
    return vwgt


def _without_symmetric_repeats(u, v, w, a, b, n):
    """CSR of the canonical pairs (a, b) with exact repeats (same pair, same weight: an edge
    listed in both directions) kept once; a pair repeated with another weight is an error.
    Only called when repeats exist, so the sort here costs nothing on ordinary input."""
    key = a * n + b
    order = np.argsort(key, kind="stable")
    ks = key[order]
    ws = w[order]
    dup = ks[1:] == ks[:-1]
    differ = dup & (ws[1:] != ws[:-1])
    if differ.any():
        i = int(order[1:][differ][0])
        raise GraphError(f"edge ({u[i]}, {v[i]}) appears more than once with different weights "
                         f"(use merge_duplicates=True to sum them)", vertex=int(u[i]), neighbor=int(v[i]),
                         kind="duplicate")
    keep = np.ones(ks.shape[0], dtype=bool)
    keep[1:] = ~dup
    sel = order[keep]
    import scipy.sparse as sp
    return sp.csr_matrix((w[sel], (a[sel], b[sel])), shape=(n, n))


def _validated_csr(indptr, indices, ewgt, vwgt):
    """Check CSR arrays: shapes, ranges, no self-loops, weights, no repeats, symmetry (O(nnz),
    compiled); rows come back sorted."""
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    if indptr.ndim != 1 or indptr.shape[0] < 1:
        raise GraphError("indptr must be a 1-d array of length n+1 >= 1")
    if indptr.dtype.kind not in "iu" or (indices.size and indices.dtype.kind not in "iu"):
        raise GraphError("indptr and indices must be integer arrays")
    indptr = indptr.astype(np.int64)
    n = indptr.shape[0] - 1
    nnz = indices.shape[0]
    if indptr[0] != 0 or indptr[-1] != nnz or (np.diff(indptr) < 0).any():
        raise GraphError(f"indptr must start at 0, be non-decreasing and end at len(indices)={nnz}",
                         kind="size")
    idx = indices.astype(np.int64)  # a copy: rows are sorted in place below
    code, u, k = csrcheck.first_bad_neighbor(indptr, idx)
    if code == csrcheck.OUT_OF_RANGE:
        raise GraphError(f"vertex {u} has neighbour {idx[k]} out of range 0..{n - 1}",
                         vertex=int(u), neighbor=int(idx[k]), kind="out_of_range")
    if code == csrcheck.SELF_LOOP:
        raise GraphError(f"vertex {u} has a self-loop", vertex=int(u), neighbor=int(u), kind="self_loop")
    ewgt = _edge_weights(ewgt, nnz)  # always a new array (astype copies): sorted in place below
    vwgt = _vertex_weights(vwgt, n)
    csrcheck.sort_rows(indptr, idx, ewgt)
    k = csrcheck.first_duplicate(indptr, idx)
    if k >= 0:
        u = int(np.searchsorted(indptr, k, side="right") - 1)
        raise GraphError(f"vertex {u} lists neighbour {idx[k]} more than once",
                         vertex=u, neighbor=int(idx[k]), kind="duplicate")
    code, u, v, k, p = csrcheck.first_asymmetry(indptr, idx, ewgt)
    if code == csrcheck.ASYMMETRIC:
        raise GraphError(f"edge ({u}, {v}) has no reverse edge ({v}, {u}): adjacency is not symmetric "
                         f"(use symmetrize=True)", vertex=int(u), neighbor=int(v), kind="asymmetric")
    if code == csrcheck.WEIGHT_MISMATCH:
        raise GraphError(f"edge ({u}, {v}) has weight {ewgt[k]} but ({v}, {u}) has weight {ewgt[p]}",
                         vertex=int(u), neighbor=int(v), kind="weight_mismatch")
    indices = idx if n >= INT32_MAX else idx.astype(np.int32)
    return indptr, indices, ewgt, vwgt
