"""The Backend namespace and ``get(device)``: xp, sparse, transfers and shared primitives."""
from __future__ import annotations

import functools
import importlib

import numpy as np

from ..errors import DeviceError
from . import rng

DEVICES = ("auto", "cpu", "gpu")


@functools.lru_cache(maxsize=1)
def _cupy_or_reason():
    """Return (cupy module, None) when a GPU is usable, else (None, reason)."""
    try:
        import cupy  # noqa: F401
        import cupyx.scipy.sparse  # noqa: F401
    except Exception as exc:  # ImportError, or a broken CUDA install
        return None, f"CuPy is not importable ({exc.__class__.__name__}: {exc}); install matchpart[cuda12] or matchpart[cuda13]"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, "CuPy found no CUDA device"
        cupy.arange(4).sum().item()  # a real round trip: catches driver/runtime mismatch
    except Exception as exc:
        return None, f"CUDA device not usable ({exc.__class__.__name__}: {exc})"
    return cupy, None


def gpu_available() -> bool:
    """True when CuPy imports and a CUDA device answers."""
    return _cupy_or_reason()[0] is not None


class Backend:
    """A small namespace of array functions for one device.

    Attributes: ``name`` ("cpu" or "gpu"), ``xp`` (numpy or cupy), ``sparse``
    (scipy.sparse or cupyx.scipy.sparse). Methods move arrays and provide the primitives
    the algorithms share, so that no algorithm needs to know which device it runs on.
    """

    def __init__(self, name, xp, sparse, scatter=None):
        self.name = name
        self.xp = xp
        self._sparse = sparse
        # the module with scatter_add/max/min (cupyx on the GPU); numpy's ufunc.at on the CPU
        self._scatter = scatter

    def __repr__(self):
        return f"Backend({self.name!r})"

    @property
    def sparse(self):
        """scipy.sparse or cupyx.scipy.sparse; the CPU backend imports scipy on first use (most
        commands never need it, and it costs a fifth of the command line's start-up)."""
        if isinstance(self._sparse, str):
            self._sparse = importlib.import_module(self._sparse)
        return self._sparse

    @property
    def is_gpu(self):
        return self.name == "gpu"

    # ---- transfers -------------------------------------------------------------
    def to_device(self, a):
        """An array (or None) on this backend's device."""
        if a is None:
            return None
        if self.is_gpu:
            return self.xp.asarray(a)
        if hasattr(a, "get") and not isinstance(a, np.ndarray):
            return a.get()
        return np.asarray(a)

    def to_host(self, a):
        """A numpy array (or the value unchanged when it is not an array)."""
        if a is None:
            return None
        if hasattr(a, "get") and not isinstance(a, np.ndarray):
            return a.get()
        return np.asarray(a)

    def scalar(self, a):
        """A Python scalar from a 0-d array (a host sync on the GPU)."""
        return a.item() if hasattr(a, "item") else a

    def synchronize(self):
        if self.is_gpu:
            self.xp.cuda.get_current_stream().synchronize()

    # ---- random numbers (counter based; same on both backends) -----------------
    def hash64(self, seed, stream, counter):
        return rng.hash64(self.xp, seed, stream, counter)

    def hash32(self, seed, stream, counter):
        return rng.hash32(self.xp, seed, stream, counter)

    def uniform(self, seed, stream, counter):
        return rng.uniform(self.xp, seed, stream, counter)

    def permutation(self, seed, stream, n):
        return rng.permutation(self.xp, seed, stream, n)

    # ---- CSR helpers -----------------------------------------------------------
    def row_ids(self, indptr, nnz=None):
        """For each CSR entry, the row it belongs to (int64). ``nnz`` is the number of entries
        (``indptr[-1]``); pass it when known (``graph.indices.shape[0]``): on the GPU reading
        it from ``indptr`` is a host sync."""
        xp = self.xp
        if not self.is_gpu:
            return np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64), np.diff(indptr))
        # CuPy (13 and 14) refuses a device array of repeat counts; the row of entry e is the
        # last row starting at or before e (side="right" skips empty rows)
        if nnz is None:
            nnz = int(indptr[-1])
        return xp.searchsorted(indptr, xp.arange(nnz, dtype=xp.int64), side="right") - 1

    def ranges(self, start, length):
        """Every position of the ranges ``start[i] .. start[i] + length[i] - 1``, concatenated,
        and for each position the range ``i`` it belongs to (both int64); e.g. the CSR
        entries of a subset of rows, with ``start = indptr[rows]``. One host sync on the GPU
        (the total length sizes the result)."""
        xp = self.xp
        offs = self.exclusive_cumsum(length)
        seg = self.row_ids(offs)
        return start[seg] + (xp.arange(seg.shape[0], dtype=xp.int64) - offs[seg]), seg

    def exclusive_cumsum(self, counts):
        """[0, c0, c0+c1, ...] of length len(counts)+1, int64."""
        xp = self.xp
        out = xp.zeros(counts.shape[0] + 1, dtype=xp.int64)
        xp.cumsum(counts, out=out[1:])
        return out

    def segment_sum(self, values, indptr):
        """Sum of ``values`` over each CSR row (0 for empty rows)."""
        xp = self.xp
        c = xp.zeros(values.shape[0] + 1, dtype=xp.result_type(values.dtype, xp.int64)
                     if values.dtype.kind in "iub" else values.dtype)
        xp.cumsum(values, out=c[1:])
        return c[indptr[1:]] - c[indptr[:-1]]

    def segment_max(self, values, indptr, empty):
        """Max of ``values`` over each CSR row; ``empty`` for rows without entries."""
        xp = self.xp
        n = indptr.shape[0] - 1
        out = xp.full(n, empty, dtype=values.dtype)
        if values.shape[0] == 0:
            return out
        if self.is_gpu:
            self.scatter_max(out, self.row_ids(indptr, values.shape[0]), values)
            return out
        nonempty = indptr[1:] > indptr[:-1]
        starts = indptr[:-1][nonempty]
        out[nonempty] = np.maximum.reduceat(values, starts)
        return out

    def segment_argmax(self, values, indptr):
        """Position (into ``values``) of each row's maximum, first one on ties; -1 if empty.

        Callers that need a specific tie-break should make ``values`` unique (e.g. pack a
        tie-break key into the low bits) before calling.
        """
        xp = self.xp
        n = indptr.shape[0] - 1
        if values.shape[0] == 0:
            return xp.full(n, -1, dtype=xp.int64)
        lo = values.min() if values.dtype.kind != "f" else -xp.inf
        mx = self.segment_max(values, indptr, lo)
        rows = self.row_ids(indptr, values.shape[0])
        pos = xp.arange(values.shape[0], dtype=xp.int64)
        cand = xp.where(values == mx[rows], pos, values.shape[0])
        best = xp.full(n, values.shape[0], dtype=xp.int64)
        self.scatter_min(best, rows, cand)
        return xp.where(best == values.shape[0], -1, best)

    # CUDA atomics (and so cupyx.scatter_*) have no signed 64-bit add, min or max. int64
    # targets run on a uint64 view instead: two's-complement addition is the same bit
    # operation as unsigned addition, and flipping the sign bit maps signed order onto
    # unsigned order, so results are exact and equal to numpy's.
    def scatter_min(self, target, index, values):
        """``target[index[i]] = min(target[index[i]], values[i])`` in place (repeats allowed)."""
        if self.is_gpu:
            self._scatter_ordered(self._scatter.scatter_min, target, index, values)
        else:
            np.minimum.at(target, index, values)
        return target

    def scatter_max(self, target, index, values):
        """``target[index[i]] = max(target[index[i]], values[i])`` in place (repeats allowed)."""
        if self.is_gpu:
            self._scatter_ordered(self._scatter.scatter_max, target, index, values)
        else:
            np.maximum.at(target, index, values)
        return target

    def scatter_add(self, target, index, values):
        """``target[index[i]] += values[i]`` in place (repeats allowed)."""
        if self.is_gpu:
            if target.dtype == self.xp.int64:
                u64 = self.xp.uint64
                self._scatter.scatter_add(target.view(u64), index, self._as_int64(values).view(u64))
            else:
                self._scatter.scatter_add(target, index, values)
        else:
            target += np.bincount(index, weights=values, minlength=target.shape[0]).astype(target.dtype, copy=False) \
                if values.dtype.kind == "f" else _bincount_int(index, values, target.shape[0])
        return target

    def _scatter_ordered(self, op, target, index, values):
        xp = self.xp
        if target.dtype != xp.int64:
            op(target, index, values)
            return
        u64 = xp.uint64
        sign = u64(1 << 63)
        flipped = target.view(u64)
        flipped ^= sign
        op(flipped, index, self._as_int64(values).view(u64) ^ sign)
        flipped ^= sign

    def _as_int64(self, values):
        """``values`` as a contiguous int64 device array (scalars broadcast by the caller's index)."""
        xp = self.xp
        return xp.ascontiguousarray(xp.asarray(values, dtype=xp.int64))

    def csr_matrix(self, data, indices, indptr, shape):
        """A CSR sparse matrix of this backend."""
        return self.sparse.csr_matrix((data, indices, indptr), shape=shape)


def _bincount_int(index, values, n):
    # np.bincount sums in float64, which loses exactness above 2**53: use add.at for ints.
    out = np.zeros(n, dtype=np.result_type(values.dtype, np.int64))
    np.add.at(out, index, values)
    return out


_CPU = Backend("cpu", np, "scipy.sparse")
_GPU = None


def get(device="auto") -> Backend:
    """The backend for ``device``: "cpu", "gpu", "auto" (GPU when usable, else CPU), or a Backend."""
    global _GPU
    if isinstance(device, Backend):
        return device
    if device not in DEVICES:
        raise DeviceError(f"unknown device {device!r}; choose one of {', '.join(DEVICES)}")
    if device == "cpu":
        return _CPU
    cupy, reason = _cupy_or_reason()
    if cupy is None:
        if device == "gpu":
            raise DeviceError(f"device='gpu' was requested but no GPU is usable: {reason}")
        return _CPU
    if _GPU is None:
        import cupyx.scipy.sparse as csp
        _GPU = Backend("gpu", cupy, csp, scatter=_UfuncAt(cupy))
    return _GPU


class _UfuncAt:
    """cupyx's scatter_add / scatter_max / scatter_min as CuPy's ufunc.at (the same CUDA
    atomics): CuPy 14 deprecates the former (on an H200 with CuPy 14.2 the gpu-marked tests
    raised 15 000 DeprecationWarnings); CuPy 13.0, the oldest allowed, has both."""

    def __init__(self, cupy):
        if all(hasattr(f, "at") for f in (cupy.add, cupy.maximum, cupy.minimum)):
            self.scatter_add, self.scatter_max, self.scatter_min = cupy.add.at, cupy.maximum.at, cupy.minimum.at
        else:                                   # a CuPy without ufunc.at (before 12.0)
            import cupyx
            self.scatter_add, self.scatter_max, self.scatter_min = (cupyx.scatter_add, cupyx.scatter_max,
                                                                    cupyx.scatter_min)


def backend_of(array) -> Backend:
    """The backend an array lives on (cupy arrays -> gpu, anything else -> cpu)."""
    if isinstance(array, np.ndarray) or not hasattr(array, "__cuda_array_interface__"):
        return _CPU
    return get("gpu")
