"""matchpart at 1 and 2 threads against METIS (pymetis) and KaMinPar (1 and 2 threads), in one run.

    python3 benchmarks/peers.py [--presets default,fast,strong] [--runs 3] [--large] [--quick]
                                [--only rmat,4elt] [--k 8,32] [--write benchmarks/RESULTS.md]

Instances: the shared graphs (../shared/graphs) at k = 2, 8, 32; generated families at 2^16
vertices (R-MAT, Barabasi-Albert, a stochastic block model, Watts-Strogatz, rgg, delaunay,
a 3-D grid with random integer edge weights) at k = 8 and 32; with --large also delaunay and
rgg 2^20 at k = 32 and delaunay 2^20 at k = 1024 and 8192. --quick: a smoke test (k = 8, the
shared graphs and delaunay 2^16; with --large delaunay 2^20 at k = 32 only).

Tools, interleaved per instance, --runs times each: METIS, KaMinPar with 1 and 2 threads, and
every preset of ours with threads=1 and threads=2. Times are medians; cuts come from the first
run (every tool is deterministic here). A tool that fails shows "n/a" and is left out of the
means. Prints the per-instance table, then:
- per tool, against METIS: geometric mean of time ratios over instances where METIS needs
  >= 10 ms (below that the ratio measures Python call overhead; there the largest time is
  shown instead), the largest time ratio, geometric mean cut ratio (every instance), and
  infeasible results;
- the second core: time at 1 thread / time at 2 threads, geometric mean over the 2^20
  instances, the 2^16 families and the shared graphs separately (KaMinPar's too);
- each preset against KaMinPar at the same thread count, over the shared graphs and the 2^16
  families at k = 8 and 32 (time: where METIS needs >= 10 ms; cut: all of them);
- each 2^20 instance: time and cut of our presets at 2 threads against KaMinPar at 2 threads;
- whether threads=1 and threads=2 gave the same partition (parts arrays compared): the count
  of instances where they differ must be 0.
--write FILE replaces this benchmark's section of FILE (one per preset list, headed
"## peers (benchmarks/peers.py): <presets>") with the tables, the date, commit, machine, the
load average at the start and end of the run and the command; other sections stay as they are.
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import matchpart  # noqa: E402
from matchpart import metrics  # noqa: E402
from matchpart.graph import Graph  # noqa: E402
from matchpart.io import load_graph, save_graph  # noqa: E402

GRAPHS = ROOT.parent / "shared" / "graphs"
EPS = 0.03
FAMILY_N = 2 ** 16
LARGE_N = 2 ** 20
SMALL_METIS_S = 0.010      # below this METIS time a ratio measures call overhead, not algorithms
THREADS = (1, 2)
SECTION = "## peers (benchmarks/peers.py)"


def _networkx_graph(nxg):
    import scipy.sparse as sp
    import networkx as nx
    a = nx.to_scipy_sparse_array(nxg, format="csr", dtype=np.int64)
    a.setdiag(0)
    a.eliminate_zeros()
    return Graph.from_scipy(sp.csr_matrix(a))


def family(name, seed=1):
    """A generated instance of about FAMILY_N vertices."""
    import networkx as nx
    n = FAMILY_N
    if name == "rmat":
        return load_graph("rmat:16")
    if name == "ba":
        return load_graph(f"ba:{n}:4")
    if name == "rgg":
        return load_graph(f"rgg:{n}")
    if name == "delaunay":
        return load_graph(f"delaunay:{n}")
    if name == "sbm":                       # 64 communities of 1024, ~12 inner + 2 outer edges per vertex
        blocks = 64
        size = n // blocks
        p = np.full((blocks, blocks), 2.0 / n)
        np.fill_diagonal(p, 12.0 / size)
        return _networkx_graph(nx.stochastic_block_model([size] * blocks, p.tolist(), seed=seed, sparse=True))
    if name == "ws":
        return _networkx_graph(nx.watts_strogatz_graph(n, 10, 0.1, seed=seed))
    if name == "grid3d_w":                  # 40 x 40 x 41 grid, edge weights 1..10
        g = load_graph("grid:40x40x41")
        h = g.backend.to_host
        indptr, indices = h(g.indptr), h(g.indices)
        rows = np.repeat(np.arange(g.n), np.diff(indptr))
        lo, hi = np.minimum(rows, indices), np.maximum(rows, indices)
        w = 1 + (lo * 2654435761 + hi * 40503) % 10     # symmetric: a function of the pair
        return Graph(indptr, indices, ewgt=w.astype(np.int64))
    raise ValueError(name)


FAMILIES = ("rmat", "ba", "sbm", "ws", "rgg", "delaunay", "grid3d_w")


def plan(args):
    """[(name, group, k, make)] in benchmark order, filtered by --quick, --only and --k before
    any graph is built (the 2^20 graphs take seconds each). group: shared, 2^16 or 2^20."""
    out = []
    for path in sorted(GRAPHS.glob("*.graph")):
        out += [(path.stem, "shared", k, lambda p=path: load_graph(p)) for k in (2, 8, 32)]
    for name in FAMILIES:
        out += [(f"{name}:2^16", "2^16", k, lambda f=name: family(f)) for k in (8, 32)]
    if args.large:
        out += [("delaunay:2^20", "2^20", k, lambda: load_graph(f"delaunay:{LARGE_N}")) for k in (32, 1024, 8192)]
        out.append(("rgg:2^20", "2^20", 32, lambda: load_graph(f"rgg:{LARGE_N}")))
    if args.quick:
        out = [i for i in out if (i[1] == "shared" and i[2] == 8) or (i[0] == "delaunay:2^16" and i[2] == 8)
               or (i[0] == "delaunay:2^20" and i[2] == 32)]
    if args.only:
        keep = args.only.split(",")
        out = [i for i in out if any(s in i[0] for s in keep)]
    if args.k:
        ks = {int(k) for k in args.k.split(",")}
        out = [i for i in out if i[2] in ks]
    return out


def metis_call(g, k):
    import pymetis
    h = g.backend.to_host
    xadj, adjncy = h(g.indptr).astype(np.int64), h(g.indices).astype(np.int64)
    ew, vw = h(g.ewgt).astype(np.int64), h(g.vwgt).astype(np.int64)
    adj = pymetis.CSRAdjacency(xadj, adjncy)
    return lambda: np.asarray(pymetis.part_graph(k, adj, eweights=ew, vweights=vw)[1], dtype=np.int64)


def kaminpar_call(path, k, threads):
    import kaminpar
    kg = kaminpar.load_graph(str(path), kaminpar.GraphFileFormat.METIS)

    def go():
        # a solver lives only for its call: each holds a TBB limit on the process's threads
        # while it exists, and TBB applies the smallest one alive, to every TBB user in the
        # process (numba's TBB layer too): a 1-thread solver kept alive made every other
        # tool run on one thread (KaMinPar 2t 1.01 x its 1t time in such a run)
        solver = kaminpar.KaMinPar(threads, kaminpar.default_context())
        kaminpar.reseed(0)
        parts = np.asarray(solver.compute_partition(kg, k, EPS), dtype=np.int64)
        del solver
        return parts
    return go


def ours_call(g, k, preset, threads):
    # device="cpu": "auto" picks the GPU where one is usable, and on a lent H200 machine a run
    # without it timed the GPU pipeline at every thread count (1.2-1.8 s flat, 1 to 16 threads)
    def go():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return matchpart.partition(g, k, eps=EPS, preset=preset, threads=threads,
                                       device="cpu").parts
    return go


def judge(g, parts, k):
    """(cut, feasible) under our balance bound Lmax = (1 + eps) ceil(W / k)."""
    lmax = metrics.max_block_weight(g.total_vwgt, k, EPS)
    return metrics.edge_cut(g, parts), bool((metrics.block_weights(g, parts, k) <= lmax).all())


def gmean(xs):
    xs = [x for x in xs if x is not None and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def note(msg):
    """Progress and failures go to stderr, so stdout holds only the tables."""
    print(msg, file=sys.stderr, flush=True)


def tool_name(preset, threads):
    return f"{preset}-{threads}t"


def run_instance(g, path, k, presets, runs):
    """{tool: (cut, feasible, median seconds) or None}, {tool: first parts} for one instance."""
    makers = {"metis": lambda: metis_call(g, k),
              "kmp1": lambda: kaminpar_call(path, k, 1), "kmp2": lambda: kaminpar_call(path, k, 2)}
    for p in presets:
        for t in THREADS:
            makers[tool_name(p, t)] = lambda p=p, t=t: ours_call(g, k, p, t)
    calls, times, first = {}, {}, {}
    for tool, make in makers.items():
        try:
            calls[tool] = make()
        except Exception as e:              # a peer that is not installed or cannot read the graph
            note(f"    {tool}: n/a ({type(e).__name__}: {e})")
    for tool in calls:
        times[tool] = []
    for _ in range(runs):                   # interleaved: each run of each tool in turn
        for tool in list(calls):
            t0 = time.perf_counter()
            try:
                parts = calls[tool]()
            except Exception as e:
                note(f"    {tool}: n/a ({type(e).__name__}: {e})")
                del calls[tool]
                times.pop(tool)
                first.pop(tool, None)
                continue
            times[tool].append(time.perf_counter() - t0)
            first.setdefault(tool, parts)
    res = {}
    for tool in makers:
        if tool in first:
            res[tool] = judge(g, first[tool], k) + (statistics.median(times[tool]),)
        else:
            res[tool] = None
    return res, first


def fmt(x, spec):
    return "n/a" if x is None or not math.isfinite(x) else format(x, spec)


def val(res, tool, i):
    """Field i (0 cut, 1 feasible, 2 seconds) of a tool's result, None where it failed."""
    return None if res.get(tool) is None else res[tool][i]


def ratio(a, b):
    """a / b, None where either is missing; a zero cut below counts as 1 (cuts can be 0)."""
    if a is None or b is None:
        return None
    return a / b if b > 0 else a / 1


def machine():
    """One line: CPU, cores, Python, numba and its threading layer, KaMinPar's version."""
    cpu = platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import numba
    try:
        from importlib.metadata import version
        kmp = version("kaminpar")
    except Exception:
        kmp = "n/a"
    # numba names its threading layer only once its thread pool runs, which the first parallel
    # kernel starts: called before one had run, this line said "no threading layer"
    with matchpart.threads.limit():    # starts the pool with the layer matchpart chose
        layer = matchpart.threads.layer()
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numba {numba.__version__} "
            f"({layer or 'no'} threading layer), kaminpar {kmp}")


def commit():
    """Short commit id, marked when the working tree differs from it."""
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["diff", "--quiet", "HEAD", "--", "matchpart", "benchmarks/peers.py"]).returncode
    return (head or "unknown") + (" + local changes" if dirty else "")


def load():
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def report(out, head):
    """(say, flush, lines): say(line) prints a line and keeps it in lines; flush() rewrites the
    file ``out`` (if given) with ``head`` and the lines so far, so that a run cut short keeps
    what it measured."""
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    def flush():
        if out:
            Path(out).write_text("\n".join(head + lines) + "\n")
    return say, flush, lines


def write_section(path, title, body):
    """Replace the section headed `title` (up to the next '## ' heading) in the Markdown file
    `path`, or append it when there is none: the file keeps one section per benchmark."""
    p = Path(path)
    lines = p.read_text().splitlines() if p.exists() else []
    new = [title, ""] + body + [""]
    try:
        start = lines.index(title)
    except ValueError:
        if lines and lines[-1].strip():
            lines.append("")
        p.write_text("\n".join(lines + new) + "\n")
        return
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    p.write_text("\n".join(lines[:start] + new + lines[end:]).rstrip("\n") + "\n")


def summaries(rows, presets, say):
    """The summary tables under the per-instance table (see the module's text)."""
    ours = [tool_name(p, t) for p in presets for t in THREADS]
    say()
    say("### Against METIS")
    say()
    say("| tool | instances | gmean cut/METIS | gmean t/METIS (METIS >= 10 ms) | max t/METIS (same) "
        "| worst instance | max s where METIS < 10 ms | infeasible |")
    say("|---|---|---|---|---|---|---|---|")
    for tool in ["kmp1", "kmp2"] + ours:
        have = [(n, k, r) for n, _, k, r in rows if r[tool] is not None and r["metis"] is not None]
        cut_r = [ratio(r[tool][0], r["metis"][0]) for _, _, r in have]
        big = [(r[tool][2] / r["metis"][2], f"{n} k={k}") for n, k, r in have if r["metis"][2] >= SMALL_METIS_S]
        small = [r[tool][2] for _, _, r in have if r["metis"][2] < SMALL_METIS_S]
        worst = max(big) if big else (float("nan"), "-")
        infeasible = sum(not r[tool][1] for _, _, r in have)
        say(f"| {tool} | {len(have)} | {fmt(gmean(cut_r), '.3f')} | {fmt(gmean([b[0] for b in big]), '.2f')} "
            f"| {fmt(worst[0], '.2f')} | {worst[1]} | {fmt(max(small) if small else None, '.3f')} | {infeasible} |")

    say()
    say("### The second core: time at 1 thread / time at 2 threads, geometric mean")
    say()
    groups = [("2^20", "2^20 instances"), ("2^16", "2^16 families"), ("shared", "shared graphs")]
    say("| tool | " + " | ".join(label for _, label in groups) + " |")
    say("|---|" + "---|" * len(groups))
    pairs = [(p, tool_name(p, 1), tool_name(p, 2)) for p in presets] + [("KaMinPar", "kmp1", "kmp2")]
    for label, one, two in pairs:
        cells = []
        for group, _ in groups:
            sp = [ratio(val(r, one, 2), val(r, two, 2)) for _, grp, _, r in rows if grp == group]
            sp = [x for x in sp if x is not None]
            cells.append(f"{fmt(gmean(sp), '.2f')} ({len(sp)})" if sp else "-")
        say(f"| {label} | " + " | ".join(cells) + " |")

    say()
    say("### Against KaMinPar at the same thread count: shared graphs and 2^16 families, k = 8, 32")
    say()
    say("| tool | gmean t/KaMinPar (METIS >= 10 ms) | instances | gmean cut/KaMinPar | instances |")
    say("|---|---|---|---|---|")
    mid = [r for _, grp, k, r in rows if grp != "2^20" and k in (8, 32)]
    for p in presets:
        for t in THREADS:
            tool, peer = tool_name(p, t), f"kmp{t}"
            tr = [ratio(val(r, tool, 2), val(r, peer, 2)) for r in mid
                  if r["metis"] is not None and r["metis"][2] >= SMALL_METIS_S]
            cr = [ratio(val(r, tool, 0), val(r, peer, 0)) for r in mid]
            tr, cr = [x for x in tr if x is not None], [x for x in cr if x is not None]
            say(f"| {tool} / kmp{t} | {fmt(gmean(tr), '.2f')} | {len(tr)} | {fmt(gmean(cr), '.3f')} | {len(cr)} |")

    large = [(n, k, r) for n, grp, k, r in rows if grp == "2^20"]
    if large:
        say()
        say("### 2^20 instances at 2 threads: against KaMinPar at 2 threads")
        say()
        say("| instance | k | METIS s | kmp2 cut | kmp2 s | "
            + " | ".join(f"{p}-2t s | {p}-2t t/kmp2 | {p}-2t cut/kmp2 | {p} 1t/2t" for p in presets) + " |")
        say("|---|---|---|---|---|" + "---|---|---|---|" * len(presets))
        for n, k, r in large:
            cells = [fmt(val(r, "metis", 2), ".3f"), fmt(val(r, "kmp2", 0), "d"), fmt(val(r, "kmp2", 2), ".3f")]
            for p in presets:
                one, two = tool_name(p, 1), tool_name(p, 2)
                cells += [fmt(val(r, two, 2), ".3f"), fmt(ratio(val(r, two, 2), val(r, "kmp2", 2)), ".2f"),
                          fmt(ratio(val(r, two, 0), val(r, "kmp2", 0)), ".3f"),
                          fmt(ratio(val(r, one, 2), val(r, two, 2)), ".2f")]
            say(f"| {n} | {k} | " + " | ".join(cells) + " |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", default="default,fast")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--large", action="store_true", help="add delaunay and rgg 2^20 (k = 32; delaunay also 1024, 8192)")
    ap.add_argument("--quick", action="store_true", help="smoke test: a few small instances at k = 8")
    ap.add_argument("--only", default="", help="comma list of substrings of instance names")
    ap.add_argument("--k", default="", help="comma list of k values to keep")
    ap.add_argument("--write", default="", help="replace this benchmark's section of this Markdown file")
    args = ap.parse_args(argv)
    presets = args.presets.split(",")
    ours = [tool_name(p, t) for p in presets for t in THREADS]
    tools = ["metis", "kmp1", "kmp2"] + ours
    started, load_start, t_start = datetime.datetime.now(), load(), time.perf_counter()
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    note("compiling / loading the kernels ...")
    for t in THREADS:                       # compile / load the kernels before timing
        used = matchpart.partition("grid:30x30", 4, threads=t, device="cpu").threads
        if used != t:
            note(f"warning: threads={t} ran with {used} threads (NUMBA_NUM_THREADS too low?)")
    if args.large:                          # kernels only large graphs run (localized FM rounds)
        warm = load_graph("delaunay:262144")
        for p in presets:
            ours_call(warm, 32, p, 1)()
    todo = plan(args)
    rows, same, differ, missing = [], {p: 0 for p in presets}, [], 0
    with tempfile.TemporaryDirectory() as tmp:
        say("| instance | n | m | k | " + " | ".join(f"{t} cut | {t} s" for t in tools) + " | "
            + " | ".join(f"{p} cut/METIS | {p}-2t t/METIS | {p} 1t/2t" for p in presets) + " |")
        say("|" + "---|" * (4 + 2 * len(tools) + 3 * len(presets)))
        graph_key, g, path = None, None, None
        for i, (name, group, k, make) in enumerate(todo, 1):
            if graph_key != name:            # instances of one graph are adjacent: build it once
                note(f"[{i}/{len(todo)}] building {name} ...")
                g = make()
                path = Path(tmp) / f"{name.replace(':', '_').replace('^', '')}.graph"
                save_graph(g, path)       # KaMinPar reads the METIS file
                graph_key = name
            note(f"[{i}/{len(todo)}] {name} k={k} ({time.perf_counter() - t_start:.0f} s so far)")
            res, first = run_instance(g, path, k, presets, args.runs)
            rows.append((name, group, k, res))
            for p in presets:
                one, two = first.get(tool_name(p, 1)), first.get(tool_name(p, 2))
                if one is not None and two is not None:
                    if np.array_equal(one, two):
                        same[p] += 1
                    else:
                        differ.append(f"{p} {name} k={k}")
                else:
                    missing += 1
            cells = []
            for t in tools:
                cells.append("n/a | n/a" if res[t] is None else
                             f"{res[t][0]}{'' if res[t][1] else ' (over)'} | {res[t][2]:.3f}")
            ratios = []
            for p in presets:
                one, two = tool_name(p, 1), tool_name(p, 2)
                ratios.append(f"{fmt(ratio(val(res, two, 0), val(res, 'metis', 0)), '.3f')} "
                              f"| {fmt(ratio(val(res, two, 2), val(res, 'metis', 2)), '.2f')} "
                              f"| {fmt(ratio(val(res, one, 2), val(res, two, 2)), '.2f')}")
            say(f"| {name} | {g.n} | {g.indices.shape[0] // 2} | {k} | " + " | ".join(cells) + " | "
                + " | ".join(ratios) + " |")
    summaries(rows, presets, say)
    say()
    compared = sum(same.values()) + len(differ)
    say(f"Same partition at 1 and 2 threads (parts arrays compared): {sum(same.values())} of {compared} "
        f"instance/preset pairs; differ: {len(differ)}" + (" (" + "; ".join(differ) + ")" if differ else "")
        + (f"; not compared (a run failed): {missing}" if missing else ""))
    load_end = load()
    note(f"done in {time.perf_counter() - t_start:.0f} s; load average {load_start} at the start, {load_end} at the end")
    if args.write:
        command = "python3 benchmarks/peers.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
        head = [f"{started:%Y-%m-%d %H:%M} · commit {commit()} · {machine()}",
                "",
                f"Load average (1 / 5 / 15 min): {load_start} at the start, {load_end} at the end; "
                f"{time.perf_counter() - t_start:.0f} s. Command: `{command}`",
                ""]
        write_section(args.write, f"{SECTION}: {', '.join(presets)}", head + ["### Per instance", ""] + lines)
        note(f"wrote the section '{SECTION}: {', '.join(presets)}' of {args.write}")


if __name__ == "__main__":
    main()
