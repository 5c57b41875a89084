"""MPI plumbing: the lazily imported communicator, numpy all-to-all exchanges with byte
accounting per phase, and collective error agreement (one message on every rank, no hang)."""
from __future__ import annotations

import contextlib
import pickle
from collections import defaultdict

import numpy as np

from ..errors import MatchpartError


class DistributedError(MatchpartError):
    """An error raised on some rank, re-raised on every rank. ``kind`` says what went wrong
    ("input" for a bad graph or argument, "memory" for a MemoryError, "internal" otherwise);
    ``rank`` where it happened."""

    def __init__(self, message, *, kind="input", rank=None):
        super().__init__(message)
        self.kind = kind
        self.rank = rank


def mpi():
    """The mpi4py MPI module; imported here so that importing matchpart never needs mpi4py."""
    try:
        from mpi4py import MPI
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("matchpart.distributed needs mpi4py: pip install 'matchpart[mpi]'") from exc
    return MPI


def world():
    return mpi().COMM_WORLD


class Comm:
    """A communicator plus the bytes this rank sent, per phase (for the benchmarks).

    Every exchange in matchpart.distributed goes through this class so that the phase
    accounting (``with comm.phase("matching"):``) sees all of it.
    """

    def __init__(self, comm=None):
        self.comm = comm if comm is not None else world()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self._on_node = None
        self.sent = defaultdict(int)  # phase -> bytes sent by this rank
        self.calls = defaultdict(int)  # phase -> collective operations (each a latency on every rank)
        self._phase = "other"

    def ranks_on_node(self):
        """Collective on first use: how many ranks of this communicator share this rank's
        node (its shared-memory group)."""
        if self._on_node is None:
            local = self.comm.Split_type(mpi().COMM_TYPE_SHARED)
            self._on_node = local.Get_size()
            local.Free()
        return self._on_node

    @contextlib.contextmanager
    def phase(self, name):
        prev, self._phase = self._phase, name
        try:
            yield
        finally:
            self._phase = prev

    def _count(self, nbytes):
        self.sent[self._phase] += int(nbytes)
        self.calls[self._phase] += 1

    # ---- collectives on numpy arrays ---------------------------------------------------
    def alltoallv(self, send, counts):
        """Send ``send[offsets[q]:offsets[q+1]]`` to rank q (``counts[q]`` items each, grouped
        by destination); returns (received array, counts received from each rank)."""
        send = np.ascontiguousarray(send)
        counts = np.ascontiguousarray(counts, dtype=np.int64)
        if self.size == 1:   # one rank: a copy; the MPI calls cost ~1 ms each, 0.6 s of a P = 1 run
            self._count(8)
            return send.copy(), counts.copy()
        MPI = mpi()
        rcounts = np.empty(self.size, dtype=np.int64)   # a buffer: 12 us a call where a pickled list took 28
        self.comm.Alltoall(counts, rcounts)
        recv = np.empty(int(rcounts.sum()), dtype=send.dtype)
        sdispl = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rdispl = np.concatenate([[0], np.cumsum(rcounts)[:-1]])
        mtype = MPI._typedict[send.dtype.char]
        self.comm.Alltoallv([send, (counts, sdispl), mtype], [recv, (rcounts, rdispl), mtype])
        self._count(send.nbytes - counts[self.rank] * send.itemsize + 8 * self.size)
        return recv, rcounts

    def by_dest(self, dest):
        """Stable order of rows by destination rank (numpy radix-sorts 16-bit keys: O(rows))."""
        dest = np.asarray(dest)
        return np.argsort(dest.astype(np.uint16) if self.size <= 1 << 16 else dest, kind="stable")

    def exchange(self, dest, *columns):
        """Route rows (one item of each column) to the ranks in ``dest``; returns the
        received columns (grouped by source rank, in the sender's order within a source)."""
        order = None if self.size == 1 else self.by_dest(dest)   # one rank: already in order
        counts = np.bincount(dest, minlength=self.size)
        out = []
        for col in columns:
            recv, _ = self.alltoallv(np.asarray(col) if order is None else np.asarray(col)[order], counts)
            out.append(recv)
        return out

    def exchange_packed(self, dest, *columns):
        """``exchange`` for int64 columns in one all-to-all (one latency instead of one per
        column: BSP supersteps send several short columns every few microseconds of work).
        Returns (source rank of each received row, then the received columns)."""
        k = len(columns)
        order = None if self.size == 1 else self.by_dest(dest)   # one rank: already in order
        counts = np.bincount(dest, minlength=self.size)
        rows = np.empty((np.asarray(dest).shape[0], k), dtype=np.int64)
        for i, col in enumerate(columns):
            col = np.asarray(col, dtype=np.int64)
            rows[:, i] = col if order is None else col[order]
        recv, rcounts = self.alltoallv(rows.reshape(-1), counts * k)
        recv = recv.reshape(-1, k)
        src = np.repeat(np.arange(self.size, dtype=np.int64), rcounts // k)
        return (src, *(recv[:, i] for i in range(k)))

    def allreduce(self, value, op="sum"):
        MPI = mpi()
        ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}
        if isinstance(value, np.ndarray):
            out = np.empty_like(value)
            self.comm.Allreduce(np.ascontiguousarray(value), out, op=ops[op])
            self._count(value.nbytes)
            return out
        self._count(8)
        return self.comm.allreduce(value, op=ops[op])

    def exscan(self, value):
        """Sum of ``value`` over the lower ranks (0 on rank 0)."""
        self._count(8)
        out = self.comm.exscan(int(value))
        return 0 if self.rank == 0 else int(out)

    def allgather(self, obj):
        self._count(len(pickle.dumps(obj)))
        return self.comm.allgather(obj)

    def allgatherv(self, array):
        """Concatenation of every rank's 1-d ``array`` in rank order, on every rank."""
        array = np.ascontiguousarray(array)
        counts = np.asarray(self.comm.allgather(array.shape[0]), dtype=np.int64)
        out = np.empty(int(counts.sum()), dtype=array.dtype)
        mtype = mpi()._typedict[array.dtype.char]
        self.comm.Allgatherv([array, mtype], [out, (counts, np.concatenate([[0], np.cumsum(counts)[:-1]])), mtype])
        self._count(array.nbytes * (self.size - 1))
        return out

    def gatherv(self, array, root=0):
        """Concatenation of every rank's 1-d ``array`` on ``root`` (None elsewhere)."""
        array = np.ascontiguousarray(array)
        counts = self.comm.gather(array.shape[0], root=root)
        mtype = mpi()._typedict[array.dtype.char]
        if self.rank == root:
            counts = np.asarray(counts, dtype=np.int64)
            out = np.empty(int(counts.sum()), dtype=array.dtype)
            displ = np.concatenate([[0], np.cumsum(counts)[:-1]])
            self.comm.Gatherv([array, mtype], [out, (counts, displ), mtype], root=root)
            self._count(0)
            return out
        self.comm.Gatherv([array, mtype], None, root=root)
        self._count(array.nbytes)
        return None

    def bcast(self, obj, root=0):
        self._count(len(pickle.dumps(obj)) * (self.size - 1) if self.rank == root else 0)
        return self.comm.bcast(obj, root=root)

    # ---- errors ------------------------------------------------------------------------
    def agree(self, error):
        """Collective: if any rank passes an exception, every rank raises the first one
        (lowest rank) as a DistributedError with the same message; otherwise returns."""
        if error is not None and not isinstance(error, DistributedError):
            kind = ("memory" if isinstance(error, MemoryError) else
                    "input" if isinstance(error, (MatchpartError, ValueError, OSError)) else "internal")
            error = DistributedError(str(error), kind=kind, rank=self.rank)
        report = None if error is None else (str(error), error.kind, error.rank)
        reports = self.comm.allgather(report)
        first = next((r for r in reports if r is not None), None)
        if first is not None:
            message, kind, rank = first
            raise DistributedError(message, kind=kind, rank=rank)

    @contextlib.contextmanager
    def collectively(self):
        """Run a block on every rank; an exception on any rank is raised on all of them.

        The block must not itself call collectives that a failing rank could skip (a rank
        that fails early would leave the others waiting): blocks hold local work only.
        """
        error = None
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - every failure must reach the other ranks
            error = exc
        self.agree(error)


def as_comm(comm):
    """A Comm from None (COMM_WORLD), an mpi4py communicator, or a Comm."""
    return comm if isinstance(comm, Comm) else Comm(comm)
