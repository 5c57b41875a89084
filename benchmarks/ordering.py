"""Nested-dissection orderings: matchpart.order against METIS (pymetis.nested_dissection and
Debian's ndmetis where installed), side by side in one run.

    python3 benchmarks/ordering.py [--runs 3] [--quick] [--only 4elt,grid] [--write benchmarks/RESULTS.md]

Graphs: the shared meshes (4elt, fe_4elt2, airfoil1, delaunay_n15, rgg_n_2_15_s0), delaunay
and rgg of 2^17 vertices, and 40^3 grids with the 7-point and 27-point stencils. Every tool
runs once to warm up (numba's compile cache), then --runs times interleaved; times are medians
(ours and pymetis: wall time of the call in this process; ndmetis: the ordering time it
reports itself, I/O excluded). nnz(L) and flops (sum of squared column counts) are computed
for every ordering by matchpart.metrics.fill, so all tools are measured the same way; both
orderings are checked to be permutations. Ratios are ours / pymetis, geometric means at the end.
"""
from __future__ import annotations

import argparse
import datetime
import math
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import matchpart  # noqa: E402
from matchpart import metrics  # noqa: E402

SHARED = ROOT.parent / "shared" / "graphs"
MESHES = ("4elt", "fe_4elt2", "airfoil1", "delaunay_n15", "rgg_n_2_15_s0")
GENERATED = ("delaunay:131072", "rgg:131072", "grid:40x40x40", "grid27:40")


def grid27(side):
    """The 27-point stencil on a side^3 grid (every vertex joined to its 26 neighbours)."""
    path = sp.diags([1, 1, 1], [-1, 0, 1], shape=(side, side), format="csr")
    A = sp.kron(sp.kron(path, path), path, format="csr")
    A.setdiag(0)
    A.eliminate_zeros()
    return matchpart.Graph.from_scipy(A)


def load(name):
    if name.startswith("grid27:"):
        return grid27(int(name.split(":")[1]))
    if ":" in name:
        return matchpart.generate(name)
    return matchpart.load_graph(str(SHARED / f"{name}.graph"))


def check(perm, n):
    p = np.asarray(perm, dtype=np.int64)
    assert p.shape == (n,) and (np.bincount(p, minlength=n) == 1).all(), "not a permutation"
    return p


def run_ours(g):
    t0 = time.perf_counter()
    perm, iperm = matchpart.order(g)
    t = time.perf_counter() - t0
    p = check(perm, g.n)
    assert (np.asarray(iperm)[p] == np.arange(g.n)).all()
    return p, t


def run_pymetis(g, xadj, adjncy):
    import pymetis
    t0 = time.perf_counter()
    perm, iperm = pymetis.nested_dissection(adjacency=pymetis.CSRAdjacency(xadj, adjncy))
    t = time.perf_counter() - t0
    return check(perm, g.n), t


def run_ndmetis(path, n):
    out = subprocess.run(["ndmetis", str(path)], capture_output=True, text=True, check=True).stdout
    t = float(re.search(r"Ordering:\s+([0-9.]+)", out).group(1))
    iperm = np.loadtxt(f"{path}.iperm", dtype=np.int64).reshape(-1)
    perm = np.empty(n, dtype=np.int64)
    perm[check(iperm, n)] = np.arange(n)
    return perm, t


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="shared meshes only")
    ap.add_argument("--only", default=None, help="comma-separated substrings of graph names")
    ap.add_argument("--write", default=None, help="replace this benchmark's section of this Markdown file")
    args = ap.parse_args(argv)
    import pymetis  # noqa: F401  (required)
    names = list(MESHES) + ([] if args.quick else list(GENERATED))
    if args.only:
        names = [n for n in names if any(s in n for s in args.only.split(","))]
    have_nd = shutil.which("ndmetis") is not None
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="ordering_"))
    header = (f"| graph | n | nnz(L) ours | nnz / METIS | flops / METIS | time ours s | time / METIS |"
              + (" nnz / ndmetis | flops / ndmetis | time / ndmetis |" if have_nd else ""))
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name in names:
        g = load(name)
        xadj = np.asarray(g.indptr, dtype=np.int64)
        adjncy = np.asarray(g.indices, dtype=np.int64)
        gpath = tmp / (name.replace(":", "_") + ".graph")
        matchpart.save_graph(g, str(gpath))
        times = {"ours": [], "metis": [], "nd": []}
        run_ours(g)
        run_pymetis(g, xadj, adjncy)
        for _ in range(args.runs):
            p_ours, t = run_ours(g)
            times["ours"].append(t)
            p_metis, t = run_pymetis(g, xadj, adjncy)
            times["metis"].append(t)
            if have_nd:
                p_nd, t = run_ndmetis(gpath, g.n)
                times["nd"].append(t)
        f_ours, f_metis = metrics.fill(g, p_ours), metrics.fill(g, p_metis)
        t = {k: statistics.median(v) for k, v in times.items() if v}
        row = {"graph": name, "n": g.n, "nnz": f_ours.nnz, "nnz_r": f_ours.nnz / f_metis.nnz,
               "flops_r": f_ours.flops / f_metis.flops, "t": t["ours"], "t_r": t["ours"] / t["metis"]}
        line = (f"| {name} | {g.n} | {f_ours.nnz} | {row['nnz_r']:.3f} | {row['flops_r']:.3f} | {t['ours']:.3f} "
                f"| {row['t_r']:.2f} |")
        if have_nd:
            f_nd = metrics.fill(g, p_nd)
            row.update(nd_nnz_r=f_ours.nnz / f_nd.nnz, nd_flops_r=f_ours.flops / f_nd.flops, nd_t_r=t["ours"] / t["nd"])
            line += f" {row['nd_nnz_r']:.3f} | {row['nd_flops_r']:.3f} | {row['nd_t_r']:.2f} |"
        rows.append(row)
        print(line, flush=True)
    summary = (f"| geomean | | | {geomean([r['nnz_r'] for r in rows]):.3f} | {geomean([r['flops_r'] for r in rows]):.3f}"
               f" | | {geomean([r['t_r'] for r in rows]):.2f} |")
    if have_nd:
        summary += (f" {geomean([r['nd_nnz_r'] for r in rows]):.3f} | {geomean([r['nd_flops_r'] for r in rows]):.3f}"
                    f" | {geomean([r['nd_t_r'] for r in rows]):.2f} |")
    print(summary)
    shutil.rmtree(tmp, ignore_errors=True)
    if args.write:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from peers import commit, machine, write_section
        from peers import load as load_average
        body = [f"{datetime.date.today()} · commit {commit()} · {machine()} · load average {load_average()} at the end · "
                f"`python3 benchmarks/ordering.py {' '.join(argv if argv is not None else sys.argv[1:])}` "
                f"({args.runs} interleaved runs, medians; ratios ours / METIS, lower is better; pymetis "
                f"{'and ndmetis (Debian metis)' if have_nd else 'only'})", "", header,
                "|" + "---|" * (header.count("|") - 1)]
        for r in rows:
            body.append(f"| {r['graph']} | {r['n']} | {r['nnz']} | {r['nnz_r']:.3f} | {r['flops_r']:.3f} | "
                        f"{r['t']:.3f} | {r['t_r']:.2f} |"
                        + (f" {r['nd_nnz_r']:.3f} | {r['nd_flops_r']:.3f} | {r['nd_t_r']:.2f} |" if have_nd else ""))
        body.append(summary)
        write_section(args.write, "## Orderings (benchmarks/ordering.py)", body)

if __name__ == "__main__":
    main()
