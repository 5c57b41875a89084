"""``matchpart compare GRAPH... K``: matchers compared over a set of graphs (table, CSV, JSON, plot)."""
from __future__ import annotations

import json
import math
import os
import sys

from .cli_common import (PARTITION_AUTO, PROG, _check_output, _eps, _positive_int, _seed_count, cluster_fallback_arg,
                         device_arg, threads_arg)
from .errors import MatchpartError

HELP = "compare matchers by the cut of the partitions they lead to, over one or more graphs"
EPILOG = """\
examples:
  matchpart compare 4elt.graph 8 -m local_max,suitor --repeats 3 --plot cmp.png
  matchpart compare ../shared/graphs 8 --csv > runs.csv
  matchpart compare delaunay:20000 rgg:20000 airfoil1.graph 16 --json

GRAPH is a file, a generator spec or a directory (every graph file in it).
The profile table says, per matcher, on what fraction of the graphs its median cut is the
best, within 5% and within 10% of the best (the performance profile at tau = 1, 1.05, 1.1).
"""


def add_parser(add):
    """The compare subcommand, added with cli.build_parser's ``add(name, help, epilog)``."""
    s = add("compare", HELP, EPILOG)
    s.add_argument("graphs", metavar="GRAPH", nargs="+", help="graph files, generator specs or directories")
    s.add_argument("k", metavar="K", type=_positive_int, help="number of blocks")
    s.add_argument("--symmetrize", action="store_true", help="add missing reverse edges instead of reporting them")
    s.add_argument("--drop-self-loops", action="store_true", help="remove self-loops instead of reporting them")
    s.add_argument("-m", "--matchers", default=None, help="comma-separated matcher names (default: all)")
    s.add_argument("-r", "--repeats", "--seeds", dest="repeats", type=_seed_count, default=3,
                   help="runs (seeds 0..R-1) per matcher and graph (default 3)")
    s.add_argument("--eps", type=_eps, default=0.03, help="imbalance (default 0.03)")
    s.add_argument("--preset", default="default", choices=("fast", "default", "strong"))
    s.add_argument("--rating", default="expansion_star2", help="edge rating (default expansion_star2)")
    device_arg(s, PARTITION_AUTO)
    output = s.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="print one CSV line per graph and matcher instead of tables")
    output.add_argument("--json", action="store_true", help="print rows and profile as JSON instead of tables")
    s.add_argument("--plot", metavar="FILE",
                   help="draw the performance profile and cut vs time to FILE (needs matplotlib)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress display on stderr")
    cluster_fallback_arg(s)
    threads_arg(s)
    return s


def cmd_compare(args, out):
    from . import compare as cmp
    from .cli_common import check_graph_partitionable, load_graph_arg
    from .progress import Progress
    if args.plot is not None:
        import importlib.util
        if importlib.util.find_spec("matplotlib") is None:  # say so before the runs, not after
            raise ImportError("--plot needs matplotlib: pip install matplotlib (or matchpart[plot])")
        for g in args.graphs:
            _check_output(args.plot, graph=g)
    items = []
    for name in args.graphs:
        # a directory stands for its graph files; anything else is one graph (file or spec)
        paths = cmp.graph_files(name) if _is_dir(name) else [name]
        if not paths:
            raise MatchpartError(f"{name}: is a directory without graph files (.graph, .metis, .mtx, .edges, ...)")
        items += paths
    graphs = []
    for path in items:
        g = load_graph_arg(path, args)
        check_graph_partitionable(g, path, args.k, args.eps)
        graphs.append(g)
    # a name given twice would only run twice and show up twice in the table
    names = list(dict.fromkeys(s.strip() for s in args.matchers.split(",") if s.strip())) if args.matchers else None
    with Progress("compare", enabled=None if not args.quiet else False) as progress:
        rows = cmp.compare(dict(zip(_labels(items), graphs)), args.k, names, repeats=args.repeats, eps=args.eps, device=args.device,
                           preset=args.preset, rating=args.rating, progress=progress.update,
                           threads=args.threads, cluster_fallback=args.cluster_fallback)
    profile = cmp.profile_rows(rows)
    if args.json:
        out(json.dumps({"k": args.k, "rows": rows, "profile": _finite(profile)}, indent=1))
    elif args.csv:
        out(cmp.to_csv(rows).rstrip("\n"))
    else:
        out(cmp.format_table(rows))
        out()
        out(f"over {len(items)} graph(s), k={args.k}:")
        out(cmp.format_table(profile, cmp.PROFILE_COLUMNS))
    if args.plot is not None:
        cmp.plot(rows, args.plot)
        print(f"{PROG}: wrote {args.plot}", file=sys.stderr)
    return 0


def _is_dir(name):
    return os.path.isdir(name)


def _labels(items):
    """Short names for tables and titles: a file's base name, unless two files share it."""
    short = [os.path.basename(p) if os.path.isfile(p) else p for p in items]
    return [s if short.count(s) == 1 else p for s, p in zip(short, items)]


def _finite(rows):
    """JSON has no infinity: an unsolved ratio becomes null."""
    return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()} for r in rows]
