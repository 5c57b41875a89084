"""matchpart.compat: pymetis's and nxmetis's call shapes, CSR arrays through DLPack / CUDA."""
import warnings

import networkx as nx
import numpy as np
import pytest

from matchpart import compat
from matchpart.errors import UnsupportedOptionError
from matchpart.io import load_graph

G = nx.convert_node_labels_to_integers(nx.les_miserables_graph())
N = G.number_of_nodes()
ADJ = [sorted(G[v]) for v in range(N)]


def csr(adj):
    xadj = np.concatenate([[0], np.cumsum([len(a) for a in adj])])
    return xadj, np.concatenate([np.asarray(a, dtype=np.int64) for a in adj])


def cut_of(adj, parts, eweights=None):
    xadj, adjncy = csr(adj)
    w = np.ones(len(adjncy), dtype=np.int64) if eweights is None else np.asarray(eweights)
    rows = np.repeat(np.arange(len(adj)), np.diff(xadj))
    return int(w[np.asarray(parts)[rows] != np.asarray(parts)[adjncy]].sum()) // 2


def same_shape(ours, theirs, nparts):
    assert type(ours).__name__ == type(theirs).__name__ == "GraphPartition"
    assert ours._fields == theirs._fields == ("edge_cuts", "vertex_part")
    cuts, parts = ours  # unpacks as a pair, as pymetis users write it
    assert isinstance(cuts, int) and type(parts) is type(theirs.vertex_part)
    assert len(parts) == len(theirs.vertex_part) and set(parts) <= set(range(nparts))


@pytest.fixture
def pymetis():
    """The real pymetis, to compare with (the test extra brings it); only its tests skip without it."""
    return pytest.importorskip("pymetis")


@pytest.fixture
def partition_options(monkeypatch):
    """The keyword arguments of each matchpart.pipeline.partition call, where compat forwards
    the options it was given."""
    from matchpart import pipeline
    calls, real = [], pipeline.partition

    def spy(graph, k, **kwargs):
        calls.append(kwargs)
        return real(graph, k, **kwargs)
    monkeypatch.setattr(pipeline, "partition", spy)
    return calls


def pymetis_call(pymetis, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pymetis deprecates xadj/adjncy
        return pymetis.part_graph(*args, **kwargs)


@pytest.mark.parametrize("make", [lambda cls: {"adjacency": ADJ},
                                  lambda cls: {"adjacency": dict(enumerate(ADJ))},
                                  lambda cls: {"adjacency": cls(*csr(ADJ))},
                                  lambda cls: dict(zip(("xadj", "adjncy"), csr(ADJ)))],
                         ids=["lists", "dict", "csr", "xadj"])
def test_part_graph_matches_pymetis_shapes(make, pymetis):
    ours = compat.part_graph(4, **make(compat.CSRAdjacency))
    theirs = pymetis_call(pymetis, 4, **make(pymetis.CSRAdjacency))
    assert compat.part_graph(4, **make(pymetis.CSRAdjacency)) == ours  # pymetis's own CSRAdjacency too
    same_shape(ours, theirs, 4)
    assert ours.edge_cuts == cut_of(ADJ, ours.vertex_part)
    assert np.bincount(ours.vertex_part, minlength=4).max() <= 1.03 * np.ceil(N / 4)


def test_part_graph_weights_and_targets(pymetis):
    xadj, adjncy = csr(ADJ)
    ew = np.array([1 + (u + v) % 5 for u, row in enumerate(ADJ) for v in row])  # symmetric weights
    vw = np.arange(N) % 3 + 1
    ours = compat.part_graph(3, xadj=xadj, adjncy=adjncy, vweights=vw, eweights=ew)
    same_shape(ours, pymetis_call(pymetis, 3, xadj=xadj, adjncy=adjncy, vweights=vw, eweights=ew), 3)
    assert ours.edge_cuts == cut_of(ADJ, ours.vertex_part, ew)
    targets = [0.5, 0.25, 0.25]
    cuts, parts = compat.part_graph(3, adjacency=ADJ, vweights=vw, tpwgts=targets)
    weights = np.bincount(parts, weights=vw, minlength=3)
    assert (weights <= np.floor(1.03 * np.ceil(np.array(targets) * vw.sum()))).all()
    cuts, parts = compat.part_graph(1, adjacency=ADJ)
    assert cuts == 0 and list(parts) == [0] * N


def test_options_are_honoured_or_refused(partition_options):
    cuts, parts = compat.part_graph(4, adjacency=ADJ, options={"seed": 3, "ufactor": 100, "ctype": 1})
    assert np.bincount(parts).max() <= 1.1 * np.ceil(N / 4)  # ufactor 100: eps 0.1
    assert cuts == cut_of(ADJ, parts)
    assert partition_options[-1]["seed"] == 3 and partition_options[-1]["eps"] == 0.1
    assert partition_options[-1]["matcher"] == compat.CTYPE_MATCHERS[1]
    cuts, parts = compat.part_graph(4, adjacency=ADJ, options={"seed": 3})   # no ctype: the default matcher
    assert cuts == cut_of(ADJ, parts) and np.bincount(parts).max() <= np.floor(1.03 * np.ceil(N / 4))
    assert partition_options[-1]["eps"] == 0.03 and "matcher" not in partition_options[-1]
    for options in [{"niter": 20}, {"objtype": 2}, {"ptype": 0}, {"numbering": 1}, {"no_such": 1}]:
        with pytest.raises(UnsupportedOptionError) as info:
            compat.part_graph(2, adjacency=ADJ, options=options)
        assert info.value.kind == "unsupported" and info.value.option == next(iter(options))
    with pytest.raises(UnsupportedOptionError, match="recursive"):
        compat.part_graph(2, adjacency=ADJ, recursive=True)
    for kwargs in ({"contiguous": True}, {"options": {"contig": 1}}):
        compat.part_graph(2, adjacency=ADJ, **kwargs)
        assert partition_options[-1]["contiguous"] is True
    with pytest.raises(TypeError):
        compat.part_graph(2, adjacency=ADJ, xadj=csr(ADJ)[0])  # as pymetis: one input only


def test_pymetis_options_object(pymetis, partition_options):
    opts = pymetis.Options()
    opts.seed, opts.ufactor, opts.ctype = 3, 100, 1
    cuts, parts = compat.part_graph(4, adjacency=ADJ, options=opts)
    assert cuts == cut_of(ADJ, parts) and np.bincount(parts).max() <= 1.1 * np.ceil(N / 4)
    assert partition_options[-1]["seed"] == 3 and partition_options[-1]["eps"] == 0.1
    assert partition_options[-1]["matcher"] == compat.CTYPE_MATCHERS[1]


def test_nx_partition_shape(partition_options):
    H = nx.les_miserables_graph()  # string labels, weighted edges
    objval, parts = compat.nx_partition(H, 3)
    assert len(parts) == 3 and sorted(v for p in parts for v in p) == sorted(H.nodes)
    block = {v: i for i, p in enumerate(parts) for v in p}
    assert objval == sum(d["weight"] for u, v, d in H.edges(data=True) if block[u] != block[v])
    unweighted, parts = compat.nx_partition(H, 3, edge_weight=None)
    block = {v: i for i, p in enumerate(parts) for v in p}
    assert unweighted == sum(block[u] != block[v] for u, v in H.edges)
    # ubvec [1.2]: 20% imbalance allowed, within the target weights' shares of the 77 nodes
    targets = [0.7, 0.3]
    objval, parts = compat.nx_partition(H, 2, ubvec=[1.2], tpwgts=targets)
    assert partition_options[-1]["eps"] == pytest.approx(0.2) and partition_options[-1]["target_weights"] == targets
    sizes = np.array([len(p) for p in parts])
    assert sizes.sum() == H.number_of_nodes() and sizes[0] > sizes[1]
    assert (sizes <= np.floor(1.2 * np.ceil(np.array(targets) * H.number_of_nodes()))).all()
    with pytest.raises(ValueError, match="2 values"):      # two tolerances, one weight per node
        compat.nx_partition(H, 2, ubvec=[1.1, 1.1])


class DLPackOnly:
    """An array of some other library, seen only through the DLPack protocol (on the CPU)."""

    def __init__(self, a):
        self._a = np.ascontiguousarray(a)

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_csr_arrays_through_dlpack():
    g = load_graph("delaunay:300")
    arrays = [DLPackOnly(a) for a in (g.indptr, g.indices, g.ewgt)]
    h = compat.csr_graph(*arrays)
    assert np.array_equal(h.indptr, g.indptr) and np.array_equal(h.indices, g.indices)
    cuts, parts = compat.part_graph(4, xadj=arrays[0], adjncy=arrays[1], eweights=arrays[2], device="cpu")
    assert cuts == compat.part_graph(4, xadj=g.indptr, adjncy=g.indices, device="cpu").edge_cuts


class OnCuda(DLPackOnly):
    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA


def test_cuda_arrays_need_a_gpu(monkeypatch):
    from matchpart.backend import core
    from matchpart.errors import DeviceError
    monkeypatch.setattr(core, "_cupy_or_reason", lambda: (None, "no CUDA here (test)"))
    with pytest.raises(DeviceError, match="GPU"):
        compat.csr_graph(OnCuda([0, 1, 2]), OnCuda([1, 0]))


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    g = load_graph("grid:6x6")
    h = compat.csr_graph(torch.from_numpy(g.indptr), torch.from_numpy(g.indices.astype(np.int64)))
    assert h.m == g.m and np.array_equal(h.indices, g.indices)


@pytest.mark.gpu
def test_device_arrays_stay_on_the_device():
    from matchpart import backend
    be = backend.get("gpu")
    g = load_graph("delaunay:300")
    rowptr, col = be.xp.asarray(g.indptr), be.xp.asarray(g.indices)
    h = compat.csr_graph(rowptr, col)
    assert h.device == "gpu" and bool((h.indices == col).all())  # on real CuPy, the caller's arrays themselves
    cuts, parts = compat.part_graph(4, xadj=rowptr, adjncy=col, device="gpu")
    assert cuts == cut_of([list(g.neighbors(v)) for v in range(g.n)], parts)
