"""The machinery behind matchpart.jit.njit, on numba's internal interfaces (tested with numba
0.61 and 0.68; matchpart.jit falls back to plain numba.njit when they are not there)."""
from __future__ import annotations

import functools
import gc
import hashlib
import os

from llvmlite.binding import ffi as _llvm_ffi
from numba import _dynfunc
from numba.core import config, types
from numba.core.caching import CompileResultCacheImpl, FunctionCache
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import Compiler, DefaultPassBuilder, _LowerResult
from numba.core.compiler_lock import global_compiler_lock
from numba.core.compiler_machinery import register_pass
from numba.core.runtime import rtsys
from numba.core.target_extension import resolve_dispatcher_from_str
from numba.core.typed_passes import NativeLowering

_Base = resolve_dispatcher_from_str("cpu")


@functools.lru_cache(maxsize=None)
def kernel_sources_stamp(root=os.path.dirname(os.path.abspath(__file__))):
    """sha256 over the package's kernel files (every .py under ``root`` that mentions njit:
    relative path and contents, in path order), once per process (11 ms here)."""
    stamp = hashlib.sha256()
    for path in sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.endswith(".py")):
        with open(path, "rb") as source:
            data = source.read()
        if b"njit" in data:
            stamp.update(os.path.relpath(path, root).replace(os.sep, "/").encode() + b"\0")
            stamp.update(hashlib.sha256(data).digest())
    return stamp.hexdigest()


class _Cache(FunctionCache):
    """numba's per-function disk cache, loading without the compiler context's refresh, and
    valid only for the kernel files it was compiled from. numba stamps an index with the
    sha256 of the kernel's own file, but a cached kernel carries its callees' machine code:
    a callee changed in another file left its callers running the old code (an editable
    install, a pip upgrade over caches compiled at run time)."""

    def __init__(self, py_func):
        super().__init__(py_func)
        cache_file = self._cache_file
        if hasattr(cache_file, "_source_stamp"):    # numba 0.61-0.68: the index's stamp
            cache_file._source_stamp = (cache_file._source_stamp, kernel_sources_stamp())

    def load_overload(self, sig, target_context):
        # what cached machine code needs: the runtime's symbols (numba's C helpers are
        # registered when the context is created)
        rtsys.initialize(target_context)
        try:
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        except Exception:   # whatever went wrong, numba's own way (refresh first) decides
            return super().load_overload(sig, target_context)


class _TwinCacheImpl(CompileResultCacheImpl):
    def get_filename_base(self, fullname, abiflags):
        # files of their own: numba's cache index does not record how a kernel was compiled,
        # and a version without the wrapper (an earlier matchpart cached internal kernels)
        # would crash when called from Python
        return "twin-" + super().get_filename_base(fullname, abiflags)


class _TwinCache(_Cache):
    _impl_class = _TwinCacheImpl


class _Compiling:
    """Context of a compilation of the package's kernels (outermost entry only; nested
    compiles of callees and numpy implementations run inside it), which sets aside two costs
    of numba's that a first run pays for nothing (delaunay:100000 8, one cold run each:
    about 2-3 s and 1 s of its 22 s):
    - Python's cyclic garbage collector: numba's typing and lowering allocate millions of
      objects (IR, types, llvmlite values), so the collector runs full passes over all of
      them again and again (16 during a first run). It is paused until the outermost compile
      ends and resumed as it was; the cycles left are collected by its next passes. The peak
      memory of a first run grows by ~50 MB (393 -> 444 MB).
    - llvmlite's lock callbacks: numba registers callbacks that broadcast an event on every
      call into LLVM (70 000 in a first run), to time the LLVM lock for compile metadata. They
      are taken off while ours compile and put back after; the metadata then reads 0 for it.
    """

    def __init__(self):
        self._depth = 0             # nesting, under numba's compiler lock
        self._gc_was_enabled = False
        self._callbacks = []

    def __enter__(self):
        global_compiler_lock.acquire()
        if self._depth == 0:
            self._gc_was_enabled = gc.isenabled()
            gc.disable()
            lock = getattr(_llvm_ffi.lib, "_lock", None)
            self._callbacks = list(getattr(lock, "_cblist", ()))
            if self._callbacks:
                lock._cblist[:] = []
        self._depth += 1

    def __exit__(self, *exc):
        self._depth -= 1
        if self._depth == 0:
            if self._callbacks:
                _llvm_ffi.lib._lock._cblist[:] = self._callbacks
            if self._gc_was_enabled:
                gc.enable()
        global_compiler_lock.release()


_compiling = _Compiling()


def _plain(t):
    t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64:
        return types.int64
    return t


class _PlainTypesDispatcher(_Base):
    """A CPU dispatcher that compiles calls from compiled code for plain argument types:
    unliteral, and signed integer scalars as int64 (a vertex id read from an int32 index
    array is an int64 vertex id to the callee, as a Python int is: one compilation)."""

    def get_call_template(self, args, kws):
        args = tuple(_plain(a) for a in args)
        kws = {name: _plain(a) for name, a in kws.items()}
        return super().get_call_template(args, kws)

    def enable_caching(self):
        self._cache = _Cache(self.py_func)

    def compile(self, sig):
        with _compiling:
            return super().compile(sig)


class _LinkOnlyLibrary(JITCodeLibrary):
    """The code library of an internal kernel: its function-optimised IR plus its callees',
    for linking into callers only; finalising it neither optimises the whole nor emits
    machine code, and it is never added to numba's execution engine."""

    def finalize(self):
        self._raise_if_finalized()
        seen = set()
        for library in self._linking_libraries:
            if library not in seen:
                seen.add(library)
                if hasattr(library, "_reload_init"):   # numba >= 0.62 keeps these per library
                    self._reload_init.update(library._reload_init)
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._finalized = True


@register_pass(mutates_CFG=True, analysis_only=False)
class _LoweringWithoutWrapper(NativeLowering):
    """numba's lowering pass for internal kernels: no CPython wrapper, a _LinkOnlyLibrary, and
    no executable (its entry point is a placeholder whose only use is to name the kernel's
    implementation for its callers' lowering). Set here rather than through numba's options
    (no_cpython_wrapper, no_compile): numba keys the implementations of numpy functions
    (np.empty, ...) by the caller's options, so options would compile each a second time."""

    _name = "matchpart_lowering_without_wrapper"

    def run_pass(self, state):
        if state.library is None:
            state.library = _LinkOnlyLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
        flags = state.flags                     # this compile's own Flags object
        flags.no_cpython_wrapper = True
        flags.no_compile = True                 # numba then leaves the library unfinalised
        super().run_pass(state)
        flags.no_compile = False
        lowered = state["cr"]
        fndesc, library = lowered.fndesc, state.library
        placeholder = _dynfunc.make_function(fndesc.lookup_module(), fndesc.qualname.split(".")[-1],
                                             "internal kernel (no wrapper)", 0, lowered.env, (library,))
        state.targetctx.insert_user_function(placeholder, fndesc, [library])
        if hasattr(library, "_reload_init"):
            state.reload_init.extend(library._reload_init)
        state["cr"] = _LowerResult(fndesc, lowered.call_helper, cfunc=placeholder, env=lowered.env)
        return True


class _InternalCompiler(Compiler):
    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.passes = [(_LoweringWithoutWrapper if cls is NativeLowering else cls, what) for cls, what in pm.passes]
        pm.finalize()
        return [pm]


class _InternalDispatcher(_PlainTypesDispatcher):
    """A kernel compiled without the CPython wrapper: callable from compiled code only, so its
    overloads stay out of the C-level table that calls from Python look up (their entry points
    have no wrapper to call); a call from Python goes to a twin compiled with one."""

    _twin = None
    _cache_twin = False

    def __init__(self, py_func, locals, targetoptions):
        super().__init__(py_func, locals=locals, targetoptions=targetoptions, pipeline_class=_InternalCompiler)

    def add_overload(self, cres):
        self.overloads[tuple(cres.signature.args)] = cres

    def enable_caching(self):
        self._cache_twin = True   # the internal version itself: its cached callers carry its code

    def _compile_for_args(self, *args, **kws):
        if self._twin is None:
            self._twin = _PlainTypesDispatcher(py_func=self.py_func, locals=self.locals,
                                               targetoptions=self.targetoptions)
            if self._cache_twin:
                self._twin._cache = _TwinCache(self.py_func)
        entry = self._twin._compile_for_args(*args, **kws)
        # later calls from Python with these argument types take numba's C-level lookup straight
        # to the twin's entry point; this Python path types every argument again (~1 ms a call:
        # 12% of a 4elt k = 32 partition, whose levels call local_max_vertex_rounds so)
        for sig, cres in self._twin.overloads.items():
            if cres.entry_point is entry:
                self._insert([a._code for a in sig], entry, cres.objectmode)
                break
        return entry


def njit(function=None, *, cache=False, internal=False, locals=None, boundscheck=None, **options):
    """``numba.njit`` (nopython mode) with the dispatchers above; ``internal``: see the module."""
    if "_target" in options or "pipeline_class" in options or "forceobj" in options:
        raise TypeError("matchpart.jit.njit supports nopython mode on the CPU with numba's default pipeline only")
    options.update(nopython=True, boundscheck=boundscheck)
    # no C-callable wrapper per kernel (numba makes one for first-class function use, which
    # the package has none of): less code to generate on the first run
    options.setdefault("no_cfunc_wrapper", True)

    def wrap(func):
        if config.DISABLE_JIT:   # NUMBA_DISABLE_JIT=1: plain Python, as numba.njit gives
            return func
        cls = _InternalDispatcher if internal else _PlainTypesDispatcher
        disp = cls(py_func=func, locals=locals or {}, targetoptions=options)
        if cache:
            disp.enable_caching()
        return disp

    return wrap(function) if function is not None else wrap
