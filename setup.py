"""Build hook: the built package carries its numba kernels compiled (metadata: pyproject.toml).

After build_py copies the package into the build directory, matchpart/precompile.py runs there
in a child interpreter, with the build directory first on the path, and numba caches the kernels
it compiles beside their sources (``__pycache__/*.nbi``, ``*.nbc``), which the wheel then
carries: the README's first command compiled 20 s of kernels before it ran (issue 21) and now
loads them. MATCHPART_SKIP_PRECOMPILE=1 skips this (the first run compiles, as before); editable
installs skip it, since their sources change and compile into the tree's own cache on first use.
"""
import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SKIP = "MATCHPART_SKIP_PRECOMPILE"


class BuildPyWithKernels(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        package = Path(self.build_lib).resolve() / "matchpart"
        # an earlier build's (pip builds in ./build, which stays): its kernels are not this one's
        for stale in [*package.rglob("*.nbi"), *package.rglob("*.nbc")]:
            stale.unlink()
        if os.environ.get(SKIP, "") not in ("", "0"):
            return
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(package.parent), os.environ.get("PYTHONPATH")])))
        for name in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "MATCHPART_PLAIN_NUMBA"):   # would cache elsewhere or not at all
            env.pop(name, None)
        print(f"compiling matchpart's kernels into {package} (about 40 s on two cores; {SKIP}=1 skips it)", flush=True)
        # run from the build directory: run from the source tree, its own matchpart would be imported
        code = ("import matchpart, matchpart.precompile as p; "
                f"assert matchpart.__file__.startswith({str(package)!r}), matchpart.__file__; p.run(verbose=True)")
        proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=package.parent)
        if proc.returncode != 0:
            sys.exit(f"compiling matchpart's kernels failed (exit status {proc.returncode}); {SKIP}=1 skips it")
        if not any(package.rglob("*.nbi")):
            sys.exit(f"compiling matchpart's kernels cached nothing in {package}; {SKIP}=1 skips it")


setup(cmdclass={"build_py": BuildPyWithKernels})
