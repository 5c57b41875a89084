"""Per-level profile of coarsening: ratings, local max rounds, weight cap, two-hop pairing,
coarse ids and contraction, in process CPU time (median over --repeats, after a warm-up).

    NUMBA_NUM_THREADS=1 python3 benchmarks/coarsen_profile.py [--spec delaunay:1048576]
        [--coarsen-to 640] [--repeats 5] [--cache FILE.npz]

coarsen_to 640 is the default preset's for k = 32. The timers wrap the functions the
hierarchy calls (monkeypatched, so nothing in matchpart changes); the last line is a hash
of every level's graph and mapping, which must not change when only speed does. CPU time,
not wall time: the machine is shared, and other processes' work shows less in CPU time.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from matchpart.backend import get as get_backend  # noqa: E402
from matchpart.coarsen import hierarchy  # noqa: E402
from matchpart.generators import from_spec  # noqa: E402
from matchpart.graph import Graph  # noqa: E402
from matchpart.matchers import local_max, ratings  # noqa: E402

PHASES = {  # column -> (module, function the hierarchy reaches)
    "matcher": (hierarchy, "run_matcher"),
    "ratings": (ratings, "_upper_ratings_kernel"),
    "rounds": (local_max, "local_max_rounds_cpu"),
    "lm_kernel": (local_max, "_local_max_kernel"),
    "cap": (hierarchy, "drop_heavy_pairs_host"),
    "twohop": (hierarchy, "two_hop_pairs"),
    "ids": (hierarchy, "mapping_from_matching"),
    "contract": (hierarchy, "contract"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="delaunay:1048576")
    ap.add_argument("--coarsen-to", type=int, default=640)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cache", help="npz file to keep the generated graph in between runs")
    args = ap.parse_args()
    if args.cache and os.path.exists(args.cache):
        z = np.load(args.cache)
        g = Graph._trusted(z["indptr"], z["indices"], z["ewgt"], z["vwgt"], get_backend("cpu"))
    else:
        g = from_spec(args.spec, seed=0)
        if args.cache:
            np.savez(args.cache, indptr=g.indptr, indices=g.indices, ewgt=g.ewgt, vwgt=g.vwgt)

    timers, depth = {}, [0]

    def wrap(module, name, column):
        fn = getattr(module, name, None)
        if fn is None:   # an older layout of the code: that column stays empty
            return

        def timed(*a, **k):
            t0 = time.process_time()
            out = fn(*a, **k)
            per_level = timers.setdefault(column, {})
            per_level[depth[0]] = per_level.get(depth[0], 0.0) + time.process_time() - t0
            return out
        setattr(module, name, timed)

    for column, (module, name) in PHASES.items():
        wrap(module, name, column)
    level_seed = hierarchy.level_seed_of

    def seed_of(seed, d):   # the hierarchy asks for each level's seed first: note the level
        depth[0] = d
        return level_seed(seed, d)
    hierarchy.level_seed_of = seed_of

    hierarchy.coarsen(g, coarsen_to=args.coarsen_to)   # warm-up: compiles or loads the kernels
    totals, runs = [], []
    for _ in range(args.repeats):
        timers.clear()
        t0 = time.process_time()
        levels = hierarchy.coarsen(g, coarsen_to=args.coarsen_to)
        totals.append(time.process_time() - t0)
        runs.append({c: dict(v) for c, v in timers.items()})
    print(f"{args.spec}: {len(levels)} levels, coarsening CPU s: median {statistics.median(totals):.3f}, "
          f"min {min(totals):.3f} (runs {', '.join(f'{t:.3f}' for t in totals)})")
    print("level n m rounds " + " ".join(PHASES) + "  (ms)")
    for d, lv in enumerate(levels[:-1]):
        s = lv.stats
        ms = [statistics.median(r.get(c, {}).get(d, 0.0) for r in runs) * 1000 for c in PHASES]
        print(d, s["n"], s["m"], s.get("rounds"), " ".join(f"{x:.1f}" for x in ms))
    print("all levels: " + ", ".join(
        f"{c} {statistics.median(sum(r.get(c, {}).values()) for r in runs) * 1000:.0f}" for c in PHASES))
    h = hashlib.sha1()
    for lv in levels:
        for a in (lv.graph.indptr, lv.graph.indices, lv.graph.ewgt) + (() if lv.mapping is None else (lv.mapping,)):
            h.update(np.asarray(a).tobytes())
    print("hierarchy hash", h.hexdigest())


if __name__ == "__main__":
    main()
