"""The distributed pipeline's cut against the single process's on the shared graphs (issue 25:
within 3%, geometric mean over the shared graphs at k = 8, P = 2 and 4).

    python3 benchmarks/distributed_cut.py [--ranks 2,4] [--k 8] [--seeds 0,1,2,3]

For each P, one ``mpiexec -n P`` runs ``matchpart.distributed.partition`` on every METIS file
of ../shared/graphs (read in parallel, their numbering kept) for every seed; this process runs
``matchpart.partition`` on the same graph with the same seed. Prints, per graph, both cuts and
their ratio (seeds in order), and per P and seed the geometric mean of the ratios over the
graphs, then the median over the seeds. Cuts only: they do not depend on the machine's load.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GRAPHS = ROOT.parent / "shared" / "graphs"


def worker(paths, k, seeds):
    """Under mpiexec: rank 0 prints one JSON line per (graph, seed) with the cut and balance."""
    from matchpart.distributed import partition
    from matchpart.distributed.comm import Comm
    c = Comm()
    for path in paths:
        for seed in seeds:
            res = partition(path, k, seed=seed, comm=c)
            if c.rank == 0:
                print(json.dumps({"graph": Path(path).name, "seed": seed, "cut": float(res.cut),
                                  "feasible": bool(res.feasible)}), flush=True)


def distributed_cuts(paths, k, seeds, ranks):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    mpiexec = str(mpiexec) if mpiexec.exists() else shutil.which("mpiexec")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    if ranks > (os.cpu_count() or 1):   # MPICH's waiting ranks sleep instead of spinning (README)
        env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    proc = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, "-m", "mpi4py", __file__, "--worker",
                           ",".join(map(str, paths)), str(k), ",".join(map(str, seeds))],
                          capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {(r["graph"], r["seed"]): r for r in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--seeds", default="0,1,2,3")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0].split(","), int(args.worker[1]), [int(s) for s in args.worker[2].split(",")])
        return
    import warnings

    import matchpart
    from matchpart.io import load_graph
    if not GRAPHS.is_dir():
        raise SystemExit(f"no shared graphs at {GRAPHS}")
    paths = sorted(GRAPHS.glob("*.graph"))
    seeds = [int(s) for s in args.seeds.split(",")]
    single = {}
    for path in paths:
        g = load_graph(path)
        for seed in seeds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                single[(path.name, seed)] = float(matchpart.partition(g, args.k, seed=seed, device="cpu").cut)
    print(f"k = {args.k}, seeds {args.seeds}; cut of matchpart.distributed.partition / matchpart.partition\n")
    for ranks in [int(p) for p in args.ranks.split(",")]:
        dist = distributed_cuts(paths, args.k, seeds, ranks)
        print(f"### P = {ranks}\n")
        print("| graph | single-process cuts | distributed cuts | ratios |")
        print("|---|---|---|---|")
        logs = {s: [] for s in seeds}
        for path in paths:
            ratios = []
            for s in seeds:
                d = dist[(path.name, s)]
                ratio = d["cut"] / single[(path.name, s)] if single[(path.name, s)] else 1.0
                ratios.append(f"{ratio:.3f}" + ("" if d["feasible"] else " (over)"))
                logs[s].append(math.log(ratio))
            ours = " / ".join(f"{single[(path.name, s)]:.0f}" for s in seeds)
            theirs = " / ".join(f"{dist[(path.name, s)]['cut']:.0f}" for s in seeds)
            print(f"| {path.stem} | {ours} | {theirs} | {' / '.join(ratios)} |")
        means = [math.exp(sum(v) / len(v)) for v in logs.values()]
        print(f"\ngeometric mean over {len(paths)} graphs, seeds {args.seeds}: "
              f"{' / '.join(f'{m:.3f}' for m in means)}; median {statistics.median(means):.3f}\n")


if __name__ == "__main__":
    main()
