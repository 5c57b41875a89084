"""Matchers compared where it matters: the edge cut of the partitions they lead to, over one
graph or a set of graphs (rows for a DataFrame, a text table, CSV/JSON, a performance profile).

Drawing lives in compare_plot.py; this module only runs and summarises.
"""
from __future__ import annotations

import csv
import io as _io
import math
import os
import statistics
import sys
import time
import types
import warnings

DEFAULT_SEEDS = (0, 1, 2)  # three seeds: enough for a median, cheap enough for every matcher


def compare(graph, k, matchers=None, *, seeds=DEFAULT_SEEDS, repeats=None, eps=0.03, device="auto",
            preset="default", rating="expansion_star2", progress=None, threads=None, cluster_fallback=True):
    """Partition each graph into ``k`` blocks once per (matcher, seed); one row per (graph, matcher).

    ``graph``: one graph (anything ``matchpart.partition`` takes), a list of them, a
    ``{label: graph}`` dict, or a directory (every graph file in it). ``matchers``: names (or callables); default: every
    registered matcher. ``repeats=R`` is short for ``seeds=range(R)``.

    Each row is a plain dict (``pandas.DataFrame(rows)`` works): ``graph``, ``n``, ``m``,
    ``k``, ``matcher``, ``runs``, ``feasible`` (runs that met the balance bound), ``cuts``
    (one per seed), ``median_cut``, ``min_cut``, ``std_cut``, ``median_time`` (seconds of the
    whole ``partition`` call), ``min_time``, ``std_time``, ``mean_imbalance``,
    ``median_levels``, ``matched_fraction`` and ``rounds`` (mean per contraction step),
    ``median_comm_volume`` (total communication volume). Rows keep the graphs' order; within
    a graph they are sorted by median cut (all-feasible matchers first). ``progress``, if
    given, is called with a line per finished run. ``threads``: CPU threads per run (default
    None: every core); no cut depends on it. ``cluster_fallback``: as in ``partition``; the
    default clusters every level of a graph of mean degree 7 or more, and lets clustering
    redo a matching level that removes few edges and every level after it (power-law
    graphs), where the matchers then differ only on the levels before; False keeps each
    matcher on every level. ``clustered_levels`` (mean per run) says how
    many levels clustering made.
    """
    from .matchers import available
    from .matchers.registry import resolve

    instances = graph_set(graph)
    names = list(available()) if matchers is None else list(matchers)
    if not names:
        raise ValueError("no matchers to compare")
    for m in names:
        resolve(m)  # unknown names fail here, before any work
    seeds = tuple(range(repeats)) if repeats is not None else tuple(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed (or repeats must be >= 1)")
    total, done = len(instances) * len(names) * len(seeds), 0
    rows = []
    for label, g in instances:
        graph_rows = []
        for m in names:
            runs = []
            for s in seeds:
                runs.append(_run(g, k, m, s, eps=eps, device=device, preset=preset, rating=rating,
                                 threads=threads, cluster_fallback=cluster_fallback))
                done += 1
                if progress is not None:
                    progress(f"[{done}/{total}] {label} {_name(m)} seed {s}: cut {runs[-1]['cut']}, "
                             f"{runs[-1]['time']:.2f} s")
            graph_rows.append(_row(label, g, k, _name(m), runs))
        graph_rows.sort(key=lambda r: (r["feasible"] < r["runs"], r["median_cut"], r["median_time"]))
        rows += graph_rows
    return rows


def _run(g, k, matcher, seed, **options):
    from . import metrics
    from .pipeline import partition
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infeasible runs are counted in the row instead
        res = partition(g, k, matcher=matcher, seed=seed, **options)
    seconds = time.perf_counter() - t0
    steps = res.levels[:-1]  # the last level is the coarsest graph, made by no matching
    return {"cut": res.cut, "time": seconds, "feasible": bool(res.feasible), "imbalance": float(res.imbalance),
            "levels": len(res.levels),
            "matched_fraction": _mean([lv["matched_fraction"] for lv in steps]),
            "rounds": _mean([lv["rounds"] for lv in steps]),
            "clustered_levels": sum(bool(lv.get("clustered")) for lv in steps),
            "comm_volume": metrics.summary(g, res.parts, k, options["eps"])["total_comm_volume"]}


def _row(label, g, k, matcher, runs):
    cuts, times = [r["cut"] for r in runs], [r["time"] for r in runs]
    return {
        "graph": label, "n": g.n, "m": g.m, "k": k, "matcher": matcher,
        "runs": len(runs), "feasible": sum(r["feasible"] for r in runs), "cuts": cuts,
        "median_cut": statistics.median(cuts), "min_cut": min(cuts), "std_cut": _std(cuts),
        "median_time": statistics.median(times), "min_time": min(times), "std_time": _std(times),
        "mean_imbalance": _mean([r["imbalance"] for r in runs]),
        "median_levels": statistics.median(r["levels"] for r in runs),
        "matched_fraction": _mean([r["matched_fraction"] for r in runs]),
        "rounds": _mean([r["rounds"] for r in runs]),
        "clustered_levels": _mean([r["clustered_levels"] for r in runs]),
        "median_comm_volume": statistics.median(r["comm_volume"] for r in runs),
    }


def _mean(values):
    return sum(values) / len(values) if values else 0.0


def _std(values):
    return statistics.pstdev(values) if len(values) > 1 else 0.0


def _name(m):
    return m if isinstance(m, str) else getattr(m, "__name__", "custom")


def graph_set(graph):
    """[(label, Graph)] for one graph, a list of graphs, a {label: graph} dict, or a directory
    of graph files."""
    from .graph import Graph
    from .io import as_graph
    if isinstance(graph, dict):
        return [(str(label), as_graph(g)) for label, g in graph.items()]
    items = []
    for item in (graph if isinstance(graph, (list, tuple)) else [graph]):
        if isinstance(item, (str, os.PathLike)) and os.path.isdir(item):
            files = graph_files(item)  # a directory stands for its graph files
            if not files:
                raise FileNotFoundError(f"no graph files in directory {os.fspath(item)!r}")
            items += files
        else:
            items.append(item)
    if not items:
        raise ValueError("no graphs to compare")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, (str, os.PathLike)):
            label = os.path.basename(os.fspath(item)) or os.fspath(item)
        else:
            label = "graph" if len(items) == 1 else f"graph{i}"
        out.append((label, item if isinstance(item, Graph) else as_graph(item)))
    if len({label for label, _ in out}) < len(out):  # two files of the same name in different folders
        out = [(os.fspath(item) if isinstance(item, (str, os.PathLike)) else label, g)
               for (label, g), item in zip(out, items)]
    return out


def graph_files(directory):
    """The graph files of ``directory`` (by extension, optionally compressed), sorted by name."""
    from .io import EXTENSIONS
    from .io.source import plain_suffix
    names = sorted(os.listdir(directory))
    return [os.path.join(directory, f) for f in names
            if os.path.isfile(os.path.join(directory, f)) and plain_suffix(f) in EXTENSIONS]


# ---- performance profile ---------------------------------------------------------------------
def cut_ratios(rows):
    """{matcher: [median cut / best median cut of that graph, one per graph]}.

    A graph's best is over the matchers whose runs all met the balance bound; a matcher with
    an infeasible run on a graph gets ratio inf there (it did not solve that instance).
    """
    best = {}
    for r in rows:
        if r["feasible"] == r["runs"]:
            best[r["graph"]] = min(best.get(r["graph"], math.inf), r["median_cut"])
    ratios = {}
    for r in rows:
        b = best.get(r["graph"], math.inf)
        if r["feasible"] < r["runs"] or b == math.inf:
            ratio = math.inf
        elif b == 0:
            ratio = 1.0 if r["median_cut"] == 0 else math.inf
        else:
            ratio = r["median_cut"] / b
        ratios.setdefault(r["matcher"], []).append(ratio)
    return ratios


def performance_profile(rows, taus=(1.0, 1.01, 1.02, 1.05, 1.1, 1.2, 1.5, 2.0)):
    """{matcher: [fraction of graphs whose median cut is within tau x the best, per tau]}."""
    return {m: [sum(x <= tau for x in r) / len(r) for tau in taus] for m, r in cut_ratios(rows).items()}


def profile_rows(rows, taus=(1.0, 1.05, 1.1)):
    """One row per matcher over all graphs: the profile at a few taus, the geometric mean cut
    ratio to the best (over graphs it solved) and the geometric mean time."""
    ratios = cut_ratios(rows)
    out = []
    for m, r in ratios.items():
        times = [x["median_time"] for x in rows if x["matcher"] == m]
        finite = [x for x in r if math.isfinite(x)]
        row = {"matcher": m, "graphs": len(r), "solved": len(finite),
               "gmean_ratio": _gmean(finite) if finite else math.inf, "gmean_time": _gmean(times)}
        row.update({f"within_{tau:g}": sum(x <= tau for x in r) / len(r) for tau in taus})
        out.append(row)
    out.sort(key=lambda x: (-x["within_1"], x["gmean_ratio"]))
    return out


def _gmean(values):
    values = [max(v, 1e-12) for v in values]
    return math.exp(sum(math.log(v) for v in values) / len(values))


# ---- text, CSV, JSON -------------------------------------------------------------------------
COLUMNS = (("graph", "graph", "{}"), ("matcher", "matcher", "{}"), ("median cut", "median_cut", "{:g}"),
           ("min cut", "min_cut", "{:g}"), ("std cut", "std_cut", "{:.1f}"),
           ("median time [s]", "median_time", "{:.3f}"), ("levels", "median_levels", "{:g}"),
           ("matched", "matched_fraction", "{:.3f}"), ("rounds", "rounds", "{:.1f}"),
           ("mean imbalance", "mean_imbalance", "{:.4f}"), ("feasible", None, None))


def format_table(rows, columns=COLUMNS):
    """Rows (of ``compare`` or ``profile_rows``) as an aligned text table; columns missing from
    every row are left out, a value missing from one row shows as '-'."""
    columns = [c for c in columns if any((c[1] or "runs") in r for r in rows)]
    head = [c[0] for c in columns]
    body = [[_cell(r, key, fmt) for _, key, fmt in columns] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    left = [key in ("graph", "matcher") for _, key, _ in columns]  # names left, numbers right

    def line(cells):
        return "  ".join(c.ljust(w) if lj else c.rjust(w) for c, w, lj in zip(cells, widths, left)).rstrip()
    return "\n".join([line(head), "  ".join("-" * w for w in widths)] + [line(cells) for cells in body])


def _cell(row, key, fmt):
    if key is None:
        return f"{row['feasible']}/{row['runs']}"
    return fmt.format(row[key]) if key in row else "-"


PROFILE_COLUMNS = (("matcher", "matcher", "{}"), ("best", "within_1", "{:.0%}"),
                   ("within 5%", "within_1.05", "{:.0%}"), ("within 10%", "within_1.1", "{:.0%}"),
                   ("gmean cut/best", "gmean_ratio", "{:.3f}"), ("gmean time [s]", "gmean_time", "{:.3f}"),
                   ("graphs", "graphs", "{}"))


def to_csv(rows):
    """Rows as CSV text (lists such as ``cuts`` joined by ';')."""
    buf = _io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({key: ";".join(map(str, v)) if isinstance(v, list) else v for key, v in r.items()})
    return buf.getvalue()


def plot(rows, path, title=None):
    """Performance profile and cut vs time side by side, saved to ``path`` (needs matplotlib);
    the default title names the graphs and k."""
    from .compare_plot import draw
    rows = [dict(r, graph=r.get("graph", "graph")) for r in rows]
    points = {p["matcher"]: (p["gmean_time"], p["gmean_ratio"]) for p in profile_rows(rows)
              if math.isfinite(p["gmean_ratio"])}
    draw(cut_ratios(rows), points, path, title or default_title(rows))
    return path


TITLE_GRAPHS = 4  # graphs named in a title before "... (N graphs)"


def default_title(rows):
    graphs = list(dict.fromkeys(r.get("graph", "graph") for r in rows))
    named = ", ".join(graphs[:TITLE_GRAPHS]) + (f", ... ({len(graphs)} graphs)" if len(graphs) > TITLE_GRAPHS else "")
    ks = sorted({r["k"] for r in rows if "k" in r})
    return named + (f", k={','.join(map(str, ks))}" if ks else "")


class _CallableModule(types.ModuleType):
    """``matchpart.compare`` is both this module and its function: once the module is imported
    the package attribute is the module, so calling it calls the function (as documented)."""

    def __call__(self, *args, **kwargs):
        return self.compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
