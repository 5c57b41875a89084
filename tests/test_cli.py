"""Tests of the matchpart command line (in-process through cli.main, plus one subprocess run)."""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import matchpart
from conftest import shared_graph
from matchpart.cli import main
from matchpart.io import load_graph, read_partition

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path, monkeypatch):
    """partition writes SPEC.part.K into the current directory by default (gpmetis's convention)."""
    monkeypatch.chdir(tmp_path)


COMPILE_NOTICE = "compiling kernels"  # said once when numba compiles (an empty cache, as in CI)


def without_compile_notice(err):
    return "".join(ln for ln in err.splitlines(keepends=True) if COMPILE_NOTICE not in ln)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, without_compile_notice(err)


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
    path = shared_graph("example_weighted.graph")
    code, out, _ = run(capsys, "info", str(path))
    assert code == 0
    assert "weighted" in field(out, "vertex weight total") and "unit" not in field(out, "edge weight total")
    isolated = int((np.diff(load_graph(path).indptr) == 0).sum())
    assert isolated > 0 and int(field(out, "isolated vertices")) == isolated


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
    (["partition", "grid:3x3", "10"], "number of vertices"),
    (["partition", "grid:3x3", "2", "--rating", "no_such_rating"], "unknown rating"),
    (["generate", "delaunay:1:seed=x", "-o", "x.graph"], "seed"),
    (["generate", "grid:0x3", "-o", "x.graph"], "positive"),
])
def test_bad_input_exits_1_with_one_line(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert words in one_error_line(err)
    assert "Traceback" not in err


def one_error_line(err):
    lines = without_compile_notice(err).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("matchpart: error:"), err
    return lines[0]


@pytest.mark.parametrize("command", ["info", "match", "partition", "compare"])
@pytest.mark.parametrize("name,content,words", [
    ("adir", None, "is a directory"),
    ("bin.graph", b"\x7fELF\x02\x01\x00\x00\n\x00", "bin.graph:1: contains a NUL byte"),
    ("bin.dat", b"3 2\n2\n\x00\x01", "bin.dat:3: contains a NUL byte"),
    ("empty.graph", b"", "empty.graph:1: empty file"),
    ("empty.mtx", b"", "empty.mtx:1: empty file"),
    ("empty.edges", b"", "empty.edges:1: no edges"),
    ("nan.edges", b"0 1 1\n1 2 nan\n", "nan.edges:2: edge weight nan is not a finite number"),
    ("ids.edges", b"0 1\n1 2\n5 100000000000000\n", "ids.edges:3: n=100000000000001 vertices"),
    ("asym.graph", b"4 2\n2\n1\n4\n1\n", "asym.graph:5: vertex 4 does not list neighbour 3"),
    ("inf.mtx", b"%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 1 inf\n",
     "inf.mtx:4: entry value inf"),
])
def test_bad_files_exit_1_with_one_line_for_every_command(capsys, tmp_path, command, name, content, words):
    p = tmp_path / name
    if content is None:
        p.mkdir()
    else:
        p.write_bytes(content)
    argv = [command, str(p)] + (["2"] if command in ("partition", "compare") else [])
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert words in one_error_line(err)


def test_notes_about_a_file_show_on_success_only(capsys, tmp_path):
    good, bad = tmp_path / "good.edges", tmp_path / "bad.edges"
    good.write_text("1 2\n2 3\n3 4\n")
    bad.write_text("1 2\n2 3 x\n")
    code, out, err = run(capsys, "partition", str(good), "2", "--device", "cpu")
    assert code == 0 and "1-based" in err  # how the ids were read changes n: say so for every command
    code, out, err = run(capsys, "info", str(bad))
    assert code == 1 and "bad.edges:2:" in one_error_line(err)


def test_warnings_are_one_line(capsys, tmp_path):
    p = tmp_path / "b.mtx"
    p.write_text("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 1\n2 3\n")
    code, out, err = run(capsys, "info", str(p))
    assert code == 0 and field(out, "vertices") == "5"
    assert err.strip().splitlines() == [
        f"matchpart: warning: {p}: 2 x 3 matrix read as a bipartite graph: rows are vertices 0..1, "
        "columns are vertices 2..4"]


def test_outputs_are_checked_before_the_work(capsys, tmp_path, monkeypatch):
    def must_not_run(*a, **k):
        raise AssertionError("partition ran although its output cannot be written")
    monkeypatch.setattr(matchpart, "partition", must_not_run)
    graph = tmp_path / "g.graph"
    graph.write_text("2 1\n2\n1\n")
    for target, words in [(tmp_path / "no" / "p.txt", "does not exist"), (tmp_path, "is a directory"),
                          ("", "empty"), (graph, "over the input graph")]:
        code, out, err = run(capsys, "partition", str(graph), "2", "-o", str(target))
        assert code == 1 and out == "" and words in one_error_line(err), (target, err)
    assert graph.read_text() == "2 1\n2\n1\n"


def test_generate_checks_spec_and_output(capsys, tmp_path):
    for argv, words in [
        (["generate", "grid:3x3", "-o", str(tmp_path / "no" / "g.graph")], "does not exist"),
        (["generate", "grid:3x3", "-o", str(tmp_path / "g.foo")], "use .graph (METIS)"),
        (["generate", str(shared_graph("jazz.graph")), "-o", str(tmp_path / "g.graph")], "takes a generator spec"),
    ]:
        code, out, err = run(capsys, *argv)
        assert code == 1 and words in one_error_line(err), err
    assert list(tmp_path.iterdir()) == []


def test_compare_checks_plot_before_the_runs(capsys, tmp_path, monkeypatch):
    import matchpart.compare

    def must_not_run(*a, **k):
        raise AssertionError("compare ran although the plot cannot be drawn")
    monkeypatch.setattr(matchpart.compare, "compare", must_not_run)
    code, out, err = run(capsys, "compare", "grid:4x4", "2", "--plot", str(tmp_path / "no" / "c.png"))
    assert code == 1 and out == ""
    assert "matplotlib" in one_error_line(err) or "does not exist" in one_error_line(err)


def test_compare_runs_a_repeated_matcher_once(capsys):
    name = matchpart.matchers.available()[0]
    code, out, err = run(capsys, "compare", "grid:4x4", "2", "-m", f"{name},{name}", "--seeds", "1",
                         "--device", "cpu")
    assert code == 0 and err.strip() == ""  # stderr is not a terminal: no progress display
    table = out.split("\n\n")[0]
    assert sum(name in line.split() for line in table.splitlines()) == 1


def test_balance_bound_must_make_sense(capsys, tmp_path):
    p = tmp_path / "z.graph"
    p.write_text("3 2 10\n0 2\n0 1 3\n0 2\n")
    code, out, err = run(capsys, "partition", str(p), "2")
    assert code == 1 and "every vertex weight is 0" in one_error_line(err)
    for command in ("partition", "compare"):
        code, out, err = run(capsys, command, "grid:3x3", "2", "--eps", "1e308")
        assert code == 1 and "--eps 1e+308 is too large" in one_error_line(err)


@pytest.mark.skipif(matchpart.backend.gpu_available(), reason="a GPU is usable here")
@pytest.mark.parametrize("argv", [["match", "grid:3x3"], ["partition", "grid:3x3", "2"],
                                  ["compare", "grid:3x3", "2"]])
def test_device_gpu_without_gpu_is_one_line(capsys, argv):
    code, out, err = run(capsys, *argv, "--device", "gpu")
    assert code == 1 and "GPU" in one_error_line(err)


def test_k_1_and_k_n(capsys, tmp_path):
    part = tmp_path / "p"
    code, out, err = run(capsys, "partition", "grid:3x4", "1", "--device", "cpu", "-o", str(part))
    assert code == 0 and field(out, "cut") == "0" and read_partition(part, n=12).tolist() == [0] * 12
    code, out, err = run(capsys, "partition", "grid:3x4", "12", "--device", "cpu", "-o", str(part))
    assert code == 0 and field(out, "cut") == "17" and field(out, "feasible") == "yes"
    assert sorted(read_partition(part, n=12).tolist()) == list(range(12))


def test_unexpected_errors_are_one_line_too(capsys, monkeypatch):
    import matchpart.cli as cli

    def broken(args, out):
        raise TypeError("something inside went wrong")
    monkeypatch.setitem(cli.COMMANDS, "matchers", broken)
    code, out, err = run(capsys, "matchers")
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "internal error: TypeError: something inside" in lines[0]
    with pytest.raises(TypeError):
        main(["--debug", "matchers"])


def test_out_of_memory_and_closed_pipe(capsys, monkeypatch):
    import matchpart.cli as cli

    def huge(args, out):
        raise MemoryError("Unable to allocate 74.5 GiB")

    def closed(args, out):
        raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setitem(cli.COMMANDS, "matchers", huge)
    code, out, err = run(capsys, "matchers")
    assert code == 1 and "out of memory (Unable to allocate 74.5 GiB)" in one_error_line(err)
    monkeypatch.setitem(cli.COMMANDS, "matchers", closed)
    code, out, err = run(capsys, "matchers")
    assert code == 1 and err == ""  # '| head' closed the pipe: nothing to complain about


def test_os_errors_without_errno_noise(capsys, monkeypatch):
    import matchpart.cli as cli

    def denied(args, out):
        raise PermissionError(13, "Permission denied", "/some/file.graph")
    monkeypatch.setitem(cli.COMMANDS, "matchers", denied)
    code, out, err = run(capsys, "matchers")
    assert code == 1 and one_error_line(err) == "matchpart: error: /some/file.graph: Permission denied"


def test_malformed_file_exit_1_names_line(capsys, tmp_path):
    p = tmp_path / "bad.graph"
    p.write_text("3 2\n2\n1 7\n2\n")
    code, _, err = run(capsys, "info", str(p))
    assert code == 1 and "bad.graph:3:" in err and len(err.strip().splitlines()) == 1


def test_debug_shows_traceback(capsys):
    with pytest.raises(FileNotFoundError):
        main(["--debug", "info", "/nonexistent/x.graph"])


@pytest.mark.parametrize("argv,words", [
    ([], "missing COMMAND"),
    (["info"], "required"),
    (["frobnicate"], "invalid choice"),
    (["partition", "grid:3x3", "two"], "argument K: expected an integer >= 1, got 'two'"),
    (["partition", "grid:3x3", "1.5"], "argument K: expected an integer >= 1, got '1.5'"),
    (["partition", "grid:3x3", "0"], "argument K: must be >= 1, got 0"),
    (["partition", "grid:3x3", "-1"], "argument K: must be >= 1, got -1"),
    (["compare", "grid:3x3", "0"], "argument K: must be >= 1"),
    (["partition", "grid:3x3", "2", "--preset", "turbo"], "invalid choice: 'turbo'"),
    (["partition", "grid:3x3", "2", "--eps", "-1"], "argument --eps: must be a finite number >= 0"),
    (["partition", "grid:3x3", "2", "--eps", "nan"], "argument --eps: must be a finite number >= 0"),
    (["compare", "grid:3x3", "2", "--eps", "inf"], "argument --eps: must be a finite number >= 0"),
    (["partition", "grid:3x3", "2", "--eps", "x"], "argument --eps: expected a number"),
    (["partition", "grid:3x3", "2", "--seed", "-1"], "argument --seed: must be >= 0"),
    (["match", "grid:3x3", "--seed", "-1"], "argument --seed: must be >= 0"),
    (["generate", "grid:3x3", "-o", "g.graph", "--seed", "-1"], "argument --seed: must be >= 0"),
    (["compare", "grid:3x3", "2", "--repeats", "0"], "argument -r/--repeats/--seeds: must be >= 1"),
    (["compare", "grid:3x3", "2", "--seeds", str(10**20)], "argument -r/--repeats/--seeds: must be <= 1000000"),
    (["partition", "grid:3x3", "2", "--seed", str(2**64)], "argument --seed: must be <= 9223372036854775807"),
    (["partition", "grid:3x3", "2", "--device", "tpu"], "invalid choice: 'tpu'"),
    (["matchers", "extra"], "unrecognized arguments"),
])
def test_usage_errors_exit_2(capsys, argv, words):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("matchpart: error:") and words in lines[0], err


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
    pytest.importorskip("matplotlib")   # the test extra brings it
    names = matchpart.matchers.available()[:2]
    plot = tmp_path / "c.png"
    code, out, err = run(capsys, "compare", "grid:10x10", "2", "-m", ",".join(names), "--seeds", "2",
                         "--device", "cpu", "--plot", str(plot))
    assert code == 0, err
    for name in names:
        assert name in out
    assert "median cut" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_python_dash_m_has_no_traceback(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    bad = tmp_path / "bad.graph"
    bad.write_text("2 1\n2\n")
    r = subprocess.run([sys.executable, "-m", "matchpart", "info", str(bad)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and without_compile_notice(r.stderr).startswith("matchpart: error:")
    r = subprocess.run([sys.executable, "-m", "matchpart", "--version"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0 and matchpart.__version__ in r.stdout
    r = subprocess.run([sys.executable, "-m", "matchpart", "partition", "grid:3x3", "0"], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("matchpart: error: argument K")
    assert len(r.stderr.splitlines()) == 1


# ---- matchpart.compare ---------------------------------------------------------------------
def test_compare_rows_are_consistent_with_partition():
    from matchpart import pipeline
    from matchpart.compare import compare, format_table
    names = matchpart.matchers.available()[:2]
    g = load_graph("grid:12x12")
    started = time.perf_counter()
    rows = compare(g, 4, names, seeds=(0, 1, 2), device="cpu", preset="fast")
    elapsed = time.perf_counter() - started
    assert sorted(r["matcher"] for r in rows) == sorted(names)
    for r in rows:
        results = [pipeline.partition(g, 4, matcher=r["matcher"], rating="expansion_star2", seed=s, device="cpu",
                                      preset="fast") for s in (0, 1, 2)]
        cuts = [res.cut for res in results]
        assert r["cuts"] == cuts  # same seeds, same partitions
        assert r["median_cut"] == sorted(cuts)[1] and r["min_cut"] == min(cuts)
        assert r["runs"] == 3 and r["feasible"] == sum(res.feasible for res in results)
        assert 0 < r["min_time"] <= r["median_time"] <= elapsed   # seconds of one of its runs
    assert [r["median_cut"] for r in rows if r["feasible"] == 3] == \
        sorted(r["median_cut"] for r in rows if r["feasible"] == 3)
    table = format_table(rows).splitlines()
    assert len(table) == 2 + len(rows) and "median cut" in table[0]


def test_compare_rejects_unknown_matcher_before_running():
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


@pytest.mark.gpu
def test_partition_on_the_gpu(capsys, tmp_path):
    out_file = tmp_path / "p.txt"
    code, out, err = run(capsys, "partition", "grid:40x40", "4", "--device", "gpu", "-o", str(out_file))
    assert code == 0, err
    parts = np.loadtxt(out_file, dtype=np.int64)
    assert parts.shape == (1600,) and set(parts.tolist()) == {0, 1, 2, 3}


@pytest.mark.gpu
def test_match_on_the_gpu(capsys):
    code, out, err = run(capsys, "match", "grid:40x40", "-m", "suitor", "--device", "gpu")
    assert code == 0, err
    assert field(out, "valid").startswith("yes")


def test_first_compilation_of_our_kernels_is_announced_once(capsys):
    # the first run after installing compiles every numba kernel (half a minute); the CLI
    # says so instead of pausing silently. Kernels of other packages are not announced.
    import numba
    from matchpart.cli import _compile_notice

    def ours(x):
        return x + 1

    def also_ours(x):
        return x * 2

    def theirs(x):
        return x - 1

    ours.__module__ = also_ours.__module__ = "matchpart.some_module"
    theirs.__module__ = "otherpackage"
    with _compile_notice():
        numba.njit(theirs)(1)
        assert COMPILE_NOTICE not in capsys.readouterr().err
        numba.njit(ours)(1)
        numba.njit(also_ours)(1)
    err = capsys.readouterr().err
    assert err.count(COMPILE_NOTICE) == 1
    numba.njit(ours)(2.0)  # outside the CLI nothing is printed
    assert capsys.readouterr().err == ""
