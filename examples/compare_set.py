"""Compare every matcher over a set of graphs and save the performance profile.

    python3 examples/compare_set.py [K] [REPEATS] [GRAPH_OR_DIR ...]

Defaults: k = 8, 2 repeats, ../shared/graphs when present, else three generated graphs.
Prints one row per graph and matcher, then per matcher on what fraction of the graphs its
cut is the best or within 5% / 10% of the best; saves profile.png (needs matplotlib).
"""
import os
import sys

import matchpart
from matchpart.compare import PROFILE_COLUMNS, format_table, plot, profile_rows

k = int(sys.argv[1]) if len(sys.argv) > 1 else 8
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 2
shared = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "graphs")
graphs = sys.argv[3:] or ([shared] if os.path.isdir(shared) else ["delaunay:5000", "rgg:5000", "grid:60x60"])
if len(graphs) == 1:
    graphs = graphs[0]  # one name: a graph or a directory of graphs

rows = matchpart.compare(graphs, k, repeats=repeats, device="cpu", progress=lambda line: print(line, flush=True))
print(format_table(rows))
print()
print(format_table(profile_rows(rows), PROFILE_COLUMNS))
try:
    plot(rows, "profile.png")
    print("wrote profile.png")
except ImportError as exc:
    print(exc)
