"""Where the threads stop paying: each function's time in one partition() at several thread counts.

    python3 benchmarks/kernel_scaling.py [--spec delaunay:1048576] [--k 32] [--preset default]
                                         [--threads 1,2] [--runs 2] [--top 20]

One process; for each thread count, one untimed run, then --runs runs under cProfile (wall
clock); a function's time is its own time (the compiled kernels are single calls from
Python, so each kernel shows as one row), the minimum over the runs. Prints the whole run's
wall time and the phases' (PartitionResult.timings) per thread count, then the --top
functions by their largest time with their times and speedups against the first count.
A kernel whose speedup stays near 1 runs on one thread; one that saturates early is bound by
memory or by a serial part inside it. Always device="cpu".
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import matchpart  # noqa: E402
from matchpart.io import load_graph  # noqa: E402


def profile_once(g, k, preset, threads):
    """(wall seconds, phase timings, {function: own seconds}) of one profiled partition()."""
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    res = matchpart.partition(g, k, preset=preset, threads=threads, device="cpu")
    prof.disable()
    wall = time.perf_counter() - t0
    own = {}
    for (path, _, name), (_, _, tottime, _, _) in pstats.Stats(prof).stats.items():
        key = f"{path.split('matchpart/')[-1]}:{name}"
        own[key] = own.get(key, 0.0) + tottime
    return wall, res.timings, own


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="delaunay:1048576")
    ap.add_argument("--k", type=int, default=32)
    ap.add_argument("--preset", default="default")
    ap.add_argument("--threads", default="1,2", help="comma list of thread counts")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    counts = [int(t) for t in args.threads.split(",")]
    g = load_graph(args.spec)
    print(f"{args.spec} (n = {g.n}, m = {g.m}), k = {args.k}, preset {args.preset}, runs {args.runs}", flush=True)
    walls, phases, own = {}, {}, {}
    for t in counts:
        matchpart.partition(g, args.k, preset=args.preset, threads=t, device="cpu")   # compiles, warms up
        best = None
        for _ in range(args.runs):
            wall, timings, funcs = profile_once(g, args.k, args.preset, t)
            best = (wall, timings, funcs) if best is None or wall < best[0] else best
            for key, sec in funcs.items():
                own.setdefault(key, {})
                own[key][t] = min(own[key].get(t, float("inf")), sec)
        walls[t], phases[t] = best[0], best[1]
        print(f"threads {t}: wall {best[0]:.3f} s, " + ", ".join(f"{p} {s:.3f}" for p, s in best[1].items()), flush=True)
    first = counts[0]
    print()
    print(f"| function | " + " | ".join(f"{t} t s" for t in counts) + " | " +
          " | ".join(f"{first} t / {t} t" for t in counts[1:]) + " |")
    print("|---|" + "---|" * (2 * len(counts) - 1))
    for key in sorted(own, key=lambda x: -max(own[x].values()))[:args.top]:
        row = [own[key].get(t, 0.0) for t in counts]
        ratios = [f"{row[0] / x:.2f}" if x > 0 and row[0] > 0 else "-" for x in row[1:]]
        print(f"| {key} | " + " | ".join(f"{x:.3f}" for x in row) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
