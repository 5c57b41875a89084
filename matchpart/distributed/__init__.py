"""Distributed-memory partitioning and matching on MPI (mpi4py, imported on first use).

    mpiexec -n 4 matchpart partition graph.graph 8
    matchpart.distributed.partition(path_or_graph, k, comm=...)   # parts on rank 0
    matchpart.distributed.match(path_or_graph, seed=..., comm=...) # mate on rank 0
    matchpart.distributed.part_kway(vtxdist, xadj, adjncy, k, comm=...)  # ParMETIS's shape
"""
from importlib import import_module

_LAZY = {
    "DistGraph": "matchpart.distributed.dgraph",
    "scatter_graph": "matchpart.distributed.dgraph",
    "load": "matchpart.distributed.read",
    "read_metis": "matchpart.distributed.read",
    "match": "matchpart.distributed.api",
    "partition": "matchpart.distributed.api",
    "part_kway": "matchpart.distributed.parmetis",
    "DistributedError": "matchpart.distributed.comm",
    "Comm": "matchpart.distributed.comm",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'matchpart.distributed' has no attribute {name!r}")
