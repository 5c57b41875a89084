"""What the subcommands of the ``matchpart`` command share: argument types, loading a graph,
checks made before the work, and the stderr notes of the readers."""
from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import sys

from .errors import MatchpartError

PROG = "matchpart"


# Argument types: a bad number on the command line is a usage error (exit 2), like a typo.
def _int_in(minimum, maximum=None):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum}, got {value}")
        return value
    return parse


def _eps(text):
    """--eps: a number, or a comma list of one per constraint (graphs with ncon weights per vertex)."""
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.03 (or one per constraint, such as "
                                         f"0.03,0.1), got {text!r}") from None
    if not all(math.isfinite(v) and v >= 0 for v in values):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0 (e.g. 0.03 for 3% imbalance), got {text!r}")
    return values[0] if len(values) == 1 else values


def _fractions(text):
    """--target-weights: a comma list of numbers (checked against K, and summed, by partition())."""
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated fractions such as 0.5,0.25,0.25, got {text!r}") \
            from None
    if not all(math.isfinite(v) and v >= 0 for v in values):
        raise argparse.ArgumentTypeError(f"fractions must be finite numbers >= 0, got {text!r}")
    return values


_positive_int = _int_in(1)
_seed = _int_in(0, 2**63 - 1)  # the hash RNG keeps 64 bits: larger seeds would repeat smaller ones
_seed_count = _int_in(1, 10**6)
_threads = _int_in(1, 4096)


def graph_args(sp):
    """GRAPH and the repairs of its file, for the commands that read one graph."""
    sp.add_argument("graph", metavar="GRAPH", help="graph file or generator spec (e.g. delaunay:10000)")
    sp.add_argument("--symmetrize", action="store_true",
                    help="add missing reverse edges instead of reporting them")
    sp.add_argument("--drop-self-loops", action="store_true", help="remove self-loops instead of reporting them")


def device_arg(sp, auto="the GPU when usable"):
    """--device for the commands that run on CPU or GPU; ``auto``: what "auto" means there."""
    sp.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"),
                    help=f"where to run (default: auto = {auto})")


# partition and compare: a graph read from a file is on the host, and "auto" partitions where
# the graph is (pipeline.partition)
PARTITION_AUTO = "the CPU for a graph read from a file: its threads beat the GPU pipeline where both were measured"


def cluster_fallback_arg(sp):
    """--no-cluster-fallback for the commands that coarsen by matching."""
    sp.add_argument("--no-cluster-fallback", dest="cluster_fallback", action="store_false",
                    help="keep the matcher on every level (default: graphs of mean degree 7 or more are clustered "
                         "on every level; on others a matching level that removes few edges, as on power-law "
                         "graphs, is redone by clustering, and so are the levels after it)")


def threads_arg(sp):
    """--threads N for the commands that run kernels."""
    sp.add_argument("--threads", "-t", type=_threads, default=None, metavar="N",
                    help="CPU threads (default: every core, or NUMBA_NUM_THREADS; under mpiexec, per rank: the "
                         "node's cores shared among its ranks); results do not depend on it")


class _StderrInfo(logging.Handler):
    """Shows the library's INFO messages (e.g. '1-based ids detected') on stderr.

    While a graph loads they are held back, so that a file with an error gets its one-line
    error alone, and shown once it has loaded.
    """

    def __init__(self):
        super().__init__()
        self.held = None

    def emit(self, record):
        line = f"{PROG}: {record.getMessage()}"
        if self.held is not None:
            self.held.append(line)
        else:
            print(line, file=sys.stderr)

    @contextlib.contextmanager
    def holding(self):
        self.held = []
        try:
            yield
            lines = self.held
        finally:
            self.held = None
        for line in lines:
            print(line, file=sys.stderr)


_notes = _StderrInfo()


def _load(args):
    return load_graph_arg(args.graph, args)


def load_graph_arg(name, args):
    """The graph a command-line argument names, with the repairs the user asked for."""
    from .io import load_graph
    with _notes.holding():
        # no seed: --seed seeds the partitioner, not a generator spec, whose graph is fixed by
        # its own ':seed=S' option (the same spec names the same graph for every --seed)
        return load_graph(name, symmetrize=args.symmetrize, drop_self_loops=args.drop_self_loops)


def _check_output(path, graph=None):
    """Fail before the work, not after it, when an output file cannot be written."""
    if not path:
        raise MatchpartError("the output file name is empty")
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise MatchpartError(f"cannot write {path}: it is a directory")
    if not os.path.isdir(parent):
        raise MatchpartError(f"cannot write {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise MatchpartError(f"cannot write {path}: permission denied")
    if graph and os.path.exists(path) and os.path.exists(graph) and os.path.samefile(path, graph):
        raise MatchpartError(f"refusing to write the output over the input graph {graph}")


def _check_partitionable(g, args):
    check_graph_partitionable(g, args.graph, args.k, args.eps)


def check_graph_partitionable(g, name, k, eps):
    """Refuse what makes the balance bound Lmax = (1+eps)*ceil(W/K) meaningless."""
    if g.ncon > 1 or not isinstance(eps, (int, float)):
        from .constraints import check_eps, check_totals
        try:
            eps = check_eps(eps, g.ncon)
        except ValueError as exc:
            raise MatchpartError(f"--eps: {exc}") from None
        if g.n:
            check_totals(g.total_vwgt if g.ncon > 1 else (g.total_vwgt,))
        for j, (total, e) in enumerate(zip(g.total_vwgt if g.ncon > 1 else (g.total_vwgt,), eps)):
            if (1 + e) * math.ceil(total / k) >= 2**62:
                raise MatchpartError(f"--eps {e:g} is too large for constraint {j}: (1+eps)*ceil(W/K) overflows "
                                     "64-bit integers")
        return
    if g.n and g.total_vwgt <= 0:
        raise MatchpartError(f"{name}: every vertex weight is 0, so blocks cannot be balanced; "
                             "vertex weights must not all be 0")
    if (1 + eps) * math.ceil(g.total_vwgt / k) >= 2**62:
        raise MatchpartError(f"--eps {eps:g} is too large: (1+eps)*ceil(W/K) overflows 64-bit integers "
                             f"(eps = K-1 = {k - 1} already lets a block hold the whole graph)")
