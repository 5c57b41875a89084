"""Cut quality and time of matchpart against METIS (pymetis) and KaMinPar, side by side in one run.

    python3 benchmarks/quality.py [--preset default] [--matcher local_max] [--coarsening matching]
                                  [--k 2,4,8,16,32,64] [--graphs 4elt,jazz] [--runs 1]
    python3 benchmarks/quality.py --matcher local_max,suitor,red_blue   # one summary line each

For every shared graph (../shared/graphs/*.graph) and k: our cut and time, METIS's and
KaMinPar's (each with eps = 0.03; a peer result whose heaviest block exceeds
Lmax = (1 + eps) * ceil(W / k) is marked "(over)"), the ratio ours / METIS, and at the end
the geometric means of the cut ratios, the number of infeasible results of ours and the
total time ratios. Times are the median of --runs runs (cuts are deterministic per seed).
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import matchpart  # noqa: E402
from matchpart import metrics  # noqa: E402
from matchpart.io import load_graph  # noqa: E402

GRAPHS = ROOT.parent / "shared" / "graphs"
KS = (2, 4, 8, 16, 32, 64)
EPS = 0.03


def timed(fn, runs):
    """(result of the first run, median wall time over ``runs`` runs)."""
    times, out = [], None
    for r in range(runs):
        t0 = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t0)
        out = res if out is None else out
    return out, statistics.median(times)


def run_metis(g, k, runs):
    import pymetis
    h = g.backend.to_host
    xadj, adjncy = h(g.indptr).astype(np.int64), h(g.indices).astype(np.int64)
    ew, vw = h(g.ewgt).astype(np.int64), h(g.vwgt).astype(np.int64)
    adjacency = pymetis.CSRAdjacency(xadj, adjncy) if hasattr(pymetis, "CSRAdjacency") else None
    if adjacency is not None:
        call = lambda: pymetis.part_graph(k, adjacency, eweights=ew, vweights=vw)  # noqa: E731
    else:
        call = lambda: pymetis.part_graph(k, xadj=xadj, adjncy=adjncy, eweights=ew, vweights=vw)  # noqa: E731
    (cut, parts), t = timed(call, runs)
    return np.asarray(parts, dtype=np.int64), t


def run_kaminpar(path, k, runs):
    try:
        import kaminpar
    except ImportError:
        return None, float("nan")
    kg = kaminpar.load_graph(str(path), kaminpar.GraphFileFormat.METIS)

    def go():
        kaminpar.reseed(0)
        return kaminpar.KaMinPar(1, kaminpar.default_context()).compute_partition(kg, k, EPS)
    parts, t = timed(go, runs)
    return np.asarray(parts, dtype=np.int64), t


def judge(g, parts, k):
    """(cut, over) for a peer's partition under our balance bound."""
    lmax = metrics.max_block_weight(g.total_vwgt, k, EPS)
    bw = metrics.block_weights(g, parts, k)
    return metrics.edge_cut(g, parts), bool((bw > lmax).any())


def gmean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def run_ours(g, k, args, matcher, coarsening):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return timed(lambda: matchpart.partition(
            g, k, matcher=matcher, rating=args.rating, eps=EPS, seed=args.seed,
            device=args.device, preset=args.preset, coarsening=coarsening), args.runs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="default")
    ap.add_argument("--matcher", default="local_max",
                    help="matcher, or a comma list: then one summary line per matcher (peers run once)")
    ap.add_argument("--rating", default="expansion_star2")
    ap.add_argument("--coarsening", default="matching",
                    help="matching or cluster, or a comma list of both (summarised like --matcher)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--k", default=",".join(map(str, KS)), help="comma-separated block counts")
    ap.add_argument("--graphs", default="", help="comma-separated graph names (default: all shared graphs)")
    ap.add_argument("--runs", type=int, default=1, help="runs per measurement; the median time is reported")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-kaminpar", action="store_true")
    args = ap.parse_args(argv)

    ks = [int(x) for x in args.k.split(",")]
    paths = sorted(GRAPHS.glob("*.graph"))
    if args.graphs:
        wanted = set(args.graphs.split(","))
        paths = [p for p in paths if p.stem in wanted]
    if not paths:
        sys.exit(f"no graphs found in {GRAPHS}")
    configs = [(m, c) for c in args.coarsening.split(",") for m in args.matcher.split(",")]
    print(f"matchpart preset={args.preset} matcher={args.matcher} rating={args.rating} "
          f"coarsening={args.coarsening} device={args.device} eps={EPS} runs={args.runs}")
    head = f"{'graph':<20}{'k':>4}{'ours':>9}{'t_ours':>8}{'METIS':>15}{'t_metis':>8}" \
           f"{'KaMinPar':>15}{'t_kmp':>8}{'ours/METIS':>11}{'ours/KMP':>9}"
    if len(configs) == 1:
        print(head)
        print("-" * len(head))
    # one warm-up call so numba compilation / caches do not count against the first graph
    for matcher, coarsening in configs:
        run_ours(load_graph(paths[0]), 2, args, matcher, coarsening)
    summary = {cfg: {"ratios_m": [], "ratios_k": [], "infeasible": 0, "time": 0.0} for cfg in configs}
    tot = {"metis": 0.0, "kaminpar": 0.0}
    for path in paths:
        g = load_graph(path)
        for k in ks:
            if k > g.n:
                continue
            mp, t_m = run_metis(g, k, args.runs)
            m_cut, m_over = judge(g, mp, k)
            if args.no_kaminpar:
                kp, t_k = None, float("nan")
            else:
                kp, t_k = run_kaminpar(path, k, args.runs)
            k_cut, k_over = judge(g, kp, k) if kp is not None else (float("nan"), False)
            tot["metis"] += t_m
            tot["kaminpar"] += t_k if kp is not None else 0.0
            for cfg in configs:
                res, t_ours = run_ours(g, k, args, *cfg)
                r_m = res.cut / max(m_cut, 1)
                r_k = res.cut / max(k_cut, 1) if kp is not None else float("nan")
                s = summary[cfg]
                s["ratios_m"].append(r_m)
                s["ratios_k"].append(r_k)
                s["infeasible"] += not res.feasible
                s["time"] += t_ours
                if len(configs) > 1:
                    continue
                ours = f"{res.cut}{'' if res.feasible else '!'}"
                ms = f"{m_cut}{' (over)' if m_over else ''}"
                ks_ = f"{k_cut}{' (over)' if k_over else ''}" if kp is not None else "-"
                print(f"{path.stem:<20}{k:>4}{ours:>9}{t_ours:>8.3f}{ms:>15}{t_m:>8.3f}{ks_:>15}"
                      f"{t_k:>8.3f}{r_m:>11.3f}{r_k:>9.3f}", flush=True)
    if len(configs) == 1:
        s = summary[configs[0]]
        print("-" * len(head))
        print(f"geometric mean cut ratio ours/METIS    : {gmean(s['ratios_m']):.3f}")
        print(f"geometric mean cut ratio ours/KaMinPar : {gmean(s['ratios_k']):.3f}")
        print(f"infeasible results (ours, marked !)    : {s['infeasible']} of {len(s['ratios_m'])}")
        print(f"total time ours {s['time']:.2f}s  METIS {tot['metis']:.2f}s  KaMinPar {tot['kaminpar']:.2f}s  "
              f"ours/METIS {s['time'] / max(tot['metis'], 1e-9):.1f}x")
        return
    print(f"{'matcher':<18}{'coarsening':<12}{'gmean/METIS':>12}{'gmean/KMP':>10}{'infeasible':>11}"
          f"{'time s':>9}{'/METIS':>8}")
    for (matcher, coarsening), s in summary.items():
        print(f"{matcher:<18}{coarsening:<12}{gmean(s['ratios_m']):>12.3f}{gmean(s['ratios_k']):>10.3f}"
              f"{s['infeasible']:>7} of {len(s['ratios_m']):<3}{s['time']:>8.2f}"
              f"{s['time'] / max(tot['metis'], 1e-9):>7.1f}x", flush=True)
    print(f"(METIS total {tot['metis']:.2f}s, KaMinPar {tot['kaminpar']:.2f}s)")


if __name__ == "__main__":
    main()
