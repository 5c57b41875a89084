"""After ``pip install .`` the README's first command compiles nothing: every kernel it runs is
loaded from the numba cache that the wheel carries (setup.py, matchpart/precompile.py).

It checks the package installed in this interpreter's environment, seen from outside the
checkout. Where there is none, or it is this checkout itself (an editable install, which
compiles on first use), it skips, unless MATCHPART_EXPECT_INSTALLED=1 (.ci/run) makes that a
failure, so that CI cannot pass it by skipping.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent("""
    import json, os
    from importlib.metadata import files
    import numba
    from numba.core import event

    compiled = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            compiled.append(getattr(func, "__qualname__", "?"))

        def on_end(self, ev):
            pass

    event.register("numba:compile", Compiles())
    from matchpart.cli import main
    assert main(["partition", "delaunay:100000", "8", "-q", "-o", "p"]) == 0
    readme_compiled = list(compiled)

    @numba.njit
    def control(x):   # the listener's own check: this one must show as compiled
        return x + 1

    control(1)
    record = {os.path.realpath(f.locate()): f.hash.value for f in files("matchpart") if f.suffix in (".nbi", ".nbc")}
    print("RESULT", json.dumps([readme_compiled, compiled[len(readme_compiled):], record]))
""")


def _sha256(path):
    """A file's hash as a wheel's RECORD writes it."""
    digest = hashlib.sha256(Path(path).read_bytes()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _installed_location(env, cwd):
    proc = subprocess.run([sys.executable, "-c", "import matchpart; print(matchpart.__file__)"],
                          capture_output=True, text=True, env=env, cwd=cwd)
    return Path(proc.stdout.strip()).resolve().parent if proc.returncode == 0 else None


def _skip(why):
    if os.environ.get("MATCHPART_EXPECT_INSTALLED", "") not in ("", "0"):
        pytest.fail(f"MATCHPART_EXPECT_INSTALLED is set, but {why}")
    pytest.skip(why)


def test_the_readme_command_compiles_no_kernel_after_pip_install(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "MATCHPART_PLAIN_NUMBA")}
    location = _installed_location(env, tmp_path)
    if location is None:
        _skip("matchpart is not installed in this environment")
    if location == REPO / "matchpart":
        _skip("the installed matchpart is this checkout (editable): it compiles on first use")

    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=dict(env, NUMBA_DEBUG_CACHE="1"), cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    readme_compiled, control_compiled, record = json.loads(proc.stdout.split("RESULT ", 1)[1])
    loaded = [os.path.realpath(line.split("'")[1]) for line in proc.stdout.splitlines()
              if line.startswith(("[cache] index loaded from", "[cache] data loaded from"))]
    saved = [line for line in proc.stdout.splitlines() if line.startswith("[cache] data saved")]

    assert control_compiled == ["control"], "the compile listener saw nothing: the check itself is broken"
    assert readme_compiled == [], (
        f"kernels compiled on the first run of the installed package ({location}): {readme_compiled}; "
        f"was it installed with MATCHPART_SKIP_PRECOMPILE=1, or with another numba than it runs with?")
    assert saved == []
    # the machine code loaded from the files pip installed, as pip installed them (its RECORD's
    # sha256), not from files that a run compiling since then wrote (a run under another numba
    # rewrites them). Index files are left out: an earlier test that compiles another
    # specialisation of a kernel (float weights, say) adds it to the kernel's index.
    data = [path for path in loaded if path.endswith(".nbc")]
    assert len(data) >= 10, proc.stdout[-3000:]
    not_installed = [path for path in data if record.get(path) != _sha256(path)]
    assert not_installed == [], not_installed


def test_the_build_requires_what_the_kernels_import_with_the_runtimes_constraints():
    # pip resolves both lists at once, so the same constraint gives the build the numba the
    # package runs with: numba's cache holds only for the version that wrote it
    tomllib = pytest.importorskip("tomllib")   # Python >= 3.11
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    build = set(meta["build-system"]["requires"])
    for dep in meta["project"]["dependencies"]:
        if not dep.startswith("networkx"):   # only graph conversion imports it, not the kernels
            assert dep in build, dep
