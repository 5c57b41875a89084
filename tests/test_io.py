"""Tests of matchpart.io: METIS, Matrix Market and edge list readers/writers, partition files, errors."""
import logging
import os

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from conftest import shared_graph, shared_graph_names
from matchpart.errors import GraphFormatError
from matchpart.graph import Graph
from matchpart.io import load_graph, read_partition, save_graph, write_partition


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def same(a, b):
    return (a.n == b.n and a.indptr.tolist() == b.indptr.tolist() and a.indices.tolist() == b.indices.tolist()
            and a.ewgt.tolist() == b.ewgt.tolist() and a.vwgt.tolist() == b.vwgt.tolist())


def weighted_example():
    # 0-1 (w 2), 1-2 (w 3), 0-2 (w 1), vertex 3 isolated; vertex weights 1..4
    return Graph.from_edges([0, 1, 0], [1, 2, 2], [2, 3, 1], n=4, vwgt=[1, 2, 3, 4])


# ---- METIS: reading -------------------------------------------------------------------------
def test_metis_fmt0_with_comments_and_isolated_vertex(tmp_path):
    p = write(tmp_path, "a.graph", "% a comment\n4 3\n2 3\n1 3\n% inside\n1 2\n\n")
    g = load_graph(p)
    assert (g.n, g.m) == (4, 3)
    assert g.degree.tolist() == [2, 2, 2, 0]


def test_metis_trailing_newline_is_not_a_vertex(tmp_path):
    g = load_graph(write(tmp_path, "a.graph", "2 1\n2\n1\n"))
    assert g.n == 2
    g = load_graph(write(tmp_path, "b.graph", "2 1\n2\n1"))  # no final newline at all
    assert g.n == 2
    g = load_graph(write(tmp_path, "c.graph", "3 1\n2\n1\n\n"))  # last vertex isolated
    assert g.n == 3 and g.degree.tolist() == [1, 1, 0]


@pytest.mark.parametrize("fmt,text,ewgt,vwgt", [
    ("1", "3 2 1\n2 5\n1 5 3 7\n2 7\n", [5, 5, 7, 7], [1, 1, 1]),
    ("10", "3 2 10\n4 2\n5 1 3\n6 2\n", [1, 1, 1, 1], [4, 5, 6]),
    ("11", "3 2 11\n4 2 5\n5 1 5 3 7\n6 2 7\n", [5, 5, 7, 7], [4, 5, 6]),
    ("011", "3 2 011 1\n4 2 5\n5 1 5 3 7\n6 2 7\n", [5, 5, 7, 7], [4, 5, 6]),
    ("100", "3 2 100\n9 2\n9 1 3\n9 2\n", [1, 1, 1, 1], [1, 1, 1]),
    ("111", "3 2 111\n9 4 2 5\n9 5 1 5 3 7\n9 6 2 7\n", [5, 5, 7, 7], [4, 5, 6]),
])
def test_metis_weighted_formats(tmp_path, fmt, text, ewgt, vwgt):
    g = load_graph(write(tmp_path, "w.graph", text))
    assert g.indices.tolist() == [1, 0, 2, 1]
    assert g.ewgt.tolist() == ewgt and g.vwgt.tolist() == vwgt


@pytest.mark.parametrize("name", shared_graph_names())
def test_every_shared_graph_loads_and_round_trips(tmp_path, name):
    p = shared_graph(name)
    g = load_graph(p)
    n, m = _header(p)[:2]
    assert (g.n, g.m) == (n, m)
    # independent reference: networkx reading the adjacency lines
    ref = _networkx_reference(p)
    assert g.m == ref.number_of_edges() and g.total_ewgt == ref.size(weight="weight")
    for out_name in ("x.graph", "x.mtx", "x.edges"):
        out = tmp_path / out_name
        save_graph(g, out)
        h = load_graph(out)
        if out_name == "x.graph":
            assert same(g, h)
        else:  # these formats do not store vertex weights
            assert h.n == g.n and h.indices.tolist() == g.indices.tolist() and h.ewgt.tolist() == g.ewgt.tolist()


def _header(p):
    for line in p.read_text().splitlines():
        if line.strip() and not line.startswith("%"):
            return [int(t) for t in line.split()]


def _networkx_reference(p):
    """Parse a METIS file with plain Python (slow, obviously correct) into networkx."""
    lines = [ln for ln in p.read_text().split("\n") if not ln.startswith("%")]
    head = [int(t) for t in lines[0].split()]
    n, fmt = head[0], (head[2] if len(head) > 2 else 0)
    ew, vw = fmt % 10 == 1, (fmt // 10) % 10 == 1
    G = nx.Graph()
    G.add_nodes_from(range(n))
    for v in range(n):
        toks = [int(t) for t in lines[1 + v].split()]
        if vw:
            toks = toks[1:]
        step = 2 if ew else 1
        for i in range(0, len(toks), step):
            G.add_edge(v, toks[i] - 1, weight=toks[i + 1] if ew else 1)
    return G


def test_4elt_size():
    g = load_graph(shared_graph("4elt.graph"))
    assert (g.n, g.m) == (15606, 45878)


def test_example_weighted_has_both_weights():
    g = load_graph(shared_graph("example_weighted.graph"))
    assert (g.n, g.m) == (132, 328)
    assert (g.vwgt != 1).any() and (g.ewgt != 1).any()
    assert (g.degree == 0).any()


# ---- METIS: writing -------------------------------------------------------------------------
@pytest.mark.parametrize("edge_w,vertex_w,fmt", [(False, False, None), (True, False, "1"),
                                                 (False, True, "10"), (True, True, "11")])
def test_metis_writer_chooses_fmt(tmp_path, edge_w, vertex_w, fmt):
    g = Graph.from_edges([0, 1, 0], [1, 2, 2], [2, 3, 1] if edge_w else None, n=4,
                         vwgt=[1, 2, 3, 4] if vertex_w else None)
    p = tmp_path / "g.graph"
    save_graph(g, p)
    header = p.read_text().splitlines()[0].split()
    assert header[:2] == ["4", "3"]
    assert (header[2] if len(header) > 2 else None) == fmt
    assert same(load_graph(p), g)
    assert len(p.read_text().split("\n")) == 4 + 2  # header + 4 vertex lines + final ''


def test_metis_writer_rejects_float_weights(tmp_path):
    g = Graph.from_edges([0], [1], [1.5])
    with pytest.raises(ValueError, match="integer weights"):
        save_graph(g, tmp_path / "g.graph")


# ---- METIS: malformed files -----------------------------------------------------------------
@pytest.mark.parametrize("text,line,words", [
    ("", 1, "empty"),
    ("% only a comment\n", 1, "empty"),
    ("3 2\n2\n1 3\n", 4, "ends after 2 vertex lines"),           # truncated
    ("3 2\n2\n1 4\n2\n", 3, "1..3"),                              # out of range
    ("3 2\n2\n0 3\n2\n", 3, "neighbour 0"),                       # 0 index
    ("3 2\n2\n1 x3\n2\n", 3, "'x3'"),                             # non-integer token
    ("3 2\n2\n1 3.5\n2\n", 3, "'3.5'"),
    ("3 2 1\n2 1\n1 1 3\n3 1\n", 3, "pairs"),                     # wrong weight count
    ("3 2 11\n1 2 1\n1 1\n1 2 1\n", 3, "vertex weight"),          # weight count with vertex weights
    ("3 5\n2\n1 3\n2\n", 1, "m=5"),                               # wrong m in header
    ("3 2 0 2\n2\n1 3\n2\n", 1, "ncon=2"),                        # ncon > 1 without vertex weights
    ("3 2 10 2\n1 2\n1 1 1 3\n1 1 2\n", 1, "m=2"),                 # ncon = 2: "1 2" is two weights, no neighbour
    ("3 2 12\n2\n1 3\n2\n", 1, "fmt 12"),
    ("3\n2\n1 3\n2\n", 1, "header"),
    ("3 2\n2\n1 3\n2\n1\n", 5, "more vertex lines"),
    ("3 2\n1\n2 3\n2\n", 2, "self-loop"),
    ("3 2 1\n2 0\n1 0 3 1\n2 1\n", 2, "positive"),
    ("3 2 1\n2 1\n1 2 3 1\n2 1\n", 2, "different weights"),
    ("3 3\n2 2\n1 1 3\n2\n", 2, "more than once"),
    ("3 2\n2\n1 3\n2 99999999999999999999\n", 4, "too large"),
])
def test_metis_errors_name_the_line(tmp_path, text, line, words):
    p = write(tmp_path, "bad.graph", text)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    msg = str(e.value)
    assert f"bad.graph:{line}:" in msg, msg
    assert words in msg, msg
    assert e.value.line == line


def test_metis_asymmetric_names_the_line_of_the_vertex_missing_the_reverse(tmp_path):
    # vertex 1 lists 3 but 3 does not list 1; vertex 3 lists 2 but 2 does not list 3
    p = write(tmp_path, "bad.graph", "% comment\n3 2\n2 3\n1\n2\n")
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    msg = str(e.value)
    assert "symmetric" in msg
    missing = {3: 5, 2: 4}  # vertex -> its file line
    v = int(msg.split("vertex ")[1].split()[0])
    assert v in missing and e.value.line == missing[v], msg
    p = write(tmp_path, "one.graph", "4 2\n2\n1\n4\n1\n")  # 4 lists 1 (1 lacks 4), 3 lists 4 (4 lacks 3)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    v = int(str(e.value).split("vertex ")[1].split()[0])
    assert {1: 2, 4: 5}[v] == e.value.line


def test_metis_repairs(tmp_path):
    p = write(tmp_path, "a.graph", "3 2\n2 3\n1\n\n")  # 1-3 listed only by vertex 1
    with pytest.raises(GraphFormatError):
        load_graph(p)
    g = load_graph(p, symmetrize=True)
    assert g.m == 2 and g.degree.tolist() == [2, 1, 1]
    p = write(tmp_path, "b.graph", "2 1\n1 2\n1\n")
    assert load_graph(p, drop_self_loops=True).m == 1
    p = write(tmp_path, "c.graph", "2 2 1\n2 1 2 2\n1 1 1 2\n")
    g = load_graph(p, merge_duplicates=True)
    assert g.m == 1 and g.total_ewgt == 3


# ---- Matrix Market ----------------------------------------------------------------------------
def test_mtx_symmetric_general_pattern(tmp_path):
    A = sp.csr_matrix(np.array([[4, -2, 0], [-2, 4, 3], [0, 3, 4]], dtype=float))
    scipy.io.mmwrite(tmp_path / "s.mtx", A, symmetry="symmetric")
    scipy.io.mmwrite(tmp_path / "g.mtx", A, symmetry="general")
    for name in ("s.mtx", "g.mtx"):
        g = load_graph(tmp_path / name)
        assert g.m == 2 and g.ewgt.tolist() == [2, 2, 3, 3]  # |values|, diagonal ignored
        assert g.ewgt.dtype == np.int64
    write(tmp_path, "p.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 2\n2 1\n3 2\n")
    assert load_graph(tmp_path / "p.mtx").ewgt.tolist() == [1, 1, 1, 1]


def test_mtx_real_weights_and_zeros(tmp_path):
    write(tmp_path, "r.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 0.5\n3 2 0\n3 1 -1.5\n")
    g = load_graph(tmp_path / "r.mtx")
    assert g.m == 2 and g.ewgt.dtype == np.float64 and g.total_ewgt == 2.0


def test_mtx_unsymmetric_general_is_an_error(tmp_path):
    write(tmp_path, "u.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 1 1\n2 3 1\n")
    with pytest.raises(GraphFormatError, match=r"u.mtx:5:.*\(2, 3\) has no mirror"):
        load_graph(tmp_path / "u.mtx")
    g = load_graph(tmp_path / "u.mtx", symmetrize=True)
    assert g.m == 2


def test_mtx_duplicates_and_value_asymmetry_name_the_line(tmp_path):
    write(tmp_path, "d.mtx", "%%MatrixMarket matrix coordinate integer general\n% c\n3 3 4\n1 2 1\n2 1 5\n"
          "3 3 7\n1 2 4\n")
    with pytest.raises(GraphFormatError, match=r"d.mtx:7:.*\(1, 2\) appears more than once"):
        load_graph(tmp_path / "d.mtx")
    assert load_graph(tmp_path / "d.mtx", merge_duplicates=True).ewgt.tolist() == [5, 5]
    write(tmp_path, "v.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 3\n2 1 -4\n")
    with pytest.raises(GraphFormatError, match=r"v.mtx:3:.*differ"):
        load_graph(tmp_path / "v.mtx")
    assert load_graph(tmp_path / "v.mtx", symmetrize=True).ewgt.tolist() == [4, 4]


def test_mtx_non_square_is_bipartite(tmp_path):
    write(tmp_path, "b.mtx", "%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 1 5\n1 3 2\n2 2 1\n")
    with pytest.warns(UserWarning, match="bipartite"):
        g = load_graph(tmp_path / "b.mtx")
    assert g.n == 5 and g.m == 3
    assert sorted(map(tuple, np.argwhere(np.triu(g.to_scipy().toarray())).tolist())) == [(0, 2), (0, 4), (1, 3)]


@pytest.mark.parametrize("text,line,words", [
    ("", 1, "empty"),
    ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "array"),
    ("hello\n", 1, "first line"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 x 1\n", 4, "indices"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 9 1\n", 4, "outside"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 1\n", 4, "tokens"),
])
def test_mtx_errors_name_the_line(tmp_path, text, line, words):
    p = write(tmp_path, "bad.mtx", text)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert f"bad.mtx:{line}:" in str(e.value) and words in str(e.value), str(e.value)


# ---- edge lists -------------------------------------------------------------------------------
def test_edgelist_zero_based(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="matchpart"):
        g = load_graph(write(tmp_path, "e.edges", "# comment\n0 1\n1 2\n% other comment\n\n2 0\n"))
    assert (g.n, g.m) == (3, 3)
    assert "0-based" in caplog.text


def test_edgelist_one_based_detected(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="matchpart"):
        g = load_graph(write(tmp_path, "e.txt", "1 2\n2 3\n"))
    assert (g.n, g.m) == (3, 2) and "1-based" in caplog.text


def test_edgelist_weights_duplicates_and_floats(tmp_path):
    g = load_graph(write(tmp_path, "e.el", "0 1 4\n1 0 4\n1 2 2\n"))
    assert g.m == 2 and g.total_ewgt == 6
    with pytest.raises(GraphFormatError, match=r"e2.el:2:.*different weights"):
        load_graph(write(tmp_path, "e2.el", "0 1 4\n1 0 5\n1 2 2\n"))
    g = load_graph(write(tmp_path, "e2.el", "0 1 4\n1 0 5\n1 2 2\n"), merge_duplicates=True)
    assert g.total_ewgt == 11
    g = load_graph(write(tmp_path, "f.el", "0 1 0.25\n1 2 2\n2 3 1e-1\n"))
    assert g.ewgt.dtype == np.float64 and np.isclose(g.total_ewgt, 2.35)


@pytest.mark.parametrize("text,line,words", [
    ("0 1\n1 2 3\n", 2, "tokens"),
    ("0 1\n1 x\n", 2, "'x'"),
    ("0 1 1\n1.5 2 1\n", 2, "'1.5'"),
    ("0 1 1\n1 2 abc\n", 2, "'abc'"),
    ("0 1\n2 2\n", 2, "self-loop"),
    ("0 1 1\n1 2 -3\n", 2, "positive"),
    ("0 1\n-1 2\n", 2, "negative"),
    ("0\n", 1, "tokens"),
])
def test_edgelist_errors_name_the_line(tmp_path, text, line, words):
    p = write(tmp_path, "bad.edges", text)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert f"bad.edges:{line}:" in str(e.value) and words in str(e.value), str(e.value)


def test_edgelist_round_trip_keeps_isolated_vertices(tmp_path):
    g = Graph.from_edges([1, 2], [2, 3], [1.5, 2], n=6)  # 0, 4, 5 isolated; real weights
    save_graph(g, tmp_path / "g.edges")
    h = load_graph(tmp_path / "g.edges")
    assert h.n == 6 and h.indices.tolist() == g.indices.tolist() and h.ewgt.tolist() == g.ewgt.tolist()


# ---- format selection -------------------------------------------------------------------------
def test_sniffing_unknown_extensions(tmp_path):
    g = weighted_example()
    for fmt in ("metis", "mtx", "edgelist"):
        p = tmp_path / f"g_{fmt}.dat"
        save_graph(g, p, fmt=fmt)
        h = load_graph(p)
        assert h.m == 3 and h.ewgt.tolist() == g.ewgt.tolist(), fmt
        assert load_graph(p, fmt=fmt).m == 3
    with pytest.raises(ValueError, match="extension"):
        save_graph(g, tmp_path / "g.dat")
    with pytest.raises(ValueError, match="unknown graph format"):
        load_graph(tmp_path / "g_metis.dat", fmt="xml")


def test_spec_and_missing_file():
    assert load_graph("grid:3x4").n == 12
    assert load_graph("delaunay:50", seed=1).n == 50
    with pytest.raises(FileNotFoundError, match="no such graph file"):
        load_graph("/nonexistent/file.graph")
    with pytest.raises(ValueError, match="valid forms"):
        load_graph("triangle:5")


# ---- partition files --------------------------------------------------------------------------
def test_partition_round_trip(tmp_path):
    parts = np.array([0, 3, 1, 1, 0, 2])
    write_partition(parts, tmp_path / "p")
    assert (tmp_path / "p").read_text() == "0\n3\n1\n1\n0\n2\n"
    assert read_partition(tmp_path / "p", n=6).tolist() == parts.tolist()
    with pytest.raises(GraphFormatError, match="6 entries"):
        read_partition(tmp_path / "p", n=7)


@pytest.mark.parametrize("text,line,words", [
    ("0\n1 2\n", 2, "one block id"),
    ("0\n-1\n", 2, "negative"),
    ("0\nx\n", 2, "'x'"),
    ("0\n\n1\n", 2, "empty line"),
])
def test_partition_errors(tmp_path, text, line, words):
    p = write(tmp_path, "bad.part", text)
    with pytest.raises(GraphFormatError) as e:
        read_partition(p)
    assert f"bad.part:{line}:" in str(e.value) and words in str(e.value)


# ---- property test: random graphs survive every format --------------------------------------
@st.composite
def random_graphs(draw):
    n = draw(st.integers(1, 20))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=40))
    pairs = sorted({(min(a, b), max(a, b)) for a, b in pairs if a != b})
    ew = draw(st.lists(st.integers(1, 1000), min_size=len(pairs), max_size=len(pairs)))
    vw = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
    return Graph.from_edges([a for a, _ in pairs], [b for _, b in pairs], ew if pairs else None, n=n, vwgt=vw)


@settings(max_examples=40, deadline=None)
@given(random_graphs())
def test_hypothesis_round_trips(tmp_path_factory, g):
    d = tmp_path_factory.mktemp("rt")
    save_graph(g, d / "g.graph")
    assert same(load_graph(d / "g.graph"), g)
    save_graph(g, d / "g.edges")
    h = load_graph(d / "g.edges")
    assert h.n == g.n and h.indices.tolist() == g.indices.tolist() and h.ewgt.tolist() == g.ewgt.tolist()
    save_graph(g, d / "g.mtx")
    h = load_graph(d / "g.mtx")
    assert h.n == g.n and h.indices.tolist() == g.indices.tolist() and h.ewgt.tolist() == g.ewgt.tolist()
    # the METIS text matches an independent writer
    lines = (d / "g.graph").read_text().splitlines()
    assert len(lines) == g.n + 1
    for v in range(g.n):
        nb = g.indices[g.indptr[v]:g.indptr[v + 1]] + 1
        toks = [int(t) for t in lines[v + 1].split()]
        fmt = lines[0].split()[2] if len(lines[0].split()) > 2 else "0"
        if fmt in ("10", "11"):
            assert toks[0] == g.vwgt[v]
            toks = toks[1:]
        step = 2 if fmt in ("1", "11") else 1
        assert toks[::step] == nb.tolist()


@pytest.mark.parametrize("text,kind_n", [
    ("3 2\n2\n1 3\n2\n", 3),            # METIS
    ("4 1\n2\n1\n\n\n", 4),             # METIS with trailing isolated vertices
    ("0 1 5\n1 2 5\n", 3),              # weighted edge list (3 tokens, would be a METIS header)
    ("5 3\n3 1\n", 5),                  # edge list whose first line looks like a header (1-based)
    ("# c\n0 1\n", 2),
])
def test_sniffing_ambiguous_files(tmp_path, text, kind_n):
    assert load_graph(write(tmp_path, "g.dat", text)).n == kind_n


# ---- hostile input: not a graph file at all, or values the pipeline cannot use ----------------
def test_directory_device_and_binary_files(tmp_path):
    for name in ("d.graph", "adir"):  # the second has no extension: it would be sniffed
        (tmp_path / name).mkdir()
        with pytest.raises(GraphFormatError, match=f"{name}: is a directory"):
            load_graph(tmp_path / name)
    if os.path.exists("/dev/null"):
        with pytest.raises(GraphFormatError, match="not a regular file"):
            load_graph("/dev/null")
    for name in ("b.graph", "b.edges", "b.dat"):
        p = tmp_path / name
        p.write_bytes(b"% ok\n\x7fELF\x00\x01\x02\n")
        with pytest.raises(GraphFormatError, match=rf"{name}:2: contains a NUL byte"):
            load_graph(p)


def test_utf8_byte_order_mark(tmp_path):
    p = tmp_path / "bom.graph"
    p.write_bytes(b"\xef\xbb\xbf3 2\n2\n1 3\n2\n")
    assert load_graph(p).m == 2
    p = tmp_path / "bom.edges"
    p.write_bytes(b"\xef\xbb\xbf0 1\n1 2\n")
    assert load_graph(p).m == 2
    p = tmp_path / "bom.mtx"
    p.write_bytes(b"\xef\xbb\xbf%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n")
    with pytest.raises(GraphFormatError, match="bom.mtx:1: .*byte order mark"):
        load_graph(p)


@pytest.mark.parametrize("text,line,words", [
    ("", 1, "no edges"),
    ("# only a comment\n\n", 1, "no edges"),
    ("0 1 1\n1 2 nan\n", 2, "nan is not a finite number"),
    ("0 1 inf\n", 1, "inf is not a finite number"),
    ("0 1 1e308\n1 2 1e308\n", 2, "infinity"),
    ("0 1\n2 99999999999\n", 2, "n=100000000000 vertices with only 2 edge entries"),
    ("0 1 999999999999999999\n1 2 999999999999999999\n2 3 999999999999999999\n", 3, "2^62"),  # stored twice
])
def test_edgelist_bad_values_name_the_line(tmp_path, text, line, words):
    p = write(tmp_path, "bad.edges", text)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert f"bad.edges:{line}:" in str(e.value) and words in str(e.value), str(e.value)


def test_edgelist_of_an_empty_graph_round_trips(tmp_path):
    g = Graph.from_edges([], [], n=3)
    save_graph(g, tmp_path / "g.edges")
    assert load_graph(tmp_path / "g.edges").n == 3


def test_edgelist_base_note_only_when_the_file_loads(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="matchpart"):
        with pytest.raises(GraphFormatError):
            load_graph(write(tmp_path, "e.edges", "1 2\n2 2\n"))
    assert "based" not in caplog.text


@pytest.mark.parametrize("text,line,words", [
    ("3 3 1\n2 999999999999999999 3 999999999999999999\n1 999999999999999999 3 999999999999999999\n"
     "1 999999999999999999 2 999999999999999999\n", 4, "2^62"),
    ("5 0 10\n" + "999999999999999999\n" * 5, 6, "2^62"),
])
def test_metis_weight_totals_must_fit_64_bits(tmp_path, text, line, words):
    p = write(tmp_path, "big.graph", text)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert f"big.graph:{line}:" in str(e.value) and words in str(e.value), str(e.value)


@pytest.mark.parametrize("text,line,words", [
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 nan\n2 1 nan\n", 3, "nan is not a finite"),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 2 1e400\n", 4, "inf is not a finite"),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1e308\n3 2 1e308\n", 4, "infinity"),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 1\n3 1 2\n\n1 2 1\n", 6, "more than once"),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n% c\n3 1 2\n", 4, "comment among"),
    ("%%MatrixMarket matrix coordinate integer symmetric\n3 3 2\n2 1 1\n3 1 2.5\n", 4, "'2.5' is not an integer"),
    ("%%MatrixMarket matrix coordinate integer symmetric\n3 3 2\n2 1 1\n3 1 2e3\n", 4, "'2e3' is not an integer"),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 1 2x\n", 4, "'2x' is not a number"),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 1 .\n", 4, "'.' is not a number"),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 1 1e\n", 4, "'1e' is not a number"),
    ("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1 1\n3 1\n", 3, "expected 2"),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 1x 1\n", 4, "indices must be positive integers"),
    ("%%MatrixMarket matrix coordinate integer symmetric\n3 3 2\n2 1 1\n3 1 99999999999999999999\n", 4,
     "too large"),
    ("%%MatrixMarket matrix coordinate pattern symmetric\n100000000000 100000000000 1\n2 1\n", 2,
     "n=100000000000 vertices"),
    ("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 3 nan\n", 3, "not a finite"),
])
def test_mtx_bad_values_name_the_line(tmp_path, text, line, words):
    p = write(tmp_path, "bad.mtx", text)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert f"bad.mtx:{line}:" in str(e.value) and words in str(e.value), str(e.value)


def test_mtx_real_values_in_every_spelling(tmp_path):
    text = "%%MatrixMarket matrix coordinate real general\n4 4 6\n1 2 .5\n2 1 0.5\n2 3 5.\n3 2 5e0\n" \
           "3 4 -1.5E+2\n4 3 150\n"
    g = load_graph(write(tmp_path, "r.mtx", text))
    assert g.ewgt.tolist() == [0.5, 0.5, 5, 5, 150, 150]


def test_mtx_diagonal_values_do_not_matter(tmp_path):
    p = write(tmp_path, "d.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 5\n3 3 nan\n")
    g = load_graph(p)
    assert g.m == 1 and g.ewgt.tolist() == [5, 5]
