"""The matcher registry: every matcher the issue names is registered, plugins and callables work."""
import time

import numpy as np
import pytest

import matchpart
from matchpart.graph import Graph
from matchpart.matchers import Matching, available, describe, match, register, resolve

REQUIRED = {"red_blue", "red_blue_random", "local_max", "suitor", "locally_dominant", "karp_sipser",
            "heavy_edge", "random", "greedy", "gpa"}


def test_all_named_matchers_registered():
    missing = REQUIRED - set(available())
    assert not missing, f"matchers not registered: {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_describe_has_paper_and_description(name):
    info = describe(name)
    assert info.description and info.paper


def test_unknown_matcher_message():
    with pytest.raises(ValueError, match="unknown matcher 'nope'"):
        resolve("nope")


def _first_edge_matcher(graph, *, rating="weight", seed=0, backend=None):
    mate = np.full(graph.n, -1, dtype=np.int64)
    if graph.m:
        u = 0 if graph.degree[0] else int(np.flatnonzero(graph.degree)[0])
        v = int(graph.neighbors(u)[0])
        mate[u], mate[v] = v, u
    return Matching.from_mate(graph, mate)


def test_callable_accepted_wherever_a_name_is():
    g = Graph.from_edges([0, 1, 2], [1, 2, 3], [5, 1, 7])
    started = time.perf_counter()
    m = match(g, _first_edge_matcher, device="cpu")
    elapsed = time.perf_counter() - started
    assert m.cardinality == 1 and m.weight == 5 and m.matcher == "_first_edge_matcher"
    assert 0 < m.time <= elapsed   # seconds of the matcher's run, within the call's


def test_register_and_duplicate_name():
    name = "test_first_edge"
    register(name, _first_edge_matcher, description="first edge", paper="none", replace=True)
    assert name in available()
    with pytest.raises(ValueError, match="already registered"):
        register(name, _first_edge_matcher)
    g = Graph.from_edges([0, 1], [1, 2])
    assert matchpart.match(g, name, device="cpu").cardinality == 1
