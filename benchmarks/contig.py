"""Connected blocks: ``partition(..., contiguous=True)`` against ``gpmetis -contig`` (METIS 5,
Debian's ``metis`` package), in one run.

    python3 benchmarks/contig.py [--runs 3] [--k 8,32] [--only 4elt,rmat] [--write benchmarks/RESULTS.md]

Instances: the shared graphs and the 2^16 families of benchmarks/peers.py, k = 8 and 32,
eps = 0.03 (gpmetis's default ufactor 30). Reported per instance: the cut of both (gpmetis's
recomputed from its partition file), whether every block is connected within each
connected component of the graph, whether the balance holds, and the median times (ours
in-process, gpmetis's own "Partitioning" time).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import matchpart  # noqa: E402
from matchpart import metrics  # noqa: E402
from peers import FAMILIES, GRAPHS, commit, family, load, write_section  # noqa: E402


def connected_within_components(g, parts):
    a = sp.csr_matrix((np.ones(g.indices.shape[0]), g.indices, g.indptr), shape=(g.n, g.n))
    _, comp = connected_components(a, directed=False)
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    keep = parts[rows] == parts[g.indices]
    inside = sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], g.indices[keep])), shape=(g.n, g.n))
    _, piece = connected_components(inside, directed=False)
    pairs = np.unique(np.stack([parts, comp, piece]), axis=1)
    key = pairs[0] * (comp.max() + 1) + pairs[1]
    return np.unique(key).shape[0] == key.shape[0]


def gpmetis(path, k):
    out = subprocess.run(["gpmetis", "-contig", str(path), str(k)], capture_output=True, text=True)
    if out.returncode != 0:
        return None, None
    seconds = float(re.search(r"Partitioning:\s+([0-9.]+) sec", out.stdout).group(1))
    return seconds, np.loadtxt(f"{path}.part.{k}", dtype=np.int64)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--k", default="8,32")
    ap.add_argument("--only")
    ap.add_argument("--write", metavar="FILE")
    args = ap.parse_args(argv)
    if shutil.which("gpmetis") is None:
        sys.exit("gpmetis not found: apt-get install metis")
    warnings.simplefilter("ignore")
    start_load = load()
    inst = [(p.stem, lambda p=p: matchpart.load_graph(p)) for p in sorted(GRAPHS.glob("*.graph"))]
    inst += [(f"{f}:2^16", lambda f=f: family(f)) for f in FAMILIES]
    if args.only:
        inst = [i for i in inst if any(s in i[0] for s in args.only.split(","))]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in inst:
            g = make()
            path = Path(tmp) / f"{name.replace(':', '_')}.graph"
            matchpart.save_graph(g, path)
            for k in map(int, args.k.split(",")):
                ours_t, metis_t, res, mparts = [], [], None, None
                for _ in range(args.runs):
                    t, mparts = gpmetis(path, k)
                    metis_t.append(t)
                    t0 = time.perf_counter()
                    res = matchpart.partition(g, k, contiguous=True)
                    ours_t.append(time.perf_counter() - t0)
                mc = None if mparts is None else metrics.edge_cut(g, mparts)
                row = dict(name=name, k=k, cut=res.cut, metis_cut=mc, conn=connected_within_components(g, res.parts),
                           metis_conn=None if mparts is None else connected_within_components(g, mparts),
                           bal=res.feasible,
                           metis_bal=None if mparts is None else metrics.is_balanced(g, mparts, k, 0.03),
                           t=statistics.median(ours_t),
                           metis_t=None if mparts is None else statistics.median(metis_t))
                rows.append(row)
                print(row, flush=True)
    lines = ["| graph | k | cut | gpmetis -contig | ratio | connected (ours / gpmetis) | balanced (ours / gpmetis) "
             "| s ours | s gpmetis |", "|---|---|---|---|---|---|---|---|---|"]
    yn = {True: "yes", False: "no", None: "n/a"}
    for r in rows:
        ratio = f"{r['cut'] / r['metis_cut']:.3f}" if r["metis_cut"] else "n/a"
        lines.append(f"| {r['name']} | {r['k']} | {r['cut']} | {r['metis_cut']} | {ratio} | {yn[r['conn']]} / "
                     f"{yn[r['metis_conn']]} | {yn[r['bal']]} / {yn[r['metis_bal']]} | {r['t']:.3f} | "
                     + (f"{r['metis_t']:.3f} |" if r["metis_t"] is not None else "n/a |"))
    both = [r for r in rows if r["metis_cut"] and r["bal"] and r["metis_bal"]]
    gc = np.exp(np.mean([np.log(r["cut"] / r["metis_cut"]) for r in both])) if both else float("nan")
    lines += ["", f"Geometric mean cut ratio where both are balanced ({len(both)} of {len(rows)} instances): "
              f"{gc:.3f} (target: <= 1.0). Unbalanced ours: {sum(not r['bal'] for r in rows)}; "
              f"not connected ours: {sum(not r['conn'] for r in rows)}."]
    print("\n".join(lines))
    if args.write:
        body = [f"{datetime.date.today()}, commit {commit()}, {os.cpu_count()}-core {platform.machine()}, no GPU; "
                f"load {start_load} at the start, {load()} at the end; medians of {args.runs}; "
                f"`python3 benchmarks/contig.py --runs {args.runs} --k {args.k}`.", ""]
        write_section(args.write, "## contig (benchmarks/contig.py): connected blocks against gpmetis -contig",
                      body + lines)


if __name__ == "__main__":
    main()
