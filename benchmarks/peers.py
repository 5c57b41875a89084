"""matchpart against METIS (pymetis) and KaMinPar (1 and 2 threads), side by side in one run.

    python3 benchmarks/peers.py [--presets default,fast,strong] [--runs 3] [--large] [--quick]
                                [--only rmat,4elt] [--write benchmarks/RESULTS.md]

Instances: the shared graphs (../shared/graphs) at k = 2, 8, 32; generated families at 2^16
vertices (R-MAT, Barabasi-Albert, a stochastic block model, Watts-Strogatz, rgg, delaunay,
a 3-D grid with random integer edge weights) at k = 8 and 32; with --large also delaunay
2^20 at k = 32. Per instance the tools run interleaved, --runs times each; times are medians
and cuts come from the first run (every tool is deterministic here). Prints per instance the
cut, balance and time of each tool and ours / METIS, then per preset:
- geometric mean of time ratios over instances where METIS needs >= 10 ms (below that the
  ratio measures Python call overhead; there the largest time of ours is shown instead),
  and the largest time ratio;
- geometric mean cut ratio (every instance), infeasible results of ours.
--write appends the tables to a Markdown file with date, commit and machine.
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import matchpart  # noqa: E402
from matchpart import metrics  # noqa: E402
from matchpart.graph import Graph  # noqa: E402
from matchpart.io import load_graph, save_graph  # noqa: E402

GRAPHS = ROOT.parent / "shared" / "graphs"
EPS = 0.03
FAMILY_N = 2 ** 16
SMALL_METIS_S = 0.010      # below this METIS time a ratio measures call overhead, not algorithms


def _networkx_graph(nxg, name):
    import scipy.sparse as sp
    import networkx as nx
    a = nx.to_scipy_sparse_array(nxg, format="csr", dtype=np.int64)
    a.setdiag(0)
    a.eliminate_zeros()
    return Graph.from_scipy(sp.csr_matrix(a))


def family(name, seed=1):
    """A generated instance of about FAMILY_N vertices."""
    import networkx as nx
    n = FAMILY_N
    if name == "rmat":
        return load_graph("rmat:16")
    if name == "ba":
        return load_graph(f"ba:{n}:4")
    if name == "rgg":
        return load_graph(f"rgg:{n}")
    if name == "delaunay":
        return load_graph(f"delaunay:{n}")
    if name == "sbm":                       # 64 communities of 1024, ~12 inner + 2 outer edges per vertex
        blocks = 64
        size = n // blocks
        p = np.full((blocks, blocks), 2.0 / n)
        np.fill_diagonal(p, 12.0 / size)
        return _networkx_graph(nx.stochastic_block_model([size] * blocks, p.tolist(), seed=seed, sparse=True), name)
    if name == "ws":
        return _networkx_graph(nx.watts_strogatz_graph(n, 10, 0.1, seed=seed), name)
    if name == "grid3d_w":                  # 40 x 40 x 41 grid, edge weights 1..10
        g = load_graph("grid:40x40x41")
        h = g.backend.to_host
        indptr, indices = h(g.indptr), h(g.indices)
        rows = np.repeat(np.arange(g.n), np.diff(indptr))
        lo, hi = np.minimum(rows, indices), np.maximum(rows, indices)
        w = 1 + (lo * 2654435761 + hi * 40503) % 10     # symmetric: a function of the pair
        return Graph(indptr, indices, ewgt=w.astype(np.int64))
    raise ValueError(name)


FAMILIES = ("rmat", "ba", "sbm", "ws", "rgg", "delaunay", "grid3d_w")


def instances(args, tmp):
    """(name, graph, METIS-file path for KaMinPar, k) in benchmark order."""
    out = []
    for path in sorted(GRAPHS.glob("*.graph")):
        g = load_graph(path)
        out += [(path.stem, g, path, k) for k in (2, 8, 32) if k <= g.n]
    for name in FAMILIES:
        g = family(name)
        path = Path(tmp) / f"{name}.graph"
        save_graph(g, path)
        out += [(f"{name}:2^16", g, path, k) for k in (8, 32)]
    if args.large:
        g = load_graph("delaunay:1048576")
        path = Path(tmp) / "delaunay20.graph"
        save_graph(g, path)
        out.append(("delaunay:2^20", g, path, 32))
    if args.only:
        keep = args.only.split(",")
        out = [i for i in out if any(s in i[0] for s in keep)]
    if args.quick:
        out = [i for i in out if i[3] == 8]
    return out


def metis_call(g, k):
    import pymetis
    h = g.backend.to_host
    xadj, adjncy = h(g.indptr).astype(np.int64), h(g.indices).astype(np.int64)
    ew, vw = h(g.ewgt).astype(np.int64), h(g.vwgt).astype(np.int64)
    adj = pymetis.CSRAdjacency(xadj, adjncy)
    return lambda: np.asarray(pymetis.part_graph(k, adj, eweights=ew, vweights=vw)[1], dtype=np.int64)


def kaminpar_call(path, k, threads):
    import kaminpar
    kg = kaminpar.load_graph(str(path), kaminpar.GraphFileFormat.METIS)
    solver = kaminpar.KaMinPar(threads, kaminpar.default_context())

    def go():
        kaminpar.reseed(0)
        return np.asarray(solver.compute_partition(kg, k, EPS), dtype=np.int64)
    return go


def ours_call(g, k, preset):
    def go():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return matchpart.partition(g, k, eps=EPS, preset=preset).parts
    return go


def judge(g, parts, k):
    """(cut, feasible) under our balance bound Lmax = (1 + eps) ceil(W / k)."""
    lmax = metrics.max_block_weight(g.total_vwgt, k, EPS)
    return metrics.edge_cut(g, parts), bool((metrics.block_weights(g, parts, k) <= lmax).all())


def gmean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", default="default")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--large", action="store_true", help="add delaunay 2^20 at k = 32")
    ap.add_argument("--quick", action="store_true", help="k = 8 only")
    ap.add_argument("--only", default="", help="comma list of substrings of instance names")
    ap.add_argument("--write", default="", help="append the tables to this Markdown file")
    args = ap.parse_args(argv)
    presets = args.presets.split(",")
    tools = ["metis", "kmp1", "kmp2"] + presets
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    matchpart.partition("grid:30x30", 4)           # compile / load the kernels before timing
    with tempfile.TemporaryDirectory() as tmp:
        insts = instances(args, tmp)
        say(f"| instance | n | m | k | " + " | ".join(f"{t} cut | {t} s" for t in tools) + " | "
            + " | ".join(f"{p} cut/METIS | {p} t/METIS" for p in presets) + " |")
        say("|" + "---|" * (4 + 2 * len(tools) + 2 * len(presets)))
        rows = []
        for name, g, path, k in insts:
            calls = {"metis": metis_call(g, k), "kmp1": kaminpar_call(path, k, 1), "kmp2": kaminpar_call(path, k, 2)}
            calls.update({p: ours_call(g, k, p) for p in presets})
            times = {t: [] for t in tools}
            first = {}
            for _ in range(args.runs):                 # interleaved: each run of each tool in turn
                for t in tools:
                    t0 = time.perf_counter()
                    parts = calls[t]()
                    times[t].append(time.perf_counter() - t0)
                    first.setdefault(t, parts)
            res = {t: judge(g, first[t], k) + (statistics.median(times[t]),) for t in tools}
            rows.append((name, k, res))
            cells = []
            for t in tools:
                cut, ok, sec = res[t]
                cells.append(f"{cut}{'' if ok else ' (over)'} | {sec:.3f}")
            mc, _, mt = res["metis"]
            ratios = [f"{res[p][0] / max(mc, 1):.3f} | {res[p][2] / mt:.2f}" for p in presets]
            say(f"| {name} | {g.n} | {g.indices.shape[0] // 2} | {k} | " + " | ".join(cells) + " | "
                + " | ".join(ratios) + " |")
    say()
    say("| preset | instances | gmean cut/METIS | gmean t/METIS (METIS >= 10 ms) | max t/METIS (same) "
        "| worst instance | max time where METIS < 10 ms | infeasible | gmean cut/KaMinPar-1 | gmean t/KaMinPar-1 |")
    say("|---|---|---|---|---|---|---|---|---|---|")
    for p in presets:
        cut_r = [r[p][0] / max(r["metis"][0], 1) for _, _, r in rows]
        big = [(r[p][2] / r["metis"][2], f"{n} k={k}") for n, k, r in rows if r["metis"][2] >= SMALL_METIS_S]
        small = [r[p][2] for _, _, r in rows if r["metis"][2] < SMALL_METIS_S]
        worst = max(big) if big else (float("nan"), "-")
        infeasible = sum(not r[p][1] for _, _, r in rows)
        kc = [r[p][0] / max(r["kmp1"][0], 1) for _, _, r in rows]
        kt = [r[p][2] / r["kmp1"][2] for _, _, r in rows]
        say(f"| {p} | {len(rows)} | {gmean(cut_r):.3f} | {gmean([b[0] for b in big]):.2f} | {worst[0]:.2f} "
            f"| {worst[1]} | {max(small) if small else float('nan'):.3f} s | {infeasible} "
            f"| {gmean(kc):.3f} | {gmean(kt):.2f} |")
    if args.write:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        head = (f"\n## {datetime.date.today()} · commit {commit} · {platform.machine()}, {os.cpu_count()} cores, "
                f"Python {platform.python_version()} · `benchmarks/peers.py --presets {args.presets} "
                f"--runs {args.runs}{' --large' if args.large else ''}{' --quick' if args.quick else ''}"
                f"{' --only ' + args.only if args.only else ''}`\n\n")
        with open(args.write, "a") as f:
            f.write(head + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
