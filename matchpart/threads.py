"""Threads: the layer numba runs the parallel kernels on, how many threads a call uses, and
the fixed chunks that make a kernel's result the same for any number of them.

Every parallel kernel of the package splits its work into chunks of a fixed size (a number
of vertices or list entries, never a share of the threads), gives each chunk its own scratch
and output slots, and combines the chunks' sums in chunk order: the threads only decide who
computes a chunk, not what it computes. A kernel runs its chunks with ``prange`` only when
there are at least ``parallel_min`` items (an argument, so tests can send small inputs down
the threaded path); below that, the same chunks in a plain loop, since waking the thread pool
costs more than the work (~3 us per launch here, a Jet iteration on a small level ~10 us).

Layer: numba's "workqueue" layer aborts when two Python threads run parallel kernels at
once, so the package asks for a thread-safe one: TBB (the ``tbb`` wheel, a dependency on
x86-64), else OpenMP (the system's libgomp). Where neither loads, calls that use threads are
serialised by a lock instead. ``NUMBA_THREADING_LAYER`` set by the user is left alone (with
the lock when it names workqueue).
"""
from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import sys
import threading
import warnings

# Items (vertices or list entries) per chunk of a parallel kernel, passed to the kernels as
# an argument (tests use tiny chunks on tiny graphs). Big enough that a chunk's
# scratch (a block accumulator of k entries) and scheduling cost little beside its work,
# small enough that a 2^16-vertex level still splits into 32 chunks for the threads to share.
CHUNK = 2048
# A kernel runs its chunks on threads from this many items up (see the module's text): two
# chunks. Jet on the finest level, 2 threads against 1 (2-core machine, median of 5): delaunay
# 2^16 k = 32 1.13 x from 4096 up, 1.01 x from 16384 up; delaunay 2^20 1.56-1.72 x either way.
PARALLEL_MIN_ITEMS = 4096
# Mean row length for which a chunk of CHUNK vertices is meant: a kernel over the rows of a
# graph of longer rows takes proportionally fewer vertices per chunk (scaled_chunk). The
# coarse levels of power-law graphs are dense (rmat 2^16, k = 8: 6400 vertices of mean
# degree 65 on the second level), and there Jet's lists of a few thousand vertices ran in
# one or two chunks, on one thread.
CHUNK_MEAN_DEGREE = 16


def scaled_chunk(chunk, parallel_min, n, entries):
    """(chunk, parallel_min) for a kernel over the rows of a graph of n vertices and
    ``entries`` row entries: both scaled down by mean degree / CHUNK_MEAN_DEGREE when that
    is above 1, so that a chunk holds about chunk x CHUNK_MEAN_DEGREE entries. A function
    of the graph only, so the chunks are the same for any number of threads."""
    mean = entries / max(n, 1)
    if mean <= CHUNK_MEAN_DEGREE:
        return chunk, parallel_min
    scale = CHUNK_MEAN_DEGREE / mean
    return max(1, int(chunk * scale)), int(parallel_min * scale)


# numba's parallel=... for the package's kernels: prange loops only. Its other conversions
# would turn every np.zeros / array expression of a kernel into a thread-pool launch.
# (jit.njit hands numba a ParallelOptions made from it: numba empties a dict as it reads it.)
# (prange's index is unsigned: a kernel's chunk functions take np.int64(c), as the serial loop
# passes c, so that numba compiles one specialisation of each.)
PRANGE_ONLY = {"prange": True, "comprehension": False, "numpy": False, "reduction": False, "setitem": False,
               "stencil": False, "fusion": False, "inplace_binop": False}

# Chunks a thread takes at a time from a prange loop (numba's parallel chunk size). numba's
# default, 0, splits the loop into one equal range per thread up front; every prange of the
# package runs over data chunks of very unequal work (hubs numbered first lie in the first
# chunks of a power-law graph), so threads take one chunk at a time instead. R-MAT 2^19
# (fast, k = 32, 2 threads, median of 3): 8.78 -> 6.94 s; meshes unchanged (+-3%).
CHUNKS_PER_TAKE = 1

_lock = threading.Lock()           # serialises threaded calls when no thread-safe layer loads
_state = {"configured": False, "serialise": False}


def _load_tbb_wheel():
    """Make the tbb wheel's library loadable: pip puts it in the environment's lib/, which
    the loader does not search (numba finds it by name only). The environments are the
    interpreter's and those whose site-packages are on the path (pip's build environment)."""
    prefixes = [sys.prefix, sys.base_prefix]
    prefixes += [os.path.dirname(os.path.dirname(os.path.dirname(p))) for p in sys.path
                 if os.path.basename(p) == "site-packages"]
    for prefix in dict.fromkeys(prefixes):
        for path in sorted(glob.glob(os.path.join(prefix, "lib", "libtbb.so.12*"))):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return True
            except OSError:
                continue
    return False


def configure():
    """Choose numba's threading layer once, before the first parallel kernel runs (idempotent)."""
    if _state["configured"]:
        return
    _state["configured"] = True
    chosen = os.environ.get("NUMBA_THREADING_LAYER", "").strip().lower()
    if chosen:
        # the user's choice stands; its one unsafe case, workqueue, gets the lock
        _state["serialise"] = chosen == "workqueue"
        return
    import numba
    layer = None
    try:
        if sys.platform.startswith("linux"):
            _load_tbb_wheel()
        import numba.np.ufunc.tbbpool  # noqa: F401
        layer = "tbb"
    except (ImportError, OSError):
        try:
            import numba.np.ufunc.omppool  # noqa: F401
            layer = "omp"
        except (ImportError, OSError):
            _state["serialise"] = True
    if layer is not None:
        numba.config.THREADING_LAYER = layer


def available():
    """The most threads a call can use: numba's NUMBA_NUM_THREADS (all cores unless set)."""
    import numba
    return int(numba.config.NUMBA_NUM_THREADS)


def check(threads):
    """``threads`` as a count (None: every core); a count above what numba started with is
    lowered to it, with a warning."""
    if threads is None:
        return available()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer (or None for every core), got {threads!r}")
    most = available()
    if threads > most:
        warnings.warn(f"threads={threads} lowered to {most}: numba started with NUMBA_NUM_THREADS={most} "
                      f"(set that variable before starting Python to allow more)", stacklevel=3)
        return most
    return threads


@contextlib.contextmanager
def limit(threads=None):
    """Run the body with ``threads`` threads (None: every core); yields the count used.

    numba's thread count (and chunk size, see CHUNKS_PER_TAKE) is per Python thread, so
    concurrent calls with different counts do not disturb each other. The partition does not depend on the count.
    """
    import numba
    configure()
    count = check(threads)
    before = numba.get_num_threads()
    numba.set_num_threads(count)
    chunksize_before = numba.set_parallel_chunksize(CHUNKS_PER_TAKE)
    held = _state["serialise"]
    if held:
        _lock.acquire()
    try:
        yield count
    finally:
        if held:
            _lock.release()
        numba.set_parallel_chunksize(chunksize_before)
        numba.set_num_threads(before)


def layer():
    """The threading layer in use ("tbb", "omp", "workqueue"), or None before the first
    parallel kernel ran."""
    import numba
    try:
        return numba.threading_layer()
    except ValueError:
        return None
