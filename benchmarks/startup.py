"""Start-up of the command line: the first run after installing (every kernel compiled, an
empty numba cache) and a warm run (kernels loaded from the cache), each in a fresh
interpreter, as a user meets them.

    python benchmarks/startup.py [--runs 3] [--warm-runs 7] [ROOT ...]

ROOT: a checkout (or worktree) whose ``matchpart`` package to run, put first on sys.path;
several are alternated run by run, for A/B comparisons on a machine whose speed drifts.
Without one, the installed package. Cold: ``partition delaunay:100000 8`` (the README's first
command) with NUMBA_CACHE_DIR set to a new empty directory; warm: ``partition 4elt.graph 8``
(../shared/graphs) after one run that fills the cache. Prints wall (from the interpreter's
start) and CPU (user + sys) per run, and their medians. Run it with nothing else running
(--runs 0: warm runs only).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRAPH_4ELT = Path(__file__).resolve().parents[2] / "shared" / "graphs" / "4elt.graph"

CHILD = r'''
import sys
root, args = sys.argv[1], sys.argv[2:]
if root:
    sys.path.insert(0, root)
import matchpart
if root:
    assert matchpart.__file__.startswith(root), matchpart.__file__
from matchpart import cli
try:
    cli.main(args)
except SystemExit:
    pass
'''


def run_once(root, args, cache_dir, out_dir):
    """Wall and CPU seconds of one command in a fresh interpreter."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # a user's install has its .pyc files
    t0, c0 = time.perf_counter(), os.times()
    proc = subprocess.run([sys.executable, "-c", CHILD, root, *args, "-q", "-o", os.path.join(out_dir, "p")],
                          capture_output=True, text=True, env=env, cwd=out_dir)
    wall, c1 = time.perf_counter() - t0, os.times()
    if proc.returncode != 0 or "cut:" not in proc.stdout:
        raise SystemExit(f"run failed ({root or 'installed'}): {proc.stderr[-2000:]}")
    return wall, (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="*", help="checkouts to compare (default: the installed package)")
    ap.add_argument("--runs", type=int, default=3, help="cold runs per root (default 3)")
    ap.add_argument("--warm-runs", type=int, default=7, help="warm runs per root (default 7; 0: none)")
    args = ap.parse_args()
    roots = [str(Path(r).resolve()) for r in args.roots] or [""]
    cold = {r: [] for r in roots}
    warm = {r: [] for r in roots}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            for root in roots:
                cache = tempfile.mkdtemp(dir=tmp)
                cold[root].append(run_once(root, ["partition", "delaunay:100000", "8"], cache, tmp))
        if args.warm_runs and GRAPH_4ELT.exists():
            caches = {root: tempfile.mkdtemp(dir=tmp) for root in roots}
            for root in roots:
                run_once(root, ["partition", str(GRAPH_4ELT), "8"], caches[root], tmp)   # fills the cache
            for _ in range(args.warm_runs):
                for root in roots:
                    warm[root].append(run_once(root, ["partition", str(GRAPH_4ELT), "8"], caches[root], tmp))
    for root in roots:
        name = root or "installed"
        for what, rows in (("first run (cold)", cold[root]), ("warm 4elt", warm[root])):
            if rows:
                walls = " ".join(f"{w:.2f}" for w, _ in rows)
                print(f"{name}: {what}: wall {walls} s; median wall {statistics.median(w for w, _ in rows):.2f} s, "
                      f"CPU {statistics.median(c for _, c in rows):.2f} s")


if __name__ == "__main__":
    main()
