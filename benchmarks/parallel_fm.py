"""The k-way FM step and the whole partition() with the sequential k-way passes ("old") and
with refine/parallel_fm.py's pair rounds ("new"), at 1 and 2 threads: one process,
interleaved, medians of --repeats (seeds 0, 1, ...; the cut is their mean).

    python3 benchmarks/parallel_fm.py [--specs delaunay:1048576@32,rgg:1048576@32]
        [--threads 1,2] [--repeats 3]

"fm" is the time inside refine.fm.refine_arrays (every refined level and initial
partitioning's k-way FM); "refine" is partition()'s refinement timing. "old" sets
parallel_fm.PARALLEL_FM_MIN_VERTICES out of reach, "new" leaves it as it is.
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

import matchpart
import matchpart.refine.fm as fm_module
from matchpart import load_graph
from matchpart.refine import parallel_fm


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", default="delaunay:1048576@32,rgg:1048576@32,delaunay:65536@8,delaunay:65536@32,"
                                        "rgg:65536@8,rgg:65536@32,rmat:16@8,rmat:16@32,ba:65536:4@8,ba:65536:4@32")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    counts = [int(t) for t in args.threads.split(",")]
    in_fm = [0.0]
    refine_arrays = fm_module.refine_arrays

    def timed(*a, **kw):
        t = time.perf_counter()
        try:
            return refine_arrays(*a, **kw)
        finally:
            in_fm[0] += time.perf_counter() - t

    fm_module.refine_arrays = timed
    threshold = parallel_fm.PARALLEL_FM_MIN_VERTICES
    variants = {"old": 1 << 62, "new": threshold}
    graphs = {}
    for item in args.specs.split(","):
        spec, k = item.rsplit("@", 1)
        graphs[item] = (load_graph(spec), int(k))
    rows = {}
    for rep in range(-1, args.repeats):           # rep -1: warm-up (compiles)
        for item, (g, k) in graphs.items():
            for count in counts:
                for name, minimum in variants.items():
                    parallel_fm.PARALLEL_FM_MIN_VERTICES = minimum
                    in_fm[0] = 0.0
                    t = time.perf_counter()
                    r = matchpart.partition(g, k, threads=count, seed=max(rep, 0), device="cpu")
                    total = time.perf_counter() - t
                    if rep >= 0:
                        rows.setdefault((item, count, name), []).append(
                            (total, r.timings["refinement"], in_fm[0], r.cut))
    parallel_fm.PARALLEL_FM_MIN_VERTICES = threshold
    print(f"{'instance':22s} thr variant  total s  refine s  fm s     cut")
    for (item, count, name), got in rows.items():
        med = [statistics.median(x[i] for x in got) for i in range(3)]
        print(f"{item:22s} {count:3d} {name:7s} {med[0]:8.3f} {med[1]:8.3f} {med[2]:7.3f} "
              f"{statistics.mean(x[3] for x in got):10.1f}")


if __name__ == "__main__":
    main()
