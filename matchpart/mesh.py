"""Meshes: elements (lists of node ids) become the dual or the nodal graph; ``part_mesh``
partitions one of them and induces the other partition, as METIS_PartMeshDual / Nodal do.

Dual graph: a vertex per element, an edge between two elements that share at least
``ncommon`` nodes (2 for triangles and quadrilaterals sharing a side, 3 for tetrahedra
sharing a face, 4 for hexahedra). Nodal graph: a vertex per node, an edge between two
nodes of a common element. Both are built as a sparse product of the element-node
incidence matrix with its transpose (SciPy), which counts the shared nodes of every pair.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .errors import GraphError, UnsupportedOptionError
from .graph import Graph

GTYPES = ("dual", "nodal")


class MeshPartition(NamedTuple):
    """What ``part_mesh`` returns (pymetis's field order): the edge cut of the partitioned
    graph (dual or nodal), the block of each element and the block of each node."""

    edge_cut: int
    element_parts: np.ndarray
    node_parts: np.ndarray


def element_arrays(elements, n_nodes=None, eptr=None):
    """(eptr, eind, n_nodes) of a mesh given as a sequence of node-id sequences (elements of
    any sizes), a 2-D integer array (one row per element), or METIS's flat form: ``elements``
    = eind, the node ids of all elements one after another, with their offsets ``eptr``.
    Node ids are 0-based; n_nodes defaults to the largest id + 1."""
    if eptr is not None:
        eptr, eind = np.asarray(eptr), np.asarray(elements).reshape(-1)
        if eptr.ndim != 1 or (eptr.size and eptr.dtype.kind not in "iu"):
            raise GraphError("eptr must be a 1-D array of integer offsets", kind="size")
    elif isinstance(elements, np.ndarray) and elements.ndim == 2:
        eind = elements.reshape(-1)
        eptr = np.arange(elements.shape[0] + 1, dtype=np.int64) * elements.shape[1]
    else:
        rows = [np.asarray(e).reshape(-1) for e in elements]
        rows = [r if r.size else r.astype(np.int64) for r in rows]   # [] is float to numpy
        eptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([r.shape[0] for r in rows], out=eptr[1:])
        eind = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    if eind.size and eind.dtype.kind not in "iu":
        raise GraphError(f"element node ids must be integers, got dtype {eind.dtype}", kind="parse")
    eptr, eind = eptr.astype(np.int64), eind.astype(np.int64)
    if eptr.shape[0] == 0 or eptr[0] != 0 or (np.diff(eptr) < 0).any() or eptr[-1] != eind.shape[0]:
        raise GraphError("element offsets must start at 0, never decrease and end at the number of node ids",
                         kind="size")
    empty = np.flatnonzero(np.diff(eptr) == 0)
    if empty.shape[0]:
        raise GraphError(f"element {int(empty[0])} has no nodes", int(empty[0]), kind="size")
    if eind.size and eind.min() < 0:
        e = int(np.searchsorted(eptr, int(np.argmin(eind)), side="right") - 1)
        raise GraphError(f"element {e} has a negative node id", e, kind="out_of_range")
    top = int(eind.max()) + 1 if eind.size else 0
    if n_nodes is None:
        n_nodes = top
    elif top > n_nodes:
        raise GraphError(f"a node id is {top - 1}, but the mesh has {n_nodes} nodes", kind="out_of_range")
    return eptr, eind, int(n_nodes)


def _incidence(eptr, eind, n_nodes):
    """Element x node 0/1 matrix (a node listed twice in one element counts once)."""
    ne = eptr.shape[0] - 1
    rows = np.repeat(np.arange(ne, dtype=np.int64), np.diff(eptr))
    a = sp.csr_matrix((np.ones(eind.shape[0], dtype=np.int64), (rows, eind)), shape=(ne, n_nodes))
    a.sum_duplicates()
    a.data[:] = 1
    return a


def _graph_from_counts(c, keep_at_least, vwgt=None):
    """The graph of the off-diagonal entries of the symmetric count matrix ``c`` that are at
    least ``keep_at_least`` (edge weight 1, as METIS's mesh graphs)."""
    c = sp.csr_matrix(c)
    c.setdiag(0)
    c.data = (c.data >= keep_at_least).astype(np.int64)
    c.eliminate_zeros()
    c.sort_indices()
    return Graph(c.indptr.astype(np.int64), c.indices.astype(np.int32), ewgt=np.ones(c.nnz, dtype=np.int64),
                 vwgt=vwgt)


def dual_graph(elements, ncommon=1, *, element_weights=None, n_nodes=None, eptr=None):
    """The dual graph: a vertex per element (weight ``element_weights``, default 1), an edge
    of weight 1 between elements sharing at least ``ncommon`` nodes. ``elements``, ``eptr``
    and ``n_nodes`` as element_arrays takes them."""
    ncommon = _ncommon(ncommon)
    eptr, eind, nn = element_arrays(elements, n_nodes, eptr)
    a = _incidence(eptr, eind, nn)
    return _graph_from_counts(a @ a.T, ncommon, _weights(element_weights, eptr.shape[0] - 1))


def nodal_graph(elements, *, n_nodes=None, eptr=None):
    """The nodal graph: a vertex per node, an edge of weight 1 between nodes of a common
    element (every pair of an element's nodes, for every element type)."""
    eptr, eind, nn = element_arrays(elements, n_nodes, eptr)
    a = _incidence(eptr, eind, nn)
    return _graph_from_counts(a.T @ a, 1)


def part_mesh(elements, k, *, gtype="dual", ncommon=1, element_weights=None, n_nodes=None, eptr=None, **options):
    """Partition a mesh into ``k`` blocks: the elements through the dual graph (``gtype="dual"``,
    METIS_PartMeshDual), or the nodes through the nodal graph (``"nodal"``, METIS_PartMeshNodal).
    The other entity follows: a node takes the block most of its elements have, an element
    the block most of its nodes have (ties: the smaller block). ``options`` go to
    ``matchpart.partition`` (eps, seed, preset, matcher, threads, ...). Returns a
    MeshPartition (edge_cut of the partitioned graph, element_parts, node_parts)."""
    from .pipeline import partition
    if gtype not in GTYPES:
        raise ValueError(f"gtype must be one of {', '.join(GTYPES)}, got {gtype!r}")
    eptr, eind, nn = element_arrays(elements, n_nodes, eptr)
    a = _incidence(eptr, eind, nn)
    if gtype == "dual":
        g = _graph_from_counts(a @ a.T, _ncommon(ncommon), _weights(element_weights, eptr.shape[0] - 1))
        result = partition(g, k, **options)
        eparts = np.asarray(result.parts, dtype=np.int64)
        nparts = _majority(a.T.tocsr(), eparts, k)
    else:
        if element_weights is not None:
            raise UnsupportedOptionError("element weights need gtype='dual' (the nodal graph weighs nodes)",
                                         option="element_weights")
        g = _graph_from_counts(a.T @ a, 1)
        result = partition(g, k, **options)
        nparts = np.asarray(result.parts, dtype=np.int64)
        eparts = _majority(a, nparts, k)
    return MeshPartition(int(result.cut), eparts, nparts)


def _majority(incidence, parts, k):
    """For each row of the 0/1 ``incidence`` (rows x items), the block most of its items are
    in (ties: the smaller block); -1 for a row without items (an unused node id)."""
    rows = incidence.shape[0]
    counts = sp.csr_matrix((incidence.data, parts[incidence.indices], incidence.indptr), shape=(rows, k))
    counts.sum_duplicates()
    dense_max = np.asarray(counts.max(axis=1).todense()).reshape(-1)
    out = np.full(rows, -1, dtype=np.int64)
    has = dense_max > 0
    # the first block reaching the row's maximum: argmax over the row's (sorted) blocks
    counts.sort_indices()
    row_of = np.repeat(np.arange(rows), np.diff(counts.indptr))
    at_max = counts.data == dense_max[row_of]
    first = np.full(rows, k, dtype=np.int64)
    np.minimum.at(first, row_of[at_max], counts.indices[at_max])
    out[has] = first[has]
    return out


def _ncommon(ncommon):
    if isinstance(ncommon, bool) or not isinstance(ncommon, (int, np.integer)) or ncommon < 1:
        raise ValueError(f"ncommon must be a positive integer, got {ncommon!r}")
    return int(ncommon)


def _weights(values, n):
    if values is None:
        return None
    w = np.asarray(values)
    if w.ndim == 2 and w.shape[0] == n and w.shape[1] > 1:
        raise UnsupportedOptionError("several weights per element (ncon > 1) are not supported yet", option="ncon")
    w = w.reshape(-1)
    if w.shape[0] != n or (w.size and w.dtype.kind not in "iuf"):
        raise GraphError(f"element_weights must hold one number per element ({n}), got shape {np.shape(values)}",
                         kind="size")
    return w
