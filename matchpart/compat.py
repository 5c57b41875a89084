"""The call shapes METIS users already have, with matchpart's partitioner behind them.

- ``part_graph(nparts, adjacency=None, xadj=None, adjncy=None, ...)`` as pymetis: returns
  ``(edge_cuts, parts)`` (a named tuple ``GraphPartition``; ``parts`` an ``array('q')``).
- ``nx_partition(G, nparts, ...)`` as nxmetis's ``partition``: returns
  ``(objval, [[nodes of block 0], [nodes of block 1], ...])``.
- ``nested_dissection(adjacency=None, xadj=None, adjncy=None, ...)`` as pymetis: returns
  ``(perm, iperm)`` (two ``array('q')``), a fill-reducing ordering (matchpart.order).
- ``csr_graph(rowptr, col, value=None)``: a Graph from CSR arrays of any library that speaks
  DLPack or ``__cuda_array_interface__`` (CuPy, PyTorch, JAX, NumPy); arrays on a GPU stay there.

METIS options without a matchpart equivalent raise ``UnsupportedOptionError`` (kind
"unsupported") rather than being ignored; options left at METIS's default (-1) are fine.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .errors import GraphError, UnsupportedOptionError

# METIS option names, as pymetis.Options and nxmetis.MetisOptions spell them (-1 = default).
METIS_OPTIONS = ("ptype", "objtype", "ctype", "iptype", "rtype", "dbglvl", "niter", "ncuts", "seed", "no2hop",
                 "minconn", "contig", "compress", "ccorder", "pfactor", "nseps", "ufactor", "numbering")
# METIS objective types (METIS_OBJTYPE_CUT, METIS_OBJTYPE_VOL) -> partition(objtype=...).
OBJTYPES = {0: "cut", 1: "vol"}
# METIS coarsening types -> matchpart matchers: RM (random matching), SHEM (sorted heavy-edge).
CTYPE_MATCHERS = {0: "random", 1: "heavy_edge"}
# DLPack device types whose memory a CPU cannot read directly: CUDA, CUDA host-pinned is readable
# but DLPack consumers treat it as a CUDA device, CUDA managed.
DLPACK_CUDA = (2, 3, 13)


class GraphPartition(NamedTuple):
    """What pymetis.part_graph returns: the cut edge weight and the block of each vertex."""
    edge_cuts: int
    vertex_part: Any


@dataclass(frozen=True)
class CSRAdjacency:
    """pymetis's CSR input: vertex i's neighbours are ``adjacent[adj_starts[i]:adj_starts[i + 1]]``.
    (pymetis's own CSRAdjacency works too.)"""
    adj_starts: Any
    adjacent: Any


def part_graph(nparts, adjacency=None, xadj=None, adjncy=None, vweights=None, eweights=None, tpwgts=None,
               recursive=None, contiguous=None, options=None, *, device="auto", preset="default",
               matcher=None):
    """Partition a graph given as pymetis takes it; returns ``GraphPartition(edge_cuts, vertex_part)``.

    ``adjacency``: a list (or dict, or any sequence) of neighbour lists, or a CSRAdjacency;
    or ``xadj``/``adjncy`` CSR arrays (also CuPy/PyTorch arrays). ``vweights``/``eweights``:
    vertex and edge weights; ``tpwgts``: the fraction of the total weight for each block.
    ``vweights`` may hold ncon weights per vertex, flattened vertex by vertex as pymetis passes
    them to METIS (n * ncon entries), or as an (n, ncon) array; every constraint then gets the
    tolerance ufactor / 1000. ``options``: a pymetis.Options or a dict of METIS options; supported: ``seed``,
    ``ufactor`` (imbalance eps = ufactor / 1000; METIS's default 30 is matchpart's 0.03),
    ``ctype`` (0 random matching, 1 heavy edge), ``numbering`` 0, ``objtype`` 0 (edge cut) or
    1 (total communication volume: the first element returned is then the volume, as METIS's
    objval and pymetis's ``edge_cuts`` are), ``ptype`` 1 (k-way), ``contig`` 0 or 1, ``dbglvl``
    0. ``contiguous=True`` (or contig 1): connected blocks (see matchpart.partition).
    ``recursive=True`` (recursive bisection) is not supported and says so.
    """
    from .pipeline import partition
    if recursive:
        raise UnsupportedOptionError("recursive=True: matchpart partitions k-way (multilevel, with recursive "
                                     "bisection only on the coarsest graph); pass recursive=None or False",
                                     "recursive")
    opts = _metis_options(options)
    graph = _graph_from_pymetis_input(adjacency, xadj, adjncy, vweights, eweights)
    kwargs = {"seed": opts.get("seed", 0), "eps": opts.get("ufactor", 30) / 1000.0, "device": device,
              "preset": preset, "contiguous": bool(contiguous) or bool(opts.get("contig", 0))}
    if "ctype" in opts or matcher is not None:
        kwargs["matcher"] = matcher or CTYPE_MATCHERS[opts["ctype"]]
    if tpwgts is not None:
        kwargs["target_weights"] = list(tpwgts)
    kwargs["objtype"] = OBJTYPES[opts.get("objtype", 0)]
    if nparts == 1 or graph.n == 0:
        return GraphPartition(0, array("q", bytes(8 * graph.n)))
    res = partition(graph, nparts, **kwargs)
    parts = array("q")
    parts.frombytes(np.ascontiguousarray(res.parts, dtype=np.int64).tobytes())
    return GraphPartition(res.volume if res.objtype == "vol" else res.cut, parts)


class MeshPartition(NamedTuple):
    """pymetis's mesh result: (edge_cuts, element_part, vertex_part)."""
    edge_cuts: int
    element_part: Any
    vertex_part: Any


def part_mesh(n_parts, connectivity, options=None, tpwgts=None, gtype=None, ncommon=1, *, preset="default"):
    """Partition a mesh as pymetis.part_mesh does: ``connectivity`` lists each element's node
    ids (0-based); ``gtype`` "dual" or "nodal", or pymetis.GType.DUAL / NODAL (METIS's 0 / 1;
    None: nodal, as pymetis); ``ncommon``: nodes two elements share to be adjacent in the dual graph;
    ``tpwgts`` and ``options`` as in ``part_graph``. Returns
    ``MeshPartition(edge_cuts, element_part, vertex_part)`` (lists, as pymetis)."""
    from .mesh import element_arrays, part_mesh as _part_mesh
    opts = _metis_options(options)
    kind = _gtype(gtype)
    eptr, eind, nn = element_arrays(connectivity)
    if n_parts == 1 or eptr.shape[0] == 1:
        return MeshPartition(0, [0] * (eptr.shape[0] - 1), [0] * nn)
    kwargs = {"seed": opts.get("seed", 0), "eps": opts.get("ufactor", 30) / 1000.0, "preset": preset}
    if tpwgts is not None and len(tpwgts):
        kwargs["target_weights"] = list(tpwgts)
    r = _part_mesh(eind, n_parts, eptr=eptr, n_nodes=nn, gtype=kind, ncommon=ncommon, **kwargs)
    return MeshPartition(r.edge_cut, r.element_parts.tolist(), r.node_parts.tolist())


def _gtype(gtype):
    if gtype is None:
        return "nodal"
    if isinstance(gtype, (int, np.integer)) and not isinstance(gtype, bool) and int(gtype) in (0, 1):
        return ("dual", "nodal")[int(gtype)]        # METIS_GTYPE_DUAL = 0, METIS_GTYPE_NODAL = 1
    if isinstance(gtype, str) and gtype.lower() in ("dual", "nodal"):
        return gtype.lower()
    raise ValueError(f"gtype must be 'dual', 'nodal' or pymetis.GType.DUAL / NODAL, got {gtype!r}")


def nx_partition(G, nparts, node_weight="weight", node_size="size", edge_weight="weight", tpwgts=None,
                 ubvec=None, options=None, recursive=False, *, device="auto", preset="default"):
    """Partition a networkx graph as nxmetis.partition does; returns ``(objval, parts)`` with
    ``parts[i]`` the list of nodes in block i (in G's node order) and ``objval`` the edge cut.

    ``node_weight``/``edge_weight`` name attributes (missing -> 1; a node weight may be a list
    of ncon weights, as nxmetis takes them); ``ubvec=[1.05]`` allows 5% imbalance (one entry
    per constraint); ``tpwgts`` and ``options`` as in ``part_graph``. ``node_size`` names the
    attribute of the vertex sizes (missing -> 1) of METIS's volume objective (``objtype`` 1 in
    ``options``; ``objval`` is then the total communication volume).
    """
    from .pipeline import partition
    if recursive:
        raise UnsupportedOptionError("recursive=True: matchpart partitions k-way; pass recursive=False",
                                     "recursive")
    opts = _metis_options(options)
    eps = opts.get("ufactor", 30) / 1000.0
    if ubvec is not None:        # one tolerance per constraint (node weights given as lists)
        ub = [float(x) - 1.0 for x in ubvec]
        eps = ub[0] if len(ub) == 1 else ub
    nodes = list(G.nodes)
    if nparts == 1 or not nodes:
        return 0, [nodes] + [[] for _ in range(max(nparts, 1) - 1)]
    kwargs = {"seed": opts.get("seed", 0), "eps": eps, "device": device, "preset": preset,
              "edge_weight": edge_weight, "node_weight": node_weight}
    if "ctype" in opts:
        kwargs["matcher"] = CTYPE_MATCHERS[opts["ctype"]]
    if tpwgts is not None:
        kwargs["target_weights"] = list(tpwgts)
    if opts.get("objtype", 0) == 1:
        kwargs["objtype"] = "vol"
        kwargs["vsize"] = [G.nodes[node].get(node_size, 1) for node in nodes]
    res = partition(G, nparts, **kwargs)
    blocks = [[] for _ in range(nparts)]
    for node, b in zip(nodes, res.parts.tolist()):
        blocks[b].append(node)
    return (res.volume if res.objtype == "vol" else res.cut), blocks


def nested_dissection(adjacency=None, xadj=None, adjncy=None, vweights=None, options=None, *, device="auto",
                      matcher=None):
    """A fill-reducing ordering as pymetis.nested_dissection computes it; returns ``(perm, iperm)``
    (two ``array('q')``): perm[i] is the vertex numbered i, iperm[v] the number of vertex v.

    Input as in ``part_graph`` (neighbour lists, a CSRAdjacency, or xadj/adjncy).
    ``vweights`` weigh the vertices for the separators' balance. ``options``: ``seed`` and
    ``ufactor`` (each separator side at most (1 + ufactor / 1000) / 2 of its piece; without it
    matchpart.order's default, 300, where METIS's is 200) are honoured, ``numbering`` 0 and
    ``dbglvl`` 0 accepted.
    """
    from .order.nested import ORDER_EPS, order
    opts = _metis_options(options)
    graph = _graph_from_pymetis_input(adjacency, xadj, adjncy, vweights, None)
    kwargs = {"seed": opts.get("seed", 0), "eps": opts.get("ufactor", round(1000 * ORDER_EPS)) / 1000.0,
              "device": device}
    if matcher is not None:
        kwargs["matcher"] = matcher
    perm, iperm = order(graph, **kwargs)
    out = []
    for a in (perm, iperm):
        arr = array("q")
        arr.frombytes(np.ascontiguousarray(a, dtype=np.int64).tobytes())
        out.append(arr)
    return tuple(out)


# ---- inputs ----------------------------------------------------------------------------------
def _graph_from_pymetis_input(adjacency, xadj, adjncy, vweights, eweights):
    if adjacency is not None:
        if xadj is not None or adjncy is not None:
            raise TypeError("may not pass xadj/adjncy if adjacency is passed")  # as pymetis
        if hasattr(adjacency, "adj_starts") and hasattr(adjacency, "adjacent"):
            xadj, adjncy = adjacency.adj_starts, adjacency.adjacent
        else:
            xadj, adjncy = _csr_from_lists(adjacency)
    elif xadj is None or adjncy is None:
        raise TypeError("must pass xadj and adjncy if adjacency is not passed")  # as pymetis
    xadj = _array(xadj)
    return csr_graph(xadj, adjncy, eweights, _constraint_columns(vweights, int(xadj.shape[0]) - 1))


def _constraint_columns(vweights, n):
    """pymetis's vertex weights: n values, or n * ncon flattened vertex by vertex (METIS's vwgt
    with ncon constraints) -> an (n, ncon) array; an (n, ncon) array is taken as it is."""
    if vweights is None:
        return None
    w = _array(vweights)
    if w.ndim != 1 or n == 0 or w.shape[0] == n:
        return w
    if w.shape[0] % n:
        raise GraphError(f"vweights has {w.shape[0]} entries: expected n = {n} or n * ncon (ncon weights per "
                         "vertex, vertex by vertex)", kind="size")
    return w.reshape(n, w.shape[0] // n)


def _csr_from_lists(adjacency):
    """CSR arrays from a sequence (or {vertex: neighbours} dict) of neighbour lists, as pymetis
    reads them: ``len(adjacency)`` vertices, ``adjacency[i]`` the neighbours of i."""
    n = len(adjacency)
    rows = [np.asarray(list(adjacency[i]), dtype=np.int64).reshape(-1) for i in range(n)]
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([r.shape[0] for r in rows], out=xadj[1:])
    adjncy = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    return xadj, adjncy


def csr_graph(rowptr, col, value=None, vweights=None):
    """A Graph from CSR arrays (``rowptr`` n+1 offsets, ``col`` neighbours, ``value`` edge
    weights) of NumPy, CuPy, PyTorch or any array library with DLPack or
    ``__cuda_array_interface__``.

    Arrays on a CUDA device give a graph on the GPU backend without a round trip: the checks
    (symmetry, ranges, self-loops) read a host copy, the graph keeps the device arrays.
    """
    from .graph import Graph
    arrays = [_array(a) for a in (rowptr, col, value, vweights)]
    on_gpu = [a is not None and not isinstance(a, np.ndarray) for a in arrays]
    if not any(on_gpu):
        return Graph(*arrays)
    from . import backend
    be = backend.get("gpu")
    host = [be.to_host(a) for a in arrays]
    checked = Graph(*host)  # raises GraphError on bad input, with the same messages as on the CPU
    if not np.array_equal(be.to_host(checked.indices), host[1]):
        return checked.to(be)  # rows were not sorted: the checked (sorted) copy goes to the device
    xp = be.xp

    def device(a, like):
        return xp.ones(like.shape[0], dtype=like.dtype) if a is None else xp.asarray(a).astype(like.dtype, copy=False)
    return Graph._trusted(device(arrays[0], checked.indptr), device(arrays[1], checked.indices),
                          device(arrays[2], checked.ewgt), device(arrays[3], checked.vwgt), be)


def _array(x):
    """A NumPy array, or the device array itself when ``x`` lives on a CUDA device."""
    if x is None or isinstance(x, np.ndarray):
        return x
    if _on_cuda(x):
        from . import backend
        xp = backend.get("gpu").xp  # a clear DeviceError when CuPy or a GPU is missing
        return xp.asarray(x) if hasattr(x, "__cuda_array_interface__") else xp.from_dlpack(x)
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x)  # zero-copy from a CPU tensor (PyTorch, JAX, ...)
    return np.asarray(x)


def _on_cuda(x):
    if hasattr(x, "__cuda_array_interface__"):
        return True
    if hasattr(x, "__dlpack_device__"):
        return int(x.__dlpack_device__()[0]) in DLPACK_CUDA
    return False


# ---- options ---------------------------------------------------------------------------------
# option -> the values matchpart can honour (None: any value)
_SUPPORTED = {"seed": None, "ufactor": None, "ctype": tuple(CTYPE_MATCHERS), "numbering": (0,),
              "objtype": tuple(OBJTYPES), "ptype": (1,), "contig": (0, 1), "dbglvl": (0,)}
_WHY = {"objtype": "objtype is 0 (edge cut) or 1 (total communication volume)",
        "ptype": "matchpart partitions k-way (ptype 1), not by recursive bisection",
        "ctype": "ctype 0 (random matching) and 1 (heavy edge) map to matchpart matchers; pass matcher=... "
                 "for others",
        "contig": "contig is 0 or 1",
        "dbglvl": "matchpart has no METIS debug output",
        "numbering": "pass 0-based vertex ids (as pymetis requires)"}


def _metis_options(options):
    """{name: value} of the METIS options set to something other than the default (-1)."""
    if options is None:
        return {}
    if isinstance(options, dict):
        items = dict(options)
        unknown = sorted(set(items) - set(METIS_OPTIONS))
        if unknown:
            raise UnsupportedOptionError(f"unknown METIS option {unknown[0]!r}; METIS options are "
                                         f"{', '.join(METIS_OPTIONS)}", unknown[0])
    else:  # pymetis.Options / nxmetis.MetisOptions: attributes named like METIS's options
        items = {name: getattr(options, name, -1) for name in METIS_OPTIONS}
    opts = {}
    for name, value in items.items():
        if value is None or value == -1:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise GraphError(f"METIS option {name} must be an integer, got {value!r}")
        if name not in _SUPPORTED:
            raise UnsupportedOptionError(f"METIS option {name}={value} has no matchpart equivalent", name)
        allowed = _SUPPORTED[name]
        if allowed is not None and value not in allowed:
            raise UnsupportedOptionError(f"METIS option {name}={value} is not supported: {_WHY.get(name, '')}",
                                         name)
        opts[name] = int(value)
    if opts.get("ufactor", 0) < 0:
        raise GraphError(f"METIS option ufactor must be >= 0, got {opts['ufactor']}")
    return opts
