"""Peak memory of partitioning one graph: matchpart's partition() against METIS (pymetis), each
in a fresh process, measured as that process's peak resident set (resource.getrusage).

    python3 benchmarks/memory.py [--spec delaunay:1048576] [--k 32]

The graph is generated and its CSR arrays saved with numpy first; each child process loads the
arrays (no parser's transient memory in the high-water mark), imports the same modules, and
reports its peak RSS before and after the partitioning call, so the graph's own share and the
partitioner's extra show separately.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
import numpy as np
import matchpart
tool, path, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
import pymetis
matchpart.partition("grid:4x4", 2, device="cpu")          # the same modules and kernels loaded in both children
arrays = np.load(path)
xadj, adjncy = arrays["indptr"], arrays["indices"]
g = matchpart.Graph(xadj, adjncy, np.ones(adjncy.shape[0], np.int64), np.ones(xadj.shape[0] - 1, np.int64),
                    validate=False)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
if tool == "metis":
    cut, parts = pymetis.part_graph(k, pymetis.CSRAdjacency(xadj.astype(np.int64), adjncy.astype(np.int64)))
else:
    cut = matchpart.partition(g, k, device="cpu").cut
t = time.perf_counter() - t
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"before_mib": before / 1024, "peak_mib": after / 1024, "cut": int(cut), "time": t}}))
"""


MAKE = r"""
import sys
sys.path.insert(0, {root!r})
import numpy as np
import matchpart
g = matchpart.load_graph(sys.argv[1])
np.savez(sys.argv[2], indptr=np.asarray(g.indptr), indices=np.asarray(g.indices))
"""


def run(tool, path, k):
    code = CHILD.format(root=os.path.abspath(ROOT))
    proc = subprocess.run([sys.executable, "-c", code, tool, path, str(k)], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{tool} child failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="delaunay:1048576")
    ap.add_argument("--k", type=int, default=32)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.npz")
        # made in a child too: Linux keeps a parent's peak RSS as its forked children's starting peak
        subprocess.run([sys.executable, "-c", MAKE.format(root=os.path.abspath(ROOT)), args.spec, path], check=True)
        rows = {tool: run(tool, path, args.k) for tool in ("matchpart", "metis")}
    print(f"{args.spec}, k = {args.k}: peak resident memory of a fresh process (MiB)")
    print("| tool | after loading | peak | extra for partitioning | cut | time s |")
    print("|---|---|---|---|---|---|")
    for tool, r in rows.items():
        print(f"| {tool} | {r['before_mib']:.0f} | {r['peak_mib']:.0f} | {r['peak_mib'] - r['before_mib']:.0f} "
              f"| {r['cut']} | {r['time']:.2f} |")
    m, p = rows["matchpart"], rows["metis"]
    print(f"peak ratio matchpart / METIS: {m['peak_mib'] / p['peak_mib']:.2f}; extra ratio: "
          f"{(m['peak_mib'] - m['before_mib']) / max(p['peak_mib'] - p['before_mib'], 1):.2f}")


if __name__ == "__main__":
    main()
