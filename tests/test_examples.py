"""Every script in examples/ runs on small inputs (in-process: no interpreter start per script),
and each test checks what its script computed, printed and wrote, not only that it printed."""
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import matchpart
from matchpart.compare import format_table
from matchpart.io import load_graph, read_partition

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# script -> small arguments
ARGS = {
    "pymetis_style.py": ["3"],
    "networkx_draw.py": ["3", "blocks.png"],
    "compare_set.py": ["2", "1", "grid:6x6", "delaunay:200"],
    "networkx_input.py": [],
    "partition_file.py": ["grid:10x10", "4"],
    "compare_matchers.py": ["grid:10x10", "2"],
    "order_spd.py": ["grid:30x30"],
}


def run_example(script, tmp_path, monkeypatch, capsys):
    """Run ``script`` with its small arguments in tmp_path; (its globals at the end, its stdout)."""
    monkeypatch.chdir(tmp_path)  # the scripts write their outputs (partition files, plots) here
    monkeypatch.setattr(sys, "argv", [script] + ARGS[script])
    names = runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    return names, capsys.readouterr().out


def is_png(path):
    return path.is_file() and path.read_bytes()[:8] == PNG_MAGIC


def cut_of_adjacency(adjacency, parts, eweights=None):
    """Edge cut of a pymetis-style input (neighbour lists or CSR), each edge counted once."""
    if hasattr(adjacency, "adj_starts"):
        xadj, adjncy = np.asarray(adjacency.adj_starts), np.asarray(adjacency.adjacent)
    else:
        xadj = np.concatenate([[0], np.cumsum([len(a) for a in adjacency])])
        adjncy = np.concatenate([np.asarray(a) for a in adjacency])
    w = np.ones(len(adjncy), dtype=np.int64) if eweights is None else np.asarray(eweights)
    parts = np.asarray(parts)
    rows = np.repeat(np.arange(len(xadj) - 1), np.diff(xadj))
    return int(w[parts[rows] != parts[adjncy]].sum()) // 2


def cut_of_blocks(G, block, weight="weight"):
    """Edge cut of a networkx graph under {node: block}."""
    return sum(d.get(weight, 1) for u, v, d in G.edges(data=True) if block[u] != block[v])


def test_every_example_is_listed():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(ARGS)


def volume_of_adjacency(adjacency, membership):
    """METIS's total communication volume: per vertex, the other blocks among its neighbours."""
    return sum(len({membership[u] for u in adjacency[v]} - {membership[v]}) for v in range(len(adjacency)))


def test_pymetis_style(tmp_path, monkeypatch, capsys):
    ns, out = run_example("pymetis_style.py", tmp_path, monkeypatch, capsys)
    membership = list(ns["membership"])
    assert len(membership) == 7 and set(membership) <= {0, 1, 2}
    assert ns["n_cuts"] == cut_of_adjacency(ns["adjacency"], membership)
    assert f"3 blocks of a 7-vertex graph: cut {ns['n_cuts']}, membership {membership}" in out
    weighted = ns["parts"]
    csr = matchpart.compat.CSRAdjacency(ns["xadj"], ns["adjncy"])
    assert len(weighted.vertex_part) == 6
    assert weighted.edge_cuts == cut_of_adjacency(csr, weighted.vertex_part, ns["eweights"])
    assert f"weighted 2x3 grid: cut {weighted.edge_cuts}" in out
    assert "refused (unsupported):" in out and "ptype" in out
    assert f"minimum-volume partition: volume {ns['volume']}" in out
    assert ns["volume"] == volume_of_adjacency(ns["adjacency"], list(ns["vol_membership"]))


def test_networkx_draw(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")   # the test extra brings it
    ns, out = run_example("networkx_draw.py", tmp_path, monkeypatch, capsys)
    G, parts = ns["G"], ns["parts"]
    assert len(parts) == 3 and sorted(v for p in parts for v in p) == sorted(G)
    block = {v: i for i, p in enumerate(parts) for v in p}
    assert ns["objval"] == cut_of_blocks(G, block) and f"cut weight {ns['objval']}" in out
    assert is_png(tmp_path / "blocks.png") and "wrote blocks.png" in out


def test_networkx_draw_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # as if not installed
    ns, out = run_example("networkx_draw.py", tmp_path, monkeypatch, capsys)
    assert "not drawing" in out and f"cut weight {ns['objval']}" in out
    assert list(tmp_path.iterdir()) == []


def test_compare_set(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    ns, out = run_example("compare_set.py", tmp_path, monkeypatch, capsys)
    rows = ns["rows"]
    pairs = sorted((r["graph"], r["matcher"]) for r in rows)
    assert pairs == sorted((g, m) for g in ("grid:6x6", "delaunay:200") for m in matchpart.matchers.available())
    assert all(r["runs"] == 1 and r["k"] == 2 for r in rows)
    assert format_table(rows) in out
    assert is_png(tmp_path / "profile.png") and "wrote profile.png" in out


def test_networkx_input(tmp_path, monkeypatch, capsys):
    ns, out = run_example("networkx_input.py", tmp_path, monkeypatch, capsys)
    G, res = ns["G"], ns["res"]
    assert set(res.mapping) == set(G) and set(res.mapping.values()) == {0, 1, 2}
    assert res.cut == cut_of_blocks(G, res.mapping) and f"cut {res.cut} " in out
    assert sum(f"block {b} " in out for b in range(3)) == 3


def test_partition_file(tmp_path, monkeypatch, capsys):
    ns, out = run_example("partition_file.py", tmp_path, monkeypatch, capsys)
    parts = read_partition(tmp_path / "grid_10x10.part.4", n=100)
    g = load_graph("grid:10x10")
    assert np.array_equal(parts, ns["res"].parts)
    assert f"cut {matchpart.metrics.edge_cut(g, parts)}," in out
    assert f"block weights: {np.bincount(parts, minlength=4).tolist()}" in out


def test_compare_matchers(tmp_path, monkeypatch, capsys):
    ns, out = run_example("compare_matchers.py", tmp_path, monkeypatch, capsys)
    single, partitions = out.split("partitions into 2 blocks")
    names = matchpart.matchers.available()
    assert all(f"  {name} " in single for name in names)   # one matching per matcher
    rows = ns["rows"]
    assert sorted(r["matcher"] for r in rows) == sorted(names) and all(r["runs"] == 2 for r in rows)
    assert format_table(rows) in partitions


def test_order_spd(tmp_path, monkeypatch, capsys):
    ns, out = run_example("order_spd.py", tmp_path, monkeypatch, capsys)
    # every ordering factorizes the SPD matrix to a tiny residual, and SuperLU's fill with
    # our permutation (L and U both hold the diagonal) is what metrics.fill predicted
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines() if ln.split()[:1] in
            (["matchpart"], ["COLAMD"], ["MMD_AT_PLUS_A"])}
    assert all(float(r[-1]) < 1e-8 for r in rows.values()) and len(rows) == 3
    predicted = int(out.split("nnz(L) ")[1].split()[0])
    assert int(rows["matchpart"][-3]) == 2 * predicted
    perm, iperm = np.asarray(ns["perm"]), np.asarray(ns["iperm"])
    assert np.array_equal(np.sort(perm), np.arange(ns["n"])) and np.array_equal(iperm[perm], np.arange(ns["n"]))
