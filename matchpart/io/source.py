"""The bytes of a graph file: read whole, decompressed transparently, checked for being text.

Compressed files are recognised by their magic bytes (a ``.gz`` file renamed ``.graph``
still reads); written files are compressed by their suffix.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path

from ..errors import GraphFormatError

UTF8_BOM = b"\xef\xbb\xbf"
# magic bytes -> decompressor
_MAGIC = (
    (b"\x1f\x8b", gzip.decompress),
    (b"BZh", bz2.decompress),
    (b"\xfd7zXZ\x00", lzma.decompress),
)
# suffix -> compressor (fast settings: the files are written once by save_graph)
COMPRESSED_SUFFIXES = {
    ".gz": lambda data: gzip.compress(data, compresslevel=6),
    ".bz2": lambda data: bz2.compress(data, compresslevel=9),
    ".xz": lambda data: lzma.compress(data),
}


def plain_suffix(path):
    """The format suffix of ``path`` with a compression suffix removed: 'g.graph.gz' -> '.graph'."""
    p = Path(os.fspath(path))
    if p.suffix.lower() in COMPRESSED_SUFFIXES:
        p = p.with_suffix("")
    return p.suffix.lower()


def read_bytes(path, *, keep_bom=False):
    """The whole file as bytes, decompressed when it is gzip, bz2 or xz data.

    Refuses directories and binary files (a NUL byte), and drops a UTF-8 byte order mark
    unless ``keep_bom`` (some Windows editors write one; it is not part of the first token).
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except IsADirectoryError:
        raise GraphFormatError("is a directory, not a graph file", path, kind="invalid") from None
    raw = _decompressed(raw, path)
    # without this, a binary file fails on its first "token", a screenful of escaped bytes
    nul = raw.find(b"\0")
    if nul >= 0:
        raise GraphFormatError("contains a NUL byte: this is a binary file, not a text graph file",
                               path, raw.count(b"\n", 0, nul) + 1, kind="invalid")
    if raw.startswith(UTF8_BOM) and not keep_bom:
        raw = raw[len(UTF8_BOM):]
    return raw


def _decompressed(raw, path):
    for magic, decompress in _MAGIC:
        if raw.startswith(magic):
            try:
                return decompress(raw)
            except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
                raise GraphFormatError(f"cannot decompress: {exc}", path, kind="invalid") from None
    return raw


def write_bytes(path, data):
    """Write ``data`` to ``path``, compressed when the suffix says so (.gz, .bz2, .xz)."""
    compress = COMPRESSED_SUFFIXES.get(Path(os.fspath(path)).suffix.lower())
    with open(path, "wb") as f:
        f.write(compress(data) if compress else data)
