"""``njit``: numba's decorator for every compiled kernel of the package, with one signature per
argument types.

numba compiles a kernel once per distinct tuple of argument types, and a call from compiled
code types a constant argument as a literal (``f(x, True, 0)`` is typed ``(..., Literal[bool]
(True), Literal[int](0))``), while a call from Python passes ``bool`` and ``int64``. A kernel
called both ways was compiled twice, with everything it calls: refine_nb, _fm, fm2_pass,
localized_round and vertex_destination were, a quarter of the first run's compile time.
Calls between kernels decorated here are typed with the plain types, as calls from Python are.
No kernel of the package dispatches on literal values (``numba.literally``), so nothing
depends on them.

Loading a kernel from numba's on-disk cache also skips numba's refresh of its compiler
context (the import and registration of every lowering registry numba has, scipy.linalg
included: half a second of CPU, half of the warm command line's start-up), which only
compiling needs; numba does the refresh itself before it compiles anything.

Use it exactly as ``numba.njit``: ``@njit(cache=True)``.
"""
from __future__ import annotations

from numba.core import config, types
from numba.core.caching import FunctionCache
from numba.core.runtime import rtsys
from numba.core.target_extension import resolve_dispatcher_from_str

_Base = resolve_dispatcher_from_str("cpu")


class _Cache(FunctionCache):
    """numba's per-function disk cache, loading without the compiler context's refresh."""

    def load_overload(self, sig, target_context):
        # what cached machine code needs: the runtime's symbols (numba's C helpers are
        # registered when the context is created)
        rtsys.initialize(target_context)
        try:
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        except Exception:   # whatever went wrong, numba's own way (refresh first) decides
            return super().load_overload(sig, target_context)


class _PlainTypesDispatcher(_Base):
    """A CPU dispatcher that compiles calls from compiled code for unliteral argument types."""

    def get_call_template(self, args, kws):
        args = tuple(types.unliteral(a) for a in args)
        kws = {name: types.unliteral(a) for name, a in kws.items()}
        return super().get_call_template(args, kws)

    def enable_caching(self):
        self._cache = _Cache(self.py_func)


def njit(function=None, *, cache=False, locals=None, boundscheck=None, **options):
    """``numba.njit`` (nopython mode) with the dispatcher above."""
    if "_target" in options or "pipeline_class" in options or "forceobj" in options:
        raise TypeError("matchpart.jit.njit supports nopython mode on the CPU with numba's default pipeline only")
    options.update(nopython=True, boundscheck=boundscheck)
    # no C-callable wrapper per kernel (numba makes one for first-class function use, which
    # the package has none of): less code to generate on the first run
    options.setdefault("no_cfunc_wrapper", True)

    def wrap(func):
        if config.DISABLE_JIT:   # NUMBA_DISABLE_JIT=1: plain Python, as numba.njit gives
            return func
        disp = _PlainTypesDispatcher(py_func=func, locals=locals or {}, targetoptions=options)
        if cache:
            disp.enable_caching()
        return disp

    return wrap(function) if function is not None else wrap
