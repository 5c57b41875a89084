"""Several weights per vertex (METIS's ncon): tolerances per constraint, the one-weight stand-ins
the multilevel machinery coarsens and bisects with, and the graph-learning ``balance=`` columns."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import GraphError

# Stand-in weights measure each constraint in units of STANDIN_UNITS per average vertex (its
# total is STANDIN_UNITS * n): fine enough that rounding a vertex's share to an integer moves
# it by well under 1% of an average vertex, small enough that totals stay far below 2^53.
STANDIN_UNITS = 1024
# Largest accepted tolerance, as pipeline.MAX_EPS for one constraint.
MAX_EPS = 1e9


def check_eps(eps, ncon):
    """One tolerance per constraint as a list of c floats: a number (the same for all) or c
    numbers (METIS's ubvec - 1); ValueError naming the problem otherwise."""
    if isinstance(eps, (str, bytes)):
        raise ValueError(f"eps must be a number or one number per constraint ({ncon}), got {eps!r}")
    values = [eps] if isinstance(eps, numbers.Real) else eps
    try:
        values = list(values)
    except TypeError:
        raise ValueError(f"eps must be a number or one number per constraint ({ncon}), got {eps!r}") from None
    if len(values) == 1:
        values = values * ncon
    if len(values) != ncon:
        raise ValueError(f"eps has {len(values)} values but the graph has {ncon} weights per vertex; "
                         f"give one tolerance per constraint (or a single one for all)")
    out = []
    for j, e in enumerate(values):
        if isinstance(e, bool) or not isinstance(e, numbers.Real) or not math.isfinite(e) or e < 0 or e > MAX_EPS:
            raise ValueError(f"eps[{j}] must be a finite number between 0 and {MAX_EPS:g}, got {e!r}")
        out.append(float(e))
    return out


def check_totals(totals):
    """Refuse a constraint whose total is 0: no block can hold a share of nothing, and METIS
    divides by it. The caller should drop that column."""
    for j, t in enumerate(totals):
        if t <= 0:
            raise GraphError(f"vertex weight constraint {j} sums to {t}: every constraint needs a positive "
                             "total (drop that column)", kind="bad_weight")


def cap_standin(vw):
    """Per vertex, its largest share of any constraint's total in stand-in units, rounded up:
    a cap on the sum of these over a coarse vertex caps each constraint's weight in it
    (coarsening's cap per constraint). int64 (n,)."""
    return _shares(vw).max(axis=1).astype(np.int64)


def balance_standin(vw, norm="sum"):
    """Per vertex, one number for its shares of the constraints' totals in stand-in units: their
    sum (a one-weight graph balanced in it is balanced on average over the constraints) or
    (``norm="l2"``) their Euclidean length (weighs a vertex by its largest shares, so heavy
    vertices of one constraint spread out). The multi-constraint initial partition starts from
    a bisection balanced in it. int64 (n,)."""
    shares = _shares(vw, ceil=False)
    total = np.sqrt((shares * shares).sum(axis=1)) if norm == "l2" else shares.sum(axis=1)
    return np.ceil(total).astype(np.int64)


def _shares(vw, ceil=True):
    vw = np.asarray(vw, dtype=np.float64)
    totals = vw.sum(axis=0)
    x = vw * (STANDIN_UNITS * vw.shape[0] / np.maximum(totals, 1e-300))
    return np.ceil(x) if ceil else x


def mean_targets(targets):
    """k fractions for the stand-in graph from checked k x c targets (metrics.check_constraint_targets):
    the mean over the constraints."""
    if targets is None:
        return None
    t = np.asarray(targets, dtype=np.float64).mean(axis=1)
    return t / t.sum()


def balance_weights(graph, balance, labels=None, source=None):
    """(n, c) vertex weights from ``balance``: the vertex count first, then one column per entry,
    each a node attribute name (networkx input ``source``; missing -> 0, True/False -> 1/0),
    "degree" (neighbours per vertex: balances the edges), or an array of n weights."""
    if isinstance(balance, (str, np.ndarray)) or not hasattr(balance, "__iter__"):
        balance = [balance]
    h = graph.backend.to_host
    cols = [np.ones(graph.n, dtype=np.int64)]
    for entry in balance:
        if isinstance(entry, str) and entry == "degree":
            cols.append(np.diff(h(graph.indptr)).astype(np.int64))
        elif isinstance(entry, str):
            if source is None or not hasattr(source, "nodes"):
                raise ValueError(f"balance={entry!r} names a node attribute, which needs a networkx graph; "
                                 "pass an array of n weights instead")
            nodes = labels if labels is not None else list(source.nodes)
            cols.append(np.asarray([source.nodes[x].get(entry, 0) for x in nodes]).astype(np.float64))
        else:
            col = np.asarray(entry.get() if hasattr(entry, "get") and not isinstance(entry, dict) else entry)
            if col.ndim != 1 or col.shape[0] != graph.n:
                raise GraphError(f"a balance array must have one weight per vertex ({graph.n}), got shape "
                                 f"{col.shape}", kind="size")
            cols.append(col.astype(np.float64) if col.dtype.kind == "f" else col.astype(np.int64))
    return np.stack([c.astype(np.float64) if any(x.dtype.kind == "f" for x in cols) else c for c in cols], axis=1)
