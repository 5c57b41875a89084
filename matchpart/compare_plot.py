"""Drawing ``compare`` rows: a performance profile next to cut vs time (needs matplotlib)."""
from __future__ import annotations

import math

MARKERS = "osD^v<>phX*"


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only: works without a display
        import matplotlib.pyplot as plt
        from matplotlib.ticker import NullFormatter
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install matplotlib (or matchpart[plot])") from None
    return plt, NullFormatter


def draw(ratios, points, path, title):
    """Left: the performance profile, the fraction of graphs on which a matcher's median cut is
    within a factor tau of the best, against tau (``ratios``: {matcher: cut / best per graph}).
    Right: ``points`` {matcher: (time, cut / best)}. Matchers are told apart by colour and
    marker in one legend outside the axes, so no label can overlap a point or another label."""
    plt, NullFormatter = _pyplot()
    finite = [x for r in ratios.values() for x in r if math.isfinite(x)]
    tau_max = max(1.1, max(finite, default=1.0) * 1.05)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    for i, (matcher, r) in enumerate(sorted(ratios.items())):
        style = dict(color=f"C{i % 10}", marker=MARKERS[i % len(MARKERS)], label=matcher)
        taus = sorted(x for x in r if math.isfinite(x))
        xs = [1.0] + taus + [tau_max]
        ys = [sum(x <= t for x in r) / len(r) for t in xs]
        left.step(xs, ys, where="post", markevery=list(range(1, len(xs) - 1)), markersize=5, **style)
        if matcher in points:
            right.scatter(*points[matcher], s=40, color=style["color"], marker=style["marker"])
    left.set_xlim(1.0, tau_max)
    left.set_ylim(-0.02, 1.02)
    left.set_xlabel("tau (cut within tau x the best)")
    left.set_ylabel("fraction of graphs")
    left.set_title("performance profile")
    right.set_xscale("log")
    right.xaxis.set_minor_formatter(NullFormatter())  # labelled minor ticks of a log axis run into each other
    right.set_xlabel("geometric mean time of partition() [s]")
    right.set_ylabel("geometric mean cut / best")
    right.set_title("cut vs time")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(0.86, 0.5), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.86, 0.95))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

