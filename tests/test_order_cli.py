"""The ``matchpart order`` and ``matchpart separator`` commands."""
import json

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import matchpart
from matchpart.cli import main
from matchpart.order.fill import fill


def test_order_writes_iperm_like_ndmetis(tmp_path, capsys):
    g = matchpart.generate("grid:15x15")
    path = tmp_path / "g.graph"
    matchpart.save_graph(g, str(path))
    assert main(["order", str(path), "--leaf-size", "120"]) == 0
    out = capsys.readouterr().out
    lines = (tmp_path / "g.graph.iperm").read_text().split()
    iperm = np.array([int(x) for x in lines])
    assert len(iperm) == g.n and sorted(iperm.tolist()) == list(range(g.n))
    perm = np.empty(g.n, dtype=np.int64)
    perm[iperm] = np.arange(g.n)
    f = fill(g, perm)
    assert f"nnz(L):     {f.nnz}" in out and "separators at depth 0: 15" in out and "flops:" in out


def test_order_json_and_stdout(tmp_path, capsys):
    assert main(["order", "grid:6x6x6", "-o", str(tmp_path / "x.iperm"), "--json", "--leaf-size", "20"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["vertices"] == 216 and report["nnz_L"] > 216 and report["flops"] > report["nnz_L"]
    assert report["top_separators"][0][0] == 36 and report["output"].endswith("x.iperm")
    assert main(["order", "grid:5x5", "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert sorted(int(x) for x in captured.out.split()) == list(range(25))
    assert "nnz(L):" in captured.err


def test_order_reads_a_matrix_market_matrix(tmp_path, capsys):
    base = matchpart.generate("grid:10x10").to_scipy()
    A = (sp.eye(100) * 4 - base).tocoo()              # an SPD matrix with its diagonal
    A = sp.triu(A).tocoo()                            # as a general file: one triangle only
    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(str(path), A)
    assert main(["order", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["vertices"] == 100 and report["edges"] == 180
    assert len((tmp_path / "a.mtx.iperm").read_text().split()) == 100


def test_separator_command(tmp_path, capsys):
    assert main(["separator", "grid:12x30", "-o", str(tmp_path / "s.sep"), "--method", "apsb"]) == 0
    out = capsys.readouterr().out
    labels = np.array([int(x) for x in (tmp_path / "s.sep").read_text().split()])
    g = matchpart.generate("grid:12x30")
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    assert not ((labels[rows] == 0) & (labels[g.indices] == 1)).any()
    assert f"separator:  {(labels == 2).sum()}" in out and "balanced:   yes" in out


@pytest.mark.parametrize("argv, code, text", [
    (["order", "no_such.graph"], 1, "no such graph file"),
    (["order", "grid:4x4", "--eps", "-1"], 2, "--eps"),
    (["order", "grid:4x4", "--leaf-size", "0"], 2, "--leaf-size"),
    (["separator", "grid:4x4", "--method", "dfs"], 2, "--method"),
    (["order", "grid:4x4", "-m", "no_such_matcher", "-o", "-"], 1, "no_such_matcher"),
])
def test_errors_are_one_line(argv, code, text, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) if code == 2 else _nothing() as exc:
        rc = main(argv)
    rc = exc.value.code if code == 2 else rc
    err = capsys.readouterr().err
    assert rc == code and text in err and len(err.strip().splitlines()) == 1


def test_help_explains_the_output(capsys):
    with pytest.raises(SystemExit):
        main(["order", "--help"])
    text = capsys.readouterr().out
    assert "iperm[v]" in text and "nnz(L)" in text and "Matrix Market" in text


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
