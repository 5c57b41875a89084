"""Several weights per vertex (METIS's ncon): balance in every constraint on random graphs, the
file format, pymetis's and the graph-learning call shapes, the CLI, errors, and the
single-constraint path unchanged."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matchpart
from matchpart import compat, metrics
from matchpart.errors import GraphError, GraphFormatError, UnsupportedOptionError
from matchpart.graph import Graph

from conftest import SHARED_GRAPHS

ROOT = Path(__file__).resolve().parent.parent


def _bounds_hold(vw, parts, k, eps, target_weights=None):
    totals = tuple(vw.sum(axis=0).tolist())
    bounds = metrics.constraint_bounds(totals, k, eps, target_weights)
    bw = np.stack([np.bincount(parts, weights=vw[:, j], minlength=k) for j in range(vw.shape[1])], axis=1)
    return bool((bw <= bounds).all())


def _mesh(n, seed=1):
    return matchpart.load_graph(f"delaunay:{n}:seed={seed}")


# ---- the single-constraint path is unchanged ---------------------------------------------------
# sha1 prefixes of the partitions that main gave before multi-constraint weights were added
# (same graphs, k, options, seed 0, CPU); c = 1 must still give exactly these. Pinned again
# when the recursive bisection's items got their own seeds (bisection_levels.py), and for
# PGPgiantcompo when heavy-tailed graphs of any size lost k-way FM on their coarse levels
# (relabel.power_law: 590 -> 592).
PINNED = [
    ("delaunay:3000", 5, {"eps": 0.05}, 273, "0b159a3624cbc3be"),
    # mean degree >= 7: clustered since (coarsen.hierarchy.CLUSTER_WHEN_MEAN_DEGREE); pinned on matching
    ("rgg:2000", 16, {"preset": "fast", "cluster_fallback": False}, 233, "300e1a385932deb9"),
    ("4elt.graph", 8, {}, 641, "f6947ef72a0aee24"),
    ("example_weighted.graph", 32, {}, 9669, "0fd6b84d947937d1"),
    ("PGPgiantcompo.graph", 4, {"target_weights": [0.1, 0.2, 0.3, 0.4]}, 592, "a2b49b0125d553c8"),
]


@pytest.mark.parametrize("spec,k,kwargs,cut,digest", PINNED)
def test_one_constraint_gives_the_partitions_it_gave_before(spec, k, kwargs, cut, digest):
    if spec.endswith(".graph"):
        if not (SHARED_GRAPHS / spec).exists():
            pytest.skip("../shared/graphs absent")
        spec = str(SHARED_GRAPHS / spec)
    r = matchpart.partition(spec, k, device="cpu", **kwargs)
    assert (r.cut, hashlib.sha1(r.parts.astype(np.int64).tobytes()).hexdigest()[:16]) == (cut, digest)
    # an (n, 1) weight array and a one-entry eps list are the one-constraint path too
    g = matchpart.load_graph(spec)
    r1 = matchpart.partition(g.with_vertex_weights(np.asarray(g.vwgt)[:, None]), k, device="cpu",
                             **{**kwargs, "eps": [kwargs.get("eps", 0.03)]})
    assert g.with_vertex_weights(np.asarray(g.vwgt)[:, None]).ncon == 1
    assert np.array_equal(r1.parts, r.parts)


# ---- balance in every constraint ------------------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(300, 1500), k=st.integers(2, 9), c=st.integers(2, 3),
       kind=st.sampled_from(["delaunay", "rgg", "er"]), eps=st.sampled_from([0.03, 0.1]))
def test_every_constraint_is_within_its_bound_on_random_graphs(seed, n, k, c, kind, eps):
    spec = {"delaunay": f"delaunay:{n}:seed={seed}", "rgg": f"rgg:{n}:seed={seed}",
            "er": f"er:{n}:{8 / n:.5f}:seed={seed}"}[kind]
    g = matchpart.load_graph(spec)
    rng = np.random.default_rng(seed)
    cols = [np.ones(g.n, dtype=np.int64), np.diff(np.asarray(g.indptr)) + 1,
            (rng.random(g.n) < 0.1).astype(np.int64), rng.integers(1, 11, size=g.n)]
    vw = np.stack([cols[0]] + [cols[1 + j] for j in rng.permutation(3)[:c - 1]], axis=1)
    vw[rng.integers(0, g.n), 1:] += 1          # no constraint sums to 0
    r = matchpart.partition(g.with_vertex_weights(vw), k, eps=eps, seed=seed % 1000, device="cpu")
    assert r.feasible and _bounds_hold(vw, r.parts, k, [eps] * c)
    assert r.parts.min() >= 0 and r.parts.max() < k
    assert r.cut == metrics.edge_cut(g, r.parts)
    assert len(r.constraint_imbalance) == c and r.imbalance == max(r.constraint_imbalance)
    assert r.block_weights.shape == (k, c)
    gw = g.with_vertex_weights(vw)
    assert metrics.is_balanced(gw, r.parts, k, eps) and metrics.imbalance(gw, r.parts, k) == r.imbalance


def test_one_tolerance_per_constraint_and_per_constraint_targets():
    g = _mesh(4000)
    rng = np.random.default_rng(3)
    vw = np.stack([np.ones(g.n), (rng.random(g.n) < 0.1), rng.integers(1, 11, size=g.n)], axis=1).astype(np.int64)
    gw = g.with_vertex_weights(vw)
    eps = [0.01, 0.2, 0.05]
    r = matchpart.partition(gw, 8, eps=eps, device="cpu")
    assert r.feasible and _bounds_hold(vw, r.parts, 8, eps) and r.eps == eps
    assert r.constraint_imbalance[0] <= 0.01 + 1e-9
    targets = np.array([[0.4, 0.2, 0.2, 0.2], [0.25, 0.25, 0.25, 0.25], [0.3, 0.3, 0.2, 0.2]]).T   # k x c
    r = matchpart.partition(gw, 4, eps=0.05, target_weights=targets, device="cpu")
    assert r.feasible and _bounds_hold(vw, r.parts, 4, [0.05] * 3, targets)
    assert r.max_block_weight.shape == (4, 3)
    shared = matchpart.partition(gw, 4, eps=0.05, target_weights=[0.4, 0.2, 0.2, 0.2], device="cpu")
    assert shared.feasible and _bounds_hold(vw, shared.parts, 4, [0.05] * 3, [0.4, 0.2, 0.2, 0.2])


def test_cut_is_close_to_the_one_constraint_cut():
    # a second, loose constraint should cost little cut: a real multilevel run, not a packing
    g = _mesh(20000)
    one = matchpart.partition(g, 16, device="cpu")
    vw = np.stack([np.ones(g.n), np.diff(np.asarray(g.indptr))], axis=1).astype(np.int64)
    two = matchpart.partition(g.with_vertex_weights(vw), 16, device="cpu")
    assert two.feasible and two.cut <= 1.1 * one.cut
    assert len(two.levels) > 3


# ---- errors -------------------------------------------------------------------------------------
def test_bad_shapes_and_weights_are_clear_errors():
    g = _mesh(500)
    vw = np.stack([np.ones(g.n), np.arange(g.n) % 3], axis=1).astype(np.int64)
    gw = g.with_vertex_weights(vw)
    with pytest.raises(ValueError, match="eps has 3 values but the graph has 2"):
        matchpart.partition(gw, 4, eps=[0.03, 0.03, 0.03])
    with pytest.raises(ValueError, match=r"eps\[1\]"):
        matchpart.partition(gw, 4, eps=[0.03, -1])
    with pytest.raises(ValueError, match="eps has 2 values but the graph has 1"):
        matchpart.partition(g, 4, eps=[0.03, 0.03])
    bad = vw.copy()
    bad[7, 1] = -2
    with pytest.raises(GraphError, match="vertex 7 has negative weight -2 .constraint 1") as e:
        g.with_vertex_weights(bad)
    assert e.value.kind == "bad_weight"
    zero = vw.copy()
    zero[:, 1] = 0
    with pytest.raises(GraphError, match="constraint 1 sums to 0") as e:
        matchpart.partition(g.with_vertex_weights(zero), 4)
    assert e.value.kind == "bad_weight"
    with pytest.raises(GraphError, match=r"\(500, c\)"):
        g.with_vertex_weights(np.ones((499, 2)))
    with pytest.raises(GraphError, match="one weight per vertex") as e:
        matchpart.match(gw, "local_max")
    assert e.value.kind == "unsupported"
    with pytest.raises(UnsupportedOptionError, match="contiguous"):
        matchpart.partition(gw, 4, contiguous=True)
    with pytest.raises(ValueError, match="k x 2|4 fractions or a 4 x 2"):
        matchpart.partition(gw, 4, target_weights=np.full((4, 3), 0.25))


def test_a_vertex_above_every_bound_is_reported_not_hidden():
    g = _mesh(300)
    vw = np.stack([np.ones(g.n), np.ones(g.n)], axis=1).astype(np.int64)
    vw[5, 1] = 10 * g.n
    with pytest.warns(UserWarning, match="vertex 5 weighs"):
        r = matchpart.partition(g.with_vertex_weights(vw), 4)
    assert not r.feasible


# ---- files --------------------------------------------------------------------------------------
def test_metis_files_with_ncon_round_trip(tmp_path):
    g = _mesh(400)
    vw = np.stack([np.ones(g.n), np.diff(np.asarray(g.indptr)), np.arange(g.n) % 5], axis=1).astype(np.int64)
    p = tmp_path / "g.graph"
    matchpart.save_graph(g.with_vertex_weights(vw), p)
    head = p.read_text().splitlines()[0].split()
    assert head[2:] == ["10", "3"]
    back = matchpart.load_graph(p)
    assert back.ncon == 3 and np.array_equal(np.asarray(back.vwgt), vw)
    assert np.array_equal(back.indices, g.indices) and back.total_vwgt == tuple(vw.sum(axis=0).tolist())
    # a hand-written file: vertex size first (fmt 110), two weights, then neighbours
    q = tmp_path / "h.graph"
    q.write_text("% two constraints\n3 2 110 2\n1 4 0 2\n1 5 1 1 3\n1 6 0 2\n")
    h = matchpart.load_graph(q)
    assert np.array_equal(np.asarray(h.vwgt), [[4, 0], [5, 1], [6, 0]]) and h.m == 2
    q.write_text("3 2 10 2\n4 2\n5 1 1 3\n6 2\n")      # one weight short on line 2
    with pytest.raises(GraphFormatError):
        matchpart.load_graph(q)


# ---- call shapes --------------------------------------------------------------------------------
def test_pymetis_call_shape_with_flattened_ncon_weights():
    g = _mesh(2000)
    xadj, adjncy = np.asarray(g.indptr), np.asarray(g.indices)
    vw = np.stack([np.ones(g.n), np.diff(xadj)], axis=1).astype(np.int64)
    flat = vw.reshape(-1).tolist()            # vertex by vertex, as METIS's vwgt with ncon = 2
    cut, parts = compat.part_graph(8, xadj=xadj, adjncy=adjncy, vweights=flat, options={"ufactor": 50})
    parts = np.asarray(parts)
    assert cut == metrics.edge_cut(g, parts) and _bounds_hold(vw, parts, 8, [0.05, 0.05])
    with pytest.raises(GraphError, match="n \\* ncon"):
        compat.part_graph(8, xadj=xadj, adjncy=adjncy, vweights=flat[:-1])
    pymetis = pytest.importorskip("pymetis")
    mcut, mparts = pymetis.part_graph(8, pymetis.CSRAdjacency(xadj, adjncy), vweights=flat)
    assert len(mparts) == g.n                  # pymetis takes the same shape


def test_nxmetis_shape_with_list_node_weights_and_ubvec():
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(30, 30))
    for v in G.nodes:
        G.nodes[v]["w"] = [1, 1 + (v % 4 == 0)]
    objval, blocks = compat.nx_partition(G, 4, node_weight="w", ubvec=[1.03, 1.1])
    parts = np.empty(G.number_of_nodes(), dtype=np.int64)
    for b, nodes in enumerate(blocks):
        parts[nodes] = b
    vw = np.array([G.nodes[v]["w"] for v in G.nodes])
    assert _bounds_hold(vw, parts, 4, [0.03, 0.1])


def test_graph_learning_balance_helper():
    G = nx.barabasi_albert_graph(3000, 3, seed=2)
    rng = np.random.default_rng(0)
    train = rng.random(3000) < 0.1
    for v in G.nodes:
        G.nodes[v]["train_mask"] = bool(train[v])
    r = matchpart.partition(G, 8, balance=["train_mask", "degree"], eps=0.05, device="cpu")
    deg = np.array([G.degree(v) for v in G.nodes])
    vw = np.stack([np.ones(3000), train, deg], axis=1).astype(np.int64)
    assert r.feasible and _bounds_hold(vw, r.parts, 8, [0.05] * 3)
    assert set(r.mapping) == set(G.nodes) and len(r.constraint_imbalance) == 3
    extra = rng.integers(1, 5, size=3000)
    r2 = matchpart.partition(G, 4, balance=[extra], device="cpu")
    assert _bounds_hold(np.stack([np.ones(3000), extra], axis=1), r2.parts, 4, [0.03, 0.03])
    with pytest.raises(ValueError, match="networkx"):
        matchpart.partition(matchpart.load_graph("delaunay:300"), 4, balance=["train_mask"])


# ---- command line ---------------------------------------------------------------------------------
def test_cli_partitions_an_ncon_file_with_one_eps_per_constraint(tmp_path):
    g = _mesh(3000)
    vw = np.stack([np.ones(g.n), np.diff(np.asarray(g.indptr)), np.arange(g.n) % 10 == 0], axis=1).astype(np.int64)
    p = tmp_path / "g.graph"
    matchpart.save_graph(g.with_vertex_weights(vw), p)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "matchpart", "partition", str(p), "8", "--eps", "0.03,0.05,0.1",
                        "--json", "--device", "cpu"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["eps"] == [0.03, 0.05, 0.1] and len(report["constraint_imbalance"]) == 3
    assert report["feasible"] and len(report["block_weights"][0]) == 3
    parts = matchpart.read_partition(f"{p}.part.8", n=g.n)
    assert _bounds_hold(vw, parts, 8, [0.03, 0.05, 0.1]) and report["cut"] == metrics.edge_cut(g, parts)
    r = subprocess.run([sys.executable, "-m", "matchpart", "partition", str(p), "8", "--eps", "0.03,0.05"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode != 0 and "eps has 2 values but the graph has 3" in r.stderr
    r = subprocess.run([sys.executable, "-m", "matchpart", "partition", str(p), "8", "--device", "cpu"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0 and "per constraint:" in r.stdout


@pytest.mark.gpu
def test_several_weights_per_vertex_say_they_run_on_the_cpu_only():
    # on the CuPy stand-in without a GPU: device="gpu" is refused clearly, "auto" runs on the CPU
    g = _mesh(600)
    vw = np.stack([np.ones(g.n), np.diff(np.asarray(g.indptr))], axis=1).astype(np.int64)
    gw = g.with_vertex_weights(vw)
    with pytest.raises(UnsupportedOptionError, match="CPU only") as e:
        matchpart.partition(gw, 4, device="gpu")
    assert e.value.kind == "unsupported"
    r = matchpart.partition(gw.to("gpu"), 4, device="auto")
    assert r.feasible and _bounds_hold(vw, r.parts, 4, [0.03, 0.03])
