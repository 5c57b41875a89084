"""Meshes: dual and nodal graphs against brute force, part_mesh's element and node partitions,
the METIS mesh file format, pymetis's part_mesh call shape and the partition-mesh command."""
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import compat, metrics
from matchpart.errors import GraphError, GraphFormatError, UnsupportedOptionError
from matchpart.io.metis_mesh import read_mesh, write_mesh
from matchpart.mesh import dual_graph, element_arrays, nodal_graph, part_mesh

ROOT = Path(__file__).resolve().parent.parent


@st.composite
def meshes(draw):
    nn = draw(st.integers(1, 12))
    ne = draw(st.integers(1, 10))
    return [draw(st.lists(st.integers(0, nn - 1), min_size=1, max_size=5, unique=True)) for _ in range(ne)]


def _edges(g):
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    return {(int(a), int(b)) for a, b in zip(rows, g.indices)}


@settings(max_examples=80, deadline=None)
@given(elements=meshes(), ncommon=st.integers(1, 4))
def test_dual_and_nodal_graphs_equal_brute_force(elements, ncommon):
    dual = dual_graph(elements, ncommon)
    expected = {(a, b) for a, b in itertools.permutations(range(len(elements)), 2)
                if len(set(elements[a]) & set(elements[b])) >= ncommon}
    assert dual.n == len(elements) and _edges(dual) == expected
    nodal = nodal_graph(elements)
    nn = max(max(e) for e in elements) + 1
    expected = {(a, b) for e in elements for a, b in itertools.permutations(e, 2)}
    assert nodal.n == nn and _edges(nodal) == expected
    assert (np.asarray(dual.ewgt) == 1).all() and (np.asarray(nodal.ewgt) == 1).all()


def _triangles(n, seed=0):
    from scipy.spatial import Delaunay
    return Delaunay(np.random.default_rng(seed).random((n, 2))).simplices


def _majority(incidence_lists, parts, k):
    out = []
    for items in incidence_lists:
        counts = np.bincount(parts[items], minlength=k) if len(items) else np.zeros(k, dtype=int)
        out.append(int(np.argmax(counts)) if len(items) else -1)
    return np.asarray(out)


@pytest.mark.parametrize("gtype", ["dual", "nodal"])
def test_part_mesh_partitions_one_graph_and_induces_the_other_by_majority(gtype):
    tri = _triangles(1500)
    k = 6
    r = part_mesh(tri, k, gtype=gtype, ncommon=2, seed=3)
    g = dual_graph(tri, 2) if gtype == "dual" else nodal_graph(tri)
    parts = r.element_parts if gtype == "dual" else r.node_parts
    assert r.edge_cut == metrics.edge_cut(g, parts) and metrics.is_balanced(g, parts, k, 0.03)
    nn = tri.max() + 1
    elements_of = [[] for _ in range(nn)]
    for e, nodes in enumerate(tri):
        for v in nodes:
            elements_of[v].append(e)
    if gtype == "dual":
        assert np.array_equal(r.node_parts, _majority(elements_of, r.element_parts, k))
    else:
        assert np.array_equal(r.element_parts, _majority(list(tri), r.node_parts, k))
    # the same mesh in METIS's flat form (eptr, eind) gives the same partition
    flat = part_mesh(tri.reshape(-1), k, eptr=np.arange(tri.shape[0] + 1) * 3, gtype=gtype, ncommon=2, seed=3)
    assert np.array_equal(flat.element_parts, r.element_parts) and np.array_equal(flat.node_parts, r.node_parts)


def test_element_weights_are_the_dual_graphs_vertex_weights():
    tri = _triangles(800)
    w = np.random.default_rng(1).integers(1, 5, tri.shape[0])
    r = part_mesh(tri, 4, ncommon=2, element_weights=w)
    g = dual_graph(tri, 2, element_weights=w)
    assert np.array_equal(np.asarray(g.vwgt), w) and metrics.is_balanced(g, r.element_parts, 4, 0.03)
    with pytest.raises(UnsupportedOptionError):
        part_mesh(tri, 4, element_weights=np.ones((tri.shape[0], 2), dtype=int))
    with pytest.raises(UnsupportedOptionError):
        part_mesh(tri, 4, gtype="nodal", element_weights=w)


def test_bad_meshes_raise_graph_errors_with_a_kind():
    for bad, kind in (([[0, 1], []], "size"), ([[0, -1]], "out_of_range"), ([[0.5, 1.0]], "parse")):
        with pytest.raises(GraphError) as info:
            element_arrays(bad)
        assert info.value.kind == kind
    with pytest.raises(ValueError):
        dual_graph([[0, 1]], ncommon=0)
    with pytest.raises(ValueError):
        part_mesh([[0, 1, 2]], 2, gtype="edges")


def test_mesh_file_round_trip_with_weights_and_comments(tmp_path):
    tri = _triangles(200)
    eptr = np.arange(tri.shape[0] + 1) * 3
    w = np.random.default_rng(2).integers(0, 9, (tri.shape[0], 2))
    path = tmp_path / "m.mesh"
    write_mesh(path, eptr, tri.reshape(-1), w)
    lines = path.read_text().splitlines()
    path.write_text("% made by a test\n" + "\n".join(lines[:5] + ["% a comment"] + lines[5:]) + "\n\n")
    e2, i2, w2 = read_mesh(path)
    assert np.array_equal(e2, eptr) and np.array_equal(i2, tri.reshape(-1)) and np.array_equal(w2, w)
    # mixed element sizes (a quad among triangles), no weights
    path.write_text("2\n1 2 3\n2 3 4 5\n")
    e2, i2, w2 = read_mesh(path)
    assert e2.tolist() == [0, 3, 7] and i2.tolist() == [0, 1, 2, 1, 2, 3, 4] and w2 is None
    for text, kind in (("3\n1 2 3\n", "size"), ("1\n0 1 2\n", "out_of_range"), ("1\n1 2 z\n", "parse"),
                       ("a b\n", "parse"), ("", "parse")):
        path.write_text(text)
        with pytest.raises(GraphFormatError) as info:
            read_mesh(path)
        assert info.value.kind == kind


def test_compat_part_mesh_has_pymetis_shape():
    tri = _triangles(1000).tolist()
    for gtype in (None, "dual", "nodal"):
        r = compat.part_mesh(4, tri, gtype=gtype, ncommon=2)
        assert isinstance(r.element_part, list) and len(r.element_part) == len(tri)
        assert len(r.vertex_part) == 1000 and set(r.element_part) == set(range(4))
        assert r.edge_cuts == r[0]
    assert compat.part_mesh(1, tri).edge_cuts == 0
    pymetis = pytest.importorskip("pymetis")
    ours = compat.part_mesh(8, tri, gtype=pymetis.GType.DUAL, ncommon=2)
    theirs = pymetis.part_mesh(8, tri, gtype=pymetis.GType.DUAL, ncommon=2)
    assert len(ours.element_part) == len(theirs.element_part) and len(ours.vertex_part) == len(theirs.vertex_part)
    # the same objective on the same dual graph (pymetis reports 0 as the dual cut: recompute it)
    g = dual_graph(tri, 2)
    assert ours.edge_cuts == metrics.edge_cut(g, np.asarray(ours.element_part))
    assert ours.edge_cuts <= 1.1 * metrics.edge_cut(g, np.asarray(theirs.element_part))


def test_partition_mesh_command_writes_epart_and_npart(tmp_path):
    tri = _triangles(600)
    path = tmp_path / "d.mesh"
    write_mesh(path, np.arange(tri.shape[0] + 1) * 3, tri.reshape(-1))
    proc = subprocess.run([sys.executable, "-m", "matchpart", "partition-mesh", str(path), "4", "--ncommon", "2",
                           "--json"], capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    epart = np.loadtxt(f"{path}.epart.4", dtype=np.int64)
    npart = np.loadtxt(f"{path}.npart.4", dtype=np.int64)
    assert epart.shape == (tri.shape[0],) and npart.shape == (600,)
    assert report["cut"] == metrics.edge_cut(dual_graph(tri, 2), epart)
    proc = subprocess.run([sys.executable, "-m", "matchpart", "partition-mesh", str(tmp_path / "none.mesh"), "4"],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 1 and proc.stderr.count("error:") == 1 and "Traceback" not in proc.stderr


def test_top_level_names():
    assert matchpart.part_mesh is part_mesh and matchpart.dual_graph is dual_graph
