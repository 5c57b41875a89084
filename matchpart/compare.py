"""Matchers compared where it matters: the edge cut of the partitions they lead to (tables, plots)."""
from __future__ import annotations

import statistics
import sys
import time
import types
import warnings

DEFAULT_SEEDS = (0, 1, 2)  # three seeds: enough for a median, cheap enough for every matcher


def compare(graph, k, matchers=None, *, seeds=DEFAULT_SEEDS, eps=0.03, device="auto", preset="default",
            rating="expansion_star2", progress=None):
    """Partition ``graph`` into ``k`` blocks once per (matcher, seed); one summary row per matcher.

    ``matchers``: names (or callables) to compare; default: every registered matcher.
    Each row is a dict: ``matcher``, ``median_cut``, ``min_cut``, ``median_time`` (seconds,
    whole ``partition`` call), ``mean_imbalance``, ``feasible`` (how many runs met the
    balance bound), ``runs``, and ``cuts`` (one per seed). Rows are sorted by median cut
    (feasible runs first). ``progress``, if given, is called with a line per finished run.
    """
    from .io import as_graph
    from .matchers import available
    from .matchers.registry import resolve
    from .pipeline import partition

    g = as_graph(graph)
    names = list(available()) if matchers is None else list(matchers)
    if not names:
        raise ValueError("no matchers to compare")
    for m in names:
        resolve(m)  # unknown names fail here, before any work
    seeds = tuple(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    rows = []
    for m in names:
        cuts, times, imbalances, feasible = [], [], [], 0
        for s in seeds:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # infeasible runs are counted in the row instead
                res = partition(g, k, matcher=m, rating=rating, eps=eps, seed=s, device=device, preset=preset)
            times.append(time.perf_counter() - t0)
            cuts.append(res.cut)
            imbalances.append(float(res.imbalance))
            feasible += bool(res.feasible)
            if progress is not None:
                progress(f"{_name(m)} seed {s}: cut {res.cut}, {times[-1]:.2f} s")
        rows.append({
            "matcher": _name(m),
            "median_cut": statistics.median(cuts),
            "min_cut": min(cuts),
            "median_time": statistics.median(times),
            "mean_imbalance": sum(imbalances) / len(imbalances),
            "feasible": feasible,
            "runs": len(seeds),
            "cuts": cuts,
        })
    rows.sort(key=lambda r: (r["feasible"] < r["runs"], r["median_cut"], r["median_time"]))
    return rows


def _name(m):
    return m if isinstance(m, str) else getattr(m, "__name__", "custom")


COLUMNS = (("matcher", "matcher", "{}"), ("median cut", "median_cut", "{:g}"), ("min cut", "min_cut", "{:g}"),
           ("median time [s]", "median_time", "{:.3f}"), ("mean imbalance", "mean_imbalance", "{:.4f}"),
           ("feasible", None, None))


def format_table(rows):
    """The rows of ``compare`` as an aligned text table."""
    head = [c[0] for c in COLUMNS]
    body = []
    for r in rows:
        cells = []
        for _, key, fmt in COLUMNS:
            cells.append(f"{r['feasible']}/{r['runs']}" if key is None else fmt.format(r[key]))
        body.append(cells)
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for cells in body:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    return "\n".join(lines)


def plot(rows, path, title=None):
    """Scatter of median cut against median time per matcher, saved to ``path`` (needs matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install matplotlib (or matchpart[plot])") from None
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in rows:
        ax.scatter(r["median_time"], r["median_cut"], s=30)
        ax.errorbar(r["median_time"], r["median_cut"], yerr=[[r["median_cut"] - r["min_cut"]], [0]],
                    fmt="none", capsize=3, alpha=0.5)
        ax.annotate(r["matcher"], (r["median_time"], r["median_cut"]), textcoords="offset points",
                    xytext=(4, 4), fontsize=8)
    ax.set_xlabel("median time of partition() [s]")
    ax.set_ylabel("median edge cut (bar: down to min)")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


class _CallableModule(types.ModuleType):
    """``matchpart.compare`` is both this module and its function: once the module is imported
    the package attribute is the module, so calling it calls the function (as documented)."""

    def __call__(self, *args, **kwargs):
        return self.compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
