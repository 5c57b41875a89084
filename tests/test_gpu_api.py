"""Every public entry point with device="gpu" runs (on the CuPy stand-in without a GPU), and the
GPU path agrees with the CPU on float weights as far as README's "CPU and GPU results" promises."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import matchpart
from matchpart import backend, load_graph
from matchpart.graph import Graph
from matchpart.matchers import available


pytestmark = pytest.mark.gpu

# Float weights: a matcher compares ratings computed elementwise (the same IEEE operation on
# both devices), so its matching is exact. partition() sums float weights (contraction, block
# weights, gains) in an order a GPU leaves unspecified, so a last-bit difference can flip a
# tie: its cut is held within this factor of the CPU's, and of another GPU-path run's.
FLOAT_CUT_TOLERANCE = 1.15
# the CPU-only k-way FM of the default preset is skipped on the GPU (as for integer weights)
FLOAT_CUT_TOLERANCE_WITHOUT_FM = 1.3


def float_weighted(spec="delaunay:1500", seed=1):
    """``spec`` with random float edge weights (one per undirected edge) and vertex weights."""
    g = load_graph(spec)
    rng = np.random.default_rng(seed)
    A = sp.csr_matrix((np.ones(len(g.indices)), g.indices, g.indptr), shape=(g.n, g.n))
    U = sp.triu(A, 1).tocoo()
    return Graph.from_edges(U.row, U.col, rng.random(U.nnz) + 0.1, g.n, vwgt=rng.random(g.n) * 3 + 0.5)


def other_draws(seed):
    """Let the stand-in draw other summation orders and write winners (no-op on a real GPU)."""
    import cupy_standin
    if isinstance(backend.get("gpu").xp, type(cupy_standin.cupy)):
        cupy_standin.reseed(seed)


def test_match_on_the_gpu_is_exact_on_float_weights():
    g = float_weighted()
    assert g.ewgt.dtype.kind == "f" and g.vwgt.dtype.kind == "f"
    # the serial baselines run on the host for a GPU graph; they are called the same way
    assert sum("gpu" in matchpart.matchers.describe(m).backends for m in available()) >= 6
    for name in available():
        for rating in ("weight", "expansion_star2"):
            cpu = matchpart.match(g, name, rating=rating, seed=3, device="cpu")
            runs = []
            for draw in (1, 2):
                other_draws(draw)
                runs.append(matchpart.match(g, name, rating=rating, seed=3, device="gpu"))
            for gpu in runs:
                assert isinstance(gpu.mate, np.ndarray) or hasattr(gpu.mate, "get")
                assert np.array_equal(backend.get("gpu").to_host(gpu.mate), cpu.mate), (name, rating)
                assert gpu.stats["rounds"] == cpu.stats["rounds"], (name, rating)
                assert gpu.weight == pytest.approx(cpu.weight, rel=1e-12), (name, rating)


@pytest.mark.parametrize("coarsening", ["matching", "cluster"])
def test_partition_on_the_gpu_with_float_weights_is_within_tolerance(coarsening):
    g = float_weighted()
    cpu = matchpart.partition(g, 8, seed=2, device="cpu", preset="fast", coarsening=coarsening)
    runs = []
    for draw in (1, 2):
        other_draws(draw)
        runs.append(matchpart.partition(g, 8, seed=2, device="gpu", preset="fast", coarsening=coarsening))
    for gpu in runs:
        assert gpu.feasible and isinstance(gpu.cut, float)
        assert gpu.cut == pytest.approx(matchpart.metrics.edge_cut(g, gpu.parts), rel=1e-9)
        assert gpu.cut <= FLOAT_CUT_TOLERANCE * cpu.cut
    a, b = (r.cut for r in runs)
    assert max(a, b) <= FLOAT_CUT_TOLERANCE * min(a, b)


def test_partition_on_the_gpu_default_preset_with_float_weights():
    g = float_weighted(seed=4)
    cpu = matchpart.partition(g, 4, seed=1, device="cpu")
    gpu = matchpart.partition(g, 4, seed=1, device="gpu")
    assert gpu.feasible and cpu.feasible
    assert gpu.cut <= FLOAT_CUT_TOLERANCE_WITHOUT_FM * cpu.cut


def test_partition_on_the_gpu_with_integer_weights_equals_cpu_for_networkx_input():
    G = nx.grid_2d_graph(20, 20)
    for i, (u, v) in enumerate(G.edges):
        G.edges[u, v]["weight"] = 1 + i % 3
    cpu = matchpart.partition(G, 4, seed=1, device="cpu", preset="fast")
    gpu = matchpart.partition(G, 4, seed=1, device="gpu", preset="fast")
    assert gpu.mapping == cpu.mapping and gpu.cut == cpu.cut


def test_b_matching_on_the_gpu():
    for g in (load_graph("ba:1500:3"), float_weighted("rgg:1500")):
        for b in (1, 3, np.arange(g.n) % 4):
            cpu = matchpart.b_matching(g, b, device="cpu")
            for draw in (1, 2):
                other_draws(draw)
                gpu = matchpart.b_matching(g, b, device="gpu")
                assert np.array_equal(gpu.edges, cpu.edges) and gpu.stats == cpu.stats
                assert gpu.weight == pytest.approx(cpu.weight, rel=1e-12)


@pytest.mark.parametrize("method", ["apfb", "apsb"])
def test_maximum_bipartite_matching_on_the_gpu(method):
    rng = np.random.default_rng(2)
    B = sp.random(800, 600, density=3 / 600, format="csr", random_state=rng)
    cpu = matchpart.maximum_bipartite_matching(B, method=method, device="cpu")
    for draw in (1, 2):
        other_draws(draw)
        assert np.array_equal(matchpart.maximum_bipartite_matching(B, method=method, device="gpu"), cpu)
    # a device matrix (cupyx.scipy.sparse, or the stand-in's) picks the GPU by itself
    dev = backend.get("gpu").sparse.csr_matrix(B)
    assert np.array_equal(matchpart.maximum_bipartite_matching(dev, method=method), cpu)


@pytest.mark.parametrize("method", ["gale_shapley", "mcvitie_wilson"])
def test_stable_marriage_on_the_gpu(method):
    rng = np.random.default_rng(7)
    n = 300
    P = [rng.choice(n, size=rng.integers(1, 20), replace=False).tolist() for _ in range(n)]
    R = [rng.permutation(n)[:rng.integers(1, 60)].tolist() for _ in range(n)]
    cpu = matchpart.stable_marriage(P, R, method=method, device="cpu", return_stats=True)
    for draw in (1, 2):
        other_draws(draw)
        gpu = matchpart.stable_marriage(P, R, method=method, device="gpu", return_stats=True)
        assert np.array_equal(gpu[0], cpu[0]) and gpu[1] == cpu[1]


def test_compare_on_the_gpu():
    g = load_graph("delaunay:800")
    names = ["local_max", "suitor"]
    cpu = matchpart.compare(g, 4, names, seeds=(0, 1), device="cpu", preset="fast")
    gpu = matchpart.compare(g, 4, names, seeds=(0, 1), device="gpu", preset="fast")
    assert [r["matcher"] for r in gpu] == [r["matcher"] for r in cpu]
    assert [r["cuts"] for r in gpu] == [r["cuts"] for r in cpu]  # integer weights: the same runs
    assert all(r["feasible"] == 2 for r in gpu)


def test_gpu_request_without_cupy_is_a_clear_error(monkeypatch):
    from matchpart.backend import core
    from matchpart.errors import DeviceError
    monkeypatch.setattr(core, "_cupy_or_reason", lambda: (None, "CuPy is not importable (test)"))
    monkeypatch.setattr(core, "_GPU", None)
    with pytest.raises(DeviceError, match="not importable"):
        matchpart.match(load_graph("grid:5x5"), device="gpu")



def test_compare_stays_callable_once_its_module_is_imported():
    # the submodule matchpart.compare shadows the lazily loaded function once imported
    import matchpart.compare  # noqa: F401
    rows = matchpart.compare(load_graph("grid:6x6"), 2, ["local_max"], seeds=(0,), device="gpu", preset="fast")
    assert rows[0]["matcher"] == "local_max" and rows[0]["feasible"] == 1


def test_metrics_on_the_gpu():
    from matchpart import metrics
    g = load_graph("delaunay:1000")
    parts = np.arange(g.n) % 5
    gpu_g = g.to("gpu")
    for f in (metrics.edge_cut, metrics.communication_volume):
        assert f(gpu_g, parts) == f(g, parts)
    be = backend.get("gpu")
    assert np.array_equal(be.to_host(metrics.block_weights(gpu_g, parts, 5)), metrics.block_weights(g, parts, 5))
    assert metrics.imbalance(gpu_g, parts, 5) == metrics.imbalance(g, parts, 5)
    assert metrics.is_balanced(gpu_g, parts, 5, 0.03) == metrics.is_balanced(g, parts, 5, 0.03)
