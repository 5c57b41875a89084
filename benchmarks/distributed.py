"""matchpart.distributed on P = 1, 2, 4 ranks against the single-process pipeline and METIS.

    python3 benchmarks/distributed.py [--ranks 1,2,4] [--k 32] [--delaunay 20] [--rmat 18]

Generates delaunay 2^D and R-MAT 2^R into METIS files (so that the parallel reader runs),
then per graph and P launches ``mpiexec -n P`` on this script in worker mode and reports,
per phase (input, matching, contraction, initial, refinement), the slowest rank's time and
the most bytes any rank sent; the peak resident memory of the largest rank; and the cut
against ``matchpart.partition`` and pymetis (METIS) on the same graph, in this process.
Not a test: on a machine with fewer cores than ranks, the times measure oversubscription.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PHASES = ("input", "matching", "contraction", "initial", "refinement")


def worker(path, k):
    """Run under mpiexec: one distributed partition; rank 0 prints a JSON line."""
    from matchpart.distributed import partition
    from matchpart.distributed.comm import Comm
    c = Comm()
    c.comm.Barrier()
    res = partition(path, k, comm=c)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = c.comm.gather({"timings": res.timings, "bytes": dict(res.bytes_sent), "peak_mb": peak_mb}, root=0)
    if c.rank == 0:
        print(json.dumps({"cut": res.cut, "feasible": res.feasible, "ranks": rows,
                          "levels": [lv["n"] for lv in res.levels]}))


def launch(path, k, ranks):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    mpiexec = str(mpiexec) if mpiexec.exists() else shutil.which("mpiexec")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    t0 = time.perf_counter()
    proc = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, "-m", "mpi4py", __file__, "--worker",
                           str(path), str(k)], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall"] = time.perf_counter() - t0
    return out


def single(path, k):
    import matchpart
    from matchpart import metrics
    g = matchpart.load_graph(path)
    t0 = time.perf_counter()
    res = matchpart.partition(g, k, device="cpu")
    t_ours = time.perf_counter() - t0
    metis_cut = t_metis = None
    try:
        import numpy as np
        import pymetis
        t0 = time.perf_counter()
        _, parts = pymetis.part_graph(k, xadj=np.asarray(g.indptr), adjncy=np.asarray(g.indices))
        t_metis = time.perf_counter() - t0
        metis_cut = metrics.edge_cut(g, np.asarray(parts))
    except ImportError:
        pass
    return {"cut": res.cut, "time": t_ours, "metis_cut": metis_cut, "metis_time": t_metis, "n": g.n, "m": g.m}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--k", type=int, default=32)
    ap.add_argument("--delaunay", type=int, default=20, help="log2 of the Delaunay graph's vertices")
    ap.add_argument("--rmat", type=int, default=18, help="log2 of the R-MAT graph's vertices")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker[0], int(args.worker[1]))
    import matchpart
    ranks = [int(r) for r in args.ranks.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="mp-dist-"))
    try:
        for spec in (f"delaunay:{1 << args.delaunay}", f"rmat:{args.rmat}"):
            path = tmp / (spec.replace(":", "_") + ".graph")
            matchpart.save_graph(matchpart.generate(spec, seed=1), path)
            ref = single(path, args.k)
            print(f"\n{spec} (n={ref['n']}, m={ref['m']}), k={args.k}: single-process cut {ref['cut']} "
                  f"in {ref['time']:.2f} s; METIS cut {ref['metis_cut']} in {ref['metis_time'] or 0:.2f} s")
            print(f"{'P':>2} {'cut':>8} {'/single':>7} {'/METIS':>7} {'wall s':>7} "
                  + " ".join(f"{p[:8]:>8}" for p in PHASES) + "   MB sent per rank (max) by phase   peak MB/rank")
            for p in ranks:
                r = launch(path, args.k, p)
                t = {ph: max(row["timings"].get(ph, 0.0) for row in r["ranks"]) for ph in PHASES}
                sent = {ph: max(row["bytes"].get(ph, 0) for row in r["ranks"]) / 2**20 for ph in PHASES}
                peak = max(row["peak_mb"] for row in r["ranks"])
                metis = f"{r['cut'] / ref['metis_cut']:7.3f}" if ref["metis_cut"] else "      -"
                print(f"{p:>2} {r['cut']:>8} {r['cut'] / ref['cut']:7.3f} {metis} {r['wall']:7.1f} "
                      + " ".join(f"{t[ph]:8.2f}" for ph in PHASES) + "   "
                      + " ".join(f"{sent[ph]:.1f}" for ph in PHASES) + f"   {peak:.0f}"
                      + ("" if r["feasible"] else "  (unbalanced)"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
