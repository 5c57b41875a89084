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

``@njit(cache=True, internal=True)`` marks a kernel that only other kernels call. numba
links every kernel's callees into its LLVM module and optimises and emits machine code for
the whole of it, for each kernel, callees included; for an internal kernel the only code
ever run is the copy inside its callers. So an internal kernel gets no CPython wrapper
(the code that unboxes Python arguments, about half of a small kernel's IR), no LLVM
optimisation of its own beyond numba's per-function passes and no machine code: its IR is
handed to its callers as it is, which optimise it with theirs. It is not cached either:
cached callers carry its code. Called from Python (a public entry that also serves other
kernels, a test), an internal kernel compiles a twin that has a wrapper, cached as usual.

numba stamps a kernel's cache with the sha256 of the kernel's own source file only, but a
cached kernel carries the machine code of its callees (internal or not): a callee changed in
another file left its callers running the old code. The caches here are stamped with every
kernel file of the package as well (_jit_impl.kernel_sources_stamp), so editing any kernel
file recompiles the kernels on their next use. With plain numba (below) delete the caches
after such an edit (``find matchpart -name '*.nb[ic]' -delete``).

While numba compiles a kernel of the package, Python's garbage collector and numba's
event per call into LLVM are paused (_jit_impl._Compiling): about 3 s of a first run of
23 s.

Use it as ``numba.njit``: ``@njit(cache=True)``. All of this relies on numba's internal
interfaces (matchpart/_jit_impl.py); where they differ (another numba version), ``njit`` is
numba's own, which compiles more on the first run but gives the same kernels, and so does
MATCHPART_PLAIN_NUMBA=1 (to rule this module out when chasing a numba problem).
"""
from __future__ import annotations

import os

from . import threads as _threads

_threads.configure()   # the threading layer, before any parallel kernel can run

if os.environ.get("MATCHPART_PLAIN_NUMBA"):
    _impl = None
else:
    try:
        from . import _jit_impl as _impl
    except (ImportError, AttributeError):   # numba's internals moved: plain numba below
        _impl = None


def _frozen_parallel(options):
    """``parallel=`` given as a dict becomes numba's ParallelOptions. numba reads such a dict by
    popping its keys, once per compilation: the package's one PRANGE_ONLY dict held its
    settings for the first kernel compiled in a process only, and every later compilation
    (another kernel, another signature) got all of numba's conversions, each np.zeros and
    array expression a thread-pool launch, whichever kernel happened to compile first (an
    ordering ran 2 x slower after the tests had compiled other kernels first)."""
    if isinstance(options.get("parallel"), dict):
        from numba.core.cpu_options import ParallelOptions
        options["parallel"] = ParallelOptions(dict(options["parallel"]))
    return options


if _impl is not None:
    def njit(function=None, **options):
        return _impl.njit(function, **_frozen_parallel(options))
else:
    def njit(function=None, *, cache=False, internal=False, **options):
        """numba.njit; ``internal`` is accepted and ignored."""
        import numba
        decorator = numba.njit(cache=cache, **_frozen_parallel(options))
        return decorator(function) if function is not None else decorator
