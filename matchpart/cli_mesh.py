"""``matchpart partition-mesh MESH K``: a METIS mesh file partitioned as mpmetis does it
(MESH.epart.K and MESH.npart.K)."""
from __future__ import annotations

import json
import time

from .cli_common import _check_output, _eps, _seed, threads_arg
from .errors import MatchpartError

HELP = "partition a mesh's elements and nodes (METIS mesh file; writes MESH.epart.K and MESH.npart.K)"
EPILOG = """\
examples:
  matchpart partition-mesh wing.mesh 16 --ncommon 2          # triangles or quads sharing a side
  matchpart partition-mesh tets.mesh 64 --ncommon 3 --json   # tetrahedra sharing a face
  matchpart partition-mesh wing.mesh 16 --gtype nodal        # partition the nodes instead

The mesh file is mpmetis's: a header 'ne [ncon]', then one line per element with its ncon
weights (if any) and its 1-based node ids (any element type, mixed types too); lines
starting with % are comments. With --gtype dual (the default, as mpmetis) the elements are
partitioned through the dual graph (elements adjacent when they share at least --ncommon
nodes; default 1, as mpmetis) and each node takes the block most of its elements are in;
with --gtype nodal the nodes are partitioned through the nodal graph (nodes adjacent when
they share an element) and each element takes the block most of its nodes are in. The
output files have one 0-based block per line, as mpmetis writes them. The cut is that of
the partitioned graph (mpmetis's 'Edgecut').
"""


def add_parser(add):
    s = add("partition-mesh", HELP, EPILOG)
    s.add_argument("mesh", metavar="MESH", help="METIS mesh file")
    s.add_argument("k", metavar="K", type=_k, help="number of blocks")
    s.add_argument("--gtype", default="dual", choices=("dual", "nodal"),
                   help="partition the elements through the dual graph (default) or the nodes through the nodal graph")
    s.add_argument("--ncommon", type=_ncommon, default=1, metavar="N",
                   help="nodes two elements must share to be adjacent in the dual graph (default 1, as mpmetis; "
                        "2 for triangles and quads, 3 for tetrahedra, 4 for hexahedra)")
    s.add_argument("--eps", type=_eps, default=0.03,
                   help="imbalance: blocks weigh at most (1+eps)*ceil(W/K) (default 0.03)")
    s.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    s.add_argument("--preset", default="default", choices=("fast", "default", "strong"),
                   help="speed/quality trade-off (default: default)")
    s.add_argument("-o", "--output", metavar="PREFIX",
                   help="write PREFIX.epart.K and PREFIX.npart.K (default: MESH, beside the mesh)")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    threads_arg(s)


def _k(text):
    import argparse
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


_ncommon = _k


def cmd_partition_mesh(args, out):
    import numpy as np

    from .io import write_partition
    from .io.metis_mesh import read_mesh
    from .mesh import part_mesh
    prefix = args.output if args.output is not None else args.mesh
    targets = [f"{prefix}.epart.{args.k}", f"{prefix}.npart.{args.k}"]
    for target in targets:
        _check_output(target, graph=args.mesh)
    eptr, eind, weights = read_mesh(args.mesh)
    if weights is not None and weights.shape[1] > 1:
        raise MatchpartError(f"{args.mesh}: the mesh has {weights.shape[1]} weights per element; one (ncon = 1) "
                             "is supported")
    element_weights = None if weights is None else weights[:, 0]
    if eptr.shape[0] == 1:
        raise MatchpartError(f"{args.mesh}: the mesh has no elements")
    t0 = time.perf_counter()
    r = part_mesh(eind, args.k, eptr=eptr, gtype=args.gtype, ncommon=args.ncommon, element_weights=element_weights,
                  eps=args.eps, seed=args.seed, preset=args.preset, threads=args.threads)
    seconds = time.perf_counter() - t0
    write_partition(r.element_parts, targets[0])
    write_partition(np.maximum(r.node_parts, 0), targets[1])   # an unused node id: block 0
    report = {"mesh": args.mesh, "elements": int(eptr.shape[0] - 1), "nodes": int(r.node_parts.shape[0]),
              "gtype": args.gtype, "ncommon": args.ncommon, "k": args.k, "cut": r.edge_cut,
              "element_block_sizes": np.bincount(r.element_parts, minlength=args.k).tolist(),
              "time": seconds, "output": targets}
    if args.json:
        out(json.dumps(report, indent=1))
        return 0
    out(f"elements:   {report['elements']}, nodes: {report['nodes']}")
    out(f"cut:        {r.edge_cut} ({args.gtype} graph)")
    sizes = report["element_block_sizes"]
    out(f"elements per block: min {min(sizes)}, max {max(sizes)}")
    out(f"time:       {seconds:.3f} s")
    out(f"wrote {targets[0]} and {targets[1]}")
    return 0
