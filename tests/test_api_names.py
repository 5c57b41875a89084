"""Every public name of the package is one object, however often and in whatever order it is
reached (attribute access, ``from matchpart import``, importing a submodule of the same name)."""
import importlib
import os
import subprocess
import sys
from pathlib import Path

import matchpart

ROOT = Path(__file__).resolve().parent.parent


def test_names_are_stable_on_repeated_access():
    for name in matchpart.__all__:
        first = getattr(matchpart, name)
        assert getattr(matchpart, name) is first, name
        assert getattr(importlib.import_module("matchpart"), name) is first, name


def test_compare_is_callable_before_and_after_importing_the_submodule():
    # a fresh interpreter: which of the two happens first must not matter
    code = ("import matchpart; a = matchpart.compare; import matchpart.compare as m; "
            "from matchpart import compare as b; assert a is b is m is matchpart.compare, (a, b, m); "
            "assert callable(a) and hasattr(a, 'format_table'); "
            "rows = matchpart.compare('grid:4x4', 2, ['local_max'], seeds=(0,), device='cpu'); "
            "assert rows[0]['matcher'] == 'local_max'")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
