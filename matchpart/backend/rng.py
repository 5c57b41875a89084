"""Counter-based hash RNG: random numbers as a pure function of (seed, stream, counter).

No state lives inside an algorithm, so a seed gives the same numbers on numpy and cupy
and in any evaluation order. The mixer is the SplitMix64 finaliser in wrapping uint64
arithmetic, which both libraries implement identically. Compiled kernels get the same
numbers from ``stream_key`` (once per call, on the host) and ``hash32_at`` (per counter).
"""
import numpy as np

from ..jit import njit

_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_STREAM = 0xD1B54A32D192ED03


def _mix64(xp, x):
    u = xp.uint64
    x = x ^ (x >> u(30))
    x = x * u(_MIX1)
    x = x ^ (x >> u(27))
    x = x * u(_MIX2)
    x = x ^ (x >> u(31))
    return x


_M64 = 0xFFFFFFFFFFFFFFFF


def _mix64_int(x):
    """``_mix64`` on a Python int (for the per-call key, computed once on the host)."""
    x ^= x >> 30
    x = (x * _MIX1) & _M64
    x ^= x >> 27
    x = (x * _MIX2) & _M64
    return x ^ (x >> 31)


def stream_key(seed, stream):
    """The per-(seed, stream) key that ``hash64`` adds to counter * golden (a Python int)."""
    return _mix64_int((_mix64_int((int(seed) + 1) * _GOLDEN & _M64) + (int(stream) + 1) * _STREAM) & _M64)


def stream_keys(seed, first, count):
    """numpy uint64 array of stream_key(seed, first + i) for i < count, in whole-array steps
    (a matcher asks for one key per round on every level: ~50 Python-int mixes each time)."""
    inner = np.uint64(_mix64_int((int(seed) + 1) * _GOLDEN & _M64))
    streams = np.arange(int(first) + 1, int(first) + 1 + int(count), dtype=np.uint64)
    with np.errstate(over="ignore"):
        return _mix64(np, inner + streams * np.uint64(_STREAM))


def hash64(xp, seed, stream, counter):
    """uint64 hash of (seed, stream, counter) elementwise; ``counter`` is an integer array."""
    u = xp.uint64
    c = xp.asarray(counter).astype(u, copy=False)
    return _mix64(xp, c * u(_GOLDEN) + u(stream_key(seed, stream)))


def hash32(xp, seed, stream, counter):
    """uint32 hash (the high half of ``hash64``)."""
    return (hash64(xp, seed, stream, counter) >> xp.uint64(32)).astype(xp.uint32)


def uniform(xp, seed, stream, counter):
    """float64 in [0, 1) from the top 53 bits of ``hash64``."""
    h = hash64(xp, seed, stream, counter) >> xp.uint64(11)
    return h.astype(xp.float64) * (1.0 / 9007199254740992.0)


def permutation(xp, seed, stream, n):
    """A random permutation of range(n): argsort of hashes (ties by index, so it is total)."""
    keys = hash64(xp, seed, stream, xp.arange(n, dtype=xp.uint64))
    return xp.argsort(keys, kind="stable") if xp.__name__ == "numpy" else xp.argsort(keys)


# numpy scalars, so that numba freezes them as uint64 constants (a Python int above 2**63
# would be typed int64)
_GOLDEN_U = np.uint64(_GOLDEN)
_MIX1_U = np.uint64(_MIX1)
_MIX2_U = np.uint64(_MIX2)
_STREAM_U = np.uint64(_STREAM)


@njit(cache=True, internal=True)
def _mix64_at(x):
    x = x ^ (x >> np.uint64(30))
    x = x * _MIX1_U
    x = x ^ (x >> np.uint64(27))
    x = x * _MIX2_U
    return x ^ (x >> np.uint64(31))


@njit(cache=True, internal=True)
def stream_key_at(seed, stream):
    """``stream_key`` in compiled code (wrapping uint64 arithmetic), for per-round streams."""
    a = _mix64_at((np.uint64(seed) + np.uint64(1)) * _GOLDEN_U)
    return _mix64_at(a + (np.uint64(stream) + np.uint64(1)) * _STREAM_U)


@njit(cache=True, internal=True)
def hash32_at(counter, key):
    """``hash32`` of one counter in compiled code; ``key`` = np.uint64(stream_key(seed, stream))."""
    return np.uint32(_mix64_at(np.uint64(counter) * _GOLDEN_U + key) >> np.uint64(32))


@njit(cache=True, internal=True)
def hash64_at(counter, key):
    """``hash64`` of one counter in compiled code; ``key`` as for hash32_at."""
    return _mix64_at(np.uint64(counter) * _GOLDEN_U + key)
