"""Vertex separators and nested-dissection orderings: vertex_separator, order, fill (lazily imported).

Modules: cover (minimum vertex cover of a bipartite graph, Konig), sepfm (separator FM
refinement), separator (multilevel vertex separators), mindegree (minimum degree for the
leaves), compress (identical-adjacency compression), locality (breadth-first renumbering), thin
(separator thinning by minimum covers), nested (the nested-dissection driver),
fill (elimination tree, column counts, nnz(L), flops).
"""
import sys
import types
from importlib import import_module

_LAZY = {
    "vertex_separator": "matchpart.order.separator",
    "SeparatorResult": "matchpart.order.separator",
    "min_vertex_cover": "matchpart.order.cover",
    "order": "matchpart.order.nested",
    "OrderResult": "matchpart.order.nested",
    "nested_dissection": "matchpart.order.nested",
    "fill": "matchpart.order.fill",
    "FillResult": "matchpart.order.fill",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'matchpart.order' has no attribute {name!r}")


def __dir__():
    return __all__


class _CallableModule(types.ModuleType):
    """``matchpart.order`` is both this package and its function (as ``matchpart.compare`` is):
    calling the package calls ``nested.order``."""

    def __call__(self, *args, **kwargs):
        return import_module("matchpart.order.nested").order(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
