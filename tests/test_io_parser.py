"""Tests of the io package beyond the file formats' rules (tests/test_io.py): compressed files,
the compiled METIS parser against a plain-Python reference, and error kinds and locations."""
import bz2
import gzip
import lzma
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from matchpart.errors import GraphError, GraphFormatError
from matchpart.graph import Graph
from matchpart.io import load_graph, read_partition, save_graph, write_partition

COMPRESSORS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


def weighted_example():
    return Graph.from_edges([0, 1, 0, 2], [1, 2, 2, 4], [2, 3, 1, 7], n=6, vwgt=[1, 2, 3, 4, 5, 6])


def same_structure(a, b):
    return (a.n == b.n and a.indptr.tolist() == b.indptr.tolist() and a.indices.tolist() == b.indices.tolist()
            and a.ewgt.tolist() == b.ewgt.tolist())


# ---- compressed files ---------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
@pytest.mark.parametrize("ext", [".graph", ".mtx", ".edges"])
def test_compressed_files_of_every_format_round_trip(tmp_path, ext, suffix):
    g = weighted_example()
    p = tmp_path / f"g{ext}{suffix}"
    save_graph(g, p)
    data = p.read_bytes()
    assert COMPRESSORS[suffix](b"")[:2] == data[:2]  # written compressed (same magic bytes)
    h = load_graph(p)
    assert same_structure(g, h)
    if ext == ".graph":
        assert h.vwgt.tolist() == g.vwgt.tolist()


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_compression_is_recognised_by_magic_bytes_not_name(tmp_path, suffix):
    text = b"% c\n3 2\n2\n1 3\n2\n"
    p = tmp_path / "plain_name.graph"  # compressed data under a plain name
    p.write_bytes(COMPRESSORS[suffix](text))
    assert load_graph(p).m == 2
    q = tmp_path / f"unknown.dat{suffix}"  # unknown extension: sniffed after decompressing
    q.write_bytes(COMPRESSORS[suffix](text))
    assert load_graph(q).m == 2


def test_errors_in_compressed_files_name_the_line(tmp_path):
    p = tmp_path / "bad.graph.gz"
    p.write_bytes(gzip.compress(b"3 2\n2\n1 4\n2\n"))
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert e.value.location == (str(p), 3) and e.value.kind == "out_of_range"
    assert "bad.graph.gz:3:" in str(e.value)


def test_corrupt_compressed_file(tmp_path):
    p = tmp_path / "g.graph.gz"
    p.write_bytes(gzip.compress(b"3 2\n2\n1 3\n2\n")[:-6])
    with pytest.raises(GraphFormatError, match="cannot decompress"):
        load_graph(p)


def test_compressed_partition_files(tmp_path):
    parts = np.array([0, 2, 1, 1])
    write_partition(parts, tmp_path / "p.part.bz2")
    assert (tmp_path / "p.part.bz2").read_bytes().startswith(b"BZh")
    assert read_partition(tmp_path / "p.part.bz2", n=4).tolist() == parts.tolist()


# ---- the compiled METIS parser against a plain-Python reference ----------------------------------
def reference_metis(text):
    """(n, vwgt, {(u, v): w}) of a METIS text, parsed with str.split: slow and obviously right."""
    lines = [ln for ln in text.split("\n") if not ln.strip().startswith("%")]
    while not lines[0].strip():
        lines.pop(0)
    head = [int(t) for t in lines[0].split()]
    n, fmt = head[0], f"{head[2]:03d}" if len(head) > 2 else "000"
    vwgt, edges = [], {}
    for v in range(n):
        toks = [int(t) for t in lines[1 + v].split()]
        if fmt[0] == "1":
            toks = toks[1:]  # vertex size, ignored
        vwgt.append(toks.pop(0) if fmt[1] == "1" else 1)
        step = 2 if fmt[2] == "1" else 1
        for i in range(0, len(toks), step):
            edges[(v, toks[i] - 1)] = toks[i + 1] if step == 2 else 1
    return n, vwgt, edges


@st.composite
def metis_texts(draw):
    """A valid METIS text of a random graph in a random fmt, with random layout: blanks and tabs,
    CRLF line ends, comment lines, rows in any order, a final newline or not."""
    n = draw(st.integers(1, 12))
    pairs = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))
    pairs = {(min(a, b), max(a, b)) for a, b in pairs if a != b}
    weight = {p: draw(st.integers(1, 10**6)) for p in sorted(pairs)}
    fmt = draw(st.sampled_from(["", "0", "1", "10", "11", "100", "101", "110", "111", "011"]))
    digits = f"{int(fmt or '0'):03d}"
    adj = {v: [] for v in range(n)}
    for (a, b), w in weight.items():
        adj[a].append((b, w))
        adj[b].append((a, w))
    blank = st.sampled_from([" ", "  ", "\t", " \t"])
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = [f"{n}{draw(blank)}{len(pairs)}" + (f" {fmt}" if fmt else "")]
    if fmt == "011":
        lines[0] += " 1"  # ncon = 1
    for v in range(n):
        row = draw(st.permutations(adj[v]))
        toks = []
        if digits[0] == "1":
            toks.append(str(draw(st.integers(0, 9))))
        if digits[1] == "1":
            toks.append(str(draw(st.integers(0, 100))))
        for u, w in row:
            toks.append(str(u + 1))
            if digits[2] == "1":
                toks.append(str(w))
        lines.append(draw(st.sampled_from(["", " "])) + draw(blank).join(toks))
        if draw(st.integers(0, 9)) == 0:
            lines.append("% a comment")
    if draw(st.booleans()):
        lines.insert(0, "% leading comment")
    # text after the last newline is a line only when not empty: an empty last vertex line needs one
    return newline.join(lines) + (newline if draw(st.booleans()) or not lines[-1] else "")


@settings(max_examples=150, deadline=None)
@given(metis_texts())
def test_compiled_metis_parser_matches_a_reference(tmp_path_factory, text):
    p = tmp_path_factory.mktemp("m") / "g.graph"
    p.write_bytes(text.encode())
    g = load_graph(p)
    n, vwgt, edges = reference_metis(text.replace("\r", ""))
    assert g.n == n and g.vwgt.tolist() == vwgt
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    assert dict(zip(zip(rows.tolist(), g.indices.tolist()), g.ewgt.tolist())) == edges
    assert all((np.diff(g.indices[g.indptr[v]:g.indptr[v + 1]]) > 0).all() for v in range(g.n))  # sorted rows


# ---- error kinds and locations -------------------------------------------------------------------
@pytest.mark.parametrize("text,kind,line", [
    ("3 2\n2\n1 x\n2\n", "parse", 3),
    ("3 2 1\n2 1\n1 1 3\n3 1\n", "parse", 3),            # odd token count with edge weights
    ("3 2\n2\n1 3\n", "size", 4),                        # fewer vertex lines than n
    ("3 5\n2\n1 3\n2\n", "size", 1),                     # m does not match
    ("3 2\n2\n1 4\n2\n", "out_of_range", 3),
    ("3 2\n1\n2 3\n2\n", "self_loop", 2),
    ("3 3\n2 2\n1 1 3\n2\n", "duplicate", 2),
    ("3 3\n3 2 3\n1\n1 2\n", "duplicate", 2),            # unsorted row: found after sorting
    ("3 2\n2 3\n1\n2\n", "asymmetric", 4),             # 1 lists 3; line 4 (vertex 3) lacks 1
    ("3 2 1\n2 1\n1 2 3 1\n2 1\n", "weight_mismatch", 2),
    ("3 2 1\n2 0\n1 0 3 1\n2 1\n", "bad_weight", 2),
    ("3 2 10\n-1 2\n1 1 3\n1 2\n", "bad_weight", 2),
    ("3 2 0 2\n2\n1 3\n2\n", "parse", 1),                  # ncon = 2 without vertex weights
])
def test_metis_error_kinds(tmp_path, text, kind, line):
    p = tmp_path / "bad.graph"
    p.write_text(text)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert (e.value.kind, e.value.location) == (kind, (str(p), line)), str(e.value)
    assert str(e.value) == f"{p}:{line}: {e.value.detail}"


@pytest.mark.parametrize("text,kind,line", [
    ("0 1\n1 x\n", "parse", 2),
    ("0 1\n2 2\n", "self_loop", 2),
    ("0 1 1\n1 2 -3\n", "bad_weight", 2),
    ("0 1\n-1 2\n", "out_of_range", 2),
    ("0 1 4\n1 0 5\n", "duplicate", 2),
    ("0 1\n2 99999999999\n", "size", 2),
])
def test_edgelist_error_kinds(tmp_path, text, kind, line):
    p = tmp_path / "bad.edges"
    p.write_text(text)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert (e.value.kind, e.value.line) == (kind, line), str(e.value)


@pytest.mark.parametrize("text,kind,line", [
    ("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 1 1\n2 3 1\n", "asymmetric", 5),
    ("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 3\n2 1 -4\n", "weight_mismatch", 3),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 1 2x\n", "parse", 4),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 nan\n3 1 1\n", "bad_weight", 3),
])
def test_mtx_error_kinds(tmp_path, text, kind, line):
    p = tmp_path / "bad.mtx"
    p.write_text(text)
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert (e.value.kind, e.value.line) == (kind, line), str(e.value)


@pytest.mark.parametrize("make,kind,where", [
    (lambda: Graph([0, 1, 1], [1]), "asymmetric", (0, 1)),
    (lambda: Graph([0, 1, 2], [1, 2]), "out_of_range", (1, 2)),
    (lambda: Graph([0, 1, 1], [0]), "self_loop", (0, 0)),
    (lambda: Graph([0, 2, 4], [1, 1, 0, 0]), "duplicate", (0, 1)),
    (lambda: Graph([0, 1, 2], [1, 0], [1, 2]), "weight_mismatch", (0, 1)),
    (lambda: Graph([0, 1, 2], [1, 0], [0, 0]), "bad_weight", (None, None)),
    (lambda: Graph.from_edges([0], [3], n=2), "out_of_range", (0, 3)),
    (lambda: Graph.from_edges([0, 1], [1, 0], [1, 2]), "duplicate", (1, 0)),
])
def test_graph_error_kinds(make, kind, where):
    with pytest.raises(GraphError) as e:
        make()
    assert e.value.kind == kind and (e.value.vertex, e.value.neighbor) == where, str(e.value)


def test_unsorted_csr_rows_with_weights_are_sorted_together():
    # rows listed out of order, weights must follow their neighbours
    g = Graph([0, 2, 3, 4], [2, 1, 0, 0], [5, 7, 7, 5])
    assert g.indices.tolist() == [1, 2, 0, 0] and g.ewgt.tolist() == [7, 5, 7, 5]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 15), st.data())
def test_asymmetry_found_is_the_first_unmirrored_entry(n, data):
    pairs = data.draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=25))
    entries = sorted({(a, b) for a, b in pairs if a != b})  # directed entries, rarely symmetric
    indptr = np.searchsorted([a for a, _ in entries], np.arange(n + 1))
    indices = [b for _, b in entries]
    unmirrored = [(a, b) for a, b in entries if (b, a) not in set(entries)]
    if not unmirrored:
        assert Graph(indptr, indices).m == len(entries) // 2
        return
    with pytest.raises(GraphError) as e:
        Graph(indptr, indices)
    assert e.value.kind == "asymmetric" and (e.value.vertex, e.value.neighbor) == unmirrored[0]


# ---- Matrix Market: integer and pattern files are read by the tokeniser, not scipy -----------------
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10), st.sampled_from(["pattern", "integer"]), st.sampled_from(["general", "symmetric"]),
       st.data())
def test_mtx_integer_files_read_like_scipy_reads_them(tmp_path_factory, n, field, symmetry, data):
    import scipy.io
    import scipy.sparse as sp
    pairs = data.draw(st.sets(st.tuples(st.integers(1, n), st.integers(1, n)), max_size=20))
    if symmetry == "symmetric":
        pairs = {(max(a, b), min(a, b)) for a, b in pairs}  # lower triangle
    else:
        pairs |= {(b, a) for a, b in pairs}  # a general file of a graph lists both directions
    pairs = sorted(pairs)
    value = {p: data.draw(st.integers(-9, 9)) for p in pairs}
    for a, b in pairs:  # mirrored entries of a general file agree in absolute value
        value[(a, b)] = value.get((b, a), value[(a, b)]) if a > b else value[(a, b)]
    lines = [f"%%MatrixMarket matrix coordinate {field} {symmetry}", "% comment", f"{n} {n} {len(pairs)}"]
    lines += [f"{a} {b}" + ("" if field == "pattern" else f" {value[(a, b)]}") for a, b in pairs]
    p = tmp_path_factory.mktemp("mm") / "g.mtx"
    p.write_text("\n".join(lines) + "\n")
    g = load_graph(p)
    A = sp.csr_matrix(abs(scipy.io.mmread(p)))
    A.setdiag(0)
    A.eliminate_zeros()
    ref = Graph.from_scipy(A)
    assert same_structure(g, ref)


# ---- real numbers are read as Python's float() reads them -------------------------------------------
decimal_texts = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, min_value=0, exclude_min=True).map(repr),
    st.builds(lambda sign, a, b, e: f"{sign}{a}.{b}" + (f"e{e}" if e is not None else ""),
              st.sampled_from(["", "+"]), st.integers(0, 10**18), st.integers(0, 10**20),
              st.none() | st.integers(-330, 330)),
    st.sampled_from(["5.", ".5", "+.5", "00012.50", "1E3", "2e-3", "inf", "1e400", "1_0"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(decimal_texts, min_size=1, max_size=10))
def test_edgelist_real_weights_equal_float(tmp_path_factory, texts):
    expected = [float(t) for t in texts]
    p = tmp_path_factory.mktemp("r") / "r.edges"
    p.write_text("".join(f"{i} {i + 1} {t}\n" for i, t in enumerate(texts)) + f"0 {len(texts) + 1} 0.5\n")
    if not all(0 < x < math.inf for x in expected) or 2 * sum(expected) == math.inf:
        # zero, infinite, or summing to infinity (each edge is stored in both directions)
        with pytest.raises(GraphFormatError) as e:
            load_graph(p)
        assert e.value.kind == "bad_weight"
        return
    g = load_graph(p)
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    weight = dict(zip(zip(rows.tolist(), g.indices.tolist()), g.ewgt.tolist()))
    assert [weight[(i, i + 1)] for i in range(len(texts))] == expected


@pytest.mark.parametrize("token", ["1.5.5", "0x10", "1e", ".", "-", "1e5x", "+-1.5"])
def test_edgelist_non_numbers_are_refused(tmp_path, token):
    p = tmp_path / "bad.edges"
    p.write_text(f"0 1 0.5\n1 2 {token}\n")
    with pytest.raises(GraphFormatError) as e:
        load_graph(p)
    assert e.value.line == 2 and f"'{token}' is not a number" in str(e.value)


def test_edgelist_real_weights_read_exactly(tmp_path):
    weights = [0.1, 2.5e-7, 1 / 3, 123456.789, 1e22, 3e-30, 0.30000000000000004]
    text = "".join(f"{i} {i + 1} {w!r}\n" for i, w in enumerate(weights))
    g = load_graph(tmp_path.joinpath("r.edges").write_text(text) and tmp_path / "r.edges")
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    upper = rows < g.indices
    assert g.ewgt[upper].tolist() == weights
