"""Tests for stable marriage (Gale-Shapley / McVitie-Wilson rounds) and Lemma 3.1 (greedy = stable)."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import matchpart
from matchpart.graph import Graph
from matchpart.matchers import edge_priority, matching_problems
from matchpart.matchers.stable_marriage import (greedy_by_stable_marriage, matching_from_stable,
                                                smi_from_graph, stable_marriage)

METHODS = ["gale_shapley", "mcvitie_wilson"]


# ---- independent references ----------------------------------------------------------

def serial_gale_shapley(proposer_lists, receiver_lists):
    """Textbook Gale-Shapley with a queue of free proposers (incomplete lists allowed)."""
    rank = [{p: i for i, p in enumerate(lst)} for lst in receiver_lists]
    nxt = [0] * len(proposer_lists)
    holds = [-1] * len(receiver_lists)
    queue = list(range(len(proposer_lists)))
    while queue:
        p = queue.pop(0)
        while nxt[p] < len(proposer_lists[p]):
            r = proposer_lists[p][nxt[p]]
            nxt[p] += 1
            if p not in rank[r]:
                continue                      # r does not accept p at all
            if holds[r] == -1 or rank[r][p] < rank[r][holds[r]]:
                if holds[r] != -1:
                    queue.append(holds[r])
                holds[r] = p
                break
    partner = [-1] * len(proposer_lists)
    for r, p in enumerate(holds):
        if p >= 0:
            partner[p] = r
    return partner


def blocking_pairs(proposer_lists, receiver_lists, partner):
    """All mutually acceptable (p, r) that both prefer each other to what they have."""
    husband = {r: p for p, r in enumerate(partner) if r >= 0}
    out = []
    for p, lst in enumerate(proposer_lists):
        for r in lst:
            if p not in receiver_lists[r]:
                continue
            p_prefers = partner[p] == -1 or lst.index(r) < lst.index(partner[p])
            h = husband.get(r, -1)
            r_prefers = h == -1 or receiver_lists[r].index(p) < receiver_lists[r].index(h)
            if p_prefers and r_prefers and partner[p] != r:
                out.append((p, r))
    return out


def serial_greedy(graph, rating="weight"):
    """Edges by increasing edge_priority (heaviest first), take an edge if both ends are free."""
    prio = np.asarray(edge_priority(graph, rating))
    indptr, indices = np.asarray(graph.indptr), np.asarray(graph.indices)
    rows = np.repeat(np.arange(graph.n), np.diff(indptr))
    mate = np.full(graph.n, -1, dtype=np.int64)
    for e in np.argsort(prio, kind="stable"):
        u, v = int(rows[e]), int(indices[e])
        if mate[u] == -1 and mate[v] == -1:
            mate[u], mate[v] = v, u
    return mate


@st.composite
def instances(draw, complete=False):
    n_p = draw(st.integers(0, 9))
    n_r = n_p if complete else draw(st.integers(0, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if complete:
        P = [rng.permutation(n_r).tolist() for _ in range(n_p)]
        R = [rng.permutation(n_p).tolist() for _ in range(n_r)]
    else:
        P = [rng.permutation(n_r)[:rng.integers(0, n_r + 1)].tolist() for _ in range(n_p)]
        R = [rng.permutation(n_p)[:rng.integers(0, n_p + 1)].tolist() for _ in range(n_r)]
    return P, R


# ---- stable marriage -----------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(inst=instances(complete=True))
def test_complete_lists_equal_serial_gale_shapley(inst):
    P, R = inst
    expected = serial_gale_shapley(P, R)
    for method in METHODS:
        got = stable_marriage(P, R, method=method, device="cpu")
        assert got.tolist() == expected
        assert (got >= 0).all()                       # SM: everybody marries
        assert blocking_pairs(P, R, got.tolist()) == []


@settings(max_examples=100, deadline=None)
@given(inst=instances())
def test_incomplete_lists_equal_serial_gale_shapley_and_are_stable(inst):
    P, R = inst
    expected = serial_gale_shapley(P, R)
    results = [stable_marriage(P, R, method=m, device="cpu") for m in METHODS]
    assert results[0].tolist() == results[1].tolist() == expected
    got = results[0]
    assert got.dtype == np.int64 and got.shape == (len(P),)
    assert blocking_pairs(P, R, got.tolist()) == []
    for p, r in enumerate(got.tolist()):              # only mutually acceptable pairs
        if r >= 0:
            assert r in P[p] and p in R[r]
    husbands = got[got >= 0]
    assert np.unique(husbands).shape[0] == husbands.shape[0]


@pytest.mark.parametrize("n", [60, 300])
def test_identical_preferences_hard_case(n):
    # The paper's "hard" set: everyone shares one ranking; Theta(n^2) proposals.
    rng = np.random.default_rng(n)
    men_order, women_order = rng.permutation(n).tolist(), rng.permutation(n).tolist()
    P, R = [men_order] * n, [women_order] * n
    expected = serial_gale_shapley(P, R)
    for method in METHODS:
        got, stats = stable_marriage(P, R, method=method, return_stats=True)
        assert got.tolist() == expected
        assert stats["proposals"] >= n


def test_larger_random_instance_methods_agree():
    rng = np.random.default_rng(5)
    n = 2000
    P = [rng.choice(n, size=rng.integers(1, 12), replace=False).tolist() for _ in range(n)]
    lists = [[] for _ in range(n)]
    for p, lst in enumerate(P):
        for r in lst:
            lists[r].append(p)
    R = [rng.permutation(lst).tolist() for lst in lists]
    expected = serial_gale_shapley(P, R)
    for method in METHODS:
        assert stable_marriage(P, R, method=method).tolist() == expected


def test_input_forms_agree():
    P = [[1, 0, 2], [0, 2], [2, 1, 0]]
    R = [[2, 0, 1], [0, 1, 2], [1, 0]]
    expected = serial_gale_shapley(P, R)

    def csr_tuple(lists):
        indptr = np.cumsum([0] + [len(x) for x in lists])
        return indptr, np.concatenate([np.asarray(x, dtype=np.int64) for x in lists])

    def rank_matrix(lists, ncols):
        rows = [i for i, x in enumerate(lists) for _ in x]
        cols = [c for x in lists for c in x]
        ranks = [10 * (k + 1) for x in lists for k in range(len(x))]   # only the order matters
        return sp.csr_matrix((ranks, (rows, cols)), shape=(len(lists), ncols))

    assert stable_marriage(csr_tuple(P), csr_tuple(R)).tolist() == expected
    assert stable_marriage(rank_matrix(P, 3), rank_matrix(R, 3)).tolist() == expected
    assert stable_marriage(rank_matrix(P, 3), R).tolist() == expected


def test_top_level_name():
    assert matchpart.stable_marriage is stable_marriage


@pytest.mark.parametrize("P, R, message", [
    ([[0, 0]], [[0]], "more than once"),
    ([[1]], [[0]], "only 1 receivers"),
    ([[0]], [[3]], "only 1 proposers"),
    ([[-1]], [[0]], ">= 0"),
    ((np.array([0, 2]), np.array([0])), [[0]], "indptr"),
    ([["a"]], [[0]], "list of lists"),
    ([[1.5]], [[0]], "integer ids"),
    (5, [[0]], "list of lists"),
    (sp.csr_matrix(np.array([[1, 1]])), [[0], [0]], "distinct"),
    (sp.csr_matrix(np.array([[0.5, 1]])), [[0], [0]], ">= 1"),
    (sp.csr_matrix(np.array([[1, 2, 0]])), sp.csr_matrix(np.array([[1], [1]])), "3 columns"),
])
def test_rejects_bad_preferences(P, R, message):
    with pytest.raises(ValueError, match=message):
        stable_marriage(P, R)


def test_rejects_unknown_method():
    with pytest.raises(ValueError, match="gale_shapley"):
        stable_marriage([[0]], [[0]], method="irving")


# ---- Lemma 3.1: the stable solution of the graph's SMI instance is the greedy matching --

@st.composite
def weighted_graphs(draw):
    n = draw(st.integers(1, 25))
    p = draw(st.sampled_from([0.1, 0.3, 0.6]))
    seed = draw(st.integers(0, 2**32 - 1))
    max_w = draw(st.sampled_from([1, 3, 1000]))        # small max_w: many ties
    g = nx.gnp_random_graph(n, p, seed=seed)
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g[u][v]["weight"] = int(rng.integers(1, max_w + 1))
    return Graph.from_networkx(g)


@settings(max_examples=60, deadline=None)
@given(graph=weighted_graphs(), rating=st.sampled_from(["weight", "expansion_star"]))
def test_lemma_3_1_stable_marriage_is_greedy(graph, rating):
    P, R = smi_from_graph(graph, rating)
    expected = serial_greedy(graph, rating)
    for method in METHODS:
        partner = stable_marriage(P, R, method=method, device="cpu")
        assert partner.tolist() == expected.tolist()
    result = matching_from_stable(graph, partner)
    assert matching_problems(graph, result.mate) == []
    assert result.cardinality == int((expected >= 0).sum()) // 2


@settings(max_examples=25, deadline=None)
@given(graph=weighted_graphs())
def test_lemma_3_1_matches_registry_greedy(graph):
    reference = matchpart.match(graph, "greedy", device="cpu")
    ours = greedy_by_stable_marriage(graph, device="cpu")
    assert np.asarray(ours.mate).tolist() == np.asarray(reference.mate).tolist()
    assert ours.weight == reference.weight


def test_smi_from_graph_lists_neighbours_by_decreasing_weight():
    # path 0-1-2-3 with weights 5, 9, 5: vertex 1 prefers 2 (9) over 0 (5); vertex 2 prefers 1;
    # tie at vertex... none; greedy takes (1,2) and nothing else fits.
    g = Graph.from_edges([0, 1, 2], [1, 2, 3], [5, 9, 5], n=4)
    (indptr, indices), receiver = smi_from_graph(g)
    lists = [indices[indptr[i]:indptr[i + 1]].tolist() for i in range(4)]
    assert lists == [[1], [2, 0], [1, 3], [2]]
    assert np.array_equal(receiver[1], indices)
    assert stable_marriage((indptr, indices), receiver).tolist() == [-1, 2, 1, -1]


def test_smi_ties_follow_the_contract_order():
    # a star with equal weights: the tie-break picks the smallest (min id, max id) pair (0, 1)
    g = Graph.from_edges([0, 0, 0], [3, 1, 2], n=4)
    P, R = smi_from_graph(g)
    assert P[1][P[0][0]:P[0][1]].tolist() == [1, 2, 3]
    assert greedy_by_stable_marriage(g).mate.tolist() == [1, 0, -1, -1]


def test_matching_from_stable_rejects_a_non_matching():
    g = Graph.from_edges([0, 1], [1, 2], n=3)
    with pytest.raises(ValueError, match="not a matching"):
        matching_from_stable(g, np.array([1, 2, -1]))


# ---- GPU ------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("method", METHODS)
def test_gpu_equals_cpu(method):
    rng = np.random.default_rng(9)
    n = 3000
    P = [rng.choice(n, size=rng.integers(1, 15), replace=False).tolist() for _ in range(n)]
    R = [rng.permutation(n)[:rng.integers(1, 40)].tolist() for _ in range(n)]
    cpu = stable_marriage(P, R, method=method, device="cpu")
    gpu = stable_marriage(P, R, method=method, device="gpu")
    assert isinstance(gpu, np.ndarray)
    assert gpu.tolist() == cpu.tolist()
