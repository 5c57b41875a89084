"""BSP Karp-Sipser (seed 002) on the vertex-based distribution: cardinality and communication.

    python3 benchmarks/distributed_karp_sipser.py [--ranks 2,4] [--graphs 4elt,airfoil1,...]

Per shared graph: the cardinality of the distributed matching (the same for every P), of a
sequential Karp-Sipser (degree-one rule, else a random vertex's random free neighbour; the
classic formulation, in plain Python), and the maximum (networkx, exact on general graphs;
SciPy's maximum_bipartite_matching on the adjacency matrix only bounds it by n/2 here). Per
P: supersteps, words sent per message type, and their total against the SpMV volume of the
same distribution (the paper's bound: 1/2 Vol(SpMV) <= Vol(matching) <= 3/2 Vol(SpMV) + R).
The edge-based (2-D) distribution of the paper is not implemented.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "graphs"


def worker(path, seed):
    from matchpart.distributed.comm import Comm
    from matchpart.distributed.karp_sipser import karp_sipser, spmv_volume
    from matchpart.distributed.read import load
    c = Comm()
    g = load(path, c)
    mate, st = karp_sipser(g, seed=seed)
    card = c.allreduce(int((mate >= 0).sum())) // 2
    vol = spmv_volume(g)
    if c.rank == 0:
        print(json.dumps({"card": card, "rounds": st["rounds"], "words": st["words"], "spmv": vol}))


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--graphs", default="airfoil1,4elt,fe_4elt2,PGPgiantcompo,delaunay_n15")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker[0], int(args.worker[1]))
    import matchpart
    mpiexec = Path(sys.executable).parent / "mpiexec"
    mpiexec = str(mpiexec) if mpiexec.exists() else shutil.which("mpiexec")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    ranks = [int(r) for r in args.ranks.split(",")]
    print(f"{'graph':<15} {'max':>6} {'seq KS':>7} {'BSP KS':>7} {'gpa':>6} |"
          + "".join(f" P={p}: steps  req  conf  unav  total  SpMV  ratio |" for p in ranks))
    for name in args.graphs.split(","):
        path = SHARED / f"{name}.graph"
        g = matchpart.load_graph(path)
        row = f"{name:<15} {maximum(g):>6} {sequential_karp_sipser(g):>7}"
        for i, p in enumerate(ranks):
            proc = subprocess.run([mpiexec, "-n", str(p), sys.executable, "-m", "mpi4py", __file__, "--worker",
                                   str(path), "0"], capture_output=True, text=True, env=env)
            if proc.returncode:
                raise SystemExit(proc.stderr[-2000:])
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            w = r["words"]
            total = sum(w.values())
            if i == 0:
                row += f" {r['card']:>7} {matchpart.match(g, 'gpa').cardinality:>6} |"
            row += (f"     {r['rounds']:>5} {w['request']:>5} {w['confirmation']:>5} {w['unavailability']:>5} "
                    f"{total:>6} {r['spmv']:>5} {total / max(r['spmv'], 1):>6.2f} |")
        print(row, flush=True)


if __name__ == "__main__":
    main()
