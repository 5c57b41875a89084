"""BSP Karp-Sipser (seed 002) on the vertex-based (1-D) and edge-based (2-D) distributions:
cardinality and communication.

    python3 benchmarks/distributed_karp_sipser.py [--ranks 2,4] [--graphs 4elt,airfoil1,rmat:12,...]
                                                  [--no-exact]

Per graph (a shared graph's name or a generator spec): the maximum matching (networkx,
exact on general graphs, minutes on 30k vertices; --no-exact skips it), SciPy's bound
(maximum_bipartite_matching of the bipartite double cover, halved: the maximum on
bipartite graphs, an upper bound otherwise), a sequential Karp-Sipser (degree-one rule,
else a random vertex's random free neighbour: the classic formulation, in plain Python),
the shared-memory karp_sipser and the BSP matchings: 1-D (equal to the shared-memory one
for every P) and 2-D per P. Per P and distribution: rounds, messages sent per type and
their total against the SpMV volume of the same distribution. The paper counts every
message as one word, and so does this table (the 1-D matcher's word counts, two words
per request and confirmation, are divided back into messages); its bound is
1/2 Vol(SpMV) <= Vol(matching) <= 3/2 Vol(SpMV) + R, R the failed requests.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "graphs"
TYPES_2D = ("singleton_request", "random_request", "confirmation", "unavailability", "handover", "give_up",
            "criticality")
SHORT = {"singleton_request": "smr", "random_request": "rmr", "confirmation": "cf", "unavailability": "u",
         "handover": "h", "give_up": "g", "criticality": "ct"}


def worker(path, seed):
    from matchpart.distributed.comm import Comm
    from matchpart.distributed.karp_sipser import karp_sipser, spmv_volume
    from matchpart.distributed.karp_sipser2d import karp_sipser_2d
    from matchpart.distributed.read import load
    c = Comm()
    g = load(path, c)
    out = {}
    mate, st = karp_sipser(g, seed=seed)
    w = st["words"]   # words: requests and confirmations carry two
    out["1d"] = {"card": c.allreduce(int((mate >= 0).sum())) // 2, "rounds": st["rounds"], "spmv": spmv_volume(g),
                 "messages": {"request": w["request"] // 2, "confirmation": w["confirmation"] // 2,
                              "unavailability": w["unavailability"]}}
    mate, st = karp_sipser_2d(g, seed=seed)
    out["2d"] = {"card": c.allreduce(int((mate >= 0).sum())) // 2, "rounds": st["rounds"], "spmv": st["spmv"],
                 "messages": st["words"], "failed": st["failed_requests"], "grid": st["grid"],
                 "supersteps": st["supersteps"]}
    if c.rank == 0:
        print(json.dumps(out))


def sequential_karp_sipser(graph, seed=0):
    import numpy as np
    rng = random.Random(seed)
    ip, ix = np.asarray(graph.indptr), np.asarray(graph.indices)
    n = graph.n
    adj = [set(ix[ip[v]:ip[v + 1]].tolist()) for v in range(n)]
    mate = [-1] * n
    ones = [v for v in range(n) if len(adj[v]) == 1]
    order = list(range(n))
    rng.shuffle(order)
    pos = card = 0

    def remove(x):
        for y in adj[x]:
            adj[y].discard(x)
            if len(adj[y]) == 1:
                ones.append(y)
        adj[x] = set()

    while True:
        while ones:
            u = ones.pop()
            if mate[u] >= 0 or len(adj[u]) != 1:
                continue
            v = next(iter(adj[u]))
            mate[u], mate[v] = v, u
            card += 1
            remove(u)
            remove(v)
        while pos < n and (mate[order[pos]] >= 0 or not adj[order[pos]]):
            pos += 1
        if pos == n:
            return card
        u = order[pos]
        v = rng.choice(sorted(adj[u]))
        mate[u], mate[v] = v, u
        card += 1
        remove(u)
        remove(v)


def maximum(graph):
    import networkx as nx
    import numpy as np
    ip, ix = np.asarray(graph.indptr), np.asarray(graph.indices)
    rows = np.repeat(np.arange(graph.n), np.diff(ip))
    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    g.add_edges_from(zip(rows[rows < ix].tolist(), ix[rows < ix].tolist()))
    return len(nx.max_weight_matching(g, maxcardinality=True))


def scipy_bound(graph):
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching
    a = sp.csr_matrix((np.ones(graph.indices.shape[0]), np.asarray(graph.indices), np.asarray(graph.indptr)),
                      shape=(graph.n, graph.n))
    return int((maximum_bipartite_matching(a, perm_type="column") >= 0).sum()) // 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--graphs", default="airfoil1,4elt,fe_4elt2,PGPgiantcompo,delaunay_n15,rmat:13")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-exact", action="store_true", help="skip networkx's exact maximum (slow)")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker[0], int(args.worker[1]))
    import matchpart
    mpiexec = Path(sys.executable).parent / "mpiexec"
    mpiexec = str(mpiexec) if mpiexec.exists() else shutil.which("mpiexec")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    ranks = [int(r) for r in args.ranks.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="mp-ks-"))
    card_rows, comm_rows = [], []
    try:
        for name in args.graphs.split(","):
            if matchpart.generators.is_spec(name):
                path = tmp / (name.replace(":", "_") + ".graph")
                matchpart.save_graph(matchpart.generate(name, seed=1), path)
            else:
                path = SHARED / f"{name}.graph"
            g = matchpart.load_graph(path)
            exact = "-" if args.no_exact else maximum(g)
            seq = sequential_karp_sipser(g, seed=args.seed)
            shared_ks = matchpart.match(g, "karp_sipser", seed=args.seed).cardinality
            row = [name, g.n, g.m, exact, scipy_bound(g), seq, shared_ks]
            for p in ranks:
                # more ranks than cores: MPICH's waiting ranks sleep instead of spinning (README)
                run_env = dict(env, MPIR_CVAR_ENABLE_HEAVY_YIELD=env.get("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")) \
                    if p > (os.cpu_count() or 1) else env
                proc = subprocess.run([mpiexec, "-n", str(p), sys.executable, "-m", "mpi4py", __file__, "--worker",
                                       str(path), str(args.seed)], capture_output=True, text=True, env=run_env)
                if proc.returncode:
                    raise SystemExit(proc.stderr[-2000:])
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                if p == ranks[0]:
                    row.append(r["1d"]["card"])
                row.append(r["2d"]["card"])
                for dist in ("1d", "2d"):
                    d = r[dist]
                    total = sum(d["messages"].values())
                    grid = "x".join(map(str, d["grid"])) if dist == "2d" else f"1x{p} rows"
                    types = " ".join(f"{SHORT.get(k, k[:3])} {v}" for k, v in d["messages"].items())
                    comm_rows.append([name, p, dist.upper(), grid, d["rounds"], types, total, d["spmv"],
                                      f"{total / max(d['spmv'], 1):.2f}", d.get("failed", "-")])
                print(json.dumps({"graph": name, "P": p, **r}), file=sys.stderr, flush=True)
            card_rows.append(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| graph | n | m | maximum (networkx) | SciPy bound | sequential KS | karp_sipser | BSP 1-D (any P) | "
          + " | ".join(f"BSP 2-D P={p}" for p in ranks) + " |")
    print("|" + "---|" * (8 + len(ranks)))
    for row in card_rows:
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()
    print("| graph | P | distribution | grid | rounds | messages per type | total | SpMV volume | total / SpMV | "
          "failed requests |")
    print("|" + "---|" * 10)
    for row in comm_rows:
        print("| " + " | ".join(str(x) for x in row) + " |")


if __name__ == "__main__":
    main()
