"""Partition a networkx graph the nxmetis way and draw the blocks in colours.

    python3 examples/networkx_draw.py [K] [OUT.png]

Drawing needs matplotlib (pip install matchpart[plot]); without it the blocks are printed only.
"""
import sys

import networkx as nx

from matchpart.compat import nx_partition

k = int(sys.argv[1]) if len(sys.argv) > 1 else 3
out = sys.argv[2] if len(sys.argv) > 2 else "blocks.png"

G = nx.les_miserables_graph()  # weighted co-occurrence network, string node labels
objval, parts = nx_partition(G, k, edge_weight="weight", ubvec=[1.05])
print(f"cut weight {objval}")
for i, nodes in enumerate(parts):
    print(f"block {i} ({len(nodes)}): {', '.join(nodes[:6])}{' ...' if len(nodes) > 6 else ''}")

try:
    import matplotlib
except ImportError:
    matplotlib = None
if matplotlib is None:
    print("matplotlib is not installed: not drawing")
else:
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    block = {v: i for i, nodes in enumerate(parts) for v in nodes}
    pos = nx.spring_layout(G, seed=1, weight="weight")
    fig, ax = plt.subplots(figsize=(7, 6))
    nx.draw_networkx_edges(G, pos, ax=ax, alpha=0.25)
    nx.draw_networkx_nodes(G, pos, ax=ax, node_size=60, cmap="tab10", vmin=0, vmax=9,
                           node_color=[block[v] % 10 for v in G])
    ax.set_title(f"Les Miserables, k={k}, cut weight {objval}")
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
