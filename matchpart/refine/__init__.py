"""Refinement: Jet-style parallel label propagation, rebalancing, and k-way FM (CPU).

``jet_refine`` and ``rebalance`` work on either backend; ``kway_fm`` (refine/fm.py) is the
compiled CPU refiner for the quality preset and is imported on first use.
"""
from .balance import best_destinations, rebalance
from .jet import jet_refine

__all__ = ["jet_refine", "rebalance", "best_destinations", "kway_fm"]


def __getattr__(name):
    # fm.py is another module's job and compiles numba code: load it only when asked for
    if name == "kway_fm":
        from .fm import kway_fm
        return kway_fm
    raise AttributeError(f"module 'matchpart.refine' has no attribute {name!r}")
