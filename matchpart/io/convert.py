"""as_graph: a Graph from whatever a user passes (a Graph, SciPy matrix, networkx graph, path or spec)."""
from __future__ import annotations

import sys

from ..errors import GraphError
from ..graph import Graph


def as_graph(obj, *, edge_weight="weight", node_weight=None):
    """A Graph from a Graph, scipy sparse matrix, networkx graph, file path or generator spec."""
    if isinstance(obj, Graph):
        return obj
    # scipy is imported only to partition scipy input: a scipy matrix implies it is loaded
    sp = sys.modules.get("scipy.sparse")
    if sp is not None and sp.issparse(obj):
        return Graph.from_scipy(obj)
    if hasattr(obj, "adj") and hasattr(obj, "nodes"):  # networkx graph
        return Graph.from_networkx(obj, edge_weight=edge_weight, node_weight=node_weight)
    if isinstance(obj, str) or hasattr(obj, "__fspath__"):
        # the package's own front door (format detection, specs); imported here because
        # matchpart.io imports this module
        from . import load_graph
        return load_graph(obj)
    raise GraphError(f"cannot make a graph from {type(obj).__name__}; pass a matchpart.Graph, a scipy "
                     "sparse matrix, a networkx graph, a file path or a generator spec like 'delaunay:1000'")
