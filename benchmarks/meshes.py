"""part_mesh against mpmetis (METIS 5, Debian's ``metis`` package) on triangle meshes, in one run.

    python3 benchmarks/meshes.py [--runs 3] [--sizes 14,16,18] [--k 8,32] [--presets default,strong]
                                 [--write benchmarks/RESULTS.md]

Meshes: the Delaunay triangulation of 2^s random points in the unit square (SciPy), written
as METIS mesh files (triangle lists). Each instance runs mpmetis -gtype=dual -ncommon=2 and
``matchpart.part_mesh(..., gtype="dual", ncommon=2, preset=P)`` for each preset P (eps = 0.03,
METIS's ufactor 30), interleaved, --runs times. Cut: the dual graph's edge cut, recomputed for both
from the element partitions (mpmetis's "Edgecut" is the same number). Time: median wall
seconds of ours in-process (dual graph + partition, threads: all cores) against mpmetis's
own "Partitioning" time (its dual graph + partition, no file I/O).
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
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from matchpart import metrics  # noqa: E402
from matchpart.io.metis_mesh import write_mesh  # noqa: E402
from matchpart.mesh import dual_graph, part_mesh  # noqa: E402
from peers import commit, load, write_section  # noqa: E402


def triangles(s, seed=0):
    from scipy.spatial import Delaunay
    return Delaunay(np.random.default_rng(seed).random((2 ** s, 2))).simplices.astype(np.int64)


def run_mpmetis(path, k, ne):
    out = subprocess.run(["mpmetis", "-gtype=dual", "-ncommon=2", str(path), str(k)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stdout + out.stderr)
    seconds = float(re.search(r"Partitioning:\s+([0-9.]+) sec", out.stdout).group(1))
    parts = np.loadtxt(f"{path}.epart.{k}", dtype=np.int64)
    assert parts.shape == (ne,)
    return seconds, parts


def run_ours(tri, k, preset):
    t0 = time.perf_counter()
    r = part_mesh(tri, k, gtype="dual", ncommon=2, preset=preset)
    return time.perf_counter() - t0, r.element_parts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="14,16,18")
    ap.add_argument("--k", default="8,32")
    ap.add_argument("--presets", default="default", help="comma-separated presets of ours (default: default)")
    ap.add_argument("--write", metavar="FILE")
    args = ap.parse_args(argv)
    if shutil.which("mpmetis") is None:
        sys.exit("mpmetis not found: apt-get install metis")
    start_load = load()
    rows = []
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in map(int, args.sizes.split(",")):
            tri = triangles(s)
            path = Path(tmp) / f"delaunay{s}.mesh"
            write_mesh(path, np.arange(tri.shape[0] + 1) * 3, tri.reshape(-1))
            g = dual_graph(tri, 2)
            presets = args.presets.split(",")
            for preset in presets:
                run_ours(tri, 8, preset)   # warm: compiled kernels loaded
            for k in map(int, args.k.split(",")):
                ours_t, metis_t, parts_of = {p: [] for p in presets}, [], {}
                for _ in range(args.runs):
                    t, metis_parts = run_mpmetis(path, k, tri.shape[0])
                    metis_t.append(t)
                    for preset in presets:
                        # seeded: the same partition in every run; the last one's is kept
                        t, parts_of[preset] = run_ours(tri, k, preset)
                        ours_t[preset].append(t)
                cut_m = metrics.edge_cut(g, metis_parts)
                for preset in presets:
                    cut_o = metrics.edge_cut(g, parts_of[preset])
                    bal = metrics.is_balanced(g, parts_of[preset], k, 0.03)
                    row = (f"delaunay 2^{s} ({tri.shape[0]} triangles)", k, preset, cut_o, cut_m,
                           statistics.median(ours_t[preset]), statistics.median(metis_t), bal)
                    rows.append(row)
                    print(row, flush=True)
    lines.append("| mesh | k | preset | cut ours | cut mpmetis | cut ratio | s ours | s mpmetis | time ratio | balanced |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for name, k, preset, co, cm, to, tm, bal in rows:
        lines.append(f"| {name} | {k} | {preset} | {co} | {cm} | {co / cm:.3f} | {to:.3f} | {tm:.3f} | {to / tm:.2f} | "
                     f"{'yes' if bal else 'no'} |")
    lines.append("")
    for preset in args.presets.split(","):
        sel = [r for r in rows if r[2] == preset]
        gc = np.exp(np.mean([np.log(r[3] / r[4]) for r in sel]))
        gt = np.exp(np.mean([np.log(r[5] / r[6]) for r in sel]))
        lines.append(f"Geometric means, {preset}: cut {gc:.3f} x mpmetis's, time {gt:.2f} x (target: cut <= 0.95 x).")
    print("\n".join(lines))
    if args.write:
        body = [f"{datetime.date.today()}, commit {commit()}, {os.cpu_count()}-core {platform.machine()}, no GPU; "
                f"load {start_load} at the start, {load()} at the end; medians of {args.runs}; "
                f"`python3 benchmarks/meshes.py --runs {args.runs} --sizes {args.sizes} --k {args.k} --presets {args.presets}`.", ""]
        write_section(args.write, "## meshes (benchmarks/meshes.py): part_mesh against mpmetis", body + lines)


if __name__ == "__main__":
    main()
