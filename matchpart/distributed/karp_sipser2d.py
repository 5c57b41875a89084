"""Karp-Sipser in BSP supersteps on the edge-based (2-D) distribution (seed 002), with the
paper's seven message types.

The nonzeros are spread by ``EdgeDist``: rowcol i can be split over several processors,
each keeping its local count lc_i of live entries; the owner P(i) keeps isMatched(i), its
nonowners, and nz_i = its own lc_i plus what each nonowner last reported (its initial
count, 1 after a criticality message ct, 0 after a give-up g). That sum is 1 exactly when
row i is a singleton and 0 exactly when it is empty (a nonowner reports the moment its
count reaches 1 or 0), and an upper bound of the degree otherwise.

A round starts from a settled state (no message in flight) and takes four supersteps for
singletons, five for random requests:

1. Owners pick the requesters: every singleton row when some rank has one (degree-one
   rule), else the rows of minimum nz (the shared-memory karp_sipser's min-degree rule; nz
   bounds the degree from above here). An owner holding none of a requester's live entries
   hands the row over (h) to the nonowner holding most of it.
2. Each processor picks, for the rows it owns or was handed, a live neighbour j (one owned
   here if any, as in the paper: a failed local request costs no message; else the
   smallest hash) and sends one request per target, a singleton or random match request
   (smr / rmr), to P(j). For a singleton it removes rowcol j at once (PICK-SINGLETON-ROW):
   j is matched by the end of the round either way.
3. Each target's owner accepts one request (the shared-memory rule: a target that is
   itself requesting declines, unless the two requested each other, where the smaller id
   wins; then the smallest hash), removes rowcol j here (and rowcol i, for rmr: MATCH-ROWCOL),
   sends unavailability u(j) to j's nonowners (but those that removed j already) and, for
   rmr, a confirmation cf(i) to P(i).
4. Owners confirmed by cf remove rowcol i and send u(i) to its nonowners but the confirming
   one (CONFIRM). Every removal lowers the neighbours' local counts: the owner's directly
   (DECREMENT), a nonowner's with ct when its count reaches 1 and g when it reaches 0.
5. (rmr) The last ct / g arrive.

The paper's processors instead run TpR local attempts between supersteps and let requests
fail after two rounds; settling every round costs supersteps but keeps the shared-memory
algorithm's choices (and its termination argument): owners decide with exact singleton
information. Handover is also used for random requests of rows whose owner holds none of
their live entries: the paper picks random rows among the owner's own entries only, which
stalls when the last live entries sit on processors that own neither end. Messages are
counted per type as the paper counts them, one word each (the sender's rank comes with
every BSP message), for its bound 1/2 Vol(SpMV) <= Vol(matching) <= 3/2 Vol(SpMV) + R (R:
failed requests; repeated handovers of a row that keeps failing random requests are
outside that bound).
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ..matchers import karp_sipser as shared
from .comm import DistributedError
from .edgedist import EdgeDist

_CPU = backend.get("cpu")
_BIG = np.iinfo(np.int64).max
SMR, RMR, CF, U, H, G, CT = range(7)
TYPES = ("singleton_request", "random_request", "confirmation", "unavailability", "handover", "give_up",
         "criticality")
# the paper counts every message as one data word (the sender's rank comes with it)
WORDS = np.ones(len(TYPES), dtype=np.int64)
# After a random round that matched nothing (requesters that all asked one another: a cycle,
# or targets whose requester was handed over and so cannot be seen to be mutual), only this
# fraction of the minimum-nz rows asks in the next random round, so that some targets are
# not requesting and accept.
STALL_FRACTION = 0.5
# hash streams: 4 * round + kind (distinct from the shared-memory matcher's 3 * round + kind)
_REQUESTER, _NEIGHBOUR, _ACCEPT = 1, 2, 3


def _firsts(groups):
    """Positions where a new group starts in the sorted array ``groups``."""
    return np.flatnonzero(np.concatenate([[True], groups[1:] != groups[:-1]])) if groups.shape[0] else groups


def karp_sipser_2d(g, *, seed=0, grid=None):
    """Karp-Sipser on the 2-D distribution of the DistGraph ``g`` (built here).

    Returns (mate of own vertices as global ids, stats): rounds, degree_one_rounds,
    random_rounds, supersteps, matched_fraction, ``words`` sent by all ranks per message
    type (``TYPES``), ``spmv`` (words of a y = A x on the same distribution) and ``grid``.
    """
    dist = EdgeDist(g, seed=seed, grid=grid)
    run = _Run(dist, seed)
    mate = run.rounds()
    words = dict(zip(TYPES, (int(w) for w in g.comm.allreduce(run.words))))
    return mate, {"rounds": run.round, "degree_one_rounds": run.d1, "random_rounds": run.rand,
                  "supersteps": run.steps, "matched_fraction": run.fractions, "words": words,
                  "failed_requests": int(g.comm.allreduce(run.failed)), "spmv": dist.spmv_volume(),
                  "grid": dist.grid}


class _Run:
    """One rank's state: holder state for every local vertex, owner state for own ones."""

    def __init__(self, dist, seed):
        self.d, self.g, self.c = dist, dist.g, dist.comm
        self.seed = seed
        nl, nall = self.g.n_local, dist.n_local_all
        self.lc = dist.lc0.copy()                       # live local entries per local vertex
        self.removed = np.zeros(nall, dtype=bool)      # rowcol removed here
        self.reported = dist.lc0.copy()                # count last reported to the owner
        self.matched = np.zeros(nl, dtype=bool)        # isMatched, own vertices
        self.closed = np.zeros(nl, dtype=bool)         # singletons whose request decided them
        self.partner = np.full(nl, -1, dtype=np.int64)  # m(j) of own targets accepted here
        self.contrib = dist.no_lc0.copy()              # per nonowner slot: lc0, then 1 (ct), 0 (g)
        self.nzc = np.bincount(dist.no_vertex, weights=self.contrib, minlength=nl).astype(np.int64)
        self.asks = np.full(nl, -1, dtype=np.int64)    # this round's direct request target
        self.deleg = np.zeros(nl, dtype=bool)          # this round's handed-over requesters
        self.words = np.zeros(len(TYPES), dtype=np.int64)
        self.out = []
        self.round = self.d1 = self.rand = self.steps = self.failed = 0
        self.fractions = []

    # ---- messages --------------------------------------------------------------------
    def send(self, dest, typ, a, b=None):
        dest = np.asarray(dest, dtype=np.int64)
        if dest.shape[0] == 0:
            return
        a = np.asarray(a, dtype=np.int64)
        b = np.zeros_like(a) if b is None else np.asarray(b, dtype=np.int64)
        self.words[typ] += WORDS[typ] * int((dest != self.c.rank).sum())
        self.out.append((dest, np.full(dest.shape[0], typ, dtype=np.int64), a, b))

    def superstep(self):
        """Deliver the outbox (messages to self too, uncounted); returns (src, typ, a, b)."""
        parts = list(zip(*self.out)) if self.out else [[np.zeros(0, dtype=np.int64)]] * 4
        self.out = []
        self.steps += 1
        return self.c.exchange_packed(*(np.concatenate(p) for p in parts))

    def absorb(self, msgs):
        """Process ct, g, cf and u (whatever the superstep), then remove the rowcols that
        became unavailable here, which sends the next ct / g / u."""
        src, typ, a, b = msgs
        first = self.g.first
        for kind, value in ((CT, 1), (G, 0)):   # ct before g: a g is the later state
            m = typ == kind
            if m.any():
                x = a[m] - first
                slot = self.d.slot_of(x, src[m])
                np.add.at(self.nzc, x, value - self.contrib[slot])
                self.contrib[slot] = value
        gone = []
        m = typ == CF
        if m.any():   # CONFIRM(i): i is matched; its other nonowners learn it
            x = a[m] - first
            self.matched[x] = True
            gone.append(x)
            self._unavailable(x, skip=src[m])
        m = typ == U
        if m.any():
            gone.append(self.d.local(a[m]))
        if gone:
            self.remove(np.concatenate(gone))

    def _unavailable(self, own, skip=None, skip_keys=None):
        """u(x) to every nonowner of own vertex x still holding entries, except the rank
        ``skip`` (per x) and the (global x * P + rank) pairs in ``skip_keys``."""
        d = self.d
        pos, seg = _CPU.ranges(d.no_ptr[own], d.no_ptr[own + 1] - d.no_ptr[own])
        keep = self.contrib[pos] > 0
        if skip is not None:
            keep &= d.no_rank[pos] != skip[seg]
        if skip_keys is not None:
            keep &= ~np.isin((own[seg] + self.g.first) * self.c.size + d.no_rank[pos], skip_keys)
        pos, seg = pos[keep], seg[keep]
        self.send(d.no_rank[pos], U, own[seg] + self.g.first)

    def remove(self, xs):
        """REMOVE-ROWCOL for the local vertices ``xs``: their entries leave every live
        neighbour's count; an owner's counts are its own, a nonowner reports ct / g."""
        xs = np.unique(xs)
        xs = xs[~self.removed[xs]]
        if xs.shape[0] == 0:
            return
        self.removed[xs] = True
        pos, _ = _CPU.ranges(self.d.indptr[xs], self.d.indptr[xs + 1] - self.d.indptr[xs])
        y = self.d.adj[pos]
        y = y[~self.removed[y]]
        self.lc[xs] = 0
        ys, lost = np.unique(y, return_counts=True)
        self.lc[ys] -= lost
        ys = ys[self.d.owner[ys] != self.c.rank]
        lc, rep = self.lc[ys], self.reported[ys]
        give_up = (lc == 0) & (rep > 0)
        critical = (lc == 1) & (rep > 1)
        for mask, kind in ((give_up, G), (critical, CT)):
            z = ys[mask]
            self.send(self.d.owner[z], kind, self.d.gid[z])
            self.reported[z] = lc[mask]

    # ---- the rounds ------------------------------------------------------------------
    def rounds(self):
        c, nl = self.c, self.g.n_local
        gid = self.d.gid[:nl]
        fraction = shared.RANDOM_REQUEST_FRACTION
        matched_pairs = 0
        while True:
            nz = self.lc[:nl] + self.nzc
            live = ~self.matched & ~self.closed & (nz > 0)
            singles = np.flatnonzero(live & (nz == 1))
            n_single, n_live = c.allreduce(np.array([singles.shape[0], int(live.sum())], dtype=np.int64))
            if n_live == 0:
                break
            stream = 4 * self.round
            if n_single:
                mode, req = SMR, singles
                self.d1 += 1
            else:
                mode = RMR
                self.rand += 1
                open_ = np.flatnonzero(live)
                dmin = c.allreduce(int(nz[open_].min()) if open_.shape[0] else _BIG, op="min")
                low = open_[nz[open_] == dmin]
                req = low[_CPU.uniform(self.seed, stream + _REQUESTER, gid[low]) < fraction]
                if not c.allreduce(int(req.shape[0])):   # tiny graphs: the smallest one asks
                    smallest = c.allreduce(int(gid[low[0]]) if low.shape[0] else _BIG, op="min")
                    req = low[:1] if low.shape[0] and gid[low[0]] == smallest else low[:0]
            self.round += 1
            new = c.allreduce(self._round(mode, req, stream))
            matched_pairs += new
            if mode == RMR:
                fraction = shared.RANDOM_REQUEST_FRACTION if new else STALL_FRACTION
            self.fractions.append(2 * matched_pairs / max(self.g.n, 1))
        return self._mates()

    def _round(self, mode, req, stream):
        """One round (4 supersteps for singletons, 5 for random requests); returns the
        number of pairs accepted here."""
        d, first = self.d, self.g.first
        direct, handed = req[self.lc[req] > 0], req[self.lc[req] == 0]
        self.deleg[handed] = True
        self.send(self._delegate(handed), H, handed + first)
        src, typ, a, b = self.superstep()                                    # 1: handovers
        # the requests of the rows this rank owns or was handed, from the settled state
        rows = np.concatenate([direct, d.local(a)])
        target = self._choose(rows, stream)
        self.asks[direct] = target[:direct.shape[0]]
        # one request per target from each processor (the paper's sequential pass sends no
        # second one: the first removes rowcol j (singletons) or makes j taken)
        key = _CPU.hash64(self.seed, stream + _ACCEPT, d.gid[rows])
        order = np.lexsort((key, target))
        keep = order[_firsts(target[order])]
        self.send(self.g.owner(target[keep]), mode, d.gid[rows[keep]], target[keep])
        if mode == SMR:
            # PICK-SINGLETON-ROW: rowcol j goes here at once, as j is matched by the end of
            # the round (to this row, another singleton, or by its own request if j is this
            # singleton's singleton partner); a singleton row has no other entry, and its
            # owner closes it after the round (no give-up for it)
            self.remove(np.concatenate([rows, d.local(target)]))
        src, typ, a, b = self.superstep()                                    # 2: requests
        r = typ == mode
        self.absorb((src[~r], typ[~r], a[~r], b[~r]))
        req_src, ri, rj = src[r], a[r], b[r]
        accepted = self._resolve(ri, rj, mode, stream)
        acc_i, acc_j = ri[accepted], rj[accepted]
        remote = req_src != self.c.rank
        self.failed += int(remote.sum()) - int(remote[accepted].sum())
        jl = acc_j - first
        self.matched[jl] = True
        self.partner[jl] = acc_i
        gone = [jl]
        if mode == SMR:   # the requesters' processors removed rowcol j already
            self._unavailable(jl, skip_keys=rj * self.c.size + req_src)
        else:             # the requester's owner confirms; its rowcol goes here already
            self._unavailable(jl)
            self.send(self.g.owner(acc_i), CF, acc_i)
            held = np.isin(acc_i, d.gid)
            gone.append(d.local(acc_i[held]))
        self.remove(np.concatenate(gone))
        self.absorb(self.superstep())                                        # 3: cf, u(j), ct / g
        self.absorb(self.superstep())                                        # 4: u(i), ct / g
        if mode == RMR:
            self.absorb(self.superstep())                                    # 5: the last ct / g
        if self.out:
            raise DistributedError("Karp-Sipser round did not settle", kind="internal")
        self.asks[direct] = -1
        self.deleg[handed] = False
        if mode == SMR:
            self.closed[req] = True
        return int(acc_j.shape[0])

    def _choose(self, rows, stream):
        """Global id of a live neighbour for each local row: a neighbour owned here if any,
        else any; the smallest hash of the (row, neighbour) pair among them."""
        d = self.d
        pos, seg = _CPU.ranges(d.indptr[rows], d.indptr[rows + 1] - d.indptr[rows])
        y = d.adj[pos]
        live = ~self.removed[y]
        pos, seg, y = pos[live], seg[live], y[live]
        h = _CPU.hash64(self.seed, stream + _NEIGHBOUR, d.gid[rows][seg] * self.g.n + d.gid[y]) >> np.uint64(2)
        key = ((d.owner[y] != self.c.rank).astype(np.uint64) << np.uint64(62)) | h
        order = np.lexsort((key, seg))
        first_of = _firsts(seg[order])
        out = np.full(rows.shape[0], -1, dtype=np.int64)
        out[seg[order][first_of]] = d.gid[y[order][first_of]]
        if (out < 0).any():
            raise DistributedError("a requester has no live entry where it was sent", kind="internal")
        return out

    def _delegate(self, own):
        """For own rows without local entries: the nonowner holding most of the row (the
        lowest rank among equals)."""
        d = self.d
        pos, seg = _CPU.ranges(d.no_ptr[own], d.no_ptr[own + 1] - d.no_ptr[own])
        live = self.contrib[pos] > 0
        pos, seg = pos[live], seg[live]
        order = np.lexsort((d.no_rank[pos], -self.contrib[pos], seg))
        firsts = _firsts(seg[order])
        out = np.full(own.shape[0], -1, dtype=np.int64)
        out[seg[order][firsts]] = d.no_rank[pos[order][firsts]]
        return out

    def _resolve(self, ri, rj, mode, stream):
        """Requests ri -> rj at rj's owner: the indices of the accepted ones (one per target)."""
        jl = rj - self.g.first
        ok = ~self.matched[jl]
        asked = self.asks[jl]
        requesting = (asked >= 0) | self.deleg[jl]
        # a handed-over target's request is unknown here; a singleton's can only be ri
        mutual = np.where(asked >= 0, asked == ri, mode == SMR)
        ok &= ~requesting | (mutual & (ri < rj))
        idx = np.flatnonzero(ok)
        h = _CPU.hash64(self.seed, stream + _ACCEPT, ri[idx])
        order = np.lexsort((ri[idx], h, rj[idx]))
        return idx[order[_firsts(rj[idx][order])]]

    def _mates(self):
        """Each owner learns its vertices' partners: targets recorded m(j) = i; requesters
        are told once at the end (not part of the paper's volume: it never stores m(i))."""
        first = self.g.first
        mate = self.partner.copy()
        t = np.flatnonzero(self.partner >= 0)
        _, i, j = self.c.exchange_packed(self.g.owner(self.partner[t]), self.partner[t], t + first)
        with self.c.collectively():
            il = i - first
            if (mate[il] >= 0).any() or np.unique(il).shape[0] != il.shape[0]:
                raise DistributedError("Karp-Sipser matched a vertex twice", kind="internal")
        mate[il] = j
        return mate
