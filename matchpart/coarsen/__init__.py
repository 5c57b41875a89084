"""Coarsening: contraction of a mapping, the multilevel hierarchy, and a clustering coarsener."""
from .cluster import cluster_labels, cluster_mapping
from .contract import contract, mapping_from_labels, mapping_from_matching, sum_by_index
from .hierarchy import Level, coarsen, level_summaries, max_coarse_vertex_weight
from .twohop import two_hop_pairs

__all__ = ["contract", "mapping_from_matching", "mapping_from_labels", "sum_by_index", "coarsen",
           "Level", "level_summaries", "max_coarse_vertex_weight", "two_hop_pairs", "cluster_labels",
           "cluster_mapping"]
