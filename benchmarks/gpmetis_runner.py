"""What the benchmarks against gpmetis (contig.py, ncon.py, volume.py) share: their command
line (--runs, --k, --only), their instances (the shared graphs and the 2^16 families of
peers.py) and one gpmetis run, timed by its own "Partitioning" line."""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import matchpart  # noqa: E402
from peers import FAMILIES, GRAPHS, family  # noqa: E402


def parser(doc):
    """An argument parser with the shared options; a script adds its own."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--k", default="8,32")
    ap.add_argument("--only", help="comma-separated substrings of instance names")
    return ap


def require_gpmetis():
    """Exit with a hint when gpmetis is not installed."""
    if shutil.which("gpmetis") is None:
        sys.exit("gpmetis not found: apt-get install metis")


def instances(only=None):
    """(name, make) per instance, ``make()`` giving its Graph: the shared graphs, then the 2^16
    families; ``only``: comma-separated substrings of the names to keep."""
    inst = [(p.stem, lambda p=p: matchpart.load_graph(p)) for p in sorted(GRAPHS.glob("*.graph"))]
    inst += [(f"{f}:2^16", lambda f=f: family(f)) for f in FAMILIES]
    if only:
        inst = [i for i in inst if any(s in i[0] for s in only.split(","))]
    return inst


def gpmetis(path, k, *options):
    """(seconds, parts) of ``gpmetis OPTIONS PATH K``, seconds its own "Partitioning" time, or
    (None, None) when it fails."""
    out = subprocess.run(["gpmetis", *options, str(path), str(k)], capture_output=True, text=True)
    if out.returncode != 0:
        return None, None
    seconds = float(re.search(r"Partitioning:\s+([0-9.]+) sec", out.stdout).group(1))
    return seconds, np.loadtxt(f"{path}.part.{k}", dtype=np.int64)
