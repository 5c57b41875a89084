"""Refinement: Jet-style parallel label propagation, rebalancing, k-way and 2-way FM.

One module per job: heap.py (priority queue), gain_cache.py (block connectivity per
vertex), kway_fm.py and fm2.py (the compiled FM passes), fm.py (their entry points),
jet.py, rebalance.py (parallel rounds), least_loss.py (FM's serial rebalancer),
destinations.py (the best-block scan Jet and rebalancing share), packing.py
(heaviest-first packing), state.py (block weights, cut, validation), volume_gain.py and
volume.py (communication-volume gains and FM).
``jet_refine`` and ``rebalance`` run on either backend; FM runs on the CPU.
"""
from .destinations import best_destinations
from .fm import kway_fm
from .jet import jet_refine
from .rebalance import rebalance
from .volume import volume_fm

__all__ = ["jet_refine", "rebalance", "best_destinations", "kway_fm", "volume_fm"]
