"""matchpart: multilevel k-way graph partitioning with pluggable parallel matchers (CPU and GPU).

Public API::

    matchpart.partition(graph, k)        # the multilevel partitioner
    matchpart.match(graph, "local_max")  # one matching
    matchpart.Graph, matchpart.load_graph, matchpart.save_graph
    matchpart.matchers                   # registry: available(), describe(), register()
    matchpart.compare(graph, k)          # matchers compared by downstream cut
    matchpart.compat                     # pymetis / nxmetis call shapes (part_graph, nx_partition,
                                         # nested_dissection, part_mesh)
    matchpart.vertex_separator(graph)    # a vertex separator (labels 0 / 1 / 2)
    matchpart.order(graph)               # nested-dissection ordering: (perm, iperm)
    matchpart.part_mesh(elements, k)     # a mesh's elements and nodes (dual or nodal graph)
"""
from importlib import import_module

__version__ = "0.1.0"

# name -> module that defines it; imported on first use so `import matchpart` stays light
# (no numba compilation, no CuPy) until a feature is used.
_LAZY = {
    "Graph": "matchpart.graph",
    "as_graph": "matchpart.io",
    "load_graph": "matchpart.io",
    "save_graph": "matchpart.io",
    "read_partition": "matchpart.io",
    "write_partition": "matchpart.io",
    "generate": "matchpart.generators",
    "match": "matchpart.matchers",
    "Matching": "matchpart.matchers",
    "b_matching": "matchpart.matchers.b_suitor",
    "maximum_bipartite_matching": "matchpart.matchers.bipartite",
    "stable_marriage": "matchpart.matchers.stable_marriage",
    "partition": "matchpart.pipeline",
    "PartitionResult": "matchpart.pipeline",
    "compare": "matchpart.compare",
    "order": "matchpart.order",
    "vertex_separator": "matchpart.order.separator",
    "part_mesh": "matchpart.mesh",
    "dual_graph": "matchpart.mesh",
    "nodal_graph": "matchpart.mesh",
    "read_mesh": "matchpart.io.metis_mesh",
    "MatchpartError": "matchpart.errors",
    "GraphError": "matchpart.errors",
}

__all__ = sorted(_LAZY) + ["matchers", "backend", "__version__"]


def __getattr__(name):
    if name in ("matchers", "backend", "metrics", "io", "generators", "compat"):
        return import_module(f"matchpart.{name}")
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        # importing a submodule named like the attribute (matchpart.compare) binds the module on
        # the package; return that binding, so every access gives one object (that module is callable)
        return globals().get(name, value)
    raise AttributeError(f"module 'matchpart' has no attribute {name!r}")


def __dir__():
    return __all__
