"""matchpart.distributed on P = 1, 2, 4 ranks against the single-process pipeline and METIS.

    python3 benchmarks/distributed.py [--ranks 1,2,4] [--k 32] [--delaunay 20] [--rmat 18]

Generates delaunay 2^D and R-MAT 2^R into METIS files (so that the parallel reader runs),
then per graph and P launches ``mpiexec -n P`` on this script in worker mode and reports,
per phase (input, matching, contraction, initial, refinement), the slowest rank's time and
the most bytes any rank sent; the peak resident memory of the largest rank; and the cut
against ``matchpart.partition`` and pymetis (METIS) on the same graph, in this process.
The P = 1 ratios (/single 1t: partition wall time, /single CPU: CPU time) compare with the
single process on one thread, as each rank runs (NUMBA_NUM_THREADS=1): the same run on the
same resources; its time on every core is printed beside it. CPU time is the steadier
number when other work shares the machine.
Not a test: on a machine with fewer cores than ranks, the times measure oversubscription.
Each worker first partitions a small graph (compiling and loading the kernels), then
measures: phase times (slowest rank), bytes sent per rank, the resident memory before
reading (the baseline: Python, MPI, compiled kernels) and the peak, the rank's entries.
``--json`` keeps the raw per-rank numbers for benchmarks/distributed_model.py.

``--specs prgg:1048576,prmat:18`` partitions generator specs instead: the ranks generate
their own rows (no file, no rank holds the graph; the single process generates the same
graph). ``--mem-limit prgg:4194304 +1G`` runs the command line once on one process and once
on 4 ranks, each under that address-space limit (``--mem-limit``), and reports both outcomes.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PHASES = ("input", "matching", "contraction", "initial", "refinement")


def _rss_mb():
    """Current resident set (MiB), from /proc (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class PhaseMemory:
    """Samples this rank's resident memory every few milliseconds in a thread and keeps the
    largest value seen in each phase of ``comm`` (an estimate: compiled kernels hold the
    interpreter lock, so a peak inside one can be missed by a sample)."""

    def __init__(self, comm, every=0.005):
        import threading
        self.comm, self.every, self.peak = comm, every, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(self.every):
            phase, mb = self.comm._phase, _rss_mb()
            self.peak[phase] = max(self.peak.get(phase, 0.0), mb)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return {k: round(v, 1) for k, v in self.peak.items()}


def worker(path, k):
    """Run under mpiexec: one distributed partition; rank 0 prints a JSON line with, per
    rank, phase times, bytes sent per phase, the resident memory before reading (imports,
    MPI, compiled kernels: the baseline) and at the peak, and the rank's share of the graph."""
    from matchpart.distributed import partition
    from matchpart.distributed.comm import Comm
    from matchpart.distributed.read import load
    c = Comm()
    # compile and load the kernels before measuring: the graph must be above the gather size
    # (api.GATHER_MIN, 4000 vertices) and power-law too, or the distributed levels' kernels
    # (and their integer/float signatures) first run inside the measured partition
    for spec in ("delaunay:20000", "rmat:14"):
        warm = load(spec, c)
        partition(warm, 4, comm=c)
    del warm
    c = Comm()
    c.comm.Barrier()
    base_mb = _rss_mb()
    sampler = PhaseMemory(c)
    t0 = time.perf_counter()
    with c.phase("input"):
        g = load(path, c, renumber=True)   # as partition(path) loads it
    t_input = time.perf_counter() - t0
    share = {"n_local": int(g.n_local), "entries": int(g.cols.shape[0]), "ghosts": int(g.ghosts.shape[0])}
    # an untimed partition of the graph itself first (on its own Comm, so that the counters
    # below count one run), as the single process is timed on its second run (see single)
    partition(g, k, comm=Comm())
    c.comm.Barrier()
    t0, c0 = time.perf_counter(), time.process_time()
    res = partition(g, k, comm=c)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    res.timings["input"] = t_input
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    phase_mb = sampler.stop()
    rows = c.comm.gather({"timings": res.timings, "bytes": dict(res.bytes_sent),
                          "collectives": dict(res.collectives), "peak_mb": peak_mb,
                          "base_mb": base_mb, "phase_mb": phase_mb, "wall": wall, "cpu": cpu, **share}, root=0)
    if c.rank == 0:
        print(json.dumps({"cut": res.cut, "feasible": res.feasible, "ranks": rows,
                          "levels": [lv["n"] for lv in res.levels], "gathered_m": res.levels[-1]["m"]}))


def _mpiexec_env(ranks):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    mpiexec = str(mpiexec) if mpiexec.exists() else shutil.which("mpiexec")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    if ranks > (os.cpu_count() or 1):   # MPICH's waiting ranks sleep instead of spinning (README)
        env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    return mpiexec, env


def launch(path, k, ranks):
    mpiexec, env = _mpiexec_env(ranks)
    t0 = time.perf_counter()
    proc = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, "-m", "mpi4py", __file__, "--worker",
                           str(path), str(k)], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall"] = time.perf_counter() - t0
    return out


def single(path, k):
    import matchpart
    from matchpart import metrics
    matchpart.partition(matchpart.generate("delaunay:2000"), 4, device="cpu")   # compile / load the kernels first
    g = matchpart.generate(path) if matchpart.generators.is_spec(str(path)) else matchpart.load_graph(path)
    # one thread, as each rank runs (NUMBA_NUM_THREADS=1): the "same run" for the
    # P = 1 ratio; then every core (what a user of one machine gets), for reference. Each
    # twice, the second timed: kernels taken from 30 000 vertices up (parallel FM's rounds)
    # compile in the first (delaunay 2^20, k = 32: 4.5 s on one thread, 2.4 s warm)
    for _ in range(2):
        t0, c0 = time.perf_counter(), time.process_time()
        res = matchpart.partition(g, k, device="cpu", threads=1)
        t_ours, cpu_ours = time.perf_counter() - t0, time.process_time() - c0
    for _ in range(2):
        t0 = time.perf_counter()
        matchpart.partition(g, k, device="cpu")
        t_all = time.perf_counter() - t0
    metis_cut = t_metis = None
    try:
        import numpy as np
        import pymetis
        t0 = time.perf_counter()
        _, parts = pymetis.part_graph(k, xadj=np.asarray(g.indptr), adjncy=np.asarray(g.indices))
        t_metis = time.perf_counter() - t0
        metis_cut = metrics.edge_cut(g, np.asarray(parts))
    except ImportError:
        pass
    return {"cut": res.cut, "time": t_ours, "cpu": cpu_ours, "time_all_threads": t_all, "threads": os.cpu_count(),
            "metis_cut": metis_cut, "metis_time": t_metis, "n": g.n, "m": g.m}


def memory_limit(spec, room, k, ranks=4):
    """The command line on one process, then on ``ranks`` ranks, each under ``--mem-limit room``
    (one thread per process in both, so that the baselines compare): exit status, wall time,
    the limit each process got and the error line."""
    mpiexec, env = _mpiexec_env(ranks)
    out = Path(tempfile.mkdtemp(prefix="mp-memlimit-")) / "parts"
    cli = [sys.executable, "-m", "matchpart", "partition", spec, str(k), "--mem-limit", room, "-v", "-q",
           "-o", str(out)]
    print(f"\n{spec}, k={k}, --mem-limit {room} (one numba thread per process)\n")
    print("| processes | exit | wall s | limit (stderr) | outcome |")
    print("|---|---|---|---|---|")
    for p, cmd in ((1, cli), (ranks, [mpiexec, "-n", str(ranks), *cli])):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        lines = proc.stderr.strip().splitlines()
        limit = next((ln.split("limited to ", 1)[1] for ln in lines if "limited to" in ln), "-")
        outcome = next((ln for ln in lines if "error" in ln), None) or next(
            (ln for ln in proc.stdout.splitlines() if ln.startswith("cut:")), "?")
        print(f"| {p} | {proc.returncode} | {wall:.1f} | {limit} | {outcome.strip()} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--k", type=int, default=32)
    ap.add_argument("--delaunay", type=int, default=20, help="log2 of the Delaunay graph's vertices")
    ap.add_argument("--rmat", type=int, default=18, help="log2 of the R-MAT graph's vertices")
    ap.add_argument("--json", help="append every run's raw per-rank numbers to this file (JSON lines)")
    ap.add_argument("--specs", help="comma-separated generator specs, generated by the ranks (no files)")
    ap.add_argument("--mem-limit", nargs=2, metavar=("SPEC", "SIZE"),
                    help="only the memory-limit section: SPEC on 1 process and 4 ranks under --mem-limit SIZE")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker[0], int(args.worker[1]))
    if args.mem_limit:
        return memory_limit(*args.mem_limit, args.k)
    import matchpart
    ranks = [int(r) for r in args.ranks.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="mp-dist-"))
    try:
        specs = args.specs.split(",") if args.specs else (f"delaunay:{1 << args.delaunay}", f"rmat:{args.rmat}")
        for spec in specs:
            path = tmp / (spec.replace(":", "_") + ".graph")
            if args.specs:
                path = spec   # the ranks generate it (prgg, prmat, grid) or rank 0 does and scatters
            else:
                matchpart.save_graph(matchpart.generate(spec, seed=1), path)
            ref = single(path, args.k)
            print(f"\n{spec} (n={ref['n']}, m={ref['m']}), k={args.k}: single-process cut {ref['cut']} "
                  f"in {ref['time']:.2f} s on 1 thread ({ref['cpu']:.2f} s CPU; {ref['time_all_threads']:.2f} s on "
                  f"{ref['threads']} threads); METIS cut {ref['metis_cut']} in {ref['metis_time'] or 0:.2f} s\n")
            print("| P | cut | /single | /METIS | wall s | partition s | /single 1t | CPU s (max) | /single CPU | "
                  + " | ".join(PHASES)
                  + " | MiB sent per rank (max): " + ", ".join(PHASES)
                  + " | entries per rank (max) | base MiB/rank | peak MiB/rank (max) | gathered n, m |")
            print("|" + "---|" * (14 + len(PHASES)))
            for p in ranks:
                r = launch(path, args.k, p)
                if args.json:
                    with open(args.json, "a") as f:
                        f.write(json.dumps({"spec": spec, "P": p, "k": args.k, "n": ref["n"], "m": ref["m"],
                                            "single_cut": ref["cut"], "metis_cut": ref["metis_cut"],
                                            "load": os.getloadavg(), **r}) + "\n")
                rows = r["ranks"]
                t = {ph: max(row["timings"].get(ph, 0.0) for row in rows) for ph in PHASES}
                sent = {ph: max(row["bytes"].get(ph, 0) for row in rows) / 2**20 for ph in PHASES}
                metis = f"{r['cut'] / ref['metis_cut']:.3f}" if ref["metis_cut"] else "-"
                part_s = max(row["wall"] for row in rows)
                cpu_s = max(row["cpu"] for row in rows)
                print(f"| {p} | {r['cut']} | {r['cut'] / ref['cut']:.3f} | {metis} | "
                      f"{max(row['wall'] + row['timings']['input'] for row in rows):.1f} | "
                      f"{part_s:.2f} | {part_s / ref['time']:.2f} | {cpu_s:.2f} | {cpu_s / ref['cpu']:.2f} | "
                      + " | ".join(f"{t[ph]:.2f}" for ph in PHASES) + " | "
                      + ", ".join(f"{sent[ph]:.1f}" for ph in PHASES)
                      + f" | {max(row['entries'] for row in rows)} | {max(row['base_mb'] for row in rows):.0f}"
                      f" | {max(row['peak_mb'] for row in rows):.0f} | {r['levels'][-1]}, {r['gathered_m']} |"
                      + ("" if r["feasible"] else " (unbalanced)"), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
