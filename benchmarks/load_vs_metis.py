"""Benchmark: loading a large METIS file with matchpart vs. partitioning it with METIS (pymetis).

Generates delaunay:N (default 2^20 vertices, about 3 million edges, seed 0), saves it as a
METIS file in a temporary folder, then times, in one run, ``matchpart.load_graph`` of
that file and ``pymetis.part_graph(K, xadj, adjncy)`` on the same graph (median of
--repeats). The goal is that reading the file costs at most half of what METIS takes to
partition it. Also timed, for information: the same file gzip-compressed (--gzip).

    python3 benchmarks/load_vs_metis.py [--n 1048576] [--k 32] [--repeats 3] [--graph FILE] [--gzip]

``--graph FILE`` times an existing METIS file instead of generating one.
"""
from __future__ import annotations

import argparse
import gzip
import os
import statistics
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from matchpart.generators import from_spec  # noqa: E402
from matchpart.io import load_graph, save_graph  # noqa: E402


def timed(fn, repeats):
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20, help="Delaunay points (default 2^20)")
    ap.add_argument("--k", type=int, default=32, help="blocks for METIS (default 32)")
    ap.add_argument("--repeats", type=int, default=3, help="timed repetitions, median reported (default 3)")
    ap.add_argument("--graph", help="an existing METIS file to load (instead of generating delaunay:N)")
    ap.add_argument("--gzip", action="store_true", help="also time loading the file gzip-compressed")
    args = ap.parse_args()
    try:
        import pymetis
    except ImportError:
        sys.exit("this benchmark needs pymetis (pip install pymetis)")

    with tempfile.TemporaryDirectory() as tmp:
        if args.graph:
            path = args.graph
            g = load_graph(path)
            print(f"{path} ({os.path.getsize(path) / 2**20:.1f} MiB): n={g.n}, m={g.m}")
        else:
            t0 = time.perf_counter()
            g = from_spec(f"delaunay:{args.n}", seed=0)
            print(f"generated delaunay:{args.n}: n={g.n}, m={g.m} in {time.perf_counter() - t0:.1f} s")
            path = os.path.join(tmp, "delaunay.graph")
            t0 = time.perf_counter()
            save_graph(g, path)
            size = os.path.getsize(path)
            print(f"saved {path} ({size / 2**20:.1f} MiB) in {time.perf_counter() - t0:.2f} s")
        load_graph(path)  # warm-up: numba kernels compiled/loaded from cache, file in page cache
        t_load, all_load, h = timed(lambda: load_graph(path), args.repeats)
        assert h.n == g.n and h.m == g.m
        if args.gzip:
            gz = os.path.join(tmp, "compressed.graph.gz")
            with open(path, "rb") as src, open(gz, "wb") as dst:
                dst.write(gzip.compress(src.read(), compresslevel=6))
            t_gz, all_gz, _ = timed(lambda: load_graph(gz), args.repeats)
    xadj, adjncy = g.indptr, g.indices
    # pymetis >= 2025 prefers a CSRAdjacency object; the xadj/adjncy keywords still work
    warnings.filterwarnings("ignore", message="Passing xadj/adjncy", category=DeprecationWarning)
    t_metis, all_metis, (cut, _) = timed(lambda: pymetis.part_graph(args.k, xadj=xadj, adjncy=adjncy),
                                         args.repeats)
    print(f"matchpart load_graph:        median {t_load:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in all_load)})")
    if args.gzip:
        print(f"  the same, gzip-compressed: median {t_gz:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in all_gz)})")
    print(f"pymetis part_graph(k={args.k}):  median {t_metis:.3f} s  (runs: "
          f"{', '.join(f'{t:.3f}' for t in all_metis)}; cut {cut})")
    print(f"ratio load / METIS partition: {t_load / t_metis:.2f}")


if __name__ == "__main__":
    main()
