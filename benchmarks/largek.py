"""Many blocks on clustered and power-law graphs: deep multilevel (matchpart.deep) against the
flat pipeline, KaMinPar and METIS, in one run.

    python3 benchmarks/largek.py [--cases rgg:1048576@1024,rmat:18@256] [--runs 3]
                                 [--tools default-2,default-2-flat,fast-2,kmp2,metis]
                                 [--write benchmarks/RESULTS.md]

Instances (--cases, spec@k): rgg 2^20 at k = 1024 and 8192, R-MAT 2^18 and Barabasi-Albert
2^18 (4 edges per new vertex) at k = 256 and 1024, eps = 0.03. Tools (interleaved per
instance, --runs times each; medians): our presets at a thread count ("default-2" = default
preset, 2 threads, deep where deep.applies), the same with deep multilevel off
("default-2-flat": deep's thresholds raised past k), KaMinPar at 1 or 2 threads ("kmp2"), METIS
(pymetis; once, --once). Cuts from the first run. --write replaces this benchmark's section of FILE.
Meshes at large k (delaunay 2^20, k = 1024 and 8192; flat: deep.applies is false there) are in
benchmarks/peers.py --large.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from matchpart import deep  # noqa: E402
from peers import kaminpar_call, metis_call, ours_call, write_section  # noqa: E402
from powerlaw import run_cases  # noqa: E402

CASES = "rgg:1048576@1024,rgg:1048576@8192,rmat:18@256,rmat:18@1024,ba:262144:4@256,ba:262144:4@1024"


def maker(tool, g, path, k):
    if tool == "metis":
        return metis_call(g, k)
    if tool.startswith("kmp"):
        return kaminpar_call(path, k, int(tool[3:]))
    flat = tool.endswith("-flat")
    preset, threads = tool.removesuffix("-flat").rsplit("-", 1)
    call = ours_call(g, k, preset, int(threads))
    if not flat:
        return call

    def go():
        keep = deep.DEEP_MIN_K
        keep_dense = deep.DEEP_MIN_K_DENSE_POWER_LAW
        deep.DEEP_MIN_K = deep.DEEP_MIN_K_DENSE_POWER_LAW = k + 1
        try:
            return call()
        finally:
            deep.DEEP_MIN_K, deep.DEEP_MIN_K_DENSE_POWER_LAW = keep, keep_dense
    return go


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=CASES, help="spec@k, comma-separated")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tools", default="default-2,default-2-flat,fast-2,kmp2,metis")
    ap.add_argument("--once", default="metis", help="tools timed in the first run only")
    ap.add_argument("--write", default="")
    args = ap.parse_args(argv)
    cases = [(spec, int(k)) for spec, k in (case.rsplit("@", 1) for case in args.cases.split(","))]
    body = run_cases(cases, args, argv, "largek.py", ("rgg:5000", 200), make=maker)
    if args.write:
        write_section(args.write, "## largek (benchmarks/largek.py): deep multilevel on clustered and power-law graphs",
                      body)


if __name__ == "__main__":
    main()
