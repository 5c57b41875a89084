"""``matchpart partition`` under mpiexec: the distributed pipeline, rank 0 prints and writes."""
from __future__ import annotations

import sys
import time

from .comm import Comm, DistributedError


def cmd_partition(args, out, check_output=None):
    """The distributed counterpart of cli.cmd_partition (same arguments and output lines).

    Every rank runs this; an error on any rank ends all of them with the same message,
    printed once (by rank 0) and a non-zero exit status everywhere. ``check_output(path,
    graph=)``: the CLI's check of the output path (passed in: no import back into cli).
    """
    from .api import partition
    c = Comm()
    limit = None
    try:
        source = args.graph
        with c.collectively():
            if args.output is not None and c.rank == 0 and check_output is not None:
                check_output(args.output, graph=args.graph)
            if getattr(args, "device", "auto") == "gpu":
                raise DistributedError("--device gpu is not supported under mpiexec (the distributed "
                                       "pipeline runs on the CPU)")
            if getattr(args, "coarsening", None) not in (None, "matching"):
                raise DistributedError("only matching coarsening runs distributed")
            if getattr(args, "contig", False):
                raise DistributedError("--contig is not supported under mpiexec yet (run on one process)")
            if args.symmetrize or args.drop_self_loops:  # repairs: read on rank 0, then scattered
                source = _load_repaired(args) if c.rank == 0 else None
        if args.verbose and c.rank == 0:
            print(f"matchpart: partitioning on {c.size} MPI ranks", file=sys.stderr)
        if getattr(args, "mem_limit", None) is not None:
            limit = _limit_memory(c, args.mem_limit, args.verbose)
        kwargs = dict(eps=args.eps, seed=args.seed, preset=args.preset, comm=c)
        for name in ("matcher", "rating", "threads"):
            if getattr(args, name, None) is not None:
                kwargs[name] = getattr(args, name)
        t0 = time.perf_counter()
        res = partition(source, args.k, **kwargs)
        wall = time.perf_counter() - t0
    except DistributedError as exc:
        if c.rank != 0:
            return 1          # rank 0 reports it
        if exc.kind == "memory" and not str(exc).startswith("--mem-limit"):
            from ..memlimit import out_of_memory
            raise out_of_memory(exc, limit, c.size) from None
        raise
    except MemoryError as exc:   # on this rank only, mid-collective: the others cannot be told, only ended
        from ..memlimit import out_of_memory
        print(f"matchpart: error on rank {c.rank}: {out_of_memory(exc, limit, c.size)}", file=sys.stderr, flush=True)
        c.comm.Abort(1)
    except Exception as exc:  # noqa: BLE001 - raised on this rank only: the others would wait forever
        print(f"matchpart: error on rank {c.rank}: {exc.__class__.__name__}: {exc}", file=sys.stderr, flush=True)
        c.comm.Abort(1)
    if c.rank != 0:
        return 0
    out(f"cut:        {res.cut}")
    out(f"imbalance:  {res.imbalance:.4f}")
    out(f"feasible:   {'yes' if res.feasible else 'no (a block exceeds (1+eps)*ceil(W/K))'}")
    out(f"time:       {res.timings.get('total', wall):.3f} s" + "".join(
        f", {k} {v:.3f}" for k, v in res.timings.items() if k != "total"))
    out(f"ranks:      {c.size}")
    if args.output is not None:
        from ..io import write_partition
        write_partition(res.parts, args.output)
        out(f"wrote {args.output}")
    return 0


# Warm-up before --mem-limit: above api.GATHER_MIN vertices, so the distributed levels'
# kernels load too, not only the coarsest solve's (after grid:100x100, prgg:20000 still
# loaded 135 MiB of kernels per rank; after prgg:20000, prgg:262144 added 87 MiB).
WARM_SPEC = "prgg:20000"


def _limit_memory(c, mem_limit, verbose):
    """Every rank loads its kernels on a small graph, then caps its address space; returns the cap."""
    from ..memlimit import apply, mib
    from ..refine.parallel_fm import with_pair_rounds
    from .api import partition
    # parallel FM's rounds take over from 30 000 vertices: forced here, so they load too
    with_pair_rounds(lambda: partition(WARM_SPEC, 4, comm=c))
    got = None
    with c.collectively():
        got = apply(*mem_limit)
    caps = c.comm.gather(got, root=0)
    if verbose and c.rank == 0:
        print(f"matchpart: address space limited to {mib(max(x[0] for x in caps))} per rank (at most; "
              f"{mib(max(x[1] for x in caps))} after loading the kernels)", file=sys.stderr)
    return got[0]


def _load_repaired(args):
    from ..io import load_graph
    return load_graph(args.graph, symmetrize=args.symmetrize, drop_self_loops=args.drop_self_loops)
