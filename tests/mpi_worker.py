"""Run under mpiexec by tests/test_distributed.py: many checks per launch (launches are slow).

Usage: mpiexec -n P python tests/mpi_worker.py TMPDIR SHARED_GRAPHS [partition]
Rank 0 prints one JSON line: {"checks": {name: true/false or a number}, "cut_ratios": {...}}.
"""
import json
import os
import sys
import time

import numpy as np

import matchpart
from matchpart import metrics
from matchpart.coarsen.contract import contract as single_contract
from matchpart.coarsen.contract import mapping_from_matching
from matchpart.distributed import DistributedError, match, partition
from matchpart.distributed.comm import Comm
from matchpart.distributed.contract import contract
from matchpart.distributed.matching import local_max
from matchpart.distributed.read import load
from matchpart.graph import Graph

c = Comm()
tmp, shared = sys.argv[1], sys.argv[2]
do_partition = len(sys.argv) > 3 and sys.argv[3] == "partition"
checks = {}


def graphs():
    names = ["4elt.graph", "PGPgiantcompo.graph", "example_weighted.graph", "rgg2d.graph"]
    paths = [os.path.join(shared, n) for n in names if os.path.exists(os.path.join(shared, n))]
    return paths + [os.path.join(tmp, "commented.graph"), "delaunay:3000", "path"]


def source(name):
    if name == "path":  # increasing weights: one match per round, so the greedy tail runs
        n = 240
        u = np.arange(n - 1)
        g = Graph.from_edges(u, u + 1, np.arange(1, n), n=n)
        return g if c.rank == 0 else None, g
    whole = matchpart.load_graph(name) if c.rank == 0 else None
    return name, whole


def check_matchings():
    for name in graphs():
        src, whole = source(name)
        tag = os.path.basename(name)
        for rating in ("weight", "expansion_star2"):
            for seed in (0, 3):
                mate = match(src, rating=rating, seed=seed, comm=c)
                if c.rank == 0:
                    ref = np.asarray(matchpart.match(whole, "local_max", rating=rating, seed=seed).mate)
                    checks[f"match {tag} {rating} {seed}"] = bool(np.array_equal(mate, ref))
        if name in graphs()[1:3] + graphs()[-2:]:  # BSP Karp-Sipser == shared-memory karp_sipser
            mate = match(src, "karp_sipser", seed=2, comm=c)
            if c.rank == 0:
                ref = np.asarray(matchpart.match(whole, "karp_sipser", seed=2).mate)
                checks[f"karp_sipser {tag}"] = bool(np.array_equal(mate, ref))


def upper_bound(whole):
    """floor(maximum matching of the bipartite double cover / 2) (SciPy): at least the
    maximum matching, equal to it on bipartite graphs (trees, paths)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching
    a = sp.csr_matrix((np.ones(whole.indices.shape[0]), np.asarray(whole.indices), np.asarray(whole.indptr)),
                      shape=(whole.n, whole.n))
    return int((maximum_bipartite_matching(a, perm_type="column") >= 0).sum()) // 2


def check_karp_sipser_2d():
    # seed 002 on the edge-based distribution: valid and maximal, about the cardinality of
    # the shared-memory karp_sipser, never above the maximum, the maximum on trees (the
    # degree-one rule alone is optimal there)
    from matchpart.distributed.karp_sipser2d import karp_sipser_2d
    names = [os.path.join(shared, n) for n in ("jazz.graph", "celegans_metabolic.graph", "example_weighted.graph")]
    for name in [n for n in names if os.path.exists(n)] + ["ba:1500:1", "path"]:
        src, whole = source(name)
        if name == "ba:1500:1":
            src = whole
        tag = os.path.basename(name)
        for seed in (0, 1) if c.size <= 2 else (0,):   # oversubscribed launches are slow per superstep
            mate = match(src, "karp_sipser", seed=seed, distribution="2d", comm=c)
            if c.rank != 0:
                continue
            ip, ix = np.asarray(whole.indptr), np.asarray(whole.indices)
            rows = np.repeat(np.arange(whole.n), np.diff(ip))
            v = np.flatnonzero(mate >= 0)
            edge = np.zeros(v.shape[0], dtype=bool)
            for t, x in enumerate(v):
                edge[t] = mate[x] in ix[ip[x]:ip[x + 1]]
            checks[f"ks2d valid {tag} {seed}"] = bool(edge.all() and (mate[mate[v]] == v).all())
            checks[f"ks2d maximal {tag} {seed}"] = not bool(((mate[rows] < 0) & (mate[ix] < 0)).any())
            card, upper = v.shape[0] // 2, upper_bound(whole)
            ref = matchpart.match(whole, "karp_sipser", seed=seed).cardinality
            checks[f"ks2d cardinality {tag} {seed}"] = bool(ref - max(3, 0.02 * ref) <= card <= upper)
            if name in ("ba:1500:1", "path"):
                checks[f"ks2d maximum {tag} {seed}"] = card == upper
    g = load(os.path.join(shared, "jazz.graph") if os.path.exists(os.path.join(shared, "jazz.graph"))
             else "delaunay:300", c)
    _, st = karp_sipser_2d(g, seed=0)
    sent = sum(st["words"].values())
    checks["ks2d words"] = bool((st["spmv"] == 0 and sent == 0) if c.size == 1 else (st["spmv"] > 0 and sent > 0))
    pr, pc = st["grid"]
    checks["ks2d grid"] = bool(pr * pc == c.size and pr <= pc)


def check_hash_collisions():
    # 2-bit tie-break hashes make equal keys common, so the smallest-pair-id rule runs; the
    # single-process matcher draws the same hashes
    from matchpart.backend.core import Backend
    from matchpart.matchers import local_max as single
    original = Backend.hash32
    Backend.hash32 = lambda self, seed, stream, counter: original(self, seed, stream, counter) & np.uint32(3)
    from matchpart.distributed import matching as dist_matching
    kernel, dist_kernel = single.CPU_KERNEL, dist_matching.CPU_KERNEL
    single.CPU_KERNEL = False    # the reference runs its whole-array rounds, which draw through Backend.hash32
    dist_matching.CPU_KERNEL = False   # and so do the distributed ones
    try:
        for name in graphs()[:2] + ["delaunay:3000"]:
            src, whole = source(name)
            mate = match(src, seed=1, comm=c)
            if c.rank == 0:
                ref = np.asarray(matchpart.match(whole, "local_max", seed=1).mate)
                checks[f"collisions {os.path.basename(name)}"] = bool(np.array_equal(mate, ref))
    finally:
        Backend.hash32 = original
        single.CPU_KERNEL, dist_matching.CPU_KERNEL = kernel, dist_kernel


def _fm_arrays_match(g):
    """distributed.fm's local graph (own rows, then ghost rows from the transposed cross
    entries) against a stable sort of all entries by row, its earlier construction."""
    from matchpart.distributed.fm import _local_arrays
    (indptr, cols, w, vw), lo, hi = _local_arrays(g)
    nl, ng = g.n_local, g.ghosts.shape[0]
    cross = np.flatnonzero(g.adj >= nl)
    rows = np.concatenate([g.rows, g.adj[cross]])
    order = np.argsort(rows, kind="stable")
    ref_ptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=nl + ng))])
    owner = g.owner(g.ghosts)[g.adj[cross] - nl]
    return bool(np.array_equal(indptr, ref_ptr)
                and np.array_equal(cols, np.concatenate([g.adj, g.rows[cross]])[order])
                and np.array_equal(w, np.concatenate([g.ewgt, g.ewgt[cross]]).astype(np.float64)[order])
                and vw.shape[0] == nl + ng
                and np.array_equal(np.flatnonzero(lo), np.unique(g.rows[cross[owner < c.rank]]))
                and np.array_equal(np.flatnonzero(hi), np.unique(g.rows[cross[owner > c.rank]])))


def check_kernels_match_whole_array():
    # the compiled per-rank rounds (local max, Jet) against the whole-array rounds they
    # replaced: the same matching and stats, the same refined partition, for this P
    from matchpart.distributed import matching as dist_matching
    from matchpart.distributed import refine as dref
    for name in graphs()[:3] + ["rmat:11"]:
        g = load(name, c)
        for rating, seed in (("weight", 0), ("expansion_star2", 5)):
            got = []
            for kernel in (True, False):
                dist_matching.CPU_KERNEL = kernel
                try:
                    got.append(local_max(g, rating=rating, seed=seed, cap=0.02 * g.total_vwgt))
                finally:
                    dist_matching.CPU_KERNEL = True
            same = np.array_equal(got[0][0], got[1][0]) and got[0][1] == got[1][1]
            checks[f"kernel local max {os.path.basename(name)} {rating}"] = all(c.comm.allgather(bool(same)))
            (a, cid_a), (b, cid_b) = (contract(g, got[0][0], method=m) for m in ("numba", "xp"))
            same = np.array_equal(cid_a, cid_b) and all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in (
                (a.vtxdist, b.vtxdist), (a.indptr, b.indptr), (a.cols, b.cols), (a.ewgt, b.ewgt), (a.vwgt, b.vwgt)))
            checks[f"kernel contract {os.path.basename(name)} {rating}"] = all(c.comm.allgather(bool(same)))
        checks[f"kernel fm arrays {os.path.basename(name)}"] = all(c.comm.allgather(_fm_arrays_match(g)))
        k = 8
        rng = np.random.default_rng(seed=7)
        start = (np.arange(g.n) * k) // g.n
        noisy = np.where(rng.random(g.n) < 0.1, rng.integers(0, k, g.n), start)[g.first:g.last]
        lmax = metrics.max_block_weight(g.total_vwgt, k, 0.03)
        for seed in (0, 1):
            a = dref.jet(g, noisy, k, lmax, seed=seed, method="numba")
            b = dref.jet(g, noisy, k, lmax, seed=seed, method="xp")
            checks[f"kernel jet {os.path.basename(name)} {seed}"] = all(c.comm.allgather(np.array_equal(a, b)))
        if name == "rmat:11":
            # from a random start Jet floods the hubs' blocks: the vertices rebalancing throws
            # out stay out on both paths (refine.jet.FLOODED), and the rule changes the result
            k16 = 16
            scattered = (np.random.default_rng(seed=1).permutation(g.n) % k16)[g.first:g.last]
            lmax16 = metrics.max_block_weight(g.total_vwgt, k16, 0.03)
            a = dref.jet(g, scattered, k16, lmax16, seed=4, method="numba")
            b = dref.jet(g, scattered, k16, lmax16, seed=4, method="xp")
            saved, dref.FLOODED = dref.FLOODED, np.inf
            try:
                free = dref.jet(g, scattered, k16, lmax16, seed=4, method="xp")
            finally:
                dref.FLOODED = saved
            checks["kernel jet flooded rmat:11"] = all(c.comm.allgather(np.array_equal(a, b)))
            checks["kernel jet flooded rule acts rmat:11"] = any(c.comm.allgather(not np.array_equal(b, free)))
        heavy = np.where(np.arange(g.first, g.last) < g.n // 3, 0, noisy)     # block 0 far over lmax
        a, b = (dref.rebalance(g, heavy, k, lmax, seed=3, method=m) for m in ("numba", "xp"))
        checks[f"kernel rebalance {os.path.basename(name)}"] = all(c.comm.allgather(
            np.array_equal(a, b) and not np.array_equal(a, heavy)))


def check_read_and_contract():
    for name in graphs()[:-2]:
        g = load(name, c)
        whole = g.gather_graph(root=0)
        mate, _ = local_max(g, rating="expansion_star2", seed=1)
        coarse, cid = contract(g, mate)
        cg = coarse.gather_graph(root=0)
        full_cid = g.gather_values(cid)
        if c.rank == 0:
            ref = matchpart.load_graph(name)
            tag = os.path.basename(name)
            same = all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in
                       ((whole.indptr, ref.indptr), (whole.indices, ref.indices), (whole.ewgt, ref.ewgt),
                        (whole.vwgt, ref.vwgt)))
            checks[f"read {tag}"] = same
            m = np.asarray(matchpart.match(ref, "local_max", rating="expansion_star2", seed=1).mate)
            mapping, nc = mapping_from_matching(m, ref.backend)
            rc = single_contract(ref, mapping, nc)
            checks[f"contract {tag}"] = bool(np.array_equal(full_cid, mapping) and all(
                np.array_equal(np.asarray(a), np.asarray(b)) for a, b in
                ((cg.indptr, rc.indptr), (cg.indices, rc.indices), (cg.ewgt, rc.ewgt), (cg.vwgt, rc.vwgt))))


def check_partitions(ratios):
    names = ["4elt.graph", "fe_4elt2.graph", "delaunay_n15.graph", "rgg_n_2_15_s0.graph", "PGPgiantcompo.graph",
             "airfoil1.graph", "example_weighted.graph"]
    for n in names:
        path = os.path.join(shared, n)
        if not os.path.exists(path):
            continue
        res = partition(path, 8, comm=c)
        if c.rank == 0:
            g = matchpart.load_graph(path)
            lmax = metrics.max_block_weight(g.total_vwgt, 8, 0.03)
            ok = (res.parts.shape == (g.n,) and res.parts.min() >= 0 and res.parts.max() < 8
                  and metrics.edge_cut(g, res.parts) == res.cut)
            checks[f"partition valid {n}"] = bool(ok)
            checks[f"partition balanced {n}"] = bool(metrics.is_balanced(g, res.parts, 8, 0.03)
                                                     and res.feasible and res.max_block_weight == lmax)
            # against the same algorithm: the distributed hierarchy has matching levels only (the
            # single process clusters dense graphs: rgg2d, rgg_n_2_15_s0)
            ratios[n] = res.cut / matchpart.partition(g, 8, cluster_fallback=False).cut


def check_renumbered_scatter():
    # a graph in random order that rank 0 scatters is numbered breadth-first first: few
    # ghosts per rank, and the partition comes back in the input's order
    whole = matchpart.load_graph("delaunay:20000") if c.rank == 0 else None
    g = load(whole, c, renumber=True)
    checks["renumbered scatter ids"] = g.input_ids is not None
    checks["renumbered scatter ghosts"] = bool(g.ghosts.shape[0] < 0.2 * g.n_local)
    check_in_input_order("renumbered scatter partition", partition(g, 8, comm=c), whole)


def check_in_input_order(name, res, whole):
    """The ranks' local parts, put back by their input ids, are res.parts (on rank 0, where
    ``whole`` is the input graph), whose cut is exact and which is balanced (k = 8)."""
    pairs = c.comm.gather((res.local_ids, res.local_parts), root=0)
    if c.rank == 0:
        back = np.empty(whole.n, dtype=np.int64)
        for ids, local in pairs:
            back[ids] = local
        checks[name] = bool(np.array_equal(back, res.parts) and metrics.edge_cut(whole, res.parts) == res.cut
                            and metrics.is_balanced(whole, res.parts, 8, 0.03))


def check_renumbered_file():
    # a METIS file in random order, read in parallel, is numbered breadth-first by the ranks
    # together (renumber.py): the order of a reference made here with SciPy's searches, the
    # same graph, fewer ghosts than own vertices, and the partition back in the input's order
    from scipy.sparse.csgraph import shortest_path

    from matchpart.distributed.renumber import MAX_SEARCHES
    path = os.path.join(tmp, "scattered.graph")
    g = load(path, c, renumber=True)
    checks["renumbered file ids"] = g.input_ids is not None
    ids = c.gatherv(g.local_input_ids(), 0)
    whole_new = g.gather_graph(0)
    if c.rank == 0:
        whole = matchpart.load_graph(path)
        adjacency = whole.to_scipy()
        key = np.full((whole.n, 2), np.inf)
        searches = 0
        while (key[:, 0] == np.inf).any() and searches < MAX_SEARCHES:
            root = int(np.flatnonzero(key[:, 0] == np.inf)[0])
            dist = shortest_path(adjacency, unweighted=True, indices=root)
            reached = np.isfinite(dist)
            key[reached] = np.stack([np.full(reached.sum(), searches), dist[reached]], axis=1)
            searches += 1
        key[key[:, 0] == np.inf] = [MAX_SEARCHES, 0]
        reference = np.lexsort((np.arange(whole.n), key[:, 1], key[:, 0]))
        checks["renumbered file order"] = bool(np.array_equal(ids, reference))
        from matchpart.relabel import relabel
        same = relabel(whole, ids)
        checks["renumbered file graph"] = all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in (
            (same.indptr, whole_new.indptr), (same.indices, whole_new.indices), (same.ewgt, whole_new.ewgt),
            (same.vwgt, whole_new.vwgt)))
    ghosts = c.allreduce(int(g.ghosts.shape[0]))
    checks["renumbered file ghosts"] = bool(ghosts < 0.2 * g.n)
    check_in_input_order("renumbered file partition", partition(path, 8, comm=c),
                         matchpart.load_graph(path) if c.rank == 0 else None)


def check_degree_renumbered_file():
    # a power-law METIS file read in parallel is numbered by degree on any number of ranks
    # (renumber.degree_renumbered): the single process's degree order dealt round-robin to the
    # ranks, the same graph, and the partition back in the input's order
    from matchpart import relabel
    from matchpart.distributed import renumber
    path = os.path.join(tmp, "powerlaw.graph")
    saved = relabel.RELABEL_MIN_VERTICES
    relabel.RELABEL_MIN_VERTICES = 0          # the file is small; the rule is the single process's
    try:
        g = load(path, c, renumber=True)
        checks["degree renumbered ids"] = bool(g.input_ids is not None and renumber.skewed(g))
        ids = c.gatherv(g.local_input_ids(), 0)
        whole_new = g.gather_graph(0)
        if c.rank == 0:
            whole = matchpart.load_graph(path)
            order = relabel.degree_order(whole)
            place = np.arange(whole.n)
            sizes = [len(range(r, whole.n, c.size)) for r in range(c.size)]
            start = np.concatenate([[0], np.cumsum(sizes)])
            reference = np.empty(whole.n, dtype=np.int64)
            reference[start[place % c.size] + place // c.size] = order
            checks["degree renumbered order"] = bool(np.array_equal(ids, reference))
            same = relabel.relabel(whole, ids)
            checks["degree renumbered graph"] = all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in (
                (same.indptr, whole_new.indptr), (same.indices, whole_new.indices), (same.ewgt, whole_new.ewgt),
                (same.vwgt, whole_new.vwgt)))
        check_in_input_order("degree renumbered partition", partition(path, 8, comm=c),
                             matchpart.load_graph(path) if c.rank == 0 else None)
        # the same graph held on rank 0 and scattered: the same order
        whole = matchpart.load_graph(path) if c.rank == 0 else None
        s = load(whole, c, renumber=True)
        checks["degree renumbered scatter ids"] = s.input_ids is not None
        ids = c.gatherv(s.local_input_ids(), 0)
        if c.rank == 0:
            checks["degree renumbered scatter order"] = bool(np.array_equal(ids, reference))
        check_in_input_order("degree renumbered scatter partition", partition(s, 8, comm=c), whole)
    finally:
        relabel.RELABEL_MIN_VERTICES = saved


def check_two_hop():
    # distributed two-hop pairs == the single-process two_hop_pairs for the same mate and
    # seed; contraction with pairs that are not edges == the single-process contraction
    from matchpart.coarsen.twohop import two_hop_pairs
    from matchpart.distributed.twohop import two_hop
    for name in [os.path.join(shared, "PGPgiantcompo.graph"), os.path.join(shared, "example_weighted.graph"),
                 os.path.join(tmp, "commented.graph"), "ba:3000:1"]:
        if not os.path.exists(name) and ":" not in name:
            continue
        whole = matchpart.load_graph(name) if c.rank == 0 else None
        g = load(name if ":" not in name else whole, c)
        cap = 1.5 * g.total_vwgt / 200
        mate, _ = local_max(g, rating="expansion_star2", seed=2, cap=cap)
        paired = two_hop(g, mate, cap, seed=4)
        coarse, cid = contract(g, paired)
        full_mate, full_paired = g.gather_values(mate), g.gather_values(paired)
        cg, full_cid = coarse.gather_graph(root=0), g.gather_values(cid)
        if c.rank == 0:
            tag = os.path.basename(name)
            ref = np.asarray(two_hop_pairs(whole, full_mate, cap, seed=4))
            checks[f"two hop {tag}"] = bool(np.array_equal(full_paired, ref)
                                            and (ref >= 0).sum() > (full_mate >= 0).sum())
            mapping, nc = mapping_from_matching(ref, whole.backend)
            rc = single_contract(whole, mapping, nc)
            checks[f"two hop contract {tag}"] = bool(np.array_equal(full_cid, mapping) and all(
                np.array_equal(np.asarray(a), np.asarray(b)) for a, b in
                ((cg.indptr, rc.indptr), (cg.indices, rc.indices), (cg.ewgt, rc.ewgt), (cg.vwgt, rc.vwgt))))


def check_cluster():
    # distributed label propagation: the same labels for any number of ranks (against one
    # rank of COMM_SELF), clusters within the cap, and the coarse graph of its coarse ids ==
    # the single-process contraction with the same mapping
    from mpi4py import MPI

    from matchpart.distributed.cluster import cluster, cluster_labels
    from matchpart.distributed.contract import contract_ids
    from matchpart.distributed.dgraph import ROW_COST
    for name in ["rmat:11", "ba:3000:1", os.path.join(shared, "PGPgiantcompo.graph")]:
        if not os.path.exists(name) and ":" not in name:
            continue
        whole = matchpart.load_graph(name) if c.rank == 0 else None
        g = load(whole, c)
        cap = 1.5 * g.total_vwgt / 200
        labels, _ = cluster_labels(g, cap, seed=3)
        cid, vtxdist = cluster(g, cap, seed=3)
        coarse = contract_ids(g, cid, vtxdist)
        full_labels, full_cid = g.gather_values(labels), g.gather_values(cid)
        cg = coarse.gather_graph(root=0)
        if c.rank == 0:
            tag = os.path.basename(name)
            ref, _ = cluster_labels(load(whole, Comm(MPI.COMM_SELF)), cap, seed=3)
            weight = np.bincount(full_labels, weights=whole.vwgt, minlength=whole.n)
            size = np.bincount(full_labels, minlength=whole.n)
            nc = int(full_cid.max()) + 1
            rc = single_contract(whole, full_cid, nc)
            checks[f"cluster labels {tag}"] = bool(np.array_equal(full_labels, ref))
            checks[f"cluster cap {tag}"] = bool(((weight <= cap) | (size <= 1)).all() and (size > 1).sum() > 0)
            checks[f"cluster shrinks {tag}"] = bool(nc <= 0.6 * whole.n and np.array_equal(
                np.unique(full_cid), np.arange(nc)))
            checks[f"cluster contract {tag}"] = all(
                np.array_equal(np.asarray(a), np.asarray(b)) for a, b in
                ((cg.indptr, rc.indptr), (cg.indices, rc.indices), (cg.ewgt, rc.ewgt), (cg.vwgt, rc.vwgt)))
            # the coarse ranges: non-empty, and each within one coarse vertex's cost of a 1 / P
            # share of the merged entries plus ROW_COST per member (contract.coarse_ranges)
            cost = np.bincount(full_cid, weights=np.diff(np.asarray(whole.indptr)) + ROW_COST, minlength=nc)
            shares = np.add.reduceat(cost, vtxdist[:-1])
            checks[f"cluster ranges {tag}"] = bool(
                vtxdist[0] == 0 and vtxdist[-1] == nc and (np.diff(vtxdist) > 0).all()
                and (shares <= cost.sum() / c.size + cost.max()).all())


def check_local_fm():
    # rank-local FM with frozen interfaces and per-rank room: never a higher cut, never
    # unbalanced, on a partition with room for improvement (fast preset: no FM of its own)
    from matchpart.distributed.fm import local_fm
    path = os.path.join(shared, "4elt.graph")
    g = load(path, c)
    whole = matchpart.load_graph(path)
    start = c.comm.bcast(np.asarray(matchpart.partition(whole, 8, preset="fast", seed=5).parts) if c.rank == 0
                         else None)
    lmax = metrics.max_block_weight(whole.total_vwgt, 8, 0.03)
    parts = local_fm(g, start[g.first:g.last], 8, lmax, seed=1, passes=2)
    full = g.gather_values(parts)
    if c.rank == 0:
        before, after = metrics.edge_cut(whole, start), metrics.edge_cut(whole, full)
        checks["local fm cut"] = bool(after <= before)
        checks["local fm improves"] = bool(after < before)
        checks["local fm balanced"] = bool(metrics.is_balanced(whole, full, 8, 0.03))


def check_local_fm_grouped():
    # the grouped sweeps (forced on): each rank moves only between its group's blocks, so the
    # cut falls by exactly the sum of the ranks' gains; the same checks as check_local_fm
    from matchpart.distributed import fm as dfm
    from matchpart.distributed.refine import edge_cut as dcut
    path = os.path.join(shared, "4elt.graph")
    g = load(path, c)
    whole = matchpart.load_graph(path)
    start = c.comm.bcast(np.asarray(matchpart.partition(whole, 8, preset="fast", seed=5).parts) if c.rank == 0
                         else None)
    lmax = metrics.max_block_weight(whole.total_vwgt, 8, 0.03)
    saved = dfm.GROUPED_IMBALANCE
    dfm.GROUPED_IMBALANCE = 0.0
    try:
        own = start[g.first:g.last]
        grouped = dfm.grouped_sweeps(c, np.diff(g.indptr), *dfm._local_arrays(g)[1:])
        parts, tracked = dfm.local_fm(g, own, 8, lmax, seed=1, passes=2, cut=int(dcut(g, g.extended(own))))
    finally:
        dfm.GROUPED_IMBALANCE = saved
    exact = int(dcut(g, g.extended(parts)))
    full = g.gather_values(parts)
    if c.rank == 0:
        before, after = metrics.edge_cut(whole, start), metrics.edge_cut(whole, full)
        checks["grouped local fm runs grouped"] = grouped == (c.size > 1)
        checks["grouped local fm cut tracked exactly"] = bool(tracked == exact == after)
        checks["grouped local fm improves"] = bool(after < before)
        checks["grouped local fm balanced"] = bool(metrics.is_balanced(whole, full, 8, 0.03))


def check_empty_ranks():
    # ranks without vertices (small coarse levels) must reduce the same dtypes as the others:
    # np.bincount gives int64 zeros for an empty input, which once made their block weights
    # garbage and their Jet take another branch (a hang at the first coarse level)
    from matchpart.distributed import refine as dref
    from matchpart.distributed.dgraph import DistGraph
    whole = matchpart.load_graph(os.path.join(shared, "airfoil1.graph"))
    n = whole.n
    vtxdist = np.array([0] + [n] * c.size, dtype=np.int64)        # every vertex on rank 0
    mine = c.rank == 0
    ip = np.asarray(whole.indptr, dtype=np.int64) if mine else np.zeros(1, dtype=np.int64)
    g = DistGraph(c, vtxdist, ip, np.asarray(whole.indices, dtype=np.int64)[:ip[-1]],
                  np.asarray(whole.ewgt)[:ip[-1]], np.asarray(whole.vwgt)[:n if mine else 0])
    parts = (np.arange(g.n_local) * 4) // max(g.n_local, 1)
    bw = dref.block_weights(g, parts, 4)
    same = c.comm.allgather(bw.tolist())
    agree = all(x == same[0] for x in same)        # the same on every rank: a collective decision
    checks["empty ranks block weights"] = agree and same[0] == [n // 4 + (i < n % 4) for i in range(4)]
    if agree:   # else Jet's ranks would take different branches and wait for each other forever
        refined = dref.jet(g, parts, 4, metrics.max_block_weight(n, 4, 0.03), seed=1, patience=2)
        full = g.gather_values(refined)
        if c.rank == 0:
            checks["empty ranks jet"] = bool(metrics.is_balanced(whole, full, 4, 0.03))


def check_part_kway():
    # ParMETIS's call shape: each rank passes its rows of an even split; the result is the
    # distributed partition of the same DistGraph, the cut is the partition's, and bad input
    # on one rank fails on every rank
    from matchpart.distributed import part_kway
    from matchpart.distributed.dgraph import DistGraph
    for name in ("4elt.graph", "example_weighted.graph"):
        path = os.path.join(shared, name)
        if not os.path.exists(path):
            continue
        g = matchpart.load_graph(path)
        vtxdist = np.arange(c.size + 1) * g.n // c.size
        lo, hi = vtxdist[c.rank], vtxdist[c.rank + 1]
        xadj = g.indptr[lo:hi + 1] - g.indptr[lo]
        adjncy = g.indices[g.indptr[lo]:g.indptr[hi]]
        adjwgt, vwgt = g.ewgt[g.indptr[lo]:g.indptr[hi]], g.vwgt[lo:hi]
        cut, part = part_kway(vtxdist, xadj, adjncy, 8, vwgt=vwgt, adjwgt=adjwgt, ubvec=[1.05], comm=c,
                              tpwgts=np.full(8, 1 / 8))
        whole = np.concatenate(c.comm.allgather(part))
        ref = partition(DistGraph(c, vtxdist, g.indptr[lo:hi + 1] - g.indptr[lo], adjncy, adjwgt, vwgt), 8,
                        eps=0.05, comm=c)
        if c.rank == 0:
            checks[f"part_kway {name}"] = bool(np.array_equal(whole, ref.parts) and cut == ref.cut
                                               and metrics.edge_cut(g, whole) == cut
                                               and metrics.is_balanced(g, whole, 8, 0.05))
        bad = {"xadj": xadj, "adjncy": adjncy}
        if c.rank == c.size - 1:   # the last vertex drops its last neighbour, who still lists it
            bad = {"xadj": np.concatenate([xadj[:-1], [xadj[-1] - 1]]), "adjncy": adjncy[:-1]}
        for tag, kwargs, expect in (("asymmetric", bad, "symmetric"),
                                    ("tpwgts", {"tpwgts": np.linspace(1, 2, 8) / np.linspace(1, 2, 8).sum()},
                                     "tpwgts")):
            args = {"vtxdist": vtxdist, "xadj": xadj, "adjncy": adjncy, "nparts": 8, **kwargs}
            try:
                part_kway(**args, comm=c)
                checks[f"part_kway error {tag} {name}"] = False
            except DistributedError as exc:
                checks[f"part_kway error {tag} {name}"] = expect in str(exc) and exc.kind == "input"


def check_errors():
    # a bad token on the last line: only the last rank sees it, every rank must raise it
    try:
        match(os.path.join(shared, "4elt.graph"), "local_max", distribution="2d", comm=c)
        checks["error distribution"] = False
    except DistributedError as exc:
        checks["error distribution"] = "not available" in str(exc)
    for name, expect in (("badtoken.graph", "not an integer"), ("asym.graph", "symmetric")):
        try:
            match(os.path.join(tmp, name), comm=c)
            checks[f"error {name}"] = False
        except DistributedError as exc:
            checks[f"error {name}"] = expect in str(exc)


if c.rank == 0:
    # a METIS file with comment lines between vertex lines, weights and a trailing blank line
    g = matchpart.generate("rgg:1500", seed=2)
    rng = np.random.default_rng(0)
    w = rng.integers(1, 9, g.indices.shape[0])
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    up = rows < g.indices
    gw = Graph.from_edges(rows[up], g.indices[up], w[up], n=g.n, vwgt=rng.integers(1, 4, g.n))
    matchpart.save_graph(gw, os.path.join(tmp, "plain.graph"))
    lines = open(os.path.join(tmp, "plain.graph")).read().splitlines()
    out = ["% a comment before the header", lines[0]]
    for i, ln in enumerate(lines[1:]):
        if i % 97 == 0:
            out.append("% comment inside the vertex lines")
        out.append(ln)
    open(os.path.join(tmp, "commented.graph"), "w").write("\n".join(out) + "\n\n")
    # two delaunay pieces and more isolated vertices than renumber.MAX_SEARCHES, in random order
    a, b = matchpart.generate("delaunay:9000", seed=1), matchpart.generate("delaunay:3000", seed=2)
    rows = np.concatenate([np.repeat(np.arange(a.n), np.diff(a.indptr)),
                           a.n + np.repeat(np.arange(b.n), np.diff(b.indptr))])
    cols = np.concatenate([a.indices, a.n + b.indices])
    name = rng.permutation(a.n + b.n + 20)
    up = rows < cols
    matchpart.save_graph(Graph.from_edges(name[rows[up]], name[cols[up]], rng.integers(1, 5, up.sum()),
                                          n=a.n + b.n + 20), os.path.join(tmp, "scattered.graph"))
    matchpart.save_graph(matchpart.generate("rmat:12", seed=3), os.path.join(tmp, "powerlaw.graph"))
    bad = open(os.path.join(shared, "4elt.graph")).read().splitlines()
    open(os.path.join(tmp, "badtoken.graph"), "w").write("\n".join(bad[:-1] + [bad[-1] + " x"]) + "\n")
    asym = bad[:]
    asym[-1] = " ".join(asym[-1].split()[:-1])  # the last vertex drops a neighbour (header m now wrong too)
    head = asym[0].split()
    asym[0] = f"{head[0]} {int(head[1])}"
    asym[1] = asym[1] + " " + str(len(asym) - 1)  # keep 2m: vertex 1 gains the last vertex
    open(os.path.join(tmp, "asym.graph"), "w").write("\n".join(asym) + "\n")
c.comm.Barrier()

seconds = {}
ratios = {}
for check in (check_matchings, check_karp_sipser_2d, check_hash_collisions, check_kernels_match_whole_array,
              check_read_and_contract, check_two_hop, check_cluster,
              check_local_fm, check_local_fm_grouped, check_empty_ranks, check_errors) + (
        check_partitions, check_part_kway, check_renumbered_scatter, check_renumbered_file,
        check_degree_renumbered_file) * do_partition:
    t0 = time.perf_counter()
    check(ratios) if check is check_partitions else check()
    seconds[check.__name__] = round(time.perf_counter() - t0, 2)
if c.rank == 0:
    print(json.dumps({"checks": checks, "cut_ratios": ratios, "seconds": seconds}))
