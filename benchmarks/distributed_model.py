"""A scaling model of matchpart.distributed fitted to benchmarks/distributed.py's runs.

    python3 benchmarks/distributed.py --json runs.json
    python3 benchmarks/distributed_model.py runs.json [--cores 2] [--edges 1e10] [--ranks 256]

Per rank r of a run with P ranks: E = its entries of the fine graph (2m/P), B = the bytes
it sent, C = its collective operations, Rc = the entries of the coarsest graph, which every
rank gathers and partitions (coarsen_to * P vertices). Fitted:

- memory (least squares over every rank of every run): peak - baseline = mu * E + rho * Rc;
- bytes (runs with P > 1): B = beta * E * (1 - 1/P), what a 1-D block distribution of a graph
  whose numbering has no locality cuts (both generated graphs are numbered so);
- time, per graph family: compute = alpha * E from the P = 1 run (no messages, no waiting);
  the gathered graph's V-cycles = gamma * Rc from the 'initial' phase; omega = measured time
  of the P <= cores runs / alpha * E, the cost of being distributed here (ghosts, packing,
  waiting for the slowest rank) on a machine whose two cores were shared with other work.

The prediction for --edges on --ranks takes E = 2 * edges / ranks, Rc = the gathered
graph's measured entries per vertex times coarsen_to * ranks vertices, the collectives per
level times log2(n / gathered n) levels, and adds the network at an assumed bandwidth and
latency per rank (nothing here measures a network: the ranks talk through shared memory).
Few points: two graphs, P = 1, 2, 4, one machine; every parameter rests on 1-7 ranks' rows
and the residuals are printed.
"""
from __future__ import annotations

import argparse
import json
import math

import numpy as np

PHASES_SCALED = ("input", "matching", "contraction", "refinement")
MIB = 2**20


def rows_of(runs, cores):
    out = []
    for run in runs:
        p = run["P"]
        for r in run["ranks"]:
            out.append({"spec": run["spec"], "P": p, "E": r["entries"], "B": sum(r["bytes"].values()),
                        "C": sum(r.get("collectives", {}).values()), "Rc": 2 * run["gathered_m"],
                        "t": sum(r["timings"].get(ph, 0.0) for ph in PHASES_SCALED),
                        "t_init": r["timings"].get("initial", 0.0), "mem": (r["peak_mb"] - r["base_mb"]) * MIB,
                        "base": r["base_mb"] * MIB, "oversubscribed": p > cores, "n": run["n"], "m": run["m"],
                        "gathered_n": run["levels"][-1], "levels": len(run["levels"]) - 1})
    return out


def lstsq(x, y):
    coef, *_ = np.linalg.lstsq(np.asarray(x, dtype=float), np.asarray(y, dtype=float), rcond=None)
    return coef


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--edges", type=float, default=1e10)
    ap.add_argument("--ranks", type=int, default=256)
    ap.add_argument("--coarsen-to", type=int, default=640, help="coarsen_to for k = 32 (default preset)")
    ap.add_argument("--bandwidth", type=float, default=1e9, help="assumed network bytes/s per rank")
    ap.add_argument("--latency", type=float, default=50e-6, help="assumed seconds per collective at --ranks")
    args = ap.parse_args()
    runs = [json.loads(line) for line in open(args.runs) if line.strip()]
    rows = rows_of(runs, args.cores)

    mu, rho = lstsq([[r["E"], r["Rc"]] for r in rows], [r["mem"] for r in rows])
    multi = [r for r in rows if r["P"] > 1]
    (beta,) = lstsq([[r["E"] * (1 - 1 / r["P"])] for r in multi], [r["B"] for r in multi])
    fam = {}
    for spec in sorted({r["spec"] for r in rows}):
        mine = [r for r in rows if r["spec"] == spec]
        one = [r for r in mine if r["P"] == 1]
        alpha = sum(r["t"] for r in one) / sum(r["E"] for r in one)
        (gamma,) = lstsq([[r["Rc"]] for r in mine if not r["oversubscribed"]],
                         [r["t_init"] for r in mine if not r["oversubscribed"]])
        distributed = [r for r in mine if 1 < r["P"] and not r["oversubscribed"]]
        omega = float(np.median([r["t"] / (alpha * r["E"]) for r in distributed])) if distributed else 1.0
        fam[spec] = {"alpha": alpha, "gamma": gamma, "omega": omega, "rows": mine}
    print(f"memory: mu = {mu:.0f} bytes per fine entry, rho = {rho:.0f} bytes per gathered entry")
    print(f"bytes sent: beta = {beta:.0f} bytes per cut entry")
    for spec, f in fam.items():
        print(f"{spec}: alpha = {f['alpha'] * 1e9:.0f} ns per entry (P = 1), gamma = {f['gamma'] * 1e9:.0f} ns "
              f"per gathered entry, omega = {f['omega']:.2f} (P <= cores)")
    print("\n| graph | P | rank entries | peak - base MiB | model | bytes sent MiB | model | time s | "
          "alpha * E | x omega | initial s | model |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f = fam[r["spec"]]
        te = f["alpha"] * r["E"]
        print(f"| {r['spec']} | {r['P']}{' (oversubscribed)' if r['oversubscribed'] else ''} | {r['E']} | "
              f"{r['mem'] / MIB:.0f} | {(mu * r['E'] + rho * r['Rc']) / MIB:.0f} | {r['B'] / MIB:.0f} | "
              f"{beta * r['E'] * (1 - 1 / r['P']) / MIB:.0f} | {r['t']:.1f} | {te:.1f} | {te * f['omega']:.1f} | "
              f"{r['t_init']:.2f} | {f['gamma'] * r['Rc']:.2f} |")

    p = args.ranks
    e = 2 * args.edges / p
    nc = max(4000, args.coarsen_to * p)
    print(f"\nprediction for {args.edges:.0e} edges on {p} ranks: {e:.3g} entries per rank, gathered graph "
          f"{nc} vertices; assumed network {args.bandwidth / 1e9:g} GB/s and {args.latency * 1e6:g} us per "
          "collective per rank")
    for spec, f in fam.items():
        big = max(f["rows"], key=lambda r: r["P"])
        rc = big["Rc"] / big["gathered_n"] * nc            # the gathered graph's entries per vertex kept
        n_big = args.edges * big["n"] / big["m"]
        levels = max(1.0, math.log2(n_big / nc))
        coll = big["C"] / max(big["levels"], 1) * levels
        sent = beta * e * (1 - 1 / p)
        compute = f["alpha"] * e
        net = sent / args.bandwidth + coll * args.latency
        init = f["gamma"] * rc
        mem = big["base"] + mu * e + rho * rc
        print(f"- like {spec}: compute {compute:.0f} s ({compute * f['omega']:.0f} s with omega) + network "
              f"{net:.0f} s ({sent / 2**30:.1f} GiB sent, {coll:.0f} collectives over {levels:.0f} levels) + "
              f"gathered graph {init:.0f} s ({rc:.3g} entries, {rc / nc:.0f} per vertex as measured) = "
              f"{compute + net + init:.0f}-{compute * f['omega'] + net + init:.0f} s; memory "
              f"{mem / 2**30:.1f} GiB per rank ({mu * e / 2**30:.1f} the rank's levels, {rho * rc / 2**30:.1f} the "
              f"gathered graph); the gather moves {rc * 24 * p / 2**30:.0f} GiB in all")


if __name__ == "__main__":
    main()
