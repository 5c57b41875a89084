"""The communication-volume objective: ``partition(..., objtype="vol")`` against
``gpmetis -objtype=vol`` (METIS 5, Debian's ``metis`` package), in one run.

    python3 benchmarks/volume.py [--runs 3] [--k 8,32] [--only 4elt,ba]

Instances: the shared graphs and the 2^16 families of benchmarks/peers.py, k = 8 and 32,
eps = 0.03 (gpmetis's default ufactor 30). Each graph is written as a METIS file, gpmetis
partitions it, and both partitions' volumes are computed by matchpart.metrics (the same
definition as gpmetis's report). Runs are interleaved (gpmetis, ours, gpmetis, ours, ...);
times are medians (ours in-process wall time, gpmetis's own "Partitioning" time), volumes
those of the last run (both are deterministic for a seed). Also reported: the volume of our
cut-objective partition, for what the objective itself buys.
"""
from __future__ import annotations

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
from peers import load  # noqa: E402


# Time ratios count the instances where gpmetis takes at least this long, as
# benchmarks/peers.py does: below it a run is mostly fixed costs (gpmetis's 1-9 ms against a
# Python call's few milliseconds of set-up) and the timer's resolution.
TIMED_MIN_SECONDS = 0.010


def gmean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return float(np.exp(np.mean(np.log(xs)))) if xs else float("nan")


def main(argv=None):
    ap = gpmetis_runner.parser(__doc__)
    args = ap.parse_args(argv)
    gpmetis_runner.require_gpmetis()
    warnings.simplefilter("ignore")
    start_load = load()
    inst = gpmetis_runner.instances(args.only)
    matchpart.partition("delaunay:2000", 4, objtype="vol", device="cpu")      # compile before timing anything
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in inst:
            g = make()
            path = Path(tmp) / f"{name.replace(':', '_').replace('^', '')}.graph"
            matchpart.save_graph(g, path)
            for k in map(int, args.k.split(",")):
                ours_t, metis_t, res, mparts = [], [], None, None
                for _ in range(args.runs):
                    t, mparts = gpmetis_runner.gpmetis(path, k, "-objtype=vol")
                    metis_t.append(t)
                    t0 = time.perf_counter()
                    res = matchpart.partition(g, k, objtype="vol", device="cpu")
                    ours_t.append(time.perf_counter() - t0)
                cut_run = matchpart.partition(g, k, device="cpu")
                row = dict(name=name, k=k, vol=res.volume, cut=res.cut, bal=res.feasible,
                           cut_obj_vol=metrics.communication_volume(g, cut_run.parts),
                           metis_vol=None if mparts is None else metrics.communication_volume(g, mparts),
                           metis_cut=None if mparts is None else metrics.edge_cut(g, mparts),
                           metis_bal=None if mparts is None else metrics.is_balanced(g, mparts, k, 0.03),
                           t=statistics.median(ours_t),
                           metis_t=None if mparts is None else statistics.median(metis_t))
                rows.append(row)
                print(row, flush=True)
    lines = ["| graph | k | vol | gpmetis vol | vol ratio | cut-objective vol | cut | gpmetis cut | balanced "
             "(ours / gpmetis) | s ours | s gpmetis | time ratio |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    yn = {True: "yes", False: "no", None: "n/a"}
    for r in rows:
        vr = r["vol"] / r["metis_vol"] if r["metis_vol"] else None
        tr = r["t"] / r["metis_t"] if r["metis_t"] else None
        lines.append(f"| {r['name']} | {r['k']} | {r['vol']} | {r['metis_vol']} | "
                     + (f"{vr:.3f}" if vr else "n/a") + f" | {r['cut_obj_vol']} | {r['cut']} | {r['metis_cut']} | "
                     f"{yn[r['bal']]} / {yn[r['metis_bal']]} | {r['t']:.3f} | "
                     + (f"{r['metis_t']:.3f}" if r["metis_t"] is not None else "n/a") + " | "
                     + (f"{tr:.2f}" if tr else "n/a") + " |")
    both = [r for r in rows if r["metis_vol"] and r["bal"] and r["metis_bal"]]
    timed = [r for r in both if r["metis_t"] is not None and r["metis_t"] >= TIMED_MIN_SECONDS]
    small = [r for r in both if r not in timed]
    lines += ["", f"Geometric means over the {len(both)} of {len(rows)} instances where both are balanced: "
              f"volume {gmean([r['vol'] / r['metis_vol'] for r in both]):.3f} x gpmetis's (target <= 0.95), "
              f"our cut objective's volume {gmean([r['cut_obj_vol'] / r['metis_vol'] for r in both]):.3f} x; "
              f"objtype=vol / objtype=cut volume {gmean([r['vol'] / r['cut_obj_vol'] for r in rows]):.3f}.",
              f"Time over the {len(timed)} of them where gpmetis takes >= {TIMED_MIN_SECONDS * 1e3:.0f} ms "
              f"(benchmarks/peers.py's rule): {gmean([r['t'] / r['metis_t'] for r in timed]):.2f} x gpmetis's "
              f"(target <= 2); over all {len(both)}: {gmean([r['t'] / r['metis_t'] for r in both if r['metis_t']]):.2f} x; "
              f"where gpmetis takes less, ours takes at most "
              f"{max([r['t'] for r in small], default=0.0) * 1e3:.0f} ms.",
              f"Load average {start_load} at the start, {load()} at the end; medians of {args.runs} interleaved runs."]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
