"""``matchpart partition GRAPH K``: its arguments, the run, the partition file and the report."""
from __future__ import annotations

import json
import os
import sys
import time

from .cli_common import (PARTITION_AUTO, PROG, _check_output, _check_partitionable, _eps, _fractions, _load,
                         _positive_int, _seed, cluster_fallback_arg, device_arg, graph_args, threads_arg)
from .errors import MatchpartError


def add_parser(add):
    """The partition subcommand, added with cli.build_parser's ``add(name, help, epilog)``."""
    s = add("partition", "partition a graph into K blocks",
            "examples:\n  matchpart partition 4elt.graph 8\n"
            "  matchpart partition delaunay:100000 32 -m suitor --preset strong -o d.part -v")
    graph_args(s)
    s.add_argument("k", metavar="K", type=_positive_int, help="number of blocks")
    s.add_argument("-m", "--matcher", default=None, help="matcher for coarsening (default: local_max; see 'matchpart matchers')")
    s.add_argument("--rating", default=None,
                   help="edge rating: weight, expansion_star, expansion_star2, inner_outer "
                        "(default: expansion_star2)")
    s.add_argument("--eps", type=_eps, default=0.03,
                   help="imbalance: blocks weigh at most (1+eps)*ceil(W/K) (default 0.03); for a graph with "
                        "several weights per vertex (METIS ncon) one value or a comma list, one per constraint")
    s.add_argument("--target-weights", type=_fractions, default=None, metavar="T0,T1,...",
                   help="fraction of the total weight for each block, summing to 1 (METIS's tpwgts): "
                        "block i weighs at most (1+eps)*ceil(Ti*W)")
    s.add_argument("--seed", type=_seed, default=0,
                   help="seed of the partitioner (default 0); a spec's graph has its own ':seed=S'")
    device_arg(s, PARTITION_AUTO)
    s.add_argument("--preset", default="default", choices=("fast", "default", "strong"),
                   help="speed/quality trade-off (default: default)")
    s.add_argument("--coarsening", default=None, choices=("matching", "cluster"),
                   help="coarsen by matching or by clustering (default: matching)")
    s.add_argument("--contig", action="store_true",
                   help="connected blocks (gpmetis -contig; on a disconnected graph: within each component)")
    s.add_argument("--objtype", default="cut", choices=("cut", "vol"),
                   help="minimise the edge cut (default) or the total communication volume (gpmetis -objtype=vol; "
                        "CPU only)")
    cluster_fallback_arg(s)
    s.add_argument("-o", "--output", metavar="PARTFILE",
                   help="where to write the block of each vertex, one per line (default: GRAPH.part.K as "
                        "gpmetis; for a spec, SPEC.part.K here with ':' as '_'; '-': stdout, report on stderr)")
    s.add_argument("--json", action="store_true", help="print the report (cut, balance, volumes, times, levels) as JSON")
    s.add_argument("-v", "--verbose", action="store_true", help="also print block weights and the levels of the hierarchy")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress display on stderr")
    s.add_argument("--mem-limit", type=_mem_size, default=None, metavar="SIZE",
                   help="cap each process's address space (RLIMIT_AS: 1500M, 2G; +300M: that much above the "
                        "address space after loading the kernels) before reading the graph; running out is an "
                        "error of kind 'memory' (under mpiexec: per rank)")
    threads_arg(s)
    return s


def _mem_size(text):
    import argparse
    from .memlimit import parse_limit
    try:
        return parse_limit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# Warm-up graph run before --mem-limit takes effect: big enough for every phase (several
# levels, FM, the coarsest solve) to load its kernels, small enough to take a second.
WARM_SPEC = "delaunay:3000"


def _warm_single():
    import matchpart
    from .refine.parallel_fm import with_pair_rounds
    # parallel FM's rounds take over from 30 000 vertices: forced here, so they load too
    with_pair_rounds(lambda: matchpart.partition(matchpart.generate(WARM_SPEC), 4, device="cpu"))


def cmd_partition(args, out):
    from .distributed.launch import launched_world_size
    if launched_world_size() > 1:  # under mpiexec with several ranks: the distributed pipeline
        from .distributed.cli import cmd_partition as distributed_partition
        return distributed_partition(args, out, check_output=_check_output)
    target = args.output if args.output is not None else default_output(args.graph, args.k)
    if target != "-":
        try:
            _check_output(target, graph=args.graph)
        except MatchpartError as exc:
            if args.output is not None:
                raise
            raise MatchpartError(f"{exc} (the default partition file, beside the graph; choose another with "
                                 "-o FILE, or -o - for stdout)") from None
    else:
        out = _to_stderr  # stdout carries the partition; the report goes beside it
    limit = getattr(args, "mem_limit", None)
    if limit is not None:
        from .memlimit import apply, mib
        limit, used = apply(*limit, warm=_warm_single)
        if args.verbose:
            print(f"{PROG}: address space limited to {mib(limit)} ({mib(used)} after loading the kernels)",
                  file=sys.stderr)
    try:
        return _run(args, out, target)
    except MemoryError as exc:
        from .memlimit import out_of_memory
        raise out_of_memory(exc, limit) from None


def _run(args, out, target):
    import matchpart
    from .metrics import summary
    from .progress import Progress
    g = _load(args)
    _check_partitionable(g, args)
    if args.verbose:
        print(f"{PROG}: partitioning {g.n} vertices, {g.m} edges into {args.k} blocks", file=sys.stderr)
    kwargs = dict(eps=args.eps, seed=args.seed, device=args.device, preset=args.preset, threads=args.threads,
                  contiguous=args.contig, cluster_fallback=args.cluster_fallback, objtype=args.objtype)
    for name in ("matcher", "rating", "coarsening", "target_weights"):
        value = getattr(args, name)
        if value is not None:
            kwargs[name] = value
    t0 = time.perf_counter()
    with Progress(f"partitioning into {args.k} blocks", enabled=False if args.quiet else None) as shown:
        res = matchpart.partition(g, args.k, progress=shown.update, **kwargs)
    wall = time.perf_counter() - t0
    timings = dict(getattr(res, "timings", {}) or {})
    timings.setdefault("total", wall)
    report = summary(g, res.parts, args.k, args.eps, target_weights=args.target_weights)
    report.update(graph=args.graph, objtype=args.objtype, timings=timings, levels=list(res.levels), threads=res.threads,
                  output=None if target == "-" else target)
    _write_parts(res.parts, target)
    if args.json:
        out(json.dumps(report, indent=1))
    else:
        _print_report(report, out, args.verbose)
    return 0


def default_output(graph, k):
    """gpmetis's name for the partition file: GRAPHFILE.part.K beside the graph; for a generator
    spec, SPEC.part.K in the current directory with ':' (not allowed in file names everywhere) as '_'."""
    if os.path.exists(graph):
        return f"{graph}.part.{k}"
    return f"{graph.replace(':', '_')}.part.{k}"


def _write_parts(parts, target):
    from .io import write_partition
    from .io.partfile import partition_bytes
    if target == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(partition_bytes(parts))
        sys.stdout.flush()
    else:
        write_partition(parts, target)


def _to_stderr(line=""):
    print(line, file=sys.stderr)


def _print_report(r, out, verbose):
    out(f"cut:        {r['cut']}")
    out(f"imbalance:  {r['imbalance']:.4f}" + (" (per constraint: " + ", ".join(
        f"{x:.4f}" for x in r["constraint_imbalance"]) + ")" if "constraint_imbalance" in r else ""))
    out(f"feasible:   {'yes' if r['feasible'] else 'no (a block exceeds its bound (1+eps)*ceil(Ti*W))'}")
    out(f"comm volume: total {r['total_comm_volume']}, max {r['max_comm_volume']}")
    out(f"boundary vertices: {r['boundary_vertices']}")
    out(f"empty blocks: {r['empty_blocks']}")
    pieces = r["pieces"]
    out(f"pieces per block: max {max(pieces)}, {r['disconnected_blocks']} block(s) disconnected")
    t = r["timings"]
    out(f"time:       {t['total']:.3f} s" + "".join(f", {k} {v:.3f}" for k, v in t.items() if k != "total")
        + (f" ({r['threads']} threads)" if "threads" in r else ""))
    if verbose:
        out(f"block weights: {' '.join(map(str, r['block_weights']))} (bound {r['max_block_weight']})")
        out("levels:")
        out(f"  {'level':>5} {'n':>10} {'m':>10} {'rounds':>6} {'matched':>8} {'time':>8}  by")
        for i, lv in enumerate(r["levels"]):
            by = "" if i == len(r["levels"]) - 1 else "clustering" if lv.get("clustered") else "matching"
            out(f"  {i:>5} {lv.get('n', ''):>10} {lv.get('m', ''):>10} {lv.get('rounds', ''):>6} "
                f"{lv.get('matched_fraction', 0):>8.3f} {lv.get('time', 0):>8.4f}  {by}".rstrip())
    if r["output"] is not None:
        out(f"wrote {r['output']}")
