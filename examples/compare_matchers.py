"""Compare matchers by the edge cut of the partitions they lead to, and by a single matching.

    python3 examples/compare_matchers.py [GRAPH] [K]
"""
import sys

import matchpart
from matchpart.compare import compare, format_table

graph_arg = sys.argv[1] if len(sys.argv) > 1 else "delaunay:20000"
k = int(sys.argv[2]) if len(sys.argv) > 2 else 8
g = matchpart.load_graph(graph_arg)

print(f"one matching of {graph_arg} per matcher (rating: weight)")
for name in matchpart.matchers.available():
    m = matchpart.match(g, name, seed=0, device="cpu")
    print(f"  {name:<18} weight {m.weight:>8}  matched {2 * m.cardinality / g.n:6.1%}  "
          f"rounds {m.stats.get('rounds', '?'):>3}  {m.time * 1e3:8.1f} ms")

print(f"\npartitions into {k} blocks, 2 seeds per matcher")
rows = compare(g, k, seeds=(0, 1), device="cpu", progress=lambda line: print("  ", line))
print(format_table(rows))
