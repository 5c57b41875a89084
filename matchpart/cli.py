"""The ``matchpart`` command: info, generate, match, matchers, partition, compare, order, separator."""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import sys
import time
import warnings

from . import __version__, cli_compare, cli_mesh, cli_order
from .cli_common import (PROG, _check_output, _check_partitionable, _eps, _fractions, _load, _notes,
                         _positive_int, _seed, cluster_fallback_arg, threads_arg)
from .errors import MatchpartError


EPILOG = """\
examples:
  matchpart info 4elt.graph
  matchpart generate delaunay:65536 -o d16.graph
  matchpart matchers
  matchpart match 4elt.graph -m local_max --rating expansion_star2
  matchpart partition 4elt.graph 8 -m local_max -o 4elt.part.8 -v
  matchpart compare 4elt.graph airfoil1.graph 8 -m local_max,red_blue --repeats 3 --plot cmp.png
  matchpart order 4elt.graph        (nested dissection: 4elt.graph.iperm, nnz(L), flops)

GRAPH is a file (.graph/.metis METIS, .mtx Matrix Market, .edges/.txt/.el edge list)
or a generator spec such as delaunay:100000, rgg:65536, grid:100x100, er:10000:8,
rmat:16, ba:10000:3 (append :seed=S to vary it).
"""


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line (exit 2), like every other error."""

    def error(self, message):
        from .distributed.launch import launched_rank
        if launched_rank() != 0:  # under mpiexec every rank parses the same line: rank 0 says it
            self.exit(2)
        self.exit(2, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


def _formatter(prog):
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def build_parser():
    p = _Parser(prog=PROG, formatter_class=_formatter, epilog=EPILOG,
                description="Multilevel k-way graph partitioning with pluggable data-parallel "
                            "matchers on CPU and GPU.")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    p.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(name, help_, epilog=None):
        sp = sub.add_parser(name, help=help_, description=help_, epilog=epilog, formatter_class=_formatter)
        sp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show full tracebacks on errors")
        return sp

    def graph_args(sp):
        sp.add_argument("graph", metavar="GRAPH", help="graph file or generator spec (e.g. delaunay:10000)")
        sp.add_argument("--symmetrize", action="store_true",
                        help="add missing reverse edges instead of reporting them")
        sp.add_argument("--drop-self-loops", action="store_true", help="remove self-loops instead of reporting them")

    def device_arg(sp):
        sp.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"),
                        help="where to run (default: auto = GPU when usable)")

    s = add("info", "print size, weights, degrees and connectivity of a graph",
            "example:\n  matchpart info 4elt.graph")
    graph_args(s)

    s = add("generate", "write a generated graph to a file",
            "examples:\n  matchpart generate delaunay:65536 -o d16.graph\n"
            "  matchpart generate grid:100x100 --seed 1 -o grid.mtx")
    s.add_argument("spec", metavar="SPEC", help="generator spec, e.g. delaunay:65536, grid:10x20, er:1000:8")
    s.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="output file; format by extension (.graph, .mtx, .edges)")
    s.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")

    s = add("match", "compute one matching and report its weight and validity",
            "example:\n  matchpart match 4elt.graph -m suitor --rating weight")
    graph_args(s)
    s.add_argument("-m", "--matcher", default="local_max", help="matcher name (see 'matchpart matchers')")
    s.add_argument("--rating", default="weight",
                   help="edge rating: weight, expansion_star, expansion_star2, inner_outer (default weight)")
    s.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    device_arg(s)
    threads_arg(s)

    add("matchers", "list the available matchers with descriptions and papers")

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
    device_arg(s)
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
    threads_arg(s)

    cli_compare.add_parser(add)
    cli_order.add_parsers(add)
    cli_mesh.add_parser(add)
    return p


# ---- commands ----------------------------------------------------------------------------
@contextlib.contextmanager
def _compile_notice():
    """Says once on stderr when numba starts compiling one of our kernels: ``pip install .``
    compiles them (setup.py), but a run under another numba version or CPU than the build's,
    from an editable install or with NUMBA_CACHE_DIR set compiles them all (about 20 s of CPU)
    before caching them on disk, and a silent pause that long looks like a hang."""
    from numba.core import event

    class Notice(event.Listener):
        shown = False

        def on_start(self, ev):
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            if not self.shown and getattr(func, "__module__", "").startswith("matchpart."):
                self.shown = True
                print(f"{PROG}: compiling kernels (first run with this numba and CPU; they are cached "
                      "for later runs) ...", file=sys.stderr, flush=True)

        def on_end(self, ev):
            pass

    notice = Notice()
    event.register("numba:compile", notice)
    try:
        yield
    finally:
        event.unregister("numba:compile", notice)


def _weights_text(total, unit):
    return f"{total} ({'unit weights' if unit else 'weighted'})"


def cmd_info(args, out):
    import numpy as np
    from scipy.sparse.csgraph import connected_components
    g = _load(args)
    h = g.backend.to_host
    ewgt, vwgt = h(g.ewgt), h(g.vwgt)
    deg = np.diff(h(g.indptr))
    ncomp = connected_components(g.to_scipy(), directed=False)[0] if g.n else 0
    out(f"graph:      {args.graph}")
    out(f"vertices:   {g.n}")
    out(f"edges:      {g.m}")
    if g.ncon > 1:     # METIS's ncon: one total per constraint
        out(f"vertex weight totals: {' '.join(map(str, g.total_vwgt))} ({g.ncon} weights per vertex)")
    else:
        out(f"vertex weight total: {_weights_text(g.total_vwgt, bool((vwgt == 1).all()))}")
    out(f"edge weight total:   {_weights_text(g.total_ewgt, bool((ewgt == 1).all()))}")
    if g.n:
        out(f"degree:     min {int(deg.min())}, mean {deg.mean():.2f}, max {int(deg.max())}")
    out(f"components: {ncomp}")
    out(f"isolated vertices: {int((deg == 0).sum())}")
    # self-check: rebuild through the validating constructor (independent of the reader)
    from .errors import GraphError
    from .graph import Graph
    try:
        Graph(h(g.indptr), h(g.indices), ewgt, vwgt)
        out("check:      valid (symmetric, sorted rows, no self-loops or repeats, positive edge weights)")
        return 0
    except GraphError as exc:
        out(f"check:      INVALID: {exc}")
        return 1


def cmd_generate(args, out):
    from .generators import from_spec
    from .io import output_format, save_graph
    if os.path.isfile(args.spec):
        raise MatchpartError(f"{args.spec!r} is a file; generate takes a generator spec such as delaunay:1000")
    try:
        output_format(args.output)
    except ValueError:
        raise MatchpartError(f"cannot tell the format of {args.output!r} from its extension: use .graph (METIS), "
                             ".mtx (Matrix Market) or .edges (edge list)") from None
    _check_output(args.output)
    t0 = time.perf_counter()
    g = from_spec(args.spec, seed=args.seed)
    save_graph(g, args.output)
    out(f"wrote {args.output}: {g.n} vertices, {g.m} edges ({time.perf_counter() - t0:.2f} s)")
    return 0


def cmd_match(args, out):
    from .matchers import is_maximal, match, matching_problems
    g = _load(args)
    res = match(g, args.matcher, rating=args.rating, seed=args.seed, device=args.device, threads=args.threads)
    problems = matching_problems(g, res.mate)
    rounds = res.stats.get("rounds", "?")
    frac = 2 * res.cardinality / g.n if g.n else 0.0
    out(f"matcher:     {res.matcher}")
    out(f"weight:      {res.weight}")
    out(f"cardinality: {res.cardinality} ({frac:.1%} of vertices matched)")
    out(f"rounds:      {rounds}")
    out(f"time:        {res.time:.4f} s")
    out(f"valid:       {'yes' if not problems else 'NO: ' + '; '.join(problems)}")
    out(f"maximal:     {'yes' if is_maximal(g, res.mate) else 'no'}")
    return 0 if not problems else 1


def cmd_matchers(args, out):
    from .matchers import available, describe
    names = available()
    width = max((len(n) for n in names), default=4)
    for name in names:
        info = describe(name)
        tags = ["weighted" if info.weighted else "unweighted", "/".join(info.backends)]
        if info.serial:
            tags.append("serial")
        out(f"{name:<{width}}  {info.description} [{', '.join(tags)}]")
        if info.paper:
            out(f"{'':<{width}}  paper: {info.paper}")
    return 0


def cmd_partition(args, out):
    from .distributed.launch import launched_world_size
    if launched_world_size() > 1:  # under mpiexec with several ranks: the distributed pipeline
        from .distributed.cli import cmd_partition as distributed_partition
        return distributed_partition(args, out, check_output=_check_output)
    import matchpart
    from .metrics import summary
    from .progress import Progress
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


COMMANDS = {"info": cmd_info, "generate": cmd_generate, "match": cmd_match, "matchers": cmd_matchers,
            "partition": cmd_partition, "compare": cli_compare.cmd_compare, "order": cli_order.cmd_order,
            "separator": cli_order.cmd_separator, "partition-mesh": cli_mesh.cmd_partition_mesh}


def _show_warning(message, category, filename, lineno, file=None, line=None):
    # one line, without the source location that Python's default format adds
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def _error_text(exc):
    if isinstance(exc, OSError) and exc.strerror and exc.filename:  # not "[Errno 2] ..."
        return f"{exc.filename}: {exc.strerror}"
    text = "; ".join(ln.strip() for ln in str(exc).strip().splitlines() if ln.strip())
    return text or exc.__class__.__name__


def main(argv=None):
    """Entry point of the ``matchpart`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.error(f"missing COMMAND, one of: {', '.join(COMMANDS)}")
    logger = logging.getLogger("matchpart")
    old_level = logger.level
    logger.addHandler(_notes)
    logger.setLevel(logging.INFO)  # only the readers log at INFO: what they guessed about a file

    def out(line=""):
        print(line)

    try:
        with warnings.catch_warnings(), _compile_notice():
            warnings.showwarning = _show_warning
            return COMMANDS[args.command](args, out)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of stdout went away (e.g. '| head'): stop quietly, as other tools do, and keep
        # Python from complaining again when it flushes stdout at exit
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (MatchpartError, ValueError, OSError, ImportError, MemoryError) as exc:
        if args.debug:
            raise
        text = _error_text(exc)
        if isinstance(exc, MemoryError):
            text = f"out of memory ({text})"
        print(f"{PROG}: error: {text}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug rather than bad input, but still no traceback unless asked
        if args.debug:
            raise
        print(f"{PROG}: internal error: {exc.__class__.__name__}: {_error_text(exc)} "
              "(--debug shows the traceback; please report it)", file=sys.stderr)
        return 1
    finally:
        logger.removeHandler(_notes)
        logger.setLevel(old_level)


if __name__ == "__main__":
    sys.exit(main())
