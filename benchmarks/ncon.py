"""Several weights per vertex: ``partition`` on (n, c) weights against ``gpmetis`` with ncon in the
file header (METIS 5, Debian's ``metis`` package), in one run.

    python3 benchmarks/ncon.py [--runs 3] [--k 8,32] [--only 4elt,rmat] [--sets deg,mask,three]

Instances: the shared graphs and the 2^16 families of benchmarks/peers.py, k = 8 and 32, with
the constraint sets
  deg:   unit + degree (balances vertices and edges);
  mask:  unit + a 0/1 "train mask" on ~10% of the vertices (a hash of the vertex id);
  three: unit + degree + random 1..10 (a hash of the vertex id).
eps = 0.03 for every constraint (gpmetis -ufactor=30, its default). Reported per instance:
both cuts (gpmetis's recomputed from its .part file), whether every constraint is within
(1 + eps) * ceil(W_j / k) for each (computed here for both), and the median times (ours
in-process, wall and process CPU summed over its threads; gpmetis's own "Partitioning"
time), runs interleaved.
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

EPS = 0.03
SETS = ("deg", "mask", "three")


def _hash(n, salt):
    x = (np.arange(n, dtype=np.uint64) + np.uint64(salt)) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    return x ^ (x >> np.uint64(29))


def constraint_weights(g, which):
    """(n, c) int64 weights of a constraint set (see the module text)."""
    n = g.n
    unit = np.ones(n, dtype=np.int64)
    deg = np.diff(np.asarray(g.indptr)).astype(np.int64)
    if which == "deg":
        cols = [unit, deg]
    elif which == "mask":
        cols = [unit, (_hash(n, 1) % np.uint64(10) == 0).astype(np.int64)]
    else:
        cols = [unit, deg, (_hash(n, 2) % np.uint64(10)).astype(np.int64) + 1]
    return np.stack(cols, axis=1)


def balanced(vw, parts, k, eps=EPS):
    """Every block within (1 + eps) * ceil(W_j / k) in every constraint j."""
    bounds = metrics.constraint_bounds(tuple(int(x) for x in vw.sum(axis=0)), k, [eps] * vw.shape[1])
    bw = np.stack([np.bincount(parts, weights=vw[:, j], minlength=k) for j in range(vw.shape[1])], axis=1)
    return bool((bw <= bounds).all())


def main(argv=None):
    ap = gpmetis_runner.parser(__doc__)
    ap.add_argument("--sets", default=",".join(SETS))
    args = ap.parse_args(argv)
    gpmetis_runner.require_gpmetis()
    warnings.simplefilter("ignore")
    start_load = load()
    inst = gpmetis_runner.instances(args.only)
    # compile (or load) the ncon kernels before timing anything: else the first instance's
    # time is mostly numba's
    warm = matchpart.generate("delaunay:2000")
    matchpart.partition(warm.with_vertex_weights(constraint_weights(warm, "three")), 8, eps=EPS, device="cpu")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in inst:
            base = make()
            if base.ncon > 1 or np.asarray(base.vwgt).max() != 1:
                base = base.with_vertex_weights(None)     # the sets replace any vertex weights
            for which in args.sets.split(","):
                vw = constraint_weights(base, which)
                g = base.with_vertex_weights(vw)
                path = Path(tmp) / f"{name.replace(':', '_')}_{which}.graph"
                matchpart.save_graph(g, path)
                for k in map(int, args.k.split(",")):
                    ours_t, ours_cpu, metis_t, res, mparts = [], [], [], None, None
                    for _ in range(args.runs):
                        t, mparts = gpmetis_runner.gpmetis(path, k, f"-ufactor={int(round(EPS * 1000))}")
                        metis_t.append(t)
                        t0, c0 = time.perf_counter(), time.process_time()
                        res = matchpart.partition(g, k, eps=EPS, device="cpu")
                        ours_t.append(time.perf_counter() - t0)
                        ours_cpu.append(time.process_time() - c0)
                    mc = None if mparts is None else metrics.edge_cut(g, mparts)
                    row = dict(name=name, set=which, k=k, cut=res.cut, metis_cut=mc,
                               bal=balanced(vw, res.parts, k), metis_bal=None if mparts is None else
                               balanced(vw, mparts, k), imb=res.constraint_imbalance,
                               t=statistics.median(ours_t), cpu=statistics.median(ours_cpu),
                               metis_t=None if mparts is None else statistics.median(metis_t))
                    rows.append(row)
                    print(row, flush=True)
    lines = ["| graph | set | k | cut | gpmetis | ratio | balanced (ours / gpmetis) | s ours (wall / CPU) | "
             "s gpmetis |", "|---|---|---|---|---|---|---|---|---|"]
    yn = {True: "yes", False: "no", None: "n/a"}
    for r in rows:
        ratio = f"{r['cut'] / r['metis_cut']:.3f}" if r["metis_cut"] else "n/a"
        lines.append(f"| {r['name']} | {r['set']} | {r['k']} | {r['cut']} | {r['metis_cut']} | {ratio} | "
                     f"{yn[r['bal']]} / {yn[r['metis_bal']]} | {r['t']:.3f} / {r['cpu']:.3f} | "
                     + (f"{r['metis_t']:.3f} |" if r["metis_t"] is not None else "n/a |"))
    both = [r for r in rows if r["metis_cut"] and r["bal"] and r["metis_bal"]]
    gc = np.exp(np.mean([np.log(r["cut"] / r["metis_cut"]) for r in both])) if both else float("nan")
    timed = [r for r in rows if r["metis_t"]]
    gt = np.exp(np.mean([np.log(r["t"] / max(r["metis_t"], 1e-3)) for r in timed])) if timed else float("nan")
    gcpu = np.exp(np.mean([np.log(r["cpu"] / max(r["metis_t"], 1e-3)) for r in timed])) if timed else float("nan")
    lines += ["", f"Geometric mean cut ratio where both are balanced ({len(both)} of {len(rows)} instances): "
              f"{gc:.3f} (target: <= 0.95); time ratio {gt:.2f} wall, {gcpu:.2f} process CPU (all threads) "
              f"against gpmetis's own 'Partitioning' time (target: <= 2; times below 1 ms counted as 1 ms). Unbalanced: ours {sum(not r['bal'] for r in rows)}, gpmetis "
              f"{sum(r['metis_bal'] is False for r in rows)}; both {sum(not r['bal'] and r['metis_bal'] is False for r in rows)}. "
              f"Load {start_load} at the start, {load()} at the end; medians of {args.runs}."]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
