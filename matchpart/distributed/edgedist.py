"""EdgeDist: a symmetric edge-based (2-D) distribution of the adjacency matrix's nonzeros.

Seed 002 (Patwary, Bisseling & Manne) distributes the nonzeros, not the vertices: an edge
{i, j} lives on one processor with both its nonzeros a_ij and a_ji, so the rowcol (row and
column) of a vertex can be split over several processors. Mondriaan chose their split; here
it is the Cartesian (checkerboard) one of 2-D SpMV: the ranks form a pr x pc grid (rank p
at (p // pc, p % pc)), each vertex keeps its 1-D owner P(i) (the DistGraph's contiguous
ranges), and edge {i, j} goes to (row(P(i)), col(P(j))) or (row(P(j)), col(P(i))): the
one that is the lower-degree end's owner if either is (``_cell``), else a hash decides. So rowcol i lies on processor row row(P(i)) and column
col(P(i)): at most pr + pc - 1 processors instead of up to P, which is the point of 2-D on
graphs with high-degree vertices. Edges inside one owner's range stay on that owner, so
graphs with locality keep 1-D's balance. The owner of i is P(i) (the paper takes the
processor with most of row i); the owner may hold none of row i.

Per rank: local vertices (own range first, then the others it holds entries of), a CSR of
the local entries in local ids, and, for its own vertices, the nonowners holding entries
with their initial local counts (lc), which seed 002's owner needs to track nz_i.
"""
from __future__ import annotations

import numpy as np

from .. import backend

_CPU = backend.get("cpu")
# hash stream of the edge's orientation (which of the two grid cells holds it)
STREAM_CELL = 0x2D0C


def grid_shape(size):
    """(pr, pc): pr the largest divisor of size with pr <= sqrt(size); pc = size // pr."""
    pr = max(d for d in range(1, int(size ** 0.5) + 1) if size % d == 0)
    return pr, size // pr


def _cell(u, v, pu, pv, du, dv, pc, coin):
    """The rank holding edge {u, v}: of its two cells (row(pu), col(pv)) and (row(pv),
    col(pu)), the one that is the lower-degree end's owner if either is (a degree-one
    vertex then holds its own edge and its owner needs no handover), else the higher-degree
    end's owner, else the one the coin picks."""
    c1 = (pu // pc) * pc + pv % pc
    c2 = (pv // pc) * pc + pu % pc
    u_low = (du < dv) | ((du == dv) & (coin == 0))
    p_low, p_high = np.where(u_low, pu, pv), np.where(u_low, pv, pu)
    return np.where(c1 == p_low, c1, np.where(c2 == p_low, c2, np.where(c1 == p_high, c1,
                    np.where(c2 == p_high, c2, np.where(coin == 0, c1, c2)))))


class EdgeDist:
    """This rank's nonzeros of the 2-D distribution built from the 1-D DistGraph ``g``.

    Attributes: ``g`` (the DistGraph: vtxdist, owners, comm), ``grid`` (pr, pc), ``gid``
    (global id per local vertex; the ``g.n_local`` own vertices first), ``indptr``/``adj``
    (local rowcols in local ids; both nonzeros of every held edge), ``lc0`` (initial local
    count per local vertex), ``owner`` (rank owning each local vertex), and for own vertices
    the nonowner slots ``no_ptr``/``no_rank``/``no_lc0`` (sorted by vertex, then rank).
    """

    def __init__(self, g, *, seed=0, grid=None):
        c = g.comm
        self.g, self.comm = g, c
        self.grid = grid or grid_shape(c.size)
        pr, pc = self.grid
        if pr * pc != c.size:
            raise ValueError(f"grid {pr} x {pc} does not have {c.size} ranks")
        # every undirected edge once, from the owner of its smaller end
        up = np.flatnonzero(g.rows + g.first < g.cols)
        u, v = g.rows[up] + g.first, g.cols[up]
        deg = g.extended(np.diff(g.indptr))
        holder = _cell(u, v, g.owner(u), g.owner(v), deg[g.rows[up]], deg[g.adj[up]], pc,
                       _CPU.hash32(seed, STREAM_CELL, u * g.n + v) & np.uint32(1))
        _, u, v = c.exchange_packed(holder, u, v)
        nl = g.n_local
        others = np.setdiff1d(np.unique(np.concatenate([u, v])), np.arange(g.first, g.last), assume_unique=True)
        self.gid = np.concatenate([np.arange(g.first, g.last, dtype=np.int64), others])
        self.n_local_all = self.gid.shape[0]
        lu, lv = self.local(u), self.local(v)
        src, dst = np.concatenate([lu, lv]), np.concatenate([lv, lu])
        order = np.argsort(src, kind="stable")
        self.adj = dst[order]
        self.lc0 = np.bincount(src, minlength=self.n_local_all).astype(np.int64)
        self.indptr = np.concatenate([[0], np.cumsum(self.lc0)]).astype(np.int64)
        self.owner = g.owner(self.gid)
        self._nonowner_slots(nl)

    def local(self, gids):
        """Local ids of global ids this rank holds (own range or held entries)."""
        g = self.g
        gids = np.asarray(gids, dtype=np.int64)
        own = (gids >= g.first) & (gids < g.last)
        others = self.gid[g.n_local:]
        return np.where(own, gids - g.first, g.n_local + np.searchsorted(others, gids))

    def _nonowner_slots(self, nl):
        # each nonowner tells the owner how many entries of the row it holds (setup, like
        # building an SpMV's communication pattern; not counted as matching volume)
        held = np.flatnonzero((self.owner != self.comm.rank) & (self.lc0 > 0))
        src, x, cnt = self.comm.exchange_packed(self.owner[held], self.gid[held], self.lc0[held])
        x = x - self.g.first
        order = np.lexsort((src, x))
        self.no_vertex, self.no_rank, self.no_lc0 = x[order], src[order], cnt[order]
        self.no_ptr = np.searchsorted(self.no_vertex, np.arange(nl + 1)).astype(np.int64)
        self.no_key = self.no_vertex * self.comm.size + self.no_rank   # sorted

    def slot_of(self, own_local, rank):
        """Index of each nonowner slot (own vertex, rank); the slots must exist."""
        return np.searchsorted(self.no_key, own_local * self.comm.size + rank)

    def spmv_volume(self):
        """Words a y = A x on this distribution sends, over all ranks: x_i from its owner to
        every other processor holding column i (fan-out) and the partial sums of row i back
        (fan-in), i.e. 2 * sum_i (q_i - 1) with q_i = |holders of rowcol i, owner included|."""
        return self.comm.allreduce(2 * int(self.no_rank.shape[0]))
