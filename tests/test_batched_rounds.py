"""The GPU runs the parallel matchers' rounds as fixed-shape masked steps in batches, with a
host sync only between batches (ROUNDS_PER_CHECK["gpu"]); the CPU runs one-round batches
over compacted lists. Here the batched formulation runs on numpy, with batch sizes that end
before, at and after the last round, and must give the same matching and the same
per-round stats as the CPU's."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from matchpart import load_graph
from matchpart.matchers import run_matcher
from matchpart.matchers import karp_sipser as ks_module
from matchpart.matchers import local_max as local_max_module
from matchpart.matchers import red_blue as red_blue_module
from matchpart.matchers import b_suitor as b_suitor_module
from matchpart.matchers import stable_marriage as sm_module
from matchpart.matchers import suitor as suitor_module
from test_matchers_basic import random_graphs

BATCHED = {"suitor": suitor_module, "locally_dominant": suitor_module, "karp_sipser": ks_module,
           "local_max": local_max_module, "red_blue": red_blue_module, "red_blue_random": red_blue_module}


def _run(name, g, seed, batch, monkeypatch):
    with monkeypatch.context() as mp:
        mp.setitem(BATCHED[name].ROUNDS_PER_CHECK, "cpu", batch)
        if hasattr(BATCHED[name], "CPU_KERNEL"):  # run the whole-array rounds, not the kernel
            mp.setattr(BATCHED[name], "CPU_KERNEL", False)
        return run_matcher(name, g, seed=seed)


@pytest.mark.parametrize("name", sorted(BATCHED))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(g=random_graphs(max_n=30), seed=st.integers(0, 1000), batch=st.integers(2, 5))
def test_batched_rounds_equal_one_round_batches_on_random_graphs(name, g, seed, batch, monkeypatch):
    want = _run(name, g, seed, 1, monkeypatch)
    got = _run(name, g, seed, batch, monkeypatch)
    assert np.array_equal(got.mate, want.mate)
    assert got.stats == want.stats


@pytest.mark.parametrize("name", sorted(BATCHED))
@pytest.mark.parametrize("spec", ["delaunay:3000", "er:2000:6", "ba:2000:4"])
def test_batched_rounds_equal_one_round_batches_on_generated_graphs(name, spec, monkeypatch):
    # ba: hubs, whose windows must grow across long runs of taken entries (suitor, LD)
    g = load_graph(spec)
    want = _run(name, g, 3, 1, monkeypatch)
    for batch in (3, 8):
        got = _run(name, g, 3, batch, monkeypatch)
        assert np.array_equal(got.mate, want.mate) and got.stats == want.stats, batch


@pytest.mark.parametrize("method", ["gale_shapley", "mcvitie_wilson"])
@pytest.mark.parametrize("batch", [2, 5])
def test_batched_stable_marriage_equals_one_round_batches(method, batch, monkeypatch):
    rng = np.random.default_rng(batch)
    n_p, n_r = 300, 200
    P = [list(rng.choice(n_r, rng.integers(0, 25), replace=False)) for _ in range(n_p)]
    R = [list(rng.permutation(n_p)[:rng.integers(0, n_p)]) for _ in range(n_r)]
    want = sm_module.stable_marriage(P, R, method=method, return_stats=True)
    monkeypatch.setitem(sm_module.ROUNDS_PER_CHECK, "cpu", batch)
    got = sm_module.stable_marriage(P, R, method=method, return_stats=True)
    assert np.array_equal(got[0], want[0]) and got[1] == want[1]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(g=random_graphs(max_n=30), b=st.integers(0, 3), per_vertex=st.booleans(), batch=st.integers(2, 5))
def test_batched_b_suitor_equals_one_round_batches(g, b, per_vertex, batch, monkeypatch):
    if per_vertex:
        b = np.random.default_rng(b).integers(0, 4, g.n)
    monkeypatch.setattr(b_suitor_module, "CPU_KERNEL", False)  # the whole-array rounds
    want = b_suitor_module.b_matching(g, b, device="cpu")
    with monkeypatch.context() as mp:
        mp.setitem(b_suitor_module.ROUNDS_PER_CHECK, "cpu", batch)
        got = b_suitor_module.b_matching(g, b, device="cpu")
    assert np.array_equal(got.edges, want.edges) and got.stats == want.stats


@pytest.mark.parametrize("spec", ["delaunay:3000", "ba:2000:4"])
def test_batched_b_suitor_equals_one_round_batches_on_generated_graphs(spec, monkeypatch):
    g = load_graph(spec)
    monkeypatch.setattr(b_suitor_module, "CPU_KERNEL", False)  # the whole-array rounds
    for b in (1, 3):
        want = b_suitor_module.b_matching(g, b, device="cpu")
        monkeypatch.setitem(b_suitor_module.ROUNDS_PER_CHECK, "cpu", 4)
        got = b_suitor_module.b_matching(g, b, device="cpu")
        monkeypatch.setitem(b_suitor_module.ROUNDS_PER_CHECK, "cpu", 1)
        assert np.array_equal(got.edges, want.edges) and got.stats == want.stats
