"""PNG files written for the image metric tests: scanlines filtered with the spec's predictors, then zlib."""

from __future__ import annotations

import struct
import zlib


def _predict(kind: int, line: bytes, prev: bytes, bpp: int) -> bytes:
    """The PNG filter ``kind`` applied to ``line`` (the spec's predictors, written out for the test)."""
    out = bytearray()
    for i, x in enumerate(line):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        p = a + b - c
        paeth = min((abs(p - a), 0, a), (abs(p - b), 1, b), (abs(p - c), 2, c))[2]
        out.append((x - (0, a, b, (a + b) // 2, paeth)[kind]) & 255)
    return bytes(out)


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def encode(rows: list[bytes], width: int, ctype: int = 2, depth: int = 8, filters: tuple[int, ...] = (0,), interlace: int = 0) -> bytes:  # fmt: skip
    """A PNG of the given scanlines, row ``i`` filtered with ``filters[i % len(filters)]``."""
    bpp = max(1, {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype] * depth // 8)
    raw, prev = bytearray(), bytes(len(rows[0]))
    for i, line in enumerate(rows):
        kind = filters[i % len(filters)]
        raw += bytes([kind]) + _predict(kind, line, prev, bpp)
        prev = line
    header = struct.pack(">IIBBBBB", width, len(rows), depth, ctype, 0, 0, interlace)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b"")  # fmt: skip
