"""The ``matchpart`` command: its parser, its entry point (errors, warnings, exit codes) and the
small commands info, generate, match and matchers; partition, compare, order / separator and
partition-mesh are in cli_partition, cli_compare, cli_order and cli_mesh."""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
import warnings

from . import __version__, cli_compare, cli_mesh, cli_order, cli_partition
from .cli_common import PROG, _check_output, _load, _notes, _seed, device_arg, graph_args, threads_arg
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
rmat:16, ba:10000:3 (append :seed=S to vary it); prgg:N and prmat:SCALE are generated
by the MPI ranks in parallel, the same graph for any number of ranks.
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

    cli_partition.add_parser(add)
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


COMMANDS = {"info": cmd_info, "generate": cmd_generate, "match": cmd_match, "matchers": cmd_matchers,
            "partition": cli_partition.cmd_partition, "compare": cli_compare.cmd_compare, "order": cli_order.cmd_order,
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
        if isinstance(exc, MemoryError) and not isinstance(exc, MatchpartError):  # ours says it already
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
