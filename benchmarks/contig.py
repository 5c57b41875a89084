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

import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpmetis_runner  # noqa: E402  (puts the repository on the path)
import matchpart  # noqa: E402
from matchpart import metrics  # noqa: E402
from matchpart.refine.contiguity import max_pieces_per_component  # noqa: E402
from peers import commit, load, write_section  # noqa: E402


def main(argv=None):
    ap = gpmetis_runner.parser(__doc__)
    ap.add_argument("--write", metavar="FILE")
    args = ap.parse_args(argv)
    gpmetis_runner.require_gpmetis()
    warnings.simplefilter("ignore")
    start_load = load()
    inst = gpmetis_runner.instances(args.only)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in inst:
            g = make()
            path = Path(tmp) / f"{name.replace(':', '_')}.graph"
            matchpart.save_graph(g, path)
            for k in map(int, args.k.split(",")):
                ours_t, metis_t, res, mparts = [], [], None, None
                for _ in range(args.runs):
                    t, mparts = gpmetis_runner.gpmetis(path, k, "-contig")
                    metis_t.append(t)
                    t0 = time.perf_counter()
                    res = matchpart.partition(g, k, contiguous=True, device="cpu")
                    ours_t.append(time.perf_counter() - t0)
                mc = None if mparts is None else metrics.edge_cut(g, mparts)
                row = dict(name=name, k=k, cut=res.cut, metis_cut=mc, conn=max_pieces_per_component(g, res.parts) == 1,
                           metis_conn=None if mparts is None else max_pieces_per_component(g, mparts) == 1,
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
