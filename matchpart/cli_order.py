"""``matchpart order GRAPH`` (nested-dissection ordering, GRAPH.iperm as ndmetis writes it) and
``matchpart separator GRAPH`` (a vertex separator)."""
from __future__ import annotations

import json
import os
import sys
import time

from .cli_common import PROG, _check_output, _eps, _seed
from .errors import MatchpartError

ORDER_HELP = "fill-reducing nested-dissection ordering (writes GRAPH.iperm as ndmetis does)"
ORDER_EPILOG = """\
examples:
  matchpart order 4elt.graph                 # writes 4elt.graph.iperm
  matchpart order matrix.mtx -o matrix.iperm --json
  matchpart order grid:40x40x40 -o -         # the ordering on stdout, the report on stderr

The output has one line per vertex v (in file order): iperm[v], the 0-based position of v in
the elimination order (ndmetis's GRAPH.iperm). The report gives the separators' sizes (the
top of the dissection first), nnz(L) (the nonzeros of the Cholesky factor of the permuted
pattern, diagonal included) and its flop count sum_j c_j^2 (c_j: nonzeros of column j of L).
A Matrix Market file is read as the pattern of a sparse matrix: symmetrised, diagonal
dropped, values ignored.
"""
SEPARATOR_HELP = "vertex separator: labels 0 / 1 per side, 2 for the separator (writes GRAPH.sep)"
SEPARATOR_EPILOG = """\
examples:
  matchpart separator 4elt.graph             # writes 4elt.graph.sep
  matchpart separator delaunay:100000 --eps 0.05 -o d.sep --json

The output has one line per vertex: 0 or 1 (its side) or 2 (in the separator). No edge joins
side 0 and side 1; each side weighs at most (1 + eps) / 2 of the total (METIS's default
eps is 0.2, ufactor 200).
"""


def add_parsers(add):
    """The order and separator subcommands, added with cli.build_parser's ``add``."""
    for name, help_, epilog, ext in (("order", ORDER_HELP, ORDER_EPILOG, "iperm"),
                                     ("separator", SEPARATOR_HELP, SEPARATOR_EPILOG, "sep")):
        s = add(name, help_, epilog)
        s.add_argument("graph", metavar="GRAPH", help="graph file, Matrix Market matrix or generator spec")
        s.add_argument("--symmetrize", action="store_true",
                       help="add missing reverse edges instead of reporting them (always on for .mtx)")
        s.add_argument("--drop-self-loops", action="store_true",
                       help="remove self-loops instead of reporting them (always on for .mtx)")
        s.add_argument("-m", "--matcher", default="local_max",
                       help="matcher for coarsening (default: local_max; see 'matchpart matchers')")
        s.add_argument("--eps", type=_eps, default=None,
                       help="each separator side weighs at most (1+eps)/2 of its piece (default: "
                            + ("0.3, matchpart.order's)" if name == "order" else "0.2, METIS's)"))
        s.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
        s.add_argument("--method", default="apfb", choices=("apfb", "apsb"),
                       help="exact bipartite matcher behind the minimum vertex covers (default apfb)")
        s.add_argument("-o", "--output", metavar="FILE",
                       help=f"output file (default: GRAPH.{ext} beside the graph; for a spec, SPEC.{ext} here "
                            "with ':' as '_'; '-': stdout, report on stderr)")
        s.add_argument("--json", action="store_true", help="print the report as JSON")
        if name == "order":
            s.add_argument("--leaf-size", type=_leaf_size, default=None, metavar="N",
                           help="pieces of at most N vertices are ordered by minimum degree (default 120)")
            s.add_argument("--no-compress", action="store_true",
                           help="do not merge vertices with identical neighbourhoods first")


def _leaf_size(text):
    import argparse

    from .order.mindegree import MAX_DENSE_VERTICES
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 1 <= value <= MAX_DENSE_VERTICES:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_DENSE_VERTICES}, got {value}")
    return value


def _target(args, ext):
    if args.output is not None:
        target = args.output
    elif os.path.exists(args.graph):
        target = f"{args.graph}.{ext}"
    else:
        target = f"{args.graph.replace(':', '_')}.{ext}"
    if target != "-":
        _check_output(target, graph=args.graph)
    return target


def _load(args):
    from .cli_common import _notes
    from .io import load_graph
    mtx = args.graph.lower().endswith((".mtx", ".mtx.gz"))
    with _notes.holding():
        return load_graph(args.graph, symmetrize=args.symmetrize or mtx, drop_self_loops=args.drop_self_loops or mtx)


def _emit(values, target):
    from .io.partfile import partition_bytes, write_partition
    if target == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(partition_bytes(values))
        sys.stdout.flush()
    else:
        write_partition(values, target)


def _say(target, out):
    return (lambda line="": print(line, file=sys.stderr)) if target == "-" else out


def cmd_order(args, out):
    from .order.fill import fill
    from .order.nested import LEAF_SIZE, ORDER_EPS, order
    target = _target(args, "iperm")
    out = _say(target, out)
    g = _load(args)
    t0 = time.perf_counter()
    res = order(g, matcher=args.matcher, eps=ORDER_EPS if args.eps is None else args.eps, seed=args.seed,
                method=args.method, leaf_size=args.leaf_size or LEAF_SIZE, compress=not args.no_compress)
    seconds = time.perf_counter() - t0
    f = fill(g, res.perm)
    seps = res.separators
    top = [[int(w) if float(w).is_integer() else float(w) for w in seps[seps[:, 0] == d][:, 2]] for d in range(3)]
    report = {"graph": args.graph, "vertices": g.n, "edges": g.m, "compressed_vertices": int(res.compressed_n),
              "separators": int(seps.shape[0]), "separator_weight": float(seps[:, 2].sum()),
              "top_separators": [t for t in top if t], "nnz_L": f.nnz, "flops": f.flops,
              "etree_height": f.height, "time": seconds, "output": None if target == "-" else target}
    _emit(res.iperm, target)
    if args.json:
        out(json.dumps(report, indent=1))
        return 0
    out(f"vertices:   {g.n} ({res.compressed_n} after compressing identical vertices)")
    for d, sizes in enumerate(report["top_separators"]):
        out(f"separators at depth {d}: {' '.join(map(str, sizes))}")
    out(f"separators: {report['separators']}, {report['separator_weight']:g} vertices (weight) in all")
    out(f"nnz(L):     {f.nnz}")
    out(f"flops:      {f.flops:.4g}")
    out(f"etree height: {f.height}")
    out(f"time:       {seconds:.3f} s")
    if report["output"]:
        out(f"wrote {target}")
    return 0


def cmd_separator(args, out):
    from .order.separator import DEFAULT_EPS, vertex_separator
    target = _target(args, "sep")
    out = _say(target, out)
    g = _load(args)
    if g.n and g.total_vwgt <= 0:
        raise MatchpartError(f"{args.graph}: every vertex weight is 0, so the sides cannot be balanced")
    r = vertex_separator(g, matcher=args.matcher, eps=DEFAULT_EPS if args.eps is None else args.eps, seed=args.seed,
                         method=args.method)
    report = {"graph": args.graph, "vertices": g.n, "separator_weight": r.weight,
              "separator_vertices": int((r.labels == 2).sum()), "side_weights": list(r.side_weights),
              "max_side_weight": r.max_side_weight, "balanced": r.balanced, "levels": r.levels, "time": r.time,
              "output": None if target == "-" else target}
    _emit(r.labels, target)
    if args.json:
        out(json.dumps(report, indent=1))
        return 0
    out(f"separator:  {r.weight} ({report['separator_vertices']} vertices)")
    out(f"sides:      {r.side_weights[0]} {r.side_weights[1]} (bound {r.max_side_weight:g})")
    out(f"balanced:   {'yes' if r.balanced else 'no (a side exceeds (1+eps)/2 of the total)'}")
    out(f"time:       {r.time:.3f} s")
    if report["output"]:
        out(f"wrote {target}")
    return 0
