"""Matching algorithms, one module each, behind a registry.

``match(graph, matcher)`` runs any registered matcher (or a callable with the matcher
signature ``f(graph, *, rating, seed, backend) -> Matching``) and times it.
"""
from __future__ import annotations

import importlib
import time

from .. import backend as _backend
from .base import Matching, is_maximal, matching_problems
from .ratings import RATINGS, edge_priority, edge_ratings
from .registry import MatcherInfo, available, describe, register, resolve

# Modules that register built-in matchers on import (one algorithm family each).
_BUILTIN_MODULES = ("local_max", "red_blue", "serial", "suitor", "karp_sipser", "gpa")
for _mod in _BUILTIN_MODULES:
    try:
        importlib.import_module(f"{__name__}.{_mod}")
    except ModuleNotFoundError as _exc:  # only tolerate the module itself being absent
        if _exc.name != f"{__name__}.{_mod}":
            raise

__all__ = ["Matching", "MatcherInfo", "RATINGS", "available", "describe", "register", "resolve",
           "match", "run_matcher", "edge_ratings", "edge_priority", "matching_problems", "is_maximal"]


def run_matcher(matcher, graph, *, rating="weight", seed=0):
    """Run a matcher on ``graph`` (already a Graph on its backend) and time it.

    A matcher that does not support the graph's backend runs on a host copy; the
    returned ``mate`` is always on the graph's backend.
    """
    info = resolve(matcher)
    if graph.ncon > 1:      # ratings weigh a vertex by one number; partition() matches a stand-in
        from ..errors import GraphError
        raise GraphError(f"matchers take one weight per vertex, this graph has {graph.ncon}; pick one column "
                         "(graph.with_vertex_weights(w[:, j])) or their sum", kind="unsupported")
    be = graph.backend
    run_on = graph if be.name in info.backends else graph.to("cpu")
    be.synchronize()
    t0 = time.perf_counter()
    result = info.func(run_on, rating=rating, seed=seed, backend=run_on.backend)
    run_on.backend.synchronize()
    result.time = time.perf_counter() - t0
    result.matcher = info.name
    result.mate = be.to_device(run_on.backend.to_host(result.mate)) if run_on is not graph else result.mate
    return result


def match(graph, matcher="local_max", *, rating="weight", seed=0, device="auto", threads=None):
    """Match ``graph`` (Graph, scipy matrix, networkx graph, path or generator spec).

    Returns a Matching with ``mate``, ``weight``, ``cardinality``, ``stats`` (``rounds``,
    ``matched_fraction`` per round) and ``time``. ``threads``: CPU threads (default None:
    every core); the matching does not depend on it.
    """
    from ..io import as_graph
    from ..threads import limit
    be = _backend.get(device)
    g = as_graph(graph).to(be)
    with limit(threads):
        return run_matcher(matcher, g, rating=rating, seed=seed)
