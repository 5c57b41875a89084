"""A CPU stand-in for CuPy, so that the GPU code paths run (and are tested) where no GPU is.

Without a usable GPU, tests marked ``gpu`` run against ``standin_backend()``: a Backend
named "gpu" whose ``xp`` is this module's numpy-backed imitation of the cupy namespace.
Every ``be.is_gpu`` branch then executes in CI. It is not an emulator of speed or memory;
it enforces the rules under which code that passes on numpy still fails or silently
differs on CuPy 14:

- only names of the real cupy namespace, and only keyword arguments its functions take
  (both listed in tests/cupy_names.txt, read from cupy 14.2.0);
- a device array never turns into a numpy array implicitly: ``np.asarray``, a numba
  kernel or a numpy array mixed into a device computation raise, as on CuPy; ``.get()``
  and ``cupy.asnumpy`` are the ways back, ``cupy.asarray`` copies the other way;
- reductions and scalar indexing give 0-d device arrays, and a device array has no
  ``__index__`` (``int()`` is needed to use it as a size or a Python index);
- sorts are stable (CuPy's are; numpy's default is not) and ``lexsort`` takes one stacked
  array, not a tuple of keys;
- ``cupyx.scatter_add/max/min`` take only the dtypes CUDA atomics support;
- an integer-array assignment with repeated indices keeps the first write, not numpy's
  last one (on CuPy the winner is undefined), so code that depends on it differs from
  its CPU run and the GPU == CPU tests catch it.
"""
from __future__ import annotations

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
# ndarray members of cupy 14.2.0 (dir(cupy.ndarray), public part)
NDARRAY_MEMBERS = frozenset("""
T all any argmax argmin argpartition argsort astype base byteswap choose clip compress conj
conjugate copy cstruct cumprod cumsum data device diagonal dot dtype dump dumps fill flags
flat flatten get imag item itemsize mT max mean min nbytes ndim nonzero partition prod ptp
put ravel real reduced_view repeat reshape round scatter_add scatter_max scatter_min
searchsorted set shape size sort squeeze std strides sum swapaxes take toDlpack tobytes
tofile tolist trace transpose var view""".split())
# cupy functions that accept host data (they copy it to the device)
HOST_INPUT_OK = frozenset({"asarray", "array", "asanyarray"})


class SyncCounter:
    """Counts the operations that make CuPy wait for the device: a value read on the host
    (bool, int, float, item, get) or a result whose size depends on the data (boolean-mask
    indexing, nonzero/flatnonzero, unique, repeat with array counts)."""

    count = 0


def _sync():
    SyncCounter.count += 1


SIZE_DEPENDS_ON_DATA = frozenset({"flatnonzero", "nonzero", "argwhere", "unique", "repeat", "compress", "extract"})


class CupyRuleError(TypeError):
    """Code did something that fails (or is undefined) on CuPy."""


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
        if isinstance(key, np.ndarray) and key.dtype.kind in "iu" and key.ndim == 1 and self._a.ndim == 1:
            # repeated indices: CuPy leaves the winner undefined; numpy's last write wins, so
            # here the first one does, and code that depends on it differs from the CPU run
            value = np.broadcast_to(np.asarray(value), key.shape)
            self._a[key[::-1]] = value[::-1]
        else:
            self._a[key] = value

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

    def argsort(self, axis=-1, kind=None):
        return cupy.argsort(self, axis=axis, kind=kind)

    def sort(self, axis=-1, kind=None):
        _check_kind(kind)
        self._a.sort(axis=axis, kind="stable")

    def __getattr__(self, name):
        if name not in NDARRAY_MEMBERS:
            raise AttributeError(f"cupy.ndarray has no attribute {name!r}")
        member = getattr(self._a, name)
        if not callable(member):
            return _wrap(member)

        def method(*args, **kwargs):
            where = f"ndarray.{name}"
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


def _asarray(a, dtype=None, order=None, *, copy=None, blocking=False):
    if isinstance(a, DeviceArray):
        out = a._a if dtype is None or np.dtype(dtype) == a.dtype else a._a.astype(dtype)
        return DeviceArray(out.copy() if copy else out)
    # from the host: always a copy (device memory is not host memory)
    return DeviceArray(np.array(_unwrap(a, "cupy.asarray", host_ok=True), dtype=dtype, copy=True))


def _asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if isinstance(a, DeviceArray):
        _sync()
    return a.get() if isinstance(a, DeviceArray) else np.asarray(a)


def _function(name, func):
    params = CUPY_NAMES.get(name)
    host_ok = name in HOST_INPUT_OK

    def call(*args, **kwargs):
        if params is not None:
            bad = [k for k in kwargs if k not in params]
            if bad:
                raise CupyRuleError(f"cupy.{name} has no keyword argument {bad[0]!r} (it takes {', '.join(params)})")
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
            _asarray(obj, dtype, copy=True)
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
        ufunc.at(a._a, _index(slices), value)

    def scatter_add(self, a, slices, value):
        self._scatter(np.add, SCATTER_ADD_DTYPES, a, slices, value)

    def scatter_max(self, a, slices, value):
        self._scatter(np.maximum, SCATTER_MINMAX_DTYPES, a, slices, value)

    def scatter_min(self, a, slices, value):
        self._scatter(np.minimum, SCATTER_MINMAX_DTYPES, a, slices, value)


class _NoSparse:
    def __getattr__(self, name):
        raise CupyRuleError(f"cupyx.scipy.sparse.{name} is not available in the CuPy stand-in")


def standin_backend():
    """A Backend named "gpu" that runs on this stand-in."""
    from matchpart.backend.core import Backend
    return Backend("gpu", cupy, _NoSparse(), scatter=_StandinCupyx())
