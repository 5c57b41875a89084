"""Red-blue matching (Fagginger Auer & Bisseling, Alg. 3): blue vertices propose, red respond, mutual pairs match.

Every round each live vertex (unmatched, not dead) is coloured blue with probability
``p`` by a quarter-MD5 hash of (vertex, r) (Alg. 4; ``r`` is a per-round random number
derived from the seed), blue vertices propose to a red live neighbour, each red vertex
answers one of its proposers, and answered pairs match. A live vertex without live
neighbours becomes dead. The loop runs until no live edge is left, so the result is
maximal (the paper: "the matching is maximal when all vertices are either matched or
dead").
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .. import threads
from ..backend import rng as _rng
from .base import Matching
from .ratings import edge_ratings, order_keys, rating_ranks
from .red_blue_kernel import quarter_md5_at as _quarter_md5_at  # noqa: F401  (tests compare it)
from .red_blue_kernel import red_blue_kernel
from .registry import register

# p maximising eq. (2)'s first-round matched fraction: root of 1 - p = e^{-p/(1-p)} (2 - p).
BLUE_PROBABILITY = 0.53406
# Rounds run in batches between compactions of the live edge list; the compaction's
# array size is the termination test, a host sync on the GPU, so it happens once a batch
# there. On the CPU a sync is free and compacting every round saves work. The matching
# does not depend on the batch size (same colours, same keys), only the work does.
ROUNDS_PER_CHECK = {"cpu": 1, "gpu": 4}
# On the CPU the rounds run as one compiled kernel on the threads (red_blue_kernel.py: the
# same colours, keys and answers, so the same matching and stats); the whole-array rounds are the GPU's
# formulation. Tests switch this off to run the whole-array rounds on numpy and compare.
CPU_KERNEL = True
# Safety cap. A round in which some live edge is blue-red matches at least one pair (its
# blue end proposes, the red target accepts someone), which happens with probability
# >= 2p(1-p) ~ 1/2 per round; typical runs take 10-20 rounds, so the cap is never reached
# in practice (if it were, the matching would be valid but possibly not maximal).
MAX_ROUNDS = 2000
# Hash-RNG streams (random numbers r per round, random select per round).
R_STREAM = 0x0B1E0001
PROPOSE_STREAM = 0x0B1E1000
RESPOND_STREAM = 0x0B1E2000
# select keys are uint64 (cupyx.scatter_min has no int64); this is "no proposal"
_NONE = np.iinfo(np.uint64).max

# ---- MD5 (RFC 1321) on uint32 arrays ----------------------------------------------------
_MD5_INIT = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476)
_MD5_K = tuple(int(abs(math.sin(i + 1)) * 2 ** 32) & 0xFFFFFFFF for i in range(64))
_MD5_S = (7, 12, 17, 22) * 4 + (5, 9, 14, 20) * 4 + (4, 11, 16, 23) * 4 + (6, 10, 15, 21) * 4


def _md5_word_index(i):
    """Which message word step ``i`` adds (RFC 1321 schedule)."""
    if i < 16:
        return i
    if i < 32:
        return (5 * i + 1) % 16
    if i < 48:
        return (3 * i + 5) % 16
    return (7 * i) % 16


def md5_block(xp, words, state=None, steps=64):
    """MD5 compression of one 512-bit block per array element.

    ``words``: 16 uint32 arrays (or ints), the block's little-endian words; ``state``: 4
    uint32 arrays (default: the MD5 initial value). Runs the first ``steps`` of the 64
    steps, then adds the state in (the feed-forward), as RFC 1321 does after step 64.
    Returns the new 4-word state. Wrapping uint32 arithmetic, same on numpy and cupy.
    """
    u = xp.uint32
    words = [w if hasattr(w, "dtype") else u(w) for w in words]
    if state is None:
        shape = next((w.shape for w in words if getattr(w, "ndim", 0)), ())
        state = tuple(xp.full(shape, h, dtype=u) for h in _MD5_INIT)
    a, b, c, d = state
    for i in range(steps):
        if i < 16:
            f = (b & c) | (~b & d)
        elif i < 32:
            f = (d & b) | (~d & c)
        elif i < 48:
            f = b ^ c ^ d
        else:
            f = c ^ (b | ~d)
        f = f + a + u(_MD5_K[i]) + words[_md5_word_index(i)]
        s = _MD5_S[i]
        a, d, c = d, c, b
        b = b + ((f << u(s)) | (f >> u(32 - s)))
    return (state[0] + a, state[1] + b, state[2] + c, state[3] + d)


def md5_words(xp, message):
    """MD5 digest of a message of ``len(message)`` uint32 words (little-endian bytes) per
    array element; returns the digest as 4 uint32 arrays (the digest bytes read as '<4I').
    Equal to ``hashlib.md5(words.astype('<u4').tobytes())`` element by element."""
    u = xp.uint32
    k = len(message)
    nbits = 32 * k
    padded = list(message) + [0x80]
    while len(padded) % 16 != 14:
        padded.append(0)
    padded += [nbits & 0xFFFFFFFF, (nbits >> 32) & 0xFFFFFFFF]
    state = None
    shape = next((w.shape for w in message if getattr(w, "ndim", 0)), ())
    for start in range(0, len(padded), 16):
        block = [w if hasattr(w, "dtype") else xp.full(shape, w, dtype=u) for w in padded[start:start + 16]]
        state = md5_block(xp, block, state)
    return state


def quarter_md5(xp, v, r):
    """Alg. 4's hash: the first 16 MD5 steps on the block {v, rv, r^2 v, ..., r^15 v}
    (mod 2**32), returned as (h0 + h1 + h2 + h3) mod 2**32 (uint32 array)."""
    u = xp.uint32
    v = v.astype(u)
    words = [v * u(pow(r, i, 2 ** 32)) for i in range(16)]
    h = md5_block(xp, words, steps=16)
    return h[0] + h[1] + h[2] + h[3]


def round_number(seed, rnd):
    """The paper's per-round random number r (odd, so r^i v never vanishes), from the seed."""
    return int(_rng.hash32(np, seed, R_STREAM, np.array([rnd], dtype=np.uint64))[0]) | 1


def colour_blue(xp, vertices, seed, rnd, p=BLUE_PROBABILITY):
    """Bool array: which ``vertices`` are blue in round ``rnd`` (Alg. 4 with v + 1 as the
    vertex number, so vertex 0 does not hash an all-zero block)."""
    h = quarter_md5(xp, vertices + 1, round_number(seed, rnd))
    return h < xp.uint32(min(int(p * 2 ** 32), 2 ** 32 - 1)) if p < 1 else xp.ones(vertices.shape, bool)


def expected_first_round_fraction(p=BLUE_PROBABILITY, n=None, d=None):
    """Expected fraction of vertices matched in round 1 of random red-blue matching on a
    random graph G(n, d) (paper 000, sec. 3.1).

    With n and d: 2N*/n, N* = n (1-p) (1 - (1 - p d / (1 + (1-p)(d(n-1) - 1)))^(n-1)).
    Without: the limit n -> inf, eq. (2): 2 (1 - p) (1 - exp(-p / (1 - p))), which is
    about 0.6357 at p = 0.53406 (its maximum), independent of the density.
    """
    if not 0 <= p <= 1:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if p == 1:
        return 0.0
    if n is None or d is None:
        return 2 * (1 - p) * (1 - math.exp(-p / (1 - p)))
    if not 0 < d <= 1 or n < 2:
        raise ValueError("need n >= 2 and density 0 < d <= 1")
    reds = 1 + (1 - p) * (d * (n - 1) - 1)
    return 2 * (1 - p) * (1 - (1 - p * d / reds) ** (n - 1))


def red_blue_rounds(graph, be, *, seed, weighted, rating="weight", p=BLUE_PROBABILITY,
                    max_rounds=MAX_ROUNDS):
    """Run Alg. 3 and return (mate, stats)."""
    if CPU_KERNEL and not be.is_gpu:
        return _red_blue_rounds_cpu(graph, seed=seed, weighted=weighted, rating=rating, p=p,
                                    max_rounds=max_rounds)
    xp = be.xp
    n = graph.n
    src = be.row_ids(graph.indptr, graph.indices.shape[0])
    dst = graph.indices.astype(xp.int64)
    entry = xp.arange(src.shape[0], dtype=xp.int64)  # CSR position: the random select's counter
    u64 = xp.uint64
    if weighted:
        # select key: (descending rating rank << 32) | other end. For a fixed vertex the
        # smaller neighbour id is the contract's smaller (min id, max id) pair, so the
        # minimum key is the heaviest edge with contract tie-break, and keys are unique.
        dense = rating_ranks(edge_ratings(graph, rating), xp)
        desc = (dense.max() - dense).astype(u64) if dense.shape[0] else dense.astype(u64)
        rank = desc << u64(32)
    else:
        rank = None
    dead = xp.zeros(n, dtype=bool)
    verts = xp.arange(n, dtype=xp.int64)  # vertices that still have live edges
    matched_per_round, live_per_round = [], []
    # mate has a trash slot at index n: masked-out scatters write there, so a round needs
    # no boolean compaction (each would be a host sync on the GPU)
    mate_ext = xp.full(n + 1, -1, dtype=xp.int64)
    mate = mate_ext[:n]
    batch = ROUNDS_PER_CHECK[be.name]
    rounds = 0
    while src.shape[0] > 0 and rounds < max_rounds:
        for _ in range(batch):
            rounds += 1
            live_v = (mate < 0) & ~dead
            live_e = live_v[src] & live_v[dst]
            # a live vertex with no live neighbour is dead (Alg. 3 lines 14-15, 23-24)
            has_live = xp.zeros(n, dtype=xp.int32)
            be.scatter_max(has_live, src, live_e.astype(xp.int32))
            dead |= live_v & (has_live == 0)
            blue = xp.zeros(n, dtype=bool)
            blue[verts] = colour_blue(xp, verts, seed, rounds, p)
            def select(candidate, chooser, other, stream):
                """Per chooser, its one candidate entry: heaviest, or random (hash above the
                other end's id, so the minimum is unique per chooser)."""
                if weighted:
                    key = rank | other.astype(u64)
                else:
                    key = (be.hash32(seed, stream + rounds, entry).astype(u64) << u64(32)) | other.astype(u64)
                key = xp.where(candidate, key, u64(_NONE))
                best = xp.full(n, _NONE, dtype=u64)
                be.scatter_min(best, chooser, key)
                return candidate & (key == best[chooser])

            # blue proposes to one live red neighbour; each red vertex answers one proposer
            proposal = select(live_e & blue[src] & ~blue[dst], src, dst, PROPOSE_STREAM)
            accepted = select(proposal, dst, src, RESPOND_STREAM)
            # accepted entries are disjoint pairs: one proposal per blue, one answer per red
            mate_ext[xp.where(accepted, dst, n)] = src
            mate_ext[xp.where(accepted, src, n)] = dst
            mate_ext[n] = -1
            matched_per_round.append((mate >= 0).sum())
            live_per_round.append(live_e.sum())
        # compaction: keep entries between live vertices (its size is the termination test)
        live_v = (mate < 0) & ~dead
        keep = xp.flatnonzero(live_v[src] & live_v[dst])
        src, dst, entry = src[keep], dst[keep], entry[keep]
        if weighted:
            rank = rank[keep]
        has_live = xp.zeros(n, dtype=bool)
        has_live[src] = True
        dead |= live_v & ~has_live
        verts = xp.flatnonzero(has_live)
    matched = be.to_host(xp.stack(matched_per_round)) if matched_per_round else np.zeros(0)
    live = be.to_host(xp.stack(live_per_round)) if live_per_round else np.zeros(0)
    # rounds that still had live edges; trailing no-op rounds of the last batch don't count
    used = int(np.flatnonzero(live > 0).max() + 1) if (live > 0).any() else 0
    fractions = [float(c) / n for c in matched[:used]] if n else []
    return mate, {"rounds": used, "matched_fraction": fractions,
                  "first_round_fraction": fractions[0] if fractions else 0.0,
                  "blue_probability": p}


def _red_blue_rounds_cpu(graph, *, seed, weighted, rating, p, max_rounds):
    """``red_blue_rounds`` as one compiled kernel on host arrays (same mate and stats)."""
    n = graph.n
    order = order_keys(edge_ratings(graph, rating)) if weighted else np.zeros(0, dtype=np.uint64)
    # blue iff quarter_md5 < threshold; p >= 1 colours everything blue (threshold above 2**32)
    threshold = min(int(p * 2 ** 32), 2 ** 32 - 1) if p < 1 else 2 ** 32
    mate = np.full(n, -1, dtype=np.int64)
    parallel_min = threads.PARALLEL_MIN_ITEMS if numba.get_num_threads() > 1 else n + 1
    matched, live = red_blue_kernel(
        graph.indptr, graph.indices, order, weighted, mate, seed, max_rounds, threshold,
        np.array(_MD5_INIT, dtype=np.uint32), np.array(_MD5_K, dtype=np.uint32),
        np.array(_MD5_S[:16], dtype=np.uint32), R_STREAM, PROPOSE_STREAM, RESPOND_STREAM, threads.CHUNK,
        parallel_min)
    used = int(np.flatnonzero(live > 0).max() + 1) if (live > 0).any() else 0
    fractions = [float(c) / n for c in matched[:used]] if n else []
    return mate, {"rounds": used, "matched_fraction": fractions,
                  "first_round_fraction": fractions[0] if fractions else 0.0, "blue_probability": p}


@register("red_blue",
          description="red-blue matching: blue proposes to heaviest red neighbour, red accepts heaviest (maximal)",
          paper="000_b430d225e224388c (Fagginger Auer & Bisseling, Alg. 3, weighted select)",
          weighted=True, backends=("cpu", "gpu"), serial=False)
def red_blue(graph, *, rating="weight", seed=0, backend=None):
    """Weighted red-blue matching: blue vertices propose along their heaviest edge to a red
    neighbour, each red vertex accepts its heaviest proposal (ties: contract order)."""
    be = backend or graph.backend
    mate, stats = red_blue_rounds(graph, be, seed=seed, weighted=True, rating=rating)
    return Matching.from_mate(graph, mate, stats=stats)


@register("red_blue_random",
          description="red-blue matching with random select: blue proposes to a random red neighbour (maximal)",
          paper="000_b430d225e224388c (Fagginger Auer & Bisseling, Alg. 3, random select)",
          weighted=False, backends=("cpu", "gpu"), serial=False)
def red_blue_random(graph, *, rating="weight", seed=0, backend=None):
    """Random red-blue matching: blue vertices propose to a random red neighbour, each red
    vertex accepts a random proposal. ``rating`` is ignored."""
    be = backend or graph.backend
    mate, stats = red_blue_rounds(graph, be, seed=seed, weighted=False)
    return Matching.from_mate(graph, mate, stats=stats)
