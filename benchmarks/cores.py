"""matchpart and KaMinPar at 1 to N threads on one machine, in one run: how each uses many cores.

    python3 benchmarks/cores.py [--threads 1,4,8,16] [--presets default,fast] [--runs 3]
                                [--instances delaunay:1048576@32,rgg:1048576@32,rmat:20@32]
                                [--out FILE] [--write benchmarks/RESULTS.md]

The peers benchmark (benchmarks/peers.py) measures 1 and 2 threads on the 2-core development
machine; this one is for a machine with more cores (the lent GPU machines have 16). Instances
are generator specs (matchpart.io.load_graph) with k after '@'. Per instance each preset of
ours runs once untimed (kernels compiled), then every tool (each preset and KaMinPar, at every
thread count) runs --runs times, interleaved; times are medians, cuts from the first timed
run. Prints per instance: the time at each thread count, the speedup of the most threads over
one, our time and cut against KaMinPar's at the same thread count, and whether our partition
is the same for every thread count (it must be). --out rewrites FILE with the tables so far
after every instance (a run cut short keeps what it measured); --write replaces this
benchmark's section of a Markdown file ("## cores (benchmarks/cores.py)").
"""
from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import (EPS, commit, fmt, judge, kaminpar_call, load, machine, note, ours_call, ratio,  # noqa: E402
                   report, write_section)

from matchpart.io import load_graph, save_graph  # noqa: E402

SECTION = "## cores (benchmarks/cores.py)"
INSTANCES = "delaunay:1048576@32,rgg:1048576@32,rmat:20@32"


def parse_instances(text):
    out = []
    for item in text.split(","):
        spec, _, k = item.partition("@")
        out.append((spec, int(k or 32)))
    return out


def run_instance(g, path, k, presets, threads, runs):
    """{(tool, threads): (cut, feasible, median s)}, {(preset, threads): parts of the first run}."""
    calls = {}
    for t in threads:
        for p in presets:
            calls[(p, t)] = ours_call(g, k, p, t)
        calls[("KaMinPar", t)] = kaminpar_call(path, k, t)
    for p in presets:                       # untimed: compiles what this graph needs (once per preset)
        calls[(p, threads[-1])]()
    times, first = {key: [] for key in calls}, {}
    for _ in range(runs):
        for key, call in calls.items():
            t0 = time.perf_counter()
            parts = call()
            times[key].append(time.perf_counter() - t0)
            first.setdefault(key, parts)
    res = {key: judge(g, first[key], k) + (statistics.median(times[key]),) for key in calls}
    return res, first


def tables(spec, g, k, res, first, presets, threads, say):
    tools = list(presets) + ["KaMinPar"]
    lo, hi = threads[0], threads[-1]
    say(f"### {spec}, k = {k} (n = {g.n}, m = {g.m})")
    say()
    say("| tool | " + " | ".join(f"{t} t s" for t in threads) + f" | {lo} t / {hi} t | cut ({lo} t) |")
    say("|---|" + "---|" * (len(threads) + 2))
    for tool in tools:
        ts = [res[(tool, t)][2] for t in threads]
        cut, ok = res[(tool, lo)][:2]
        say(f"| {tool} | " + " | ".join(f"{x:.3f}" for x in ts) + f" | {ts[0] / ts[-1]:.2f} | "
            f"{cut}{'' if ok else ' (over)'} |")
    say()
    say("| ours / KaMinPar at the same thread count | " + " | ".join(f"{t} t" for t in threads) + " |")
    say("|---|" + "---|" * len(threads))
    for p in presets:
        say(f"| {p} time | " + " | ".join(fmt(ratio(res[(p, t)][2], res[('KaMinPar', t)][2]), ".2f")
                                      for t in threads) + " |")
        say(f"| {p} cut | " + " | ".join(fmt(ratio(res[(p, t)][0], res[('KaMinPar', t)][0]), ".3f")
                                     for t in threads) + " |")
    say()
    for p in presets:
        differ = [t for t in threads if not np.array_equal(first[(p, t)], first[(p, lo)])]
        say(f"- {p}: partition " + ("the same for every thread count" if not differ else
                                    f"DIFFERS from {lo} thread at {differ}"))
    say()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,4,8,16", help="comma list of thread counts, ascending")
    ap.add_argument("--presets", default="default,fast")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--instances", default=INSTANCES, help="comma list of SPEC@K (generator specs)")
    ap.add_argument("--out", default="", help="rewrite this file with the tables after every instance")
    ap.add_argument("--write", default="", help="replace this benchmark's section of this Markdown file")
    args = ap.parse_args(argv)
    threads = sorted(int(t) for t in args.threads.split(","))
    presets = args.presets.split(",")
    if threads[-1] > (os.cpu_count() or 1):
        note(f"warning: {threads[-1]} threads on {os.cpu_count()} cores")
    started, load_start, t_start = datetime.datetime.now(), load(), time.perf_counter()
    head = [f"Measured {started:%Y-%m-%d} at commit {commit()} on {machine()}; load average at the "
            f"start {load_start}. Medians of {args.runs} interleaved runs; "
            f"eps = {EPS}; command: `python3 benchmarks/cores.py --threads {args.threads} --presets "
            f"{args.presets} --runs {args.runs} --instances {args.instances}`.", ""]
    say, flush, lines = report(args.out, head)

    with tempfile.TemporaryDirectory() as tmp:
        for i, (spec, k) in enumerate(parse_instances(args.instances), 1):
            note(f"[{i}] building {spec} ({time.perf_counter() - t_start:.0f} s so far)")
            g = load_graph(spec)
            path = Path(tmp) / f"g{i}.graph"
            save_graph(g, path)
            note(f"[{i}] {spec} k={k}: n={g.n} m={g.m} ({time.perf_counter() - t_start:.0f} s so far)")
            res, first = run_instance(g, path, k, presets, threads, args.runs)
            tables(spec, g, k, res, first, presets, threads, say)
            flush()
    say(f"Run took {time.perf_counter() - t_start:.0f} s; load average at the end {load()}.")
    flush()
    if args.write:
        write_section(args.write, SECTION, head + lines)


if __name__ == "__main__":
    main()
