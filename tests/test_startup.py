"""Start-up cost: what the command line imports and what numba compiles (no timings here;
benchmarks/RESULTS.md has those)."""
import gc
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

from conftest import import_recorder
from matchpart import jit
from matchpart.jit import njit

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("networkx", "matplotlib", "scipy.sparse", "scipy.spatial")

# Checks of numba's internals (module names, signature counts, llvmlite's lock callbacks) hold
# for the numba versions matchpart/_jit_impl.py was written against, with its compile context
# in use; under another numba they describe nothing, and skip rather than fail.
DESCRIBED_NUMBA = ((0, 61), (0, 68))
NUMBA_VERSION = tuple(int(part) for part in numba.__version__.split(".")[:2])
numba_internals = pytest.mark.skipif(
    not DESCRIBED_NUMBA[0] <= NUMBA_VERSION <= DESCRIBED_NUMBA[1] or jit._impl is None,
    reason=f"checks numba 0.61-0.68 internals under matchpart.jit's compile context; here numba "
           f"{numba.__version__}{'' if jit._impl else ' with plain numba.njit'}")


def run_python(code, **env):
    """Run ``code`` in a fresh interpreter with the repository on the path; its stdout."""
    full_env = dict(os.environ, PYTHONPATH=str(REPO), **env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_partitioning_a_metis_file_imports_no_networkx_matplotlib_or_scipy_sparse(tmp_path):
    graph = tmp_path / "ring.graph"
    n = 40
    graph.write_text(f"{n} {n}\n" + "".join(f"{(v - 1) % n + 1} {(v + 1) % n + 1}\n" for v in range(n)))
    # attempts are recorded, not looked up in sys.modules: an import of matplotlib fails the
    # test even where matplotlib is not installed
    out = run_python(import_recorder(HEAVY) + f"""
import json
import matchpart
after_import = list(import_attempts)
from matchpart.cli import main
assert main(["partition", {str(graph)!r}, "4", "-o", {str(tmp_path / "ring.part")!r}, "-q"]) == 0
print(json.dumps([after_import, import_attempts]))
""")
    after_import, after_partition = json.loads(out.splitlines()[-1])
    assert after_import == []
    assert after_partition == []


@numba_internals
def test_a_cached_kernel_loads_without_refreshing_numbas_compiler(tmp_path):
    # the refresh imports every lowering registry (numba.np.arraymath among them); loading
    # cached machine code needs none of it
    code = """
        import sys
        import numpy as np
        from matchpart.refine.gain_cache import new_cache
        block, conn, count, nb, scratch, start, top = new_cache(3, 4, 2)
        assert nb.tolist() == [-1, -1, -1] and scratch.tolist() == [-1, -1]
        print(sum(new_cache.stats.cache_hits.values()), "numba.np.arraymath" in sys.modules)
        """
    assert run_python(code, NUMBA_CACHE_DIR=str(tmp_path)).split() == ["0", "True"]    # compiled
    assert run_python(code, NUMBA_CACHE_DIR=str(tmp_path)).split() == ["1", "False"]   # loaded


@njit
def _add(a, flag, k):
    return a.sum() + (k if flag else 0)


@njit
def _calls_add_with_constants(a):
    return _add(a, True, 0) + _add(a, False, 3)


@njit(internal=True)
def _internal_double(x):
    return 2 * x


@njit
def _calls_internal(x):
    return _internal_double(x) + 1


@numba_internals
def test_a_kernel_called_with_constants_compiles_once():
    a = np.arange(4)
    assert _calls_add_with_constants(a) == 12
    assert _add(a, True, 1) == 7
    assert len(_add.signatures) == 1   # no Literal[bool](True) / Literal[int](0) specialisation


def test_an_internal_kernel_is_callable_from_kernels_and_from_python():
    assert _calls_internal(3) == 7
    assert _internal_double(5) == 10   # through its twin with a CPython wrapper
    assert _internal_double(2.5) == 5.0


def _compile_watching(func, *args):
    """Call the fresh kernel ``func`` (compiling it); the garbage collector's state and the
    number of llvmlite lock callbacks while numba compiled it, and the exception, if any."""
    from llvmlite.binding import ffi
    from numba.core import event
    seen = []

    class Watch(event.Listener):
        def on_start(self, ev):
            seen.append((gc.isenabled(), len(ffi.lib._lock._cblist)))

        def on_end(self, ev):
            pass

    watch = Watch()
    event.register("numba:compile", watch)
    try:
        func(*args)
        error = None
    except Exception as exc:   # a typing error, on purpose
        error = exc
    finally:
        event.unregister("numba:compile", watch)
    return seen, error


@numba_internals
@pytest.mark.parametrize("bad", [False, True])
@pytest.mark.parametrize("gc_on", [True, False])
def test_compiling_pauses_the_collector_and_llvm_lock_events_and_restores_them(bad, gc_on):
    from llvmlite.binding import ffi
    callbacks = list(ffi.lib._lock._cblist)
    assert callbacks   # numba's event callbacks: what the compile context sets aside

    @njit
    def kernel(a):
        return a.sum() + (a.nonexistent if bad else 0)

    was_on = gc.isenabled()
    (gc.enable if gc_on else gc.disable)()
    try:
        seen, error = _compile_watching(kernel, np.arange(3))
        after = gc.isenabled()
    finally:
        (gc.enable if was_on else gc.disable)()
    assert (error is not None) == bad
    assert seen and all(state == (False, 0) for state in seen)
    assert after == gc_on
    assert ffi.lib._lock._cblist == callbacks


@numba_internals
def test_an_internal_kernel_called_from_python_is_cached(tmp_path):
    code = """
        import numpy as np
        from matchpart.refine.state import host_block_weights
        bw = host_block_weights(np.array([0, 0, 0, 1]), np.ones(4), 2)
        assert bw.tolist() == [3.0, 1.0]
        print(sum(host_block_weights._twin.stats.cache_hits.values()))
        """
    assert run_python(code, NUMBA_CACHE_DIR=str(tmp_path)).split() == ["0"]
    assert run_python(code, NUMBA_CACHE_DIR=str(tmp_path)).split() == ["1"]


@pytest.mark.slow
@numba_internals
def test_the_default_partition_compiles_one_specialisation_per_kernel(tmp_path):
    # an empty cache, as after installing: kernels loaded from a cache load their callees
    # with them, so only compiling shows every kernel's specialisations (half a minute)
    out = run_python("""
        import json, sys
        import matchpart
        from numba.core.dispatcher import Dispatcher
        matchpart.partition("delaunay:3000", 8)
        matchpart.partition("rmat:10", 32)
        many = {}
        for name, module in list(sys.modules.items()):
            if name.startswith("matchpart"):
                for attr, value in vars(module).items():
                    if isinstance(value, Dispatcher) and len(value.signatures) > 1:
                        many[f"{name}.{attr}"] = [str(s) for s in value.signatures]
        print(json.dumps(many))
        """, NUMBA_CACHE_DIR=str(tmp_path))
    assert json.loads(out.splitlines()[-1]) == {}


@numba_internals
def test_the_kernel_files_stamp_changes_with_a_kernel_file_only(tmp_path):
    # a cached kernel carries its callees' machine code, so its cache must go stale when any
    # kernel file changes, not only its own (numba's stamp)
    from matchpart._jit_impl import kernel_sources_stamp
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("from .jit import njit\n@njit\ndef f(x):\n    return g(x)\n")
    (tmp_path / "sub" / "b.py").write_text("@njit(internal=True)\ndef g(x):\n    return x\n")
    (tmp_path / "cli.py").write_text("print('no kernels here')\n")

    def stamp():
        kernel_sources_stamp.cache_clear()
        return kernel_sources_stamp(str(tmp_path))
    first = stamp()
    (tmp_path / "cli.py").write_text("print('still none')\n")
    (tmp_path / "notes.txt").write_text("njit")
    assert stamp() == first
    (tmp_path / "sub" / "b.py").write_text("@njit(internal=True)\ndef g(x):\n    return x + 1\n")
    changed = stamp()
    assert changed != first
    (tmp_path / "sub" / "b.py").rename(tmp_path / "b.py")     # the same contents elsewhere
    assert stamp() not in (first, changed)
    kernel_sources_stamp.cache_clear()


@numba_internals
def test_a_cached_kernel_is_stamped_with_the_kernel_files():
    from matchpart._jit_impl import kernel_sources_stamp
    from matchpart.refine.gain_cache import new_cache
    own, package = new_cache._cache._cache_file._source_stamp
    assert package == kernel_sources_stamp() and isinstance(own, (bytes, str))
