"""Power-law graphs at scale: matchpart against KaMinPar and METIS, in one run (issue 22's targets).

    python3 benchmarks/powerlaw.py [--specs rmat:20:8,ba:1048576:8] [--k 8,32] [--runs 3]
                                   [--tools default-2,fast-2,kmp2,metis] [--write benchmarks/RESULTS.md]

Instances: R-MAT 2^20 with 8M edges (a = 0.57, b = c = 0.19) and Barabasi-Albert 2^20 with 8
edges per new vertex (8.4M edges), k = 8 and 32, eps = 0.03. Tools (interleaved per
instance, --runs times each; medians): our presets at a thread count ("default-2" = default
preset, 2 threads), KaMinPar at 1 or 2 threads ("kmp2"), METIS (pymetis; timed once by
default, --once). Cuts from the first run (every tool is deterministic here). Prints one row per instance and tool with time, cut,
balance and the ratios to KaMinPar-2t; --write replaces this benchmark's section of FILE.
The 2^16 power-law families (rmat, ba, sbm) are in benchmarks/peers.py.
"""
from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import matchpart  # noqa: E402
from matchpart.io import save_graph  # noqa: E402
from peers import commit, judge, kaminpar_call, load, machine, metis_call, note, ours_call, write_section  # noqa: E402


def maker(tool, g, path, k):
    if tool == "metis":
        return metis_call(g, k)
    if tool.startswith("kmp"):
        return kaminpar_call(path, k, int(tool[3:]))
    preset, threads = tool.rsplit("-", 1)
    return ours_call(g, k, preset, int(threads))


def run(spec, k, tools, runs, tmp, once=(), make=maker):
    """(graph, {tool: (cut, balanced, median s, [s per run])}): the tools interleaved, ``runs``
    times each (once for those in ``once``); ``make(tool, graph, path, k)`` gives each call."""
    g = matchpart.generate(spec)
    path = Path(tmp) / "graph.metis"
    save_graph(g, path)
    calls = {tool: make(tool, g, path, k) for tool in tools}
    times = {tool: [] for tool in tools}
    first = {}
    for r in range(runs):
        for tool in tools:
            if r and tool in once:
                continue
            t0 = time.perf_counter()
            parts = calls[tool]()
            times[tool].append(time.perf_counter() - t0)
            first.setdefault(tool, parts)
            note(f"  {spec} k={k} {tool}: {times[tool][-1]:.2f} s")
    return g, {tool: judge(g, first[tool], k) + (statistics.median(times[tool]), times[tool]) for tool in tools}


HEADER = ("| graph | k | tool | time s (runs) | cut | balanced | time / KaMinPar-2t | cut / KaMinPar-2t |",
          "|---|---|---|---|---|---|---|---|")


def table_rows(spec, k, g, res, tools):
    """One printed table row per tool of ``run``'s result, with the ratios to kmp2 when it ran."""
    ref = "kmp2" if "kmp2" in res else None
    rows = []
    for tool in tools:
        cut, ok, t, ts = res[tool]
        rt = f"{t / res[ref][2]:.2f}" if ref else "-"
        rc = f"{cut / res[ref][0]:.3f}" if ref else "-"
        rows.append(f"| {spec} ({g.m / 1e6:.1f}M edges) | {k} | {tool} | {t:.2f} "
                    f"({', '.join(f'{x:.1f}' for x in ts)}) | {cut} | {'yes' if ok else 'NO'} | {rt} | {rc} |")
        print(rows[-1], flush=True)
    return rows


def run_cases(cases, args, argv, script, warm, make=maker):
    """The section's body for [(spec, k)], each timed by ``run`` with the arguments' tools,
    runs and once-only tools, after one partition of ``warm`` = (generator spec, k) has loaded
    the compiled kernels; printed as it goes. ``script``, ``argv``: the command it names."""
    tools = args.tools.split(",")
    start = load()
    matchpart.partition(warm[0], warm[1], device="cpu")     # compiled kernels loaded before the first timing
    lines = list(HEADER)
    with tempfile.TemporaryDirectory() as tmp:
        for spec, k in cases:
            g, res = run(spec, k, tools, args.runs, tmp, args.once.split(","), make=make)
            lines += table_rows(spec, k, g, res, tools)
    end = load()
    body = [f"{datetime.date.today()} · commit {commit()} · {machine()} · load average {start} at the "
            f"start, {end} at the end · `python3 benchmarks/{script} {' '.join(argv or sys.argv[1:])}` "
            f"(eps = 0.03, medians of {args.runs}, interleaved; {args.once or 'no tool'} once)", ""] + lines
    print("\n".join(body))
    return body


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", default="rmat:20:8,ba:1048576:8")
    ap.add_argument("--k", default="8,32")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tools", default="default-2,fast-2,kmp2,metis")
    ap.add_argument("--once", default="metis", help="tools timed in the first run only (METIS takes 30-100 s "
                                                    "a call on these graphs)")
    ap.add_argument("--write", default="")
    args = ap.parse_args(argv)
    cases = [(spec, int(k)) for spec in args.specs.split(",") for k in args.k.split(",")]
    body = run_cases(cases, args, argv, "powerlaw.py", ("rmat:12:8", 8))
    if args.write:
        write_section(args.write, "## powerlaw (benchmarks/powerlaw.py): R-MAT and Barabasi-Albert 2^20", body)


if __name__ == "__main__":
    main()
