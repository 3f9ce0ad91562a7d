"""PNG files written for the image metric tests: scanlines filtered with the spec's predictors, then zlib."""

from __future__ import annotations

import random
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


_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def _pack(samples: list[int], depth: int) -> bytes:
    if depth == 16:
        return b"".join(struct.pack(">H", v) for v in samples)
    if depth == 8:
        return bytes(samples)
    per = 8 // depth
    samples = samples + [0] * (-len(samples) % per)
    return bytes(sum(v << (8 - depth * (k + 1)) for k, v in enumerate(samples[i : i + per])) for i in range(0, len(samples), per))  # fmt: skip


def random_png(width: int, height: int, ctype: int, depth: int, *, interlace: bool = False, seed: int = 0) -> bytes:
    """A PNG of random samples (palette indices under 4, with a 4-colour palette), each row under a random
    one of the five filters, plain or Adam7-interlaced: what Pillow itself never writes."""
    rng = random.Random(seed)
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    top = min(3, (1 << depth) - 1) if ctype == 3 else (1 << depth) - 1
    grid = [[[rng.randint(0, top) for _ in range(channels)] for _ in range(width)] for _ in range(height)]
    bpp = max(1, channels * depth // 8)
    passes = _ADAM7 if interlace else ((0, 0, 1, 1),)
    raw = bytearray()
    for x0, y0, dx, dy in passes:
        rows = [_pack([s for x in range(x0, width, dx) for s in grid[y][x]], depth) for y in range(y0, height, dy)]
        prev = bytes(len(rows[0])) if rows and rows[0] else b""
        for line in rows if prev else []:
            kind = rng.randrange(5)
            raw += bytes([kind]) + _predict(kind, line, prev, bpp)
            prev = line
    header = struct.pack(">IIBBBBB", width, height, depth, ctype, 0, 0, int(interlace))
    colours = chunk(b"PLTE", bytes([10, 20, 30, 200, 100, 50, 0, 255, 0, 255, 255, 255])) if ctype == 3 else b""
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + colours + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b"")  # fmt: skip
