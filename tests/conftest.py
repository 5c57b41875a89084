"""Shared test fixtures: the shared graphs folder, GPU skipping, small graph builders."""
import os
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


def pytest_collection_modifyitems(config, items):
    from matchpart.backend import gpu_available
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no usable GPU (CuPy + CUDA device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
