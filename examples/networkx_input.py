"""Partition a networkx graph and get a {node: block} mapping back.

    python3 examples/networkx_input.py
"""
import networkx as nx

import matchpart

G = nx.les_miserables_graph()  # weighted co-occurrence network with string node labels
res = matchpart.partition(G, 3, seed=1, device="cpu")
print(f"cut {res.cut} (edge weight between blocks), imbalance {res.imbalance:.3f}")
for block in range(3):
    members = sorted(node for node, b in res.mapping.items() if b == block)
    print(f"block {block} ({len(members)}): {', '.join(members[:8])}{' ...' if len(members) > 8 else ''}")
