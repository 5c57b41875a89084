"""Tests of matchpart.generators: sizes, validity, determinism, spec parsing."""
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import connected_components

from matchpart import generators
from matchpart.generators import ba, delaunay, er, from_spec, generate, grid, rgg, rmat
from matchpart.graph import Graph


def revalidate(g):
    """Rebuild through the validating constructor: symmetric, sorted, no loops, no duplicates."""
    return Graph(g.indptr, g.indices, g.ewgt, g.vwgt)


def same(a, b):
    return a.indptr.tolist() == b.indptr.tolist() and a.indices.tolist() == b.indices.tolist()


def test_grid_matches_networkx():
    for shape in [(3, 4), (1, 5), (2, 3, 4)]:
        g = grid("x".join(map(str, shape)))
        G = nx.grid_graph(dim=list(reversed(shape)))  # networkx orders dims the other way round
        assert g.n == G.number_of_nodes() and g.m == G.number_of_edges()
        H = nx.convert_node_labels_to_integers(G, ordering="sorted")
        assert nx.is_isomorphic(g.to_networkx(), H)
    g = grid((3, 4))
    assert g.neighbors(5).tolist() == [1, 4, 6, 9]  # row-major ids


def test_delaunay_is_planar_triangulation():
    g = delaunay(500, seed=1)
    revalidate(g)
    assert g.n == 500
    # a planar triangulation of n points with h hull points has 3n - 3 - h edges
    assert 2 * 500 < g.m <= 3 * 500 - 6
    assert nx.check_planarity(g.to_networkx())[0]
    assert connected_components(g.to_scipy())[0] == 1


def test_rgg_edges_are_short():
    n = 400
    g = rgg(n, seed=2)
    revalidate(g)
    pts = np.random.default_rng(2).random((n, 2))
    r = generators.RGG_RADIUS_FACTOR * np.sqrt(np.log(n) / n)
    d = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    want = int(((d < r) & (np.triu(np.ones((n, n)), 1) > 0)).sum())
    assert g.m == want  # exactly the pairs closer than r (brute force)


def test_prgg_is_the_rgg_of_its_hashed_points_numbered_by_cell():
    from matchpart import generators_counter as ctr
    n = 500
    g = from_spec("prgg:500:seed=4")
    revalidate(g)
    x, y = ctr.rgg_points(n, 4, 0, n)
    # the numbering: points sorted by (row-major cell of width 1/cells, draw index)
    cells = ctr.rgg_cells(n)
    assert cells >= 1 and 1 / cells >= ctr.rgg_radius(n)
    key = [(min(int(y[i] * cells), cells - 1), min(int(x[i] * cells), cells - 1), i) for i in range(n)]
    order = sorted(range(n), key=lambda i: key[i])
    pts = np.column_stack([x, y])[order]
    d2 = ((pts[:, None] - pts[None]) ** 2).sum(axis=2)
    want = (d2 <= ctr.rgg_radius(n) ** 2) & ~np.eye(n, dtype=bool)
    have = np.zeros((n, n), dtype=bool)
    have[np.repeat(np.arange(n), np.diff(g.indptr)), g.indices] = True
    assert (have == want).all()  # exactly the pairs within the radius (brute force)
    assert 0.8 < g.m / from_spec("rgg:500:seed=4").m < 1.25   # the same model as rgg


def test_prmat_is_skewed_simple_and_like_rmat():
    g, ref = from_spec("prmat:12:8"), rmat(12, 8)
    revalidate(g)
    assert g.n == 4096 and abs(g.m - ref.m) < 0.02 * ref.m
    assert g.degree.max() > 10 * g.degree.mean()
    from matchpart.generators_counter import scramble
    ids = np.arange(1 << 12)
    assert sorted(scramble(ids, 12, 3).tolist()) == ids.tolist()   # a bijection of the ids


def test_er_edge_count_and_uniformity():
    n, avg = 2000, 6
    g = er(n, avg, seed=3)
    revalidate(g)
    expected = n * avg / 2
    assert abs(g.m - expected) < 5 * np.sqrt(expected)
    # degrees are Binomial(n-1, p): mean avg, variance about avg
    deg = g.degree
    assert abs(deg.mean() - avg) < 0.3 and abs(deg.var() - avg) < 1.5
    # pair decoding covers the whole triangle: the dense case gives the complete graph
    full = er(30, 29, seed=0)
    assert full.m == 30 * 29 // 2
    assert er(1, 0).n == 1 and er(10, 0).m == 0


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 60), st.floats(0.1, 10), st.integers(0, 1000))
def test_er_always_valid(n, avg, seed):
    g = er(n, min(avg, n - 1), seed)
    revalidate(g)
    assert g.n == n and g.m <= n * (n - 1) // 2


def test_rmat_is_skewed_and_simple():
    g = rmat(12, 8, seed=4)
    revalidate(g)
    assert g.n == 4096 and 0 < g.m <= 8 * 4096
    deg = g.degree
    assert deg.max() > 10 * deg.mean()  # heavy tail


def test_ba_matches_networkx_edge_count():
    for n, m in [(10, 1), (100, 3), (5000, 4)]:
        g = ba(n, m, seed=5)
        revalidate(g)
        want = nx.barabasi_albert_graph(n, m, seed=5).number_of_edges()
        assert g.m == want
        assert connected_components(g.to_scipy())[0] == 1
    g = ba(20000, 2, seed=0)
    assert g.degree.max() > 20 * 2  # preferential attachment makes hubs


@pytest.mark.parametrize("spec", ["delaunay:300", "rgg:300", "er:300:5", "rmat:8", "rmat:8:4", "ba:300:2",
                                  "grid:5x6", "grid:2x3x4", "prgg:300", "prmat:8", "prmat:8:4"])
def test_specs_are_deterministic_and_seeded(spec):
    a, b = from_spec(spec), from_spec(spec)
    assert same(a, b)
    revalidate(a)
    c = from_spec(spec + ":seed=9")
    assert same(c, from_spec(spec, seed=9))
    if not spec.startswith("grid"):
        assert not same(a, c)
    assert same(generate(spec), a)


def test_spec_sizes():
    assert from_spec("grid:5x6").n == 30
    assert from_spec("grid:2x3x4").m == (1 * 3 * 4) + (2 * 2 * 4) + (2 * 3 * 3)
    assert from_spec("rmat:8").n == 256
    assert from_spec(" Delaunay:100 ").n == 100


@pytest.mark.parametrize("spec", ["", "delaunay", "delaunay:", "delaunay:abc", "delaunay:2", "delaunay:10:20",
                                  "grid:10", "grid:axb", "grid:1x2x3x4", "er:10", "er:10:x", "rmat:0", "rmat:99",
                                  "ba:10:10", "ba:10", "foo:10", "delaunay:100:seed=x", "rgg:-5",
                                  "er:10:inf", "er:10:nan", "er:10:-1", "er:10:9.5", "grid:3x3:seed=1:seed=2",
                                  "grid:3x3:foo=1", "grid:3x3:seed=", "delaunay:1e5", "delaunay:100.5",
                                  "delaunay:+100", "delaunay:100::seed=1", "rmat:30", "grid:100000x100000"])
def test_bad_specs_list_valid_forms(spec):
    with pytest.raises(ValueError) as e:
        from_spec(spec)
    msg = str(e.value)
    assert "valid forms" in msg and "delaunay:N" in msg and "grid:AxB[xC]" in msg
    assert "\n" not in msg


def test_bad_function_arguments():
    with pytest.raises(ValueError, match="n must be"):
        delaunay(2)
    with pytest.raises(ValueError, match="m < n"):
        ba(5, 5)
    for avgdeg in (-1, float("inf"), float("nan"), 9.5):
        with pytest.raises(ValueError, match="avgdeg must be a finite number from 0 to n-1 = 9"):
            er(10, avgdeg)
    with pytest.raises(ValueError, match="each grid size must be an integer >= 1"):
        grid((2.5, 3))  # was truncated to 2x3
    with pytest.raises(ValueError, match="grid shape"):
        grid("3")


def spec_error(spec):
    with pytest.raises(ValueError) as e:
        from_spec(spec)
    return str(e.value)


@pytest.mark.parametrize("spec,why", [
    ("er:10:inf", "AVGDEG must be a finite, non-negative decimal number such as 8 or 2.5, got 'inf'"),
    ("er:10:nan", "AVGDEG must be a finite, non-negative decimal number such as 8 or 2.5, got 'nan'"),
    ("er:10:-1", "AVGDEG must be a finite, non-negative decimal number such as 8 or 2.5, got '-1'"),
    ("er:10:+5", "AVGDEG must be a finite, non-negative decimal number such as 8 or 2.5, got '+5'"),
    ("er:10:9.5", "AVGDEG must be at most N-1 = 9 (the complete graph), got 9.5"),
    ("er:10:1e400", "AVGDEG must be at most N-1 = 9 (the complete graph), got 1e400"),
    ("er:1:1", "AVGDEG must be at most N-1 = 0 (the complete graph), got 1"),
])
def test_er_spec_rejects_degrees_it_cannot_meet(spec, why):
    assert f"bad generator spec {spec!r}: {why};" in spec_error(spec)


def test_er_spec_accepts_degrees_up_to_n_minus_1():
    assert from_spec("er:10:9").m == 45  # exactly the complete graph
    assert from_spec("er:10:.5:seed=3").n == 10 and from_spec("er:1:0").n == 1


@pytest.mark.parametrize("spec,why", [
    ("grid:3x3:seed=1:seed=2", "option 'seed' is given more than once"),
    ("grid:3x3:seed=1:SEED=1", "option 'seed' is given more than once"),
    ("grid:3x3:foo=1", "unknown option 'foo' (the only option is seed=S)"),
    ("grid:3x3:seed=", "option 'seed' needs a non-negative whole number, got ''"),
    ("grid:3x3:seed=-1", "option 'seed' needs a non-negative whole number, got '-1'"),
    ("grid:3x3:seed=1.5", "option 'seed' needs a non-negative whole number, got '1.5'"),
    ("delaunay:100::seed=1", "empty field (a doubled or trailing ':')"),
    ("delaunay:100:", "empty field (a doubled or trailing ':')"),
])
def test_spec_options_must_be_known_single_and_well_formed(spec, why):
    assert f"bad generator spec {spec!r}: {why};" in spec_error(spec)


def test_spec_options_and_spaces_that_are_accepted():
    assert same(from_spec("delaunay:100:SEED=4"), from_spec("delaunay:100", seed=4))
    assert same(from_spec(" delaunay : 100 : seed = 4 "), from_spec("delaunay:100", seed=4))
    assert from_spec("grid: 3 x 4").n == 12


@pytest.mark.parametrize("spec,why", [
    ("delaunay:1e5", "N must be a whole number written in digits only (no sign, decimal point or exponent), "
                     "got '1e5'"),
    ("delaunay:100.5", "got '100.5'"),
    ("delaunay:+100", "got '+100'"),
    ("delaunay:1_000", "got '1_000'"),
    ("delaunay:1 00", "got '1 00'"),
    ("delaunay:\u0661\u0660\u0660", "got '\u0661\u0660\u0660'"),  # Arabic-Indic digits
    ("grid:3x\u00b2", "each grid size must be a whole number"),  # superscript two: isdigit() but no int
    ("rmat:8:4.5", "EF must be a whole number"),
    ("ba:100:2.5", "M must be a whole number"),
    ("grid:0x3", "each grid size must be positive, got 0"),
    ("delaunay:2", "N must be at least 3, got 2"),
    ("rmat:31", "SCALE must be at most 30, got 31"),
    ("ba:10:10", "M must be less than N (each new vertex links to M earlier ones), got N=10, M=10"),
    ("ba:3:7", "M must be less than N"),
    ("grid:100000x100000", "the grid has 10000000000 vertices, at most 2147483648 are allowed"),
    ("grid:99999999999x99999999999", "each grid size must be at most 2147483648"),
    ("er:10", "er takes 2 argument(s) (er:N:AVGDEG), got 1"),
    ("rmat:8:4:2", "rmat takes 1 or 2 argument(s) (rmat:SCALE[:EF]), got 3"),
])
def test_spec_sizes_are_plain_integers_in_range(spec, why):
    msg = spec_error(spec)
    assert msg.startswith(f"bad generator spec {spec!r}: ") and why in msg


@pytest.mark.parametrize("spec", ["rmat:30", "rmat:20:2000000", "delaunay:2000000000", "rgg:2000000000",
                                  "er:2000000000:1000", "ba:2000000000:1000", "grid:40000x50000"])
def test_specs_too_large_for_memory_fail_at_once(spec, monkeypatch):
    monkeypatch.setattr(generators, "_physical_memory", lambda: 64 << 30)
    msg = spec_error(spec)  # before allocating anything: would otherwise take minutes or be OOM-killed
    assert "too large:" in msg and "GiB of memory, this machine has 64.0 GiB" in msg


def test_memory_check_uses_this_machine_and_can_be_unavailable(monkeypatch):
    monkeypatch.setattr(generators, "_physical_memory", lambda: 1 << 20)
    assert "too large: 10000 vertices" in spec_error("delaunay:10000")
    assert from_spec("grid:10x10").n == 100  # small enough even for 1 MiB
    monkeypatch.setattr(generators, "_physical_memory", lambda: None)
    assert from_spec("delaunay:10000").n == 10000  # platform that does not say: only the fixed caps apply


def test_rmat_30_fails_at_once_on_any_real_machine():
    assert "too large: 1073741824 vertices and about 17179869184 edges" in spec_error("rmat:30")


def test_pair_decoding_is_exact_for_large_n():
    for n in (2, 3, 7, 50):
        i, j = generators._pair_from_index(np.arange(n * (n - 1) // 2), n)
        assert list(zip(i.tolist(), j.tolist())) == [(a, b) for a in range(n) for b in range(a + 1, n)]
    # near 2^31 vertices the old front-solved float formula was off by dozens of rows
    rng = np.random.default_rng(0)
    for n in (10**8, 2**31 - 5, 2**31):
        pairs = n * (n - 1) // 2
        rows = np.concatenate([np.arange(n - 2000, n - 1), rng.integers(0, n - 1, 2000)]).astype(np.int64)
        starts = rows * (2 * n - rows - 1) // 2
        k = np.concatenate([starts, starts - 1, starts + 1, np.arange(pairs - 3000, pairs),
                            rng.integers(0, pairs, 20000)])
        k = k[(k >= 0) & (k < pairs)]
        i, j = generators._pair_from_index(k, n)
        assert ((0 <= i) & (i < j) & (j < n)).all()
        assert (i * (2 * n - i - 1) // 2 + (j - i - 1) == k).all()


@pytest.mark.parametrize("spec,words", [
    ("er:10:inf", "AVGDEG must be a finite"),
    ("grid:3x3:seed=1:seed=2", "option 'seed' is given more than once"),
    ("grid:3x3:foo=1", "unknown option 'foo'"),
    ("delaunay:1e5", "N must be a whole number"),
    ("rmat:30", "too large"),
])
def test_cli_reports_bad_specs_in_one_line(capsys, tmp_path, spec, words):
    from matchpart.cli import main
    assert main(["generate", spec, "-o", str(tmp_path / "g.graph")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("matchpart: error: bad generator spec") and words in err
    assert not (tmp_path / "g.graph").exists()
