"""A CPU stand-in for CuPy, so that the GPU code paths run (and are tested) where no GPU is.

Without a usable GPU, tests marked ``gpu`` run against ``standin_backend()``: a Backend
named "gpu" whose ``xp`` is this module's numpy-backed imitation of the cupy namespace.
Every ``be.is_gpu`` branch then executes in CI. It is not an emulator of speed or memory;
it enforces the rules under which code that passes on numpy still fails or silently
differs on CuPy, in every version pyproject.toml allows (13.0.0, the oldest, to 14.2.0):

- only names of the real cupy namespace, and only keyword arguments its functions and
  ndarray methods take, in the oldest CuPy pyproject.toml allows (13.0.0; names listed in
  tests/cupy_names.txt, those of both 13.0.0 and 14.2.0): e.g. no ``a.max(initial=...)``,
  ``a.sum(where=...)``, ``asarray(copy=...)`` or ``argsort(kind=...)`` as a method;
- a device array never turns into a numpy array implicitly: ``np.asarray``, a numba
  kernel or a numpy array mixed into a device computation raise, as on CuPy; ``.get()``
  and ``cupy.asnumpy`` are the ways back, ``cupy.asarray`` copies the other way;
- reductions and scalar indexing give 0-d device arrays, and a device array has no
  ``__index__`` (``int()`` is needed to use it as a size or a Python index: ``zeros(n_dev)``
  or ``arange(n_dev)`` raise);
- sorts are stable (CuPy's are; numpy's default is not), ``lexsort`` takes one stacked
  array, not a tuple of keys, and an in-place ``sort`` of a non-contiguous view raises;
- ``repeat`` refuses a device array of counts (CuPy 13 and 14: "cupy.ndarray cannot be
  specified as `repeats` argument");
- ``bincount`` synchronises twice (CuPy checks ``(x < 0).any()`` and computes the output
  size from ``x.max()`` on the host, even with ``minlength``), refuses float and empty input
  (``max`` of an empty array raises on CuPy 13) and always returns float64 when weighted;
- ``cupyx.scatter_add/max/min`` take only the dtypes CUDA atomics support;
- an integer-array assignment with repeated indices keeps a random one of the writes for
  each element (rows written to one index can be torn, as by a GPU's elementwise scatter),
  drawn afresh for every assignment (on CuPy the winner is unspecified), so code that
  depends on which write wins differs from run to run; the draws come from a seeded
  generator (``reseed``; tests/conftest.py seeds it per test), so a failure reproduces;
- float sums whose order is unspecified on a GPU run in a random order here: float
  ``scatter_add``, weighted ``bincount``, ``sum`` and ``cumsum`` (a blocked scan with a
  random block size) differ in the last bits from numpy's order, as on a GPU;
- type promotion where NumPy 2 (and CuPy 14, NEP 50) differs from CuPy 13 (value-based
  casting of NumPy scalars, as NumPy 1) raises, e.g. an int32 array plus ``np.int64(1)``
  (int64 on NumPy 2, int32 on CuPy 13): make such casts explicit.

The sync counter (``SyncCounter``) counts what makes CuPy wait for the device.
"""
from __future__ import annotations

import os
import traceback
import types
from pathlib import Path

import numpy as np


def _read_names():
    names = {}
    for line in Path(__file__).with_name("cupy_names.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, params = line.partition("\t")
            names[name] = tuple(params.split(",")) if params else None
    return names


CUPY_NAMES = _read_names()
# cupyx.scatter_* dtypes, as CuPy's own tests check them ('iILQefd' and 'iILQfd')
SCATTER_ADD_DTYPES = {np.dtype(c) for c in "iILQefd"}
SCATTER_MINMAX_DTYPES = {np.dtype(c) for c in "iILQfd"}
# ndarray members of both cupy 13.0.0 and 14.2.0 (dir(cupy.ndarray), public part; 13.0.0
# lacks byteswap and mT)
NDARRAY_MEMBERS = frozenset("""
T all any argmax argmin argpartition argsort astype base choose clip compress conj
conjugate copy cstruct cumprod cumsum data device diagonal dot dtype dump dumps fill flags
flat flatten get imag item itemsize max mean min nbytes ndim nonzero partition prod ptp
put ravel real reduced_view repeat reshape round scatter_add scatter_max scatter_min
searchsorted set shape size sort squeeze std strides sum swapaxes take toDlpack tobytes
tofile tolist trace transpose var view""".split())
# keyword parameters of the ndarray methods in cupy 13.0.0 (their signatures in the
# compiled cupy/_core/core module); numpy's extras (initial=, where=, kind=) are not there
NDARRAY_METHOD_PARAMS = {
    "all": "axis,out,keepdims", "any": "axis,out,keepdims", "max": "axis,out,keepdims",
    "min": "axis,out,keepdims", "ptp": "axis,out,keepdims",
    "argmax": "axis,out,dtype,keepdims", "argmin": "axis,out,dtype,keepdims",
    "sum": "axis,dtype,out,keepdims", "prod": "axis,dtype,out,keepdims", "mean": "axis,dtype,out,keepdims",
    "cumsum": "axis,dtype,out", "cumprod": "axis,dtype,out",
    "argsort": "axis", "sort": "axis", "argpartition": "kth,axis", "partition": "kth,axis",
    "astype": "dtype,order,casting,subok,copy", "clip": "min,max,out", "copy": "order",
    "flatten": "order", "ravel": "order", "reshape": "order", "repeat": "repeats,axis",
    "take": "indices,axis,out", "searchsorted": "v,side,sorter", "nonzero": "", "fill": "value",
    "round": "decimals,out", "view": "dtype,array_class", "squeeze": "axis", "compress": "condition,axis,out",
    "put": "indices,values,mode", "transpose": "", "swapaxes": "axis1,axis2", "item": "", "tolist": "",
}
NDARRAY_METHOD_PARAMS = {k: tuple(v.split(",")) if v else () for k, v in NDARRAY_METHOD_PARAMS.items()}
# cupy functions that accept host data (they copy it to the device)
HOST_INPUT_OK = frozenset({"asarray", "array", "asanyarray"})


class SyncCounter:
    """Counts the operations that make CuPy wait for the device: a value read on the host
    (bool, int, float, item, get), a result whose size depends on the data (boolean-mask
    indexing, nonzero/flatnonzero, unique), and bincount (two: its input check and its size)."""

    count = 0


def _sync(n=1):
    SyncCounter.count += n


SIZE_DEPENDS_ON_DATA = frozenset({"flatnonzero", "nonzero", "argwhere", "unique", "compress", "extract"})


class CupyRuleError(TypeError):
    """Code did something that fails (or is undefined) on CuPy."""


# ---- what a GPU leaves unspecified: drawn from a seeded generator ------------------------
_RNG = np.random.default_rng(0)


def reseed(seed):
    """Seed the draws for repeated-index winners and float summation orders (a failure then
    reproduces with the same seed; tests/conftest.py seeds per test)."""
    global _RNG
    _RNG = np.random.default_rng(seed)


# STANDIN_AUDIT=FILE: append the matchpart call sites of writes whose winner matters (repeated
# positions written with different values, the array's last slot, a trash slot, excepted)
_AUDIT = os.environ.get("STANDIN_AUDIT")


def _audit_write(pos, value, trash):
    o = np.argsort(pos, kind="stable")
    p, v = pos[o], value[o]
    same = (p[1:] == p[:-1]) & (p[1:] != trash)
    if (same & (v[1:] != v[:-1])).any():
        where = [f"{f.filename.split('matchpart/')[-1]}:{f.lineno}" for f in traceback.extract_stack()[:-2]
                 if "/matchpart/" in f.filename]
        with open(_AUDIT, "a") as fh:
            fh.write(" <- ".join(reversed(where[-2:])) + f"  dup={int(same.sum())}\n")


def _shuffled(n):
    return _RNG.permutation(n)


# ---- moving between the stand-in "device" and numpy --------------------------------------
def _unwrap(x, where, host_ok=False):
    if isinstance(x, DeviceArray):
        return x._a
    if isinstance(x, np.ndarray) and not host_ok:
        raise CupyRuleError(f"{where}: a numpy array was mixed into a device computation "
                            f"(CuPy raises 'Unsupported type numpy.ndarray'); move it with cupy.asarray")
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(i, where, host_ok) for i in x)
    return x


def _wrap(x):
    if isinstance(x, np.ndarray):
        return DeviceArray(x)
    if isinstance(x, np.generic):
        return DeviceArray(np.asarray(x))
    if isinstance(x, tuple):
        return tuple(_wrap(i) for i in x)
    if isinstance(x, list):
        return [_wrap(i) for i in x]
    return x


def _index(key):
    """An index for numpy: device arrays unwrapped (CuPy also takes host arrays and lists)."""
    if isinstance(key, tuple):
        return tuple(_index(k) for k in key)
    return _unwrap(key, "indexing", host_ok=True)


class DeviceArray:
    """A numpy array that behaves like a cupy.ndarray at the boundaries CuPy enforces."""

    __slots__ = ("_a",)
    __hash__ = None  # cupy arrays are unhashable

    def __init__(self, a):
        self._a = a

    # -- the ways to and from the host ---------------------------------------------------
    def get(self, stream=None, order="C", out=None, blocking=True):
        _sync()
        return np.array(self._a, order=order, copy=True)

    def __array__(self, dtype=None, copy=None):
        raise CupyRuleError("Implicit conversion to a NumPy array is not allowed (CuPy): use .get() "
                            "or backend.to_host()")

    @property
    def __cuda_array_interface__(self):
        return {"shape": self._a.shape, "typestr": self._a.dtype.str, "data": (0, False), "version": 3}

    # -- numpy protocols: a numpy function or ufunc applied to a device array ------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method not in ("__call__", "reduce", "accumulate"):
            raise CupyRuleError(f"numpy.{ufunc.__name__}.{method} on a device array: use the backend's "
                                f"scatter/segment primitives")
        where = f"numpy.{ufunc.__name__}"
        if method == "__call__" and kwargs.get("out") is None:
            _check_promotion(ufunc, inputs)
        args = [_unwrap(x, where) for x in inputs]
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_unwrap(o, where) for o in out)
        result = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types_, args, kwargs):
        impl = getattr(cupy, func.__name__, None)
        if impl is None or func.__name__ not in CUPY_NAMES:
            raise CupyRuleError(f"numpy.{func.__name__} has no CuPy implementation for device arrays")
        return impl(*args, **kwargs)

    # -- Python protocols ----------------------------------------------------------------
    def __getitem__(self, key):
        key = _index(key)
        if any(isinstance(k, np.ndarray) and k.dtype == bool for k in (key if isinstance(key, tuple) else (key,))):
            _sync()
        return _wrap(self._a[key])

    def __setitem__(self, key, value):
        key = _index(key)
        value = _unwrap(value, "assignment", host_ok=True)
        keys = key if isinstance(key, tuple) else (key,)
        if not any(isinstance(k, np.ndarray) and k.dtype.kind in "iu" for k in keys):
            self._a[key] = value
            return
        # an integer-array index may repeat positions: CuPy leaves which write wins
        # unspecified, so here a random one does (numpy's last write wins after a shuffle)
        if isinstance(key, np.ndarray) and key.ndim == 1 and self._a.ndim == 1:
            pos = key
        else:  # the flat position of every element written, in the order numpy writes them
            pos = np.arange(self._a.size).reshape(self._a.shape)[key]
        value = np.broadcast_to(np.asarray(value), pos.shape).reshape(-1)
        if _AUDIT is not None:
            _audit_write(pos.reshape(-1), value, self._a.size - 1)
        order = _shuffled(value.shape[0])
        self._a.flat[pos.reshape(-1)[order]] = value[order]

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(x) for x in self._a)

    def __bool__(self):
        _sync()
        return bool(self._a)

    def __int__(self):
        _sync()
        return int(self._a)

    def __float__(self):
        _sync()
        return float(self._a)

    def __repr__(self):
        return f"standin_array({self._a!r})"

    # -- members ---------------------------------------------------------------------------
    @property
    def shape(self):
        return self._a.shape

    @property
    def dtype(self):
        return self._a.dtype

    @property
    def ndim(self):
        return self._a.ndim

    @property
    def size(self):
        return self._a.size

    @property
    def T(self):
        return DeviceArray(self._a.T)

    def item(self):
        _sync()
        return self._a.item()

    def tolist(self):
        _sync()
        return self._a.tolist()

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        return DeviceArray(self._a.astype(dtype, order=order, copy=copy))

    def argsort(self, axis=-1):  # no kind= on the method in CuPy 13
        return cupy.argsort(self, axis=axis)

    def sort(self, axis=-1):
        if not self._a.flags.c_contiguous:
            raise NotImplementedError("Sorting non-contiguous array is not supported. (CuPy)")
        self._a.sort(axis=axis, kind="stable")

    def __getattr__(self, name):
        if name not in NDARRAY_MEMBERS:
            raise AttributeError(f"cupy.ndarray has no attribute {name!r}")
        member = getattr(self._a, name)
        if not callable(member):
            return _wrap(member)
        params = NDARRAY_METHOD_PARAMS.get(name)
        # these follow the namespace function's CuPy rules (repeat counts, float order)
        routed = getattr(cupy, name) if name in ("sum", "cumsum", "repeat") else None

        def method(*args, **kwargs):
            where = f"ndarray.{name}"
            bad = [k for k in kwargs if params is not None and k not in params]
            if bad:
                raise CupyRuleError(f"cupy.ndarray.{name} has no keyword argument {bad[0]!r} "
                                    f"(it takes {', '.join(params) or 'none'})")
            if routed is not None:
                return routed(self, *args, **kwargs)
            if name in SIZE_DEPENDS_ON_DATA:
                _sync()
            return _wrap(member(*_unwrap(args, where), **{k: _unwrap(v, where) for k, v in kwargs.items()}))
        return method


def _operator(ufunc, reflected=False, inplace=False):
    if inplace:
        return lambda self, other: ufunc(self, other, out=(self,))
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


for _name, _ufunc in {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
                      "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power,
                      "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
                      "lshift": np.left_shift, "rshift": np.right_shift, "matmul": np.matmul}.items():
    setattr(DeviceArray, f"__{_name}__", _operator(_ufunc))
    setattr(DeviceArray, f"__r{_name}__", _operator(_ufunc, reflected=True))
    setattr(DeviceArray, f"__i{_name}__", _operator(_ufunc, inplace=True))
for _name, _ufunc in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                      "gt": np.greater, "ge": np.greater_equal}.items():
    setattr(DeviceArray, f"__{_name}__", _operator(_ufunc))
for _name, _ufunc in {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}.items():
    setattr(DeviceArray, f"__{_name}__", lambda self, _u=_ufunc: _u(self))


# ---- the namespace -------------------------------------------------------------------------
def _check_kind(kind):
    if kind not in (None, "stable"):
        raise CupyRuleError(f"cupy sorts take kind=None (always stable), got kind={kind!r}")


def _argsort(a, axis=-1, kind=None):
    _check_kind(kind)
    return DeviceArray(np.argsort(_unwrap(a, "cupy.argsort"), axis=axis, kind="stable"))


def _sort(a, axis=-1, kind=None):
    _check_kind(kind)
    return DeviceArray(np.sort(_unwrap(a, "cupy.sort"), axis=axis, kind="stable"))


def _lexsort(keys):
    if not isinstance(keys, DeviceArray):
        raise CupyRuleError("cupy.lexsort takes one (k, n) device array: stack the keys first")
    if keys.ndim > 2:
        raise CupyRuleError("cupy.lexsort supports keys of rank 1 or 2 only")
    return DeviceArray(np.lexsort(keys._a))


def _to_device(a, dtype=None, copy=False):
    if isinstance(a, DeviceArray):
        out = a._a if dtype is None or np.dtype(dtype) == a.dtype else a._a.astype(dtype)
        return DeviceArray(out.copy() if copy else out)
    # from the host: always a copy (device memory is not host memory)
    return DeviceArray(np.array(_unwrap(a, "cupy.asarray", host_ok=True), dtype=dtype, copy=True))


def _asarray(a, dtype=None, order=None, *, blocking=False):  # no copy= before CuPy 14
    return _to_device(a, dtype)


# ---- functions whose CuPy behaviour differs from numpy's (run on unwrapped arrays) -------
def _no_device_size(name):
    def check(args, kwargs):
        values = list(args[:1]) if name != "arange" else list(args[:3]) + \
            [kwargs.get(k) for k in ("start", "stop", "step")]
        for v in values:
            for x in (v if isinstance(v, (tuple, list)) else (v,)):
                if isinstance(x, DeviceArray):
                    raise CupyRuleError(f"cupy.{name}: a device array as a size or bound (CuPy arrays have "
                                        f"no __index__); use int(...) (a host sync)")
    return check


def _check_repeat(args, kwargs):
    repeats = args[1] if len(args) > 1 else kwargs.get("repeats")
    if isinstance(repeats, DeviceArray):
        raise ValueError("cupy.ndarray cannot be specified as `repeats` argument. (CuPy 13 and 14)")


def _bincount(x, weights=None, minlength=None):
    # as cupy/_statistics/histogram.py (13.0): '(x < 0).any()  # synchronize!' and
    # 'size = int(cupy.max(x)) + 1  # synchronize!', minlength or not
    if x.ndim != 1:
        raise ValueError("object too deep for desired array")
    if x.dtype.kind == "f":
        raise TypeError("x must be int array")
    _sync(1)
    if (x < 0).any():
        raise ValueError("The first argument of bincount must be non-negative")
    if x.size == 0:
        raise ValueError("zero-size array to reduction operation cupy_max which has no identity "
                         "(cupy.bincount of an empty array)")
    if isinstance(minlength, np.ndarray):
        _sync(1)  # int(minlength)
    _sync(1)
    minlength = 0 if minlength is None else int(minlength)
    if weights is None:
        return np.bincount(x, minlength=minlength).astype(np.intp)
    # atomicAdd into float64 bins: the order of the additions is unspecified
    order = _shuffled(x.size)
    return np.bincount(x[order], weights=np.asarray(weights)[order].astype(np.float64), minlength=minlength)


def _sum(a, axis=None, dtype=None, out=None, keepdims=False):
    a = np.asarray(a)
    if a.dtype.kind in "fc" and axis is None and out is None and a.size > 2:
        # a GPU reduction adds in an unspecified (tree) order: shuffle the terms
        total = np.sum(a.reshape(-1)[_shuffled(a.size)], dtype=dtype)
        return np.reshape(total, (1,) * a.ndim) if keepdims else total
    return np.sum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def _cumsum(a, axis=None, dtype=None, out=None):
    a = np.asarray(a)
    kind = np.dtype(dtype).kind if dtype is not None else a.dtype.kind
    if kind not in "fc" or a.size <= 2 or (a.ndim != 1 and axis is None) or (a.ndim > 1):
        return np.cumsum(a, axis=axis, dtype=dtype, out=out)
    # a GPU scan adds block by block: prefix sums within blocks of a random size, then
    # each block's offset (the scan of the block totals) added on top
    n = a.shape[0]
    b = int(_RNG.integers(2, 65))
    x = np.zeros(-(-n // b) * b, dtype=dtype or a.dtype)
    x[:n] = a
    inner = np.cumsum(x.reshape(-1, b), axis=1)
    offsets = np.concatenate([np.zeros(1, inner.dtype), np.cumsum(inner[:-1, -1])])
    result = (inner + offsets[:, None]).reshape(-1)[:n]
    if out is None:
        return result
    out[...] = result
    return out


COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                         "logical_and", "logical_or", "logical_xor"})


def _legacy_dtype(arrays, scalars):
    """The dtype CuPy 13 computes in: NumPy 1's value-based rule for NumPy scalars (a scalar
    of a kind no higher than the arrays' counts by its value, not its type)."""
    category = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    if max(category[s.dtype.kind] for s in scalars) <= max(category[a.dtype.kind] for a in arrays):
        scalar_dtypes = [np.min_scalar_type(s) for s in scalars]
    else:
        scalar_dtypes = [s.dtype for s in scalars]
    return np.result_type(*[a.dtype for a in arrays], *scalar_dtypes)


def _check_promotion(ufunc, inputs):
    """Raise where NumPy 2 (and CuPy 14, NEP 50) and CuPy 13 compute a ufunc of device arrays
    and NumPy scalars in different dtypes (e.g. int32 array + np.int64(1): int64 vs int32).
    Python scalars are weak in NEP 50 and value-based in CuPy 13: the same dtype whenever the
    value fits, so they are not checked; comparisons give bool either way."""
    arrays = [x for x in inputs if isinstance(x, DeviceArray)]
    scalars = [x for x in inputs if isinstance(x, np.generic)]
    if not arrays or not scalars or ufunc.__name__ in COMPARISONS:
        return
    legacy = _legacy_dtype(arrays, scalars)
    nep50 = np.result_type(*[a.dtype for a in arrays], *[s.dtype for s in scalars])
    if legacy != nep50:
        raise CupyRuleError(f"numpy.{ufunc.__name__} of {', '.join(str(a.dtype) for a in arrays)} array(s) and "
                            f"NumPy scalar(s) {scalars!r}: NumPy 2 and CuPy 14 compute in {nep50}, CuPy 13 in "
                            f"{legacy}; cast the scalar (or the array) explicitly")


def _asnumpy(a, stream=None, order="C", out=None, blocking=True):
    return a.get() if isinstance(a, DeviceArray) else np.asarray(a)


CHECKS = {"repeat": _check_repeat, **{n: _no_device_size(n) for n in ("zeros", "ones", "empty", "full", "arange")}}
REPLACED = {"bincount": _bincount, "sum": _sum, "cumsum": _cumsum}


def _function(name, func):
    params = CUPY_NAMES.get(name)
    host_ok = name in HOST_INPUT_OK
    check = CHECKS.get(name)
    func = REPLACED.get(name, func)

    def call(*args, **kwargs):
        if params is not None:
            bad = [k for k in kwargs if k not in params]
            if bad:
                raise CupyRuleError(f"cupy.{name} has no keyword argument {bad[0]!r} (it takes {', '.join(params)})")
        if check is not None:
            check(args, kwargs)
        where = f"cupy.{name}"
        if name in SIZE_DEPENDS_ON_DATA:
            _sync()
        args = _unwrap(args, where, host_ok)
        kwargs = {k: _unwrap(v, where, host_ok) for k, v in kwargs.items()}
        return _wrap(func(*args, **kwargs))
    call.__name__ = name
    return call


class _Stream:
    def synchronize(self):
        pass


class _StandinCupy(types.ModuleType):
    """The imitation ``cupy`` namespace."""

    ndarray = DeviceArray

    def __init__(self):
        super().__init__("cupy")
        special = {"argsort": _argsort, "sort": _sort, "lexsort": _lexsort, "asarray": _asarray,
                   "asanyarray": _asarray, "asnumpy": _asnumpy}
        for name, f in special.items():
            setattr(self, name, f)
        self.array = lambda obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False: \
            _to_device(obj, dtype, copy=True)
        self.cuda = types.SimpleNamespace(get_current_stream=_Stream,
                                          runtime=types.SimpleNamespace(getDeviceCount=lambda: 1))
        self.get_array_module = lambda *args: self if any(isinstance(a, DeviceArray) for a in args) else np

    def __getattr__(self, name):
        if name.startswith("__") or name not in CUPY_NAMES:
            raise AttributeError(f"cupy has no attribute {name!r}")
        obj = getattr(np, name)
        if isinstance(obj, np.ufunc) or (callable(obj) and not isinstance(obj, type)):
            obj = _function(name, obj)
        setattr(self, name, obj)
        return obj


cupy = _StandinCupy()


class _StandinCupyx:
    """The imitation of ``cupyx``'s scatter functions (CUDA atomics)."""

    @staticmethod
    def _scatter(ufunc, allowed, a, slices, value):
        name = f"cupyx.scatter_{ufunc.__name__[:3]}"
        if not isinstance(a, DeviceArray):
            raise CupyRuleError(f"{name} needs a device array as its target")
        if a.dtype not in allowed:
            raise CupyRuleError(f"{name} does not support {a.dtype} "
                                f"(CUDA atomics: {', '.join(sorted(str(d) for d in allowed))})")
        value = _unwrap(value, name)
        index = _index(slices)
        if ufunc is np.add and a.dtype.kind == "f" and isinstance(index, np.ndarray) and index.ndim == 1:
            # float atomicAdd: the order of the additions (so the rounding) is unspecified
            order = _shuffled(index.shape[0])
            index, value = index[order], np.broadcast_to(np.asarray(value), order.shape)[order]
        ufunc.at(a._a, index, value)

    def scatter_add(self, a, slices, value):
        self._scatter(np.add, SCATTER_ADD_DTYPES, a, slices, value)

    def scatter_max(self, a, slices, value):
        self._scatter(np.maximum, SCATTER_MINMAX_DTYPES, a, slices, value)

    def scatter_min(self, a, slices, value):
        self._scatter(np.minimum, SCATTER_MINMAX_DTYPES, a, slices, value)


class _DeviceSparse:
    """A cupyx.scipy.sparse matrix as far as matchpart takes one as input: its arrays live on
    the device, ``get()`` copies it to a scipy matrix (a sync), ``tocsc`` stays on the device.
    Sparse arithmetic is not imitated: the GPU algorithms use whole-array ops instead."""

    def __init__(self, arg, shape=None, dtype=None, copy=False):
        import scipy.sparse as sp
        if isinstance(arg, _DeviceSparse):
            arg = arg.get()
        elif isinstance(arg, tuple) and len(arg) == 3:
            arg = tuple(a.get() if isinstance(a, DeviceArray) else np.asarray(a) for a in arg)
        m = getattr(sp, self._format + "_matrix")(arg, shape=shape, dtype=dtype, copy=True)
        self.shape, self.dtype = m.shape, m.dtype
        self.data, self.indices, self.indptr = (DeviceArray(a) for a in (m.data, m.indices, m.indptr))

    def get(self, stream=None):
        import scipy.sparse as sp
        _sync()
        return getattr(sp, self._format + "_matrix")(
            (self.data._a.copy(), self.indices._a.copy(), self.indptr._a.copy()), shape=self.shape)

    def tocsc(self, copy=False):
        return csc_matrix(self.get())

    def tocsr(self, copy=False):
        return csr_matrix(self.get())

    def __getattr__(self, name):
        raise AttributeError(f"cupyx.scipy.sparse matrices of the CuPy stand-in have no {name!r}")


class csr_matrix(_DeviceSparse):
    _format = "csr"


class csc_matrix(_DeviceSparse):
    _format = "csc"


# matchpart recognises a cupyx matrix by its module, as the real ones report it
csr_matrix.__module__ = "cupyx.scipy.sparse._csr"
csc_matrix.__module__ = "cupyx.scipy.sparse._csc"


class _StandinSparse:
    """``cupyx.scipy.sparse``: csr_matrix and csc_matrix as inputs; nothing else."""

    csr_matrix = csr_matrix
    csc_matrix = csc_matrix

    @staticmethod
    def issparse(x):
        return isinstance(x, _DeviceSparse)

    def __getattr__(self, name):
        raise CupyRuleError(f"cupyx.scipy.sparse.{name} is not available in the CuPy stand-in")


def standin_backend():
    """A Backend named "gpu" that runs on this stand-in."""
    from matchpart.backend.core import Backend
    return Backend("gpu", cupy, _StandinSparse(), scatter=_StandinCupyx())
