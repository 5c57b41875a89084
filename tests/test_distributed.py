"""matchpart.distributed under mpiexec: identical matchings for P = 1..4, parallel reading and
contraction equal to the single-process ones, balanced partitions with cuts close to the
single-process pipeline's, and clean failures (one message, non-zero exit, no hang).

Each launch runs many checks (tests/mpi_worker.py); launches are few because each costs
seconds. Skipped without mpi4py or mpiexec (``pip install 'matchpart[mpi]'``).
"""
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import SHARED_GRAPHS, import_recorder

pytestmark = pytest.mark.mpi

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).resolve().parent / "mpi_worker.py"
# Generous: a hung rank is what this guards against, not a slow machine.
LAUNCH_TIMEOUT = 300
# Distributed cut / single-process cut, geometric mean over the shared graphs at k = 8.
CUT_RATIO_BOUND = 1.05


def _mpiexec():
    """The mpiexec next to this Python (the mpich wheel installs it there), else on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def _skip_without_mpi():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (pip install 'matchpart[mpi]')")
    if _mpiexec() is None:
        pytest.skip("mpiexec not found")


def _launch(n, args, timeout=LAUNCH_TIMEOUT, threads=1):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS="1")
    if n > (os.cpu_count() or 1):
        # MPICH's waiting ranks spin; with more ranks than cores they take the cores from the
        # ranks with work. Sleeping instead of yielding halved P = 4 runs on 2 cores.
        env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    return subprocess.run([_mpiexec(), "-n", str(n), *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=str(ROOT))


def _script_report(tmp_path, text, ranks, threads):
    """Run the script ``text`` on ``ranks`` ranks of ``threads`` numba threads each; returns
    the JSON report on its last line of output."""
    _skip_without_mpi()
    script = tmp_path / "script.py"
    script.write_text(text)
    proc = _launch(ranks, [sys.executable, "-m", "mpi4py", str(script)], threads=threads)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _worker(n, tmp_path, partition=False):
    _skip_without_mpi()
    if not SHARED_GRAPHS.is_dir():
        pytest.skip("../shared/graphs is absent")
    args = [sys.executable, "-m", "mpi4py", str(WORKER), str(tmp_path), str(SHARED_GRAPHS)]
    proc = _launch(n, args + (["partition"] if partition else []))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _assert_checks(report):
    failed = [name for name, ok in report["checks"].items() if ok is not True]
    assert not failed, failed
    assert any(name.startswith("match path") for name in report["checks"])  # the greedy tail ran


@pytest.mark.parametrize("ranks", [1, 3])
def test_matching_reading_contraction_match_single_process(ranks, tmp_path):
    _assert_checks(_worker(ranks, tmp_path))


@pytest.mark.parametrize("ranks", [1, 2, 4])   # 1: the single process's refiners (api._refine_one_rank)
def test_partitions_balanced_and_close_to_single_process(ranks, tmp_path):
    report = _worker(ranks, tmp_path, partition=True)
    _assert_checks(report)
    ratios = report["cut_ratios"]
    assert len(ratios) >= 5
    gmean = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
    assert gmean <= CUT_RATIO_BOUND, ratios


def test_cli_runs_distributed_and_fails_cleanly(tmp_path):
    _skip_without_mpi()
    if not SHARED_GRAPHS.is_dir():
        pytest.skip("../shared/graphs is absent")
    cli = [sys.executable, "-m", "matchpart", "partition"]
    out = tmp_path / "airfoil1.part"
    ok = _launch(2, cli + [str(SHARED_GRAPHS / "airfoil1.graph"), "4", "-o", str(out)])
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count("cut:") == 1 and "ranks:      2" in ok.stdout   # rank 0 prints
    parts = [int(x) for x in out.read_text().split()]
    assert len(parts) == 4253 and set(parts) == {0, 1, 2, 3}
    # a malformed line near the end: only the last rank parses it, every rank must stop
    lines = (SHARED_GRAPHS / "airfoil1.graph").read_text().splitlines()
    bad = tmp_path / "bad.graph"
    bad.write_text("\n".join(lines[:-2] + [lines[-2] + " 12x", lines[-1]]) + "\n")
    proc = _launch(3, cli + [str(bad), "4"], timeout=120)
    assert proc.returncode != 0
    assert proc.stderr.count("token '12x' is not an integer") == 1, proc.stderr
    assert f"{bad}:{len(lines) - 1}" in proc.stderr
    # a usage error is reported once too
    proc = _launch(2, cli + [str(bad), "0"], timeout=120)
    assert proc.returncode != 0 and proc.stderr.count("error:") == 1, proc.stderr


_GENERATED = """
import json, sys
import numpy as np
import matchpart
from matchpart.distributed import partition
from matchpart.distributed.comm import Comm
from matchpart.distributed.read import load
c = Comm()
checks = {}
for spec in ("prgg:3000", "prgg:40:seed=3", "prmat:10", "prmat:9:4:seed=2", "grid:7x9", "grid:3x4x5"):
    g = load(spec, c)
    whole = g.gather_graph(root=0)
    share = c.comm.gather(int(g.cols.shape[0]), root=0)
    if c.rank == 0:
        ref = matchpart.generate(spec)   # the single process's graph: the reference
        checks[spec] = all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in (
            (whole.indptr, ref.indptr), (whole.indices, ref.indices), (whole.ewgt, ref.ewgt), (whole.vwgt, ref.vwgt)))
        # each rank made only its own rows: the largest share is far below the whole
        checks[spec + " shares"] = sum(share) == ref.indices.shape[0] and (
            spec == "prgg:40:seed=3" or max(share) < 0.75 * ref.indices.shape[0])
res = partition("prgg:20000", 4, comm=c)
if c.rank == 0:
    g = matchpart.generate("prgg:20000")
    from matchpart import metrics
    checks["partition prgg"] = bool(metrics.edge_cut(g, res.parts) == res.cut and res.feasible)
    print(json.dumps(checks))
"""


_THREADS = """
import json
import numpy as np
from matchpart.distributed import partition
from matchpart.distributed.comm import Comm
c = Comm()
shared = partition("prgg:6000", 4, comm=c)
one = partition("prgg:6000", 4, comm=c, threads=1)
if c.rank == 0:
    print(json.dumps({"shared": shared.threads, "one": one.threads, "on_node": c.ranks_on_node(),
                      "same": bool(np.array_equal(shared.parts, one.parts)) and shared.cut == one.cut}))
"""


def test_ranks_share_the_node_s_threads_and_any_count_gives_the_same_partition(tmp_path):
    """Numba started with 4 threads in each of 2 ranks on one node: by default each rank
    runs 4 // 2 = 2 of them (all 4 in each oversubscribed the cores); threads=1 gives the
    same partition."""
    report = _script_report(tmp_path, _THREADS, ranks=2, threads=4)
    assert report == {"shared": 2, "one": 1, "on_node": 2, "same": True}, report


_ONE_RANK_THREADS = """
import json
import numpy as np
from matchpart.distributed import partition
from matchpart.distributed.comm import Comm
c = Comm()
runs = [partition(spec, k, comm=c, threads=t) for spec, k in (("prgg:40000", 8), ("prmat:14", 16)) for t in (1, 2, 3)]
print(json.dumps({"threads": [r.threads for r in runs],
                  "same": [bool(np.array_equal(runs[i].parts, runs[j].parts)) and runs[i].cut == runs[j].cut
                           for i, j in ((0, 1), (0, 2), (3, 4), (3, 5))]}))
"""


def test_one_rank_gives_the_same_partition_for_every_thread_count(tmp_path):
    """One rank runs the single process's contraction and refiners on its threads
    (api._refine_one_rank): 1, 2 and 3 threads (more than the cores) give one partition."""
    report = _script_report(tmp_path, _ONE_RANK_THREADS, ranks=1, threads=3)
    assert report == {"threads": [1, 2, 3, 1, 2, 3], "same": [True] * 4}, report


@pytest.mark.parametrize("ranks", [2, 4])
def test_generated_specs_give_the_single_process_graph_for_every_p(ranks, tmp_path):
    checks = _script_report(tmp_path, _GENERATED, ranks=ranks, threads=1)
    assert len(checks) == 13 and all(checks.values()), checks


_KILLED_RANK = """
import os, signal, sys, threading, time
import matchpart.distributed as mpd
from mpi4py import MPI
c = MPI.COMM_WORLD
mpd.partition("delaunay:20000", 8)          # warm: compiled, every rank inside the pipeline
c.Barrier()
def kill():   # SIGKILL: no Python handler, no MPI_Abort: the launcher must notice
    with open(sys.argv[1], "w") as f:
        f.write(repr(time.time()))
    os.kill(os.getpid(), signal.SIGKILL)
if c.Get_rank() == 1:
    threading.Timer(0.3, kill).start()
for _ in range(1000):
    mpd.partition("delaunay:20000", 8)
print("finished", flush=True)
"""


def test_a_rank_killed_mid_run_ends_the_others_with_an_error(tmp_path):
    _skip_without_mpi()
    script = tmp_path / "killed.py"
    script.write_text(_KILLED_RANK)
    stamp = tmp_path / "killed_at"
    proc = _launch(3, [sys.executable, str(script), str(stamp)], timeout=240)
    ended = time.time()
    assert proc.returncode != 0 and "finished" not in proc.stdout
    assert ended - float(stamp.read_text()) < 10, proc.stderr[-2000:]   # seconds, never a hang


# A graph and a room above each process's address space after loading its kernels
# (--mem-limit +SIZE) that one process cannot partition in and each of 4 ranks can: measured
# (one numba thread per process), prgg:262144 at k = 8 raised one process's peak by 198-296
# MiB and each of 4 ranks' by 87 MiB.
MEM_GRAPH, MEM_ROOM = "prgg:262144", "+140M"


def test_a_graph_one_process_cannot_hold_under_a_limit_partitions_on_4_ranks(tmp_path):
    _skip_without_mpi()
    out = tmp_path / "parts"
    cli = [sys.executable, "-m", "matchpart", "partition", MEM_GRAPH, "8", "--mem-limit", MEM_ROOM, "-q", "-o",
           str(out)]
    one = subprocess.run(cli, capture_output=True, text=True, timeout=LAUNCH_TIMEOUT, cwd=str(ROOT),
                         env=dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1"))
    assert one.returncode == 1, (one.returncode, one.stderr[-2000:])
    # one line, the memory kind's message, no traceback (after the notice a cold cache prints)
    said = [line for line in one.stderr.strip().splitlines() if not line.startswith("matchpart: compiling kernels")]
    assert len(said) == 1 and said[0].startswith("matchpart: error: out of memory:"), one.stderr[-2000:]
    assert not out.exists()
    # a first run at this size compiles kernels the command's small warm-up does not reach
    # (in CI's fresh cache), and LLVM aborts when it runs out of room while compiling
    warm = _launch(4, cli[:cli.index("--mem-limit")] + cli[cli.index("--mem-limit") + 2:])
    assert warm.returncode == 0, warm.stderr[-3000:]
    out.unlink()
    four = _launch(4, cli)
    assert four.returncode == 0, four.stderr[-3000:]
    assert "ranks:      4" in four.stdout
    parts = np.loadtxt(out, dtype=np.int64)
    assert parts.shape == (int(MEM_GRAPH.split(":")[1]),) and set(np.unique(parts)) == set(range(8))


def test_mem_limit_below_the_baseline_and_bad_sizes_are_clean_errors(tmp_path):
    cli = [sys.executable, "-m", "matchpart", "partition", "grid:20x20", "4", "-o", str(tmp_path / "p")]
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    low = subprocess.run(cli + ["--mem-limit", "10M"], capture_output=True, text=True, env=env, timeout=300)
    assert low.returncode == 1 and "is below what this process holds" in low.stderr, low.stderr[-2000:]
    bad = subprocess.run(cli + ["--mem-limit", "lots"], capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and "800M" in bad.stderr and "Traceback" not in bad.stderr


def test_memory_errors_carry_the_memory_kind():
    from matchpart.errors import MatchpartError, OutOfMemoryError
    from matchpart.memlimit import out_of_memory, parse_limit
    exc = out_of_memory(MemoryError("Unable to allocate 8.0 GiB"), limit=1 << 30)
    assert isinstance(exc, OutOfMemoryError) and isinstance(exc, MatchpartError) and isinstance(exc, MemoryError)
    assert exc.kind == "memory" and exc.limit == 1 << 30 and "1024 MiB" in str(exc) and "mpiexec" in str(exc)
    assert parse_limit("+300M") == (300 << 20, True) and parse_limit("1.5G") == (3 << 29, False)
    assert parse_limit("2GiB") == (2 << 30, False) and parse_limit("4096") == (4096, False)
    for bad in ("", "-1G", "1X", "0", "+"):
        with pytest.raises(ValueError):
            parse_limit(bad)


def test_importing_matchpart_does_not_import_mpi4py():
    # recorded attempts, not sys.modules: the check must fail even where mpi4py is not installed
    code = import_recorder(["mpi4py"]) + (
        "import matchpart, matchpart.distributed, matchpart.cli\n"
        "assert import_attempts == [], import_attempts\n"
        "try:\n"
        "    import mpi4py\n"
        "except ImportError:\n"
        "    pass\n"
        "assert import_attempts == ['mpi4py'], import_attempts   # the recorder sees an attempt\n"
        "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT),
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.stdout.strip() == "ok", proc.stderr
