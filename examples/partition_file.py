"""Partition a graph file (or a generated graph) into k blocks and save the partition.

    python3 examples/partition_file.py [GRAPH] [K]

GRAPH defaults to ../shared/graphs/4elt.graph when present, else delaunay:20000.
"""
import os
import sys

import matchpart

here = os.path.dirname(os.path.abspath(__file__))
default = os.path.join(here, "..", "..", "shared", "graphs", "4elt.graph")
graph_arg = sys.argv[1] if len(sys.argv) > 1 else (default if os.path.exists(default) else "delaunay:20000")
k = int(sys.argv[2]) if len(sys.argv) > 2 else 8

g = matchpart.load_graph(graph_arg)
print(f"{graph_arg}: {g.n} vertices, {g.m} edges")
res = matchpart.partition(g, k, matcher="local_max", eps=0.03, seed=0, device="auto")
print(f"k={k}: cut {res.cut}, imbalance {res.imbalance:.4f}, feasible {res.feasible}, "
      f"{res.timings['total']:.2f} s")
print("block weights:", res.block_weights.tolist())
out = f"{os.path.basename(str(graph_arg)).replace(':', '_')}.part.{k}"
matchpart.write_partition(res.parts, out)
print(f"wrote {out} (one block id per line, METIS convention)")
