"""Compile the kernels that common calls need into numba's on-disk cache, by making those calls:
``python -m matchpart.precompile`` (``-v``: the time of each step).

setup.py runs it while ``pip install .`` builds the package, with the built copy first on the
path, so the installed package carries its kernels compiled (numba stamps its cache by the
source file's sha256, the numba version, the CPU and the Python bytecode, so a copy of the
cache stays valid where all four match). Run it by hand where they do not (numba upgraded,
another CPU): it compiles into the installed package, as the first run would, but up front.

It runs the pipeline rather than listing kernels: whatever kernels the README command and the
calls below need compile, however the package's kernels change.
"""
from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path


def _steps(tmp):
    """(name, call) pairs: the README's command through the command line, then the library
    calls a user makes most: every preset, k = 2 and 32, both coarsenings, integer and float
    edge weights, vertex weights, a METIS file, two weights per vertex, one matching. Each combination of weight
    dtypes compiles the kernels again (20-25 s of a build each): float vertex weights, rare,
    compile on first use."""
    import numpy as np

    from . import generate, match, partition, save_graph
    from .refine import parallel_fm
    from .cli import main
    from .graph import Graph

    def cli(*args):
        def call():
            # the report and the compile notice would only clutter the build's log
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                assert main(["partition", *args, "-q", "-o", str(tmp / "out.part")]) == 0
        return call

    small = generate("delaunay:3000")
    heads = np.repeat(np.arange(small.n), np.diff(small.indptr))
    # symmetric, non-integral: float64 edge weights, for which the kernels compile again
    float_edges = Graph(small.indptr, small.indices, 1 + (heads * small.indices % 7) / 3, small.vwgt)
    int_vertices = Graph(small.indptr, small.indices, small.ewgt, 1 + np.arange(small.n) % 3)
    metis_file = tmp / "small.graph"
    save_graph(int_vertices, str(metis_file))
    ncon_file = tmp / "ncon.graph"        # two weights per vertex: the multi-constraint V-cycle
    save_graph(small.with_vertex_weights(np.stack([np.ones(small.n), np.diff(small.indptr)], axis=1)
                                         .astype(np.int64)), str(ncon_file))
    steps = [("README: partition delaunay:100000 8", cli("delaunay:100000", "8"))]
    steps += [(f"partition {preset} k=2, 32", lambda preset=preset: [partition(small, k, preset=preset, device="cpu")
                                                                        for k in (2, 32)])
              for preset in ("default", "fast", "strong")]
    steps += [
        ("partition rgg, rmat, ba k=8", lambda: [partition(spec, 8, device="cpu")
                                                 for spec in ("rgg:3000", "rmat:11", "ba:3000:3")]),
        ("partition rmat relabelled", lambda: _with_small_relabel(lambda: partition("rmat:11", 8, device="cpu"))),
        ("partition rgg renumbered breadth-first",
         lambda: _with_small_relabel(lambda: partition("rgg:3000", 8, device="cpu"))),
        ("partition rgg renumbered breadth-first, one thread (the queue)",
         lambda: _with_small_relabel(lambda: partition("rgg:3000", 8, device="cpu", threads=1))),
        ("partition cluster coarsening", lambda: partition(small, 8, coarsening="cluster", device="cpu")),
        ("partition deep multilevel (many blocks)", lambda: partition("rgg:3000", 130, device="cpu")),
        ("partition objtype=vol", lambda: partition(small, 8, objtype="vol", device="cpu")),
        ("partition vertex weights, METIS file", cli(str(metis_file), "8")),
        ("partition two weights per vertex (ncon = 2), METIS file", cli(str(ncon_file), "8")),
        ("partition float edge weights", lambda: partition(float_edges, 8, device="cpu")),
        ("parallel FM, float edge weights", lambda: parallel_fm.with_pair_rounds(lambda: partition(float_edges, 8, device="cpu"))),
        ("threaded gathering, float edge weights",
         lambda: _with_threaded_gathering(lambda: partition(float_edges, 8, device="cpu"))),
        ("match local_max", lambda: match(small, device="cpu")),
    ]
    return steps


def _with_threaded_gathering(call):
    """``call`` with coarsen/contract's threaded gathering on levels of any size (it takes
    over from 200 000 entries on two threads or more: the README's command compiles it for
    integer weights only)."""
    import importlib
    contract = importlib.import_module("matchpart.coarsen.contract")    # the module, not the function
    saved = contract.PARALLEL_MIN_ENTRIES
    contract.PARALLEL_MIN_ENTRIES = 0
    try:
        call()
    finally:
        contract.PARALLEL_MIN_ENTRIES = saved


def _with_small_relabel(call):
    """``call`` with relabel.py's and locality.py's numberings on graphs of any size (they take
    over from 2^17 vertices): rmat:11 is heavy-tailed enough (max degree 35 x the mean), rgg:3000
    scattered and of mean degree 7.5."""
    from . import relabel
    saved = relabel.RELABEL_MIN_VERTICES
    relabel.RELABEL_MIN_VERTICES = 0
    try:
        call()
    finally:
        relabel.RELABEL_MIN_VERTICES = saved


def run(verbose=False):
    with tempfile.TemporaryDirectory() as tmp:
        for name, call in _steps(Path(tmp)):
            t0 = time.perf_counter()
            call()
            if verbose:
                print(f"{time.perf_counter() - t0:7.1f} s  {name}", flush=True)


if __name__ == "__main__":
    run(verbose="-v" in sys.argv[1:])
