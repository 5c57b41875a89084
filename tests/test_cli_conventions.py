"""The command line as a METIS user expects it: gpmetis file names, -o -, --json, the metrics
report, progress, --seed vs specs, the repair/coarsening/rating/preset options end to end,
and compare over a set of graphs."""
import csv
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import matchpart
from matchpart.cli import main
from matchpart.io import load_graph, read_partition
from matchpart.progress import Progress

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # usage errors leave through argparse
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, "".join(ln for ln in err.splitlines(True) if "compiling kernels" not in ln)


def cut_of(graph, parts):
    rows = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    return int(graph.ewgt[parts[rows] != parts[graph.indices]].sum()) // 2


def python_m(*argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "matchpart", *argv], capture_output=True, text=True, env=env,
                          timeout=300)


def test_default_output_names_follow_gpmetis(capsys, tmp_path):
    code, out, err = run(capsys, "partition", "grid:6x6", "3", "--device", "cpu")
    assert code == 0, err
    assert (tmp_path / "grid_6x6.part.3").exists() and "wrote grid_6x6.part.3" in out
    graph = tmp_path / "sub" / "g.graph"
    graph.parent.mkdir()
    matchpart.save_graph(load_graph("grid:5x5"), graph)
    code, out, err = run(capsys, "partition", str(graph), "2", "--device", "cpu")
    assert code == 0, err
    parts = read_partition(f"{graph}.part.2", n=25)  # beside the graph file, as gpmetis does
    assert int(out.split("cut:")[1].split()[0]) == cut_of(load_graph(graph), parts)
    (tmp_path / "sub" / "g.graph.part.4").mkdir()  # the default name is taken: say how to choose another
    code, out, err = run(capsys, "partition", str(graph), "4")
    assert code == 1 and "is a directory" in err and "-o FILE" in err


def test_stdout_output_and_json_report(capsys):
    started = time.perf_counter()
    code, out, err = run(capsys, "partition", "delaunay:300", "4", "--device", "cpu", "-o", "-", "--json")
    elapsed = time.perf_counter() - started
    assert code == 0
    parts = np.array([int(x) for x in out.split()])
    report = json.loads(err)  # the report goes to stderr when stdout carries the partition
    g = load_graph("delaunay:300")
    assert report["cut"] == cut_of(g, parts)
    assert report["block_weights"] == np.bincount(parts, minlength=4).tolist()
    assert report["output"] is None and report["feasible"] is True
    for key in ("imbalance", "timings", "levels", "total_comm_volume", "max_comm_volume", "boundary_vertices",
                "empty_blocks", "pieces"):
        assert key in report
    assert report["levels"][0]["n"] == 300
    # seconds of this run: the phases within the total, the total within the command's time
    timings = report["timings"]
    phases = timings["coarsening"] + timings["initial"] + timings["refinement"]
    assert 0 < phases <= timings["total"] <= elapsed


def test_text_report_names_the_metrics(capsys):
    code, out, err = run(capsys, "partition", "grid:8x8", "4", "--device", "cpu", "-o", "p", "-v")
    assert code == 0
    for words in ("comm volume: total", "boundary vertices:", "empty blocks: 0", "pieces per block:",
                  "block weights:", "levels:"):
        assert words in out


def test_seed_does_not_reseed_a_spec(capsys, monkeypatch):
    seen = []
    real = matchpart.partition

    def spy(graph, k, **kwargs):
        seen.append((graph.indptr.copy(), graph.indices.copy(), kwargs["seed"]))
        return real(graph, k, **kwargs)
    monkeypatch.setattr(matchpart, "partition", spy)
    for seed in ("1", "2"):
        assert run(capsys, "partition", "delaunay:1000", "4", "--seed", seed, "--preset", "fast", "-o", "p")[0] == 0
    (p1, i1, s1), (p2, i2, s2) = seen
    assert (s1, s2) == (1, 2)
    assert np.array_equal(p1, p2) and np.array_equal(i1, i2)  # the same graph, partitioned with two seeds
    assert run(capsys, "partition", "delaunay:1000:seed=5", "4", "--preset", "fast", "-o", "p")[0] == 0
    assert not np.array_equal(seen[-1][1], i1)  # the spec's own seed picks another graph


def test_repair_options_end_to_end(tmp_path):
    bad = tmp_path / "bad.graph"
    bad.write_text("4 4\n2 3\n1 2 3\n1 2\n3\n")  # 4 lists 3 but 3 does not list 4; 2 lists itself
    r = python_m("partition", str(bad), "2", "--device", "cpu")
    assert r.returncode == 1 and "error" in r.stderr
    r = python_m("partition", str(bad), "2", "--device", "cpu", "--symmetrize", "--drop-self-loops", "--json",
                 "-o", str(tmp_path / "p"))
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert (report["n"], report["m"]) == (4, 4)
    assert report["cut"] == cut_of(load_graph(bad, symmetrize=True, drop_self_loops=True),
                                   read_partition(tmp_path / "p", n=4))


def test_coarsening_rating_preset_end_to_end(tmp_path):
    r = python_m("partition", "delaunay:2000", "4", "--device", "cpu", "--coarsening", "cluster", "--rating",
                 "weight", "--preset", "fast", "--json", "-o", str(tmp_path / "p"))
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["feasible"] and report["cut"] == cut_of(load_graph("delaunay:2000"),
                                                          read_partition(tmp_path / "p", n=2000))
    for argv, words in [(["--coarsening", "louvain"], "invalid choice"), (["--rating", "heavy"], "unknown rating"),
                        (["--preset", "turbo"], "invalid choice")]:
        r = python_m("partition", "grid:3x3", "2", *argv)
        assert r.returncode in (1, 2) and words in r.stderr and "Traceback" not in r.stderr


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal_and_after_a_delay():
    stream = FakeTerminal()
    with Progress("compare", stream=stream, delay=0) as p:
        p.update("[1/2] g local_max seed 0")
    text = stream.getvalue()
    assert "compare: [1/2] g local_max seed 0" in text and text.endswith("\r\033[K")  # wiped at the end
    stream = FakeTerminal()
    with Progress("compare", stream=stream, delay=60) as p:
        p.update("step")
    assert stream.getvalue() == ""  # short work shows nothing
    quiet = Progress("x", stream=io.StringIO(), delay=0)  # not a terminal: off
    assert not quiet.enabled
    assert not Progress("x", stream=FakeTerminal(), enabled=False).enabled  # --quiet


def test_compare_over_a_set_of_graphs(capsys, tmp_path):
    folder = tmp_path / "graphs"
    folder.mkdir()
    matchpart.save_graph(load_graph("grid:6x6"), folder / "a.graph")
    matchpart.save_graph(load_graph("delaunay:200"), folder / "b.mtx")
    (folder / "notes.md").write_text("not a graph")
    names = matchpart.matchers.available()[:2]
    base = ["compare", str(folder), "grid:5x5", "2", "-m", ",".join(names), "--repeats", "2", "--device", "cpu",
            "--preset", "fast"]
    code, out, err = run(capsys, *base, "--csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["graph"] for r in rows} == {"a.graph", "b.mtx", "grid:5x5"} and len(rows) == 3 * len(names)
    assert all(len(r["cuts"].split(";")) == 2 and r["runs"] == "2" for r in rows)
    code, out, err = run(capsys, *base, "--json")
    data = json.loads(out)
    assert code == 0 and len(data["rows"]) == 3 * len(names) and data["k"] == 2
    assert {p["matcher"] for p in data["profile"]} == set(names)
    assert max(p["within_1"] for p in data["profile"]) > 0
    code, out, err = run(capsys, *base)
    assert code == 0 and "median cut" in out and "within 5%" in out and "over 3 graph(s), k=2" in out


def test_compare_plot_file(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    name = matchpart.matchers.available()[0]
    code, out, err = run(capsys, "compare", "grid:5x5", "grid:4x6", "2", "-m", name, "-r", "1", "--device", "cpu",
                         "--plot", "cmp.png")
    assert code == 0 and (tmp_path / "cmp.png").stat().st_size > 0


def test_target_weights(capsys):
    code, out, err = run(capsys, "partition", "grid:20x20", "3", "--target-weights", "0.5,0.25,0.25", "--json",
                         "-o", "p", "--device", "cpu", "--preset", "fast")
    assert code == 0, err
    report = json.loads(out)
    weights = np.bincount(read_partition("p", n=400), minlength=3)
    assert report["max_block_weight"] == [206, 103, 103]  # (1 + 0.03) * ceil(t_i * 400)
    assert report["feasible"] and (weights <= [206, 103, 103]).all() and weights[0] > 150
    assert report["block_weights"] == weights.tolist()
    for bad, words in [("0.5,0.25", "one fraction per block"), ("0.5,0.5,0.5", "sum to 1"),
                       ("0.5,x,0.5", "comma-separated fractions")]:
        code, out, err = run(capsys, "partition", "grid:20x20", "3", "--target-weights", bad, "-o", "p")
        assert code in (1, 2) and words in err and len(err.strip().splitlines()) == 1
