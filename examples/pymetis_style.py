"""pymetis code, run by matchpart: the same call, the same (edge_cuts, parts) back.

    python3 examples/pymetis_style.py [K]

Swap the import and keep the rest of a pymetis script:
    import pymetis                          ->  from matchpart import compat as pymetis
"""
import sys

import numpy as np

from matchpart import compat as pymetis

k = int(sys.argv[1]) if len(sys.argv) > 1 else 2

# pymetis's README example: a 3x3 grid given as neighbour lists
adjacency = [np.array([4, 2, 1]), np.array([0, 2, 3]), np.array([4, 3, 1, 0]), np.array([1, 2, 5, 6]),
             np.array([0, 2, 5]), np.array([4, 3, 6]), np.array([5, 3])]
n_cuts, membership = pymetis.part_graph(k, adjacency=adjacency)
print(f"{k} blocks of a 7-vertex graph: cut {n_cuts}, membership {list(membership)}")

# CSR arrays with weights, METIS options (seed, ufactor = 1000 * eps), target block weights
xadj, adjncy = np.array([0, 2, 5, 7, 9, 12, 14]), np.array([1, 3, 0, 4, 2, 1, 5, 0, 4, 3, 1, 5, 4, 2])
eweights = np.array([1, 2, 1, 1, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1])
options = {"seed": 7, "ufactor": 100}  # a pymetis.Options object works too
parts = pymetis.part_graph(2, adjacency=pymetis.CSRAdjacency(xadj, adjncy), eweights=eweights,
                           tpwgts=[0.5, 0.5], options=options)
print(f"weighted 2x3 grid: cut {parts.edge_cuts}, membership {list(parts.vertex_part)}")

# METIS's objtype=vol: the total communication volume is minimised, and returned as METIS's objval
volume, vol_membership = pymetis.part_graph(k, adjacency=adjacency, options={"objtype": 1})
print(f"minimum-volume partition: volume {volume}, membership {list(vol_membership)}")

# an option matchpart has no equivalent for is refused, not ignored
try:
    pymetis.part_graph(2, adjacency=adjacency, options={"ptype": 0})
except pymetis.UnsupportedOptionError as exc:
    print(f"refused ({exc.kind}): {exc}")

try:  # the real pymetis side by side, when installed
    import pymetis as real
    print(f"pymetis itself: cut {real.part_graph(k, adjacency=adjacency).edge_cuts}")
except ImportError:
    pass
