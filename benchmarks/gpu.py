"""matchpart on the GPU against the CPU (every core), in one run: matchers alone and the whole pipeline.

    python3 benchmarks/gpu.py [--instances delaunay:1048576@32,rgg:1048576@32,rmat:20@32]
                              [--presets default,fast] [--matchers all] [--runs 3] [--out FILE]

Needs a usable CUDA device (CuPy). Per instance (generator specs, k after '@'): every matcher's
match() on the instance's graph, then partition() with each preset, on device="gpu" and
device="cpu" (all cores), interleaved, each after one untimed run (numba and CuPy compile
there), medians of --runs. The GPU times include moving the graph to the device and the parts
back (what a user calling from host arrays pays). Prints times, GPU / CPU ratios, the matched
edge weight and cut of each, and whether the GPU result met the balance bound. --out rewrites
FILE with the tables so far after every instance.
"""
from __future__ import annotations

import argparse
import datetime
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import EPS, commit, fmt, judge, machine, note, ratio, report  # noqa: E402
from cores import parse_instances  # noqa: E402
import quality  # noqa: E402

import matchpart  # noqa: E402
from matchpart.backend import gpu_available  # noqa: E402
from matchpart.io import load_graph  # noqa: E402
from matchpart.matchers import available  # noqa: E402


def timed(call, runs):
    """(median seconds, first result) after one untimed run (numba and CuPy compile there)."""
    call()
    out, seconds = quality.timed(call, runs)
    return seconds, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", default="delaunay:1048576@32,rgg:1048576@32,rmat:20@32")
    ap.add_argument("--presets", default="default,fast")
    ap.add_argument("--matchers", default="all", help="comma list, or all")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    if not gpu_available():
        sys.exit("no usable GPU (CuPy and a CUDA device): nothing to measure")
    import cupy
    try:
        dev = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception:                       # a CuPy without the runtime call (the tests' stand-in)
        dev = "unnamed device"
    matchers = available() if args.matchers == "all" else args.matchers.split(",")
    started, t_start = datetime.datetime.now(), time.perf_counter()
    head = [f"Measured {started:%Y-%m-%d} at commit {commit()}: GPU {dev}, CuPy {getattr(cupy, '__version__', 'n/a')}; "
            f"CPU {machine()}. Medians of {args.runs} after one untimed run; eps = {EPS}.", ""]
    say, flush, lines = report(args.out, head)

    for spec, k in parse_instances(args.instances):
        g = load_graph(spec)
        note(f"{spec}: n={g.n} m={g.m} ({time.perf_counter() - t_start:.0f} s so far)")
        say(f"### {spec} (n = {g.n}, m = {g.m}), k = {k}")
        say()
        say("| what | GPU s | CPU s | GPU / CPU time | GPU result | CPU result | GPU / CPU result |")
        say("|---|---|---|---|---|---|---|")
        for name in matchers:
            try:
                tg, mg = timed(lambda: matchpart.match(g, name, device="gpu"), args.runs)
                tc, mc = timed(lambda: matchpart.match(g, name, device="cpu"), args.runs)
            except Exception as e:
                say(f"| match {name} | n/a ({type(e).__name__}: {e}) | | | | | |")
                continue
            say(f"| match {name} | {tg:.3f} | {tc:.3f} | {tg / tc:.2f} | {mg.weight:.0f} | {mc.weight:.0f} | "
                f"{fmt(ratio(mg.weight, mc.weight), '.4f')} |")
            flush()
        for p in args.presets.split(","):
            def run(device, p=p):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return matchpart.partition(g, k, eps=EPS, preset=p, device=device).parts
            try:
                tg, pg = timed(lambda: run("gpu"), args.runs)
                tc, pc = timed(lambda: run("cpu"), args.runs)
            except Exception as e:
                say(f"| partition {p} | n/a ({type(e).__name__}: {e}) | | | | | |")
                continue
            g_host = g
            (cg, okg), (cc, okc) = judge(g_host, cupy.asnumpy(pg) if hasattr(pg, "get") else pg, k), judge(g_host, pc, k)
            say(f"| partition {p} | {tg:.3f} | {tc:.3f} | {tg / tc:.2f} | cut {cg}{'' if okg else ' (over)'} | "
                f"cut {cc}{'' if okc else ' (over)'} | {fmt(ratio(cg, cc), '.3f')} |")
            flush()
        say()
    say(f"Run took {time.perf_counter() - t_start:.0f} s.")
    flush()


if __name__ == "__main__":
    main()
