"""Array backends: numpy/scipy on the CPU, cupy/cupyx on the GPU, behind one small namespace.

Algorithms are written once against ``Backend`` (``be.xp`` is numpy or cupy) and the
shared primitives below; ``get(device)`` picks the backend.
"""
from .core import Backend, get, gpu_available, backend_of

__all__ = ["Backend", "get", "gpu_available", "backend_of"]
