"""Shared test fixtures: the shared graphs folder, the GPU (real or CuPy stand-in), small graph builders."""
import os
import zlib
from pathlib import Path

import numpy as np
import pytest

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
SHARED_GRAPHS = SHARED / "graphs"


def shared_graph(name):
    """Path of ../shared/graphs/NAME, skipping the test when ../shared is absent."""
    p = SHARED_GRAPHS / name
    if not p.exists():
        pytest.skip(f"{p} not present (../shared is absent)")
    return p


def shared_graph_names():
    if not SHARED_GRAPHS.is_dir():
        return []
    return sorted(p.name for p in SHARED_GRAPHS.glob("*.graph"))


def import_recorder(watched):
    """Python source to run first in a fresh interpreter: a finder, first on sys.meta_path, that
    appends to ``import_attempts`` each name of ``watched`` whose import is attempted. Unlike a
    look at sys.modules, it catches an attempt whether or not the package is installed here."""
    return (f"import sys\n"
            f"class _Recorder:\n"
            f"    def find_spec(self, name, path=None, target=None):\n"
            f"        if name in {tuple(watched)!r}:\n"
            f"            import_attempts.append(name)\n"
            f"        return None   # the other finders import it, or fail to, as usual\n"
            f"import_attempts = []\n"
            f"sys.meta_path.insert(0, _Recorder())\n")


# Python source to run first in a fresh interpreter: every contraction of a hierarchy takes
# the parallel bucket kernel (coarsen/contract.py's thresholds set to 0, so that small graphs
# do), and ``parallel_calls`` records [chunks, numba's threads] of each call.
FORCE_PARALLEL_CONTRACTION = """
import importlib
import numba
contract_module = importlib.import_module("matchpart.coarsen.contract")   # not the function
contract_module.GATHER_MAX_VERTICES = contract_module.PARALLEL_MIN_ENTRIES = 0
contract_module.PARALLEL_MIN_THREADS = 0
parallel_calls, _parallel_kernel = [], contract_module._contract_parallel


def _recording_kernel(*args):
    parallel_calls.append([args[-1], numba.get_num_threads()])
    return _parallel_kernel(*args)


contract_module._contract_parallel = _recording_kernel
"""


def _real_gpu():
    from matchpart.backend import gpu_available
    return gpu_available()


REAL_GPU = _real_gpu()


@pytest.fixture(autouse=True)
def _gpu_or_standin(request, monkeypatch):
    """Tests marked ``gpu`` run on the real GPU when one is usable, else on the CuPy stand-in
    (tests/cupy_standin.py), so the GPU code paths are exercised everywhere."""
    if REAL_GPU or request.node.get_closest_marker("gpu") is None:
        yield
        return
    from matchpart.backend import core
    from cupy_standin import cupy, reseed, standin_backend
    # what a GPU leaves unspecified (which repeated write wins, float summation order) is
    # drawn per test from this seed; set MATCHPART_STANDIN_SEED to try other draws
    reseed([zlib.crc32(request.node.nodeid.encode()), int(os.environ.get("MATCHPART_STANDIN_SEED", "0"))])
    monkeypatch.setattr(core, "_cupy_or_reason", lambda: (cupy, None))
    monkeypatch.setattr(core, "_GPU", standin_backend())
    yield


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
