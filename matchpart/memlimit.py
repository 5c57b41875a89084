"""A per-process memory limit (``matchpart partition --mem-limit SIZE``) and clean out-of-memory errors.

The limit is RLIMIT_AS, the process's virtual address space (``ulimit -v``), set after a
warm-up run on a small graph. The warm-up matters: numba's compiled kernels are linked into
memory by LLVM the first time each is called, and LLVM ends the process (no Python error)
when an allocation fails, whereas numpy, SciPy and numba's own arrays raise MemoryError.
After the warm-up the kernels are in, so running out of room shows as MemoryError, which
the command line reports as ``OutOfMemoryError`` (kind "memory"), one line, exit status 1.
"""
from __future__ import annotations

import re

from .errors import OutOfMemoryError

_SIZE = re.compile(r"([0-9]+(?:\.[0-9]*)?)\s*([kKmMgGtT]?)(?:i?[bB])?")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text):
    """Bytes from "1500M", "1.5G", "2GiB" or a plain number of bytes (binary units)."""
    m = _SIZE.fullmatch(str(text).strip())
    if not m:
        raise ValueError(f"a memory size looks like 800M, 1.5G or 2000000000 (bytes), got {text!r}")
    value = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if value <= 0:
        raise ValueError(f"a memory size must be positive, got {text!r}")
    return value


def parse_limit(text):
    """(bytes, relative) from "2G" (the whole address space) or "+300M" (that much above the
    address space after the warm-up: the same room for a process whatever its baseline)."""
    text = str(text).strip()
    return parse_size(text[1:]) if text.startswith("+") else parse_size(text), text.startswith("+")


def address_space():
    """This process's virtual address space in bytes (VmSize, Linux), or None elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def mib(nbytes):
    return f"{nbytes / 2**20:.0f} MiB"


def apply(limit, relative=False, warm=None):
    """Run ``warm()`` (loads the kernels), then cap the address space at ``limit`` bytes
    (``relative``: at the address space after the warm-up plus ``limit``); returns
    (the cap, the address space after the warm-up) in bytes.

    Raises OutOfMemoryError when the process already uses more than ``limit`` (the limit
    could not hold the interpreter, MPI and the kernels), so that the message says so
    instead of a failure somewhere later.
    """
    import resource
    if warm is not None:
        warm()
    used = address_space()
    if relative:
        if used is None:
            raise OutOfMemoryError("--mem-limit +SIZE needs /proc/self/status (Linux); give the whole size")
        limit += used
    if used is not None and used >= limit:
        raise OutOfMemoryError(f"--mem-limit {mib(limit)} is below what this process holds before reading the "
                               f"graph ({mib(used)} of address space: Python, numba's kernels, MPI); "
                               "raise the limit", limit)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY and limit > hard:
        raise OutOfMemoryError(f"--mem-limit {mib(limit)} is above this process's hard limit {mib(hard)}", limit)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    return limit, used


def out_of_memory(exc, limit=None, ranks=1):
    """The OutOfMemoryError to raise for a MemoryError ``exc``, saying what to try."""
    where = f"the limit of {mib(limit)} per process (--mem-limit)" if limit else "the memory available"
    hint = "; more MPI ranks share the graph (mpiexec -n P matchpart partition ...)" if ranks == 1 else \
        "; more MPI ranks make each rank's share smaller"
    detail = str(exc).strip()
    return OutOfMemoryError(f"out of memory: the run needs more than {where}"
                            + (f" ({detail})" if detail else "") + hint, limit)
