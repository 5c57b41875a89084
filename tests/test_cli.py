"""Tests of the matchpart command line (in-process through cli.main, plus one subprocess run)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import matchpart
from conftest import shared_graph
from matchpart.cli import main
from matchpart.io import load_graph, read_partition

ROOT = Path(__file__).resolve().parent.parent


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def field(out, name):
    for line in out.splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no {name!r} line in:\n{out}")


def test_info_4elt(capsys):
    code, out, err = run(capsys, "info", str(shared_graph("4elt.graph")))
    assert code == 0
    assert field(out, "vertices") == "15606" and field(out, "edges") == "45878"
    assert field(out, "components") == "1"
    assert field(out, "isolated vertices") == "0"
    assert "valid" in field(out, "check")
    assert field(out, "degree").startswith("min 3")


def test_info_weighted_and_isolated(capsys):
    code, out, _ = run(capsys, "info", str(shared_graph("example_weighted.graph")))
    assert code == 0
    assert "weighted" in field(out, "vertex weight total") and "unit" not in field(out, "edge weight total")
    assert int(field(out, "isolated vertices")) > 0


def test_info_reports_edge_list_base(capsys, tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("1 2\n2 3\n")
    code, out, err = run(capsys, "info", str(p))
    assert code == 0 and field(out, "vertices") == "3"
    assert "1-based" in err


def test_generate_and_reload(capsys, tmp_path):
    out_file = tmp_path / "g.graph"
    code, out, _ = run(capsys, "generate", "grid:4x5", "-o", str(out_file))
    assert code == 0 and "wrote" in out
    g = load_graph(out_file)
    assert (g.n, g.m) == (20, 31)
    code, _, _ = run(capsys, "generate", "delaunay:200", "--seed", "4", "-o", str(tmp_path / "d.mtx"))
    assert code == 0 and load_graph(tmp_path / "d.mtx").n == 200


def test_info_on_spec(capsys):
    code, out, _ = run(capsys, "info", "grid:3x3")
    assert code == 0 and field(out, "edges") == "12"


def test_matchers_lists_registry(capsys):
    code, out, _ = run(capsys, "matchers")
    assert code == 0
    for name in matchpart.matchers.available():
        assert name in out


def test_match_reports_valid_matching(capsys):
    name = matchpart.matchers.available()[0]
    code, out, _ = run(capsys, "match", str(shared_graph("airfoil1.graph")), "-m", name, "--device", "cpu")
    assert code == 0
    assert field(out, "valid") == "yes"
    card = int(field(out, "cardinality").split()[0])
    assert 0 < card <= 4253 // 2


@pytest.mark.parametrize("argv,words", [
    (["info", "/nonexistent/x.graph"], "no such graph file"),
    (["info", "nosuchgen:5"], "valid forms"),
    (["match", "grid:3x3", "-m", "no_such_matcher"], "unknown matcher"),
    (["partition", "grid:3x3", "0"], "K must be"),
])
def test_bad_input_exits_1_with_one_line(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("matchpart: error:") and words in lines[0], err
    assert "Traceback" not in err


def test_malformed_file_exit_1_names_line(capsys, tmp_path):
    p = tmp_path / "bad.graph"
    p.write_text("3 2\n2\n1 7\n2\n")
    code, _, err = run(capsys, "info", str(p))
    assert code == 1 and "bad.graph:3:" in err and len(err.strip().splitlines()) == 1


def test_debug_shows_traceback(capsys):
    with pytest.raises(FileNotFoundError):
        main(["--debug", "info", "/nonexistent/x.graph"])


@pytest.mark.parametrize("argv", [["info"], ["frobnicate"], ["partition", "grid:3x3", "two"],
                                  ["partition", "grid:3x3", "2", "--preset", "turbo"]])
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert matchpart.__version__ in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for cmd in ("info", "generate", "match", "matchers", "partition", "compare"):
        assert cmd in out
    assert "examples:" in out


def test_partition_writes_parts(capsys, tmp_path):
    pytest.importorskip("matchpart.pipeline")
    part = tmp_path / "p.txt"
    code, out, err = run(capsys, "partition", "grid:8x8", "4", "--device", "cpu", "-o", str(part), "-v")
    assert code == 0, err
    parts = read_partition(part, n=64)
    g = load_graph("grid:8x8")
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    cut = int((parts[rows] != parts[g.indices]).sum()) // 2
    assert int(field(out, "cut")) == cut
    assert field(out, "feasible") == "yes"
    assert np.bincount(parts).max() <= int(1.03 * 16)
    assert "levels:" in out


def test_compare_table_and_plot(capsys, tmp_path):
    pytest.importorskip("matchpart.pipeline")
    names = matchpart.matchers.available()[:2]
    argv = ["compare", "grid:10x10", "2", "-m", ",".join(names), "--seeds", "2", "--device", "cpu"]
    try:
        import matplotlib  # noqa: F401
        argv += ["--plot", str(tmp_path / "c.png")]
    except ImportError:
        pass
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    for name in names:
        assert name in out
    assert "median cut" in out


def test_python_dash_m_has_no_traceback(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    bad = tmp_path / "bad.graph"
    bad.write_text("2 1\n2\n")
    r = subprocess.run([sys.executable, "-m", "matchpart", "info", str(bad)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and r.stderr.startswith("matchpart: error:")
    r = subprocess.run([sys.executable, "-m", "matchpart", "--version"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0 and matchpart.__version__ in r.stdout


# ---- matchpart.compare ---------------------------------------------------------------------
def test_compare_rows_are_consistent_with_partition():
    pipeline = pytest.importorskip("matchpart.pipeline")
    from matchpart.compare import compare, format_table
    names = matchpart.matchers.available()[:2]
    g = load_graph("grid:12x12")
    rows = compare(g, 4, names, seeds=(0, 1, 2), device="cpu", preset="fast")
    assert sorted(r["matcher"] for r in rows) == sorted(names)
    for r in rows:
        cuts = [pipeline.partition(g, 4, matcher=r["matcher"], rating="expansion_star2", seed=s, device="cpu",
                                   preset="fast").cut for s in (0, 1, 2)]
        assert r["cuts"] == cuts  # same seeds, same partitions
        assert r["median_cut"] == sorted(cuts)[1] and r["min_cut"] == min(cuts)
        assert r["runs"] == 3 and 0 <= r["feasible"] <= 3 and r["median_time"] > 0
    assert [r["median_cut"] for r in rows if r["feasible"] == 3] == \
        sorted(r["median_cut"] for r in rows if r["feasible"] == 3)
    table = format_table(rows).splitlines()
    assert len(table) == 2 + len(rows) and "median cut" in table[0]


def test_compare_rejects_unknown_matcher_before_running():
    pytest.importorskip("matchpart.pipeline")
    from matchpart.compare import compare
    with pytest.raises(ValueError, match="unknown matcher"):
        compare("grid:4x4", 2, ["no_such_matcher"])
    with pytest.raises(ValueError, match="seed"):
        compare("grid:4x4", 2, matchpart.matchers.available()[:1], seeds=())


def test_format_table_and_plot_errors(tmp_path, monkeypatch):
    from matchpart.compare import format_table, plot
    rows = [{"matcher": "a", "median_cut": 10, "min_cut": 9, "median_time": 0.5, "mean_imbalance": 0.01,
             "feasible": 3, "runs": 3, "cuts": [9, 10, 11]}]
    text = format_table(rows)
    assert "a" in text and "3/3" in text and "0.500" in text
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # simulate matplotlib not installed
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot(rows, tmp_path / "x.png")
