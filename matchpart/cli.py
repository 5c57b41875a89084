"""The ``matchpart`` command: info, generate, match, matchers, partition, compare."""
from __future__ import annotations

import argparse
import logging
import sys
import time

from . import __version__
from .errors import MatchpartError

PROG = "matchpart"

EPILOG = """\
examples:
  matchpart info 4elt.graph
  matchpart generate delaunay:65536 -o d16.graph
  matchpart matchers
  matchpart match 4elt.graph -m local_max --rating expansion_star2
  matchpart partition 4elt.graph 8 -m local_max -o 4elt.part.8 -v
  matchpart compare 4elt.graph 8 -m local_max,red_blue --seeds 3 --plot cmp.png

GRAPH is a file (.graph/.metis METIS, .mtx Matrix Market, .edges/.txt/.el edge list)
or a generator spec such as delaunay:100000, rgg:65536, grid:100x100, er:10000:8,
rmat:16, ba:10000:3 (append :seed=S to vary it).
"""


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line (exit 2), like every other error."""

    def error(self, message):
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
    s.add_argument("--seed", type=int, default=0, help="random seed (default 0)")

    s = add("match", "compute one matching and report its weight and validity",
            "example:\n  matchpart match 4elt.graph -m suitor --rating weight")
    graph_args(s)
    s.add_argument("-m", "--matcher", default="local_max", help="matcher name (see 'matchpart matchers')")
    s.add_argument("--rating", default="weight",
                   help="edge rating: weight, expansion_star, expansion_star2, inner_outer (default weight)")
    s.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    device_arg(s)

    add("matchers", "list the available matchers with descriptions and papers")

    s = add("partition", "partition a graph into K blocks",
            "examples:\n  matchpart partition 4elt.graph 8\n"
            "  matchpart partition delaunay:100000 32 -m suitor --preset strong -o d.part -v")
    graph_args(s)
    s.add_argument("k", metavar="K", type=int, help="number of blocks")
    s.add_argument("-m", "--matcher", default=None, help="matcher for coarsening (default: local_max; see 'matchpart matchers')")
    s.add_argument("--rating", default=None,
                   help="edge rating: weight, expansion_star, expansion_star2, inner_outer "
                        "(default: expansion_star2)")
    s.add_argument("--eps", type=float, default=0.03,
                   help="imbalance: blocks weigh at most (1+eps)*ceil(W/K) (default 0.03)")
    s.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    device_arg(s)
    s.add_argument("--preset", default="default", choices=("fast", "default", "strong"),
                   help="speed/quality trade-off (default: default)")
    s.add_argument("--coarsening", default=None, choices=("matching", "cluster"),
                   help="coarsen by matching or by clustering (default: matching)")
    s.add_argument("-o", "--output", metavar="PARTFILE", help="write the block of each vertex, one per line")
    s.add_argument("-v", "--verbose", action="store_true", help="print progress and the levels of the hierarchy")

    s = add("compare", "compare matchers by the cut of the partitions they lead to",
            "example:\n  matchpart compare 4elt.graph 8 -m local_max,suitor --seeds 3 --plot cmp.png")
    graph_args(s)
    s.add_argument("k", metavar="K", type=int, help="number of blocks")
    s.add_argument("-m", "--matchers", default=None, help="comma-separated matcher names (default: all)")
    s.add_argument("--seeds", type=int, default=3, help="number of seeds per matcher (default 3)")
    s.add_argument("--eps", type=float, default=0.03, help="imbalance (default 0.03)")
    s.add_argument("--preset", default="default", choices=("fast", "default", "strong"))
    s.add_argument("--rating", default="expansion_star2", help="edge rating (default expansion_star2)")
    device_arg(s)
    s.add_argument("--plot", metavar="FILE", help="also draw cut vs time to FILE (needs matplotlib)")
    return p


# ---- commands ----------------------------------------------------------------------------
def _load(args):
    from .io import load_graph
    return load_graph(args.graph, symmetrize=args.symmetrize, drop_self_loops=args.drop_self_loops,
                      seed=getattr(args, "seed", 0) or 0)


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
    from .io import save_graph
    t0 = time.perf_counter()
    g = from_spec(args.spec, seed=args.seed)
    save_graph(g, args.output)
    out(f"wrote {args.output}: {g.n} vertices, {g.m} edges ({time.perf_counter() - t0:.2f} s)")
    return 0


def cmd_match(args, out):
    from .matchers import is_maximal, match, matching_problems
    g = _load(args)
    res = match(g, args.matcher, rating=args.rating, seed=args.seed, device=args.device)
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
    import matchpart
    from .io import write_partition
    if args.k < 1:
        raise ValueError(f"K must be >= 1, got {args.k}")
    g = _load(args)
    if args.verbose:
        logging.getLogger("matchpart").setLevel(logging.INFO)
        print(f"{PROG}: partitioning {g.n} vertices, {g.m} edges into {args.k} blocks", file=sys.stderr)
    kwargs = dict(eps=args.eps, seed=args.seed, device=args.device, preset=args.preset)
    for name in ("matcher", "rating", "coarsening"):
        value = getattr(args, name)
        if value is not None:
            kwargs[name] = value
    t0 = time.perf_counter()
    res = matchpart.partition(g, args.k, **kwargs)
    wall = time.perf_counter() - t0
    out(f"cut:        {res.cut}")
    out(f"imbalance:  {res.imbalance:.4f}")
    out(f"feasible:   {'yes' if res.feasible else 'no (a block exceeds (1+eps)*ceil(W/K))'}")
    timings = getattr(res, "timings", {}) or {}
    out(f"time:       {timings.get('total', wall):.3f} s" + "".join(
        f", {k} {v:.3f}" for k, v in timings.items() if k != "total"))
    if args.verbose:
        out("levels:")
        out(f"  {'level':>5} {'n':>10} {'m':>10} {'rounds':>6} {'matched':>8} {'time':>8}")
        for i, lv in enumerate(getattr(res, "levels", []) or []):
            out(f"  {i:>5} {lv.get('n', ''):>10} {lv.get('m', ''):>10} {lv.get('rounds', ''):>6} "
                f"{lv.get('matched_fraction', 0):>8.3f} {lv.get('time', 0):>8.4f}")
    if args.output:
        write_partition(res.parts, args.output)
        out(f"wrote {args.output}")
    return 0


def cmd_compare(args, out):
    from .compare import compare, format_table, plot
    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    g = _load(args)
    names = [s.strip() for s in args.matchers.split(",") if s.strip()] if args.matchers else None
    rows = compare(g, args.k, names, seeds=tuple(range(args.seeds)), eps=args.eps, device=args.device,
                   preset=args.preset, rating=args.rating,
                   progress=lambda line: print(f"{PROG}: {line}", file=sys.stderr))
    out(format_table(rows))
    if args.plot:
        plot(rows, args.plot)
        out(f"wrote {args.plot}")
    return 0


COMMANDS = {"info": cmd_info, "generate": cmd_generate, "match": cmd_match, "matchers": cmd_matchers,
            "partition": cmd_partition, "compare": cmd_compare}


class _StderrInfo(logging.Handler):
    """Shows the library's INFO messages (e.g. '1-based ids detected') on stderr."""

    def emit(self, record):
        print(f"{PROG}: {record.getMessage()}", file=sys.stderr)


def main(argv=None):
    """Entry point of the ``matchpart`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    logger = logging.getLogger("matchpart")
    handler = _StderrInfo()
    old_level = logger.level
    logger.addHandler(handler)
    if args.command in ("info", "generate") or getattr(args, "verbose", False):
        logger.setLevel(logging.INFO)

    def out(line=""):
        print(line)

    try:
        return COMMANDS[args.command](args, out)
    except (MatchpartError, ValueError, OSError, ImportError) as exc:
        if args.debug:
            raise
        text = "; ".join(ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()) \
            or exc.__class__.__name__
        if isinstance(exc, FileNotFoundError) and exc.filename and str(exc.filename) not in text:
            text = f"{text}: {exc.filename}"
        print(f"{PROG}: error: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


if __name__ == "__main__":
    sys.exit(main())
